// @ts-check
/**
 * timeline/multirank.js — all ranks of a run on one timeline (&ranks=all,
 * or &ranks=0,2,5): each rank's /timeline/tracks, windows, slices and
 * area tables fetched per rank and merged into what the one-rank view
 * draws, on the aligned clock of the Ranks tab.
 *
 * The clock: /ranks gives each rank's start t0_us (its trace clock) and
 * offset_us (its start on the aligned clock after the earliest rank's).
 * A rank's times are shifted by delta = offset_us − (t0_us − T0), where T0
 * is the t0_us of a rank with offset 0: on a shared trace clock every
 * delta is 0 and the URL's times stay trace times; with
 * baseTimeNanoseconds the ranks move onto the first rank's clock.
 * Answers are shifted by +delta as they arrive, requests by −delta.
 *
 * Track, counter and slice ids are unique within a run (one run.db), so
 * merged maps need no new ids; each track and counter carries its `rank`,
 * which layout.js turns into a lane group per rank.
 *
 * Everything here is pure but the loaders at the end, which take
 * the api functions' answers and a signal.
 */

import * as api from '../api.js';
import { SEARCH_LIMIT, pageStart } from './searchpager.js';

/** @typedef {import('../apitypes.js').TimelineTracks} TimelineTracks */
/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../apitypes.js').TimelineAggregate} TimelineAggregate */
/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('./data.js').Items} Items */
/** @typedef {import('./data.js').CounterSeries} CounterSeries */

/**
 * What a stacked view knows of each rank shown.
 * @typedef {{rank: number, delta: number, straggler: boolean, t0: number, t1: number}} RankClock
 */

/** Most ranks stacked at once (each costs a request per window). */
export const MAX_STACKED = 64;

/**
 * The ranks to stack from the URL's &ranks= ("" = not stacked, "all", or a
 * list), among those the run has; null when not stacked.
 * @param {string} param
 * @param {number[]} runRanks  the run's ranks, ascending
 * @returns {number[] | null}
 */
export function stackedRanks(param, runRanks) {
    if (!param || runRanks.length < 2) return null;
    if (param === 'all') return runRanks.slice(0, MAX_STACKED);
    const want = new Set(param.split(',').map(Number));
    const out = runRanks.filter((r) => want.has(r)).slice(0, MAX_STACKED);
    return out.length ? out : null;
}

/**
 * The &ranks= value for a choice of ranks: "all" when every rank is shown.
 * @param {number[]} chosen
 * @param {number[]} runRanks
 * @returns {string}
 */
export function ranksParam(chosen, runRanks) {
    if (!chosen.length) return '';
    const set = new Set(chosen);
    if (runRanks.every((r) => set.has(r))) return 'all';
    return runRanks.filter((r) => set.has(r)).join(',');
}

/**
 * Each rank's shift onto the aligned clock (see above).
 * @param {{rank: number, t0_us: number, offset_us: number}[]} ranks  /ranks' rows
 * @returns {Map<number, number>}
 */
export function rankDeltas(ranks) {
    const base = ranks.find((r) => r.offset_us === 0) || ranks.reduce((a, b) => (b.t0_us - b.offset_us < a.t0_us - a.offset_us ? b : a), ranks[0]);
    const t0 = base ? base.t0_us - base.offset_us : 0;
    /** @type {Map<number, number>} */
    const m = new Map();
    for (const r of ranks) m.set(r.rank, r.offset_us - (r.t0_us - t0));
    return m;
}

/**
 * The ranks' tracks answers as one: tracks and counters tagged with their
 * rank, the span of all shifted, the steps of the first rank.
 * @param {TimelineTracks[]} metas  in rank order
 * @param {Map<number, RankClock>} clocks
 * @returns {TimelineTracks}
 */
export function mergeMeta(metas, clocks) {
    const d = (/** @type {TimelineTracks} */ m) => (clocks.get(m.rank) || { delta: 0 }).delta;
    const first = metas[0];
    return {
        ...first,
        t0_us: Math.min(...metas.map((m) => m.t0_us + d(m))),
        t1_us: Math.max(...metas.map((m) => m.t1_us + d(m))),
        tracks: metas.flatMap((m) => (m.tracks || []).map((t) => ({ ...t, rank: m.rank }))),
        counters: metas.flatMap((m) => (m.counters || []).map((c) => ({ ...c, rank: m.rank }))),
        steps: (first.steps || []).map((s) => ({ ...s, start_us: s.start_us + d(first), end_us: s.end_us + d(first) })),
    };
}

