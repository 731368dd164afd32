// Issue 21, a user's review of the pages, in the browser: each test names the
// defect it reproduces (the Memory tab of runs without memory events, the
// Kernels tab's families and occupancy, the runs list, the job page, the
// Info tab's import notes, the Overview's CPU peak).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { SHARED, HAVE_SQLITE, demoFiles } from '../integration/lib.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

const DLRM = join(SHARED, 'corpus/param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json');
const NSYS = join(SHARED, 'corpus/pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite');

let session, srv, page, errors;
/** Every request the page made that answered 4xx/5xx ("STATUS URL"). */
const failed = [];

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(srv.url); // the token link logs in
  await page.waitForSelector('.tb-drop');
});

after(async () => { await session?.close(); });

async function upload(path, name) {
  return srv.uploadBody(readFileSync(path), basename(path), name);
}

for (const [file, name, needsSqlite] of [[DLRM, 'dlrm rank 0', false], [NSYS, 'nsys saxpy', true]]) {
  test(`memory tab without memory events (${name}): one notice, no error, no failing request`, async (t) => {
    if (!existsSync(file)) return t.skip(`${file} is not there`);
    if (needsSqlite && !HAVE_SQLITE) return t.skip('no sqlite3');
    const id = await upload(file, name);
    failed.length = 0;
    errors.length = 0;
    await page.goto(`${srv.base}/?run=${id}&view=memory`);
    await page.waitForSelector('text=No memory events in this rank');
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(SHOTS, `memory-none-${name.replace(/ /g, '-')}.png`), fullPage: true });
    assert.equal(await page.locator('.tb-alert-error, [role=alert]:has-text("Could not load")').count(), 0, 'no error box');
    assert.equal(await page.locator('text=Could not load').count(), 0, 'no "Could not load" text');
    assert.equal(await page.locator('select[aria-label="Device"]:visible').count(), 0, 'no empty device selector');
    assert.equal(await page.locator('table[aria-label="Allocations"]:visible').count(), 0, 'no allocations table');
    assert.deepEqual(failed, []);
    assert.deepEqual(errors, []);
  });
}

test('kernels tab: "gemm" finds the H100 nvjet_* cuBLAS kernels; a family filter and column; occupancy not given is n/a', async () => {
  const [file] = demoFiles('matmul_amp');
  const id = await upload(file, 'h100 amp');
  errors.length = 0;
  await page.goto(`${srv.base}/?run=${id}&view=kernels&q=gemm`);
  const rows = page.locator('table[aria-label="Kernels"] tbody tr');
  await page.waitForSelector('table[aria-label="Kernels"] tbody tr td');
  const text = await page.locator('table[aria-label="Kernels"] tbody').innerText();
  assert.match(text, /nvjet_sm90/, 'the search "gemm" lists the nvjet kernels');
  // the family filter lists GEMM and narrows the table to it
  const fam = page.locator('select[aria-label="Kernel family"]');
  await page.fill('input[type=search]', '');
  await page.waitForURL((u) => !u.search.includes('q='));
  await fam.selectOption('GEMM');
  await page.waitForURL(/family=GEMM/);
  await page.waitForFunction(() => [...document.querySelectorAll('table[aria-label="Kernels"] tbody tr')].every((tr) => /GEMM/.test(tr.textContent)));
  const names = await rows.allInnerTexts();
  assert.ok(names.length > 0 && names.every((t) => /nvjet|gemm/i.test(t)), names.join('\n'));
  const head = await page.locator('table[aria-label="Kernels"] thead').innerText();
  assert.match(head, /family/i);
  await page.screenshot({ path: join(SHOTS, 'kernels-family.png'), fullPage: true });
  // nvjet kernels carry "est. achieved occupancy %": 0 (not estimated): n/a, never "0 %"
  const occ = await page.$$eval('table[aria-label="Kernels"] tbody tr', (trs) => {
    const ths = [...document.querySelectorAll('table[aria-label="Kernels"] thead th')].map((th) => th.textContent);
    const i = ths.findIndex((t) => /occupancy/i.test(t));
    return trs.map((tr) => tr.children[i].textContent.trim());
  });
  assert.ok(occ.includes('n/a'), occ.join(','));
  assert.ok(!occ.some((t) => /^0(\.0)? ?%$/.test(t)), occ.join(','));
  assert.deepEqual(errors, []);
});

