// Tests for web/js/timeline/layout.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
    COUNTER_H, EMPTY_LAYOUT, GROUP_H, HEAD_H, LANE_PAD, SLICE_H, buildLayout, clampScroll, depthY, groupKey, groupSummary,
    hitTest, idCompare, laneHeight, laneTitle, laneTop, maxScroll, rowAt, shownTrackIds,
} from '../../web/js/timeline/layout.js';

/** A track as /timeline/tracks sends it. */
function track(id, kind, pid, tid, extra = {}) {
    return {
        id, kind, pid, tid, name: kind === 'gpu' ? `stream ${tid}` : `thread ${tid}`, process: null, device: kind === 'gpu' ? 0 : null,
        stream: kind === 'gpu' ? tid : null, max_depth: 0, nslices: 10, ...extra,
    };
}

// in the API's order: GPU first here, to check that CPU groups come first anyway
const TRACKS = [
    track(1, 'gpu', 595, 7, { stream: 7, nslices: 100, max_depth: 1 }),
    track(2, 'gpu', 595, 20, { stream: 20, nslices: 5 }),
    track(3, 'cpu', 595, 620, { process: 'python3', max_depth: 4, nslices: 300 }),
    track(4, 'cpu', 595, 595, { process: 'python3', max_depth: 2, nslices: 200 }),
    track(5, 'cpu', 12, 12, { name: 'Spans', nslices: 1 }),
    track(6, 'cpu', 595, 700, { process: 'python3', nslices: 0 }), // empty
    track(7, 'gpu', 595, 9, { device: 1, stream: 9, nslices: 3 }),
];
const COUNTERS = [{ id: 1, name: 'Memory allocated', unit: 'bytes' }, { id: 2, name: 'Memory reserved', unit: 'bytes' }];
const opts = (o = {}) => ({ pins: new Set(), collapsed: new Set(), showEmpty: false, ...o });
const keys = (rows) => rows.map((r) => r.key);

test('groups: CPU processes by pid, then GPU devices; lanes by tid or stream; counters last', () => {
    const l = buildLayout(TRACKS, COUNTERS, opts());
    assert.deepEqual(keys(l.scroll), ['cpu:12', 't5', 'cpu:595', 't4', 't3', 'gpu:0', 't1', 't2', 'gpu:1', 't7', 'counters', 'c1', 'c2']);
    assert.deepEqual(l.pinned, []);
    assert.equal(l.pinnedH, 0);
    const g = l.scroll.find((r) => r.key === 'cpu:595');
    assert.equal(g.label, 'python3 (pid 595)');
    assert.equal(l.scroll[0].label, 'process 12', 'an unnamed process');
    assert.equal(l.scroll.find((r) => r.key === 'gpu:1').label, 'GPU 1');
    assert.deepEqual(shownTrackIds(l), [5, 4, 3, 1, 2, 7]);
});

test('rows are stacked without gaps, a lane as tall as its deepest slice', () => {
    const l = buildLayout(TRACKS, COUNTERS, opts());
    let y = 0;
    for (const r of l.scroll) {
        assert.equal(r.y, y, r.key);
        y += r.h;
    }
    assert.equal(l.contentH, y);
    assert.equal(laneHeight(TRACKS[2]), 5 * SLICE_H + 2 * LANE_PAD);
    assert.equal(laneHeight({ ...TRACKS[2], max_depth: -1 }), SLICE_H + 2 * LANE_PAD, 'never less than one depth');
    assert.equal(l.scroll.find((r) => r.key === 't3').h, laneHeight(TRACKS[2]));
    assert.equal(l.scroll.find((r) => r.key === 'cpu:12').h, GROUP_H);
    assert.equal(l.scroll.find((r) => r.key === 'c1').h, COUNTER_H);
});

test('empty lanes are hidden unless asked for; a group with no lane is left out', () => {
    assert.ok(!keys(buildLayout(TRACKS, [], opts()).scroll).includes('t6'));
    const all = buildLayout(TRACKS, [], opts({ showEmpty: true }));
    assert.deepEqual(keys(all.scroll), ['cpu:12', 't5', 'cpu:595', 't4', 't3', 't6', 'gpu:0', 't1', 't2', 'gpu:1', 't7']);
    const onlyEmpty = buildLayout([track(9, 'cpu', 1, 1, { nslices: 0 })], [], opts());
    assert.deepEqual(onlyEmpty.scroll, []);
    assert.equal(onlyEmpty.contentH, 0);
    assert.deepEqual(buildLayout([], [], opts()), { ...EMPTY_LAYOUT });
});

