// Tests for the Timeline tab's screen helpers — layout.js (GPU first, folded
// levels), drawer.js (clampDrawer), labels.js (stickyOffset) and options.js
// (levelChoices). Run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DRAWER_DEFAULT, DRAWER_MIN, LANES_MIN, clampDrawer } from '../../web/js/timeline/drawer.js';
import { stickyOffset } from '../../web/js/timeline/labels.js';
import { LANE_PAD, SLICE_H, buildLayout, hitTest, HEAD_H, laneHeight, laneLevels, laneTop, sliceY } from '../../web/js/timeline/layout.js';
import { LEVEL_CHOICES, levelChoices } from '../../web/js/timeline/options.js';
import { foldedRanks } from '../../web/js/timeline/urlsync.js';

const track = (id, kind, tid, max_depth) => ({
    id, kind, pid: 1, tid, name: `t${tid}`, process: 'p', device: kind === 'gpu' ? 0 : null, stream: kind === 'gpu' ? tid : null, max_depth, nslices: 5,
});
const TRACKS = [track(1, 'cpu', 1, 40), track(2, 'cpu', 2, 1), track(3, 'gpu', 7, 0)];
const opts = (o = {}) => ({ pins: new Set(), collapsed: new Set(), showEmpty: false, ...o });

test('GPU first puts the device groups above the processes', () => {
    const kinds = (l) => l.scroll.filter((r) => r.type === 'group').map((r) => r.kind);
    assert.deepEqual(kinds(buildLayout(TRACKS, [], opts())), ['cpu', 'gpu']);
    assert.deepEqual(kinds(buildLayout(TRACKS, [], opts({ gpuFirst: true }))), ['gpu', 'cpu']);
});

test('folded levels cap a lane at N depths and leave shallow lanes alone', () => {
    assert.equal(laneLevels(TRACKS[0]), 41);
    assert.equal(laneLevels(TRACKS[0], 4), 4);
    assert.equal(laneLevels(TRACKS[1], 4), 2);
    assert.equal(laneHeight(TRACKS[0], 4), 4 * SLICE_H + 2 * LANE_PAD);
    const l = buildLayout(TRACKS, [], opts({ maxLevels: 4 }));
    const deep = l.scroll.find((r) => r.key === 't1');
    assert.equal(deep.levels, 4);
    assert.equal(deep.h, laneHeight(TRACKS[0], 4));
    // a folded depth is not hit; a selection there is drawn on the last depth shown
    const items = new Map([[1, Array.from({ length: 41 }, () => ({ ts: [0], dur: [100] }))]]);
    const view = { start: 0, end: 100, width: 1000 };
    const y3 = HEAD_H + deep.y + LANE_PAD + 3 * SLICE_H + 2;
    assert.equal(hitTest(l, 0, items, view, 50, y3).depth, 3);
    assert.equal(hitTest(l, 0, items, view, 50, y3 + SLICE_H), null); // below the lane: the next row
    const lt = laneTop(l, 0, 1, new Map());
    assert.equal(sliceY(lt, 30), sliceY(lt, 3));
    assert.equal(sliceY(lt, 2), lt.top + LANE_PAD + 2 * SLICE_H);
});

test('a drawer keeps its bounds and room for the lanes', () => {
    assert.equal(clampDrawer(10, 800), DRAWER_MIN);
    assert.equal(clampDrawer(300, 800), 300);
    assert.equal(clampDrawer(5000, 800), 800 - LANES_MIN - 80);
    assert.equal(clampDrawer(Infinity, 800), 800 - LANES_MIN - 80);
    assert.equal(clampDrawer(NaN, 800), DRAWER_DEFAULT);
    assert.equal(clampDrawer(Infinity, 0), DRAWER_DEFAULT); // not laid out yet
    assert.equal(clampDrawer(300, 100), DRAWER_MIN); // a tiny window: the drawer's minimum wins
});

test('a sticky label moves down while its lane top is scrolled off, and stops at its bottom', () => {
    const r = { y: 100, h: 500 };
    assert.equal(stickyOffset(r, 0), 0);
    assert.equal(stickyOffset(r, 100), 0);
    assert.equal(stickyOffset(r, 250), 150);
    assert.equal(stickyOffset(r, 1000), 500 - 22);
});

test('a URL level count outside the menu is offered too', () => {
    assert.deepEqual(levelChoices(4), [...LEVEL_CHOICES]);
    const c = levelChoices(5);
    assert.ok(c.includes(5) && c.indexOf(5) === c.indexOf(4) + 1);
});

test('the folded ranks of the URL come from the collapsed group keys', () => {
    assert.deepEqual(foldedRanks(new Set(['rank:3', 'cpu:1', 'rank:0:cpu:2', 'rank:10'])), [3, 10]);
});

test('a counter\'s value at a time is the last sample at or before it', async () => {
    const { counterAt } = await import('../../web/js/timeline/data.js');
    const c = { ts: [10, 20, 30], min: [0, 1, 5], max: [3, 4, 9], last: [2, 4, 7] };
    assert.equal(counterAt(c, 5), null);
    assert.deepEqual(counterAt(c, 10), { ts: 10, value: 2, min: 0, max: 3 });
    assert.deepEqual(counterAt(c, 29.9), { ts: 20, value: 4, min: 1, max: 4 });
    assert.deepEqual(counterAt(c, 1e9), { ts: 30, value: 7, min: 5, max: 9 });
    assert.equal(counterAt(undefined, 10), null);
    assert.equal(counterAt({ ts: [], min: [], max: [], last: [] }, 10), null);
});
