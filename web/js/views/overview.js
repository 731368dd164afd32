// @ts-check
/**
 * views/overview.js — the run page's Overview tab (`&view=overview`): one
 * rank at a glance, from GET ./api/runs/ID/overview?rank=N.
 *
 * Top to bottom: the recommendations; a card per GPU (name, memory, compute capability and the
 * four efficiency figures, each with a tooltip saying how it is computed);
 * headline numbers (steps, average step, peak memory: per GPU, and the CPU only from 1 MiB up); the execution
 * summary of the average step (a table with time and share per category,
 * and one horizontal bar of it); a stacked bar per step (SVG built with
 * DOM calls); the job log's metrics when the run has log lines
 * (logchart.js); the analysis notes. The recommendations (findings.js)
 * come first: they are why the page is opened.
 *
 * Mounted by views/run.js with the run already loaded; fetches again when
 * the rank in the URL changes. Every string from the trace is text.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { bdi, h, replace, svg } from '../dom.js';
import { categoryInfo, linearScale, niceTicks, stackBreakdown, timeTickLabels } from '../charts.js';
import { DASH, formatBytes, formatMicros, formatNumber, formatPercent, formatShare, plural } from '../format.js';
import { findingsList } from '../findings.js';
import { addRunMetrics } from '../logchart.js';
import { buildUrl } from '../router.js';
import { analysisError, hbar, latestRequest, legend, section, swatch, tabRoute } from '../tabs.js';

/** This tab declares no URL parameters beyond run, view and rank. */
export const params = Object.freeze({});

/** @typedef {import('../apitypes.js').Overview} Overview */
/** @typedef {import('../apitypes.js').GpuSummary} GpuSummary */
/** @typedef {import('../apitypes.js').Step} Step */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../dom.js').Child} Child */

