// @ts-check
/**
 * timeline/area.js — the Timeline tab's area selection controller: what
 * the "Area selection" panel shows for state.area (aggregate.js draws it)
 * and how it is grouped: by name (/timeline/aggregate), by lane, by
 * category or as a flame graph (/timeline/flame), or the flame graph of
 * one operator (the details' "Flame graph" button: its span on its lane,
 * only what lies inside it). The grouping (&agroup=) and the area
 * (&area=start:end) are view state, written to the URL by urlsync.js.
 *
 * Requests go through the fetcher's area slot (latest wins).
 */

import { urlTime } from '../params.js';
import * as T from '../timescale.js';
import { showAggregate, showAreaEmpty, showAreaError, showAreaLoading, showFlame } from './aggregate.js';

/** @typedef {import('./state.js').TimelineState} TimelineState */
/** @typedef {import('./aggregate.js').AreaGroup} AreaGroup */

/**
 * @typedef {object} AreaHost
 * @property {HTMLElement} box
 * @property {ReturnType<typeof import('./fetch.js').createFetcher>} fetcher
 * @property {(v: import('../timescale.js').Viewport) => void} setView
 * @property {() => void} invalidate
 * @property {(track: number) => string} trackName
 * @property {() => void} writeUrl
 */

/**
 * @param {TimelineState} st
 * @param {AreaGroup} initial  the URL's grouping
 * @param {AreaHost} host
 */
export function createArea(st, initial, host) {
    const { box, fetcher } = host;
    /** @type {AreaGroup} */
    let group = initial;
    /** @type {{track: number, name: string} | null} */
    let op = null;

    /** The actions of the panel for the area `a`. */
    function actions(/** @type {{start: number, end: number}} */ a) {
        return {
            origin: st.origin,
            highlight: st.highlight,
            counterDefs: st.meta ? st.meta.counters : [],
            group,
            operator: op ? op.name : undefined,
            trackName: host.trackName,
            /** @param {string} name */
            toggle: (name) => {
                st.highlight = st.highlight === name ? null : name;
                host.invalidate();
                return st.highlight;
            },
            /** @param {AreaGroup} g */
            regroup: (g) => {
                group = g;
                host.writeUrl();
                load();
            },
            zoom: () => host.setView(T.fitSpan(a.start, a.end, st.view.width, st.bounds, 0.02)),
            clear: () => clear(),
        };
    }

    /** Loads and shows the panel for state.area as grouped now. */
    function load() {
        if (!st.area) return;
        const a = st.area;
        showAreaLoading(box);
        const failed = (/** @type {unknown} */ e) => showAreaError(box, e);
        if (group === 'name' && !op) fetcher.fetchAggregate(a, (r) => showAggregate(box, a, r, actions(a)), failed);
        else fetcher.fetchFlame(a, op, (f) => showFlame(box, a, f, actions(a)), failed);
    }

    function clear() {
        st.area = null;
        st.highlight = null;
        op = null;
        fetcher.abortAggregate();
        showAreaEmpty(box);
        host.invalidate();
        host.writeUrl();
    }

    return {
        load,
        clear,
        /** A new area drawn by the user: the lanes' view of it, not an operator's. */
        drawn() {
            op = null;
            load();
            host.writeUrl();
        },
        /**
         * The flame graph of one slice: its span, its lane.
         * @param {{track: number, ts: number, dur: number, name?: string}} s
         */
        operator(s) {
            op = { track: s.track, name: s.name || 'this slice' };
            st.area = { start: s.ts, end: s.ts + s.dur };
            host.invalidate();
            load();
        },
        get group() {
            return group;
        },
        /**
         * The URL's grouping (back/forward): true when it changed.
         * @param {AreaGroup} g
         */
        setGroup(g) {
            if (g === group) return false;
            group = g;
            return true;
        },
        /** Whether the panel shows one operator (its area is not the URL's). */
        get isOperator() {
            return op !== null;
        },
    };
}

/**
 * The URL's area ("start:end", µs), or null.
 * @param {string} s
 * @returns {{start: number, end: number} | null}
 */
export function parseArea(s) {
    const m = /^([0-9.]+):([0-9.]+)$/.exec(s || '');
    if (!m) return null;
    const start = Number(m[1]);
    const end = Number(m[2]);
    return Number.isFinite(start) && Number.isFinite(end) && end > start ? { start, end } : null;
}

/**
 * An area as the URL writes it.
 * @param {{start: number, end: number} | null} a
 * @returns {string}
 */
export function areaParam(a) {
    return a ? `${urlTime(a.start)}:${urlTime(a.end)}` : '';
}
