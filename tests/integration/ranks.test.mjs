// Ranks API (/api/runs/{id}/ranks): the cross-rank comparison on the demo
// gloo run (rank 2 sleeps 30 ms per step), a single-rank run, bad
// parameters; and, when ../shared is there (TB_SHARED), HTA's trace_filter
// pair and param's 8-rank DLRM as multi-rank NCCL runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, demoFiles, existsSync, SHARED } from './lib.mjs';

let srv, ddp, amp;

before(async () => {
  srv = await startServer();
  ddp = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp');
  amp = await srv.upload(demoFiles('matmul_amp'), 'amp');
});
after(async () => { await srv.stop(); srv.cleanup(); });

/** Checks what must hold for any multi-rank answer. */
function checkShape(d, nranks) {
  assert.equal(d.ranks.length, nranks);
  assert.equal(d.comparable, nranks > 1);
  assert.equal(d.heatmap.ranks.length, nranks);
  assert.equal(d.heatmap.dur_us.length, nranks);
  for (const row of d.heatmap.dur_us) assert.equal(row.length, d.heatmap.steps.length);
  for (const r of d.ranks) {
    const parts = Object.values(r.breakdown_us).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(parts - r.avg_step_us) < 0.01 * Math.max(1, r.avg_step_us), `rank ${r.rank}: parts add up to the step`);
    assert.ok(r.overlap_us <= r.comm_us + 1e-6 && r.overlap_us <= r.compute_us + 1e-6, `rank ${r.rank}: overlap within comm and compute`);
    assert.ok(r.comm_us <= r.avg_step_us + 1e-6, `rank ${r.rank}: comm within the step`);
    assert.ok(r.wait_us >= 0 && r.transfer_us >= 0);
    assert.ok(r.collectives_matched <= r.collectives);
  }
  for (const op of d.comm_ops) {
    let dur = 0;
    for (const c of op.ranks) {
      dur += c.dur_us;
      if (c.wait_us !== null) assert.ok(c.wait_us + c.transfer_us <= c.dur_us + 1e-3, `${op.collective}: wait + transfer <= duration`);
    }
    assert.ok(Math.abs(dur - op.dur_us) < 1e-3);
  }
  for (const k of d.kernels) {
    assert.equal(k.ranks_us.length, nranks);
    assert.ok(k.min_us <= k.median_us && k.median_us <= k.max_us);
  }
}

test('ddp_gloo_4ranks: rank 2 is the straggler, the others wait for it in allreduce', async () => {
  const d = await srv.json(`/api/runs/${ddp}/ranks`);
  checkShape(d, 4);
  assert.equal(d.world_size, 4);
  assert.equal(d.alignment, 'baseTimeNanoseconds');
  assert.deepEqual(d.heatmap.ranks, [0, 1, 2, 3]);
  assert.equal(d.heatmap.steps.length, 4);
  // the finding and its per-step evidence
  assert.equal(d.straggler.rank, 2);
  assert.match(d.straggler.title, /rank 2/);
  assert.equal(d.straggler.steps.length, 4);
  for (const s of d.straggler.steps) {
    assert.ok(s.late_us > 20000, `${s.name}: rank 2 reaches the collectives ${s.late_us} µs later`);
    assert.ok(s.own_us > 5 * s.others_own_us, `${s.name}: own work ${s.own_us} vs ${s.others_own_us}`);
  }
  assert.equal(d.straggler.link, 'view=ranks&rank=2');
  // gloo: host-side collectives; the others wait far longer than rank 2
  const ar = d.comm_ops.find((o) => o.collective === 'all_reduce');
  assert.ok(ar, JSON.stringify(d.comm_ops.map((o) => o.collective)));
  assert.equal(ar.dtype, 'float');
  assert.equal(ar.in_nelems_max, 1049600);
  const wait = Object.fromEntries(ar.ranks.map((c) => [c.rank, c.wait_us]));
  for (const r of [0, 1, 3]) assert.ok(wait[r] > 10 * Math.max(wait[2], 1000), `rank ${r} waits ${wait[r]} µs, rank 2 ${wait[2]} µs`);
  for (const r of d.ranks) {
    assert.equal(r.host_collectives, true);
    assert.equal(r.backend, 'gloo');
    assert.equal(r.distributed_rank, r.rank);
    assert.match(r.base_ns, /^\d+$/);
    assert.ok(r.end_skew_us !== null && Math.abs(r.end_skew_us) < 1000, `rank ${r.rank}: collectives end within 1 ms (${r.end_skew_us})`);
  }
  const r2 = d.ranks.find((r) => r.rank === 2);
  for (const r of d.ranks.filter((x) => x.rank !== 2)) assert.ok(r.comm_us > 3 * r2.comm_us);
  assert.ok(d.kernels.length > 0 && d.kernels.length <= 10);
});

test('top, a single-rank run, bad parameters, unknown run', async () => {
  const d = await srv.json(`/api/runs/${ddp}/ranks?top=2`);
  assert.equal(d.kernels.length, 2);
  const one = await srv.json(`/api/runs/${amp}/ranks`);
  checkShape(one, 1);
  assert.equal(one.straggler, null);
  for (const bad of ['0', '101', 'x', '-1', '1.5']) {
    const e = await srv.json(`/api/runs/${ddp}/ranks?top=${bad}`, 400);
    assert.equal(e.error.code, 'invalid');
    assert.match(e.error.message, /top/);
  }
  await srv.json('/api/runs/0123456789abcdef/ranks', 404);
});

