// @ts-check
/**
 * memchart.js — the Memory tab's chart: allocated and reserved bytes of
 * one device over time, on a canvas, with step boundaries and the peak.
 *
 * Canvas discipline (docs/style.md §19): setData() and resizes only call
 * invalidate(), which draws once in the next animation frame; the canvas
 * is sized for devicePixelRatio and redrawn when it changes; layers are
 * drawn in a fixed order (grid and axes, step bands, reserved, allocated,
 * peak marker). Hover (a line and a tooltip) and the drag selection are
 * DOM elements over the canvas, so moving the mouse never repaints. A drag
 * wider than a few pixels reports the selected time window to
 * opts.onZoom(start, end) (µs on the trace clock); the view puts it in the
 * URL and fetches the curve again for that window.
 *
 * The maths (scales, ticks, hit-testing) is charts.js; times on the axis
 * and in the tooltip are relative to opts.origin (the rank's start).
 */

import { byteTicks, dragWindow, linearScale, niceTicks, sampleAt, timeTickLabels } from './charts.js';
import { C } from './classes.js';
import { h, onDprChange, replace } from './dom.js';
import { formatBytes, formatOffset } from './format.js';
import { onThemeChange, themedColours } from './theme.js';

/** @typedef {import('./charts.js').Scale} Scale */

/**
 * @typedef {object} MemChartData
 * @property {number} start_us  window shown (trace clock)
 * @property {number} end_us
 * @property {{ts_us: number[], allocated: number[], reserved: number[]}} curve
 * @property {{bytes: number, ts_us: number} | null} peak
 * @property {{name: string, start_us: number, end_us: number}[]} steps
 * @property {number} origin  time printed as 0 (µs, trace clock)
 */

/** Plot margins in CSS pixels. */
const M = { left: 72, right: 14, top: 20, bottom: 26 };

/** Light colours; the dark theme overrides them with the stylesheet's
 * --tb-mem-* properties (the canvas cannot read CSS classes). */
const LIGHT = Object.freeze({
    grid: '#e6e9ee',
    axis: '#5c636d',
    band: 'rgba(31, 87, 195, 0.045)',
    stepLine: 'rgba(92, 99, 109, 0.45)',
    reserved: '#8d99a8',
    reservedFill: 'rgba(141, 153, 168, 0.16)',
    allocated: '#1f57c3',
    allocatedFill: 'rgba(31, 87, 195, 0.16)',
    peak: '#b0261c',
});
let COL = LIGHT;

/** The legend's swatches: the same properties, for the DOM. */
export const CHART_COLORS = Object.freeze({
    allocated: `var(--tb-mem-allocated, ${LIGHT.allocated})`,
    reserved: `var(--tb-mem-reserved, ${LIGHT.reserved})`,
    peak: `var(--tb-mem-peak, ${LIGHT.peak})`,
    step: `var(--tb-mem-step-line, ${LIGHT.stepLine})`,
});

/**
 * @param {{label: string, onZoom: (start: number, end: number) => void}} opts
 * @returns {{el: HTMLElement, setData: (d: MemChartData | null) => void, plotWidth: () => number, destroy: () => void}}
 */
