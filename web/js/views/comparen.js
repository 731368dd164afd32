// @ts-check
/**
 * views/comparen.js — three to eight runs side by side: `./?compare=A,B,C`
 * (see router.js; two ids are views/compare.js), from one GET
 * ./api/compare, whose per-run figures are the two-run compare's.
 *
 * Top to bottom: the title with the rank read of every run; a table with a
 * column per run (name linking to the run, date, id, its role: the
 * baseline, or a button making it the baseline and a link to the two-run
 * compare against it) and a row per figure (GPU, ranks, steps, average
 * step, each category of the step, kernel time, GPU utilization,
 * tensor-core share, peak memory), every figure of a non-baseline run with
 * its change against the baseline; the average steps as stacked bars on
 * one scale; then every pair as a speedup matrix whose cells open the
 * two-run compare of that pair.
 *
 * The id list is checked here before any request (count, form,
 * duplicates) with the same rules as the server's, so a bad link says what
 * is wrong without a round trip; unknown or damaged runs come back as the
 * server's error. Every choice (baseline, rank) is in the URL.
 *
 * Lifetime: mount() builds the page and subscribes to the store; a route
 * that changes only the baseline re-renders without a request; unmount()
 * aborts the request.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { categoryInfo, stackBreakdown } from '../charts.js';
import { bdi, bidiText, h, replace, setTitle } from '../dom.js';
import { DASH, formatBytes, formatDate, formatMicros, formatNumber, formatShare } from '../format.js';
import { RANK_RE, intParam, stringParam } from '../params.js';
import { buildUrl, navigate, routeAs } from '../router.js';
import { hbar, legend } from '../tabs.js';
import { deltaSpan, showCompareError, speedupText } from './compare.js';

/** @typedef {import('../apitypes.js').CompareN} CompareN */
/** @typedef {import('../apitypes.js').CompareRun} CompareRun */
/** @typedef {import('../router.js').CompareNRoute} Route */
/** @typedef {import('../state.js').AppStore} AppStore */

/** The most runs one page compares (the server's COMPARE_MAX_RUNS). */
export const COMPARE_MAX = 8;

