// rofs.mjs — data folders the server cannot write, for the read-only and
// full-disk tests. Root ignores file permissions, so as root a read-only
// folder is a read-only bind mount and a full disk a small tmpfs; other users
// get chmod a-w (a full disk needs mount, so those tests skip).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, writeSync, closeSync, readdirSync, statSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Whether this process may mount (root with CAP_SYS_ADMIN). */
export const CAN_MOUNT = (() => {
  if (!isRoot) return false;
  const d = mkdtempSync(join(tmpdir(), 'tb-mnt-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', d], { stdio: 'ignore' });
    execFileSync('umount', [d], { stdio: 'ignore' });
    return true;
  } catch { return false; } finally { rmdirSync(d); }
})();

/** Every path under dir (dir included). */
function walk(dir, out = []) {
  out.push(dir);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out); else out.push(p);
  }
  return out;
}

/** A read-only view of dataDir for a server to start on: {dir, undo()}.
 * null when it cannot be made here (root without mount). */
export function readOnlyView(dataDir) {
  if (isRoot) {
    if (!CAN_MOUNT) return null;
    const mnt = mkdtempSync(join(tmpdir(), 'tb-romnt-'));
    execFileSync('mount', ['--bind', dataDir, mnt]);
    execFileSync('mount', ['-o', 'remount,bind,ro', mnt]);
    return { dir: mnt, undo() { execFileSync('umount', [mnt]); rmdirSync(mnt); } };
  }
  const paths = walk(dataDir);
  const modes = paths.map((p) => statSync(p).mode & 0o777);
  for (const p of paths) chmodSync(p, statSync(p).mode & 0o555);
  return { dir: dataDir, undo() { paths.forEach((p, i) => chmodSync(p, modes[i])); } };
}

/** A small tmpfs (root only; null otherwise): {dir, fill(), undo()}.
 * fill() writes a file until the disk is full. */
export function smallDisk(size = '32m') {
  if (!CAN_MOUNT) return null;
  const dir = mkdtempSync(join(tmpdir(), 'tb-fulldisk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  return {
    dir,
    fill() {
      const fd = openSync(join(dir, 'filler'), 'w');
      const buf = Buffer.alloc(4096);
      try { for (;;) writeSync(fd, buf); } catch (e) { if (e.code !== 'ENOSPC') throw e; } finally { closeSync(fd); }
    },
    undo() { execFileSync('umount', [dir]); rmdirSync(dir); },
  };
}

/** [relative path, size] of every file under dir, sorted: to show that
 * nothing was created or changed. */
export function listing(dir) {
  return walk(dir).slice(1).map((p) => [p.slice(dir.length), statSync(p).isDirectory() ? -1 : statSync(p).size]).sort();
}
