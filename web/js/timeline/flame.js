// @ts-check
/**
 * timeline/flame.js — the flame graph (icicle) of an area selection or of
 * one operator, from /timeline/flame: call paths by time containment,
 * roots on top, each node as wide as its time (clipped to the window).
 *
 * Pure part (tested by tests/web/timeline_flame.test.mjs): mergeFlames()
 * adds up the answers of several ranks by path; icicle() lays a tree out
 * from a focus node (the focus fills the width, its ancestors sit above
 * it full width, the rest of the tree below, children by time, largest
 * first); flameStep() moves the keyboard cursor.
 *
 * The widget (createFlame) is a canvas with a tooltip: a click (or Enter
 * on the cursor) zooms into a node, a click on an ancestor or "Reset"
 * zooms out; arrow keys move the cursor (Up: parent, Down: largest child,
 * Left/Right: siblings), Escape resets. Names reach the canvas through
 * fillText and the tooltip as text.
 */

import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { formatMicros, formatNumber } from '../format.js';
import { COL, sliceColours } from './colours.js';
import { FONT, fitCanvas, textWidth } from './draw.js';
import { addTimes } from './multirank.js';

/** @typedef {import('../apitypes.js').TimelineFlame} Flame */
/** @typedef {Flame['nodes'][number]} FlameNode */
/** @typedef {Flame['cats'][number]} FlameCat */
/**
 * A laid-out node: its index, row, and span as fractions of the width.
 * @typedef {{i: number, depth: number, x: number, w: number}} Cell
 */

/** Height of a row of the graph, CSS px. */
export const ROW_H = 17;

/**
 * Several answers (ranks) as one: nodes merged by path, lanes side by
 * side, categories added up by name.
 * @param {Flame[]} parts
 * @returns {Flame}
 */
export function mergeFlames(parts) {
    if (parts.length === 1) return parts[0];
    /** @type {FlameNode[]} */
    const nodes = [];
    /** @type {Map<string, number>} */
    const byPath = new Map();
    /** @type {Map<string, FlameCat>} */
    const cats = new Map();
    for (const p of parts) {
        /** @type {number[]} */
        const map = [];
        p.nodes.forEach((n, i) => {
            const parent = n.parent >= 0 ? map[n.parent] : -1;
            const key = `${parent}\u0000${n.name}`;
            let k = byPath.get(key);
            if (k === undefined) {
                k = nodes.length;
                byPath.set(key, k);
                nodes.push({ parent, name: n.name, count: 0, total_us: 0, self_us: 0 });
            }
            nodes[k].count += n.count;
            nodes[k].total_us += n.total_us;
            nodes[k].self_us += n.self_us;
            map[i] = k;
        });
        for (const c of p.cats) addTimes(cats, c.cat, c);
    }
    return {
        start_us: Math.min(...parts.map((p) => p.start_us)),
        end_us: Math.max(...parts.map((p) => p.end_us)),
        nodes,
        lanes: parts.flatMap((p) => p.lanes).sort((a, b) => b.total_us - a.total_us),
        cats: [...cats.values()].sort((a, b) => b.total_us - a.total_us),
        dropped: parts.reduce((n, p) => n + p.dropped, 0),
    };
}

/**
 * Children of each node (index nodes.length: the roots), largest first.
 * @param {FlameNode[]} nodes
 * @returns {number[][]}
 */
export function childLists(nodes) {
    /** @type {number[][]} */
    const kids = Array.from({ length: nodes.length + 1 }, () => []);
    nodes.forEach((n, i) => kids[n.parent >= 0 ? n.parent : nodes.length].push(i));
    for (const k of kids) k.sort((a, b) => nodes[b].total_us - nodes[a].total_us || (nodes[a].name < nodes[b].name ? -1 : 1));
    return kids;
}

/**
 * The cells of the graph seen from `focus` (−1: the whole graph).
 * @param {FlameNode[]} nodes
 * @param {number[][]} kids  childLists(nodes)
 * @param {number} focus
 * @returns {Cell[]}
 */
