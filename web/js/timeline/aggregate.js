// @ts-check
/**
 * timeline/aggregate.js — the Timeline tab's "Area selection" panel:
 * empty (how to make one), loading, failed, or the answer of
 * /timeline/aggregate for the selected time window: a table of the slices
 * starting there by name (count, total, self, average) and one of the
 * counters (min, max, average).
 *
 * Stateless: each function replaces the panel's content whole. A click
 * (or Enter) on a name row asks the view to toggle that name's highlight
 * (AreaActions.toggle, which answers the highlight now in force); the
 * panel marks the highlighted row. Names reach the page as text.
 */

import { C } from '../classes.js';
import { alertBox, h, replace } from '../dom.js';
import { formatMicros, formatNumber, formatOffset } from '../format.js';
import * as T from '../timescale.js';
import { counterUnit, formatCounter } from './data.js';
import { detailsHead } from './details.js';

/** @typedef {import('../apitypes.js').TimelineAggregate} TimelineAggregate */

/**
 * @typedef {object} AreaActions
 * @property {number} origin                             time shown as 0
 * @property {string | null} highlight                   the name highlighted now
 * @property {{id: number, unit: string}[]} counterDefs  units of the counters
 * @property {(name: string) => string | null} toggle    toggle a name's highlight; the new highlight
 * @property {() => void} zoom                           fit the view to the area
 * @property {() => void} clear                          clear the area
 */

const TITLE = 'Area selection';

/** @param {HTMLElement} box */
export function showAreaEmpty(box) {
    replace(box, h('h2', { class: C.sectionTitle }, TITLE), h('p', { class: C.muted }, 'Shift+drag across the lanes, or drag on the time ruler, to list what ran in a time window.'));
}

/** @param {HTMLElement} box */
export function showAreaLoading(box) {
    replace(box, h('h2', { class: C.sectionTitle }, TITLE), h('p', { class: [C.muted, C.loading] }, 'Adding up the slices…'));
}

/**
 * @param {HTMLElement} box
 * @param {unknown} e
 */
export function showAreaError(box, e) {
    replace(box, h('h2', { class: C.sectionTitle }, TITLE), alertBox('error', 'Could not add up the window', h('p', null, e instanceof Error ? e.message : String(e))));
}

/**
 * @param {HTMLElement} box
 * @param {{start: number, end: number}} a the window, µs
 * @param {TimelineAggregate} r
 * @param {AreaActions} act
 */
export function showAggregate(box, a, r, act) {
    const rows = r.rows || [];
    /** @param {string} name @param {HTMLTableRowElement} tr */
    const toggle = (name, tr) => {
        const on = act.toggle(name);
        for (const row of tr.parentElement ? [...tr.parentElement.children] : []) row.classList.remove(C.tlRowOn);
        if (on !== null) tr.classList.add(C.tlRowOn);
    };
    /** @type {HTMLTableRowElement[]} */
    const trs = rows.map((row) => {
        /** @type {HTMLTableRowElement} */
        const tr = h(
            'tr',
            { class: [C.clickable, act.highlight === row.name && C.tlRowOn], title: 'Highlight these slices', tabindex: '0' },
            h('td', { class: [C.cellName, C.mono], title: row.name }, row.name),
            h('td', { class: C.num }, formatNumber(row.count)),
            h('td', { class: C.num }, formatMicros(row.total_us)),
            h('td', { class: C.num }, formatMicros(row.self_us)),
            h('td', { class: C.num }, formatMicros(row.avg_us)),
        );
        tr.addEventListener('click', () => toggle(row.name, tr));
        tr.addEventListener('keydown', (ev) => {
            if (ev.key === 'Enter') toggle(row.name, tr);
        });
        return tr;
    });
    const cs = r.counters || [];
    replace(
        box,
        detailsHead(TITLE, () => act.zoom(), () => act.clear()),
        h('p', { class: C.muted }, `${formatOffset(a.start, act.origin)} → ${formatOffset(a.end, act.origin)} (${T.formatSpan(a.end - a.start)}), slices of the lanes shown that start in the window, by name. Click a row to highlight its slices.`),
        rows.length
            ? h(
                  'div',
                  { class: C.tlTableScroll },
                  h(
                      'table',
                      { class: [C.table, C.tableCompact], 'aria-label': 'Slices in the area' },
                      h('thead', null, h('tr', null, ['Name', 'Count', 'Total', 'Self', 'Average'].map((t, i) => h('th', { scope: 'col', class: i > 0 && C.num }, t)))),
                      h('tbody', null, trs),
                  ),
              )
            : h('p', { class: C.muted }, 'No slices start in this window.'),
        cs.length
            ? h(
                  'table',
                  { class: [C.table, C.tableCompact], 'aria-label': 'Counters in the area' },
                  h('thead', null, h('tr', null, ['Counter', 'Min', 'Max', 'Average'].map((t, i) => h('th', { scope: 'col', class: i > 0 && C.num }, t)))),
                  h(
                      'tbody',
                      null,
                      cs.map((c) => {
                          const unit = counterUnit(act.counterDefs, c.id);
                          return h(
                              'tr',
                              null,
                              h('td', null, c.name),
                              h('td', { class: C.num }, formatCounter(c.min, unit)),
                              h('td', { class: C.num }, formatCounter(c.max, unit)),
                              h('td', { class: C.num }, formatCounter(c.avg, unit)),
                          );
                      }),
                  ),
              )
            : null,
    );
}
