// @ts-check
/**
 * timeline/draw.js — painting of the Timeline tab's main layer: the time
 * ruler with its steps strip, the lanes (slices, merged items, labels,
 * step bands, counters, group rows) and the minimap.
 *
 * Every function paints one canvas whole from a Scene, a read-only
 * snapshot of the view's state that the view builds for each frame
 * (views/timeline.js calls these at most once per animation frame, and
 * never on a mouse move: hover and selection are overlay.js's). Nothing
 * here keeps state between frames except caches: text widths (one font)
 * and the hatch pattern of merged items per canvas context.
 *
 * Counters: an area chart of the per-pixel max (then the last value until
 * the next point); a GPU busy series (unit
 * "ops") as a busy/idle band, idle moments in red however short.
 *
 * Lanes: slices of a depth are drawn left to right, down to the lane's
 * levels (deeper, folded depths are not drawn: a dashed edge marks them); a run of sub-pixel
 * items in one pixel column is drawn once. A slice wider than 28 px gets
 * its name (cut with "…" to fit), a merged item wider than 40 px its
 * count. With a search or an area-table highlight, the other slices are
 * dimmed (the highlight wins). Pinned lanes are drawn last, over the
 * scrolled ones, above a dark line. A collapsed group row shows what it
 * holds (layout.js groupSummary).
 *
 * Canvases are sized for devicePixelRatio by fitCanvas(); coordinates are
 * CSS pixels. Names reach the canvas through fillText, which never parses
 * markup.
 */

import { formatNumber } from '../format.js';
import * as T from '../timescale.js';
import { COL, lowerName, sliceColours } from './colours.js';
import { counterUnit, formatCounter } from './data.js';
import { HEAD_H, RULER_H, SLICE_H, STEPS_H, depthY, groupSummary } from './layout.js';

/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../apitypes.js').TimelineSearch} TimelineSearch */
/** @typedef {import('../timescale.js').Viewport} Viewport */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./layout.js').Row} Row */
/** @typedef {import('./data.js').Items} Items */
/** @typedef {import('./data.js').CounterSeries} CounterSeries */

/** Font of every canvas text. */
export const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/**
 * What one frame draws; borrowed for the call.
 * @typedef {object} Scene
 * @property {Viewport} view                 the window shown
 * @property {T.Span} bounds                 the run's span (the minimap's window)
 * @property {number} origin                 time shown as 0 (the rank's start)
 * @property {{name: string, start_us: number, end_us: number}[]} steps
 * @property {{id: number, name: string, unit: string}[]} counterDefs
 * @property {Map<number, TimelineTrack>} trackById
 * @property {Layout} layout
 * @property {number} scrollY
 * @property {Map<number, Items[]>} items     the fetched window's items
 * @property {Map<number, CounterSeries>} counters  the fetched window's counters
 * @property {T.FetchWindow | null} win      the fetched window
 * @property {{items: Map<number, Items[]>, counters: Map<number, CounterSeries>} | null} whole  whole-run data (minimap, counter scales)
 * @property {string | null} highlight       a name picked in the area table
 * @property {string} queryLower             the search, lower case ("" = none)
 * @property {TimelineSearch | null} hits    the search's matches
 */

/**
 * Sizes a canvas for its box and devicePixelRatio and clears it.
 * @param {HTMLCanvasElement} c
 * @param {number} w CSS px
 * @param {number} hgt CSS px
 * @returns {CanvasRenderingContext2D | null} its context, in CSS pixels
 */
export function fitCanvas(c, w, hgt) {
    const dpr = window.devicePixelRatio || 1;
    const pw = Math.max(1, Math.round(w * dpr));
    const ph = Math.max(1, Math.round(hgt * dpr));
    if (c.width !== pw || c.height !== ph) {
        c.width = pw;
        c.height = ph;
    }
    const g = c.getContext('2d');
    if (!g) return null;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    return g;
}

/**
 * fitCanvas(), then the background filled and the text style set: the
 * start of every opaque layer.
 * @param {HTMLCanvasElement} c
 * @param {number} w CSS px
 * @param {number} hgt CSS px
 * @returns {CanvasRenderingContext2D | null}
 */
