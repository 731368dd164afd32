// Tests for web/js/format.js — run with `node --test tests/web/`.
process.env.TZ = 'UTC'; // formatDate uses local time; pin it before any Date use

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
    DASH,
    formatAge,
    formatBytes,
    formatComputeCapability,
    formatDate,
    formatDateTimeUtc,
    formatDuration,
    formatNumber,
    formatPercent,
    formatTraceTime,
    plural,
    traceWallClock,
} from '../../web/js/format.js';

test('formatNumber groups thousands with commas', () => {
    assert.equal(formatNumber(0), '0');
    assert.equal(formatNumber(999), '999');
    assert.equal(formatNumber(1000), '1,000');
    assert.equal(formatNumber(1234567), '1,234,567');
    assert.equal(formatNumber(-9876543), '-9,876,543');
    assert.equal(formatNumber(1234.5678, 2), '1,234.57');
    assert.equal(formatNumber(12.4), '12');
    assert.equal(formatNumber(-0.2), '0', 'no "-0"');
    assert.equal(formatNumber(2 ** 53), '9,007,199,254,740,992');
});

test('formatNumber returns a dash for missing values', () => {
    for (const v of [null, undefined, NaN, Infinity]) assert.equal(formatNumber(/** @type {any} */ (v)), DASH);
});

test('formatBytes uses binary units with one decimal below 100', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1), '1 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1024), '1.0 KiB');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(1.2 * 1024 * 1024), '1.2 MiB');
    assert.equal(formatBytes(123456789), '118 MiB');
    assert.equal(formatBytes(80 * 1024 ** 3), '80.0 GiB');
    assert.equal(formatBytes(85899345920), '80.0 GiB');
    assert.equal(formatBytes(5 * 1024 ** 4), '5.0 TiB');
    assert.equal(formatBytes(-2048), '-2.0 KiB');
});

test('formatBytes promotes values that round up to the next unit', () => {
    assert.equal(formatBytes(1024 * 1024 - 1), '1.0 MiB');
    assert.equal(formatBytes(1023.7 * 1024), '1.0 MiB');
    assert.equal(formatBytes(1000 * 1024), '1000 KiB');
});

test('formatBytes returns a dash for missing values', () => {
    assert.equal(formatBytes(null), DASH);
    assert.equal(formatBytes(undefined), DASH);
    assert.equal(formatBytes(NaN), DASH);
});

test('formatDuration picks a unit and keeps three significant digits', () => {
    assert.equal(formatDuration(0), '0 ns');
    assert.equal(formatDuration(850), '850 ns');
    assert.equal(formatDuration(1000), '1.00 µs');
    assert.equal(formatDuration(1234), '1.23 µs');
    assert.equal(formatDuration(450000), '450 µs');
    assert.equal(formatDuration(12.3e6), '12.3 ms');
    assert.equal(formatDuration(1.2e9), '1.20 s');
    assert.equal(formatDuration(59.94e9), '59.9 s');
    assert.equal(formatDuration(-5e6), '-5.00 ms');
});

test('formatDuration promotes values that round up to the next unit', () => {
    assert.equal(formatDuration(999.7), '1.00 µs');
    assert.equal(formatDuration(999_700), '1.00 ms');
    assert.equal(formatDuration(999_999_999), '1.00 s');
});

test('formatDuration writes minutes and hours for long spans', () => {
    assert.equal(formatDuration(60e9), '1 min 00 s');
    assert.equal(formatDuration(125e9), '2 min 05 s');
    assert.equal(formatDuration(3600e9), '1 h 00 min');
    assert.equal(formatDuration(3720e9), '1 h 02 min');
    assert.equal(formatDuration(null), DASH);
});

test('formatDate and formatDateTimeUtc', () => {
    const t = Date.UTC(2024, 4, 1, 14, 3, 7) / 1000;
    assert.equal(formatDate(t), '2024-05-01 14:03');
    assert.equal(formatDateTimeUtc(t), '2024-05-01 14:03:07 UTC');
    assert.equal(formatDate(0), '1970-01-01 00:00');
    assert.equal(formatDate(null), DASH);
    assert.equal(formatDate(NaN), DASH);
    assert.equal(formatDate(1e20), DASH, 'out of range dates');
    assert.equal(formatDateTimeUtc(undefined), DASH);
});

