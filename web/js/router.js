// @ts-check
/**
 * router.js — the URL query string is the view state.
 *
 *   ./                         runs list      (&q=filter, &sort=[-]column)
 *   ./?run=<id>                run page       (&view=<tab>, &rank=<n>)
 *       table tabs (operators, kernels, memory) add &group= &q= &sort=
 *       &order= &offset=; the memory tab adds &device= &start= &end=
 *       (zoom window, µs on the trace clock) and &min= (bytes)
 *       the timeline tab: &start= &end= (window, µs), &sel=track:ts:dur
 *       (selected slice), &pins=1,2 (pinned track ids), &q= (search),
 *       &cp=1 (the critical path outlined)
 *       the analyses tab: &rank= only; its sections are #an-… anchors
 *   ./?job=<n>                 ingest job progress
 *   ./?compare=A,B             two runs compared (B against the baseline A;
 *       A = B with &rank_a= &rank_b= compares two ranks); &table=operators
 *       (default kernels), &status=added,removed,faster,slower,same,
 *       &group=family (kernels), &per=total, &q= &sort= &order= &offset=;
 *       ./?view=compare&a=A&b=B is read the same way
 *   anything else              runs list (the address is rewritten to ./)
 *
 * Pure half (no DOM; tested under node): parseRoute() turns a query string
 * into a Route, buildUrl() turns a Route back into a relative URL. Every
 * URL is relative ("./?run=…") so the app works under any base path.
 *
 * Browser half: startRouter() reports the current Route and every later
 * change (navigate(), popstate, clicks on same-page links) to one callback.
 * navigate() pushes a history entry by default (switching views) and
 * replaces the current one with {replace: true} (filters, rank, redirects).
 * On start the address is rewritten to its canonical form with
 * replaceState, which also drops parameters we do not own (e.g. a `token`
 * the server may have accepted on the first load).
 */

/** @typedef {'runs' | 'run' | 'job' | 'compare'} ViewName */

/**
 * @typedef {object} Route
 * @property {ViewName} view  which page
 * @property {string | null} run   run id (view "run")
 * @property {number | null} job   ingest job number (view "job")
 * @property {string} tab   run page tab, one of TABS ids (URL parameter `view`)
 * @property {number | null} rank  selected rank on the run page; null = all
 * @property {string} q     runs list filter text; on a table tab, its search text
 * @property {string} sort  runs list sort key ("" = default, "-" prefix = descending);
 *                          on a table tab, one of TAB_TABLES[tab].sorts ("" = the server's default)
 * @property {'' | 'asc' | 'desc'} order  table tab sort direction ("" = the server's default)
 * @property {string} group  table tab grouping, one of TAB_TABLES[tab].groups ("" = the first)
 * @property {number} offset table tab: first row of the page shown
 * @property {string} device memory tab: "0", "1"… (GPU) or "cpu"; "" = the server's default
 * @property {number | null} start memory tab zoom window start, µs on the trace clock; null = whole rank
 * @property {number | null} end   memory tab zoom window end (start < end, or both null)
 * @property {number} min    memory tab: smallest allocation listed, bytes (0 = all)
 * @property {string} sel    timeline tab: selected slice "track:ts:dur" (µs), "" = none
 * @property {number[]} pins timeline tab: pinned track ids, ascending
 * @property {boolean} cp    timeline tab: the critical path outlined
 * @property {string | null} a     compare page: baseline run id
 * @property {string | null} b     compare page: compared run id
 * @property {number | null} rankA compare page: rank of A (null = its lowest)
 * @property {number | null} rankB compare page: rank of B
 * @property {'kernels' | 'operators'} ctable compare page: the table shown
 * @property {string} status compare page: statuses shown, comma-separated in
 *                           COMPARE_STATUSES order ("" = all)
 * @property {'' | 'total'} per compare page: "" = per step, "total" = whole trace
 */

/**
 * Run page tabs in display order; `live` tabs have content, the others show
 * a "coming soon" placeholder.
 * @type {ReadonlyArray<{id: string, label: string, live: boolean}>}
 */
