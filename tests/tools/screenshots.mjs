// screenshots.mjs — re-makes the screenshots of docs/ (README and user
// guide): a deep with_stack stack, the 8 DLRM ranks on one timeline and a
// flame graph of an area; the Overview in the light and the dark theme, the
// Timeline in the dark one and the print report. Then every page (runs, each
// run tab, ranks, compare, job) in both themes at 1280, 1600 and 2560 px
// into --pages (not committed: to look at after a change to the pages).
// Run it after a change to the timeline's drawing or nesting, or to the
// pages' look:
//
//   node tests/tools/screenshots.mjs [--out docs/img] [--pages build/screenshots/pages]
//                                    [--data-dir D] [--deep TRACE]
//
// Without --data-dir it imports ../shared/traces/transformer_with_stack (or
// --deep, e.g. /work/bench/chain50.json) and the DLRM ranks of
// ../shared/corpus/param into a temporary data folder, serves it with
// build/traceboard ($TB_BIN) and drives Debian's chromium ($CHROMIUM) through
// playwright-core, as the browser tests do. Each PNG is a 1280×760 viewport
// shot (small enough for git: < 200 KB).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { BIN, SHARED, attachServer, serveArgs } from '../integration/lib.mjs';

const require = createRequire(resolve('tests/package.json'));
const { chromium } = require('playwright-core');

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : def;
};
const out = resolve(opt('--out', 'docs/img'));
const pagesOut = resolve(opt('--pages', 'build/screenshots/pages'));
const deep = opt('--deep', join(SHARED, 'traces/transformer_with_stack'));
const dlrm = join(SHARED, 'corpus/param/et_replay/tests/inputs/dlrm_kineto');
let dataDir = opt('--data-dir', '');
const own = !dataDir;
if (own) {
  dataDir = mkdtempSync(join(tmpdir(), 'tb-shots-'));
  for (const p of [deep, dlrm]) execFileSync(BIN, ['import', '--data-dir', dataDir, p], { stdio: 'ignore' });
}
mkdirSync(out, { recursive: true });
mkdirSync(pagesOut, { recursive: true });

