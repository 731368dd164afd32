// Issue 15, faults found by testing from outside: what crosses the server's
// boundary is made safe there. File and folder names that are not UTF-8 are
// repaired (U+FFFD) instead of breaking the JSON answers; the redirect that
// takes ?token= out of the address stays on this server; a trace downloads
// under a name of its own kind, whatever it was uploaded as; a request
// target or header block too large is answered by us (JSON, security
// headers) up to what libmicrohttpd can hold at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, copyFileSync, rmSync, utimesSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { startServer, demoFiles, HAVE_SQLITE } from './lib.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { await srv.stop(); srv.cleanup(); });

const TRACE = () => readFileSync(demoFiles('matmul_amp')[0]);

async function waitFor(fn, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Sends head (the request line and headers, CRLF-separated, without the
 * empty line) on its own connection, exactly as written (fetch would
 * normalise the path); resolves to {status, headers (lower-case names), body}. */
function rawRequest(s, head) {
  const u = new URL(s.base);
  return new Promise((res, rej) => {
    let buf = Buffer.alloc(0);
    const sock = connect(Number(u.port), u.hostname, () => sock.write(head + '\r\nConnection: close\r\n\r\n'));
    sock.on('data', (d) => { buf = Buffer.concat([buf, d]); });
    sock.on('error', rej);
    sock.on('close', () => {
      const text = buf.toString('latin1');
      const at = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, at < 0 ? text.length : at).split('\r\n');
      const headers = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      res({ status: Number((lines[0].match(/^HTTP\/1\.[01] (\d+)/) || [])[1]), headers, body: at < 0 ? '' : text.slice(at + 4) });
    });
  });
}

/** Asserts the run is listed and its page answers, with every file name valid
 * text holding U+FFFD where the bad bytes were; returns GET /api/runs/{id}. */
async function checkListed(s, id, fileRe) {
  const list = await s.json('/api/runs');
  const run = list.runs.find((x) => x.id === id);
  assert.ok(run, `run ${id} is listed`);
  const one = await s.json(`/api/runs/${id}`);
  assert.match(JSON.stringify(one), fileRe);
  return one;
}

test('a raw upload whose ?filename= is not UTF-8: 201, listed, the name repaired', async () => {
  const r = await srv.req('/api/runs?filename=raw%FF.pt.trace.json.gz', { method: 'POST', body: TRACE() });
  const body = await r.json();
  assert.equal(r.status, 201, JSON.stringify(body));
  await checkListed(srv, body.id, /raw\uFFFD\.pt\.trace\.json\.gz/);
});

