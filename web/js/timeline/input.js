// @ts-check
/**
 * timeline/input.js — what the Timeline tab's keys and wheel mean (no DOM;
 * tested by tests/web/timeline_input.test.mjs).
 *
 * Keys as in Perfetto: W/S zoom, A/D pan, F fit the selection, Escape
 * clears it, ? shows the list (KEYS, the list `?` shows). Wheel: scroll
 * the lanes; with Ctrl (or ⌘, and pinch gestures, which browsers send as
 * Ctrl+wheel) zoom about the mouse; with Shift, or sideways, pan. A
 * vertical wheel at the top or bottom of the lanes is left to the page,
 * so the page scrolls on past the timeline.
 *
 * views/timeline.js maps events through keyAction() and wheelAction() and
 * does the rest (which viewport, which element has the focus).
 */

/** Keys and mouse, as shown by `?`. */
export const KEYS = /** @type {const} */ ([
    ['W / S', 'zoom in / out (about the mouse)'],
    ['A / D', 'pan left / right'],
    ['Ctrl + wheel', 'zoom'],
    ['Shift + wheel', 'pan'],
    ['wheel', 'scroll the lanes'],
    ['drag', 'pan'],
    ['Shift + drag, or drag on the ruler', 'select an area: a table of what ran there'],
    ['click', 'select a slice (a merged one zooms in)'],
    ['F', 'fit the selection (or the whole run)'],
    ['Escape', 'clear the selection'],
    ['Enter / Shift+Enter in search', 'next / previous match'],
    ['?', 'show or hide this list'],
]);

/** @typedef {'zoomIn' | 'zoomOut' | 'panLeft' | 'panRight' | 'fit' | 'help' | 'escape'} KeyAction */

/** Zoom factor of one W (S is its inverse). */
export const KEY_ZOOM = 0.75;
/** Share of the window one A or D pans. */
export const KEY_PAN = 0.2;

/**
 * The action of a key (KeyboardEvent.key, without Ctrl/⌘/Alt), or null.
 * @param {string} key
 * @returns {KeyAction | null}
 */
export function keyAction(key) {
    switch (key) {
        case 'w':
        case 'W':
            return 'zoomIn';
        case 's':
        case 'S':
            return 'zoomOut';
        case 'a':
        case 'A':
            return 'panLeft';
        case 'd':
        case 'D':
            return 'panRight';
        case 'f':
        case 'F':
            return 'fit';
        case '?':
            return 'help';
        case 'Escape':
            return 'escape';
        default:
            return null;
    }
}

/**
 * What a wheel event does.
 * - page:   nothing here; the page scrolls (do not preventDefault)
 * - zoom:   zoom about the mouse by `factor` (> 1 zooms out)
 * - pan:    pan by `px` pixels (> 0: later)
 * - scroll: scroll the lanes by `dy` pixels
 * @typedef {{kind: 'page'} | {kind: 'zoom', factor: number} | {kind: 'pan', px: number} | {kind: 'scroll', dy: number}} WheelAction
 */

/**
 * @param {{deltaMode: number, deltaX: number, deltaY: number, ctrlKey: boolean, metaKey: boolean, shiftKey: boolean}} ev
 * @param {number} scrollY    the lanes' scroll now
 * @param {number} maxScroll  the lanes' largest scroll
 * @returns {WheelAction}
 */
export function wheelAction(ev, scrollY, maxScroll) {
    const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    const dy = ev.deltaY * scale;
    const dx = ev.deltaX * scale;
    const plain = !(ev.ctrlKey || ev.metaKey || ev.shiftKey) && Math.abs(dx) <= Math.abs(dy);
    // lanes that cannot scroll further let the page scroll
    if (plain && ((dy < 0 && scrollY <= 0) || (dy > 0 && scrollY >= maxScroll))) return { kind: 'page' };
    if (ev.ctrlKey || ev.metaKey) return { kind: 'zoom', factor: Math.exp(dy * 0.002) };
    if (ev.shiftKey) return { kind: 'pan', px: dy || dx };
    if (Math.abs(dx) > Math.abs(dy)) return { kind: 'pan', px: dx };
    return { kind: 'scroll', dy };
}