export function createMemoryChart(opts) {
    const canvas = h('canvas', { class: C.memCanvas, 'aria-hidden': 'true' });
    const sel = h('div', { class: C.memSel, hidden: true });
    const hover = h('div', { class: C.memHover, hidden: true });
    const tip = h('div', { class: C.memTip, hidden: true, role: 'status' });
    const desc = h('p', { class: C.srOnly });
    const el = h('div', { class: C.memChart, role: 'img', 'aria-label': opts.label }, canvas, sel, hover, tip, desc);

    /** @type {MemChartData | null} */
    let data = null;
    let frame = 0;
    let dpr = window.devicePixelRatio || 1;
    /** @type {Scale | null} */
    let xs = null;
    /** @type {number | null} */
    let dragFrom = null;

    function invalidate() {
        if (!frame) frame = requestAnimationFrame(draw);
    }

    function plotBox() {
        const w = el.clientWidth;
        const ht = el.clientHeight;
        return { w, h: ht, x0: M.left, x1: Math.max(M.left + 1, w - M.right), y0: M.top, y1: Math.max(M.top + 1, ht - M.bottom) };
    }

    function draw() {
        frame = 0;
        const box = plotBox();
        dpr = window.devicePixelRatio || 1;
        const pw = Math.max(1, Math.round(box.w * dpr));
        const ph = Math.max(1, Math.round(box.h * dpr));
        if (canvas.width !== pw || canvas.height !== ph) {
            canvas.width = pw;
            canvas.height = ph;
        }
        const ctx = canvas.getContext('2d');
        if (!ctx) return;
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        ctx.clearRect(0, 0, box.w, box.h);
        if (!data || box.w < 50) return;
        COL = themedColours(LIGHT, '--tb-mem-');
        const d = data;
        const x = linearScale(d.start_us, d.end_us, box.x0, box.x1);
        xs = x;
        const c = d.curve;
        const top = Math.max(1, ...c.reserved, ...c.allocated, d.peak ? d.peak.bytes : 0);
        const yt = byteTicks(top * 1.05, 4);
        const y = linearScale(0, yt.ticks[yt.ticks.length - 1], box.y1, box.y0);
        ctx.font = '11px system-ui, sans-serif';
        ctx.lineWidth = 1;

        // layer 1: grid and axes
        ctx.strokeStyle = COL.grid;
        ctx.fillStyle = COL.axis;
        ctx.textAlign = 'right';
        ctx.textBaseline = 'middle';
        for (const t of yt.ticks) {
            const py = Math.round(y.map(t)) + 0.5;
            ctx.beginPath();
            ctx.moveTo(box.x0, py);
            ctx.lineTo(box.x1, py);
            ctx.stroke();
            ctx.fillText(formatBytes(t), box.x0 - 6, py);
        }
        const rel = niceTicks(d.start_us - d.origin, d.end_us - d.origin, Math.max(2, Math.floor((box.x1 - box.x0) / 110)));
        const labels = timeTickLabels(rel.ticks, rel.step);
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        rel.ticks.forEach((t, i) => {
            const px = x.map(t + d.origin);
            if (px < box.x0 - 0.5 || px > box.x1 + 0.5) return;
            ctx.beginPath();
            ctx.moveTo(Math.round(px) + 0.5, box.y1);
            ctx.lineTo(Math.round(px) + 0.5, box.y1 + 4);
            ctx.strokeStyle = COL.axis;
            ctx.stroke();
            ctx.fillText(labels[i], px, box.y1 + 7);
        });

        ctx.save();
        ctx.beginPath();
        ctx.rect(box.x0, 0, box.x1 - box.x0, box.h);
        ctx.clip();

        // layer 2: steps (alternate bands, boundaries, names)
        ctx.textAlign = 'left';
        ctx.textBaseline = 'top';
        d.steps.forEach((s, i) => {
            const a = x.map(s.start_us);
            const b = x.map(s.end_us);
            if (b < box.x0 || a > box.x1) return;
            if (i % 2 === 0) {
                ctx.fillStyle = COL.band;
                ctx.fillRect(a, box.y0, b - a, box.y1 - box.y0);
            }
            ctx.strokeStyle = COL.stepLine;
            ctx.setLineDash([3, 3]);
            for (const px of [a, b]) {
                ctx.beginPath();
                ctx.moveTo(Math.round(px) + 0.5, box.y0 - 14);
                ctx.lineTo(Math.round(px) + 0.5, box.y1);
                ctx.stroke();
            }
            ctx.setLineDash([]);
            const label = s.name.replace(/^ProfilerStep/, 'step ');
            if (b - a > ctx.measureText(label).width + 8) {
                ctx.fillStyle = COL.axis;
                ctx.fillText(label, Math.max(a, box.x0) + 4, 4);
            }
        });

        // layers 3 and 4: reserved, then allocated, as step curves
        curve(ctx, x, y, c.ts_us, c.reserved, d.end_us, COL.reserved, COL.reservedFill, box.y1);
        curve(ctx, x, y, c.ts_us, c.allocated, d.end_us, COL.allocated, COL.allocatedFill, box.y1);

        // layer 5: the peak
        if (d.peak && d.peak.ts_us >= d.start_us && d.peak.ts_us <= d.end_us) {
            const px = x.map(d.peak.ts_us);
            const py = y.map(d.peak.bytes);
            ctx.fillStyle = COL.peak;
            ctx.beginPath();
            ctx.arc(px, py, 4, 0, Math.PI * 2);
            ctx.fill();
            const text = 'peak ' + formatBytes(d.peak.bytes);
            const tw = ctx.measureText(text).width;
            ctx.textBaseline = 'bottom';
            ctx.textAlign = px + tw + 10 > box.x1 ? 'right' : 'left';
            ctx.fillText(text, px + (ctx.textAlign === 'right' ? -7 : 7), py - 3);
        }
        ctx.restore();
    }

    /** @param {PointerEvent | MouseEvent} ev */
    function localX(ev) {
        const r = el.getBoundingClientRect();
        return ev.clientX - r.left;
    }

    /** @param {number} px */
    function showHover(px) {
        const box = plotBox();
        if (!data || !xs || px < box.x0 || px > box.x1) {
            hover.hidden = true;
            tip.hidden = true;
            return;
        }
        const d = data;
        const t = xs.invert(px);
        const c = d.curve;
        const i = sampleAt(c.ts_us, t);
        const known = i >= 0 && c.ts_us[i] <= t;
        const step = d.steps.find((s) => t >= s.start_us && t < s.end_us);
        hover.hidden = false;
        hover.style.transform = `translateX(${Math.round(px)}px)`;
        replace(
            tip,
            h('div', null, h('strong', null, formatOffset(t, d.origin))),
            step ? h('div', { class: C.muted }, step.name) : null,
            h('div', null, 'allocated ', h('strong', null, known ? formatBytes(c.allocated[i]) : '—')),
            h('div', null, 'reserved ', h('strong', null, known ? formatBytes(c.reserved[i]) : '—')),
        );
        tip.hidden = false;
        const right = px + 14 + tip.offsetWidth < box.w;
        tip.style.transform = `translateX(${Math.round(right ? px + 12 : px - 12 - tip.offsetWidth)}px)`;
    }

    /**
     * @param {number} a
     * @param {number} b
     */
    function showSelection(a, b) {
        const box = plotBox();
        const lo = Math.max(box.x0, Math.min(a, b));
        const hi = Math.min(box.x1, Math.max(a, b));
        sel.hidden = false;
        sel.style.transform = `translateX(${Math.round(lo)}px)`;
        sel.style.width = Math.max(1, Math.round(hi - lo)) + 'px';
    }

    el.addEventListener('pointermove', (ev) => {
        const px = localX(ev);
        if (dragFrom !== null) showSelection(dragFrom, px);
        showHover(px);
    });
    el.addEventListener('pointerleave', () => {
        hover.hidden = true;
        tip.hidden = true;
    });
    el.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || !data) return;
        const px = localX(ev);
        const box = plotBox();
        if (px < box.x0 || px > box.x1) return;
        dragFrom = px;
        el.setPointerCapture(ev.pointerId);
        ev.preventDefault();
    });
    el.addEventListener('pointerup', (ev) => {
        if (dragFrom === null) return;
        const from = dragFrom;
        dragFrom = null;
        sel.hidden = true;
        const w = xs ? dragWindow(from, localX(ev), xs) : null;
        if (w) opts.onZoom(w.start, w.end);
    });
    el.addEventListener('pointercancel', () => {
        dragFrom = null;
        sel.hidden = true;
    });
    el.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape' && dragFrom !== null) {
            dragFrom = null;
            sel.hidden = true;
        }
    });

    const ro = new ResizeObserver(() => invalidate());
    ro.observe(el);
    const stopDpr = onDprChange(invalidate);
    const stopTheme = onThemeChange(invalidate);

    return {
        el,
        setData(d) {
            data = d;
            el.dataset.points = d ? String(d.curve.ts_us.length) : '0';
            replace(
                desc,
                d && d.peak
                    ? `Peak ${formatBytes(d.peak.bytes)} allocated at ${formatOffset(d.peak.ts_us, d.origin)}; ${d.curve.ts_us.length} samples from ${formatOffset(d.start_us, d.origin)} to ${formatOffset(d.end_us, d.origin)}.`
                    : 'No memory samples in this window.',
            );
            invalidate();
        },
        plotWidth: () => Math.max(0, plotBox().x1 - plotBox().x0),
        destroy() {
            ro.disconnect();
            stopDpr();
            stopTheme();
            if (frame) cancelAnimationFrame(frame);
        },
    };
}