function fitOpaque(c, w, hgt) {
    const g = fitCanvas(c, w, hgt);
    if (!g) return null;
    g.fillStyle = COL.bg;
    g.fillRect(0, 0, w, hgt);
    g.font = FONT;
    g.textBaseline = 'middle';
    return g;
}

/** @type {Map<string, number>} */
const widthCache = new Map();

/**
 * Width of a text in FONT (cached).
 * @param {CanvasRenderingContext2D} g
 * @param {string} s
 * @returns {number}
 */
export function textWidth(g, s) {
    let w = widthCache.get(s);
    if (w === undefined) {
        w = g.measureText(s).width;
        if (widthCache.size > 50000) widthCache.clear();
        widthCache.set(s, w);
    }
    return w;
}

/** @type {WeakMap<CanvasRenderingContext2D, CanvasPattern | null>} */
const hatches = new WeakMap();

/**
 * The diagonal-stripe pattern of merged items, made once per context.
 * @param {CanvasRenderingContext2D} g
 * @returns {CanvasPattern | null}
 */
function hatchOf(g) {
    if (hatches.has(g)) return hatches.get(g) || null;
    const c = document.createElement('canvas');
    c.width = 6;
    c.height = 6;
    const p = c.getContext('2d');
    /** @type {CanvasPattern | null} */
    let pat = null;
    if (p) {
        p.strokeStyle = 'rgba(255, 255, 255, 0.45)';
        p.lineWidth = 1.5;
        p.beginPath();
        p.moveTo(-1, 7);
        p.lineTo(7, -1);
        p.stroke();
        pat = g.createPattern(c, 'repeat');
    }
    hatches.set(g, pat);
    return pat;
}

/**
 * The ruler (ticks and offsets from the origin) and the steps strip below it.
 * @param {HTMLCanvasElement} canvas
 * @param {Scene} s
 */
