// @ts-check
/**
 * views/analyses/queue.js — the Analyses tab's section for
 * server/derive/analyses/queue.c. Queue depth per stream: launches queued
 * and not yet started (max, time-weighted mean, median, time at CUDA's queue
 * limit).
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatNumber, formatShare, plural } from '../../format.js';
import { isNum, obj, arr, num, empty, dur, streamCell, table } from './common.js';

/** @typedef {import('./common.js').Ctx} Ctx */

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
export function queueSection(o, ctx) {
    const streams = arr(o.streams).map(obj);
    if (empty(o) || !streams.length) return null;
    const limit = num(o, 'limit') ?? 1024;
    const fixes = num(o, 'negative_fixes') ?? 0;
    return [
        table(
            'Queue depth per stream',
            ['Stream', { label: 'Launches', num: true }, { label: 'Max', num: true }, { label: 'Mean', num: true, title: 'Time-weighted over the analysed window' }, { label: 'Median', num: true }, { label: `Time at ${formatNumber(limit)}`, num: true, title: 'CUDA blocks the launching thread while a stream has this many launches queued' }, ''],
            streams.map((s) => [
                streamCell(s),
                formatNumber(num(s, 'launches')),
                formatNumber(num(s, 'max')),
                isNum(s.mean) ? formatNumber(s.mean, 1) : DASH,
                isNum(s.p50) ? formatNumber(s.p50, 1) : DASH,
                [dur(num(s, 'at_limit_ns')), isNum(s.at_limit_share) && s.at_limit_share > 0 ? h('span', { class: C.muted }, ` (${formatShare(s.at_limit_share)})`) : null],
                ctx.tl(ctx.w0, ctx.w1, 'show on timeline'),
            ]),
        ),
        h(
            'p',
            { class: C.muted },
            `Depth: launches queued on the stream and not yet started by the GPU (+1 at the launch call, −1 when the op starts). The timeline shows it as a counter lane per stream, under Counters.`,
            fixes > 0 ? ` ${plural(fixes, 'dip')} below zero (an op starting before its launch call: host and GPU clocks disagree) shown as 0.` : null,
        ),
    ];
}
