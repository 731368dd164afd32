// @ts-check
/**
 * views/analyses/idle.js — the Analyses tab's section for
 * server/derive/analyses/idle.c. Idle time by cause: per GPU stream, the
 * gaps inside the steps split by what the host was doing (stacked bars on
 * one axis), the totals, and the gap-length histogram of HTA's three kinds.
 */

import { C } from '../../classes.js';
import { h, svg } from '../../dom.js';
import { linearScale, niceTicks } from '../../charts.js';
import { formatNumber, formatShare, plural } from '../../format.js';
import { bodyScale, legend } from '../../tabs.js';
import { isNum, obj, arr, num, empty, dur, streamName, streamCell, withShare, metric, table, stackedBars } from './common.js';

/** @typedef {import('./common.js').Part} Part */

/** Idle causes: the host-wait parts (what the host did meanwhile), then HTA's other two. */
const IDLE_PARTS = /** @type {Part[]} */ ([
    { key: 'launching', label: 'Host wait: launching', color: '#e15759', help: 'The host thread was in runtime launch calls or framework operators: it could not enqueue work fast enough.' },
    { key: 'sync', label: 'Host wait: sync', color: '#ff9d9a', help: 'The host thread was blocked in a synchronising runtime call.' },
    { key: 'dataloader', label: 'Host wait: DataLoader', color: '#76b7b2', help: 'The host thread was fetching the next batch.' },
    { key: 'comm', label: 'Host wait: communication', color: '#b07aa1', help: 'The host thread was in a collective operation.' },
    { key: 'none', label: 'Host wait: nothing profiled', color: '#9c755f', help: 'The host thread did something the profiler did not see (Python, sleeps).' },
    { key: 'kernel_wait', label: 'Kernel wait', color: '#4e79a7', help: 'Short gaps (< 30 µs) between queued work: the GPU’s own launch latency.' },
    { key: 'other', label: 'Other', color: '#bab0ac', help: 'Waiting on events, other streams or copies.' },
]);

/** HTA's three gap kinds (histogram). */
const GAP_KINDS = /** @type {Part[]} */ ([
    { key: 'host_wait', label: 'Host wait', color: '#e15759' },
    { key: 'kernel_wait', label: 'Kernel wait', color: '#4e79a7' },
    { key: 'other', label: 'Other', color: '#bab0ac' },
]);

/** @param {Record<string, any>} o a stream or the totals */
function idleSegs(o) {
    const by = obj(o.host_wait_by);
    return IDLE_PARTS.map((part) => {
        const v = part.key === 'kernel_wait' || part.key === 'other' ? num(o, part.key + '_ns') : num(by, part.key + '_ns');
        return { part, value: v ?? 0 };
    });
}

/** @param {Record<string, any>} o */
export function idleSection(o) {
    const streams = arr(o.streams).map(obj);
    if (empty(o) || !streams.length) return null;
    const tot = obj(o.totals);
    const ratios = obj(o.ratios);
    const idle = num(tot, 'idle_ns');
    return [
        h(
            'div',
            { class: C.metrics },
            metric('GPU idle (all streams)', dur(idle), 'Gaps between GPU ops on each stream inside the steps, summed over the streams.'),
            metric('Host wait', withShare(dur(num(tot, 'host_wait_ns')), formatShare(num(ratios, 'host_wait'))), 'The next op’s launch call began after the previous op ended: the host was late.'),
            metric('Kernel wait', withShare(dur(num(tot, 'kernel_wait_ns')), formatShare(num(ratios, 'kernel_wait'))), `Gaps shorter than ${dur(num(o, 'kernel_wait_threshold_ns') ?? 30000)} between queued work.`),
            metric('Other', withShare(dur(num(tot, 'other_ns')), formatShare(num(ratios, 'other'))), 'Waiting on events, other streams or copies.'),
        ),
        stackedBars(
            'Idle time by cause per stream',
            streams.map((s) => ({ label: streamName(s), segs: idleSegs(s) })),
        ),
        legend(IDLE_PARTS),
        table(
            'Idle time per stream',
            [
                'Stream',
                { label: 'Busy', num: true },
                { label: 'Idle', num: true },
                { label: 'Host wait', num: true },
                ...IDLE_PARTS.slice(0, 5).map((p) => ({ label: '· ' + p.label.replace('Host wait: ', ''), num: true, title: p.help })),
                { label: 'Kernel wait', num: true },
                { label: 'Other', num: true },
                { label: 'Gaps', num: true },
            ],
            streams.map((s) => {
                const counts = obj(s.counts);
                const gaps = (num(counts, 'host_wait') ?? 0) + (num(counts, 'kernel_wait') ?? 0) + (num(counts, 'other') ?? 0);
                return [
                    streamCell(s),
                    dur(num(s, 'busy_ns')),
                    dur(num(s, 'idle_ns')),
                    dur(num(s, 'host_wait_ns')),
                    ...IDLE_PARTS.slice(0, 5).map((p) => dur(num(obj(s.host_wait_by), p.key + '_ns'))),
                    dur(num(s, 'kernel_wait_ns')),
                    dur(num(s, 'other_ns')),
                    formatNumber(gaps),
                ];
            }),
        ),
        histogram(obj(o.histogram)),
    ];
}

