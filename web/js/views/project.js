// @ts-check
/**
 * views/project.js — a project's page (./?project=P): its runs over time.
 *
 * Four charts over the project's runs, one point (or bar) per run, on an
 * x axis by date (oldest first) or by a metadata value (&by=meta.KEY):
 * the average step stacked by category, GPU utilization, peak memory and
 * tensor-core share. Every point links to its run. A red triangle over a
 * run's step bar marks a regression: its average step is more than the
 * server's regression_pct slower than the previous run of the same
 * configuration (GPU, world size and metadata but the volatile keys; the
 * trend API decides). Below, the runs table: tick two (from the table or
 * by Alt-clicking points; &pick=A,B) and "Compare" opens ./?compare=A,B.
 *
 * Under them the project's live job lines as they arrive (views/live.js's
 * mountLive: server-sent events), so a job is watched before its trace
 * exists; a project with live lines and no run yet shows only those.
 *
 * Every state is in the URL (project, by, pick). Data: GET
 * ./api/projects/{P}/trend once per mount and on "Refresh". Names,
 * metadata and titles are text through h()/svg(), never HTML.
 * Lifetime: mount() renders and fetches; unmount() aborts the request.
 */

import * as api from '../api.js';
import { CATEGORY_INFO, byteTicks, categoryInfo, linearScale, niceTicks, stackBreakdown } from '../charts.js';
import { C } from '../classes.js';
import { alertBox, h, replace, setTitle, svg } from '../dom.js';
import { DASH, formatBytes, formatDate, formatMicros, formatShare, plural } from '../format.js';
import { stringParam } from '../params.js';
import { buildUrl, navigate, routeAs } from '../router.js';
import { legend } from '../tabs.js';
import { changeText, metaKeys, orderRuns, parsePicks, togglePick, xLabel } from '../trend.js';
import { mountLive } from './live.js';

/** @typedef {import('../apitypes.js').TrendRun} TrendRun */
/** @typedef {import('../apitypes.js').Trend} Trend */
/** @typedef {import('../state.js').AppStore} AppStore */

/** This page's URL parameters: the x axis ("" = date, "meta.KEY") and the ticked runs. */
export const params = Object.freeze({
    by: stringParam('by', { re: /^meta\.[A-Za-z0-9_.-]{1,64}$/ }),
    pick: stringParam('pick', { max: 200 }),
});

/** @typedef {import('../router.js').ProjectRoute} ProjectRoute */

