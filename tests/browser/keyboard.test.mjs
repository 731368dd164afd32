// Keyboard use of every page (issue 21): Tab walks through each page, every
// element it stops on shows a visible focus ring (an outline or a ring
// shadow, in the light and the dark theme), and the walk reaches the
// page's main controls (tabs, sortable headers, buttons, tick boxes, the
// timeline's controls); a dialog takes the focus and Escape closes it.
// Demo runs of tests/data/demo.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, startDemo } from './lib.mjs';

let session, srv, page, errors, runId, ddpId, otherId;

before(async () => {
  session = await startDemo();
  ({ srv, page, errors } = session);
  ({ matmul_amp: runId, ddp_gloo_4ranks: ddpId, matmul_fp32_strict: otherId } = session.ids);
});

after(async () => { await session?.close(); });

/** What has the focus: a short description, and whether a ring shows. */
function focused() {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const cs = getComputedStyle(el);
    const outline = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1 && cs.outlineColor !== 'rgba(0, 0, 0, 0)';
    const ring = cs.boxShadow !== 'none' && /\d+px/.test(cs.boxShadow);
    const r = el.getBoundingClientRect();
    const label = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('placeholder') || el.getAttribute('type') || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return {
      desc: `${el.tagName.toLowerCase()}${el.getAttribute('type') ? `[${el.getAttribute('type')}]` : ''} "${label}"`,
      visible: outline || ring,
      onScreen: r.width > 0 && r.height > 0,
      sort: !!el.closest('th') && el.tagName === 'BUTTON',
      tab: el.closest('nav[aria-label="Run views"]') !== null,
    };
  });
}

/** Presses Tab up to n times from the top of the page; every stop is checked. */
async function walk(where, n) {
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  await page.focus('body');
  const stops = [];
  for (let i = 0; i < n; i++) {
    await page.keyboard.press('Tab');
    const f = await focused();
    if (!f) continue;
    stops.push(f);
    assert.ok(f.visible, `${where}: focus on ${f.desc} is visible`);
  }
  return stops;
}

const has = (stops, re) => stops.some((s) => re.test(s.desc));

for (const scheme of ['light', 'dark']) {
  test(`Tab reaches the main controls of every page with a visible focus (${scheme})`, async () => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1400, height: 900 });

    await page.goto(srv.base + '/');
    await page.waitForSelector('text=matmul_amp');
    let s = await walk('runs', 40);
    assert.ok(has(s, /Dark theme|Light theme/), 'runs: the theme toggle');
    assert.ok(has(s, /Choose files/), 'runs: the upload button');
    assert.ok(has(s, /input\[checkbox\]/), 'runs: the compare tick boxes');
    assert.ok(has(s, /^a "matmul/), 'runs: a run link');

    await page.goto(`${srv.base}/?run=${runId}&view=kernels`);
    await page.waitForSelector('table[aria-label] tbody tr');
    s = await walk('kernels', 40);
    assert.ok(s.some((x) => x.tab), 'kernels: the run tabs');
    assert.ok(s.some((x) => x.sort), 'kernels: a sortable header');
    assert.ok(has(s, /^input/), 'kernels: the filter');

    await page.goto(`${srv.base}/?run=${runId}`);
    await page.waitForSelector('[aria-label="Step time breakdown"]');
    s = await walk('overview', 40);
    assert.ok(s.some((x) => x.tab), 'overview: the run tabs');
    assert.ok(has(s, /Top finding|^a "/), 'overview: links');

    await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
    await page.waitForSelector('.tb-tl-plot[data-loaded]', { timeout: 20000 });
    s = await walk('timeline', 40);
    assert.ok(has(s, /Search slices|input\[search\]/), 'timeline: the search box');
    assert.ok(has(s, /Whole run/), 'timeline: the Whole run button');
    assert.ok(has(s, /Critical path/), 'timeline: the critical-path toggle');
    assert.ok(has(s, /div "Timeline: W\/S zoom/), 'timeline: the lanes themselves (keys)');
    await page.screenshot({ path: join(SHOTS, `keyboard-timeline-${scheme}.png`) });

    await page.goto(`${srv.base}/?run=${ddpId}&view=ranks`);
    await page.waitForSelector('table');
    s = await walk('ranks', 30);
    assert.ok(has(s, /^select/), 'ranks: the rank picker');

    await page.goto(`${srv.base}/?compare=${runId},${otherId}`);
    await page.waitForSelector('table');
    s = await walk('compare', 30);
    assert.ok(has(s, /^button|^select|^a /), 'compare: its controls');
    assert.deepEqual(errors, []);
  });
}

test('a dialog takes the focus, shows it, and Escape closes it', async () => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${srv.base}/`);
  await page.waitForSelector('text=matmul_amp');
  await page.focus('button[title="Delete this run"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('dialog[open]');
  assert.ok(await page.evaluate(() => !!document.activeElement.closest('dialog')), 'the focus is inside the dialog');
  await page.keyboard.press('Tab');
  const g = await focused();
  assert.ok(g && g.visible, `the focus in the dialog shows: ${g && g.desc}`);
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog', { state: 'detached' });
  assert.ok(await page.isVisible('text=matmul_amp'), 'Escape cancels: the run is still there');
});