/**
 * Shifts a window's items and counters by delta, in place (they are the
 * answer's own arrays).
 * @param {Map<number, Items[]>} items
 * @param {Map<number, CounterSeries>} counters
 * @param {number} delta
 */
export function shiftWindow(items, counters, delta) {
    if (!delta) return;
    for (const depths of items.values()) for (const it of depths) if (it) it.ts = it.ts.map((t) => t + delta);
    for (const c of counters.values()) c.ts = c.ts.map((t) => t + delta);
}

/**
 * A slice's details on the aligned clock.
 * @param {TimelineSlice} s
 * @param {(track: number) => number} deltaOf  the shift of a track's rank
 * @returns {TimelineSlice}
 */
export function shiftSlice(s, deltaOf) {
    /** @template {{track: number, ts_us: number}} L @param {L} l @returns {L} */
    const mv = (l) => ({ ...l, ts_us: l.ts_us + deltaOf(l.track) });
    return {
        ...s,
        ts_us: s.ts_us + deltaOf(s.track),
        parents: (s.parents || []).map(mv),
        launched: (s.launched || []).map(mv),
        launcher: s.launcher ? mv(s.launcher) : null,
        flows: (s.flows || []).map(mv),
    };
}

/**
 * The area tables of several ranks as one: rows by name added up (average
 * = total ÷ count), longest total first; counters side by side.
 * @param {TimelineAggregate[]} parts
 * @returns {TimelineAggregate}
 */
export function mergeAggregates(parts) {
    /** @type {Map<string, {name: string, count: number, total_us: number, self_us: number, avg_us: number}>} */
    const by = new Map();
    for (const p of parts) for (const r of p.rows || []) addTimes(by, r.name, r);
    const rows = [...by.values()].map((r) => ({ ...r, avg_us: r.count ? r.total_us / r.count : 0 }));
    rows.sort((a, b) => b.total_us - a.total_us || a.name.localeCompare(b.name));
    return { rows, counters: parts.flatMap((p) => p.counters || []) };
}

/**
 * Adds a row's count and times to the row of `key` in `by` (a copy of it
 * when new): what merging several ranks' tables does per name.
 * @template {{count: number, total_us: number, self_us: number}} R
 * @param {Map<string, R>} by
 * @param {string} key
 * @param {R} r
 */
export function addTimes(by, key, r) {
    const m = by.get(key);
    if (!m) {
        by.set(key, { ...r });
        return;
    }
    m.count += r.count;
    m.total_us += r.total_us;
    m.self_us += r.self_us;
}

/**
 * Loads the clocks of the stacked ranks (/ranks) and their tracks.
 * @param {string} runId
 * @param {number[]} ranks
 * @param {AbortSignal} signal
 * @returns {Promise<{meta: TimelineTracks, clocks: Map<number, RankClock>}>}
 */
export async function loadStacked(runId, ranks, signal) {
    const [cmp, ...metas] = await Promise.all([api.getRanks(runId, 1, signal), ...ranks.map((r) => api.getTimelineTracks(runId, r, signal))]);
    const deltas = rankDeltas(cmp.ranks || []);
    const straggler = cmp.straggler ? cmp.straggler.rank : null;
    /** @type {Map<number, RankClock>} */
    const clocks = new Map();
    for (const m of metas) {
        const delta = deltas.get(m.rank) || 0;
        clocks.set(m.rank, { rank: m.rank, delta, straggler: m.rank === straggler, t0: m.t0_us + delta, t1: m.t1_us + delta });
    }
    return { meta: mergeMeta(metas, clocks), clocks };
}

/**
 * The search sources (searchpager.js) of the ranks shown: each pages
 * /timeline/search of its rank, times moved onto the aligned clock.
 * @param {string} runId
 * @param {number[]} ranks
 * @param {(rank: number) => number} deltaOf
 * @param {string} q
 * @param {AbortSignal} signal
 * @returns {import('./searchpager.js').Source[]}
 */
export function searchSources(runId, ranks, deltaOf, q, signal) {
    return ranks.map((rank) => {
        const d = deltaOf(rank);
        return {
            async fetch(after) {
                const r = await api.searchTimeline(runId, { rank, q, limit: SEARCH_LIMIT, start: after === null ? null : pageStart(after - d) }, signal);
                return d ? { total: r.total, hits: r.hits.map((x) => ({ ...x, ts_us: x.ts_us + d })) } : r;
            },
        };
    });
}