const RUN_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * This page's URL parameters (after compare=A,B,C): the baseline run (""
 * = the first) and the rank read of every run (null = each run's lowest).
 */
export const params = Object.freeze({
    base: stringParam('base', { re: RUN_ID_RE }),
    rank: intParam('rank', RANK_RE, null),
});

/**
 * What is wrong with a list of run ids for this page, or null: the
 * server's rules (3 here, since two ids are the two-run page; at most
 * COMPARE_MAX; well-formed; distinct).
 * @param {string[]} ids
 * @returns {string | null}
 */
export function idsProblem(ids) {
    if (ids.length > COMPARE_MAX) return `${ids.length} runs asked for: at most ${COMPARE_MAX} runs can be compared side by side.`;
    if (ids.length < 3) return 'Name at least three runs (two runs open the two-run compare).';
    const bad = ids.find((x) => !RUN_ID_RE.test(x));
    if (bad !== undefined) return `"${bad.slice(0, 64)}" is not a run id.`;
    const dup = ids.find((x, i) => ids.indexOf(x) !== i);
    if (dup !== undefined) return `Run ${dup} is named twice.`;
    return null;
}

/**
 * Index of the baseline: the run whose id is `base`, else the first.
 * @param {{id: string}[]} runs
 * @param {string} base
 */
export function baselineIndex(runs, base) {
    const i = runs.findIndex((r) => r.id === base);
    return i < 0 ? 0 : i;
}

/**
 * A share's change in percentage points, "(+12.3 pts)", or null when
 * either is unknown or the change is under 0.05 pts.
 * @param {number | null | undefined} v
 * @param {number | null | undefined} b
 * @returns {string | null}
 */
export function pointsText(v, b) {
    if (typeof v !== 'number' || typeof b !== 'number') return null;
    const d = (v - b) * 100;
    if (Math.abs(d) < 0.05) return null;
    return `(${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} pts)`;
}

/**
 * A byte count's change, "+1.5 GB" / "−200 MB", or null when unknown or 0.
 * @param {number | null | undefined} v
 * @param {number | null | undefined} b
 * @returns {string | null}
 */
export function bytesDelta(v, b) {
    if (typeof v !== 'number' || typeof b !== 'number' || v === b) return null;
    return (v > b ? '+' : '−') + formatBytes(Math.abs(v - b));
}

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    active = createCompareN(root, store);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
function createCompareN(root, store) {
    const head = h('div', { class: C.pageHead }, h('h1', { class: C.title }, 'Compare runs'));
    const body = h('div', null, h('p', { class: [C.muted, C.loading] }, 'Comparing…'));
    replace(root, h('div', { class: [C.page, C.cmp], dataset: { view: 'comparen' } }, head, body));

    /** @type {AbortController | null} */
    let ctrl = null;
    let loadKey = '';
    /** @type {CompareN | null} */
    let data = null;

    /** @param {string} msg */
    const fail = (msg) => {
        data = null;
        showCompareError(head, body, msg, 'the runs to compare');
    };

    async function load() {
        const r = routeAs(store.get().route, 'comparen');
        if (ctrl) ctrl.abort();
        const problem = idsProblem(r.runs);
        if (problem) {
            ctrl = null;
            fail(problem);
            return;
        }
        const mine = new AbortController();
        ctrl = mine;
        try {
            const d = await api.getCompare({ runs: r.runs.join(','), rank: r.rank }, mine.signal);
            if (ctrl !== mine) return;
            data = d;
            render();
        } catch (e) {
            if (ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            fail(e instanceof Error ? e.message : String(e));
        }
    }

    function render() {
        if (!data) return;
        const r = routeAs(store.get().route, 'comparen');
        const bi = baselineIndex(data.runs, r.base);
        setTitle(data.runs.map((x) => bidiText(x.name || x.id)).join(' vs '), 'Compare');
        replace(head, header(data, r));
        replace(body, figuresTable(data, bi, r), barsCard(data, bi), pairsCard(data));
    }

    function update() {
        const r = routeAs(store.get().route, 'comparen');
        if (r.view !== 'comparen') return;
        const key = JSON.stringify([r.runs, r.rank]);
        if (key !== loadKey) {
            loadKey = key;
            load();
        } else render();
    }
    const unsubscribe = store.subscribe(update);
    update();
    // what stays: the store subscription and a request in flight
    return { destroy: () => (unsubscribe(), ctrl && ctrl.abort()) };
}

/**
 * Title, the rank read of every run, a way back to pick runs.
 * @param {CompareN} d
 * @param {Route} r
 */
function header(d, r) {
    const ranks = [...new Set(d.runs.flatMap((x) => x.ranks))].sort((a, b) => a - b);
    /** @type {import('../dom.js').Child} */
    let rankSel = null;
    if (ranks.length > 1) {
        const sel = h(
            'select',
            { class: C.select, 'aria-label': 'Rank of every run' },
            h('option', { value: '', selected: r.rank === null }, 'each run\u2019s lowest rank'),
            ranks.map((k) => h('option', { value: String(k), selected: k === r.rank }, `rank ${k}`)),
        );
        sel.addEventListener('change', () => navigate({ ...r, rank: sel.value === '' ? null : Number(sel.value) }, { replace: true }));
        rankSel = h('label', { class: C.field }, h('span', { class: C.label }, 'Rank'), sel);
    }
    return [
        h('h1', { class: C.title }, `Compare ${d.runs.length} runs`),
        h(
            'div',
            { class: [C.toolbar, C.cmpPair] },
            h('span', { class: C.muted }, 'Changes are against the baseline; per step unless said otherwise.'),
            rankSel,
            h('span', { class: C.spacer }),
            h('a', { class: [C.btn, C.btnSm], href: buildUrl({ view: 'runs' }), title: 'Pick other runs' }, 'Other runs…'),
        ),
    ];
}

/**
 * One change, coloured like the two-run page's, or muted text.
 * @param {string | null} text
 */
const muted = (text) => (text ? h('span', { class: [C.cmpDelta, C.muted] }, text) : null);

/**
 * The figures, a column per run.
 * @param {CompareN} d
 * @param {number} bi baseline index
 * @param {Route} r
 */
function figuresTable(d, bi, r) {
    const base = d.runs[bi];
    const cats = d.categories;
    /**
     * A row of figures: label, then per run its value and (not the
     * baseline) its change.
     * @param {string} label
     * @param {(s: CompareRun) => import('../dom.js').Child} value
     * @param {((s: CompareRun) => import('../dom.js').Child) | null} [delta]
     * @param {Record<string, string>} [data]
     * @param {string | null} [help]
     */
    const row = (label, value, delta = null, data = {}, help = null) =>
        h(
            'tr',
            { dataset: data },
            h('th', { scope: 'row', title: help, class: help ? C.help : null }, label),
            d.runs.map((s, i) => h('td', { class: C.num }, value(s), delta && i !== bi ? [' ', delta(s)] : null)),
        );
    const colHead = d.runs.map((s, i) =>
        h(
            'th',
            { scope: 'col', class: C.num, dataset: { run: s.id } },
            h('a', { href: buildUrl({ view: 'run', run: s.id, rank: s.ranks.length > 1 ? s.rank : null }) }, bdi(s.name || s.id)),
            h('div', { class: C.muted }, formatDate(s.created), ' · ', h('span', { class: C.mono }, s.id.slice(0, 8))),
            h(
                'div',
                null,
                i === bi
                    ? h('span', { class: [C.badge, C.badgeNeutral] }, 'baseline')
                    : [
                          h('a', { class: [C.btn, C.btnSm], href: buildUrl({ ...r, base: i === 0 ? '' : s.id }), title: 'Compare every run with this one', dataset: { action: 'baseline' } }, 'Make baseline'),
                          ' ',
                          h('a', { href: buildUrl({ view: 'compare', a: base.id, b: s.id }), title: 'This run against the baseline, kernel by kernel', dataset: { action: 'pair' } }, 'vs baseline'),
                      ],
            ),
        ),
    );
    const dev = (/** @type {CompareRun} */ s) => (s.device ? [bdi(s.device.name || 'GPU'), s.device.compute_capability ? ` (cc ${s.device.compute_capability})` : ''] : 'no GPU activity');
    return h(
        'article',
        { class: [C.card, C.cmpBreak] },
        h(
            'div',
            { class: C.cmpnScroll },
            h(
                'table',
                { class: [C.table, C.tableCompact, C.cmpnTable], 'aria-label': 'Runs compared' },
                h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Figure'), colHead)),
                h(
                    'tbody',
                    null,
                    row('GPU', dev, null, { fig: 'gpu' }),
                    row('Rank', (s) => `${s.rank} of ${s.ranks.length}`, null, { fig: 'rank' }),
                    row('Steps', (s) => formatNumber(s.steps), null, { fig: 'steps' }),
                    h(
                        'tr',
                        { class: C.rowTotal, dataset: { fig: 'step' } },
                        h('th', { scope: 'row' }, 'Average step'),
                        d.runs.map((s, i) =>
                            h(
                                'td',
                                { class: C.num },
                                formatMicros(s.average.dur_us),
                                i !== bi ? [' ', deltaSpan(s.average.dur_us - base.average.dur_us), h('div', { class: C.muted, dataset: { speedup: '' } }, speedupText(base.average.dur_us > 0 && s.average.dur_us > 0 ? base.average.dur_us / s.average.dur_us : null))] : null,
                            ),
                        ),
                    ),
                    cats.map((k) => {
                        const info = categoryInfo(k);
                        return row(
                            '\u2003' + info.label,
                            (s) => formatMicros(s.average.breakdown_us[k]),
                            (s) => deltaSpan((s.average.breakdown_us[k] ?? 0) - (base.average.breakdown_us[k] ?? 0)),
                            { fig: 'cat', category: k },
                            info.help,
                        );
                    }),
                    row('Kernel time per step', (s) => formatMicros(s.kernel_us), (s) => deltaSpan(s.kernel_us - base.kernel_us), { fig: 'kernel' }),
                    row('GPU utilization', (s) => formatShare(s.gpu_utilization), (s) => muted(pointsText(s.gpu_utilization, base.gpu_utilization)), { fig: 'util' }),
                    row('Tensor-core share', (s) => formatShare(s.tensor_core_share), (s) => muted(pointsText(s.tensor_core_share, base.tensor_core_share)), { fig: 'tc' }),
                    row('Peak memory', (s) => (typeof s.peak_memory_bytes === 'number' ? formatBytes(s.peak_memory_bytes) : DASH), (s) => muted(bytesDelta(s.peak_memory_bytes, base.peak_memory_bytes)), { fig: 'peak' }),
                ),
            ),
        ),
    );
}

/**
 * Every run's average step as a stacked bar, all on one scale.
 * @param {CompareN} d
 * @param {number} bi
 */
function barsCard(d, bi) {
    const max = Math.max(0, ...d.runs.map((s) => s.average.dur_us));
    if (!(max > 0)) return null;
    const cats = d.categories;
    return h(
        'article',
        { class: [C.card, C.cardPad, C.cmpBreak] },
        h('h2', { class: C.sectionTitle }, 'Average step by category'),
        legend(cats.map((k) => ({ label: categoryInfo(k).label, color: categoryInfo(k).color, help: categoryInfo(k).help }))),
        h(
            'div',
            { class: C.cmpBars },
            d.runs.map((s, i) => {
                const segs = stackBreakdown(s.average.breakdown_us, cats).map((g) => {
                    const info = categoryInfo(g.key);
                    return { color: info.color, value: g.value, title: `${info.label}: ${formatMicros(g.value)}` };
                });
                return h(
                    'div',
                    { class: [C.cmpBarRow, C.cmpnBarRow], dataset: { run: s.id } },
                    h('span', { class: [C.cmpBarLabel, C.cmpnLabel], title: s.name || s.id }, bdi(s.name || s.id), i === bi ? h('span', { class: C.muted }, ' (baseline)') : null),
                    hbar(`${s.name || s.id}: average step ${formatMicros(s.average.dur_us)}`, segs, max, C.cmpHbar),
                    h('span', { class: [C.num, C.muted] }, formatMicros(s.average.dur_us)),
                );
            }),
        ),
    );
}

/**
 * Every pair: row run's average step over column run's (above 1: the
 * column run is faster), each cell a link to that pair's two-run compare
 * (row = A, the baseline there).
 * @param {CompareN} d
 */
function pairsCard(d) {
    const name = (/** @type {CompareRun} */ s) => bdi(s.name || s.id);
    return h(
        'article',
        { class: [C.card, C.cardPad] },
        h('h2', { class: C.sectionTitle }, 'Every pair'),
        h('p', { class: C.muted }, 'Each cell opens the two-run compare, kernel by kernel: the row\u2019s run is the baseline A, the column\u2019s is B.'),
        h(
            'div',
            { class: C.cmpnScroll },
            h(
                'table',
                { class: [C.table, C.tableCompact, C.cmpnTable], 'aria-label': 'Pairs compared' },
                h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'A \\ B'), d.runs.map((s) => h('th', { scope: 'col', class: C.num }, name(s))))),
                h(
                    'tbody',
                    null,
                    d.runs.map((a) =>
                        h(
                            'tr',
                            null,
                            h('th', { scope: 'row' }, name(a)),
                            d.runs.map((b) => {
                                if (a.id === b.id) return h('td', { class: [C.num, C.muted] }, DASH);
                                const sp = a.average.dur_us > 0 && b.average.dur_us > 0 ? a.average.dur_us / b.average.dur_us : null;
                                return h(
                                    'td',
                                    { class: C.num },
                                    h('a', { href: buildUrl({ view: 'compare', a: a.id, b: b.id }), dataset: { pair: `${a.id},${b.id}` }, title: 'B against A' }, speedupText(sp)),
                                );
                            }),
                        ),
                    ),
                ),
            ),
        ),
    );
}
