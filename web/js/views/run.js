// @ts-check
/**
 * views/run.js — `./?run=ID`: one run.
 *
 * Loads GET ./api/runs/ID once per mount (the run plus `info`: per-rank
 * import facts). The header shows the run's name (renamable), its facts,
 * its tags (editable) and, when the run has import notes, an amber banner
 * pointing at them. Below it, the tab bar (URL `&view=`) and, for runs with
 * several ranks, a rank selector (URL `&rank=`, replaceState).
 *
 * Tabs: Overview, Operators, Kernels and Memory are tab view modules
 * (TAB_VIEWS; each its own file, see tabs.js for their contract), mounted
 * into the content box when their tab is shown and unmounted when another
 * is; while mounted they follow route changes (rank, filters, zoom) on
 * their own, so typing in a search box never rebuilds the tab. They show
 * one rank: the selector offers no "all ranks" there, and no rank in the
 * URL means the lowest. Timeline (views/timeline.js), Analyses
 * (views/analyses.js) and Ranks (views/ranks.js) are tab views too; Info is
 * rendered here.
 *
 * Info tab: for all ranks, a ranks summary table and every import note
 * (with its rank); then one card per rank (file, GPU, distributed setup,
 * time span, events by kind, import notes). Import notes are always shown,
 * never folded away. Route changes that keep the run re-render from the
 * loaded data without fetching again.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, bdi, bidiText, h, inlineEditor, replace, setTitle } from '../dom.js';
import {
    DASH,
    formatBytes,
    formatComputeCapability,
    formatDate,
    formatDateTimeUtc,
    formatDuration,
    formatNumber,
    formatPercent,
    formatTraceTime,
    plural,
    traceWallClock,
} from '../format.js';
import { TABS, buildUrl, navigate, routeAs } from '../router.js';
import { parseTags } from '../runlist.js';
import { tabRank } from '../tabs.js';
import { compareWith } from './compare.js';
import * as analysesView from './analyses.js';
import * as kernelsView from './kernels.js';
import * as memoryView from './memory.js';
import * as operatorsView from './operators.js';
import * as overviewView from './overview.js';
import * as reportView from './report.js';
import * as ranksView from './ranks.js';
import * as timelineView from './timeline.js';

/** @typedef {import('../apitypes.js').RunDetail} RunDetail */
/** @typedef {import('../apitypes.js').RankInfo} RankInfo */
/** @typedef {import('../apitypes.js').Note} Note */
/** @typedef {import('../router.js').RunRoute} Route */
/** @typedef {import('../state.js').AppStore} AppStore */
/** @typedef {import('../dom.js').Child} Child */

/** Cards for at most this many ranks are shown at once on "All ranks". */
const MAX_CARDS_ALL = 4;

/** Device properties shown in the card itself (the rest go in a details list). */
const DEVICE_MAIN = ['name', 'totalGlobalMem', 'computeMajor', 'computeMinor', 'numSms'];

/** Run statistics in display order: stats key, label. */
const STAT_ROWS = /** @type {const} */ ([
    ['events', 'Events'],
    ['slices', 'Slices'],
    ['flows', 'Flow endpoints'],
    ['instants', 'Instant events'],
    ['counters', 'Counter samples'],
    ['mems', 'Memory events'],
    ['metadata', 'Metadata events'],
    ['repaired', 'Repaired'],
    ['dropped', 'Dropped'],
]);

/**
 * Tabs whose content is a view module (mounted, then following the route).
 * @type {Readonly<Record<string, import('../tabs.js').TabView>>}
 */
const TAB_VIEWS = Object.freeze({ overview: overviewView, operators: operatorsView, kernels: kernelsView, memory: memoryView, timeline: timelineView, analyses: analysesView, ranks: ranksView, report: reportView });

/** The Info tab (rendered here) declares no URL parameters beyond run, view and rank. */
const INFO_PARAMS = Object.freeze({});

/**
 * The URL parameters a tab declares (after run, view and rank), for
 * router.js; an unknown tab declares none.
 * @param {string} tab
 * @returns {import('../params.js').ParamSpec}
 */
export function tabParams(tab) {
    const view = Object.hasOwn(TAB_VIEWS, tab) ? TAB_VIEWS[tab] : null;
    return view ? view.params : INFO_PARAMS;
}

