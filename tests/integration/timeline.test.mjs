// Timeline read API (/timeline/tracks, /timeline, /timeline/slice,
// /timeline/search, /timeline/aggregate): the real binary on a random
// loopback port, fed a demo trace and a small crafted trace with a hostile
// slice name, a launch, its kernel and an ac2g flow.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { startServer, demoFiles, HAVE_SQLITE } from './lib.mjs';

let srv, amp, evil;
const EVIL = '<img src=x onerror=alert(1)>';

function evilTrace() {
  const cpu = (name, cat, ts, dur, args = {}) => ({ ph: 'X', cat, name, pid: 1, tid: 1, ts, dur, args });
  const ev = [
    cpu('ProfilerStep#1', 'user_annotation', 0, 1000),
    cpu('aten::mm', 'cpu_op', 10, 200),
    cpu('cudaLaunchKernel', 'cuda_runtime', 20, 10, { correlation: 5 }),
    cpu(EVIL, 'cpu_op', 300, 100),
    cpu('100%_done', 'cpu_op', 500, 10),
    cpu('100X_done', 'cpu_op', 520, 10),
    { ph: 'X', cat: 'kernel', name: 'gemm_kernel', pid: 0, tid: 7, ts: 50, dur: 100,
      args: { device: 0, stream: 7, correlation: 5 } },
    { ph: 's', id: 5, pid: 1, tid: 1, ts: 20, cat: 'ac2g', name: 'ac2g' },
    { ph: 'f', id: 5, pid: 0, tid: 7, ts: 50, cat: 'ac2g', name: 'ac2g', bp: 'e' },
    { ph: 'C', name: 'util', pid: 1, ts: 0, args: { value: 3 } },
    { ph: 'C', name: 'util', pid: 1, ts: 600, args: { value: 9 } },
  ];
  return Buffer.from(JSON.stringify({ schemaVersion: 1, traceEvents: ev }));
}

const ns = (us) => Math.round(us * 1000);

/** Checks the viewport invariants; returns {track: {depth: sum of n}}. */
function checkView(v, width) {
  const counts = {};
  for (const t of v.tracks) {
    counts[t.id] = {};
    for (const d of t.depths) {
      const n = d.ts.length;
      for (const k of ['dur', 'name', 'n', 'id']) assert.equal(d[k].length, n, `column ${k}`);
      assert.ok(n <= width, `track ${t.id} depth ${d.depth}: ${n} items > ${width}`);
      for (let i = 0; i < n; i++) {
        assert.ok(d.name[i] >= 0 && d.name[i] < v.strings.length);
        assert.equal(d.n[i] === 1, d.id[i] > 0);
        if (i) assert.ok(d.ts[i] >= d.ts[i - 1]);
      }
      counts[t.id][d.depth] = d.n.reduce((a, b) => a + b, 0);
    }
  }
  return counts;
}

before(async () => {
  srv = await startServer();
  const [ampFile] = demoFiles('matmul_amp');
  amp = await srv.uploadBody(readFileSync(ampFile), basename(ampFile), 'amp');
  evil = await srv.uploadBody(evilTrace(), 'evil.pt.trace.json', 'evil');
});
after(async () => { await srv.stop(); srv.cleanup(); });