test('a collapsed group keeps its row, with a summary of what it holds', () => {
    const l = buildLayout(TRACKS, COUNTERS, opts({ collapsed: new Set(['cpu:595', 'counters']) }));
    assert.deepEqual(keys(l.scroll), ['cpu:12', 't5', 'cpu:595', 'gpu:0', 't1', 't2', 'gpu:1', 't7', 'counters']);
    const g = l.scroll.find((r) => r.key === 'cpu:595');
    assert.equal(g.collapsed, true);
    assert.equal(g.count, 2, 'the empty thread is not counted');
    assert.equal(g.slices, 500);
    assert.equal(groupSummary(g), '2 threads · 500 slices');
    assert.equal(l.scroll.find((r) => r.key === 'cpu:12').collapsed, false);
    assert.equal(groupSummary(l.scroll.find((r) => r.key === 'gpu:0')), '2 streams · 105 slices');
    assert.equal(groupSummary(l.scroll.find((r) => r.key === 'gpu:1')), '1 stream · 3 slices');
    assert.equal(groupSummary(l.scroll.find((r) => r.key === 'counters')), '2 counters');
    assert.equal(groupSummary({ type: 'group', kind: 'cpu', count: 1, slices: 1234567 }), '1 thread · 1,234,567 slices');
    assert.equal(groupSummary({ type: 'group', kind: 'cpu', count: 1, slices: 1 }), '1 thread · 1 slice');
    assert.deepEqual(shownTrackIds(l), [5, 1, 2, 7], 'collapsed lanes are not fetched');
});

test('pinned lanes move to their own section at the top, in track order', () => {
    const l = buildLayout(TRACKS, [], opts({ pins: new Set([3, 1]) }));
    assert.deepEqual(keys(l.pinned), ['t1', 't3']);
    assert.deepEqual(l.pinned.map((r) => r.y), [0, laneHeight(TRACKS[0])]);
    assert.equal(l.pinnedH, laneHeight(TRACKS[0]) + laneHeight(TRACKS[2]));
    assert.ok(l.pinned.every((r) => r.pinned));
    assert.ok(!keys(l.scroll).includes('t1') && !keys(l.scroll).includes('t3'));
    assert.equal(l.scroll.find((r) => r.key === 'gpu:0').count, 1);
    // a pinned lane stays pinned when its group is collapsed, or when it is empty
    const c = buildLayout(TRACKS, [], opts({ pins: new Set([3, 6]), collapsed: new Set(['cpu:595']) }));
    assert.deepEqual(keys(c.pinned), ['t3', 't6']);
    assert.deepEqual(shownTrackIds(c), [3, 6, 5, 1, 2, 7]);
});

test('rowAt finds pinned rows at their place and scrolled rows moved by the scroll', () => {
    const l = buildLayout(TRACKS, COUNTERS, opts({ pins: new Set([5]) }));
    const ph = l.pinnedH;
    assert.equal(rowAt(l, 0, -1), null);
    assert.equal(rowAt(l, 0, 0).row.key, 't5');
    assert.equal(rowAt(l, 500, ph - 1).row.key, 't5', 'pinned rows do not scroll');
    const first = rowAt(l, 0, ph);
    assert.equal(first.row.key, 'cpu:595');
    assert.equal(first.top, ph);
    const t4 = l.scroll.find((r) => r.key === 't4');
    const at = rowAt(l, 10, ph + t4.y - 10 + 5);
    assert.equal(at.row.key, 't4');
    assert.equal(at.top, ph + t4.y - 10);
    assert.equal(rowAt(l, 30, ph + t4.y - 30 + 5).row.key, 't5', 'scrolled under the pinned lanes');
    assert.equal(rowAt(l, 0, ph + l.contentH + 1), null, 'below the last row');
});