export function icicle(nodes, kids, focus) {
    /** @type {Cell[]} */
    const out = [];
    /** @type {number[]} */
    const up = [];
    for (let k = focus >= 0 ? nodes[focus].parent : -1; k >= 0; k = nodes[k].parent) up.unshift(k);
    up.forEach((i, d) => out.push({ i, depth: d, x: 0, w: 1 }));
    const roots = focus >= 0 ? [focus] : kids[nodes.length];
    const whole = roots.reduce((s, i) => s + nodes[i].total_us, 0) || 1;
    /**
     * @param {number} i
     * @param {number} depth
     * @param {number} x
     */
    const place = (i, depth, x) => {
        const w = nodes[i].total_us / whole;
        out.push({ i, depth, x, w });
        let cx = x;
        for (const c of kids[i]) {
            place(c, depth + 1, cx);
            cx += nodes[c].total_us / whole;
        }
    };
    let x = 0;
    for (const r of roots) {
        place(r, up.length, x);
        x += nodes[r].total_us / whole;
    }
    return out;
}

/**
 * The cursor after a key: Up the parent, Down the largest child,
 * Left/Right the previous/next sibling; the same when there is none.
 * @param {FlameNode[]} nodes
 * @param {number[][]} kids
 * @param {number} cur  −1: none yet (any key goes to the largest root)
 * @param {string} key
 * @returns {number}
 */
export function flameStep(nodes, kids, cur, key) {
    const roots = kids[nodes.length];
    if (cur < 0) return roots.length ? roots[0] : -1;
    const sib = kids[nodes[cur].parent >= 0 ? nodes[cur].parent : nodes.length];
    const at = sib.indexOf(cur);
    if (key === 'ArrowUp') return nodes[cur].parent >= 0 ? nodes[cur].parent : cur;
    if (key === 'ArrowDown') return kids[cur].length ? kids[cur][0] : cur;
    if (key === 'ArrowLeft') return at > 0 ? sib[at - 1] : cur;
    if (key === 'ArrowRight') return at + 1 < sib.length ? sib[at + 1] : cur;
    return cur;
}

/**
 * The flame graph widget.
 * @param {Flame} f
 * @param {{title: string, empty: string}} text
 */
