// N runs side by side: GET /api/compare?runs=A,B,C on three demo runs
// (copies of ../shared matmul_fp32_strict, matmul_amp, dataloader_workers8) and the
// 4-rank DDP demo. Each run's figures must be exactly the two-run compare's
// SIDE (/api/diff), in the order asked; the id list is checked whole (count,
// form, duplicates) before any run is read; unknown, rankless and damaged
// runs are named in the error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, truncateSync } from 'node:fs';
import { basename, join } from 'node:path';
import { startServer, demoFiles } from './lib.mjs';

let srv, fp32, amp, dl8, ddp;

before(async () => {
  srv = await startServer();
  fp32 = await srv.upload(demoFiles('matmul_fp32_strict'), 'fp32');
  amp = await srv.upload(demoFiles('matmul_amp'), 'amp');
  dl8 = await srv.upload(demoFiles('dataloader_workers8'), 'dl8');
  ddp = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp');
});
after(async () => { await srv?.stop(); srv?.cleanup(); });

/** The SIDE figures the two pages share. */
const FIGURES = ['rank', 'ranks', 'steps', 'device', 'average', 'kernel_us', 'gpu_utilization', 'sm_efficiency',
  'tensor_core_share', 'peak_memory_bytes'];

test('three runs: each SIDE is the two-run compare\'s, in the order asked, with id, name and created', async () => {
  const c = await srv.json(`/api/compare?runs=${amp},${fp32},${dl8}`);
  assert.deepEqual(c.categories, ['kernel', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu_exec', 'other']);
  assert.equal(c.rank, null);
  assert.deepEqual(c.runs.map((r) => r.id), [amp, fp32, dl8]);
  assert.deepEqual(c.runs.map((r) => r.name), ['amp', 'fp32', 'dl8']);
  const list = (await srv.json('/api/runs')).runs;
  for (const r of c.runs) assert.equal(r.created, list.find((x) => x.id === r.id).created);
  const d1 = await srv.json(`/api/diff?a=${amp}&b=${fp32}`);
  const d2 = await srv.json(`/api/diff?a=${fp32}&b=${dl8}`);
  for (const k of FIGURES) {
    assert.deepEqual(c.runs[0][k], d1.a[k], k);
    assert.deepEqual(c.runs[1][k], d1.b[k], k);
    assert.deepEqual(c.runs[2][k], d2.b[k], k);
  }
  assert.ok(c.runs[1].average.dur_us > 2 * c.runs[0].average.dur_us, 'strict FP32 is the slow one');
  assert.ok(c.runs[0].tensor_core_share > c.runs[1].tensor_core_share);
  assert.ok(c.runs[2].average.breakdown_us.dataloader >= 0);
});

test('a rank for every run; a run without it is named', async () => {
  const c = await srv.json(`/api/compare?runs=${ddp},${fp32},${amp}&rank=0`);
  assert.equal(c.rank, 0);
  assert.deepEqual(c.runs.map((r) => r.rank), [0, 0, 0]);
  assert.deepEqual(c.runs[0].ranks, [0, 1, 2, 3]);
  const d = await srv.json(`/api/diff?a=${ddp}&b=${fp32}&rank_a=0`);
  assert.deepEqual(c.runs[0].average, d.a.average);
  const j = await srv.json(`/api/compare?runs=${ddp},${fp32},${amp}&rank=2`, 404);
  assert.match(j.error.message, new RegExp(`run ${fp32} has no rank 2`));
});

test('the id list: 2 to 8 distinct well-formed ids, else 400 saying which rule', async () => {
  const cases = [
    ['', /required/],
    [`${amp}`, /at least 2/],
    [`${amp},${fp32},${amp}`, new RegExp(`run ${amp} twice`)],
    [`${amp},,${fp32}`, /run ids/],
    [`${amp},../etc,${fp32}`, /run ids/],
    [Array.from({ length: 9 }, (_, i) => `${'0'.repeat(15)}${i}`).join(','), /more than 8/],
  ];
  for (const [runs, re] of cases) {
    const j = await srv.json(`/api/compare?runs=${runs}`, 400);
    assert.match(j.error.message, re, runs);
  }
  // eight is fine (the same checks pass); the unknown one is named with 404
  const eight = [amp, fp32, dl8, ddp, ...Array.from({ length: 4 }, (_, i) => `${'0'.repeat(15)}${i}`)];
  const j = await srv.json(`/api/compare?runs=${eight.join(',')}`, 404);
  assert.match(j.error.message, /0{15}0/);
  assert.match((await srv.json(`/api/compare?runs=${amp},${fp32}&rank=-1`, 400)).error.message, /rank/);
});

test('a damaged run answers run_damaged, naming it', async () => {
  const [file] = demoFiles('matmul_amp');
  const bad = await srv.uploadBody(readFileSync(file), basename(file), 'bad');
  const db = join(srv.dataDir, 'runs', bad, 'run.db');
  for (const x of ['-wal', '-shm']) rmSync(db + x, { force: true });
  truncateSync(db, 0);
  const j = await srv.json(`/api/compare?runs=${amp},${bad},${fp32}`, 500);
  assert.equal(j.error.code, 'run_damaged');
  assert.ok(j.error.message.includes(bad));
});
