// @ts-check
/**
 * views/analyses/critical_path.js — the Analyses tab's section for
 * server/derive/analyses/critical_path.c. Critical path per step: time by
 * category on the path that bounded each step, with links that outline it on
 * the timeline (cp=1). Up to ROWS_MAX steps are one bar row each; more (a
 * 100-step run) are columns whose width shrinks with their number, and the
 * table shows the first TABLE_ROWS with a button for the rest, so the
 * section stays about a screen long (issue 21).
 */

import { C } from '../../classes.js';
import { h } from '../../dom.js';
import { DASH, formatPercent, formatShare } from '../../format.js';
import { legend } from '../../tabs.js';
import { CP_COLOURS } from '../../timeline/critpath.js';
import { obj, arr, num, str, empty, dur, withShare, table, foldRows, stackedBars, stepColumns } from './common.js';

/** The most steps drawn as bar rows; past it, columns. */
const ROWS_MAX = 16;
/** Table rows shown before "Show all". */
const TABLE_ROWS = 12;

/** @typedef {import('./common.js').Ctx} Ctx */
/** @typedef {import('./common.js').Part} Part */

/** Critical-path categories (the API's names), coloured as the timeline outlines them. */
const CP_PARTS = /** @type {Record<string, Part>} */ ({
    // the timeline's dark outline colour would vanish on a dark page: the dark theme lightens it
    cpu: { key: 'cpu', label: 'CPU', color: `var(--tb-cp-cpu, ${CP_COLOURS.cpu})`, help: 'Host work: operators, Python, the callers of launches.' },
    dataloader: { key: 'dataloader', label: 'DataLoader', color: CP_COLOURS.dataloader, help: 'Host time inside DataLoader calls.' },
    gpu_compute: { key: 'gpu_compute', label: 'GPU compute', color: CP_COLOURS.gpu_compute, help: 'Kernels and copies on the path.' },
    communication: { key: 'communication', label: 'Communication', color: CP_COLOURS.communication, help: 'Communication kernels on the path.' },
    launch_overhead: { key: 'launch_overhead', label: 'Launch overhead', color: CP_COLOURS.launch_overhead, help: 'Launch calls and the delay until the GPU starts.' },
    kernel_gap: { key: 'kernel_gap', label: 'Kernel gaps', color: CP_COLOURS.kernel_gap, help: 'Gaps between GPU ops on one stream.' },
});

/**
 * @param {Record<string, any>} o
 * @param {Ctx} ctx
 */
export function critpathSection(o, ctx) {
    const steps = arr(o.steps).map(obj);
    if (empty(o) || !steps.length) return null;
    const parts = Object.values(CP_PARTS);
    /** @param {Record<string, any>} s */
    const byCat = (s) => {
        const b = obj(s.by);
        return parts.map((part) => ({ part, value: num(b, part.key + '_ns') ?? 0 }));
    };
    const label = (/** @type {Record<string, any>} */ s, /** @type {number} */ i) => str(s, 'name') || `step ${num(s, 'idx') ?? i}`;
    const shares = obj(o.shares);
    const bound = str(o, 'bound_by');
    return [
        bound
            ? h(
                  'p',
                  null,
                  'Over all steps the critical path is bound by ',
                  h('strong', null, (CP_PARTS[bound] || { label: bound }).label),
                  ` (${formatShare(num(shares, bound))} of the steps’ time). Each nanosecond of a step lies on one segment of the path, so the categories add up to the step.`,
              )
            : null,
        steps.length <= ROWS_MAX
            ? stackedBars('Critical path of each step by category', steps.map((s, i) => ({ label: label(s, i), segs: byCat(s) })))
            : stepColumns(
                  `Critical path of each of ${steps.length} steps by category`,
                  steps.map((s, i) => ({ label: stepNumber(label(s, i)), name: label(s, i), segs: byCat(s) })),
              ),
        legend(parts),
        foldRows(table(
            'Critical path per step',
            ['Step', { label: 'Duration', num: true }, ...parts.map((p) => ({ label: p.label, num: true, title: p.help })), 'Bound by', ''],
            steps.map((s, i) => {
                const ts = num(s, 'ts');
                const d = num(s, 'dur');
                const segs = byCat(s);
                const total = d ?? segs.reduce((a, x) => a + x.value, 0);
                const b = str(s, 'bound_by');
                return [
                    [label(s, i), s.truncated === true ? h('span', { class: C.muted, title: 'The path has more segments than are stored: the timeline shows its first part' }, ' (truncated)') : null],
                    dur(d),
                    ...segs.map((x) => withShare(dur(x.value), formatPercent(x.value, total))),
                    b ? (CP_PARTS[b] || { label: b }).label : DASH,
                    ctx.tl(ts, ts !== null && d !== null ? ts + d : null, 'show on timeline', true),
                ];
            }),
        ), TABLE_ROWS),
    ];
}

/**
 * A column's label: "ProfilerStep#12" -> "#12".
 * @param {string} name
 */
function stepNumber(name) {
    const m = /#(\d+)$/.exec(name);
    return m ? '#' + m[1] : name.length > 8 ? name.slice(0, 7) + '…' : name;
}
