// @ts-check
/**
 * timeline/drawer.js — the Timeline tab's drawer: the slice details and the
 * area selection in a panel below the lanes, so the timeline keeps the
 * screen and neither falls below the fold. A handle above it (a separator
 * a pointer drags, or the keyboard moves with the arrow keys, Home and
 * End) resizes it; its height is remembered in localStorage (per browser,
 * not per run: it is a taste, not a view of the data). fitHeight() sizes
 * the whole tab to the window below its top.
 *
 * The drawer owns its DOM and the size; the view owns what goes in it.
 * Pure helpers (clampDrawer) are at the end.
 */

import { C } from '../classes.js';
import { h } from '../dom.js';

/** localStorage key of the drawer's height, CSS px. */
export const DRAWER_KEY = 'tb.timeline.drawer';
/** Height of a new drawer, and its bounds. */
export const DRAWER_DEFAULT = 160;
export const DRAWER_MIN = 60;
/** The lanes keep at least this much of the tab. */
export const LANES_MIN = 220;

/**
 * @param {HTMLElement[]} panels what the drawer shows, side by side
 * @param {() => void} resized   the drawer's height changed (redraw)
 */
export function createDrawer(panels, resized) {
    const box = h('div', { class: C.tlDrawer }, h('div', { class: C.tlPanels }, panels));
    const handle = h('div', {
        class: C.tlHandle,
        role: 'separator',
        tabindex: '0',
        'aria-orientation': 'horizontal',
        'aria-label': 'Resize the details drawer (arrow keys)',
        title: 'Drag to resize the details drawer',
    });
    let height = readHeight();
    /** The tab's height, set by fitHeight(). */
    let total = 0;

    function apply() {
        const hgt = clampDrawer(height, total);
        box.style.height = hgt + 'px';
        handle.setAttribute('aria-valuenow', String(Math.round(hgt)));
    }

    /** @param {number} v */
    function set(v) {
        height = clampDrawer(v, total);
        apply();
        try {
            localStorage.setItem(DRAWER_KEY, String(Math.round(height)));
        } catch {
            // private mode: the size lasts as long as the tab
        }
        resized();
    }

    handle.addEventListener('pointerdown', (ev) => {
        ev.preventDefault();
        handle.setPointerCapture(ev.pointerId);
        const y0 = ev.clientY;
        const h0 = box.getBoundingClientRect().height;
        /** @param {PointerEvent} e */
        const move = (e) => set(h0 - (e.clientY - y0));
        const up = () => {
            handle.removeEventListener('pointermove', move);
            handle.removeEventListener('pointerup', up);
        };
        handle.addEventListener('pointermove', move);
        handle.addEventListener('pointerup', up);
    });
    handle.addEventListener('keydown', (ev) => {
        const step = ev.shiftKey ? 100 : 20;
        if (ev.key === 'ArrowUp') set(height + step);
        else if (ev.key === 'ArrowDown') set(height - step);
        else if (ev.key === 'Home') set(Infinity);
        else if (ev.key === 'End') set(DRAWER_MIN);
        else return;
        ev.preventDefault();
    });
    apply();

    return {
        box,
        handle,
        /**
         * Sizes the tab (`content`) to the window below its top.
         * @param {HTMLElement} content
         */
        fitHeight(content) {
            const top = content.getBoundingClientRect().top + window.scrollY;
            total = Math.max(LANES_MIN + DRAWER_MIN + 80, window.innerHeight - top - 8);
            content.style.height = total + 'px';
            apply();
        },
    };
}

/** The remembered height, or the default. */
function readHeight() {
    try {
        const v = Number(localStorage.getItem(DRAWER_KEY));
        return Number.isFinite(v) && v > 0 ? v : DRAWER_DEFAULT;
    } catch {
        return DRAWER_DEFAULT;
    }
}

/**
 * A drawer height kept within [DRAWER_MIN, total − LANES_MIN − 80] (the
 * header above the lanes); total 0 (not laid out yet) bounds it below only.
 * @param {number} v
 * @param {number} total the tab's height, CSS px
 * @returns {number}
 */
export function clampDrawer(v, total) {
    const max = total > 0 ? Math.max(DRAWER_MIN, total - LANES_MIN - 80) : Infinity;
    const r = Math.max(DRAWER_MIN, Math.min(max, Number.isNaN(v) ? DRAWER_DEFAULT : v));
    return Number.isFinite(r) ? r : DRAWER_DEFAULT;
}
