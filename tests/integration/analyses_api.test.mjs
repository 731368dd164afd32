// Analyses API (/api/runs/{id}/analyses and /critpath): the shapes on the
// demo gloo run (4 ranks), the rank and step selection, the time filter of
// the critical path (on segments written into the run's db, so the test does
// not depend on what the critical-path analysis finds), every 400 and 404,
// and a run imported before the analyses existed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, demoFiles, HAVE_SQLITE } from './lib.mjs';

const ANALYSES = ['idle', 'launch', 'queue', 'copy', 'overlap', 'annotations', 'fusion', 'critical_path'];
const CATEGORIES = ['cpu', 'dataloader', 'gpu_compute', 'communication', 'launch_overhead', 'kernel_gap'];

let srv, ddp;

/** An error answer: the one error shape, its code, and a message matching re. */
async function error(path, status, re) {
  const j = await srv.json(path, status);
  assert.equal(j.error.code, { 400: 'invalid', 404: 'not_found', 409: 'conflict' }[status], path);
  assert.match(j.error.message, re, path);
}

before(async () => {
  srv = await startServer();
  ddp = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp');
});
after(async () => { await srv.stop(); srv.cleanup(); });

/** LEB128 bytes of the unsigned BigInt v, as hex. */
function leb(v) {
  let out = '';
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out += b.toString(16).padStart(2, '0');
  } while (v);
  return out;
}

/** SQL inserting the critseg row of (rank 0, step) holding segs [[ts, dur, cat, track, slice], …], in the
 * format server/derive/analyses.c writes: per segment the varints of zigzag(ts - previous ts), dur, cat,
 * track and zigzag(slice - previous slice). */
function critsegRow(step, segs) {
  const zz = (d) => (d < 0n ? ((-d) << 1n) - 1n : d << 1n);
  let hex = '', ts = 0n, slice = 0n;
  for (const [t, dur, cat, track, sl] of segs.map((g) => g.map(BigInt))) {
    hex += leb(zz(t - ts)) + leb(dur) + leb(cat) + leb(track) + leb(zz(sl - slice));
    ts = t;
    slice = sl;
  }
  const t0 = Math.min(...segs.map((g) => g[0])), t1 = Math.max(...segs.map((g) => g[0] + g[1]));
  return `INSERT INTO critseg(rank, step, t0, t1, n, segs) VALUES (0, ${step}, ${t0}, ${t1}, ${segs.length}, X'${hex}');`;
}

function checkDoc(doc, rank) {
  assert.ok(Array.isArray(doc.window_ns) && doc.window_ns.length === 2, `rank ${rank}: window_ns`);
  assert.ok(doc.window_ns[0] <= doc.window_ns[1], `rank ${rank}: window in order`);
  assert.ok(Number.isInteger(doc.steps) && doc.steps >= 0, `rank ${rank}: steps`);
  for (const k of ANALYSES) assert.equal(typeof doc[k], 'object', `rank ${rank}: ${k} is an object`);
}

test('analyses: every rank by default, one with ?rank=', async () => {
  const all = await srv.json(`/api/runs/${ddp}/analyses`);
  assert.equal(all.run, ddp);
  assert.deepEqual(Object.keys(all.ranks).sort(), ['0', '1', '2', '3']);
  for (const [k, doc] of Object.entries(all.ranks)) checkDoc(doc, k);
  assert.equal(all.ranks['0'].steps, 4);

  const one = await srv.json(`/api/runs/${ddp}/analyses?rank=2`);
  assert.deepEqual(Object.keys(one.ranks), ['2']);
  assert.deepEqual(one.ranks['2'], all.ranks['2']);
  // an empty value means the default (as HTML forms send it)
  assert.deepEqual(Object.keys((await srv.json(`/api/runs/${ddp}/analyses?rank=`)).ranks).length, 4);
});

test('analyses: bad rank 400, unknown rank and run 404', async () => {
  for (const v of ['x', '-1', '1.5', '2147483648', '0x1', '%20', '1;DROP']) await error(`/api/runs/${ddp}/analyses?rank=${v}`, 400, /'rank'/);
  await error(`/api/runs/${ddp}/analyses?rank=7`, 404, /no rank 7/);
  await error(`/api/runs/ffffffffffffffff/analyses`, 404, /./);
  await error(`/api/runs/ffffffffffffffff/critpath`, 404, /./);
});

