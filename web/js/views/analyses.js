// @ts-check
/**
 * views/analyses.js — the run page's Analyses tab (`&view=analyses`): the
 * deeper GPU analyses of one rank, from GET ./api/runs/ID/analyses?rank=N
 * (stored at ingest; each object's fields are documented at the top of
 * server/derive/analyses/<name>.c).
 *
 * One section per analysis, each folding under its title, with an anchor (`#an-idle` … `#an-critpath`)
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
import { alertBox, bdi, h, replace } from '../dom.js';
import { plural } from '../format.js';
import { buildUrl } from '../router.js';
import { analysisError, latestRequest, rankStartUs, tabRank, tabRoute } from '../tabs.js';
import { isNum, obj, arr, dur } from './analyses/common.js';
import { idleSection } from './analyses/idle.js';
import { launchSection } from './analyses/launch.js';
import { queueSection } from './analyses/queue.js';
import { copySection } from './analyses/copy.js';
import { overlapSection } from './analyses/overlap.js';
import { annotationsSection } from './analyses/annotations.js';
import { fusionSection } from './analyses/fusion.js';
import { critpathSection } from './analyses/critical_path.js';

/** This tab declares no URL parameters beyond run, view and rank. */
export const params = Object.freeze({});

/** @typedef {import('../apitypes.js').AnalysesDoc} AnalysesDoc */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../router.js').TabRoute<typeof params>} Route */
/** @typedef {import('../dom.js').Child} Child */

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
            const route = tabRoute(store.get().route, params);
            rank = tabRank(run, route);
            shownRank = route.rank;
            return api.getAnalyses(run.id, rank, signal);
        },
        (d) => {
            const doc = d.ranks[String(rank)];
            replace(root, doc ? render(doc, rank, run, tabRoute(store.get().route, params)) : alertBox('warn', `No analyses for rank ${rank}`, 'The server returned none.'));
            markSection();
            revealHash();
        },
        // a run older than the analyses answers 409: analysisError says to upload it again
        (e) => replace(root, analysisError(e, 'analyses', tabRoute(store.get().route, params), req.load)),
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
        const r = tabRoute(next.route, params);
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
 * @param {import('../apitypes.js').RunDetail} run
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
 * @param {string} id anchor
 * @param {string} title
 * @param {Child} body null: not available
 */
function anSection(id, title, body) {
    // each section folds (a long run's sections are long): the page stays a list of titles to open
    const content = h('div', { id: id + '-body' }, body || h('p', { class: [C.muted, C.anNa] }, NA));
    const toggle = h('button', { type: 'button', class: [C.btn, C.btnSm, C.btnGhost], 'aria-expanded': 'true', 'aria-controls': id + '-body' }, 'Fold');
    toggle.addEventListener('click', () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        toggle.textContent = open ? 'Fold' : 'Unfold';
        content.hidden = !open;
    });
    return h(
        'section',
        { class: [C.section, C.anSection], id, dataset: { available: body ? '1' : '0' } },
        h('h2', { class: [C.sectionTitle, C.anHead] }, h('a', { href: '#' + id, class: C.anAnchor }, title), toggle),
        content,
    );
}