const TRACE_FILTER = join(SHARED, 'corpus/hta/tests/data/trace_filter');
const DLRM = join(SHARED, 'corpus/param/et_replay/tests/inputs/dlrm_kineto');

test('HTA trace_filter sampled_rank-0/1: a two-rank NCCL run', { skip: !existsSync(TRACE_FILTER) && 'no ../shared corpus' }, async () => {
  const id = await srv.upload(['sampled_rank-0.json.gz', 'sampled_rank-1.json.gz'].map((f) => join(TRACE_FILTER, f)), 'trace_filter');
  const d = await srv.json(`/api/runs/${id}/ranks`);
  checkShape(d, 2);
  assert.equal(d.world_size, 128);
  assert.deepEqual(d.ranks.map((r) => r.distributed_rank), [0, 1]);
  for (const r of d.ranks) {
    assert.equal(r.host_collectives, false);
    assert.equal(r.steps, 2);
    assert.ok(r.avg_step_us > 500000 && r.avg_step_us < 700000, `rank ${r.rank}: step ${r.avg_step_us}`);
    assert.ok(r.comm_us > 100000 && r.comm_us < r.avg_step_us, `rank ${r.rank}: comm ${r.comm_us}`);
    assert.ok(r.collectives > 0 && r.collectives === r.collectives_matched);
  }
  const names = d.comm_ops.map((o) => o.collective);
  assert.ok(names.includes('all_to_all'), names.join());
  assert.ok(d.comm_ops.every((o) => o.in_nelems_max !== null), 'message sizes from the launching ops');
  assert.ok(d.kernels[0].communication, 'the NCCL kernel is the largest');
});

test('param dlrm_kineto: eight NCCL ranks', { skip: !existsSync(DLRM) && 'no ../shared corpus' }, async () => {
  const files = readdirSync(DLRM).filter((f) => f.endsWith('.json')).sort().map((f) => join(DLRM, f));
  assert.equal(files.length, 8);
  const id = await srv.upload(files, 'dlrm');
  const d = await srv.json(`/api/runs/${id}/ranks`);
  checkShape(d, 8);
  assert.equal(d.world_size, 8);
  assert.deepEqual(d.ranks.map((r) => r.distributed_rank), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(d.heatmap.steps.length, 1);
  const a2a = d.comm_ops.find((o) => o.collective === 'all_to_all');
  const ar = d.comm_ops.find((o) => o.collective === 'all_reduce');
  assert.ok(a2a && ar, JSON.stringify(d.comm_ops.map((o) => o.collective)));
  assert.equal(a2a.calls, 5);
  assert.equal(ar.calls, 3);
  for (const r of d.ranks) {
    assert.ok(r.avg_step_us > 10000 && r.avg_step_us < 25000, `rank ${r.rank}: step ${r.avg_step_us}`);
    assert.equal(r.collectives, 8);
    assert.equal(r.collectives_matched, 8);
    assert.ok(r.comm_us > 1000, `rank ${r.rank}: comm ${r.comm_us}`);
  }
  // the rank that waits least is the one whose collectives are shortest
  const waits = d.ranks.map((r) => r.wait_us);
  assert.ok(Math.max(...waits) > 5 * Math.min(...waits));
  assert.ok(d.ranks.every((r) => Math.abs(r.transfer_us - d.ranks[0].transfer_us) < 1e-3), 'transfer is shared by matched calls');
});

test('ranks can be renumbered after import: tables, findings, sources and the file list follow', async () => {
  const id = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp-renumber');
  const patch = (body) => srv.req(`/api/runs/${id}`, {
    method: 'PATCH', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' },
  });
  // rank 2 (the one that sleeps) becomes rank 0 and rank 0 becomes rank 2
  const r = await patch({ ranks: { 2: 0, 0: 2 } });
  assert.equal(r.status, 200, await r.clone().text());
  const run = await r.json();
  const byFile = Object.fromEntries(run.files.map((f) => [f.name.slice(0, 5), f.rank]));
  assert.deepEqual(byFile, { rank0: 2, rank1: 1, rank2: 0, rank3: 3 });
  const d = await srv.json(`/api/runs/${id}/ranks`);
  assert.equal(d.straggler.rank, 0, 'the straggler moved with its file');
  const files = Object.fromEntries(d.ranks.map((x) => [x.rank, x.file]));
  assert.match(files[0], /^rank2\./);
  const o = await srv.json(`/api/runs/${id}/overview?rank=0`);
  assert.ok(o.recommendations.some((x) => x.id === 'straggler' && x.rank === 0));
  const src = await srv.req(`/api/runs/${id}/source?rank=0`);
  assert.equal(src.status, 200);
  assert.match(src.headers.get('content-disposition') || '', /rank2\./);

  // bad mappings are refused and change nothing
  for (const [body, re] of [
    [{ ranks: { 0: 1 } }, /both be rank 1/],
    [{ ranks: { 9: 0 } }, /no rank 9/],
    [{ ranks: { x: 0 } }, /rank number/],
    [{ ranks: [] }, /ranks must be an object/],
    [{ ranks: { 0: -1 } }, /out of range/],
  ]) {
    const b = await patch(body);
    assert.equal(b.status, 400, JSON.stringify(body));
    assert.match((await b.json()).error.message, re);
  }
  assert.equal((await srv.json(`/api/runs/${id}/ranks`)).straggler.rank, 0);
});
