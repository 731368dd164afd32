// Load, bounded in time (TB_LOAD_SECONDS, default 10 s of load, well under
// 30 s in all): 2 uploaders posting traces back to back and 50 readers
// looping over the pages' APIs (runs list, overview, operators, kernels,
// memory, timeline tracks and windows, ranks) against one server with its
// default limits. Zero errors allowed: every answer 2xx and its JSON parses
// (or, for a run listed while its derived stages are computed, 503
// "computing": the pages show that and ask again).
// Prints requests/s and latency percentiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join, basename } from 'node:path';
import { SHARED, startServer, demoFiles } from './lib.mjs';

const SECONDS = Number(process.env.TB_LOAD_SECONDS || 10);
const READERS = 50;
const DL0 = join(SHARED, 'traces', 'dataloader_workers0');

function pct(sorted, p) { return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0; }

test(`load: 2 uploads + ${READERS} readers for ${SECONDS} s, zero errors`, { timeout: (SECONDS + 60) * 1000 }, async () => {
  const srv = await startServer();
  const u = new URL(srv.base);
  // one keep-alive connection per reader: stays within the per-address limit
  const agent = new http.Agent({ keepAlive: true, maxSockets: READERS });
  const auth = { Authorization: `Bearer ${srv.token}` };
  const get = (path) => new Promise((res) => {
    const t0 = performance.now();
    const r = http.get({ host: u.hostname, port: u.port, path, agent, headers: auth }, (resp) => {
      const chunks = [];
      resp.on('data', (c) => chunks.push(c));
      resp.on('end', () => res({ status: resp.statusCode, body: Buffer.concat(chunks).toString(), ms: performance.now() - t0 }));
      resp.on('error', (e) => res({ status: 0, body: String(e), ms: performance.now() - t0 }));
    });
    r.on('error', (e) => res({ status: 0, body: String(e), ms: performance.now() - t0 }));
  });
  const upload = async (name, body, query) => {
    const r = await srv.req(`/api/runs?name=${name}${query}`, { method: 'POST', body });
    const b = await r.json();
    return { status: r.status, body: b };
  };
  try {
    // runs to read: a one-rank and a four-rank run
    const [amp] = demoFiles('matmul_amp');
    const ddp = new FormData();
    for (const f of demoFiles('ddp_gloo_4ranks')) ddp.append('file', new Blob([readFileSync(f)]), basename(f));
    const seeds = [await upload('amp', readFileSync(amp), `&filename=${basename(amp)}`), await upload('ddp', ddp, '')];
    for (const s of seeds) assert.equal(s.status, 201, JSON.stringify(s.body));

    const errors = [];
    let computing = 0;
    const lat = [];
    let reads = 0;
    const tracks = new Map(); // run id -> {t0, t1}
    const deadline = performance.now() + SECONDS * 1000;

    const reader = async (n) => {
      let i = n;
      while (performance.now() < deadline) {
        const list = await get('/api/runs');
        const runs = [];
        const check = (path, r) => {
          reads++;
          lat.push(r.ms);
          if (r.status === 503 && /"code":"computing"/.test(r.body)) { computing++; return null; }
          if (r.status < 200 || r.status >= 300) { errors.push(`${path}: ${r.status} ${r.body.slice(0, 200)}`); return null; }
          try { return JSON.parse(r.body); } catch (e) { errors.push(`${path}: bad JSON ${e.message}`); return null; }
        };
        const lj = check('/api/runs', list);
        if (lj) runs.push(...lj.runs.map((r) => r.id));
        if (!runs.length) continue;
        const id = runs[i++ % runs.length];
        let tr = tracks.get(id);
        const paths = [`/api/runs/${id}/overview`, `/api/runs/${id}/operators?limit=50`, `/api/runs/${id}/kernels?limit=50`,
          `/api/runs/${id}/memory?points=500`, `/api/runs/${id}/ranks`, `/api/runs/${id}/timeline/tracks`];
        if (tr) {
          const span = tr.t1 - tr.t0;
          const a = tr.t0 + span * ((i * 37) % 100) / 100;
          const b = Math.min(tr.t1, a + span / (1 + (i % 20)));
          paths.push(`/api/runs/${id}/timeline?width=1200`, `/api/runs/${id}/timeline?start=${a.toFixed(3)}&end=${b.toFixed(3)}&width=1200`);
        }
        for (const p of paths) {
          const j = check(p, await get(p));
          if (j && p.endsWith('/timeline/tracks') && !tr) { tr = { t0: j.t0_us, t1: j.t1_us }; tracks.set(id, tr); }
        }
      }
    };

    const uploads = [];
    const uploader = async (k) => {
      const big = existsSync(DL0) ? join(DL0, readdirSync(DL0).find((f) => f.endsWith('.gz'))) : null;
      const file = k === 0 ? (big || demoFiles('dataloader_workers8')[0]) : demoFiles('matmul_fp32_strict')[0];
      const body = readFileSync(file);
      let n = 0;
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const r = await upload(`load-${k}-${n++}`, body, `&filename=${basename(file)}`);
        uploads.push({ k, ms: performance.now() - t0, status: r.status });
        if (r.status !== 201) errors.push(`upload ${k}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    };

    const t0 = performance.now();
    await Promise.all([uploader(0), uploader(1), ...Array.from({ length: READERS }, (_, n) => reader(n))]);
    const secs = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    const up = (k) => uploads.filter((x) => x.k === k);
    console.log(`# load: ${reads} reads in ${secs.toFixed(1)} s = ${(reads / secs).toFixed(0)} requests/s; ` +
      `latency p50 ${pct(lat, 0.5).toFixed(1)} ms, p95 ${pct(lat, 0.95).toFixed(1)} ms, p99 ${pct(lat, 0.99).toFixed(1)} ms, max ${lat[lat.length - 1].toFixed(1)} ms`);
    for (const k of [0, 1])
      console.log(`# uploader ${k}: ${up(k).length} uploads, mean ${(up(k).reduce((a, x) => a + x.ms, 0) / Math.max(1, up(k).length)).toFixed(0)} ms`);
    console.log(`# ${computing} answers "computing" (runs read while deriving)`);
    assert.deepEqual(errors.slice(0, 20), [], `${errors.length} errors`);
    assert.ok(reads >= READERS * 4, `only ${reads} reads`);
    assert.ok(up(0).length >= 1 && up(1).length >= 1, 'both uploaders completed an upload');
    // everything uploaded is listed and readable afterwards
    const runs = (await (await srv.req('/api/runs')).json()).runs;
    assert.equal(runs.length, 2 + uploads.length);
  } finally {
    agent.destroy();
    await srv.stop();
    srv.cleanup();
  }
});