test('tracks: CPU lanes then GPU streams, counters, steps', async () => {
  const t = await srv.json(`/api/runs/${amp}/timeline/tracks`);
  assert.equal(t.rank, 0);
  assert.deepEqual(t.ranks, [0]);
  assert.ok(t.t1_us > t.t0_us);
  assert.ok(Array.isArray(t.strings));
  const kinds = t.tracks.map((x) => x.kind);
  assert.ok(kinds.includes('gpu') && kinds.includes('cpu'));
  assert.equal(kinds.indexOf('gpu'), kinds.length - kinds.filter((k) => k === 'gpu').length, 'GPU lanes last');
  for (const x of t.tracks) {
    for (const k of ['id', 'kind', 'pid', 'tid', 'name', 'process', 'device', 'stream', 'max_depth', 'nslices'])
      assert.ok(k in x, k);
  }
  const gpu = t.tracks.find((x) => x.kind === 'gpu');
  assert.equal(gpu.device, 0);
  assert.ok(t.counters.some((c) => /Memory allocated \(GPU 0\)/.test(c.name) && c.unit === 'bytes'));
  const busy = t.counters.find((c) => c.name === 'GPU busy (GPU 0)');
  assert.ok(busy && busy.unit === 'ops', JSON.stringify(t.counters));
  assert.equal(t.counters[0].id, busy.id, 'GPU busy heads the counter lanes');
  assert.ok(t.steps.length >= 1 && t.steps.every((s) => /^ProfilerStep#/.test(s.name) && s.end_us > s.start_us));
});

test('GPU busy: ops running on the device, idle gaps kept as min 0 at any zoom', async () => {
  const t = await srv.json(`/api/runs/${amp}/timeline/tracks`);
  const busy = t.counters.find((c) => c.name === 'GPU busy (GPU 0)');
  const gpu = t.tracks.find((x) => x.kind === 'gpu');
  for (const width of [20, 400, 4000]) {
    const v = await srv.json(`/api/runs/${amp}/timeline?width=${width}&tracks=${gpu.id}&counters=${busy.id}`);
    assert.equal(v.counters.length, 1);
    const c = v.counters[0];
    assert.ok(c.ts.length > 0 && c.ts.length <= width + 1);
    for (let i = 0; i < c.ts.length; i++) {
      assert.ok(Number.isInteger(c.min[i]) && c.min[i] >= 0 && c.max[i] >= c.min[i]);
      if (i) assert.ok(c.ts[i] > c.ts[i - 1]);
    }
    assert.ok(c.max.some((x) => x >= 1), `busy somewhere at ${width} px`);
    assert.ok(c.min.some((x) => x === 0), `an idle gap at ${width} px`);
  }
  if (HAVE_SQLITE) {
    // only transitions: no two samples in a row hold the same count, times
    // rising (the chunks of gpubusypack decoded here: LEB128 time gaps and
    // zigzag values, include/derive/timeline_counters.h)
    const rows = srv.sql(amp, 'SELECT rank, dev, ts, n, hex(rows) FROM gpubusypack ORDER BY rank, dev, ts').split('\n');
    let key = '', prevTs = -Infinity, prevV = null, samples = 0;
    for (const line of rows) {
      const [rank, dev, ts, n, hex] = line.split('|');
      const bytes = Buffer.from(hex, 'hex');
      if (`${rank}/${dev}` !== key) { key = `${rank}/${dev}`; prevTs = -Infinity; prevV = null; }
      let t = BigInt(ts), i = 0;
      const next = () => { let v = 0n, sh = 0n, b; do { b = bytes[i++]; v |= BigInt(b & 0x7f) << sh; sh += 7n; } while (b & 0x80); return v; };
      for (let k = 0; k < Number(n); k++) {
        t += next();
        const z = next(), v = z & 1n ? -(z >> 1n) - 1n : z >> 1n;
        assert.ok(Number(t) > prevTs, 'times rise');
        assert.notEqual(v, prevV, 'a transition');
        prevTs = Number(t);
        prevV = v;
        samples++;
      }
      assert.equal(i, bytes.length, 'a chunk holds its n samples and nothing else');
    }
    assert.ok(samples > 10);
  }
});

test('viewport: bucket bound, merged counts add up, full zoom is exact', async () => {
  const tr = await srv.json(`/api/runs/${amp}/timeline/tracks`);
  const total = Object.fromEntries(tr.tracks.map((x) => [x.id, x.nslices]));
  for (const width of [1, 50, 2000]) {
    const v = await srv.json(`/api/runs/${amp}/timeline?width=${width}`);
    assert.equal(v.width, width);
    assert.equal(v.start_us, tr.t0_us);
    const counts = checkView(v, width);
    for (const [id, n] of Object.entries(total)) {
      const got = Object.values(counts[id] || {}).reduce((a, b) => a + b, 0);
      assert.equal(got, n, `track ${id} at ${width} px`);
    }
    assert.ok(v.counters.length >= 1);
    for (const c of v.counters) {
      assert.ok(c.ts.length <= width + 1);
      for (let i = 0; i < c.ts.length; i++) assert.ok(c.min[i] <= c.last[i] && c.last[i] <= c.max[i]);
    }
  }
  // a zoomed window against a direct count of the slices overlapping it
  const gpu = tr.tracks.find((x) => x.kind === 'gpu');
  const mid = (tr.t0_us + tr.t1_us) / 2;
  const start = (mid - 3000).toFixed(3), end = (mid + 3000).toFixed(3);
  const v = await srv.json(`/api/runs/${amp}/timeline?start=${start}&end=${end}&width=300&tracks=${gpu.id}`);
  assert.equal(v.tracks.length, 1);
  const counts = checkView(v, 300);
  const got = Object.values(counts[gpu.id]).reduce((a, b) => a + b, 0);
  if (HAVE_SQLITE) {
    const want = Number(srv.sql(amp, `SELECT count(*) FROM slice WHERE track = ${gpu.id} AND ts < ${ns(+end)}` +
      ` AND (ts >= ${ns(+start)} OR ts + dur > ${ns(+start)})`));
    assert.equal(got, want);
  }
  // full zoom: 4 µs over 8192 px, every slice is itself
  const first = v.tracks[0].depths[0];
  const i = first.n.findIndex((n) => n === 1);
  const z0 = first.ts[i];
  const z = await srv.json(`/api/runs/${amp}/timeline?start=${z0}&end=${(z0 + 4).toFixed(3)}&width=8192&tracks=${gpu.id}`);
  checkView(z, 8192);
  for (const d of z.tracks[0].depths) assert.ok(d.n.every((n) => n === 1));
  assert.ok(z.tracks[0].depths[0].ts.includes(z0));
});

test('viewport: a depth window per track, deeper levels summarized, coarse deep levels', async () => {
  const tr = await srv.json(`/api/runs/${amp}/timeline/tracks`);
  const cpu = tr.tracks.filter((x) => x.kind === 'cpu').sort((a, b) => b.max_depth - a.max_depth)[0];
  assert.ok(cpu.max_depth >= 2, `a nested CPU lane (max depth ${cpu.max_depth})`);
  const width = 400;
  const q = `width=${width}&tracks=${cpu.id}&counters=`;
  const exact = checkView(await srv.json(`/api/runs/${amp}/timeline?${q}&fine=1000000`), width)[cpu.id];
  // depth 1 only: depth 0 left out, the deeper ones merged in one lane that adds up
  const v = await srv.json(`/api/runs/${amp}/timeline?${q}&depths=${cpu.id}:1-1`);
  const t = v.tracks[0];
  assert.deepEqual(t.depths.map((d) => d.depth), [1]);
  assert.equal(t.depths[0].n.reduce((a, b) => a + b, 0), exact[1]);
  assert.equal(t.deep.from, 2);
  assert.ok(t.deep.ts.length <= width / 8 + 1);
  const deeper = Object.entries(exact).filter(([d]) => +d >= 2).reduce((a, [, n]) => a + n, 0);
  assert.equal(t.deep.n.reduce((a, b) => a + b, 0), deeper);
  for (let i = 1; i < t.deep.ts.length; i++) assert.ok(t.deep.ts[i] >= t.deep.ts[i - 1]);
  // a bare LO-HI applies to every track; HI may be left out; no deep lane when nothing is cut
  const all = await srv.json(`/api/runs/${amp}/timeline?width=${width}&depths=0-`);
  assert.ok(all.tracks.every((x) => !('deep' in x)));
  // fine=0: every depth merged per 8 px, counts still exact
  const coarse = await srv.json(`/api/runs/${amp}/timeline?${q}&fine=0`);
  const cc = checkView(coarse, width)[cpu.id];
  assert.deepEqual(cc, exact);
  for (const d of coarse.tracks[0].depths) assert.ok(d.ts.length <= width / 8 + 1, `depth ${d.depth}`);
  for (const [path, name] of [['depths=x', 'depths'], ['depths=1:5-2', 'depths'], ['depths=1:2', 'depths'],
    ['fine=-1', 'fine']]) {
    const j = await srv.json(`/api/runs/${amp}/timeline?${path}`, 400);
    assert.match(j.error.message, new RegExp(name), path);
  }
});

test('hostile names stay text: escaped in the answer, exact once parsed', async () => {
  const r = await srv.req(`/api/runs/${evil}/timeline?width=8192`);
  const text = await r.text();
  assert.equal(r.status, 200);
  assert.ok(!text.includes('<img'), 'markup is escaped in the JSON text');
  const v = JSON.parse(text);
  assert.ok(v.strings.includes(EVIL));
  const s = await srv.json(`/api/runs/${evil}/timeline/search?q=${encodeURIComponent('IMG SRC')}`);
  assert.equal(s.total, 1);
  assert.equal(s.hits[0].name, EVIL);
});

test('slice details: args, parents, launch and kernel both ways, flows', async () => {
  const tr = await srv.json(`/api/runs/${evil}/timeline/tracks`);
  const gpu = tr.tracks.find((x) => x.kind === 'gpu');
  const cpu = tr.tracks.find((x) => x.kind === 'cpu' && x.nslices > 0);
  const k = await srv.json(`/api/runs/${evil}/timeline/slice?track=${gpu.id}&ts=50&dur=100`);
  assert.equal(k.name, 'gemm_kernel');
  assert.equal(k.kind, 'kernel');
  assert.equal(k.args.correlation, 5);
  assert.equal(k.launcher.name, 'cudaLaunchKernel');
  assert.equal(k.launcher.op.name, 'aten::mm');
  assert.deepEqual(k.flows.map((f) => [f.dir, f.cat, f.track, f.ts_us]), [['in', 'ac2g', cpu.id, 20]]);

  const l = await srv.json(`/api/runs/${evil}/timeline/slice?track=${cpu.id}&ts=20&dur=10&id=999`);
  assert.equal(l.name, 'cudaLaunchKernel');
  assert.deepEqual(l.parents.map((p) => p.name), ['aten::mm', 'ProfilerStep#1']);
  assert.deepEqual(l.launched.map((x) => [x.name, x.track, x.ts_us, x.dur_us]), [['gemm_kernel', gpu.id, 50, 100]]);
  assert.deepEqual(l.flows.map((f) => [f.dir, f.track, f.ts_us]), [['out', gpu.id, 50]]);
  // the id fast path is checked against track + start + duration
  const m = await srv.json(`/api/runs/${evil}/timeline/slice?track=${cpu.id}&ts=10&dur=200&id=${l.id}`);
  assert.equal(m.name, 'aten::mm');
  assert.equal(m.self_us, 190);
  assert.deepEqual(m.flows, [], 'the flow belongs to the launch, not to its parent');
  const p = await srv.json(`/api/runs/${evil}/timeline/slice?track=${cpu.id}&ts=0&dur=1000`);
  assert.equal(p.self_us, 1000 - 200 - 100 - 10 - 10);
  await srv.json(`/api/runs/${evil}/timeline/slice?track=${cpu.id}&ts=10&dur=201`, 404);
});

test('slice details: a run stored before corr_ids (an index slice_corr instead) answers the same', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const ev = [];
  for (let i = 0; i < 6; i++) {
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 100 * i, dur: 40, args: { 'External id': i } });
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 100 * i + 10, dur: 5,
      args: { correlation: 7 + (i % 3), 'External id': i } });
    ev.push({ ph: 'X', cat: 'kernel', name: `k${i}`, pid: 0, tid: 7, ts: 100 * i + 20, dur: 30,
      args: { correlation: 7 + (i % 3), device: 0, stream: 7 } });
  }
  const id = await srv.uploadBody(Buffer.from(JSON.stringify({ traceEvents: ev })), 'corr.json', 'corr');
  const tr = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const gpu = tr.tracks.find((x) => x.kind === 'gpu');
  const cpu = tr.tracks.find((x) => x.kind === 'cpu' && x.nslices > 0);
  const answers = async () => {
    const out = [];
    for (let i = 0; i < 6; i++) {
      out.push(await srv.json(`/api/runs/${id}/timeline/slice?track=${gpu.id}&ts=${100 * i + 20}&dur=30`));
      out.push(await srv.json(`/api/runs/${id}/timeline/slice?track=${cpu.id}&ts=${100 * i + 10}&dur=5`));
    }
    return out;
  };
  const now = await answers();
  assert.equal(now[0].launcher.name, 'cudaLaunchKernel');
  assert.deepEqual(now[1].launched.map((x) => x.name), ['k0', 'k3'], 'both kernels of correlation id 7');
  srv.sql(id, 'DROP TABLE corr_ids; CREATE INDEX slice_corr ON slice(corr) WHERE corr != 0;');
  assert.deepEqual(await answers(), now);
});

