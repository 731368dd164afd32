// lib.mjs — what the browser tests share: the real server (started by
// tests/integration/lib.mjs) and Debian's chromium ($CHROMIUM, default
// /usr/bin/chromium) driven by playwright-core, with one page whose script
// errors, console errors and dialogs are collected. Screenshots go to
// $TB_SCREENSHOTS (default build/screenshots).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startServer } from '../integration/lib.mjs';

const require = createRequire(resolve('tests/package.json'));
const { chromium } = require('playwright-core');

export const SHOTS = process.env.TB_SCREENSHOTS || resolve('build/screenshots');
mkdirSync(SHOTS, { recursive: true });

/** Starts a server (opts as startServer's) and chromium with one 1400×900
 * page. errors collects, as text, the page's uncaught exceptions, console
 * errors and dialogs ("dialog: " + message; each is dismissed). close()
 * ends the browser and the server and removes its data folder. */
export async function startBrowser(serverOpts = {}) {
  const srv = await startServer(serverOpts);
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run', '--disable-quic'],
    });
  } catch (e) {
    await srv.stop();
    srv.cleanup();
    throw e;
  }
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
  return {
    srv, browser, page, errors,
    async close() {
      try {
        await browser.close();
      } finally {
        await srv.stop();
        srv.cleanup();
      }
    },
  };
}

/** The id of the first run with this name. */
export async function runIdOf(srv, name) {
  const r = await (await srv.req('/api/runs')).json();
  const run = r.runs.find((x) => x.name === name);
  assert.ok(run, `run ${name} exists`);
  return run.id;
}

/** startBrowser() on the demo runs of tests/data/demo (args: more server
 * flags), logged in and on the runs list; ids maps each run's name to its id. */
export async function startDemo(args = []) {
  const session = await startBrowser({ args: [...args, '--demo', resolve('tests/data/demo')] });
  await session.page.goto(session.srv.url);
  await session.page.waitForSelector('text=matmul_amp');
  const runs = (await (await session.srv.req('/api/runs')).json()).runs;
  return { ...session, ids: Object.fromEntries(runs.map((r) => [r.name, r.id])) };
}