/**
 * Every field a run page tab may declare (what a route of any tab may
 * carry into buildUrl() or navigate()).
 * @typedef {import('../params.js').ParamValues<typeof operatorsView.params> & import('../params.js').ParamValues<typeof kernelsView.params>
 *   & import('../params.js').ParamValues<typeof memoryView.params> & import('../params.js').ParamValues<typeof timelineView.params>
 *   & import('../params.js').ParamValues<typeof overviewView.params>} TabFields
 */

/** What the placeholder tabs will hold (shown under "coming soon"). */
const TAB_PLANS = /** @type {Record<string, string>} */ ({
    ranks: 'rank-to-rank comparison: stragglers and communication overlap',
});

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    const id = routeAs(store.get().route, 'run').run;
    if (id) active = createRunPage(root, store, id);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 * @param {string} id
 * @returns {{destroy: () => void}}
 */
function createRunPage(root, store, id) {
    setTitle('Run');
    const ctrl = new AbortController();
    let destroyed = false;
    /** @type {RunDetail | null} */
    let run = null;
    /** The tab view mounted in `content`, if any. */
    /** @type {{tab: string, view: import('../tabs.js').TabView} | null} */
    let mounted = null;

    function unmountTab() {
        if (mounted) mounted.view.unmount();
        mounted = null;
    }

    const back = h('a', { href: buildUrl({ view: 'runs' }) }, '← All runs');
    const head = h('div', { class: C.pageHead }, back);
    const content = h('div', null, h('p', { class: [C.muted, C.loading] }, 'Loading run…'));
    replace(root, h('div', { class: C.page }, head, content));

    async function load() {
        try {
            run = await api.getRun(id, ctrl.signal);
        } catch (e) {
            if (destroyed || (e instanceof api.ApiError && e.code === 'aborted')) return;
            if (e instanceof api.ApiError && e.status === 404) {
                setTitle('Run not found');
                replace(
                    content,
                    alertBox(
                        'error',
                        'Run not found',
                        h('p', null, 'No run has the id ', h('code', null, id), '. It may have been deleted.'),
                        h('p', null, h('a', { href: buildUrl({ view: 'runs' }) }, 'Back to the runs list')),
                    ),
                );
                return;
            }
            replace(
                content,
                alertBox(
                    'error',
                    'Could not load the run',
                    h('p', null, e instanceof Error ? e.message : String(e)),
                    h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => load() } }, 'Retry'),
                ),
            );
            return;
        }
        if (destroyed) return;
        render();
    }

    function render() {
        if (!run) return;
        const route = routeAs(store.get().route, 'run');
        const tab = TABS.find((t) => t.id === route.tab);
        setTitle(tab ? tab.label : '', run.name || run.id);
        replace(head, back, header(run), tabBar(run, route));
        const view = TAB_VIEWS[route.tab];
        if (view) {
            if (mounted && mounted.tab === route.tab) return; // it follows the route itself
            unmountTab();
            const box = h('div', { class: C.section, dataset: { tab: route.tab } });
            replace(content, box);
            mounted = { tab: route.tab, view };
            view.mount(box, { store, run });
            return;
        }
        unmountTab();
        replace(content, tabContent(run, route));
    }

    /** @param {RunDetail} r */
    function header(r) {
        const titleEl = h('h1', { class: C.title }, r.name || r.id);
        const renameBtn = h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm], title: 'Rename this run' }, 'Rename');
        const titleRow = h('div', { class: C.titleRow }, titleEl, renameBtn, compareWith(r, tabRank(r, routeAs(store.get().route, 'run'))));
        renameBtn.addEventListener('click', () => {
            replace(
                titleRow,
                inlineEditor({
                    value: r.name,
                    label: 'New run name',
                    maxLength: 200,
                    onSave: async (v) => {
                        const name = v.trim();
                        if (!name) throw new Error('The name cannot be empty');
                        if (name !== r.name) await api.updateRun(r.id, { name });
                        r.name = name;
                    },
                    onClose: () => render(),
                }),
            );
        });

        const tagsBox = h('div', { class: C.chips });
        const showTags = () =>
            replace(
                tagsBox,
                (r.tags || []).map((t) => h('span', { class: C.chip }, t)),
                h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm], on: { click: editTags } }, r.tags && r.tags.length ? 'Edit tags' : 'Add tags'),
            );
        const editTags = () =>
            replace(
                tagsBox,
                inlineEditor({
                    value: (r.tags || []).join(', '),
                    label: 'Tags, separated by commas',
                    placeholder: 'e.g. baseline, bf16',
                    onSave: async (v) => {
                        const tags = parseTags(v);
                        await api.updateRun(r.id, { tags });
                        r.tags = tags;
                    },
                    onClose: showTags,
                }),
            );
        showTags();

        const facts = [
            h('span', { title: formatDateTimeUtc(r.created) }, formatDate(r.created)),
            plural(r.ranks, 'rank'),
            r.gpu ? bdi(r.gpu) : 'no GPU recorded',
            formatBytes(r.bytes),
            plural(r.events, 'event'),
            r.info && typeof r.info.tracks === 'number' ? plural(r.info.tracks, 'track') : null,
            r.info && typeof r.info.slices === 'number' ? plural(r.info.slices, 'slice') : null,
            h('span', { class: C.mono, title: 'run id' }, r.id),
        ];
        /** @type {Child[]} */
        const sub = [];
        facts.filter((f) => f !== null).forEach((f, i) => sub.push(i ? ' · ' : null, f));

        const notesBanner =
            r.warnings > 0
                ? alertBox(
                      'warn',
                      `${plural(r.warnings, 'import note')}: some events were repaired or dropped while importing.`,
                      routeAs(store.get().route, 'run').tab === 'info'
                          ? 'They are listed below, per rank.'
                          : h('a', { href: buildUrl({ ...routeAs(store.get().route, 'run'), tab: 'info' }) }, 'See them on the Info tab'),
                  )
                : null;
        return [titleRow, h('div', { class: C.subtitle }, sub), tagsBox, notesBanner];
    }

    /**
     * How many ranks the Timeline's &ranks= stacks (0: one rank shown).
     * @param {string | undefined} param  "all" or "0,2,5"
     * @param {number} n  the run's ranks
     */
    function stackedCount(param, n) {
        if (!param) return 0;
        return param === 'all' ? n : Math.min(n, param.split(',').length);
    }

    /**
     * @param {number} k  ranks stacked
     * @param {number} n  the run's ranks
     */
    function stackedLabel(k, n) {
        return k >= n ? `All ${n} ranks, stacked` : `${k} of ${n} ranks, stacked`;
    }

    /**
     * @param {RunDetail} r
     * @param {Route} route
     */
    function tabBar(r, route) {
        const ranks = (r.info && r.info.ranks) || [];
        const perRank = route.tab in TAB_VIEWS && route.tab !== 'ranks'; // Ranks shows them all
        let selector = null;
        if (ranks.length > 1) {
            // the Timeline's ranks stacked on one timeline (&ranks=): picking a rank goes back to one
            const stacked = route.tab === 'timeline' ? stackedCount(/** @type {{ranks?: string}} */ (route).ranks, ranks.length) : 0;
            const select = h(
                'select',
                { class: C.select, 'aria-label': 'Rank' },
                perRank && !stacked ? null : h('option', { value: '' }, stacked ? stackedLabel(stacked, ranks.length) : `All ${ranks.length} ranks`),
                ranks.map((k) => h('option', { value: String(k.rank) }, `Rank ${k.rank} — ${bidiText(k.file)}`)),
            );
            select.value = stacked ? '' : perRank ? String(tabRank(r, route)) : route.rank === null ? '' : String(route.rank);
            select.addEventListener('change', () => {
                if (stacked && select.value === '') return;
                navigate(
                    { ...routeAs(store.get().route, 'run'), rank: select.value === '' ? null : Number(select.value), offset: 0, start: null, end: null, ...(stacked ? { ranks: '', rfold: [] } : {}) },
                    { replace: true },
                );
            });
            selector = h('label', { class: C.field }, h('span', { class: C.label }, 'Rank'), select);
        }
        return h(
            'nav',
            { class: C.tabs, 'aria-label': 'Run views' },
            TABS.map((t) =>
                h(
                    'a',
                    {
                        href: buildUrl({ view: 'run', run: route.run, rank: route.rank, tab: t.id }),
                        class: [C.tab, t.id === route.tab && C.tabActive],
                        'aria-current': t.id === route.tab ? 'page' : null,
                        title: t.live ? null : 'Coming soon',
                    },
                    t.label,
                    t.live ? null : h('span', { class: C.tabSoon }, 'soon'),
                ),
            ),
            h('span', { class: C.spacer }),
            selector,
        );
    }

    /**
     * @param {RunDetail} r
     * @param {Route} route
     */
    function tabContent(r, route) {
        const tab = TABS.find((t) => t.id === route.tab) || TABS[TABS.length - 1];
        if (!tab.live) {
            return h(
                'div',
                { class: C.placeholder },
                h('h2', null, `${tab.label} — coming soon`),
                h('p', null, `This tab will show ${TAB_PLANS[tab.id] || 'more analyses'}.`),
                h('p', null, 'For now, the ', h('a', { href: buildUrl({ ...route, tab: 'info' }) }, 'Info tab'), ' shows what was imported from each trace file.'),
            );
        }
        return infoTab(r, route, (rank) => navigate({ ...routeAs(store.get().route, 'run'), rank }, { replace: true }));
    }

    const unsubscribe = store.subscribe((next, prev) => {
        if (routeAs(next.route, 'run') !== prev.route && routeAs(next.route, 'run').view === 'run' && routeAs(next.route, 'run').run === id) render();
    });

    load();

    return {
        destroy() {
            destroyed = true;
            ctrl.abort();
            unsubscribe();
            unmountTab();
        },
    };
}