const HG = { w: 1200, h: 200, left: 56, right: 12, top: 10, bottom: 34 };

/**
 * Gap lengths: one stacked column per length bin.
 * @param {Record<string, any>} hg {edges_ns, host_wait, kernel_wait, other}
 */
function histogram(hg) {
    const edges = arr(hg.edges_ns).filter(isNum);
    const nb = edges.length + 1;
    const series = GAP_KINDS.map((k) => ({ part: k, counts: arr(hg[k.key]) }));
    if (!edges.length || !series.some((s) => s.counts.some((c) => c > 0))) return null;
    const totals = Array.from({ length: nb }, (_, i) => series.reduce((a, s) => a + (isNum(s.counts[i]) ? s.counts[i] : 0), 0));
    const max = Math.max(1, ...totals);
    const { ticks } = niceTicks(0, max, 4);
    const y = linearScale(0, ticks[ticks.length - 1], HG.h - HG.bottom, HG.top);
    const bw = (HG.w - HG.left - HG.right) / nb;
    const binLabel = (/** @type {number} */ i) => (i === 0 ? `< ${dur(edges[0])}` : i === nb - 1 ? `≥ ${dur(edges[nb - 2])}` : `${dur(edges[i - 1])} – ${dur(edges[i])}`);
    const every = Math.ceil(nb / 12);
    return h(
        'div',
        null,
        h('h3', { class: C.anSub }, 'Gap lengths'),
        bodyScale(svg(
            'svg',
            { class: [C.chart, C.anChart], viewBox: `0 0 ${HG.w} ${HG.h}`, role: 'img', 'aria-label': 'Histogram of idle gap lengths by kind' },
            ticks.map((t) =>
                svg(
                    'g',
                    null,
                    svg('line', { class: C.gridLine, x1: HG.left, x2: HG.w - HG.right, y1: y.map(t), y2: y.map(t) }),
                    svg('text', { class: C.axis, x: HG.left - 6, y: y.map(t) + 4, 'text-anchor': 'end' }, formatNumber(t)),
                ),
            ),
            totals.map((total, i) => {
                let acc = 0;
                const x0 = HG.left + i * bw;
                return svg(
                    'g',
                    { class: C.bar },
                    svg('title', null, [`${binLabel(i)}: ${plural(total, 'gap')}`, ...series.map((s) => `${s.part.label}: ${formatNumber(isNum(s.counts[i]) ? s.counts[i] : 0)}`)].join('\n')),
                    series.map((s) => {
                        const c = isNum(s.counts[i]) ? s.counts[i] : 0;
                        if (c <= 0) return null;
                        const ya = y.map(acc);
                        acc += c;
                        const yb = y.map(acc);
                        return svg('rect', { x: (x0 + 1).toFixed(2), y: yb.toFixed(2), width: Math.max(0.5, bw - 2).toFixed(2), height: Math.max(0.5, ya - yb).toFixed(2), fill: s.part.color });
                    }),
                    i % every === 0
                        ? svg('text', { class: C.axis, x: (x0 + bw / 2).toFixed(2), y: HG.h - HG.bottom + 14, 'text-anchor': 'middle' }, i === 0 ? `<${dur(edges[0])}` : dur(edges[i - 1]))
                        : null,
                );
            }),
            svg('text', { class: C.axis, x: (HG.left + HG.w - HG.right) / 2, y: HG.h - 4, 'text-anchor': 'middle' }, 'gap length (bin start)'),
        ), HG.w),
        legend(GAP_KINDS),
    );
}
