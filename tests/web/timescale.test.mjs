// Tests for web/js/timescale.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
    MAX_FETCH_WIDTH, MIN_SPAN_US, clampView, fetchWindow, firstEndingAfter, fitSpan, formatSpan, hitIndex, needsRefetch,
    panBy, pxToTime, revealTime, rulerTicks, tickStep, timeToPx, usPerPx, zoomAt, zoomLevel,
} from '../../web/js/timescale.js';

const B = { start: 1000, end: 11000 }; // a 10 ms run
const close = (a, b, eps = 1e-6) => assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${a} ≈ ${b}`);

test('time and pixel convert both ways', () => {
    const v = { start: 1000, end: 2000, width: 500 };
    assert.equal(timeToPx(v, 1000), 0);
    assert.equal(timeToPx(v, 2000), 500);
    assert.equal(timeToPx(v, 1500), 250);
    assert.equal(pxToTime(v, 250), 1500);
    assert.equal(usPerPx(v), 2);
    for (const px of [-10, 0, 3.5, 499]) close(timeToPx(v, pxToTime(v, px)), px);
});

test('zoom keeps the point under the cursor and stays in the run', () => {
    const v = { start: 3000, end: 5000, width: 1000 };
    const z = zoomAt(v, 0.5, 3500, B);
    assert.equal(z.end - z.start, 1000);
    close(timeToPx(z, 3500), timeToPx(v, 3500));
    const out = zoomAt(v, 100, 4000, B);
    assert.deepEqual([out.start, out.end], [B.start, B.end], 'zooming out stops at the whole run');
    const tiny = zoomAt(v, 1e-12, 4000, B);
    close(tiny.end - tiny.start, MIN_SPAN_US);
    const edge = zoomAt({ start: 1000, end: 2000, width: 100 }, 2, 1000, B);
    assert.equal(edge.start, 1000, 'zooming out at the left edge does not go before the run');
});

test('pan shifts and is clamped without shrinking the window', () => {
    const v = { start: 3000, end: 5000, width: 1000 };
    assert.deepEqual(panBy(v, 500, B), { start: 3500, end: 5500, width: 1000 });
    assert.deepEqual(panBy(v, -1e9, B), { start: 1000, end: 3000, width: 1000 });
    assert.deepEqual(panBy(v, 1e9, B), { start: 9000, end: 11000, width: 1000 });
});

test('clamp repairs bad windows', () => {
    assert.deepEqual(clampView({ start: 0, end: 1e9, width: 10 }, B), { start: 1000, end: 11000, width: 10 });
    assert.deepEqual(clampView({ start: NaN, end: NaN, width: 10 }, B), { start: 1000, end: 11000, width: 10 });
    const empty = clampView({ start: 2000, end: 2000, width: 10 }, B);
    close(empty.end - empty.start, MIN_SPAN_US);
});

test('fit puts a slice in the middle with margins', () => {
    const f = fitSpan(5000, 5100, 800, B);
    close(f.start, 4985);
    close(f.end, 5115);
    const point = fitSpan(5000, 5000, 800, B);
    assert.ok(point.end - point.start > 0 && point.start < 5000 && point.end > 5000);
    assert.deepEqual(fitSpan(0, 1e9, 800, B), { start: 1000, end: 11000, width: 800 });
});

test('reveal recentres only when the time is near or past an edge', () => {
    const v = { start: 3000, end: 5000, width: 100 };
    assert.equal(revealTime(v, 4000, B), v);
    const r = revealTime(v, 8000, B);
    assert.deepEqual([r.start, r.end], [7000, 9000]);
});

test('tick steps are 1, 2 or 5 times a power of ten', () => {
    assert.equal(tickStep(1), 1);
    assert.equal(tickStep(1.3), 2);
    assert.equal(tickStep(3), 5);
    assert.equal(tickStep(7), 10);
    assert.equal(tickStep(0.0013), 0.002);
    assert.equal(tickStep(420), 500);
});

test('ruler ticks pick the unit of their step', () => {
    const ms = rulerTicks({ start: 1000, end: 11000, width: 1000 }, 1000);
    assert.equal(ms.step, 1000);
    assert.equal(ms.unit, 'ms');
    assert.deepEqual(ms.ticks.slice(0, 3).map((t) => t.label), ['0 ms', '1 ms', '2 ms']);
    assert.equal(ms.ticks[1].x, 100);
    const us = rulerTicks({ start: 1000, end: 1100, width: 1000 }, 1000);
    assert.equal(us.unit, 'µs');
    assert.deepEqual(us.ticks.slice(0, 2).map((t) => t.label), ['0 µs', '10 µs']);
    const ns = rulerTicks({ start: 1000.5, end: 1000.6, width: 1000 }, 1000);
    assert.equal(ns.unit, 'ns');
    assert.equal(ns.ticks[0].label, '500 ns');
    const s = rulerTicks({ start: 0, end: 20e6, width: 1000 }, 0);
    assert.equal(s.unit, 's');
    assert.deepEqual(s.ticks.slice(0, 2).map((t) => t.label), ['0 s', '2 s']);
    const half = rulerTicks({ start: 0, end: 5000, width: 1000 }, 0);
    assert.equal(half.step, 500);
    assert.deepEqual(half.ticks.slice(0, 3).map((t) => t.label), ['0.0 ms', '0.5 ms', '1.0 ms']);
    for (const r of [ms, us, ns, s, half]) {
        for (let i = 1; i < r.ticks.length; i++) assert.ok(r.ticks[i].x - r.ticks[i - 1].x >= 89.9);
    }
});

test('ruler labels are relative to the origin and never "-0"', () => {
    const r = rulerTicks({ start: 4487348861138.466, end: 4487348861238.466, width: 1000 }, 4487348861138.466);
    assert.ok(r.ticks[0].label === '0 µs' || r.ticks[0].label === '10 µs', r.ticks[0].label);
    assert.ok(r.ticks.every((t) => !t.label.startsWith('-')));
    const before = rulerTicks({ start: -50, end: 50, width: 1000 }, 0);
    assert.ok(before.ticks.some((t) => t.label === '0 µs'));
});

test('spans read in their unit', () => {
    assert.equal(formatSpan(0.25), '250 ns');
    assert.equal(formatSpan(1500), '1.50 ms');
    assert.equal(formatSpan(12.5), '12.5 µs');
    assert.equal(formatSpan(3.2e6), '3.20 s');
});

test('fetch windows are three screens wide with power-of-two buckets', () => {
    const v = { start: 5000, end: 6000, width: 1000 };
    const w = fetchWindow(v, B);
    assert.deepEqual([w.start, w.end], [4000, 7000]);
    assert.equal(w.level, 0);
    assert.equal(w.width, 3000);
    const wide = fetchWindow({ start: 5000, end: 6500, width: 1000 }, B);
    assert.equal(wide.level, 0, '1.5 µs per pixel: 1 µs buckets');
    assert.ok(wide.width >= 3 * 1000 && wide.width <= 6 * 1000);
    const edge = fetchWindow({ start: 1000, end: 2000, width: 1000 }, B);
    assert.equal(edge.start, 1000, 'clamped to the run');
    const huge = fetchWindow({ start: 1000, end: 11000, width: 20000 }, { start: 1000, end: 11000 });
    assert.ok(huge.width <= MAX_FETCH_WIDTH);
    assert.equal(zoomLevel({ start: 0, end: 1, width: 1024 }), -10);
});

test('refetch only when the level changes or the view leaves the window', () => {
    const v = { start: 5000, end: 6000, width: 1000 };
    const w = fetchWindow(v, B);
    assert.equal(needsRefetch(null, v, B), true);
    assert.equal(needsRefetch(w, v, B), false);
    assert.equal(needsRefetch(w, panBy(v, 800, B), B), false, 'panning within the window');
    assert.equal(needsRefetch(w, panBy(v, 1200, B), B), true, 'left the window');
    assert.equal(needsRefetch(w, zoomAt(v, 0.9, 5500, B), B), true, 'finer level');
    assert.equal(needsRefetch(w, zoomAt(v, 1.2, 5500, B), B), false, 'same level, still inside');
    assert.equal(needsRefetch(w, zoomAt(v, 2.5, 5500, B), B), true, 'coarser level');
});

test('hit testing finds the item under a time, with a tolerance', () => {
    const ts = [0, 10, 20, 50];
    const dur = [5, 5, 20, 1];
    assert.equal(hitIndex(ts, dur, 2, 0), 0);
    assert.equal(hitIndex(ts, dur, 7, 0), -1);
    assert.equal(hitIndex(ts, dur, 8.5, 3), 1, 'nearest within tolerance');
    assert.equal(hitIndex(ts, dur, 7, 3), 0);
    assert.equal(hitIndex(ts, dur, 30, 0), 2);
    assert.equal(hitIndex(ts, dur, 50.5, 0), 3);
    assert.equal(hitIndex(ts, dur, 100, 1), -1);
    assert.equal(hitIndex([], [], 1, 1), -1);
    assert.equal(firstEndingAfter(ts, dur, 12), 1);
    assert.equal(firstEndingAfter(ts, dur, 100), 4);
    assert.equal(firstEndingAfter(ts, dur, -1), 0);
});

test('slice colours: a stable hash and a palette per category', async () => {
    const { nameHash, sliceCategory } = await import('../../web/js/views/timeline.js');
    assert.equal(nameHash('aten::mm'), nameHash('aten::mm'), 'stable');
    assert.notEqual(nameHash('aten::mm'), nameHash('aten::mn'));
    assert.ok(Number.isInteger(nameHash('<img src=x onerror=alert(1)>')) && nameHash('') >= 0);
    assert.equal(sliceCategory('nvjet_sm90_tst_256x128', 'gpu'), 'kernel');
    assert.equal(sliceCategory('ncclDevKernel_AllReduce_Sum_f32', 'gpu'), 'comm');
    assert.equal(sliceCategory('gloo:all_reduce', 'cpu'), 'comm');
    assert.equal(sliceCategory('Memcpy HtoD (Pinned -> Device)', 'gpu'), 'memory');
    assert.equal(sliceCategory('cudaLaunchKernel', 'cpu'), 'runtime');
    assert.equal(sliceCategory('cuLaunchKernelEx', 'cpu'), 'runtime');
    assert.equal(sliceCategory('ProfilerStep#3', 'cpu'), 'step');
    assert.equal(sliceCategory('aten::addmm', 'cpu'), 'op');
});
