// Issue 20, N runs side by side (`./?compare=A,B,C`, views/comparen.js), on
// three ../shared traces: matmul_fp32_strict, matmul_amp and
// dataloader_workers0. Checks the columns (name linking to the run, date,
// id), the figures and their changes against the baseline, picking another
// baseline, the stacked bars on one scale, the pair matrix's links to the
// two-run compare, and the errors for too many, repeated and unknown runs.
// Screenshots: comparen.png, comparen-base.png, comparen-1280.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { SHARED } from '../integration/lib.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

const SCENARIOS = ['matmul_fp32_strict', 'matmul_amp', 'dataloader_workers0'];
const traceOf = (s) => {
  const dir = join(SHARED, 'traces', s);
  return join(dir, readdirSync(dir).find((f) => f.endsWith('.pt.trace.json.gz')));
};

let session, srv, page, errors;
const ids = [];

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  await page.goto(srv.url); // the token link logs in
  await page.waitForSelector('.tb-drop');
  if (!SCENARIOS.every((s) => existsSync(join(SHARED, 'traces', s)))) return;
  for (const s of SCENARIOS) ids.push(await srv.uploadBody(readFileSync(traceOf(s)), basename(traceOf(s)), s));
});

after(async () => { await session?.close(); });

/** The text of every cell of the row `fig` of the figures table. */
async function cells(fig) {
  return page.locator(`table[aria-label="Runs compared"] tr[data-fig="${fig}"] td`).allInnerTexts();
}

test('three runs side by side: columns, figures, changes against the baseline, bars, pairs', async (t) => {
  if (ids.length < 3) return t.skip('../shared traces are not there');
  errors.length = 0;
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto(`${srv.base}/?compare=${ids.join(',')}`);
  await page.waitForSelector('table[aria-label="Runs compared"]');
  assert.equal(await page.locator('h1').innerText(), 'Compare 3 runs');
  const api = await srv.json(`/api/compare?runs=${ids.join(',')}`);
  // a column per run, in order, linking to it, with its date and id
  const heads = page.locator('table[aria-label="Runs compared"] thead th[data-run]');
  assert.equal(await heads.count(), 3);
  for (let i = 0; i < 3; i++) {
    const th = heads.nth(i);
    assert.equal(await th.getAttribute('data-run'), ids[i]);
    assert.equal(await th.locator('a').first().textContent(), SCENARIOS[i]);
    assert.match(await th.locator('a').first().getAttribute('href'), new RegExp(`run=${ids[i]}`));
    assert.match(await th.textContent(), new RegExp(ids[i].slice(0, 8)));
  }
  assert.match(await heads.nth(0).textContent(), /baseline/);
  // the figures, from the API; the baseline's cell has no change, the others do
  const step = await cells('step');
  assert.equal(step.length, 3);
  assert.ok(!/[+−]/.test(step[0]), `baseline has no change: ${step[0]}`);
  assert.match(step[1], /−/, 'AMP is faster than strict FP32');
  assert.match(step[1], /faster/);
  assert.ok(api.runs[1].average.dur_us < api.runs[0].average.dur_us);
  assert.equal((await cells('steps')).join('|'), api.runs.map((r) => String(r.steps)).join('|'));
  assert.equal(await page.locator('table[aria-label="Runs compared"] tr[data-fig="cat"]').count(), 8);
  assert.match((await cells('tc'))[1], /pts/, 'tensor-core share changes with AMP');
  assert.match((await cells('gpu'))[0], /H100/);
  // one stacked bar per run on one scale: widths in proportion to the steps
  const widths = await page.locator('.tb-cmpn-bar-row .tb-hbar').evaluateAll((els) =>
    els.map((e) => [...e.children].reduce((s, c) => s + c.getBoundingClientRect().width, 0)));
  const max = Math.max(...api.runs.map((r) => r.average.dur_us));
  const full = await page.locator('.tb-cmpn-bar-row .tb-hbar').first().evaluate((e) => e.getBoundingClientRect().width);
  for (let i = 0; i < 3; i++) {
    const want = (api.runs[i].average.dur_us / max) * full;
    assert.ok(Math.abs(widths[i] - want) <= Math.max(3, want * 0.05), `bar ${i}: ${widths[i]} vs ${want}`);
  }
  // nothing overflows the page
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(over <= 0, `page overflows by ${over}px`);
  await page.screenshot({ path: join(SHOTS, 'comparen.png'), fullPage: true });
  // every pair opens the two-run compare
  const pairs = page.locator('table[aria-label="Pairs compared"] a[data-pair]');
  assert.equal(await pairs.count(), 6);
  await page.locator(`a[data-pair="${ids[2]},${ids[0]}"]`).click();
  await page.waitForURL(new RegExp(`\\?compare=${ids[2]},${ids[0]}$`));
  await page.waitForSelector('.tb-cmp-speed');
  await page.goBack();
  await page.waitForSelector('table[aria-label="Runs compared"]');
  assert.deepEqual(errors, []);
});

test('another baseline: the URL keeps it and the changes are against it', async (t) => {
  if (ids.length < 3) return t.skip('../shared traces are not there');
  await page.goto(`${srv.base}/?compare=${ids.join(',')}`);
  await page.waitForSelector('table[aria-label="Runs compared"]');
  await page.locator(`thead th[data-run="${ids[1]}"] a[data-action="baseline"]`).click();
  await page.waitForURL(new RegExp(`base=${ids[1]}`));
  await page.waitForFunction((id) => /baseline/.test(document.querySelector(`thead th[data-run="${id}"]`)?.textContent || '')
    && !document.querySelector(`thead th[data-run="${id}"] a[data-action="baseline"]`), ids[1]);
  const step = await cells('step');
  assert.ok(!/[+−]/.test(step[1]), `the new baseline has no change: ${step[1]}`);
  assert.match(step[0], /\+/, 'strict FP32 is slower than the AMP baseline');
  assert.match(step[0], /slower/);
  assert.equal(await page.locator(`thead th[data-run="${ids[0]}"] a[data-action="pair"]`).getAttribute('href'),
    `./?compare=${ids[1]},${ids[0]}`);
  await page.screenshot({ path: join(SHOTS, 'comparen-base.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(over <= 0, `page overflows by ${over}px at 1280 px`);
  await page.screenshot({ path: join(SHOTS, 'comparen-1280.png'), fullPage: true });
  await page.setViewportSize({ width: 1400, height: 900 });
});

test('bad lists: more than 8, a repeated run, an unknown run each say what is wrong', async (t) => {
  if (ids.length < 3) return t.skip('../shared traces are not there');
  const cases = [
    [[...ids, ...ids.map((x) => x.replace(/^./, 'f')), 'a0', 'a1', 'a2'], /at most 8 runs/],
    [[ids[0], ids[1], ids[0]], new RegExp(`Run ${ids[0]} is named twice`)],
    [[ids[0], ids[1], '0123456789abcdef'], /0123456789abcdef/],
  ];
  for (const [list, re] of cases) {
    await page.goto(`${srv.base}/?compare=${list.join(',')}`);
    const alert = page.locator('[role="alert"]').filter({ hasText: 'Could not compare these runs' });
    await alert.waitFor();
    assert.match(await alert.innerText(), re);
  }
});
