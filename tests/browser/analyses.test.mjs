// Browser tests of the Analyses tab (views/analyses.js) and of the counter
// lanes the analyses add to the timeline: Debian's chromium driven by
// playwright-core against the real server, as tests/browser/pages.test.mjs.
// Traces: ../shared/traces/dataloader_workers0 (skipped when absent) and a
// crafted one whose operator, kernel and annotation names are markup.
// Screenshots go to $TB_SCREENSHOTS (default build/screenshots):
// analyses.png, analyses-hostile.png, timeline_counters.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from '../integration/lib.mjs';
import { SHOTS, startBrowser, runIdOf } from './lib.mjs';

const SECTIONS = ['an-idle', 'an-launch', 'an-queue', 'an-copy', 'an-overlap', 'an-annotations', 'an-fusion', 'an-critpath'];
/** The document key of each section. */
const KEYS = { 'an-idle': 'idle', 'an-launch': 'launch', 'an-queue': 'queue', 'an-copy': 'copy', 'an-overlap': 'overlap',
  'an-annotations': 'annotations', 'an-fusion': 'fusion', 'an-critpath': 'critical_path' };
const DL0 = join(SHARED, 'traces', 'dataloader_workers0');
const EVIL = '<img src=x onerror=alert(1)>';

let session, srv, page, errors;

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  // the token link logs the browser in (a cookie) and leaves the token out of the address
  await page.goto(srv.url);
  await page.waitForURL((u) => !u.searchParams.has('token'));
});

after(async () => { await session?.close(); });

/** One rank's document of /analyses. */
async function analysesDoc(id, rank = 0) {
  return (await srv.json(`/api/runs/${id}/analyses?rank=${rank}`)).ranks[String(rank)];
}

/** Opens the tab and waits for its last section. */
async function openTab(id, extra = '') {
  await page.goto(`${srv.base}/?run=${id}&view=analyses${extra}`);
  await page.waitForSelector('section#an-critpath', { timeout: 20000 });
}

/** Each section is there; one whose analysis has something to say shows it with numbers. */
async function checkSections(doc) {
  for (const s of SECTIONS) {
    const sec = page.locator(`section#${s}`);
    assert.equal(await sec.count(), 1, `${s} is on the page`);
    const text = await sec.textContent();
    const has = Object.keys(doc[KEYS[s]] || {}).length > 0;
    if (await sec.getAttribute('data-available') === '1') {
      assert.ok(has, `${s}: shown, so the document has it`);
      assert.match(text, /\d/, `${s} shows numbers`);
    } else {
      assert.match(text, /Not available for this trace/, `${s} says it is not available`);
    }
  }
}

async function nothingRan() {
  assert.equal(await page.$('main script, main img'), null, 'no element was injected');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran');
  assert.deepEqual(errors.filter((e) => e.startsWith('dialog')), [], 'no dialog opened');
}

/**
 * A Kineto trace of three steps on one stream: operators (every other one
 * named like markup) each launching a short kernel, one launch the GPU
 * starts late, a pageable HtoD copy, a synchronisation, a user annotation
 * named like markup.
 */
function craftedTrace() {
  const ev = [];
  const kernel = `void evil<${EVIL}>(int)`;
  let corr = 1;
  for (let s = 0; s < 3; s++) {
    const base = 1000 + s * 10000;
    ev.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid: 1, tid: 1, ts: base, dur: 9000, args: {} });
    ev.push({ ph: 'X', cat: 'user_annotation', name: `${EVIL} block`, pid: 1, tid: 1, ts: base + 50, dur: 8000, args: {} });
    ev.push({ ph: 'X', cat: 'gpu_user_annotation', name: `${EVIL} block`, pid: 0, tid: 7, ts: base + 100, dur: 7800, args: { device: 0, stream: 7 } });
    for (let i = 0; i < 20; i++) {
      const t = base + 100 + i * 300;
      const late = i === 10 ? 400 : 0;
      ev.push({ ph: 'X', cat: 'cpu_op', name: i % 2 ? EVIL : 'aten::add', pid: 1, tid: 1, ts: t, dur: 200, args: { 'External id': corr } });
      ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: t + 20, dur: 10, args: { correlation: corr } });
      ev.push({ ph: 'X', cat: 'kernel', name: i % 2 ? kernel : 'vectorized_elementwise_kernel', pid: 0, tid: 7, ts: t + 35 + late, dur: 5,
        args: { device: 0, stream: 7, correlation: corr } });
      corr++;
    }
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::copy_', pid: 1, tid: 1, ts: base + 6990, dur: 150, args: {} });
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaMemcpyAsync', pid: 1, tid: 1, ts: base + 7000, dur: 10, args: { correlation: corr } });
    ev.push({ ph: 'X', cat: 'gpu_memcpy', name: 'Memcpy HtoD (Pageable -> Device)', pid: 0, tid: 7, ts: base + 7020, dur: 100,
      args: { device: 0, stream: 7, correlation: corr, bytes: 4194304, 'memory bandwidth (GB/s)': 41.9 } });
    corr++;
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaDeviceSynchronize', pid: 1, tid: 1, ts: base + 7200, dur: 300, args: {} });
  }
  return JSON.stringify({
    schemaVersion: 1,
    deviceProperties: [{ id: 0, name: 'NVIDIA H100 80GB HBM3', totalGlobalMem: 85017493504, computeMajor: 9, computeMinor: 0, numSms: 132 }],
    traceEvents: ev,
  });
}

