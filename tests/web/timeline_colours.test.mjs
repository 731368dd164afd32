// Tests for web/js/timeline/colours.js — run with `node --test tests/web/`.
// (nameHash and sliceCategory are also checked through views/timeline.js
// by timescale.test.mjs.)
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PALETTES, lowerName, nameHash, sliceCategory, sliceColours } from '../../web/js/timeline/colours.js';

test('FNV-1a', () => {
    assert.equal(nameHash(''), 0x811c9dc5);
    assert.equal(nameHash('a'), 0xe40c292c);
});

test('a name keeps its colour; merged items are darker in the same hue', () => {
    const [c0, c1] = sliceColours('aten::mm', 'cpu');
    assert.deepEqual(sliceColours('aten::mm', 'cpu'), [c0, c1]);
    const parse = (s) => s.match(/^hsl\(([\d.]+) (\d+)% (\d+)%\)$/).slice(1).map(Number);
    const [h0, s0, l0] = parse(c0);
    const [h1, s1, l1] = parse(c1);
    assert.equal(h0, h1);
    assert.equal(s0, s1);
    assert.ok(l1 < l0);
    const [hue0, range] = PALETTES.op;
    assert.ok(h0 >= hue0 && h0 <= hue0 + range, 'within its palette');
    assert.notDeepEqual(sliceColours('aten::mm', 'gpu'), [c0, c1], 'the lane kind matters (kernel palette)');
});

test('categories', () => {
    assert.equal(sliceCategory('Memset (Device)', 'gpu'), 'memory');
    assert.equal(sliceCategory('enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__', 'cpu'), 'python');
    assert.equal(sliceCategory('hipLaunchKernel', 'cpu'), 'runtime');
    assert.equal(sliceCategory('ProfilerStep#3', 'gpu'), 'step');
    for (const c of ['op', 'runtime', 'kernel', 'memory', 'comm', 'python', 'step']) assert.ok(PALETTES[c], c);
});

test('lowerName', () => {
    assert.equal(lowerName('NVJet_SM90'), 'nvjet_sm90');
    assert.equal(lowerName('NVJet_SM90'), 'nvjet_sm90', 'cached');
});
