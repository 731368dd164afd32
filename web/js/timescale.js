// @ts-check
/**
 * timescale.js — pure time↔pixel maths of the Timeline tab (no DOM;
 * tested by tests/web/timescale.test.mjs).
 *
 * A Viewport is the time window shown ({start, end}, µs on the trace
 * clock) over a plot `width` CSS pixels wide. Every operation returns a new
 * viewport: zoom about a point (that point stays under the cursor), pan,
 * clamp to the run's bounds, fit a slice with some margin. Ruler ticks pick
 * a 1/2/5 step and the unit (ns, µs, ms, s) that reads best at that step.
 *
 * Level of detail: the view fetches a window three screens wide, with
 * buckets of a power-of-two width no wider than a screen pixel (the zoom
 * "level"). It fetches again only when the level changes or the view
 * leaves the fetched window (needsRefetch), so panning within a window
 * and small zooms cost no request.
 */

/**
 * @typedef {object} Viewport
 * @property {number} start  µs, trace clock
 * @property {number} end    µs (> start)
 * @property {number} width  plot width in CSS pixels (> 0)
 */

/** @typedef {{start: number, end: number}} Span */

/**
 * @typedef {object} FetchWindow
 * @property {number} start  µs
 * @property {number} end    µs
 * @property {number} width  buckets asked for (the API's `width`)
 * @property {number} level  log2 of the bucket width in µs
 */

/** Narrowest window: 10 ns per screen (far below any kernel's length). */
export const MIN_SPAN_US = 0.01;

/** Most buckets asked for in one fetch (three screens of a very wide monitor). */
export const MAX_FETCH_WIDTH = 12000;

/**
 * Pixel of time t.
 * @param {Viewport} v
 * @param {number} t µs
 * @returns {number}
 */
export function timeToPx(v, t) {
    return ((t - v.start) * v.width) / (v.end - v.start);
}

/**
 * Time at pixel px.
 * @param {Viewport} v
 * @param {number} px
 * @returns {number}
 */
export function pxToTime(v, px) {
    return v.start + (px * (v.end - v.start)) / v.width;
}

/**
 * µs per CSS pixel.
 * @param {Viewport} v
 * @returns {number}
 */
export function usPerPx(v) {
    return (v.end - v.start) / v.width;
}

/**
 * Keeps v inside bounds: never wider than the bounds, never narrower than
 * MIN_SPAN_US, shifted (not shrunk) back in when it sticks out.
 * @param {Viewport} v
 * @param {Span} bounds
 * @returns {Viewport}
 */
export function clampView(v, bounds) {
    const full = Math.max(MIN_SPAN_US, bounds.end - bounds.start);
    let span = Math.min(full, Math.max(MIN_SPAN_US, v.end - v.start));
    if (!Number.isFinite(span)) span = full;
    let start = Number.isFinite(v.start) ? v.start : bounds.start;
    if (start < bounds.start) start = bounds.start;
    if (start + span > bounds.start + full) start = bounds.start + full - span;
    return { start, end: start + span, width: v.width };
}

/**
 * Zooms by `factor` (< 1 zooms in) about time t, which stays at the same
 * pixel; then clamps to bounds.
 * @param {Viewport} v
 * @param {number} factor
 * @param {number} t µs
 * @param {Span} bounds
 * @returns {Viewport}
 */
export function zoomAt(v, factor, t, bounds) {
    const span = v.end - v.start;
    const full = Math.max(MIN_SPAN_US, bounds.end - bounds.start);
    const next = Math.min(full, Math.max(MIN_SPAN_US, span * factor));
    const frac = span > 0 ? (t - v.start) / span : 0.5;
    const start = t - frac * next;
    return clampView({ start, end: start + next, width: v.width }, bounds);
}

/**
 * Moves the window by dt µs (positive = later), clamped to bounds.
 * @param {Viewport} v
 * @param {number} dt
 * @param {Span} bounds
 * @returns {Viewport}
 */
export function panBy(v, dt, bounds) {
    return clampView({ start: v.start + dt, end: v.end + dt, width: v.width }, bounds);
}

/**
 * A window showing [a, b] with `margin` of its length on each side (a
 * zero-length span gets a window of MIN_SPAN_US × 100 around it).
 * @param {number} a µs
 * @param {number} b µs
 * @param {number} width
 * @param {Span} bounds
 * @param {number} [margin] fraction of b − a (default 0.15)
 * @returns {Viewport}
 */
export function fitSpan(a, b, width, bounds, margin = 0.15) {
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const len = Math.max(hi - lo, MIN_SPAN_US * 100);
    const mid = (lo + hi) / 2;
    const half = (len * (1 + 2 * margin)) / 2;
    return clampView({ start: mid - half, end: mid + half, width }, bounds);
}

/**
 * The same zoom, centred on t (a search hit, a flow's end) if t is not
 * already well inside the window.
 * @param {Viewport} v
 * @param {number} t
 * @param {Span} bounds
 * @returns {Viewport}
 */
export function revealTime(v, t, bounds) {
    const span = v.end - v.start;
    if (t >= v.start + span * 0.05 && t <= v.end - span * 0.05) return v;
    return clampView({ start: t - span / 2, end: t + span / 2, width: v.width }, bounds);
}

// --- ruler --------------------------------------------------------------------

/** Time units for ruler labels: name and size in µs. */
const UNITS = /** @type {ReadonlyArray<readonly [string, number]>} */ ([
    ['ns', 1e-3],
    ['µs', 1],
    ['ms', 1e3],
    ['s', 1e6],
]);