test('critpath: default shape (lowest rank, every step, whole time)', async () => {
  const j = await srv.json(`/api/runs/${ddp}/critpath`);
  assert.equal(j.run, ddp);
  assert.equal(j.rank, 0);
  assert.equal(j.step, -1);
  assert.deepEqual(j.categories, CATEGORIES);
  assert.ok(Array.isArray(j.segments));
  for (const s of j.segments) {
    assert.equal(s.length, 5);
    assert.ok(s[1] >= 0 && s[2] >= 0 && s[2] < CATEGORIES.length);
  }
  const r3 = await srv.json(`/api/runs/${ddp}/critpath?rank=3&step=0`);
  assert.equal(r3.rank, 3);
  assert.equal(r3.step, 0);
});

test('critpath: rank, step and [start, end) select the stored segments', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const id = await srv.upload(demoFiles('matmul_amp'), 'amp-cp');
  // segments of our own, so the filter is tested whatever the analysis finds
  srv.sql(id, 'DELETE FROM critseg; '
    + critsegRow(0, [[1000, 100, 0, 1, 11], [1100, 50, 2, 2, 12], [1150, 10, 5, 2, 0]])
    + critsegRow(1, [[2000, 300, 4, 1, 13], [2300, 200, 3, 3, 14]]));
  const all = await srv.json(`/api/runs/${id}/critpath?rank=0`);
  assert.deepEqual(all.segments.map((s) => s[0]), [1000, 1100, 1150, 2000, 2300]);
  const s1 = await srv.json(`/api/runs/${id}/critpath?rank=0&step=1`);
  assert.deepEqual(s1.segments, [[2000, 300, 4, 1, 13], [2300, 200, 3, 3, 14]]);
  // [start, end): a segment is in when it overlaps; end is exclusive
  const w = await srv.json(`/api/runs/${id}/critpath?start=1120&end=2000`);
  assert.deepEqual(w.segments.map((s) => s[4]), [12, 0]); // slice 0: a gap
  const open = await srv.json(`/api/runs/${id}/critpath?start=2299`);
  assert.deepEqual(open.segments.map((s) => s[4]), [13, 14]);
  const upto = await srv.json(`/api/runs/${id}/critpath?end=1001`);
  assert.deepEqual(upto.segments.map((s) => s[4]), [11]);
  // epoch-based ns need 19 digits
  const big = await srv.json(`/api/runs/${id}/critpath?start=-9223372036854775808&end=9223372036854775807`);
  assert.equal(big.segments.length, 5);
});

test('critpath: every bad parameter is a 400 naming it; unknown rank and step 404', async () => {
  const base = `/api/runs/${ddp}/critpath`;
  for (const v of ['x', '-1', '2147483648', '1e3']) await error(`${base}?rank=${v}`, 400, /'rank'/);
  for (const v of ['x', '-2', '0.5', '2147483648']) await error(`${base}?step=${v}`, 400, /'step'/);
  for (const [p, v] of [['start', '1.5'], ['start', '1e9'], ['end', 'abc'], ['end', '9223372036854775808'],
    ['start', '-9223372036854775809'], ['end', '99999999999999999999'], ['start', '+5'], ['end', '-']])
    await error(`${base}?${p}=${v}`, 400, new RegExp(`'${p}'`));
  await error(`${base}?start=10&end=10`, 400, /'start'.*before 'end'/);
  await error(`${base}?start=11&end=10`, 400, /'start'.*before 'end'/);
  await error(`${base}?rank=9`, 404, /no rank 9/);
  await error(`${base}?rank=1&step=4`, 404, /no step 4 \(it has 4\)/);
});

test('a run imported before the analyses answers 409 on both, like the other read APIs', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const id = await srv.upload(demoFiles('matmul_amp'), 'old');
  srv.sql(id, 'DROP TABLE analyses; DROP TABLE anseries; DROP TABLE ansample; DROP TABLE critseg;');
  await error(`/api/runs/${id}/analyses`, 409, /before the GPU analyses existed/);
  await error(`/api/runs/${id}/analyses?rank=0`, 409, /before the GPU analyses existed/);
  await error(`/api/runs/${id}/critpath?rank=0&step=0`, 409, /before the GPU analyses existed/);
  // parameters are checked first: a bad one is still a 400
  await error(`/api/runs/${id}/critpath?step=x`, 400, /'step'/);
});
