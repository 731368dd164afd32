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
 *
 * "Group by" (a select in the head; &agroup= in the URL) picks the view:
 * by name (/timeline/aggregate, with the counters), or, from
 * /timeline/flame, by lane, by category, or the flame graph (flame.js).
 * The flame graph of one operator (the details' "Flame graph" button)
 * shows here too, its title naming the operator.
 */

import { C } from '../classes.js';
import { alertBox, h, replace } from '../dom.js';
import { formatMicros, formatNumber, formatOffset } from '../format.js';
import * as T from '../timescale.js';
import { counterUnit, formatCounter } from './data.js';
import { detailsHead } from './details.js';
import { createFlame } from './flame.js';

/** @typedef {import('../apitypes.js').TimelineAggregate} TimelineAggregate */

/**
 * @typedef {object} AreaActions
 * @property {number} origin                             time shown as 0
 * @property {string | null} highlight                   the name highlighted now
 * @property {{id: number, unit: string}[]} counterDefs  units of the counters
 * @property {(name: string) => string | null} toggle    toggle a name's highlight; the new highlight
 * @property {() => void} zoom                           fit the view to the area
 * @property {() => void} clear                          clear the area
 * @property {AreaGroup} group                           the grouping shown
 * @property {(g: AreaGroup) => void} regroup            the user picked another grouping
 * @property {(track: number) => string} [trackName]     a lane's title (by lane)
 * @property {string} [operator]                         the operator whose flame graph this is
 */

/** @typedef {'name' | 'lane' | 'cat' | 'flame'} AreaGroup */

/** The groupings, as the URL and the menu name them. */
export const AREA_GROUPS = /** @type {const} */ ([
    ['name', 'By name'],
    ['lane', 'By lane'],
    ['cat', 'By category'],
    ['flame', 'Flame graph'],
]);

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
        areaHead(act),
        h('p', { class: C.muted }, `${span(a, act)}, slices of the lanes shown that start in the window, by name. Click a row to highlight its slices.`),
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

/**
 * The head of the panel: title, group menu, zoom and clear.
 * @param {AreaActions} act
 */
function areaHead(act) {
    const head = detailsHead(act.operator ? 'Flame graph' : TITLE, () => act.zoom(), () => act.clear());
    if (act.operator) return head;
    const pick = /** @type {HTMLSelectElement} */ (
        h('select', { class: [C.select, C.inputSm], 'aria-label': 'Group the area by' }, AREA_GROUPS.map(([v, t]) => h('option', { value: v }, t)))
    );
    pick.value = act.group;
    pick.addEventListener('change', () => act.regroup(/** @type {AreaGroup} */ (pick.value)));
    head.insertBefore(pick, head.children[1]);
    return head;
}

/**
 * "1.2 ms → 3.4 ms (2.2 ms)".
 * @param {{start: number, end: number}} a
 * @param {AreaActions} act
 */
function span(a, act) {
    return `${formatOffset(a.start, act.origin)} → ${formatOffset(a.end, act.origin)} (${T.formatSpan(a.end - a.start)})`;
}

/**
 * The area by lane or by category, or its flame graph (/timeline/flame).
 * @param {HTMLElement} box
 * @param {{start: number, end: number}} a
 * @param {import('./flame.js').Flame} f
 * @param {AreaActions} act
 */
export function showFlame(box, a, f, act) {
    if (act.group === 'flame' || act.operator) {
        const g = createFlame(f, { title: 'Flame graph', empty: 'No slices in this window.' });
        replace(
            box,
            areaHead(act),
            h('p', { class: C.muted }, act.operator ? `${act.operator}: what ran inside it, by call path (nesting in time).` : `${span(a, act)}: the slices of the lanes shown by call path (nesting in time), time clipped to the window.`),
            g.el,
        );
        return;
    }
    const byLane = act.group === 'lane';
    /** @type {{key: string, count: number, total_us: number, self_us: number}[]} */
    const rows = byLane
        ? f.lanes.map((l) => ({ key: act.trackName ? act.trackName(l.track) : `track ${l.track}`, count: l.count, total_us: l.total_us, self_us: l.self_us }))
        : f.cats.map((c) => ({ key: c.cat || '(none)', count: c.count, total_us: c.total_us, self_us: c.self_us }));
    replace(
        box,
        areaHead(act),
        h('p', { class: C.muted }, `${span(a, act)}: time of the slices of the lanes shown, clipped to the window, by ${byLane ? 'lane (self adds up to the lane\u2019s busy time)' : 'category'}.`),
        rows.length
            ? h(
                  'div',
                  { class: C.tlTableScroll },
                  h(
                      'table',
                      { class: [C.table, C.tableCompact], 'aria-label': byLane ? 'Area by lane' : 'Area by category' },
                      h('thead', null, h('tr', null, [byLane ? 'Lane' : 'Category', 'Count', 'Total', 'Self'].map((t, i) => h('th', { scope: 'col', class: i > 0 && C.num }, t)))),
                      h(
                          'tbody',
                          null,
                          rows.map((r) =>
                              h(
                                  'tr',
                                  null,
                                  h('td', { class: C.cellName, title: r.key }, r.key),
                                  h('td', { class: C.num }, formatNumber(r.count)),
                                  h('td', { class: C.num }, formatMicros(r.total_us)),
                                  h('td', { class: C.num }, formatMicros(r.self_us)),
                              ),
                          ),
                      ),
                  ),
              )
            : h('p', { class: C.muted }, 'No slices in this window.'),
    );
}
