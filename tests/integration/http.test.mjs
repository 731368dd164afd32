// HTTP integration tests: the real binary on a random loopback port.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { startServer, demoFiles, fileBlob } from './lib.mjs';

let srv;
before(async () => { srv = await startServer({ args: ['--upload-limit', '20M'] }); });
after(async () => { await srv.stop(); srv.cleanup(); });

test('health is open, everything else needs the token', async () => {
  const h = await srv.req('/api/health', { auth: false });
  assert.equal(h.status, 200);
  assert.equal((await h.json()).ok, true);
  for (const path of ['/api/runs', '/', '/index.html', '/js/app.js']) {
    const r = await srv.req(path, { auth: false });
    assert.equal(r.status, 401, path);
  }
  const api = await srv.req('/api/runs', { auth: false });
  assert.match((await api.json()).error.message, /token/i);
  const wrong = await srv.req('/api/runs', { auth: false, headers: { Authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
});

test('?token= sets an HttpOnly SameSite=Strict cookie and redirects without the token', async () => {
  const r = await srv.req(`/?token=${srv.token}`, { auth: false });
  assert.ok([302, 303].includes(r.status));
  assert.ok(!r.headers.get('location').includes('token='));
  const cookie = r.headers.get('set-cookie');
  assert.match(cookie, /HttpOnly/i);
  assert.match(cookie, /SameSite=Strict/i);
  const page = await srv.req('/', { auth: false, headers: { Cookie: cookie.split(';')[0] } });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy'), /script-src 'self'/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  // a cookie-authenticated change without the CSRF header is refused
  const del = await srv.req('/api/runs/0123456789abcdef', { auth: false, method: 'DELETE', headers: { Cookie: cookie.split(';')[0] } });
  assert.equal(del.status, 403);
});

test('upload by multipart (several ranks = one run) and by raw body', async () => {
  const fd = new FormData();
  fd.append('name', 'gloo <b>job</b>');
  for (const f of demoFiles('ddp_gloo_4ranks')) fd.append('file', fileBlob(f), basename(f));
  const r = await srv.req('/api/runs', { method: 'POST', body: fd });
  const body = await r.json();
  assert.equal(r.status, 201, JSON.stringify(body));
  assert.match(body.id, /^[0-9a-f]{16}$/);
  assert.equal(body.url, `./?run=${body.id}`);
  const run = await (await srv.req(`/api/runs/${body.id}`)).json();
  assert.equal(run.name, 'gloo <b>job</b>');
  assert.equal(run.ranks, 4);
  assert.equal(run.info.ranks.length, 4);
  assert.deepEqual(run.info.ranks.map((x) => x.rank), [0, 1, 2, 3]);
  assert.equal(run.info.ranks[2].file.startsWith('rank2.'), true);

  const [amp] = demoFiles('matmul_amp');
  const raw = await srv.req(`/api/runs?filename=${basename(amp)}&name=amp`, {
    method: 'POST', body: readFileSync(amp), headers: { 'Content-Type': 'application/gzip' },
  });
  const rb = await raw.json();
  assert.equal(raw.status, 201, JSON.stringify(rb));
  const info = await (await srv.req(`/api/runs/${rb.id}`)).json();
  assert.equal(info.gpu, 'NVIDIA H100 80GB HBM3');
  assert.equal(info.info.ranks[0].device.computeMajor, 9);
  assert.ok(info.info.ranks[0].stats.by_kind.kernel > 100);

  // the original can be downloaded again, byte for byte
  const src = await srv.req(`/api/runs/${rb.id}/source?rank=0`);
  assert.equal(src.status, 200);
  assert.deepEqual(Buffer.from(await src.arrayBuffer()), readFileSync(amp));

  const list = await (await srv.req('/api/runs')).json();
  assert.ok(list.runs.some((x) => x.id === rb.id) && list.runs.some((x) => x.id === body.id));
});

test('async upload reports a job that ends on the run', async () => {
  const [f] = demoFiles('dataloader_workers8');
  const r = await srv.req(`/api/runs?async=1&filename=${basename(f)}`, { method: 'POST', body: readFileSync(f) });
  assert.equal(r.status, 202);
  const { job } = await r.json();
  let j;
  for (let i = 0; i < 100; i++) {
    j = await (await srv.req(`/api/jobs/${job}`)).json();
    if (j.state === 'done' || j.state === 'failed') break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(j.state, 'done', JSON.stringify(j));
  assert.match(j.run_id, /^[0-9a-f]{16}$/);
  assert.equal(j.bytes_done, j.bytes_total);
});

test('bad uploads get clear 4xx errors and nothing stored is lost', async () => {
  const before = (await (await srv.req('/api/runs')).json()).runs.length;
  const cases = [
    { body: '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2} {"ph": "X", "ts": 3}]}', status: 400, msg: /invalid JSON/ },
    { body: '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}, {"ph": "X", "ts": "oops"', status: 201 }, // cut short: kept
    { body: 'hello, not json', status: 415, msg: /not a trace/ },
    { body: '{"traceEvents": 5}', status: 400, msg: /expected/ },
    { body: '', status: 400, msg: /empty/ },
    { body: '{"schema": "1.0.1", "nodes": []}', status: 415, msg: /execution trace/ },
    { body: '[[1, 2, 3, 4]]', status: 415, msg: /memory timeline/ },
    { body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x12, 0x34, 0x56]), status: 400, msg: /gzip/ },
  ];
  for (const c of cases) {
    const r = await srv.req('/api/runs?filename=trace.json', { method: 'POST', body: c.body });
    const b = await r.json();
    assert.equal(r.status, c.status, `${JSON.stringify(b)} for ${String(c.body).slice(0, 30)}`);
    if (c.status === 201) {
      // a file cut mid-event keeps its complete events and says so
      const info = await (await srv.req(`/api/runs/${b.id}`)).json();
      assert.match(info.info.ranks[0].notes[0].reason, /truncated/);
      assert.equal((await srv.req(`/api/runs/${b.id}`, { method: 'DELETE' })).status, 204);
      continue;
    }
    assert.equal(typeof b.error.message, 'string');
    assert.match(b.error.message, c.msg);
  }
  const nofile = await srv.req('/api/runs', { method: 'POST', body: new FormData() });
  assert.equal(nofile.status, 400);
  const after = (await (await srv.req('/api/runs')).json()).runs.length;
  assert.equal(after, before);
  assert.equal((await srv.req('/api/health')).status, 200);
});

/** POST with Expect: 100-continue, as curl does for large bodies: the server
 * may refuse before the body is sent. Resolves {status, body}. */
function postExpect(path, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(srv.base + path);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST',
      headers: { Authorization: `Bearer ${srv.token}`, 'Content-Length': body.length, Expect: '100-continue' } });
    req.on('continue', () => req.end(body));
    req.on('response', (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', reject);
  });
}

