// @ts-check
/**
 * dev/analysis.js — the analysis API (overview, operators, kernels,
 * memory, memory/events) answered from canned per-run tables in
 * dev/fixtures/analysis-<run id>.json, for the dev fixture page.
 *
 * The fixtures hold the stored tables (op_stat, kernel_stat, memory
 * samples and allocations, in µs) taken from the demo traces; this module
 * does what the server does with them — grouping, search, sorting,
 * paging, the curve's window and down-sampling — following the contract,
 * so the tabs can be exercised without a server. A run without a fixture
 * file answers 409, like a run imported before analyses existed. Some
 * fixture names are hostile (<script>, <img onerror>) on purpose. The Ranks
 * tab (`ranks`) is answered with dev/fixtures/ranks-<run id>.json as it is:
 * the server's answer for param's 8-rank DLRM run, captured once.
 */

import { ApiError, getJson } from '../js/api.js';

/**
 * @typedef {object} RankFixture
 * @property {any} overview
 * @property {any[][]} ops      [name, shape, stack, calls, host_self, host_total, dev_self, dev_total, tc_self, tc_total, tc_eligible]
 * @property {any[][]} kernels  [device, name, op, calls, total, min, max, tc, comm, bps_w, bps_dur, occ_w, occ_dur, limiter]
 * @property {[number, number]} window_us
 * @property {{samples: Record<string, number[][]>, allocs: Record<string, any[][]>, capacity: Record<string, number | null>,
 *             steps: {name: string, start_us: number, end_us: number}[]}} memory
 */

/** @typedef {{ranks: Record<string, RankFixture>, alias?: Record<string, string>}} RunFixture */

/** @type {Map<string, Promise<RunFixture | null>>} */
const cache = new Map();

/** @param {string} id */
function fixture(id) {
    let p = cache.get(id);
    if (!p) {
        p = getJson('./fixtures/analysis-' + encodeURIComponent(id) + '.json').catch(() => null);
        cache.set(id, p);
    }
    return p;
}

const PATH_RE = /^\.\/api\/runs\/([^/?]+)\/(overview|operators|kernels|memory|memory\/events|ranks)(?:\?(.*))?$/;

/**
 * Answers an analysis request, or returns undefined for other paths.
 * @param {string} method
 * @param {string} path
 * @returns {Promise<unknown> | undefined}
 */
export function answerAnalysis(method, path) {
    const m = PATH_RE.exec(path);
    if (method !== 'GET' || !m) return undefined;
    return answer(decodeURIComponent(m[1]), m[2], new URLSearchParams(m[3] || ''));
}

/**
 * @param {string} id
 * @param {string} what
 * @param {URLSearchParams} q
 */
async function answer(id, what, q) {
    if (what === 'ranks') {
        const canned = await getJson('./fixtures/ranks-' + encodeURIComponent(id) + '.json').catch(() => null);
        if (!canned) throw new ApiError(`run ${id} has no analysis tables: it was imported by an older traceboard; import its trace again`, 409, 'no_analysis');
        return canned;
    }
    const fx = await fixture(id);
    if (!fx) throw new ApiError(`run ${id} has no analysis tables: it was imported by an older traceboard; import its trace again`, 409, 'no_analysis');
    const ranks = [...Object.keys(fx.ranks), ...Object.keys(fx.alias || {})].map(Number).sort((a, b) => a - b);
    const rankParam = q.get('rank');
    const rank = rankParam === null || rankParam === '' ? ranks[0] : Number(rankParam);
    if (!/^\d+$/.test(String(rankParam ?? rank))) throw new ApiError('bad parameter rank', 400, 'invalid');
    const key = fx.ranks[String(rank)] ? String(rank) : fx.alias && fx.alias[String(rank)];
    if (!key) throw new ApiError(`run ${id} has no rank ${rank}`, 404, 'not_found');
    const r = fx.ranks[key];
    if (what === 'overview') return { ...r.overview, rank, ranks };
    if (what === 'operators') return operators(r, rank, q);
    if (what === 'kernels') return kernels(r, rank, q);
    if (what === 'memory') return memory(r, rank, q);
    return memoryEvents(r, q);
}

/**
 * @param {URLSearchParams} q
 * @param {string[]} sorts
 * @param {string} dflt
 */
function paging(q, sorts, dflt) {
    const sort = q.get('sort') || dflt;
    if (!sorts.includes(sort)) throw new ApiError('bad parameter sort: ' + sort, 400, 'invalid');
    const order = q.get('order') || (sort === 'name' || sort === 'op' ? 'asc' : 'desc');
    if (order !== 'asc' && order !== 'desc') throw new ApiError('bad parameter order', 400, 'invalid');
    const offset = Number(q.get('offset') || 0);
    const limit = Number(q.get('limit') || 100);
    if (!(limit >= 1 && limit <= 1000)) throw new ApiError('bad parameter limit', 400, 'invalid');
    return { sort, order, offset, limit, text: (q.get('q') || '').toLowerCase() };
}

