// spawnlib.mjs — like lib.mjs startServer, for tests that must control how
// the server process is spawned: another user (spawn's uid/gid, root only)
// or a wrapper such as `sh -c 'umask 022; exec traceboard ...'` (umask, or
// any shell prelude: ulimit -f to make writes fail as on a full disk).
import { spawn } from 'node:child_process';
import { BIN } from './lib.mjs';

/** Starts `traceboard serve` on dataDir; resolves when it prints its URL.
 * @param {string} dataDir
 * @param {{uid?: number, umask?: string, sh?: string, args?: string[]}} [opts]
 * sh: shell commands run before exec (e.g. "trap '' XFSZ; ulimit -f 4096;"). */
export async function startServerSpawned(dataDir, opts = {}) {
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...(opts.args || [])];
  const spawnOpts = { stdio: ['ignore', 'pipe', 'pipe'] };
  if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.uid });
  const prelude = (opts.umask ? `umask ${opts.umask}; ` : '') + (opts.sh || '');
  const child = prelude
    ? spawn('/bin/sh', ['-c', `${prelude} exec "$0" "$@"`, BIN, ...args], spawnOpts)
    : spawn(BIN, args, spawnOpts);
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
    child, dataDir, token, base, stderr: () => err,
    req: (path, init = {}) => fetch(base + path, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers || {}), ...(init.auth === false ? {} : { Authorization: `Bearer ${token}` }) },
    }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
  };
}
