// tracejson.mjs — the raw Kineto traces of ../shared/traces for the tests
// that check `traceboard analyze --json` against an independent computation
// in JavaScript (analyses_hta, analyses_gpu, analyses_cp_indep): which
// scenarios there are, reading a .pt.trace.json.gz with zlib and JSON.parse
// (no traceboard code), µs → ns, linking GPU ops to their launch calls, and
// pairing each trace file with its rank's document. Tests using it skip
// their per-scenario tests when ../shared/traces is absent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { BIN, SHARED } from './lib.mjs';

export const TRACES = join(SHARED, 'traces');

/** GPU op categories (Kineto's current names and the older ones). */
export const GPU_CATS = new Set(['kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset', 'Memset']);
/** Host calls that launch GPU work (a correlation id links them). */
export const RUNTIME_CATS = new Set(['cuda_runtime', 'Runtime', 'cuda_driver']);

/** A DataLoader's (or DataPipe's) "next batch" span. */
export const isDataLoader = (n) => (n.startsWith('enumerate(DataLoader)#') && n.endsWith('.__next__')) ||
  n.startsWith('enumerate(DataPipe)#');

/** µs (a number from JSON.parse) → ns, rounded. Within 1 ns of the
 * importer, which converts the decimal text (usToNs). */
export const ns = (us) => Math.round(us * 1000);

/** µs decimal text → integer ns, exactly as jtok_us_to_ns does (3 decimals,
 * the 4th rounds). */
export function usToNs(s) {
  if (typeof s === 'number') s = String(s);
  const neg = s.startsWith('-');
  if (neg) s = s.slice(1);
  if (/e/i.test(s)) return Math.round(Number(s) * 1000) * (neg ? -1 : 1);
  const [ip, fp = ''] = s.split('.');
  let n = Number(ip) * 1000 + Number((fp + '000').slice(0, 3));
  if (fp.length > 3 && fp[3] >= '5') n += 1;
  return neg ? -n : n;
}

/** A gzipped trace file, parsed. exact: ts and dur are kept as their decimal
 * text (JSON.parse would go through a double) and every event gets tsn and
 * durn (>= 0), integer ns by usToNs, to agree with the importer to the ns. */
export function readTrace(path, { exact = false } = {}) {
  let text = gunzipSync(readFileSync(path)).toString('utf8');
  if (!exact) return JSON.parse(text);
  text = text.replace(/"(ts|dur)":\s*(-?[0-9][0-9.eE+-]*)/g, '"$1":"$2"');
  const t = JSON.parse(text);
  for (const e of t.traceEvents || []) {
    if (e.ts !== undefined) e.tsn = usToNs(e.ts);
    e.durn = e.dur !== undefined ? Math.max(0, usToNs(e.dur)) : 0;
  }
  return t;
}

/** The rank a trace says it is (distributedInfo), else 0. */
export function rankOf(trace) {
  const r = trace.distributedInfo && trace.distributedInfo.rank;
  return typeof r === 'number' ? r : 0;
}

/** Sorts the GPU ops (by start, the longer first) and the launch calls (by
 * start), and links each op with the first call of its correlation id:
 * op.launch, and call.op for the first op of each call. Both lists are
 * objects with ts, end and corr (0: none). */
export function linkLaunches(ops, launches) {
  ops.sort((x, y) => x.ts - y.ts || y.end - x.end);
  launches.sort((x, y) => x.ts - y.ts);
  const byCorr = new Map();
  for (const l of launches) if (l.corr && !byCorr.has(l.corr)) byCorr.set(l.corr, l);
  for (const o of ops) {
    o.launch = o.corr ? byCorr.get(o.corr) : undefined;
    if (o.launch && !o.launch.op) o.launch.op = o;
  }
}

const isKineto = (f) => f.endsWith('.pt.trace.json.gz');

/** The scenario folders of ../shared/traces that hold Kineto traces, sorted ([] without them). */
export function traceDirs() {
  return existsSync(TRACES)
    ? readdirSync(TRACES).filter((d) => statSync(join(TRACES, d)).isDirectory() &&
        readdirSync(join(TRACES, d)).some(isKineto)).sort()
    : [];
}

/** The test that ../shared/traces, when there, has scenarios (dirs: traceDirs()). */
export function testTracesPresent(dirs) {
  test('the shared traces are there', (t) => {
    if (!existsSync(TRACES)) t.skip('../shared/traces not found');
    else assert.ok(dirs.length > 0);
  });
}

/** `traceboard analyze --json` of a file or folder (asserted to succeed), parsed. */
export function analyzeJson(path) {
  const r = spawnSync(BIN, ['analyze', '--json', path], { encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Analyzes a scenario of traceDirs(), then yields one Kineto trace file at
 * a time, sorted: { file (its name), trace (readTrace with opts), rank, doc
 * (that rank's `analyses`, asserted present) }. */
export function* scenarioRanks(dir, opts) {
  const rep = analyzeJson(join(TRACES, dir));
  for (const file of readdirSync(join(TRACES, dir)).filter(isKineto).sort()) {
    const trace = readTrace(join(TRACES, dir, file), opts);
    const rank = rankOf(trace);
    const rk = rep.ranks.find((x) => x.rank === rank);
    assert.ok(rk && rk.analyses, `${file}: rank ${rank} has analyses`);
    yield { file, trace, rank, doc: rk.analyses };
  }
}
