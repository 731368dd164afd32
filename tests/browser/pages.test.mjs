// Browser tests: Debian's chromium driven by playwright-core against the real
// server. Screenshots go to $TB_SCREENSHOTS (default build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve, basename } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, demoFiles } from '../integration/lib.mjs';

const require = createRequire(resolve('tests/package.json'));
const { chromium } = require('playwright-core');
const SHOTS = process.env.TB_SCREENSHOTS || resolve('build/screenshots');
mkdirSync(SHOTS, { recursive: true });

let srv, browser, page;
const errors = [];

before(async () => {
  srv = await startServer({ args: ['--demo', resolve('tests/data/demo')] });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
  srv?.cleanup();
});

test('the token link logs in and the runs list shows the demo runs', async () => {
  await page.goto(srv.url);
  await page.waitForSelector('text=matmul_amp');
  assert.ok(!page.url().includes('token='), 'the token is removed from the address bar');
  for (const name of ['matmul_amp', 'matmul_fp32_strict', 'dataloader_workers8', 'ddp_gloo_4ranks'])
    assert.ok(await page.isVisible(`text=${name}`), name);
  assert.ok(await page.isVisible('text=NVIDIA H100 80GB HBM3'));
  await page.screenshot({ path: join(SHOTS, 'runs.png'), fullPage: true });
});

test('uploading through the page ends on the new run, and hostile names stay text', async () => {
  const [file] = demoFiles('matmul_amp');
  const evil = '<img src=x onerror=alert(1)>';
  // the run-name field, if the page has one, takes the hostile name
  const nameField = await page.$('input[name="name"], input[placeholder*="name" i]');
  if (nameField) await nameField.fill(evil);
  const input = await page.$('input[type=file]');
  assert.ok(input, 'a file input exists');
  await input.setInputFiles(file);
  await page.waitForURL(/\?run=[0-9a-f]{16}/, { timeout: 20000 });
  await page.waitForSelector('text=NVIDIA H100 80GB HBM3');
  if (nameField) assert.ok(await page.isVisible(`text=${evil}`), 'the name is shown literally');
  assert.equal(await page.$('img[src="x"]'), null, 'no element was injected');
  await page.screenshot({ path: join(SHOTS, 'run.png'), fullPage: true });
});

test('a multi-rank run shows its ranks; a reload keeps the view', async () => {
  await page.goto(srv.base + '/');
  await page.click('a:has-text("ddp_gloo_4ranks")');
  await page.waitForURL(/\?run=/);
  try {
    await page.waitForSelector('td:has-text("rank3.")', { timeout: 10000 });
  } finally {
    await page.screenshot({ path: join(SHOTS, 'run-ranks.png'), fullPage: true });
  }
  const url = page.url();
  await page.reload();
  await page.waitForSelector('td:has-text("rank3.")');
  assert.equal(page.url(), url);
  await page.screenshot({ path: join(SHOTS, 'run-ranks.png'), fullPage: true });
});

test('no script errors, no alerts', () => {
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
});
