// @ts-check
/**
 * table.js — a table whose sorting, filtering and paging happen on the
 * server (the analysis API's `sort`, `order`, `q`, `offset`, `limit`).
 *
 * The URL is the table's state: the view passes the query parsed from the
 * URL to set(); clicks on headers, typing in the search box (debounced)
 * and the pager call opts.onQuery(patch), which writes the URL; the
 * route change comes back through set(), which fetches only when the
 * request actually changed. A newer request aborts the one in flight, so
 * an old answer never overwrites a newer one.
 *
 * Layout: a toolbar (the view's own controls, search box, row count, CSV
 * link), the table, a pager. While a page loads the old rows stay, dimmed;
 * a failure replaces the table with an error box and a Retry button. Cells
 * are built by the columns' cell() functions from DOM nodes and text only.
 *
 * Pure helpers (sort toggling, page arithmetic) are exported for
 * tests/web/table.test.mjs.
 */

import { ApiError } from './api.js';
import { C } from './classes.js';
import { alertBox, h, replace } from './dom.js';
import { formatNumber } from './format.js';
import { computingBox, isComputing } from './tabs.js';

/** @typedef {import('./dom.js').Child} Child */
/** @typedef {import('./api.js').Params} Params */

/** Rows per page. */
export const PAGE_SIZE = 100;

/** Milliseconds the search box waits after the last key before filtering. */
export const SEARCH_DELAY_MS = 300;

/**
 * The part of a route a table reads: see router.js.
 * @typedef {object} TableQuery
 * @property {string} sort   server sort key; "" = the server's default
 * @property {'' | 'asc' | 'desc'} order  "" = that key's default direction
 * @property {string} q      search text
 * @property {number} offset first row shown
 */

/**
 * @template R
 * @typedef {object} Column
 * @property {string} label
 * @property {string} [sort]  server sort key; the column is sortable when set
 * @property {boolean} [num]  a number: right-aligned, sorted descending first
 * @property {string} [help]  what the column means (header tooltip)
 * @property {string | (string | false | null | undefined)[]} [cls] cell classes
 * @property {boolean} [clamp] long text: clipped to two lines (the title shows it whole)
 * @property {(row: R) => Child} cell
 * @property {(row: R) => string | null} [title] cell tooltip (full text of a clipped cell)
 */

/**
 * The sort a table shows: the query's, or the server's default, in its
 * default direction (ascending for text keys, descending for numbers).
 * @param {{sort: string, order: string}} query
 * @param {string} defaultSort
 * @param {(key: string) => boolean} isText
 * @returns {{sort: string, order: 'asc' | 'desc'}}
 */
export function effectiveSort(query, defaultSort, isText) {
    const sort = query.sort || defaultSort;
    const order = query.order === 'asc' || query.order === 'desc' ? query.order : isText(sort) ? 'asc' : 'desc';
    return { sort, order };
}

/**
 * The sort after clicking the header of `key`: the current column flips
 * direction; another column starts in its natural one.
 * @param {{sort: string, order: 'asc' | 'desc'}} current effective sort
 * @param {string} key
 * @param {boolean} text the column holds text (starts ascending)
 * @returns {{sort: string, order: 'asc' | 'desc'}}
 */
export function toggleSort(current, key, text) {
    if (current.sort === key) return { sort: key, order: current.order === 'asc' ? 'desc' : 'asc' };
    return { sort: key, order: text ? 'asc' : 'desc' };
}

/**
 * Where a page sits: rows from..to (1-based, inclusive; 0..0 when empty)
 * and the offsets of the previous and next pages (null at either end).
 * @param {number} offset
 * @param {number} limit
 * @param {number} total
 * @returns {{from: number, to: number, prev: number | null, next: number | null}}
 */
export function pageInfo(offset, limit, total) {
    const size = Math.max(1, limit);
    const off = Math.max(0, Math.min(offset, Math.max(0, total - 1)));
    const from = total > 0 ? off + 1 : 0;
    const to = Math.min(total, off + size);
    return {
        from,
        to,
        prev: off > 0 ? Math.max(0, off - size) : null,
        next: off + size < total ? off + size : null,
    };
}

