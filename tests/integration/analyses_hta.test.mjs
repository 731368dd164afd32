// The HTA-style analyses (idle time by cause, kernel launch statistics, queue
// depth) of `traceboard analyze --json` against an independent computation:
// each ../shared/traces/*/*.pt.trace.json.gz is read here with zlib and
// JSON.parse and the figures are worked out from the raw events, following
// HTA's definitions (hta/analyzers/breakdown_analysis.py,
// cuda_kernel_analysis.py, trace_counters.py), then compared with the
// `analyses` object of each rank. Skipped when ../shared is absent.
//
// Deliberate differences from HTA, made here as in the C code:
//  - The window: only gaps (and launches, and queue time) inside the steps'
//    window count. The window itself (window_ns: the ProfilerStep spans
//    stretched over the GPU work they launched) is taken from the document;
//    the step table has tests of its own. HTA takes the whole trace.
//  - Times stay in ns. HTA rounds ts up and ends down to whole µs, so its
//    gaps can differ by up to 1 µs each: the tolerance below.
//  - A gap runs from the latest end seen so far on the stream (HTA: the
//    previous op's end), and gaps <= 0 are not counted (HTA counts them as
//    kernel_wait of length <= 0). Same sums on streams whose ops do not
//    overlap, which is every stream here.
//  - Launch statistics take every runtime/driver call with a GPU partner
//    (HTA's mask has no cuLaunchKernel, which Triton and torch.compile use);
//    the HTA-mask subset is checked to be contained in it.
//  - Queue depth: the maximum is over the window with changes at one ts
//    collapsed (HTA's describe() runs over every row of the whole trace).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GPU_CATS, RUNTIME_CATS, isDataLoader, ns, linkLaunches, traceDirs, testTracesPresent, scenarioRanks }
  from './tracejson.mjs';

const KERNEL_WAIT_NS = 30000;

const HTA_MASK = new Set(['cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync']);
const QUEUE_MASK = /^(cudaLaunchKernel|cudaLaunchKernelExC|cuLaunchKernel|cuLaunchKernelEx|cudaMemcpyAsync|cudaMemsetAsync)(_\w+)?$/;
const BLOCKING = new Set(['cudaMemcpy', 'cudaMemcpy2D', 'cudaMemcpy3D', 'cudaMemcpyFromSymbol', 'cudaMemcpyPeer',
  'cuMemcpyDtoH_v2', 'cuMemcpyHtoD_v2', 'cuMemcpy', 'hipMemcpy', 'hipMemcpyWithStream', 'cudaFree', 'cudaFreeHost',
  'cuMemFree_v2', 'hipFree']);
const COMM = /^(nccl|gloo|rccl|mpi|ucc|xccl|hccl):/;

/** What a host slice says the thread is doing (the buckets of host_wait_by),
 * or null; a smaller rank wins when slices nest (DataLoader over comm over
 * sync over launching). */
