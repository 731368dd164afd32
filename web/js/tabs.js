// @ts-check
/**
 * tabs.js — what the run page's analysis tabs (views/overview.js,
 * operators.js, kernels.js, memory.js) share: the context run.js mounts
 * them with, writing table state to the URL, the rank a tab shows, section
 * headings, and the error box for a failed analysis request (a run
 * imported before analyses existed answers 409; an unknown rank 404).
 */

import * as api from './api.js';
import { C } from './classes.js';
import { alertBox, h } from './dom.js';
import { formatPercent } from './format.js';
import { buildUrl, navigate } from './router.js';

/** @typedef {import('./dom.js').Child} Child */
/** @typedef {import('./router.js').Route} Route */

/**
 * What views/run.js hands to a tab view's mount(root, ctx).
 * @typedef {object} TabContext
 * @property {import('./state.js').AppStore} store  the app store (route)
 * @property {import('./api.js').RunDetail} run     the run, already loaded
 */

/**
 * A tab view module: mounted when its tab is shown, unmounted when another
 * is; while mounted it follows route changes through the store itself.
 * @typedef {object} TabView
 * @property {(root: HTMLElement, ctx: TabContext) => void} mount
 * @property {() => void} unmount
 */

/**
 * Writes a change of a tab's state into the URL (replaceState: filters,
 * sorting, paging and zooming are not history steps).
 * @param {import('./state.js').AppStore} store
 * @param {Partial<Route>} patch
 */
export function updateRoute(store, patch) {
    navigate({ ...store.get().route, ...patch }, { replace: true });
}

/**
 * The rank a per-rank tab shows: the URL's, else the run's lowest.
 * @param {import('./api.js').RunDetail} run
 * @param {Route} route
 * @returns {number}
 */
export function tabRank(run, route) {
    if (route.rank !== null) return route.rank;
    const ranks = ((run.info && run.info.ranks) || []).map((k) => k.rank);
    return ranks.length ? Math.min(...ranks) : 0;
}

/**
 * The trace-clock start (µs) of a rank, from the run's import info; null
 * when unknown. Tabs print times relative to it.
 * @param {import('./api.js').RunDetail} run
 * @param {number} rank
 * @returns {number | null}
 */
export function rankStartUs(run, rank) {
    const k = ((run.info && run.info.ranks) || []).find((r) => r.rank === rank);
    return k && typeof k.t0_ns === 'number' ? k.t0_ns / 1000 : null;
}

/**
 * @param {string} title
 * @param {...Child} body
 */
export function section(title, ...body) {
    return h('section', { class: C.section }, h('h2', { class: C.sectionTitle }, title), ...body);
}

/**
 * The message shown in place of a tab whose request failed.
 * @param {unknown} e
 * @param {string} what the tab's data, for the title ("overview", "memory curve")
 * @param {Route} route
 * @param {() => void} retry
 * @returns {HTMLElement}
 */
export function analysisError(e, what, route, retry) {
    const message = e instanceof Error ? e.message : String(e);
    const info = h('a', { href: buildUrl({ view: 'run', run: route.run, tab: 'info' }) }, 'Info tab');
    if (e instanceof api.ApiError && e.status === 409) {
        return alertBox(
            'warn',
            `No ${what} for this run`,
            h('p', null, message),
            h('p', null, 'Upload its trace files again to get this tab. The ', info, ' still shows what was imported.'),
        );
    }
    if (e instanceof api.ApiError && e.status === 404 && route.rank !== null) {
        return alertBox(
            'warn',
            `This run has no rank ${route.rank}`,
            h('p', null, message),
            h('p', null, h('a', { href: buildUrl({ ...route, rank: null, offset: 0 }) }, 'Show the first rank')),
        );
    }
    return alertBox(
        'error',
        `Could not load the ${what}`,
        h('p', null, message),
        h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: retry } }, 'Retry'),
    );
}

/**
 * A percentage with a small bar behind it (table cells).
 * @param {number | null | undefined} n
 * @param {number} total
 * @returns {HTMLElement}
 */
export function shareBar(n, total) {
    const fill = h('span', { class: C.shareFill });
    const v = typeof n === 'number' && total > 0 ? Math.max(0, Math.min(1, n / total)) : 0;
    fill.style.width = (v * 100).toFixed(1) + '%';
    return h('span', { class: C.shareBar }, h('span', { class: C.shareTrack }, fill), h('span', null, formatPercent(n, total)));
}

/**
 * A Python call stack (frames separated by newlines, innermost first, as
 * the server stores them): the first frame, and the rest folded away.
 * @param {string} stack
 * @returns {Child}
 */
export function stackCell(stack) {
    const frames = stack.split('\n').filter(Boolean);
    if (!frames.length) return h('span', { class: C.muted }, 'no stack');
    if (frames.length === 1) return h('span', { class: C.mono }, frames[0]);
    return h(
        'details',
        { class: C.details },
        h('summary', { class: C.mono }, frames[0], h('span', { class: C.muted }, ` +${frames.length - 1}`)),
        h('pre', { class: C.code }, frames.slice(1).join('\n')),
    );
}
