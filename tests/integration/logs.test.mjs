// Job logs beside traces (/api/runs/{id}/logs) and live jobs
// (/api/projects/{P}/live): a line at a known wall-clock time lands inside
// the right ProfilerStep#N of a ../shared trace, through the trace's own
// baseTimeNanoseconds; filters and paging; every refusal stores nothing;
// the event stream delivers a line posted after it opened, resumes after
// Last-Event-ID, is bounded and frees a closed client's place.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer, existsSync, SHARED, HAVE_SQLITE } from './lib.mjs';

const TRACE = join(SHARED, 'traces/transformer_with_stack/transformer_with_stack.1795344489086084483.pt.trace.json.gz');
let srv, run;

before(async () => {
  srv = await startServer({ args: ['--live-heartbeat', '1'] });
  run = await srv.upload([TRACE], 'logs');
});
after(async () => { await srv.stop(); srv.cleanup(); });

async function post(path, body, status) {
  const r = await srv.req(path, { method: 'POST', body });
  const j = await r.json();
  assert.equal(r.status, status, JSON.stringify(j));
  return j;
}

/** Unix ns (BigInt) as "SSSSSSSSSS.fffffffff". */
function unixText(ns) {
  const s = ns / 1000000000n, f = ns % 1000000000n;
  return `${s}.${f.toString().padStart(9, '0')}`;
}

