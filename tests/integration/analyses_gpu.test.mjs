// The copy, overlap and annotation analyses of `analyze --json` checked
// against an independent computation in JavaScript over the raw traces of
// ../shared/traces (gzip + JSON.parse, no traceboard code): copy bytes and
// bandwidth per kind, the union time of each kernel type and their overlap,
// and the GPU time of the top annotations. The fusion candidates are checked
// for shape and ranking only (their pattern grouping is the C code's own).
//
// Times: the trace gives µs as decimal text; the importer turns that text
// into integer ns exactly (3 decimals, the 4th rounds). JSON.parse would go
// through a double, so the traces are read with readTrace's exact times
// (tsn, durn: integer ns from the text): the figures must then agree to the
// nanosecond.
// The window [w0, w1) is taken from the document (the steps stretched over
// their GPU work is the analysis module's definition, tested elsewhere).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { traceDirs, testTracesPresent, scenarioRanks } from './tracejson.mjs';

const GPU_CATS = new Set(['kernel', 'gpu_memcpy', 'gpu_memset']);

/** HTA's kernel types: communication by its regex, memory by category. */
function typeOf(e) {
  if (e.cat !== 'kernel') return 2;
  if (/^nccl|^hccl|ncclKernel|ncclDevKernel/.test(e.name)) return 1;
  return 0;
}

function copyKind(e) {
  if (e.cat === 'gpu_memset') return 'Memset';
  for (const [re, k] of [[/HtoD|H2D/, 'HtoD'], [/DtoH|D2H/, 'DtoH'], [/PtoP|P2P/, 'PtoP'], [/DtoD|D2D/, 'DtoD']])
    if (re.test(e.name)) return k;
  return 'Memcpy';
}

function pinnedOf(e, kind) {
  if (e.name.includes('Pageable')) return false;
  if (e.name.includes('Pinned') || ['DtoD', 'PtoP', 'Memset'].includes(kind)) return true;
  return null;
}

/** Merged [a, b) intervals. */
function merge(iv) {
  iv.sort((x, y) => x[0] - y[0]);
  const out = [];
  for (const [a, b] of iv) {
    if (b <= a) continue;
    if (out.length && a <= out[out.length - 1][1]) out[out.length - 1][1] = Math.max(out[out.length - 1][1], b);
    else out.push([a, b]);
  }
  return out;
}
const len = (iv) => iv.reduce((s, [a, b]) => s + b - a, 0);
function intersect(x, y) {
  const out = [];
  let i = 0, j = 0;
  while (i < x.length && j < y.length) {
    const a = Math.max(x[i][0], y[j][0]), b = Math.min(x[i][1], y[j][1]);
    if (b > a) out.push([a, b]);
    if (x[i][1] < y[j][1]) i++; else j++;
  }
  return out;
}

const scenarios = traceDirs();
testTracesPresent(scenarios);

