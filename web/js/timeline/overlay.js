// @ts-check
/**
 * timeline/overlay.js — the Timeline tab's overlay layer: the hovered
 * item's outline and tooltip, the selected slice's outline, the arrows of
 * its flows, and the area selection with its length, all on a canvas laid
 * over the ruler and lanes.
 *
 * The overlay is repainted alone on mouse moves and selection changes, so
 * those never repaint slices (draw.js); views/timeline.js decides when.
 * Like draw.js, drawOverlay() paints the whole canvas from a read-only
 * snapshot (OverlayScene) and keeps nothing between frames.
 *
 * A selection whose lane is in a collapsed group is outlined on the
 * group's row; a flow whose other end is in a collapsed group points at
 * that row. The tooltip is DOM (a positioned div), so slice names reach
 * the page only as text.
 */

import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { formatMicros, formatNumber, formatOffset } from '../format.js';
import * as T from '../timescale.js';
import { COL } from './colours.js';
import { formatCounter, itemStartingAt } from './data.js';
import { FONT, fitCanvas } from './draw.js';
import { HEAD_H, RULER_H, SLICE_H, depthY, laneTop, sliceY } from './layout.js';

/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('../timescale.js').Viewport} Viewport */
/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./layout.js').Hit} Hit */
/** @typedef {import('./data.js').Items} Items */

/**
 * The selected slice as the view and the URL know it.
 * @typedef {{track: number, ts: number, dur: number, id?: number, depth?: number, name?: string}} Selection
 */

/**
 * What the overlay draws; borrowed for the call.
 * @typedef {object} OverlayScene
 * @property {Viewport} view
 * @property {Layout} layout
 * @property {number} scrollY
 * @property {Map<number, TimelineTrack>} trackById
 * @property {Map<number, Items[]>} items
 * @property {Hit | null} hover
 * @property {Selection | null} sel
 * @property {TimelineSlice | null} details   the selection's details, once loaded (its flows)
 * @property {{start: number, end: number} | null} area
 * @property {number} lanesH                 height of the lanes box
 */

/**
 * Paints the overlay canvas (the plot: header and lanes).
 * @param {HTMLCanvasElement} canvas
 * @param {OverlayScene} o
 * @param {number} hgt plot height, CSS px
 */
export function drawOverlay(canvas, o, hgt) {
    const { view } = o;
    const w = view.width;
    const g = fitCanvas(canvas, w, hgt);
    if (!g) return;
    g.save();
    g.beginPath();
    g.rect(0, 0, w, hgt);
    g.clip();
    if (o.area) drawArea(g, view, o.area, hgt);
    // lanes part: clip below the header
    g.beginPath();
    g.rect(0, HEAD_H, w, hgt - HEAD_H);
    g.clip();
    g.translate(0, HEAD_H);
    const k = view.width / (view.end - view.start);
    const hover = o.hover;
    if (hover) {
        const it = (o.items.get(hover.track) || [])[hover.depth];
        const lt = laneTop(o.layout, o.scrollY, hover.track, o.trackById);
        if (it && lt && lt.lane) {
            const x = T.timeToPx(view, it.ts[hover.i]);
            const xw = Math.max(1, it.dur[hover.i] * k);
            g.strokeStyle = COL.hover;
            g.lineWidth = 1;
            g.strokeRect(Math.round(x) - 0.5, depthY(lt.top, hover.depth) - 0.5, Math.round(xw) + 1, SLICE_H);
        }
    }
    const sel = o.sel;
    if (sel) {
        const lt = laneTop(o.layout, o.scrollY, sel.track, o.trackById);
        if (lt) {
            const depth = sel.depth ?? 0;
            const x = T.timeToPx(view, sel.ts);
            const xw = Math.max(2, sel.dur * k);
            const y = sliceY(lt, depth);
            g.strokeStyle = COL.sel;
            g.lineWidth = 2;
            g.strokeRect(Math.round(x) - 1, y - 1, Math.round(xw) + 2, SLICE_H + 1);
            g.lineWidth = 1;
            if (o.details) drawFlows(g, o, o.details, x, y + SLICE_H / 2);
        }
    }
    g.restore();
}

/**
 * The area selection: a band over everything, its edges, and its length
 * in a label on the ruler.
 * @param {CanvasRenderingContext2D} g
 * @param {Viewport} view
 * @param {{start: number, end: number}} area
 * @param {number} hgt
 */
function drawArea(g, view, area, hgt) {
    const w = view.width;
    const a = T.timeToPx(view, area.start);
    const b = T.timeToPx(view, area.end);
    g.fillStyle = COL.area;
    g.fillRect(a, 0, b - a, hgt);
    g.fillStyle = COL.areaEdge;
    g.fillRect(Math.round(a), 0, 1, hgt);
    g.fillRect(Math.round(b), 0, 1, hgt);
    g.font = 'bold ' + FONT;
    g.textBaseline = 'middle';
    const label = T.formatSpan(area.end - area.start);
    const lw = g.measureText(label).width + 8;
    const lx = Math.max(0, Math.min(w - lw, (a + b) / 2 - lw / 2));
    g.fillStyle = COL.areaEdge;
    g.fillRect(lx, 3, lw, RULER_H - 6);
    g.fillStyle = '#ffffff';
    g.fillText(label, lx + 4, RULER_H / 2);
}