export function drawRuler(canvas, s) {
    const { view } = s;
    const w = view.width;
    const g = fitOpaque(canvas, w, HEAD_H);
    if (!g) return;
    const r = T.rulerTicks(view, s.origin, 100);
    g.strokeStyle = COL.line;
    g.fillStyle = COL.muted;
    for (const t of r.ticks) {
        const x = Math.round(t.x) + 0.5;
        g.beginPath();
        g.moveTo(x, 0);
        g.lineTo(x, RULER_H);
        g.stroke();
        if (x + 4 + textWidth(g, t.label) < w) g.fillText(t.label, x + 4, RULER_H / 2);
    }
    s.steps.forEach((st, i) => {
        const a = T.timeToPx(view, st.start_us);
        const b = T.timeToPx(view, st.end_us);
        if (b < 0 || a > w) return;
        g.fillStyle = i % 2 ? 'rgba(31, 87, 195, 0.16)' : 'rgba(31, 87, 195, 0.08)';
        g.fillRect(a, RULER_H, b - a, STEPS_H);
        const label = st.name.replace(/^ProfilerStep#/, 'step ');
        const lx = Math.max(a, 0) + 4;
        if (Math.min(b, w) - lx > g.measureText(label).width + 4) {
            g.fillStyle = COL.text;
            g.fillText(label, lx, RULER_H + STEPS_H / 2);
        }
    });
    g.strokeStyle = COL.line;
    g.beginPath();
    g.moveTo(0, HEAD_H - 0.5);
    g.lineTo(w, HEAD_H - 0.5);
    g.moveTo(0, RULER_H - 0.5);
    g.lineTo(w, RULER_H - 0.5);
    g.stroke();
}

/**
 * The lanes: step bands, then the scrolled rows (clipped below the
 * pinned section), then the pinned rows.
 * @param {HTMLCanvasElement} canvas
 * @param {Scene} s
 * @param {number} hgt height of the lanes box (CSS px)
 */
export function drawLanes(canvas, s, hgt) {
    const { view, layout } = s;
    const w = view.width;
    const g = fitOpaque(canvas, w, hgt);
    if (!g) return;
    // step bands across every lane
    s.steps.forEach((st, i) => {
        const a = T.timeToPx(view, st.start_us);
        const b = T.timeToPx(view, st.end_us);
        if (b < 0 || a > w) return;
        if (i % 2 === 0) {
            g.fillStyle = COL.stepA;
            g.fillRect(a, 0, b - a, hgt);
        }
        g.fillStyle = COL.stepLine;
        g.fillRect(Math.round(a), 0, 1, hgt);
    });
    const pinnedH = layout.pinnedH;
    g.save();
    g.beginPath();
    g.rect(0, pinnedH, w, hgt - pinnedH);
    g.clip();
    for (const r of layout.scroll) {
        const top = r.y + pinnedH - s.scrollY;
        if (top + r.h < pinnedH || top > hgt) continue;
        drawRow(g, s, r, top);
    }
    g.restore();
    if (pinnedH) {
        g.fillStyle = COL.bg;
        g.fillRect(0, 0, w, pinnedH);
        for (const r of layout.pinned) drawRow(g, s, r, r.y);
        g.fillStyle = COL.muted;
        g.fillRect(0, pinnedH - 1, w, 1);
    }
}

/**
 * One row: a group bar, a counter chart or a lane of slices.
 * @param {CanvasRenderingContext2D} g
 * @param {Scene} s
 * @param {Row} r
 * @param {number} top screen y
 */
function drawRow(g, s, r, top) {
    const { view } = s;
    const w = view.width;
    if (r.type === 'group') {
        g.fillStyle = r.kind === 'rank' ? COL.line : COL.group;
        g.fillRect(0, top, w, r.h);
        if (r.straggler) {
            g.fillStyle = COL.flow;
            g.fillRect(0, top, 4, r.h);
        }
        g.fillStyle = COL.line;
        g.fillRect(0, top + r.h - 1, w, 1);
        if (r.collapsed) {
            g.fillStyle = COL.muted;
            g.fillText(groupSummary(r), 8, top + r.h / 2);
        }
        return;
    }
    if (r.type === 'counter' && r.counter) {
        drawCounter(g, s, r.counter.id, top, r.h);
        g.fillStyle = COL.line;
        g.fillRect(0, top + r.h - 1, w, 1);
        return;
    }
    const t = /** @type {TimelineTrack} */ (r.track);
    const depths = s.items.get(t.id) || [];
    const hatch = hatchOf(g);
    const { highlight, queryLower } = s;
    const k = view.width / (view.end - view.start);
    const levels = Math.min(depths.length, r.levels ?? depths.length);
    for (let d = 0; d < levels; d++) {
        const it = depths[d];
        if (!it) continue;
        const y = depthY(top, d);
        const i0 = T.firstEndingAfter(it.ts, it.dur, view.start);
        let lastX = -10;
        let lastEnd = -10;
        for (let i = i0; i < it.ts.length; i++) {
            const ts = it.ts[i];
            if (ts > view.end) break;
            let x = (ts - view.start) * k;
            let xw = it.dur[i] * k;
            if (x < -2) {
                xw += x + 2;
                x = -2;
            }
            if (x + xw > w + 2) xw = w + 2 - x;
            // a job log line (timeline/loglane.js, negative track id) is an instant: a 3 px marker
            if (xw < 1) xw = t.id < 0 ? 3 : 1;
            // a run of sub-pixel items in one pixel column is drawn once
            if (xw <= 1 && Math.floor(x) === lastX && lastEnd >= x) continue;
            lastX = Math.floor(x);
            lastEnd = x + xw;
            const name = it.name[i];
            const merged = it.n[i] > 1;
            const [c0, c1] = sliceColours(name, t.kind);
            // an area-table highlight wins over the search's
            const dim = highlight !== null ? name !== highlight : queryLower !== '' && !lowerName(name).includes(queryLower);
            g.globalAlpha = dim ? 0.25 : 1;
            g.fillStyle = merged ? c1 : c0;
            g.fillRect(x, y, xw, SLICE_H - 1);
            if (merged && xw >= 3 && hatch) {
                g.fillStyle = hatch;
                g.fillRect(x, y, xw, SLICE_H - 1);
            }
            if (xw > 28 && !merged) {
                const avail = xw - 6;
                let label = name;
                const full = textWidth(g, label);
                if (full > avail) {
                    const chars = Math.floor((label.length * avail) / full) - 1;
                    label = chars >= 2 ? label.slice(0, chars) + '…' : '';
                }
                if (label) {
                    g.fillStyle = COL.sliceText;
                    g.fillText(label, Math.max(x, 0) + 3, y + SLICE_H / 2);
                }
            } else if (merged && xw > 40) {
                g.fillStyle = '#ffffff';
                const label = `${formatNumber(it.n[i])} slices`;
                if (textWidth(g, label) < xw - 6) g.fillText(label, Math.max(x, 0) + 3, y + SLICE_H / 2);
            }
        }
    }
    g.globalAlpha = 1;
    if (r.levels !== undefined && t.max_depth + 1 > r.levels) {
        // folded depths: a dashed edge under the last one drawn says there is more
        g.strokeStyle = COL.muted;
        g.setLineDash([4, 3]);
        g.beginPath();
        g.moveTo(0, top + r.h - 2.5);
        g.lineTo(w, top + r.h - 2.5);
        g.stroke();
        g.setLineDash([]);
    }
    g.fillStyle = COL.line;
    g.fillRect(0, top + r.h - 1, w, 1);
}

/**
 * A counter as an area chart of its per-pixel max with a line of its last
 * value, scaled to its whole-run max when known (so zooming keeps the scale).
 * @param {CanvasRenderingContext2D} g
 * @param {Scene} s
 * @param {number} id
 * @param {number} top
 * @param {number} hgt
 */
function drawCounter(g, s, id, top, hgt) {
    const { view, win } = s;
    const w = view.width;
    const c = s.counters.get(id);
    if (!c || !c.ts.length) return;
    const ref = s.whole && s.whole.counters.get(id);
    const max = Math.max(1e-9, ...(ref && ref.max.length ? ref.max : c.max));
    const y = (/** @type {number} */ v) => top + hgt - 3 - (Math.max(0, v) / max) * (hgt - 8);
    const unit = counterUnit(s.counterDefs, id);
    if (unit === 'ops') {
        drawBusy(g, s, c, top, hgt, y);
        const label = `max ${formatCounter(max, unit)} · red: idle`;
        g.fillStyle = COL.veil;
        g.fillRect(2, top + 2, textWidth(g, label) + 4, 13);
        g.fillStyle = COL.muted;
        g.fillText(label, 4, top + 9);
        return;
    }
    // A point stands for one fetched bucket: its max holds across the
    // bucket's pixels only, then its last value until the next point (a
    // 1 µs copy before a long pause is a spike, not a plateau).
    const px = win ? Math.max(1, (w / (view.end - view.start)) * ((win.end - win.start) / win.width)) : 1;
    g.beginPath();
    g.moveTo(T.timeToPx(view, c.ts[0]), top + hgt - 3);
    for (let i = 0; i < c.ts.length; i++) {
        const x = T.timeToPx(view, c.ts[i]);
        const x2 = i + 1 < c.ts.length ? T.timeToPx(view, c.ts[i + 1]) : Math.min(w, T.timeToPx(view, win ? win.end : view.end));
        const xb = Math.min(x2, x + px);
        g.lineTo(x, y(c.max[i]));
        g.lineTo(xb, y(c.max[i]));
        g.lineTo(xb, y(c.last[i]));
        g.lineTo(x2, y(c.last[i]));
    }
    g.lineTo(T.timeToPx(view, win ? win.end : view.end), top + hgt - 3);
    g.closePath();
    g.fillStyle = COL.counter;
    g.fill();
    g.beginPath();
    for (let i = 0; i < c.ts.length; i++) {
        const x = T.timeToPx(view, c.ts[i]);
        if (i === 0) g.moveTo(x, y(c.last[i]));
        else g.lineTo(x, y(c.last[i - 1]));
        g.lineTo(x, y(c.last[i]));
    }
    g.strokeStyle = COL.counterLine;
    g.lineWidth = 1;
    g.stroke();
    const scaleLabel = formatCounter(max, unit);
    g.fillStyle = COL.veil;
    g.fillRect(2, top + 2, textWidth(g, scaleLabel) + 4, 13);
    g.fillStyle = COL.muted;
    g.fillText(scaleLabel, 4, top + 9);
}

/** Height of the idle strip under a GPU busy band. */
const IDLE_H = 4;

/**
 * A GPU busy series (unit "ops": GPU ops running, a step function) as a
 * busy/idle band: the ops running (per-pixel max) as a blue area, and in
 * red every stretch where the device is idle (last value 0: until the next
 * point) and every pixel holding an idle moment (min 0, however short:
 * at least a pixel wide), so gaps stay visible at any zoom.
 * @param {CanvasRenderingContext2D} g
 * @param {Scene} s
 * @param {CounterSeries} c
 * @param {number} top
 * @param {number} hgt
 * @param {(v: number) => number} y value to screen y
 */
function drawBusy(g, s, c, top, hgt, y) {
    const { view, win } = s;
    const w = view.width;
    const endX = Math.min(w, T.timeToPx(view, win ? win.end : view.end));
    // the width of one fetched bucket on screen (a point stands for one)
    const px = win ? Math.max(1, (w / (view.end - view.start)) * ((win.end - win.start) / win.width)) : 1;
    const bottom = top + hgt - 3;
    for (let i = 0; i < c.ts.length; i++) {
        const x = T.timeToPx(view, c.ts[i]);
        const x2 = i + 1 < c.ts.length ? T.timeToPx(view, c.ts[i + 1]) : endX;
        if (x2 < 0 || x > w) continue;
        if (c.max[i] > 0) {
            // busy for the point's pixel, and on until the next point
            // unless it ends idle
            g.fillStyle = COL.busy;
            const yy = y(c.max[i]);
            const bw = c.last[i] > 0 ? Math.max(x2 - x, 1) : Math.max(1, Math.min(px, x2 - x));
            g.fillRect(x, yy, bw, bottom - IDLE_H - yy);
        }
        // a red strip under every pixel idle at some moment; a pale band
        // over the stretches idle all through (until the next point)
        const colW = Math.max(1, Math.min(px, x2 - x));
        if (c.min[i] <= 0) {
            g.fillStyle = COL.idleMark;
            g.fillRect(x, bottom - IDLE_H, c.last[i] <= 0 ? Math.max(x2 - x, 1) : colW, IDLE_H);
        }
        if (c.max[i] <= 0 || c.last[i] <= 0) {
            const a = c.max[i] <= 0 ? x : x + colW;
            g.fillStyle = COL.idle;
            if (x2 > a) g.fillRect(a, top + 1, x2 - a, bottom - IDLE_H - top - 1);
        }
    }
}

/**
 * The minimap: the whole run's steps, its depth-0 items (CPU above, GPU
 * below), the search's matches as ticks and the window shown.
 * @param {HTMLCanvasElement} canvas
 * @param {Scene} s
 * @param {number} w CSS px
 * @param {number} hgt CSS px
 */
export function drawMini(canvas, s, w, hgt) {
    const g = fitOpaque(canvas, w, hgt);
    if (!g) return;
    const mv = { start: s.bounds.start, end: s.bounds.end, width: w };
    s.steps.forEach((st, i) => {
        const a = T.timeToPx(mv, st.start_us);
        const b = T.timeToPx(mv, st.end_us);
        g.fillStyle = i % 2 ? 'rgba(31, 87, 195, 0.10)' : 'rgba(31, 87, 195, 0.04)';
        g.fillRect(a, 0, b - a, hgt);
    });
    if (s.whole) {
        const half = (hgt - 4) / 2;
        for (const [id, depths] of s.whole.items) {
            const t = s.trackById.get(id);
            const it = depths[0];
            if (!t || !it) continue;
            const y = t.kind === 'gpu' ? 2 + half : 2;
            g.fillStyle = t.kind === 'gpu' ? 'rgba(78, 121, 167, 0.55)' : 'rgba(89, 161, 79, 0.35)';
            for (let i = 0; i < it.ts.length; i++) {
                const x = T.timeToPx(mv, it.ts[i]);
                g.fillRect(x, y, Math.max(1, it.dur[i] * (w / (mv.end - mv.start))), half);
            }
        }
    }
    if (s.hits) {
        g.fillStyle = COL.hit;
        for (const hit of s.hits.hits) g.fillRect(Math.round(T.timeToPx(mv, hit.ts_us)), 0, 1, 5);
    }
    const a = T.timeToPx(mv, s.view.start);
    const b = T.timeToPx(mv, s.view.end);
    g.fillStyle = COL.view;
    g.fillRect(a, 0, Math.max(2, b - a), hgt);
    g.strokeStyle = COL.sel;
    g.strokeRect(Math.round(a) + 0.5, 0.5, Math.max(2, Math.round(b - a) - 1), hgt - 1);
}
