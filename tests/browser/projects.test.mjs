// Browser tests of issue 20: the project page's trend charts (a point links
// to its run, two ticked runs open the compare page, the regression mark
// shows) and the runs list's filters held in the URL. Screenshots:
// project.png, runs-filtered.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SHARED, fileBlob } from '../integration/lib.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

let session, srv, page, errors;
const ids = {};
const PROJECT = 'llm <b>train';
const shared = (s) => readdirSync(join(SHARED, 'traces', s)).filter((f) => f.endsWith('.gz')).map((f) => join(SHARED, 'traces', s, f));

async function upload(scenario, project, meta) {
  const fd = new FormData();
  if (project) fd.append('project', project);
  for (const [k, v] of Object.entries(meta)) fd.append(`meta.${k}`, v);
  for (const f of shared(scenario)) fd.append('file', fileBlob(f), basename(f));
  const r = await srv.req('/api/runs', { method: 'POST', body: fd });
  const j = await r.json();
  assert.equal(r.status, 201, JSON.stringify(j));
  return j.id;
}

before(async () => {
  session = await startBrowser({ args: ['--allow-duplicates', 'false'] }); // the default, which the suite's lib turns off
  ({ srv, page, errors } = session);
  ids.fast = await upload('dataloader_workers8', PROJECT, { loader: 'x', job_id: '1' });
  ids.slow = await upload('dataloader_workers0', PROJECT, { loader: 'x', job_id: '2' });
  ids.amp = await upload('matmul_amp', PROJECT, { loader: 'y', job_id: '3' });
  ids.loose = await upload('torch_compile', '', {});
});

after(async () => { await session?.close(); });

test('the project page charts every run; a point opens its run; the regression is marked', async () => {
  await page.goto(srv.url);
  await page.waitForSelector('tr[data-run]');
  await page.goto(`${srv.base}/?project=${encodeURIComponent(PROJECT)}`);
  await page.waitForSelector('[data-chart=step] svg');
  assert.ok(await page.isVisible(`h2 >> text=${PROJECT}`), 'the hostile name is shown as text');
  for (const chart of ['step', 'gpu_utilization', 'peak_memory', 'tensor_core_share'])
    assert.equal(await page.locator(`[data-chart=${chart}] a[data-run]`).count(), 3, chart);
  const marks = await page.locator('[data-regression]').evaluateAll((els) => els.map((e) => e.getAttribute('data-regression')));
  assert.deepEqual(marks, [ids.slow], 'the slower run of the same configuration, and only it');
  await page.screenshot({ path: join(SHOTS, 'project.png'), fullPage: true });
  const point = page.locator(`[data-chart=gpu_utilization] a[data-run="${ids.amp}"]`);
  assert.match(await point.getAttribute('href'), new RegExp(`\\?run=${ids.amp}$`));
  await point.click();
  await page.waitForURL(new RegExp(`\\?run=${ids.amp}`));
  await page.goBack();
  await page.waitForSelector('[data-chart=step] svg');
});

test('by a metadata key; two ticked runs open the compare page; every state is in the URL', async () => {
  await page.selectOption('[data-control=by]', 'meta.loader');
  await page.waitForURL(/by=meta\.loader/);
  await page.check(`tr[data-run="${ids.fast}"] input[type=checkbox]`);
  await page.waitForURL(new RegExp(`pick=${ids.fast}`));
  await page.check(`tr[data-run="${ids.amp}"] input[type=checkbox]`);
  await page.waitForURL(new RegExp(`pick=${ids.fast},${ids.amp}`));
  await page.reload();
  await page.waitForSelector('[data-chart=step] svg');
  assert.ok(await page.isChecked(`tr[data-run="${ids.amp}"] input[type=checkbox]`), 'the picks survive a reload');
  await page.click('[data-action=compare]');
  await page.waitForURL(new RegExp(`\\?compare=${ids.fast},${ids.amp}`));
});

