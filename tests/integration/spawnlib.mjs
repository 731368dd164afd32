// spawnlib.mjs — like lib.mjs startServer, for tests that must control how
// the server process is spawned: another user (spawn's uid/gid, root only)
// or a wrapper such as `sh -c 'umask 022; exec traceboard ...'` (umask, or
// any shell prelude: ulimit -f to make writes fail as on a full disk).
import { spawn } from 'node:child_process';
import { BIN, serveArgs, attachServer } from './lib.mjs';

/** Starts `traceboard serve` on dataDir; resolves, when it prints its URL,
 * to lib.mjs's server handle (attachServer). dataDir stays the caller's.
 * @param {string} dataDir
 * @param {{uid?: number, umask?: string, sh?: string, args?: string[]}} [opts]
 * sh: shell commands run before exec (e.g. "trap '' XFSZ; ulimit -f 4096;"). */
export async function startServerSpawned(dataDir, opts = {}) {
  const args = serveArgs(dataDir, opts.args);
  const spawnOpts = { stdio: ['ignore', 'pipe', 'pipe'] };
  if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.uid });
  const prelude = (opts.umask ? `umask ${opts.umask}; ` : '') + (opts.sh || '');
  const child = prelude
    ? spawn('/bin/sh', ['-c', `${prelude} exec "$0" "$@"`, BIN, ...args], spawnOpts)
    : spawn(BIN, args, spawnOpts);
  return attachServer(child, dataDir);
}