test('a crafted trace with markup in its names: every section renders, the names stay text', async () => {
  const id = await srv.uploadBody(craftedTrace(), 'evil.pt.trace.json', 'analyses-hostile');
  const doc = await analysesDoc(id);
  await openTab(id);
  await checkSections(doc);
  // the launch outliers list the late launch with its operator, literally
  if ((doc.launch?.outliers || []).some((o) => o.op === EVIL)) {
    assert.ok(await page.locator('table[aria-label="Launch outliers"] td', { hasText: EVIL }).count() > 0, 'the operator name is shown as text');
  }
  await nothingRan();
  await page.screenshot({ path: join(SHOTS, 'analyses-hostile.png'), fullPage: true });
});

test('dataloader_workers0: numbers in every section its analyses fill, anchors and rank in the URL', { skip: !existsSync(DL0) && 'no ../shared/traces' }, async () => {
  const file = readdirSync(DL0).find((f) => f.endsWith('.json.gz'));
  const id = await srv.uploadBody(readFileSync(join(DL0, file)), file, 'dataloader_workers0');
  const doc = await analysesDoc(id);
  await page.goto(`${srv.base}/?run=${id}`);
  await page.click('nav[aria-label="Run views"] a:has-text("Analyses")');
  await page.waitForURL(/view=analyses/);
  await page.waitForSelector('section#an-critpath', { timeout: 20000 });
  await checkSections(doc);
  // idle time: the stream's bar, and DataLoader as the main host-wait cause of this trace
  const idle = page.locator('section#an-idle');
  assert.equal(await idle.getAttribute('data-available'), '1');
  assert.ok(await idle.locator('svg[aria-label="Idle time by cause per stream"] rect').count() > 0);
  assert.ok(await idle.locator('svg[aria-label="Histogram of idle gap lengths by kind"] rect').count() > 0);
  // launch statistics: quantiles and an outlier with its operator
  assert.equal(await page.locator('section#an-launch').getAttribute('data-available'), '1');
  assert.match(await page.locator('table[aria-label="Launch statistics"]').textContent(), /µs/);
  assert.ok(await page.locator('table[aria-label="Launch outliers"] td', { hasText: 'aten::' }).count() > 0);
  await page.screenshot({ path: join(SHOTS, 'analyses.png'), fullPage: true });

  // a section link writes its anchor; a reload keeps rank, tab and anchor and shows the section
  await page.click('nav[aria-label="Analyses sections"] a[href="#an-queue"]');
  await page.waitForURL(/#an-queue$/);
  await page.goto(`${srv.base}/?run=${id}&view=analyses&rank=0#an-queue`);
  await page.waitForSelector('section#an-critpath');
  assert.match(page.url(), /view=analyses&rank=0#an-queue$/);
  assert.equal(await page.getAttribute('nav[aria-label="Analyses sections"] a[href="#an-queue"]', 'aria-current'), 'location');
  await page.waitForFunction(() => Math.abs(document.querySelector('#an-queue').getBoundingClientRect().top) < 120);

  // "show on timeline" opens the Timeline tab on the rank
  if (await page.locator('section#an-queue').getAttribute('data-available') === '1') {
    await page.click('section#an-queue a:has-text("show on timeline")');
    await page.waitForURL(/view=timeline&rank=0&start=/);
  }
  await nothingRan();
});

test('the queue-depth and copy-bandwidth series are counter lanes on the timeline', { skip: !existsSync(DL0) && 'no ../shared/traces' }, async () => {
  const id = await runIdOf(srv, 'dataloader_workers0');
  const tracks = await (await srv.req(`/api/runs/${id}/timeline/tracks?rank=0`)).json();
  const queue = tracks.counters.filter((c) => /^Queue depth/.test(c.name));
  const copy = tracks.counters.filter((c) => /^Copy bandwidth/.test(c.name));
  assert.ok(queue.length >= 1 && copy.length >= 1, JSON.stringify(tracks.counters));
  await page.goto(`${srv.base}/?run=${id}&view=timeline&rank=0`);
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 20000 });
  // fold the process and GPU groups so the Counters group is in view
  for (;;) {
    const open = page.locator('button.tb-tl-group[aria-expanded="true"]', { hasNotText: 'Counters' });
    if (!(await open.count())) break;
    await open.first().click();
  }
  for (const c of [...queue, ...copy]) {
    const label = page.locator(`.tb-tl-counter[data-counter="${c.id}"]`);
    await label.waitFor();
    assert.equal(await label.locator('.tb-tl-name').textContent(), c.name);
  }
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(SHOTS, 'timeline_counters.png') });
});

test('no script errors on the way', () => {
  assert.deepEqual(errors.filter((e) => !/status of 404/.test(e)), []);
});
