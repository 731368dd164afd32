// @ts-check
/**
 * timeline/data.js — the Timeline tab's data in memory: /timeline answers
 * unpacked into items per track and depth, lookups in them, and the text
 * of values (no DOM; tested by tests/web/timeline_data.test.mjs).
 *
 * The API sends each depth as columns (ts, dur, name index, n, id) with a
 * string table; unpackWindow() resolves the names once per fetch so the
 * painter and the hit test read plain arrays. An item with n > 1 is a
 * merge of n slices in one pixel bucket (id 0, named after the longest);
 * n = 1 is a real slice. Items of a depth are sorted by ts and do not
 * overlap, which the binary searches of timescale.js rely on.
 *
 * Times are µs on the trace clock. Two times closer than NEAR_US (2 ns,
 * below the API's three decimals) name the same instant.
 */

import { DASH } from '../format.js';
import * as T from '../timescale.js';

/** @typedef {import('../apitypes.js').TimelineWindow} TimelineWindow */

/**
 * A depth's items with names resolved.
 * @typedef {{ts: number[], dur: number[], name: string[], n: number[], id: number[]}} Items
 */

/**
 * A counter's samples in a window: per pixel the first sample's time and min/max/last.
 * @typedef {{ts: number[], min: number[], max: number[], last: number[]}} CounterSeries
 */

/** Times closer than this (µs) are the same instant. */
export const NEAR_US = 0.002;

/**
 * Items per track and depth, names resolved from the string table.
 * Depths the answer leaves out are holes in the array.
 * @param {TimelineWindow} w
 * @returns {Map<number, Items[]>} owned by the caller; ts/dur borrow w's arrays
 */
export function unpackWindow(w) {
    const strings = w.strings || [];
    /** @type {Map<number, Items[]>} */
    const out = new Map();
    for (const t of w.tracks || []) {
        /** @type {Items[]} */
        const depths = [];
        for (const d of t.depths || []) {
            depths[d.depth] = {
                ts: d.ts,
                dur: d.dur,
                name: d.name.map((i) => (typeof strings[i] === 'string' ? strings[i] : '')),
                n: d.n || d.ts.map(() => 1),
                id: d.id || d.ts.map(() => 0),
            };
        }
        out.set(t.id, depths);
    }
    return out;
}

/**
 * The counters of a window by id.
 * @param {TimelineWindow} w
 * @returns {Map<number, CounterSeries>} borrows w's arrays
 */
export function counterMap(w) {
    const m = new Map();
    for (const c of w.counters || []) m.set(c.id, c);
    return m;
}

/**
 * The first item (shallowest depth) of a track that starts at ts: the end
 * of a flow, a slice named by a link. With `single`, merged items are
 * skipped.
 * @param {Items[] | undefined} depths a track's items
 * @param {number} ts µs
 * @param {boolean} single only real slices (n = 1)
 * @returns {{depth: number, i: number} | null}
 */
export function itemStartingAt(depths, ts, single) {
    const ds = depths || [];
    for (let d = 0; d < ds.length; d++) {
        const it = ds[d];
        if (!it) continue;
        const i = T.hitIndex(it.ts, it.dur, ts, 0);
        if (i >= 0 && Math.abs(it.ts[i] - ts) < NEAR_US && (!single || it.n[i] === 1)) return { depth: d, i };
    }
    return null;
}

/**
 * Text of an argument value (objects as JSON, never markup).
 * @param {unknown} v
 * @returns {string}
 */
export function argText(v) {
    if (v === null || v === undefined) return DASH;
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
    if (typeof v === 'string') return v;
    return JSON.stringify(v);
}

/**
 * A counter value with its unit: bytes get binary prefixes, op counts stay whole.
 * @param {number} v
 * @param {string} unit
 * @returns {string}
 */
export function formatCounter(v, unit) {
    if (!Number.isFinite(v)) return DASH;
    if (unit === 'bytes' || unit === 'B') {
        const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
        let x = Math.abs(v);
        let i = 0;
        while (x >= 1024 && i < units.length - 1) {
            x /= 1024;
            i++;
        }
        return `${(Math.sign(v) * x).toFixed(i ? 1 : 0)} ${units[i]}`;
    }
    if (unit === 'ops' && Number.isInteger(v)) return `${v} ${v === 1 ? 'op' : 'ops'}`;
    if (Number.isInteger(v)) return unit ? `${v} ${unit}` : String(v); // counts (queue depth)
    const s = Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
    return unit ? `${s} ${unit}` : s;
}

/**
 * The unit of a counter by id ("" when unknown).
 * @param {{id: number, unit: string}[] | null | undefined} counters
 * @param {number} id
 * @returns {string}
 */
export function counterUnit(counters, id) {
    return ((counters || []).find((m) => m.id === id) || { unit: '' }).unit;
}

/**
 * A counter's value at time t in a window's series: the last sample at or
 * before t (the value in force), with the min and max of that sample's
 * pixel; null before the first sample or without samples.
 * @param {CounterSeries | undefined} c
 * @param {number} t µs
 * @returns {{ts: number, value: number, min: number, max: number} | null}
 */
export function counterAt(c, t) {
    if (!c || !c.ts.length || t < c.ts[0]) return null;
    let lo = 0;
    let hi = c.ts.length - 1;
    while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (c.ts[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return { ts: c.ts[lo], value: c.last[lo], min: c.min[lo], max: c.max[lo] };
}
