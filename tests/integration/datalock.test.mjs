// The data folder's lock: a server starting while another process (an
// `import`, another server) is ingesting into the same data folder must not
// sweep that ingest's tmp folder or its not yet catalogued run folder; once
// nobody holds the lock, the same leftovers are swept as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerSpawned } from './spawnlib.mjs';

/** Holds DATA/lock shared (as an ingest does) until release() is called. */
async function holdShared(dataDir) {
  const child = spawn('flock', ['-s', join(dataDir, 'lock'), 'sh', '-c', 'echo held; read x'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise((res, rej) => {
    child.stdout.once('data', res);
    child.once('exit', (c) => rej(new Error(`flock exited ${c}`)));
  });
  return {
    release: () => new Promise((r) => { child.once('exit', r); child.stdin.end('\n'); }),
  };
}

function leftovers(dataDir) {
  const tmpWork = join(dataDir, 'tmp', 'feedfacecafebeef');
  const uncatalogued = join(dataDir, 'runs', '0123456789abcdef');
  for (const d of [tmpWork, uncatalogued]) {
    mkdirSync(join(d, 'src'), { recursive: true });
    writeFileSync(join(d, 'run.db'), 'being written');
  }
  return { tmpWork, uncatalogued };
}

test('start-up sweeps leave a running ingest alone and clean up after it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-lock-'));
  try {
    // first start creates the folder layout and the lock file
    let srv = await startServerSpawned(dataDir);
    await srv.stop();

    const { tmpWork, uncatalogued } = leftovers(dataDir);
    const holder = await holdShared(dataDir);
    srv = await startServerSpawned(dataDir);
    try {
      assert.ok(existsSync(join(tmpWork, 'run.db')), 'the running ingest\'s tmp folder was swept');
      assert.ok(existsSync(join(uncatalogued, 'run.db')), 'the running ingest\'s run folder was swept');
      const runs = await (await srv.req('/api/runs')).json();
      assert.ok(!JSON.stringify(runs).includes('0123456789abcdef'), 'an uncatalogued run is listed');
    } finally {
      await srv.stop();
      await holder.release();
    }

    // nobody ingests now: the same folders are leftovers of a crash
    srv = await startServerSpawned(dataDir);
    await srv.stop();
    assert.ok(!existsSync(tmpWork), 'tmp leftovers not swept');
    assert.ok(!existsSync(uncatalogued), 'orphan run folder not swept');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
