// Tests for the pure helpers of web/js/views/compare.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { speedupText } from '../../web/js/views/compare.js';

test('speedup reads as faster, slower or the same', () => {
    assert.equal(speedupText(3.0466), '3.05× faster');
    assert.equal(speedupText(0.62), '1.61× slower');
    assert.equal(speedupText(1.004), 'same speed');
    assert.equal(speedupText(0.996), 'same speed');
    for (const bad of [null, undefined, 0, -1, NaN]) assert.equal(speedupText(bad), '—', String(bad));
});

test('N-way compare: the id list is judged like the server does', async () => {
    const { idsProblem, baselineIndex, pointsText, bytesDelta, COMPARE_MAX } = await import('../../web/js/views/comparen.js');
    assert.equal(idsProblem(['a', 'b', 'c']), null);
    assert.equal(idsProblem(Array.from({ length: COMPARE_MAX }, (_, i) => 'r' + i)), null);
    assert.match(idsProblem(Array.from({ length: COMPARE_MAX + 1 }, (_, i) => 'r' + i)) || '', /at most 8/);
    assert.match(idsProblem(['a', 'b', 'a']) || '', /Run a is named twice/);
    assert.match(idsProblem(['a', '', 'b']) || '', /not a run id/);
    assert.match(idsProblem(['a', 'b']) || '', /at least three/);
    assert.equal(baselineIndex([{ id: 'a' }, { id: 'b' }], 'b'), 1);
    assert.equal(baselineIndex([{ id: 'a' }, { id: 'b' }], 'zz'), 0, 'an unknown baseline is the first run');
    assert.equal(pointsText(0.5, 0.25), '(+25.0 pts)');
    assert.equal(pointsText(0.25, 0.5), '(−25.0 pts)');
    assert.equal(pointsText(0.5, 0.5004), null);
    assert.equal(pointsText(null, 0.5), null);
    assert.equal(bytesDelta(3 * 1024 ** 3, 1024 ** 3), '+2.0 GiB');
    assert.equal(bytesDelta(5, 5), null);
});
