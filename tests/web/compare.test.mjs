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
