// @ts-check
/**
 * timeline/fetch.js — the Timeline tab's requests: /timeline/tracks once
 * per rank, /timeline for the window shown (and once coarse for the whole
 * run: the minimap), /timeline/slice for the details panel and
 * /timeline/aggregate for an area selection.
 *
 * Latest wins: each kind has one slot (an AbortController); a new request
 * aborts the one before, and an answer is used only while its controller
 * is still the slot's and the tab is mounted (state.destroyed). Aborts are
 * never reported. The whole-run fetch shares the tracks' slot, so a new
 * rank drops both.
 *
 * The window: a view change asks maybeFetch(); it fetches (debounced 60 ms,
 * at once with `now`) only when the lanes shown changed or the view leaves
 * the fetched window or its level of detail (T.needsRefetch), and not
 * while a fetch in flight already covers it (state.inflight). What to do
 * with the answers is the host's (views/timeline.js): it owns the DOM.
 *
 * A stacked view (state.stacked: several ranks on one timeline) asks each
 * rank for its part — tracks, windows, slices, area tables — and merges
 * the answers on the aligned clock (multirank.js); one slot still holds
 * the whole set of requests, so latest-wins is unchanged.
 */

import * as api from '../api.js';
import * as T from '../timescale.js';
import { urlTime } from '../params.js';
import { counterMap, unpackWindow } from './data.js';
import * as L from './layout.js';
import { mergeFlames } from './flame.js';
import { loadStacked, mergeAggregates, shiftSlice, shiftWindow } from './multirank.js';

/** @typedef {import('./state.js').TimelineState} TimelineState */
/** @typedef {import('../apitypes.js').TimelineTracks} TimelineTracks */
/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('./overlay.js').Selection} Selection */

/**
 * @typedef {object} FetchHost
 * @property {string} runId
 * @property {() => number | null} routeRank   the rank the route asks for (null: the server's choice)
 * @property {() => void} loading               a rank starts loading: say so, hide the plot
 * @property {(m: TimelineTracks) => void} gotMeta
 * @property {(e: unknown, what: string, retry: () => void) => void} failed  the tracks or the window failed
 * @property {() => number} miniWidth           the minimap's width, CSS px
 * @property {(busy: boolean) => void} busy     a window fetch is in flight (the plot says so to tests)
 * @property {() => void} windowArrived         state.items and counters are new: resolve, redraw
 * @property {() => void} invalidate            redraw
 */

/**
 * One request kind's slot: start() aborts the request before.
 * @typedef {{start: () => AbortController, current: () => AbortController | null, mine: (c: AbortController) => boolean, abort: () => void}} Slot
 * @returns {Slot}
 */
function slot() {
    /** @type {AbortController | null} */
    let ctrl = null;
    return {
        start() {
            if (ctrl) ctrl.abort();
            ctrl = new AbortController();
            return ctrl;
        },
        current: () => ctrl,
        mine: (c) => ctrl === c,
        abort() {
            if (ctrl) ctrl.abort();
        },
    };
}

/** @param {unknown} e */
const aborted = (e) => e instanceof api.ApiError && e.code === 'aborted';

/**
 * @param {TimelineState} st
 * @param {FetchHost} host
 */
