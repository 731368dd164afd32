// @ts-check
/**
 * views/analyses/fusion.js — the Analyses tab's section for
 * server/derive/analyses/fusion.c. Fusion candidates: operator → kernel
 * patterns that pay one launch per short kernel, with the launch time fusing
 * could save.
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatNumber } from '../../format.js';
import { obj, arr, num, str, empty, dur, metric, table } from './common.js';

/** @param {Record<string, any>} o */
export function fusionSection(o) {
    const rows = arr(o.items).map(obj);
    if (empty(o)) return null;
    const names = (/** @type {unknown} */ x) => arr(x).filter((k) => typeof k === 'string');
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Candidates', formatNumber(num(o, 'candidates') ?? rows.length), 'Operator → kernel patterns that pay one launch per short kernel.'),
            metric('Estimated saving', dur(num(o, 'saving_ns') ?? 0), '(kernels per call − 1) × instances × the cost of one launch, summed over the candidates.'),
        ),
        str(o, 'advice') ? h('p', null, str(o, 'advice')) : null,
        !rows.length ? (str(o, 'advice') ? null : h('p', { class: C.muted }, 'No operator launches a run of short kernels worth fusing.')) : table(
            'Fusion candidates',
            ['Kind', 'Operators', 'Kernels launched', { label: 'Count', num: true }, { label: 'Kernels each', num: true }, { label: 'Mean kernel', num: true }, { label: 'GPU time', num: true }, { label: 'Launch calls', num: true }, { label: 'Saving', num: true, title: 'Launch overhead that fusing the kernels into one could save' }],
            rows.map((r) => {
                const ops = names(r.ops);
                const ks = names(r.kernels);
                return [
                    str(r, 'kind') === 'chain' ? h('span', { title: 'Consecutive operators each launching one short elementwise kernel' }, 'chain') : str(r, 'kind') || DASH,
                    h('div', { class: [C.cellClamp, C.mono], title: ops.join('\n') }, ops.join(' → ') || DASH),
                    h('div', { class: [C.cellClamp, C.mono], title: ks.join('\n') }, ks.join(' → ') || DASH),
                    formatNumber(num(r, 'count')),
                    formatNumber(num(r, 'kernels_per_call')),
                    ...['mean_kernel_ns', 'gpu_ns', 'launch_ns', 'saving_ns'].map((k) => dur(num(r, k))),
                ];
            }),
        ),
    ];
}
