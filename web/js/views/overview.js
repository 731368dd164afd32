// @ts-check
/**
 * views/overview.js — the run page's Overview tab (`&view=overview`): one
 * rank at a glance, from GET ./api/runs/ID/overview?rank=N.
 *
 * Top to bottom: a summary strip (steps, average step, GPU utilization, the
 * top finding with its saving, peak memory: per GPU, and the CPU only from
 * 1 MiB up); a card per GPU (name, memory, compute capability and the
 * efficiency figures, each with a tooltip saying how it is computed); the
 * execution summary of the average step (a table with time and share per
 * category, and one horizontal bar of it) beside a stacked bar per step (SVG
 * built with DOM calls); the recommendations (findings.js), the first two
 * shown and the rest behind a toggle (`&findings=all` keeps them open); the
 * job log's metrics when the run has log lines (logchart.js); the analysis
 * notes. The strip names the top finding, so the GPU and step
 * cards fit the first screen of a 1600×900 window (issue 21) while the
 * reason the page is opened is still the first thing read.
 *
 * Mounted by views/run.js with the run already loaded; fetches again when
 * the rank in the URL changes. Every string from the trace is text.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { bdi, h } from '../dom.js';
import { categoryInfo, stackBreakdown } from '../charts.js';
import { DASH, formatBytes, formatMicros, formatNumber, formatPercent, formatShare, plural } from '../format.js';
import { findingsList } from '../findings.js';
import { addRunMetrics } from '../logchart.js';
import { buildUrl } from '../router.js';
import { enumParam } from '../params.js';
import { columnBars, hbar, legend, rankTab, section, swatch, tabRoute, updateRoute } from '../tabs.js';

/** findings: every recommendation shown, not only the first FINDINGS_SHOWN. */
export const params = Object.freeze({ findings: enumParam('findings', /** @type {const} */ (['all']), '') });

/** How many recommendations show before "Show N more". */
const FINDINGS_SHOWN = 2;

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
    return rankTab(root, ctx, {
        tab: 'overview',
        what: 'overview',
        request: (route, signal) => api.getOverview(ctx.run.id, route.rank, signal),
        render: (ov) => {
            const route = tabRoute(ctx.store.get().route, params);
            const page = render(ov, route, ctx.store);
            addRunMetrics(page, ctx.run.id, ov.rank, buildUrl({ view: 'run', run: ctx.run.id, rank: route.rank, tab: 'timeline' }));
            return page;
        },
    });
}

/**
 * @param {Overview} ov
 * @param {import('../router.js').TabRoute<typeof params>} route
 * @param {import('../state.js').AppStore} store
 */
function render(ov, route, store) {
    const cats = ov.categories && ov.categories.length ? ov.categories : Object.keys(ov.average ? ov.average.breakdown_us : {});
    const recs = ov.recommendations === undefined ? [] : ov.recommendations;
    const list = findingsList(recs, { runId: route.run || '', stepUs: ov.average ? ov.average.dur_us : null, rank: ov.rank });
    return h(
        'div',
        { class: C.page, dataset: { rank: String(ov.rank) } },
        headline(ov, route),
        section('GPUs', gpuCards(ov.gpus || [])),
        h(
            'div',
            { class: C.grid },
            h(
                'article',
                { class: [C.card, C.cardPad], 'aria-label': 'Execution summary' },
                h('h2', { class: C.sectionTitle }, 'Execution summary (average step)'),
                summaryTable(ov, cats),
                averageBar(ov, cats),
            ),
            h(
                'article',
                { class: [C.card, C.cardPad], 'aria-label': 'Step time breakdown' },
                h('h2', { class: C.sectionTitle }, `Step time breakdown (${plural((ov.steps || []).length, 'step')})`),
                stepChart(ov.steps || [], cats),
                legend(cats.map((k) => categoryInfo(k))),
            ),
        ),
        h(
            'section',
            { class: C.section, id: 'recommendations' },
            h('h2', { class: C.sectionTitle }, 'Recommendations'),
            list,
            recs && recs.length > FINDINGS_SHOWN ? moreFindings(list, recs.length - FINDINGS_SHOWN, route.findings === 'all', store) : null,
        ),
        section('Notes', notesList(ov.notes || [])),
    );
}

/**
 * The toggle of the findings past the first FINDINGS_SHOWN: CSS hides them
 * (C.recsFolded on the list) while the button says so; the state goes to
 * the URL so that a shared link opens them the same way.
 * @param {HTMLElement} list  the findings' <ol>
 * @param {number} hidden
 * @param {boolean} open
 * @param {import('../state.js').AppStore} store
 */
