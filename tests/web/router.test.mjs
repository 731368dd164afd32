// Tests for the pure half of web/js/router.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFAULT_TAB, TABS, buildUrl, makeRoute, parseRoute, routeKey, useViews } from '../../web/js/router.js';
import { VIEW_PARAMS } from '../../web/js/views/index.js';

useViews(VIEW_PARAMS);

test('empty query is the runs list', () => {
    for (const q of ['', '?', '?foo=bar', '?run=', '?job=', '?job=abc', '?job=0', '?job=-3', '?run=../../etc']) {
        const r = parseRoute(q);
        assert.equal(r.view, 'runs', q);
        assert.ok(!('run' in r) && !('job' in r), 'a route holds only its own view\'s fields');
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

test('table tabs read their state; invalid values fall back to defaults', async () => {
    const { TAB_TABLES } = await import('../../web/js/views/index.js');
    const r = parseRoute('?run=abc&view=kernels&group=op&q=gemm&sort=share&order=asc&offset=200');
    assert.deepEqual(
        { group: r.group, q: r.q, sort: r.sort, order: r.order, offset: r.offset },
        { group: 'op', q: 'gemm', sort: 'share', order: 'asc', offset: 200 },
    );
    const bad = parseRoute('?run=abc&view=kernels&group=stack&sort=host_self&order=up&offset=-5');
    assert.deepEqual({ group: bad.group, sort: bad.sort, order: bad.order, offset: bad.offset }, { group: '', sort: '', order: '', offset: 0 });
    assert.equal(parseRoute('?run=abc&view=operators&group=stack').group, 'stack');
    assert.equal(parseRoute('?run=abc&view=operators&group=name').group, '', 'the default group is not stored');
    assert.ok(!('q' in parseRoute('?run=abc&view=info&q=x&sort=total')), 'tabs without tables ignore table state');
    for (const [tab, t] of Object.entries(TAB_TABLES)) {
        for (const s of t.sorts) assert.equal(parseRoute(`?run=a&view=${tab}&sort=${s}`).sort, s, tab + ' ' + s);
    }
});

test('the memory tab keeps device, zoom window and minimum size', () => {
    const r = parseRoute('?run=abc&view=memory&device=cpu&start=4487348861342.787&end=4487348870391.923&min=1048576');
    assert.equal(r.device, 'cpu');
    assert.equal(r.start, 4487348861342.787);
    assert.equal(r.end, 4487348870391.923);
    assert.equal(r.min, 1048576);
    assert.equal(parseRoute('?run=abc&view=memory&device=0').device, '0');
    for (const bad of ['gpu', '-1', '01', '<x>']) assert.equal(parseRoute('?run=a&view=memory&device=' + bad).device, '', bad);
    const inverted = parseRoute('?run=abc&view=memory&start=20&end=10');
    assert.deepEqual([inverted.start, inverted.end], [null, null], 'an empty or inverted window is dropped');
    assert.deepEqual([parseRoute('?run=a&view=memory&start=5').start], [null], 'start alone is dropped');
    assert.equal(parseRoute('?run=a&view=memory&start=1e5&end=2e5').start, null, 'no exponents');
    assert.ok(!('start' in parseRoute('?run=a&view=kernels&start=1&end=2&device=0')), 'memory only');
});

test('run page state round-trips through buildUrl, in a fixed parameter order', () => {
    const routes = [
        makeRoute({ view: 'run', run: 'r1', tab: 'operators', rank: 3, group: 'shape', q: 'aten::mm <x>', sort: 'calls', order: 'asc', offset: 100 }),
        makeRoute({ view: 'run', run: 'r1', tab: 'kernels', group: 'op', sort: 'name', order: 'desc' }),
        makeRoute({ view: 'run', run: 'r1', tab: 'memory', device: '0', start: 4487348861342.787, end: 4487348870391.923, min: 1024, sort: 'lifetime' }),
    ];
    for (const r of routes) assert.deepEqual(parseRoute(buildUrl(r).replace(/^\.\//, '')), r);
    assert.equal(
        buildUrl(routes[2]),
        './?run=r1&view=memory&sort=lifetime&device=0&start=4487348861342.787&end=4487348870391.923&min=1024',
    );
    assert.equal(buildUrl({ view: 'run', run: 'r1', tab: 'overview', q: 'x', sort: 'total', start: 1, end: 2 }), './?run=r1');
    assert.equal(buildUrl({ view: 'run', run: 'r1', tab: 'info' }), './?run=r1&view=info');
});

test('urlTime writes µs without exponent or float noise', async () => {
    const { urlTime } = await import('../../web/js/router.js');
    assert.equal(urlTime(4487348861342.787), '4487348861342.787');
    assert.equal(urlTime(1716199990010000), '1716199990010000');
    assert.equal(urlTime(0.5), '0.5');
    assert.equal(urlTime(100), '100');
    assert.equal(urlTime(1e-7), '0');
});

test('the timeline tab is live and keeps window, selection, pins and search', async () => {
    const { parseSel, buildSel, parsePins } = await import('../../web/js/router.js');
    assert.ok(TABS.find((t) => t.id === 'timeline').live);
    const r = parseRoute('?run=abc&view=timeline&rank=1&start=4487348861342.787&end=4487348870391.923&sel=12:4487348861400.5:3.25&pins=7,2,7&q=nvjet');
    assert.equal(r.tab, 'timeline');
    assert.equal(r.rank, 1);
    assert.deepEqual([r.start, r.end], [4487348861342.787, 4487348870391.923]);
    assert.equal(r.sel, '12:4487348861400.5:3.25');
    assert.deepEqual(r.pins, [2, 7], 'deduplicated and sorted');
    assert.equal(r.q, 'nvjet');
    const url = buildUrl(r);
    assert.equal(url, './?run=abc&view=timeline&rank=1&start=4487348861342.787&end=4487348870391.923&sel=12:4487348861400.5:3.25&pins=2,7&q=nvjet');
    assert.deepEqual(parseRoute(url.slice(2)), r, 'round trip');
    assert.deepEqual(parseSel('3:10:0'), { track: 3, ts: 10, dur: 0 });
    assert.equal(buildSel({ track: 3, ts: 10.12345, dur: 2 }), '3:10.123:2');
    assert.deepEqual(parsePins('1,x,-2,3,,01,4'), [1, 3, 4]);
    assert.equal(parsePins(Array.from({ length: 100 }, (_, i) => i).join(',')).length, 64, 'bounded');
});

test('the timeline keeps cp=1 (critical path outlined), and only there', () => {
    const r = parseRoute('?run=abc&view=timeline&cp=1');
    assert.equal(r.cp, true);
    assert.equal(buildUrl(r), './?run=abc&view=timeline&cp=1');
    assert.deepEqual(parseRoute(buildUrl(r).slice(2)), r, 'round trip');
    assert.equal(parseRoute('?run=abc&view=timeline&cp=yes').cp, false, 'only 1 turns it on');
    assert.equal(parseRoute('?run=abc&view=timeline').cp, false);
    assert.ok(!('cp' in parseRoute('?run=abc&view=overview&cp=1')), 'timeline only');
    assert.equal(buildUrl({ view: 'run', run: 'abc', tab: 'kernels', cp: true }), './?run=abc&view=kernels');
});

test('bad timeline parameters are dropped', () => {
    for (const bad of ['', 'x', '1:2', '1:2:3:4', '-1:2:3', '1:-2:3', '1:2:1e5', '01:2:3', '<img>:1:2', '1:2.1234:3']) {
        assert.equal(parseRoute('?run=a&view=timeline&sel=' + encodeURIComponent(bad)).sel, '', bad);
    }
    assert.deepEqual(parseRoute('?run=a&view=timeline&pins=a,b').pins, []);
    const inv = parseRoute('?run=a&view=timeline&start=20&end=10');
    assert.deepEqual([inv.start, inv.end], [null, null]);
    assert.ok(!('sel' in parseRoute('?run=a&view=overview&sel=1:2:3&pins=1')), 'timeline only');
    assert.ok(!('pins' in parseRoute('?run=a&view=overview&pins=1')));
    assert.equal(buildUrl({ view: 'run', run: 'a', tab: 'kernels', sel: '1:2:3', pins: [1] }), './?run=a&view=kernels');
    assert.equal(buildUrl({ view: 'run', run: 'a', tab: 'timeline', sel: 'junk', pins: [] }), './?run=a&view=timeline');
});

test('compare page: parse, canonical URL, validation', async () => {
    const { COMPARE_STATUSES, parseStatuses } = await import('../../web/js/views/compare.js');
    const r = parseRoute('?compare=aaa,bbb');
    assert.equal(r.view, 'compare');
    assert.equal(r.a, 'aaa');
    assert.equal(r.b, 'bbb');
    assert.equal(r.ctable, 'kernels');
    assert.equal(r.rankA, null);
    assert.equal(buildUrl(r), './?compare=aaa,bbb');
    assert.equal(routeKey(r), 'compare:aaa,bbb');
    // the long form is read the same way and canonicalised
    const l = parseRoute('?view=compare&a=aaa&b=bbb&rank_a=0&rank_b=2');
    assert.equal(l.view, 'compare');
    assert.equal(buildUrl(l), './?compare=aaa,bbb&rank_a=0&rank_b=2');
    const full = './?compare=aaa,bbb&rank_a=1&table=operators&status=added,slower&per=total&q=mm&sort=ratio&order=asc&offset=100';
    assert.equal(buildUrl(parseRoute(full.slice(2))), full);
    const k = parseRoute('?compare=a,b&group=family&status=slower,added,bogus,added');
    assert.equal(k.group, 'family');
    assert.equal(k.status, 'added,slower');
    assert.equal(buildUrl(k), './?compare=a,b&status=added,slower&group=family');
    assert.equal(parseRoute('?compare=a,b&table=operators&group=family').group, '', 'operators have no families');
    assert.equal(parseStatuses(COMPARE_STATUSES.join(',')), '', 'every status = no filter');
    assert.equal(parseRoute('?compare=a,b&sort=drop').sort, '');
    assert.equal(parseRoute('?compare=a,b&rank_a=-1').rankA, null);
    for (const bad of ['?compare=a', '?compare=a,', '?compare=../x,b', '?view=compare&a=a', '?compare=a%20b,c']) {
        assert.equal(parseRoute(bad).view, 'runs', bad);
    }
});

test('N-way compare page: three or more ids, kept as given for the page to judge', () => {
    const r = parseRoute('?compare=aaa,bbb,ccc&base=bbb&rank=2');
    assert.equal(r.view, 'comparen');
    assert.deepEqual(r.runs, ['aaa', 'bbb', 'ccc']);
    assert.equal(r.base, 'bbb');
    assert.equal(r.rank, 2);
    assert.equal(buildUrl(r), './?compare=aaa,bbb,ccc&base=bbb&rank=2');
    assert.equal(routeKey(r), 'comparen:aaa,bbb,ccc');
    assert.equal(buildUrl({ view: 'comparen', runs: ['a', 'b', 'c'] }), './?compare=a,b,c');
    assert.equal(parseRoute('?compare=a,b,c&base=../x').base, '', 'a malformed baseline is dropped');
    // too many, repeated or malformed ids still open the page, which says what is wrong
    assert.deepEqual(parseRoute('?compare=a,a,b').runs, ['a', 'a', 'b']);
    assert.equal(parseRoute('?compare=' + Array(40).fill('x').join(',')).runs.length, 32);
    assert.deepEqual(parseRoute('?compare=a,,b').runs, ['a', '', 'b']);
    assert.equal(parseRoute('?compare=a,b').view, 'compare', 'two ids stay the two-run page');
});

// tests/web/fixtures/router_urls.json: URLs the router wrote before the
// views declared their own parameters (issue 19), with the fields that
// produced them. Shared links must stay byte-identical: each is still
// written from its fields, and reads back to itself.
test('every URL the router wrote before still round-trips byte for byte', async () => {
    const { readFile } = await import('node:fs/promises');
    const cases = JSON.parse(await readFile(new URL('./fixtures/router_urls.json', import.meta.url), 'utf8'));
    assert.ok(cases.length > 50);
    for (const { url, fields } of cases) {
        assert.equal(buildUrl(fields), url, JSON.stringify(fields));
        assert.equal(buildUrl(parseRoute(url.slice(2))), url, url);
    }
});

test('project page: name, x axis and picks round-trip; the runs list filters keep their own keys', () => {
    const r = parseRoute('?project=llm%20%E2%98%85&by=meta.batch&pick=a,b');
    assert.deepEqual(r, makeRoute({ view: 'project', project: 'llm ★', by: 'meta.batch', pick: 'a,b' }));
    assert.equal(routeKey(r), 'project:llm ★');
    assert.equal(parseRoute(buildUrl(r).slice(2)).project, 'llm ★');
    assert.equal(parseRoute('?project=llm&by=meta.bad%20key').by, '', 'a bad key falls back to by date');
    assert.equal(parseRoute('?project=a/b').view, 'runs');
    const runs = parseRoute('?in=llm&tag=base&meta=batch%3D32&gpu=h100&since=2026-11-01&until=2026-11-30&since=x');
    assert.equal(runs.view, 'runs');
    assert.deepEqual([runs.in, runs.tag, runs.meta, runs.gpu, runs.since, runs.until], ['llm', 'base', 'batch=32', 'h100', '2026-11-01', '2026-11-30']);
    assert.equal(parseRoute('?in=x&since=yesterday').since, '', 'a date that is no date is dropped');
    assert.match(buildUrl(runs), /in=llm&tag=base&meta=batch%3D32&gpu=h100&since=2026-11-01&until=2026-11-30/);
});