export const TABS = Object.freeze([
    { id: 'overview', label: 'Overview', live: true },
    { id: 'operators', label: 'Operators', live: true },
    { id: 'kernels', label: 'Kernels', live: true },
    { id: 'memory', label: 'Memory', live: true },
    { id: 'timeline', label: 'Timeline', live: true },
    { id: 'analyses', label: 'Analyses', live: true },
    { id: 'ranks', label: 'Ranks', live: true },
    { id: 'info', label: 'Info', live: true },
]);

/** Tab shown when the URL names none (or an unknown one). */
export const DEFAULT_TAB = 'overview';

/**
 * Run page tabs that show a server-side table, with the values their URL
 * parameters may take (the analysis API's own names): `sort` keys and
 * `group` modes, the first group being the default.
 * @type {Readonly<Record<string, {sorts: readonly string[], groups: readonly string[]}>>}
 */
export const TAB_TABLES = Object.freeze({
    operators: { sorts: ['calls', 'host_self', 'host_total', 'device_self', 'device_total', 'name'], groups: ['name', 'shape', 'stack'] },
    kernels: { sorts: ['total', 'calls', 'mean', 'min', 'max', 'name', 'share', 'occupancy', 'blocks_per_sm'], groups: ['name', 'op'] },
    memory: { sorts: ['bytes', 'alloc', 'free', 'lifetime', 'op'], groups: [] },
});

/** Row statuses of the compare tables (the diff API's names), in order. */
export const COMPARE_STATUSES = Object.freeze(['added', 'removed', 'faster', 'slower', 'same']);

/** Sort keys of the compare tables (the diff API's names). */
export const COMPARE_SORTS = Object.freeze(['change', 'delta', 'ratio', 'name', 'a_time', 'b_time', 'a_calls', 'b_calls', 'status']);

/** Columns the runs list can be sorted by (URL `sort`, optional "-" prefix). */
export const SORT_KEYS = Object.freeze(['name', 'created', 'ranks', 'gpu', 'bytes', 'events', 'status']);

const RUN_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
const JOB_RE = /^[1-9][0-9]{0,9}$/;
const RANK_RE = /^(0|[1-9][0-9]{0,5})$/;
const Q_MAX = 200;
const OFFSET_RE = /^(0|[1-9][0-9]{0,8})$/;
const DEVICE_RE = /^(cpu|0|[1-9][0-9]{0,2})$/;
const TIME_RE = /^[0-9]{1,17}(\.[0-9]{1,3})?$/;
const BYTES_RE = /^(0|[1-9][0-9]{0,15})$/;
const SEL_RE = /^(0|[1-9][0-9]{0,8}):([0-9]{1,17}(?:\.[0-9]{1,3})?):([0-9]{1,17}(?:\.[0-9]{1,3})?)$/;
const TRACK_RE = /^(0|[1-9][0-9]{0,8})$/;
const PINS_MAX = 64;

/**
 * A Route with every field at its default, merged with `fields`.
 * @param {Partial<Route>} [fields]
 * @returns {Route}
 */
export function makeRoute(fields = {}) {
    return {
        view: 'runs', run: null, job: null, tab: DEFAULT_TAB, rank: null, q: '', sort: '',
        order: '', group: '', offset: 0, device: '', start: null, end: null, min: 0,
        sel: '', pins: [], cp: false, a: null, b: null, rankA: null, rankB: null, ctable: 'kernels', status: '', per: '',
        ...fields,
    };
}

/**
 * Parses a query string ("?run=abc&view=info", with or without "?").
 * Invalid or unknown values fall back to defaults; never throws.
 * @param {string} search
 * @returns {Route}
 */
