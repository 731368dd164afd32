// lib.mjs — starts the real traceboard binary on a random loopback port with
// a temporary data folder, and gives tests a small HTTP client for it: the
// bearer-token fetch, and the checked uploads and GETs the API tests share.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, basename } from 'node:path';

export const BIN = process.env.TB_BIN || resolve('build/traceboard');
export const SHARED = process.env.TB_SHARED || resolve('../shared');
export const DEMO = resolve('tests/data/demo');

/** Whether the sqlite3 CLI is installed (tests that edit a run's db skip without it). */
export const HAVE_SQLITE = (() => {
  try { execFileSync('sqlite3', ['-version'], { stdio: 'ignore' }); return true; } catch { return false; }
})();

/** The argv of `traceboard serve` on dataDir: a random port, quiet log, then args. */
export function serveArgs(dataDir, args = []) {
  // the suite uploads its fixtures again and again; projects.test.mjs
  // passes --allow-duplicates false, the default
  return ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--allow-duplicates', 'true', ...args];
}

/** Waits for a spawned `traceboard serve` to print its URL and returns the
 * handle tests talk to it through. Rejects (after 15 s, or when the process
 * exits first) with its stderr.
 * @param {import('node:child_process').ChildProcess} child  stdout and stderr piped
 * @param {string} dataDir  its --data-dir (cleanup() removes it) */
export async function attachServer(child, dataDir) {
  let out = '', err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('server did not start: ' + err)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/open: (http:\/\/[^\s]+)/);
      if (m) { clearTimeout(timer); res(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); rej(new Error(`server exited ${code}: ${err}`)); });
  });
  const u = new URL(url);
  const token = u.searchParams.get('token') || '';
  const base = `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  const srv = {
    child, dataDir, token, base, url, stderr: () => err,
    /** fetch with the bearer token unless init.auth === false */
    async req(path, init = {}) {
      const headers = { ...(init.headers || {}) };
      if (init.auth !== false && token) headers['Authorization'] = `Bearer ${token}`;
      return fetch(base + path, { ...init, headers, redirect: 'manual' });
    },
    /** GETs path, asserts the status and that the body is JSON; returns it parsed. */
    async json(path, status = 200) {
      const r = await srv.req(path);
      const text = await r.text();
      assert.equal(r.status, status, `${path}: ${text}`);
      assert.match(r.headers.get('content-type') || '', /application\/json/, path);
      return JSON.parse(text);
    },
    /** GETs path, asserts the status; returns the body as text (CSV). */
    async text(path, status = 200) {
      const r = await srv.req(path);
      const text = await r.text();
      assert.equal(r.status, status, `${path}: ${text}`);
      return text;
    },
    /** Uploads trace files as one run (multipart, a file part per rank);
     * asserts 201 and returns the run id. */
    async upload(files, name) {
      const fd = new FormData();
      fd.append('name', name);
      for (const f of files) fd.append('file', fileBlob(f), basename(f));
      return created(await srv.req('/api/runs', { method: 'POST', body: fd }));
    },
    /** Uploads one trace body as a new run (a raw body, its file name in the
     * query); asserts 201 and returns the run id. */
    async uploadBody(body, filename, name) {
      const q = `filename=${encodeURIComponent(filename)}&name=${encodeURIComponent(name)}`;
      return created(await srv.req(`/api/runs?${q}`, {
        method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' },
      }));
    },
    /** Runs SQL on a run's db with the sqlite3 CLI (see HAVE_SQLITE); returns its output, trimmed. */
    sql(id, q) {
      return execFileSync('sqlite3', [join(dataDir, 'runs', id, 'run.db'), q]).toString().trim();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
    cleanup() { rmSync(dataDir, { recursive: true, force: true }); },
  };
  return srv;
}

/** The id of a 201 answer to an upload (asserted, with the body as the message). */
async function created(r) {
  const j = await r.json();
  assert.equal(r.status, 201, JSON.stringify(j));
  return j.id;
}

/** Starts a server; resolves when it prints its URL.
 * @param {{args?: string[], dataDir?: string, env?: object}} [opts] */
export async function startServer(opts = {}) {
  const dataDir = opts.dataDir || mkdtempSync(join(tmpdir(), 'tb-it-'));
  const child = spawn(BIN, serveArgs(dataDir, opts.args),
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(opts.env || {}) } });
  return attachServer(child, dataDir);
}

/** The trace files of a demo scenario, sorted. */
export function demoFiles(scenario) {
  const dir = join(DEMO, scenario);
  return readdirSync(dir).filter((f) => f.endsWith('.gz')).sort().map((f) => join(dir, f));
}

export function fileBlob(path) { return new Blob([readFileSync(path)]); }
export { existsSync };