/**
 * Arrows from the selection to the other end of its flows.
 * @param {CanvasRenderingContext2D} g
 * @param {OverlayScene} o
 * @param {TimelineSlice} d
 * @param {number} x0
 * @param {number} y0
 */
function drawFlows(g, o, d, x0, y0) {
    const { view } = o;
    const lanesH = o.lanesH;
    for (const f of d.flows || []) {
        const lt = laneTop(o.layout, o.scrollY, f.track, o.trackById);
        if (!lt) continue;
        const x1 = T.timeToPx(view, f.ts_us);
        const at = lt.lane ? itemStartingAt(o.items.get(f.track), f.ts_us, false) : null;
        const depth = at ? at.depth : 0;
        const y1 = Math.max(2, Math.min(lanesH - 2, lt.lane ? sliceY(lt, depth) + SLICE_H / 2 : lt.top + lt.h / 2));
        const [ax, ay, bx, by] = f.dir === 'out' ? [x0, y0, x1, y1] : [x1, y1, x0, y0];
        g.strokeStyle = COL.flow;
        g.fillStyle = COL.flow;
        g.lineWidth = 1.5;
        g.beginPath();
        g.moveTo(ax, ay);
        const mx = (ax + bx) / 2;
        g.bezierCurveTo(mx, ay, mx, by, bx, by);
        g.stroke();
        const ang = Math.atan2(by - ay, bx - mx || 1);
        g.beginPath();
        g.moveTo(bx, by);
        g.lineTo(bx - 8 * Math.cos(ang - 0.4), by - 8 * Math.sin(ang - 0.4));
        g.lineTo(bx - 8 * Math.cos(ang + 0.4), by - 8 * Math.sin(ang + 0.4));
        g.closePath();
        g.fill();
        g.lineWidth = 1;
    }
}

/**
 * Shows the tooltip of a hovered item next to the mouse (kept inside the
 * plot), or hides it.
 * @param {HTMLElement} tip
 * @param {HTMLElement} plot
 * @param {Hit | null} hit
 * @param {Map<number, Items[]>} items
 * @param {number} origin time shown as 0
 */
export function showTip(tip, plot, hit, items, origin) {
    const it = hit && (items.get(hit.track) || [])[hit.depth];
    if (!hit || !it) {
        tip.hidden = true;
        return;
    }
    const n = it.n[hit.i];
    replace(
        tip,
        h('div', { class: C.tlTipName }, it.name[hit.i]),
        n > 1 ? h('div', null, h('strong', null, `${formatNumber(n)} slices`), ' merged at this zoom (the longest is named); click to zoom in') : null,
        h('div', { class: C.muted }, `${formatOffset(it.ts[hit.i], origin)} · ${n > 1 ? 'span ' : ''}${formatMicros(it.dur[hit.i])}`),
    );
    tip.hidden = false;
    const pw = plot.clientWidth;
    const tw = tip.offsetWidth;
    const left = hit.x + 14 + tw < pw ? hit.x + 14 : Math.max(0, hit.x - 14 - tw);
    tip.style.transform = `translate(${Math.round(left)}px, ${Math.round(hit.y + 14)}px)`;
}

/**
 * The tooltip of a counter lane: its name and its value at the pointer
 * (hidden when there is none).
 * @param {HTMLElement} tip
 * @param {HTMLElement} plot
 * @param {{x: number, y: number}} p  the pointer, plot coordinates
 * @param {{name: string, unit: string} | null} def
 * @param {{ts: number, value: number, min: number, max: number} | null} v
 * @param {number} origin
 */
export function showCounterTip(tip, plot, p, def, v, origin) {
    if (!def || !v) {
        tip.hidden = true;
        return;
    }
    replace(
        tip,
        h('div', { class: C.tlTipName }, def.name),
        h('div', null, h('strong', null, formatCounter(v.value, def.unit)), v.min !== v.max ? ` (${formatCounter(v.min, def.unit)} – ${formatCounter(v.max, def.unit)} in this pixel)` : ''),
        h('div', { class: C.muted }, `at ${formatOffset(v.ts, origin)}`),
    );
    tip.hidden = false;
    const tw = tip.offsetWidth;
    const left = p.x + 14 + tw < plot.clientWidth ? p.x + 14 : Math.max(0, p.x - 14 - tw);
    tip.style.transform = `translate(${Math.round(left)}px, ${Math.round(p.y + 14)}px)`;
}
