// @ts-check
/**
 * views/compare.js — two runs (or two ranks of one run) compared:
 * `./?compare=A,B` (see router.js), from GET ./api/diff and
 * ./api/diff/kernels|operators. A is the baseline, B the changed run.
 *
 * Top to bottom: the two runs (links, rank selectors, swap); the speedup of
 * the average step; a card per run with its device and figures, B's with
 * the change against A; the average step by category for both with the
 * deltas (a diverging bar per category, two stacked bars on one scale);
 * then the kernel or operator table joined by name (kernels optionally by
 * family), with status filters (added / removed / faster / slower / same
 * and their counts), per step or whole trace, search, sort, paging and CSV
 * on the server (table.js). Every choice is in the URL, so a link shares
 * the exact comparison.
 *
 * Lifetime: mount() builds the page and subscribes to the store; a route
 * that changes only ranks reloads the overview, one that changes the table
 * state only re-queries the table. unmount() aborts requests.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { categoryInfo, stackBreakdown } from '../charts.js';
import { alertBox, bdi, bidiText, h, replace, setTitle } from '../dom.js';
import { DASH, formatBytes, formatDate, formatMicros, formatNumber, formatShare, plural } from '../format.js';
import { OFFSET_RE, ORDERS, RANK_RE, enumParam, intParam, stringParam } from '../params.js';
import { buildUrl, navigate, routeAs } from '../router.js';
import { createTable } from '../table.js';
import { hbar, swatch } from '../tabs.js';

/** @typedef {import('../apitypes.js').Diff} Diff */
/** @typedef {import('../apitypes.js').DiffSide} DiffSide */
/** @typedef {import('../apitypes.js').DiffRow} DiffRow */
/** @typedef {import('../apitypes.js').DiffPage} DiffPage */
/** @typedef {import('../router.js').CompareRoute} Route */
/** @typedef {import('../state.js').AppStore} AppStore */
/** @typedef {import('../table.js').Column<DiffRow>} Column */

/** Row statuses of the compare tables (the diff API's names), in order. */
export const COMPARE_STATUSES = Object.freeze(['added', 'removed', 'faster', 'slower', 'same']);

/** Sort keys of the compare tables (the diff API's names). */
export const COMPARE_SORTS = Object.freeze(['change', 'delta', 'ratio', 'name', 'a_time', 'b_time', 'a_calls', 'b_calls', 'status']);

/**
 * A status filter in canonical form: known names only, deduplicated, in
 * COMPARE_STATUSES order; "" when it names all of them or none.
 * @param {string} s "slower,added,bogus"
 * @returns {string} "added,slower"
 */
export function parseStatuses(s) {
    const want = new Set(s.split(','));
    const kept = COMPARE_STATUSES.filter((k) => want.has(k));
    return kept.length === COMPARE_STATUSES.length ? '' : kept.join(',');
}

/**
 * This page's URL parameters (after compare=A,B), in URL order: the rank
 * of A and of B (null = each run's lowest), the table shown, the statuses
 * shown ("" = all), grouping by kernel family (kernels only), per step or
 * whole trace ("total"), then the table's search, sort, direction, first row.
 */
export const params = Object.freeze({
    rankA: intParam('rank_a', RANK_RE, null),
    rankB: intParam('rank_b', RANK_RE, null),
    ctable: enumParam('table', /** @type {const} */ (['operators']), 'kernels'),
    status: /** @type {import('../params.js').Param<string>} */ ({
        key: 'status',
        type: 'list',
        default: '',
        parse: (raw) => parseStatuses(raw || ''),
        serialize: (v) => parseStatuses(v) || null,
    }),
    group: /** @type {import('../params.js').Param<string>} */ ({
        key: 'group',
        type: 'enum',
        default: '',
        parse: (raw, p) => (raw === 'family' && p.get('table') !== 'operators' ? raw : undefined),
        serialize: (v, r) => (v === 'family' && r.ctable !== 'operators' ? v : null),
    }),
    per: enumParam('per', /** @type {const} */ (['total']), ''),
    q: stringParam('q'),
    sort: enumParam('sort', COMPARE_SORTS, ''),
    order: enumParam('order', ORDERS, ''),
    offset: intParam('offset', OFFSET_RE, 0),
});

