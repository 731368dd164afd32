// Browser test of a run opened while it derives (issue 16, early
// visibility): the job page links to the open run and lists its stages, and
// the Overview, Operators and Timeline tabs show "Computing the …" with the
// stage they wait for instead of an error, then fill in by themselves once
// the derived stages are done. The derive_hold config key (tests only)
// holds the derived stages while a file exists. Chromium driven by
// playwright-core, as tests/browser/pages.test.mjs. Screenshots:
// early-job.png, early-computing.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SHARED } from '../integration/lib.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

const DDP = join(SHARED, 'traces', 'ddp_gloo_4ranks');
const skip = !existsSync(DDP) && 'no ../shared traces';
const work = mkdtempSync(join(tmpdir(), 'tb-early-browser-'));
const hold = join(work, 'hold');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let session, srv, page, errors;

before(async () => {
  if (skip) return;
  session = await startBrowser({ args: ['--derive-hold', hold] });
  ({ srv, page, errors } = session);
  await page.goto(srv.url);
  await page.waitForURL((u) => !u.searchParams.has('token'));
});

after(async () => {
  rmSync(hold, { force: true }); // a held derive would keep the server from stopping
  await session?.close();
  rmSync(work, { recursive: true, force: true });
});

test('a deriving run: the job links to it, its tabs say computing, then fill in', { skip, timeout: 120000 }, async () => {
  writeFileSync(hold, '');
  const fd = new FormData();
  fd.append('name', 'early');
  for (const f of readdirSync(DDP).filter((x) => x.endsWith('.gz')).sort())
    fd.append('file', new Blob([readFileSync(join(DDP, f))]), basename(f));
  const r = await srv.req('/api/runs?async=1', { method: 'POST', body: fd });
  assert.equal(r.status, 202);
  const { job } = await r.json();

  await page.goto(`${srv.base}/?job=${job}`);
  const open = page.locator('a[data-open-run]');
  await open.waitFor({ timeout: 30000 });
  const id = new URL(await open.getAttribute('href'), srv.base).searchParams.get('run');
  assert.match(id, /^[0-9a-f]{16}$/);
  await page.waitForSelector('table[aria-label="Import stages"] td:has-text("commit")');
  assert.match(await page.textContent('table[aria-label="Import stages"]'), /parse\s*done/);
  // the server's estimate of the time left shows while the run derives
  const left = page.locator('dt:has-text("Time left") + dd');
  await page.waitForFunction(() => /about \d/.test(document.querySelector('dl')?.textContent || ''));
  assert.match(await left.textContent(), /^about \d/);
  // elapsed in whole seconds from the first poll on ("0 s", never "0 ns")
  assert.match(await page.locator('dt:has-text("Elapsed") + dd').textContent(), /^\d+ s$|^\d+ min \d\d s$/);
  await page.screenshot({ path: join(SHOTS, 'early-job.png'), fullPage: true });

  const seen = errors.length;
  for (const [view, stage] of [['overview', 'summary'], ['operators', 'summary'], ['timeline', 'timeline']]) {
    await page.goto(`${srv.base}/?run=${id}&view=${view}`);
    const box = page.locator('[data-computing]');
    await box.waitFor({ timeout: 15000 });
    assert.match(await box.textContent(), new RegExp(`computing… \\(waiting for the ${stage} stage: 0 of 4 stages done`), view);
    assert.equal(await page.locator('.tb-alert-error').count(), 0, `${view}: no error shown`);
    if (view === 'overview') await page.screenshot({ path: join(SHOTS, 'early-computing.png'), fullPage: true });
  }

  // the Operators tab waits; released, it fills in without a reload
  await page.goto(`${srv.base}/?run=${id}&view=operators`);
  await page.locator('[data-computing]').waitFor();
  await sleep(200);
  rmSync(hold);
  await page.waitForSelector('table[aria-label="Operators"] tbody tr td', { timeout: 60000 });
  assert.equal(await page.locator('[data-computing]').count(), 0);
  await page.goto(`${srv.base}/?run=${id}&view=overview`);
  await page.waitForSelector('[data-rank="0"]', { timeout: 30000 });
  // the browser logs each 503 answer itself; those are expected
  for (let i = errors.length - 1; i >= seen; i--) if (/status of 503/.test(errors[i])) errors.splice(i, 1);
  assert.deepEqual(errors, []);
});
