// @ts-check
/**
 * views/kernels.js — the run page's Kernels tab (`&view=kernels`): GPU
 * kernels of one rank, from GET ./api/runs/ID/kernels.
 *
 * Grouped by kernel name, or by kernel name + the operator that launched
 * it; searchable (kernel or operator name), sortable and paged on the
 * server (table.js), with the state in the URL (&group= &q= &sort= &order=
 * &offset=), and narrowed to one kernel family (&family=: GEMM, attention,
 * NCCL AllReduce…, the compare page's families; the search box matches
 * them too, so "gemm" finds H100's nvjet_* cuBLAS kernels). Per row: the
 * family, calls, total/mean/min/max time, share of the rank's kernel
 * time, tensor cores yes/no, blocks per SM, estimated achieved occupancy
 * ("n/a" where the trace gives none or 0, which Kineto writes when it
 * cannot estimate) and what limits it. Kernel names are C++ templates full of
 * <, > and &: they are text, clipped to two lines, whole in the tooltip.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { DASH, formatMicros, formatNumber, formatPercent, formatShare } from '../format.js';
import { stringParam, tableParams } from '../params.js';
import { createTable } from '../table.js';
import { shareBar, tabRoute, updateRoute } from '../tabs.js';

/** @typedef {import('../apitypes.js').KernelRow} KernelRow */
/** @typedef {import('../apitypes.js').KernelsPage} KernelsPage */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../table.js').Column<KernelRow>} Column */

/**
 * The table's sort keys and group modes (the analysis API's names; the
 * first group is the default).
 * @type {import('../params.js').TableSpec}
 */
export const TABLE = Object.freeze({ sorts: ['total', 'calls', 'mean', 'min', 'max', 'name', 'share', 'occupancy', 'blocks_per_sm'], groups: ['name', 'op'] });

/** This tab's URL parameters (after run, view and rank): the table's state and the kernel family shown ("" = all). */
export const params = Object.freeze({ ...tableParams(TABLE), family: stringParam('family', { max: 200 }) });

/** @typedef {import('../router.js').TabRoute<typeof params>} KernelsRoute */

