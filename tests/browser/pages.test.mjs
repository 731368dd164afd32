// Browser tests: Debian's chromium driven by playwright-core against the real
// server (tests/browser/lib.mjs). Screenshots go to $TB_SCREENSHOTS (default
// build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { demoFiles, SHARED, HAVE_SQLITE } from '../integration/lib.mjs';
import { SHOTS, startBrowser, runIdOf } from './lib.mjs';

let session, srv, page, errors;

before(async () => {
  session = await startBrowser({ args: ['--demo', resolve('tests/data/demo')] });
  ({ srv, page, errors } = session);
});

after(async () => { await session?.close(); });

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
  // a run opens on its Overview; the Info tab lists every rank's file
  await page.click('nav[aria-label="Run views"] a:has-text("Info")');
  await page.waitForURL(/view=info/);
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

// --- run page analysis tabs ---------------------------------------------------------

/** Text of one column of a table (1-based). */
function column(label, n) {
  return page.$$eval(`table[aria-label="${label}"] tbody tr td:nth-child(${n})`, (tds) => tds.map((td) => td.textContent.trim()));
}

const num = (s) => Number(s.replace(/,/g, ''));
const isSorted = (xs, dir) => xs.every((x, i) => i === 0 || (dir === 'asc' ? xs[i - 1] <= x : xs[i - 1] >= x));

/** Clicks a sortable header and waits for the table sorted that way. */
async function sortBy(label, key, dir) {
  await page.click(`table[aria-label="${label}"] th button[data-sort="${key}"]`);
  await page.waitForURL(new RegExp(`sort=${key}&order=${dir}`));
  await page.waitForSelector(`table[aria-label="${label}"] th[aria-sort="${dir === 'asc' ? 'ascending' : 'descending'}"] button[data-sort="${key}"]`);
}

