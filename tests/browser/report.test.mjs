// The print report of a run (`./?run=ID&view=report`, views/report.js):
// what it shows on screen, what print CSS leaves out (page header, tabs,
// controls) and keeps light in the dark theme, and that Debian's chromium
// prints it to a clean one-page PDF (`chromium --headless --print-to-pdf`):
// one A4 page, with its text (pdftotext, poppler-utils, when installed)
// and a PNG of it (pdftoppm) in $TB_SCREENSHOTS. Demo runs of
// tests/data/demo, served with --no-auth so the command-line chromium
// needs no token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHOTS, startDemo } from './lib.mjs';

let session, srv, page, errors, runId, title;
const have = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

before(async () => {
  session = await startDemo(['--no-auth']);
  ({ srv, page, errors } = session);
  runId = session.ids.matmul_amp;
  title = (await srv.json(`/api/runs/${runId}/overview`)).recommendations[0].title;
});

after(async () => { await session?.close(); });

test('the report shows the overview figures, the top findings, the breakdown and the top kernels and operators', async () => {
  await page.emulateMedia({ media: 'screen', colorScheme: 'light' });
  await page.goto(`${srv.base}/?run=${runId}&view=report`);
  await page.waitForSelector('table[aria-label="Top operators"]');
  const text = await page.locator('article[aria-label="Report"]').innerText();
  assert.match(text, /Performance report: matmul_amp/);
  for (const s of ['STEPS', 'AVERAGE STEP', 'GPU UTILIZATION', 'TOP FINDING', 'Step breakdown', 'Top 8 kernels by GPU time', 'Top 8 operators'])
    assert.ok(text.toUpperCase().includes(s.toUpperCase()), `the report has "${s}"`);
  assert.ok(text.includes(title), 'the first finding, with its title');
  assert.ok(await page.locator('.tb-report .tb-rec-evidence li').count() > 0, 'findings come with their evidence');
  assert.ok(await page.locator('table[aria-label="Top kernels"] tbody tr').count() >= 1);
  assert.ok(await page.locator('table[aria-label="Top kernels"] tbody tr').count() <= 8);
  assert.ok(await page.locator('svg.tb-chart g.tb-bar').count() >= 1, 'a column per step');
  assert.ok(await page.isVisible('button:has-text("Print or save as PDF")'));
  assert.deepEqual(errors, []);
});

test('print CSS: no page header, tabs or controls, and light colours even in the dark theme', async () => {
  await page.emulateMedia({ media: 'screen', colorScheme: 'dark' });
  await page.goto(`${srv.base}/?run=${runId}&view=report`);
  await page.waitForSelector('table[aria-label="Top operators"]');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(await bg(), 'rgb(255, 255, 255)', 'dark on screen');
  await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
  assert.equal(await bg(), 'rgb(255, 255, 255)', 'white paper');
  const shown = (sel) => page.$$eval(sel, (els) => els.filter((e) => e.getClientRects().length).length);
  for (const sel of ['.tb-header', 'nav[aria-label="Run views"]', 'button', 'select', '.tb-page-head'])
    assert.equal(await shown(sel), 0, `${sel} is not printed`);
  const textColour = await page.$eval('.tb-report h1', (e) => getComputedStyle(e).color);
  const [r, g, b] = textColour.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 200, `dark text on the paper: ${textColour}`);
  await page.emulateMedia({ media: 'screen', colorScheme: 'light' });
});

test('chromium --headless --print-to-pdf prints the report on one clean page', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tb-pdf-'));
  try {
    const pdf = join(dir, 'report.pdf');
    execFileSync(process.env.CHROMIUM || '/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${join(dir, 'profile')}`,
      '--virtual-time-budget=15000', '--no-pdf-header-footer', `--print-to-pdf=${pdf}`, `${srv.base}/?run=${runId}&view=report`], { stdio: 'ignore', timeout: 60000 });
    const bytes = readFileSync(pdf);
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    const pages = have('pdfinfo')
      ? Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf]).toString())[1])
      : (bytes.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) || []).length;
    assert.equal(pages, 1, 'one page');
    if (have('pdftotext')) {
      const text = execFileSync('pdftotext', ['-layout', pdf, '-']).toString();
      for (const s of ['Performance report: matmul_amp', 'Top 8 kernels by GPU time', 'Top 8 operators', 'Step breakdown'])
        assert.ok(text.includes(s), `the PDF says "${s}"`);
      assert.ok(text.replace(/\s+/g, ' ').includes(title.split(' ').slice(0, 4).join(' ')), 'the first finding is printed');
      for (const s of ['Print or save as PDF', 'Compare with', 'Rename', 'Overview  Operators'])
        assert.ok(!text.includes(s), `no "${s}" on paper`);
    }
    if (have('pdftoppm')) execFileSync('pdftoppm', ['-png', '-r', '70', '-singlefile', pdf, join(SHOTS, 'report-pdf')]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