/** Badge class and tooltip of each row status. */
const STATUS_INFO = Object.freeze({
    added: { cls: C.badgeInfo, help: 'Only in B' },
    removed: { cls: C.badgeWarn, help: 'Only in A' },
    faster: { cls: C.badgeOk, help: 'Less time in B (beyond the threshold)' },
    slower: { cls: C.badgeError, help: 'More time in B (beyond the threshold)' },
    same: { cls: C.badgeNeutral, help: 'Within the threshold' },
});

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    active = createCompare(root, store);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * "3.05× faster" / "1.61× slower" / "same speed" for a speedup A/B.
 * @param {number | null | undefined} s
 * @returns {string}
 */
export function speedupText(s) {
    if (typeof s !== 'number' || !(s > 0)) return DASH;
    if (Math.abs(s - 1) < 0.005) return 'same speed';
    return s > 1 ? `${s.toFixed(2)}× faster` : `${(1 / s).toFixed(2)}× slower`;
}

/**
 * The sentence under the speedup.
 * @param {number | null | undefined} s
 * @returns {string}
 */
function speedupNote(s) {
    const t = speedupText(s);
    if (t === DASH) return 'a run without steps: no average step to compare';
    if (t === 'same speed') return 'B runs at the same speed as A';
    return `B is ${t} than A`;
}

/**
 * A signed duration: "+1.20 ms", "−350 µs", "0 µs".
 * @param {number | null | undefined} us
 * @returns {string}
 */
function signedMicros(us) {
    if (typeof us !== 'number') return DASH;
    if (Math.abs(us) < 0.0005) return '0 µs';
    return (us > 0 ? '+' : '−') + formatMicros(Math.abs(us));
}

/**
 * A change of a time: coloured good (less) or bad (more) from 1 µs on.
 * @param {number | null | undefined} us
 * @param {string} [status] a table row's status ("same" is never coloured)
 */