test('formatAge', () => {
    const now = 1_700_000_000;
    assert.equal(formatAge(now, now), 'just now');
    assert.equal(formatAge(now + 30, now), 'just now', 'clock skew');
    assert.equal(formatAge(now - 59, now), 'just now');
    assert.equal(formatAge(now - 5 * 60, now), '5 min ago');
    assert.equal(formatAge(now - 3 * 3600, now), '3 h ago');
    assert.equal(formatAge(now - 2 * 86400, now), '2 d ago');
    assert.equal(formatAge(now - 40 * 86400, now), formatDate(now - 40 * 86400));
    assert.equal(formatAge(null, now), DASH);
});

test('formatPercent', () => {
    assert.equal(formatPercent(1, 3), '33.3 %');
    assert.equal(formatPercent(0, 3), '0 %');
    assert.equal(formatPercent(1, 10000), '<0.1 %');
    assert.equal(formatPercent(5, 5), '100.0 %');
    assert.equal(formatPercent(1, 0), DASH);
    assert.equal(formatPercent(null, 4), DASH);
});

test('plural', () => {
    assert.equal(plural(1, 'rank'), '1 rank');
    assert.equal(plural(0, 'rank'), '0 ranks');
    assert.equal(plural(1200, 'event'), '1,200 events');
    assert.equal(plural(2, 'process', 'processes'), '2 processes');
    assert.equal(plural(undefined, 'rank'), DASH + ' ranks');
});

test('formatComputeCapability', () => {
    assert.equal(formatComputeCapability(9, 0), '9.0');
    assert.equal(formatComputeCapability(8, 6), '8.6');
    assert.equal(formatComputeCapability(7, null), '7.0');
    assert.equal(formatComputeCapability(null, 5), DASH);
});

test('formatTraceTime reads epoch nanoseconds as UTC, other clocks as seconds', () => {
    const t = Date.UTC(2024, 4, 20, 10, 13, 10, 123) * 1e6 + 456789;
    assert.equal(formatTraceTime(t), '2024-05-20 10:13:10.123 UTC');
    assert.equal(formatTraceTime(5123456789000), '5123.456789 s');
    assert.equal(formatTraceTime(0), '0.000000 s');
    assert.equal(formatTraceTime(null), DASH);
});

test('traceWallClock uses epoch timestamps as is, else adds the clock base', () => {
    const epoch = Date.UTC(2026, 10, 22, 10, 48, 47) * 1e6;
    assert.equal(traceWallClock(epoch, 0), epoch);
    assert.equal(traceWallClock(epoch, 12345), epoch, 'an epoch timestamp ignores the base');
    const base = Date.UTC(2026, 9, 1, 12, 17, 6) * 1e6;
    const sinceBoot = 4487501.510942e9;
    assert.equal(formatTraceTime(traceWallClock(sinceBoot, base)), '2026-11-22 10:48:47.510 UTC');
    assert.equal(traceWallClock(sinceBoot, 0), null, 'no base, no wall clock');
    assert.equal(traceWallClock(sinceBoot, null), null);
    assert.equal(traceWallClock(null, base), null);
});

test('formatMicros prints µs inputs with formatDuration\'s units', async () => {
    const { formatMicros } = await import('../../web/js/format.js');
    assert.equal(formatMicros(850), '850 µs');
    assert.equal(formatMicros(12345), '12.3 ms');
    assert.equal(formatMicros(0.5), '500 ns');
    assert.equal(formatMicros(8983.028), '8.98 ms');
    assert.equal(formatMicros(2.5e6), '2.50 s');
    assert.equal(formatMicros(0), '0 µs');
    assert.equal(formatMicros(null), DASH);
});

test('formatShare prints a 0..1 fraction as a percentage', async () => {
    const { formatShare } = await import('../../web/js/format.js');
    assert.equal(formatShare(0.6210432), '62.1 %');
    assert.equal(formatShare(1), '100.0 %');
    assert.equal(formatShare(0), '0 %');
    assert.equal(formatShare(0.0004), '<0.1 %');
    assert.equal(formatShare(null), DASH, 'a figure the trace does not give');
});

test('formatOffset prints times relative to an origin with fixed decimals', async () => {
    const { formatOffset } = await import('../../web/js/format.js');
    const t0 = 4487348861012.5703;
    assert.equal(formatOffset(t0 + 812.44, t0), '812.4 µs');
    assert.equal(formatOffset(t0 + 12345.678, t0), '12.346 ms');
    assert.equal(formatOffset(t0 + 4.2e6, t0), '4.2000 s');
    assert.equal(formatOffset(t0 - 1500, t0), '-1.500 ms');
    assert.equal(formatOffset(500), '500.0 µs', 'origin defaults to 0');
    assert.equal(formatOffset(null, t0), DASH);
});