test('overview: findings with evidence, advice, snippet and a link into the view that shows them', async () => {
  const id = await runIdOf(srv, 'matmul_fp32_strict');
  await page.goto(`${srv.base}/?run=${id}`);
  const amp = page.locator('li.tb-rec[data-id="enable_amp"]');
  await amp.waitFor();
  try {
    assert.equal(await amp.getAttribute('data-severity'), 'high');
    const text = await amp.textContent();
    assert.match(text, /Tensor cores unused/);
    assert.match(text, /Could save about [\d.]+ ms per step \([\d.]+ % of it\)/);
    assert.match(text, /Matmul\/conv\/attention operators: [\d.]+ ms of [\d.]+ ms kernel time \(\d+ %\)/);
    assert.match(await amp.locator('pre code').textContent(), /torch\.autocast/);
    assert.match(await amp.locator('a[target="_blank"]').getAttribute('href'), /^https:\/\/pytorch\.org\//);
    await amp.locator('a', { hasText: 'Show the kernels' }).click();
    await page.waitForURL(/view=kernels/);
    await page.waitForSelector('table[aria-label] tbody tr');
    assert.match(page.url(), /group=op/);
  } finally {
    await page.goto(`${srv.base}/?run=${id}`);
    await amp.waitFor();
    await page.screenshot({ path: join(SHOTS, 'findings.png'), fullPage: true });
  }
});

test('overview: GPU card, execution summary, a bar per step, recommendations', async () => {
  const id = await runIdOf(srv, 'matmul_amp');
  await page.goto(`${srv.base}/?run=${id}&view=overview`);
  await page.waitForSelector('article[aria-label="GPU 0"]');
  try {
    assert.equal((await page.textContent('article[aria-label="GPU 0"] h2')).trim(), 'NVIDIA H100 80GB HBM3');
    const util = await page.textContent('article[aria-label="GPU 0"] .tb-metric >> nth=0');
    assert.match(util, /GPU utilization\s*\d+\.\d %/);
    assert.ok(await page.getAttribute('article[aria-label="GPU 0"] .tb-metric >> nth=0', 'title'), 'the metric has a tooltip');
    // beside it, compute utilization (collectives left out): no collectives here, so the same figure
    const cu = await page.textContent('article[aria-label="GPU 0"] .tb-metric >> nth=1');
    assert.match(cu, /Compute utilization\s*\d+\.\d %/);
    assert.equal(cu.match(/[\d.]+ %/)[0], util.match(/[\d.]+ %/)[0]);
    assert.equal(await page.locator('svg.tb-chart g.tb-bar').count(), 4, 'one bar per ProfilerStep');
    assert.ok((await page.locator('svg.tb-chart g.tb-bar rect').count()) >= 8, 'bars are stacked');
    const rows = await page.$$eval('table[aria-label="Average step by category"] tbody tr', (trs) => trs.map((tr) => tr.textContent));
    assert.equal(rows.length, 9, '8 categories and the step');
    assert.match(rows.find((r) => r.startsWith('Kernel')), /Kernel\s*[\d.]+ ms\s*[\d.]+ %/);
    assert.match(rows[8], /Step\s*[\d.]+ ms\s*100 %/);
    // matmul_amp is the fixed scenario: no advice to use tensor cores
    assert.equal(await page.locator('li.tb-rec[data-id="enable_amp"]').count(), 0);
    // the top finding leads, in the summary strip; the list follows the GPU and step cards (issue 21)
    assert.match(await page.textContent('.tb-stats .tb-stat-wide'), /Top finding/i, 'the strip names the top finding first');
    const head = await page.$$eval('h2', (hs) => hs.map((x) => x.textContent.trim()));
    assert.ok(head.indexOf('Recommendations') > head.indexOf('GPUs'), 'the findings list follows the cards');
    assert.match(await page.textContent('.tb-stats'), /Peak memory, GPU 0\s*2\.0 GiB/);
  } finally {
    await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
  }
});

test('overview of a multi-rank run follows the rank selector', async () => {
  const id = await runIdOf(srv, 'ddp_gloo_4ranks');
  await page.goto(`${srv.base}/?run=${id}&view=overview`);
  await page.waitForSelector('[data-rank="0"]');
  await page.selectOption('select[aria-label="Rank"]', '2');
  await page.waitForURL(/rank=2/);
  await page.waitForSelector('[data-rank="2"]');
  assert.ok(!(await page.isVisible('option:has-text("All 4 ranks")')), 'per-rank tabs offer no "all ranks"');
  await page.screenshot({ path: join(SHOTS, 'overview-rank2.png'), fullPage: true });
});

test('operators: rows, sorting on the server, search, CSV link', async () => {
  const id = await runIdOf(srv, 'matmul_amp');
  await page.goto(`${srv.base}/?run=${id}&view=operators`);
  await page.waitForSelector('table[aria-label="Operators"] tbody tr td');
  try {
    const names = await column('Operators', 1);
    assert.ok(names.length > 10, 'rows');
    assert.equal(names[0], 'aten::mm', 'default: device self time, descending');
    await sortBy('Operators', 'calls', 'desc');
    const desc = (await column('Operators', 2)).map(num);
    assert.ok(isSorted(desc, 'desc'), 'calls descending: ' + desc);
    await sortBy('Operators', 'calls', 'asc');
    const asc = (await column('Operators', 2)).map(num);
    assert.ok(isSorted(asc, 'asc'), 'calls ascending: ' + asc);
    assert.ok(asc[0] < desc[0], 'the order changed');
    await page.fill('input[type=search]', 'foreach');
    await page.waitForURL(/q=foreach/);
    await page.waitForFunction(() => [...document.querySelectorAll('table[aria-label="Operators"] tbody tr td:first-child')].every((td) => td.textContent.includes('foreach')));
    const href = await page.getAttribute('a:has-text("CSV")', 'href');
    assert.match(href, /^\.\/api\/runs\/[0-9a-f]+\/operators\?.*format=csv/, 'relative CSV link');
    assert.ok(!/offset|limit/.test(href), 'the CSV has every matching row');
    const csv = await page.evaluate(async (u) => { const r = await fetch(u); return [r.headers.get('content-type'), await r.text()]; }, href);
    assert.match(csv[0], /text\/csv/);
    assert.match(csv[1], /foreach/);
    await page.selectOption('select[aria-label="Group operators by"]', 'shape');
    await page.waitForURL(/group=shape/);
    await page.waitForSelector('table[aria-label="Operators"] th:has-text("Input shapes")');
    const url = page.url();
    await page.reload();
    await page.waitForSelector('table[aria-label="Operators"] th:has-text("Input shapes")');
    assert.equal(page.url(), url, 'the URL holds the state');
    assert.equal(await page.inputValue('input[type=search]'), 'foreach');
  } finally {
    await page.screenshot({ path: join(SHOTS, 'operators.png'), fullPage: true });
  }
});

test('kernels: rows with tensor cores, share and occupancy; sorting; group by operator', async () => {
  const id = await runIdOf(srv, 'matmul_amp');
  await page.goto(`${srv.base}/?run=${id}&view=kernels`);
  await page.waitForSelector('table[aria-label="Kernels"] tbody tr td');
  try {
    const rows = await column('Kernels', 1);
    assert.ok(rows.length > 5);
    assert.ok((await page.locator('table[aria-label="Kernels"] .tb-badge-ok:has-text("yes")').count()) >= 1, 'tensor-core kernels');
    assert.match(await page.textContent('.tb-table-box'), /kernel time 21\.9 ms/);
    await sortBy('Kernels', 'calls', 'desc');
    const desc = (await column('Kernels', 3)).map(num); // after Kernel and Family
    assert.ok(isSorted(desc, 'desc'), String(desc));
    await sortBy('Kernels', 'calls', 'asc');
    const asc = (await column('Kernels', 3)).map(num);
    assert.ok(isSorted(asc, 'asc') && asc[0] < desc[0], String(asc));
    await page.selectOption('select[aria-label="Group kernels by"]', 'op');
    await page.waitForSelector('table[aria-label="Kernels"] th:has-text("Operator")');
    assert.ok((await column('Kernels', 2)).some((t) => t.startsWith('aten::')), 'launching operators');
  } finally {
    await page.screenshot({ path: join(SHOTS, 'kernels.png'), fullPage: true });
  }
});

test('memory: the curve, drag to zoom (URL and events follow), reset', async () => {
  const id = await runIdOf(srv, 'matmul_amp');
  await page.goto(`${srv.base}/?run=${id}&view=memory`);
  await page.waitForSelector('.tb-memchart[data-points]');
  await page.waitForSelector('table[aria-label="Allocations"] tbody tr td');
  try {
    assert.ok(Number(await page.getAttribute('.tb-memchart', 'data-points')) > 10, 'curve samples');
    assert.match(await page.textContent('.tb-stats'), /Peak allocated, GPU 0\s*2\.0 GiB/);
    const painted = await page.$eval('.tb-memchart canvas', (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
      return n;
    });
    assert.ok(painted > 1000, 'the canvas is drawn');
    const before = num((await page.textContent('.tb-table-box .tb-toolbar .tb-nowrap')).split(' ')[0]);
    const b = await page.locator('.tb-memchart').boundingBox();
    await page.mouse.move(b.x + b.width * 0.3, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.45, b.y + b.height / 2, { steps: 4 });
    await page.mouse.up();
    await page.waitForURL(/start=[\d.]+&end=[\d.]+/);
    await page.waitForFunction((n) => {
      const t = document.querySelector('.tb-table-box .tb-toolbar .tb-nowrap');
      return t && Number(t.textContent.split(' ')[0].replace(/,/g, '')) < n;
    }, before);
    assert.match(await page.textContent('.tb-page .tb-toolbar'), /Window [\d.]+ ms → [\d.]+ ms/);
    await sortBy('Allocations', 'alloc', 'desc');
    await page.screenshot({ path: join(SHOTS, 'memory-zoomed.png'), fullPage: true });
    await page.click('button:has-text("Reset zoom")');
    await page.waitForURL((u) => !u.search.includes('start='));
    await page.waitForSelector('text=Whole rank');
  } finally {
    await page.screenshot({ path: join(SHOTS, 'memory.png'), fullPage: true });
  }
});

/** A tiny Kineto trace whose operator, kernel and GPU names are hostile. */
function hostileTrace() {
  const op = '<script>window.__pwned=1</script>aten::evil & co';
  const kernel = 'void evil_kernel<<img src=x onerror="window.__pwned=2">, &amp;>(int)';
  const mem = (ts, total, bytes) => ({ ph: 'i', cat: 'cpu_instant_event', s: 't', name: '[memory]', pid: 1, tid: 1, ts,
    args: { 'Total Reserved': 2097152, 'Total Allocated': total, Bytes: bytes, 'Device Id': 0, 'Device Type': 1, Addr: 1234567 } });
  return { op, kernel, json: JSON.stringify({
    schemaVersion: 1,
    deviceProperties: [{ id: 0, name: '<img src=x onerror="window.__pwned=3">GPU', totalGlobalMem: 85017493504, computeMajor: 9, computeMinor: 0, numSms: 132 }],
    traceEvents: [
      { ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 1000, dur: 1000, args: {} },
      { ph: 'X', cat: 'cpu_op', name: op, pid: 1, tid: 1, ts: 1100, dur: 300, args: { 'External id': 1 } },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 1150, dur: 20, args: { 'External id': 1, correlation: 7 } },
      { ph: 'X', cat: 'kernel', name: kernel, pid: 0, tid: 7, ts: 1200, dur: 400,
        args: { device: 0, stream: 7, correlation: 7, 'blocks per SM': 2, 'est. achieved occupancy %': 50 } },
      mem(1120, 1048576, 1048576),
      mem(1900, 0, -1048576),
    ],
  }) };
}

