// @ts-check
/**
 * charts.js — pure chart maths shared by the run page's charts: linear
 * scales (value <-> pixel), "nice" axis ticks for durations and byte sizes,
 * tick labels, stacking of step breakdowns, nearest-sample lookup and the
 * drag-to-zoom window. No DOM; tested by tests/web/charts.test.mjs.
 *
 * The breakdown categories (the analysis API's keys) are described here
 * once, with the colour every chart and legend uses for them.
 */

/**
 * @typedef {object} CategoryInfo
 * @property {string} label
 * @property {string} color  fill colour (charts and legend swatches)
 * @property {string} help   what the category counts (tooltips)
 */

/** @type {Readonly<Record<string, CategoryInfo>>} */
export const CATEGORY_INFO = Object.freeze({
    kernel: { label: 'Kernel', color: '#4e79a7', help: 'GPU compute kernels running (communication kernels excluded).' },
    memcpy: { label: 'Memcpy', color: '#f28e2b', help: 'GPU memory copies (host↔device, device↔device) with no kernel running.' },
    memset: { label: 'Memset', color: '#edc948', help: 'GPU memsets with no kernel or copy running.' },
    communication: {
        label: 'Communication',
        color: '#b07aa1',
        help: 'Collective communication (NCCL/Gloo kernels and host-side collectives) not hidden behind compute.',
    },
    runtime: { label: 'CUDA runtime', color: '#e15759', help: 'Host time in CUDA runtime calls (launches, synchronizations) while the GPU is idle.' },
    dataloader: { label: 'DataLoader', color: '#76b7b2', help: 'Host time fetching the next batch while the GPU is idle.' },
    cpu_exec: { label: 'CPU exec', color: '#59a14f', help: 'Host time in operators (Python, ATen) while the GPU is idle.' },
    other: { label: 'Other', color: '#bab0ac', help: 'Step time none of the above covers (idle gaps, unprofiled work).' },
});

/**
 * Category metadata, with a neutral fallback for keys added to the API later.
 * @param {string} key
 * @returns {CategoryInfo}
 */
export function categoryInfo(key) {
    return CATEGORY_INFO[key] || { label: key, color: '#8c8c8c', help: key };
}

/**
 * @typedef {object} Scale
 * @property {(v: number) => number} map     value -> pixel
 * @property {(px: number) => number} invert pixel -> value
 * @property {[number, number]} domain
 * @property {[number, number]} range
 */

/**
 * Linear scale from [d0, d1] onto [r0, r1]. A zero-width domain maps
 * everything onto r0 (and inverts to d0) rather than dividing by zero.
 * @param {number} d0
 * @param {number} d1
 * @param {number} r0
 * @param {number} r1
 * @returns {Scale}
 */
export function linearScale(d0, d1, r0, r1) {
    const dd = d1 - d0;
    const k = dd === 0 ? 0 : (r1 - r0) / dd;
    return {
        map: (v) => r0 + (v - d0) * k,
        invert: (px) => (k === 0 ? d0 : d0 + (px - r0) / k),
        domain: [d0, d1],
        range: [r0, r1],
    };
}

/**
 * Step between ticks: 1, 2 or 5 times a power of ten, giving about
 * `count` intervals over `span`.
 * @param {number} span > 0
 * @param {number} count
 * @returns {number}
 */
export function niceStep(span, count) {
    if (!(span > 0) || !Number.isFinite(span)) return 1;
    const raw = span / Math.max(1, count);
    const pow = 10 ** Math.floor(Math.log10(raw));
    const f = raw / pow;
    const m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return m * pow;
}

/**
 * Ticks covering [min, max] at a nice step: the first tick is <= min and
 * the last >= max, so the axis can use [ticks[0], ticks[last]] as its domain.
 * An empty range gets one step above it.
 * @param {number} min
 * @param {number} max
 * @param {number} [count] about how many intervals (default 5)
 * @returns {{ticks: number[], step: number}}
 */
export function niceTicks(min, max, count = 5) {
    if (!Number.isFinite(min) || !Number.isFinite(max)) return { ticks: [0, 1], step: 1 };
    if (max < min) [min, max] = [max, min];
    const step = niceStep(max - min || Math.abs(max) || 1, count);
    const lo = Math.floor(min / step + 1e-9) * step;
    let hi = Math.ceil(max / step - 1e-9) * step;
    if (hi <= lo) hi = lo + step;
    /** @type {number[]} */
    const ticks = [];
    for (let i = 0, v = lo; v <= hi + step * 1e-9 && i < 1000; i++, v = lo + i * step) ticks.push(cleanFloat(v, step));
    return { ticks, step };
}

