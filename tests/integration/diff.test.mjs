// Comparing runs: /api/diff, /api/diff/operators, /api/diff/kernels and
// `traceboard diff`, on the demo pair matmul_fp32_strict (FP32 GEMMs on
// SIMT cores) vs matmul_amp (bf16 nvjet GEMMs on tensor cores), two ranks of
// the DDP demo, and HTA's trace_diff control vs test when ../shared exists.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer, demoFiles, BIN, SHARED, DEMO } from './lib.mjs';

let srv, fp32, amp, ddp;

const FFMA = /^sm80_xmma_gemm_f32f32.*ffma/;

before(async () => {
  srv = await startServer();
  fp32 = await srv.upload(demoFiles('matmul_fp32_strict'), 'fp32');
  amp = await srv.upload(demoFiles('matmul_amp'), 'amp');
  ddp = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp');
});
after(async () => { await srv.stop(); srv.cleanup(); });

test('overview: fp32 vs amp, speedup and breakdown deltas', async () => {
  const o = await srv.json(`/api/diff?a=${fp32}&b=${amp}`);
  assert.equal(o.a.id, fp32);
  assert.equal(o.a.name, 'fp32');
  assert.equal(o.b.name, 'amp');
  assert.equal(o.a.rank, 0);
  assert.deepEqual(o.a.ranks, [0]);
  assert.ok(o.a.steps > 0 && o.b.steps > 0);
  assert.equal(o.a.device.name, 'NVIDIA H100 80GB HBM3');
  assert.ok(o.speedup > 2, `speedup ${o.speedup}`);
  assert.ok(Math.abs(o.speedup - o.a.average.dur_us / o.b.average.dur_us) < 1e-9);
  assert.deepEqual(o.categories, ['kernel', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu_exec', 'other']);
  for (const c of o.categories) {
    const d = o.b.average.breakdown_us[c] - o.a.average.breakdown_us[c];
    assert.ok(Math.abs(o.delta.breakdown_us[c] - d) < 1e-6, c);
  }
  assert.ok(o.delta.breakdown_us.kernel < 0, 'kernel time shrinks');
  assert.ok(Math.abs(o.delta.dur_us - (o.b.average.dur_us - o.a.average.dur_us)) < 1e-6);
  assert.ok(o.b.tensor_core_share > o.a.tensor_core_share, 'AMP moves the GEMMs to tensor cores');
  assert.ok(o.kernels.removed >= 2 && o.kernels.added >= 3, JSON.stringify(o.kernels));
  assert.ok(o.kernel_families.faster >= 1);
  for (const k of ['added', 'removed', 'faster', 'slower', 'same']) assert.equal(typeof o.operators[k], 'number');
});

test('kernels: the FFMA GEMMs removed, nvjet added; families; filters, sort, paging, CSV', async () => {
  const t = await srv.json(`/api/diff/kernels?a=${fp32}&b=${amp}&limit=1000`);
  assert.equal(t.kind, 'kernels');
  assert.equal(t.group, 'name');
  assert.equal(t.per, 'step');
  assert.equal(t.sort, 'change');
  assert.equal(t.order, 'desc');
  assert.equal(t.total, t.rows.length);
  assert.equal(t.a.id, fp32);
  assert.equal(t.b.rank, 0);
  const ffma = t.rows.filter((r) => FFMA.test(r.name));
  assert.ok(ffma.length >= 2);
  for (const r of ffma) {
    assert.equal(r.status, 'removed');
    assert.equal(r.b_us, null);
    assert.equal(r.b_calls, null);
    assert.ok(r.a_us > 0 && Math.abs(r.delta_us + r.a_us) < 1e-6);
    assert.equal(r.tensor_cores, false);
  }
  const nvjet = t.rows.filter((r) => r.name.startsWith('nvjet'));
  assert.ok(nvjet.length >= 3);
  for (const r of nvjet) {
    assert.equal(r.status, 'added');
    assert.equal(r.a_us, null);
    assert.equal(r.tensor_cores, true);
  }
  const changes = t.rows.map((r) => Math.abs(r.delta_us));
  for (let i = 1; i < changes.length; i++) assert.ok(changes[i - 1] >= changes[i] - 1e-9, 'sorted by |delta|');
  for (const r of t.rows) {
    if (r.a_us > 0 && r.b_us > 0) assert.ok(Math.abs(r.ratio - r.b_us / r.a_us) < 1e-9);
    else assert.equal(r.ratio, null);
  }

  const f = await srv.json(`/api/diff/kernels?a=${fp32}&b=${amp}&group=family`);
  assert.equal(f.group, 'family');
  const gemm = f.rows.find((r) => r.name === 'GEMM');
  assert.equal(gemm.status, 'faster');
  assert.ok(gemm.ratio < 0.5, `GEMM ratio ${gemm.ratio}`);

  const rem = await srv.json(`/api/diff/kernels?a=${fp32}&b=${amp}&status=removed,added&q=GEMM&sort=name&order=asc`);
  assert.ok(rem.rows.length >= 2 && rem.rows.every((r) => ['removed', 'added'].includes(r.status)));
  assert.ok(rem.rows.every((r) => /gemm/i.test(r.name)));
  assert.equal(rem.total, rem.counts.added + rem.counts.removed);
  const names = rem.rows.map((r) => r.name);
  assert.deepEqual(names, [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));

  const p1 = await srv.json(`/api/diff/kernels?a=${fp32}&b=${amp}&limit=2&offset=1`);
  assert.equal(p1.rows.length, 2);
  assert.deepEqual(p1.rows.map((r) => r.name), t.rows.slice(1, 3).map((r) => r.name));

  const tot = await srv.json(`/api/diff/kernels?a=${fp32}&b=${amp}&per=total&q=nvjet`);
  const perStep = t.rows.find((r) => r.name === tot.rows[0].name);
  assert.ok(Math.abs(tot.rows[0].b_us - perStep.b_us * (await srv.json(`/api/diff?a=${fp32}&b=${amp}`)).b.steps) < 1e-3);

  const csv = await srv.text(`/api/diff/kernels?a=${fp32}&b=${amp}&format=csv`);
  const lines = csv.trim().split('\r\n');
  assert.equal(lines[0], 'name,status,a_calls,b_calls,a_us,b_us,delta_us,ratio,tensor_cores');
  assert.equal(lines.length, t.total + 1, 'CSV has every row');
  assert.ok(lines.some((l) => l.startsWith('nvjet') && l.includes(',added,')));
});

test('operators: timed by device self time', async () => {
  const t = await srv.json(`/api/diff/operators?a=${fp32}&b=${amp}`);
  assert.equal(t.kind, 'operators');
  assert.equal(t.metric, 'device_self');
  const mm = t.rows.find((r) => r.name === 'aten::mm');
  assert.equal(mm.status, 'faster');
  assert.ok(mm.ratio < 0.5);
  assert.equal(t.rows[0].name, 'aten::mm', 'the largest change first');
});

test('two ranks of one run', async () => {
  const o = await srv.json(`/api/diff?a=${ddp}&b=${ddp}&rank_a=0&rank_b=2`);
  assert.equal(o.a.rank, 0);
  assert.equal(o.b.rank, 2);
  assert.deepEqual(o.a.ranks, [0, 1, 2, 3]);
  assert.ok(o.speedup > 0);
  const t = await srv.json(`/api/diff/kernels?a=${ddp}&b=${ddp}&rank_a=0&rank_b=2`);
  assert.equal(t.a.rank, 0);
  assert.equal(t.b.rank, 2);
});

test('bad requests: 400 naming the parameter, 404 unknown run or rank', async () => {
  const cases = [
    [`/api/diff?b=${amp}`, 400, /'a'/],
    [`/api/diff?a=${fp32}`, 400, /'b'/],
    [`/api/diff?a=nope&b=${amp}`, 400, /'a'/],
    [`/api/diff?a=${fp32}&b=${amp}&rank_a=x`, 400, /'rank_a'/],
    [`/api/diff?a=${fp32}&b=${amp}&threshold=-1`, 400, /'threshold'/],
    [`/api/diff?a=0123456789abcdef&b=${amp}`, 404, /./],
    [`/api/diff?a=${fp32}&b=${amp}&rank_b=9`, 404, /rank 9/],
    [`/api/diff/kernels?a=${fp32}&b=${amp}&status=bogus`, 400, /'status'/],
    [`/api/diff/kernels?a=${fp32}&b=${amp}&sort=name;drop`, 400, /'sort'/],
    [`/api/diff/kernels?a=${fp32}&b=${amp}&limit=0`, 400, /'limit'/],
    [`/api/diff/kernels?a=${fp32}&b=${amp}&group=stack`, 400, /'group'/],
    [`/api/diff/operators?a=${fp32}&b=${amp}&group=family`, 400, /'group'/],
    [`/api/diff/kernels?a=${fp32}&b=${amp}&per=day`, 400, /'per'/],
  ];
  for (const [path, status, msg] of cases) {
    const j = await srv.json(path, status);
    assert.equal(typeof j.error.code, 'string', path);
    assert.match(j.error.message, msg, path);
  }
});

test('CLI: traceboard diff --json on the demo traces, and errors', () => {
  const out = execFileSync(BIN, ['diff', '--json', join(DEMO, 'matmul_fp32_strict'), demoFiles('matmul_amp')[0]],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
  const rep = JSON.parse(out);
  assert.ok(rep.speedup > 2, `speedup ${rep.speedup}`);
  assert.ok(rep.top_kernels.some((r) => FFMA.test(r.name) && r.status === 'removed'));
  assert.ok(rep.top_kernels.some((r) => r.name.startsWith('nvjet') && r.status === 'added'));
  assert.equal(rep.top_kernel_families[0].name, 'GEMM');
  const text = execFileSync(BIN, ['diff', join(DEMO, 'matmul_fp32_strict'), join(DEMO, 'matmul_amp')], { encoding: 'utf8' });
  assert.match(text, /speedup \d+\.\d\dx \(B vs A\)/);
  assert.match(text, /removed .*sm80_xmma_gemm_f32f32/);
  const bad = spawnSync(BIN, ['diff', join(DEMO, 'matmul_amp'), '/nonexistent/trace.json'], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /traceboard diff: .*nonexistent/);
  const usage = spawnSync(BIN, ['diff', join(DEMO, 'matmul_amp')], { encoding: 'utf8' });
  assert.equal(usage.status, 2);
});

const CONTROL = join(SHARED, 'corpus/hta/tests/data/trace_diff/control/control.json.gz');
const TESTF = join(SHARED, 'corpus/hta/tests/data/trace_diff/test/test.json.gz');

test("HTA's trace_diff control vs test", { skip: !existsSync(CONTROL) && 'no ../shared corpus' }, async () => {
  const c = await srv.upload([CONTROL], 'control');
  const t = await srv.upload([TESTF], 'test');
  const o = await srv.json(`/api/diff?a=${c}&b=${t}`);
  assert.equal(o.a.device.name, 'NVIDIA A100-PG509-200');
  assert.equal(o.b.device.name, 'Tesla V100-SXM2-16GB');
  assert.ok(o.a.steps > 0 && o.b.steps > 0);
  assert.ok(o.speedup > 0.3 && o.speedup < 1, `V100 is slower: ${o.speedup}`);
  assert.ok(o.delta.breakdown_us.communication > 0);
  const k = await srv.json(`/api/diff/kernels?a=${c}&b=${t}&group=family&limit=5`);
  assert.equal(k.rows[0].name, 'GEMM');
  assert.equal(k.rows[0].status, 'slower');
  const ops = await srv.json(`/api/diff/operators?a=${c}&b=${t}&status=added`);
  assert.ok(ops.rows.some((r) => r.name === 'CompiledFunctionBackward'));
  // the CLI reads the same traces
  const rep = JSON.parse(execFileSync(BIN, ['diff', '--json', CONTROL, TESTF], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  assert.ok(Math.abs(rep.speedup - o.speedup) < 1e-9);
});