test('hostile operator, kernel and GPU names render as text on every tab', async () => {
  const t = hostileTrace();
  const id = await srv.uploadBody(t.json, 'evil.pt.trace.json', 'hostile-names');
  const check = async (tab, texts) => {
    await page.goto(`${srv.base}/?run=${id}&view=${tab}`);
    for (const s of texts) await page.waitForSelector(`text=${s}`);
    assert.equal(await page.$('main script, main img'), null, `${tab}: no element was injected`);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, `${tab}: nothing ran`);
  };
  await check('overview', ['<img src=x onerror="window.__pwned=3">GPU']);
  await check('operators', [t.op]);
  await check('kernels&group=op', [t.op]);
  assert.equal((await column('Kernels', 1))[0], t.kernel);
  await page.screenshot({ path: join(SHOTS, 'hostile-kernels.png'), fullPage: true });
  await check('memory', [t.op]);
});

test('a run imported before analyses existed explains itself', { skip: !HAVE_SQLITE && 'no sqlite3 CLI' }, async () => {
  const id = await srv.uploadBody(hostileTrace().json, 'old.pt.trace.json', 'pre-analysis');
  srv.sql(id, 'DROP TABLE step');
  const seen = errors.length;
  await page.goto(`${srv.base}/?run=${id}&view=overview`);
  await page.waitForSelector('.tb-alert-warn:has-text("No overview for this run")');
  assert.match(await page.textContent('.tb-alert-warn'), /imported before analysis existed/);
  await page.screenshot({ path: join(SHOTS, 'pre-analysis.png'), fullPage: true });
  // the browser logs the 409 response itself; that one is expected
  for (let i = errors.length - 1; i >= seen; i--) if (/status of 409/.test(errors[i])) errors.splice(i, 1);
});