test('search: literal substring, case-insensitive, by time, windowed', async () => {
  const a = await srv.json(`/api/runs/${evil}/timeline/search?q=%25`);
  assert.deepEqual(a.hits.map((h) => h.name), ['100%_done']);
  const b = await srv.json(`/api/runs/${evil}/timeline/search?q=_DONE`);
  assert.deepEqual(b.hits.map((h) => h.name), ['100%_done', '100X_done']);
  const c = await srv.json(`/api/runs/${evil}/timeline/search?q=a&limit=2`);
  assert.ok(c.total > 2 && c.hits.length === 2 && c.hits[0].ts_us <= c.hits[1].ts_us);
  const d = await srv.json(`/api/runs/${evil}/timeline/search?q=done&start=510&end=600`);
  assert.equal(d.total, 1);
  const g = await srv.json(`/api/runs/${amp}/timeline/search?q=LAUNCHkernel&limit=5`);
  assert.ok(g.total > 5 && g.hits.length === 5);
});

/** Every hit of q, page after page through `after=`; checks the order. */
async function allHits(run, q, limit) {
  const seen = [];
  let page = await srv.json(`/api/runs/${run}/timeline/search?q=${q}&limit=${limit}`);
  const total = page.total;
  for (let guard = 0; guard < 100000; guard++) {
    seen.push(...page.hits);
    assert.equal(page.total, total);
    if (!page.next) break;
    assert.equal(page.hits.length, limit);
    page = await srv.json(`/api/runs/${run}/timeline/search?q=${q}&limit=${limit}&after=${page.next}`);
  }
  for (let i = 1; i < seen.length; i++) {
    const [a, b] = [seen[i - 1], seen[i]];
    assert.ok(a.ts_us < b.ts_us || (a.ts_us === b.ts_us && a.id < b.id), `(ts, id) order at ${i}`);
  }
  return { seen, total };
}