export function deltaSpan(us, status = '') {
    // under 1 µs, or a row within the threshold, is noise: not coloured
    const cls = typeof us === 'number' && Math.abs(us) >= 1 && status !== 'same' ? (us < 0 ? C.cmpGood : C.cmpBad) : C.muted;
    return h('span', { class: [C.cmpDelta, cls] }, signedMicros(us));
}

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
function createCompare(root, store) {
    const head = h('div', { class: C.pageHead });
    const body = h('div', null, h('p', { class: [C.muted, C.loading] }, 'Comparing…'));
    const tableBox = h('section', { class: C.section });
    replace(root, h('div', { class: [C.page, C.cmp] }, head, body, tableBox));

    /** @type {AbortController | null} */
    let ctrl = null;
    let overviewKey = '';
    /** @type {Diff | null} */
    let diff = null;
    /** @type {{kind: string, table: {el: HTMLElement, set: (q: import('../table.js').TableQuery, p: import('../api.js').Params) => void, destroy: () => void}, refresh: () => void} | null} */
    let tbl = null;

    /** @param {Partial<Route>} patch */
    const go = (patch) => navigate({ ...routeAs(store.get().route, 'compare'), ...patch }, { replace: true });

    /** @param {Route} r */
    const pairParams = (r) => ({ a: r.a, b: r.b, rank_a: r.rankA, rank_b: r.rankB });

    async function loadOverview() {
        const r = routeAs(store.get().route, 'compare');
        if (ctrl) ctrl.abort();
        const mine = new AbortController();
        ctrl = mine;
        try {
            const d = await api.getDiff(pairParams(r), mine.signal);
            if (ctrl !== mine) return;
            diff = d;
            setTitle(`${bidiText(d.a.name)} vs ${bidiText(d.b.name)}`, 'Compare'); // each name isolated too
            replace(head, header(d, routeAs(store.get().route, 'compare')));
            replace(body, overview(d));
        } catch (e) {
            if (ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            diff = null;
            showCompareError(head, body, e instanceof Error ? e.message : String(e), 'two runs');
            replace(tableBox);
            if (tbl) tbl.table.destroy();
            tbl = null;
        }
    }

    /** The table of the route's kind (rebuilt when the kind changes). */
    function ensureTable() {
        const r = routeAs(store.get().route, 'compare');
        if (tbl && tbl.kind === r.ctable) return tbl;
        if (tbl) tbl.table.destroy();
        const kind = r.ctable;
        const isK = kind === 'kernels';
        const group = h(
            'select',
            { class: C.select, 'aria-label': 'Join kernels by', hidden: !isK },
            h('option', { value: '' }, 'Kernel name'),
            h('option', { value: 'family' }, 'Kernel family'),
        );
        group.addEventListener('change', () => go({ group: group.value, offset: 0 }));
        const per = h('select', { class: C.select, 'aria-label': 'Figures' }, h('option', { value: '' }, 'Per step'), h('option', { value: 'total' }, 'Whole trace'));
        per.addEventListener('change', () => go({ per: /** @type {'' | 'total'} */ (per.value), offset: 0 }));
        const chips = h('div', { class: C.cmpFilter, role: 'group', 'aria-label': 'Show rows that are' });
        /** @type {DiffPage | null} */
        let last = null;
        const drawChips = () => {
            const rr = routeAs(store.get().route, 'compare');
            const on = rr.status ? rr.status.split(',') : [];
            const counts = last ? last.counts : null;
            replace(
                chips,
                COMPARE_STATUSES.map((s) => {
                    const pressed = on.includes(s);
                    const info = STATUS_INFO[/** @type {keyof typeof STATUS_INFO} */ (s)];
                    return h(
                        'button',
                        {
                            type: 'button',
                            class: [C.btn, C.btnSm, C.cmpChip],
                            'aria-pressed': pressed ? 'true' : 'false',
                            title: info.help + (pressed ? ' (click to show every status)' : ''),
                            dataset: { status: s },
                            on: {
                                click: () => {
                                    const next = pressed ? on.filter((x) => x !== s) : [...on, s];
                                    go({ status: parseStatuses(next.join(',')), offset: 0 });
                                },
                            },
                        },
                        h('span', { class: [C.badge, info.cls] }, s),
                        counts ? ' ' + formatNumber(counts[/** @type {keyof typeof counts} */ (s)]) : null,
                    );
                }),
            );
        };
        const tabBtn = (/** @type {'kernels' | 'operators'} */ k, /** @type {string} */ label) =>
            h(
                'button',
                {
                    type: 'button',
                    class: [C.tab, k === kind && C.tabActive],
                    'aria-pressed': k === kind ? 'true' : 'false',
                    dataset: { table: k },
                    on: { click: () => k !== kind && go({ ctable: k, group: '', sort: '', order: '', offset: 0, q: '' }) },
                },
                label,
            );
        /** @type {import('../table.js').TableOptions<DiffRow, import('../apitypes.js').DiffPage>} */
        const opts = {
            label: isK ? 'Kernels compared' : 'Operators compared',
            noun: isK ? 'kernel' : 'operator',
            placeholder: isK ? 'Filter kernels' : 'Filter operators',
            controls: [
                h('label', { class: C.field, hidden: !isK }, h('span', { class: C.label }, 'Join by'), group),
                h('label', { class: C.field }, h('span', { class: C.label }, 'Figures'), per),
                chips,
            ],
            columns: (p) => columns(isK, p),
            defaultSort: () => 'change',
            load: (params, signal) => api.getDiffTable(kind, params, signal),
            csvUrl: (params) => api.diffUrl(kind, params),
            onQuery: (patch) => go(patch),
            summary: (p) =>
                h(
                    'span',
                    null,
                    `${p.per === 'step' ? 'Per step' : 'Whole trace'} · ${isK ? 'kernel time' : p.metric === 'device_self' ? 'device self time' : 'host self time'} · A = `,
                    bdi(p.a.name),
                    ` (rank ${p.a.rank}), B = `,
                    bdi(p.b.name),
                    ` (rank ${p.b.rank}) · faster/slower beyond ±5 % and 1 µs`,
                ),
            onPage: (p) => {
                last = p;
                drawChips();
            },
        };
        const table = createTable(opts);
        replace(
            tableBox,
            h('div', { class: C.tabs, role: 'group', 'aria-label': 'Table' }, tabBtn('kernels', 'Kernels'), tabBtn('operators', 'Operators')),
            table.el,
        );
        drawChips();
        tbl = {
            kind,
            table,
            refresh: () => {
                const rr = routeAs(store.get().route, 'compare');
                group.value = rr.group === 'family' ? 'family' : '';
                per.value = rr.per;
                drawChips();
            },
        };
        return tbl;
    }

    function update() {
        const r = routeAs(store.get().route, 'compare');
        if (r.view !== 'compare') return;
        const key = JSON.stringify(pairParams(r));
        if (key !== overviewKey) {
            overviewKey = key;
            loadOverview();
        } else if (diff) {
            replace(head, header(diff, r));
        }
        const t = ensureTable();
        t.refresh();
        t.table.set(
            { sort: r.sort, order: r.order, q: r.q, offset: r.offset },
            { ...pairParams(r), status: r.status, group: r.ctable === 'kernels' ? r.group : '', per: r.per },
        );
    }
    update();
    const unsubscribe = store.subscribe(() => update());
    return {
        destroy() {
            unsubscribe();
            if (ctrl) ctrl.abort();
            if (tbl) tbl.table.destroy();
        },
    };
}

/**
 * A comparison that could not be made (this page's and comparen.js's):
 * the title, then the reason and the way back to pick runs.
 * @param {HTMLElement} head
 * @param {HTMLElement} body
 * @param {string} msg
 * @param {string} pick what to pick on the runs list ("two runs")
 */
export function showCompareError(head, body, msg, pick) {
    replace(head, h('h1', { class: C.title }, 'Compare runs'));
    replace(
        body,
        alertBox(
            'error',
            'Could not compare these runs',
            h('p', null, msg),
            h('p', null, h('a', { href: buildUrl({ view: 'runs' }) }, 'Back to the runs'), ` to pick ${pick}.`),
        ),
    );
}

// --- "Compare with…" on the run page ---------------------------------------------------

/** The runs list, fetched at most every 10 s for the run page's selector. */
/** @type {{at: number, list: Promise<{runs: import('../apitypes.js').Run[]}>} | null} */
let runsCache = null;

/**
 * A "Compare with…" selector for the run page: picking another run opens
 * ./?compare=OTHER,RUN (the other run is the baseline A; the page can swap
 * them); picking another rank of a multi-rank run compares the ranks.
 * @param {{id: string, info?: {ranks?: {rank: number}[]}}} run
 * @param {number} rank the rank the run page shows
 * @returns {HTMLSelectElement}
 */
export function compareWith(run, rank) {
    const ranks = ((run.info && run.info.ranks) || []).map((k) => k.rank).filter((k) => k !== rank);
    const sel = h(
        'select',
        { class: [C.select, C.inputSm], 'aria-label': 'Compare this run with', title: 'Compare this run with another run, or this rank with another rank' },
        h('option', { value: '' }, 'Compare with…'),
        ranks.length ? h('optgroup', { label: `Another rank (as the baseline A) vs rank ${rank}` }, ranks.map((k) => h('option', { value: `rank:${k}` }, `rank ${k}`))) : null,
    );
    const now = Date.now();
    if (!runsCache || now - runsCache.at > 10000) runsCache = { at: now, list: api.listRuns() };
    runsCache.list
        .then(({ runs }) => {
            const others = runs.filter((x) => x.id !== run.id);
            if (others.length)
                sel.append(h('optgroup', { label: 'Another run (as the baseline A)' }, others.map((x) => h('option', { value: `run:${x.id}` }, runLabel(x)))));
        })
        .catch(() => {
            runsCache = null;
        });
    sel.addEventListener('change', () => {
        const [kind, v] = sel.value.split(':');
        if (kind === 'rank') navigate({ view: 'compare', a: run.id, b: run.id, rankA: Number(v), rankB: rank });
        else if (kind === 'run') navigate({ view: 'compare', a: v, b: run.id });
    });
    return sel;
}

/**
 * A run as the selector lists it: runs of one name told apart by when they
 * were stored and their id's first 8 digits.
 * @param {import('../apitypes.js').Run} x
 */
function runLabel(x) {
    return `${x.name || x.id} · ${formatDate(x.created)} · ${x.id.slice(0, 8)}`;
}

// --- header ------------------------------------------------------------------------

/**
 * Title, the two runs with rank selectors, swap.
 * @param {Diff} d
 * @param {Route} r
 */
function header(d, r) {
    /**
     * @param {'A' | 'B'} which
     * @param {DiffSide} s
     */
    const side = (which, s) => {
        const key = which === 'A' ? 'rankA' : 'rankB';
        /** @type {import('../dom.js').Child} */
        let rank = s.ranks.length > 1 ? null : h('span', { class: C.muted }, `rank ${s.rank}`);
        if (s.ranks.length > 1) {
            const sel = h(
                'select',
                { class: C.select, 'aria-label': `Rank of ${which}`, dataset: { side: which } },
                s.ranks.map((k) => h('option', { value: String(k), selected: k === s.rank }, `rank ${k}`)),
            );
            sel.addEventListener('change', () => navigate({ ...r, [key]: Number(sel.value), offset: 0 }, { replace: true }));
            rank = sel;
        }
        return h(
            'span',
            { class: C.cmpSide },
            h('span', { class: [C.badge, which === 'A' ? C.badgeNeutral : C.badgeInfo] }, which === 'A' ? 'A · baseline' : 'B'),
            ' ',
            h('a', { href: buildUrl({ view: 'run', run: s.id, rank: s.ranks.length > 1 ? s.rank : null }) }, s.name || s.id),
            ' ',
            rank,
        );
    };
    const swap = buildUrl({ ...r, a: r.b, b: r.a, rankA: r.rankB, rankB: r.rankA, offset: 0 });
    return [
        h('h1', { class: C.title }, 'Compare runs'),
        h(
            'div',
            { class: [C.toolbar, C.cmpPair] },
            side('A', d.a),
            h('span', { class: C.muted }, 'vs'),
            side('B', d.b),
            h('span', { class: C.spacer }),
            h('a', { class: [C.btn, C.btnSm], href: swap, title: 'Make B the baseline' }, 'Swap A ↔ B'),
            h('a', { class: [C.btn, C.btnSm], href: buildUrl({ view: 'runs' }), title: 'Pick two other runs' }, 'Other runs…'),
        ),
    ];
}

// --- overview ------------------------------------------------------------------------

/** @param {Diff} d */
function overview(d) {
    const cats = d.categories && d.categories.length ? d.categories : Object.keys(d.a.average.breakdown_us);
    const sp = d.speedup;
    return [
        h(
            'dl',
            { class: C.stats },
            h(
                'div',
                { class: [C.stat, C.cmpSpeed], title: 'A\u2019s average step divided by B\u2019s' },
                h('dt', { class: C.statLabel }, 'Speedup of the average step'),
                h('dd', { class: [C.statValue, typeof sp === 'number' ? (sp >= 1.005 ? C.cmpGood : sp <= 0.995 ? C.cmpBad : null) : null], dataset: { speedup: typeof sp === 'number' ? sp.toFixed(4) : '' } }, typeof sp === 'number' ? `${sp.toFixed(2)}×` : DASH),
                h('dd', { class: C.muted }, speedupNote(sp)),
            ),
            h(
                'div',
                { class: C.stat },
                h('dt', { class: C.statLabel }, 'Average step'),
                h('dd', { class: C.statValue }, `${formatMicros(d.a.average.dur_us)} → ${formatMicros(d.b.average.dur_us)}`),
                h('dd', null, deltaSpan(d.delta.dur_us)),
            ),
            h(
                'div',
                { class: C.stat },
                h('dt', { class: C.statLabel }, 'Kernels (by name)'),
                h('dd', { class: C.statValue }, `${d.kernels.added} added · ${d.kernels.removed} removed`),
                h('dd', { class: C.muted }, `${d.kernels.faster} faster · ${d.kernels.slower} slower · ${d.kernels.same} same`),
            ),
            h(
                'div',
                { class: C.stat },
                h('dt', { class: C.statLabel }, 'Operators'),
                h('dd', { class: C.statValue }, `${d.operators.faster} faster · ${d.operators.slower} slower`),
                h('dd', { class: C.muted }, `${d.operators.added} added · ${d.operators.removed} removed · ${d.operators.same} same`),
            ),
        ),
        h('div', { class: C.grid }, sideCard('A', d.a, null), sideCard('B', d.b, d.a)),
        h(
            'article',
            { class: [C.card, C.cardPad, C.cmpBreak] },
            h('h2', { class: C.sectionTitle }, 'Average step by category'),
            breakdownTable(d, cats),
            stackedPair(d, cats),
        ),
    ];
}

/**
 * One run's card; with `base`, each figure shows its change against it.
 * @param {'A' | 'B'} which
 * @param {DiffSide} s
 * @param {DiffSide | null} base
 */
function sideCard(which, s, base) {
    /**
     * @param {string} label
     * @param {import('../dom.js').Child} value
     * @param {import('../dom.js').Child} [delta]
     */
    const row = (label, value, delta) => [h('dt', null, label), h('dd', null, value, delta ? [' ', delta] : null)];
    /**
     * @param {number | null} v
     * @param {number | null | undefined} b
     */
    const pts = (v, b) => {
        if (!base || typeof v !== 'number' || typeof b !== 'number') return null;
        const d = (v - b) * 100;
        if (Math.abs(d) < 0.05) return null;
        return h('span', { class: [C.cmpDelta, C.muted] }, `(${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} pts)`);
    };
    const dev = s.device;
    return h(
        'article',
        { class: C.card, dataset: { side: which } },
        h(
            'div',
            { class: C.cardHead },
            h('h2', { class: C.cardTitle }, s.name || s.id),
            h('span', { class: C.spacer }),
            h('span', { class: [C.badge, which === 'A' ? C.badgeNeutral : C.badgeInfo] }, which === 'A' ? 'A · baseline' : 'B'),
        ),
        h(
            'div',
            { class: C.cardPad },
            h(
                'dl',
                { class: C.kv },
                row('Device', dev ? [bdi(dev.name || 'GPU'), dev.compute_capability ? ` (cc ${dev.compute_capability})` : ''] : 'no GPU activity'),
                row('Rank', `${s.rank} of ${plural(s.ranks.length, 'rank')}`),
                row('Steps', formatNumber(s.steps)),
                row('Average step', formatMicros(s.average.dur_us), base ? deltaSpan(s.average.dur_us - base.average.dur_us) : null),
                row('Kernel time per step', formatMicros(s.kernel_us), base ? deltaSpan(s.kernel_us - base.kernel_us) : null),
                row('GPU utilization', formatShare(s.gpu_utilization), pts(s.gpu_utilization, base && base.gpu_utilization)),
                row('Tensor-core share', formatShare(s.tensor_core_share), pts(s.tensor_core_share, base && base.tensor_core_share)),
                row('Peak memory', typeof s.peak_memory_bytes === 'number' ? formatBytes(s.peak_memory_bytes) : DASH),
            ),
        ),
    );
}

/**
 * Category | A | B | change | a bar centred on zero (left: less time in B).
 * @param {Diff} d
 * @param {string[]} cats
 */
function breakdownTable(d, cats) {
    const deltas = cats.map((k) => d.delta.breakdown_us[k] ?? 0);
    const max = Math.max(1e-9, ...deltas.map((x) => Math.abs(x)));
    return h(
        'table',
        { class: [C.table, C.tableCompact], 'aria-label': 'Average step by category, A and B' },
        h(
            'thead',
            null,
            h(
                'tr',
                null,
                h('th', { scope: 'col' }, 'Category'),
                h('th', { scope: 'col', class: C.num }, 'A'),
                h('th', { scope: 'col', class: C.num }, 'B'),
                h('th', { scope: 'col', class: C.num }, 'Change'),
                h('th', { scope: 'col', class: C.cmpDbarCol }, h('span', { class: C.muted }, '← less time in B · more →')),
            ),
        ),
        h(
            'tbody',
            null,
            cats.map((k, i) => {
                const info = categoryInfo(k);
                const dv = deltas[i];
                const fill = h('span', { class: [C.cmpDbarFill, dv < 0 ? C.cmpDbarNeg : C.cmpDbarPos] });
                const w = (Math.abs(dv) / max) * 50;
                fill.style.width = w.toFixed(2) + '%';
                fill.style.left = dv < 0 ? (50 - w).toFixed(2) + '%' : '50%';
                return h(
                    'tr',
                    { dataset: { category: k } },
                    h('td', { title: info.help, class: C.help }, swatch(info.color), info.label),
                    h('td', { class: C.num }, formatMicros(d.a.average.breakdown_us[k])),
                    h('td', { class: C.num }, formatMicros(d.b.average.breakdown_us[k])),
                    h('td', { class: C.num }, deltaSpan(dv)),
                    h('td', { class: C.cmpDbarCol }, h('span', { class: C.cmpDbar, role: 'img', 'aria-label': `${info.label}: ${signedMicros(dv)}` }, fill)),
                );
            }),
            h(
                'tr',
                { class: C.rowTotal },
                h('td', null, 'Step'),
                h('td', { class: C.num }, formatMicros(d.a.average.dur_us)),
                h('td', { class: C.num }, formatMicros(d.b.average.dur_us)),
                h('td', { class: C.num }, deltaSpan(d.delta.dur_us)),
                h('td', null),
            ),
        ),
    );
}

/**
 * A's and B's average step as stacked bars on one scale.
 * @param {Diff} d
 * @param {string[]} cats
 */
function stackedPair(d, cats) {
    const max = Math.max(d.a.average.dur_us, d.b.average.dur_us);
    if (!(max > 0)) return null;
    /** @param {'A' | 'B'} which @param {DiffSide} s */
    const bar = (which, s) => {
        const segs = stackBreakdown(s.average.breakdown_us, cats);
        const track = hbar(
            `${which}: average step ${formatMicros(s.average.dur_us)}`,
            segs.map((g) => {
                const info = categoryInfo(g.key);
                return { color: info.color, value: g.value, title: `${info.label}: ${formatMicros(g.value)}` };
            }),
            max,
            C.cmpHbar,
        );
        return h('div', { class: C.cmpBarRow }, h('span', { class: C.cmpBarLabel }, which), track, h('span', { class: [C.num, C.muted] }, formatMicros(s.average.dur_us)));
    };
    return h('div', { class: C.cmpBars }, bar('A', d.a), bar('B', d.b));
}

// --- table ------------------------------------------------------------------------------

/**
 * @param {number | null} n
 */
function calls(n) {
    if (typeof n !== 'number') return DASH;
    return formatNumber(n, Number.isInteger(n) ? 0 : 2);
}

/**
 * @param {boolean} isK
 * @param {DiffPage | null} p
 * @returns {Column[]}
 */
function columns(isK, p) {
    const unit = p && p.per === 'total' ? '' : ' / step';
    return [
        {
            label: 'Status',
            sort: 'status',
            cell: (r) => {
                const info = STATUS_INFO[r.status] || STATUS_INFO.same;
                return h('span', { class: [C.badge, info.cls], title: info.help }, r.status);
            },
        },
        {
            label: isK ? (p && p.group === 'family' ? 'Kernel family' : 'Kernel') : 'Operator',
            sort: 'name',
            cls: C.mono,
            clamp: true,
            cell: (r) => [r.tensor_cores ? h('span', { class: [C.badge, C.badgeOk], title: 'runs on tensor cores' }, 'TC') : null, r.tensor_cores ? ' ' : null, r.name],
            title: (r) => r.name,
        },
        { label: 'Calls A' + unit, sort: 'a_calls', num: true, cell: (r) => calls(r.a_calls) },
        { label: 'Calls B' + unit, sort: 'b_calls', num: true, cell: (r) => calls(r.b_calls) },
        { label: 'Time A' + unit, sort: 'a_time', num: true, cell: (r) => formatMicros(r.a_us) },
        { label: 'Time B' + unit, sort: 'b_time', num: true, cell: (r) => formatMicros(r.b_us) },
        { label: 'Change', sort: 'delta', num: true, help: 'B − A', cell: (r) => deltaSpan(r.delta_us, r.status) },
        {
            label: 'B / A',
            sort: 'ratio',
            num: true,
            help: 'B\u2019s time divided by A\u2019s (below 1: faster in B)',
            cell: (r) => (typeof r.ratio === 'number' ? `${formatNumber(r.ratio, r.ratio < 10 ? 2 : 1)}×` : DASH),
        },
    ];
}
