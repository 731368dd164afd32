// @ts-check
/**
 * dev/timeline.js — the timeline API (tracks, window, slice, search,
 * aggregate) answered from a trace generated in memory, for the dev
 * fixture page: no server needed to work on views/timeline.js.
 *
 * The trace is the same for every run (seeded): 8 ProfilerSteps of a
 * small model on a main thread (operators → cudaLaunchKernel), their
 * kernels on GPU 0 stream 7, copies on stream 20, a DataLoader thread of
 * thousands of tiny slices (so zoomed-out windows merge), an empty thread,
 * two counters, and a slice named `<img src=x onerror=alert(1)>` that must
 * show up as text. Bucketing follows the API contract in the simplest
 * way: per track and depth, a slice at least one bucket long is returned
 * as is; shorter ones that start in the same bucket merge into one item
 * (n = count, name of the longest, id 0). Counters give min/max/last per
 * bucket.
 */

import { ApiError } from '../js/api.js';

/**
 * @typedef {object} Slice
 * @property {number} id
 * @property {number} track
 * @property {number} depth
 * @property {number} ts
 * @property {number} dur
 * @property {string} name
 * @property {string} cat
 * @property {Record<string, unknown>} args
 * @property {number} corr   correlation id (runtime ↔ kernel), 0 = none
 * @property {Slice | null} parent
 * @property {Slice[]} children
 */

const T0 = 1_000_000;
const TRACKS = [
    { id: 1, kind: 'cpu', pid: 100, tid: 100, name: 'thread 100 (python3)', process: 'python3', device: null, stream: null },
    { id: 2, kind: 'cpu', pid: 100, tid: 117, name: 'thread 117 (pt_autograd_0)', process: 'python3', device: null, stream: null },
    { id: 3, kind: 'cpu', pid: 101, tid: 101, name: 'thread 101 (DataLoader worker 0)', process: 'python3', device: null, stream: null },
    { id: 4, kind: 'cpu', pid: 100, tid: 130, name: 'thread 130 (idle)', process: 'python3', device: null, stream: null },
    { id: 5, kind: 'gpu', pid: 0, tid: 7, name: 'stream 7', process: 'GPU 0', device: 0, stream: 7 },
    { id: 6, kind: 'gpu', pid: 0, tid: 20, name: 'stream 20', process: 'GPU 0', device: 0, stream: 20 },
];
const COUNTERS = [
    { id: 1, name: 'GPU 0 memory allocated', unit: 'bytes' },
    { id: 2, name: 'GPU 0 utilization', unit: '%' },
];

/** @type {{slices: Slice[], byTrack: Map<number, Slice[][]>, steps: {name: string, start_us: number, end_us: number}[],
 *   counters: Map<number, {ts: number[], v: number[]}>, flows: {from: Slice, to: Slice, cat: string}[], t1: number} | null} */
let trace = null;

/**
 * A small seeded generator (the same trace on every load).
 * @param {number} seed
 * @returns {() => number} in [0, 1)
 */
function rng(seed) {
    let s = seed >>> 0;
    return () => {
        s = (s * 1664525 + 1013904223) >>> 0;
        return s / 2 ** 32;
    };
}

