// trend.js: x-axis order by date or metadata, labels, picks, change text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeText, metaKeys, orderRuns, parsePicks, togglePick, xLabel } from '../../web/js/trend.js';

const run = (id, created, meta, extra = {}) => ({ id, name: 'run ' + id, created, meta, previous: null, change_pct: null, ...extra });
const runs = [run('a', 86400, { batch: '64', host: 'x' }), run('b', 2 * 86400, { batch: '8' }), run('c', 3 * 86400, {}), run('d', 4 * 86400, { batch: '16' })];

test('metadata keys of the menu', () => {
    assert.deepEqual(metaKeys(runs), ['batch', 'host']);
});

test('by date keeps the server order; by a key, numbers in number order and runs without it last', () => {
    assert.deepEqual(orderRuns(runs, '').map((r) => r.id), ['a', 'b', 'c', 'd']);
    assert.deepEqual(orderRuns(runs, 'meta.batch').map((r) => r.id), ['b', 'd', 'a', 'c']);
    assert.equal(xLabel(runs[0], ''), '1970-01-02');
    assert.equal(xLabel(runs[0], 'meta.batch'), '64');
    assert.equal(xLabel(runs[2], 'meta.batch'), '—');
    // runs of one day are told apart by their time; a run alone on its day keeps the date
    const day = [{ created: 86400 + 3 * 3600 + 4 * 60 }, { created: 86400 + 5 * 3600 }, { created: 3 * 86400 }];
    assert.deepEqual(day.map((r) => xLabel(r, '', day)), ['01-02 03:04', '01-02 05:00', '1970-01-04']);
    const minute = [{ created: 86400 + 7 }, { created: 86400 + 9 }];
    assert.deepEqual(minute.map((r) => xLabel(r, '', minute)), ['01-02 00:00:07', '01-02 00:00:09']);
});

test('two picks at most, the oldest dropped; unknown picks ignored', () => {
    assert.deepEqual(togglePick([], 'a'), ['a']);
    assert.deepEqual(togglePick(['a', 'b'], 'c'), ['b', 'c']);
    assert.deepEqual(togglePick(['a', 'b'], 'a'), ['b']);
    assert.deepEqual(parsePicks('a,zz,b,c', runs), ['a', 'b']);
});

test('the change against the previous run of the configuration', () => {
    const r = run('d', 1, {}, { previous: 'b', change_pct: 23.44 });
    assert.equal(changeText(r, (id) => 'run ' + id), '23.4 % slower than run b, the previous run of its configuration');
    assert.equal(changeText(run('x', 1, {}, { previous: 'b', change_pct: -5 }), (id) => id), '5.0 % faster than b, the previous run of its configuration');
    assert.equal(changeText(runs[0], (id) => id), '');
});