/** What each GPU figure means (tooltips; also the page's only definition). */
export const METRIC_HELP = Object.freeze({
    utilization:
        'GPU utilization: share of the profiled steps\u2019 wall time during which at least one kernel was running on this GPU. ' +
        'A busy GPU can still be poorly used: see SM efficiency and occupancy.',
    compute_utilization:
        'Compute utilization: the same share counting only kernels that are not collectives. A collective (NCCL, RCCL, DeepEP) ' +
        'waiting for a late peer keeps the GPU \u201cbusy\u201d without work; the gap between the two figures is time in collectives.',
    sm_efficiency:
        'Estimated SM efficiency: time-weighted share of the GPU\u2019s streaming multiprocessors that had work, over the same window. ' +
        'Each running kernel counts its \u201cblocks per SM\u201d (capped at 1), so small launches that leave SMs idle score low. ' +
        'An estimate from the launch configuration Kineto records, not a hardware counter.',
    achieved_occupancy:
        'Estimated achieved occupancy: kernel-time-weighted mean of Kineto\u2019s \u201cest. achieved occupancy %\u201d, the share of the ' +
        'maximum resident warps per SM that a kernel\u2019s registers, shared memory and block size allow. An estimate, not a measurement.',
    tensor_core_share:
        'Tensor-core share: share of this GPU\u2019s kernel time spent in kernels that use tensor cores (recognized by kernel name, ' +
        'e.g. HMMA/WGMMA GEMMs and cuDNN/cuBLAS tensor-op kernels).',
    kernel_us: 'Kernel time: sum of the durations of all kernels on this GPU within the profiled steps.',
});

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createOverview(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createOverview(root, ctx) {
    const { store, run } = ctx;
    let shownRank = /** @type {number | null | undefined} */ (undefined);
    /** @type {import('../tabs.js').LatestRequest} */
    const req = latestRequest(
        root,
        (signal) => {
            shownRank = tabRoute(store.get().route, params).rank;
            return api.getOverview(run.id, shownRank, signal);
        },
        (ov) => {
            const route = tabRoute(store.get().route, params);
            const page = render(ov, route);
            replace(root, page);
            addRunMetrics(page, run.id, ov.rank, buildUrl({ view: 'run', run: run.id, rank: route.rank, tab: 'timeline' }));
        },
        (e) => replace(root, analysisError(e, 'overview', tabRoute(store.get().route, params), req.load)),
    );

    replace(root, h('p', { class: [C.muted, C.loading] }, 'Loading the overview…'));
    req.load();
    const unsubscribe = store.subscribe((next) => {
        const r = tabRoute(next.route, params);
        if (r.view === 'run' && r.run === run.id && r.tab === 'overview' && r.rank !== shownRank) req.load();
    });
    return {
        destroy() {
            req.stop();
            unsubscribe();
        },
    };
}

/**
 * @param {Overview} ov
 * @param {import('../router.js').RunRoute} route
 */
function render(ov, route) {
    const cats = ov.categories && ov.categories.length ? ov.categories : Object.keys(ov.average ? ov.average.breakdown_us : {});
    return h(
        'div',
        { class: C.page, dataset: { rank: String(ov.rank) } },
        section(
            'Recommendations',
            findingsList(ov.recommendations === undefined ? [] : ov.recommendations, {
                runId: route.run || '',
                stepUs: ov.average ? ov.average.dur_us : null,
                rank: ov.rank,
            }),
        ),
        section('GPUs', gpuCards(ov.gpus || [])),
        headline(ov, route),
        h(
            'div',
            { class: C.grid },
            h(
                'article',
                { class: [C.card, C.cardPad] },
                h('h2', { class: C.sectionTitle }, 'Execution summary (average step)'),
                summaryTable(ov, cats),
                averageBar(ov, cats),
            ),
            h(
                'article',
                { class: [C.card, C.cardPad] },
                h('h2', { class: C.sectionTitle }, `Step time breakdown (${plural((ov.steps || []).length, 'step')})`),
                stepChart(ov.steps || [], cats),
                legend(cats.map((k) => categoryInfo(k))),
            ),
        ),
        section('Notes', notesList(ov.notes || [])),
    );
}

// --- GPUs ----------------------------------------------------------------------

/** @param {GpuSummary[]} gpus */
function gpuCards(gpus) {
    if (!gpus.length) {
        return h('p', { class: C.muted }, 'No GPU kernels in this rank: a CPU-only profile, or the trace recorded no CUDA activity.');
    }
    return h(
        'div',
        { class: C.grid },
        gpus.map((g) =>
            h(
                'article',
                { class: C.card, 'aria-label': `GPU ${g.device}` },
                h(
                    'div',
                    { class: C.cardHead },
                    h('h2', { class: C.cardTitle }, g.name || 'GPU'),
                    h('span', { class: C.spacer }),
                    h('span', { class: [C.badge, C.badgeNeutral] }, `GPU ${g.device}`),
                ),
                h(
                    'div',
                    { class: C.cardPad },
                    h(
                        'dl',
                        { class: C.kv },
                        h('dt', null, 'Memory'),
                        h('dd', null, g.memory_bytes ? formatBytes(g.memory_bytes) : DASH),
                        h('dt', null, 'Compute capability'),
                        h('dd', null, g.compute_capability || DASH),
                        h('dt', { class: C.help, title: METRIC_HELP.kernel_us }, 'Kernel time'),
                        h('dd', null, formatMicros(g.kernel_us)),
                    ),
                    h(
                        'div',
                        { class: C.metrics },
                        metric('GPU utilization', g.utilization, METRIC_HELP.utilization),
                        metric('Compute utilization', g.compute_utilization ?? null, METRIC_HELP.compute_utilization),
                        metric('Est. SM efficiency', g.sm_efficiency, METRIC_HELP.sm_efficiency),
                        metric('Est. achieved occupancy', g.achieved_occupancy, METRIC_HELP.achieved_occupancy),
                        metric('Tensor-core share', g.tensor_core_share, METRIC_HELP.tensor_core_share),
                    ),
                ),
            ),
        ),
    );
}

/**
 * A labelled percentage with a bar; null = the trace does not give it.
 * @param {string} label
 * @param {number | null} value 0..1
 * @param {string} help
 */
function metric(label, value, help) {
    const fill = h('span', { class: C.shareFill });
    fill.style.width = typeof value === 'number' ? (Math.max(0, Math.min(1, value)) * 100).toFixed(1) + '%' : '0';
    return h(
        'div',
        { class: C.metric, title: value === null || value === undefined ? help + '\n\nNot available: the trace does not record the figures it needs.' : help },
        h('div', { class: [C.metricLabel, C.help] }, label),
        h('div', { class: C.metricValue }, formatShare(value)),
        h('span', { class: C.shareTrack }, fill),
    );
}

// --- headline numbers ------------------------------------------------------------

/**
 * @param {Overview} ov
 * @param {import('../router.js').RunRoute} route
 */
function headline(ov, route) {
    const steps = ov.steps || [];
    const first = steps[0];
    const last = steps[steps.length - 1];
    const peaks = Object.entries(ov.peak_memory_bytes || {});
    const memLink = (/** @type {string} */ device) =>
        h('a', { href: buildUrl({ view: 'run', run: route.run, rank: route.rank, tab: 'memory', device }) }, 'Memory tab');
    return h(
        'dl',
        { class: C.stats },
        stat('Steps', formatNumber(steps.length), first ? (steps.length > 1 ? [bdi(first.name), ' … ', bdi(last.name)] : bdi(first.name)) : 'no ProfilerStep spans'),
        stat('Average step', formatMicros(ov.average && ov.average.dur_us), 'a step lasts until its GPU work ends'),
        peaks.map(([dev, bytes]) => stat(`Peak memory, GPU ${dev}`, formatBytes(bytes), memLink(dev))),
        // a few bytes of host allocations (8 B on most GPU runs) say nothing
        // and would sit beside the GPU peak as if they did: the Memory tab has them
        (ov.peak_memory_cpu_bytes ?? 0) >= CPU_PEAK_SHOWN ? stat('Peak memory, CPU', formatBytes(ov.peak_memory_cpu_bytes), memLink('cpu')) : null,
    );
}

/** The smallest CPU peak the headline shows (bytes). */
const CPU_PEAK_SHOWN = 1024 * 1024;

/**
 * @param {string} label
 * @param {string} value
 * @param {Child} [note]
 */
function stat(label, value, note) {
    return h(
        'div',
        { class: C.stat },
        h('dt', { class: C.statLabel }, label),
        h('dd', { class: C.statValue }, value),
        note ? h('dd', { class: C.muted }, note) : null,
    );
}

// --- execution summary ------------------------------------------------------------

/**
 * @param {Overview} ov
 * @param {string[]} cats
 */
function summaryTable(ov, cats) {
    const avg = ov.average || { dur_us: 0, breakdown_us: {} };
    return h(
        'table',
        { class: [C.table, C.tableCompact], 'aria-label': 'Average step by category' },
        h(
            'thead',
            null,
            h(
                'tr',
                null,
                h('th', { scope: 'col' }, 'Category'),
                h('th', { scope: 'col', class: C.num }, 'Time per step'),
                h('th', { scope: 'col', class: C.num }, 'Share of step'),
            ),
        ),
        h(
            'tbody',
            null,
            cats.map((k) => {
                const info = categoryInfo(k);
                const us = avg.breakdown_us[k];
                return h(
                    'tr',
                    { dataset: { category: k } },
                    h('td', { title: info.help, class: C.help }, swatch(info.color), info.label),
                    h('td', { class: C.num }, formatMicros(us)),
                    h('td', { class: C.num }, formatPercent(us, avg.dur_us)),
                );
            }),
            h(
                'tr',
                { class: C.rowTotal },
                h('td', null, 'Step'),
                h('td', { class: C.num }, formatMicros(avg.dur_us)),
                h('td', { class: C.num }, avg.dur_us > 0 ? '100 %' : DASH),
            ),
        ),
    );
}

/**
 * The average step as one horizontal 100 % bar.
 * @param {Overview} ov
 * @param {string[]} cats
 */
function averageBar(ov, cats) {
    const avg = ov.average;
    if (!avg || !(avg.dur_us > 0)) return null;
    const segs = stackBreakdown(avg.breakdown_us, cats).filter((s) => s.value > 0);
    return hbar(
        'Average step: ' + segs.map((s) => `${categoryInfo(s.key).label} ${formatPercent(s.value, avg.dur_us)}`).join(', '),
        segs.map((s) => {
            const info = categoryInfo(s.key);
            return { color: info.color, value: s.value, title: `${info.label}: ${formatMicros(s.value)} (${formatPercent(s.value, avg.dur_us)})` };
        }),
        avg.dur_us,
    );
}

// --- per-step stacked bars ------------------------------------------------------------

const CHART = { w: 640, h: 240, left: 62, right: 10, top: 12, bottom: 40 };

/**
 * One stacked bar per step, in SVG (viewBox units; scales with its box).
 * @param {Step[]} steps
 * @param {string[]} cats
 */
function stepChart(steps, cats) {
    if (!steps.length) return h('p', { class: C.muted }, 'No steps to chart: the trace has no ProfilerStep# spans.');
    const max = Math.max(...steps.map((s) => s.dur_us || 0), 0);
    const { ticks, step } = niceTicks(0, max, 4);
    const top = ticks[ticks.length - 1];
    const plotW = CHART.w - CHART.left - CHART.right;
    const y = linearScale(0, top, CHART.h - CHART.bottom, CHART.top);
    const band = plotW / steps.length;
    const barW = Math.max(1, Math.min(56, band * 0.7));
    const labels = timeTickLabels(ticks, step);
    const labelEvery = Math.ceil(steps.length / Math.max(1, Math.floor(plotW / 44)));

    const grid = ticks.map((t, i) =>
        svg(
            'g',
            null,
            svg('line', { class: C.gridLine, x1: CHART.left, x2: CHART.w - CHART.right, y1: y.map(t), y2: y.map(t) }),
            svg('text', { class: C.axis, x: CHART.left - 6, y: y.map(t) + 4, 'text-anchor': 'end' }, labels[i]),
        ),
    );
    const bars = steps.map((s, i) => {
        const x = CHART.left + band * i + (band - barW) / 2;
        const segs = stackBreakdown(s.breakdown_us, cats).filter((g) => g.value > 0);
        const tip = [`${s.name}: ${formatMicros(s.dur_us)}`, ...segs.map((g) => `${categoryInfo(g.key).label}: ${formatMicros(g.value)} (${formatPercent(g.value, s.dur_us)})`)].join('\n');
        return svg(
            'g',
            { class: C.bar, 'data-step': s.name },
            svg('title', null, tip),
            segs.map((g) =>
                svg('rect', {
                    x: x.toFixed(2),
                    width: barW.toFixed(2),
                    y: y.map(g.end).toFixed(2),
                    height: Math.max(0, y.map(g.start) - y.map(g.end)).toFixed(2),
                    fill: categoryInfo(g.key).color,
                }),
            ),
            i % labelEvery === 0
                ? svg('text', { class: C.axis, x: (x + barW / 2).toFixed(2), y: CHART.h - CHART.bottom + 16, 'text-anchor': 'middle' }, stepLabel(s))
                : null,
        );
    });
    return svg(
        'svg',
        { class: C.chart, viewBox: `0 0 ${CHART.w} ${CHART.h}`, role: 'img', 'aria-label': `Time of each of ${steps.length} steps by category` },
        grid,
        svg('line', { class: C.gridLine, x1: CHART.left, x2: CHART.left, y1: CHART.top, y2: CHART.h - CHART.bottom }),
        bars,
        svg('text', { class: C.axis, x: CHART.left + plotW / 2, y: CHART.h - 6, 'text-anchor': 'middle' }, 'step'),
    );
}

/**
 * "ProfilerStep#12" -> "#12"; other names as they are, shortened.
 * @param {Step} s
 */
function stepLabel(s) {
    const m = /#(\d+)$/.exec(s.name || '');
    if (m) return '#' + m[1];
    const n = s.name || String(s.idx);
    return n.length > 10 ? n.slice(0, 9) + '…' : n;
}

// --- notes ---------------------------------------------------------------------------

/** @param {string[]} notes */
function notesList(notes) {
    if (!notes.length) return h('p', { class: C.muted }, 'No analysis notes for this rank.');
    return h('ul', { class: C.notes }, notes.map((n) => h('li', null, n)));
}