test('laneTop: a lane, or the row of its collapsed group, or nothing', () => {
    const byId = new Map(TRACKS.map((t) => [t.id, t]));
    const l = buildLayout(TRACKS, [], opts({ pins: new Set([5]), collapsed: new Set(['gpu:0']) }));
    assert.deepEqual(laneTop(l, 40, 5, byId), { top: 0, h: laneHeight(TRACKS[4]), lane: true, levels: 1 });
    const t4 = l.scroll.find((r) => r.key === 't4');
    assert.deepEqual(laneTop(l, 40, 4, byId), { top: t4.y + l.pinnedH - 40, h: t4.h, lane: true, levels: 3 });
    const g = l.scroll.find((r) => r.key === 'gpu:0');
    assert.deepEqual(laneTop(l, 0, 1, byId), { top: g.y + l.pinnedH, h: GROUP_H, lane: false });
    const py = l.scroll.find((r) => r.key === 'cpu:595');
    assert.deepEqual(laneTop(l, 0, 6, byId), { top: py.y + l.pinnedH, h: GROUP_H, lane: false }, 'a hidden empty lane: its group row');
    assert.equal(laneTop(l, 0, 99, byId), null, 'unknown track');
    assert.equal(depthY(100, 2), 100 + LANE_PAD + 2 * SLICE_H);
});

test('scrolling stops when the last row reaches the bottom', () => {
    const l = buildLayout(TRACKS, COUNTERS, opts({ pins: new Set([5]) }));
    const lanesH = 200;
    const max = l.contentH - (lanesH - l.pinnedH);
    assert.equal(maxScroll(l, lanesH), max);
    assert.equal(clampScroll(l, lanesH, -5), 0);
    assert.equal(clampScroll(l, lanesH, 1e9), max);
    assert.equal(clampScroll(l, lanesH, 10), 10);
    assert.equal(maxScroll(l, 1e6), 0, 'everything fits: no scroll');
});

test('hitTest: the item under a point, within two pixels', () => {
    const l = buildLayout([track(1, 'cpu', 1, 1, { max_depth: 1 })], [], opts());
    const view = { start: 0, end: 1000, width: 1000 }; // 1 µs per px
    const items = new Map([[1, [{ ts: [100, 500], dur: [50, 10] }, { ts: [110], dur: [20] }]]]);
    const lane = l.scroll[1];
    const y0 = HEAD_H + lane.y + LANE_PAD + 5; // depth 0
    assert.deepEqual(hitTest(l, 0, items, view, 120, y0), { track: 1, depth: 0, i: 0, x: 120, y: y0 });
    assert.equal(hitTest(l, 0, items, view, 505, y0).i, 1);
    assert.equal(hitTest(l, 0, items, view, 511, y0).i, 1, 'within two pixels');
    assert.equal(hitTest(l, 0, items, view, 300, y0), null, 'between slices');
    assert.equal(hitTest(l, 0, items, view, 120, y0 + SLICE_H).depth, 1);
    assert.equal(hitTest(l, 0, items, view, 100, y0 + SLICE_H), null, 'depth 1 starts later');
    assert.equal(hitTest(l, 0, items, view, 120, HEAD_H + 5), null, 'the group row');
    assert.equal(hitTest(l, 0, items, view, 120, 5), null, 'the ruler');
    assert.equal(hitTest(l, 0, new Map(), view, 120, y0), null, 'nothing loaded');
});

test('names and order of ids', () => {
    assert.equal(groupKey(TRACKS[0]), 'gpu:0');
    assert.equal(groupKey({ ...TRACKS[0], device: null }), 'gpu:595');
    assert.equal(groupKey(TRACKS[2]), 'cpu:595');
    assert.equal(laneTitle(TRACKS[0]), 'GPU 0 / stream 7');
    assert.equal(laneTitle(TRACKS[2]), 'python3 / thread 620');
    assert.equal(laneTitle(TRACKS[4]), 'pid 12 / Spans');
    assert.equal(laneTitle({ ...TRACKS[4], name: '  ' }), 'pid 12 / track 5');
    const ids = [10, '9', 'b', 2, 'a', '', null];
    assert.deepEqual([...ids].sort(idCompare), [2, '9', 10, '', null, 'a', 'b']);
    assert.ok(idCompare(2, 10) < 0, 'numbers by value');
    assert.ok(idCompare('2', '10') < 0, 'numeric strings by value');
    assert.ok(idCompare(5, 'main') < 0, 'numbers before text');
    assert.ok(idCompare('a', 'b') < 0);
});
