// Analysis read API (/overview, /operators, /kernels, /memory,
// /memory/events): the real binary on a random loopback port, fed the demo
// traces and a small synthetic trace with hostile names.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { startServer, demoFiles, HAVE_SQLITE } from './lib.mjs';

let srv, amp, ddp, evil;

/** Names a hostile user could give operators: LIKE wildcards, markup,
 * spreadsheet formulas, CSV metacharacters. */
const EVIL_NAMES = ['evil%op', 'evil_op', 'evilXop', 'evil\\op', '<script>alert(1)</script>',
  '=HYPERLINK("http://x")', 'comma,"quote"\nline', 'aten::plain'];

/** A small Kineto trace: CPU operators only (no GPU time), two calls each. */
function evilTrace() {
  const ev = [];
  let ts = 1000;
  for (const [i, name] of EVIL_NAMES.entries()) {
    for (let k = 0; k < 2; k++) {
      ev.push({ ph: 'X', cat: 'cpu_op', name, pid: 1, tid: 1, ts, dur: 10 + i, args: { 'External id': ev.length + 1 } });
      ts += 20;
    }
  }
  return Buffer.from(JSON.stringify({ schemaVersion: 1, traceEvents: ev }));
}

/** RFC 4180 parser: rows of fields (quoted fields may hold , " CR LF). */
function parseCsv(text) {
  const rows = [];
  let row = [], f = '', i = 0, q = false;
  while (i < text.length) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { f += '"'; i += 2; continue; }
      if (c === '"') { q = false; i++; continue; }
      f += c; i++; continue;
    }
    if (c === '"') { q = true; i++; continue; }
    if (c === ',') { row.push(f); f = ''; i++; continue; }
    if (c === '\r' && text[i + 1] === '\n') { row.push(f); rows.push(row); row = []; f = ''; i += 2; continue; }
    f += c; i++;
  }
  if (f !== '' || row.length) { row.push(f); rows.push(row); }
  return rows;
}

const ns = (us) => Math.round(us * 1000);

/** Asserts rows are ordered by key (nulls last whatever the direction). */
function assertSorted(rows, key, order, what) {
  const vals = rows.map((r) => r[key]);
  const firstNull = vals.indexOf(null);
  if (firstNull >= 0) assert.ok(vals.slice(firstNull).every((v) => v === null), `${what}: nulls last`);
  const v = firstNull >= 0 ? vals.slice(0, firstNull) : vals;
  for (let i = 1; i < v.length; i++) {
    const ok = typeof v[i] === 'string'
      ? (order === 'asc' ? Buffer.compare(Buffer.from(v[i - 1]), Buffer.from(v[i])) <= 0
        : Buffer.compare(Buffer.from(v[i - 1]), Buffer.from(v[i])) >= 0)
      : (order === 'asc' ? v[i - 1] <= v[i] : v[i - 1] >= v[i]);
    assert.ok(ok, `${what}: ${JSON.stringify(v[i - 1])} then ${JSON.stringify(v[i])}`);
  }
}

before(async () => {
  srv = await startServer();
  const [ampFile] = demoFiles('matmul_amp');
  amp = await srv.uploadBody(readFileSync(ampFile), basename(ampFile), 'amp');
  ddp = await srv.upload(demoFiles('ddp_gloo_4ranks'), 'ddp');
  evil = await srv.uploadBody(evilTrace(), 'evil.pt.trace.json', 'evil');
});
after(async () => { await srv.stop(); srv.cleanup(); });