/**
 * Sorts rows by a field (nulls last), pages them.
 * @template T
 * @param {T[]} rows
 * @param {(row: T) => number | string | null} get
 * @param {{order: string, offset: number, limit: number}} p
 */
function sortPage(rows, get, p) {
    const sign = p.order === 'asc' ? 1 : -1;
    const sorted = [...rows].sort((a, b) => {
        const x = get(a);
        const y = get(b);
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
        if (typeof x === 'string' || typeof y === 'string') return String(x).localeCompare(String(y)) * sign;
        return (x - y) * sign;
    });
    return { total: rows.length, offset: p.offset, limit: p.limit, rows: sorted.slice(p.offset, p.offset + p.limit) };
}

/**
 * @param {RankFixture} r
 * @param {number} rank
 * @param {URLSearchParams} q
 */
function operators(r, rank, q) {
    const group = q.get('group') || 'name';
    if (!['name', 'shape', 'stack'].includes(group)) throw new ApiError('bad parameter group', 400, 'invalid');
    const hasDevice = r.ops.some((o) => o[7] > 0);
    const p = paging(q, ['calls', 'host_self', 'host_total', 'device_self', 'device_total', 'name'], hasDevice ? 'device_self' : 'host_self');
    /** @type {Map<string, any>} */
    const groups = new Map();
    for (const o of r.ops) {
        const k = group === 'name' ? o[0] : o[0] + '\u0000' + (group === 'shape' ? o[1] : o[2]);
        let g = groups.get(k);
        if (!g) {
            g = { name: o[0], calls: 0, host_self_us: 0, host_total_us: 0, device_self_us: 0, device_total_us: 0, tc: 0, tc_eligible: false };
            if (group === 'shape') g.shape = o[1];
            if (group === 'stack') g.stack = o[2];
            groups.set(k, g);
        }
        g.calls += o[3];
        g.host_self_us += o[4];
        g.host_total_us += o[5];
        g.device_self_us += o[6];
        g.device_total_us += o[7];
        g.tc += o[8];
        g.tc_eligible = g.tc_eligible || !!o[10];
    }
    const all = [...groups.values()].map((g) => {
        const { tc, ...row } = g;
        row.tc_self_share = g.tc_eligible && g.device_self_us > 0 ? tc / g.device_self_us : null;
        return row;
    });
    const rows = all.filter((g) => !p.text || g.name.toLowerCase().includes(p.text));
    const field = { calls: 'calls', host_self: 'host_self_us', host_total: 'host_total_us', device_self: 'device_self_us', device_total: 'device_total_us', name: 'name' }[p.sort] || 'name';
    return {
        rank,
        group,
        ...sortPage(rows, (g) => g[field], p),
        has_device: hasDevice,
        has_shapes: r.ops.some((o) => o[1]),
        has_stacks: r.ops.some((o) => o[2]),
        totals: {
            calls: all.reduce((s, g) => s + g.calls, 0),
            host_self_us: all.reduce((s, g) => s + g.host_self_us, 0),
            device_self_us: all.reduce((s, g) => s + g.device_self_us, 0),
        },
    };
}

/**
 * @param {RankFixture} r
 * @param {number} rank
 * @param {URLSearchParams} q
 */
function kernels(r, rank, q) {
    const group = q.get('group') || 'name';
    if (!['name', 'op'].includes(group)) throw new ApiError('bad parameter group', 400, 'invalid');
    const p = paging(q, ['total', 'calls', 'mean', 'min', 'max', 'name', 'share', 'occupancy', 'blocks_per_sm'], 'total');
    const kernelUs = r.kernels.reduce((s, k) => s + k[4], 0);
    /** @type {Map<string, any>} */
    const groups = new Map();
    for (const k of r.kernels) {
        const key = group === 'name' ? k[1] : k[1] + '\u0000' + k[2];
        let g = groups.get(key);
        if (!g) {
            g = { name: k[1], calls: 0, total_us: 0, min_us: Infinity, max_us: 0, tc: false, comm: false, bw: 0, bd: 0, ow: 0, od: 0, limiter: null };
            if (group === 'op') g.op = k[2];
            groups.set(key, g);
        }
        g.calls += k[3];
        g.total_us += k[4];
        g.min_us = Math.min(g.min_us, k[5]);
        g.max_us = Math.max(g.max_us, k[6]);
        g.tc = g.tc || !!k[7];
        g.comm = g.comm || !!k[8];
        if (k[9] !== null) (g.bw += k[9]), (g.bd += k[10]);
        if (k[11] !== null) (g.ow += k[11]), (g.od += k[12]);
        g.limiter = g.limiter || k[13] || null;
    }
    const rows = [...groups.values()]
        .filter((g) => !p.text || g.name.toLowerCase().includes(p.text) || (g.op || '').toLowerCase().includes(p.text))
        .map((g) => ({
            name: g.name,
            ...(group === 'op' ? { op: g.op } : {}),
            calls: g.calls,
            total_us: g.total_us,
            mean_us: g.total_us / g.calls,
            min_us: g.min_us,
            max_us: g.max_us,
            share: kernelUs > 0 ? g.total_us / kernelUs : 0,
            tensor_cores: g.tc,
            communication: g.comm,
            blocks_per_sm: g.bd > 0 ? g.bw / g.bd : null,
            achieved_occupancy: g.od > 0 ? g.ow / g.od / 100 : null,
            limiter: g.limiter,
        }));
    const field = { total: 'total_us', calls: 'calls', mean: 'mean_us', min: 'min_us', max: 'max_us', name: 'name', share: 'share', occupancy: 'achieved_occupancy', blocks_per_sm: 'blocks_per_sm' }[p.sort] || 'total_us';
    return {
        rank,
        group,
        ...sortPage(rows, (g) => /** @type {any} */ (g)[field], p),
        kernel_us: kernelUs,
        tc_us: r.kernels.filter((k) => k[7]).reduce((s, k) => s + k[4], 0),
    };
}

