// Early visibility (issue 16): a run opens as soon as its raw tables are
// committed and its derived pages fill in as their stages finish. The
// derive_hold config key (tests only) keeps the derived stages waiting while
// a file exists, so the window is observed deterministically: meanwhile the
// run is listed as "deriving", its info answers, every derived page answers
// 503 "computing" naming its stage, and it cannot be deleted or renumbered.
// Released, every answer is either "computing" or the final one (nothing
// half-written is served), on a real trace. A kill -9 mid-derive leaves no
// run behind after a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, existsSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { SHARED, HAVE_SQLITE, startServer } from './lib.mjs';

const DL = join(SHARED, 'traces', 'dataloader_workers0');
const DDP = join(SHARED, 'traces', 'ddp_gloo_4ranks');
const skip = (!existsSync(DL) || !existsSync(DDP)) && 'no ../shared traces';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const gz = (dir) => readdirSync(dir).filter((f) => f.endsWith('.gz')).sort().map((f) => join(dir, f));

// what each derived page waits for (rundb_stage.h, ingest.c derive_stages);
// the overview needs the rules too, and names the first stage it lacks
const PAGES = {
  '/overview': 'summary',
  '/operators': 'summary',
  '/kernels': 'summary',
  '/memory': 'summary',
  '/ranks': 'summary',
  '/timeline/tracks': 'timeline',
  '/analyses': 'analyses',
};

/** Uploads files as one async job; returns its job id. */
async function submit(srv, files, name) {
  const fd = new FormData();
  fd.append('name', name);
  for (const f of files) fd.append('file', new Blob([readFileSync(f)]), basename(f));
  const r = await srv.req('/api/runs?async=1', { method: 'POST', body: fd });
  assert.equal(r.status, 202);
  return (await r.json()).job;
}

/** Polls the job until pred(job) holds (or it ends). */
async function jobUntil(srv, id, pred) {
  for (let i = 0; i < 3000; i++) {
    const j = await srv.json(`/api/jobs/${id}`);
    if (pred(j) || j.state === 'done' || j.state === 'failed') return j;
    await sleep(20);
  }
  throw new Error(`job ${id} never got there`);
}

/** Runs fn(ctx) with ctx = {srv, hold, dataDir} on a server whose derived
 * stages wait while the file hold exists (created first when held); the
 * hold goes before the server (ctx.srv, which fn may replace) stops: a held
 * derive would keep it from stopping. */
