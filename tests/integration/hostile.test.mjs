// Hostile input, item by item (issue 7): each upload gets a clear JSON error
// or a documented repair (a note on the run), never a crash or a hang, and
// the run stored before is still served byte for byte afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from './lib.mjs';

let srv, keptId, keptOverview;

const KERNEL = { ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 7, ts: 120, dur: 20, args: { correlation: 7, device: 0, stream: 7 } };
const LAUNCH = { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 110, dur: 5, args: { correlation: 7 } };
const OP = { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 100, dur: 50, args: {} };

async function upload(name, body) {
  const r = await srv.req(`/api/runs?filename=${name}`, { method: 'POST', body });
  return { status: r.status, body: await r.json() };
}

async function runText(id) {
  const r = await srv.req(`/api/runs/${id}`);
  assert.equal(r.status, 200);
  return JSON.stringify(await r.json());
}

async function stillServing() {
  assert.equal(srv.child.exitCode, null, 'server died');
  const r = await srv.req(`/api/runs/${keptId}/overview`);
  assert.equal(r.status, 200);
  assert.equal(await r.text(), keptOverview, 'the stored run changed');
}

before(async () => {
  srv = await startServer({ args: ['--conn-timeout', '2'] });
  const ok = await upload('kept.json', JSON.stringify({ traceEvents: [OP, LAUNCH, KERNEL] }));
  assert.equal(ok.status, 201);
  keptId = ok.body.id;
  keptOverview = await (await srv.req(`/api/runs/${keptId}/overview`)).text();
});
after(async () => { await srv.stop(); srv.cleanup(); });

test('a 100 MB single string is refused with the limit named', async () => {
  const big = '{"traceEvents":[{"ph":"X","cat":"kernel","name":"' + 'A'.repeat(100 * 1024 * 1024) +
    '","pid":0,"tid":7,"ts":1,"dur":2}]}';
  const r = await upload('big.json', big);
  assert.equal(r.status, 413);
  assert.match(r.body.error.message, /larger than 64 MiB/);
  await stillServing();
});

test('JSON nested 100,000 deep: read without recursion, the good events kept', async () => {
  const deepArgs = '{"ph":"X","cat":"cpu_op","name":"deep","pid":1,"tid":1,"ts":1,"dur":1,"args":' +
    '{"a":'.repeat(100000) + '1' + '}'.repeat(100000) + '}';
  const deepList = '['.repeat(100000) + ']'.repeat(100000);
  const r = await upload('deep.json', `{"traceEvents":[${deepArgs},${deepList},${JSON.stringify(OP)}]}`);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const sr = await srv.req(`/api/runs/${r.body.id}/timeline/search?q=deep`);
  assert.match(await sr.text(), /"deep"/);
  await stillServing();
});

test('duplicate keys: the last one wins, as in JSON.parse', async () => {
  const r = await upload('dup.json', '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"first","name":"last",' +
    '"pid":1,"tid":1,"ts":5,"dur":1,"dur":4}]}');
  assert.equal(r.status, 201);
  const sr = await srv.req(`/api/runs/${r.body.id}/timeline/search?q=last`);
  assert.equal(sr.status, 200);
  assert.match(await sr.text(), /"last"/);
  const s2 = await (await srv.req(`/api/runs/${r.body.id}/timeline/search?q=first`)).json();
  assert.ok(!JSON.stringify(s2).includes('"first"'), 'the first duplicate kept');
  await stillServing();
});

