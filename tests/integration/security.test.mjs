// Security checks not covered by http.test.mjs: security headers on every
// kind of answer, no inline script in the page, CSRF (cross-site Origin /
// Sec-Fetch-Site on POST, PATCH, DELETE; no CORS grant), DNS rebinding
// without a token, and path traversal in static paths, --web-dir and run ids.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, writeFileSync, symlinkSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { startServer, demoFiles } from './lib.mjs';

const EVIL = 'https://evil.example';
let srv, runId, cookie;

/** One request with the target sent verbatim (fetch would normalise "..").
 * Resolves {status, headers, body}. */
function raw(base, target, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(base);
  return new Promise((res, rej) => {
    const r = http.request({ host: u.hostname, port: u.port, method, path: target, headers }, (resp) => {
      const chunks = [];
      resp.on('data', (c) => chunks.push(c));
      resp.on('end', () => res({ status: resp.statusCode, headers: resp.headers, body: Buffer.concat(chunks).toString() }));
    });
    r.on('error', rej);
    r.end(body);
  });
}

before(async () => {
  srv = await startServer();
  const [amp] = demoFiles('matmul_amp');
  const r = await srv.req(`/api/runs?filename=${basename(amp)}&name=kept`, { method: 'POST', body: readFileSync(amp) });
  assert.equal(r.status, 201);
  runId = (await r.json()).id;
  const c = await srv.req(`/?token=${srv.token}`, { auth: false });
  cookie = c.headers.get('set-cookie').split(';')[0];
});
after(async () => { await srv.stop(); srv.cleanup(); });

function checkHeaders(r, what) {
  const csp = r.headers.get('content-security-policy');
  assert.ok(csp, `${what}: no CSP`);
  const dirs = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map((d) => [d[0], d.slice(1)]));
  const script = dirs['script-src'] || dirs['default-src'];
  assert.ok(script, `${what}: CSP has no script-src/default-src`);
  for (const bad of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'http:', 'https:'])
    assert.ok(!script.includes(bad), `${what}: script-src allows ${bad}`);
  assert.deepEqual(dirs['object-src'], ["'none'"], `${what}: object-src`);
  assert.ok(dirs['frame-ancestors'], `${what}: frame-ancestors`);
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  assert.equal(r.headers.get('access-control-allow-origin'), null, `${what}: CORS granted`);
}

