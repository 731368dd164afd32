// Renumbering a run's ranks (PATCH /api/runs/{id} {"ranks": …}) is one
// atomic step (issue 15, fault 2): the renumbered run is built beside the old
// one and swapped in, so a kill -9 at any point, a full disk or a reader
// polling meanwhile sees the whole old run or the whole new one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, existsSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { SHARED, startServer, serveArgs, attachServer, BIN } from './lib.mjs';
import { startServerSpawned } from './spawnlib.mjs';

const DL = join(SHARED, 'traces', 'dataloader_workers0');
const skip = !existsSync(DL) && 'no ../shared traces';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function dlFile() {
  return readdirSync(DL).filter((f) => f.endsWith('.gz')).map((f) => join(DL, f))[0];
}

function patch(srv, id, body) {
  return srv.req(`/api/runs/${id}`, {
    method: 'PATCH', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' },
  });
}

/** A data folder holding the 95 MB dataloader_workers0 trace as one rank-0
 * run; returns {dataDir, id}. The server that imported it is stopped. */
async function importedRun(work) {
  const dataDir = join(work, 'template');
  const srv = await startServer({ dataDir });
  try {
    const id = await srv.upload([dlFile()], 'dl');
    return { dataDir, id };
  } finally {
    await srv.stop();
  }
}

/** Asserts the run is whole with every rank of ranks (one rank here) and
 * nothing else: catalog, run.db (ranks, kernels) and src/ agree. */
async function assertWhole(srv, id, rank) {
  const run = await srv.json(`/api/runs/${id}`);
  assert.deepEqual(run.files.map((f) => f.rank), [rank], 'catalog file list');
  assert.deepEqual(run.info.ranks.map((r) => r.rank), [rank], 'run.db ranks');
  const k = await srv.json(`/api/runs/${id}/kernels?rank=${rank}`);
  assert.ok(k.total > 0 && k.rows.length > 0, `kernels of rank ${rank}: ${k.total}`);
  const ov = await srv.json(`/api/runs/${id}/overview?rank=${rank}`);
  assert.ok(ov, 'overview');
  const src = await srv.req(`/api/runs/${id}/source?rank=${rank}`);
  assert.equal(src.status, 200, `source?rank=${rank}`);
  await src.arrayBuffer();
  const other = rank === 0 ? 1 : 0;
  assert.equal((await srv.req(`/api/runs/${id}/source?rank=${other}`)).status, 404, `source?rank=${other}`);
  assert.equal((await srv.req(`/api/runs/${id}/kernels?rank=${other}`)).status, 404, `kernels?rank=${other}`);
}

/** What is left of the renumbering's work on disk besides the run. */
function leftovers(dataDir, id) {
  const runs = readdirSync(join(dataDir, 'runs'));
  const tmp = readdirSync(join(dataDir, 'tmp'));
  const inRun = readdirSync(join(dataDir, 'runs', id)).filter((f) => !/^(run\.db(-wal|-shm)?|src)$/.test(f));
  return { runs, tmp, inRun };
}

/** Resolves when the server process has exited, or after ms. */
function exited(srv, ms) {
  return new Promise((res) => {
    if (srv.child.exitCode !== null || srv.child.signalCode !== null) return res();
    const t = setTimeout(res, ms);
    srv.child.once('exit', () => { clearTimeout(t); res(); });
  });
}

