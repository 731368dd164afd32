// @ts-check
/**
 * tabs.js — what the run page's analysis tabs (views/overview.js,
 * operators.js, kernels.js, memory.js) share: the context run.js mounts
 * them with, writing table state to the URL, the rank a tab shows, section
 * headings, the error box for a failed analysis request (a run
 * imported before analyses existed answers 409; an unknown rank 404), and
 * small cells and chart keys (share bars, swatches, legends, stacks).
 */

import * as api from './api.js';
import { C } from './classes.js';
import { linearScale, niceTicks, timeTickLabels } from './charts.js';
import { alertBox, h, replace, svg } from './dom.js';
import { formatPercent } from './format.js';
import { buildUrl, navigate, routeAs } from './router.js';

/** @typedef {import('./dom.js').Child} Child */
/** @typedef {import('./router.js').RunRoute} Route */

/**
 * What views/run.js hands to a tab view's mount(root, ctx).
 * @typedef {object} TabContext
 * @property {import('./state.js').AppStore} store  the app store (route)
 * @property {import('./apitypes.js').RunDetail} run     the run, already loaded
 */

/**
 * A tab view module: mounted when its tab is shown, unmounted when another
 * is; while mounted it follows route changes through the store itself.
 * @typedef {object} TabView
 * @property {(root: HTMLElement, ctx: TabContext) => void} mount
 * @property {() => void} unmount
 * @property {import('./params.js').ParamSpec} params  its URL parameters (see params.js)
 */

/**
 * Writes a change of a tab's state into the URL (replaceState: filters,
 * sorting, paging and zooming are not history steps).
 * @param {import('./state.js').AppStore} store
 * @param {import('./router.js').RouteFields} patch
 */
export function updateRoute(store, patch) {
    navigate({ ...store.get().route, ...patch }, { replace: true });
}

/**
 * The route of the run page as the tab declaring `spec` sees it: the
 * router read the tab's fields with that descriptor, so this only narrows
 * the type.
 * @template {import('./params.js').ParamSpec} S
 * @param {import('./router.js').Route} route
 * @param {S} spec the tab's `params`
 * @returns {import('./router.js').TabRoute<S>}
 */
export function tabRoute(route, spec) {
    void spec;
    return /** @type {import('./router.js').TabRoute<S>} */ (routeAs(route, 'run'));
}

/**
 * The rank a per-rank tab shows: the URL's, else the run's lowest.
 * @param {import('./apitypes.js').RunDetail} run
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
 * @param {import('./apitypes.js').RunDetail} run
 * @param {number} rank
 * @returns {number | null}
 */
export function rankStartUs(run, rank) {
    const k = ((run.info && run.info.ranks) || []).find((r) => r.rank === rank);
    return k && typeof k.t0_ns === 'number' ? k.t0_ns / 1000 : null;
}

/** @typedef {{load: () => Promise<void>, stop: () => void}} LatestRequest */

/**
 * A tab's request that only its latest call may answer: each load() aborts
 * the one before and marks root busy until it settles; got() runs with the
 * answer, failed() with any error but an abort (also one got() threw),
 * neither once stop() was called.
 * @template T
 * @param {HTMLElement} root
 * @param {(signal: AbortSignal) => Promise<T>} request
 * @param {(v: T) => void} got
 * @param {(e: unknown) => void} failed
 * @returns {LatestRequest}
 */