test('CSP without inline script and nosniff on pages, assets, API, errors', async () => {
  const asCookie = { auth: false, headers: { Cookie: cookie } };
  const cases = [
    ['/', 200, /text\/html/], ['/index.html', 200, /text\/html/], ['/js/app.js', 200, /javascript/],
    ['/css/app.css', 200, /text\/css/], ['/favicon.svg', 200, /image\/svg\+xml/],
    ['/no/such/page', 404, null], ['/api/runs', 200, /application\/json/], [`/api/runs/${runId}/overview`, 200, /application\/json/],
    ['/api/runs/0000000000000000', 404, /application\/json/], [`/api/runs/${runId}/source?rank=0`, 200, null],
  ];
  for (const [path, status, type] of cases) {
    const r = await srv.req(path, asCookie);
    assert.equal(r.status, status, path);
    if (type) assert.match(r.headers.get('content-type'), type, path);
    checkHeaders(r, path);
  }
  for (const path of ['/', '/js/app.js', '/api/runs']) checkHeaders(await srv.req(path, { auth: false }), `${path} without token`);
  checkHeaders(await srv.req('/api/health', { auth: false }), '/api/health');
  // every JS file the page loads is served as JavaScript (nosniff would block it otherwise)
  const page = await (await srv.req('/', asCookie)).text();
  const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.ok(scripts.length >= 1);
  for (const [, attrs, bodyText] of scripts) {
    assert.match(attrs, /\bsrc=/, 'inline <script> in index.html');
    assert.equal(bodyText.trim(), '', 'script with a body in index.html');
    const src = attrs.match(/\bsrc="([^"]+)"/)[1];
    const js = await srv.req('/' + src.replace(/^\.?\//, ''), asCookie);
    assert.equal(js.status, 200, src);
    assert.match(js.headers.get('content-type'), /javascript/, src);
  }
  assert.doesNotMatch(page, /\son[a-z]+\s*=/i, 'inline event handler in index.html');
  assert.doesNotMatch(page, /javascript:/i, 'javascript: URL in index.html');
});

test('CSRF: cookie-authenticated POST, PATCH, DELETE from a cross-site page are refused', async () => {
  const [fp32] = demoFiles('matmul_fp32_strict');
  const before = (await (await srv.req('/api/runs')).json()).runs;
  const attempts = [
    ['POST', `/api/runs?filename=${basename(fp32)}`, readFileSync(fp32)],
    ['PATCH', `/api/runs/${runId}`, '{"name":"pwned"}'],
    ['DELETE', `/api/runs/${runId}`, undefined],
  ];
  for (const [method, path, body] of attempts) {
    for (const extra of [{ Origin: EVIL }, { Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' }, { 'Sec-Fetch-Site': 'same-site' },
      { Origin: 'null' }, { 'X-Traceboard-CSRF': '0' }, {}]) {
      const r = await srv.req(path, { auth: false, method, body, headers: { Cookie: cookie, ...extra } });
      assert.equal(r.status, 403, `${method} ${path} ${JSON.stringify(extra)}`);
      assert.match((await r.json()).error.message, /X-Traceboard-CSRF/);
    }
  }
  assert.deepEqual((await (await srv.req('/api/runs')).json()).runs, before, 'a refused change changed something');
  // the preflight a cross-site script would need is never granted
  const pre = await raw(srv.base, `/api/runs/${runId}`, { method: 'OPTIONS', headers: {
    Origin: EVIL, 'Access-Control-Request-Method': 'PATCH', 'Access-Control-Request-Headers': 'x-traceboard-csrf' } });
  for (const h of Object.keys(pre.headers)) assert.ok(!h.startsWith('access-control-'), `preflight answered ${h}`);
  // the page's own request (cookie + header) works
  const ok = await srv.req(`/api/runs/${runId}`, { auth: false, method: 'PATCH', body: '{"name":"renamed"}',
    headers: { Cookie: cookie, 'X-Traceboard-CSRF': '1' } });
  assert.equal(ok.status, 200);
  // a cookie does not stand in for a wrong bearer token
  const wrong = await srv.req(`/api/runs/${runId}`, { auth: false, method: 'DELETE',
    headers: { Cookie: cookie, 'X-Traceboard-CSRF': '1', Authorization: 'Bearer x' + srv.token.slice(1) } });
  assert.equal(wrong.status, 401);
  assert.equal((await srv.req(`/api/runs/${runId}`)).status, 200);
});

test('--no-auth: cross-site changes and foreign Host names (DNS rebinding) refused', async () => {
  const open = await startServer({ args: ['--no-auth'] });
  try {
    const [amp] = demoFiles('matmul_amp');
    const path = `/api/runs?filename=${basename(amp)}`;
    for (const h of [{ Origin: EVIL }, { 'Sec-Fetch-Site': 'cross-site' }]) {
      const r = await open.req(path, { method: 'POST', body: readFileSync(amp), headers: h });
      assert.equal(r.status, 403, JSON.stringify(h));
      for (const method of ['PATCH', 'DELETE']) {
        const x = await open.req('/api/runs/0123456789abcdef', { method, body: method === 'PATCH' ? '{"name":"x"}' : undefined, headers: h });
        assert.equal(x.status, 403, `${method} ${JSON.stringify(h)}`);
      }
    }
    assert.equal((await (await open.req('/api/runs')).json()).runs.length, 0);
    const u = new URL(open.base);
    for (const host of ['evil.example', `evil.example:${u.port}`, `127.0.0.1.evil.example:${u.port}`, `localhost.evil.example`]) {
      for (const p of ['/api/runs', '/', '/js/app.js']) {
        const r = await raw(open.base, p, { headers: { Host: host } });
        assert.equal(r.status, 403, `${p} Host: ${host}`);
      }
    }
    for (const host of [`127.0.0.1:${u.port}`, `localhost:${u.port}`]) assert.equal((await raw(open.base, '/api/runs', { headers: { Host: host } })).status, 200, host);
    // a script without Origin (curl) still works
    const r = await open.req(path, { method: 'POST', body: readFileSync(amp) });
    assert.equal(r.status, 201);
  } finally {
    await open.stop();
    open.cleanup();
  }
});

const TRAVERSAL = [
  '/../../../../etc/passwd', '/js/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/js/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2f..%2fetc%2fpasswd', '/js/..%2f..%2f..%2fetc%2fpasswd',
  '//etc/passwd', '/js//../../etc/passwd', '/..\\..\\..\\etc\\passwd', '/%2e%2e%5c%2e%2e%5cetc%5cpasswd',
  '/js/app.js%00.html', '/%252e%252e/%252e%252e/etc/passwd', '/.git/config', '/./index.html', '/js/./app.js',
  '/.hidden', '/leak.txt', '/sub/../leak.txt',
];

function refused(r, what) {
  assert.ok([400, 403, 404].includes(r.status), `${what} answered ${r.status}`);
  assert.doesNotMatch(r.body, /root:.*:0:0:/, `${what} leaked /etc/passwd`);
  assert.doesNotMatch(r.body, /SECRET-OUTSIDE/, `${what} leaked a file outside web_dir`);
}

test('path traversal in static paths refused (embedded assets and --web-dir)', async () => {
  const auth = { Authorization: `Bearer ${srv.token}` };
  for (const p of TRAVERSAL) refused(await raw(srv.base, p, { headers: auth }), `embedded ${p}`);

  const work = mkdtempSync(join(tmpdir(), 'tb-webdir-'));
  const web = join(work, 'web');
  try {
    for (const d of [web, join(web, 'js'), join(web, 'sub')]) mkdirSync(d);
    writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(join(web, 'js', 'app.js'), '// app');
    writeFileSync(join(web, '.hidden'), 'SECRET-OUTSIDE hidden');
    writeFileSync(join(work, 'secret.txt'), 'SECRET-OUTSIDE');
    symlinkSync(join(work, 'secret.txt'), join(web, 'leak.txt'));
    symlinkSync('/etc', join(web, 'etc'));
    const dev = await startServer({ args: ['--web-dir', web] });
    try {
      const h = { Authorization: `Bearer ${dev.token}` };
      assert.equal((await raw(dev.base, '/js/app.js', { headers: h })).status, 200);
      assert.equal((await raw(dev.base, '/', { headers: h })).status, 200);
      for (const p of [...TRAVERSAL, '/etc/passwd', '/secret.txt', '/../secret.txt', '/js/../../secret.txt', '/%2e%2e/secret.txt'])
        refused(await raw(dev.base, p, { headers: h }), `web_dir ${p}`);
    } finally {
      await dev.stop();
      dev.cleanup();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('path traversal and malformed run ids refused on every run route', async () => {
  const auth = { Authorization: `Bearer ${srv.token}` };
  const ids = ['..', '%2e%2e', '..%2f..%2fetc', '..%2F..%2Fcatalog.db', '%2e%2e%2f%2e%2e%2ftmp', '.', '',
    runId.toUpperCase(), runId + '0', runId.slice(1), runId.slice(0, 15) + 'g', `${runId}%00`, `${runId}%2f..`,
    `..%2f${runId}`, '*', '%25', 'runs', '0x' + runId.slice(2)];
  const subs = ['', '/overview', '/operators', '/kernels', '/memory', '/timeline/tracks', '/ranks', '/source?rank=0'];
  for (const id of ids) {
    for (const s of subs) {
      const r = await raw(srv.base, `/api/runs/${id}${s}`, { headers: auth });
      assert.ok([400, 404, 405].includes(r.status) || (id === '' && s === '' && r.status === 200),
        `/api/runs/${id}${s} answered ${r.status}`);
      assert.doesNotMatch(r.body, /SQLite format|root:.*:0:0:/);
    }
    for (const method of ['DELETE', 'PATCH']) {
      const r = await raw(srv.base, `/api/runs/${id}`, { method, headers: { ...auth, 'Content-Type': 'application/json' },
        body: method === 'PATCH' ? '{"name":"x"}' : undefined });
      assert.ok(r.status >= 400 || (id === '' && r.status === 405), `${method} /api/runs/${id} answered ${r.status}`);
    }
  }
  // the diff endpoints validate their run ids too
  for (const q of ['a=..%2f..&b=' + runId, `a=${runId}&b=..%2fcatalog.db`])
    assert.ok([400, 404].includes((await raw(srv.base, `/api/diff?${q}`, { headers: auth })).status), q);
  const runs = (await (await srv.req('/api/runs')).json()).runs;
  assert.ok(runs.some((r) => r.id === runId), 'the run survived');
  assert.equal((await srv.req(`/api/runs/${runId}/overview`)).status, 200);
});
