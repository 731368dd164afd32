// Shared login nodes: everything the server creates under its data folder is
// owner-only (folders 0700, files 0600), even when it is started with a
// permissive umask (022), so other users of the node cannot read traces or
// databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { demoFiles } from './lib.mjs';
import { startServerSpawned } from './spawnlib.mjs';

/** [path, mode] for dir and everything under it. */
function walk(dir, out = []) {
  out.push([dir, statSync(dir).mode]);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push([p, statSync(p).mode]);
  }
  return out;
}

test('umask 022: data folder, catalog, run folders and run.db are owner-only', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-perm-'));
  // a folder that does not exist yet, two levels deep: the server makes both
  const dataDir = join(work, 'nested', 'data');
  const srv = await startServerSpawned(dataDir, { umask: '022' });
  try {
    const fd = new FormData();
    for (const f of demoFiles('ddp_gloo_4ranks').slice(0, 2)) fd.append('file', new Blob([readFileSync(f)]), basename(f));
    const r = await srv.req('/api/runs', { method: 'POST', body: fd });
    assert.equal(r.status, 201);
    const id = (await r.json()).id;
    const [amp] = demoFiles('matmul_amp');
    const a = await srv.req(`/api/runs?async=1&filename=${basename(amp)}`, { method: 'POST', body: readFileSync(amp) });
    assert.equal(a.status, 202);
    const { job } = await a.json();
    for (let i = 0; i < 100; i++) {
      const j = await (await srv.req(`/api/jobs/${job}`)).json();
      if (j.state === 'done' || j.state === 'failed') { assert.equal(j.state, 'done'); break; }
      await new Promise((res) => setTimeout(res, 100));
    }
    // a rename writes the catalog again
    assert.equal((await srv.req(`/api/runs/${id}`, { method: 'PATCH', body: '{"name":"perm"}' })).status, 200);

    const entries = walk(join(work, 'nested'));
    const names = entries.map(([p]) => p.slice(work.length));
    for (const want of ['/nested/data', '/nested/data/catalog.db', '/nested/data/runs', `/nested/data/runs/${id}`,
      `/nested/data/runs/${id}/run.db`, `/nested/data/runs/${id}/src`, '/nested/data/tmp'])
      assert.ok(names.includes(want), `${want} missing: ${names.join(' ')}`);
    const bad = [];
    for (const [p, mode] of entries) {
      const isDir = (mode & 0o170000) === 0o040000;
      const perm = mode & 0o777;
      if (perm !== (isDir ? 0o700 : 0o600)) bad.push(`${p.slice(work.length)} ${perm.toString(8)}`);
    }
    assert.deepEqual(bad, [], 'not owner-only');
    console.log(`# ${entries.length} paths checked, all owner-only`);
  } finally {
    await srv.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