// --- Info tab ----------------------------------------------------------------

/**
 * @param {RunDetail} r
 * @param {Route} route
 * @param {(rank: number | null) => void} selectRank
 */
function infoTab(r, route, selectRank) {
    const ranks = (r.info && r.info.ranks) || [];
    if (!ranks.length) {
        return alertBox('info', 'No import information', 'The server returned no per-rank information for this run.');
    }
    if (route.rank !== null) {
        const one = ranks.find((k) => k.rank === route.rank);
        if (!one) {
            return alertBox(
                'warn',
                `This run has no rank ${route.rank}`,
                h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => selectRank(null) } }, 'Show all ranks'),
            );
        }
        return h('div', { class: C.cards }, rankCard(one, ranks.length > 1));
    }
    /** @type {Child[]} */
    const parts = [];
    if (ranks.length > 1) {
        parts.push(section('Ranks', ranksTable(ranks, selectRank)));
        const notes = ranks.flatMap((k) => (k.notes || []).map((n) => ({ ...n, rank: k.rank })));
        parts.push(section(`Import notes, all ranks (${notes.length})`, notesTable(notes, true)));
    }
    if (ranks.length <= MAX_CARDS_ALL) {
        parts.push(h('div', { class: C.cards }, ranks.map((k) => rankCard(k, ranks.length > 1))));
    } else {
        parts.push(h('p', { class: C.muted }, `Pick a rank above (or click a row) to see its details.`));
    }
    return h('div', { class: C.page }, parts);
}