test('search: every match, page after page, in (ts, id) order', async () => {
  // many slices at one instant on several threads: a page cannot start at a
  // time, only after a hit
  const ev = [];
  for (let tid = 1; tid <= 3; tid++)
    for (let i = 0; i < 12; i++) ev.push({ ph: 'X', cat: 'cpu_op', name: `tie_${i % 3}`, pid: 1, tid, ts: 100, dur: 50 - i });
  for (let i = 0; i < 200; i++) ev.push({ ph: 'X', cat: 'cpu_op', name: `op_${i % 90}_tie`, pid: 1, tid: 4, ts: 1000 + i * 10, dur: 5 });
  const id = await srv.uploadBody(Buffer.from(JSON.stringify({ traceEvents: ev })), 'ties.json', 'ties');
  // few names: by name through the index; many names (90 + 3): in time order
  for (const [q, want] of [['tie_', 36], ['tie', 236]]) {
    for (const limit of [1, 4, 7, 1000]) {
      const { seen, total } = await allHits(id, q, limit);
      assert.equal(total, want);
      assert.equal(seen.length, want, `${q} by ${limit}`);
      assert.equal(new Set(seen.map((h) => h.id)).size, want, 'no hit twice');
    }
  }
  // the amp run: every cudaLaunchKernel, in pages of 7
  const { seen, total } = await allHits(amp, 'LAUNCHkernel', 7);
  assert.equal(seen.length, total);
  const bad = await srv.json(`/api/runs/${id}/timeline/search?q=tie&after=12`, 400);
  assert.match(bad.error.message, /after/);
});

