// @ts-check
/**
 * timeline/critpath.js — the Timeline tab's "Critical path" toggle: the
 * stored critical path of the rank's steps (server/derive/analyses/critical_path.c)
 * outlined on the overlay canvas, a legend of its categories, and a line in
 * the details panel of a selected slice that lies on it.
 *
 * Data: GET /api/runs/{id}/critpath?rank=&start=&end= (times integer ns on
 * the rank's trace clock; the timeline works in µs on the same clock) →
 * {"categories": [names], "segments": [[ts, dur, cat, track, slice], ...]}
 * in time order. Fetched for a window three times the view, again when the
 * view leaves it; only the latest answer is kept.
 *
 * Drawing: a segment on a slice (slice id != 0) is a box outlined in its
 * category's colour on the slice's row (found by id among the loaded items;
 * depth 0 when merged away at this zoom); a gap (slice 0: the wait between
 * a launch and its kernel, between two kernels, unrecorded host time) is a
 * dashed line across its track; consecutive segments on different rows are
 * joined by a thin line, so the path reads across threads and streams.
 * plot.dataset.cpSegments tells tests how many segments the last paint drew.
 *
 * URL: `cp=1` while on (router.js Route.cp): the view passes the route's
 * flag in (o.initial, set()) and writes it with its other state when
 * o.toggled() tells it the user switched.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { legend as legendList } from '../tabs.js';
import * as T from '../timescale.js';
import { HEAD_H, SLICE_H, laneTop, sliceY } from './layout.js';

/** @typedef {import('../timescale.js').Viewport} Viewport */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./data.js').Items} Items */
/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */

/**
 * A segment in the timeline's units.
 * @typedef {{ts: number, dur: number, cat: string, track: number, slice: number}} Segment
 */

/**
 * What the overlay needs to place segments; borrowed for the call.
 * @typedef {object} CritScene
 * @property {Viewport} view
 * @property {Layout} layout
 * @property {number} scrollY
 * @property {Map<number, TimelineTrack>} trackById
 * @property {Map<number, Items[]>} items
 * @property {number} height                plot height, CSS px
 */

/** Category → colour, in the order of the legend (names as the server sends them). */
export const CP_COLOURS = Object.freeze({
    // dark outlines that stand out on the slices' own light fills (colours.js)
    cpu: '#374151',
    dataloader: '#c026d3',
    gpu_compute: '#047857',
    communication: '#7c3aed',
    launch_overhead: '#dc2626',
    kernel_gap: '#f59e0b',
});

/** @type {Record<string, string>} */
const LABELS = {
    cpu: 'CPU',
    dataloader: 'Data loading',
    gpu_compute: 'GPU compute',
    communication: 'Communication',
    launch_overhead: 'Launch overhead',
    kernel_gap: 'Kernel gap',
};

/** The categories the server numbers from 0 when an answer lacks its own list. */
const DEFAULT_CATS = /** @type {(keyof typeof CP_COLOURS)[]} */ (Object.keys(CP_COLOURS));

/**
 * Segments from the API's rows ([ts_ns, dur_ns, cat, track, slice]).
 * Pure; exported for tests.
 * @param {{categories?: string[], segments?: number[][]}} r
 * @returns {Segment[]}
 */
export function parseSegments(r) {
    const cats = r.categories && r.categories.length ? r.categories : DEFAULT_CATS;
    return (r.segments || []).map((s) => ({ ts: s[0] / 1000, dur: s[1] / 1000, cat: cats[s[2]] || 'cpu', track: s[3], slice: s[4] }));
}

/**
 * The Critical-path toggle of one timeline.
 * @param {object} o
 * @param {string} o.runId
 * @param {() => number} o.rank
 * @param {() => HTMLElement} o.plot  the plot: gets data-cp-segments after each paint
 * @param {() => void} o.changed    repaint the overlay (data arrived, toggled)
 * @param {boolean} o.initial       on at start (the route's cp)
 * @param {() => void} o.toggled    the user switched it (write the URL)
 */
