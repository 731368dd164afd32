// @ts-check
/**
 * timeline/events.js — the Timeline tab's input: pointer (drag pans and
 * scrolls the lanes, Shift+drag or a drag on the ruler selects an area, a
 * click selects a slice or zooms into a merged item, hover shows the
 * tooltip), wheel and keys (what they mean is input.js's, pure), the
 * minimap (click or drag moves the view) and the toolbar's buttons.
 * Pointer events cover mouse, pen and touch alike.
 *
 * It changes the shared state (state.js: hover, mouseX, drag, area,
 * scrollY, showEmpty) and asks the view for everything else through
 * `act` (setView, select, ...), so it never draws or fetches itself.
 */

import * as T from '../timescale.js';
import { KEY_PAN, KEY_ZOOM, keyAction, wheelAction } from './input.js';
import * as L from './layout.js';
import { counterAt } from './data.js';
import { showCounterTip, showTip } from './overlay.js';

/** @typedef {import('./state.js').TimelineState} TimelineState */
/** @typedef {import('./data.js').Items} Items */
/** @typedef {import('../timescale.js').Viewport} Viewport */

/**
 * @typedef {object} InputUi
 * @property {HTMLElement} root      the tab (keys act only while it is in the page)
 * @property {HTMLElement} plot      ruler, lanes and overlay
 * @property {HTMLElement} mini      the minimap
 * @property {HTMLElement} tip       the hover tooltip
 * @property {HTMLElement} content   hidden while nothing is loaded
 * @property {HTMLElement} help      the key list
 * @property {HTMLElement} keysBtn
 * @property {HTMLElement} fitBtn
 * @property {HTMLInputElement} emptyBox  "Empty lanes"
 */

/**
 * @typedef {object} InputActions
 * @property {(v: Viewport) => void} setView
 * @property {() => void} invalidate
 * @property {() => void} invalidateOverlay
 * @property {() => void} clampScroll
 * @property {() => number} lanesHeight
 * @property {() => void} loadAggregate
 * @property {() => void} clearArea
 * @property {() => void} clearSelection
 * @property {(ref: import('./overlay.js').Selection, opts?: {reveal?: boolean}) => void} select
 * @property {() => void} fitSelection
 * @property {() => void} relayout
 * @property {(def: {id: number, name: string, unit: string}, v: {ts: number, value: number, min: number, max: number} | null) => void} counterPicked  a click on a counter lane
 */

/**
 * Wires the listeners; returns a function that removes the one on window
 * (the others go with the tab's elements).
 * @param {TimelineState} st
 * @param {InputUi} ui
 * @param {InputActions} act
 * @returns {() => void}
 */
