// @ts-check
/**
 * views/analyses.js — the run page's Analyses tab (`&view=analyses`): the
 * deeper GPU analyses of one rank, from GET ./api/runs/ID/analyses?rank=N
 * (stored at ingest; each object's fields are documented at the top of
 * server/derive/analyses/<name>.c).
 *
 * One section per analysis, each with an anchor (`#an-idle` … `#an-critpath`)
 * that the section links at the top write into the URL, so a link can point
 * at one: idle time by cause per stream (stacked bars, gap-length
 * histogram), launch statistics (quantiles, outliers with their operator),
 * queue depth per stream, copy bandwidth by kind against the peak,
 * kernel-type overlap, attribution to annotations, fusion candidates and
 * the critical path per step. "Show on timeline" links open the Timeline
 * tab on the rank and the window in question (the critical path with
 * `cp=1`, which asks the timeline to highlight it).
 *
 * The documents come from analyses still growing, so every field is read
 * defensively: a missing number prints a dash, an analysis whose object is
 * empty says it is not available for this trace. Every string from a trace
 * (stream, kernel, operator, annotation names) reaches the page as text.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, bdi, h, replace, svg } from '../dom.js';
import { linearScale, niceTicks } from '../charts.js';
import { DASH, formatBytes, formatDuration, formatNumber, formatOffset, formatPercent, formatShare, plural } from '../format.js';
import { buildUrl } from '../router.js';
import { analysisError, hbar, latestRequest, legend, rankStartUs, shareBar, stackedBars as barRows, swatch, tabRank } from '../tabs.js';
import { CP_COLOURS } from '../timeline/critpath.js';

/** @typedef {import('../api.js').AnalysesDoc} AnalysesDoc */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../router.js').Route} Route */
/** @typedef {import('../dom.js').Child} Child */
/** @typedef {{key: string, label: string, color: string, help?: string}} Part */

/** The sections in page order: anchor id, title. */
export const SECTIONS = Object.freeze([
    ['an-idle', 'Idle time by cause'],
    ['an-launch', 'Kernel launches'],
    ['an-queue', 'Queue depth'],
    ['an-copy', 'Copy bandwidth'],
    ['an-overlap', 'Kernel-type overlap'],
    ['an-annotations', 'Annotations'],
    ['an-fusion', 'Fusion candidates'],
    ['an-critpath', 'Critical path'],
]);

const NA = 'Not available for this trace.';

/** Idle causes: the host-wait parts (what the host did meanwhile), then HTA's other two. */
const IDLE_PARTS = /** @type {Part[]} */ ([
    { key: 'launching', label: 'Host wait: launching', color: '#e15759', help: 'The host thread was in runtime launch calls or framework operators: it could not enqueue work fast enough.' },
    { key: 'sync', label: 'Host wait: sync', color: '#ff9d9a', help: 'The host thread was blocked in a synchronising runtime call.' },
    { key: 'dataloader', label: 'Host wait: DataLoader', color: '#76b7b2', help: 'The host thread was fetching the next batch.' },
    { key: 'comm', label: 'Host wait: communication', color: '#b07aa1', help: 'The host thread was in a collective operation.' },
    { key: 'none', label: 'Host wait: nothing profiled', color: '#9c755f', help: 'The host thread did something the profiler did not see (Python, sleeps).' },
    { key: 'kernel_wait', label: 'Kernel wait', color: '#4e79a7', help: 'Short gaps (< 30 µs) between queued work: the GPU’s own launch latency.' },
    { key: 'other', label: 'Other', color: '#bab0ac', help: 'Waiting on events, other streams or copies.' },
]);

/** HTA's three gap kinds (histogram). */
const GAP_KINDS = /** @type {Part[]} */ ([
    { key: 'host_wait', label: 'Host wait', color: '#e15759' },
    { key: 'kernel_wait', label: 'Kernel wait', color: '#4e79a7' },
    { key: 'other', label: 'Other', color: '#bab0ac' },
]);

/** Colours of kernel-type combinations, by their types joined with "+". */
const COMBO_COLORS = /** @type {Record<string, string>} */ ({
    compute: '#4e79a7',
    communication: '#b07aa1',
    memory: '#f28e2b',
    'compute+communication': '#9c755f',
    'compute+memory': '#59a14f',
    'communication+memory': '#edc948',
    'compute+communication+memory': '#e15759',
    idle: '#e6e9ee',
});

/** Critical-path categories (the API's names), coloured as the timeline outlines them. */
const CP_PARTS = /** @type {Record<string, Part>} */ ({
    cpu: { key: 'cpu', label: 'CPU', color: CP_COLOURS.cpu, help: 'Host work: operators, Python, the callers of launches.' },
    dataloader: { key: 'dataloader', label: 'DataLoader', color: CP_COLOURS.dataloader, help: 'Host time inside DataLoader calls.' },
    gpu_compute: { key: 'gpu_compute', label: 'GPU compute', color: CP_COLOURS.gpu_compute, help: 'Kernels and copies on the path.' },
    communication: { key: 'communication', label: 'Communication', color: CP_COLOURS.communication, help: 'Communication kernels on the path.' },
    launch_overhead: { key: 'launch_overhead', label: 'Launch overhead', color: CP_COLOURS.launch_overhead, help: 'Launch calls and the delay until the GPU starts.' },
    kernel_gap: { key: 'kernel_gap', label: 'Kernel gaps', color: CP_COLOURS.kernel_gap, help: 'Gaps between GPU ops on one stream.' },
});