/**
 * @template R
 * @template {import('./apitypes.js').TablePage<R>} P
 * @typedef {object} TableOptions
 * @property {string} label        accessible name of the table ("Operators")
 * @property {string} noun         counted thing, singular ("operator")
 * @property {string} [nounPlural]
 * @property {string} placeholder  search box hint
 * @property {Child} [controls]    the view's controls, left of the search box
 * @property {(page: P | null) => Column<R>[]} columns
 * @property {(page: P | null) => string} defaultSort  the server's default sort key
 * @property {(params: Params, signal: AbortSignal) => Promise<P>} load
 * @property {(params: Params) => string} csvUrl  relative URL of the CSV of all matching rows
 * @property {(patch: Partial<TableQuery>) => void} onQuery  writes the URL
 * @property {(page: P) => Child} [summary]  a line above the table
 * @property {(page: P) => void} [onPage]   after each page arrives (views update their controls)
 */

/**
 * @template R
 * @template {import('./apitypes.js').TablePage<R>} P
 * @param {TableOptions<R, P>} opts
 * @returns {{el: HTMLElement, set: (query: TableQuery, params: Params) => void, destroy: () => void}}
 */
export function createTable(opts) {
    const plural = opts.nounPlural || opts.noun + 's';
    const search = h('input', {
        type: 'search',
        class: C.input,
        placeholder: opts.placeholder,
        'aria-label': 'Search ' + opts.label.toLowerCase(),
        spellcheck: 'false',
        autocomplete: 'off',
        maxlength: 200,
    });
    const count = h('span', { class: [C.muted, C.nowrap], 'aria-live': 'polite' });
    const csv = h('a', { class: [C.btn, C.btnSm], download: '', title: 'Download every matching row as CSV' }, 'CSV');
    const summary = h('div', { class: C.muted });
    // a wide table scrolls inside its box, never past the page (issue 21)
    const body = h('div', { class: C.tableScroll }, h('p', { class: [C.muted, C.loading] }, `Loading ${plural}…`));
    const pager = h('div', { class: C.pager });
    const el = h(
        'section',
        { class: C.tableBox, 'aria-label': opts.label },
        h('div', { class: C.toolbar }, opts.controls, search, h('span', { class: C.spacer }), count, csv),
        summary,
        body,
        pager,
    );

    /** @type {TableQuery} */
    let query = { sort: '', order: '', q: '', offset: 0 };
    /** @type {Params} */
    let params = {};
    let key = '';
    /** @type {AbortController | null} */
    let ctrl = null;
    /** @type {P | null} */
    let page = null;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let destroyed = false;

    search.addEventListener('input', () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
            const q = search.value.trim();
            if (q !== query.q) opts.onQuery({ q, offset: 0 });
        }, SEARCH_DELAY_MS);
    });
    search.addEventListener('keydown', (ev) => {
        if (ev.key !== 'Enter') return;
        clearTimeout(timer);
        const q = search.value.trim();
        if (q !== query.q) opts.onQuery({ q, offset: 0 });
    });

    /** @returns {Params} */
    function requestParams() {
        return {
            ...params,
            q: query.q,
            sort: query.sort,
            order: query.order,
            offset: query.offset || null,
            limit: PAGE_SIZE,
        };
    }

    /** @param {string} sortKey */
    function isText(sortKey) {
        const col = opts.columns(page).find((c) => c.sort === sortKey);
        return col ? !col.num : sortKey === 'name' || sortKey === 'op';
    }

    async function load() {
        if (ctrl) ctrl.abort();
        const mine = new AbortController();
        ctrl = mine;
        el.classList.add(C.busy);
        el.setAttribute('aria-busy', 'true');
        try {
            const p = await opts.load(requestParams(), mine.signal);
            if (destroyed || ctrl !== mine) return;
            page = p;
            if (opts.onPage) opts.onPage(p);
            render();
        } catch (e) {
            if (destroyed || ctrl !== mine || (e instanceof ApiError && e.code === 'aborted')) return;
            page = null;
            replace(summary);
            replace(count);
            replace(pager);
            replace(
                body,
                isComputing(e) ? computingBox(plural, e instanceof Error ? e.message : String(e), () => load()) : alertBox(
                    'error',
                    `Could not load the ${plural}`,
                    h('p', null, e instanceof Error ? e.message : String(e)),
                    h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => load() } }, 'Retry'),
                ),
            );
        } finally {
            if (ctrl === mine) {
                el.classList.remove(C.busy);
                el.removeAttribute('aria-busy');
            }
        }
    }

    function render() {
        if (!page) return;
        const p = page;
        const cols = opts.columns(p);
        // the server says which sort it applied (when it echoes it), else infer it
        const echo = /** @type {{sort?: unknown, order?: unknown}} */ (p);
        const sorted =
            typeof echo.sort === 'string' && (echo.order === 'asc' || echo.order === 'desc')
                ? { sort: echo.sort, order: /** @type {'asc' | 'desc'} */ (echo.order) }
                : effectiveSort(query, opts.defaultSort(p), isText);
        const info = pageInfo(p.offset ?? query.offset, p.limit || PAGE_SIZE, p.total);
        replace(count, `${formatNumber(p.total)} ${p.total === 1 ? opts.noun : plural}`);
        replace(summary, opts.summary ? opts.summary(p) : null);
        const head = h(
            'tr',
            null,
            cols.map((c) => {
                const on = c.sort && c.sort === sorted.sort;
                const cls = [c.num && C.num, c.sort && C.sortable, on && (sorted.order === 'asc' ? C.sortedAsc : C.sortedDesc)];
                const attrs = { scope: 'col', class: cls, title: c.help || null, 'aria-sort': on ? (sorted.order === 'asc' ? 'ascending' : 'descending') : null };
                if (!c.sort) return h('th', attrs, c.label);
                const sortKey = c.sort;
                return h(
                    'th',
                    attrs,
                    h(
                        'button',
                        {
                            type: 'button',
                            dataset: { sort: sortKey },
                            on: {
                                click: () => {
                                    const next = toggleSort(sorted, sortKey, !c.num);
                                    opts.onQuery({ sort: next.sort, order: next.order, offset: 0 });
                                },
                            },
                        },
                        c.label,
                    ),
                );
            }),
        );
        const rows = p.rows.length
            ? p.rows.map((row) =>
                  h(
                      'tr',
                      null,
                      cols.map((c) =>
                          h(
                              'td',
                              { class: [c.num && C.num, ...[c.cls || []].flat()], title: c.title ? c.title(row) : null },
                              c.clamp ? h('div', { class: C.cellClamp }, c.cell(row)) : c.cell(row),
                          ),
                      ),
                  ),
              )
            : h(
                  'tr',
                  null,
                  h(
                      'td',
                      { colspan: cols.length, class: C.muted },
                      query.q ? `No ${opts.noun} matches “${query.q}”.` : `No ${plural} in this selection.`,
                  ),
              );
        replace(body, h('table', { class: C.table, 'aria-label': opts.label }, h('thead', null, head), h('tbody', null, rows)));
        replace(
            pager,
            p.total > 0 ? h('span', { class: C.muted }, `${formatNumber(info.from)}–${formatNumber(info.to)} of ${formatNumber(p.total)}`) : null,
            info.prev !== null || info.next !== null
                ? [
                      pageButton('« First', info.prev === null ? null : 0),
                      pageButton('‹ Previous', info.prev),
                      pageButton('Next ›', info.next),
                  ]
                : null,
        );
    }

    /**
     * @param {string} text
     * @param {number | null} offset null = disabled
     */
    function pageButton(text, offset) {
        return h(
            'button',
            {
                type: 'button',
                class: [C.btn, C.btnSm],
                disabled: offset === null,
                on: { click: () => offset !== null && opts.onQuery({ offset }) },
            },
            text,
        );
    }

    return {
        el,
        set(nextQuery, nextParams) {
            query = { ...nextQuery };
            params = { ...nextParams };
            if (document.activeElement !== search && search.value.trim() !== query.q) search.value = query.q;
            const { offset: _o, limit: _l, ...all } = requestParams();
            csv.setAttribute('href', opts.csvUrl({ ...all, format: 'csv' }));
            const nextKey = JSON.stringify(requestParams());
            if (nextKey === key) return;
            key = nextKey;
            load();
        },
        destroy() {
            destroyed = true;
            clearTimeout(timer);
            if (ctrl) ctrl.abort();
        },
    };
}
