// @ts-check
/**
 * views/analyses/common.js — what the Analyses tab's sections share: the
 * defensive readers of the analysis documents (a missing number is null, a
 * missing object {}), the section context (Ctx: the rank, its analysed
 * window and its links to the timeline) and the small building blocks
 * (metrics, compact tables folded after n rows, 100 % bars, stacked bars on
 * one time axis). Every string from a trace reaches the page as text.
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatDuration, formatPercent } from '../../format.js';
import { columnBars, hbar, stackedBars as barRows } from '../../tabs.js';

/** @typedef {import('../../apitypes.js').AnalysesDoc} AnalysesDoc */
/** @typedef {import('../../dom.js').Child} Child */
/** @typedef {{key: string, label: string, color: string, help?: string}} Part */

// --- reading the documents defensively ------------------------------------------

/** @param {unknown} x @returns {x is number} */
export const isNum = (x) => typeof x === 'number' && Number.isFinite(x);

/** @param {unknown} x @returns {Record<string, any>} the object, or {} */
export const obj = (x) => (x && typeof x === 'object' && !Array.isArray(x) ? /** @type {Record<string, any>} */ (x) : {});

/** @param {unknown} x @returns {any[]} */
export const arr = (x) => (Array.isArray(x) ? x : []);

/**
 * The first of keys that holds a number.
 * @param {Record<string, any>} o
 * @param {...string} keys
 * @returns {number | null}
 */
export function num(o, ...keys) {
    for (const k of keys) if (isNum(o[k])) return o[k];
    return null;
}

/**
 * The first of keys that holds a string.
 * @param {Record<string, any>} o
 * @param {...string} keys
 * @returns {string}
 */
export function str(o, ...keys) {
    for (const k of keys) if (typeof o[k] === 'string') return o[k];
    return '';
}

/** @param {Record<string, any>} o @returns {boolean} an analysis with nothing to say */
export const empty = (o) => Object.keys(o).length === 0;

/** @param {number | null} ns */
export const dur = (ns) => formatDuration(ns);

/** @param {Record<string, any>} s a stream @returns {string} */
export const streamName = (s) => str(s, 'name') || `track ${num(s, 'stream') ?? '?'}`;

/** @param {Record<string, any>} s a stream: its name, and its GPU muted */
export const streamCell = (s) => [streamName(s), isNum(s.device) && s.device >= 0 ? h('span', { class: C.muted }, ` GPU ${s.device}`) : null];

/**
 * A value followed by its share, muted.
 * @param {Child} value
 * @param {string} share
 */
export const withShare = (value, share) => [value, h('span', { class: C.muted }, ` ${share}`)];

/**
 * @typedef {object} Ctx
 * @property {AnalysesDoc} doc
 * @property {number} rank
 * @property {number | null} w0  the analysed window, ns
 * @property {number | null} w1
 * @property {number} t0us       the rank's start, µs (times print relative to it)
 * @property {(a: number | null, b: number | null, label: string, cp?: boolean) => HTMLElement} tl
 */

// --- small building blocks ----------------------------------------------------------

/**
 * @param {string} label
 * @param {Child} value
 * @param {string} [help]
 */
export function metric(label, value, help) {
    return h('div', { class: C.metric, title: help || null }, h('div', { class: [C.metricLabel, help && C.help] }, label), h('div', { class: C.metricValue }, value));
}

/**
 * @typedef {object} Col
 * @property {string} label
 * @property {boolean} [num]
 * @property {string} [title]
 */

/**
 * A compact table in a horizontal scroller.
 * @param {string} label aria-label
 * @param {(Col | string)[]} cols
 * @param {Child[][]} rows cells (a cell is content, or [content, attrs])
 */
export function table(label, cols, rows) {
    const cs = cols.map((c) => (typeof c === 'string' ? { label: c } : c));
    return h(
        'div',
        { class: C.anScroll },
        h(
            'table',
            { class: [C.table, C.tableCompact], 'aria-label': label },
            h('thead', null, h('tr', null, cs.map((c) => h('th', { scope: 'col', class: c.num ? C.num : null, title: c.title || null }, c.label)))),
            h('tbody', null, rows.map((r) => h('tr', null, r.map((cell, i) => h('td', { class: cs[i] && cs[i].num ? C.num : null }, cell))))),
        ),
    );
}

/**
 * Shows the first n rows of the table in box, and a button for the rest.
 * @param {HTMLElement} box what table() returned
 * @param {number} n
 */
export function foldRows(box, n) {
    const rows = [...box.querySelectorAll('tbody tr')];
    if (rows.length <= n) return box;
    for (const r of rows.slice(n)) if (r instanceof HTMLElement) r.hidden = true;
    const btn = h('button', { type: 'button', class: [C.btn, C.btnSm, C.btnGhost] }, `Show all ${rows.length}`);
    btn.addEventListener('click', () => {
        for (const r of rows) if (r instanceof HTMLElement) r.hidden = false;
        btn.remove();
    });
    return h('div', null, box, btn);
}

/**
 * A name from the trace in a clamped cell (full text in the tooltip).
 * @param {string} s
 */
export function nameCell(s) {
    return s ? h('div', { class: [C.cellClamp, C.mono], title: s }, s) : h('span', { class: C.muted }, DASH);
}

/**
 * One 100 % bar of parts (values in any unit; the total is their sum
 * unless given).
 * @param {string} label aria-label
 * @param {{part: Part, value: number}[]} segs
 * @param {(v: number) => string} fmt
 * @param {number} [total]
 */
export function fullBar(label, segs, fmt, total) {
    const sum = total ?? segs.reduce((a, s) => a + Math.max(0, s.value), 0);
    const shown = sum > 0 ? segs.filter((s) => s.value > 0) : [];
    return hbar(
        label + ': ' + shown.map((s) => `${s.part.label} ${formatPercent(s.value, sum)}`).join(', '),
        shown.map((s) => ({ color: s.part.color, value: s.value, title: `${s.part.label}: ${fmt(s.value)} (${formatPercent(s.value, sum)})` })),
        sum,
    );
}

const HB = { w: 1200, left: 150, right: 24, top: 6, row: 20, gap: 6, bottom: 26 };

/**
 * Horizontal stacked bars on one time axis (ns), one row per item.
 * @param {string} label aria-label
 * @param {{label: string, segs: {part: Part, value: number}[]}[]} rows
 */
export function stackedBars(label, rows) {
    return barRows({
        label,
        box: HB,
        ticks: 5,
        perUs: 1000,
        fmt: dur,
        class: C.anChart,
        rows: rows.map((r) => ({ label: r.label, segs: r.segs.map((s) => ({ label: s.part.label, color: s.part.color, value: s.value })) })),
    });
}

const HC = { w: 1200, h: 260, left: 62, right: 10, top: 12, bottom: 40 };

/**
 * Vertical stacked columns on one time axis (ns), one per step: what
 * stackedBars draws, for more steps than fit as rows.
 * @param {string} label aria-label
 * @param {{label: string, name: string, segs: {part: Part, value: number}[]}[]} cols
 */
export function stepColumns(label, cols) {
    return columnBars({
        label,
        box: HC,
        axis: 'step',
        perUs: 1000,
        fmt: dur,
        cols: cols.map((c) => ({ label: c.label, name: c.name, segs: c.segs.map((s) => ({ label: s.part.label, color: s.part.color, value: s.value })) })),
    });
}