const BOX = { w: 640, h: 230, left: 66, right: 12, top: 18, bottom: 44 };
const CATS = Object.keys(CATEGORY_INFO);

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    active = createProjectPage(root, store);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
function createProjectPage(root, store) {
    const project = routeAs(store.get().route, 'project').project;
    setTitle(project, 'Project');
    /** @type {Trend | null} */
    let data = null;
    const ctrl = new AbortController();
    const body = h('div', { class: C.section }, h('p', { class: [C.muted, C.loading] }, 'Loading the project…'));
    const liveBox = h('div');
    replace(
        root,
        h(
            'div',
            { class: C.page },
            h('p', null, h('a', { href: buildUrl({ view: 'runs' }) }, '← All runs')),
            h('h2', { class: C.sectionTitle }, 'Project ', h('bdi', null, project)),
            body,
            h('section', { class: C.section, dataset: { section: 'live' } },
                h('h2', { class: C.sectionTitle }, 'Live job lines ', h('a', { href: buildUrl({ view: 'live', project, job_id: '' }) }, '(open on its own)')),
                liveBox),
        ),
    );
    const live = mountLive(liveBox, project, { jobHref: (job) => buildUrl({ view: 'live', project, job_id: job }) });

    const route = () => routeAs(store.get().route, 'project');
    /** @param {Partial<ProjectRoute>} patch */
    const setRoute = (patch) => navigate({ ...route(), ...patch }, { replace: true });

    function render() {
        if (!data) return;
        const r = route();
        const runs = orderRuns(data.runs, r.by);
        const picks = parsePicks(r.pick, data.runs);
        const names = new Map(data.runs.map((x) => [x.id, x.name]));
        const nameOf = (/** @type {string} */ id) => names.get(id) || id;
        const pick = (/** @type {string} */ id) => setRoute({ pick: togglePick(picks, id).join(',') });
        const by = h(
            'select',
            { class: C.select, 'aria-label': 'X axis', dataset: { control: 'by' } },
            h('option', { value: '' }, 'by date'),
            metaKeys(data.runs).map((k) => h('option', { value: 'meta.' + k }, 'by ' + k)),
        );
        by.value = r.by;
        by.addEventListener('change', () => setRoute({ by: by.value }));
        const compare = h('button', { type: 'button', class: [C.btn, C.btnPrimary, C.btnSm], disabled: picks.length !== 2, dataset: { action: 'compare' } }, picks.length === 2 ? 'Compare the 2 ticked runs' : 'Tick two runs to compare');
        compare.addEventListener('click', () => {
            if (picks.length === 2) navigate({ view: 'compare', a: picks[0], b: picks[1] });
        });
        const regressions = data.runs.filter((x) => x.regression).length;
        const configs = new Set(data.runs.map((x) => x.config)).size;
        const ctx = { runs, by: r.by, picks, pick, nameOf };
        replace(
            body,
            h(
                'div',
                { class: C.toolbar },
                h('span', { class: C.muted }, `${plural(data.runs.length, 'run')} · ${plural(configs, 'configuration')} · `,
                    regressions ? h('strong', null, plural(regressions, 'regression')) : 'no regression',
                    ` (a run more than ${data.regression_pct} % slower than the previous run of its configuration)`),
                h('span', { class: C.spacer }),
                by,
                compare,
            ),
            h(
                'div',
                { class: C.trendGrid },
                chartCard('Average step', 'step', stepChart(ctx), legend(CATS.map((k) => categoryInfo(k)))),
                chartCard('GPU utilization', 'gpu_utilization', dotChart(ctx, (x) => x.gpu_utilization, formatShare, 1)),
                chartCard('Peak memory', 'peak_memory', dotChart(ctx, (x) => x.peak_memory_bytes, formatBytes)),
                chartCard('Tensor-core share', 'tensor_core_share', dotChart(ctx, (x) => x.tensor_core_share, formatShare, 1)),
            ),
            runsTable(ctx, data.volatile_meta),
        );
    }

    api.getTrend(project, ctrl.signal).then(
        (t) => {
            data = t;
            render();
        },
        (err) => {
            if (err instanceof api.ApiError && err.code === 'aborted') return;
            replace(body, alertBox('error', err instanceof api.ApiError && err.status === 404 ? 'No such project' : 'Could not load the project', h('p', null, err instanceof Error ? err.message : String(err))));
        },
    );
    const unsubscribe = store.subscribe((next, prev) => {
        if (next.route !== prev.route && next.route.view === 'project') render();
    });
    return {
        destroy() {
            ctrl.abort();
            live.destroy();
            unsubscribe();
        },
    };
}

/**
 * @typedef {object} ChartCtx
 * @property {TrendRun[]} runs  in x order
 * @property {string} by
 * @property {string[]} picks
 * @property {(id: string) => void} pick
 * @property {(id: string) => string} nameOf
 */

/**
 * @param {string} title
 * @param {string} key
 * @param {...(Node | null)} content
 */
function chartCard(title, key, ...content) {
    return h('section', { class: C.card, dataset: { chart: key } }, h('h3', { class: C.sectionTitle }, title), ...content);
}

/**
 * A run's point: a link to the run; Alt-click ticks it instead.
 * @param {ChartCtx} ctx
 * @param {TrendRun} r
 * @param {string} tip
 * @param {...SVGElement | null} shapes
 */
function pointLink(ctx, r, tip, ...shapes) {
    const a = svg('a', { class: [C.trendPoint, ctx.picks.includes(r.id) && C.trendPicked], 'data-run': r.id }, svg('title', null, tip), ...shapes);
    a.setAttribute('href', buildUrl({ view: 'run', run: r.id })); // built from the id: no markup can get in
    a.addEventListener('click', (ev) => {
        if (!ev.altKey) return;
        ev.preventDefault();
        ctx.pick(r.id);
    });
    return a;
}

