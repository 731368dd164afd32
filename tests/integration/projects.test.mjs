// Issue 20: projects and run metadata. Upload labels (query and multipart),
// the trace's own facts and key figures in the catalog, the runs list's
// filters, GET /api/projects, a project's trend with regression marks,
// duplicate uploads, 400s for bad labels, and the CLI's --project/--meta
// and --logdir's project.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BIN, HAVE_SQLITE, SHARED, startServer, demoFiles, fileBlob } from './lib.mjs';
import { readdirSync } from 'node:fs';

/** The trace files of a ../shared scenario. */
const shared = (s) => readdirSync(join(SHARED, 'traces', s)).filter((f) => f.endsWith('.gz')).map((f) => join(SHARED, 'traces', s, f));

let srv;
const DEFAULT = ['--allow-duplicates', 'false']; // the default, which lib.mjs turns off for the rest of the suite
before(async () => { srv = await startServer({ args: DEFAULT }); });
after(async () => { await srv.stop(); srv.cleanup(); });

/** POSTs files as one run with extra form fields and a query; returns [status, body]. */
async function post(files, fields = {}, query = '') {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  for (const f of files) fd.append('file', fileBlob(f), basename(f));
  const r = await srv.req(`/api/runs${query}`, { method: 'POST', body: fd });
  return [r.status, await r.json()];
}

const ids = {};

test('an upload takes a project and metadata from the query and the form', async () => {
  const [st, run] = await post(demoFiles('matmul_amp'), { project: 'llm', 'meta.batch': '32', 'meta.job_id': '101' },
    '?meta.git_commit=abc123&meta.model=gpt-mini');
  assert.equal(st, 201, JSON.stringify(run));
  ids.amp = run.id;
  assert.equal(run.project, 'llm');
  assert.deepEqual(run.meta, { git_commit: 'abc123', model: 'gpt-mini', batch: '32', job_id: '101' });
  // the trace's own facts, from its Kineto header
  assert.equal(run.trace.format, 'kineto');
  assert.equal(run.trace.gpu, 'NVIDIA H100 80GB HBM3');
  assert.equal(run.trace.cuda_runtime, '13.0');
  assert.equal(run.trace.world_size, 1);
  assert.equal(run.trace.record_shapes, true);
  assert.match(run.hash, /^[0-9a-f]{64}$/);
  // the key figures agree with the run's own overview
  const f = run.figures;
  const ov = await srv.json(`/api/runs/${run.id}/overview`);
  const r0 = ov.ranks ? ov.ranks[0] : ov;
  assert.ok(f.avg_step_us > 0 && f.steps > 0 && f.ranks === 1);
  if (r0.average) assert.ok(Math.abs(r0.average.dur_us - f.avg_step_us) < 0.01, 'average step as the overview');
  const parts = Object.values(f.breakdown_us).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(parts - f.avg_step_us) / f.avg_step_us < 1e-6, 'the breakdown adds up to the step');
  assert.ok(f.gpu_utilization > 0 && f.gpu_utilization <= 1);
  assert.ok(f.tensor_core_share > 0, 'AMP runs on tensor cores');
  assert.ok(f.peak_memory_bytes > 0);
  assert.equal(typeof f.top_finding.title, 'string');
  assert.ok(f.top_finding.saving_us >= 0);
  // catalog_get carries them for the other pages (job logs read meta.job_id)
  const again = await srv.json(`/api/runs/${run.id}`);
  assert.equal(again.project, 'llm');
  assert.equal(again.meta.job_id, '101');
});

