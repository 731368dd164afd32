// node_deps_ok.mjs — exits 0 when tests/node_modules holds exactly what
// tests/package-lock.json pins (every package at its locked version), else 1,
// so that `make test-deps` runs `npm ci` again after the lock changed or a
// different version was installed by hand. Runs on Node 18 (Debian 12).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
let ok = true;
try {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  for (const [path, pkg] of Object.entries(lock.packages || {})) {
    if (!path) continue; // the root package itself
    const have = JSON.parse(readFileSync(join(dir, path, 'package.json'), 'utf8')).version;
    if (have !== pkg.version) ok = false;
  }
} catch {
  ok = false; // no lock, or a package missing
}
process.exit(ok ? 0 : 1);