function generate() {
    const rand = rng(42);
    /** @type {Slice[]} */
    const slices = [];
    /** @type {{from: Slice, to: Slice, cat: string}[]} */
    const flows = [];
    let nextId = 1;
    let corr = 1;
    /**
     * @param {number} track
     * @param {Slice | null} parent
     * @param {number} ts
     * @param {number} dur
     * @param {string} name
     * @param {string} cat
     * @param {Record<string, unknown>} [args]
     */
    const add = (track, parent, ts, dur, name, cat, args = {}) => {
        /** @type {Slice} */
        const s = { id: nextId++, track, depth: parent ? parent.depth + 1 : 0, ts, dur, name, cat, args, corr: 0, parent, children: [] };
        if (parent) parent.children.push(s);
        slices.push(s);
        return s;
    };
    /** @type {{name: string, start_us: number, end_us: number}[]} */
    const steps = [];
    let gpuFree = T0;
    let t = T0 + 200;
    /** @type {[string, number][]} */
    const kernels = [
        ['nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT', 180],
        ['void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl>(int)', 40],
        ['ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn', 150],
        ['void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float>>(float)', 25],
    ];
    for (let step = 1; step <= 8; step++) {
        const stepStart = t;
        const ps = add(1, null, t, 0, `ProfilerStep#${step}`, 'user_annotation');
        const copy = add(6, null, t + 20, 120, 'Memcpy HtoD (Pinned -> Device)', 'gpu_memcpy', { bytes: 33554432, 'memory bandwidth (GB/s)': 24.6 });
        t += 150;
        for (let layer = 0; layer < 24; layer++) {
            const [kname, kdur] = kernels[layer % kernels.length];
            const opName = layer % 4 === 1 ? 'aten::gelu' : layer % 4 === 3 ? 'aten::sum' : 'aten::linear';
            const op = add(1, ps, t, 0, opName, 'cpu_op', { 'External id': nextId, 'Input Dims': [[64, 1024], [1024, 1024]], 'Input type': ['c10::BFloat16', 'c10::BFloat16'] });
            let u = t + 4;
            let inner = op;
            if (opName === 'aten::linear') {
                inner = add(1, op, u, 0, 'aten::addmm', 'cpu_op', { 'Input Dims': [[1024], [64, 1024], [1024, 1024]] });
                u += 3;
            }
            if (step === 2 && layer === 5) {
                add(1, inner, u, 6, '<img src=x onerror=alert(1)>', 'cpu_op', { note: '<b>not bold</b>' });
                u += 8;
            }
            const launchDur = 5 + rand() * 4;
            const launch = add(1, inner, u, launchDur, 'cudaLaunchKernel', 'cuda_runtime', { correlation: corr, cbid: 211 });
            launch.corr = corr;
            const kts = Math.max(gpuFree + 2, u + launchDur + 3);
            const kd = kdur * (0.85 + rand() * 0.3);
            const k = add(5, null, kts, kd, kname, 'kernel', { device: 0, stream: 7, correlation: corr, grid: [132, 1, 1], block: [384, 1, 1], 'est. achieved occupancy %': 38 });
            k.corr = corr;
            flows.push({ from: launch, to: k, cat: 'ac2g' });
            corr++;
            gpuFree = kts + kd;
            u += launchDur + 2;
            if (inner !== op) inner.dur = u - inner.ts;
            op.dur = u + 2 - op.ts;
            t = op.ts + op.dur + 6 + rand() * 10;
        }
        // backward thread
        let b = t;
        for (let i = 0; i < 12; i++) {
            const bw = add(2, null, b, 0, i % 2 ? 'autograd::engine::evaluate_function: AddmmBackward0' : 'autograd::engine::evaluate_function: GeluBackward0', 'cpu_op');
            const mm = add(2, bw, b + 3, 30 + rand() * 20, i % 2 ? 'aten::mm' : 'aten::gelu_backward', 'cpu_op');
            const l = add(2, mm, mm.ts + 5, 6, 'cudaLaunchKernel', 'cuda_runtime', { correlation: corr });
            l.corr = corr;
            const kts = Math.max(gpuFree + 2, l.ts + 9);
            const k = add(5, null, kts, 120 + rand() * 60, i % 2 ? 'nvjet_sm90_tst_128x256_64x4_2x1_v_bz_TNN' : 'void at::native::GeluBackwardCUDAKernelImpl(float)', 'kernel', { correlation: corr });
            k.corr = corr;
            flows.push({ from: l, to: k, cat: 'ac2g' });
            corr++;
            gpuFree = k.ts + k.dur;
            bw.dur = mm.ts + mm.dur + 4 - bw.ts;
            b = bw.ts + bw.dur + 5;
        }
        t = Math.max(b, t) + 10;
        const sync = add(1, ps, t, Math.max(10, gpuFree - t + 8), 'cudaStreamSynchronize', 'cuda_runtime');
        t = sync.ts + sync.dur + 30 + rand() * 60;
        ps.dur = t - ps.ts;
        steps.push({ name: ps.name, start_us: stepStart, end_us: t });
        // DataLoader: thousands of tiny slices during the step
        for (let d = stepStart; d < t; d += 1.5 + rand() * 3) {
            add(3, null, d, 0.4 + rand() * 0.8, rand() < 0.02 ? 'DataLoader.__next__' : 'pin_memory', 'python_function');
        }
        copy.ts = stepStart + 20;
        t += 400 + rand() * 300;
    }
    /** @type {Map<number, Slice[][]>} */
    const byTrack = new Map();
    for (const s of slices) {
        let depths = byTrack.get(s.track);
        if (!depths) byTrack.set(s.track, (depths = []));
        (depths[s.depth] ||= []).push(s);
    }
    for (const depths of byTrack.values()) for (const d of depths) d.sort((a, b) => a.ts - b.ts);
    /** @type {Map<number, {ts: number[], v: number[]}>} */
    const counters = new Map();
    const mem = { ts: /** @type {number[]} */ ([]), v: /** @type {number[]} */ ([]) };
    const util = { ts: /** @type {number[]} */ ([]), v: /** @type {number[]} */ ([]) };
    let level = 2 ** 30;
    for (let c = T0; c < t; c += 50) {
        level = Math.max(2 ** 28, level + (rand() - 0.5) * 2 ** 26);
        mem.ts.push(c);
        mem.v.push(Math.round(level));
        util.ts.push(c);
        util.v.push(Math.round(60 + rand() * 40));
    }
    counters.set(1, mem);
    counters.set(2, util);
    return { slices, byTrack, steps, counters, flows, t1: t };
}