test('the same files again: 409 naming the stored run, unless ?duplicate=1', async () => {
  const [st, body] = await post(demoFiles('matmul_amp'), { project: 'llm' });
  assert.equal(st, 409);
  assert.equal(body.error.code, 'duplicate');
  assert.equal(body.error.run_id, ids.amp);
  assert.equal(body.error.url, `./?run=${ids.amp}`);
  // a raw body is checked too
  const file = demoFiles('matmul_amp')[0];
  const raw = await srv.req(`/api/runs?filename=${encodeURIComponent(basename(file))}`,
    { method: 'POST', body: fileBlob(file), headers: { 'Content-Type': 'application/octet-stream' } });
  assert.equal(raw.status, 409);
  const [st2, run2] = await post(demoFiles('matmul_amp'), { project: 'llm', 'meta.batch': '32', duplicate: '1' },
    '?meta.job_id=102&meta.git_commit=def456&meta.model=gpt-mini');
  assert.equal(st2, 201, JSON.stringify(run2));
  assert.equal(run2.hash, (await srv.json(`/api/runs/${ids.amp}`)).hash);
  ids.amp2 = run2.id;
});

test('bad labels are 400 with a message that names them', async () => {
  const cases = [
    [{ project: 'a/b' }, '', /project/],
    [{ project: 'x'.repeat(101) }, '', /project/],
    [{}, '?meta.bad%20key=1', /bad key/],
    [{ 'meta.k': 'v'.repeat(1025) }, '', /longer than 1024/],
    [{}, '?meta.k=line%0Abreak', /control/],
    [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`meta.k${i}`, 'v'])), '', /at most 64/],
  ];
  for (const [fields, q, re] of cases) {
    const [st, body] = await post(demoFiles('matmul_fp32_strict'), fields, q);
    assert.equal(st, 400, JSON.stringify(body));
    assert.match(body.error.message, re);
  }
  assert.equal((await srv.json('/api/runs?meta.b%40d=1', 400)).error.code, 'invalid');
  assert.match((await srv.json('/api/runs?since=yesterday', 400)).error.message, /since/);
});

test('runs list filters: project, tag, metadata, GPU, dates, search; key figures per run', async () => {
  const [, other] = await post(demoFiles('ddp_gloo_4ranks'), { project: 'vision', tags: 'ddp,baseline', 'meta.batch': '64' });
  const [, loose] = await post(demoFiles('matmul_fp32_strict'));
  const names = async (q) => (await srv.json(`/api/runs${q}`)).runs.map((r) => r.id).sort();
  assert.deepEqual(await names('?project=llm'), [ids.amp, ids.amp2].sort());
  assert.deepEqual(await names('?project='), [loose.id], 'an empty project: runs without one');
  assert.deepEqual(await names('?tag=ddp'), [other.id]);
  assert.deepEqual(await names('?tag=dd'), [], 'a tag matches whole');
  assert.deepEqual(await names('?meta.batch=32'), [ids.amp, ids.amp2].sort());
  assert.deepEqual(await names('?meta.batch=32&meta.job_id=102'), [ids.amp2]);
  assert.deepEqual(await names('?meta.model=gpt-mini&meta.git_commit=abc123'), [ids.amp]);
  assert.deepEqual(await names('?gpu=h100').then((x) => x.length), 4);
  assert.deepEqual(await names('?gpu=a100'), []);
  assert.deepEqual(await names('?q=GPT-MINI'), [ids.amp, ids.amp2].sort());
  assert.deepEqual(await names('?q=abc1'), [ids.amp]);
  assert.deepEqual(await names('?q=vision'), [other.id]);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal((await names(`?since=${today}&until=${today}`)).length, 4);
  assert.deepEqual(await names('?until=2000-01-01'), []);
  const list = (await srv.json('/api/runs?project=vision')).runs;
  assert.equal(list[0].figures.ranks, 4);
  assert.equal(list[0].trace.world_size, 4);
  assert.equal(list[0].trace.backend, 'gloo');
  assert.ok(list[0].figures.top_finding.title.length > 0);
});

