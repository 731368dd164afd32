// @ts-check
/**
 * views/live.js — a live job (`./?live=P`, `&job_id=J` for one job): the
 * log and metric lines a running job posts to POST /api/projects/P/live,
 * shown as they arrive through the server-sent event stream GET
 * /api/projects/P/live (EventSource: it reconnects by itself and resumes
 * after the last event it got). A chart per numeric field (logchart.js,
 * redrawn at most every 500 ms) above the lines (the newest last, the last
 * MAX_LINES kept, the list follows the end unless scrolled up), and the
 * jobs seen, each a filter.
 *
 * mountLive(el, project, opts) is the part another page can place (the
 * project page); mount/unmount make it a view of the router. Every string
 * of a line is text.
 */

import { liveUrl } from '../api.js';
import { C } from '../classes.js';
import { h, replace, setTitle } from '../dom.js';
import { metricCharts } from '../logchart.js';
import { metricSeries } from '../logdata.js';
import { buildUrl, routeAs } from '../router.js';

/** @typedef {import('../apitypes.js').LogLine} LogLine */

/** Lines kept (and charted) at most. */
export const MAX_LINES = 5000;
/** Lines listed at most (the newest). */
const LIST_LINES = 500;

/** This view declares no URL parameters beyond live and job_id. */
export const params = Object.freeze({});

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {import('../state.js').AppStore} store
 */
export function mount(root, store) {
    unmount();
    const r = routeAs(store.get().route, 'live');
    setTitle(`Live: ${r.project}`);
    const box = h('div');
    root.replaceChildren(
        h(
            'div',
            { class: C.page },
            h('div', { class: C.pageHead }, h('h1', { class: C.title }, `Live job lines: ${r.project}`), r.job_id ? h('p', { class: C.subtitle }, `job ${r.job_id} · `, h('a', { href: buildUrl({ view: 'live', project: r.project }) }, 'every job')) : null),
            box,
        ),
    );
    active = mountLive(box, r.project, { job: r.job_id || null, jobHref: (job) => buildUrl({ view: 'live', project: r.project, job_id: job }) });
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * "06:00:01.120" (UTC) of unix µs.
 * @param {number} us
 * @returns {string}
 */
export function clockText(us) {
    return new Date(us / 1000).toISOString().slice(11, 23);
}

/**
 * Follows a project's live lines in el.
 * @param {HTMLElement} el
 * @param {string} project
 * @param {{job?: string | null, backlog?: number, jobHref?: (job: string) => string}} [opts]
 * @returns {{destroy: () => void, lines: () => LogLine[]}}
 */
export function mountLive(el, project, opts = {}) {
    /** @type {LogLine[]} */
    let lines = [];
    /** @type {Set<string>} */
    const jobs = new Set();
    const status = h('span', { class: [C.badge, C.badgeNeutral], role: 'status' }, 'connecting…');
    const count = h('span', { class: C.muted });
    const jobList = h('span', { class: C.muted });
    const charts = h('div', { dataset: { liveCharts: '1' } });
    const list = h('ol', { class: C.logLines, 'aria-label': 'Live lines', dataset: { liveLines: '1' } });
    const empty = h('p', { class: C.muted }, `No line yet. A job posts lines to ${liveUrl(project).replace('./', '/')}` + (opts.job ? `?job=${opts.job}` : '?job=ID') + ' (see the README).');
    replace(el, h('div', { class: C.toolbar }, status, count, h('span', { class: C.spacer }), jobList), charts, empty, list);

    let timer = 0;
    let follow = true;
    list.addEventListener('scroll', () => {
        follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    });

    /** @param {LogLine} l */
    function row(l) {
        const fields = Object.entries(l.fields || {});
        return h(
            'li',
            { class: C.logLine, dataset: { id: String(l.id) } },
            h('span', { class: C.logTime, title: new Date(l.ts_us / 1000).toISOString() }, clockText(l.ts_us)),
            h('span', { class: C.logFields }, l.job ? `job ${l.job}${l.rank === null ? '' : ` · rank ${l.rank}`}` : ''),
            h('span', { class: C.logText }, l.text, fields.length ? h('span', { class: C.logFields }, ' ' + fields.map(([k, v]) => `${k}=${v}`).join(' ')) : null),
        );
    }

    function redraw() {
        timer = 0;
        replace(count, `${lines.length} line${lines.length === 1 ? '' : 's'}`);
        replace(charts, metricCharts(metricSeries(lines)));
        replace(
            jobList,
            jobs.size ? 'jobs: ' : '',
            [...jobs].map((j, i) => [i ? ', ' : '', opts.jobHref ? h('a', { href: opts.jobHref(j) }, j) : j]),
        );
        empty.hidden = lines.length > 0;
        while (list.childElementCount > LIST_LINES) list.firstElementChild?.remove();
        if (follow) list.scrollTop = list.scrollHeight;
    }

    /** @param {LogLine} l */
    function add(l) {
        lines.push(l);
        if (lines.length > MAX_LINES) lines = lines.slice(lines.length - MAX_LINES);
        if (l.job) jobs.add(l.job);
        list.append(row(l));
        if (!timer) timer = window.setTimeout(redraw, lines.length < 50 ? 50 : 500);
    }

    const es = new EventSource(liveUrl(project, { job: opts.job || null, backlog: opts.backlog ?? 200 }));
    es.addEventListener('open', () => {
        replace(status, 'live');
        status.dataset.state = 'open';
    });
    es.addEventListener('error', () => {
        replace(status, es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting…');
        status.dataset.state = 'error';
    });
    es.addEventListener('line', (ev) => {
        try {
            add(JSON.parse(/** @type {MessageEvent} */ (ev).data));
        } catch {
            /* a malformed event is skipped */
        }
    });
    redraw();
    return {
        destroy() {
            es.close();
            if (timer) clearTimeout(timer);
        },
        lines: () => lines,
    };
}
