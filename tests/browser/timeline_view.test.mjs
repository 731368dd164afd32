// Browser tests of the Timeline tab owning the screen (web/js/timeline/
// drawer.js, options.js, labels.js stickLabels): the details drawer is on
// screen and its size survives a reload, "GPU first" and "Levels" round-trip
// through the URL and change the lanes, and the label of a lane taller than
// the screen stays in view while the lane is scrolled through. On the real
// with_stack trace of ../shared ($TB_SHARED). Screenshots go to
// $TB_SCREENSHOTS (default build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, startBrowser } from './lib.mjs';
import { SHARED, existsSync } from '../integration/lib.mjs';

const STACK = join(SHARED, 'traces/transformer_with_stack/transformer_with_stack.1795344489086084483.pt.trace.json.gz');

let session, srv, page, errors, runId;

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  await page.goto(srv.url);
  if (existsSync(STACK)) runId = await srv.upload([STACK], 'with_stack');
});

after(async () => { await session?.close(); });

async function timelineLoaded() {
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 20000 });
  await page.waitForTimeout(200);
}

/** Waits for the view's debounced URL write to hold `re`. */
const urlHas = (re) => page.waitForFunction((s) => new RegExp(s).test(location.search), re.source, { timeout: 5000 });

test('timeline: the details drawer is on screen, resizes by keyboard and keeps its size', async (t) => {
  if (!runId) return t.skip('no with_stack trace in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
  await timelineLoaded();
  const box = await page.$eval('.tb-tl-drawer', (e) => e.getBoundingClientRect().toJSON());
  const vh = await page.evaluate(() => innerHeight);
  assert.ok(box.top > 200 && box.bottom <= vh + 1, `drawer within the window: ${JSON.stringify(box)} of ${vh}`);
  assert.ok(await page.isVisible('.tb-tl-drawer .tb-tl-details'), 'the details panel is in the drawer');
  // the plot fills what the drawer leaves
  const plot = await page.$eval('.tb-tl', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(box.top - plot.bottom < 20, 'the lanes end where the drawer begins');
  await page.focus('.tb-tl-handle');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowUp');
  const taller = await page.$eval('.tb-tl-drawer', (e) => e.getBoundingClientRect().height);
  assert.ok(taller >= box.height + 59, `ArrowUp grows the drawer: ${box.height} → ${taller}`);
  await page.reload();
  await timelineLoaded();
  const after = await page.$eval('.tb-tl-drawer', (e) => e.getBoundingClientRect().height);
  assert.ok(Math.abs(after - taller) < 2, `the size is remembered: ${taller} vs ${after}`);
  await page.evaluate(() => localStorage.removeItem('tb.timeline.drawer'));
  assert.deepEqual(errors, []);
});

test('timeline: GPU first and folded levels round-trip through the URL', async (t) => {
  if (!runId) return t.skip('no with_stack trace in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
  await timelineLoaded();
  const firstKind = () => page.$eval('.tb-tl-scroll-inner .tb-tl-label', (e) => e.dataset.kind);
  assert.equal(await firstKind(), 'cpu');
  const laneH = () => page.$eval('.tb-tl-scroll-inner .tb-tl-label[data-kind="cpu"]', (e) => e.getBoundingClientRect().height);
  const deep = await laneH();
  await page.check('text=GPU first');
  await urlHas(/gpufirst=1/);
  assert.equal(await firstKind(), 'gpu');
  await page.selectOption('.tb-tl-toolbar select', '4');
  await urlHas(/depth=4/);
  const folded = await laneH();
  assert.ok(folded < deep && folded <= 4 * 18 + 8, `4 levels: ${deep} → ${folded}`);
  await page.reload();
  await timelineLoaded();
  assert.equal(await firstKind(), 'gpu', 'GPU first after a reload');
  assert.ok(Math.abs((await laneH()) - folded) < 1, 'still 4 levels after a reload');
  assert.equal(await page.$eval('.tb-tl-toolbar select', (e) => e.value), '4');
  // back to the default: the URL drops both
  await page.uncheck('text=GPU first');
  await page.selectOption('.tb-tl-toolbar select', '0');
  await page.waitForFunction(() => !/gpufirst|depth=/.test(location.search));
  await page.screenshot({ path: join(SHOTS, 'timeline-options.png') });
  assert.deepEqual(errors, []);
});

test('timeline: a deep lane keeps its label in view while scrolled through', async (t) => {
  if (!runId) return t.skip('no with_stack trace in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
  await timelineLoaded();
  const lane = '.tb-tl-scroll-inner .tb-tl-label[data-kind="cpu"]';
  const hgt = await page.$eval(lane, (e) => e.getBoundingClientRect().height);
  const lanesBox = await page.$eval('.tb-tl-scroll', (e) => e.getBoundingClientRect().toJSON());
  if (hgt < lanesBox.height * 1.5) return t.skip(`the main lane is not deep here (${hgt}px)`);
  await page.mouse.move(lanesBox.left + 600, lanesBox.top + 100);
  await page.mouse.wheel(0, Math.round(hgt / 2));
  await page.waitForTimeout(200);
  const name = await page.$eval(`${lane} .tb-tl-name`, (e) => e.getBoundingClientRect().toJSON());
  const laneNow = await page.$eval(lane, (e) => e.getBoundingClientRect().toJSON());
  assert.ok(laneNow.top < lanesBox.top - 100, `the lane's top is scrolled off: ${laneNow.top} vs ${lanesBox.top}`);
  assert.ok(name.top >= lanesBox.top - 1 && name.bottom <= lanesBox.bottom, `its name shows: ${JSON.stringify(name)} in ${JSON.stringify(lanesBox)}`);
  await page.screenshot({ path: join(SHOTS, 'timeline-sticky.png') });
  assert.deepEqual(errors, []);
});

test('timeline: search steps past the first 1,000 matches', async () => {
  // 1,205 matches (and 1,205 others), five of them at one instant so a page may end inside it
  const ev = [{ ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 0, dur: 200000, args: {} }];
  for (let i = 0; i < 1200; i++) {
    ev.push({ ph: 'X', cat: 'cpu_op', name: `needle_${i}`, pid: 1, tid: 2 + (i % 3), ts: 100 + i * 100, dur: 20, args: {} });
    ev.push({ ph: 'X', cat: 'cpu_op', name: `hay_${i}`, pid: 1, tid: 2 + (i % 3), ts: 150 + i * 100, dur: 20, args: {} });
  }
  for (let k = 0; k < 5; k++) ev.push({ ph: 'X', cat: 'cpu_op', name: `needle_same_${k}`, pid: 1, tid: 10 + k, ts: 99950, dur: 10, args: {} });
  const id = await srv.uploadBody(JSON.stringify({ schemaVersion: 1, traceEvents: ev }), 'needles.pt.trace.json', 'needles');
  const sr = await (await srv.req(`/api/runs/${id}/timeline/search?q=needle&limit=1000`)).json();
  assert.equal(sr.total, 1205);
  assert.equal(sr.hits.length, 1000, 'the API answers one page');
  const h998 = sr.hits[997];
  // start at match 998 (from the URL), then step: 999, 1000, 1001, ... need the second page
  await page.goto(`${srv.base}/?run=${id}&view=timeline&q=needle&sel=${h998.track}:${h998.ts_us}:${h998.dur_us}`);
  await timelineLoaded();
  await page.waitForFunction(() => /^998 \/ 1,205$/.test(document.querySelector('.tb-tl-hits')?.textContent || ''));
  await page.focus('input[aria-label="Search slice names"]');
  for (let i = 0; i < 5; i++) await page.keyboard.press('Enter');
  await page.waitForFunction(() => /^1,003 \/ 1,205$/.test(document.querySelector('.tb-tl-hits')?.textContent || ''), null, { timeout: 10000 });
  const all = [...sr.hits];
  const more = await (await srv.req(`/api/runs/${id}/timeline/search?q=needle&limit=1000&start=${sr.hits[999].ts_us}`)).json();
  for (const x of more.hits) if (!all.some((y) => y.id === x.id)) all.push(x);
  all.sort((a, b) => a.ts_us - b.ts_us || a.track - b.track || a.id - b.id);
  await page.waitForFunction((n) => document.querySelector('.tb-tl-slice-name')?.textContent === n, all[1002].name, { timeout: 10000 });
  // every match is reachable: the last one, then around to the first
  for (let i = 0; i < 202; i++) await page.keyboard.press('Enter');
  await page.waitForFunction(() => /^1,205 \/ 1,205$/.test(document.querySelector('.tb-tl-hits')?.textContent || ''), null, { timeout: 30000 });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /^1 \/ 1,205$/.test(document.querySelector('.tb-tl-hits')?.textContent || ''), null, { timeout: 10000 });
  assert.deepEqual(errors, []);
});

test('timeline: an area as a flame graph, by lane and by category, and one operator\'s flame graph', async (t) => {
  if (!runId) return t.skip('no with_stack trace in $TB_SHARED');
  const tr = await (await srv.req(`/api/runs/${runId}/timeline/tracks`)).json();
  const st = tr.steps[1];
  await page.goto(`${srv.base}/?run=${runId}&view=timeline&area=${st.start_us}:${st.end_us}&agroup=flame`);
  await timelineLoaded();
  await page.waitForSelector('.tb-tl-area .tb-tl-flame', { timeout: 15000 });
  const n = Number(await page.getAttribute('.tb-tl-flame', 'data-nodes'));
  assert.ok(n > 10, `call paths: ${n}`);
  // keyboard: into the largest root, one level down, zoom
  await page.focus('.tb-tl-flame-box');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const cursor = await page.textContent('.tb-tl-flame-status');
  assert.match(cursor, / — .*%\), self /);
  await page.keyboard.press('Enter');
  assert.equal(await page.isDisabled('text=Reset zoom'), false);
  await page.keyboard.press('Escape');
  assert.equal(await page.isDisabled('text=Reset zoom'), true);
  await page.screenshot({ path: join(SHOTS, 'timeline-flame.png') });

  // by lane, then by category: the URL follows, a reload restores the area and the grouping
  await page.selectOption('select[aria-label="Group the area by"]', 'lane');
  await urlHas(/agroup=lane/);
  await page.waitForSelector('table[aria-label="Area by lane"]');
  assert.match(await page.textContent('table[aria-label="Area by lane"] tbody'), /thread 907/);
  await page.reload();
  await timelineLoaded();
  await page.waitForSelector('table[aria-label="Area by lane"]');
  await page.selectOption('select[aria-label="Group the area by"]', 'cat');
  await page.waitForSelector('table[aria-label="Area by category"]');
  assert.match(await page.textContent('table[aria-label="Area by category"] tbody'), /python_function/);
  await page.selectOption('select[aria-label="Group the area by"]', 'name');
  await page.waitForSelector('table[aria-label="Slices in the area"]');
  await page.waitForFunction(() => !/agroup/.test(location.search));

  // one operator: select a ProfilerStep, then "Flame graph" in its details
  const hit = (await (await srv.req(`/api/runs/${runId}/timeline/search?q=ProfilerStep%23&limit=1`)).json()).hits[0];
  assert.ok(hit, 'a ProfilerStep slice');
  await page.goto(`${srv.base}/?run=${runId}&view=timeline&sel=${hit.track}:${hit.ts_us}:${hit.dur_us}`);
  await timelineLoaded();
  await page.click('.tb-tl-details >> text=Flame graph');
  await page.waitForSelector('.tb-tl-area .tb-tl-flame');
  assert.ok((await page.textContent('.tb-tl-area')).includes(`${hit.name}: what ran inside it`));
  await page.focus('.tb-tl-flame-box');
  await page.keyboard.press('ArrowDown');
  assert.ok((await page.textContent('.tb-tl-flame-status')).startsWith(`${hit.name} — `), 'the root is the operator');
  assert.deepEqual(errors, []);
});

test('timeline: hovering a counter lane shows its value, a click puts it in the details', async (t) => {
  if (!runId) return t.skip('no with_stack trace in $TB_SHARED');
  await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
  await timelineLoaded();
  const lanesBox = await page.$eval('.tb-tl-scroll', (e) => e.getBoundingClientRect().toJSON());
  await page.mouse.move(lanesBox.left + 600, lanesBox.top + 50);
  await page.mouse.wheel(0, 5000); // the counters are at the bottom
  await page.waitForTimeout(200);
  const label = page.locator('.tb-tl-label.tb-tl-counter').first();
  const name = await label.locator('.tb-tl-name').textContent();
  const box = await label.boundingBox();
  const plot = await page.$eval('.tb-tl-plot', (e) => e.getBoundingClientRect().toJSON());
  await page.mouse.move(plot.left + plot.width / 2, box.y + box.height / 2);
  await page.waitForFunction((n) => document.querySelector('.tb-tl-tip:not([hidden]) .tb-tl-tip-name')?.textContent === n, name);
  assert.match(await page.textContent('.tb-tl-tip'), /at /);
  await page.mouse.click(plot.left + plot.width / 2, box.y + box.height / 2);
  await page.waitForFunction(() => /Counter/.test(document.querySelector('.tb-tl-details')?.textContent || ''));
  assert.equal(await page.textContent('.tb-tl-details .tb-tl-slice-name'), name);
  assert.match(await page.textContent('.tb-tl-details'), /Value/);
  assert.deepEqual(errors, []);
});