test('GET /api/projects and a project trend, oldest first, with regression marks', async () => {
  const p = await srv.json('/api/projects');
  assert.deepEqual(p.projects.map((x) => [x.name, x.runs]), [['llm', 2], ['vision', 1]]);
  assert.ok(p.projects[0].last > 1700000000);
  const t = await srv.json('/api/projects/llm/trend');
  assert.deepEqual(t.runs.map((r) => r.id), [ids.amp, ids.amp2]);
  for (const k of ['id', 'name', 'created', 'meta', 'avg_step_us', 'breakdown_us', 'gpu_utilization',
    'tensor_core_share', 'peak_memory_bytes'])
    assert.ok(k in t.runs[0], k);
  assert.equal(t.regression_pct, 10);
  // the same configuration (job_id is volatile): compared, equal, no regression
  assert.equal(t.runs[0].config, t.runs[1].config);
  assert.equal(t.runs[1].previous, ids.amp);
  assert.equal(t.runs[1].change_pct, 0);
  assert.equal(t.runs[1].regression, false);
  assert.equal((await srv.json('/api/projects/nope/trend', 404)).error.code, 'not_found');
  const uni = encodeURIComponent('réseau ★');
  const [st] = await post(shared('torch_compile'), { project: 'réseau ★' });
  assert.equal(st, 201);
  assert.equal((await srv.json(`/api/projects/${uni}/trend`)).runs.length, 1);
});

test('a run more than regression_pct slower than the previous run of its configuration is marked', async () => {
  // two different traces in one configuration: the slower one after the faster one
  const s2 = await startServer({ args: [...DEFAULT, '--regression-pct', '5'] });
  try {
    const fd = (files, meta) => {
      const f = new FormData();
      f.append('project', 'reg');
      for (const [k, v] of Object.entries(meta)) f.append(`meta.${k}`, v);
      for (const x of files) f.append('file', fileBlob(x), basename(x));
      return f;
    };
    const up = async (files, meta) => (await (await s2.req('/api/runs', { method: 'POST', body: fd(files, meta) })).json());
    const fast = await up(demoFiles('dataloader_workers8'), { loader: 'x', job_id: '1' });
    const slow = await up(shared('dataloader_workers0'), { loader: 'x', job_id: '2' });
    const other = await up(demoFiles('matmul_amp'), { loader: 'y' });
    assert.ok(slow.figures.avg_step_us > fast.figures.avg_step_us * 1.05, 'workers0 is the slower');
    const t = await s2.json('/api/projects/reg/trend');
    const by = Object.fromEntries(t.runs.map((r) => [r.id, r]));
    assert.equal(t.regression_pct, 5);
    assert.equal(by[slow.id].previous, fast.id);
    assert.equal(by[slow.id].regression, true);
    assert.ok(by[slow.id].change_pct > 5);
    assert.equal(by[other.id].previous, null, 'another configuration has no previous run');
    assert.equal(by[other.id].regression, false);
  } finally { await s2.stop(); s2.cleanup(); }
});

