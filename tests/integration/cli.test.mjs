// The `analyze` command of the real binary: the report and its
// recommendations as JSON and text, exit statuses, and how folders become runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, SHARED, DEMO } from './lib.mjs';

function run(args) {
  return spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

test('analyze --json: the report with the catalog ids of its findings', () => {
  const r = run(['analyze', '--json', join(DEMO, 'matmul_fp32_strict')]);
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.ranks.length, 1);
  assert.equal(rep.ranks[0].device.name, 'NVIDIA H100 80GB HBM3');
  const amp = rep.recommendations.find((x) => x.id === 'enable_amp');
  assert.ok(amp, 'FP32 GEMMs on SIMT units get the AMP advice');
  assert.equal(amp.severity, 'high');
  assert.equal(amp.rank, 0);
  assert.ok(amp.saving_us > 0 && amp.evidence.lines.length > 0);
  // the deeper analyses ride along per rank
  const an = rep.ranks[0].analyses;
  for (const k of ['idle', 'launch', 'queue', 'copy', 'overlap', 'annotations', 'fusion', 'critical_path'])
    assert.equal(typeof an[k], 'object', `analyses.${k}`);
  assert.equal(an.critical_path.bound_by, 'gpu_compute');
});

test('analyze prints the analyses in a few lines per rank', () => {
  const r = run(['analyze', join(DEMO, 'matmul_fp32_strict')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /GPU idle in steps [\d.]+ ms: host wait/);
  assert.match(r.stdout, /launches \d+: call p50 [\d.]+ us, launch delay p50/);
  assert.match(r.stdout, /critical path: .*gpu_compute 9\d %.*\(bound by gpu_compute\)/);
});

test('analyze prints the findings as text', () => {
  const r = run(['analyze', join(DEMO, 'ddp_gloo_4ranks')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /run ddp_gloo_4ranks: 4 rank\(s\)/);
  assert.match(r.stdout, /\[high\] Straggler: rank 2 .*\(straggler, rank 2, could save ~[\d.]+ ms\/step\)/);
  assert.match(r.stdout, /advice: /);
});

test('analyze of something that is not a trace fails with a message', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tb-cli-'));
  try {
    const f = join(dir, 'bad.pt.trace.json');
    writeFileSync(f, '{"traceEvents": [ {"ph": "X", oops');
    const r = run(['analyze', f]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /bad\.pt\.trace\.json/);
    assert.equal(r.stdout, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a JAX profile folder is one rank, not its two copies of the events', (t) => {
  const dir = join(SHARED, 'traces', 'jax_mlp');
  if (!existsSync(dir)) { t.skip('../shared/traces not found'); return; }
  const r = run(['analyze', '--json', dir]);
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.ranks.length, 1);
  assert.ok(rep.ranks[0].steps.length >= 2, 'train#N step markers');
});