test('overview: steps whose parts add up, GPUs, peaks, ranks', async () => {
  const o = await srv.json(`/api/runs/${amp}/overview`);
  assert.equal(o.rank, 0);
  assert.deepEqual(o.ranks, [0]);
  assert.deepEqual(o.categories, ['kernel', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu_exec', 'other']);
  assert.ok(o.steps.length >= 1);
  let sumDur = 0;
  for (const [i, s] of o.steps.entries()) {
    assert.equal(s.idx, i);
    assert.match(s.name, /^ProfilerStep#\d+$/);
    assert.deepEqual(Object.keys(s.breakdown_us).sort(), [...o.categories].sort());
    const parts = o.categories.reduce((a, c) => a + ns(s.breakdown_us[c]), 0);
    assert.equal(parts, ns(s.dur_us), `step ${s.name}: parts ${parts} != dur ${ns(s.dur_us)}`);
    assert.ok(s.start_us >= o.t0_us && s.dur_us > 0);
    sumDur += s.dur_us;
  }
  assert.ok(Math.abs(o.average.dur_us - sumDur / o.steps.length) < 1e-6);
  const avgParts = o.categories.reduce((a, c) => a + o.average.breakdown_us[c], 0);
  assert.ok(Math.abs(avgParts - o.average.dur_us) < 1e-3);
  assert.equal(o.gpus.length, 1);
  const g = o.gpus[0];
  assert.equal(g.name, 'NVIDIA H100 80GB HBM3');
  assert.equal(g.compute_capability, '9.0');
  assert.ok(g.utilization > 0 && g.utilization <= 1);
  assert.ok(g.tensor_core_share > 0 && g.tensor_core_share <= 1, 'AMP uses tensor cores');
  assert.ok(g.kernel_us > 0);
  assert.ok(o.peak_memory_bytes['0'] > 0);
  assert.ok(Array.isArray(o.notes) && Array.isArray(o.recommendations));
  assert.ok(!o.recommendations.some((r) => r.id === 'enable_amp'), 'AMP runs on tensor cores already');

  const d = await srv.json(`/api/runs/${ddp}/overview?rank=2`);
  assert.equal(d.rank, 2);
  assert.deepEqual(d.ranks, [0, 1, 2, 3]);
  const d0 = await srv.json(`/api/runs/${ddp}/overview`);
  assert.equal(d0.rank, 0, 'rank defaults to the lowest');
  for (const s of d.steps) assert.equal(d.categories.reduce((a, c) => a + ns(s.breakdown_us[c]), 0), ns(s.dur_us));
  assert.ok(d.steps.some((s) => s.breakdown_us.communication > 0), 'DDP steps spend time in communication');
  // a rank's findings and the run's, in the order of the time they could save
  assert.ok(d.recommendations.length > 0);
  for (const r of d.recommendations) {
    assert.ok(r.rank === null || r.rank === 2, `rank ${r.rank}`);
    for (const k of ['id', 'severity', 'title', 'advice', 'doc_url']) assert.equal(typeof r[k], 'string', k);
    assert.ok(Array.isArray(r.evidence.lines) && r.evidence.lines.length > 0);
    assert.ok(['high', 'medium', 'low'].includes(r.severity));
  }
  // the job's findings (run-level, and the straggler every rank waits for) first, then by saving
  const runLevel = (r) => r.rank === null || r.id === 'straggler';
  const firstOwn = d.recommendations.findIndex((r) => !runLevel(r));
  assert.ok(firstOwn > 0, 'run-level findings lead');
  assert.ok(d.recommendations.slice(firstOwn).every((r) => !runLevel(r)), 'and only lead');
  for (const part of [d.recommendations.slice(0, firstOwn), d.recommendations.slice(firstOwn)])
    for (let i = 1; i < part.length; i++) assert.ok(part[i - 1].saving_us >= part[i].saving_us);
  assert.ok(d.recommendations.some((r) => r.id === 'ddp_backend' && r.rank === null), 'gloo on GPUs');
  assert.ok(d.recommendations.some((r) => r.id === 'straggler'), 'rank 2 is the straggler');
  assert.ok(d.recommendations.some((r) => r.id === 'shared_gpu' && r.rank === null), 'four ranks on one H100');
  // rank 0's overview leads with the straggler (rank 2), which it waits for
  assert.equal(d0.recommendations[0].id, 'straggler');
  assert.equal(d0.recommendations[0].rank, 2);

  const e = await srv.json(`/api/runs/${evil}/overview`);
  assert.deepEqual(e.gpus, []);
  assert.equal(e.peak_memory_cpu_bytes, null);
});

test('operators: grouping, default sort, totals, paging', async () => {
  const all = await srv.json(`/api/runs/${amp}/operators?limit=1000`);
  assert.equal(all.group, 'name');
  assert.equal(all.has_device, true);
  assert.equal(all.has_shapes, true);
  assert.equal(all.sort, 'device_self');
  assert.equal(all.order, 'desc');
  assert.equal(all.rows.length, all.total);
  assertSorted(all.rows, 'device_self_us', 'desc', 'default sort');
  assert.equal(new Set(all.rows.map((r) => r.name)).size, all.total, 'one row per name');
  assert.equal(all.rows.reduce((a, r) => a + r.calls, 0), all.totals.calls);
  assert.equal(ns(all.rows.reduce((a, r) => a + r.host_self_us, 0)), ns(all.totals.host_self_us));
  for (const r of all.rows) {
    assert.ok(r.host_self_us <= r.host_total_us + 1e-9 && r.device_self_us <= r.device_total_us + 1e-9, r.name);
    assert.ok(r.tc_self_share === null || (r.tc_self_share >= 0 && r.tc_self_share <= 1));
    assert.equal('shape' in r, false);
  }
  const mm = all.rows.find((r) => r.name === 'aten::mm');
  assert.ok(mm && mm.tc_eligible && mm.tc_self_share > 0.5, 'aten::mm runs on tensor cores under AMP');

  // group by shape: more rows, same call total
  const shp = await srv.json(`/api/runs/${amp}/operators?group=shape&limit=1000`);
  assert.ok(shp.total > all.total);
  assert.ok(shp.rows.every((r) => typeof r.shape === 'string'));
  assert.equal(shp.rows.reduce((a, r) => a + r.calls, 0), all.totals.calls);
  const stk = await srv.json(`/api/runs/${amp}/operators?group=stack&limit=5`);
  assert.ok(stk.rows.every((r) => 'stack' in r));

  // pages put together give the full list
  const pages = [];
  for (let off = 0; off < all.total; off += 7) pages.push(...(await srv.json(`/api/runs/${amp}/operators?limit=7&offset=${off}`)).rows);
  assert.deepEqual(pages, all.rows);
  const past = await srv.json(`/api/runs/${amp}/operators?offset=${all.total + 5}`);
  assert.equal(past.total, all.total);
  assert.deepEqual(past.rows, []);

  // no GPU time: host_self is the default sort
  const e = await srv.json(`/api/runs/${evil}/operators`);
  assert.equal(e.has_device, false);
  assert.equal(e.sort, 'host_self');
  assertSorted(e.rows, 'host_self_us', 'desc', 'cpu-only default');
});

test('operators and kernels sort both ways on every key', async () => {
  const opKeys = { calls: 'calls', host_self: 'host_self_us', host_total: 'host_total_us',
    device_self: 'device_self_us', device_total: 'device_total_us', name: 'name' };
  for (const [sort, field] of Object.entries(opKeys)) {
    for (const order of ['asc', 'desc']) {
      const r = await srv.json(`/api/runs/${amp}/operators?sort=${sort}&order=${order}&limit=1000`);
      assert.equal(r.sort, sort);
      assert.equal(r.order, order);
      assertSorted(r.rows, field, order, `operators ${sort} ${order}`);
    }
  }
  assert.equal((await srv.json(`/api/runs/${amp}/operators?sort=name`)).order, 'asc', 'name sorts ascending by default');
  const kKeys = { total: 'total_us', calls: 'calls', mean: 'mean_us', min: 'min_us', max: 'max_us', name: 'name',
    share: 'share', occupancy: 'achieved_occupancy', blocks_per_sm: 'blocks_per_sm' };
  for (const [sort, field] of Object.entries(kKeys)) {
    for (const order of ['asc', 'desc']) {
      const r = await srv.json(`/api/runs/${amp}/kernels?sort=${sort}&order=${order}&limit=1000`);
      assertSorted(r.rows, field, order, `kernels ${sort} ${order}`);
    }
  }
});

test('kernels: totals, shares, grouping by launching op', async () => {
  const k = await srv.json(`/api/runs/${amp}/kernels?limit=1000`);
  const ov = await srv.json(`/api/runs/${amp}/overview`);
  assert.equal(k.sort, 'total');
  assertSorted(k.rows, 'total_us', 'desc', 'default kernel sort');
  assert.equal(k.rows.length, k.total);
  assert.equal(ns(k.rows.reduce((a, r) => a + r.total_us, 0)), ns(k.kernel_us));
  assert.equal(ns(k.kernel_us), ns(ov.gpus.reduce((a, g) => a + g.kernel_us, 0)));
  assert.ok(Math.abs(k.rows.reduce((a, r) => a + r.share, 0) - 1) < 1e-9);
  assert.equal(ns(k.rows.filter((r) => r.tensor_cores).reduce((a, r) => a + r.total_us, 0)), ns(k.tc_us));
  assert.ok(k.tc_us > 0);
  for (const r of k.rows) {
    assert.ok(r.min_us <= r.mean_us + 1e-9 && r.mean_us <= r.max_us + 1e-9, r.name);
    assert.ok(Math.abs(r.mean_us * r.calls - r.total_us) < 1e-3);
    assert.ok(r.achieved_occupancy === null || (r.achieved_occupancy >= 0 && r.achieved_occupancy <= 1));
    assert.equal('op' in r, false);
  }
  const byOp = await srv.json(`/api/runs/${amp}/kernels?group=op&limit=1000`);
  assert.ok(byOp.total >= k.total);
  assert.equal(ns(byOp.rows.reduce((a, r) => a + r.total_us, 0)), ns(k.kernel_us));
  assert.ok(byOp.rows.some((r) => r.op === 'aten::mm'));
  // q matches the kernel name or the launching op, case-insensitively
  const q = await srv.json(`/api/runs/${amp}/kernels?group=op&q=ATEN::MM&limit=1000`);
  assert.ok(q.total > 0 && q.total < byOp.total);
  for (const r of q.rows) assert.ok(`${r.name}\n${r.op}`.toLowerCase().includes('aten::mm'), r.name);
  assert.equal(q.kernel_us, k.kernel_us, 'kernel_us is the whole rank');
  const ddpK = await srv.json(`/api/runs/${ddp}/kernels?rank=1`);
  assert.equal(ddpK.rank, 1);
});

test('q is a literal substring: % _ \\ and markup match only themselves', async () => {
  const all = (await srv.json(`/api/runs/${evil}/operators?limit=1000&sort=name`)).rows.map((r) => r.name);
  assert.deepEqual([...all].sort(), [...EVIL_NAMES].sort());
  for (const q of ['%', '_', '\\', 'evil%op', 'evil_op', 'evil\\op', '<script>', 'SCRIPT', '"', ',', '=', "'", 'none%_\\']) {
    const r = await srv.json(`/api/runs/${evil}/operators?limit=1000&q=${encodeURIComponent(q)}`);
    const want = EVIL_NAMES.filter((n) => n.toLowerCase().includes(q.toLowerCase()));
    assert.deepEqual(r.rows.map((x) => x.name).sort(), want.sort(), `q=${q}`);
    assert.equal(r.total, want.length);
    assert.equal(r.totals.calls, 2 * want.length);
  }
  const s = await srv.json(`/api/runs/${evil}/operators?q=${encodeURIComponent('<script>')}`);
  assert.equal(s.rows[0].name, '<script>alert(1)</script>');
  // hostile q on the other tables: 200, nothing matched, nothing broken
  for (const path of ['kernels', 'memory/events']) {
    for (const q of ['%', '_', "'; DROP TABLE step; --", '<script>']) {
      const r = await srv.json(`/api/runs/${amp}/${path}?q=${encodeURIComponent(q)}`);
      assert.ok(r.rows.every((x) => `${x.name ?? ''}\n${x.op ?? ''}\n${x.family ?? ''}`.toLowerCase().includes(q.toLowerCase())), `${path} q=${q}`);
    }
  }
  assert.equal((await srv.json(`/api/runs/${amp}/overview`)).steps.length > 0, true, 'tables still there');
});

test('CSV export: header, every matching row, quoting, formula guard', async () => {
  for (const [path, header] of [
    ['operators?group=shape', 'name,shape,calls,host_self_us,host_total_us,device_self_us,device_total_us,tc_eligible,tc_self_share'],
    ['kernels', 'name,calls,total_us,mean_us,min_us,max_us,share,tensor_cores,communication,blocks_per_sm,achieved_occupancy,limiter,family'],
    ['kernels?group=op&q=aten', null],
    ['memory/events', 'op,bytes,addr,alloc_us,free_us,lifetime_us'],
  ]) {
    const sep = path.includes('?') ? '&' : '?';
    const json = await srv.json(`/api/runs/${amp}/${path}${sep}limit=3`);
    const r = await srv.req(`/api/runs/${amp}/${path}${sep}format=csv&limit=3&offset=1`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/csv/);
    assert.match(r.headers.get('content-disposition'), /^attachment; filename=".*\.csv"/);
    const rows = parseCsv(await r.text());
    if (header) assert.equal(rows[0].join(','), header);
    assert.equal(rows.length - 1, json.total, `${path}: CSV has every row, not a page`);
    assert.ok(rows.every((x) => x.length === rows[0].length), `${path}: rectangular`);
  }
  // kernel names hold commas: quoted, and they read back intact
  const k = await srv.json(`/api/runs/${amp}/kernels?limit=1000&sort=name&order=asc`);
  const kc = parseCsv(await (await srv.req(`/api/runs/${amp}/kernels?format=csv&sort=name&order=asc`)).text());
  assert.deepEqual(kc.slice(1).map((x) => x[0]), k.rows.map((x) => x.name));
  assert.deepEqual(kc.slice(1).map((x) => Number(x[2])), k.rows.map((x) => Number(x.total_us.toFixed(3))));

  const ec = parseCsv(await (await srv.req(`/api/runs/${evil}/operators?format=csv&sort=name&order=asc`)).text());
  const names = ec.slice(1).map((x) => x[0]);
  assert.ok(names.includes('comma,"quote"\nline'));
  assert.ok(names.includes('<script>alert(1)</script>'));
  assert.ok(names.includes('\'=HYPERLINK("http://x")'), 'formula-like text is defused');
  assert.ok(!names.some((n) => n.startsWith('=')));
});

test('memory curve: downsampled with the peak kept, window, steps', async () => {
  const full = await srv.json(`/api/runs/${amp}/memory?points=5000`);
  assert.equal(full.device, '0');
  assert.deepEqual(full.devices.map((d) => d.id), ['0', 'cpu']);
  assert.equal(full.devices[0].label, 'GPU 0');
  assert.equal(full.devices[0].memory_bytes, 85017493504);
  const c = full.curve;
  assert.equal(c.ts_us.length, c.allocated.length);
  assert.equal(c.ts_us.length, c.reserved.length);
  assert.ok(c.ts_us.length > 30);
  for (let i = 1; i < c.ts_us.length; i++) assert.ok(c.ts_us[i - 1] <= c.ts_us[i], 'time order');
  assert.equal(Math.max(...c.allocated), full.peak.bytes);
  assert.equal(full.peak.bytes, full.devices[0].peak_bytes);
  assert.equal(ns(full.peak.ts_us), ns(full.devices[0].peak_us));
  const ov = await srv.json(`/api/runs/${amp}/overview`);
  assert.equal(full.peak.bytes, ov.peak_memory_bytes['0']);
  assert.ok(c.ts_us.every((t) => t >= full.start_us && t <= full.end_us));
  assert.equal(full.steps.length, ov.steps.length);
  for (const s of full.steps) assert.ok(s.end_us >= s.start_us);

  for (const points of [10, 37, 200]) {
    const d = await srv.json(`/api/runs/${amp}/memory?points=${points}`);
    assert.ok(d.curve.ts_us.length <= 3 * points, `${d.curve.ts_us.length} > 3 x ${points}`);
    assert.equal(Math.max(...d.curve.allocated), full.peak.bytes, `peak kept at ${points} points`);
    assert.equal(d.curve.ts_us[0], c.ts_us[0], 'first sample kept');
    assert.equal(d.curve.ts_us.at(-1), c.ts_us.at(-1), 'last sample kept');
  }

  // a window in the middle: starts with the level in force at its start
  const mid = (full.start_us + full.end_us) / 2, end = mid + (full.end_us - full.start_us) / 10;
  const w = await srv.json(`/api/runs/${amp}/memory?start_us=${mid}&end_us=${end}&points=50`);
  assert.ok(Math.abs(ns(w.start_us) - ns(mid)) <= 1 && Math.abs(ns(w.end_us) - ns(end)) <= 1);
  assert.ok(w.curve.ts_us.length > 0 && w.curve.ts_us.length <= 150);
  assert.ok(w.curve.ts_us.every((t) => t >= mid - 0.001 && t <= end + 0.001));
  assert.equal(w.curve.ts_us[0], w.start_us);
  const before = c.ts_us.filter((t) => t < mid).length;
  assert.equal(w.curve.allocated[0], c.allocated[before - 1], 'carried-in level');
  assert.ok(w.peak.bytes <= full.peak.bytes && w.peak.bytes === Math.max(...w.curve.allocated));
  assert.ok(w.steps.every((s) => s.end_us >= mid && s.start_us <= end));

  const cpu = await srv.json(`/api/runs/${amp}/memory?device=cpu`);
  assert.equal(cpu.device, 'cpu');
  assert.equal(cpu.peak.bytes, ov.peak_memory_cpu_bytes);
  const none = await srv.json(`/api/runs/${evil}/memory`);
  assert.deepEqual(none.devices, []);
  assert.deepEqual(none.curve.ts_us, []);
  assert.equal(none.peak.bytes, null);
});

test('memory events: overlap window, min_bytes, sort, paging, op filter', async () => {
  const all = await srv.json(`/api/runs/${amp}/memory/events?limit=1000`);
  assert.equal(all.device, '0');
  assert.ok(all.total > 10);
  assertSorted(all.rows, 'bytes', 'desc', 'default events sort');
  for (const r of all.rows) {
    if (r.alloc_us !== null && r.free_us !== null) assert.ok(Math.abs(ns(r.lifetime_us) - (ns(r.free_us) - ns(r.alloc_us))) <= 1);
    else assert.equal(r.lifetime_us, null);
  }
  for (const [sort, field] of Object.entries({ bytes: 'bytes', alloc: 'alloc_us', free: 'free_us', lifetime: 'lifetime_us', op: 'op' })) {
    for (const order of ['asc', 'desc']) {
      const r = await srv.json(`/api/runs/${amp}/memory/events?sort=${sort}&order=${order}&limit=1000`);
      assert.equal(r.total, all.total);
      assertSorted(r.rows, field, order, `events ${sort} ${order}`);
    }
  }
  const big = await srv.json(`/api/runs/${amp}/memory/events?min_bytes=1048576&limit=1000`);
  assert.equal(big.total, all.rows.filter((r) => Math.abs(r.bytes) >= 1048576).length);
  assert.ok(big.rows.every((r) => Math.abs(r.bytes) >= 1048576));

  const alloc = all.rows.filter((r) => r.alloc_us !== null).map((r) => r.alloc_us).sort((a, b) => a - b);
  const s = alloc[Math.floor(alloc.length / 3)], e = alloc[Math.floor(alloc.length / 2)];
  const w = await srv.json(`/api/runs/${amp}/memory/events?start_us=${s}&end_us=${e}&limit=1000`);
  const want = all.rows.filter((r) => (r.alloc_us === null || r.alloc_us <= e) && (r.free_us === null || r.free_us >= s));
  assert.equal(w.total, want.length);
  assert.ok(w.total > 0 && w.total < all.total);

  const mm = await srv.json(`/api/runs/${amp}/memory/events?q=aten::mm&limit=1000`);
  assert.ok(mm.total > 0 && mm.total < all.total);
  assert.ok(mm.rows.every((r) => r.op === 'aten::mm'));
  const page = await srv.json(`/api/runs/${amp}/memory/events?limit=5&offset=5`);
  assert.deepEqual(page.rows, all.rows.slice(5, 10));
  const cpu = await srv.json(`/api/runs/${amp}/memory/events?device=cpu`);
  assert.equal(cpu.device, 'cpu');
  assert.ok(cpu.rows.every((r) => r.bytes !== 0));
});

test('bad parameters answer 400 naming them; unknown rank, device, run 404', async () => {
  const bad = [
    ['operators?sort=evil', 'sort'], ['operators?sort=name;DROP', 'sort'], ['operators?group=op', 'group'],
    ['operators?order=sideways', 'order'], ['operators?limit=0', 'limit'], ['operators?limit=1001', 'limit'],
    ['operators?limit=ten', 'limit'], ['operators?offset=-1', 'offset'], ['operators?format=xml', 'format'],
    ['operators?rank=abc', 'rank'], ['operators?rank=-1', 'rank'], ['operators?rank=1e3', 'rank'],
    [`operators?q=${'x'.repeat(300)}`, 'q'],
    ['kernels?group=stack', 'group'], ['kernels?sort=device_self', 'sort'],
    ['memory?points=9', 'points'], ['memory?points=5001', 'points'], ['memory?device=gpu0', 'device'],
    ['memory?start_us=nan', 'start_us'], ['memory?end_us=0x10', 'end_us'], ['memory?start_us=inf', 'start_us'],
    ['memory?start_us=10&end_us=5', 'end_us'],
    ['memory/events?min_bytes=-5', 'min_bytes'], ['memory/events?sort=addr', 'sort'],
    ['overview?rank=%201', 'rank'],
  ];
  for (const [path, name] of bad) {
    const j = await srv.json(`/api/runs/${amp}/${path}`, 400);
    assert.equal(j.error.code, 'invalid');
    assert.ok(j.error.message.includes(`'${name}'`), `${path}: ${j.error.message}`);
  }
  for (const path of ['overview', 'operators', 'kernels', 'memory', 'memory/events']) {
    const j = await srv.json(`/api/runs/${ddp}/${path}?rank=7`, 404);
    assert.match(j.error.message, /rank 7/);
    await srv.json(`/api/runs/0123456789abcdef/${path}`, 404);
  }
  assert.match((await srv.json(`/api/runs/${amp}/memory?device=5`, 404)).error.message, /device '5'/);
  assert.equal((await srv.req(`/api/runs/${amp}/overview`, { auth: false })).status, 401);
});

test('a run imported before the analysis tables answers 409', async (t) => {
  if (!HAVE_SQLITE) { t.skip('sqlite3 CLI not installed'); return; }
  const id = await srv.uploadBody(evilTrace(), 'old.pt.trace.json', 'old');
  const db = join(srv.dataDir, 'runs', id, 'run.db');
  assert.ok(existsSync(db));
  srv.sql(id, 'DROP TABLE step; DROP TABLE op_stat; DROP TABLE kernel_stat; DROP TABLE mem_alloc; DROP TABLE analysis; DROP TABLE gpu;');
  for (const path of ['overview', 'operators', 'kernels', 'memory', 'memory/events', 'operators?format=csv']) {
    const j = await srv.json(`/api/runs/${id}/${path}`, 409);
    assert.equal(j.error.code, 'conflict');
    assert.match(j.error.message, /re-import/);
  }
  // the run itself is still served
  assert.equal((await srv.req(`/api/runs/${id}`)).status, 200);
});
