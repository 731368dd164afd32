// Issue 15, faults 4 and 6 in the browser: a read-only server shows a banner
// saying so (and why) on every page; a run whose database is damaged is
// marked "damaged" in the runs list and can still be deleted from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, truncateSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { demoFiles, startServer } from '../integration/lib.mjs';
import { readOnlyView } from '../integration/rofs.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

const [FILE] = demoFiles('matmul_amp');

test('a damaged run is marked in the runs list and can be deleted there', async () => {
  const session = await startBrowser();
  const { srv, page, errors } = session;
  try {
    const good = await srv.uploadBody(readFileSync(FILE), basename(FILE), 'good run');
    const bad = await srv.uploadBody(readFileSync(FILE), basename(FILE), 'broken run');
    truncateSync(join(srv.dataDir, 'runs', bad, 'run.db'), 0);
    await page.goto(srv.url);
    await page.waitForSelector('text=broken run');
    const row = page.locator('tr', { hasText: 'broken run' });
    const mark = row.locator('.tb-badge', { hasText: 'damaged' });
    assert.equal(await mark.count(), 1, 'the damaged run carries a "damaged" badge');
    assert.match(await mark.getAttribute('title'), /delete/i);
    assert.equal(await page.locator('tr', { hasText: 'good run' }).locator('.tb-badge', { hasText: 'damaged' }).count(), 0);
    await page.screenshot({ path: join(SHOTS, 'runs-damaged.png'), fullPage: true });
    await row.locator('button', { hasText: 'Delete' }).click();
    await page.locator('dialog button', { hasText: 'Delete run' }).click();
    await page.waitForSelector('text=broken run', { state: 'detached' });
    const runs = (await (await srv.req('/api/runs')).json()).runs;
    assert.deepEqual(runs.map((r) => r.id), [good]);
    assert.deepEqual(errors, []);
  } finally {
    await session.close();
  }
});

test('a read-only server shows a banner on every page', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'tb-robrowser-'));
  const dataDir = join(work, 'data');
  const seed = await startServer({ dataDir });
  const id = await seed.uploadBody(readFileSync(FILE), basename(FILE), 'stored run');
  await seed.stop();
  const ro = readOnlyView(dataDir);
  if (!ro) { t.skip('root without mount: cannot make a read-only folder'); rmSync(work, { recursive: true, force: true }); return; }
  let session;
  try {
    session = await startBrowser({ dataDir: ro.dir });
    const { srv, page, errors } = session;
    await page.goto(srv.url);
    await page.waitForSelector('text=stored run');
    const banner = page.locator('.tb-banner');
    await banner.waitFor();
    assert.match(await banner.innerText(), /Read-only/);
    assert.match(await banner.innerText(), /read-only file system|read-only \(no permission/);
    // nothing that cannot succeed is offered: no drop zone, no row actions
    assert.equal(await page.locator('.tb-drop').isVisible(), false);
    assert.equal(await page.locator('.tb-cell-actions button:visible').count(), 0);
    await page.screenshot({ path: join(SHOTS, 'readonly-banner.png'), fullPage: true });
    await page.goto(`${srv.base}/?run=${id}`);
    await page.waitForSelector('text=stored run');
    await page.locator('.tb-banner').waitFor();
    assert.deepEqual(errors, []);
  } finally {
    // the read-only folder cannot be removed by close(): undone below
    try { await session?.close(); } catch { /* EROFS/EACCES on cleanup */ }
    ro.undo();
    rmSync(work, { recursive: true, force: true });
  }
});
