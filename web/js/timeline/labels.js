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
                class: C.tlGroup,
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
            h(
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
