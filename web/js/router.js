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
 *   ./?project=<name>          a project's trends (&by=meta.KEY: x axis by
 *       that metadata value, default by date; &pick=A,B: runs ticked)
 *   ./?compare=A,B             two runs compared (B against the baseline A;
 *       A = B with &rank_a= &rank_b= compares two ranks); &table=operators
 *       (default kernels), &status=added,removed,faster,slower,same,
 *       &group=family (kernels), &per=total, &q= &sort= &order= &offset=;
 *       ./?view=compare&a=A&b=B is read the same way
 *   ./?compare=A,B,C           three or more runs side by side (views/comparen.js);
 *       &base=ID (the baseline, default the first) &rank=N (every run's);
 *       the ids are kept as given (at most 32) so the page can say what is
 *       wrong with a list that is too long, malformed or repeats a run
 *   ./?live=<project>          live job lines (&job_id=J: one job; views/live.js)
 *   anything else              runs list (the address is rewritten to ./)
 *
 * The router owns only the global keys (run, view = the run page's tab,
 * rank, compare, job) that pick the page; every view declares the rest of
 * its parameters itself (`export const params`, see params.js): runs.js,
 * compare.js, and each run page tab through views/run.js (tabParams). A
 * route holds the global keys of its page plus the fields its view (or
 * tab) declares, nothing else.
 *
 * Pure half (no DOM; tested under node): parseRoute() turns a query string
 * into a Route, buildUrl() turns route fields back into a relative URL.
 * Every URL is relative ("./?run=…") so the app works under any base path.
 *
 * Browser half: startRouter() reports the current Route and every later
 * change (navigate(), popstate, clicks on same-page links) to one callback.
 * navigate() pushes a history entry by default (switching views) and
 * replaces the current one with {replace: true} (filters, rank, redirects).
 * On start the address is rewritten to its canonical form with
 * replaceState, which also drops parameters we do not own (e.g. a `token`
 * the server may have accepted on the first load).
 */

import { RANK_RE, intParam, pickParams, readParams, writeParams } from './params.js';

export { buildSel, parsePins, parseSel, urlTime } from './params.js';

/** @typedef {'runs' | 'run' | 'job' | 'compare' | 'comparen' | 'live' | 'project'} ViewName */
/** @typedef {import('./params.js').ParamSpec} ParamSpec */
/**
 * @template {ParamSpec} S
 * @typedef {import('./params.js').ParamValues<S>} ParamValues
 */

/** @typedef {{view: 'runs'} & ParamValues<typeof import('./views/runs.js').params>} RunsRoute  runs list */
/** @typedef {{view: 'job', job: number}} JobRoute  ingest job progress */
/**
 * The run page's own keys; the active tab adds the fields it declares
 * (TabRoute).
 * @typedef {object} RunRoute
 * @property {'run'} view
 * @property {string} run   run id
 * @property {string} tab   one of TABS ids (URL parameter `view`)
 * @property {number | null} rank  selected rank; null = all (a per-rank tab shows the lowest)
 */
/**
 * The route of a run page tab whose view declares `S`.
 * @template {ParamSpec} S
 * @typedef {RunRoute & ParamValues<S>} TabRoute
 */
/**
 * @typedef {{view: 'compare', a: string, b: string} & ParamValues<typeof import('./views/compare.js').params>} CompareRoute
 *   two runs compared: B against the baseline A
 */
/**
 * @typedef {{view: 'comparen', runs: string[]} & ParamValues<typeof import('./views/comparen.js').params>} CompareNRoute
 *   three or more runs side by side
 */
/** @typedef {{view: 'live', project: string, job_id: string}} LiveRoute  a project's live job lines (job_id "" = every job) */
/**
 * @typedef {{view: 'project', project: string} & ParamValues<typeof import('./views/project.js').params>} ProjectRoute
 *   a project's trends
 */
/** @typedef {RunsRoute | JobRoute | RunRoute | CompareRoute | CompareNRoute | LiveRoute | ProjectRoute} Route  what parseRoute() answers */

/**
 * Fields buildUrl() and navigate() accept: any view's, those of other
 * views than `view` are ignored and missing ones take their defaults.
 * @typedef {{view?: ViewName, run?: string | null, job?: number | null, tab?: string, rank?: number | null, a?: string | null, b?: string | null, runs?: string[], project?: string | null, job_id?: string}
 *   & Partial<ParamValues<typeof import('./views/runs.js').params>> & Partial<ParamValues<typeof import('./views/compare.js').params>>
 *   & Partial<ParamValues<typeof import('./views/comparen.js').params>> & Partial<import('./views/run.js').TabFields>
 *   & Partial<ParamValues<typeof import('./views/project.js').params>>} RouteFields
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
    { id: 'report', label: 'Report', live: true },
]);

/** Tab shown when the URL names none (or an unknown one). */
export const DEFAULT_TAB = 'overview';

/**
 * The URL parameters each view declares (web/js/views/index.js collects
 * them). The views import the router to build their links, so the router
 * is handed their declarations at start rather than importing them.
 * @typedef {object} ViewParams
 * @property {typeof import('./views/runs.js').params} runs
 * @property {typeof import('./views/compare.js').params} compare
 * @property {typeof import('./views/comparen.js').params} comparen
 * @property {typeof import('./views/project.js').params} project
 * @property {(tab: string) => ParamSpec} tabParams  the run page tab's
 */
/** @type {ViewParams | null} */
let declared = null;

/**
 * Hands the router the views' parameter declarations; call once before
 * parsing or building any URL (app.js at start, tests before they route).
 * @param {ViewParams} v
 */
export function useViews(v) {
    declared = v;
}

/** @returns {ViewParams} */
function views() {
    if (!declared) throw new Error('router: useViews() was not called');
    return declared;
}

const RUN_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
const JOB_RE = /^[1-9][0-9]{0,9}$/;
/** A project name as the server allows it (checked there; here: not empty, not absurd), and a job id. */
const PROJECT_RE = /^[^/]{1,400}$/;
const JOB_ID_RE = /^[^\s]{1,128}$/;

/** The run page's rank, a global key (every tab keeps it). */
const RANK = intParam('rank', RANK_RE, null);
/** The ingest job number. */
const JOB = intParam('job', JOB_RE, null);

/**
 * The route of `fields.view` (default: the runs list): its global keys and
 * the fields its view declares, each from `fields` or at its default;
 * fields of other views are dropped.
 * @param {RouteFields} [fields]
 * @returns {Route}
 */
export function makeRoute(fields = {}) {
    const f = /** @type {Readonly<Record<string, any>>} */ (fields);
    if (fields.view === 'run') {
        const tab = fields.tab || DEFAULT_TAB;
        return { view: 'run', run: fields.run || '', tab, rank: fields.rank ?? null, ...pickParams(views().tabParams(tab), f) };
    }
    if (fields.view === 'job') return { view: 'job', job: fields.job || 0 };
    if (fields.view === 'live') return { view: 'live', project: fields.project || '', job_id: fields.job_id || '' };
    if (fields.view === 'compare') return { view: 'compare', a: fields.a || '', b: fields.b || '', ...pickParams(views().compare, f) };
    if (fields.view === 'comparen') return { view: 'comparen', runs: fields.runs || [], ...pickParams(views().comparen, f) };
    if (fields.view === 'project') return { view: 'project', project: fields.project || '', ...pickParams(views().project, f) };
    return { view: 'runs', ...pickParams(views().runs, f) };
}

/**
 * Parses a query string ("?run=abc&view=info", with or without "?"): the
 * global keys pick the view, then that view's descriptor reads the rest.
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
        const rank = RANK.parse(p.get('rank'), p) ?? null;
        return { view: 'run', run, tab, rank, ...readParams(views().tabParams(tab), p) };
    }
    const live = p.get('live');
    if (live !== null && PROJECT_RE.test(live)) {
        const job = p.get('job_id') || '';
        return { view: 'live', project: live, job_id: JOB_ID_RE.test(job) ? job : '' };
    }
    const many = compareMany(p);
    if (many) return { view: 'comparen', runs: many, ...readParams(views().comparen, p) };
    const pair = comparePair(p);
    if (pair) return { view: 'compare', a: pair[0], b: pair[1], ...readParams(views().compare, p) };
    const job = JOB.parse(p.get('job'), p);
    if (job !== undefined && job !== null) return { view: 'job', job };
    const project = p.get('project');
    if (project !== null && PROJECT_RE.test(project)) return { view: 'project', project, ...readParams(views().project, p) };
    return { view: 'runs', ...readParams(views().runs, p) };
}

/** The most ids a comparen route keeps (the page refuses more than 8). */
const COMPARE_IDS_KEPT = 32;

/**
 * The runs of `compare=A,B,C` (three or more, as given, each cut to 64
 * characters), or null.
 * @param {URLSearchParams} p
 * @returns {string[] | null}
 */
function compareMany(p) {
    const list = p.get('compare');
    if (list === null) return null;
    const ids = list.split(',');
    return ids.length >= 3 ? ids.slice(0, COMPARE_IDS_KEPT).map((x) => x.slice(0, 64)) : null;
}

/**
 * The two runs of a compare page (`compare=A,B`, or `view=compare&a=A&b=B`),
 * or null when the query names no valid pair.
 * @param {URLSearchParams} p
 * @returns {[string, string] | null}
 */
function comparePair(p) {
    let a = null, b = null;
    const pair = p.get('compare');
    if (pair !== null) [a, b] = pair.split(',');
    else if ((p.get('view') || '').toLowerCase() === 'compare') [a, b] = [p.get('a'), p.get('b')];
    return a && b && RUN_ID_RE.test(a) && RUN_ID_RE.test(b) ? [a, b] : null;
}

/**
 * The canonical relative URL of a route: "./", "./?q=gpt&sort=-bytes",
 * "./?run=ID&view=memory&rank=2", "./?job=7". The global keys come first,
 * then the view's parameters in the order it declares them; defaults are
 * left out.
 * @param {RouteFields} fields missing fields take their defaults
 * @returns {string}
 */
export function buildUrl(fields) {
    const f = /** @type {Readonly<Record<string, any>>} */ (fields);
    const p = new URLSearchParams();
    if (fields.view === 'run' && fields.run) {
        p.set('run', fields.run);
        const tab = fields.tab || DEFAULT_TAB;
        if (tab !== DEFAULT_TAB) p.set('view', tab);
        const rank = RANK.serialize(fields.rank ?? null, f);
        if (rank !== null) p.set('rank', rank);
        writeParams(views().tabParams(tab), f, p);
    } else if (fields.view === 'compare' && fields.a && fields.b) {
        p.set('compare', `${fields.a},${fields.b}`);
        writeParams(views().compare, f, p);
    } else if (fields.view === 'live' && fields.project) {
        p.set('live', fields.project);
        if (fields.job_id) p.set('job_id', fields.job_id);
    } else if (fields.view === 'comparen' && fields.runs && fields.runs.length) {
        p.set('compare', fields.runs.join(','));
        writeParams(views().comparen, f, p);
    } else if (fields.view === 'job' && fields.job !== null && fields.job !== undefined) {
        p.set('job', String(fields.job));
    } else if (fields.view === 'project' && fields.project) {
        p.set('project', fields.project);
        writeParams(views().project, f, p);
    } else {
        writeParams(views().runs, f, p);
    }
    // "," and ":" need no escaping in a query (sel=3:12.5:4&pins=1,2 reads better)
    const qs = p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
    return qs ? './?' + qs : './';
}

/**
 * A route as the page of `view` sees it: the app mounts that page only for
 * routes of its view, so this only narrows the type.
 * @template {ViewName} V
 * @param {Route} route
 * @param {V} view
 * @returns {Extract<Route, {view: V}>}
 */
export function routeAs(route, view) {
    void view;
    return /** @type {Extract<Route, {view: V}>} */ (route);
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
    if (r.view === 'live') return `live:${r.project}:${r.job_id}`;
    if (r.view === 'comparen') return `comparen:${r.runs.join(',')}`;
    if (r.view === 'project') return 'project:' + r.project;
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
 * @param {RouteFields | string} target
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