export function createFetcher(st, host) {
    const tracks = slot();
    const win = slot();
    const slice = slot();
    const agg = slot();
    let fetchTimer = 0;
    /**
     * @param {AbortController} c
     * @param {Slot} s
     */
    const stale = (c, s) => st.destroyed || !s.mine(c);

    /** Loads the rank's tracks (a new rank, or a retry), then the whole-run overview. */
    async function load() {
        const mine = tracks.start();
        host.loading();
        try {
            if (st.stacked) {
                const { meta, clocks } = await loadStacked(host.runId, st.stacked, mine.signal);
                if (stale(mine, tracks)) return;
                st.clocks = clocks;
                host.gotMeta(meta);
                return;
            }
            st.clocks = new Map();
            const m = await api.getTimelineTracks(host.runId, host.routeRank(), mine.signal);
            if (stale(mine, tracks)) return;
            host.gotMeta(m);
        } catch (e) {
            if (stale(mine, tracks) || aborted(e)) return;
            host.failed(e, 'timeline', () => load());
        }
    }

    /** The coarse whole-run window (minimap, counter scales); its errors stay silent. */
    async function loadWhole() {
        const mine = tracks.current();
        if (!mine) return;
        try {
            const width = Math.max(200, Math.min(4000, Math.round(host.miniWidth() || 1000)));
            const w = await windowOf({ start: st.bounds.start, end: st.bounds.end, width }, null, mine.signal);
            if (stale(mine, tracks)) return;
            st.whole = w;
            host.invalidate();
        } catch {
            // the minimap stays empty; the lanes report errors
        }
    }

    /**
     * The rank of a track: its own on a stacked view, else the one shown.
     * @param {number} id
     */
    function rankOf(id) {
        const t = st.trackById.get(id);
        return t && t.rank !== undefined ? t.rank : st.rank;
    }

    /** @param {number} rank  its shift onto the aligned clock (0 when not stacked) */
    const deltaOf = (rank) => (st.clocks.get(rank) || { delta: 0 }).delta;

    /**
     * The ranks to ask for a window of the lanes `ids` (null: all lanes),
     * each with its own tracks parameter (null: all of its tracks).
     * @param {number[] | null} ids
     * @returns {{rank: number, tracks: string | null}[]}
     */
    function perRank(ids) {
        if (!st.stacked) return [{ rank: st.rank, tracks: ids ? ids.join(',') : null }];
        /** @type {Map<number, number[]>} */
        const mine = new Map(st.stacked.map((r) => [r, []]));
        /** @type {Map<number, number>} */
        const all = new Map(st.stacked.map((r) => [r, 0]));
        for (const t of st.trackById.values()) if (t.rank !== undefined) all.set(t.rank, (all.get(t.rank) || 0) + 1);
        for (const id of ids || [...st.trackById.keys()]) {
            const list = mine.get(rankOf(id));
            if (list) list.push(id);
        }
        return [...mine].filter(([, l]) => l.length).map(([rank, l]) => ({ rank, tracks: l.length === all.get(rank) ? null : l.join(',') }));
    }

    /**
     * One window of every rank shown, merged and on the aligned clock.
     * @param {{start: number, end: number, width: number}} fw
     * @param {number[] | null} ids  the lanes (null: all)
     * @param {AbortSignal} signal
     * @returns {Promise<{items: Map<number, import('./data.js').Items[]>, counters: Map<number, import('./data.js').CounterSeries>}>}
     */
    async function windowOf(fw, ids, signal) {
        const parts = await Promise.all(
            perRank(ids).map(async (p) => {
                const d = deltaOf(p.rank);
                const w = await api.getTimeline(host.runId, { rank: p.rank, start: urlTime(fw.start - d), end: urlTime(fw.end - d), width: fw.width, tracks: p.tracks }, signal);
                const out = { items: unpackWindow(w), counters: counterMap(w) };
                shiftWindow(out.items, out.counters, d);
                return out;
            }),
        );
        if (parts.length === 1) return parts[0];
        return { items: new Map(parts.flatMap((p) => [...p.items])), counters: new Map(parts.flatMap((p) => [...p.counters])) };
    }

    /** The tracks parameter of the lanes shown: "" when all are. */
    function tracksParam() {
        const ids = L.shownTrackIds(st.layout);
        return ids.length === st.trackById.size ? '' : ids.join(',');
    }

    /** @param {boolean} [now] */
    function maybeFetch(now) {
        if (!st.meta) return;
        const key = tracksParam();
        if (key === st.winTracksKey && !T.needsRefetch(st.win, st.view, st.bounds)) return;
        if (st.inflight && key === st.inflight.key && !T.needsRefetch(st.inflight.win, st.view, st.bounds)) return;
        clearTimeout(fetchTimer);
        fetchTimer = window.setTimeout(() => fetchWindow(key), now ? 0 : 60);
    }

    /** @param {string} key tracks parameter ("" = all) */
    async function fetchWindow(key) {
        const mine = win.start();
        const fw = T.fetchWindow(st.view, st.bounds);
        st.inflight = { win: fw, key };
        host.busy(true);
        try {
            const w = await windowOf(fw, key ? key.split(',').map(Number) : null, mine.signal);
            if (stale(mine, win)) return;
            st.win = fw;
            st.winTracksKey = key;
            st.items = w.items;
            st.counters = w.counters;
            host.windowArrived();
            maybeFetch();
        } catch (e) {
            if (stale(mine, win) || aborted(e)) return;
            host.failed(e, 'timeline window', () => {
                st.win = null;
                maybeFetch(true);
            });
        } finally {
            if (win.mine(mine)) {
                host.busy(false);
                st.inflight = null;
            }
        }
    }

    /**
     * The details of a selected slice.
     * @param {Selection} ref
     * @param {(d: TimelineSlice) => void} got
     * @param {(e: unknown) => void} failed
     */
    async function fetchSlice(ref, got, failed) {
        const mine = slice.start();
        try {
            const rank = rankOf(ref.track);
            const d = await api.getTimelineSlice(host.runId, { rank, track: ref.track, ts: urlTime(ref.ts - deltaOf(rank)), dur: urlTime(ref.dur), id: ref.id || null }, mine.signal);
            if (stale(mine, slice)) return;
            got(st.stacked ? shiftSlice(d, (id) => deltaOf(rankOf(id))) : d);
        } catch (e) {
            if (stale(mine, slice) || aborted(e)) return;
            failed(e);
        }
    }

    /**
     * The table of an area selection over the lanes shown.
     * @param {{start: number, end: number}} a
     * @param {(r: import('../apitypes.js').TimelineAggregate) => void} got
     * @param {(e: unknown) => void} failed
     */
    async function fetchAggregate(a, got, failed) {
        const mine = agg.start();
        try {
            const ids = L.shownTrackIds(st.layout);
            const parts = await Promise.all(
                perRank(ids.length === st.trackById.size ? null : ids).map((p) =>
                    api.getTimelineAggregate(host.runId, { rank: p.rank, start: urlTime(a.start - deltaOf(p.rank)), end: urlTime(a.end - deltaOf(p.rank)), tracks: p.tracks }, mine.signal),
                ),
            );
            if (stale(mine, agg)) return;
            got(parts.length === 1 ? parts[0] : mergeAggregates(parts));
        } catch (e) {
            if (stale(mine, agg) || aborted(e)) return;
            failed(e);
        }
    }

    /**
     * The flame graph (and lane and category times) of an area over the
     * lanes shown, or of one operator (its track, only what lies inside it).
     * @param {{start: number, end: number}} a
     * @param {{track: number} | null} op
     * @param {(f: import('../apitypes.js').TimelineFlame) => void} got
     * @param {(e: unknown) => void} failed
     */
    async function fetchFlame(a, op, got, failed) {
        const mine = agg.start();
        try {
            const ids = op ? [op.track] : L.shownTrackIds(st.layout);
            const parts = await Promise.all(
                perRank(!op && ids.length === st.trackById.size ? null : ids).map((p) =>
                    api.getTimelineFlame(
                        host.runId,
                        { rank: p.rank, start: urlTime(a.start - deltaOf(p.rank)), end: urlTime(a.end - deltaOf(p.rank)), tracks: p.tracks, contained: op ? 1 : null },
                        mine.signal,
                    ),
                ),
            );
            if (stale(mine, agg)) return;
            got(mergeFlames(parts));
        } catch (e) {
            if (stale(mine, agg) || aborted(e)) return;
            failed(e);
        }
    }

    return {
        load,
        loadWhole,
        fetchFlame,
        rankOf,
        deltaOf,
        windowOf,
        maybeFetch,
        fetchSlice,
        fetchAggregate,
        abortSlice: () => slice.abort(),
        abortAggregate: () => agg.abort(),
        destroy() {
            for (const s of [tracks, win, slice, agg]) s.abort();
            clearTimeout(fetchTimer);
        },
    };
}