test('wrong types for every known field: the event is dropped or read, with a note', async () => {
  const bad = [['ts', '12'], ['dur', { a: 1 }], ['pid', [1]], ['tid', null], ['args', 5], ['name', 42],
    ['cat', null], ['ph', 3], ['id', { x: 1 }], ['s', 7], ['bp', []]];
  const events = bad.map(([k, v]) => ({ ...OP, [k]: v }));
  const r = await upload('types.json', JSON.stringify({
    traceEvents: [...events, OP, LAUNCH, KERNEL],
    deviceProperties: 'H100', distributedInfo: 7, schemaVersion: 'x',
  }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const info = await runText(r.body.id);
  assert.match(info, /dur is not a finite number/);
  assert.match(info, /without a one-letter ph/);
  // the good kernel survived the bad neighbours
  const k = await (await srv.req(`/api/runs/${r.body.id}/kernels`)).json();
  assert.equal(JSON.stringify(k).includes('"k"'), true);
  await stillServing();
});

test('NaN and Infinity: events with non-finite times are dropped with a note', async () => {
  const r = await upload('nan.json', '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,' +
    '"ts":NaN,"dur":Infinity},' + JSON.stringify(OP) + ']}');
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.match(await runText(r.body.id), /ts is not a finite number/);
  await stillServing();
});

test('flows to nowhere and negative durations: kept, repaired, noted', async () => {
  const r = await upload('flows.json', JSON.stringify({
    traceEvents: [OP, LAUNCH, KERNEL,
      { ph: 'f', id: 99, pid: 1, tid: 1, ts: 1, cat: 'ac2g', name: 'x', bp: 'e' },
      { ph: 's', id: 'zz', pid: 1, tid: 1, ts: 2, cat: 'ac2g', name: 'x' },
      { ph: 't', id: 5, pid: 1, tid: 1, ts: -5, cat: 'ac2g', name: 'x' },
      { ph: 'X', cat: 'kernel', name: 'neg', pid: 0, tid: 7, ts: 300, dur: -10, args: { correlation: 7 } }],
  }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.match(await runText(r.body.id), /negative dur: taken as 0/);
  // the timeline answers for the whole range, flows without partners included
  const t = await srv.req(`/api/runs/${r.body.id}/timeline/tracks`);
  assert.equal(t.status, 200);
  await stillServing();
});

/** Sends raw bytes on a fresh connection; resolves with what the server sent
 * back and how long until it closed the connection. */
function raw(chunks, { gapMs = 0, endAfter = false } = {}) {
  const u = new URL(srv.base);
  return new Promise((resolve) => {
    const t0 = Date.now();
    let got = '';
    const sock = connect(Number(u.port), u.hostname, async () => {
      for (const c of chunks) {
        if (sock.destroyed) break;
        sock.write(c);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
      if (endAfter) sock.destroy();
    });
    sock.on('data', (d) => { got += d; });
    sock.on('error', () => {});
    sock.on('close', () => resolve({ got, ms: Date.now() - t0 }));
  });
}

test('an upload body cut off mid-way leaves nothing behind', async () => {
  const before = (await (await srv.req('/api/runs')).json());
  const head = `POST /api/runs?filename=cut.json HTTP/1.1\r\nHost: ${new URL(srv.base).host}\r\n` +
    `Authorization: Bearer ${srv.token}\r\nContent-Length: 1000000\r\n\r\n`;
  await raw([head, '{"traceEvents":[' + JSON.stringify(OP).repeat(1).padEnd(5000, ' ')], { endAfter: true });
  await new Promise((r) => setTimeout(r, 300));
  const afterRuns = await (await srv.req('/api/runs')).json();
  assert.equal(JSON.stringify(afterRuns), JSON.stringify(before), 'a cut-off upload became a run');
  const left = readdirSync(join(srv.dataDir, 'tmp'));
  assert.deepEqual(left, [], `the cut-off upload left ${left.join(', ')}`);
  await stillServing();
});

// libmicrohttpd's timeout is an idle timeout: a client that stalls is cut
// after conn_timeout; one that dribbles a byte at a time is cut when its
// request head is not complete after head_timeout, and until then holds one
// of the untrusted_connections slots (the oldest evicted when they run out;
// headers bounded by 128 KiB of connection memory) and no worker thread, so
// everyone else is served. slowclients.test.mjs floods those limits.
test('slow-loris: a stalled client is dropped after conn_timeout, dribbling ones starve nobody', async () => {
  const stalled = raw(['GET /api/runs HTTP/1.1\r\nHost: x\r\n']);
  const dribblers = Array.from({ length: 30 }, () =>
    raw('GET /api/runs HTTP/1.1\r\nHost: x\r\nX-A: '.split('').concat(Array(20).fill('a')), { gapMs: 100 }));
  await new Promise((r) => setTimeout(r, 400));
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) await stillServing();
  assert.ok(Date.now() - t0 < 2000, `5 requests took ${Date.now() - t0} ms beside 30 slow clients`);
  const { ms } = await stalled;
  assert.ok(ms >= 1500 && ms < 5000, `stalled client held its connection ${ms} ms (timeout 2 s)`);
  await Promise.all(dribblers);
  await stillServing();
});
