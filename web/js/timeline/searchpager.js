// @ts-check
/**
 * timeline/searchpager.js — every match of a timeline search, a page at a
 * time: /timeline/search answers at most SEARCH_LIMIT matches, earliest
 * first, so the next page is asked with start = the last match's time and
 * the matches already seen (by time and id) are dropped. Several sources
 * (the ranks of a stacked view, each its own pages) are merged by time.
 *
 * Order is only known up to the earliest "last time" among the sources
 * that have more pages (a later match of one source may still be preceded
 * by an unseen one of another); ensure(i) fetches pages, earliest cursor
 * first, until match i is inside that safe prefix or every source is
 * done. A page of SEARCH_LIMIT matches that brings nothing new (that many
 * matches at one instant) ends its source rather than loop.
 *
 * No DOM; the fetches are the caller's (tested with fakes in
 * tests/web/timeline_search.test.mjs).
 */

/** Matches a page holds at most (the API's limit). */
export const SEARCH_LIMIT = 1000;

/** @typedef {{id?: number, track: number, ts_us: number, dur_us: number, name: string}} Hit */

/**
 * One source of matches: fetch(after) answers the page of matches starting
 * at or after `after` (null: from the start), times on the view's clock.
 * @typedef {{fetch: (after: number | null) => Promise<{total: number, hits: Hit[]}>}} Source
 */

/**
 * @param {Source[]} sources
 * @param {number} [limit] page size the sources ask for
 */
export function createPager(sources, limit = SEARCH_LIMIT) {
    const cur = sources.map((s) => ({ s, last: -Infinity, done: false }));
    /** @type {Hit[]} */
    const hits = [];
    /** @type {Set<string>} */
    const seen = new Set();
    let total = 0;

    /**
     * @param {typeof cur[number]} c
     * @param {boolean} first
     */
    async function page(c, first) {
        const r = await c.s.fetch(first ? null : c.last);
        if (first) total += r.total;
        let fresh = 0;
        for (const x of r.hits) {
            const k = `${x.ts_us}:${x.id ?? 0}:${x.track}`;
            if (seen.has(k)) continue;
            seen.add(k);
            hits.push(x);
            fresh++;
        }
        if (r.hits.length) c.last = Math.max(c.last, r.hits[r.hits.length - 1].ts_us);
        if (r.hits.length < limit || (!first && fresh === 0)) c.done = true;
        if (fresh) hits.sort((a, b) => a.ts_us - b.ts_us || a.track - b.track || (a.id ?? 0) - (b.id ?? 0));
    }

    /** The latest time up to which the merged order is final. */
    function safeEnd() {
        let end = Infinity;
        for (const c of cur) if (!c.done) end = Math.min(end, c.last);
        return end;
    }

    return {
        /** The first page of every source. */
        async start() {
            await Promise.all(cur.map((c) => page(c, true)));
        },
        /**
         * Fetches until match i is known in order (or none is left).
         * @param {number} i
         * @returns {Promise<Hit | null>}
         */
        async ensure(i) {
            while ((i >= hits.length || hits[i].ts_us > safeEnd()) && cur.some((c) => !c.done)) {
                const next = cur.filter((c) => !c.done).reduce((a, b) => (b.last < a.last ? b : a));
                await page(next, false);
            }
            return hits[i] || null;
        },
        /** Every source has answered its last page. */
        get done() {
            return cur.every((c) => c.done);
        },
        /** Matches in all (the first pages' totals). */
        get total() {
            return total;
        },
        /** The matches loaded so far, earliest first (borrowed). */
        get hits() {
            return hits;
        },
    };
}

/**
 * The start parameter of the page after a match at `ts` µs: a ns before
 * it, in the 3 decimals the URL keeps, so no match at that instant is
 * skipped (the repeats are dropped by id).
 * @param {number} ts
 * @returns {string}
 */
export function pageStart(ts) {
    // whole µs and ns apart (µs × 1000 passes 2^53 on epoch clocks), one ns
    // below (the fraction × 1000 may round up), printed by hand: toFixed
    // would round back up
    let us = Math.floor(ts);
    let ns = Math.floor((ts - us) * 1000) - 1;
    if (ns < 0) {
        us -= 1;
        ns += 1000;
    }
    return us < 0 ? '0.000' : `${us}.${String(ns).padStart(3, '0')}`;
}