// --- reading the documents defensively ------------------------------------------

/** @param {unknown} x @returns {x is number} */
const isNum = (x) => typeof x === 'number' && Number.isFinite(x);

/** @param {unknown} x @returns {Record<string, any>} the object, or {} */
const obj = (x) => (x && typeof x === 'object' && !Array.isArray(x) ? /** @type {Record<string, any>} */ (x) : {});

/** @param {unknown} x @returns {any[]} */
const arr = (x) => (Array.isArray(x) ? x : []);

/**
 * The first of keys that holds a number.
 * @param {Record<string, any>} o
 * @param {...string} keys
 * @returns {number | null}
 */
function num(o, ...keys) {
    for (const k of keys) if (isNum(o[k])) return o[k];
    return null;
}

/**
 * The first of keys that holds a string.
 * @param {Record<string, any>} o
 * @param {...string} keys
 * @returns {string}
 */
function str(o, ...keys) {
    for (const k of keys) if (typeof o[k] === 'string') return o[k];
    return '';
}

/** @param {Record<string, any>} o @returns {boolean} an analysis with nothing to say */
const empty = (o) => Object.keys(o).length === 0;

/** @param {number | null} ns */
const dur = (ns) => formatDuration(ns);

/** @param {Record<string, any>} s a stream @returns {string} */
const streamName = (s) => str(s, 'name') || `track ${num(s, 'stream') ?? '?'}`;

/** @param {Record<string, any>} s a stream: its name, and its GPU muted */
const streamCell = (s) => [streamName(s), isNum(s.device) && s.device >= 0 ? h('span', { class: C.muted }, ` GPU ${s.device}`) : null];

/**
 * A value followed by its share, muted.
 * @param {Child} value
 * @param {string} share
 */
const withShare = (value, share) => [value, h('span', { class: C.muted }, ` ${share}`)];

