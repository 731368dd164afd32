// Tests for web/js/timeline/multirank.js (all ranks on one timeline: the
// aligned clock, merged answers), the rank groups of layout.js and
// urlsync.js foldedRanks. Run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildLayout, groupKey, laneTop, rankKey } from '../../web/js/timeline/layout.js';
import { mergeAggregates, mergeMeta, rankDeltas, ranksParam, shiftSlice, shiftWindow, stackedRanks } from '../../web/js/timeline/multirank.js';

test('&ranks= names the stacked ranks among the run\'s', () => {
    const run = [0, 1, 2, 3];
    assert.equal(stackedRanks('', run), null);
    assert.deepEqual(stackedRanks('all', run), run);
    assert.deepEqual(stackedRanks('3,1,9', run), [1, 3]);
    assert.equal(stackedRanks('9', run), null, 'no rank of the run: not stacked');
    assert.equal(stackedRanks('all', [0]), null, 'one rank: nothing to stack');
    assert.equal(ranksParam([0, 1, 2, 3], run), 'all');
    assert.equal(ranksParam([3, 1], run), '1,3');
    assert.equal(ranksParam([], run), '');
});

test('the aligned clock: a shared trace clock shifts nothing, base times move ranks onto the first', () => {
    // trace clock: offsets are the starts' distances, so every delta is 0
    const same = rankDeltas([{ rank: 0, t0_us: 1000, offset_us: 300 }, { rank: 1, t0_us: 700, offset_us: 0 }]);
    assert.deepEqual([...same], [[0, 0], [1, 0]]);
    // rank 1's trace clock runs 5000 µs ahead of the base rank's: its times come back by 5000
    const moved = rankDeltas([{ rank: 0, t0_us: 1000, offset_us: 0 }, { rank: 1, t0_us: 6100, offset_us: 100 }]);
    assert.equal(moved.get(0), 0);
    assert.equal(moved.get(1), -5000);
});

test('merged tracks carry their rank; items, counters and slices shift onto the aligned clock', () => {
    const clocks = new Map([[0, { rank: 0, delta: 0 }], [1, { rank: 1, delta: -5000 }]]);
    const m = mergeMeta([
        { rank: 0, t0_us: 1000, t1_us: 2000, tracks: [{ id: 1 }], counters: [{ id: 1 }], steps: [{ name: 's', start_us: 1100, end_us: 1900 }] },
        { rank: 1, t0_us: 6100, t1_us: 7500, tracks: [{ id: 2 }], counters: [{ id: 2 }], steps: [] },
    ], clocks);
    assert.deepEqual([m.t0_us, m.t1_us], [1000, 2500]);
    assert.deepEqual(m.tracks.map((t) => [t.id, t.rank]), [[1, 0], [2, 1]]);
    assert.deepEqual(m.counters.map((c) => c.rank), [0, 1]);
    assert.equal(m.steps[0].start_us, 1100);
    const items = new Map([[2, [{ ts: [6100, 6200], dur: [1, 1] }]]]);
    const counters = new Map([[2, { ts: [6100], min: [0], max: [1], last: [1] }]]);
    shiftWindow(items, counters, -5000);
    assert.deepEqual(items.get(2)[0].ts, [1100, 1200]);
    assert.deepEqual(counters.get(2).ts, [1100]);
    const s = shiftSlice({ track: 2, ts_us: 6100, parents: [{ track: 2, ts_us: 6000 }], launched: [], launcher: null, flows: [{ track: 1, ts_us: 1500 }] }, (id) => (id === 2 ? -5000 : 0));
    assert.deepEqual([s.ts_us, s.parents[0].ts_us, s.flows[0].ts_us], [1100, 1000, 1500]);
});

test('area tables of several ranks add up by name', () => {
    const r = mergeAggregates([
        { rows: [{ name: 'a', count: 2, total_us: 10, self_us: 4, avg_us: 5 }, { name: 'b', count: 1, total_us: 30, self_us: 30, avg_us: 30 }], counters: [{ id: 1 }] },
        { rows: [{ name: 'a', count: 3, total_us: 40, self_us: 6, avg_us: 13.3 }], counters: [{ id: 2 }] },
    ]);
    assert.deepEqual(r.rows.map((x) => [x.name, x.count, x.total_us, x.self_us, x.avg_us]), [['a', 5, 50, 10, 10], ['b', 1, 30, 30, 30]]);
    assert.deepEqual(r.counters.map((c) => c.id), [1, 2]);
});

test('a stacked layout: a group per rank, folded ranks keep only their row', () => {
    const t = (id, rank, kind) => ({ id, rank, kind, pid: 1, tid: id, name: 'x', process: 'p', device: 0, stream: id, max_depth: 0, nslices: 3 });
    const tracks = [t(1, 0, 'cpu'), t(2, 0, 'gpu'), t(3, 1, 'cpu'), t(4, 1, 'gpu')];
    const counters = [{ id: 1, name: 'c', unit: '', rank: 0 }, { id: 2, name: 'c', unit: '', rank: 1 }];
    const ranks = [{ rank: 0, straggler: false }, { rank: 1, straggler: true }];
    const l = buildLayout(tracks, counters, { pins: new Set(), collapsed: new Set([rankKey(1)]), showEmpty: false, ranks });
    assert.deepEqual(l.scroll.map((r) => r.key), ['rank:0', 'rank:0:cpu:1', 't1', 'rank:0:gpu:0', 't2', 'rank:0:counters', 'c1', 'rank:1']);
    const r1 = l.scroll.at(-1);
    assert.equal(r1.straggler, true);
    assert.equal(r1.label, 'Rank 1 · straggler');
    assert.equal(r1.count, 2);
    assert.equal(groupKey(tracks[2]), 'rank:1:cpu:1');
    // a lane of a folded rank points at its rank's row
    const byId = new Map(tracks.map((x) => [x.id, x]));
    assert.deepEqual(laneTop(l, 0, 3, byId), { top: r1.y, h: r1.h, lane: false });
});