/** Starts a server on dataDir with extra environment (the crash hook). */
function startWithEnv(dataDir, env) {
  const child = spawn(BIN, serveArgs(dataDir), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  return attachServer(child, dataDir);
}

/** After a crash: restart, check the run is whole with the old or the new
 * numbering, that no debris is left, and that a repair PATCH works. */
async function checkAfterCrash(dataDir, id, what) {
  const srv = await startServer({ dataDir });
  try {
    const run = await srv.json(`/api/runs/${id}`);
    const rank = run.files[0].rank;
    assert.ok(rank === 0 || rank === 1, `${what}: rank ${rank}`);
    await assertWhole(srv, id, rank);
    const left = leftovers(dataDir, id);
    assert.deepEqual(left, { runs: [id], tmp: [], inRun: [] }, `${what}: debris`);
    const fix = await patch(srv, id, { ranks: { [rank]: 7 } });
    assert.equal(fix.status, 200, `${what}: repair PATCH: ${await fix.clone().text()}`);
    await assertWhole(srv, id, 7);
    return rank;
  } finally {
    await srv.stop();
  }
}

test('kill -9 at each step of a renumbering, and at random moments: after a restart the run is whole', { skip, timeout: 300000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-renum-crash-'));
  try {
    const { dataDir: template, id } = await importedRun(work);
    const seen = new Set();
    // the named crash points (TB_TEST_CRASH_AT: the process kills itself there)
    const points = ['renumber-built', 'renumber-staged', 'renumber-swapped', 'renumber-catalogued'];
    for (const point of points) {
      const dataDir = join(work, point);
      cpSync(template, dataDir, { recursive: true });
      const srv = await startWithEnv(dataDir, { TB_TEST_CRASH_AT: point });
      const r = await patch(srv, id, { ranks: { 0: 1 } }).catch((e) => e);
      await exited(srv, 10000);
      if (srv.child.signalCode !== 'SIGKILL') await srv.stop();
      assert.equal(srv.child.signalCode, 'SIGKILL', `${point}: the server did not stop there (answered ${r.status})`);
      seen.add(await checkAfterCrash(dataDir, id, point));
      rmSync(dataDir, { recursive: true, force: true });
    }
    assert.deepEqual([...seen].sort(), [0, 1], 'early crashes roll back, late ones forward');
    // plain kill -9 after a delay, wherever the renumbering happens to be
    let killed = 0;
    for (const ms of [50, 150, 300, 450, 600, 800]) {
      const dataDir = join(work, `delay-${ms}`);
      cpSync(template, dataDir, { recursive: true });
      const srv = await startServer({ dataDir });
      const r = patch(srv, id, { ranks: { 0: 1 } }).catch((e) => e);
      await sleep(ms);
      if (srv.child.exitCode === null) srv.child.kill('SIGKILL');
      const res = await r;
      if (!(res instanceof Response)) killed++;
      await exited(srv, 10000);
      const rank = await checkAfterCrash(dataDir, id, `kill after ${ms} ms`);
      console.log(`# kill -9 after ${ms} ms: ${res instanceof Response ? `answered ${res.status} first` : 'mid-request'}, restarted with rank ${rank}`);
      rmSync(dataDir, { recursive: true, force: true });
    }
    assert.ok(killed >= 2, `expected some renumberings to be killed mid-way, got ${killed}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('readers during a renumbering see the old run or the new one, never an empty one; a second PATCH meanwhile is 409', { skip, timeout: 120000 }, async () => {
  const srv = await startServer();
  try {
    const id = await srv.upload([dlFile()], 'dl');
    let stop = false;
    const bad = [];
    let reads = 0;
    const reader = async () => {
      while (!stop) {
        const r = await srv.req(`/api/runs/${id}/kernels`);
        const text = await r.text();
        reads++;
        if (r.status !== 200) { bad.push(`${r.status} ${text.slice(0, 120)}`); continue; }
        const k = JSON.parse(text);
        if (!(k.total > 0 && k.rows.length > 0) || ![0, 1].includes(k.rank)) bad.push(`200 rank ${k.rank} with ${k.total} kernels`);
      }
    };
    const readers = [reader(), reader(), reader()];
    let conflicts = 0;
    for (let i = 0; i < 4; i++) {
      const m = i % 2 === 0 ? { 0: 1 } : { 1: 0 };
      const [a, b] = await Promise.all([patch(srv, id, { ranks: m }), sleep(100).then(() => patch(srv, id, { ranks: m }))]);
      assert.equal(a.status, 200, await a.clone().text());
      if (b.status === 409) {
        conflicts++;
        assert.equal((await b.json()).error.code, 'conflict');
      } else {
        // the second one came after the first had finished: its mapping names a rank gone by then
        assert.equal(b.status, 400, await b.clone().text());
      }
    }
    stop = true;
    await Promise.all(readers);
    console.log(`# ${reads} reads during 4 renumberings, ${bad.length} bad, ${conflicts} PATCHes answered 409`);
    assert.deepEqual(bad, []);
    assert.ok(conflicts >= 1, 'a PATCH sent during a renumbering of the same run should be 409');
    await assertWhole(srv, id, 0);
    assert.deepEqual(leftovers(srv.dataDir, id), { runs: [id], tmp: [], inRun: [] });
  } finally {
    await srv.stop();
    srv.cleanup();
  }
});

// A full disk without root: a file-size limit (see crash_serve.test.mjs), so
// that writing the renumbered copy of the 60 MB run.db fails part-way.
test('a write failing mid-renumbering (file size limit): 507 no_space, the old run intact, no debris', { skip, timeout: 120000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-renum-full-'));
  try {
    const { dataDir, id } = await importedRun(work);
    // dash counts ulimit -f in 512-byte blocks: 16 MB
    let srv = await startServerSpawned(dataDir, { sh: "trap '' XFSZ; ulimit -f 32768;" });
    try {
      const r = await patch(srv, id, { ranks: { 0: 1 } });
      const body = await r.json();
      console.log(`# renumbering on a full disk: ${r.status} ${JSON.stringify(body)}`);
      assert.equal(r.status, 507);
      assert.equal(body.error.code, 'no_space');
      assert.equal(srv.child.exitCode, null, 'server died');
      await assertWhole(srv, id, 0);
      assert.deepEqual(leftovers(dataDir, id), { runs: [id], tmp: [], inRun: [] });
    } finally {
      await srv.stop();
    }
    // with room again, the same PATCH works
    srv = await startServer({ dataDir });
    try {
      const r = await patch(srv, id, { ranks: { 0: 1 } });
      assert.equal(r.status, 200, await r.clone().text());
      await assertWhole(srv, id, 1);
    } finally {
      await srv.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('a renumbering does not hold up other clients: health answers at once on every open connection meanwhile', { skip, timeout: 120000 }, async () => {
  const srv = await startServer();
  // Kept-alive connections stay with the HTTP thread that accepted them: a
  // renumbering run on that thread would leave them waiting until it ends.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 12 });
  const health = () => new Promise((resolve, reject) => {
    const t0 = Date.now();
    http.get(`${srv.base}/api/health`, { agent }, (r) => {
      r.resume();
      r.on('end', () => resolve({ status: r.statusCode, ms: Date.now() - t0 }));
    }).on('error', reject);
  });
  try {
    const id = await srv.upload([dlFile()], 'dl');
    const slow = [];
    for (let i = 0; i < 2; i++) {
      await Promise.all(Array.from({ length: 12 }, health)); // open the connections
      const m = i % 2 === 0 ? { 0: 1 } : { 1: 0 };
      const p = patch(srv, id, { ranks: m });
      await sleep(200); // the renumbering is under way (it takes about a second)
      const answers = await Promise.all(Array.from({ length: 12 }, health));
      for (const a of answers) assert.equal(a.status, 200);
      slow.push(...answers.map((a) => a.ms).filter((ms) => ms > 500));
      const r = await p;
      assert.equal(r.status, 200, await r.clone().text());
    }
    assert.deepEqual(slow, [], 'health requests that waited for a renumbering (ms)');
    await assertWhole(srv, id, 0);
  } finally {
    agent.destroy();
    await srv.stop();
  }
});