const srv = await attachServer(spawn(BIN, serveArgs(dataDir), { stdio: ['ignore', 'pipe', 'pipe'] }), dataDir);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  await page.goto(srv.url);
  await page.evaluate(() => localStorage.setItem('tb.timeline.drawer', '200'));
  const runs = (await (await srv.req('/api/runs')).json()).runs;
  const many = runs.find((r) => r.ranks >= 8);
  const one = runs.find((r) => r.ranks === 1);
  if (!many || !one) throw new Error('the data folder needs a one-rank run and an 8-rank run');

  /** Opens a timeline URL and waits until a window is drawn and nothing is in flight. */
  async function open(query) {
    await page.goto(`${srv.base}/?run=${query}`);
    await page.waitForSelector('.tb-tl-plot[data-loaded]', { timeout: 60000 });
    await page.waitForFunction(() => !document.querySelector('.tb-tl-plot')?.hasAttribute('data-busy'), null, { timeout: 60000 });
    await page.waitForTimeout(400);
  }
  const shot = (name) => page.screenshot({ path: join(out, name), type: 'png' });

  // a deep stack: the main thread of the with_stack trace over one step, its step's stack at the top
  const tracks = await (await srv.req(`/api/runs/${one.id}/timeline/tracks`)).json();
  const steps = tracks.steps || [];
  const s = steps.length > 1 ? steps[1] : { start_us: tracks.t0_us, end_us: tracks.t1_us };
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.evaluate(() => localStorage.setItem('tb.timeline.drawer', '120'));
  await open(`${one.id}&view=timeline&start=${s.start_us}&end=${s.end_us}`);
  const hit = (await (await srv.req(`/api/runs/${one.id}/timeline/search?q=ProfilerStep%23&start=${s.start_us}&limit=1`)).json()).hits[0];
  if (hit) {
    const d = await (await srv.req(`/api/runs/${one.id}/timeline/slice?track=${hit.track}&ts=${hit.ts_us}&dur=${hit.dur_us}`)).json();
    const lanes = await page.$eval('.tb-tl-lanes', (e) => e.getBoundingClientRect().toJSON());
    await page.mouse.move(lanes.left + 300, lanes.top + 100);
    await page.mouse.wheel(0, Math.max(0, d.depth * 18 - 60));
    await page.mouse.move(0, 0);
    await page.waitForTimeout(400);
  }
  await shot('timeline-deep-stack.png');
  await page.evaluate(() => localStorage.setItem('tb.timeline.drawer', '200'));

  // the 8 DLRM ranks stacked on the aligned clock, GPU lanes first; the CPU and counter groups
  // folded (a click each: group folding other than a rank's is not URL state) so all ranks show
  await page.setViewportSize({ width: 1280, height: 1000 });
  await open(`${many.id}&view=timeline&ranks=all&gpufirst=1`);
  for (;;) {
    const g = page.locator('.tb-tl-group:not([data-rank])[aria-expanded="true"]:not(:has-text("GPU"))').first();
    if (!(await g.count())) break;
    await g.click();
  }
  const plot = await page.$eval('.tb-tl-lanes', (e) => e.getBoundingClientRect().toJSON());
  await page.mouse.move(plot.left + 200, plot.top + 100);
  await page.mouse.wheel(0, -100000); // back to rank 0 (a click scrolls to the group it folds)
  await page.mouse.move(0, 0);
  await page.waitForTimeout(400);
  await page.waitForFunction(() => !document.querySelector('.tb-tl-plot')?.hasAttribute('data-busy'), null, { timeout: 60000 });
  await page.waitForTimeout(300);
  await shot('timeline-ranks.png');
  await page.setViewportSize({ width: 1280, height: 760 });

  // a flame graph of an area: the whole second step of the deep trace
  await page.evaluate(() => localStorage.setItem('tb.timeline.drawer', '420'));
  await open(`${one.id}&view=timeline&start=${s.start_us}&end=${s.end_us}&area=${s.start_us}:${s.end_us}&agroup=flame`);
  await page.waitForSelector('.tb-tl-flame canvas', { timeout: 60000 }).catch(() => {});
  await page.waitForTimeout(300);
  await shot('timeline-flame.png');
  await page.evaluate(() => localStorage.setItem('tb.timeline.drawer', '200'));

  // the docs' pages, then every page in both themes at three widths
  const job = { id: 77, state: 'running', phase: 'parse', name: 'rank0.pt.trace.json.gz', files: 8, bytes_done: 120 << 20, bytes_total: 400 << 20, events: 2_100_000 };
  await page.route('**/api/jobs/77', (r) => r.fulfill({ contentType: 'application/json', body: JSON.stringify(job) }));
  const pages = [
    ['runs', '/', 'table'],
    ...Object.entries({ overview: '[aria-label="Step time breakdown"]', operators: 'table[aria-label] tbody tr', kernels: 'table[aria-label] tbody tr',
      memory: '.tb-memchart', timeline: '.tb-tl-plot[data-loaded]', analyses: 'section#an-critpath', info: 'td', report: 'table[aria-label="Top operators"]' })
      .map(([v, sel]) => [v, `/?run=${one.id}&view=${v}`, sel]),
    ['ranks', `/?run=${many.id}&view=ranks`, 'table'],
    ['compare', `/?compare=${one.id},${many.id}`, 'table'],
    ['job', '/?job=77', '.tb-stats'],
  ];
  /** Opens a page in a theme, waits for its content and for the server to answer. */
  async function openPage(url, sel, theme) {
    await page.emulateMedia({ colorScheme: theme });
    await page.goto(srv.base + url);
    await page.waitForSelector(sel, { timeout: 60000 }).catch(() => {});
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.waitForTimeout(500);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const [file, name, theme] of [['page-overview-light.png', 'overview', 'light'], ['page-overview-dark.png', 'overview', 'dark'],
    ['page-timeline-dark.png', 'timeline', 'dark'], ['page-report.png', 'report', 'light']]) {
    const [, url, sel] = pages.find((p) => p[0] === name);
    await openPage(url, sel, theme);
    await shot(file);
  }
  for (const theme of ['light', 'dark']) {
    for (const width of [1280, 1600, 2560]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, url, sel] of pages) {
        await openPage(url, sel, theme);
        await page.screenshot({ path: join(pagesOut, `${name}-${theme}-${width}.png`), fullPage: true });
      }
    }
  }
  console.log(`screenshots in ${out} and ${pagesOut}`);
} finally {
  await browser.close();
  await srv.stop();
  if (own) rmSync(dataDir, { recursive: true, force: true });
}