function moreFindings(list, hidden, open, store) {
    const button = h('button', { type: 'button', class: [C.btn, C.btnSm], 'aria-controls': 'tb-recs' });
    list.id = 'tb-recs';
    const set = (/** @type {boolean} */ on) => {
        list.classList.toggle(C.recsFolded, !on);
        button.textContent = on ? 'Show the first ' + FINDINGS_SHOWN + ' only' : `Show ${plural(hidden, 'more finding')}`;
        button.setAttribute('aria-expanded', String(on));
    };
    button.addEventListener('click', () => {
        const on = button.getAttribute('aria-expanded') !== 'true';
        set(on);
        updateRoute(store, { findings: on ? 'all' : '' });
    });
    set(open);
    return h('p', { class: C.recsMore }, button);
}

// --- GPUs ----------------------------------------------------------------------

/** @param {GpuSummary[]} gpus */
export function gpuCards(gpus) {
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
export function headline(ov, route) {
    const steps = ov.steps || [];
    const first = steps[0];
    const last = steps[steps.length - 1];
    const peaks = Object.entries(ov.peak_memory_bytes || {});
    const gpus = ov.gpus || [];
    const busiest = gpus.reduce((a, g) => (a === null || (g.utilization ?? -1) > (a.utilization ?? -1) ? g : a), /** @type {GpuSummary | null} */ (null));
    const top = ov.recommendations && ov.recommendations.length ? ov.recommendations[0] : null;
    const memLink = (/** @type {string} */ device) =>
        h('a', { href: buildUrl({ view: 'run', run: route.run, rank: route.rank, tab: 'memory', device }) }, 'Memory tab');
    return h(
        'dl',
        { class: C.stats },
        stat('Steps', formatNumber(steps.length), first ? (steps.length > 1 ? [bdi(first.name), ' … ', bdi(last.name)] : bdi(first.name)) : 'no ProfilerStep spans'),
        stat('Average step', formatMicros(ov.average && ov.average.dur_us), 'a step lasts until its GPU work ends'),
        busiest
            ? stat(gpus.length > 1 ? 'GPU utilization, busiest' : 'GPU utilization', formatShare(busiest.utilization), `GPU ${busiest.device}, ${formatShare(busiest.compute_utilization ?? null)} in compute`)
            : null,
        top ? topFinding(top, ov.average ? ov.average.dur_us : 0) : null,
        peaks.map(([dev, bytes]) => stat(`Peak memory, GPU ${dev}`, formatBytes(bytes), memLink(dev))),
        // a few bytes of host allocations (8 B on most GPU runs) say nothing
        // and would sit beside the GPU peak as if they did: the Memory tab has them
        (ov.peak_memory_cpu_bytes ?? 0) >= CPU_PEAK_SHOWN ? stat('Peak memory, CPU', formatBytes(ov.peak_memory_cpu_bytes), memLink('cpu')) : null,
    );
}

/**
 * The strip's top finding: its title, and what fixing it could save.
 * @param {import('../apitypes.js').Recommendation} r
 * @param {number} stepUs
 */
function topFinding(r, stepUs) {
    const saving = typeof r.saving_us === 'number' && r.saving_us > 0 ? r.saving_us : 0;
    return h(
        'div',
        { class: [C.stat, C.statWide], dataset: { severity: r.severity } },
        h('dt', { class: C.statLabel }, 'Top finding'),
        h('dd', { class: C.statFinding }, h('a', { href: '#recommendations' }, r.title)),
        h('dd', { class: C.muted }, saving ? `could save ${formatMicros(saving)} per step${stepUs > 0 ? ` (${formatShare(Math.min(1, saving / stepUs))})` : ''}` : `${r.severity} severity`),
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
export function summaryTable(ov, cats) {
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
export function averageBar(ov, cats) {
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
 * One stacked column per step (SVG; tabs.js columnBars).
 * @param {Step[]} steps
 * @param {string[]} cats
 */
export function stepChart(steps, cats) {
    if (!steps.length) return h('p', { class: C.muted }, 'No steps to chart: the trace has no ProfilerStep# spans.');
    return columnBars({
        label: `Time of each of ${steps.length} steps by category`,
        box: CHART,
        axis: 'step',
        fmt: formatMicros,
        cols: steps.map((s) => ({
            label: stepLabel(s),
            name: s.name,
            total: s.dur_us || 0,
            attrs: { 'data-step': s.name },
            segs: stackBreakdown(s.breakdown_us, cats).map((g) => ({ label: categoryInfo(g.key).label, color: categoryInfo(g.key).color, value: g.value })),
        })),
    });
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
