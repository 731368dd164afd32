// @ts-check
/**
 * views/analyses/overlap.js — the Analyses tab's section for
 * server/derive/analyses/overlap.c. Kernel-type breakdown and overlap: time
 * by compute, communication and memory kernels and by their combinations
 * running at once.
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { formatPercent, formatShare } from '../../format.js';
import { legend, swatch } from '../../tabs.js';
import { obj, arr, num, empty, dur, withShare, metric, table, fullBar } from './common.js';

/** @typedef {import('./common.js').Part} Part */

/** Colours of kernel-type combinations, by their types joined with "+". */
const COMBO_COLORS = /** @type {Record<string, string>} */ ({
    compute: '#4e79a7',
    communication: '#b07aa1',
    memory: '#f28e2b',
    'compute+communication': '#9c755f',
    'compute+memory': '#59a14f',
    'communication+memory': '#edc948',
    'compute+communication+memory': '#e15759',
    idle: '#e6e9ee',
});

// --- 5. kernel-type overlap --------------------------------------------------------------------------

/**
 * @param {Record<string, any>} o one device's or the rank's figures
 * @param {string} label aria-label
 */
function overlapBar(o, label) {
    const combos = arr(o.combos).map(obj);
    /** @type {{part: Part, value: number}[]} */
    const segs = combos.map((c) => {
        const types = arr(c.types).filter((t) => typeof t === 'string');
        const key = types.join('+');
        return { part: { key, label: types.join(' + ') || '?', color: COMBO_COLORS[key] || '#8c8c8c' }, value: num(c, 'ns') ?? 0 };
    });
    segs.push({ part: { key: 'idle', label: 'No GPU op', color: COMBO_COLORS.idle }, value: num(o, 'idle_ns') ?? 0 });
    return { bar: fullBar(label, segs, dur, num(o, 'window_ns') ?? undefined), segs };
}

/** @param {Record<string, any>} o */
export function overlapSection(o) {
    if (empty(o) || !arr(o.combos).length) return null;
    const { bar, segs } = overlapBar(o, 'Kernel types over the window');
    const win = num(o, 'window_ns');
    const busy = segs.filter((x) => x.part.key !== 'idle');
    const busyNs = busy.reduce((a, x) => a + x.value, 0);
    const devices = arr(o.devices).map(obj);
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Compute', withShare(dur(num(o, 'compute_ns')), formatPercent(num(o, 'compute_ns'), win)), 'Time at least one compute kernel ran.'),
            metric('Communication', withShare(dur(num(o, 'communication_ns')), formatPercent(num(o, 'communication_ns'), win)), 'Time at least one communication kernel ran.'),
            metric('Memory', withShare(dur(num(o, 'memory_ns')), formatPercent(num(o, 'memory_ns'), win)), 'Time at least one memcpy or memset ran.'),
            metric('Comm. overlapped with compute', formatShare(num(o, 'comm_overlap_ratio')), 'Time compute and communication both run ÷ communication time (HTA’s comp_comm_overlap). Dash: no communication.'),
        ),
        h('h3', { class: C.anSub }, `Whole window (${dur(win)})`),
        bar,
        busyNs > 0 ? [h('h3', { class: C.anSub }, `GPU busy time only (${dur(busyNs)})`), fullBar('Kernel types while the GPU is busy', busy, dur)] : null,
        legend(segs.map((s) => s.part)),
        table(
            'Kernel-type combinations',
            ['Active types', { label: 'Time', num: true }, { label: 'Share of window', num: true }],
            segs.map((s) => [[swatch(s.part.color), s.part.label], dur(s.value), formatPercent(s.value, win)]),
        ),
        devices.length > 1
            ? devices.map((d) => h('div', null, h('h3', { class: C.anSub }, `GPU ${num(d, 'device') ?? '?'}`), overlapBar(d, `Kernel types on GPU ${num(d, 'device') ?? '?'}`).bar))
            : null,
    ];
}
