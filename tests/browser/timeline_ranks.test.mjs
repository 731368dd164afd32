// Browser tests of all ranks on one timeline (web/js/timeline/multirank.js,
// options.js createRankPicker, layout.js rank groups): the 8 DLRM ranks of
// ../shared/corpus/param and the 4 gloo DDP ranks of ../shared/traces
// ($TB_SHARED) stacked, a lane group per rank (the straggler marked),
// folding a rank and choosing ranks kept in the URL, and a slice of another
// rank than the first selected from the URL. Screenshots go to
// $TB_SCREENSHOTS (default build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SHOTS, startBrowser } from './lib.mjs';
import { SHARED, existsSync } from '../integration/lib.mjs';

const DLRM = join(SHARED, 'corpus/param/et_replay/tests/inputs/dlrm_kineto');
const DDP = join(SHARED, 'traces/ddp_gloo_4ranks');
const files = (dir, re) => (existsSync(dir) ? readdirSync(dir).filter((f) => re.test(f)).sort().map((f) => join(dir, f)) : []);

let session, srv, page, errors, dlrm, ddp;

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  await page.goto(srv.url);
  const d = files(DLRM, /\.json$/);
  if (d.length === 8) dlrm = await srv.upload(d, 'dlrm');
  const g = files(DDP, /^rank\d.*\.gz$/);
  if (g.length === 4) ddp = await srv.upload(g, 'ddp');
});

after(async () => { await session?.close(); });

async function timelineLoaded() {
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 20000 });
  await page.waitForTimeout(200);
}
const rankRows = () => page.$$eval('.tb-tl-group[data-rank]', (es) => es.map((e) => Number(e.dataset.rank)));
const urlHas = (re) => page.waitForFunction((s) => new RegExp(s).test(location.search), re.source, { timeout: 5000 });

