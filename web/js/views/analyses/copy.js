// @ts-check
/**
 * views/analyses/copy.js — the Analyses tab's section for
 * server/derive/analyses/copy.c. Copy bandwidth: per copy kind, bytes, time
 * and achieved bandwidth against the peak.
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatBytes, formatNumber } from '../../format.js';
import { shareBar } from '../../tabs.js';
import { obj, arr, num, str, empty, dur, metric, table } from './common.js';

/** @typedef {import('./common.js').Ctx} Ctx */

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
export function copySection(o, ctx) {
    const kinds = arr(o.kinds).map(obj);
    if (empty(o) || !kinds.length) return null;
    const gbps = (/** @type {number | null} */ v) => (v === null ? DASH : `${formatNumber(v, v < 10 ? 2 : 1)} GB/s`);
    return [
        h(
            'div',
            { class: C.metrics },
            metric('Bytes copied or set', formatBytes(num(o, 'total_bytes'))),
            metric('Copy time', dur(num(o, 'busy_ns')), 'Time at least one copy or memset ran, inside the analysed window.'),
        ),
        table(
            'Copy bandwidth by kind',
            ['Kind', 'Host memory', { label: 'Ops', num: true }, { label: 'Bytes', num: true }, { label: 'Time', num: true }, { label: 'Achieved', num: true, title: 'bytes ÷ time of the ops with a known size' }, { label: 'Best op', num: true }, { label: 'Peak', num: true }, { label: 'Share of peak', title: 'Achieved ÷ peak: the host link for HtoD/DtoH, device memory for DtoD and memsets' }],
            kinds.map((k) => {
                const share = num(k, 'share_of_peak');
                return [
                    str(k, 'kind') || DASH,
                    k.pinned === true ? 'pinned' : k.pinned === false ? h('span', { class: [C.badge, C.badgeWarn], title: 'Pageable host memory: the copy is staged and cannot overlap' }, 'pageable') : h('span', { class: C.muted }, DASH),
                    formatNumber(num(k, 'count')),
                    formatBytes(num(k, 'bytes')),
                    dur(num(k, 'busy_ns')),
                    gbps(num(k, 'gbps')),
                    gbps(num(k, 'max_gbps')),
                    num(k, 'peak_gbps') ? gbps(num(k, 'peak_gbps')) : h('span', { class: C.muted, title: 'Unknown for this GPU' }, DASH),
                    share === null ? h('span', { class: C.muted }, DASH) : shareBar(share, 1),
                ];
            }),
        ),
        h('p', { class: C.muted }, 'Bandwidth over time is a counter lane per kind on the timeline (under Counters). ', ctx.tl(ctx.w0, ctx.w1, 'Show on timeline')),
    ];
}