export function createFlame(f, text) {
    const nodes = f.nodes;
    const kids = childLists(nodes);
    const canvas = /** @type {HTMLCanvasElement} */ (h('canvas', { class: C.tlCanvas, 'aria-hidden': 'true' }));
    const tip = h('div', { class: C.tlTip, hidden: true, role: 'status' });
    const status = h('p', { class: [C.muted, C.tlFlameStatus], 'aria-live': 'polite' });
    const reset = h('button', { type: 'button', class: [C.btn, C.btnSm], disabled: true }, 'Reset zoom');
    const box = h('div', { class: C.tlFlameBox, tabindex: '0', role: 'application', 'aria-label': `${text.title}: arrow keys move, Enter zooms in, Escape resets` }, canvas, tip);
    const el = h('div', { class: C.tlFlame, dataset: { nodes: String(nodes.length) } }, h('div', { class: C.toolbar }, reset, status), box);
    let focus = -1;
    let cursor = -1;
    /** @type {Cell[]} */
    let cells = [];
    /** @type {Cell | null} */
    let hover = null;
    const total = kids[nodes.length].reduce((s, i) => s + nodes[i].total_us, 0);

    /** @param {number} i */
    const describe = (i) => {
        const n = nodes[i];
        return `${n.name} — ${formatMicros(n.total_us)} (${total ? ((100 * n.total_us) / total).toFixed(1) : '0'}%), self ${formatMicros(n.self_us)}, ${formatNumber(n.count)}×`;
    };

    function layout() {
        cells = icicle(nodes, kids, focus);
        const depth = cells.reduce((m, c) => Math.max(m, c.depth + 1), 0);
        box.style.height = Math.max(3, depth) * ROW_H + 2 + 'px';
        reset.disabled = focus < 0;
        paint();
    }

    function paint() {
        const w = Math.max(50, box.clientWidth);
        const g = fitCanvas(canvas, w, box.clientHeight || ROW_H);
        if (!g) return;
        g.font = FONT;
        g.textBaseline = 'middle';
        for (const c of cells) {
            const x = c.x * w;
            const cw = c.w * w;
            if (cw < 0.5) continue;
            const n = nodes[c.i];
            const y = c.depth * ROW_H;
            g.fillStyle = sliceColours(n.name, 'cpu')[0];
            g.fillRect(x, y, Math.max(1, cw - 1), ROW_H - 1);
            if (c.i === cursor || c === hover) {
                g.strokeStyle = c.i === cursor ? COL.sel : COL.hover;
                g.lineWidth = 2;
                g.strokeRect(x + 1, y + 1, Math.max(1, cw - 3), ROW_H - 3);
                g.lineWidth = 1;
            }
            if (cw > 30) {
                let label = n.name;
                const full = textWidth(g, label);
                if (full > cw - 6) {
                    const chars = Math.floor((label.length * (cw - 6)) / full) - 1;
                    label = chars >= 2 ? label.slice(0, chars) + '…' : '';
                }
                if (label) {
                    g.fillStyle = COL.sliceText;
                    g.fillText(label, x + 3, y + ROW_H / 2);
                }
            }
        }
    }

    /** @param {MouseEvent} ev */
    function cellAt(ev) {
        const r = canvas.getBoundingClientRect();
        const fx = (ev.clientX - r.left) / Math.max(1, r.width);
        const d = Math.floor((ev.clientY - r.top) / ROW_H);
        return cells.find((c) => c.depth === d && fx >= c.x && fx < c.x + c.w) || null;
    }

    /** @param {number} i */
    function zoom(i) {
        focus = i;
        cursor = i;
        if (i >= 0) replace(status, describe(i));
        layout();
    }

    box.addEventListener('mousemove', (ev) => {
        const c = cellAt(ev);
        if (c === hover) return;
        hover = c;
        paint();
        if (!c) {
            tip.hidden = true;
            return;
        }
        replace(tip, h('div', { class: C.tlTipName }, nodes[c.i].name), h('div', { class: C.muted }, describe(c.i).slice(nodes[c.i].name.length + 3)));
        tip.hidden = false;
        const r = box.getBoundingClientRect();
        const x = ev.clientX - r.left;
        tip.style.transform = `translate(${Math.round(Math.min(x + 12, Math.max(0, r.width - tip.offsetWidth)))}px, ${Math.round(ev.clientY - r.top + 14)}px)`;
    });
    box.addEventListener('mouseleave', () => {
        hover = null;
        tip.hidden = true;
        paint();
    });
    box.addEventListener('click', (ev) => {
        const c = cellAt(ev);
        if (c) zoom(c.i === focus ? nodes[c.i].parent : c.i);
    });
    box.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' && cursor >= 0) zoom(cursor);
        else if (ev.key === 'Escape') zoom(-1);
        else if (ev.key.startsWith('Arrow')) {
            cursor = flameStep(nodes, kids, cursor, ev.key);
            if (cursor >= 0) replace(status, describe(cursor));
            paint();
        } else return;
        ev.preventDefault();
        ev.stopPropagation();
    });
    reset.addEventListener('click', () => zoom(-1));
    const ro = new ResizeObserver(() => paint());
    ro.observe(box);
    replace(status, nodes.length ? `${formatNumber(nodes.length)} call paths, ${formatMicros(total)}${f.dropped ? ` (${formatNumber(f.dropped)} slices past the node limit left out)` : ''}. Click to zoom; arrow keys and Enter on the graph.` : text.empty);
    queueMicrotask(layout);
    return { el, destroy: () => ro.disconnect() };
}
