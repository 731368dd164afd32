// @ts-check
/**
 * timeline/search.js — the Timeline tab's search box: the input, the
 * previous/next buttons and the "n / total" text, and /timeline/search.
 *
 * Typing searches after a 250 ms pause (and writes &q= through the view);
 * Enter selects the next match (Shift+Enter the previous), searching
 * first if the text changed; Escape gives the focus back to the plot.
 * Matches come a page at a time (searchpager.js: the view's sources, one
 * per rank shown), so the steps go through every match, not only the
 * first page's; the next page is fetched when the steps reach the end of
 * what is loaded. Matches cycle once all are loaded (Shift+Enter on the
 * first goes to the last only then); the first is the earliest. After a
 * reload the selection may be one of the matches: counting starts from it.
 *
 * The controller owns the query and the matches; the view reads them to
 * dim the other slices (queryLower) and tick the minimap (hits), and
 * passes in what it needs to know (the rank, the selection) and do
 * (select, repaint, write the URL). Only the latest request's answer is
 * kept; destroy() aborts it. The helpers at the end are pure.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { formatNumber } from '../format.js';
import { NEAR_US } from './data.js';
import { createPager } from './searchpager.js';

/** @typedef {import('../apitypes.js').TimelineSearch} TimelineSearch */
/** @typedef {TimelineSearch['hits'][number]} SearchHit */
/** @typedef {import('./searchpager.js').Source} Source */

export { SEARCH_LIMIT } from './searchpager.js';

/**
 * @typedef {object} SearchOptions
 * @property {string} initial                 the query in the URL
 * @property {(q: string, signal: AbortSignal) => Source[]} sources  where to search: a source per rank shown
 * @property {() => {track: number, ts: number} | null} selection  the selected slice
 * @property {(hit: SearchHit) => void} select  select and reveal a match
 * @property {() => void} changed             the query or the matches changed: repaint
 * @property {() => void} writeUrl            the query changed by typing: write &q=
 * @property {() => void} escape              Escape in the input
 */

/**
 * @param {SearchOptions} opts
 */