// --- timeline tab -------------------------------------------------------------------------

/** Whether this build serves the timeline API (the browser tests skip it if not). */
async function hasTimeline(id) {
  return (await srv.req(`/api/runs/${id}/timeline/tracks`)).status !== 404;
}

/** Waits until the timeline has drawn a fetched window. */
async function timelineLoaded() {
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 15000 });
  await page.waitForTimeout(150); // the frame after the data
}

/** Page x of painted (non-background) pixels on one row of the lanes canvas. */
function paintedXs(y) {
  return page.$eval('.tb-tl-lanes canvas', (c, yy) => {
    const r = c.getBoundingClientRect();
    const dpr = c.width / r.width;
    const d = c.getContext('2d').getImageData(0, Math.round((yy - r.top) * dpr), c.width, 1).data;
    const out = [];
    for (let x = 0; x < c.width; x += 1) if (d[x * 4] + d[x * 4 + 1] + d[x * 4 + 2] < 600) out.push(r.left + x / dpr);
    return out;
  }, y);
}

/** A full-page screenshot from the top (the sticky header stays in its place). */
async function shot(name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, name), fullPage: true });
}

/** Start and end of the window in the URL. */
function urlWindow() {
  const u = new URL(page.url());
  return [Number(u.searchParams.get('start')), Number(u.searchParams.get('end'))];
}