for (const sc of scenarios) {
  test(`copy, overlap and annotations agree with a JS recomputation: ${sc}`, () => {
    for (const { file: f, trace: tr, doc: an } of scenarioRanks(sc, { exact: true })) {
      const [w0, w1] = an.window_ns;
      const ev = tr.traceEvents.filter((e) => e.ph === 'X');
      const ops = ev.filter((e) => GPU_CATS.has(e.cat));
      const inWin = ops.filter((e) => e.tsn >= w0 && e.tsn < w1);

      // --- copy: per (kind, pinned) count, bytes, busy, GB/s
      const acc = new Map();
      for (const e of inWin) {
        if (e.cat === 'kernel') continue;
        const kind = copyKind(e), pinned = pinnedOf(e, kind), key = `${kind}/${pinned}`;
        const a = acc.get(key) || { kind, pinned, count: 0, bytes: 0, busy: 0, sized: 0, max: 0 };
        const d = Math.max(e.durn, 1), b = e.args && typeof e.args.bytes === 'number' ? e.args.bytes : -1;
        a.count++;
        a.busy += e.durn;
        if (b >= 0) { a.bytes += b; a.sized += d; a.max = Math.max(a.max, b / d); }
        acc.set(key, a);
      }
      assert.equal(an.copy.kinds.length, acc.size, `${f}: copy kinds`);
      for (const k of an.copy.kinds) {
        const a = acc.get(`${k.kind}/${k.pinned}`);
        assert.ok(a, `${f}: copy kind ${k.kind} pinned ${k.pinned}`);
        assert.equal(k.count, a.count);
        assert.equal(k.bytes, a.bytes);
        assert.equal(k.busy_ns, a.busy);
        assert.ok(Math.abs(k.gbps - (a.sized ? a.bytes / a.sized : 0)) < 1e-6 * (1 + k.gbps), `${f}: ${k.kind} GB/s`);
        assert.ok(Math.abs(k.max_gbps - a.max) < 1e-6 * (1 + a.max));
        if (k.peak_gbps > 0) assert.ok(Math.abs(k.share_of_peak - k.gbps / k.peak_gbps) < 1e-9);
      }
      const copyUnion = merge(inWin.filter((e) => e.cat !== 'kernel').map((e) => [e.tsn, e.tsn + e.durn]));
      assert.equal(an.copy.busy_ns, len(copyUnion), `${f}: copy busy union`);

      // --- overlap: unions per type (clipped to the window) and pairwise overlaps
      const byType = [[], [], []];
      for (const e of ops) {
        const a = Math.max(e.tsn, w0), b = Math.min(e.tsn + e.durn, w1);
        if (b > a) byType[typeOf(e)].push([a, b]);
      }
      const u = byType.map(merge);
      const ov = an.overlap;
      assert.equal(ov.compute_ns, len(u[0]), `${f}: compute union`);
      assert.equal(ov.communication_ns, len(u[1]), `${f}: communication union`);
      assert.equal(ov.memory_ns, len(u[2]), `${f}: memory union`);
      const all = merge([...u[0], ...u[1], ...u[2]].map((x) => [...x]));
      assert.equal(ov.idle_ns, w1 - w0 - len(all), `${f}: idle`);
      const combo = (types) => ov.combos.find((c) => c.types.join('+') === types).ns;
      const cc = intersect(u[0], u[1]), cm = intersect(u[0], u[2]), nm = intersect(u[1], u[2]);
      const ccm = len(intersect(cc, u[2]));
      assert.equal(combo('compute+communication') + ccm, len(cc), `${f}: compute ∩ comm`);
      assert.equal(combo('compute+memory') + ccm, len(cm), `${f}: compute ∩ memory`);
      assert.equal(combo('communication+memory') + ccm, len(nm), `${f}: comm ∩ memory`);
      assert.equal(combo('compute+communication+memory'), ccm);
      assert.equal(ov.combos.reduce((s, c) => s + c.ns, 0), ov.window_ns - ov.idle_ns, `${f}: combos add up`);
      if (len(u[1]) > 0) assert.ok(Math.abs(ov.comm_overlap_ratio - len(cc) / len(u[1])) < 1e-9);
      else assert.equal(ov.comm_overlap_ratio, null);

      // --- annotations: innermost host annotation around the launch, else
      // the innermost gpu_user_annotation on the op's track around its start
      const isStep = (n) => /^ProfilerStep#\d+$/.test(n);
      const hostAnn = ev.filter((e) => (e.cat === 'user_annotation' && !isStep(e.name)) ||
        (e.cat === 'python_function' && e.name.startsWith('nn.Module: ')));
      const annByThread = new Map();
      for (const a of hostAnn) {
        const k = `${a.pid}/${a.tid}`;
        if (!annByThread.has(k)) annByThread.set(k, []);
        annByThread.get(k).push(a);
      }
      const launches = new Map();
      for (const e of ev)
        if ((e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') && e.args && e.args.correlation &&
          !launches.has(e.args.correlation)) launches.set(e.args.correlation, e);
      const gpuAnn = ev.filter((e) => e.cat === 'gpu_user_annotation' && !isStep(e.name));
      const innermost = (cands, t, end) => {
        let best = null;
        for (const a of cands)
          if (a.tsn <= t && end <= a.tsn + a.durn && a.durn > 0 &&
            (!best || a.tsn > best.tsn || (a.tsn === best.tsn && a.durn < best.durn))) best = a;
        return best;
      };
      const got = new Map();
      let total = 0, attributed = 0;
      for (const e of inWin) {
        total += e.durn;
        const l = e.args && launches.get(e.args.correlation);
        let a = l ? innermost(annByThread.get(`${l.pid}/${l.tid}`) || [], l.tsn, l.tsn + l.durn) : null;
        let src = a ? (a.cat === 'python_function' ? 'module' : 'record_function') : null;
        if (!a) {
          a = innermost(gpuAnn.filter((g) => g.pid === e.pid && g.tid === e.tid), e.tsn, e.tsn + 1);
          src = 'gpu_annotation';
          if (a && !(e.tsn < a.tsn + a.durn)) a = null;
        }
        if (!a) continue;
        attributed += e.durn;
        const k = `${a.name}\u0000${src}`;
        got.set(k, (got.get(k) || 0) + e.durn);
      }
      assert.equal(an.annotations.total_ns, total, `${f}: annotation total`);
      assert.equal(an.annotations.attributed_ns, attributed, `${f}: attributed`);
      const top = [...got.entries()].sort((x, y) => y[1] - x[1]).slice(0, 10);
      for (const [k, ns] of top) {
        const [name, source] = k.split('\u0000');
        const it = an.annotations.items.find((x) => x.name === name && x.source === source);
        assert.ok(it, `${f}: annotation ${name} (${source})`);
        assert.equal(it.gpu_ns, ns, `${f}: annotation ${name}`);
      }

      // --- fusion: shape and ranking
      const fu = an.fusion;
      assert.ok(fu.items.length <= 30);
      for (let i = 1; i < fu.items.length; i++) assert.ok(fu.items[i - 1].saving_ns >= fu.items[i].saving_ns);
      for (const it of fu.items) {
        assert.ok(it.kernels_per_call >= 2 && it.count >= 1);
        assert.ok(it.kind === 'op' ? it.ops.length === 1 : it.ops.length === it.kernels_per_call);
      }
      assert.match(fu.advice, /torch\.compile/);
    }
  });
}