/**
 * The frame of a chart: y grid with labels, x labels thinned to fit.
 * @param {ChartCtx} ctx
 * @param {number} top  y domain top
 * @param {(v: number) => string} fmt
 * @param {string} label
 * @param {(SVGElement | null)[]} marks
 */
function frame(ctx, top, fmt, label, marks) {
    const { ticks, y, band } = scales(ctx, top, fmt === formatBytes);
    const every = Math.ceil(ctx.runs.length / Math.max(1, Math.floor((BOX.w - BOX.left - BOX.right) / 84)));
    return svg(
        'svg',
        { class: C.chart, viewBox: `0 0 ${BOX.w} ${BOX.h}`, role: 'img', 'aria-label': label },
        ticks.map((t) => svg('line', { class: C.gridLine, x1: BOX.left, x2: BOX.w - BOX.right, y1: y.map(t), y2: y.map(t) })),
        ticks.map((t) => svg('text', { class: C.axis, x: BOX.left - 6, y: y.map(t) + 4, 'text-anchor': 'end' }, fmt(t))),
        ctx.runs.map((r, i) =>
            i % every === 0
                ? svg('text', { class: C.axis, x: (BOX.left + band * (i + 0.5)).toFixed(1), y: BOX.h - BOX.bottom + 16, 'text-anchor': 'middle' }, shorten(xLabel(r, ctx.by, ctx.runs)))
                : null,
        ),
        svg('text', { class: C.axis, x: BOX.left + (BOX.w - BOX.left - BOX.right) / 2, y: BOX.h - 6, 'text-anchor': 'middle' }, ctx.by ? ctx.by.slice(5) : 'date'),
        marks,
    );
}

/**
 * The y ticks and scale and the x band of a chart reaching top.
 * @param {ChartCtx} ctx
 * @param {number} top
 * @param {boolean} [bytes] ticks on round binary sizes
 */
function scales(ctx, top, bytes = false) {
    const { ticks } = bytes ? byteTicks(top, 4) : niceTicks(0, top, 4);
    return {
        ticks,
        y: linearScale(0, ticks[ticks.length - 1], BOX.h - BOX.bottom, BOX.top),
        band: (BOX.w - BOX.left - BOX.right) / Math.max(1, ctx.runs.length),
    };
}

/** @param {string} s */
function shorten(s) {
    // 14: a date label with seconds ("11-26 08:19:07", trend.js xLabel) stays whole
    return s.length > 14 ? s.slice(0, 13) + '…' : s;
}

/**
 * Average step per run, stacked by category, with the regression marks.
 * @param {ChartCtx} ctx
 */
function stepChart(ctx) {
    const has = ctx.runs.filter((r) => typeof r.avg_step_us === 'number');
    if (!has.length) return h('p', { class: C.muted }, 'No run of this project has steps to chart yet.');
    const top = Math.max(...has.map((r) => r.avg_step_us || 0)) * 1.12; // room for the marks
    const { y, band } = scales(ctx, top);
    const w = Math.max(2, Math.min(48, band * 0.7));
    const marks = ctx.runs.map((r, i) => {
        if (typeof r.avg_step_us !== 'number') return null;
        const x = BOX.left + band * i + (band - w) / 2;
        const segs = stackBreakdown(r.breakdown_us || {}, CATS).filter((g) => g.value > 0);
        const change = changeText(r, ctx.nameOf);
        const tip = [`${r.name} · ${formatDate(r.created)}`, `average step ${formatMicros(r.avg_step_us)}`, ...segs.map((g) => `${categoryInfo(g.key).label}: ${formatMicros(g.value)}`), change, r.config].filter(Boolean).join('\n');
        const yTop = y.map(r.avg_step_us);
        return pointLink(
            ctx,
            r,
            tip,
            ...(segs.length ? segs : [{ key: 'other', start: 0, end: r.avg_step_us, value: r.avg_step_us }]).map((g) =>
                svg('rect', { x: x.toFixed(1), width: w.toFixed(1), y: y.map(g.end).toFixed(1), height: Math.max(0.5, y.map(g.start) - y.map(g.end)).toFixed(1), fill: categoryInfo(g.key).color }),
            ),
            r.regression
                ? svg('path', { class: C.trendRegression, 'data-regression': r.id, d: `M${(x + w / 2).toFixed(1)} ${(yTop - 4).toFixed(1)} l-6 -10 h12 z` }, svg('title', null, 'Regression: ' + change))
                : null,
        );
    });
    return frame(ctx, top, (v) => formatMicros(v), `Average step of ${plural(has.length, 'run')}`, marks);
}