test('timeline: zoom with W, pan with D, click a kernel, its launch, search, reload', async (t) => {
  const id = await runIdOf(srv, 'matmul_amp');
  if (!(await hasTimeline(id))) return t.skip('the server has no timeline API yet');
  await page.goto(`${srv.base}/?run=${id}&view=timeline`);
  await page.waitForSelector('.tb-tl-label[data-kind="gpu"]');
  await timelineLoaded();
  try {
    assert.ok((await page.locator('.tb-tl-label[data-kind="cpu"]').count()) >= 2, 'CPU threads');
    assert.match(await page.getAttribute('a:has-text("Download trace")', 'href'), /^\.\/api\/runs\/[0-9a-f]+\/source\?rank=0$/);
    assert.ok((await paintedXs((await page.locator('.tb-tl-label[data-kind="gpu"]').boundingBox()).y + 12)).length > 50, 'GPU lane drawn');
    // the GPU busy lane: blue where kernels run, a red strip under the idle pixels
    const busyBox = await page.locator('.tb-tl-label[data-counter][title="GPU busy (GPU 0)"]').boundingBox();
    assert.ok(busyBox, 'a GPU busy lane');
    const tally = (y) => page.$eval('.tb-tl-lanes canvas', (c, yy) => {
      const r = c.getBoundingClientRect();
      const d = c.getContext('2d').getImageData(0, Math.round((yy - r.top) * (c.width / r.width)), c.width, 1).data;
      let blue = 0, red = 0;
      for (let x = 0; x < c.width; x++) {
        const [R, G, B] = [d[x * 4], d[x * 4 + 1], d[x * 4 + 2]];
        if (B > R + 30 && B < 230) blue++;
        if (R > 180 && G < 150 && B < 130) red++;
      }
      return { blue, red };
    }, y);
    assert.ok((await tally(busyBox.y + busyBox.height / 2)).blue > 50, 'busy stretches drawn');
    assert.ok((await tally(busyBox.y + busyBox.height - 5)).red > 50, 'idle moments drawn');
    await shot('timeline.png');

    // W zooms in about the mouse (or the centre), D pans right
    await page.focus('.tb-tl-plot');
    for (let i = 0; i < 5; i++) await page.keyboard.press('w');
    await page.waitForURL(/view=timeline.*start=[\d.]+&end=[\d.]+/);
    await page.waitForTimeout(400);
    const [s1, e1] = urlWindow();
    await timelineLoaded();
    const fetches = [];
    const onReq = (r) => { if (/\/timeline\?/.test(r.url())) fetches.push(r.url()); };
    page.on('request', onReq);
    await page.keyboard.press('d');
    await page.waitForFunction((s) => Number(new URL(location.href).searchParams.get('start')) > s, s1);
    const [s2, e2] = urlWindow();
    assert.ok(Math.abs((e2 - s2) - (e1 - s1)) < 0.01, 'D keeps the zoom');
    assert.ok(s2 > s1, 'D moves later');
    await page.waitForTimeout(300);
    page.off('request', onReq);
    assert.deepEqual(fetches, [], 'a pan inside the fetched window (three screens wide) fetches nothing');
    await timelineLoaded();

    // hovering draws on the overlay only: the lanes are not repainted
    const paints = await page.getAttribute('.tb-tl-lanes', 'data-paints');
    const lanesBox = await page.locator('.tb-tl-lanes').boundingBox();
    for (let i = 0; i < 12; i++) await page.mouse.move(lanesBox.x + 30 + i * 60, lanesBox.y + 20 + i * 15);
    await page.waitForTimeout(100);
    assert.equal(await page.getAttribute('.tb-tl-lanes', 'data-paints'), paints, 'mouse moves never repaint slices');

    // click kernels on the GPU lane (depth 1: depth 0 holds the GPU-side step annotations)
    // until one is a single slice (a merged item zooms in)
    const gpu = page.locator('.tb-tl-label[data-kind="gpu"]');
    let ok = false;
    for (let i = 0; i < 8 && !ok; i++) {
      const box = await gpu.boundingBox();
      const y = box.y + 3 + 18 + 9;
      const xs = await paintedXs(y);
      assert.ok(xs.length > 0, 'kernels in view');
      await page.mouse.click(xs[Math.floor(xs.length / 3)], y);
      await page.waitForTimeout(500);
      ok = /Category\s*kernel/.test((await page.textContent('.tb-tl-details')) || '');
      if (!ok) await timelineLoaded();
    }
    assert.ok(ok, 'a kernel is selected');
    await page.waitForSelector('.tb-tl-details [data-rel="launcher"]');
    const launcher = await page.textContent('.tb-tl-details [data-rel="launcher"]');
    assert.match(launcher, /cu(da)?LaunchKernel/, 'its launching runtime call');
    assert.match(page.url(), /sel=\d+:[\d.]+:[\d.]+/);
    await page.waitForTimeout(300);
    await shot('timeline-kernel.png');

    // follow the launch: selects the runtime call on its CPU thread
    await page.click('.tb-tl-details [data-rel="launcher"] button >> nth=0');
    await page.waitForFunction(() => /Category\s*cuda_runtime/.test(document.querySelector('.tb-tl-details')?.textContent || ''));
    assert.match(await page.textContent('.tb-tl-details [data-rel="launched"]'), /Launched \(1\)/);

    // search
    await page.fill('input[aria-label="Search slice names"]', 'nvjet');
    await page.waitForFunction(() => /\d+ match/.test(document.querySelector('.tb-tl-hits')?.textContent || ''));
    const total = num((await page.textContent('.tb-tl-hits')).split(' ')[0]);
    assert.ok(total > 0, 'search finds nvjet kernels');
    await page.focus('input[aria-label="Search slice names"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /^1 \/ /.test(document.querySelector('.tb-tl-hits')?.textContent || ''));
    await page.waitForFunction(() => /nvjet/.test(document.querySelector('.tb-tl-slice-name')?.textContent || ''));
    await page.waitForURL(/q=nvjet/);
    await page.waitForFunction(() => /sel=\d+:[\d.]+:[\d.]+/.test(location.search) && /nvjet/.test(location.search));
    await page.waitForTimeout(400); // the URL write is debounced
    const url = page.url();
    await shot('timeline-search.png');

    // a reload restores window, selection and search
    await page.reload();
    await page.waitForFunction(() => /nvjet/.test(document.querySelector('.tb-tl-slice-name')?.textContent || ''));
    await timelineLoaded();
    assert.equal(page.url(), url, 'the URL is kept');
    assert.equal(await page.inputValue('input[aria-label="Search slice names"]'), 'nvjet');
    await page.waitForFunction(() => /^1 \/ \d+/.test(document.querySelector('.tb-tl-hits')?.textContent || ''));
    assert.match(await page.textContent('.tb-tl-toolbar'), /[\d.]+ (µs|ms) – [\d.]+ (µs|ms)/);
    await shot('timeline-reload.png');

    // shift-drag: a table by name for the area
    const lanes = await page.locator('.tb-tl-lanes').boundingBox();
    await page.keyboard.down('Shift');
    await page.mouse.move(lanes.x + lanes.width * 0.2, lanes.y + 40);
    await page.mouse.down();
    await page.mouse.move(lanes.x + lanes.width * 0.8, lanes.y + 60, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForSelector('table[aria-label="Slices in the area"] tbody tr');
    await page.click('table[aria-label="Slices in the area"] tbody tr >> nth=0');
    await page.waitForSelector('table[aria-label="Slices in the area"] tbody tr.tb-tl-row-on');
    await shot('timeline-area.png');
  } finally {
    await shot('timeline-last.png');
  }
});

test('timeline: a slice named like markup is text', async (t) => {
  const evil = '<img src=x onerror=alert(1)>';
  const json = JSON.stringify({
    schemaVersion: 1,
    traceEvents: [
      { ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 1000, dur: 1000, args: {} },
      { ph: 'X', cat: 'cpu_op', name: evil, pid: 1, tid: 1, ts: 1100, dur: 600, args: { note: '<b>x</b>' } },
    ],
  });
  const id = await srv.uploadBody(json, 'evil-tl.pt.trace.json', 'hostile-timeline');
  if (!(await hasTimeline(id))) return t.skip('the server has no timeline API yet');
  await page.goto(`${srv.base}/?run=${id}&view=timeline&q=${encodeURIComponent('onerror')}`);
  await page.waitForFunction(() => /1 match/.test(document.querySelector('.tb-tl-hits')?.textContent || ''));
  await page.focus('input[aria-label="Search slice names"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction((s) => document.querySelector('.tb-tl-slice-name')?.textContent === s, evil);
  await timelineLoaded();
  const lane = await page.locator('.tb-tl-label[data-kind="cpu"]').first().boundingBox();
  await page.mouse.move(lane.x + lane.width + 300, lane.y + 3 + 18 + 9);
  await page.waitForFunction((s) => document.querySelector('.tb-tl-tip-name')?.textContent === s, evil);
  assert.equal(await page.$('main img'), null, 'no element was injected');
  await shot('timeline-hostile.png');
});

test('ranks: straggler callout names rank 2, heat map of 4 ranks, collectives and files', async () => {
  const id = await runIdOf(srv, 'ddp_gloo_4ranks');
  await page.goto(`${srv.base}/?run=${id}`);
  await page.click('nav[aria-label="Run views"] a:has-text("Ranks")');
  await page.waitForURL(/view=ranks/);
  try {
    const callout = page.locator('[data-straggler]');
    await callout.waitFor({ timeout: 15000 });
    assert.equal(await callout.getAttribute('data-straggler'), '2');
    assert.match(await callout.textContent(), /Straggler: rank 2/);
    assert.equal(await page.locator('svg.tb-rk-heat g.tb-rk-heat-row').count(), 4, 'one heat-map row per rank');
    assert.equal(await page.locator('svg.tb-rk-heat g.tb-rk-heat-row[data-rank="0"] rect').count(), 4, 'one cell per step');
    assert.match(await page.locator('svg.tb-rk-heat rect title').first().textContent(), /^Rank 0, ProfilerStep#\d+: [\d.]+ ms$/);
    assert.match(await page.textContent('table[aria-label="Collectives"] tbody'), /all_reduce/);
    assert.equal(await page.locator('table[aria-label="Rank files and clock alignment"] tbody tr').count(), 4);
    assert.equal(await page.inputValue('select[aria-label="Rank"]'), '', 'the ranks tab compares all ranks');
    await shot('ranks.png');
    // the callout links to that rank's overview
    await callout.locator('a', { hasText: 'Overview of rank 2' }).click();
    await page.waitForURL((u) => !/view=ranks/.test(String(u)) && /rank=2/.test(String(u)));
    await page.waitForSelector('.tb-page[data-rank="2"]');
  } finally {
    if (/view=ranks/.test(page.url())) await shot('ranks.png');
  }
});

test('compare: pick two runs on the runs list, speedup, removed and added GEMMs, filters in the URL', async () => {
  await page.goto(srv.base + '/');
  await page.waitForSelector('tr[data-run]');
  const pick = (name) => page.locator(`tr[data-run]:has(a:text-is("${name}")) input[type=checkbox]`).first();
  const compare = page.locator('button[data-action="compare"]');
  assert.ok(await compare.isDisabled(), 'Compare waits for two runs');
  await pick('matmul_fp32_strict').check();
  await pick('matmul_amp').check();
  assert.ok(await compare.isEnabled());
  await compare.click();
  await page.waitForURL(/\?compare=[0-9a-f]{16},[0-9a-f]{16}$/);
  try {
    await page.waitForSelector('[data-speedup]');
    const speedup = Number(await page.getAttribute('[data-speedup]', 'data-speedup'));
    assert.ok(speedup > 2, `speedup ${speedup}`);
    assert.ok(await page.isVisible('text=B is 3.05× faster than A') || speedup.toFixed(2) !== '3.05');
    assert.ok(await page.isVisible('article[data-side="A"] >> text=matmul_fp32_strict'));
    assert.ok(await page.isVisible('article[data-side="B"] >> text=matmul_amp'));
    assert.ok(await page.isVisible('tr[data-category="kernel"]'));
    // the kernel table: the FFMA GEMMs removed, the nvjet GEMMs added
    await page.waitForSelector('table[aria-label="Kernels compared"] tbody tr');
    const removed = page.locator('table[aria-label="Kernels compared"] tbody tr').filter({ hasText: /sm80_xmma_gemm_f32f32.*ffma/ }).first();
    assert.equal((await removed.locator('td').first().innerText()).trim(), 'removed');
    const added = page.locator('table[aria-label="Kernels compared"] tbody tr').filter({ hasText: /nvjet_sm90/ }).first();
    assert.equal((await added.locator('td').first().innerText()).trim(), 'added');
    await page.screenshot({ path: join(SHOTS, 'compare.png'), fullPage: true });
    // status filter and grouping by family go into the URL and survive a reload
    await page.click('button[data-status="added"]');
    await page.waitForURL(/status=added/);
    await page.waitForFunction(() => [...document.querySelectorAll('table[aria-label="Kernels compared"] tbody tr td:first-child')]
      .every((td) => td.textContent.trim() === 'added'));
    await page.selectOption('select[aria-label="Join kernels by"]', 'family');
    await page.waitForURL(/group=family/);
    await page.click('button[data-status="added"]');
    await page.waitForURL((u) => !u.search.includes('status='));
    await page.reload();
    await page.waitForSelector('table[aria-label="Kernels compared"] td:has-text("GEMM")');
    const gemm = page.locator('table[aria-label="Kernels compared"] tbody tr').filter({ has: page.locator('td', { hasText: /^(TC\s*)?GEMM$/ }) }).first();
    assert.equal((await gemm.locator('td').first().innerText()).trim(), 'faster');
    await page.screenshot({ path: join(SHOTS, 'compare-families.png'), fullPage: true });
    // operators; the CSV link carries the filters
    await page.click('button[data-table="operators"]');
    await page.waitForURL(/table=operators/);
    await page.waitForSelector('table[aria-label="Operators compared"] td:has-text("aten::mm")');
    const href = await page.getAttribute('a:has-text("CSV")', 'href');
    assert.match(href, /api\/diff\/operators\?.*format=csv/);
    // the run page's "Compare with…" opens the same comparison from B's side
    const [, idA, idB] = /compare=([0-9a-f]{16}),([0-9a-f]{16})/.exec(page.url());
    await page.goto(`${srv.base}/?run=${idB}`);
    const sel = 'select[aria-label="Compare this run with"]';
    await page.waitForSelector(`${sel} option[value="run:${idA}"]`, { state: 'attached' });
    await page.selectOption(sel, `run:${idA}`);
    await page.waitForURL(new RegExp(`compare=${idA},${idB}$`));
    await page.waitForSelector('[data-speedup]');
  } catch (e) {
    await page.screenshot({ path: join(SHOTS, 'compare.png'), fullPage: true });
    throw e;
  }
});

test('ranks: renumbering on the Ranks tab moves the straggler with its file', async () => {
  const id = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp-renumber');
  await page.goto(`${srv.base}/?run=${id}&view=ranks`);
  const form = page.locator('form[aria-label="Renumber ranks"]');
  await form.waitFor();
  await form.locator('input[aria-label^="New rank of rank0."]').fill('2');
  await form.locator('input[aria-label^="New rank of rank2."]').fill('0');
  await form.locator('button[type=submit]').click();
  await page.waitForFunction(() => /Straggler: rank 0 /.test(document.body.textContent || ''), null, { timeout: 20000 });
  assert.match(await page.textContent('table[aria-label="Rank files and clock alignment"] tbody tr[data-rank="0"]'), /rank2\./);
  // a numbering that repeats a rank is refused with the server's reason
  const seen = errors.length;
  await form.locator('input[aria-label^="New rank of rank1."]').fill('3');
  await form.locator('button[type=submit]').click();
  await page.waitForSelector('form[aria-label="Renumber ranks"] [role=status]:has-text("Not saved")');
  assert.match(await form.locator('[role=status]').textContent(), /both be rank 3/);
  // the browser logs the expected 400 as a console error
  for (let i = errors.length - 1; i >= seen; i--) if (/status of 400/.test(errors[i])) errors.splice(i, 1);
  await page.screenshot({ path: join(SHOTS, 'ranks-renumber.png'), fullPage: true });
});

// --- other trace sources (../shared; skipped without it) --------------------------------

const OTHER_SOURCES = [
  ['jax_mlp', 'perfetto_trace.json.gz', () => {
    const dir = join(SHARED, 'traces', 'jax_mlp', 'plugins', 'profile');
    if (!existsSync(dir)) return null;
    const sub = readdirSync(dir)[0];
    return sub ? join(dir, sub, 'perfetto_trace.json.gz') : null;
  }],
  ['nsys_cloverleaf', 'perlmutter-cloverleaf-cuda.sqlite',
    () => join(SHARED, 'corpus', 'pipit', 'pipit', 'tests', 'data', 'cloverleaf-nsys', 'perlmutter-cloverleaf-cuda.sqlite')],
];

for (const [name, filename, where] of OTHER_SOURCES) {
  test(`a ${name} run shows its GPU work on the overview, kernels and timeline`, async (t) => {
    const path = where();
    if (!path || !existsSync(path)) return t.skip(`${name} sample not found under ${SHARED}`);
    const id = await srv.uploadBody(readFileSync(path), filename, name);
    await page.goto(`${srv.base}/?run=${id}&view=overview`);
    await page.waitForSelector('table[aria-label="Average step by category"]');
    const kernelRow = (await column('Average step by category', 1)).findIndex((c) => c.startsWith('Kernel'));
    const kernelShare = (await column('Average step by category', 3))[kernelRow];
    assert.ok(parseFloat(kernelShare) > 0, `kernel share ${kernelShare}`);
    await page.screenshot({ path: join(SHOTS, `source-${name}-overview.png`), fullPage: true });
    await page.goto(`${srv.base}/?run=${id}&view=kernels`);
    await page.waitForSelector('table[aria-label] tbody tr');
    await page.goto(`${srv.base}/?run=${id}&view=timeline`);
    await page.waitForSelector('canvas');
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(SHOTS, `source-${name}-timeline.png`), fullPage: true });
  });
}

test('no script errors, no alerts', () => {
  assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
});