test('CLI import --project --meta; the same files are skipped; --logdir files runs under their top folder', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-proj-'));
  try {
    const data = join(work, 'data');
    const folder = join(work, 'amp');
    mkdirSync(folder);
    for (const f of demoFiles('matmul_amp')) copyFileSync(f, join(folder, basename(f)));
    const run = (args) => spawnSync(BIN, ['import', '--data-dir', data, '--log-level', 'warn', ...args], { encoding: 'utf8' });
    let r = run(['--project', 'cli-proj', '--meta', 'batch=8', '--meta', 'host=n7', folder]);
    assert.equal(r.status, 0, r.stderr);
    r = run([folder]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /skipped amp: the same files are run [0-9a-f]{16}/);
    assert.equal(run(['--meta', 'no-equals', folder]).status, 2);
    assert.equal(run(['--project', 'a/b', folder]).status, 2);

    const logdir = join(work, 'logdir');
    const job = join(logdir, 'team-a', 'job7');
    mkdirSync(job, { recursive: true });
    const old = new Date(Date.now() - 60000);
    for (const f of [...demoFiles('ddp_gloo_4ranks')]) {
      copyFileSync(f, join(job, basename(f)));
      utimesSync(join(job, basename(f)), old, old);
    }
    const top = demoFiles('matmul_fp32_strict')[0];
    copyFileSync(top, join(logdir, basename(top)));
    utimesSync(join(logdir, basename(top)), old, old);
    const s3 = await startServer({ dataDir: data, args: [...DEFAULT, '--logdir', logdir, '--logdir-interval', '1'] });
    try {
      let runs = [];
      for (let i = 0; i < 100 && runs.length < 3; i++) {
        await new Promise((res) => setTimeout(res, 200));
        runs = (await s3.json('/api/runs')).runs;
      }
      const byProject = Object.fromEntries(runs.map((x) => [x.name, x.project]));
      assert.equal(runs.length, 3, JSON.stringify(runs.map((x) => x.name)));
      assert.equal(runs.find((x) => x.meta.host === 'n7').project, 'cli-proj');
      assert.equal(byProject['team-a/job7'], 'team-a');
      assert.equal(runs.find((x) => x.files[0].name === basename(top)).project, null, 'a file right in the logdir: no project');
    } finally { await s3.stop(); }
  } finally { rmSync(work, { recursive: true, force: true }); }
});

test('a rank renumbering refreshes the figures (the top finding names the new rank)', async () => {
  const fd = new FormData();
  fd.append('duplicate', '1');
  for (const f of demoFiles('ddp_gloo_4ranks')) fd.append('file', fileBlob(f), basename(f));
  const run = await (await srv.req('/api/runs', { method: 'POST', body: fd })).json();
  assert.match(run.figures.top_finding.title, /rank 2/);
  const r = await srv.req(`/api/runs/${run.id}`, { method: 'PATCH', body: JSON.stringify({ ranks: { 2: 0, 0: 2 } }),
    headers: { 'Content-Type': 'application/json', 'X-Traceboard-CSRF': '1' } });
  assert.equal(r.status, 200, await r.text());
  const after = await srv.json(`/api/runs/${run.id}`);
  assert.match(after.figures.top_finding.title, /rank 0/);
  assert.equal(after.figures.ranks, 4);
  assert.equal(after.hash, run.hash);
});

test('a catalog written by the previous version is migrated and its runs get their figures in the background', { skip: !HAVE_SQLITE && 'needs the sqlite3 command' }, async () => {
  const data = mkdtempSync(join(tmpdir(), 'tb-proj-v2-'));
  try {
    const imp = spawnSync(BIN, ['import', '--data-dir', data, '--log-level', 'warn', demoFiles('matmul_amp')[0]], { encoding: 'utf8' });
    assert.equal(imp.status, 0, imp.stderr);
    // back to version 2: drop what version 3 added, as an older traceboard left it
    const sql = 'BEGIN; CREATE TABLE old AS SELECT id,name,created,status,ranks,gpu,bytes,events,warnings,files,tags FROM runs;' +
      ' DROP TABLE runs; ALTER TABLE old RENAME TO runs; CREATE INDEX runs_created ON runs(created); PRAGMA user_version=2; COMMIT;';
    spawnSync('sqlite3', [join(data, 'catalog.db'), sql]);
    const s4 = await startServer({ dataDir: data, args: DEFAULT });
    try {
      let run;
      for (let i = 0; i < 100; i++) {
        run = (await s4.json('/api/runs')).runs[0];
        if (run.figures) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.ok(run.figures && run.figures.avg_step_us > 0, JSON.stringify(run));
      assert.equal(run.trace.format, 'kineto');
      assert.match(run.hash, /^[0-9a-f]{64}$/, 'hashed from the kept sources');
      assert.equal(run.project, null);
    } finally { await s4.stop(); }
  } finally { rmSync(data, { recursive: true, force: true }); }
});