test('runs list: the drop zone names every accepted format; a third tick makes an N-way compare, none is swapped; "Compare with…" tells same-named runs apart', async () => {
  const [file] = demoFiles('matmul_amp');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await upload(file, 'same name'));
  errors.length = 0;
  await page.goto(srv.base + '/');
  await page.waitForSelector('tr[data-run]');
  const hint = await page.locator('.tb-drop').innerText();
  assert.match(hint, /\.sqlite/, 'Nsight exports are named');
  assert.match(hint, /JAX/, 'JAX traces are named');
  const boxes = page.locator('tr[data-run] input[type=checkbox]');
  assert.ok(await boxes.count() >= 3, 'three runs at least');
  await boxes.nth(0).check();
  await boxes.nth(1).check();
  // issue 20: three or more ticked runs open the N-way compare
  assert.equal(await boxes.nth(2).isDisabled(), false, 'a third box can be ticked');
  await boxes.nth(2).check();
  assert.match(await page.textContent('[data-action=compare]'), /Compare 3 runs/);
  assert.equal(await boxes.nth(0).isChecked(), true, 'the first tick stays');
  await boxes.nth(2).uncheck();
  await boxes.nth(0).uncheck();
  assert.equal(await boxes.nth(2).isDisabled(), false);
  await page.screenshot({ path: join(SHOTS, 'runs-picks.png'), fullPage: true });
  // the run page's selector: the other "same name" run with its date and short id
  await page.goto(`${srv.base}/?run=${ids[1]}`);
  const sel = page.locator('select[aria-label="Compare this run with"]');
  await page.waitForSelector(`select[aria-label="Compare this run with"] option[value="run:${ids[0]}"]`, { state: 'attached' });
  const label = await sel.locator(`option[value="run:${ids[0]}"]`).textContent();
  assert.ok(label.includes(ids[0].slice(0, 8)), label);
  assert.match(label, /same name · \d{4}-\d\d-\d\d \d\d:\d\d · /);
  assert.deepEqual(errors, []);
});

test('upload job page: elapsed time, and the server\'s estimate of the time left (none before it has one)', async () => {
  // a job answered by the page's own route: 4 MiB more of 400 MiB read per
  // poll; the server has no estimate for the first two polls (eta_s null)
  let polls = 0;
  await page.route('**/api/jobs/77', (route) => {
    polls++;
    route.fulfill({
      contentType: 'application/json',
      body: JSON.stringify({ id: 77, state: 'running', phase: 'parse', name: 'big.json.gz', files: 1,
        bytes_done: polls * 4 << 20, bytes_total: 400 << 20, events: polls * 1000, eta_s: polls > 2 ? 200 - polls : null }),
    });
  });
  try {
    errors.length = 0;
    await page.goto(`${srv.base}/?job=77`);
    await page.waitForSelector('text=Importing big.json.gz');
    const stats = page.locator('.tb-stats');
    if (polls <= 2) assert.match(await stats.innerText(), /Time left\s*—/i);
    await page.waitForFunction(() => /Time left\s*about \d/.test(document.querySelector('.tb-stats')?.textContent || ''), null, { timeout: 10000 });
    const text = await stats.innerText();
    assert.match(text, /Elapsed\s*\d+ s/i);
    assert.match(text, /Time left\s*about (3 min \d\d s)/i);
    await page.screenshot({ path: join(SHOTS, 'job-eta.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await page.unroute('**/api/jobs/77');
  }
});

test('info tab: the misnesting note counts the slices and its example says where the first is', async () => {
  // three slices each ending after the one it starts in: one note, count 3
  const X = (name, ts, dur) => ({ ph: 'X', cat: 'cpu_op', name, pid: 7, tid: 9, ts, dur });
  const trace = { traceEvents: [X('outer', 100, 100), X('a', 150, 100), X('b', 160, 100), X('c', 170, 100)] };
  const id = await srv.uploadBody(Buffer.from(JSON.stringify(trace)), 'nest.pt.trace.json', 'misnested');
  errors.length = 0;
  await page.goto(`${srv.base}/?run=${id}&view=info`);
  const row = page.locator('tr', { hasText: 'slices that end after a slice they start in' });
  await row.first().waitFor();
  const cells = await row.first().locator('td').allInnerTexts();
  await page.screenshot({ path: join(SHOTS, 'info-notes.png'), fullPage: true });
  assert.ok(cells.includes('3'), `the count is the slices: ${cells.join(' | ')}`);
  assert.ok(cells.some((c) => /the first on pid 7, tid 9/.test(c)), cells.join(' | '));
  assert.deepEqual(errors, []);
});

test('overview: a CPU peak of a few bytes gets no headline card; a real one does', async () => {
  const dl0 = join(SHARED, 'traces/dataloader_workers0');
  const cases = [[demoFiles('matmul_amp')[0], 'matmul_amp', false]];
  if (existsSync(dl0)) cases.push([join(dl0, readdirSync(dl0).find((f) => f.endsWith('.json.gz'))), 'dataloader_workers0', true]);
  for (const [path, scenario, shown] of cases) {
    const id = await upload(path, `cpu peak ${scenario}`);
    const ov = await (await srv.req(`/api/runs/${id}/overview`)).json();
    assert.equal(ov.peak_memory_cpu_bytes >= 1 << 20, shown, `${scenario}: CPU peak ${ov.peak_memory_cpu_bytes} B`);
    errors.length = 0;
    await page.goto(`${srv.base}/?run=${id}`);
    await page.waitForSelector('.tb-stats');
    await page.waitForSelector('text=Average step');
    assert.equal(await page.locator('.tb-stats', { hasText: 'Peak memory, CPU' }).count() > 0, shown, scenario);
    if (!shown) await page.screenshot({ path: join(SHOTS, 'overview-no-cpu-peak.png'), fullPage: true });
    assert.deepEqual(errors, []);
  }
});
