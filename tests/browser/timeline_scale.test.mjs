// Browser test of the Timeline tab on a long real-shaped trace (issue 17's
// bar): ../shared/traces/transformer_with_stack tiled with
// ../shared/tools/tile_trace.py --chain --copies 50 (about 100 steps, 1.1 M
// events, Python stacks misnesting across every step; made once into
// /tmp/traceboard-bench like tests/bench.sh, reused when present), imported
// into a temporary data folder. Times are the page's own: the plot's
// data-drawn attribute (views/timeline.js) is performance.now() when a
// window answer reached the screen, and a key's event timeStamp is on the
// same clock. First slices drawn < 1.5 s after navigation; a zoom step that
// needs new data drawn < 300 ms after its key (median of the steps; each is
// printed). Skipped without $TB_SHARED or python3.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHOTS, startBrowser, runIdOf } from './lib.mjs';
import { BIN, SHARED, existsSync } from '../integration/lib.mjs';

const CACHE = '/tmp/traceboard-bench';
const TRACE = join(CACHE, 'transformer_with_stack-chain50.json');
const TWS = join(SHARED, 'traces/transformer_with_stack');
const TILE = join(SHARED, 'tools/tile_trace.py');

let session, srv, page, errors, runId, why;

/** The tiled trace's path (made once), or null with `why` set. */
function tiledTrace() {
  if (existsSync(TRACE)) return TRACE;
  if (!existsSync(TILE) || !existsSync(TWS)) return (why = `no ${TILE} or ${TWS} (set TB_SHARED)`), null;
  if (spawnSync('python3', ['--version']).status !== 0) return (why = 'python3 not installed'), null;
  const src = readdirSync(TWS).filter((f) => f.endsWith('.json.gz')).map((f) => join(TWS, f));
  mkdirSync(CACHE, { recursive: true });
  execFileSync('python3', [TILE, '--chain', '--copies', '50', ...src, TRACE + '.tmp'], { stdio: 'inherit' });
  renameSync(TRACE + '.tmp', TRACE);
  return TRACE;
}

before(async () => {
  const trace = tiledTrace();
  if (!trace) return;
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-scale-'));
  execFileSync(BIN, ['import', '--data-dir', dataDir, '--log-level', 'warn', trace], { stdio: 'ignore' });
  session = await startBrowser({ dataDir });
  ({ srv, page, errors } = session);
  runId = await runIdOf(srv, (await (await srv.req('/api/runs')).json()).runs[0].name);
  await page.goto(srv.url);
});

after(async () => { await session?.close(); });

const drawnAt = () => page.$eval('.tb-tl-plot', (e) => (e.dataset.drawn ? Number(e.dataset.drawn) : null));

test('timeline scale: first slices drawn in < 1.5 s on the tiled real-shape trace', async (t) => {
  if (!runId) return t.skip(why);
  const firsts = [];
  for (let i = 0; i < 2; i++) {
    // a fresh document each time: data-drawn counts from its navigation
    await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
    await page.waitForSelector('.tb-tl-plot[data-drawn]', { timeout: 20000 });
    firsts.push(await drawnAt());
  }
  console.log(`first slices drawn: ${firsts.map((x) => x.toFixed(0) + ' ms').join(', then after a reload ')} (bar < 1500)`);
  assert.ok(firsts[0] < 1500, `first slices drawn after ${firsts[0]} ms`);
  assert.deepEqual(errors, []);
});

test('timeline scale: a zoom step that needs new data is drawn in < 300 ms', async (t) => {
  if (!runId) return t.skip(why);
  await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
  await page.waitForSelector('.tb-tl-plot[data-drawn]:not([data-busy])', { timeout: 20000 });
  await page.evaluate(() => window.addEventListener('keydown', (e) => { window.tbKeyAt = e.timeStamp; }, true));
  const box = await page.$eval('.tb-tl-scroll', (e) => e.getBoundingClientRect().toJSON());
  await page.mouse.move(box.left + box.width * 0.37, box.top + 40); // zoom about a point inside a step
  const steps = [];
  for (let press = 0; press < 40 && steps.length < 6; press++) {
    const was = await drawnAt();
    await page.keyboard.press('w');
    // a fetch starts within the 60 ms debounce, or not at all (the loaded window still covers the view)
    const fetching = await page
      .waitForFunction((w) => { const p = document.querySelector('.tb-tl-plot'); return p.dataset.busy || Number(p.dataset.drawn) !== w; }, was, { timeout: 250 })
      .then(() => true, () => false);
    if (!fetching) continue;
    await page.waitForFunction((w) => { const p = document.querySelector('.tb-tl-plot'); return !p.dataset.busy && Number(p.dataset.drawn) !== w; }, was, { timeout: 10000 });
    steps.push((await drawnAt()) - (await page.evaluate(() => window.tbKeyAt)));
  }
  assert.ok(steps.length >= 3, `zooming in fetched new data ${steps.length} times`);
  const sorted = [...steps].sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1];
  console.log(`zoom steps with new data, key to drawn: ${steps.map((x) => x.toFixed(0)).join(', ')} ms; median ${median.toFixed(0)} ms (bar < 300)`);
  await page.screenshot({ path: join(SHOTS, 'timeline-scale.png') });
  assert.ok(median < 300, `a zoom step drawn ${median} ms after its key`);
  assert.deepEqual(errors, []);
});