async function withServer(held, fn) {
  const work = mkdtempSync(join(tmpdir(), 'tb-early-'));
  const ctx = { hold: join(work, 'hold'), dataDir: join(work, 'data'), srv: null };
  if (held) writeFileSync(ctx.hold, '');
  ctx.srv = await startServer({ dataDir: ctx.dataDir, args: ['--derive-hold', ctx.hold] });
  try {
    await fn(ctx);
  } finally {
    rmSync(ctx.hold, { force: true });
    await ctx.srv.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

test('a deriving run opens at once, its pages say computing, it is not deleted or renumbered', { skip, timeout: 120000 }, () => withServer(true, async ({ srv, hold }) => {
  const job = await submit(srv, gz(DDP), 'early');
  const j = await jobUntil(srv, job, (x) => x.run_id);
  assert.equal(j.state, 'running', JSON.stringify(j));
  assert.equal(j.phase, 'analyze');
  const id = j.run_id;
  for (const s of ['parse', 'index', 'commit']) {
    const st = j.stages.find((x) => x.name === s);
    assert.ok(st && st.state === 'done' && st.seconds >= 0, `job stage ${s}: ${JSON.stringify(j.stages)}`);
  }
  // the files are read: the time left is the tail after the reading, at least a second while it runs
  assert.equal(typeof j.eta_s, 'number', JSON.stringify(j));
  assert.ok(j.eta_s >= 1, `eta_s ${j.eta_s}`);

  const run = await srv.json(`/api/runs/${id}`);
  assert.equal(run.status, 'deriving');
  assert.equal(run.info.ranks.length, 4, 'run info is there while it derives');
  assert.deepEqual(run.stages.map((s) => [s.name, s.state]),
    [['summary', 'pending'], ['analyses', 'pending'], ['rules', 'pending'], ['timeline', 'pending']]);
  const listed = (await srv.json('/api/runs')).runs.find((r) => r.id === id);
  assert.equal(listed.status, 'deriving');

  for (const [page, stage] of Object.entries(PAGES)) {
    const r = await srv.req(`/api/runs/${id}${page}`);
    const body = await r.json();
    assert.equal(r.status, 503, `${page}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, 'computing', page);
    assert.match(body.error.message, new RegExp(`waiting for the ${stage} stage: 0 of 4 stages done`), page);
  }
  const diff = await srv.req(`/api/diff?a=${id}&b=${id}`);
  assert.equal(diff.status, 503);
  // the N-way compare reads the same figures: the deriving run (named first) is refused before the other is looked up
  const cmp = await srv.req(`/api/compare?runs=${id},0000000000000000`);
  assert.equal(cmp.status, 503);
  assert.equal((await cmp.json()).error.code, 'computing');

  const del = await srv.req(`/api/runs/${id}`, { method: 'DELETE' });
  assert.equal(del.status, 409);
  const ren = await srv.req(`/api/runs/${id}`, {
    method: 'PATCH', body: JSON.stringify({ ranks: { 0: 3, 3: 0 } }), headers: { 'Content-Type': 'application/json' },
  });
  assert.equal(ren.status, 409, await ren.text());
  assert.equal((await srv.json(`/api/runs/${id}`)).status, 'deriving');

  rmSync(hold);
  const done = await jobUntil(srv, job, () => false);
  assert.equal(done.state, 'done', JSON.stringify(done));
  assert.equal(done.run_id, id);
  assert.equal(done.eta_s, undefined, 'a finished job has no time left');
  for (const s of ['summary', 'analyses', 'rules', 'timeline']) {
    const st = done.stages.find((x) => x.name === s);
    assert.ok(st && st.state === 'done', `job stage ${s}: ${JSON.stringify(done.stages)}`);
  }
  const after = await srv.json(`/api/runs/${id}`);
  assert.equal(after.status, 'ready');
  assert.ok(after.stages.every((s) => s.state === 'done' && s.seconds >= 0), JSON.stringify(after.stages));
  for (const page of Object.keys(PAGES)) await srv.json(`/api/runs/${id}${page}`);
  assert.equal((await srv.req(`/api/runs/${id}`, { method: 'DELETE' })).status, 204);
}));

test('while a real trace derives, every page answers computing or its final answer', { skip, timeout: 180000 }, () => withServer(true, async ({ srv, hold }) => {
  const job = await submit(srv, gz(DL), 'early-real');
  const id = (await jobUntil(srv, job, (x) => x.run_id)).run_id;
  rmSync(hold);
  /** @type {Record<string, string[]>} every 200 answer of each page while it derived */
  const seen = Object.fromEntries(Object.keys(PAGES).map((p) => [p, []]));
  const order = [];
  for (;;) {
    const j = await srv.json(`/api/jobs/${job}`);
    for (const page of Object.keys(PAGES)) {
      const r = await srv.req(`/api/runs/${id}${page}`);
      const text = await r.text();
      if (r.status === 200) {
        seen[page].push(text);
        if (!order.includes(page)) order.push(page);
      } else {
        assert.equal(r.status, 503, `${page}: ${text}`);
        assert.equal(JSON.parse(text).error.code, 'computing', page);
      }
    }
    if (j.state !== 'running') {
      assert.equal(j.state, 'done', JSON.stringify(j));
      break;
    }
  }
  for (const page of Object.keys(PAGES)) {
    const final = await srv.text(`/api/runs/${id}${page}`);
    for (const t of seen[page]) assert.equal(t, final, `${page} answered before its stage ended differs from the final answer`);
  }
  console.log(`# pages answered in the order: ${order.join(', ')}`);
}));

test('kill -9 while a run derives: after a restart the run is gone, folder and row', { skip, timeout: 120000 }, () => withServer(false, async (ctx) => {
  const { hold, dataDir } = ctx;
  const keptId = await ctx.srv.upload(gz(DDP).slice(0, 1), 'kept');
  writeFileSync(hold, '');
  const job = await submit(ctx.srv, gz(DDP), 'cut');
  const id = (await jobUntil(ctx.srv, job, (x) => x.run_id)).run_id;
  assert.ok(existsSync(join(dataDir, 'runs', id)));
  ctx.srv.child.kill('SIGKILL');
  await new Promise((r) => ctx.srv.child.once('exit', r));
  rmSync(hold);
  ctx.srv = await startServer({ dataDir });
  const srv = ctx.srv;
  const runs = (await srv.json('/api/runs')).runs;
  assert.deepEqual(runs.map((r) => [r.id, r.status]).filter(([r]) => r !== keptId), [], 'the cut-off run is listed');
  assert.ok(runs.some((r) => r.id === keptId && r.status === 'ready'), 'the kept run is gone');
  assert.equal((await srv.req(`/api/runs/${id}`)).status, 404);
  assert.ok(!existsSync(join(dataDir, 'runs', id)), 'the cut-off run folder is left');
  await srv.json(`/api/runs/${keptId}/overview`);
}));

test('a run stored before its stages were listed is served whole and can be renumbered', { skip: skip || (!HAVE_SQLITE && 'no sqlite3 CLI'), timeout: 120000 }, () => withServer(false, async ({ srv }) => {
  const id = await srv.upload(gz(DDP), 'old');
  srv.sql(id, 'DROP TABLE derive_stage');
  assert.equal((await srv.json(`/api/runs/${id}`)).stages, null);
  for (const page of Object.keys(PAGES)) await srv.json(`/api/runs/${id}${page}`);
  const r = await srv.req(`/api/runs/${id}`, {
    method: 'PATCH', body: JSON.stringify({ ranks: { 0: 3, 3: 0 } }), headers: { 'Content-Type': 'application/json' },
  });
  assert.equal(r.status, 200, await r.text());
  assert.ok((await srv.json(`/api/runs/${id}`)).stages.every((s) => s.state === 'done'));
  await srv.json(`/api/runs/${id}/overview?rank=3`);
}));