export function createSearch(opts) {
    const input = /** @type {HTMLInputElement} */ (
        h('input', {
            class: [C.input, C.inputSm],
            type: 'search',
            placeholder: 'Search slices',
            'aria-label': 'Search slice names',
            value: opts.initial,
            spellcheck: 'false',
        })
    );
    const hitText = h('span', { class: [C.muted, C.nowrap, C.tlHits], 'aria-live': 'polite' });
    const prevBtn = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Previous match (Shift+Enter)', 'aria-label': 'Previous match' }, '‹'));
    const nextBtn = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Next match (Enter)', 'aria-label': 'Next match' }, '›'));

    let query = opts.initial;
    let queryLower = query.toLowerCase();
    /** @type {ReturnType<typeof createPager> | null} */
    let pager = null;
    /** @type {TimelineSearch | null} */
    let hits = null;
    let hitIdx = -1;
    /** @type {AbortController | null} */
    let ctrl = null;
    let timer = 0;
    let dead = false;

    /**
     * Searches for q (all matches dropped at once, the count when they come).
     * @param {string} q
     * @param {boolean} writeUrl whether the URL is to follow
     */
    async function run(q, writeUrl) {
        query = q;
        queryLower = q.toLowerCase();
        hits = null;
        pager = null;
        hitIdx = -1;
        opts.changed();
        if (writeUrl) opts.writeUrl();
        if (ctrl) ctrl.abort();
        if (!q) {
            replace(hitText);
            syncButtons();
            return;
        }
        const mine = new AbortController();
        ctrl = mine;
        replace(hitText, 'searching…');
        try {
            const p = createPager(opts.sources(q, mine.signal));
            await p.start();
            if (dead || ctrl !== mine) return;
            pager = p;
            hits = { total: p.total, hits: p.hits };
            hitIdx = matchIndex(hits, opts.selection());
            if (hitIdx >= 0) showIndex();
            else replace(hitText, countText(p.total));
            syncButtons();
            opts.changed();
        } catch (e) {
            failed(e, mine);
        }
    }

    /**
     * @param {unknown} e
     * @param {AbortController} mine
     */
    function failed(e, mine) {
        if (dead || ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
        replace(hitText, e instanceof Error ? e.message : String(e));
    }

    function syncButtons() {
        const any = !!hits && hits.hits.length > 0;
        prevBtn.disabled = !any;
        nextBtn.disabled = !any;
    }

    /** @type {Promise<void>} */
    let chain = Promise.resolve();

    /**
     * Steps one match; steps queue, so every key press counts while a page loads.
     * @param {number} dir +1 or −1
     */
    function step(dir) {
        chain = chain.then(() => stepNow(dir));
        return chain;
    }

    /** @param {number} step +1 or −1 */
    async function stepNow(step) {
        const p = pager;
        const mine = ctrl;
        if (!p || !hits || !hits.hits.length || !mine) return;
        let i = stepIndex(hitIdx, step, p.done ? p.hits.length : Infinity);
        if (i < 0) i = 0; // before the first while pages remain: stay there
        try {
            const hit = (await p.ensure(i)) || (await p.ensure(0));
            if (dead || ctrl !== mine || pager !== p || !hit) return;
            hitIdx = p.hits.indexOf(hit);
            hits = { total: p.total, hits: p.hits };
            showIndex();
            opts.select(hit);
            opts.changed();
        } catch (e) {
            failed(e, mine);
        }
    }

    function showIndex() {
        if (hits) replace(hitText, indexText(hitIdx, hits));
    }

    input.addEventListener('input', () => {
        clearTimeout(timer);
        timer = window.setTimeout(() => run(input.value.trim(), true), 250);
    });
    input.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') {
            ev.preventDefault();
            if (input.value.trim() !== query) {
                clearTimeout(timer);
                run(input.value.trim(), true).then(() => step(ev.shiftKey ? -1 : 1));
            } else step(ev.shiftKey ? -1 : 1);
        } else if (ev.key === 'Escape') {
            opts.escape();
        }
    });
    prevBtn.addEventListener('click', () => step(-1));
    nextBtn.addEventListener('click', () => step(1));
    syncButtons();

    return {
        input,
        prevBtn,
        nextBtn,
        hitText,
        run,
        /**
         * The query came from the URL (back/forward, a pasted link): show it and search.
         * @param {string} q
         */
        setQuery(q) {
            input.value = q;
            run(q, false);
        },
        /** Forgets the matches (a new rank: run() again once it is loaded). */
        reset() {
            hits = null;
        },
        /** The query, as typed (trimmed). */
        get query() {
            return query;
        },
        /** The query in lower case ("" = no search). */
        get queryLower() {
            return queryLower;
        },
        /** @returns {TimelineSearch | null} the matches of the query, once answered */
        get hits() {
            return hits;
        },
        destroy() {
            dead = true;
            if (ctrl) ctrl.abort();
            clearTimeout(timer);
        },
    };
}

// --- pure helpers ------------------------------------------------------------------

/**
 * Index of the selection among the matches, or −1.
 * @param {TimelineSearch} r
 * @param {{track: number, ts: number} | null} sel
 * @returns {number}
 */
export function matchIndex(r, sel) {
    return sel ? r.hits.findIndex((x) => x.track === sel.track && Math.abs(x.ts_us - sel.ts) < NEAR_US) : -1;
}

/**
 * The match after (step +1) or before (−1) index i of n, cycling; from
 * none (−1) the first or the last. n = Infinity (more pages to come): no
 * cycling, −1 before the first.
 * @param {number} i
 * @param {number} step
 * @param {number} n > 0
 * @returns {number}
 */
export function stepIndex(i, step, n) {
    if (n === Infinity) return i < 0 ? (step > 0 ? 0 : -1) : i + step;
    return i < 0 ? (step > 0 ? 0 : n - 1) : (i + step + n) % n;
}

/**
 * "no matches", "1 match", "1,234 matches".
 * @param {number} total
 * @returns {string}
 */
export function countText(total) {
    return total === 0 ? 'no matches' : `${formatNumber(total)} ${total === 1 ? 'match' : 'matches'}`;
}

/**
 * "3 / 12" (match 3 of 12; later pages are fetched as the steps get there).
 * @param {number} i index of the current match
 * @param {TimelineSearch} r
 * @returns {string}
 */
export function indexText(i, r) {
    return `${formatNumber(i + 1)} / ${formatNumber(Math.max(r.total, r.hits.length))}`;
}