/**
 * @param {string} title
 * @param {...Child} body
 */
function section(title, ...body) {
    return h('section', { class: C.section }, h('h2', { class: C.sectionTitle }, title), ...body);
}

/**
 * @param {RankInfo[]} ranks
 * @param {(rank: number) => void} selectRank
 */
function ranksTable(ranks, selectRank) {
    return h(
        'table',
        { class: [C.table, C.tableCompact] },
        h(
            'thead',
            null,
            h(
                'tr',
                null,
                ['Rank', 'File', 'Size', 'Format', 'GPU', 'Span', 'Events', 'Notes'].map((t, i) =>
                    h('th', { scope: 'col', class: [0, 2, 5, 6].includes(i) && C.num }, t),
                ),
            ),
        ),
        h(
            'tbody',
            null,
            ranks.map((k) => {
                const notes = noteTotals(k.notes || []);
                const dev = k.device || {};
                return h(
                    'tr',
                    { class: C.clickable, on: { click: () => selectRank(k.rank) }, title: 'Show this rank' },
                    h('td', { class: C.num }, String(k.rank)),
                    h('td', { class: [C.cellName, C.mono], title: k.file }, k.file),
                    h('td', { class: C.num }, formatBytes(k.bytes)),
                    h('td', null, k.format || DASH),
                    h('td', { class: C.cellName }, typeof dev.name === 'string' ? dev.name : DASH),
                    h('td', { class: C.num }, span(k)),
                    h('td', { class: C.num }, formatNumber(k.stats && k.stats.events)),
                    h('td', null, notesBadges(notes)),
                );
            }),
        ),
    );
}

/** @param {RankInfo} k */
function span(k) {
    return typeof k.t1_ns === 'number' && typeof k.t0_ns === 'number' ? formatDuration(k.t1_ns - k.t0_ns) : DASH;
}

/**
 * Event counts of notes per level.
 * @param {Note[]} notes
 * @returns {{info: number, repaired: number, dropped: number, total: number}}
 */