function get() {
    if (!trace) trace = generate();
    return trace;
}

const PATH_RE = /^\.\/api\/runs\/([^/?]+)\/timeline(\/tracks|\/slice|\/search|\/aggregate)?(?:\?(.*))?$/;

/**
 * Answers a timeline request, or returns undefined for other paths.
 * @param {string} method
 * @param {string} path
 * @returns {unknown}
 */
export function answerTimeline(method, path) {
    const m = PATH_RE.exec(path);
    if (method !== 'GET' || !m) return undefined;
    const q = new URLSearchParams(m[3] || '');
    const rank = q.get('rank');
    if (rank !== null && rank !== '' && rank !== '0') throw new ApiError(`run has no rank ${rank}`, 404, 'not_found');
    const tr = get();
    switch (m[2]) {
        case '/tracks':
            return {
                rank: 0, ranks: [0], t0_us: T0, t1_us: tr.t1, strings: [],
                tracks: TRACKS.map((k) => {
                    const depths = tr.byTrack.get(k.id) || [];
                    return { ...k, max_depth: Math.max(0, depths.length - 1), nslices: depths.reduce((s, d) => s + d.length, 0) };
                }),
                counters: COUNTERS, steps: tr.steps,
            };
        case '/slice':
            return slice(tr, q);
        case '/search':
            return search(tr, q);
        case '/aggregate':
            return aggregate(tr, q);
        default:
            return window_(tr, q);
    }
}

/**
 * @param {URLSearchParams} q
 * @param {string} key
 */
function num(q, key) {
    const v = q.get(key);
    if (v === null || v === '' || !Number.isFinite(Number(v))) throw new ApiError(`bad parameter ${key}`, 400, 'invalid');
    return Number(v);
}

/**
 * @param {ReturnType<typeof generate>} tr
 * @param {URLSearchParams} q
 */
function window_(tr, q) {
    const start = num(q, 'start');
    const end = num(q, 'end');
    const width = Math.min(20000, Math.max(1, Math.floor(num(q, 'width'))));
    if (!(end > start)) throw new ApiError('bad parameter end', 400, 'invalid');
    const bucket = (end - start) / width;
    const wanted = q.get('tracks') ? new Set(String(q.get('tracks')).split(',').map(Number)) : null;
    /** @type {string[]} */
    const strings = [];
    /** @type {Map<string, number>} */
    const index = new Map();
    /** @param {string} s */
    const str = (s) => {
        let i = index.get(s);
        if (i === undefined) {
            i = strings.length;
            strings.push(s);
            index.set(s, i);
        }
        return i;
    };
    const tracks = [];
    for (const [id, depths] of tr.byTrack) {
        if (wanted && !wanted.has(id)) continue;
        const out = [];
        for (let d = 0; d < depths.length; d++) {
            const col = { depth: d, ts: /** @type {number[]} */ ([]), dur: /** @type {number[]} */ ([]), name: /** @type {number[]} */ ([]), n: /** @type {number[]} */ ([]), id: /** @type {number[]} */ ([]) };
            let lastBucket = -1;
            let longest = 0;
            for (const s of depths[d]) {
                if (s.ts + s.dur < start || s.ts > end) continue;
                const b = Math.floor((s.ts - start) / bucket);
                const i = col.ts.length - 1;
                if (s.dur < bucket && i >= 0 && lastBucket === b && col.dur[i] < bucket) {
                    col.n[i]++;
                    col.id[i] = 0;
                    col.dur[i] = Math.max(col.dur[i], s.ts + s.dur - col.ts[i]);
                    if (s.dur > longest) {
                        longest = s.dur;
                        col.name[i] = str(s.name);
                    }
                    continue;
                }
                col.ts.push(s.ts);
                col.dur.push(s.dur);
                col.name.push(str(s.name));
                col.n.push(1);
                col.id.push(s.id);
                longest = s.dur;
                lastBucket = Math.floor((s.ts + s.dur - start) / bucket);
            }
            if (col.ts.length) out.push(col);
        }
        tracks.push({ id, depths: out });
    }
    const counters = [];
    for (const [id, c] of tr.counters) {
        const o = { id, ts: /** @type {number[]} */ ([]), min: /** @type {number[]} */ ([]), max: /** @type {number[]} */ ([]), last: /** @type {number[]} */ ([]) };
        let lb = -1;
        for (let i = 0; i < c.ts.length; i++) {
            if (c.ts[i] < start - bucket || c.ts[i] > end) continue;
            const b = Math.floor((c.ts[i] - start) / bucket);
            const v = c.v[i];
            if (b === lb) {
                const j = o.ts.length - 1;
                o.min[j] = Math.min(o.min[j], v);
                o.max[j] = Math.max(o.max[j], v);
                o.last[j] = v;
            } else {
                o.ts.push(c.ts[i]);
                o.min.push(v);
                o.max.push(v);
                o.last.push(v);
                lb = b;
            }
        }
        counters.push(o);
    }
    return { start_us: start, end_us: end, width, bucket_us: bucket, strings, tracks, counters };
}

