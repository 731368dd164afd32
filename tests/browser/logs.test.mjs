// Browser test of job logs (web/js/timeline/loglane.js, logchart.js,
// views/live.js): log lines posted to a demo run at times inside its steps
// (the rank's base_ns and the steps of its overview give the wall clock)
// make a "Job log" group at the top of the timeline with a lane of markers
// (pixels drawn on its row) and a counter lane per numeric field; the
// search box finds a line and selects it; a click on a marker shows the
// line and its fields; the Overview shows the metric charts. The live view
// (./?live=P) lists a line posted after it opened and charts its fields.
// Screenshots: $TB_SCREENSHOTS/logs_timeline.png, logs_overview.png,
// live.png (default build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { SHOTS, startBrowser, runIdOf } from './lib.mjs';

let session, srv, page, errors, id, lines;

before(async () => {
  session = await startBrowser({ args: ['--demo', resolve('tests/data/demo')] });
  ({ srv, page, errors } = session);
  await page.goto(srv.url); // the token link logs in
  await page.waitForSelector('text=matmul_amp');
  id = await runIdOf(srv, 'matmul_amp');
  const run = await (await srv.req(`/api/runs/${id}`)).json();
  const base = BigInt(run.info.ranks[0].base_ns);
  const ov = await (await srv.req(`/api/runs/${id}/overview`)).json();
  // a line in the middle of each step, with the step's number and a loss
  lines = ov.steps.map((s, i) => ({ us: s.start_us + s.dur_us / 2, step: i, loss: 3 - i * 0.2, name: s.name }));
  const body = lines.map((l) => {
    const ns = base + BigInt(Math.round(l.us * 1000));
    // "ts" as text: a JSON number cannot hold unix seconds to the ns
    return JSON.stringify({ ts: `${ns / 1000000000n}.${String(ns % 1000000000n).padStart(9, '0')}`, step: l.step, loss: l.loss, msg: `train step ${l.step} in ${l.name}` });
  }).join('\n') + '\n';
  const r = await srv.req(`/api/runs/${id}/logs`, { method: 'POST', body });
  assert.equal(r.status, 201, await r.text());
});

after(async () => { await session?.close(); });

async function shot(name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, name), fullPage: true });
}

async function timelineLoaded() {
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 15000 });
  await page.waitForSelector('.tb-tl-label[data-track="-1"]', { timeout: 15000 });
  await page.waitForTimeout(300);
}

/** Pixels of a lanes-canvas row (page y) that are not the background. */
function inkOnRow(y) {
  return page.$eval('.tb-tl-lanes > canvas', (c, yy) => {
    const r = c.getBoundingClientRect();
    const d = c.getContext('2d').getImageData(0, Math.round((yy - r.top) * (c.height / r.height)), c.width, 1).data;
    let n = 0;
    for (let x = 0; x < c.width; x++) if (d[x * 4 + 3] > 100 && (d[x * 4] < 200 || d[x * 4 + 1] < 200 || d[x * 4 + 2] < 200)) n++;
    return n;
  }, y);
}

test('the log lane: markers drawn, counters, search finds a line, a click shows its fields', async () => {
  await page.goto(`${srv.base}/?run=${id}&view=timeline`);
  await timelineLoaded();
  const group = page.locator('.tb-tl-group', { hasText: 'Job log' });
  assert.ok(await group.isVisible(), 'a Job log group');
  assert.ok(await page.locator('.tb-tl-counter', { hasText: 'log: loss' }).isVisible(), 'a counter lane for loss');
  const lane = await page.locator('.tb-tl-label[data-track="-1"]').boundingBox();
  const ink = await inkOnRow(lane.y + lane.height / 2);
  assert.ok(ink >= Math.min(lines.length, 3), `markers drawn on the log lane (${ink} pixels)`);
  await shot('logs_timeline.png');

  // the search box finds a log line and selects it
  const target = lines[Math.min(2, lines.length - 1)];
  await page.fill('input[type="search"]', `train step ${target.step} in`);
  await page.keyboard.press('Enter');
  const details = page.locator('[data-log-line]');
  await details.waitFor({ timeout: 10000 });
  assert.match(await details.textContent(), new RegExp(`train step ${target.step} in ${target.name}`));
  assert.match(await page.locator('.tb-tl-hits').textContent(), /1/);

  // a click on a marker in the middle of a narrow window shows its fields
  const other = lines[0];
  await page.goto(`${srv.base}/?run=${id}&view=timeline&start=${(other.us - 500).toFixed(3)}&end=${(other.us + 500).toFixed(3)}`);
  await timelineLoaded();
  const plot = await page.locator('.tb-tl-plot').boundingBox();
  const row = await page.locator('.tb-tl-label[data-track="-1"]').boundingBox();
  await page.mouse.click(plot.x + plot.width / 2, row.y + row.height / 2);
  await page.locator('[data-log-fields]').waitFor({ timeout: 10000 });
  const fields = await page.locator('[data-log-fields]').textContent();
  assert.match(fields, /loss/);
  assert.match(fields, /step/);
  assert.match(await page.locator('[data-log-line]').textContent(), new RegExp(`train step ${other.step} in`));
  await shot('logs_timeline_selected.png');
  assert.deepEqual(errors, []);
});

test('the Overview shows the job log metrics', async () => {
  await page.goto(`${srv.base}/?run=${id}`);
  const sec = page.locator('[data-job-log]');
  await sec.waitFor({ timeout: 15000 });
  assert.equal(await sec.getAttribute('data-job-log'), String(lines.length));
  const chart = page.locator('[data-metric="loss"]');
  assert.equal(await chart.getAttribute('data-points'), String(lines.length));
  await sec.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'logs_overview.png'), fullPage: true });
  // a run without lines has no such section
  const other = await runIdOf(srv, 'matmul_fp32_strict');
  await page.goto(`${srv.base}/?run=${other}`);
  await page.waitForSelector('text=Execution summary');
  await page.waitForTimeout(500);
  assert.equal(await page.locator('[data-job-log]').count(), 0);
  assert.deepEqual(errors, []);
});

test('the live view shows lines as they arrive and charts their fields', async () => {
  await srv.req('/api/projects/demo-live/live?job=J1', { method: 'POST', body: '{"ts": 1795344489.5, "step": 1, "loss": 2.5, "msg": "before"}\n' });
  await page.goto(`${srv.base}/?live=demo-live`);
  await page.waitForSelector('[data-live-lines] li', { timeout: 10000 });
  await page.waitForSelector('[role="status"][data-state="open"]', { timeout: 10000 });
  for (let i = 2; i <= 4; i++) {
    const r = await srv.req('/api/projects/demo-live/live', { method: 'POST', body: JSON.stringify({ ts: 1795344489.5 + i, step: i, loss: 2.5 - i * 0.3, job_id: 'J1', msg: `step ${i} done` }) + '\n' });
    assert.equal(r.status, 201);
  }
  await page.waitForFunction(() => document.querySelectorAll('[data-live-lines] li').length === 4, null, { timeout: 10000 });
  assert.match(await page.locator('[data-live-lines] li').last().textContent(), /step 4 done/);
  await page.waitForFunction(() => document.querySelector('[data-metric="loss"]')?.getAttribute('data-points') === '4', null, { timeout: 10000 });
  assert.ok(await page.locator('a', { hasText: 'J1' }).isVisible(), 'the job is listed as a filter');
  await shot('live.png');
  assert.deepEqual(errors, []);
});