test('search: a run stored before name_ids (an index slice_name instead) answers the same', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const ev = [];
  for (let tid = 1; tid <= 3; tid++)
    for (let i = 0; i < 12; i++) ev.push({ ph: 'X', cat: 'cpu_op', name: `old_${i % 3}`, pid: 1, tid, ts: 100, dur: 50 - i });
  for (let i = 0; i < 300; i++) ev.push({ ph: 'X', cat: 'cpu_op', name: `old_op_${i % 80}`, pid: 1, tid: 4, ts: 1000 + i * 10, dur: 5 });
  const id = await srv.uploadBody(Buffer.from(JSON.stringify({ traceEvents: ev })), 'before.json', 'before');
  const cases = [['old_', 1], ['old_', 7], ['old_op_1', 3], ['OLD_OP', 50], ['old_2', 1000]];
  const answers = async () => {
    const out = [];
    for (const [q, limit] of cases) {
      out.push(await allHits(id, q, limit));
      out.push(await srv.json(`/api/runs/${id}/timeline/search?q=${q}&limit=${limit}&start=1100&end=2500`));
    }
    return out;
  };
  const now = await answers();
  assert.ok(now[0].total > 0 && now[6].total > 0);
  srv.sql(id, 'DROP TABLE name_ids; CREATE INDEX slice_name ON slice(name, track, ts);');
  assert.deepEqual(await answers(), now);
});