export function latestRequest(root, request, got, failed) {
    /** @type {AbortController | null} */
    let ctrl = null;
    let stopped = false;
    async function load() {
        if (ctrl) ctrl.abort();
        const mine = new AbortController();
        ctrl = mine;
        root.classList.add(C.busy);
        try {
            const v = await request(mine.signal);
            if (!stopped && ctrl === mine) got(v);
        } catch (e) {
            if (stopped || ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            failed(e);
        } finally {
            if (ctrl === mine) root.classList.remove(C.busy);
        }
    }
    return {
        load,
        stop() {
            stopped = true;
            if (ctrl) ctrl.abort();
        },
    };
}

/**
 * A tab showing one answer about the rank in the URL (Overview, Report):
 * a loading line, then render(answer) in root, or the error with a retry;
 * asked again when the URL's rank changes while the tab is shown.
 * @template T
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 * @param {{tab: string, what: string, request: (route: Route, signal: AbortSignal) => Promise<T>, render: (v: T, route: Route) => Child}} o
 *        what: the answer's name in the loading line and the error's title
 * @returns {{destroy: () => void}}
 */
export function rankTab(root, ctx, o) {
    const { store, run } = ctx;
    let shownRank = /** @type {number | null | undefined} */ (undefined);
    const route = () => routeAs(store.get().route, 'run');
    /** @type {LatestRequest} */
    const req = latestRequest(
        root,
        (signal) => {
            shownRank = route().rank;
            return o.request(route(), signal);
        },
        (v) => replace(root, o.render(v, route())),
        (e) => replace(root, analysisError(e, o.what, route(), req.load)),
    );
    replace(root, h('p', { class: [C.muted, C.loading] }, `Loading the ${o.what}…`));
    req.load();
    const unsubscribe = store.subscribe((next) => {
        const r = next.route;
        if (r.view === 'run' && r.run === run.id && r.tab === o.tab && r.rank !== shownRank) req.load();
    });
    return {
        destroy() {
            req.stop();
            unsubscribe();
        },
    };
}

/**
 * @param {string} title
 * @param {...Child} body
 */
export function section(title, ...body) {
    return h('section', { class: C.section }, h('h2', { class: C.sectionTitle }, title), ...body);
}

/** How often a page whose run is still deriving asks again. */
export const COMPUTING_RETRY_MS = 1500;

/**
 * Whether the server answered that the run's stage is still being computed.
 * @param {unknown} e
 */
export function isComputing(e) {
    return e instanceof api.ApiError && e.code === 'computing';
}

/**
 * The state of a page whose run is still deriving: what it waits for (the
 * server's "computing… (stage, k of n stages done)") and a retry after a
 * while, as long as the box is on the page.
 * @param {string} what
 * @param {string} message
 * @param {() => void} retry
 * @returns {HTMLElement}
 */
export function computingBox(what, message, retry) {
    const box = alertBox('info', `Computing the ${what}…`, h('p', { 'data-computing': '' }, message), h('p', { class: C.muted }, 'The run was just imported: this part appears as soon as its stage is done.'));
    setTimeout(() => {
        if (box.isConnected) retry();
    }, COMPUTING_RETRY_MS);
    return box;
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
    if (isComputing(e)) return computingBox(what, message, retry);
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
 * A colour key: a square, a line ('line') or a dashed line ('dashed').
 * @param {string} color
 * @param {'box' | 'line' | 'dashed'} [shape]
 * @returns {HTMLElement}
 */
export function swatch(color, shape = 'box') {
    const s = h('span', { class: [C.swatch, shape !== 'box' && C.swatchLine, shape === 'dashed' && C.swatchDashed], 'aria-hidden': 'true' });
    if (shape === 'dashed') s.style.color = color;
    else s.style.background = color;
    return s;
}

/** @typedef {{label: string, color: string, help?: string, shape?: 'box' | 'line' | 'dashed'}} LegendItem */

/**
 * The key of a chart: one swatch and label per item (help: its tooltip).
 * @param {LegendItem[]} items
 * @returns {HTMLElement}
 */
export function legend(items) {
    return h('ul', { class: C.legend }, items.map((i) => h('li', { title: i.help || null }, swatch(i.color, i.shape), i.label)));
}

/**
 * One horizontal bar of coloured segments (HTML), each as wide as its share
 * of scale, the value of the full width.
 * @param {string} label aria-label
 * @param {{color: string, value: number, title: string}[]} segs  those of value 0 or less are left out
 * @param {number} scale > 0
 * @param {string} [cls] extra class
 * @returns {HTMLElement}
 */
export function hbar(label, segs, scale, cls) {
    return h(
        'div',
        { class: [C.hbar, cls], role: 'img', 'aria-label': label },
        segs
            .filter((s) => s.value > 0)
            .map((s) => {
                const seg = h('span', { class: C.hbarSeg, title: s.title });
                seg.style.width = ((s.value / scale) * 100).toFixed(2) + '%';
                seg.style.background = s.color;
                return seg;
            }),
    );
}

/**
 * One row of stackedBars(): its label on the axis (name: in the tooltip,
 * when other), its segments and its total (default: their sum).
 * @typedef {object} BarRow
 * @property {string} label
 * @property {string} [name]
 * @property {{label: string, color: string, value: number}[]} segs
 * @property {number} [total]
 * @property {string | false} [labelClass]    extra class of the label
 * @property {Record<string, string>} [attrs] extra attributes of the row's <g>
 */

/**
 * Horizontal stacked bars on one time axis, one row per item, in SVG
 * (viewBox units: it scales with its box). Segments of value 0 or less are
 * left out; labels longer than 22 characters are cut.
 * @param {object} o
 * @param {string} o.label                  aria-label
 * @param {BarRow[]} o.rows
 * @param {{w: number, left: number, right: number, top: number, row: number, gap: number, bottom: number}} o.box  geometry
 * @param {number} o.ticks                  about how many axis ticks
 * @param {number} [o.perUs]                value units per µs (1000 for ns; default 1)
 * @param {(v: number) => string} o.fmt     a value in the tooltips
 * @param {string} [o.class]                extra class of the <svg>
 * @returns {SVGSVGElement}
 */
export function stackedBars(o) {
    const { box, rows, fmt } = o;
    const { per, totals, ticks, step } = valueAxis(rows, o.perUs, o.ticks);
    const x = linearScale(0, ticks[ticks.length - 1] * per, box.left, box.w - box.right);
    const labels = timeTickLabels(ticks, step);
    const yAxis = box.top + rows.length * (box.row + box.gap);
    const short = (/** @type {string} */ s) => (s.length > 22 ? s.slice(0, 21) + '…' : s);
    return bodyScale(svg(
        'svg',
        { class: [C.chart, o.class], viewBox: `0 0 ${box.w} ${yAxis + box.bottom}`, role: 'img', 'aria-label': o.label },
        ticks.map((t, i) =>
            svg(
                'g',
                null,
                svg('line', { class: C.gridLine, x1: x.map(t * per), x2: x.map(t * per), y1: box.top, y2: yAxis }),
                svg('text', { class: C.axis, x: x.map(t * per), y: yAxis + 16, 'text-anchor': 'middle' }, labels[i]),
            ),
        ),
        rows.map((r, i) => {
            const y = box.top + i * (box.row + box.gap);
            let at = 0;
            const segs = r.segs.filter((s) => s.value > 0);
            return svg(
                'g',
                { ...r.attrs, class: C.bar },
                svg('title', null, barTip(r, segs, totals[i], fmt)),
                svg('text', { class: [C.axis, r.labelClass], x: box.left - 6, y: y + box.row / 2 + 4, 'text-anchor': 'end' }, short(r.label)),
                segs.map((s) => {
                    const x0 = x.map(at);
                    at += s.value;
                    return filled(svg('rect', { x: x0.toFixed(2), y, height: box.row, width: Math.max(0.5, x.map(at) - x0).toFixed(2) }), s.color);
                }),
            );
        }),
    ), box.w);
}

/**
 * The value axis of stacked bars: each bar's total (given, or the sum of
 * its positive segments) and ticks up to the largest.
 * @param {BarRow[]} rows
 * @param {number | undefined} perUs value units per µs
 * @param {number} n about how many ticks
 */
function valueAxis(rows, perUs, n) {
    const per = perUs ?? 1;
    const totals = rows.map((r) => r.total ?? r.segs.reduce((a, s) => a + Math.max(0, s.value), 0));
    const max = Math.max(0, ...totals);
    return { per, totals, ...niceTicks(0, max > 0 ? max / per : 1, n) };
}

/**
 * A bar's tooltip: its total, then each segment with its share.
 * @param {BarRow} r
 * @param {{label: string, value: number}[]} segs  the drawn ones
 * @param {number} total
 * @param {(v: number) => string} fmt
 */
function barTip(r, segs, total, fmt) {
    return [`${r.name ?? r.label}: ${fmt(total)}`, ...segs.map((s) => `${s.label}: ${fmt(s.value)} (${formatPercent(s.value, total)})`)].join('\n');
}

/**
 * Fills an SVG shape through its style, not its fill attribute: a colour
 * may then be a theme's custom property (`var(--tb-cp-cpu, #374151)`).
 * @param {SVGElement} el
 * @param {string} color
 */
function filled(el, color) {
    el.style.fill = color;
    return el;
}

/**
 * Caps a chart's width at its viewBox width in CSS pixels: a chart drawn
 * with 11 px axis text in viewBox units then shows it at 11 px or less,
 * never blown up past the body text by a wide card (issue 21).
 * @param {SVGSVGElement} el
 * @param {number} w the viewBox width
 * @returns {SVGSVGElement}
 */
export function bodyScale(el, w) {
    el.style.maxWidth = w + 'px';
    return el;
}

/**
 * Vertical stacked columns on one time axis, one per item (the steps of a
 * run): their width shrinks with their number, so 100 steps still fit the
 * box, and one label in every few columns is kept. Segments of value 0 or
 * less are left out.
 * @param {object} o
 * @param {string} o.label                 aria-label
 * @param {BarRow[]} o.cols                 label: under the column; name: its tooltip
 * @param {{w: number, h: number, left: number, right: number, top: number, bottom: number}} o.box  geometry
 * @param {string} o.axis                   the x axis' title
 * @param {number} [o.perUs]                value units per µs (1000 for ns; default 1)
 * @param {(v: number) => string} o.fmt     a value in the tooltips
 * @returns {SVGSVGElement}
 */
export function columnBars(o) {
    const { box, cols, fmt } = o;
    const { per, totals, ticks, step } = valueAxis(cols, o.perUs, 4);
    const y = linearScale(0, ticks[ticks.length - 1] * per, box.h - box.bottom, box.top);
    const plotW = box.w - box.left - box.right;
    const band = plotW / Math.max(1, cols.length);
    const barW = Math.max(1, Math.min(56, band * 0.7));
    const labels = timeTickLabels(ticks, step);
    const labelEvery = Math.ceil(cols.length / Math.max(1, Math.floor(plotW / 44)));
    return bodyScale(svg(
        'svg',
        { class: C.chart, viewBox: `0 0 ${box.w} ${box.h}`, role: 'img', 'aria-label': o.label },
        ticks.map((t, i) =>
            svg(
                'g',
                null,
                svg('line', { class: C.gridLine, x1: box.left, x2: box.w - box.right, y1: y.map(t * per), y2: y.map(t * per) }),
                svg('text', { class: C.axis, x: box.left - 6, y: y.map(t * per) + 4, 'text-anchor': 'end' }, labels[i]),
            ),
        ),
        svg('line', { class: C.gridLine, x1: box.left, x2: box.left, y1: box.top, y2: box.h - box.bottom }),
        cols.map((c, i) => {
            const x = box.left + band * i + (band - barW) / 2;
            const segs = c.segs.filter((g) => g.value > 0);
            let at = 0;
            return svg(
                'g',
                { ...c.attrs, class: C.bar },
                svg('title', null, barTip(c, segs, totals[i], fmt)),
                segs.map((g) => {
                    const y0 = y.map(at);
                    at += g.value;
                    return filled(svg('rect', { x: x.toFixed(2), width: barW.toFixed(2), y: y.map(at).toFixed(2), height: Math.max(0, y0 - y.map(at)).toFixed(2) }), g.color);
                }),
                i % labelEvery === 0
                    ? svg('text', { class: C.axis, x: (x + barW / 2).toFixed(2), y: box.h - box.bottom + 16, 'text-anchor': 'middle' }, c.label)
                    : null,
            );
        }),
        svg('text', { class: C.axis, x: box.left + plotW / 2, y: box.h - 6, 'text-anchor': 'middle' }, o.axis),
    ), box.w);
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
