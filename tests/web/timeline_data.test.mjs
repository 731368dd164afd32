// Tests for web/js/timeline/data.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { NEAR_US, argText, counterMap, counterUnit, formatCounter, itemStartingAt, unpackWindow } from '../../web/js/timeline/data.js';

const WINDOW = {
    start_us: 0, end_us: 1000, width: 100, bucket_us: 10,
    strings: ['aten::mm', 'cudaLaunchKernel', '<img src=x>'],
    tracks: [
        {
            id: 3,
            depths: [
                { depth: 0, ts: [0, 100, 400], dur: [50, 200, 10], name: [0, 2, 9], n: [1, 12, 1], id: [7, 0, 8] },
                { depth: 2, ts: [110], dur: [5], name: [1] }, // a hole at depth 1; no n/id columns
            ],
        },
        { id: 4, depths: [] },
    ],
    counters: [{ id: 1, ts: [0, 10], min: [0, 1], max: [2, 3], last: [1, 2] }],
};

test('unpackWindow resolves names per track and depth', () => {
    const m = unpackWindow(WINDOW);
    assert.deepEqual([...m.keys()], [3, 4]);
    const d = m.get(3);
    assert.equal(d.length, 3);
    assert.equal(d[1], undefined, 'a depth without items is a hole');
    assert.deepEqual(d[0].name, ['aten::mm', '<img src=x>', ''], 'an index past the table is an empty name');
    assert.deepEqual(d[0].n, [1, 12, 1]);
    assert.deepEqual(d[0].id, [7, 0, 8]);
    assert.deepEqual(d[2], { ts: [110], dur: [5], name: ['cudaLaunchKernel'], n: [1], id: [0] }, 'missing n and id: real slices');
    assert.deepEqual(m.get(4), []);
    assert.equal(unpackWindow({}).size, 0);
});

test('counterMap indexes counters by id', () => {
    const m = counterMap(WINDOW);
    assert.deepEqual(m.get(1).max, [2, 3]);
    assert.equal(counterMap({}).size, 0);
});

test('itemStartingAt finds the shallowest item starting at a time', () => {
    const d = unpackWindow(WINDOW).get(3);
    assert.deepEqual(itemStartingAt(d, 0, false), { depth: 0, i: 0 });
    assert.deepEqual(itemStartingAt(d, 400 + NEAR_US / 2, false), { depth: 0, i: 2 }, 'within NEAR_US');
    assert.deepEqual(itemStartingAt(d, 100, false), { depth: 0, i: 1 }, 'a merged item');
    assert.equal(itemStartingAt(d, 100, true), null, 'only real slices');
    assert.deepEqual(itemStartingAt(d, 110, true), { depth: 2, i: 0 }, 'inside a merged item, deeper');
    assert.equal(itemStartingAt(d, 120, false), null, 'inside a slice is not its start');
    assert.equal(itemStartingAt(undefined, 0, false), null);
});

test('argument values are text, objects as JSON', () => {
    assert.equal(argText(null), '—');
    assert.equal(argText(undefined), '—');
    assert.equal(argText(42), '42');
    assert.equal(argText(1 / 3), '0.333333');
    assert.equal(argText('<b>x</b>'), '<b>x</b>');
    assert.equal(argText({ a: [1, 2] }), '{"a":[1,2]}');
    assert.equal(argText(true), 'true');
});

test('counter values: bytes with binary prefixes, else three figures and the unit', () => {
    assert.equal(formatCounter(0, 'bytes'), '0 B');
    assert.equal(formatCounter(8, 'B'), '8 B');
    assert.equal(formatCounter(2 * 1024 ** 3, 'bytes'), '2.0 GiB');
    assert.equal(formatCounter(-1536, 'bytes'), '-1.5 KiB');
    assert.equal(formatCounter(3 * 1024 ** 5, 'bytes'), '3072.0 TiB');
    assert.equal(formatCounter(123.4, '%'), '123 %');
    assert.equal(formatCounter(12.34, ''), '12.3');
    assert.equal(formatCounter(1.234, 'W'), '1.23 W');
    assert.equal(formatCounter(8, 'launches'), '8 launches', 'whole counts without decimals');
    assert.equal(formatCounter(31.79, 'GB/s'), '31.8 GB/s');
    assert.equal(formatCounter(NaN, 'bytes'), '—');
    assert.equal(counterUnit([{ id: 1, unit: 'bytes' }], 1), 'bytes');
    assert.equal(counterUnit([{ id: 1, unit: 'bytes' }], 2), '');
    assert.equal(counterUnit(null, 1), '');
});