test('packed chunks that do not decode: run_damaged from the view that reads them, the rest keeps serving', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const [file] = demoFiles('matmul_amp');
  const id = await srv.uploadBody(readFileSync(file), basename(file), 'garbled chunks');
  const tr = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const busy = tr.counters.find((c) => c.name === 'GPU busy (GPU 0)');
  const cpu = tr.tracks.find((x) => x.kind !== 'gpu' && x.nslices > 1000);
  const mid = (tr.t0_us + tr.t1_us) / 2;
  // each view reads the table: the whole run reads the levels, a 20 µs window the samples
  const views = {
    lodpack: `timeline?width=100&tracks=${cpu.id}`,
    clodpack: `timeline?width=100&counters=${busy.id}`,
    gpubusypack: `timeline?start=${(mid - 10).toFixed(3)}&end=${(mid + 10).toFixed(3)}&width=8192&counters=${busy.id}`,
    taggpack: `timeline/aggregate?start=${tr.t0_us}&end=${tr.t1_us}`,
  };
  for (const [table, path] of Object.entries(views)) {
    const intact = await srv.json(`/api/runs/${id}/${path}`);
    // an overlong varint where the rows begin: the reader must refuse it, not read past it
    srv.sql(id, `CREATE TABLE keep AS SELECT * FROM ${table}; UPDATE ${table} SET rows = X'${'FF'.repeat(12)}';`);
    const r = await srv.req(`/api/runs/${id}/${path}`);
    const text = await r.text();
    assert.equal(r.status, 500, `${table}: ${text}`);
    assert.equal(JSON.parse(text).error.code, 'run_damaged', `${table}: ${text}`);
    srv.sql(id, `DELETE FROM ${table}; INSERT INTO ${table} SELECT * FROM keep; DROP TABLE keep;`);
    assert.deepEqual(await srv.json(`/api/runs/${id}/${path}`), intact, `${table} restored`);
  }
  // the server and the other runs are fine
  await srv.json(`/api/runs/${amp}/timeline?width=100`);
});

