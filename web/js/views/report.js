// @ts-check
/**
 * views/report.js — the run page's Report tab (`&view=report`): one rank on
 * a page meant for printing or saving as PDF, to attach to a ticket or a
 * paper. From GET ./api/runs/ID/overview, /kernels and /operators (the
 * top REPORT_ROWS each) of the rank in the URL.
 *
 * Top to bottom: the run (name, date, GPU, rank, id), the summary strip,
 * the GPUs, the top REPORT_FINDINGS recommendations with their evidence,
 * the step breakdown (table, bar and one column per step), the top kernels
 * and the top operators. The Overview's blocks are reused as they are; print
 * CSS (report.css, @media print) drops the page header, the tabs and every
 * control, keeps blocks whole across page breaks and prints the light
 * theme's colours whatever the screen shows. Every string from the trace is
 * text.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { bdi, h } from '../dom.js';
import { categoryInfo } from '../charts.js';
import { DASH, formatDate, formatMicros, formatNumber, formatShare, plural } from '../format.js';
import { findingsList } from '../findings.js';
import { legend, rankTab, tabRank } from '../tabs.js';
import { averageBar, gpuCards, headline, stepChart, summaryTable } from './overview.js';

/** @typedef {import('../apitypes.js').Overview} Overview */
/** @typedef {import('../apitypes.js').KernelsPage} KernelsPage */
/** @typedef {import('../apitypes.js').OperatorsPage} OperatorsPage */
/** @typedef {import('../tabs.js').TabContext} TabContext */

/** This tab declares no URL parameters beyond run, view and rank. */
export const params = Object.freeze({});

/** Rows of the kernel and operator tables; recommendations printed. */
const REPORT_ROWS = 8, REPORT_FINDINGS = 3;

/** @type {{destroy: () => void} | null} the mounted tab */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    const { run } = ctx;
    active = rankTab(root, ctx, {
        tab: 'report',
        what: 'report',
        request: async (route, signal) => {
            const rank = tabRank(run, route);
            const top = { rank, offset: 0, limit: REPORT_ROWS, order: 'desc' };
            const [ov, kernels, ops] = await Promise.all([
                api.getOverview(run.id, rank, signal),
                api.getKernels(run.id, { ...top, sort: 'total' }, signal),
                api.getOperators(run.id, top, signal),
            ]);
            return { ov, kernels, ops };
        },
        render: (d, route) => render(run, d.ov, d.kernels, d.ops, route),
    });
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {import('../apitypes.js').RunDetail} run
 * @param {Overview} ov
 * @param {KernelsPage} kernels
 * @param {OperatorsPage} ops
 * @param {import('../router.js').RunRoute} route
 */
function render(run, ov, kernels, ops, route) {
    const cats = ov.categories && ov.categories.length ? ov.categories : Object.keys(ov.average ? ov.average.breakdown_us : {});
    const recs = ov.recommendations || [];
    const print = h('button', { type: 'button', class: [C.btn, C.btnPrimary] }, 'Print or save as PDF');
    print.addEventListener('click', () => window.print());
    const gpu = (ov.gpus || [])[0];
    return h(
        'article',
        { class: C.report, 'aria-label': 'Report' },
        h(
            'header',
            { class: C.reportHead },
            h('h1', { class: C.title }, 'Performance report: ', bdi(run.name || run.id)),
            h(
                'p',
                { class: C.muted },
                [formatDate(run.created), plural(run.ranks, 'rank'), `rank ${ov.rank} shown (per step: averaged over its profiled steps)`, gpu ? gpu.name || 'GPU' : run.gpu || 'no GPU', `run ${run.id}`, `traceboard, ${plural(run.files.length, 'trace file')}`].join(' · '),
            ),
            h('p', { class: C.reportActions }, print, h('span', { class: C.muted }, ' One page per rank: pick another rank above before printing.')),
        ),
        headline(ov, route),
        block('GPUs', gpuCards(ov.gpus || []), C.reportGpus),
        block(
            recs.length > REPORT_FINDINGS ? `Top ${REPORT_FINDINGS} of ${recs.length} findings` : 'Findings',
            findingsList(ov.recommendations === undefined ? [] : ov.recommendations && ov.recommendations.slice(0, REPORT_FINDINGS), {
                runId: run.id,
                stepUs: ov.average ? ov.average.dur_us : null,
                rank: ov.rank,
            }),
        ),
        block(
            'Step breakdown',
            h(
                'div',
                { class: C.grid },
                h('div', null, summaryTable(ov, cats), averageBar(ov, cats)),
                h('div', null, stepChart(ov.steps || [], cats), legend(cats.map((k) => categoryInfo(k)))),
            ),
        ),
        block(`Top ${REPORT_ROWS} kernels by GPU time`, kernelTable(kernels)),
        block(`Top ${REPORT_ROWS} operators`, operatorTable(ops)),
    );
}

/**
 * @param {string} title
 * @param {import('../dom.js').Child} body
 * @param {string} [cls]
 */
function block(title, body, cls) {
    return h('section', { class: [C.section, C.reportBlock, cls] }, h('h2', { class: C.sectionTitle }, title), body);
}

/**
 * @param {string} label
 * @param {string[]} cols  a header ending in "#" is a number column
 * @param {import('../dom.js').Child[][]} rows
 */
function compactTable(label, cols, rows) {
    const num = cols.map((c) => c.endsWith('#'));
    return h('div', { class: C.tableScroll }, h(
        'table',
        { class: [C.table, C.tableCompact], 'aria-label': label },
        h('thead', null, h('tr', null, cols.map((c, i) => h('th', { scope: 'col', class: num[i] ? C.num : null }, num[i] ? c.slice(0, -1) : c)))),
        h(
            'tbody',
            null,
            // names (a demangled kernel is often 500 characters) on one line, whole in the tooltip
            rows.map((r) => h('tr', null, r.map((cell, i) => h('td', { class: num[i] ? C.num : null }, i === 0 ? h('div', { class: C.reportName, title: String(cell) }, cell) : cell)))),
        ),
    ));
}

/** @param {KernelsPage} k */
function kernelTable(k) {
    if (!k.rows.length) return h('p', { class: C.muted }, 'No GPU kernels in this rank.');
    return compactTable(
        'Top kernels',
        ['Kernel', 'Family', 'Calls#', 'Total#', 'Mean#', 'Share of GPU time#', 'Tensor cores'],
        k.rows.map((r) => [r.name, r.family || DASH, formatNumber(r.calls), formatMicros(r.total_us), formatMicros(r.mean_us), formatShare(r.share), r.tensor_cores ? 'yes' : 'no']),
    );
}

/** @param {OperatorsPage} o */
function operatorTable(o) {
    if (!o.rows.length) return h('p', { class: C.muted }, 'No operators in this rank.');
    return compactTable(
        'Top operators',
        ['Operator', 'Calls#', 'GPU self#', 'GPU total#', 'Host self#', 'Host total#'],
        o.rows.map((r) => [r.name, formatNumber(r.calls), formatMicros(r.device_self_us), formatMicros(r.device_total_us), formatMicros(r.host_self_us), formatMicros(r.host_total_us)]),
    );
}