export function parseRoute(search) {
    const p = new URLSearchParams(search);
    const run = p.get('run');
    if (run !== null && RUN_ID_RE.test(run)) {
        const tabParam = (p.get('view') || '').toLowerCase();
        const tab = TABS.some((t) => t.id === tabParam) ? tabParam : DEFAULT_TAB;
        const rankParam = p.get('rank');
        const rank = rankParam !== null && RANK_RE.test(rankParam) ? Number(rankParam) : null;
        return makeRoute({ view: 'run', run, tab, rank, ...tabState(tab, p) });
    }
    const cmp = compareState(p);
    if (cmp) return makeRoute(cmp);
    const job = p.get('job');
    if (job !== null && JOB_RE.test(job)) return makeRoute({ view: 'job', job: Number(job) });
    const q = (p.get('q') || '').slice(0, Q_MAX);
    const sortParam = p.get('sort') || '';
    const sort = SORT_KEYS.includes(sortParam.replace(/^-/, '')) ? sortParam : '';
    return makeRoute({ q, sort });
}

/**
 * The table and memory parameters of a run page tab; values that are
 * invalid for the tab are dropped (their defaults apply).
 * @param {string} tab
 * @param {URLSearchParams} p
 * @returns {Partial<Route>}
 */
function tabState(tab, p) {
    if (tab === 'timeline') return timelineState(p);
    const t = TAB_TABLES[tab];
    if (!t) return {};
    /** @type {Partial<Route>} */
    const out = {};
    const sort = p.get('sort') || '';
    if (t.sorts.includes(sort)) out.sort = sort;
    const order = p.get('order');
    if (order === 'asc' || order === 'desc') out.order = order;
    const group = p.get('group') || '';
    if (t.groups.includes(group) && group !== t.groups[0]) out.group = group;
    const q = p.get('q');
    if (q) out.q = q.slice(0, Q_MAX);
    const offset = p.get('offset') || '';
    if (OFFSET_RE.test(offset)) out.offset = Number(offset);
    if (tab !== 'memory') return out;
    const device = p.get('device') || '';
    if (DEVICE_RE.test(device)) out.device = device;
    const start = p.get('start') || '';
    const end = p.get('end') || '';
    if (TIME_RE.test(start) && TIME_RE.test(end) && Number(start) < Number(end)) {
        out.start = Number(start);
        out.end = Number(end);
    }
    const min = p.get('min') || '';
    if (BYTES_RE.test(min)) out.min = Number(min);
    return out;
}

/**
 * The compare page's parameters, or null when the query names no valid
 * pair (`compare=A,B`, or `view=compare&a=A&b=B`).
 * @param {URLSearchParams} p
 * @returns {Partial<Route> | null}
 */
function compareState(p) {
    let a = null, b = null;
    const pair = p.get('compare');
    if (pair !== null) [a, b] = pair.split(',');
    else if ((p.get('view') || '').toLowerCase() === 'compare') [a, b] = [p.get('a'), p.get('b')];
    if (!a || !b || !RUN_ID_RE.test(a) || !RUN_ID_RE.test(b)) return null;
    /** @type {Partial<Route>} */
    const out = { view: 'compare', a, b };
    const ra = p.get('rank_a') || '', rb = p.get('rank_b') || '';
    if (RANK_RE.test(ra)) out.rankA = Number(ra);
    if (RANK_RE.test(rb)) out.rankB = Number(rb);
    if (p.get('table') === 'operators') out.ctable = 'operators';
    out.status = parseStatuses(p.get('status') || '');
    if (out.ctable !== 'operators' && p.get('group') === 'family') out.group = 'family';
    if (p.get('per') === 'total') out.per = 'total';
    const sort = p.get('sort') || '';
    if (COMPARE_SORTS.includes(sort)) out.sort = sort;
    const order = p.get('order');
    if (order === 'asc' || order === 'desc') out.order = order;
    const q = p.get('q');
    if (q) out.q = q.slice(0, Q_MAX);
    const offset = p.get('offset') || '';
    if (OFFSET_RE.test(offset)) out.offset = Number(offset);
    return out;
}

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
 * The timeline tab's parameters: window, selected slice, pins, search.
 * @param {URLSearchParams} p
 * @returns {Partial<Route>}
 */
