// @ts-check
/**
 * timeline/labels.js — the Timeline tab's label column: a DOM element
 * beside each row of the layout (layout.js), at the row's y and height.
 *
 * A group row is a button that collapses or expands it (its title says
 * what a collapsed group holds); a lane shows its thread or stream name,
 * "empty" for a lane without slices, and a button that pins it to the top
 * or unpins it; a counter shows its name and unit. Pinned labels go in
 * their own box above the scrolled ones, which the view moves by the
 * lanes' scroll (a CSS transform of the inner box).
 *
 * Labels are DOM rather than canvas so that they are buttons a keyboard
 * and a screen reader can use, and so that trace strings reach the page
 * as text. The whole column is rebuilt when the layout changes (rarely:
 * pin, collapse, empty lanes, a new rank), never while zooming or panning.
 *
 * Sticky labels: a lane taller than the screen would scroll its label
 * away while its slices still fill the lanes; stickLabels() (on every
 * scroll) pushes the text of each lane whose top is scrolled off down to
 * the top of what shows, as far as the lane's bottom allows.
 */

import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { groupSummary, laneTitle } from './layout.js';

/** @typedef {import('./layout.js').Layout} Layout */
/** @typedef {import('./layout.js').Row} Row */

/**
 * @typedef {object} LabelActions
 * @property {(key: string) => void} toggleGroup  collapse or expand a group
 * @property {(id: number) => void} togglePin     pin or unpin a track
 */

/**
 * Rebuilds the label column.
 * @param {HTMLElement} pinnedBox  the pinned labels' box (hidden when none)
 * @param {HTMLElement} scrollInner  the scrolled labels' box
 * @param {Layout} layout
 * @param {Set<number>} pins
 * @param {LabelActions} act
 */
export function renderLabels(pinnedBox, scrollInner, layout, pins, act) {
    pinnedBox.style.height = layout.pinnedH + 'px';
    pinnedBox.hidden = layout.pinnedH === 0;
    replace(pinnedBox, layout.pinned.map((r) => labelRow(r, pins, act)));
    replace(scrollInner, layout.scroll.map((r) => labelRow(r, pins, act)));
    scrollInner.style.height = layout.contentH + 'px';
}

/**
 * Keeps the labels of lanes cut at the top in view (see above).
 * @param {HTMLElement} scrollInner  the scrolled labels' box, children in layout.scroll order
 * @param {Layout} layout
 * @param {number} scrollY
 */
export function stickLabels(scrollInner, layout, scrollY) {
    const els = scrollInner.children;
    for (let i = 0; i < layout.scroll.length && i < els.length; i++) {
        const r = layout.scroll[i];
        if (r.type !== 'track') continue;
        const el = /** @type {HTMLElement} */ (els[i]);
        const push = stickyOffset(r, scrollY);
        const want = push > 0 ? push + 3 + 'px' : '';
        if (el.style.paddingTop !== want) el.style.paddingTop = want;
    }
}

/**
 * How far a lane's label text moves down to stay in view: 0 while its top
 * shows, else up to 22 px above the lane's bottom.
 * @param {{y: number, h: number}} r   the row, y within the scrolled content
 * @param {number} scrollY
 * @returns {number}
 */
export function stickyOffset(r, scrollY) {
    return Math.max(0, Math.min(scrollY - r.y, r.h - 22));
}

/**
 * @param {Row} r
 * @param {Set<number>} pins
 * @param {LabelActions} act
 * @returns {HTMLElement}
 */
function labelRow(r, pins, act) {
    /** @type {HTMLElement} */
    let el;
    if (r.type === 'group') {
        const open = !r.collapsed;
        el = h(
            'button',
            {
                type: 'button',
                class: [C.tlGroup, r.kind === 'rank' && C.tlGroupRank, r.straggler && C.tlStraggler],
                dataset: r.kind === 'rank' ? { rank: String(r.rank) } : undefined,
                'aria-expanded': String(open),
                title: open ? 'Collapse' : `Expand: ${groupSummary(r)}`,
                on: { click: () => act.toggleGroup(r.key) },
            },
            h('span', { class: C.tlCaret, 'aria-hidden': 'true' }, open ? '▾' : '▸'),
            h('span', { class: C.tlName }, r.label || ''),
            h('span', { class: C.muted }, String(r.count || 0)),
        );
    } else if (r.type === 'track' && r.track) {
        const t = r.track;
        const pinned = pins.has(t.id);
        el = h(
            'div',
            { class: [C.tlLabel, pinned && C.tlLabelPinned], dataset: { track: String(t.id), kind: t.kind }, title: laneTitle(t) },
            h('span', { class: C.tlName }, t.name || `track ${t.id}`),
            t.nslices === 0 ? h('span', { class: C.muted }, 'empty') : null,
            // the job log's lane (a negative id, timeline/loglane.js) stays at the top: no pin
            t.id < 0 ? null : h(
                'button',
                {
                    type: 'button',
                    class: [C.btn, C.btnGhost, C.btnSm, C.tlPin],
                    'aria-pressed': String(pinned),
                    'aria-label': pinned ? 'Unpin this lane' : 'Pin this lane to the top',
                    title: pinned ? 'Unpin' : 'Pin to the top',
                    on: { click: () => act.togglePin(t.id) },
                },
                pinned ? '✕' : '⇡',
            ),
        );
    } else {
        const c = /** @type {{id: number, name: string, unit: string}} */ (r.counter);
        el = h('div', { class: [C.tlLabel, C.tlCounter], dataset: { counter: String(c.id) }, title: c.name }, h('span', { class: C.tlName }, c.name), h('span', { class: C.muted }, c.unit));
    }
    el.style.top = r.y + 'px';
    el.style.height = r.h + 'px';
    return el;
}