// --- the tab ----------------------------------------------------------------------

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createAnalyses(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createAnalyses(root, ctx) {
    const { store, run } = ctx;
    let shownRank = /** @type {number | null | undefined} */ (undefined);
    let rank = 0;
    /** @type {import('../tabs.js').LatestRequest} */
    const req = latestRequest(
        root,
        (signal) => {
            const route = store.get().route;
            rank = tabRank(run, route);
            shownRank = route.rank;
            return api.getAnalyses(run.id, rank, signal);
        },
        (d) => {
            const doc = d.ranks[String(rank)];
            replace(root, doc ? render(doc, rank, run, store.get().route) : alertBox('warn', `No analyses for rank ${rank}`, 'The server returned none.'));
            markSection();
            revealHash();
        },
        // a run older than the analyses answers 409: analysisError says to upload it again
        (e) => replace(root, analysisError(e, 'analyses', store.get().route, req.load)),
    );

    /** Scrolls to the section the URL's anchor names (after a load, the page was not there yet). */
    function revealHash() {
        const id = location.hash.slice(1);
        if (!SECTIONS.some(([s]) => s === id)) return;
        const el = root.querySelector('#' + id);
        if (el) el.scrollIntoView({ block: 'start' });
    }

    /** Marks the section link of the URL's anchor as current. */
    function markSection() {
        const id = location.hash.slice(1);
        for (const a of root.querySelectorAll(`.${C.anNav} a`)) {
            if (a.getAttribute('href') === '#' + id) a.setAttribute('aria-current', 'location');
            else a.removeAttribute('aria-current');
        }
    }

    replace(root, h('p', { class: [C.muted, C.loading] }, 'Loading the GPU analyses…'));
    req.load();
    window.addEventListener('hashchange', markSection);
    const unsubscribe = store.subscribe((next) => {
        const r = next.route;
        if (r.view === 'run' && r.run === run.id && r.tab === 'analyses' && r.rank !== shownRank) req.load();
    });
    return {
        destroy() {
            req.stop();
            window.removeEventListener('hashchange', markSection);
            unsubscribe();
        },
    };
}

/**
 * @param {AnalysesDoc} doc
 * @param {number} rank
 * @param {import('../api.js').RunDetail} run
 * @param {Route} route
 */
function render(doc, rank, run, route) {
    const win = arr(doc.window_ns);
    const w0 = isNum(win[0]) ? win[0] : null;
    const w1 = isNum(win[1]) ? win[1] : null;
    const t0us = rankStartUs(run, rank) ?? (w0 !== null ? w0 / 1000 : 0);
    /** A link to the Timeline tab on [a, b) ns of this rank. */
    const tl = (/** @type {number | null} */ a, /** @type {number | null} */ b, /** @type {string} */ label, cp = false) => {
        const fields = { view: /** @type {'run'} */ ('run'), run: route.run, rank, tab: 'timeline', start: a !== null && b !== null && b > a ? a / 1000 : null, end: a !== null && b !== null && b > a ? b / 1000 : null, cp };
        return h('a', { href: buildUrl(fields), class: C.anTl }, label);
    };
    const ctx = { doc, rank, w0, w1, t0us, tl };
    return h(
        'div',
        { class: C.page, dataset: { rank: String(rank) } },
        h(
            'p',
            { class: C.muted },
            `Rank ${rank}: `,
            isNum(doc.steps) && doc.steps > 0 ? `${plural(doc.steps, 'step')}, ` : 'no steps (the whole GPU span), ',
            w0 !== null && w1 !== null ? `${dur(w1 - w0)} analysed` : null,
            doc.gpu && obj(doc.gpu).name ? [' on ', bdi(String(obj(doc.gpu).name))] : null,
            '. ',
            tl(w0, w1, 'Show this window on the timeline'),
        ),
        h(
            'nav',
            { class: C.anNav, 'aria-label': 'Analyses sections' },
            SECTIONS.map(([id, title]) => h('a', { href: '#' + id }, title)),
        ),
        anSection('an-idle', 'Idle time by cause, per GPU stream', idleSection(obj(doc.idle))),
        anSection('an-launch', 'Kernel launch statistics', launchSection(obj(doc.launch), ctx)),
        anSection('an-queue', 'Queue depth per stream', queueSection(obj(doc.queue), ctx)),
        anSection('an-copy', 'Copy bandwidth by kind', copySection(obj(doc.copy), ctx)),
        anSection('an-overlap', 'Kernel-type breakdown and overlap', overlapSection(obj(doc.overlap))),
        anSection('an-annotations', 'GPU time by annotation', annotationsSection(obj(doc.annotations))),
        anSection('an-fusion', 'Fusion candidates', fusionSection(obj(doc.fusion))),
        anSection('an-critpath', 'Critical path per step', critpathSection(obj(doc.critical_path), ctx)),
    );
}

/**
 * @typedef {object} Ctx
 * @property {AnalysesDoc} doc
 * @property {number} rank
 * @property {number | null} w0  the analysed window, ns
 * @property {number | null} w1
 * @property {number} t0us       the rank's start, µs (times print relative to it)
 * @property {(a: number | null, b: number | null, label: string, cp?: boolean) => HTMLElement} tl
 */

/**
 * @param {string} id anchor
 * @param {string} title
 * @param {Child} body null: not available
 */
function anSection(id, title, body) {
    return h(
        'section',
        { class: [C.section, C.anSection], id, dataset: { available: body ? '1' : '0' } },
        h('h2', { class: C.sectionTitle }, h('a', { href: '#' + id, class: C.anAnchor }, title)),
        body || h('p', { class: [C.muted, C.anNa] }, NA),
    );
}

// --- small building blocks ----------------------------------------------------------

/**
 * @param {string} label
 * @param {Child} value
 * @param {string} [help]
 */
function metric(label, value, help) {
    return h('div', { class: C.metric, title: help || null }, h('div', { class: [C.metricLabel, help && C.help] }, label), h('div', { class: C.metricValue }, value));
}

/**
 * @typedef {object} Col
 * @property {string} label
 * @property {boolean} [num]
 * @property {string} [title]
 */

/**
 * A compact table in a horizontal scroller.
 * @param {string} label aria-label
 * @param {(Col | string)[]} cols
 * @param {Child[][]} rows cells (a cell is content, or [content, attrs])
 */
function table(label, cols, rows) {
    const cs = cols.map((c) => (typeof c === 'string' ? { label: c } : c));
    return h(
        'div',
        { class: C.anScroll },
        h(
            'table',
            { class: [C.table, C.tableCompact], 'aria-label': label },
            h('thead', null, h('tr', null, cs.map((c) => h('th', { scope: 'col', class: c.num ? C.num : null, title: c.title || null }, c.label)))),
            h('tbody', null, rows.map((r) => h('tr', null, r.map((cell, i) => h('td', { class: cs[i] && cs[i].num ? C.num : null }, cell))))),
        ),
    );
}

/**
 * Shows the first n rows of the table in box, and a button for the rest.
 * @param {HTMLElement} box what table() returned
 * @param {number} n
 */
function foldRows(box, n) {
    const rows = [...box.querySelectorAll('tbody tr')];
    if (rows.length <= n) return box;
    for (const r of rows.slice(n)) if (r instanceof HTMLElement) r.hidden = true;
    const btn = h('button', { type: 'button', class: [C.btn, C.btnSm, C.btnGhost] }, `Show all ${rows.length}`);
    btn.addEventListener('click', () => {
        for (const r of rows) if (r instanceof HTMLElement) r.hidden = false;
        btn.remove();
    });
    return h('div', null, box, btn);
}

/**
 * A name from the trace in a clamped cell (full text in the tooltip).
 * @param {string} s
 */
function nameCell(s) {
    return s ? h('div', { class: [C.cellClamp, C.mono], title: s }, s) : h('span', { class: C.muted }, DASH);
}

/**
 * One 100 % bar of parts (values in any unit; the total is their sum
 * unless given).
 * @param {string} label aria-label
 * @param {{part: Part, value: number}[]} segs
 * @param {(v: number) => string} fmt
 * @param {number} [total]
 */
function fullBar(label, segs, fmt, total) {
    const sum = total ?? segs.reduce((a, s) => a + Math.max(0, s.value), 0);
    const shown = sum > 0 ? segs.filter((s) => s.value > 0) : [];
    return hbar(
        label + ': ' + shown.map((s) => `${s.part.label} ${formatPercent(s.value, sum)}`).join(', '),
        shown.map((s) => ({ color: s.part.color, value: s.value, title: `${s.part.label}: ${fmt(s.value)} (${formatPercent(s.value, sum)})` })),
        sum,
    );
}

const HB = { w: 900, left: 150, right: 24, top: 6, row: 20, gap: 6, bottom: 26 };

/**
 * Horizontal stacked bars on one time axis (ns), one row per item.
 * @param {string} label aria-label
 * @param {{label: string, segs: {part: Part, value: number}[]}[]} rows
 */
function stackedBars(label, rows) {
    return barRows({
        label,
        box: HB,
        ticks: 5,
        perUs: 1000,
        fmt: dur,
        class: C.anChart,
        rows: rows.map((r) => ({ label: r.label, segs: r.segs.map((s) => ({ label: s.part.label, color: s.part.color, value: s.value })) })),
    });
}

// --- 1. idle time by cause --------------------------------------------------------------

/** @param {Record<string, any>} o a stream or the totals */
function idleSegs(o) {
    const by = obj(o.host_wait_by);
    return IDLE_PARTS.map((part) => {
        const v = part.key === 'kernel_wait' || part.key === 'other' ? num(o, part.key + '_ns') : num(by, part.key + '_ns');
        return { part, value: v ?? 0 };
    });
}

/** @param {Record<string, any>} o */
function idleSection(o) {
    const streams = arr(o.streams).map(obj);
    if (empty(o) || !streams.length) return null;
    const tot = obj(o.totals);
    const ratios = obj(o.ratios);
    const idle = num(tot, 'idle_ns');
    return [
        h(
            'div',
            { class: C.metrics },
            metric('GPU idle (all streams)', dur(idle), 'Gaps between GPU ops on each stream inside the steps, summed over the streams.'),
            metric('Host wait', withShare(dur(num(tot, 'host_wait_ns')), formatShare(num(ratios, 'host_wait'))), 'The next op’s launch call began after the previous op ended: the host was late.'),
            metric('Kernel wait', withShare(dur(num(tot, 'kernel_wait_ns')), formatShare(num(ratios, 'kernel_wait'))), `Gaps shorter than ${dur(num(o, 'kernel_wait_threshold_ns') ?? 30000)} between queued work.`),
            metric('Other', withShare(dur(num(tot, 'other_ns')), formatShare(num(ratios, 'other'))), 'Waiting on events, other streams or copies.'),
        ),
        stackedBars(
            'Idle time by cause per stream',
            streams.map((s) => ({ label: streamName(s), segs: idleSegs(s) })),
        ),
        legend(IDLE_PARTS),
        table(
            'Idle time per stream',
            [
                'Stream',
                { label: 'Busy', num: true },
                { label: 'Idle', num: true },
                { label: 'Host wait', num: true },
                ...IDLE_PARTS.slice(0, 5).map((p) => ({ label: '· ' + p.label.replace('Host wait: ', ''), num: true, title: p.help })),
                { label: 'Kernel wait', num: true },
                { label: 'Other', num: true },
                { label: 'Gaps', num: true },
            ],
            streams.map((s) => {
                const counts = obj(s.counts);
                const gaps = (num(counts, 'host_wait') ?? 0) + (num(counts, 'kernel_wait') ?? 0) + (num(counts, 'other') ?? 0);
                return [
                    streamCell(s),
                    dur(num(s, 'busy_ns')),
                    dur(num(s, 'idle_ns')),
                    dur(num(s, 'host_wait_ns')),
                    ...IDLE_PARTS.slice(0, 5).map((p) => dur(num(obj(s.host_wait_by), p.key + '_ns'))),
                    dur(num(s, 'kernel_wait_ns')),
                    dur(num(s, 'other_ns')),
                    formatNumber(gaps),
                ];
            }),
        ),
        histogram(obj(o.histogram)),
    ];
}

const HG = { w: 900, h: 200, left: 56, right: 12, top: 10, bottom: 34 };

/**
 * Gap lengths: one stacked column per length bin.
 * @param {Record<string, any>} hg {edges_ns, host_wait, kernel_wait, other}
 */
function histogram(hg) {
    const edges = arr(hg.edges_ns).filter(isNum);
    const nb = edges.length + 1;
    const series = GAP_KINDS.map((k) => ({ part: k, counts: arr(hg[k.key]) }));
    if (!edges.length || !series.some((s) => s.counts.some((c) => c > 0))) return null;
    const totals = Array.from({ length: nb }, (_, i) => series.reduce((a, s) => a + (isNum(s.counts[i]) ? s.counts[i] : 0), 0));
    const max = Math.max(1, ...totals);
    const { ticks } = niceTicks(0, max, 4);
    const y = linearScale(0, ticks[ticks.length - 1], HG.h - HG.bottom, HG.top);
    const bw = (HG.w - HG.left - HG.right) / nb;
    const binLabel = (/** @type {number} */ i) => (i === 0 ? `< ${dur(edges[0])}` : i === nb - 1 ? `≥ ${dur(edges[nb - 2])}` : `${dur(edges[i - 1])} – ${dur(edges[i])}`);
    const every = Math.ceil(nb / 12);
    return h(
        'div',
        null,
        h('h3', { class: C.anSub }, 'Gap lengths'),
        svg(
            'svg',
            { class: [C.chart, C.anChart], viewBox: `0 0 ${HG.w} ${HG.h}`, role: 'img', 'aria-label': 'Histogram of idle gap lengths by kind' },
            ticks.map((t) =>
                svg(
                    'g',
                    null,
                    svg('line', { class: C.gridLine, x1: HG.left, x2: HG.w - HG.right, y1: y.map(t), y2: y.map(t) }),
                    svg('text', { class: C.axis, x: HG.left - 6, y: y.map(t) + 4, 'text-anchor': 'end' }, formatNumber(t)),
                ),
            ),
            totals.map((total, i) => {
                let acc = 0;
                const x0 = HG.left + i * bw;
                return svg(
                    'g',
                    { class: C.bar },
                    svg('title', null, [`${binLabel(i)}: ${plural(total, 'gap')}`, ...series.map((s) => `${s.part.label}: ${formatNumber(isNum(s.counts[i]) ? s.counts[i] : 0)}`)].join('\n')),
                    series.map((s) => {
                        const c = isNum(s.counts[i]) ? s.counts[i] : 0;
                        if (c <= 0) return null;
                        const ya = y.map(acc);
                        acc += c;
                        const yb = y.map(acc);
                        return svg('rect', { x: (x0 + 1).toFixed(2), y: yb.toFixed(2), width: Math.max(0.5, bw - 2).toFixed(2), height: Math.max(0.5, ya - yb).toFixed(2), fill: s.part.color });
                    }),
                    i % every === 0
                        ? svg('text', { class: C.axis, x: (x0 + bw / 2).toFixed(2), y: HG.h - HG.bottom + 14, 'text-anchor': 'middle' }, i === 0 ? `<${dur(edges[0])}` : dur(edges[i - 1]))
                        : null,
                );
            }),
            svg('text', { class: C.axis, x: (HG.left + HG.w - HG.right) / 2, y: HG.h - 4, 'text-anchor': 'middle' }, 'gap length (bin start)'),
        ),
        legend(GAP_KINDS),
    );
}

// --- 2. launch statistics ------------------------------------------------------------------

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
function launchSection(o, ctx) {
    if (empty(o) || !num(o, 'count')) return null;
    const rows = [
        ['CPU time of the launch call', 'cpu_ns'],
        ['GPU time of the op', 'gpu_ns'],
        ['Launch delay (GPU start − call end)', 'delay_ns'],
    ];
    const kOnly = obj(o.kernels_only);
    const outliers = arr(o.outliers).map(obj);
    const rtCut = num(o, 'runtime_cutoff_ns') ?? 50000;
    const dlCut = num(o, 'delay_cutoff_ns') ?? 100000;
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Launches', formatNumber(num(o, 'count')), 'Runtime or driver calls with a GPU op, inside the steps.'),
            metric('Kernels / copies', `${formatNumber(num(o, 'kernels'))} / ${formatNumber(num(o, 'memory'))}`),
            metric('Short kernels', [formatShare(num(o, 'short_share')), h('span', { class: C.muted }, ` (${formatNumber(num(o, 'short_kernels'))})`)], 'Launches whose GPU work is shorter than the call that launched it (call ≤ 50 µs): launch-bound.'),
            metric(`Calls > ${dur(rtCut)}`, formatNumber(num(o, 'runtime_outliers')), 'Launch calls slower than the cutoff.'),
            metric(`Delays > ${dur(dlCut)}`, formatNumber(num(o, 'delay_outliers')), 'GPU start more than the cutoff after the call ended: the queue was full or the GPU busy.'),
        ),
        table(
            'Launch statistics',
            ['', { label: 'Mean', num: true }, { label: 'p50', num: true }, { label: 'p95', num: true }, { label: 'Max', num: true }, { label: 'Total', num: true }, { label: 'p50, kernels only', num: true }, { label: 'p95, kernels only', num: true }],
            rows.map(([label, key]) => {
                const s = obj(o[key]);
                const k = obj(kOnly[key]);
                return [label, dur(num(s, 'mean')), dur(num(s, 'p50')), dur(num(s, 'p95')), dur(num(s, 'max')), dur(num(s, 'total')), dur(num(k, 'p50')), dur(num(k, 'p95'))];
            }),
        ),
        h('h3', { class: C.anSub }, outliers.length ? `Outliers: the ${outliers.length} largest, by excess over their cutoff` : 'Outliers'),
        outliers.length
            ? foldRows(table(
                  'Launch outliers',
                  [{ label: 'At', num: true }, 'Kernel', 'Operator', 'Launch call', { label: 'Call', num: true }, { label: 'Delay', num: true }, { label: 'GPU', num: true }, 'Why', ''],
                  outliers.map((r) => {
                      const ts = num(r, 'ts');
                      const span = (num(r, 'cpu_ns') ?? 0) + (num(r, 'delay_ns') ?? 0) + (num(r, 'gpu_ns') ?? 0);
                      const pad = Math.max(span, 10000);
                      const why = str(r, 'why');
                      return [
                          ts !== null ? formatOffset(ts / 1000, ctx.t0us) : DASH,
                          nameCell(str(r, 'kernel')),
                          nameCell(str(r, 'op')),
                          nameCell(str(r, 'launch')),
                          dur(num(r, 'cpu_ns')),
                          dur(num(r, 'delay_ns')),
                          dur(num(r, 'gpu_ns')),
                          h('span', { class: C.nowrap }, why === 'both' ? 'slow call, late start' : why === 'runtime' ? 'slow call' : why === 'delay' ? 'late start' : why || DASH),
                          ts !== null ? ctx.tl(ts - pad, ts + span + pad, 'timeline') : null,
                      ];
                  }),
              ), 10)
            : h('p', { class: C.muted }, `No launch call slower than ${dur(rtCut)} and no launch delay above ${dur(dlCut)}.`),
    ];
}