test('a multipart upload whose filename bytes are not UTF-8: 201, listed, the name repaired', async () => {
  const b = 'tbBoundary15';
  const body = Buffer.concat([
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="rank0`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('.pt.trace.json.gz"\r\nContent-Type: application/gzip\r\n\r\n'),
    TRACE(),
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
  const r = await srv.req('/api/runs', {
    method: 'POST', body, headers: { 'Content-Type': `multipart/form-data; boundary=${b}` },
  });
  const j = await r.json();
  assert.equal(r.status, 201, JSON.stringify(j));
  await checkListed(srv, j.id, /rank0\uFFFD\uFFFD\.pt\.trace\.json\.gz/);
});

test('--logdir: a folder and a file whose names are not UTF-8 become a listed run', async () => {
  const work = mkdtempSync(join(tmpdir(), 'tb-badname-'));
  const logdir = join(work, 'runs');
  mkdirSync(logdir);
  const job = Buffer.concat([Buffer.from(logdir + '/job'), Buffer.from([0xff])]);
  mkdirSync(job);
  const file = Buffer.concat([job, Buffer.from('/rank0'), Buffer.from([0xfe]), Buffer.from('.pt.trace.json.gz')]);
  copyFileSync(demoFiles('matmul_amp')[0], file);
  const old = new Date(Date.now() - 60000);
  utimesSync(file, old, old);
  const s = await startServer({ dataDir: join(work, 'data'), args: ['--logdir', logdir, '--logdir-interval', '1'] });
  try {
    const runs = await waitFor(async () => {
      const r = await s.req('/api/runs');
      if (r.status !== 200) return null;
      const j = await r.json();
      return j.runs.length ? j.runs : null;
    });
    assert.ok(runs, `the folder was imported and listed (GET /api/runs: ${(await s.req('/api/runs')).status})`);
    assert.equal(runs[0].name, 'job\uFFFD');
    await checkListed(s, runs[0].id, /rank0\uFFFD\.pt\.trace\.json\.gz/);
  } finally {
    await s.stop();
    rmSync(work, { recursive: true, force: true });
  }
});

test('a run stored earlier with names that are not UTF-8 is listed and served, names repaired', { skip: !HAVE_SQLITE && 'no sqlite3 CLI' }, async () => {
  const id = await srv.uploadBody(TRACE(), 'old.pt.trace.json.gz', 'old');
  // what an older server stored for a --logdir folder "old\xff" and file "old\xfe..."
  execFileSync('sqlite3', [join(srv.dataDir, 'catalog.db'), `UPDATE runs SET name = CAST(X'6f6c64ff' AS TEXT) WHERE id = '${id}'`]);
  srv.sql(id, "UPDATE rank SET file = CAST(X'6f6c64fe2e6a736f6e' AS TEXT)");
  const list = await srv.json('/api/runs');
  const run = list.runs.find((x) => x.id === id);
  assert.ok(run, 'the run is listed');
  assert.equal(run.name, 'old\uFFFD');
  const one = await srv.json(`/api/runs/${id}`);
  assert.equal(one.name, 'old\uFFFD');
  assert.equal(one.info.ranks[0].file, 'old\uFFFD.json');
});

test('the ?token= redirect stays on this server whatever the path starts with', async () => {
  for (const path of ['/\\evil.example/', '//evil.example/', '/\\/evil.example/x', '/\\\\evil.example', '/%2F/ok/']) {
    const r = await rawRequest(srv, `GET ${path}?token=${srv.token}&view=x HTTP/1.1\r\nHost: 127.0.0.1`);
    assert.equal(r.status, 303, `${path}: ${r.status}`);
    const loc = r.headers.location;
    assert.ok(loc && !loc.includes('token='), `${path}: ${loc}`);
    assert.match(loc, /^\/[^/\\]/, `${path} redirects to a path on this server, got ${loc}`);
    // and a browser resolves it to this server
    assert.equal(new URL(loc, srv.base + '/').host, new URL(srv.base).host, `${path} -> ${loc}`);
    assert.match(loc, /\?view=x$/);
  }
});

test('a trace uploaded as evil.html downloads as .json / .json.gz with a trace Content-Type', async () => {
  const gz = TRACE();
  const cases = [
    { upload: 'evil.html', body: gunzipSync(gz), file: 'evil.json', type: 'application/json' },
    { upload: 'evil.html', body: gz, file: 'evil.json.gz', type: 'application/gzip' },
    { upload: 'page.htm.gz', body: gz, file: 'page.json.gz', type: 'application/gzip' },
    { upload: 'x.svg', body: gunzipSync(gz), file: 'x.json', type: 'application/json' },
    { upload: 'rank0.pt.trace.json.gz', body: gz, file: 'rank0.pt.trace.json.gz', type: 'application/gzip' },
    { upload: 'plain.json', body: gunzipSync(gz), file: 'plain.json', type: 'application/json' },
    { upload: 'noext', body: gz, file: 'noext.json.gz', type: 'application/gzip' },
  ];
  for (const c of cases) {
    const id = await srv.uploadBody(c.body, c.upload, c.upload);
    const r = await srv.req(`/api/runs/${id}/source?rank=0`);
    assert.equal(r.status, 200, c.upload);
    const cd = r.headers.get('content-disposition') || '';
    assert.match(cd, /^attachment;/, `${c.upload}: ${cd}`);
    assert.ok(cd.includes(`filename="${c.file}"`) && cd.includes(`filename*=UTF-8''${c.file}`), `${c.upload}: ${cd}`);
    assert.doesNotMatch(cd, /\.html?\b|\.svg/i, `${c.upload}: ${cd}`);
    assert.equal(r.headers.get('content-type'), c.type, c.upload);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(c.body), `${c.upload}: the bytes as uploaded`);
  }
});

test('a request target or header block too large: 414/431 in JSON with the security headers', async () => {
  const auth = `Authorization: Bearer ${srv.token}`;
  const cases = [
    [`GET /api/runs?x=${'a'.repeat(40 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`, 414],
    [`GET /${'a'.repeat(40 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1`, 414],
    [`GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\nX-Big: ${'b'.repeat(40 * 1024)}`, 431],
    [`GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n${Array.from({ length: 1200 }, (_, i) => `X-H${i}: ${'c'.repeat(30)}`).join('\r\n')}`, 431],
    [`POST /api/runs?filename=a.json HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\nContent-Length: 2\r\nX-Big: ${'b'.repeat(40 * 1024)}`, 431],
  ];
  for (const [head, status] of cases) {
    const r = await rawRequest(srv, head);
    assert.equal(r.status, status, head.slice(0, 60));
    assert.match(r.headers['content-type'] || '', /application\/json/, head.slice(0, 60));
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(r.headers['content-security-policy'] || '', /default-src/);
    assert.equal(JSON.parse(r.body).error.code, 'too_large');
  }
  // within the limits: served as usual
  const ok = await rawRequest(srv, `GET /api/runs?x=${'a'.repeat(16 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\nX-Big: ${'b'.repeat(16 * 1024)}`);
  assert.equal(ok.status, 200);
  // past what a connection may hold, libmicrohttpd answers first (README
  // "Security"): still a 4xx that closes the connection, and we go on serving
  const huge = await rawRequest(srv, `GET /api/runs?x=${'a'.repeat(200 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1`);
  assert.ok(huge.status === 414 || huge.status === 431, String(huge.status));
  assert.equal((await srv.req('/api/health', { auth: false })).status, 200);
});
