// Drawing levels on real misnesting: ../shared/traces/transformer_with_stack
// tiled in time with ../shared/tools/tile_trace.py --chain, so that the
// profiler.step() frame of step N+1 starts inside ProfilerStep#N and ends
// after it across every copy (as in a long capture). The deepest lane must
// not grow with the number of copies (a plain stack went 38 -> 48 -> 68),
// every misnested slice is counted by how it was drawn in the import notes,
// and the slices keep their true times.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, existsSync, SHARED } from './lib.mjs';

const SRC = join(SHARED, 'traces/transformer_with_stack');
const TILE = join(SHARED, 'tools/tile_trace.py');
const skip = !(existsSync(SRC) && existsSync(TILE)) && 'no ../shared traces';
let srv, tmp;

before(async () => {
  if (skip) return;
  srv = await startServer();
  tmp = mkdtempSync(join(tmpdir(), 'tb-nest-'));
});
after(async () => {
  if (skip) return;
  await srv.stop();
  srv.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

/** Imports the trace tiled `copies` times; returns its facts. */
async function tiled(copies) {
  const src = join(SRC, readdirSync(SRC).find((f) => f.endsWith('.json.gz')));
  const out = join(tmp, `chain${copies}.json`);
  execFileSync('python3', [TILE, '--chain', '--copies', String(copies), src, out]);
  const id = await srv.upload([out], `chain${copies}`);
  const t = await srv.json(`/api/runs/${id}/timeline/tracks`);
  const run = await srv.json(`/api/runs/${id}`);
  const notes = run.info.ranks[0].notes;
  const placed = (re) => notes.filter((n) => re.test(n.reason)).reduce((a, n) => a + n.count, 0);
  return {
    id, out, tracks: t.tracks,
    depth: Math.max(...t.tracks.filter((x) => x.kind === 'cpu').map((x) => x.max_depth)),
    gpuDepth: Math.max(...t.tracks.filter((x) => x.kind === 'gpu').map((x) => x.max_depth)),
    misnested: placed(/^slices that end after a slice they start in/),
    gpuSub: placed(/^GPU ops that overlap another op of their stream.*sub-lane/),
  };
}

test('max depth does not grow with the number of chained copies', { skip }, async () => {
  const runs = [];
  for (const copies of [1, 2, 5]) runs.push(await tiled(copies));
  const [one, two, five] = runs;
  assert.ok(one.depth >= 20 && one.depth < 38, `depth of one copy ${one.depth}`);
  assert.equal(two.depth, one.depth, 'two copies');
  assert.equal(five.depth, one.depth, 'five copies');
  // every copy's misnested frames are counted, none hidden
  assert.ok(one.misnested > 0);
  assert.ok(five.misnested > two.misnested && two.misnested > one.misnested, `${five.misnested}, ${two.misnested}, ${one.misnested}`);
  // overlapping kernels get a sub-lane, not a cascade
  assert.ok(one.gpuSub > 0 && one.gpuDepth === 1 && five.gpuDepth === 1);

  // a zoomed window late in the run still shows the outer frames open all
  // along (found without walking the whole misnesting chain back)
  const tr = await srv.json(`/api/runs/${five.id}/timeline/tracks`);
  const main = five.tracks.find((x) => x.kind === 'cpu' && x.max_depth === five.depth);
  const span = tr.t1_us - tr.t0_us;
  const a = (tr.t0_us + 0.9 * span).toFixed(3), b = (tr.t0_us + 0.901 * span).toFixed(3);
  const v = await srv.json(`/api/runs/${five.id}/timeline?start=${a}&end=${b}&width=2000&tracks=${main.id}&counters=`);
  const depths = v.tracks[0].depths.map((d) => d.depth);
  assert.ok(depths.includes(0) && depths.includes(1), `depths ${depths.join()}`);
  const agg = await srv.json(`/api/runs/${five.id}/timeline/aggregate?start=${a}&end=${b}&tracks=${main.id}`);
  const whole = (b - a).toFixed(3);
  assert.ok(agg.rows.filter((r) => r.total_us.toFixed(3) === whole).length >= 2, 'the outer frames cover the window');

  // stored whole: a step's slice details show its true times
  const trace = JSON.parse(readFileSync(five.out, 'utf8'));
  const steps = trace.traceEvents.filter((e) => e.ph === 'X' && /^ProfilerStep#\d+$/.test(e.name));
  const found = await srv.json(`/api/runs/${five.id}/timeline/search?q=ProfilerStep%23&limit=1000`);
  assert.equal(found.hits.length, steps.length);
  for (const h of found.hits) {
    const d = await srv.json(`/api/runs/${five.id}/timeline/slice?track=${h.track}&ts=${h.ts_us}&dur=${h.dur_us}&id=${h.id}`);
    const e = steps.find((s) => s.name === d.name && Math.abs(s.ts - d.ts_us) < 0.002);
    assert.ok(e, `${d.name} at ${d.ts_us}`);
    assert.ok(Math.abs(d.dur_us - e.dur) < 0.002, `${d.name}: ${d.dur_us} vs ${e.dur}`);
  }
});
