// Tests for web/js/timeline/input.js and the pure helpers of
// web/js/timeline/search.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { KEYS, keyAction, wheelAction } from '../../web/js/timeline/input.js';
import { countText, indexText, matchIndex, stepIndex } from '../../web/js/timeline/search.js';

test('keys as in Perfetto', () => {
    const got = Object.fromEntries(['w', 'W', 's', 'S', 'a', 'A', 'd', 'D', 'f', 'F', '?', 'Escape', 'x', 'Enter', ' '].map((k) => [k, keyAction(k)]));
    assert.deepEqual(got, {
        w: 'zoomIn', W: 'zoomIn', s: 'zoomOut', S: 'zoomOut', a: 'panLeft', A: 'panLeft', d: 'panRight', D: 'panRight',
        f: 'fit', F: 'fit', '?': 'help', Escape: 'escape', x: null, Enter: null, ' ': null,
    });
    assert.ok(KEYS.length > 5 && KEYS.every(([k, v]) => k && v), 'the list `?` shows');
});

const wheel = (o) => ({ deltaMode: 0, deltaX: 0, deltaY: 0, ctrlKey: false, metaKey: false, shiftKey: false, ...o });

test('wheel: scroll the lanes, or let the page scroll at either end', () => {
    assert.deepEqual(wheelAction(wheel({ deltaY: 40 }), 0, 100), { kind: 'scroll', dy: 40 });
    assert.deepEqual(wheelAction(wheel({ deltaY: -40 }), 50, 100), { kind: 'scroll', dy: -40 });
    assert.deepEqual(wheelAction(wheel({ deltaY: -40 }), 0, 100), { kind: 'page' }, 'at the top');
    assert.deepEqual(wheelAction(wheel({ deltaY: 40 }), 100, 100), { kind: 'page' }, 'at the bottom');
    assert.deepEqual(wheelAction(wheel({ deltaY: 40 }), 0, 0), { kind: 'page' }, 'nothing to scroll');
    assert.deepEqual(wheelAction(wheel({ deltaY: 3, deltaMode: 1 }), 0, 100), { kind: 'scroll', dy: 48 }, 'lines');
    assert.deepEqual(wheelAction(wheel({ deltaY: 1, deltaMode: 2 }), 0, 1000), { kind: 'scroll', dy: 400 }, 'pages');
});

test('wheel: Ctrl or ⌘ zooms, Shift or sideways pans', () => {
    const z = wheelAction(wheel({ deltaY: 100, ctrlKey: true }), 0, 0);
    assert.equal(z.kind, 'zoom');
    assert.ok(Math.abs(z.factor - Math.exp(0.2)) < 1e-12, 'down zooms out');
    assert.ok(wheelAction(wheel({ deltaY: -100, metaKey: true }), 0, 0).factor < 1, 'up zooms in');
    assert.deepEqual(wheelAction(wheel({ deltaY: 30, shiftKey: true }), 0, 0), { kind: 'pan', px: 30 });
    assert.deepEqual(wheelAction(wheel({ deltaX: -20, shiftKey: true }), 0, 0), { kind: 'pan', px: -20 }, 'Shift with a sideways wheel');
    assert.deepEqual(wheelAction(wheel({ deltaX: 50, deltaY: 10 }), 0, 0), { kind: 'pan', px: 50 }, 'a touchpad swipe sideways');
});

const HITS = { total: 5000, hits: [{ track: 1, ts_us: 10, dur_us: 1, name: 'a' }, { track: 2, ts_us: 20, dur_us: 1, name: 'b' }, { track: 1, ts_us: 30, dur_us: 1, name: 'c' }] };

test('search: matches counted from the selection, cycling both ways', () => {
    assert.equal(matchIndex(HITS, { track: 1, ts: 30.001 }), 2);
    assert.equal(matchIndex(HITS, { track: 2, ts: 30 }), -1, 'another lane');
    assert.equal(matchIndex(HITS, null), -1);
    assert.equal(stepIndex(-1, 1, 3), 0);
    assert.equal(stepIndex(-1, -1, 3), 2);
    assert.equal(stepIndex(2, 1, 3), 0);
    assert.equal(stepIndex(0, -1, 3), 2);
    assert.equal(stepIndex(1, 1, 3), 2);
});

test('search: the texts', () => {
    assert.equal(countText(0), 'no matches');
    assert.equal(countText(1), '1 match');
    assert.equal(countText(1234), '1,234 matches');
    assert.equal(indexText(0, HITS), '1 / 5,000'); // later pages come as the steps get there
    assert.equal(indexText(1, { total: 3, hits: HITS.hits }), '2 / 3');
});
