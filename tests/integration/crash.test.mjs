// kill -9 at several points of an ingest: after a restart the catalog and
// every committed run are intact, and no half run is visible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startServer, demoFiles } from './lib.mjs';

/** A synthetic Kineto-like trace of about `mb` megabytes. */
function bigTrace(path, mb) {
  const parts = ['{"schemaVersion": 1, "traceEvents": [\n'];
  let size = 0, i = 0;
  while (size < mb * 1e6) {
    const ts = 1000 + i * 10;
    const ev = `{"ph":"X","cat":"cpu_op","name":"aten::op${i % 97}","pid":1,"tid":2,"ts":${ts},"dur":5,"args":{"External id":${i},"Input Dims":[[64,3,224,224]]}},\n` +
      `{"ph":"X","cat":"kernel","name":"kernel_${i % 13}<float>","pid":0,"tid":7,"ts":${ts + 3},"dur":4,"args":{"correlation":${i},"stream":7}},\n`;
    parts.push(ev);
    size += ev.length;
    i++;
  }
  parts.push('{"ph":"i","name":"end","pid":1,"tid":2,"ts":1,"s":"t"}]}\n');
  writeFileSync(path, parts.join(''));
}

function importFor(dataDir, file, ms) {
  return new Promise((resolve) => {
    const child = spawn(BIN, ['import', '--data-dir', dataDir, '--log-level', 'error', file], { stdio: 'ignore' });
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, sig) => { clearTimeout(t); resolve(sig || code); });
  });
}

test('kill -9 mid-ingest leaves no half run, and committed runs survive', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-crash-'));
  const dataDir = join(work, 'data');
  const big = join(work, 'big.trace.json');
  bigTrace(big, 60);
  // one committed run first
  const [amp] = demoFiles('matmul_amp');
  assert.equal(await importFor(dataDir, amp, 20000), 0);
  let killed = 0;
  for (const ms of [30, 120, 250, 400, 700, 1000]) {
    const r = await importFor(dataDir, big, ms);
    if (r === 'SIGKILL') killed++;
  }
  assert.ok(killed >= 3, `expected most imports to be killed mid-way, got ${killed}`);
  const srv = await startServer({ dataDir });
  try {
    const runs = (await (await srv.req('/api/runs')).json()).runs;
    for (const r of runs) {
      const one = await srv.req(`/api/runs/${r.id}`);
      assert.equal(one.status, 200, `run ${r.id} listed but unreadable`);
      const body = await one.json();
      assert.equal(body.info.ranks.length, r.ranks);
    }
    assert.ok(runs.some((r) => r.name.startsWith('matmul_amp')), 'the committed run survived');
    // every folder in runs/ has a catalog row, and tmp/ was cleaned at start
    const ids = new Set(runs.map((r) => r.id));
    for (const d of readdirSync(join(dataDir, 'runs'))) assert.ok(ids.has(d), `orphan run folder ${d}`);
    assert.deepEqual(existsSync(join(dataDir, 'tmp')) ? readdirSync(join(dataDir, 'tmp')) : [], []);
  } finally {
    await srv.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