function timelineState(p) {
    /** @type {Partial<Route>} */
    const out = {};
    const start = p.get('start') || '';
    const end = p.get('end') || '';
    if (TIME_RE.test(start) && TIME_RE.test(end) && Number(start) < Number(end)) {
        out.start = Number(start);
        out.end = Number(end);
    }
    const sel = parseSel(p.get('sel') || '');
    if (sel) out.sel = buildSel(sel);
    const pins = parsePins(p.get('pins') || '');
    if (pins.length) out.pins = pins;
    const q = p.get('q');
    if (q) out.q = q.slice(0, Q_MAX);
    if (p.get('cp') === '1') out.cp = true;
    return out;
}

/**
 * A selected slice as the URL writes it: track id, start and duration
 * (µs, at most 3 decimals); never a row id, so links survive a re-import.
 * @typedef {{track: number, ts: number, dur: number}} SliceRef
 */

/**
 * Parses "track:ts:dur"; null when malformed.
 * @param {string} s
 * @returns {SliceRef | null}
 */
export function parseSel(s) {
    const m = SEL_RE.exec(s);
    return m ? { track: Number(m[1]), ts: Number(m[2]), dur: Number(m[3]) } : null;
}

/**
 * @param {SliceRef} r
 * @returns {string} "track:ts:dur"
 */
export function buildSel(r) {
    return `${Math.floor(r.track)}:${urlTime(Math.max(0, r.ts))}:${urlTime(Math.max(0, r.dur))}`;
}

/**
 * Pinned track ids from "3,1,3": valid ids only, deduplicated, ascending,
 * at most PINS_MAX.
 * @param {string} s
 * @returns {number[]}
 */
export function parsePins(s) {
    const ids = new Set();
    for (const part of s.split(',')) if (TRACK_RE.test(part)) ids.add(Number(part));
    return [...ids].sort((a, b) => a - b).slice(0, PINS_MAX);
}

/**
 * A time in µs as written in the URL: at most 3 decimals (ns), no exponent.
 * @param {number} us
 * @returns {string}
 */
export function urlTime(us) {
    return us.toFixed(3).replace(/\.?0+$/, '');
}

/**
 * The canonical relative URL of a route: "./", "./?q=gpt&sort=-bytes",
 * "./?run=ID&view=memory&rank=2", "./?job=7". Defaults are left out.
 * @param {Partial<Route>} fields missing fields take their defaults
 * @returns {string}
 */
export function buildUrl(fields) {
    const r = makeRoute(fields);
    const p = new URLSearchParams();
    if (r.view === 'run' && r.run) {
        p.set('run', r.run);
        if (r.tab && r.tab !== DEFAULT_TAB) p.set('view', r.tab);
        if (r.rank !== null && r.rank >= 0) p.set('rank', String(r.rank));
        const t = TAB_TABLES[r.tab];
        if (t) {
            if (r.group && r.group !== t.groups[0] && t.groups.includes(r.group)) p.set('group', r.group);
            if (r.q) p.set('q', r.q);
            if (r.sort && t.sorts.includes(r.sort)) p.set('sort', r.sort);
            if (r.order) p.set('order', r.order);
            if (r.offset > 0) p.set('offset', String(Math.floor(r.offset)));
        }
        if (r.tab === 'memory') {
            if (r.device) p.set('device', r.device);
            if (r.start !== null && r.end !== null && r.start < r.end) {
                p.set('start', urlTime(r.start));
                p.set('end', urlTime(r.end));
            }
            if (r.min > 0) p.set('min', String(Math.floor(r.min)));
        }
        if (r.tab === 'timeline') {
            if (r.start !== null && r.end !== null && r.start < r.end) {
                p.set('start', urlTime(r.start));
                p.set('end', urlTime(r.end));
            }
            const sel = parseSel(r.sel);
            if (sel) p.set('sel', buildSel(sel));
            const pins = parsePins((r.pins || []).join(','));
            if (pins.length) p.set('pins', pins.join(','));
            if (r.q) p.set('q', r.q);
            if (r.cp) p.set('cp', '1');
        }
    } else if (r.view === 'compare' && r.a && r.b) {
        p.set('compare', `${r.a},${r.b}`);
        if (r.rankA !== null && r.rankA >= 0) p.set('rank_a', String(r.rankA));
        if (r.rankB !== null && r.rankB >= 0) p.set('rank_b', String(r.rankB));
        if (r.ctable === 'operators') p.set('table', 'operators');
        const status = parseStatuses(r.status);
        if (status) p.set('status', status);
        if (r.ctable !== 'operators' && r.group === 'family') p.set('group', 'family');
        if (r.per === 'total') p.set('per', 'total');
        if (r.q) p.set('q', r.q);
        if (r.sort && COMPARE_SORTS.includes(r.sort)) p.set('sort', r.sort);
        if (r.order) p.set('order', r.order);
        if (r.offset > 0) p.set('offset', String(Math.floor(r.offset)));
    } else if (r.view === 'job' && r.job !== null) {
        p.set('job', String(r.job));
    } else {
        if (r.q) p.set('q', r.q);
        if (r.sort) p.set('sort', r.sort);
    }
    // "," and ":" need no escaping in a query (sel=3:12.5:4&pins=1,2 reads better)
    const qs = p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
    return qs ? './?' + qs : './';
}