/**
 * Draws one series as a step curve (each value holds until the next
 * sample, the last one until `end`), filled down to the axis.
 * @param {CanvasRenderingContext2D} ctx
 * @param {Scale} x
 * @param {Scale} y
 * @param {number[]} ts
 * @param {number[]} v
 * @param {number} end
 * @param {string} stroke
 * @param {string} fill
 * @param {number} base pixel row of 0 bytes
 */
function curve(ctx, x, y, ts, v, end, stroke, fill, base) {
    const n = Math.min(ts.length, v.length);
    if (!n) return;
    ctx.beginPath();
    ctx.moveTo(x.map(ts[0]), y.map(v[0]));
    for (let i = 1; i < n; i++) {
        const px = x.map(ts[i]);
        ctx.lineTo(px, y.map(v[i - 1]));
        ctx.lineTo(px, y.map(v[i]));
    }
    const xe = Math.max(x.map(end), x.map(ts[n - 1]));
    ctx.lineTo(xe, y.map(v[n - 1]));
    ctx.strokeStyle = stroke;
    ctx.lineWidth = 1.5;
    ctx.stroke();
    ctx.lineTo(xe, base);
    ctx.lineTo(x.map(ts[0]), base);
    ctx.closePath();
    ctx.fillStyle = fill;
    ctx.fill();
    ctx.lineWidth = 1;
}
