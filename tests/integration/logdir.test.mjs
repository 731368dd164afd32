// --logdir: new trace folders become runs (all rank files of a folder in one
// run), each once, also across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, copyFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { startServer, demoFiles } from './lib.mjs';

async function runsOf(srv) {
  return (await (await srv.req('/api/runs')).json()).runs;
}

async function waitFor(fn, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a folder of rank files dropped into --logdir becomes one run, once', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-logdir-'));
  const logdir = join(work, 'runs');
  const dataDir = join(work, 'data');
  mkdirSync(logdir);
  const job = join(logdir, 'job42');
  mkdirSync(job);
  const old = new Date(Date.now() - 60000); // "finished writing" a minute ago
  for (const f of demoFiles('ddp_gloo_4ranks')) {
    const dst = join(job, basename(f));
    copyFileSync(f, dst);
    utimesSync(dst, old, old);
  }
  let srv = await startServer({ dataDir, args: ['--logdir', logdir, '--logdir-interval', '1'] });
  try {
    const runs = await waitFor(async () => { const r = await runsOf(srv); return r.length ? r : null; });
    assert.ok(runs, 'the folder was imported');
    assert.equal(runs.length, 1);
    assert.equal(runs[0].name, 'job42');
    assert.equal(runs[0].ranks, 4);
    await new Promise((r) => setTimeout(r, 2500)); // two more scans
    assert.equal((await runsOf(srv)).length, 1, 'not imported twice');
    await srv.stop();
    srv = await startServer({ dataDir, args: ['--logdir', logdir, '--logdir-interval', '1'] });
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal((await runsOf(srv)).length, 1, 'a restart does not import it again');
  } finally {
    await srv.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