/**
 * One figure per run as points on a line.
 * @param {ChartCtx} ctx
 * @param {(r: TrendRun) => number | null} value
 * @param {(v: number) => string} fmt
 * @param {number} [floorTop] the y axis reaches at least this
 */
function dotChart(ctx, value, fmt, floorTop = 0) {
    const pts = ctx.runs.map((r, i) => ({ r, i, v: value(r) })).filter((p) => typeof p.v === 'number');
    if (!pts.length) return h('p', { class: C.muted }, 'The traces of this project do not give this figure.');
    const top = Math.max(floorTop, ...pts.map((p) => /** @type {number} */ (p.v))) || 1;
    const { y, band } = scales(ctx, top, fmt === formatBytes);
    const cx = (/** @type {number} */ i) => BOX.left + band * (i + 0.5);
    const line = svg('polyline', { class: C.trendLine, points: pts.map((p) => `${cx(p.i).toFixed(1)},${y.map(/** @type {number} */ (p.v)).toFixed(1)}`).join(' ') });
    const dots = pts.map((p) =>
        pointLink(ctx, p.r, `${p.r.name} · ${formatDate(p.r.created)}\n${fmt(/** @type {number} */ (p.v))}\n${p.r.config}`,
            svg('circle', { cx: cx(p.i).toFixed(1), cy: y.map(/** @type {number} */ (p.v)).toFixed(1), r: 5 })),
    );
    return frame(ctx, top, fmt, `${plural(pts.length, 'run')}`, [line, ...dots]);
}

/**
 * The runs, in x order, with their figures, configuration and tick boxes.
 * @param {ChartCtx} ctx
 * @param {string[]} volatile
 */
function runsTable(ctx, volatile) {
    return h(
        'section',
        { class: C.section },
        h('h3', { class: C.sectionTitle }, 'Runs'),
        h('p', { class: C.muted }, `A configuration is the GPU, the world size and the metadata except ${volatile.join(', ') || 'none'}.`),
        h(
            'table',
            { class: C.table },
            h('thead', null, h('tr', null, ['Compare', 'Run', 'Created', 'Avg step', 'Change', 'GPU util.', 'Peak memory', 'Tensor cores', 'Configuration'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
                'tbody',
                null,
                ctx.runs.map((r) => {
                    const box = h('input', { type: 'checkbox', checked: ctx.picks.includes(r.id), 'aria-label': `Compare “${r.name}”` });
                    box.addEventListener('change', () => ctx.pick(r.id));
                    return h(
                        'tr',
                        { dataset: { run: r.id } },
                        h('td', { class: C.cellPick }, box),
                        h('td', { class: C.cellGrow }, h('a', { href: buildUrl({ view: 'run', run: r.id }) }, r.name || r.id)),
                        h('td', { class: C.nowrap }, formatDate(r.created)),
                        h('td', { class: C.num }, formatMicros(r.avg_step_us)),
                        h('td', { class: C.num, title: changeText(r, ctx.nameOf) || 'no earlier run of this configuration' },
                            r.change_pct === null ? DASH : h('span', { class: r.regression ? [C.badge, C.badgeError] : null }, `${r.change_pct > 0 ? '+' : ''}${r.change_pct.toFixed(1)} %`)),
                        h('td', { class: C.num }, formatShare(r.gpu_utilization)),
                        h('td', { class: C.num }, typeof r.peak_memory_bytes === 'number' ? formatBytes(r.peak_memory_bytes) : DASH),
                        h('td', { class: C.num }, formatShare(r.tensor_core_share)),
                        h('td', { class: C.muted }, r.config),
                    );
                }),
            ),
        ),
    );
}