export function createCritPath(o) {
    let on = o.initial;
    /** @type {Segment[]} */
    let segs = [];
    /** @type {{start: number, end: number, rank: number} | null} */
    let got = null;
    /** @type {AbortController | null} */
    let ctrl = null;
    let timer = 0;
    let error = '';
    /** The last items map seen and slice id → depth in it. */
    /** @type {Map<number, Items[]> | null} */
    let depthsOf = null;
    /** @type {Map<number, number>} */
    let depthById = new Map();
    /** The selected slice and the details panel showing it. */
    /** @type {{id: number, box: HTMLElement} | null} */
    let picked = null;

    /**
     * New segments: the slice id → depth cache is rebuilt at the next paint
     * (a new items map rebuilds it too).
     * @param {Segment[]} v
     */
    function setSegs(v) {
        segs = v;
        depthsOf = null;
    }

    const TITLE = 'Outline the critical path of the steps (what bounded each step)';
    const button = h('button', { type: 'button', class: [C.btn, C.btnSm], 'aria-pressed': String(on), title: TITLE }, 'Critical path');
    const note = h('span', { class: [C.muted, C.nowrap] });
    const legend = h(
        'div',
        { class: C.toolbar, hidden: !on, 'aria-label': 'Critical path categories', dataset: { cpLegend: '1' } },
        h('strong', null, 'Critical path'),
        // the categories that are mostly gaps (drawn as dashed lines) get a line swatch
        legendList(
            DEFAULT_CATS.map((c) => ({
                label: LABELS[c],
                color: CP_COLOURS[c],
                shape: c === 'kernel_gap' || c === 'launch_overhead' ? 'line' : 'box',
            })),
        ),
        note,
    );

    /** @param {boolean} v */
    function set(v) {
        if (v === on) return;
        on = v;
        button.setAttribute('aria-pressed', String(on));
        legend.hidden = !on;
        if (!on) {
            if (ctrl) ctrl.abort();
            setSegs([]);
            got = null;
            delete o.plot().dataset.cpSegments;
        }
        refreshNote();
        o.changed();
    }
    button.addEventListener('click', () => {
        set(!on);
        o.toggled();
    });

    /**
     * Fetches the segments around the view when it is not covered.
     * @param {Viewport} view
     */
    function need(view) {
        if (!on) return;
        const r = o.rank();
        if (got && got.rank === r && view.start >= got.start && view.end <= got.end) return;
        clearTimeout(timer);
        timer = window.setTimeout(() => fetchAround(view, r), 80);
    }

    /**
     * @param {Viewport} view
     * @param {number} r
     */
    async function fetchAround(view, r) {
        const span = view.end - view.start;
        const want = { start: view.start - span, end: view.end + span, rank: r };
        if (ctrl) ctrl.abort();
        const mine = new AbortController();
        ctrl = mine;
        try {
            const ans = await api.getCritpath(o.runId, { rank: r, start: Math.floor(want.start * 1000), end: Math.ceil(want.end * 1000) }, mine.signal);
            if (ctrl !== mine || !on) return;
            setSegs(parseSegments(ans || {}));
            got = want;
            error = '';
        } catch (e) {
            if (ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            setSegs([]);
            got = want; // not again for this window
            error = e instanceof Error ? e.message : String(e);
        }
        replace(note, error ? `not available: ${error}` : segs.length ? '' : 'none in this window');
        refreshNote();
        o.changed();
    }

    /**
     * The row of a segment: its slice's depth among the loaded items (by
     * id, cached per items map); when the slice is merged away at this zoom,
     * the deepest merged item over the segment's middle (which holds it),
     * else the deepest item there, else 0.
     * @param {Map<number, Items[]>} items
     * @param {Segment} seg
     */
    function rowOf(items, seg) {
        const d = depthOf(items, seg.slice);
        if (d !== undefined) return d;
        const depths = items.get(seg.track) || [];
        const mid = seg.ts + seg.dur / 2;
        let any = -1;
        for (let k = depths.length - 1; k >= 0; k--) {
            const it = depths[k];
            const i = it ? T.hitIndex(it.ts, it.dur, mid, 0) : -1;
            if (!it || i < 0) continue;
            if (it.n[i] > 1) return k;
            if (any < 0) any = k;
        }
        return Math.max(0, any);
    }

    /**
     * @param {Map<number, Items[]>} items
     * @param {number} id
     */
    function depthOf(items, id) {
        if (depthsOf !== items) {
            depthsOf = items;
            depthById = new Map();
            const want = new Set(segs.map((s) => s.slice).filter(Boolean));
            for (const depths of items.values())
                depths.forEach((it, d) => {
                    if (it) for (const x of it.id) if (x && want.has(x)) depthById.set(x, d);
                });
        }
        return depthById.get(id);
    }

    /**
     * Outlines the segments in the view on the overlay canvas, in its lanes
     * part (below the ruler), over what overlay.js drew. Returns how many
     * were drawn.
     * @param {CanvasRenderingContext2D} g  in CSS pixels (fitCanvas)
     * @param {CritScene} s
     */
    function draw(g, s) {
        if (!on) return 0;
        const { view } = s;
        let n = 0;
        /** @type {{x: number, y: number} | null} */
        let prev = null;
        g.save();
        g.beginPath();
        g.rect(0, HEAD_H, view.width, Math.max(0, s.height - HEAD_H));
        g.clip();
        g.translate(0, HEAD_H);
        for (const seg of segs) {
            if (seg.ts + seg.dur < view.start || seg.ts > view.end) {
                prev = null;
                continue;
            }
            const lt = laneTop(s.layout, s.scrollY, seg.track, s.trackById);
            if (!lt) {
                prev = null;
                continue;
            }
            const col = CP_COLOURS[/** @type {keyof CP_COLOURS} */ (seg.cat)] || '#333';
            const x0 = T.timeToPx(view, seg.ts);
            const x1 = Math.max(x0 + 1, T.timeToPx(view, seg.ts + seg.dur));
            const depth = seg.slice && lt.lane ? rowOf(s.items, seg) : 0;
            const top = sliceY(lt, depth);
            const mid = top + SLICE_H / 2;
            if (prev && Math.abs(prev.y - mid) > 0.5) {
                g.strokeStyle = col;
                g.lineWidth = 1;
                g.setLineDash([]);
                g.beginPath();
                g.moveTo(prev.x, prev.y);
                g.lineTo(x0, mid);
                g.stroke();
            }
            g.strokeStyle = col;
            if (seg.slice) {
                g.lineWidth = 2;
                g.setLineDash([]);
                g.strokeRect(Math.round(x0) - 1, top - 1, Math.round(x1 - x0) + 2, SLICE_H + 1);
            } else {
                g.lineWidth = 2;
                g.setLineDash([4, 3]);
                g.beginPath();
                g.moveTo(x0, mid);
                g.lineTo(x1, mid);
                g.stroke();
            }
            prev = { x: x1, y: mid };
            n++;
        }
        g.restore();
        o.plot().dataset.cpSegments = String(n);
        return n;
    }

    /** The category of the path segments on slice id, or null. */
    /** @param {number} id */
    function categoryOf(id) {
        if (!on || !id) return null;
        /** @type {Map<string, number>} */
        const by = new Map();
        for (const s of segs) if (s.slice === id) by.set(s.cat, (by.get(s.cat) || 0) + s.dur);
        let best = null;
        let most = -1;
        for (const [c, d] of by) if (d > most) [best, most] = [c, d];
        return best;
    }

    /**
     * Notes the selected slice's details panel (after it was filled) so the
     * path line is added now and after every later fetch.
     * @param {number | null | undefined} id
     * @param {HTMLElement} box
     */
    function showFor(id, box) {
        picked = id ? { id, box } : null;
        refreshNote();
    }

    function refreshNote() {
        if (!picked) return;
        const old = picked.box.querySelector('[data-cp-note]');
        if (old) old.remove();
        const cat = categoryOf(picked.id);
        if (cat) picked.box.append(h('p', { class: C.muted, dataset: { cpNote: cat } }, `On the critical path (${cat})`));
    }

    return {
        button,
        legend,
        get on() {
            return on;
        },
        need,
        draw,
        showFor,
        set,
        /**
         * Ranks stacked or not: the path is one rank's, so while they are the
         * button is off and says why.
         * @param {boolean} v
         */
        stacked(v) {
            button.disabled = v;
            button.textContent = v ? 'Critical path: one rank only' : 'Critical path';
            button.title = v ? 'The critical path is worked out per rank: pick one rank in the Rank menu to outline it' : TITLE;
            legend.hidden = v || !on;
        },
        /** A new rank: what was fetched is another rank's. */
        reset() {
            if (ctrl) ctrl.abort();
            setSegs([]);
            got = null;
            picked = null;
        },
        destroy() {
            if (ctrl) ctrl.abort();
            clearTimeout(timer);
        },
    };
}