test('a line at a known wall-clock time lands inside the right ProfilerStep#N', { skip: !existsSync(TRACE) && 'no ../shared' }, async () => {
  const trace = JSON.parse(gunzipSync(readFileSync(TRACE)).toString());
  const base = BigInt(trace.baseTimeNanoseconds);
  assert.ok(base > 0n, 'the trace has baseTimeNanoseconds');
  const steps = trace.traceEvents.filter((e) => /^ProfilerStep#\d+$/.test(e.name) && e.ph === 'X')
    .sort((a, b) => a.ts - b.ts);
  assert.ok(steps.length >= 3);
  const step = steps[2];
  // wall-clock ns = baseTimeNanoseconds + ts × 1000, a quarter into the step
  const tsNs = BigInt(Math.round(step.ts * 1000)) + BigInt(Math.round(step.dur * 250));
  const wall = base + tsNs;
  const iso = new Date(Number(wall / 1000000n)).toISOString(); // ms precision, still inside the step
  const body = `${unixText(wall)} inside ${step.name}\n` +
    `${iso} iso inside\n` +
    JSON.stringify({ ts: Number(wall) / 1e9, step: 77, loss: 1.25, msg: 'json inside' }) + '\n';
  const res = await post(`/api/runs/${run}/logs`, body, 201);
  assert.equal(res.stored, 3);
  const logs = await srv.json(`/api/runs/${run}/logs`);
  assert.equal(logs.clock, 'trace');
  assert.equal(BigInt(logs.base_ns), base);
  const ov = await srv.json(`/api/runs/${run}/overview`);
  const inStep = (us) => ov.steps.find((s) => us >= s.start_us && us < s.start_us + s.dur_us);
  for (const l of logs.lines) {
    assert.equal(inStep(l.ts_us)?.name, step.name, `${l.text} at ${l.ts_us}`);
  }
  const exact = logs.lines.find((l) => l.text.startsWith('inside'));
  assert.ok(Math.abs(exact.ts_us - Number(tsNs) / 1000) < 0.002, 'the unix line is exact to the ns');
  const js = logs.lines.find((l) => l.text === 'json inside');
  assert.deepEqual(js.fields, { step: 77, loss: 1.25 });
});

test('filters: text, window, rank, and paging through next', async () => {
  const id = await srv.upload([TRACE], 'filters');
  const t0 = 1795344489n * 1000000000n;
  let body = 'banner before any time\n';
  for (let i = 0; i < 25; i++) body += `${unixText(t0 + BigInt(i) * 1000000n)} line ${i}${i % 5 === 0 ? ' NEEDLE' : ''}\n`;
  const res = await post(`/api/runs/${id}/logs?rank=0`, body, 201);
  assert.deepEqual([res.stored, res.skipped], [25, 1]);
  await post(`/api/runs/${id}/logs?rank=1`, `${unixText(t0)} other rank\n`, 201);
  await post(`/api/runs/${id}/logs`, `${unixText(t0)} every rank\n`, 201);
  const all = await srv.json(`/api/runs/${id}/logs`);
  assert.equal(all.lines.length, 27);
  assert.equal((await srv.json(`/api/runs/${id}/logs?rank=0`)).lines.length, 26, 'rank 0 and the rank-less line');
  assert.deepEqual((await srv.json(`/api/runs/${id}/logs?q=needle`)).lines.map((l) => l.text),
    ['line 0 NEEDLE', 'line 5 NEEDLE', 'line 10 NEEDLE', 'line 15 NEEDLE', 'line 20 NEEDLE']);
  const first = all.lines.find((l) => l.text === 'line 3').ts_us;
  const win = await srv.json(`/api/runs/${id}/logs?start=${first}&end=${first + 2000}`);
  assert.deepEqual(win.lines.map((l) => l.text), ['line 3', 'line 4', 'line 5 NEEDLE']);
  // paging: 10 at a time, nothing lost or repeated, equal times included
  const seen = [];
  let next = null, pages = 0;
  do {
    const page = await srv.json(`/api/runs/${id}/logs?limit=10${next ? `&after=${next}` : ''}`);
    seen.push(...page.lines.map((l) => l.text));
    next = page.next;
    pages++;
  } while (next);
  assert.equal(pages, 3);
  assert.deepEqual(seen, all.lines.map((l) => l.text));
});

test('bad input is refused with a clear error and stores nothing', async () => {
  const id = await srv.upload([TRACE], 'bad');
  const count = async () => (await srv.json(`/api/runs/${id}/logs`)).lines.length;
  await post(`/api/runs/${id}/logs`, '1795344489 kept\n', 201);
  const cases = [
    ['', 400, /no line starts with a timestamp/],
    ['no timestamps at all\n', 400, /no line starts with a timestamp/],
    ['1795344489 a\n1795344489 b\0c\n', 400, /NUL/],
    ['1795344489 ok\n1795344489 ' + 'x'.repeat(20000) + '\n', 400, /line 2 is over/],
  ];
  for (const [body, status, re] of cases) {
    const j = await post(`/api/runs/${id}/logs`, body, status);
    assert.match(j.error.message, re);
  }
  assert.match((await post(`/api/runs/${id}/logs?rank=x`, '1795344489 a\n', 400)).error.message, /rank/);
  assert.match((await post(`/api/runs/${id}/logs?tz=2h`, '1795344489 a\n', 400)).error.message, /tz/);
  // chunked (no Content-Length): refused once past 1 MiB, answered after the body
  const big = new TextEncoder().encode(('1795344489 ' + 'y'.repeat(1000) + '\n').repeat(1100));
  const body = new ReadableStream({ start(c) { c.enqueue(big); c.close(); } });
  const r = await srv.req(`/api/runs/${id}/logs`, { method: 'POST', body, duplex: 'half' });
  assert.equal(r.status, 413);
  await post('/api/runs/0123456789abcdef/logs', '1795344489 a\n', 404);
  assert.equal(await count(), 1, 'nothing stored by a refused body');
  await srv.json(`/api/runs/${id}/logs?limit=0`, 400);
  await srv.json(`/api/runs/${id}/logs?after=zz`, 400);
  await srv.json(`/api/runs/${id}/logs?start=abc`, 400);
  await srv.json('/api/runs/0123456789abcdef/logs', 404);
  assert.match((await srv.json(`/api/runs/${id}/logs?rank=7`, 404)).error.message, /no rank 7/);
});

test('deleting a run deletes its lines', { skip: !HAVE_SQLITE && 'no sqlite3' }, async () => {
  const id = await srv.upload([TRACE], 'deleted');
  await post(`/api/runs/${id}/logs`, '1795344489 gone with the run\n', 201);
  const db = join(srv.dataDir, 'logs.db');
  const n = () => Number(execFileSync('sqlite3', [db, `SELECT count(*) FROM line WHERE run='${id}'`]).toString());
  assert.equal(n(), 1);
  assert.equal((await srv.req(`/api/runs/${id}`, { method: 'DELETE' })).status, 204);
  assert.equal(n(), 0);
});

/** Opens the live stream; returns {events, until(pred), close()}. */
async function openStream(path, headers = {}) {
  const ac = new AbortController();
  const r = await srv.req(path, { signal: ac.signal, headers });
  const s = { status: r.status, events: [], text: '', close: () => ac.abort() };
  if (r.status !== 200) { s.body = await r.text(); return s; }
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  s.pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        s.text += dec.decode(value, { stream: true });
        let k;
        while ((k = s.text.indexOf('\n\n')) >= 0) {
          const block = s.text.slice(0, k);
          s.text = s.text.slice(k + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) s.events.push(JSON.parse(data.slice(6)));
          else if (block.startsWith(':')) s.beats = (s.beats || 0) + 1;
        }
      }
    } catch { /* aborted */ }
  })();
  s.until = async (pred, ms = 5000) => {
    const t = Date.now();
    while (!pred(s)) {
      assert.ok(Date.now() - t < ms, `stream: timed out; got ${JSON.stringify(s.events)}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  return s;
}

test('live lines: posted, streamed as they arrive, resumed after Last-Event-ID', async () => {
  const before = await post('/api/projects/proj-a/live?job=J1', '1795344489 before the stream\n', 201);
  const s = await openStream('/api/projects/proj-a/live');
  await s.until((x) => x.events.length === 1);
  assert.equal(s.events[0].text, 'before the stream');
  assert.equal(s.events[0].job, 'J1');
  // posted after the stream opened: arrives
  await post('/api/projects/proj-a/live', JSON.stringify({ ts: 1795344490.5, job_id: 'J1', step: 3, loss: 0.5, msg: 'after' }) + '\n', 201);
  await s.until((x) => x.events.length === 2);
  assert.equal(s.events[1].text, 'after');
  assert.deepEqual(s.events[1].fields, { step: 3, loss: 0.5 });
  assert.equal(s.events[1].ts_us, 1795344490500000);
  // another project's lines do not reach it; heartbeats do
  await post('/api/projects/proj-b/live?job=J1', '1795344489 elsewhere\n', 201);
  await s.until((x) => (x.beats || 0) >= 1, 4000);
  assert.equal(s.events.length, 2);
  s.close();
  // a reconnect after the first event gets the rest; ?job= filters
  const r = await openStream('/api/projects/proj-a/live', { 'Last-Event-ID': String(before.last_id) });
  await r.until((x) => x.events.length === 1);
  assert.equal(r.events[0].text, 'after');
  r.close();
  const other = await openStream('/api/projects/proj-a/live?job=J2');
  await post('/api/projects/proj-a/live?job=J2', '1795344491 job two\n', 201);
  await other.until((x) => x.events.length === 1);
  assert.equal(other.events[0].text, 'job two');
  other.close();
});

test('live: bad input', async () => {
  assert.match((await post('/api/projects/p/live', '1795344489 no job\n', 400)).error.message, /job/);
  assert.match((await post('/api/projects/p/live?job=J', 'no time\n', 400)).error.message, /timestamp/);
  assert.match((await post('/api/projects/p/live?job=' + 'j'.repeat(200), '1795344489 a\n', 400)).error.message, /job/);
  assert.match((await post('/api/projects/bad%01name/live?job=J', '1795344489 a\n', 400)).error.message, /project/);
  await srv.json('/api/projects/p/live?backlog=-1', 400);
});

test('live streams are bounded and a closed client frees its place', async () => {
  const small = await startServer({ args: ['--live-streams', '1', '--live-heartbeat', '1'] });
  try {
    const ac = new AbortController();
    const a = await small.req('/api/projects/p/live', { signal: ac.signal });
    assert.equal(a.status, 200);
    const b = await small.req('/api/projects/p/live');
    assert.equal(b.status, 503);
    assert.match((await b.json()).error.message, /live_streams/);
    ac.abort();
    // noticed at the next heartbeat at the latest
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const c = await small.req('/api/projects/p/live', { signal: AbortSignal.timeout(500) }).catch(() => null);
      if (c && c.status === 200) { ok = true; try { await c.body.cancel(); } catch { /* closed */ } }
      else if (c) await c.text();
    }
    assert.ok(ok, 'a new stream opens once the closed one is freed');
  } finally { await small.stop(); small.cleanup(); }
});

test('live lines attach to the run of the same project and job id', async (t) => {
  await post('/api/projects/attach/live?job=4242', '1795344489.25 live before the trace\n', 201);
  const q = 'filename=t.pt.trace.json.gz&name=attached&project=attach&meta.job_id=4242';
  const r = await srv.req(`/api/runs?${q}`, {
    method: 'POST', body: new Blob([readFileSync(TRACE)]), headers: { 'Content-Type': 'application/octet-stream' },
  });
  const j = await r.json();
  assert.equal(r.status, 201, JSON.stringify(j));
  const id = j.id;
  const run = await srv.json(`/api/runs/${id}`);
  if (run.project !== 'attach' || run.meta?.job_id !== '4242') { t.skip('the catalog has no project/meta yet (branch proj)'); return; }
  const logs = await srv.json(`/api/runs/${id}/logs`);
  assert.deepEqual(logs.lines.map((l) => [l.text, l.live]), [['live before the trace', true]]);
});