test('runs list: filters in the URL, project links, key figures; 3 ticked runs open the N-way compare', async () => {
  await page.goto(`${srv.base}/?in=${encodeURIComponent(PROJECT)}`);
  await page.waitForSelector('tr[data-run]');
  assert.equal(await page.locator('tr[data-run]').count(), 3);
  await page.fill('[data-filter=meta]', 'loader=x');
  await page.press('[data-filter=meta]', 'Enter');
  await page.waitForURL(/meta=loader%3Dx/);
  await page.waitForFunction(() => document.querySelectorAll('tr[data-run]').length === 2);
  const step = await page.textContent(`tr[data-run="${ids.slow}"] [data-figure=avg_step]`);
  assert.match(step, /\d+(\.\d+)? ms/);
  assert.match(await page.textContent(`tr[data-run="${ids.slow}"] [data-figure=top_finding]`), /save .+/);
  await page.screenshot({ path: join(SHOTS, 'runs-filtered.png') });
  await page.reload();
  await page.waitForSelector('tr[data-run]');
  assert.equal(await page.inputValue('[data-filter=meta]'), 'loader=x', 'the filters come back from the URL');
  assert.equal(await page.locator('tr[data-run]').count(), 2);
  await page.selectOption('[data-filter=in]', '-');
  await page.waitForFunction(() => document.querySelectorAll('tr[data-run]').length === 0 || document.body.textContent.includes('No runs match'));
  await page.click('[data-action=clear-filters]');
  await page.waitForFunction(() => document.querySelectorAll('tr[data-run]').length === 4);
  assert.ok(await page.isVisible(`tr[data-run="${ids.loose}"] >> text=no project`));
  for (const id of [ids.amp, ids.slow, ids.fast]) await page.check(`tr[data-run="${id}"] input[type=checkbox]`);
  assert.match(await page.textContent('[data-action=compare]'), /Compare 3 runs/);
  await page.click('[data-action=compare]');
  await page.waitForURL(new RegExp(`\\?compare=${ids.amp},${ids.slow}`));
  await page.goto(srv.base + '/');
  await page.waitForSelector('tr[data-run]');
  await page.click(`tr[data-run="${ids.amp}"] a >> text=${PROJECT}`);
  await page.waitForSelector('[data-chart=step] svg');
  assert.deepEqual(errors, []);
});

test('an upload from the page takes a project and metadata; the same files again link to the stored run', async () => {
  const [file] = shared('matmul_fp32_strict');
  await page.goto(srv.base + '/');
  await page.waitForSelector('tr[data-run]');
  await page.fill('[data-upload=project]', PROJECT);
  await page.fill('[data-upload=meta]', 'loader=z, job_id=9');
  await page.setInputFiles('input[type=file]', file);
  await page.waitForURL(/\?run=[0-9a-f]{16}/, { timeout: 30000 });
  const id = /run=([0-9a-f]{16})/.exec(page.url())[1];
  const run = await srv.json(`/api/runs/${id}`);
  assert.equal(run.project, PROJECT);
  assert.deepEqual(run.meta, { loader: 'z', job_id: '9' });
  await page.goto(srv.base + '/');
  await page.waitForSelector('tr[data-run]');
  await page.setInputFiles('input[type=file]', file);
  const link = page.locator(`[data-duplicate-of="${id}"]`);
  await link.waitFor();
  await page.screenshot({ path: join(SHOTS, 'runs-duplicate.png') });
  await link.click();
  await page.waitForURL(new RegExp(`\\?run=${id}`));
  // the browser logs the 409 answer itself; nothing else may fail
  assert.deepEqual(errors.filter((e) => !/status of 409/.test(e)), []);
});

test('the project page shows its live job lines as they arrive, also for a project with no run yet', async () => {
  const before = errors.length;
  for (const project of [PROJECT, 'live only']) {
    const path = `/api/projects/${encodeURIComponent(project)}/live?job=J9`;
    await page.goto(`${srv.base}/?project=${encodeURIComponent(project)}`);
    await page.waitForSelector('[data-section="live"] [role="status"][data-state="open"]', { timeout: 10000 });
    const r = await srv.req(path, { method: 'POST', body: '{"ts": 1795344489.5, "step": 7, "loss": 1.25, "msg": "step 7 <b>done</b>"}\n' });
    assert.equal(r.status, 201, await r.text());
    await page.waitForFunction(() => document.querySelectorAll('[data-section="live"] [data-live-lines] li').length === 1, null, { timeout: 10000 });
    assert.match(await page.locator('[data-section="live"] [data-live-lines] li').textContent(), /step 7 <b>done<\/b>/);
  }
  assert.deepEqual(errors.slice(before).filter((e) => !/404/.test(e)), [], 'only the trend of the run-less project is missing');
});
