// @ts-check
/**
 * timeline/state.js — everything the Timeline tab holds while mounted, in
 * one plain object. The view (views/timeline.js) builds the DOM and draws;
 * the controllers read and write this object: fetch.js (requests in flight,
 * latest wins), events.js (pointer, wheel, keys, minimap) and urlsync.js
 * (state ↔ route). Nothing here touches the DOM or the network.
 *
 * Invariants: `view` is always clamped to `bounds` (T.clampView); `items`
 * and `counters` are the answer for `win` and the lanes `winTracksKey`; a
 * new rank (setMeta) drops the window, the whole-run data and the
 * selection. `sel` is what the URL names (track, start, duration), filled
 * in with depth, name and id once `details` arrive.
 */

import * as L from './layout.js';

/** @typedef {import('../apitypes.js').TimelineTracks} TimelineTracks */
/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('../timescale.js').Viewport} Viewport */
/** @typedef {import('../timescale.js').Span} Span */
/** @typedef {import('../timescale.js').FetchWindow} FetchWindow */
/** @typedef {import('./layout.js').Hit} Hit */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./data.js').Items} Items */
/** @typedef {import('./data.js').CounterSeries} CounterSeries */
/** @typedef {import('./overlay.js').Selection} Selection */

/**
 * What the view last wrote to the URL, as strings (so its own changes are
 * not applied again when the route comes back).
 * @typedef {{start: string, end: string, sel: string, pins: string, q: string, cp: boolean}} Written
 */

/**
 * A pointer drag on the plot: where it began (px, µs), what it does so far,
 * the view and scroll it began with, and whether it began with Shift or on
 * the ruler (both select an area).
 * @typedef {{x: number, y: number, t: number, mode: 'press' | 'pan' | 'area', view: Viewport, scroll: number, shift: boolean, ruler: boolean, id: number}} Drag
 */

/**
 * @typedef {object} TimelineState
 * @property {boolean} destroyed   the tab was unmounted: late answers and frames are dropped
 * @property {number} rank         the rank shown (the route's, or the one the server chose)
 * @property {boolean} firstLoad   the URL's selection is still to be restored (first load only)
 * @property {number[] | null} stacked  the ranks on one timeline (&ranks=), null: one rank
 * @property {Map<number, import('./multirank.js').RankClock>} clocks  a stacked view's ranks and their shifts (empty otherwise)
 *
 * The rank's tracks and time span (/timeline/tracks):
 * @property {TimelineTracks | null} meta  null until loaded, and while a new rank loads
 * @property {Span} bounds         the rank's time span, µs (at least T.MIN_SPAN_US)
 * @property {number} origin       µs printed as 0 (the rank's start)
 * @property {Map<number, TimelineTrack>} trackById
 *
 * What is shown:
 * @property {Viewport} view       the window shown (µs) and the plot width (CSS px)
 * @property {Layout} layout       lanes and their y (layout.js)
 * @property {number} scrollY      lanes scrolled, CSS px
 * @property {Set<string>} collapsed  keys of the collapsed process/GPU groups
 * @property {boolean} showEmpty   lanes without slices are shown
 * @property {Set<number>} pins    pinned track ids (the URL's &pins=)
 * @property {string | null} highlight  slice name the area panel highlights
 *
 * The fetched data (/timeline):
 * @property {FetchWindow | null} win  the window the lanes' items cover (null: none yet)
 * @property {string} winTracksKey the tracks parameter of that fetch ("" = all)
 * @property {Map<number, Items[]>} items  per track, per depth
 * @property {Map<number, CounterSeries>} counters
 * @property {{items: Map<number, Items[]>, counters: Map<number, CounterSeries>} | null} whole
 *                                 whole-run data for the minimap and the counters' scales
 * @property {{win: FetchWindow, key: string} | null} inflight  the window being fetched, if any
 *                                 (a view it covers needs no other fetch)
 *
 * Pointer, selection and area:
 * @property {Hit | null} hover    the item under the mouse
 * @property {Selection | null} sel  the selected slice
 * @property {TimelineSlice | null} details  its /timeline/slice answer (the details panel)
 * @property {{start: number, end: number} | null} area  the area selection, µs
 * @property {{track: number, ts: number} | null} pendingTarget  a flow end to select once its window is loaded
 * @property {number | null} mouseX  pointer x over the plot (keys zoom about it), CSS px
 * @property {Drag | null} drag    the drag in progress on the plot
 * @property {boolean} miniDrag    a drag in progress on the minimap
 *
 * URL sync:
 * @property {Written} written     what the view last wrote to the URL
 * @property {number} urlTimer     debounce timer of the next URL write
 *
 * Drawing (one paint per animation frame):
 * @property {number} frame        the requested animation frame, 0 = none
 * @property {boolean} needMain    the main layer (ruler, lanes, minimap) is stale
 * @property {boolean} needOver    the overlay (hover, selection, flows, area) is stale
 * @property {number} lanePaints   lanes painted so far (tests: hovering must not repaint)
 * @property {boolean} undrawn     a window answer arrived that the lanes do not show yet
 */

/**
 * The state of a freshly mounted Timeline tab.
 * @param {import('../router.js').TabRoute<typeof import('../views/timeline.js').params>} route the route it mounts on
 * @param {number} rank
 * @param {string} query the search box's initial query
 * @returns {TimelineState}
 */
export function createState(route, rank, query) {
    return {
        destroyed: false,
        rank,
        firstLoad: true,
        stacked: null,
        clocks: new Map(),
        meta: null,
        bounds: { start: 0, end: 1 },
        origin: 0,
        trackById: new Map(),
        view: { start: 0, end: 1, width: 1000 },
        layout: L.EMPTY_LAYOUT,
        scrollY: 0,
        collapsed: new Set(),
        showEmpty: false,
        pins: new Set(route.pins),
        highlight: null,
        win: null,
        winTracksKey: '',
        items: new Map(),
        counters: new Map(),
        whole: null,
        inflight: null,
        hover: null,
        sel: null,
        details: null,
        area: null,
        pendingTarget: null,
        mouseX: null,
        drag: null,
        miniDrag: false,
        written: { start: '', end: '', sel: '', pins: '', q: query, cp: route.cp },
        urlTimer: 0,
        frame: 0,
        needMain: false,
        needOver: false,
        lanePaints: 0,
        undrawn: false,
    };
}