// --- 3. queue depth ---------------------------------------------------------------------------

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
function queueSection(o, ctx) {
    const streams = arr(o.streams).map(obj);
    if (empty(o) || !streams.length) return null;
    const limit = num(o, 'limit') ?? 1024;
    const fixes = num(o, 'negative_fixes') ?? 0;
    return [
        table(
            'Queue depth per stream',
            ['Stream', { label: 'Launches', num: true }, { label: 'Max', num: true }, { label: 'Mean', num: true, title: 'Time-weighted over the analysed window' }, { label: 'Median', num: true }, { label: `Time at ${formatNumber(limit)}`, num: true, title: 'CUDA blocks the launching thread while a stream has this many launches queued' }, ''],
            streams.map((s) => [
                streamCell(s),
                formatNumber(num(s, 'launches')),
                formatNumber(num(s, 'max')),
                isNum(s.mean) ? formatNumber(s.mean, 1) : DASH,
                isNum(s.p50) ? formatNumber(s.p50, 1) : DASH,
                [dur(num(s, 'at_limit_ns')), isNum(s.at_limit_share) && s.at_limit_share > 0 ? h('span', { class: C.muted }, ` (${formatShare(s.at_limit_share)})`) : null],
                ctx.tl(ctx.w0, ctx.w1, 'show on timeline'),
            ]),
        ),
        h(
            'p',
            { class: C.muted },
            `Depth: launches queued on the stream and not yet started by the GPU (+1 at the launch call, −1 when the op starts). The timeline shows it as a counter lane per stream, under Counters.`,
            fixes > 0 ? ` ${plural(fixes, 'dip')} below zero (an op starting before its launch call: host and GPU clocks disagree) shown as 0.` : null,
        ),
    ];
}