const GROUPS = /** @type {const} */ ([
    ['name', 'Kernel name'],
    ['op', 'Kernel name + operator'],
]);

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createKernels(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createKernels(root, ctx) {
    const { store, run } = ctx;
    const group = h('select', { class: C.select, 'aria-label': 'Group kernels by' }, GROUPS.map(([v, label]) => h('option', { value: v }, label)));
    group.addEventListener('change', () => updateRoute(store, { group: group.value === TABLE.groups[0] ? '' : group.value, offset: 0 }));
    const family = h('select', { class: C.select, 'aria-label': 'Kernel family' });
    family.addEventListener('change', () => updateRoute(store, { family: family.value, offset: 0 }));
    /** The families offered: the rank's, once a page named them, and the URL's. */
    /** @type {{family: string, total_us: number}[]} */
    let families = [];

    const table = createTable({
        label: 'Kernels',
        noun: 'kernel',
        placeholder: 'Filter kernels or operators',
        controls: [
            h('label', { class: C.field }, h('span', { class: C.label }, 'Family'), family),
            h('label', { class: C.field }, h('span', { class: C.label }, 'Group by'), group),
        ],
        columns,
        defaultSort: () => 'total',
        load: (params, signal) => api.getKernels(run.id, params, signal),
        csvUrl: (params) => api.analysisUrl(run.id, 'kernels', params),
        onQuery: (patch) => updateRoute(store, patch),
        onPage: (p) => {
            if (!p.families) return;
            families = p.families;
            syncFamilies(tabRoute(store.get().route, params).family);
        },
        summary: (p) =>
            h(
                'span',
                null,
                `Rank ${p.rank} · kernel time ${formatMicros(p.kernel_us)} · on tensor cores ${formatMicros(p.tc_us)} (${formatPercent(p.tc_us, p.kernel_us)})`,
            ),
    });

    /** @param {string} cur */
    function syncFamilies(cur) {
        const opts = families.map((f) => h('option', { value: f.family }, `${f.family} (${formatMicros(f.total_us)})`));
        if (cur && !families.some((f) => f.family === cur)) opts.unshift(h('option', { value: cur }, cur));
        replace(family, h('option', { value: '' }, 'all'), opts);
        family.value = cur;
    }
    root.replaceChildren(table.el);

    function update() {
        const r = tabRoute(store.get().route, params);
        group.value = r.group || TABLE.groups[0];
        syncFamilies(r.family);
        table.set({ sort: r.sort, order: r.order, q: r.q, offset: r.offset }, { rank: r.rank, group: r.group, family: r.family || null });
    }
    update();
    const unsubscribe = store.subscribe((next) => {
        const r = tabRoute(next.route, params);
        if (r.view === 'run' && r.run === run.id && r.tab === 'kernels') update();
    });
    return {
        destroy() {
            unsubscribe();
            table.destroy();
        },
    };
}

/**
 * @param {KernelsPage | null} p
 * @returns {Column[]}
 */
function columns(p) {
    const byOp = p ? p.group === 'op' : false;
    /** @type {(Column | null)[]} */
    const cols = [
        {
            label: 'Kernel',
            sort: 'name',
            cls: C.mono, clamp: true,
            cell: (r) => [r.communication ? h('span', { class: [C.badge, C.badgeInfo], title: 'communication kernel (NCCL …)' }, 'comm') : null, r.communication ? ' ' : null, r.name],
            title: (r) => r.name,
        },
        byOp
            ? { label: 'Operator', cls: C.mono, clamp: true, cell: (r) => r.op || h('span', { class: C.muted }, 'no operator'), title: (r) => r.op || null }
            : null,
        { label: 'Family', cls: C.nowrap, help: 'The kernel family (as on the compare page): GEMM, attention, NCCL AllReduce…, else the bare kernel name', cell: (r) => r.family || DASH },
        { label: 'Calls', sort: 'calls', num: true, cell: (r) => formatNumber(r.calls) },
        { label: 'Total', sort: 'total', num: true, help: 'Sum of the kernel\u2019s durations', cell: (r) => formatMicros(r.total_us) },
        { label: 'Mean', sort: 'mean', num: true, cell: (r) => formatMicros(r.mean_us) },
        { label: 'Min', sort: 'min', num: true, cell: (r) => formatMicros(r.min_us) },
        { label: 'Max', sort: 'max', num: true, cell: (r) => formatMicros(r.max_us) },
        { label: 'Share of GPU time', sort: 'share', num: true, help: 'Total time as a share of all kernel time in this rank', cell: (r) => shareBar(r.share, 1) },
        {
            label: 'Tensor cores',
            help: 'Whether the kernel runs on tensor cores (recognized by its name)',
            cell: (r) => (r.tensor_cores ? h('span', { class: [C.badge, C.badgeOk] }, 'yes') : h('span', { class: [C.badge, C.badgeNeutral] }, 'no')),
        },
        {
            label: 'Blocks/SM',
            sort: 'blocks_per_sm',
            num: true,
            help: 'Thread blocks per streaming multiprocessor (grid size / SM count, duration-weighted); below 1 leaves SMs idle',
            cell: (r) => (typeof r.blocks_per_sm === 'number' ? formatNumber(r.blocks_per_sm, r.blocks_per_sm < 10 ? 2 : 1) : DASH),
        },
        {
            label: 'Est. occupancy',
            sort: 'occupancy',
            num: true,
            help: 'Estimated achieved occupancy (Kineto\u2019s \u201cest. achieved occupancy %\u201d, duration-weighted): resident warps per SM as a share of the maximum',
            // Kineto writes 0 where it cannot estimate (nvjet_* on H100, NCCL): no
            // running kernel has no warps resident, so 0 reads as not given
            cell: (r) => (r.achieved_occupancy ? formatShare(r.achieved_occupancy) : h('span', { class: C.muted, title: 'the trace does not give it' }, 'n/a')),
        },
        {
            label: 'Limiter',
            help: 'What bounds the occupancy (registers, shared memory, block size), when the trace says',
            cls: C.nowrap,
            cell: (r) => r.limiter || h('span', { class: C.muted }, DASH),
        },
    ];
    return /** @type {Column[]} */ (cols.filter(Boolean));
}
