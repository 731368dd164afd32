// Issue 15, fault 4: a server started on a data folder it cannot write (a
// read-only folder, a full disk) starts anyway and serves the runs it has,
// read-only: /api/health says so and why, and every write (upload, delete,
// rename, --logdir import) answers 503 {"error": {"code": "read_only"}} with
// the reason, and nothing in the folder changes. A full disk leaves no
// stray catalog.db-shm behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, copyFileSync, readFileSync, existsSync, rmSync, cpSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { startServer, demoFiles } from './lib.mjs';
import { readOnlyView, smallDisk, listing, CAN_MOUNT } from './rofs.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts a server on a fresh folder, stores the run(s), stops it (kill -9
 * when crash: the catalog's WAL then still holds the rows). Returns
 * {dataDir, ids, overviews}. */
async function seed(dataDir, { crash = false } = {}) {
  const srv = await startServer({ dataDir });
  const ids = [await srv.uploadBody(readFileSync(demoFiles('matmul_amp')[0]), basename(demoFiles('matmul_amp')[0]), 'kept')];
  ids.push(await srv.upload(demoFiles('ddp_gloo_4ranks').slice(0, 2), 'two ranks'));
  const overviews = {};
  for (const id of ids) overviews[id] = JSON.stringify(await srv.json(`/api/runs/${id}/overview`));
  if (crash) {
    await new Promise((r) => { srv.child.once('exit', r); srv.child.kill('SIGKILL'); });
    assert.ok(existsSync(join(dataDir, 'catalog.db-wal')), 'a kill -9 leaves the WAL');
  } else {
    await srv.stop();
  }
  return { ids, overviews };
}

/** What a read-only server must do: serve every stored run as before, say
 * read-only (reason matching `why`) and refuse each write with it. */
async function checkReadOnly(srv, ids, overviews, why) {
  const h = await srv.json('/api/health');
  assert.equal(h.read_only, true, JSON.stringify(h));
  assert.match(h.reason, why);
  const runs = (await srv.json('/api/runs')).runs;
  assert.deepEqual(runs.map((r) => r.id).sort(), [...ids].sort());
  for (const id of ids) {
    assert.equal(JSON.stringify(await srv.json(`/api/runs/${id}/overview`)), overviews[id]);
    assert.ok((await srv.json(`/api/runs/${id}`)).info.ranks.length >= 1);
    await srv.json(`/api/runs/${id}/timeline/tracks`);
    await srv.json(`/api/runs/${id}/kernels`);
    await srv.json(`/api/runs/${id}/analyses`);
  }
  const refused = async (r, what) => {
    const text = await r.text();
    assert.equal(r.status, 503, `${what}: ${text}`);
    const j = JSON.parse(text);
    assert.equal(j.error.code, 'read_only', what);
    assert.match(j.error.message, why, what);
    console.log(`# ${what}: ${r.status} ${text}`);
  };
  const [f] = demoFiles('matmul_fp32_strict');
  await refused(await srv.req(`/api/runs?filename=${basename(f)}`, { method: 'POST', body: readFileSync(f) }), 'upload');
  await refused(await srv.req(`/api/runs?async=1&filename=${basename(f)}`, { method: 'POST', body: readFileSync(f) }), 'async upload');
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(f)]), basename(f));
  await refused(await srv.req('/api/runs', { method: 'POST', body: fd }), 'multipart upload');
  await refused(await srv.req(`/api/runs/${ids[0]}`, { method: 'DELETE' }), 'delete');
  await refused(await srv.req(`/api/runs/${ids[0]}`, { method: 'PATCH', body: '{"name":"renamed"}' }), 'rename');
  await refused(await srv.req(`/api/runs/${ids[1]}`, { method: 'PATCH', body: '{"ranks":{"0":1,"1":0}}' }), 'renumber');
  assert.deepEqual((await srv.json('/api/runs')).runs.map((r) => r.id).sort(), [...ids].sort());
  assert.equal(srv.child.exitCode, null, 'server died');
}

for (const crash of [false, true]) {
  test(`read-only data folder${crash ? ' after a kill -9 (rows still in the WAL)' : ''}: serves its runs, refuses writes with read_only`, async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'tb-ro-'));
    const dataDir = join(work, 'data');
    const { ids, overviews } = await seed(dataDir, { crash });
    const ro = readOnlyView(dataDir);
    if (!ro) { t.skip('root without mount: cannot make a read-only folder'); rmSync(work, { recursive: true, force: true }); return; }
    // a --logdir with a new trace: not imported while read-only
    const logdir = join(work, 'logdir');
    mkdirSync(join(logdir, 'job'), { recursive: true });
    copyFileSync(demoFiles('matmul_fp32_strict')[0], join(logdir, 'job', basename(demoFiles('matmul_fp32_strict')[0])));
    const before = listing(ro.dir);
    let srv;
    try {
      srv = await startServer({ dataDir: ro.dir, args: ['--logdir', logdir, '--logdir-interval', '1'] });
      await checkReadOnly(srv, ids, overviews, /read-only/);
      await sleep(1500);
      assert.equal((await srv.json('/api/runs')).runs.length, ids.length, 'the logdir was imported');
      assert.deepEqual(listing(ro.dir), before, 'the read-only folder changed');
    } finally {
      await srv?.stop();
      ro.undo();
      rmSync(work, { recursive: true, force: true });
    }
  });
}

test('full disk at start: serves its runs read-only, refuses writes, leaves no stray -shm', async (t) => {
  if (!CAN_MOUNT) { t.skip('a full disk needs mount (root)'); return; }
  const disk = smallDisk('32m');
  try {
    const dataDir = join(disk.dir, 'data');
    const fresh = join(disk.dir, 'fresh'); // never started: no catalog yet
    mkdirSync(fresh);
    const { ids, overviews } = await seed(dataDir);
    disk.fill();
    let srv = await startServer({ dataDir });
    try {
      await checkReadOnly(srv, ids, overviews, /disk .*is full/);
    } finally {
      await srv.stop();
    }
    for (const [p] of listing(dataDir)) assert.ok(!p.endsWith('-shm') || statSync(join(dataDir, p)).size > 3, `stray ${p}`);
    assert.ok(!existsSync(join(dataDir, 'catalog.db-shm')), 'catalog.db-shm left behind');
    srv = await startServer({ dataDir: fresh });
    try {
      const h = await srv.json('/api/health');
      assert.equal(h.read_only, true);
      assert.match(h.reason, /disk .*is full/);
      assert.deepEqual((await srv.json('/api/runs')).runs, []);
    } finally {
      await srv.stop();
    }
    assert.ok(!existsSync(join(fresh, 'catalog.db-shm')), 'catalog.db-shm left behind');
    // once there is room again, a restart is writable
    rmSync(join(disk.dir, 'filler'));
    srv = await startServer({ dataDir });
    try {
      const h = await srv.json('/api/health');
      assert.equal(h.read_only, false);
      const [f] = demoFiles('matmul_fp32_strict');
      await srv.uploadBody(readFileSync(f), basename(f), 'after');
    } finally {
      await srv.stop();
    }
  } finally {
    disk.undo();
  }
});

test('a writable data folder reports read_only false', async () => {
  const srv = await startServer();
  try {
    const h = await srv.json('/api/health');
    assert.equal(h.read_only, false);
    assert.equal(h.ok, true);
  } finally {
    await srv.stop();
    srv.cleanup();
  }
});