test('timeline: the 8 DLRM ranks stacked, a rank folded and ranks chosen, all in the URL', async (t) => {
  if (!dlrm) return t.skip('no DLRM ranks in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${dlrm}&view=timeline&ranks=all`);
  await timelineLoaded();
  assert.deepEqual(await rankRows(), [0, 1, 2, 3, 4, 5, 6, 7]);
  // each rank brings its own lanes: more than one rank's worth of labels
  const lanes = await page.$$eval('.tb-tl-scroll-inner .tb-tl-label[data-track]', (es) => es.length);
  const one = (await (await srv.req(`/api/runs/${dlrm}/timeline/tracks?rank=0`)).json()).tracks.filter((x) => x.nslices > 0).length;
  assert.equal(lanes, 8 * one, `8 ranks × ${one} lanes`);
  assert.equal(await page.$eval('.tb-tl-ranks > summary', (e) => e.textContent), 'All 8 ranks');
  await page.screenshot({ path: join(SHOTS, 'timeline-ranks-all.png') });

  // fold rank 3: the URL keeps it, a reload restores it
  await page.click('.tb-tl-group[data-rank="3"]');
  await urlHas(/rfold=3/);
  await page.reload();
  await timelineLoaded();
  assert.equal(await page.$eval('.tb-tl-group[data-rank="3"]', (e) => e.getAttribute('aria-expanded')), 'false');
  assert.equal(await page.$eval('.tb-tl-group[data-rank="2"]', (e) => e.getAttribute('aria-expanded')), 'true');

  // choose the ranks: leave out 5 (keyboard: the menu is a native details)
  await page.focus('.tb-tl-ranks > summary');
  await page.keyboard.press('Enter');
  await page.uncheck('.tb-tl-ranks-list input[value="5"]');
  await urlHas(/ranks=0,1,2,3,4,6,7/);
  await timelineLoaded();
  assert.deepEqual(await rankRows(), [0, 1, 2, 3, 4, 6, 7]);
  // one rank again: the stacked groups go
  await page.uncheck('.tb-tl-ranks-menu > label input');
  await page.waitForFunction(() => !/ranks=/.test(location.search));
  await timelineLoaded();
  assert.deepEqual(await rankRows(), []);
  assert.deepEqual(errors, []);
});

test('timeline: stacked ranks say so in the header, label the steps strip and the critical path, and the header goes back to one rank', async (t) => {
  if (!dlrm) return t.skip('no DLRM ranks in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${dlrm}&view=timeline&ranks=0,2,5`);
  await timelineLoaded();
  const header = 'select[aria-label="Rank"]';
  const shown = () => page.$eval(header, (e) => e.selectedOptions[0].textContent);
  assert.equal(await shown(), '3 of 8 ranks, stacked');
  assert.equal(await page.$eval('[data-steps-label]', (e) => e.textContent), 'Steps of rank 0');
  const cpBtn = 'button[aria-pressed]:text-matches("^Critical path")';
  assert.equal(await page.$eval(cpBtn, (e) => `${e.disabled} ${e.textContent}`), 'true Critical path: one rank only');
  assert.match(await page.$eval(cpBtn, (e) => e.title), /per rank: pick one rank/);
  await page.goto(`${srv.base}/?run=${dlrm}&view=timeline&ranks=all`);
  await timelineLoaded();
  assert.equal(await shown(), 'All 8 ranks, stacked');
  await page.screenshot({ path: join(SHOTS, 'timeline-ranks-header.png') });
  // the header's selector picks one rank: the stacked groups go, the critical path comes back
  await page.selectOption(header, '3');
  await page.waitForFunction(() => /rank=3/.test(location.search) && !/ranks=/.test(location.search));
  await timelineLoaded();
  assert.deepEqual(await rankRows(), []);
  assert.match(await shown(), /^Rank 3/);
  assert.equal(await page.$eval('.tb-tl-ranks > summary', (e) => e.textContent), 'One rank');
  assert.equal(await page.$eval('[data-steps-label]', (e) => e.textContent), 'Steps');
  assert.equal(await page.$eval(cpBtn, (e) => `${e.disabled} ${e.textContent}`), 'false Critical path');
  assert.deepEqual(errors, []);
});

test('timeline: a stacked view marks the straggler and selects a slice of another rank', async (t) => {
  if (!ddp) return t.skip('no ddp_gloo_4ranks in $TB_SHARED');
  const cmp = await (await srv.req(`/api/runs/${ddp}/ranks`)).json();
  // a slice of rank 2 (its depth 0 on its first CPU lane with slices)
  const tr = await (await srv.req(`/api/runs/${ddp}/timeline/tracks?rank=2`)).json();
  const lane = tr.tracks.find((x) => x.kind === 'cpu' && x.nslices > 0);
  const w = await (await srv.req(`/api/runs/${ddp}/timeline?rank=2&start=${tr.t0_us}&end=${tr.t1_us}&width=2000&tracks=${lane.id}`)).json();
  const d0 = w.tracks[0].depths[0];
  const i = d0.n.findIndex((n) => n === 1);
  const name = w.strings[d0.name[i]];
  // on the aligned clock: shift by the rank's offset minus its start's distance from the base rank
  const base = cmp.ranks.find((r) => r.offset_us === 0);
  const r2 = cmp.ranks.find((r) => r.rank === 2);
  const delta = r2.offset_us - (r2.t0_us - base.t0_us);
  const ts = (d0.ts[i] + delta).toFixed(3);
  await page.goto(`${srv.base}/?run=${ddp}&view=timeline&ranks=all&sel=${lane.id}:${ts}:${d0.dur[i]}`);
  await timelineLoaded();
  assert.deepEqual(await rankRows(), [0, 1, 2, 3]);
  if (cmp.straggler) {
    const cls = await page.$eval(`.tb-tl-group[data-rank="${cmp.straggler.rank}"]`, (e) => e.className + ' ' + e.textContent);
    assert.match(cls, /tb-tl-straggler.*straggler/);
  }
  await page.waitForSelector('.tb-tl-slice-name', { timeout: 10000 });
  assert.equal(await page.$eval('.tb-tl-slice-name', (e) => e.textContent), name);
  await page.screenshot({ path: join(SHOTS, 'timeline-ranks-ddp.png') });
  assert.deepEqual(errors, []);
});

test('timeline: search on a stacked view counts and steps through the matches of every rank', async (t) => {
  if (!ddp) return t.skip('no ddp_gloo_4ranks in $TB_SHARED');
  let total = 0;
  for (const r of [0, 1, 2, 3]) total += (await (await srv.req(`/api/runs/${ddp}/timeline/search?rank=${r}&q=all_reduce&limit=1`)).json()).total;
  assert.ok(total > 4, `matches on the 4 ranks: ${total}`);
  await page.goto(`${srv.base}/?run=${ddp}&view=timeline&ranks=all&q=all_reduce`);
  await timelineLoaded();
  const want = `${total.toLocaleString('en-US')} matches`;
  await page.waitForFunction((w) => document.querySelector('.tb-tl-hits')?.textContent === w, want, { timeout: 10000 });
  // the matches come in time order across ranks: the first two steps select slices of different lanes or later times
  await page.focus('input[aria-label="Search slice names"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => new RegExp(`^1 / ${n}$`).test(document.querySelector('.tb-tl-hits')?.textContent || ''), total.toLocaleString('en-US'));
  const first = new URL(page.url()).searchParams.get('sel') || (await page.waitForFunction(() => new URL(location.href).searchParams.get('sel')).then((h) => h.jsonValue()));
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => new RegExp(`^2 / ${n}$`).test(document.querySelector('.tb-tl-hits')?.textContent || ''), total.toLocaleString('en-US'));
  await page.waitForFunction((f) => { const s = new URL(location.href).searchParams.get('sel'); return s && s !== f; }, first);
  const second = new URL(page.url()).searchParams.get('sel');
  assert.ok(Number(second.split(':')[1]) >= Number(first.split(':')[1]), `in time order: ${first} then ${second}`);
  assert.deepEqual(errors, []);
});