// --- 4. copy bandwidth ----------------------------------------------------------------------------

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
function copySection(o, ctx) {
    const kinds = arr(o.kinds).map(obj);
    if (empty(o) || !kinds.length) return null;
    const gbps = (/** @type {number | null} */ v) => (v === null ? DASH : `${formatNumber(v, v < 10 ? 2 : 1)} GB/s`);
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Bytes copied or set', formatBytes(num(o, 'total_bytes'))),
            metric('Copy time', dur(num(o, 'busy_ns')), 'Time at least one copy or memset ran, inside the analysed window.'),
        ),
        table(
            'Copy bandwidth by kind',
            ['Kind', 'Host memory', { label: 'Ops', num: true }, { label: 'Bytes', num: true }, { label: 'Time', num: true }, { label: 'Achieved', num: true, title: 'bytes ÷ time of the ops with a known size' }, { label: 'Best op', num: true }, { label: 'Peak', num: true }, { label: 'Share of peak', title: 'Achieved ÷ peak: the host link for HtoD/DtoH, device memory for DtoD and memsets' }],
            kinds.map((k) => {
                const share = num(k, 'share_of_peak');
                return [
                    str(k, 'kind') || DASH,
                    k.pinned === true ? 'pinned' : k.pinned === false ? h('span', { class: [C.badge, C.badgeWarn], title: 'Pageable host memory: the copy is staged and cannot overlap' }, 'pageable') : h('span', { class: C.muted }, DASH),
                    formatNumber(num(k, 'count')),
                    formatBytes(num(k, 'bytes')),
                    dur(num(k, 'busy_ns')),
                    gbps(num(k, 'gbps')),
                    gbps(num(k, 'max_gbps')),
                    num(k, 'peak_gbps') ? gbps(num(k, 'peak_gbps')) : h('span', { class: C.muted, title: 'Unknown for this GPU' }, DASH),
                    share === null ? h('span', { class: C.muted }, DASH) : shareBar(share, 1),
                ];
            }),
        ),
        h('p', { class: C.muted }, 'Bandwidth over time is a counter lane per kind on the timeline (under Counters). ', ctx.tl(ctx.w0, ctx.w1, 'Show on timeline')),
    ];
}

