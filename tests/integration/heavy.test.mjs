// Heavy queries must not block the server (issue 15, fault 5).
//
// Heavy routes (timeline, search, aggregate, ranks, analyses, diff, the
// tables...) run on a bounded pool of query workers under a time budget
// (query_budget_ms), and stop when their client leaves. The first server
// uses the test hook TB_TEST_QUERY_SPIN, which makes every heavy query wait
// out its budget before its handler runs: an endless query on demand, so
// occupancy, the busy answer and cancellation are deterministic. The second
// imports a moderately large synthetic run and gives queries a 1 ms budget,
// so SQLite's progress handler is what stops them.
//
// Bounded: at most 6 requests in flight, each ends within its budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { startServer, BIN } from './lib.mjs';

const BUDGET_MS = 2000;
let spin, runId;

const OP = { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 100, dur: 50, args: {} };

before(async () => {
  spin = await startServer({
    args: ['--query-workers', '2', '--query-queue', '2', '--query-budget-ms', String(BUDGET_MS)],
    env: { TB_TEST_QUERY_SPIN: '1' },
  });
  runId = await spin.uploadBody(JSON.stringify({ traceEvents: [OP] }), 'small.json', 'small');
});
after(async () => { await spin.stop(); spin.cleanup(); });

/** GET on a fresh connection; resolves {status, body, ms}. abortMs: the
 * client hangs up after that long (resolves {status: 0}). */
function get(srv, path, { abortMs } = {}) {
  const u = new URL(srv.base);
  return new Promise((resolve) => {
    const t0 = Date.now();
    const rq = request({ host: u.hostname, port: Number(u.port), path: u.pathname.replace(/\/$/, '') + path, agent: false,
      headers: { Authorization: `Bearer ${srv.token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body, ms: Date.now() - t0 }));
    });
    rq.setTimeout(15000, () => rq.destroy(new Error('timed out')));
    rq.on('error', (err) => resolve({ status: 0, error: err.message, ms: Date.now() - t0 }));
    if (abortMs !== undefined) setTimeout(() => rq.destroy(), abortMs);
    rq.end();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function errorOf(r) {
  const j = JSON.parse(r.body);
  return j.error;
}

test('health and light pages stay fast while heavy queries fill the workers and queue', async () => {
  const heavy = ['timeline/aggregate?start=0&end=1', 'timeline/search?q=e', 'ranks', 'operators']
    .map((p) => get(spin, `/api/runs/${runId}/${p}`));
  await sleep(300);
  for (let i = 0; i < 3; i++) {
    const h = await get(spin, '/api/health');
    assert.equal(h.status, 200);
    assert.ok(h.ms < 1000, `health took ${h.ms} ms with 4 heavy queries in flight`);
    const l = await get(spin, '/api/runs');
    assert.equal(l.status, 200);
    assert.ok(l.ms < 1000, `the run list took ${l.ms} ms with 4 heavy queries in flight`);
  }
  // 2 running + 2 queued: a fifth is refused at once, not queued forever
  const busy = await get(spin, `/api/runs/${runId}/kernels`);
  assert.equal(busy.status, 503, busy.body);
  assert.ok(busy.ms < 1000, `busy answer took ${busy.ms} ms`);
  assert.equal(errorOf(busy).code, 'busy');
  assert.match(errorOf(busy).message, /busy with other heavy queries \(2 running, 2 waiting\)/);
  // each of the four is stopped by its budget with a clear JSON error
  for (const r of await Promise.all(heavy)) {
    assert.equal(r.status, 503, r.body);
    const e = errorOf(r);
    assert.equal(e.code, 'over_budget');
    assert.match(e.message, new RegExp(`budget of ${BUDGET_MS} ms`));
    assert.ok(r.ms < 3 * BUDGET_MS, `a heavy query held its client ${r.ms} ms`);
  }
});

test('a client that hangs up frees its worker at once', async () => {
  // two clients take both workers, then leave
  const gone = [get(spin, `/api/runs/${runId}/ranks`, { abortMs: 300 }),
    get(spin, `/api/runs/${runId}/ranks`, { abortMs: 300 })];
  for (const r of await Promise.all(gone)) assert.equal(r.status, 0);
  await sleep(200);
  // had they kept their workers until their budget, two of these four
  // would find the pool full and get 503 busy
  const t0 = Date.now();
  const next = await Promise.all([0, 1, 2, 3].map(() => get(spin, `/api/runs/${runId}/kernels`)));
  for (const r of next) assert.equal(errorOf(r).code, 'over_budget', r.body);
  assert.ok(Date.now() - t0 < 3 * BUDGET_MS);
});

test('SQLite work is stopped by the budget: 503 over_budget on a large run', async () => {
  const gen = join(dirname(BIN), 'tools', 'gentrace');
  const dir = mkdtempSync(join(tmpdir(), 'tb-heavy-'));
  const srv = await startServer({ args: ['--query-budget-ms', '1'] });
  try {
    const file = join(dir, 'big.pt.trace.json');
    execFileSync(gen, ['--events', '100K', '--seed', '3', file]);
    execFileSync(BIN, ['import', '--data-dir', srv.dataDir, '--log-level', 'warn', file]);
    const runs = await srv.json('/api/runs');
    const id = (runs.runs || runs)[0].id;
    for (const p of ['timeline/search?q=e&limit=1000', 'ranks']) {
      const r = await get(srv, `/api/runs/${id}/${p}`);
      assert.equal(r.status, 503, `${p}: ${r.body.slice(0, 200)}`);
      assert.equal(errorOf(r).code, 'over_budget');
    }
    const h = await get(srv, '/api/health');
    assert.equal(h.status, 200);
  } finally {
    await srv.stop();
    srv.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
