// Issue 15, fault 6: a damaged run.db (emptied, garbled, truncated) gets one
// clear answer from every read API of the run: 500 {"error": {"code":
// "run_damaged"}} naming the run and what to do, never the 409 "imported
// before ... re-import" meant for old runs nor a bare "malformed". The runs
// list marks the run damaged, its source files stay downloadable and
// DELETE removes it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, truncateSync, openSync, writeSync, closeSync, statSync, rmSync } from 'node:fs';
import { join, basename } from 'node:path';
import { startServer, demoFiles } from './lib.mjs';

const READS = ['overview', 'operators', 'kernels', 'memory', 'memory/events', 'operators?format=csv', 'timeline',
  'timeline/tracks', 'timeline/slice?track=1&ts=0&dur=1000', 'timeline/search?q=a', 'timeline/aggregate?start=0&end=1',
  'ranks', 'analyses', 'analyses?rank=0', 'critpath', 'critpath?rank=0&step=0'];

/** Ways a run.db gets damaged: name -> function of its path. */
const DAMAGE = {
  empty: (p) => truncateSync(p, 0),
  // random bytes over the whole file: no SQLite header left
  garbled: (p) => writeFileSync(p, pseudoRandom(statSync(p).size, 1)),
  // the header intact, the schema page and the next pages overwritten
  'garbled pages': (p) => {
    const fd = openSync(p, 'r+');
    writeSync(fd, pseudoRandom(64 * 1024, 2), 0, 64 * 1024, 100);
    closeSync(fd);
  },
  truncated: (p) => truncateSync(p, Math.floor(statSync(p).size / 3)),
};

function pseudoRandom(n, seed) {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 16; }
  return b;
}

let srv, good;
const damaged = {};
const [FILE] = demoFiles('matmul_amp');

before(async () => {
  srv = await startServer();
  good = await srv.uploadBody(readFileSync(FILE), basename(FILE), 'good');
  for (const kind of Object.keys(DAMAGE)) {
    const id = await srv.uploadBody(readFileSync(FILE), basename(FILE), kind);
    const db = join(srv.dataDir, 'runs', id, 'run.db');
    for (const x of ['-wal', '-shm']) rmSync(db + x, { force: true });
    DAMAGE[kind](db);
    damaged[kind] = id;
  }
});

after(async () => { await srv?.stop(); srv?.cleanup(); });

for (const kind of Object.keys(DAMAGE)) {
  test(`${kind} run.db: every read API answers run_damaged`, async () => {
    const id = damaged[kind];
    for (const path of READS) {
      const r = await srv.req(`/api/runs/${id}/${path}`);
      const text = await r.text();
      assert.equal(r.status, 500, `${path}: ${text}`);
      const j = JSON.parse(text);
      assert.equal(j.error.code, 'run_damaged', `${path}: ${text}`);
      assert.ok(j.error.message.includes(id), `${path}: the message names the run: ${text}`);
      assert.match(j.error.message, /damaged/, path);
      assert.match(j.error.message, /delete/i, path);
      assert.match(j.error.message, /upload/i, path);
    }
    console.log(`# ${kind}: ${JSON.stringify((await srv.json(`/api/runs/${id}/overview`, 500)).error)}`);
    // a diff with it too
    const d = await srv.req(`/api/diff?a=${good}&b=${id}`);
    assert.equal(d.status, 500);
    assert.equal((await d.json()).error.code, 'run_damaged');
    // the uploaded file is intact and still served
    const src = await srv.req(`/api/runs/${id}/source?rank=0`);
    assert.equal(src.status, 200);
    assert.deepEqual(Buffer.from(await src.arrayBuffer()), readFileSync(FILE));
    // the run itself: listed, marked damaged, with the reason
    const run = await srv.json(`/api/runs/${id}`);
    assert.equal(run.damaged, true);
    assert.match(run.damage, /damaged/);
    // and the good run is unaffected
    await srv.json(`/api/runs/${good}/overview`);
  });
}

test('the runs list marks damaged runs; DELETE removes them', async () => {
  const runs = (await srv.json('/api/runs')).runs;
  for (const r of runs) {
    if (r.id === good) assert.ok(!r.damaged, 'the good run is not damaged');
    else {
      assert.equal(r.damaged, true, `${r.name} not marked damaged`);
      assert.match(r.damage, /\S/);
    }
  }
  assert.ok((await srv.json(`/api/runs/${good}`)).damaged !== true);
  for (const id of Object.values(damaged)) {
    const r = await srv.req(`/api/runs/${id}`, { method: 'DELETE' });
    assert.equal(r.status, 204, await r.text());
    assert.equal((await srv.req(`/api/runs/${id}`)).status, 404);
  }
  assert.deepEqual((await srv.json('/api/runs')).runs.map((r) => r.id), [good]);
});