test('aggregate: time by name over a window, counters', async () => {
  const a = await srv.json(`/api/runs/${evil}/timeline/aggregate?start=0&end=1000`);
  const by = Object.fromEntries(a.rows.map((r) => [r.name, r]));
  assert.equal(by['ProfilerStep#1'].total_us, 1000);
  assert.equal(by['ProfilerStep#1'].self_us, 680);
  assert.equal(by['aten::mm'].self_us, 190);
  assert.equal(by.gemm_kernel.count, 1);
  for (let i = 1; i < a.rows.length; i++) assert.ok(a.rows[i - 1].total_us >= a.rows[i].total_us);
  // a window cutting slices counts their overlap
  const b = await srv.json(`/api/runs/${evil}/timeline/aggregate?start=100&end=350`);
  const bb = Object.fromEntries(b.rows.map((r) => [r.name, r]));
  assert.equal(bb['ProfilerStep#1'].total_us, 250);
  assert.equal(bb['aten::mm'].total_us, 110);
  assert.equal(bb[EVIL].total_us, 50);
  const util = a.counters.find((c) => c.name === 'util.value');
  assert.ok(util, JSON.stringify(a.counters));
  assert.equal(util.min, 3);
  assert.equal(util.max, 9);
  // time-weighted: 3 for 600 µs, 9 for 400 µs (the sample mean would be 6)
  assert.ok(Math.abs(util.avg - 5.4) < 1e-9, `avg ${util.avg}`);
});

test('aggregate: the precomputed buckets answer what a scan of the window does', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const [ampFile] = demoFiles('matmul_amp');
  const id = await srv.uploadBody(readFileSync(ampFile), basename(ampFile), 'amp-agg');
  const tr = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const span = tr.t1_us - tr.t0_us;
  const windows = [[tr.t0_us - 10, tr.t1_us + 10], [tr.t0_us, tr.t0_us + span / 3]];
  for (const f of [0.1, 0.37, 0.5, 0.81]) windows.push([tr.t0_us + f * span, tr.t0_us + (f + 0.13) * span]);
  const ask = () => Promise.all(windows.map(([a, b]) =>
    srv.json(`/api/runs/${id}/timeline/aggregate?start=${a.toFixed(3)}&end=${b.toFixed(3)}`)));
  const stored = await ask();
  assert.ok(Number(srv.sql(id, 'SELECT count(*) FROM taggpack')) > 0);
  srv.sql(id, 'DROP TABLE tagg_level; DROP TABLE cagg_level');
  const scanned = await ask();
  for (let i = 0; i < windows.length; i++) {
    assert.deepEqual(stored[i].rows, scanned[i].rows, `window ${i}`);
    assert.equal(stored[i].counters.length, scanned[i].counters.length);
    for (let k = 0; k < stored[i].counters.length; k++) {
      const [x, y] = [stored[i].counters[k], scanned[i].counters[k]];
      assert.equal(x.min, y.min);
      assert.equal(x.max, y.max);
      assert.ok(x.avg === y.avg || Math.abs(x.avg - y.avg) <= 1e-9 * Math.abs(y.avg), `${x.name}: ${x.avg} vs ${y.avg}`);
    }
  }
  assert.ok(stored[0].rows.length > 5);
});

