// Browser tests of the light and dark themes (web/js/theme.js,
// web/theme-boot.js, the custom properties of web/css/app.css): the system's
// preference is followed, an explicit choice wins and is remembered, the
// theme is set before any module runs (no flash of the other one), and body
// text keeps a WCAG AA contrast (>= 4.5:1) against what lies behind it on the
// main pages and on the canvases, in both themes. Demo runs of
// tests/data/demo; screenshots theme-*.png go to $TB_SCREENSHOTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, startDemo } from './lib.mjs';

let session, srv, page, errors, runId, ddpId;

before(async () => {
  session = await startDemo();
  ({ srv, page, errors } = session);
  runId = session.ids.matmul_amp;
  ddpId = session.ids.ddp_gloo_4ranks;
});

after(async () => { await session?.close(); });

const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
const saved = () => page.evaluate(() => localStorage.getItem('tb-theme'));

/** Contrast ratio of two CSS colours (WCAG 2), computed in the page. The
 * background of a text is the first ancestor's opaque enough background,
 * composited over the page's. Returns [{sel, text, ratio, fg, bg}]. */
function contrasts(selectors) {
  return page.evaluate((sels) => {
    const parse = (c) => {
      const m = /rgba?\(([^)]+)\)/.exec(c);
      if (!m) return null;
      const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    };
    const over = (top, under) => ({
      r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1,
    });
    const lum = (c) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const pageBg = parse(getComputedStyle(document.body).backgroundColor);
    const bgOf = (el) => {
      const layers = [];
      for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c && c.a > 0) layers.push(c);
        if (c && c.a >= 0.95) break;
      }
      return layers.reverse().reduce((acc, c) => over(c, acc), pageBg);
    };
    const out = [];
    for (const sel of sels) {
      const els = [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length && (e.textContent || '').trim()).slice(0, 3);
      for (const el of els) {
        const fg0 = parse(getComputedStyle(el).color);
        const bg = bgOf(el);
        const fg = over(fg0, bg);
        const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        out.push({ sel, text: el.textContent.trim().slice(0, 30), ratio: (a + 0.05) / (b + 0.05), fg: getComputedStyle(el).color, bg: `rgb(${bg.r | 0}, ${bg.g | 0}, ${bg.b | 0})` });
      }
    }
    return out;
  }, selectors);
}

/** Every selector present has contrast >= 4.5; at least `min` were measured. */
async function checkContrast(where, selectors, min) {
  const got = await contrasts(selectors);
  assert.ok(got.length >= min, `${where}: ${got.length} texts measured (${[...new Set(got.map((g) => g.sel))].join(' ')})`);
  const low = got.filter((g) => g.ratio < 4.5);
  assert.deepEqual(low.map((g) => `${g.sel} "${g.text}" ${g.fg} on ${g.bg}: ${g.ratio.toFixed(2)}`), [], `${where}: contrast >= 4.5:1`);
}

const PAGES = [
  { name: 'runs', url: () => '/', wait: 'text=matmul_amp', sels: ['.tb-main h1', 'td', 'th', 'a', '.tb-muted', '.tb-btn', '.tb-theme-toggle', '.tb-nav-link'] },
  { name: 'overview', url: () => `/?run=${runId}`, wait: '[aria-label="Step time breakdown"]',
    sels: ['.tb-stat-label', '.tb-stat-value', '.tb-stat dd', '.tb-tab', '.tb-tab-active', '.tb-rec p', '.tb-rec li', '.tb-badge', 'td', 'th', 'code', '.tb-metric-label', '.tb-card-title'] },
  { name: 'kernels', url: () => `/?run=${runId}&view=kernels`, wait: 'table[aria-label] tbody tr', sels: ['td', 'th button', '.tb-muted', '.tb-input', 'label'] },
  { name: 'analyses', url: () => `/?run=${runId}&view=analyses`, wait: 'section#an-critpath', sels: ['.tb-axis', 'td', 'th', 'p', '.tb-legend li', 'a'] },
  { name: 'ranks', url: () => `/?run=${ddpId}&view=ranks`, wait: 'table', sels: ['td', 'th', 'p', '.tb-axis'] },
];