// --- 5. kernel-type overlap --------------------------------------------------------------------------

/**
 * @param {Record<string, any>} o one device's or the rank's figures
 * @param {string} label aria-label
 */
function overlapBar(o, label) {
    const combos = arr(o.combos).map(obj);
    /** @type {{part: Part, value: number}[]} */
    const segs = combos.map((c) => {
        const types = arr(c.types).filter((t) => typeof t === 'string');
        const key = types.join('+');
        return { part: { key, label: types.join(' + ') || '?', color: COMBO_COLORS[key] || '#8c8c8c' }, value: num(c, 'ns') ?? 0 };
    });
    segs.push({ part: { key: 'idle', label: 'No GPU op', color: COMBO_COLORS.idle }, value: num(o, 'idle_ns') ?? 0 });
    return { bar: fullBar(label, segs, dur, num(o, 'window_ns') ?? undefined), segs };
}

/** @param {Record<string, any>} o */
function overlapSection(o) {
    if (empty(o) || !arr(o.combos).length) return null;
    const { bar, segs } = overlapBar(o, 'Kernel types over the window');
    const win = num(o, 'window_ns');
    const busy = segs.filter((x) => x.part.key !== 'idle');
    const busyNs = busy.reduce((a, x) => a + x.value, 0);
    const devices = arr(o.devices).map(obj);
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Compute', withShare(dur(num(o, 'compute_ns')), formatPercent(num(o, 'compute_ns'), win)), 'Time at least one compute kernel ran.'),
            metric('Communication', withShare(dur(num(o, 'communication_ns')), formatPercent(num(o, 'communication_ns'), win)), 'Time at least one communication kernel ran.'),
            metric('Memory', withShare(dur(num(o, 'memory_ns')), formatPercent(num(o, 'memory_ns'), win)), 'Time at least one memcpy or memset ran.'),
            metric('Comm. overlapped with compute', formatShare(num(o, 'comm_overlap_ratio')), 'Time compute and communication both run ÷ communication time (HTA’s comp_comm_overlap). Dash: no communication.'),
        ),
        h('h3', { class: C.anSub }, `Whole window (${dur(win)})`),
        bar,
        busyNs > 0 ? [h('h3', { class: C.anSub }, `GPU busy time only (${dur(busyNs)})`), fullBar('Kernel types while the GPU is busy', busy, dur)] : null,
        legend(segs.map((s) => s.part)),
        table(
            'Kernel-type combinations',
            ['Active types', { label: 'Time', num: true }, { label: 'Share of window', num: true }],
            segs.map((s) => [[swatch(s.part.color), s.part.label], dur(s.value), formatPercent(s.value, win)]),
        ),
        devices.length > 1
            ? devices.map((d) => h('div', null, h('h3', { class: C.anSub }, `GPU ${num(d, 'device') ?? '?'}`), overlapBar(d, `Kernel types on GPU ${num(d, 'device') ?? '?'}`).bar))
            : null,
    ];
}