function noteTotals(notes) {
    const t = { info: 0, repaired: 0, dropped: 0, total: notes.length };
    for (const n of notes) if (n.level in t) t[n.level] += n.count || 0;
    return t;
}

/** @param {{info: number, repaired: number, dropped: number, total: number}} t */
function notesBadges(t) {
    if (!t.total) return h('span', { class: C.muted }, 'no notes');
    return h(
        'span',
        { class: C.chips },
        t.dropped ? levelBadge('dropped', `${formatNumber(t.dropped)} dropped`) : null,
        t.repaired ? levelBadge('repaired', `${formatNumber(t.repaired)} repaired`) : null,
        t.info ? levelBadge('info', plural(t.info, 'info')) : null,
    );
}

/**
 * @param {string} level
 * @param {string} [text]
 */
function levelBadge(level, text) {
    const cls = level === 'dropped' ? C.badgeError : level === 'repaired' ? C.badgeWarn : C.badgeInfo;
    return h('span', { class: [C.badge, cls] }, text || level);
}

/**
 * @param {(Note & {rank?: number})[]} notes
 * @param {boolean} withRank
 */
function notesTable(notes, withRank) {
    if (!notes.length) return h('p', { class: C.muted }, 'None: every event was imported as it is in the file.');
    const order = { dropped: 0, repaired: 1, info: 2 };
    const sorted = [...notes].sort((a, b) => (order[a.level] ?? 3) - (order[b.level] ?? 3) || (b.count || 0) - (a.count || 0));
    return h(
        'table',
        { class: [C.table, C.tableCompact] },
        h(
            'thead',
            null,
            h(
                'tr',
                null,
                withRank ? h('th', { scope: 'col', class: C.num }, 'Rank') : null,
                h('th', { scope: 'col' }, 'Level'),
                h('th', { scope: 'col' }, 'Reason'),
                h('th', { scope: 'col', class: C.num }, 'Count'),
                h('th', { scope: 'col', class: C.colExample }, 'Example'),
            ),
        ),
        h(
            'tbody',
            null,
            sorted.map((n) =>
                h(
                    'tr',
                    null,
                    withRank ? h('td', { class: C.num }, String(n.rank)) : null,
                    h('td', null, levelBadge(n.level)),
                    h('td', null, n.reason),
                    h('td', { class: C.num }, formatNumber(n.count)),
                    h('td', null, n.example ? h('code', { class: C.code }, n.example) : h('span', { class: C.muted }, DASH)),
                ),
            ),
        ),
    );
}

/**
 * Key/value rows as a <dl>; null values are left out.
 * @param {[string, Child][]} rows
 */
function kv(rows) {
    return h(
        'dl',
        { class: C.kv },
        rows.filter((row) => row[1] !== null && row[1] !== undefined && row[1] !== '').map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    );
}

/**
 * Text of a JSON-ish value from a trace header (never interpreted as HTML).
 * @param {unknown} v
 * @returns {string}
 */
function valueText(v) {
    if (v === null || v === undefined) return DASH;
    if (typeof v === 'number') return Number.isInteger(v) ? formatNumber(v) : String(v);
    if (typeof v === 'string') return v;
    return JSON.stringify(v);
}

/**
 * @param {RankInfo} k
 * @param {boolean} multi the run has several ranks (show the rank in the title)
 */