/**
 * v rounded to the precision its step allows (0.30000000000000004 -> 0.3).
 * @param {number} v
 * @param {number} step
 */
function cleanFloat(v, step) {
    const decimals = Math.max(0, Math.min(15, -Math.floor(Math.log10(step)) + 1));
    return Number(v.toFixed(decimals));
}

const BYTE_UNIT = 1024;

/**
 * Ticks from 0 over [0, max] bytes that fall on round binary sizes
 * (0, 512 MiB, 1 GiB, 1.5 GiB … rather than 0, 500000000 …): nice steps
 * in the largest binary unit below max.
 * @param {number} max bytes
 * @param {number} [count]
 * @returns {{ticks: number[], step: number}}
 */
export function byteTicks(max, count = 4) {
    if (!(max > 0) || !Number.isFinite(max)) return { ticks: [0, BYTE_UNIT], step: BYTE_UNIT };
    let unit = 1;
    while (max / unit >= BYTE_UNIT) unit *= BYTE_UNIT;
    const { ticks, step } = niceTicks(0, max / unit, count);
    return { ticks: ticks.map((t) => t * unit), step: step * unit };
}

/**
 * Labels for time ticks given in µs: one unit for the whole axis (chosen
 * by the largest tick), and as many decimals as the step needs:
 * [0, 5000, 10000] step 5000 -> ["0 ms", "5 ms", "10 ms"];
 * [0, 500, 1000, 1500] step 500 -> ["0 ms", "0.5 ms", "1 ms", "1.5 ms"].
 * @param {number[]} ticks
 * @param {number} step
 * @returns {string[]}
 */
export function timeTickLabels(ticks, step) {
    const top = Math.max(...ticks.map(Math.abs), 0);
    const [unit, size] = top >= 1e6 ? ['s', 1e6] : top >= 1e3 ? ['ms', 1e3] : ['µs', 1];
    const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / size) - 1e-9)));
    return ticks.map((t) => {
        const v = Number((t / size).toFixed(decimals));
        return (Object.is(v, -0) ? 0 : v).toFixed(decimals) + ' ' + unit;
    });
}

/**
 * @typedef {object} Segment
 * @property {string} key
 * @property {number} value
 * @property {number} start  cumulative value below this segment
 * @property {number} end    start + value
 */

/**
 * Stacks a breakdown in category order (bottom first); missing or negative
 * values count as 0.
 * @param {Record<string, number>} breakdown
 * @param {string[]} categories
 * @returns {Segment[]}
 */
export function stackBreakdown(breakdown, categories) {
    let acc = 0;
    return categories.map((key) => {
        const raw = breakdown ? breakdown[key] : 0;
        const value = typeof raw === 'number' && raw > 0 ? raw : 0;
        const seg = { key, value, start: acc, end: acc + value };
        acc += value;
        return seg;
    });
}

/**
 * Index of the last sample at or before t in ascending times (a step
 * curve's value at t); 0 when t is before the first sample, -1 when empty.
 * @param {ArrayLike<number>} ts ascending
 * @param {number} t
 * @returns {number}
 */
export function sampleAt(ts, t) {
    if (!ts.length) return -1;
    let lo = 0;
    let hi = ts.length - 1;
    if (t < ts[0]) return 0;
    while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (ts[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/**
 * The time window selected by dragging from pixel a to pixel b (either
 * order) on a time scale, clamped to the scale's domain; null when the
 * drag is shorter than minPx (a click, not a selection).
 * @param {number} a
 * @param {number} b
 * @param {Scale} scale
 * @param {number} [minPx]
 * @returns {{start: number, end: number} | null}
 */
export function dragWindow(a, b, scale, minPx = 4) {
    if (Math.abs(b - a) < minPx) return null;
    const [d0, d1] = scale.domain;
    const lo = Math.min(d0, d1);
    const hi = Math.max(d0, d1);
    const t0 = Math.max(lo, Math.min(hi, scale.invert(Math.min(a, b))));
    const t1 = Math.max(lo, Math.min(hi, scale.invert(Math.max(a, b))));
    return t1 > t0 ? { start: t0, end: t1 } : null;
}
