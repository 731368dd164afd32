// Tests for web/js/timeline/flame.js: merging ranks' flame graphs by path,
// the icicle layout from a focus, keyboard steps; and area.js parseArea.
// Run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { areaParam, parseArea } from '../../web/js/timeline/area.js';
import { childLists, flameStep, icicle, mergeFlames } from '../../web/js/timeline/flame.js';

const node = (parent, name, total, self = 0, count = 1) => ({ parent, name, count, total_us: total, self_us: self });
// main(100) > [step(60) > mm(20), frame(10)] ; other root gpu(50)
const NODES = [node(-1, 'main', 100), node(0, 'step', 60), node(1, 'mm', 20), node(0, 'frame', 10), node(-1, 'gpu', 50)];

test('an icicle: roots side by side by time, children inside their parent, largest first', () => {
    const kids = childLists(NODES);
    assert.deepEqual(kids[NODES.length], [0, 4]);
    assert.deepEqual(kids[0], [1, 3]);
    const cells = icicle(NODES, kids, -1);
    const at = (i) => cells.find((c) => c.i === i);
    assert.deepEqual(at(0), { i: 0, depth: 0, x: 0, w: 100 / 150 });
    assert.equal(at(4).x, 100 / 150);
    assert.equal(at(1).depth, 1);
    assert.equal(at(3).x, 60 / 150);
    assert.equal(at(2).depth, 2);
});

test('zooming into a node fills the width with it and keeps its ancestors above', () => {
    const kids = childLists(NODES);
    const cells = icicle(NODES, kids, 1);
    assert.deepEqual(cells.map((c) => [c.i, c.depth, c.x, c.w]), [[0, 0, 0, 1], [1, 1, 0, 1], [2, 2, 0, 20 / 60]]);
});

test('arrow keys walk the tree', () => {
    const kids = childLists(NODES);
    assert.equal(flameStep(NODES, kids, -1, 'ArrowDown'), 0);
    assert.equal(flameStep(NODES, kids, 0, 'ArrowDown'), 1);
    assert.equal(flameStep(NODES, kids, 1, 'ArrowRight'), 3);
    assert.equal(flameStep(NODES, kids, 3, 'ArrowRight'), 3);
    assert.equal(flameStep(NODES, kids, 3, 'ArrowUp'), 0);
    assert.equal(flameStep(NODES, kids, 0, 'ArrowRight'), 4);
    assert.equal(flameStep(NODES, kids, 0, 'ArrowUp'), 0);
});

test('ranks merge by call path', () => {
    const a = { start_us: 0, end_us: 10, nodes: [node(-1, 'main', 10, 2), node(0, 'mm', 8, 8)], lanes: [{ track: 1, count: 2, total_us: 18, self_us: 10 }], cats: [{ cat: 'op', count: 2, total_us: 18, self_us: 10 }], dropped: 0 };
    const b = { start_us: 0, end_us: 12, nodes: [node(-1, 'main', 5, 1), node(0, 'add', 4, 4), node(-1, 'k', 3, 3)], lanes: [{ track: 2, count: 3, total_us: 12, self_us: 8 }], cats: [{ cat: 'op', count: 3, total_us: 12, self_us: 8 }], dropped: 1 };
    const m = mergeFlames([a, b]);
    assert.deepEqual(m.nodes.map((n) => [n.parent, n.name, n.total_us, n.count]), [[-1, 'main', 15, 2], [0, 'mm', 8, 1], [0, 'add', 4, 1], [-1, 'k', 3, 1]]);
    assert.deepEqual(m.lanes.map((l) => l.track), [1, 2]);
    assert.deepEqual(m.cats, [{ cat: 'op', count: 5, total_us: 30, self_us: 18 }]);
    assert.equal(m.dropped, 1);
    assert.equal(m.end_us, 12);
    assert.equal(mergeFlames([a]), a);
});

test('the area in the URL', () => {
    assert.deepEqual(parseArea('12.5:40'), { start: 12.5, end: 40 });
    assert.equal(parseArea('40:12'), null);
    assert.equal(parseArea(''), null);
    assert.equal(areaParam({ start: 12.5, end: 40 }), '12.5:40');
    assert.equal(areaParam(null), '');
});