/**
 * Identity of the page a route shows: two routes with the same key are the
 * same mounted view (only tabs, rank or filters differ).
 * @param {Route} r
 * @returns {string}
 */
export function routeKey(r) {
    if (r.view === 'run') return 'run:' + r.run;
    if (r.view === 'job') return 'job:' + r.job;
    if (r.view === 'compare') return `compare:${r.a},${r.b}`;
    return 'runs';
}

// --- browser half -----------------------------------------------------------

/** @type {((route: Route) => void) | null} */
let onRoute = null;

/**
 * Resolves a relative URL against the current address. "./?…" names this
 * document: when the page was loaded by file name (…/index.html, or a dev
 * fixture page such as dev/runs.html) that file name is kept.
 * @param {string} url
 * @returns {URL}
 */
function resolve(url) {
    const abs = new URL(url, location.href);
    const dir = location.pathname.replace(/[^/]*$/, '');
    if (abs.origin === location.origin && abs.pathname === dir) abs.pathname = location.pathname;
    return abs;
}

/** @returns {Route} the route of the current address */
export function currentRoute() {
    return parseRoute(location.search);
}

/**
 * Goes to a route or relative URL. Pushes a history entry unless
 * opts.replace. Reports the new route even if the URL did not change.
 * @param {Partial<Route> | string} target
 * @param {{replace?: boolean}} [opts]
 */
export function navigate(target, opts = {}) {
    const abs = resolve(typeof target === 'string' ? target : buildUrl(target));
    if (opts.replace || abs.href === location.href) history.replaceState(null, '', abs.href);
    else history.pushState(null, '', abs.href);
    if (onRoute) onRoute(parseRoute(abs.search));
}

/** @param {MouseEvent} ev */
function onClick(ev) {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
    if (!(a instanceof HTMLAnchorElement) || a.target || a.hasAttribute('download')) return;
    const url = resolve(a.href);
    if (url.origin !== location.origin || url.pathname !== location.pathname) return;
    if (url.hash && url.search === location.search) return; // in-page anchor
    ev.preventDefault();
    navigate(url.href);
}

function onPopState() {
    if (onRoute) onRoute(currentRoute());
}

/**
 * Starts routing: canonicalizes the address, reports the current route,
 * then every change. Returns a function that stops it.
 * @param {(route: Route) => void} callback
 * @returns {() => void}
 */
export function startRouter(callback) {
    onRoute = callback;
    window.addEventListener('popstate', onPopState);
    document.addEventListener('click', onClick);
    const route = currentRoute();
    const canonical = resolve(buildUrl(route));
    canonical.hash = location.hash;
    if (canonical.href !== location.href) history.replaceState(null, '', canonical.href);
    callback(route);
    return () => {
        onRoute = null;
        window.removeEventListener('popstate', onPopState);
        document.removeEventListener('click', onClick);
    };
}
