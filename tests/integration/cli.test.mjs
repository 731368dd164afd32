// The `analyze` command of the real binary: the report and its
// recommendations as JSON and text, exit statuses, and how folders become runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BIN, SHARED, DEMO } from './lib.mjs';
import { analyzeJson, readTrace } from './tracejson.mjs';

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

test('analyze DIR: a folder holding two captures is two runs, said so; traces named freely are found, facts.json is not', (t) => {
  const a = join(SHARED, 'traces', 'matmul_amp'), b = join(SHARED, 'traces', 'matmul_fp32_strict');
  if (!existsSync(a) || !existsSync(b)) { t.skip('../shared/traces not found'); return; }
  const dir = mkdtempSync(join(tmpdir(), 'tb-analyze-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pick = (d) => join(d, readdirSync(d).find((f) => f.endsWith('.pt.trace.json.gz')));
  // neither name says "trace" nor a rank: before/after captures of one job
  copyFileSync(pick(a), join(dir, 'before.json.gz'));
  copyFileSync(pick(b), join(dir, 'after.json.gz'));
  copyFileSync(join(a, 'facts.json'), join(dir, 'facts.json'));
  const r = run(['analyze', '--json', dir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /2 runs found; each is analyzed on its own/);
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.runs.length, 2);
  for (const one of rep.runs) assert.equal(one.ranks.length, 1, 'one capture is one rank');
  assert.deepEqual(rep.runs.map((x) => x.run.name).sort(), [`${basename(dir)}/after.json.gz`, `${basename(dir)}/before.json.gz`]);
  // the text report prints both
  const txt = run(['analyze', dir]);
  assert.equal(txt.status, 0, txt.stderr);
  assert.equal(txt.stdout.match(/^run /gm).length, 2);
});

test('analyze --json prints step times to the ns, not rounded to 10 digits', (t) => {
  const d = join(SHARED, 'traces', 'matmul_amp');
  if (!existsSync(d)) { t.skip('../shared/traces not found'); return; }
  const file = join(d, readdirSync(d).find((f) => f.endsWith('.pt.trace.json.gz')));
  const raw = readTrace(file, { exact: true });
  const rep = analyzeJson(d);
  const steps = rep.ranks[0].steps;
  assert.ok(steps.length > 0);
  for (const s of steps) {
    const ev = raw.traceEvents.find((e) => e.name === s.name && e.ph === 'X');
    assert.ok(ev, s.name);
    // epoch µs need 16 digits: 4487348861234.567 and not 4.487348861e12 (off
    // by up to 1 ms); a double holds them to within 1 ns
    assert.ok(Math.abs(s.start_us * 1000 - ev.tsn) <= 1, `${s.name} start ${s.start_us} vs ${ev.tsn} ns`);
  }
  assert.ok(steps.every((s, i) => i === 0 || s.start_us >= steps[i - 1].start_us + steps[i - 1].dur_us - 0.001),
    'steps do not appear to overlap');
});
