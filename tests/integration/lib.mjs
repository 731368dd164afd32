// lib.mjs — starts the real traceboard binary on a random loopback port with
// a temporary data folder, and gives tests a small HTTP client for it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const BIN = process.env.TB_BIN || resolve('build/traceboard');
export const SHARED = process.env.TB_SHARED || resolve('../shared');
export const DEMO = resolve('tests/data/demo');

/** Starts a server; resolves when it prints its URL.
 * @param {{args?: string[], dataDir?: string, env?: object}} [opts] */
export async function startServer(opts = {}) {
  const dataDir = opts.dataDir || mkdtempSync(join(tmpdir(), 'tb-it-'));
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...(opts.args || [])];
  const child = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(opts.env || {}) } });
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
  return {
    child, dataDir, token, base, url, stderr: () => err,
    /** fetch with the bearer token unless opts.auth === false */
    async req(path, init = {}) {
      const headers = { ...(init.headers || {}) };
      if (init.auth !== false && token) headers['Authorization'] = `Bearer ${token}`;
      return fetch(base + path, { ...init, headers, redirect: 'manual' });
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
    cleanup() { rmSync(dataDir, { recursive: true, force: true }); },
  };
}

/** The trace files of a demo scenario, sorted. */
export function demoFiles(scenario) {
  const dir = join(DEMO, scenario);
  return readdirSync(dir).filter((f) => f.endsWith('.gz')).sort().map((f) => join(dir, f));
}

export function fileBlob(path) { return new Blob([readFileSync(path)]); }
export { existsSync };
