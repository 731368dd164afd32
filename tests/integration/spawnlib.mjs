// spawnlib.mjs — like lib.mjs startServer, for tests that must control how
// the server process is spawned: another user (spawn's uid/gid, root only,
// with workFor's copy of the binary that user can reach)
// or a wrapper such as `sh -c 'umask 022; exec traceboard ...'` (umask, or
// any shell prelude: ulimit -f to make writes fail as on a full disk).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, serveArgs, attachServer } from './lib.mjs';

/** Starts `traceboard serve` on dataDir; resolves, when it prints its URL,
 * to lib.mjs's server handle (attachServer). dataDir stays the caller's.
 * @param {string} dataDir
 * @param {{uid?: number, umask?: string, sh?: string, args?: string[]}} [opts]
 * sh: shell commands run before exec (e.g. "trap '' XFSZ; ulimit -f 4096;"). */
export async function startServerSpawned(dataDir, opts = {}) {
  const args = serveArgs(dataDir, opts.args);
  const bin = opts.bin || BIN;
  const spawnOpts = { stdio: ['ignore', 'pipe', 'pipe'] };
  if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.uid });
  if (opts.cwd) spawnOpts.cwd = opts.cwd;
  if (opts.env) spawnOpts.env = opts.env;
  const prelude = (opts.umask ? `umask ${opts.umask}; ` : '') + (opts.sh || '');
  const child = prelude
    ? spawn('/bin/sh', ['-c', `${prelude} exec "$0" "$@"`, bin, ...args], spawnOpts)
    : spawn(bin, args, spawnOpts);
  return attachServer(child, dataDir);
}

/** Whether user uid can search (reach) the folder dir: every folder above it
 * must let that user through, which a home such as /root does not. */
export function reachableBy(uid, dir) {
  return spawnSync('/bin/sh', ['-c', 'test -x "$0"', dir], { uid, gid: uid, cwd: '/', stdio: 'ignore' }).status === 0;
}

/** A work folder for a server run as user uid (root only), wherever the
 * checkout lives: the checkout may sit under /root, closed to others, so the
 * binary is copied in and the sanitizer reports (make asan points them into
 * the checkout) are written here too.
 * Returns {work (owned by uid; the caller removes it), bin, env, cwd,
 * reports() (the text of any sanitizer report the server wrote)}: pass bin,
 * env and cwd, with uid, to startServerSpawned. */
export function workFor(uid, prefix) {
  const base = reachableBy(uid, tmpdir()) ? tmpdir() : '/tmp';
  const work = mkdtempSync(join(base, prefix));
  const binDir = join(work, 'bin');
  mkdirSync(binDir);
  chmodSync(binDir, 0o755);
  const bin = join(binDir, 'traceboard');
  copyFileSync(BIN, bin);
  chmodSync(bin, 0o755);
  const san = join(work, 'sanitizer-logs');
  mkdirSync(san);
  chownSync(san, uid, uid);
  chownSync(work, uid, uid);
  const env = { ...process.env };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS']) {
    if (env[k]) env[k] = env[k].replace(/log_path=[^:]*\/(asan|ubsan)/, `log_path=${san}/$1`);
  }
  const reports = () => readdirSync(san).map((f) => readFileSync(join(san, f), 'utf8')).join('\n');
  return { work, bin, env, cwd: work, reports };
}
