// @ts-check
/**
 * dev/compare.js — answers GET ./api/diff, ./api/diff/kernels and
 * ./api/diff/operators for the dev fixture page, from what dev/analysis.js
 * answers for each run (overview, kernels and operators grouped by name),
 * joined in JS the way server/derive/diff.c joins them in SQL: per step, status by
 * ±5 % and 1 µs, sort, filters and paging. Kernel families are left out
 * (group=family answers the name join).
 */

import { ApiError, getJson } from '../js/api.js';
import { answerAnalysis } from './analysis.js';

const STATUSES = ['added', 'removed', 'faster', 'slower', 'same'];
/** @type {Record<string, (r: Record<string, any>) => number | string>} */
const SORTS = { change: (r) => Math.abs(r.delta_us), delta: (r) => r.delta_us, ratio: (r) => r.ratio, name: (r) => r.name, a_time: (r) => r.a_us, b_time: (r) => r.b_us, a_calls: (r) => r.a_calls, b_calls: (r) => r.b_calls, status: (r) => STATUSES.indexOf(r.status) };

/**
 * @param {string} method
 * @param {string} path
 * @returns {Promise<unknown> | undefined}
 */
export function answerDiff(method, path) {
    if (method !== 'GET' || !/^\.\/api\/diff(\/(kernels|operators))?\?/.test(path)) return undefined;
    const [base, qs] = path.split('?');
    return answer(base.replace('./api/diff', '').replace('/', ''), new URLSearchParams(qs));
}

/**
 * @param {string} what
 * @param {URLSearchParams} q
 */
async function answer(what, q) {
    const a = q.get('a'), b = q.get('b');
    if (!a) throw new ApiError("parameter 'a' is required (a run id)", 400, 'invalid');
    if (!b) throw new ApiError("parameter 'b' is required (a run id)", 400, 'invalid');
    /** @param {string} id @param {string} rw @param {string | null} rank */
    const get = (id, rw, rank) => /** @type {Promise<any>} */ (answerAnalysis('GET', `./api/runs/${id}/${rw}?${rank ? `rank=${rank}&` : ''}limit=1000`));
    const [oa, ob] = await Promise.all([get(a, 'overview', q.get('rank_a')), get(b, 'overview', q.get('rank_b'))]);
    const side = (/** @type {any} */ o, /** @type {string} */ id) => ({
        id, name: id, rank: o.rank, ranks: o.ranks, steps: o.steps.length,
        device: o.gpus[0] ? { name: o.gpus[0].name, memory_bytes: o.gpus[0].memory_bytes, compute_capability: o.gpus[0].compute_capability } : null,
        average: o.average, kernel_us: o.gpus[0] ? o.gpus[0].kernel_us / Math.max(1, o.steps.length) : 0,
        gpu_utilization: o.gpus[0] ? o.gpus[0].utilization : null, sm_efficiency: null,
        tensor_core_share: o.gpus[0] ? o.gpus[0].tensor_core_share : null, peak_memory_bytes: o.peak_memory_bytes['0'] ?? null,
    });
    const sa = side(oa, a), sb = side(ob, b);
    /** @type {{runs: {id: string, name: string}[]}} */
    const list = await getJson('./fixtures/runs.json');
    for (const s of [sa, sb]) s.name = (list.runs.find((r) => r.id === s.id) || s).name;
    /** @param {'kernels' | 'operators'} kind @param {boolean} perStep */
    const join = async (kind, perStep) => {
        const [ta, tb] = await Promise.all([get(a, kind, String(sa.rank)), get(b, kind, String(sb.rank))]);
        const time = (/** @type {any} */ r) => (kind === 'kernels' ? r.total_us : r.device_self_us);
        const da = perStep ? Math.max(1, sa.steps) : 1, db = perStep ? Math.max(1, sb.steps) : 1;
        const m = new Map();
        for (const r of ta.rows) m.set(r.name, { name: r.name, a_calls: r.calls / da, a_us: time(r) / da, b_calls: null, b_us: null, tensor_cores: !!r.tensor_cores });
        for (const r of tb.rows) {
            const x = m.get(r.name) || { name: r.name, a_calls: null, a_us: null, tensor_cores: false };
            m.set(r.name, { ...x, b_calls: r.calls / db, b_us: time(r) / db, tensor_cores: x.tensor_cores || !!r.tensor_cores });
        }
        return [...m.values()].map((r) => {
            const delta = (r.b_us ?? 0) - (r.a_us ?? 0);
            const status = r.a_us === null ? 'added' : r.b_us === null ? 'removed'
                : r.b_us < r.a_us * 0.95 && -delta >= 1 ? 'faster' : r.b_us > r.a_us * 1.05 && delta >= 1 ? 'slower' : 'same';
            return { ...r, delta_us: delta, ratio: r.a_us > 0 && r.b_us > 0 ? r.b_us / r.a_us : null, status };
        });
    };
    /** @param {any[]} rows */
    const counts = (rows) => Object.fromEntries(STATUSES.map((s) => [s, rows.filter((r) => r.status === s).length]));
    if (!what) {
        const bd = Object.fromEntries(oa.categories.map((/** @type {string} */ c) => [c, ob.average.breakdown_us[c] - oa.average.breakdown_us[c]]));
        const [k, o] = await Promise.all([join('kernels', true), join('operators', true)]);
        return {
            a: sa, b: sb, categories: oa.categories, threshold: 0.05,
            speedup: sb.average.dur_us > 0 ? sa.average.dur_us / sb.average.dur_us : null,
            delta: { dur_us: sb.average.dur_us - sa.average.dur_us, breakdown_us: bd, kernel_us: sb.kernel_us - sa.kernel_us, gpu_utilization: null, tensor_core_share: null },
            kernels: counts(k), kernel_families: counts(k), operators: counts(o),
        };
    }
    const kind = /** @type {'kernels' | 'operators'} */ (what);
    let rows = await join(kind, q.get('per') !== 'total');
    const needle = (q.get('q') || '').toLowerCase();
    if (needle) rows = rows.filter((r) => r.name.toLowerCase().includes(needle));
    const c = counts(rows);
    const want = (q.get('status') || '').split(',').filter(Boolean);
    if (want.some((s) => !STATUSES.includes(s))) throw new ApiError("parameter 'status' must be a comma-separated list of added, removed, faster, slower, same", 400, 'invalid');
    if (want.length) rows = rows.filter((r) => want.includes(r.status));
    const sort = q.get('sort') || 'change';
    const key = SORTS[/** @type {keyof typeof SORTS} */ (sort)];
    if (!key) throw new ApiError("parameter 'sort' has an unknown value", 400, 'invalid');
    const desc = (q.get('order') || (sort === 'name' ? 'asc' : 'desc')) === 'desc';
    rows.sort((x, y) => {
        const u = key(x), v = key(y);
        if (u === null || v === null) return u === v ? 0 : u === null ? 1 : -1;
        return (u < v ? -1 : u > v ? 1 : 0) * (desc ? -1 : 1) || (x.name < y.name ? -1 : 1);
    });
    const offset = Number(q.get('offset') || 0), limit = Number(q.get('limit') || 100);
    return {
        kind, group: 'name', per: q.get('per') === 'total' ? 'total' : 'step', metric: kind === 'kernels' ? 'kernel' : 'device_self',
        threshold: 0.05, counts: c, total: rows.length, offset, limit, sort, order: desc ? 'desc' : 'asc',
        a: { id: a, name: sa.name, rank: sa.rank }, b: { id: b, name: sb.name, rank: sb.rank }, rows: rows.slice(offset, offset + limit),
    };
}