/**
 * @typedef {object} Tick
 * @property {number} t      µs on the trace clock
 * @property {number} x      pixel
 * @property {string} label  offset from the origin ("1.5 ms")
 */

/**
 * Ruler ticks at least minPx apart, labelled relative to origin (the
 * rank's start): a 1, 2 or 5 × 10^k step, in the largest unit in which the
 * step is at least 0.1 (500 µs steps read "0.5 ms"), with the decimals
 * that step needs.
 * @param {Viewport} v
 * @param {number} origin µs printed as 0
 * @param {number} [minPx] smallest gap between ticks (default 90)
 * @returns {{step: number, unit: string, ticks: Tick[]}}
 */
export function rulerTicks(v, origin, minPx = 90) {
    const step = tickStep((usPerPx(v) * minPx) || 1);
    let unit = UNITS[0];
    for (const u of UNITS) if (step >= u[1] * 0.0999) unit = u;
    const size = unit[1];
    const decimals = Math.max(0, Math.min(3, Math.ceil(-Math.log10(step / size) - 1e-9)));
    const rel0 = v.start - origin;
    const first = Math.ceil(rel0 / step - 1e-9);
    /** @type {Tick[]} */
    const ticks = [];
    for (let i = first; ticks.length < 2000; i++) {
        const rel = i * step;
        const t = rel + origin;
        if (t > v.end + step * 1e-9) break;
        let val = Number((rel / size).toFixed(decimals));
        if (Object.is(val, -0)) val = 0;
        ticks.push({ t, x: timeToPx(v, t), label: val.toFixed(decimals) + ' ' + unit[0] });
    }
    return { step, unit: unit[0], ticks };
}

/**
 * Smallest 1/2/5 × 10^k that is ≥ raw.
 * @param {number} raw > 0
 * @returns {number}
 */
export function tickStep(raw) {
    if (!(raw > 0) || !Number.isFinite(raw)) return 1;
    const pow = 10 ** Math.floor(Math.log10(raw));
    const f = raw / pow;
    const m = f <= 1 + 1e-9 ? 1 : f <= 2 + 1e-9 ? 2 : f <= 5 + 1e-9 ? 5 : 10;
    return Number((m * pow).toPrecision(12));
}

/**
 * A duration in the unit that reads best: 0.25 -> "250 ns", 1500 -> "1.50 ms".
 * @param {number} us
 * @returns {string}
 */
export function formatSpan(us) {
    const a = Math.abs(us);
    let unit = UNITS[0];
    for (const u of UNITS) if (a >= u[1]) unit = u;
    const v = us / unit[1];
    const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
    return v.toFixed(digits) + ' ' + unit[0];
}

// --- level of detail ------------------------------------------------------------

/**
 * The zoom level of a viewport: log2 of the widest power-of-two bucket
 * (µs) that is no wider than one pixel.
 * @param {Viewport} v
 * @returns {number}
 */
export function zoomLevel(v) {
    return Math.floor(Math.log2(Math.max(usPerPx(v), 1e-9)));
}

/**
 * The window to fetch for viewport v: three screens wide (one on each
 * side), clamped to bounds, with buckets of the level's width.
 * @param {Viewport} v
 * @param {Span} bounds
 * @returns {FetchWindow}
 */
export function fetchWindow(v, bounds) {
    const span = v.end - v.start;
    const start = Math.max(bounds.start, v.start - span);
    const end = Math.min(bounds.end, v.end + span);
    let level = zoomLevel(v);
    let bucket = 2 ** level;
    let width = Math.ceil((end - start) / bucket);
    while (width > MAX_FETCH_WIDTH) {
        level++;
        bucket *= 2;
        width = Math.ceil((end - start) / bucket);
    }
    return { start, end, width: Math.max(1, width), level };
}

/**
 * Whether the view needs another fetch: none yet, the zoom level changed,
 * or the view left the fetched window.
 * @param {FetchWindow | null} win
 * @param {Viewport} v
 * @param {Span} bounds
 * @returns {boolean}
 */
export function needsRefetch(win, v, bounds) {
    if (!win) return true;
    if (fetchWindow(v, bounds).level !== win.level) return true;
    const eps = (v.end - v.start) * 1e-9;
    return v.start < win.start - eps || v.end > win.end + eps;
}

// --- hit testing -------------------------------------------------------------------

/**
 * Index of the item under time t in one depth's columns (ascending ts,
 * non-overlapping), within tol µs either side; -1 when none.
 * @param {ArrayLike<number>} ts
 * @param {ArrayLike<number>} dur
 * @param {number} t
 * @param {number} tol
 * @returns {number}
 */
export function hitIndex(ts, dur, t, tol) {
    let lo = 0;
    let hi = ts.length - 1;
    let last = -1;
    while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (ts[mid] <= t + tol) {
            last = mid;
            lo = mid + 1;
        } else hi = mid - 1;
    }
    /** @type {number} */
    let best = -1;
    let bestDist = Infinity;
    for (let i = last; i >= 0 && i > last - 4; i--) {
        const a = ts[i];
        const b = ts[i] + dur[i];
        const d = t < a ? a - t : t > b ? t - b : 0;
        if (d <= tol && d < bestDist) {
            best = i;
            bestDist = d;
        }
        if (b < t - tol && i < last) break;
    }
    return best;
}

/**
 * First index whose item ends at or after t (items ascending and
 * non-overlapping, so their ends ascend too); ts.length when none.
 * @param {ArrayLike<number>} ts
 * @param {ArrayLike<number>} dur
 * @param {number} t
 * @returns {number}
 */
export function firstEndingAfter(ts, dur, t) {
    let lo = 0;
    let hi = ts.length;
    while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ts[mid] + dur[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
