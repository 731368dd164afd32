// /timeline/flame (server/api/api_flame.c, derive/timeline_flame.c): the real
// binary fed a crafted with_stack-like trace whose annotation starts inside a
// short Python frame and ends after it, step after step. The flame graph
// nests by time containment (the annotation is a sibling of the frame, and
// depth does not grow with the steps, the steps add up under one
// ProfilerStep#* path), clips time to the window, adds the time up by lane
// and category, and `contained=1` keeps one operator's slices (its own
// name); bad parameters answer 400.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './lib.mjs';

let srv, id;
const STEPS = 20;

function trace() {
  const ev = [{ ph: 'X', cat: 'python_function', name: 'main', pid: 1, tid: 1, ts: 0, dur: STEPS * 1000 + 100, args: {} }];
  for (let s = 0; s < STEPS; s++) {
    const t = s * 1000 + 10;
    ev.push({ ph: 'X', cat: 'python_function', name: 'enter_frame', pid: 1, tid: 1, ts: t, dur: 20, args: {} });
    ev.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid: 1, tid: 1, ts: t + 5, dur: 900, args: {} });
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: t + 100, dur: 300, args: {} });
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::add', pid: 1, tid: 1, ts: t + 150, dur: 50, args: {} });
  }
  return JSON.stringify({ schemaVersion: 1, traceEvents: ev });
}

before(async () => {
  srv = await startServer();
  id = await srv.uploadBody(trace(), 'stack.pt.trace.json', 'stack');
});
after(async () => { await srv?.stop(); srv?.cleanup(); });

/** Path of names from the root to node i. */
const path = (nodes, i) => {
  const out = [];
  for (let k = i; k >= 0; k = nodes[k].parent) out.unshift(nodes[k].name);
  return out.join(' > ');
};

test('flame: call paths by time containment, not by the cascading stored depth', async () => {
  const tr = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const f = await srv.json(`/api/runs/${id}/timeline/flame?start=${tr.t0_us}&end=${tr.t1_us}`);
  const paths = new Map(f.nodes.map((n, i) => [path(f.nodes, i), n]));
  assert.ok(paths.has('main > enter_frame'));
  assert.ok(paths.has('main > ProfilerStep#* > aten::mm > aten::add'), [...paths.keys()].join('\n'));
  assert.equal(paths.get('main > ProfilerStep#*').count, STEPS, 'the steps add up under one path');
  const depth = Math.max(...[...paths.keys()].map((p) => p.split(' > ').length));
  assert.equal(depth, 4, 'bounded by the true nesting, whatever the number of steps');
  const mm = paths.get('main > ProfilerStep#* > aten::mm');
  assert.equal(mm.count, STEPS);
  assert.equal(mm.total_us, 300 * STEPS);
  assert.equal(mm.self_us, 250 * STEPS);
  assert.equal(f.lanes.length, 1);
  assert.equal(f.lanes[0].count, 1 + 4 * STEPS);
  assert.equal(f.lanes[0].self_us, STEPS * 1000 + 100, 'self time adds up to the lane\'s busy time');
  assert.deepEqual(f.cats.map((c) => c.cat).sort(), ['cpu_op', 'python_function', 'user_annotation']);
  assert.equal(f.dropped, 0);
});

test('flame: a window clips time; contained=1 is one operator', async () => {
  const tr = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const t0 = tr.t0_us;
  // step 2's annotation: [2015, 2915) after the trace start
  const w = await srv.json(`/api/runs/${id}/timeline/flame?start=${t0 + 2200}&end=${t0 + 2400}`);
  const main = w.nodes.find((n) => n.parent < 0 && n.name === 'main');
  assert.equal(main.total_us, 200);
  const op = await srv.json(`/api/runs/${id}/timeline/flame?start=${t0 + 2015}&end=${t0 + 2915}&contained=1`);
  assert.deepEqual(op.nodes.map((n, i) => path(op.nodes, i)), ['ProfilerStep#2', 'ProfilerStep#2 > aten::mm', 'ProfilerStep#2 > aten::mm > aten::add']);
  assert.equal(op.nodes[0].self_us, 600);
});

test('flame: bad parameters answer 400', async () => {
  await srv.json(`/api/runs/${id}/timeline/flame`, 400);
  await srv.json(`/api/runs/${id}/timeline/flame?start=5&end=1`, 400);
  await srv.json(`/api/runs/${id}/timeline/flame?start=0&end=1&contained=2`, 400);
  await srv.json(`/api/runs/${id}/timeline/flame?start=0&end=1&tracks=99999`, 400);
});