for (const scheme of ['light', 'dark']) {
  test(`${scheme} theme: body text keeps >= 4.5:1 contrast on every main page`, async () => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.evaluate(() => localStorage.removeItem('tb-theme'));
    for (const p of PAGES) {
      await page.goto(srv.base + p.url());
      await page.waitForSelector(p.wait, { timeout: 20000 });
      assert.equal(await theme(), scheme, `${p.name}: the system's ${scheme} preference is followed`);
      await checkContrast(`${p.name} (${scheme})`, p.sels, 8);
      await page.screenshot({ path: join(SHOTS, `theme-${p.name}-${scheme}.png`) });
    }
  });

  test(`${scheme} theme: the timeline canvas takes the theme's colours`, async () => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.evaluate(() => localStorage.removeItem('tb-theme'));
    await page.goto(`${srv.base}/?run=${runId}&view=timeline`);
    await page.waitForSelector('.tb-tl-plot[data-loaded]', { timeout: 20000 });
    // the same module instance the tab draws with (same URL)
    const col = await page.evaluate(async () => ({ ...(await import(new URL('js/timeline/colours.js', document.baseURI).href)).COL }));
    const lum = await page.evaluate((c) => {
      const ctx = document.createElement('canvas').getContext('2d');
      const rgb = (s) => { ctx.fillStyle = '#000'; ctx.fillStyle = s; ctx.fillRect(0, 0, 1, 1); const d = ctx.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2]]; };
      const L = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
      return { bg: L(rgb(c.bg)), text: L(rgb(c.text)), muted: L(rgb(c.muted)) };
    }, col);
    const ratio = (a, b) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (scheme === 'dark') assert.ok(lum.bg < 0.05, `dark lanes (${col.bg})`);
    else assert.ok(lum.bg > 0.9, `light lanes (${col.bg})`);
    assert.ok(ratio(lum.text, lum.bg) >= 4.5, `lane text ${col.text} on ${col.bg}`);
    assert.ok(ratio(lum.muted, lum.bg) >= 4.5, `ruler text ${col.muted} on ${col.bg}`);
    // the drawn canvas really has that background
    const px = await page.$eval('.tb-tl-lanes canvas', (c) => [...c.getContext('2d').getImageData(c.width - 3, c.height - 3, 1, 1).data]);
    const L = (v) => v.slice(0, 3).reduce((a, x) => a + x, 0) / 3;
    assert.ok(scheme === 'dark' ? L(px) < 80 : L(px) > 200, `lanes painted ${scheme}: ${px}`);
    await page.screenshot({ path: join(SHOTS, `theme-timeline-${scheme}.png`) });
  });
}

test('the toggle switches the theme, is remembered, and wins over the system', async () => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.evaluate(() => localStorage.removeItem('tb-theme'));
  await page.goto(`${srv.base}/?run=${runId}`);
  await page.waitForSelector('.tb-theme-toggle');
  assert.equal(await theme(), 'light');
  const bgLight = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.click('.tb-theme-toggle');
  assert.equal(await theme(), 'dark');
  assert.equal(await saved(), 'dark');
  assert.equal(await page.getAttribute('.tb-theme-toggle', 'aria-pressed'), 'true');
  assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), bgLight, 'the page repaints dark');
  await page.reload();
  await page.waitForSelector('.tb-theme-toggle');
  assert.equal(await theme(), 'dark', 'the choice survives a reload');
  // the system says dark: an explicit light choice still wins
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.click('.tb-theme-toggle');
  assert.equal(await theme(), 'light');
  await page.reload();
  await page.waitForSelector('.tb-theme-toggle');
  assert.equal(await theme(), 'light', 'explicit light beats a dark system');
  // no choice: the page follows the system as it changes
  await page.evaluate(() => localStorage.removeItem('tb-theme'));
  await page.reload();
  await page.waitForSelector('.tb-theme-toggle');
  assert.equal(await theme(), 'dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
  assert.deepEqual(errors, []);
});

test('the saved theme is set before any module runs (no flash of the other theme)', async () => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.evaluate(() => localStorage.setItem('tb-theme', 'dark'));
  // with the modules refused, only the classic boot script in <head> can set it
  await page.route('**/js/app.js', (r) => r.abort());
  try {
    await page.goto(`${srv.base}/`);
    await page.waitForLoadState('load');
    assert.equal(await theme(), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, b] = bg.match(/\d+/g).map(Number);
    assert.ok(r + g + b < 150, `the first paint is dark: ${bg}`);
  } finally {
    await page.unroute('**/js/app.js');
    await page.evaluate(() => localStorage.removeItem('tb-theme'));
  }
});
