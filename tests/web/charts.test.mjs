// Tests for web/js/charts.js (pure chart maths) — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
    CATEGORY_INFO,
    byteTicks,
    categoryInfo,
    dragWindow,
    linearScale,
    niceStep,
    niceTicks,
    sampleAt,
    stackBreakdown,
    timeTickLabels,
} from '../../web/js/charts.js';

test('linearScale maps and inverts, also reversed ranges (y axes)', () => {
    const x = linearScale(100, 200, 0, 500);
    assert.equal(x.map(100), 0);
    assert.equal(x.map(150), 250);
    assert.equal(x.map(200), 500);
    assert.equal(x.invert(250), 150);
    const y = linearScale(0, 10, 300, 20);
    assert.equal(y.map(0), 300);
    assert.equal(y.map(10), 20);
    assert.equal(y.invert(160), 5);
    const flat = linearScale(5, 5, 10, 90);
    assert.equal(flat.map(123), 10, 'a zero-width domain does not divide by zero');
    assert.equal(flat.invert(50), 5);
});

test('linearScale keeps trace-clock microseconds precise', () => {
    const t0 = 4487348861012.5703;
    const x = linearScale(t0, t0 + 35704, 72, 1372);
    assert.ok(Math.abs(x.invert(x.map(t0 + 1234.5)) - (t0 + 1234.5)) < 1e-3);
});

test('niceStep picks 1, 2 or 5 times a power of ten', () => {
    assert.equal(niceStep(10, 5), 2);
    assert.equal(niceStep(100, 4), 50);
    assert.equal(niceStep(0.9, 3), 0.5);
    assert.equal(niceStep(9000, 5), 2000);
    assert.equal(niceStep(0, 5), 1);
});

test('niceTicks covers the range with round values', () => {
    assert.deepEqual(niceTicks(0, 8983, 4), { ticks: [0, 5000, 10000], step: 5000 });
    assert.deepEqual(niceTicks(0, 10, 5).ticks, [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(niceTicks(0.1, 0.7, 3).ticks, [0, 0.2, 0.4, 0.6, 0.8], 'no 0.6000000000000001');
    const t = niceTicks(331.2, 35704, 6);
    assert.ok(t.ticks[0] <= 331.2 && t.ticks[t.ticks.length - 1] >= 35704);
    assert.deepEqual(niceTicks(0, 0).ticks, [0, 0.2], 'an empty range gets one step');
    assert.deepEqual(niceTicks(0, 3).ticks, [0, 1, 2, 3]);
    assert.deepEqual(niceTicks(NaN, 1).ticks, [0, 1]);
});

test('byteTicks fall on binary sizes', () => {
    const GiB = 1024 ** 3;
    const MiB = 1024 ** 2;
    assert.deepEqual(byteTicks(2.6 * GiB, 4).ticks, [0, GiB, 2 * GiB, 3 * GiB]);
    assert.deepEqual(byteTicks(93 * MiB, 4).ticks, [0, 50 * MiB, 100 * MiB]);
    assert.deepEqual(byteTicks(700, 4).ticks, [0, 200, 400, 600, 800]);
    assert.deepEqual(byteTicks(0).ticks, [0, 1024]);
});

test('timeTickLabels use one unit and the decimals the step needs', () => {
    assert.deepEqual(timeTickLabels([0, 5000, 10000], 5000), ['0 ms', '5 ms', '10 ms']);
    assert.deepEqual(timeTickLabels([0, 500, 1000, 1500], 500), ['0.0 ms', '0.5 ms', '1.0 ms', '1.5 ms']);
    assert.deepEqual(timeTickLabels([0, 200, 400], 200), ['0 µs', '200 µs', '400 µs']);
    assert.deepEqual(timeTickLabels([0, 2e6, 4e6], 2e6), ['0 s', '2 s', '4 s']);
    assert.deepEqual(timeTickLabels([6500, 7000, 7500], 500), ['6.5 ms', '7.0 ms', '7.5 ms']);
});

test('stackBreakdown stacks in category order and ignores bad values', () => {
    const segs = stackBreakdown({ kernel: 5, memcpy: 1, other: 2, bogus: 100, memset: -3 }, ['kernel', 'memcpy', 'memset', 'other']);
    assert.deepEqual(
        segs.map((s) => [s.key, s.start, s.end]),
        [['kernel', 0, 5], ['memcpy', 5, 6], ['memset', 6, 6], ['other', 6, 8]],
    );
});

test('sampleAt finds the sample in force at a time', () => {
    const ts = [10, 20, 30, 40];
    assert.equal(sampleAt(ts, 5), 0);
    assert.equal(sampleAt(ts, 10), 0);
    assert.equal(sampleAt(ts, 29.9), 1);
    assert.equal(sampleAt(ts, 30), 2);
    assert.equal(sampleAt(ts, 1e9), 3);
    assert.equal(sampleAt([], 3), -1);
});

test('dragWindow turns a drag into a clamped time window', () => {
    const x = linearScale(1000, 2000, 100, 1100); // 1 µs per pixel
    assert.deepEqual(dragWindow(300, 500, x), { start: 1200, end: 1400 });
    assert.deepEqual(dragWindow(500, 300, x), { start: 1200, end: 1400 }, 'either direction');
    assert.deepEqual(dragWindow(50, 200, x), { start: 1000, end: 1100 }, 'clamped to the domain');
    assert.equal(dragWindow(300, 302, x), null, 'a click is not a zoom');
});

test('every category has a label, colour and help; unknown keys get a fallback', () => {
    for (const k of ['kernel', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu_exec', 'other']) {
        const c = CATEGORY_INFO[k];
        assert.ok(c.label && /^#[0-9a-f]{6}$/.test(c.color) && c.help, k);
    }
    assert.equal(new Set(Object.values(CATEGORY_INFO).map((c) => c.color)).size, 8, 'distinct colours');
    assert.equal(categoryInfo('new_thing').label, 'new_thing');
});
