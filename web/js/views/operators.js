// @ts-check
/**
 * views/operators.js — the run page's Operators tab (`&view=operators`):
 * host operators (aten::…, autograd, user annotations) of one rank, from
 * GET ./api/runs/ID/operators.
 *
 * Grouped by name, by name + input shapes, or by name + Python stack (the
 * stack only when the trace recorded stacks), searchable, sortable and
 * paged on the server (table.js); every control writes the URL
 * (&group= &q= &sort= &order= &offset=). The share column and the
 * "Tensor cores" column say where device time went. CSV = every matching
 * row.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { h } from '../dom.js';
import { DASH, formatMicros, formatNumber, formatShare } from '../format.js';
import { tableParams } from '../params.js';
import { createTable } from '../table.js';
import { shareBar, stackCell, tabRoute, updateRoute } from '../tabs.js';

/** @typedef {import('../apitypes.js').OperatorRow} OperatorRow */
/** @typedef {import('../apitypes.js').OperatorsPage} OperatorsPage */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../table.js').Column<OperatorRow>} Column */

/** Group modes: URL value, label. */
/**
 * The table's sort keys and group modes (the analysis API's names; the
 * first group is the default).
 * @type {import('../params.js').TableSpec}
 */
export const TABLE = Object.freeze({ sorts: ['calls', 'host_self', 'host_total', 'device_self', 'device_total', 'name'], groups: ['name', 'shape', 'stack'] });

/** This tab's URL parameters (after run, view and rank): the table's state. */
export const params = tableParams(TABLE);

/** @typedef {import('../router.js').TabRoute<typeof params>} OperatorsRoute */

const GROUPS = /** @type {const} */ ([
    ['name', 'Name'],
    ['shape', 'Name + input shapes'],
    ['stack', 'Name + call stack'],
]);

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createOperators(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createOperators(root, ctx) {
    const { store, run } = ctx;
    const group = h('select', { class: C.select, 'aria-label': 'Group operators by' }, GROUPS.map(([v, label]) => h('option', { value: v }, label)));
    group.addEventListener('change', () => updateRoute(store, { group: group.value === TABLE.groups[0] ? '' : group.value, offset: 0 }));

    const table = createTable({
        label: 'Operators',
        noun: 'operator',
        placeholder: 'Filter by name, e.g. conv or aten::mm',
        controls: h('label', { class: C.field }, h('span', { class: C.label }, 'Group by'), group),
        columns,
        defaultSort: (p) => (p && !p.has_device ? 'host_self' : 'device_self'),
        load: (params, signal) => api.getOperators(run.id, params, signal),
        csvUrl: (params) => api.analysisUrl(run.id, 'operators', params),
        onQuery: (patch) => updateRoute(store, patch),
        summary: (p) => {
            const t = p.totals || { calls: 0, host_self_us: 0, device_self_us: 0 };
            const what = p.source === 'cuda_api_nvtx' ? 'CUDA API calls and NVTX ranges' : 'operators';
            return h(
                'span',
                null,
                `Rank ${p.rank} · ${tabRoute(store.get().route, params).q ? 'matching ' + what : 'all ' + what}: ${formatNumber(t.calls)} calls, host self time ${formatMicros(t.host_self_us)}`,
                p.source === 'cuda_api_nvtx' ? ' (an Nsight export records no framework operators)' : null,
                p.has_device ? `, device self time ${formatMicros(t.device_self_us)}` : ' · no GPU time recorded',
            );
        },
        onPage: (p) => {
            for (const opt of group.options) {
                const off = (opt.value === 'stack' && !p.has_stacks) || (opt.value === 'shape' && p.has_shapes === false);
                opt.disabled = off && opt.value !== p.group;
                opt.title = off ? (opt.value === 'stack' ? 'The trace has no Python stacks (record with with_stack=True)' : 'The trace has no input shapes (record with record_shapes=True)') : '';
            }
        },
    });
    root.replaceChildren(table.el);

    function update() {
        const r = tabRoute(store.get().route, params);
        group.value = r.group || TABLE.groups[0];
        table.set({ sort: r.sort, order: r.order, q: r.q, offset: r.offset }, { rank: r.rank, group: r.group });
    }
    update();
    const unsubscribe = store.subscribe((next) => {
        const r = tabRoute(next.route, params);
        if (r.view === 'run' && r.run === run.id && r.tab === 'operators') update();
    });
    return {
        destroy() {
            unsubscribe();
            table.destroy();
        },
    };
}

/**
 * The columns for a page (device columns only when the rank has device time).
 * @param {OperatorsPage | null} p
 * @returns {Column[]}
 */
function columns(p) {
    const dev = !p || p.has_device;
    const g = p ? p.group : 'name';
    const totalDev = (p && p.totals && p.totals.device_self_us) || 0;
    const totalHost = (p && p.totals && p.totals.host_self_us) || 0;
    /** @type {(Column | null)[]} */
    const cols = [
        { label: p && p.source === 'cuda_api_nvtx' ? 'API call / NVTX range' : 'Operator', sort: 'name', cls: C.mono, clamp: true, cell: (r) => r.name, title: (r) => r.name },
        g === 'shape'
            ? { label: 'Input shapes', cls: C.mono, clamp: true, cell: (r) => r.shape || h('span', { class: C.muted }, 'none recorded'), title: (r) => r.shape || null }
            : null,
        g === 'stack' ? { label: 'Call stack', cls: C.cellStack, cell: (r) => stackCell(r.stack || ''), title: (r) => r.stack || null } : null,
        { label: 'Calls', sort: 'calls', num: true, cell: (r) => formatNumber(r.calls) },
        { label: 'Host self', sort: 'host_self', num: true, help: 'CPU time in the operator itself, its child operators excluded', cell: (r) => formatMicros(r.host_self_us) },
        { label: 'Host total', sort: 'host_total', num: true, help: 'CPU time from the operator\u2019s start to its end, child operators included', cell: (r) => formatMicros(r.host_total_us) },
        dev
            ? { label: 'Device self', sort: 'device_self', num: true, help: 'GPU time of the kernels, copies and memsets this operator launched itself', cell: (r) => formatMicros(r.device_self_us) }
            : null,
        dev
            ? { label: 'Device total', sort: 'device_total', num: true, help: 'GPU time of everything launched by the operator and its child operators', cell: (r) => formatMicros(r.device_total_us) }
            : null,
        dev
            ? { label: 'Share of device', num: true, help: 'Device self time as a share of the device self time of all operators listed (all pages)', cell: (r) => shareBar(r.device_self_us, totalDev) }
            : { label: 'Share of host', num: true, help: 'Host self time as a share of the host self time of all operators listed (all pages)', cell: (r) => shareBar(r.host_self_us, totalHost) },
        dev
            ? {
                  label: 'Tensor cores',
                  num: true,
                  help: 'Share of the operator\u2019s device self time in tensor-core kernels; \u2014 for operators that cannot use them',
                  cell: (r) => (r.tc_eligible ? formatShare(r.tc_self_share) : h('span', { class: C.muted, title: 'not a tensor-core operation' }, DASH)),
              }
            : null,
    ];
    return /** @type {Column[]} */ (cols.filter(Boolean));
}
