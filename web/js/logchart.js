// @ts-check
/**
 * logchart.js — small charts of a job log's numeric fields (logdata.js
 * metricSeries): one card per metric with its last value, min and max,
 * x by step or by time. Used by the Overview (a run's log) and the live
 * view (redrawn as lines arrive). SVG built with dom.js svg(): no markup
 * from data; a field name reaches the page as text.
 */

import { getAllRunLogs } from './api.js';
import { C } from './classes.js';
import { h, svg } from './dom.js';
import { formatNumber, plural } from './format.js';
import { metricSeries } from './logdata.js';

const W = 240;
const H = 90;
/** Points drawn per chart at most (evenly thinned, the last kept). */
const MAX_POINTS = 2000;

/**
 * @param {number} v
 * @returns {string}
 */
function num(v) {
    const a = Math.abs(v);
    if (a !== 0 && (a < 0.01 || a >= 1e6)) return v.toExponential(2);
    return formatNumber(v, a >= 100 ? 0 : a >= 10 ? 1 : 3);
}

/**
 * @param {[number, number][]} pts
 * @returns {[number, number][]}
 */
function thin(pts) {
    if (pts.length <= MAX_POINTS) return pts;
    const k = pts.length / MAX_POINTS;
    /** @type {[number, number][]} */
    const out = [];
    for (let i = 0; i < MAX_POINTS; i++) out.push(pts[Math.floor(i * k)]);
    out.push(pts[pts.length - 1]);
    return out;
}

/**
 * One metric's card.
 * @param {{name: string, x: 'step' | 'time', points: [number, number][]}} s
 * @returns {HTMLElement}
 */
export function metricChart(s) {
    const pts = thin(s.points);
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    const x0 = Math.min(...xs);
    const x1 = Math.max(...xs);
    const y0 = Math.min(0, ...ys);
    const y1 = Math.max(...ys);
    const sx = (/** @type {number} */ x) => (x1 > x0 ? ((x - x0) / (x1 - x0)) * W : W / 2);
    const sy = (/** @type {number} */ y) => H - 2 - (y1 > y0 ? ((y - y0) / (y1 - y0)) * (H - 4) : (H - 4) / 2);
    const d = pts.map((p, i) => `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
    const area = pts.length ? `${d}L${sx(xs[xs.length - 1]).toFixed(1)},${H}L${sx(xs[0]).toFixed(1)},${H}Z` : '';
    const last = ys.length ? ys[ys.length - 1] : NaN;
    const lo = s.points.reduce((m, p) => Math.min(m, p[1]), Infinity);
    const hi = s.points.reduce((m, p) => Math.max(m, p[1]), -Infinity);
    return h(
        'figure',
        { class: C.logChart, dataset: { metric: s.name, points: String(s.points.length) } },
        h('figcaption', { class: C.logChartTitle }, h('strong', { class: C.mono }, s.name), h('span', { class: C.num }, Number.isFinite(last) ? num(last) : '')),
        svg(
            'svg',
            { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `${s.name} by ${s.x}` },
            svg('title', null, `${s.name} by ${s.x}: ${s.points.length} points`),
            area ? svg('path', { class: C.logArea, d: area }) : null,
            d ? svg('path', { class: C.logPath, d }) : null,
        ),
        h('div', { class: [C.logChartTitle, C.muted] }, h('span', null, `by ${s.x}`), h('span', { class: C.num }, Number.isFinite(lo) ? `min ${num(lo)} · max ${num(hi)}` : '')),
    );
}

/**
 * The charts of every metric, or null when there is none.
 * @param {{name: string, x: 'step' | 'time', points: [number, number][]}[]} series
 * @returns {HTMLElement | null}
 */
export function metricCharts(series) {
    const shown = series.filter((s) => s.points.length);
    if (!shown.length) return null;
    return h('div', { class: C.logCharts }, shown.map(metricChart));
}

/**
 * Adds a "Job log" section to a run's Overview page (before its last
 * section, the notes) when the run has log lines: how many, and a chart
 * per numeric field. Nothing when it has none or the request fails.
 * @param {HTMLElement} page
 * @param {string} runId
 * @param {number} rank
 * @param {string} timelineHref the Timeline tab of this rank (the log lane)
 */
export async function addRunMetrics(page, runId, rank, timelineHref) {
    let logs;
    try {
        logs = await getAllRunLogs(runId, { rank });
    } catch {
        return;
    }
    if (!logs.lines.length || !page.isConnected) return;
    const charts = metricCharts(metricSeries(logs.lines));
    const box = h(
        'section',
        { class: C.section, dataset: { jobLog: String(logs.lines.length) } },
        h('h2', { class: C.sectionTitle }, 'Job log'),
        h('p', { class: C.muted }, `${plural(logs.lines.length, 'log line')} of this rank and of the whole job; `, h('a', { href: timelineHref }, 'on the timeline'), charts ? ', and their metrics:' : '.'),
        charts,
    );
    page.insertBefore(box, page.lastElementChild);
}
