// Tests for the pure half of web/js/router.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFAULT_TAB, TABS, buildUrl, makeRoute, parseRoute, routeKey } from '../../web/js/router.js';

test('empty query is the runs list', () => {
    for (const q of ['', '?', '?foo=bar', '?run=', '?job=', '?job=abc', '?job=0', '?job=-3', '?run=../../etc']) {
        const r = parseRoute(q);
        assert.equal(r.view, 'runs', q);
        assert.equal(r.run, null);
        assert.equal(r.job, null);
    }
});

test('run page with default tab and no rank', () => {
    const r = parseRoute('?run=0123456789abcdef');
    assert.deepEqual(r, makeRoute({ view: 'run', run: '0123456789abcdef' }));
    assert.equal(r.tab, DEFAULT_TAB);
    assert.equal(r.rank, null);
});

test('run page reads view= as the tab and rank=', () => {
    const r = parseRoute('run=abc&view=info&rank=3');
    assert.equal(r.view, 'run');
    assert.equal(r.run, 'abc');
    assert.equal(r.tab, 'info');
    assert.equal(r.rank, 3);
    assert.equal(parseRoute('?run=abc&view=Memory').tab, 'memory', 'tab names are case-insensitive');
    assert.equal(parseRoute('?run=abc&view=nope').tab, DEFAULT_TAB);
    assert.equal(parseRoute('?run=abc&rank=0').rank, 0);
    for (const bad of ['-1', '1.5', 'x', '01', '', '9999999']) {
        assert.equal(parseRoute('?run=abc&rank=' + bad).rank, null, bad);
    }
});

test('every tab id round-trips', () => {
    for (const t of TABS) {
        const url = buildUrl({ view: 'run', run: 'r1', tab: t.id });
        assert.equal(parseRoute(url.slice(url.indexOf('?'))).tab, t.id);
    }
    assert.ok(TABS.some((t) => t.id === DEFAULT_TAB && t.live), 'the default tab is a live one');
});

test('job page', () => {
    assert.deepEqual(parseRoute('?job=42'), makeRoute({ view: 'job', job: 42 }));
    assert.equal(parseRoute('?job=42').job, 42);
});

test('run wins over job when both are given', () => {
    assert.equal(parseRoute('?job=4&run=abc').view, 'run');
});

test('runs list keeps its filter and a known sort', () => {
    const r = parseRoute('?q=gpt+bf16&sort=-bytes');
    assert.equal(r.view, 'runs');
    assert.equal(r.q, 'gpt bf16');
    assert.equal(r.sort, '-bytes');
    assert.equal(parseRoute('?sort=name').sort, 'name');
    assert.equal(parseRoute('?sort=password').sort, '');
    assert.equal(parseRoute('?q=' + 'x'.repeat(500)).q.length, 200);
});

test('buildUrl writes canonical relative URLs', () => {
    assert.equal(buildUrl({ view: 'runs' }), './');
    assert.equal(buildUrl({}), './');
    assert.equal(buildUrl({ view: 'runs', q: 'a b', sort: '-bytes' }), './?q=a+b&sort=-bytes');
    assert.equal(buildUrl({ view: 'run', run: 'abc' }), './?run=abc');
    assert.equal(buildUrl({ view: 'run', run: 'abc', tab: 'memory' }), './?run=abc&view=memory');
    assert.equal(buildUrl({ view: 'run', run: 'abc', tab: DEFAULT_TAB, rank: 0 }), './?run=abc&rank=0');
    assert.equal(buildUrl({ view: 'job', job: 7 }), './?job=7');
    assert.equal(buildUrl({ view: 'run', run: null }), './', 'a run page without id falls back');
});

test('buildUrl never produces an absolute path', () => {
    const urls = [
        buildUrl({ view: 'runs' }),
        buildUrl({ view: 'run', run: 'x', tab: 'timeline', rank: 2 }),
        buildUrl({ view: 'job', job: 1 }),
        buildUrl({ view: 'runs', q: '/etc' }),
    ];
    for (const u of urls) assert.ok(u.startsWith('./'), u);
});

test('buildUrl escapes what it writes, and parse(build(r)) == r', () => {
    const routes = [
        makeRoute(),
        makeRoute({ q: '<img src=x onerror=alert(1)> & "x"', sort: 'name' }),
        makeRoute({ view: 'run', run: 'deadbeefdeadbeef', tab: 'kernels', rank: 12 }),
        makeRoute({ view: 'job', job: 123456 }),
    ];
    for (const r of routes) {
        const url = buildUrl(r);
        assert.ok(!/[<>" ]/.test(url), url);
        assert.deepEqual(parseRoute(url.replace(/^\.\//, '')), r);
    }
});

test('fields of other views are ignored when building', () => {
    assert.equal(buildUrl({ view: 'run', run: 'a', q: 'zzz', job: 3 }), './?run=a');
    assert.equal(buildUrl({ view: 'job', job: 3, run: 'a', rank: 1 }), './?job=3');
});

test('routeKey identifies the mounted page', () => {
    assert.equal(routeKey(parseRoute('?run=a&view=memory')), routeKey(parseRoute('?run=a&rank=2')));
    assert.notEqual(routeKey(parseRoute('?run=a')), routeKey(parseRoute('?run=b')));
    assert.equal(routeKey(parseRoute('?q=x')), routeKey(parseRoute('')));
    assert.notEqual(routeKey(parseRoute('?job=1')), routeKey(parseRoute('?job=2')));
});