// --- 6. annotations ----------------------------------------------------------------------------------

const ANNOT_SOURCES = /** @type {Record<string, string>} */ ({ record_function: 'record_function', module: 'nn.Module', gpu_annotation: 'GPU annotation' });

/** @param {Record<string, any>} o */
function annotationsSection(o) {
    const rows = arr(o.items).map(obj);
    const gpuAnn = arr(o.gpu_annotations).map(obj);
    if (empty(o) || (!rows.length && !gpuAnn.length)) return null;
    const total = num(o, 'total_ns');
    const TOP = 25;
    return [
        h(
            'div',
            { class: C.metrics },
            metric('GPU time attributed', withShare(dur(num(o, 'attributed_ns')), formatPercent(num(o, 'attributed_ns'), total)), 'GPU ops whose launch lies under an annotation (innermost wins), or that run inside a GPU annotation.'),
            metric('Under no annotation', withShare(dur(num(o, 'unattributed_ns')), formatPercent(num(o, 'unattributed_ns'), total))),
            metric('GPU op time', dur(total), 'Sum of the durations of every GPU op starting in the window (concurrent streams both count).'),
        ),
        rows.length
            ? table(
                  `Top annotations by GPU time`,
                  ['Annotation', 'Source', { label: 'GPU time', num: true }, 'Share of GPU time', { label: 'Ops', num: true }, { label: 'Launch calls', num: true }],
                  rows.slice(0, TOP).map((r) => {
                      const g = num(r, 'gpu_ns');
                      return [nameCell(str(r, 'name')), ANNOT_SOURCES[str(r, 'source')] || str(r, 'source') || DASH, dur(g), total ? shareBar(g, total) : DASH, formatNumber(num(r, 'ops')), formatNumber(num(r, 'calls'))];
                  }),
              )
            : h('p', { class: C.muted }, 'No GPU op runs under an annotation.'),
        rows.length > TOP ? h('p', { class: C.muted }, `The ${TOP} largest of ${formatNumber(rows.length)} are listed.`) : null,
        gpuAnn.length
            ? [
                  h('h3', { class: C.anSub }, 'GPU annotation ranges (gpu_user_annotation)'),
                  table(
                      'GPU annotation ranges',
                      ['Name', { label: 'Count', num: true }, { label: 'Total', num: true }, { label: 'Mean', num: true }, { label: 'Min', num: true }, { label: 'Max', num: true }],
                      gpuAnn.slice(0, 10).map((r) => [nameCell(str(r, 'name')), formatNumber(num(r, 'count')), dur(num(r, 'sum_ns')), dur(num(r, 'mean_ns')), dur(num(r, 'min_ns')), dur(num(r, 'max_ns'))]),
                  ),
              ]
            : null,
    ];
}

