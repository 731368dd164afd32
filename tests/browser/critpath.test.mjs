// Browser test of the timeline's critical-path highlight (web/js/timeline/
// critpath.js): Debian's chromium driven by playwright-core against the real
// server with the demo runs. Opens a GPU-bound run's timeline with cp=1 and
// checks the toggle, the legend, that segments were outlined on the overlay
// (data-cp-segments, and pixels of the GPU-compute colour on the GPU lane),
// that cp=1 survives the view's own URL writes, the details line of a kernel
// on the path, and turning it off. Screenshot: $TB_SCREENSHOTS/critpath.png
// (default build/screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { SHOTS, startBrowser, runIdOf } from './lib.mjs';

let session, srv, page, errors;

before(async () => {
  session = await startBrowser({ args: ['--demo', resolve('tests/data/demo')] });
  ({ srv, page, errors } = session);
  await page.goto(srv.url); // the token link logs in
  await page.waitForSelector('text=matmul_fp32_strict');
});

after(async () => { await session?.close(); });

async function timelineLoaded() {
  await page.waitForSelector('.tb-tl-plot[data-loaded]:not([data-busy])', { timeout: 15000 });
  await page.waitForTimeout(200);
}

/** Pixels on one row of the overlay canvas close to an RGB colour. */
function overlayPixels(y, [R, G, B]) {
  return page.$eval('.tb-tl-plot > canvas', (c, [yy, r0, g0, b0]) => {
    const r = c.getBoundingClientRect();
    const d = c.getContext('2d').getImageData(0, Math.round((yy - r.top) * (c.width / r.width)), c.width, 1).data;
    let n = 0;
    for (let x = 0; x < c.width; x++)
      if (Math.abs(d[x * 4] - r0) < 40 && Math.abs(d[x * 4 + 1] - g0) < 40 && Math.abs(d[x * 4 + 2] - b0) < 40 && d[x * 4 + 3] > 100) n++;
    return n;
  }, [y, R, G, B]);
}

async function shot(name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, name), fullPage: true });
}

test('timeline with cp=1: legend, outlined segments, details line, URL, toggle off', async () => {
  const id = await runIdOf(srv, 'matmul_fp32_strict');
  const api = await (await srv.req(`/api/runs/${id}/critpath?rank=0`)).json();
  assert.ok(api.segments.length > 0, 'the run has a stored critical path');
  try {
    await page.goto(`${srv.base}/?run=${id}&view=timeline&cp=1`);
    await page.waitForSelector('.tb-tl-label[data-kind="gpu"]');
    await timelineLoaded();
    const btn = page.locator('button:has-text("Critical path")');
    assert.equal(await btn.getAttribute('aria-pressed'), 'true', 'cp=1 turns the toggle on');
    const legend = page.locator('[data-cp-legend]');
    assert.ok(await legend.isVisible(), 'legend shown');
    const text = await legend.textContent();
    for (const l of ['CPU', 'Data loading', 'GPU compute', 'Communication', 'Launch overhead', 'Kernel gap'])
      assert.ok(text.includes(l), `legend names ${l}`);
    await page.waitForFunction(() => Number(document.querySelector('.tb-tl-plot')?.dataset.cpSegments || 0) > 0, null, { timeout: 10000 });
    const drawn = Number(await page.getAttribute('.tb-tl-plot', 'data-cp-segments'));
    assert.ok(drawn > 0, `segments drawn: ${drawn}`);
    // a GPU-bound run: its kernels are outlined in the GPU-compute green on the stream's lane
    const gpuBox = await page.locator('.tb-tl-label[data-kind="gpu"]').boundingBox();
    let green = 0;
    for (let dy = 1; dy < gpuBox.height; dy += 2) green += await overlayPixels(gpuBox.y + dy, [0x04, 0x78, 0x57]);
    assert.ok(green > 20, `GPU compute outlines on the GPU lane (${green} px)`);
    await shot('critpath.png');

    // the view's own URL writes keep cp=1
    await page.focus('.tb-tl-plot');
    for (let i = 0; i < 3; i++) await page.keyboard.press('w');
    await page.waitForURL(/start=[\d.]+&end=[\d.]+.*cp=1|cp=1.*start=/);
    await timelineLoaded();
    await page.waitForFunction(() => Number(document.querySelector('.tb-tl-plot')?.dataset.cpSegments || 0) > 0);

    // a kernel on the path says so in its details (depth 1 of the GPU lane holds kernels)
    let note = null;
    for (let i = 0; i < 10 && !note; i++) {
      const box = await page.locator('.tb-tl-label[data-kind="gpu"]').boundingBox();
      const y = box.y + 3 + 18 + 9;
      const xs = await page.$eval('.tb-tl-lanes canvas', (c, yy) => {
        const r = c.getBoundingClientRect();
        const dpr = c.width / r.width;
        const d = c.getContext('2d').getImageData(0, Math.round((yy - r.top) * dpr), c.width, 1).data;
        const out = [];
        for (let x = 0; x < c.width; x++) if (d[x * 4] + d[x * 4 + 1] + d[x * 4 + 2] < 600) out.push(r.left + x / dpr);
        return out;
      }, y);
      assert.ok(xs.length > 0, 'kernels in view');
      await page.mouse.click(xs[Math.floor((xs.length * (i + 1)) / 12)], y);
      await page.waitForTimeout(600);
      note = await page.$('.tb-tl-details [data-cp-note]');
      if (!note) await timelineLoaded();
    }
    assert.ok(note, 'a selected kernel on the path is marked');
    assert.match(await note.textContent(), /^On the critical path \((gpu_compute|kernel_gap|launch_overhead)\)$/);
    await shot('critpath-kernel.png');

    // off: legend hidden, nothing drawn, cp gone from the address
    await btn.click();
    assert.equal(await btn.getAttribute('aria-pressed'), 'false');
    assert.ok(!(await legend.isVisible()), 'legend hidden');
    await page.waitForFunction(() => !new URL(location.href).searchParams.has('cp'));
    assert.equal(await page.$('.tb-tl-details [data-cp-note]'), null, 'details line removed');
    assert.deepEqual(errors, [], 'no page errors');
  } catch (e) {
    await shot('critpath-failed.png');
    if (errors.length) e.message += '\npage errors: ' + errors.join('\n');
    throw e;
  }
});
