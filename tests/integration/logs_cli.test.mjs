// Job logs from the command line: `traceboard import --log FILE`, the
// *.log / *.jsonl files beside an imported folder's traces (a rank file
// name gives the rank), and the same beside traces in a --logdir folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, copyFileSync, writeFileSync, rmSync, utimesSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { BIN, startServer, demoFiles } from './lib.mjs';

const TRACE = demoFiles('matmul_amp')[0];
const LINES = '2026-11-26T06:00:00Z start\n{"ts": 1795672801.5, "step": 1, "loss": 3.5}\n';

async function logsOf(srv, id) {
  return (await srv.json(`/api/runs/${id}/logs`)).lines;
}

test('import --log FILE and the logs beside a folder', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-logs-cli-'));
  try {
    const dataDir = join(work, 'data'), job = join(work, 'job7');
    mkdirSync(job);
    copyFileSync(TRACE, join(job, basename(TRACE)));
    writeFileSync(join(job, 'rank0.log'), LINES);
    writeFileSync(join(job, 'metrics.jsonl'), '{"ts": 1795672802, "samples_per_s": 812}\n');
    writeFileSync(join(job, 'notes.txt'), '1795672803 not a log by its name\n');
    writeFileSync(join(work, 'extra.log'), '1795672804 given with --log\n');
    writeFileSync(join(work, 'bad.log'), 'no timestamp anywhere\n');
    const out = execFileSync(BIN, ['import', '--data-dir', dataDir, '--log', join(work, 'extra.log'), job]).toString();
    assert.match(out, /1 log lines from .*extra\.log/);
    assert.match(out, /logs of 2 files beside the traces/);
    // a log the parser refuses fails the command but keeps the run (--duplicate: the
    // trace is stored already, by the import above)
    let failed = null;
    try { execFileSync(BIN, ['import', '--data-dir', dataDir, '--duplicate', '--log', join(work, 'bad.log'), TRACE], { stdio: 'pipe' }); } catch (e) { failed = e; }
    assert.ok(failed && failed.status === 1);
    assert.match(failed.stderr.toString(), /bad\.log: no line starts with a timestamp/);
    const srv = await startServer({ dataDir });
    try {
      const runs = (await srv.json('/api/runs')).runs;
      assert.equal(runs.length, 2);
      const run = runs.find((r) => r.name === 'job7');
      const lines = await logsOf(srv, run.id);
      assert.deepEqual(lines.map((l) => [l.text, l.rank]), [
        ['start', 0], ['', 0], ['', null], ['given with --log', null],
      ]);
      assert.deepEqual(lines[1].fields, { step: 1, loss: 3.5 });
      assert.deepEqual(lines[2].fields, { samples_per_s: 812 });
    } finally { await srv.stop(); srv.cleanup(); }
  } finally { rmSync(work, { recursive: true, force: true }); }
});

test('a log beside the traces in --logdir attaches to the run', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-logs-dir-'));
  const logdir = join(work, 'runs'), job = join(logdir, 'job9');
  mkdirSync(job, { recursive: true });
  const old = new Date(Date.now() - 60000);
  copyFileSync(TRACE, join(job, basename(TRACE)));
  utimesSync(join(job, basename(TRACE)), old, old);
  writeFileSync(join(job, 'train.log'), LINES);
  const srv = await startServer({ dataDir: join(work, 'data'), args: ['--logdir', logdir, '--logdir-interval', '1'] });
  try {
    let lines = [];
    for (let i = 0; i < 75 && lines.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const runs = (await srv.json('/api/runs')).runs;
      if (runs.length) lines = await logsOf(srv, runs[0].id);
    }
    assert.deepEqual(lines.map((l) => l.text), ['start', '']);
  } finally { await srv.stop(); srv.cleanup(); rmSync(work, { recursive: true, force: true }); }
});
