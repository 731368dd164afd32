// @ts-check
/**
 * views/analyses/launch.js — the Analyses tab's section for
 * server/derive/analyses/launch.c. Kernel launches: quantiles of the launch
 * call's CPU time, the op's GPU time and the launch delay, and the outliers
 * with their operator and a link to the timeline.
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatNumber, formatOffset, formatShare } from '../../format.js';
import { obj, arr, num, str, empty, dur, metric, table, foldRows, nameCell } from './common.js';

/** @typedef {import('./common.js').Ctx} Ctx */

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
export function launchSection(o, ctx) {
    if (empty(o) || !num(o, 'count')) return null;
    const rows = [
        ['CPU time of the launch call', 'cpu_ns'],
        ['GPU time of the op', 'gpu_ns'],
        ['Launch delay (GPU start − call end)', 'delay_ns'],
    ];
    const kOnly = obj(o.kernels_only);
    const outliers = arr(o.outliers).map(obj);
    const rtCut = num(o, 'runtime_cutoff_ns') ?? 50000;
    const dlCut = num(o, 'delay_cutoff_ns') ?? 100000;
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Launches', formatNumber(num(o, 'count')), 'Runtime or driver calls with a GPU op, inside the steps.'),
            metric('Kernels / copies', `${formatNumber(num(o, 'kernels'))} / ${formatNumber(num(o, 'memory'))}`),
            metric('Short kernels', [formatShare(num(o, 'short_share')), h('span', { class: C.muted }, ` (${formatNumber(num(o, 'short_kernels'))})`)], 'Launches whose GPU work is shorter than the call that launched it (call ≤ 50 µs): launch-bound.'),
            metric(`Calls > ${dur(rtCut)}`, formatNumber(num(o, 'runtime_outliers')), 'Launch calls slower than the cutoff.'),
            metric(`Delays > ${dur(dlCut)}`, formatNumber(num(o, 'delay_outliers')), 'GPU start more than the cutoff after the call ended: the queue was full or the GPU busy.'),
        ),
        table(
            'Launch statistics',
            ['', { label: 'Mean', num: true }, { label: 'p50', num: true }, { label: 'p95', num: true }, { label: 'Max', num: true }, { label: 'Total', num: true }, { label: 'p50, kernels only', num: true }, { label: 'p95, kernels only', num: true }],
            rows.map(([label, key]) => {
                const s = obj(o[key]);
                const k = obj(kOnly[key]);
                return [label, dur(num(s, 'mean')), dur(num(s, 'p50')), dur(num(s, 'p95')), dur(num(s, 'max')), dur(num(s, 'total')), dur(num(k, 'p50')), dur(num(k, 'p95'))];
            }),
        ),
        h('h3', { class: C.anSub }, outliers.length ? `Outliers: the ${outliers.length} largest, by excess over their cutoff` : 'Outliers'),
        outliers.length
            ? foldRows(table(
                  'Launch outliers',
                  [{ label: 'At', num: true }, 'Kernel', 'Operator', 'Launch call', { label: 'Call', num: true }, { label: 'Delay', num: true }, { label: 'GPU', num: true }, 'Why', ''],
                  outliers.map((r) => {
                      const ts = num(r, 'ts');
                      const span = (num(r, 'cpu_ns') ?? 0) + (num(r, 'delay_ns') ?? 0) + (num(r, 'gpu_ns') ?? 0);
                      const pad = Math.max(span, 10000);
                      const why = str(r, 'why');
                      return [
                          ts !== null ? formatOffset(ts / 1000, ctx.t0us) : DASH,
                          nameCell(str(r, 'kernel')),
                          nameCell(str(r, 'op')),
                          nameCell(str(r, 'launch')),
                          dur(num(r, 'cpu_ns')),
                          dur(num(r, 'delay_ns')),
                          dur(num(r, 'gpu_ns')),
                          h('span', { class: C.nowrap }, why === 'both' ? 'slow call, late start' : why === 'runtime' ? 'slow call' : why === 'delay' ? 'late start' : why || DASH),
                          ts !== null ? ctx.tl(ts - pad, ts + span + pad, 'timeline') : null,
                      ];
                  }),
              ), 10)
            : h('p', { class: C.muted }, `No launch call slower than ${dur(rtCut)} and no launch delay above ${dur(dlCut)}.`),
    ];
}