test('bad parameters answer 400 naming them; unknown runs 404', async () => {
  const bad = [
    ['timeline?width=0', 'width'], ['timeline?width=8193', 'width'], ['timeline?start=10&end=5', 'end'],
    ['timeline?start=abc', 'start'], ['timeline?tracks=1,x', 'tracks'], ['timeline?tracks=99999', 'tracks'],
    ['timeline?rank=x', 'rank'], ['timeline/slice?ts=1&dur=1', 'track'], ['timeline/slice?track=1&dur=1', 'ts'],
    ['timeline/search', 'q'], [`timeline/search?q=${'x'.repeat(300)}`, 'q'], ['timeline/search?q=a&limit=0', 'limit'],
    ['timeline/aggregate?end=5', 'start'], ['timeline/aggregate?start=5', 'end'],
  ];
  for (const [path, name] of bad) {
    const j = await srv.json(`/api/runs/${evil}/${path}`, 400);
    assert.equal(j.error.code, 'invalid');
    assert.match(j.error.message, new RegExp(name), path);
  }
  await srv.json(`/api/runs/${evil}/timeline?rank=3`, 404);
  for (const path of ['timeline', 'timeline/tracks', 'timeline/slice?track=1&ts=1&dur=1', 'timeline/search?q=a',
    'timeline/aggregate?start=0&end=1'])
    await srv.json(`/api/runs/0123456789abcdef/${path}`, 404);
  assert.equal((await srv.req(`/api/runs/${evil}/timeline`, { auth: false })).status, 401);
});

test('a run imported before the timeline tables answers 409', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const id = await srv.uploadBody(evilTrace(), 'old.pt.trace.json', 'old');
  const db = join(srv.dataDir, 'runs', id, 'run.db');
  assert.ok(existsSync(db));
  srv.sql(id, 'DROP TABLE lodpack; DROP TABLE lod_level; DROP TABLE clodpack; DROP TABLE cseries;');
  for (const path of ['timeline', 'timeline/tracks', 'timeline/slice?track=1&ts=0&dur=1000', 'timeline/search?q=a',
    'timeline/aggregate?start=0&end=1']) {
    const j = await srv.json(`/api/runs/${id}/${path}`, 409);
    assert.equal(j.error.code, 'conflict');
    assert.match(j.error.message, /re-import/);
  }
});

test('viewport: coarse counter points (a bucket of 1 ms or more) come in whole µs and 7 digits, fine ones exact', async () => {
  // 4 s of a non-integer counter sampled every ms: the whole run at 2000 px is 2 ms a bucket
  const ev = [{ ph: 'X', cat: 'cpu_op', name: 'work', pid: 1, tid: 1, ts: 0, dur: 4e6, args: {} }];
  const val = (i) => i * 1.2345678901 + 0.1;
  for (let i = 0; i <= 4000; i++) ev.push({ ph: 'C', name: 'bw', pid: 1, ts: i * 1000 + 0.123, args: { value: val(i) } });
  const id = await srv.uploadBody(JSON.stringify({ schemaVersion: 1, traceEvents: ev }), 'bw.pt.trace.json', 'bw');
  const t = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const bw = t.counters.find((c) => /bw/.test(c.name));
  assert.ok(bw, JSON.stringify(t.counters));
  const whole = await srv.json(`/api/runs/${id}/timeline?width=2000&counters=${bw.id}`);
  assert.ok(whole.bucket_us >= 1000, `bucket ${whole.bucket_us} µs`);
  const c = whole.counters[0];
  assert.ok(c.ts.length > 1000);
  assert.ok(c.ts.every(Number.isInteger), 'coarse times in whole µs');
  for (const k of ['min', 'max', 'last']) assert.ok(c[k].every((x) => Number(x.toPrecision(7)) === x), `${k}: 7 significant digits`);
  assert.ok(c.max.some((x) => !Number.isInteger(x)));
  // 1 ms at 2000 px: exact times and values
  const s = t.t0_us + 1000.5;
  const fine = await srv.json(`/api/runs/${id}/timeline?width=2000&start=${s}&end=${s + 1000}&counters=${bw.id}`);
  const f = fine.counters[0];
  const i = f.ts.findIndex((x) => Math.abs(x - (t.t0_us + 2000.123)) < 0.01);
  assert.ok(i >= 0, `the sample at 2 ms: ${f.ts}`);
  assert.equal(f.last[i], val(2));
  assert.ok(!Number.isInteger(f.ts[i]), 'fine times keep their fraction');
});
