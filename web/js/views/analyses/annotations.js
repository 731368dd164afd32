// @ts-check
/**
 * views/analyses/annotations.js — the Analyses tab's section for
 * server/derive/analyses/annotations.c. GPU time by annotation
 * (record_function, nn.Module, GPU annotations).
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatNumber, formatPercent } from '../../format.js';
import { shareBar } from '../../tabs.js';
import { obj, arr, num, str, empty, dur, withShare, metric, table, nameCell } from './common.js';

const ANNOT_SOURCES = /** @type {Record<string, string>} */ ({ record_function: 'record_function', module: 'nn.Module', gpu_annotation: 'GPU annotation' });

/** @param {Record<string, any>} o */
export function annotationsSection(o) {
    const rows = arr(o.items).map(obj);
    const gpuAnn = arr(o.gpu_annotations).map(obj);
    if (empty(o) || (!rows.length && !gpuAnn.length)) return null;
    const total = num(o, 'total_ns');
    const TOP = 25;
    return [
        h(
            'div',
            { class: C.metrics },
            metric('GPU time attributed', withShare(dur(num(o, 'attributed_ns')), formatPercent(num(o, 'attributed_ns'), total)), 'GPU ops whose launch lies under an annotation (innermost wins), or that run inside a GPU annotation.'),
            metric('Under no annotation', withShare(dur(num(o, 'unattributed_ns')), formatPercent(num(o, 'unattributed_ns'), total))),
            metric('GPU op time', dur(total), 'Sum of the durations of every GPU op starting in the window (concurrent streams both count).'),
        ),
        rows.length
            ? table(
                  `Top annotations by GPU time`,
                  ['Annotation', 'Source', { label: 'GPU time', num: true }, 'Share of GPU time', { label: 'Ops', num: true }, { label: 'Launch calls', num: true }],
                  rows.slice(0, TOP).map((r) => {
                      const g = num(r, 'gpu_ns');
                      return [nameCell(str(r, 'name')), ANNOT_SOURCES[str(r, 'source')] || str(r, 'source') || DASH, dur(g), total ? shareBar(g, total) : DASH, formatNumber(num(r, 'ops')), formatNumber(num(r, 'calls'))];
                  }),
              )
            : h('p', { class: C.muted }, 'No GPU op runs under an annotation.'),
        rows.length > TOP ? h('p', { class: C.muted }, `The ${TOP} largest of ${formatNumber(rows.length)} are listed.`) : null,
        gpuAnn.length
            ? [
                  h('h3', { class: C.anSub }, 'GPU annotation ranges (gpu_user_annotation)'),
                  table(
                      'GPU annotation ranges',
                      ['Name', { label: 'Count', num: true }, { label: 'Total', num: true }, { label: 'Mean', num: true }, { label: 'Min', num: true }, { label: 'Max', num: true }],
                      gpuAnn.slice(0, 10).map((r) => [nameCell(str(r, 'name')), formatNumber(num(r, 'count')), dur(num(r, 'sum_ns')), dur(num(r, 'mean_ns')), dur(num(r, 'min_ns')), dur(num(r, 'max_ns'))]),
                  ),
              ]
            : null,
    ];
}