/**
 * @param {RankFixture} r
 * @param {URLSearchParams} q
 */
function pickDevice(r, q) {
    const ids = Object.keys(r.memory.samples).sort((a, b) => (a === 'cpu' ? 1 : b === 'cpu' ? -1 : Number(a) - Number(b)));
    const device = q.get('device') || ids[0] || 'cpu';
    if (ids.length && !ids.includes(device)) throw new ApiError(`no memory events for device ${device}`, 404, 'not_found');
    return { device, ids };
}

/**
 * @param {URLSearchParams} q
 * @param {[number, number]} win
 */
function window_(q, win) {
    const s = q.get('start_us');
    const e = q.get('end_us');
    const start = s ? Number(s) : win[0];
    const end = e ? Number(e) : win[1];
    if (!(end > start)) throw new ApiError('bad parameter end_us: must be after start_us', 400, 'invalid');
    return { start, end };
}

/**
 * @param {RankFixture} r
 * @param {number} rank
 * @param {URLSearchParams} q
 */
function memory(r, rank, q) {
    const { device, ids } = pickDevice(r, q);
    const points = Number(q.get('points') || 800);
    if (!(points >= 10 && points <= 5000)) throw new ApiError('bad parameter points', 400, 'invalid');
    const { start, end } = window_(q, r.window_us);
    const devices = ids.map((id) => {
        const s = r.memory.samples[id];
        let peak = s[0];
        for (const x of s) if (x[1] > peak[1]) peak = x;
        return { id, label: id === 'cpu' ? 'CPU' : 'GPU ' + id, peak_bytes: peak[1], peak_us: peak[0], memory_bytes: r.memory.capacity[id] ?? null };
    });
    const samples = r.memory.samples[device] || [];
    /** @type {number[][]} */
    const kept = [];
    const before = samples.filter((x) => x[0] < start).pop();
    if (before) kept.push([start, before[1], before[2]]);
    const width = (end - start) / points;
    /** @type {Map<number, number[][]>} */
    const buckets = new Map();
    for (const x of samples) {
        if (x[0] < start || x[0] > end) continue;
        const b = Math.floor((x[0] - start) / width);
        const list = buckets.get(b) || [];
        list.push(x);
        buckets.set(b, list);
    }
    for (const list of buckets.values()) {
        let max = list[0];
        for (const x of list) if (x[1] > max[1]) max = x;
        for (const x of new Set([list[0], max, list[list.length - 1]])) kept.push(x);
    }
    kept.sort((a, b) => a[0] - b[0]);
    let peak = null;
    for (const x of samples) if (x[0] >= start && x[0] <= end && (!peak || x[1] > peak.bytes)) peak = { bytes: x[1], ts_us: x[0] };
    return {
        rank,
        device,
        devices,
        start_us: start,
        end_us: end,
        curve: { ts_us: kept.map((x) => x[0]), allocated: kept.map((x) => x[1]), reserved: kept.map((x) => x[2]) },
        peak,
        steps: r.memory.steps.filter((s) => s.end_us > start && s.start_us < end),
    };
}

/**
 * @param {RankFixture} r
 * @param {URLSearchParams} q
 */
function memoryEvents(r, q) {
    const { device } = pickDevice(r, q);
    const p = paging(q, ['bytes', 'alloc', 'free', 'lifetime', 'op'], 'bytes');
    const { start, end } = window_(q, [-Infinity, Infinity]);
    const min = Number(q.get('min_bytes') || 0);
    const rows = (r.memory.allocs[device] || [])
        .filter((a) => a[1] >= min && (a[3] ?? -Infinity) <= end && (a[4] ?? Infinity) >= start)
        .filter((a) => !p.text || (a[0] || '').toLowerCase().includes(p.text))
        .map((a) => ({ op: a[0], bytes: a[1], addr: a[2], alloc_us: a[3], free_us: a[4], lifetime_us: a[3] !== null && a[4] !== null ? a[4] - a[3] : null }));
    const field = { bytes: 'bytes', alloc: 'alloc_us', free: 'free_us', lifetime: 'lifetime_us', op: 'op' }[p.sort] || 'bytes';
    return sortPage(rows, (x) => /** @type {any} */ (x)[field], p);
}