// --- 7. fusion candidates ----------------------------------------------------------------------------

/** @param {Record<string, any>} o */
function fusionSection(o) {
    const rows = arr(o.items).map(obj);
    if (empty(o)) return null;
    const names = (/** @type {unknown} */ x) => arr(x).filter((k) => typeof k === 'string');
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Candidates', formatNumber(num(o, 'candidates') ?? rows.length), 'Operator → kernel patterns that pay one launch per short kernel.'),
            metric('Estimated saving', dur(num(o, 'saving_ns') ?? 0), '(kernels per call − 1) × instances × the cost of one launch, summed over the candidates.'),
        ),
        str(o, 'advice') ? h('p', null, str(o, 'advice')) : null,
        !rows.length ? (str(o, 'advice') ? null : h('p', { class: C.muted }, 'No operator launches a run of short kernels worth fusing.')) : table(
            'Fusion candidates',
            ['Kind', 'Operators', 'Kernels launched', { label: 'Count', num: true }, { label: 'Kernels each', num: true }, { label: 'Mean kernel', num: true }, { label: 'GPU time', num: true }, { label: 'Launch calls', num: true }, { label: 'Saving', num: true, title: 'Launch overhead that fusing the kernels into one could save' }],
            rows.map((r) => {
                const ops = names(r.ops);
                const ks = names(r.kernels);
                return [
                    str(r, 'kind') === 'chain' ? h('span', { title: 'Consecutive operators each launching one short elementwise kernel' }, 'chain') : str(r, 'kind') || DASH,
                    h('div', { class: [C.cellClamp, C.mono], title: ops.join('\n') }, ops.join(' → ') || DASH),
                    h('div', { class: [C.cellClamp, C.mono], title: ks.join('\n') }, ks.join(' → ') || DASH),
                    formatNumber(num(r, 'count')),
                    formatNumber(num(r, 'kernels_per_call')),
                    dur(num(r, 'mean_kernel_ns')),
                    dur(num(r, 'gpu_ns')),
                    dur(num(r, 'launch_ns')),
                    dur(num(r, 'saving_ns')),
                ];
            }),
        ),
    ];
}

// --- 8. critical path ----------------------------------------------------------------------------------

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
function critpathSection(o, ctx) {
    const steps = arr(o.steps).map(obj);
    if (empty(o) || !steps.length) return null;
    const parts = Object.values(CP_PARTS);
    /** @param {Record<string, any>} s */
    const byCat = (s) => {
        const b = obj(s.by);
        return parts.map((part) => ({ part, value: num(b, part.key + '_ns') ?? 0 }));
    };
    const label = (/** @type {Record<string, any>} */ s, /** @type {number} */ i) => str(s, 'name') || `step ${num(s, 'idx') ?? i}`;
    const shares = obj(o.shares);
    const bound = str(o, 'bound_by');
    return [
        bound
            ? h(
                  'p',
                  null,
                  'Over all steps the critical path is bound by ',
                  h('strong', null, (CP_PARTS[bound] || { label: bound }).label),
                  ` (${formatShare(num(shares, bound))} of the steps’ time). Each nanosecond of a step lies on one segment of the path, so the categories add up to the step.`,
              )
            : null,
        stackedBars('Critical path of each step by category', steps.map((s, i) => ({ label: label(s, i), segs: byCat(s) }))),
        legend(parts),
        table(
            'Critical path per step',
            ['Step', { label: 'Duration', num: true }, ...parts.map((p) => ({ label: p.label, num: true, title: p.help })), 'Bound by', ''],
            steps.map((s, i) => {
                const ts = num(s, 'ts');
                const d = num(s, 'dur');
                const segs = byCat(s);
                const total = d ?? segs.reduce((a, x) => a + x.value, 0);
                const b = str(s, 'bound_by');
                return [
                    [label(s, i), s.truncated === true ? h('span', { class: C.muted, title: 'The path has more segments than are stored: the timeline shows its first part' }, ' (truncated)') : null],
                    dur(d),
                    ...segs.map((x) => withShare(dur(x.value), formatPercent(x.value, total))),
                    b ? (CP_PARTS[b] || { label: b }).label : DASH,
                    ctx.tl(ts, ts !== null && d !== null ? ts + d : null, 'show on timeline', true),
                ];
            }),
        ),
    ];
}