function rankCard(k, multi) {
    const stats = k.stats || /** @type {import('../apitypes.js').RankStats} */ ({});
    const dev = k.device;
    const dist = k.distributed;

    const source = kv([
        ['File', h('span', { class: C.mono }, k.file)],
        ['Size', formatBytes(k.bytes)],
        ['Format', k.format || DASH],
        ['Span', span(k)],
        ['Captured', formatTraceTime(traceWallClock(k.t0_ns, k.base_ns))],
        ['Trace clock', `${formatTraceTime(k.t0_ns)} → ${formatTraceTime(k.t1_ns)}`],
        ['Clock base', k.base_ns ? formatTraceTime(k.base_ns) : DASH],
    ]);

    let gpu;
    if (dev) {
        const rest = Object.entries(dev).filter(([key]) => !DEVICE_MAIN.includes(key));
        gpu = [
            kv([
                ['Name', typeof dev.name === 'string' ? dev.name : DASH],
                ['Memory', typeof dev.totalGlobalMem === 'number' ? formatBytes(dev.totalGlobalMem) : DASH],
                [
                    'Compute capability',
                    formatComputeCapability(
                        typeof dev.computeMajor === 'number' ? dev.computeMajor : null,
                        typeof dev.computeMinor === 'number' ? dev.computeMinor : null,
                    ),
                ],
                ['SMs', typeof dev.numSms === 'number' ? formatNumber(dev.numSms) : DASH],
            ]),
            rest.length
                ? h(
                      'details',
                      { class: C.details },
                      h('summary', null, `All device properties (${rest.length} more)`),
                      kv(rest.map(([key, v]) => [key, h('span', { class: C.mono }, valueText(v))])),
                  )
                : null,
        ];
    } else {
        gpu = h('p', { class: C.muted }, 'No GPU recorded in this trace (a CPU-only profile, or no deviceProperties in the file).');
    }

    let distBody;
    if (dist) {
        const scalars = Object.entries(dist).filter(([, v]) => v === null || typeof v !== 'object');
        const nested = Object.entries(dist).filter(([, v]) => v !== null && typeof v === 'object');
        const known = ['backend', 'rank', 'world_size'];
        distBody = [
            kv([
                ['Backend', 'backend' in dist ? valueText(dist.backend) : DASH],
                ['Rank', 'rank' in dist ? valueText(dist.rank) : DASH],
                ['World size', 'world_size' in dist ? valueText(dist.world_size) : DASH],
                ...scalars.filter(([key]) => !known.includes(key)).map(([key, v]) => /** @type {[string, Child]} */ ([key, valueText(v)])),
            ]),
            nested.length
                ? h(
                      'details',
                      { class: C.details },
                      h('summary', null, nested.map(([key]) => key).join(', ')),
                      nested.map(([key, v]) => h('div', null, h('div', { class: C.label }, key), h('pre', { class: C.code }, JSON.stringify(v, null, 2)))),
                  )
                : null,
        ];
    } else {
        distBody = h('p', { class: C.muted }, 'Not a distributed run (no distributedInfo in the trace).');
    }

    const byKind = Object.entries(stats.by_kind || {}).sort((a, b) => b[1] - a[1]);
    const kindTotal = byKind.reduce((s, [, n]) => s + n, 0);
    const events = [
        kv(
            STAT_ROWS.filter(([key]) => typeof stats[key] === 'number').map(([key, label]) => {
                const n = /** @type {number} */ (stats[key]);
                const flag = (key === 'dropped' || key === 'repaired') && n > 0;
                return [label, flag ? levelBadge(key, formatNumber(n)) : formatNumber(n)];
            }),
        ),
        byKind.length
            ? h(
                  'table',
                  { class: [C.table, C.tableCompact] },
                  h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col', class: C.num }, 'Count'), h('th', { scope: 'col', class: C.num }, 'Share'))),
                  h(
                      'tbody',
                      null,
                      byKind.map(([kind, n]) =>
                          h(
                              'tr',
                              null,
                              h('td', { class: C.mono }, kind),
                              h('td', { class: C.num }, formatNumber(n)),
                              h('td', { class: C.num }, shareBar(n, kindTotal)),
                          ),
                      ),
                  ),
              )
            : null,
    ];

    const notes = k.notes || [];
    return h(
        'article',
        { class: C.card, 'aria-label': `Rank ${k.rank}` },
        h(
            'div',
            { class: C.cardHead },
            h('h2', { class: C.cardTitle }, multi ? `Rank ${k.rank}` : 'Trace file', h('span', { class: [C.muted, C.mono] }, ' ', k.file)),
            h('span', { class: C.spacer }),
            notesBadges(noteTotals(notes)),
        ),
        h(
            'div',
            { class: C.cardBody },
            h('section', null, h('h3', null, 'Source'), source),
            h('section', null, h('h3', null, 'GPU'), gpu),
            h('section', null, h('h3', null, 'Distributed'), distBody),
            h('section', null, h('h3', null, 'Events'), events),
        ),
        h('section', { class: C.section }, h('h3', null, `Import notes (${notes.length})`), notesTable(notes, false)),
    );
}

/**
 * A percentage with a small bar behind it.
 * @param {number} n
 * @param {number} total
 */
function shareBar(n, total) {
    const fill = h('span', { class: C.shareFill });
    fill.style.width = total > 0 ? ((n / total) * 100).toFixed(1) + '%' : '0';
    return h('span', { class: C.shareBar }, h('span', { class: C.shareTrack }, fill), h('span', null, formatPercent(n, total)));
}