test('413 over the upload limit and for a gzip bomb; the server keeps serving', async () => {
  const big = Buffer.alloc(21 * 1024 * 1024, 0x20);
  const r = await postExpect('/api/runs?filename=big.json', big);
  assert.equal(r.status, 413);
  assert.match(JSON.parse(r.body).error.message, /limit/i);
  // 300 MB of spaces compress to ~300 KB: far past the ratio limit
  const pad = Buffer.alloc(300 * 1024 * 1024, 0x20);
  Buffer.from('{"traceEvents": [').copy(pad);
  const bomb = gzipSync(pad, { level: 9 });
  const b = await srv.req('/api/runs?filename=bomb.json.gz', { method: 'POST', body: bomb });
  assert.equal(b.status, 413);
  assert.match((await b.json()).error.message, /gzip bomb|inflate/);
  assert.equal((await srv.req('/api/health')).status, 200);
});

test('rename, tag and delete a run', async () => {
  const [f] = demoFiles('matmul_fp32_strict');
  const r = await srv.req(`/api/runs?filename=${basename(f)}`, { method: 'POST', body: readFileSync(f) });
  const { id } = await r.json();
  const p = await srv.req(`/api/runs/${id}`, { method: 'PATCH', body: JSON.stringify({ name: 'fp32', tags: ['baseline'] }), headers: { 'Content-Type': 'application/json' } });
  assert.equal(p.status, 200);
  const got = await p.json();
  assert.equal(got.name, 'fp32');
  assert.deepEqual(got.tags, ['baseline']);
  const bad = await srv.req(`/api/runs/${id}`, { method: 'PATCH', body: '{"name": ""}' });
  assert.equal(bad.status, 400);
  assert.equal((await srv.req(`/api/runs/${id}`, { method: 'DELETE' })).status, 204);
  assert.equal((await srv.req(`/api/runs/${id}`)).status, 404);
  assert.equal((await srv.req('/api/runs/..%2F..%2Fetc')).status, 404);
});

test('responses are gzip-compressed when asked', async () => {
  const r = await fetch(srv.base + '/api/runs', { headers: { Authorization: `Bearer ${srv.token}`, 'Accept-Encoding': 'gzip' } });
  assert.equal(r.status, 200);
  const list = await r.json(); // fetch inflates transparently
  if (JSON.stringify(list).length > 1024) assert.equal(r.headers.get('content-encoding'), 'gzip');
});