const ACTS = ['dataloader', 'comm', 'sync', 'launching'];
const RANK = Object.fromEntries(ACTS.map((a, i) => [a, i]));
function hostAct(e) {
  const n = e.name || '';
  if (RUNTIME_CATS.has(e.cat)) return n.includes('Synchronize') || BLOCKING.has(n) ? 'sync' : 'launching';
  if (e.cat !== 'cpu_op' && e.cat !== 'user_annotation' && e.cat !== 'Operator') return null;
  if (/^ProfilerStep#/.test(n) || /(step|train|eval|test|predict|iter)[^#]*#\d+$/i.test(n)) return null;
  if (isDataLoader(n)) return 'dataloader';
  if (COMM.test(n)) return 'comm';
  return 'launching';
}

function quantile(sorted, q) {
  if (!sorted.length) return 0;
  const pos = q * (sorted.length - 1), i = Math.floor(pos);
  return i + 1 >= sorted.length ? sorted[sorted.length - 1] : sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

/** The events of a parsed trace, in ns, linked by correlation id. hta:
 * times rounded as HTA does (round_down_time_stamps: ts up, end down to
 * whole µs). */
function load(trace, hta = false) {
  const ops = [], launches = [], host = new Map();
  for (const e of trace.traceEvents || []) {
    if (e.ph !== 'X' || typeof e.ts !== 'number') continue;
    let ts = ns(e.ts), end = ts + Math.max(0, ns(e.dur || 0));
    if (hta) {
      ts = Math.ceil(e.ts) * 1000;
      end = Math.max(ts, Math.floor(e.ts + (e.dur || 0)) * 1000);
    }
    const a = e.args || {};
    if (GPU_CATS.has(e.cat)) {
      ops.push({ ts, end, corr: a.correlation || 0, stream: a.stream ?? e.tid, kernel: /kernel/i.test(e.cat),
        name: e.name });
      continue;
    }
    const key = `${e.pid}:${e.tid}`;
    if (RUNTIME_CATS.has(e.cat) && a.correlation) launches.push({ ts, end, corr: a.correlation, name: e.name, key });
    const act = hostAct(e);
    if (act) {
      if (!host.has(key)) host.set(key, []);
      host.get(key).push({ ts, end, act });
    }
  }
  linkLaunches(ops, launches);
  return { ops, launches, host };
}

/** Time per bucket of host activity of a thread (its spans) over [a, b). */
function sweep(spans, a, b, into) {
  const open = spans.filter((s) => s.ts < b && s.end > a);
  // each stretch between two span edges goes to the smallest rank open over it
  const edges = [];
  for (const s of open) edges.push([Math.max(s.ts, a), RANK[s.act], 1], [Math.min(s.end, b), RANK[s.act], -1]);
  edges.sort((x, y) => x[0] - y[0]);
  const count = ACTS.map(() => 0);
  const best = () => ACTS[count.findIndex((n) => n > 0)] || 'none';
  let at = a;
  for (const [t, r, d] of edges) {
    if (t > at) { into[best()] += t - at; at = t; }
    count[r] += d;
  }
  if (b > at) into[best()] += b - at;
}

/** Idle time by cause per stream, in [w0, w1). */
function idle(t, w0, w1) {
  const streams = new Map();
  for (const o of t.ops) {
    if (!streams.has(o.stream)) streams.set(o.stream, []);
    streams.get(o.stream).push(o);
  }
  const out = new Map();
  for (const [stream, ops] of streams) {
    const r = { busy: 0, host_wait: 0, kernel_wait: 0, other: 0, gaps: 0,
      counts: { host_wait: 0, kernel_wait: 0, other: 0 },
      by: { launching: 0, sync: 0, dataloader: 0, comm: 0, none: 0 } };
    let prevEnd = 0;
    ops.forEach((o, k) => {
      const from = k && o.ts < prevEnd ? prevEnd : o.ts;
      r.busy += Math.max(0, Math.min(o.end, w1) - Math.max(from, w0));
      if (k && o.ts > prevEnd) {
        const a = Math.max(prevEnd, w0), b = Math.min(o.ts, w1);
        if (b > a) {
          const cat = o.launch && o.launch.ts > prevEnd ? 'host_wait'
            : o.ts - prevEnd < KERNEL_WAIT_NS ? 'kernel_wait' : 'other';
          r[cat] += b - a;
          r.counts[cat]++;
          r.gaps++;
          if (cat === 'host_wait') {
            const until = Math.max(a, Math.min(o.launch.ts, b));
            if (until > a) sweep(t.host.get(o.launch.key) || [], a, until, r.by);
            r.by.launching += b - until;
          }
        }
      }
      if (k === 0 || o.end > prevEnd) prevEnd = o.end;
    });
    out.set(stream, r);
  }
  return out;
}

/** Launch statistics of the launches in [w0, w1). */
function launchStats(t, w0, w1) {
  const rows = [];
  let hta = 0;
  for (const l of t.launches) {
    if (!l.op || l.ts < w0 || l.ts >= w1) continue;
    const cpu = l.end - l.ts, gpu = l.op.end - l.op.ts;
    rows.push({ cpu, gpu, delay: Math.max(0, l.op.ts - l.end), kernel: l.op.kernel });
    if (HTA_MASK.has(l.name)) hta++;
  }
  const sum = (k) => {
    const v = rows.map((r) => r[k]).sort((x, y) => x - y);
    return { mean: v.length ? v.reduce((s, x) => s + x, 0) / v.length : 0, p50: quantile(v, 0.5),
      p95: quantile(v, 0.95), max: v.length ? v[v.length - 1] : 0 };
  };
  return {
    count: rows.length, hta, kernels: rows.filter((r) => r.kernel).length,
    cpu_ns: sum('cpu'), gpu_ns: sum('gpu'), delay_ns: sum('delay'),
    short: rows.filter((r) => r.cpu <= 50000 && r.gpu < r.cpu).length,
    runtime_outliers: rows.filter((r) => r.cpu > 50000).length,
    delay_outliers: rows.filter((r) => r.delay > 100000).length,
    outliers: rows.filter((r) => r.cpu > 50000 || r.delay > 100000).length,
  };
}

/** Queue depth per stream: {max, mean} over [w0, w1), and launches. */
function queue(t, w0, w1) {
  const ev = new Map();
  for (const l of t.launches) {
    if (!l.op || !QUEUE_MASK.test(l.name)) continue;
    if (!ev.has(l.op.stream)) ev.set(l.op.stream, []);
    ev.get(l.op.stream).push([l.ts, 1], [l.op.ts, -1]);
  }
  const out = new Map();
  for (const [stream, list] of ev) {
    list.sort((x, y) => x[0] - y[0] || y[1] - x[1]);
    let sum = 0, max = 0, weighted = 0, at = null, shown = 0;
    const account = (d, a, b) => {
      a = Math.max(a, w0); b = Math.min(b, w1);
      if (b <= a) return;
      max = Math.max(max, d);
      weighted += d * (b - a);
    };
    for (let i = 0; i < list.length;) {
      const ts = list[i][0];
      if (at !== null) account(shown, at, ts);
      for (; i < list.length && list[i][0] === ts; i++) sum += list[i][1];
      shown = Math.max(0, sum);
      at = ts;
    }
    if (at !== null) account(shown, at, w1);
    out.set(stream, { max, mean: weighted / (w1 - w0), launches: list.length / 2 });
  }
  return out;
}

const streamNo = (s) => Number((/stream (\d+)/.exec(s.name) || [])[1]);

/** |got - want| <= tol, with a message. */
function close(got, want, tol, what) {
  assert.ok(Math.abs(got - want) <= tol, `${what}: traceboard ${got}, independent ${want} (tolerance ${tol})`);
}

const dirs = traceDirs();
testTracesPresent(dirs);

for (const dir of dirs) {
  test(`HTA analyses agree with an independent computation: ${dir}`, () => {
    for (const { trace, rank, doc } of scenarioRanks(dir)) {
      const t = load(trace);
      const [w0, w1] = doc.window_ns;
      const where = `${dir} rank ${rank}`;
      assert.ok(w1 > w0, `${where}: a window`);

      // idle time by cause, stream by stream
      const mine = idle(t, w0, w1);
      let gaps = 0;
      for (const s of doc.idle.streams) {
        const m = mine.get(streamNo(s));
        assert.ok(m, `${where}: ${s.name} is a stream of the trace`);
        const tol = 1000 * m.gaps;
        gaps += m.gaps;
        close(s.busy_ns, m.busy, 1000 * (m.gaps + 2), `${where} ${s.name} busy`);
        for (const c of ['host_wait', 'kernel_wait', 'other']) {
          close(s[`${c}_ns`], m[c], tol, `${where} ${s.name} ${c}`);
          close(s.counts[c], m.counts[c], 1, `${where} ${s.name} ${c} count`);
        }
        assert.equal(s.idle_ns, s.host_wait_ns + s.kernel_wait_ns + s.other_ns);
        const by = s.host_wait_by;
        assert.equal(by.launching_ns + by.sync_ns + by.dataloader_ns + by.comm_ns + by.none_ns, s.host_wait_ns,
          `${where} ${s.name}: host_wait_by adds up to host_wait`);
        for (const b of ['launching', 'sync', 'dataloader', 'comm', 'none'])
          // (gpuscan also cuts a slice overhanging its parent: 0.5 % more)
          close(by[`${b}_ns`], m.by[b], tol + 0.005 * m.host_wait, `${where} ${s.name} host_wait_by ${b}`);
      }
      // HTA's own rounding: the same categories within 1 µs per gap, give
      // or take the gaps that cross the 30 µs line when rounded
      const hta = idle(load(trace, true), w0, w1);
      for (const s of doc.idle.streams) {
        const h = hta.get(streamNo(s));
        assert.ok(h, `${where}: ${s.name} in the rounded trace`);
        for (const c of ['host_wait', 'kernel_wait', 'other'])
          close(s[`${c}_ns`], h[c], 1000 * h.gaps + 0.01 * (h.host_wait + h.kernel_wait + h.other),
            `${where} ${s.name} ${c} (HTA rounding)`);
      }
      const withIdle = [...mine.values()].filter((m) => m.busy + m.host_wait + m.kernel_wait + m.other > 0);
      assert.equal(doc.idle.streams.length, withIdle.length, `${where}: every stream active in the window`);
      const tot = doc.idle.totals;
      const idleSum = tot.host_wait_ns + tot.kernel_wait_ns + tot.other_ns;
      if (idleSum > 0) close(doc.idle.ratios.host_wait, tot.host_wait_ns / idleSum, 1e-9, `${where} ratio`);
      const hist = ['host_wait', 'kernel_wait', 'other'].reduce((s, c) => s + doc.idle.histogram[c].reduce((x, y) => x + y, 0), 0);
      assert.equal(hist, tot.counts.host_wait + tot.counts.kernel_wait + tot.counts.other, `${where}: histogram`);
      close(hist, gaps, Math.max(1, 0.02 * gaps), `${where}: gaps`);

      // launch statistics
      const L = launchStats(t, w0, w1), D = doc.launch;
      assert.equal(D.count, L.count, `${where}: launches in the window`);
      assert.equal(D.kernels, L.kernels, `${where}: kernel launches`);
      assert.ok(L.hta <= D.count, `${where}: HTA's launches are among ours`);
      for (const m of ['cpu_ns', 'gpu_ns', 'delay_ns'])
        for (const q of ['mean', 'p50', 'p95', 'max']) close(D[m][q], L[m][q], 1000, `${where} launch ${m} ${q}`);
      close(D.short_kernels, L.short, Math.max(1, 0.01 * L.count), `${where}: short kernels`);
      close(D.runtime_outliers, L.runtime_outliers, Math.max(1, 0.01 * L.count), `${where}: runtime outliers`);
      close(D.delay_outliers, L.delay_outliers, Math.max(1, 0.01 * L.count), `${where}: delay outliers`);
      close(D.outliers.length, Math.min(50, L.outliers), 1, `${where}: outliers listed`);
      const excess = (o) => Math.max(o.cpu_ns - D.runtime_cutoff_ns, o.delay_ns - D.delay_cutoff_ns);
      for (let i = 1; i < D.outliers.length; i++)
        assert.ok(excess(D.outliers[i - 1]) >= excess(D.outliers[i]), `${where}: outliers, largest excess first`);
      for (const o of D.outliers)
        assert.equal(o.why, o.cpu_ns > 50000 ? (o.delay_ns > 100000 ? 'both' : 'runtime') : 'delay');

      // queue depth
      const Q = queue(t, w0, w1);
      assert.equal(doc.queue.streams.length, Q.size, `${where}: streams with launches`);
      for (const s of doc.queue.streams) {
        const q = Q.get(streamNo(s));
        assert.ok(q, `${where}: queue of ${s.name}`);
        assert.equal(s.launches, q.launches, `${where} ${s.name}: queued launches`);
        close(s.max, q.max, 1, `${where} ${s.name}: max queue depth`);
        close(s.mean, q.mean, 0.02 * q.mean + 1e-3, `${where} ${s.name}: mean queue depth`);
        assert.equal(s.at_limit_ns, 0, `${where}: no stream of these traces fills CUDA's queue`);
      }
    }
  });
}