export function bindInput(st, ui, act) {
    const { root, plot, mini, tip, content, help, keysBtn, fitBtn, emptyBox } = ui;
    const { setView, invalidate, invalidateOverlay, clampScroll, lanesHeight, loadAggregate, clearArea, clearSelection, select, fitSelection, relayout } = act;

    /**
     * The counter lane under a point of the plot, and its value there.
     * @param {{x: number, y: number}} p
     */
    function counterHit(p) {
        const at = L.rowAt(st.layout, st.scrollY, p.y - L.HEAD_H);
        const def = at && at.row.type === 'counter' ? at.row.counter || null : null;
        return def ? { def, v: counterAt(st.counters.get(def.id), T.pxToTime(st.view, p.x)) } : null;
    }

    /** @param {number} factor */
    function zoomKey(factor) {
        const t = st.mouseX !== null ? T.pxToTime(st.view, st.mouseX) : (st.view.start + st.view.end) / 2;
        setView(T.zoomAt(st.view, factor, t, st.bounds));
    }


    /** @param {MouseEvent} ev */
    function local(ev) {
        const r = plot.getBoundingClientRect();
        return { x: ev.clientX - r.left, y: ev.clientY - r.top };
    }

    /**
     * @param {number} x
     * @param {number} y
     */
    function hitTest(x, y) {
        return L.hitTest(st.layout, st.scrollY, st.items, st.view, x, y);
    }

    plot.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || !st.meta) return;
        const p = local(ev);
        plot.focus({ preventScroll: true });
        st.drag = { x: p.x, y: p.y, t: T.pxToTime(st.view, p.x), mode: 'press', view: st.view, scroll: st.scrollY, shift: ev.shiftKey, ruler: p.y < L.HEAD_H, id: ev.pointerId };
        plot.setPointerCapture(ev.pointerId);
        ev.preventDefault();
    });
    plot.addEventListener('pointermove', (ev) => {
        const p = local(ev);
        st.mouseX = p.x;
        if (st.drag) {
            const dx = p.x - st.drag.x;
            const dy = p.y - st.drag.y;
            if (st.drag.mode === 'press' && Math.abs(dx) + Math.abs(dy) > 3) st.drag.mode = st.drag.shift || st.drag.ruler ? 'area' : 'pan';
            if (st.drag.mode === 'pan') {
                st.scrollY = st.drag.scroll - dy;
                clampScroll();
                setView(T.panBy(st.drag.view, -dx * T.usPerPx(st.drag.view), st.bounds));
            } else if (st.drag.mode === 'area') {
                const t = Math.max(st.bounds.start, Math.min(st.bounds.end, T.pxToTime(st.view, p.x)));
                st.area = { start: Math.min(st.drag.t, t), end: Math.max(st.drag.t, t) };
                invalidateOverlay();
            }
            return;
        }
        const hit = hitTest(p.x, p.y);
        const same = hit && st.hover && hit.track === st.hover.track && hit.depth === st.hover.depth && hit.i === st.hover.i;
        st.hover = hit;
        const ch = hit ? null : counterHit(p);
        if (ch) showCounterTip(tip, plot, p, ch.def, ch.v, st.origin);
        else showTip(tip, plot, hit, st.items, st.origin);
        if (!same) invalidateOverlay();
    });
    plot.addEventListener('pointerleave', () => {
        st.mouseX = null;
        if (st.hover) {
            st.hover = null;
            invalidateOverlay();
        }
        tip.hidden = true;
    });
    plot.addEventListener('pointerup', (ev) => {
        if (!st.drag) return;
        const d = st.drag;
        st.drag = null;
        const p = local(ev);
        if (d.mode === 'area') {
            if (st.area && T.timeToPx(st.view, st.area.end) - T.timeToPx(st.view, st.area.start) >= 3) loadAggregate();
            else clearArea();
            return;
        }
        if (d.mode !== 'press') return;
        if (d.ruler) {
            if (st.area) clearArea();
            return;
        }
        const hit = hitTest(p.x, p.y);
        if (!hit) {
            const ch = counterHit(p);
            if (ch) act.counterPicked(ch.def, ch.v);
            else if (st.sel) clearSelection();
            return;
        }
        const it = /** @type {Items} */ ((st.items.get(hit.track) || [])[hit.depth]);
        if (it.n[hit.i] > 1) {
            setView(T.fitSpan(it.ts[hit.i], it.ts[hit.i] + it.dur[hit.i], st.view.width, st.bounds, 0.05));
            return;
        }
        select({ track: hit.track, ts: it.ts[hit.i], dur: it.dur[hit.i], id: it.id[hit.i] || undefined, depth: hit.depth, name: it.name[hit.i] });
    });
    plot.addEventListener('pointercancel', () => {
        st.drag = null;
    });
    plot.addEventListener(
        'wheel',
        (ev) => {
            if (!st.meta) return;
            const a = wheelAction(ev, st.scrollY, L.maxScroll(st.layout, lanesHeight()));
            if (a.kind === 'page') return;
            ev.preventDefault();
            if (a.kind === 'zoom') {
                setView(T.zoomAt(st.view, a.factor, T.pxToTime(st.view, local(ev).x), st.bounds));
            } else if (a.kind === 'pan') {
                setView(T.panBy(st.view, a.px * T.usPerPx(st.view), st.bounds));
            } else {
                st.scrollY += a.dy;
                clampScroll();
                st.hover = null;
                tip.hidden = true;
                invalidate();
            }
        },
        { passive: false },
    );

    /** @param {KeyboardEvent} ev */
    function onKey(ev) {
        if (!st.meta || content.hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
        const target = /** @type {HTMLElement | null} */ (ev.target instanceof HTMLElement ? ev.target : null);
        if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
        if (!root.isConnected) return;
        const span = st.view.end - st.view.start;
        switch (keyAction(ev.key)) {
            case 'zoomIn':
                zoomKey(KEY_ZOOM);
                break;
            case 'zoomOut':
                zoomKey(1 / KEY_ZOOM);
                break;
            case 'panLeft':
                setView(T.panBy(st.view, -span * KEY_PAN, st.bounds));
                break;
            case 'panRight':
                setView(T.panBy(st.view, span * KEY_PAN, st.bounds));
                break;
            case 'fit':
                fitSelection();
                break;
            case 'help':
                toggleHelp();
                break;
            case 'escape':
                if (st.area) clearArea();
                else if (st.sel) clearSelection();
                else return;
                break;
            default:
                return;
        }
        ev.preventDefault();
    }
    window.addEventListener('keydown', onKey);

    function toggleHelp() {
        help.hidden = !help.hidden;
        keysBtn.setAttribute('aria-expanded', String(!help.hidden));
    }
    keysBtn.addEventListener('click', toggleHelp);
    fitBtn.addEventListener('click', () => setView({ ...st.bounds, width: st.view.width }));
    emptyBox.addEventListener('change', () => {
        st.showEmpty = emptyBox.checked;
        relayout();
    });

    /** @param {PointerEvent} ev */
    function miniMove(ev) {
        const r = mini.getBoundingClientRect();
        const t = st.bounds.start + ((ev.clientX - r.left) / Math.max(1, r.width)) * (st.bounds.end - st.bounds.start);
        const half = (st.view.end - st.view.start) / 2;
        setView({ start: t - half, end: t + half, width: st.view.width });
    }
    mini.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || !st.meta) return;
        st.miniDrag = true;
        mini.setPointerCapture(ev.pointerId);
        miniMove(ev);
    });
    mini.addEventListener('pointermove', (ev) => {
        if (st.miniDrag) miniMove(ev);
    });
    mini.addEventListener('pointerup', () => {
        st.miniDrag = false;
    });

    return () => window.removeEventListener('keydown', onKey);
}
