// @ts-check
/**
 * timeline/options.js — the Timeline tab's lane options in the toolbar:
 * "GPU first" (GPU device groups above the CPU processes; &gpufirst=1) and
 * "Levels" (deep lanes folded to N depths; &depth=N, none = all). Both are
 * view state, so both live in the URL; the view writes them with the rest
 * (urlsync.js) and applies a route's through set().
 *
 * The controls are native (a checkbox, a select), so the keyboard and
 * screen readers use them as they are.
 */

import { C } from '../classes.js';
import { h } from '../dom.js';

/** The choices of "Levels" (0 = every depth). */
export const LEVEL_CHOICES = Object.freeze([0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32]);

/**
 * @typedef {object} LaneOptions
 * @property {boolean} gpuFirst
 * @property {number} levels   depths drawn per lane, 0 = all
 */

/**
 * @param {LaneOptions} initial  the route's
 * @param {() => void} changed   the user changed one: lay out again, write the URL
 */
export function createOptions(initial, changed) {
    /** @type {LaneOptions} */
    const cur = { gpuFirst: initial.gpuFirst, levels: initial.levels };
    const gpuBox = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox' }));
    gpuBox.checked = cur.gpuFirst;
    const levels = /** @type {HTMLSelectElement} */ (
        h(
            'select',
            { class: [C.select, C.inputSm], 'aria-label': 'Depths shown per lane', title: 'Fold deep lanes to this many levels' },
            levelChoices(cur.levels).map((n) => h('option', { value: String(n) }, n === 0 ? 'All levels' : `${n} level${n === 1 ? '' : 's'}`)),
        )
    );
    levels.value = String(cur.levels);
    gpuBox.addEventListener('change', () => {
        cur.gpuFirst = gpuBox.checked;
        changed();
    });
    levels.addEventListener('change', () => {
        cur.levels = Number(levels.value) || 0;
        changed();
    });
    return {
        elements: [h('label', { class: [C.field, C.nowrap], title: 'Show the GPU streams above the CPU threads' }, gpuBox, h('span', null, 'GPU first')), levels],
        get gpuFirst() {
            return cur.gpuFirst;
        },
        get levels() {
            return cur.levels;
        },
        /**
         * A route's options (back/forward, a pasted link); whether any changed.
         * @param {LaneOptions} o
         * @returns {boolean}
         */
        set(o) {
            if (o.gpuFirst === cur.gpuFirst && o.levels === cur.levels) return false;
            cur.gpuFirst = o.gpuFirst;
            cur.levels = o.levels;
            gpuBox.checked = o.gpuFirst;
            if (![...levels.options].some((op) => op.value === String(o.levels))) levels.append(h('option', { value: String(o.levels) }, `${o.levels} levels`));
            levels.value = String(o.levels);
            return true;
        },
    };
}

/**
 * The choices offered, with a URL's own number among them.
 * @param {number} n
 * @returns {number[]}
 */
export function levelChoices(n) {
    return LEVEL_CHOICES.includes(n) ? [...LEVEL_CHOICES] : [...LEVEL_CHOICES, n].sort((a, b) => a - b);
}

/**
 * The "Ranks" menu of a multi-rank run: stack the ranks on one timeline
 * (&ranks=all) and which of them (&ranks=0,2,5). A native <details> with
 * checkboxes, so the keyboard opens it (Enter/Space on its summary) and
 * ticks ranks (Space); each change applies at once.
 * @param {number[]} runRanks   the run's ranks, ascending
 * @param {number[] | null} initial  the stacked ranks (null: one rank shown)
 * @param {(chosen: number[] | null) => void} changed
 */
export function createRankPicker(runRanks, initial, changed) {
    const stackBox = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox' }));
    const boxes = runRanks.map((r) => /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', value: String(r) })));
    const summary = h('summary', { class: [C.btn, C.btnSm], title: 'Show several ranks on one timeline' });
    const el = h(
        'details',
        { class: C.tlRanks },
        summary,
        h(
            'div',
            { class: [C.card, C.tlRanksMenu] },
            h('label', { class: [C.field, C.nowrap] }, stackBox, h('span', null, 'All ranks on one timeline')),
            h('div', { class: C.tlRanksList }, runRanks.map((r, i) => h('label', { class: [C.field, C.nowrap] }, boxes[i], h('span', null, `Rank ${r}`)))),
        ),
    );
    /** @param {number[] | null} chosen */
    function show(chosen) {
        stackBox.checked = chosen !== null;
        const set = new Set(chosen || runRanks);
        boxes.forEach((b, i) => {
            b.checked = set.has(runRanks[i]);
            b.disabled = chosen === null;
        });
        summary.textContent = chosen === null ? 'One rank' : chosen.length === runRanks.length ? `All ${runRanks.length} ranks` : `${chosen.length} of ${runRanks.length} ranks`;
    }
    function read() {
        if (!stackBox.checked) return null;
        const chosen = runRanks.filter((_, i) => boxes[i].checked);
        return chosen.length ? chosen : null;
    }
    stackBox.addEventListener('change', () => {
        if (stackBox.checked) for (const b of boxes) b.checked = true;
        const c = read();
        show(c);
        changed(c);
    });
    for (const b of boxes)
        b.addEventListener('change', () => {
            const c = read();
            show(c);
            changed(c);
        });
    show(initial);
    return { el, show };
}