/** @param {Slice} s */
const link = (s) => ({ name: s.name, ts_us: s.ts, dur_us: s.dur, track: s.track });

/**
 * @param {ReturnType<typeof generate>} tr
 * @param {URLSearchParams} q
 */
function slice(tr, q) {
    const track = num(q, 'track');
    const ts = num(q, 'ts');
    const dur = q.get('dur') ? num(q, 'dur') : null;
    const id = q.get('id') ? num(q, 'id') : 0;
    const near = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a - b) < 0.0015;
    const s = tr.slices.find((x) => (id ? x.id === id : x.track === track && near(x.ts, ts) && (dur === null || near(x.dur, dur))));
    if (!s) throw new ApiError('no slice there', 404, 'not_found');
    const parents = [];
    for (let p = s.parent; p; p = p.parent) parents.unshift(link(p));
    const kids = s.children.reduce((a, c) => a + c.dur, 0);
    const launchedFlows = tr.flows.filter((f) => f.from === s);
    const launcherFlow = tr.flows.find((f) => f.to === s);
    return {
        id: s.id, track: s.track, name: s.name, cat: s.cat, kind: TRACKS.find((k) => k.id === s.track)?.kind || 'cpu',
        ts_us: s.ts, dur_us: s.dur, self_us: Math.max(0, s.dur - kids), depth: s.depth, args: s.args, parents,
        launched: launchedFlows.map((f) => link(f.to)),
        launcher: launcherFlow ? link(launcherFlow.from) : null,
        flows: [
            ...launchedFlows.map((f) => ({ dir: 'out', cat: f.cat, track: f.to.track, ts_us: f.to.ts })),
            ...(launcherFlow ? [{ dir: 'in', cat: launcherFlow.cat, track: launcherFlow.from.track, ts_us: launcherFlow.from.ts }] : []),
        ],
    };
}

/**
 * @param {ReturnType<typeof generate>} tr
 * @param {URLSearchParams} q
 */
function search(tr, q) {
    const text = (q.get('q') || '').toLowerCase();
    if (!text) throw new ApiError('bad parameter q', 400, 'invalid');
    const limit = Math.min(1000, Number(q.get('limit') || 100));
    const start = q.get('start') ? Number(q.get('start')) : -Infinity;
    const end = q.get('end') ? Number(q.get('end')) : Infinity;
    const all = tr.slices.filter((s) => s.ts >= start && s.ts <= end && s.name.toLowerCase().includes(text)).sort((a, b) => a.ts - b.ts);
    return { total: all.length, hits: all.slice(0, limit).map((s) => ({ track: s.track, ts_us: s.ts, dur_us: s.dur, name: s.name })) };
}

/**
 * @param {ReturnType<typeof generate>} tr
 * @param {URLSearchParams} q
 */
function aggregate(tr, q) {
    const start = num(q, 'start');
    const end = num(q, 'end');
    const wanted = q.get('tracks') ? new Set(String(q.get('tracks')).split(',').map(Number)) : null;
    /** @type {Map<string, {name: string, count: number, total_us: number, self_us: number}>} */
    const rows = new Map();
    for (const s of tr.slices) {
        if (s.ts < start || s.ts > end || (wanted && !wanted.has(s.track))) continue;
        let r = rows.get(s.name);
        if (!r) rows.set(s.name, (r = { name: s.name, count: 0, total_us: 0, self_us: 0 }));
        r.count++;
        r.total_us += s.dur;
        r.self_us += Math.max(0, s.dur - s.children.reduce((a, c) => a + c.dur, 0));
    }
    const counters = [];
    for (const c of COUNTERS) {
        const data = tr.counters.get(c.id);
        if (!data) continue;
        const vs = data.v.filter((_, i) => data.ts[i] >= start && data.ts[i] <= end);
        if (!vs.length) continue;
        counters.push({ id: c.id, name: c.name, min: Math.min(...vs), max: Math.max(...vs), avg: vs.reduce((a, b) => a + b, 0) / vs.length });
    }
    return {
        rows: [...rows.values()].map((r) => ({ ...r, avg_us: r.total_us / r.count })).sort((a, b) => b.total_us - a.total_us),
        counters,
    };
}
