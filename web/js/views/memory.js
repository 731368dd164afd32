// @ts-check
/**
 * views/memory.js — the run page's Memory tab (`&view=memory`): one
 * device's memory over time, and the allocations behind it.
 *
 * Data: GET ./api/runs/ID/memory (the allocated/reserved curve of the
 * window, its peak and the steps in it) and ./memory/events (allocations
 * whose lifetime overlaps the window; a server-side table, table.js).
 *
 * URL state: &device= (GPU id or "cpu"), &start= &end= (zoom window, µs on
 * the trace clock), &min= (smallest allocation listed), and the events
 * table's &q= &sort= &order= &offset=. Dragging over the chart zooms: the
 * window goes into the URL (replaceState) and the curve is fetched again
 * at the finer resolution; "Reset zoom" drops it. Times are printed
 * relative to the rank's first event.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, h, replace } from '../dom.js';
import { DASH, formatBytes, formatMicros, formatOffset, formatPercent } from '../format.js';
import { CHART_COLORS, createMemoryChart } from '../memchart.js';
import { createTable } from '../table.js';
import { DEVICE_RE, intParam, stringParam, tableParams, windowParams } from '../params.js';
import { analysisError, legend, rankStartUs, tabRank, tabRoute, updateRoute } from '../tabs.js';

/** @typedef {import('../apitypes.js').MemoryCurve} MemoryCurve */
/** @typedef {import('../apitypes.js').MemoryEventRow} MemoryEventRow */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../router.js').TabRoute<typeof params>} Route */

/** Choices of the smallest allocation listed (bytes, label). */
/** The allocations table's sort keys (the analysis API's names); no groups. */
export const TABLE = Object.freeze({ sorts: ['bytes', 'alloc', 'free', 'lifetime', 'op'], groups: [] });

/**
 * This tab's URL parameters (after run, view and rank): the table's state,
 * then the device ("0", "1"… or "cpu"; "" = the server's default), the zoom
 * window (µs on the trace clock; null = the whole rank) and the smallest
 * allocation listed (bytes; 0 = all).
 */
export const params = Object.freeze({
    ...tableParams(TABLE),
    device: stringParam('device', { re: DEVICE_RE }),
    ...windowParams(),
    min: intParam('min', /^(0|[1-9][0-9]{0,15})$/, 0),
});

/** @typedef {import('../router.js').TabRoute<typeof params>} MemoryRoute */

const MIN_SIZES = /** @type {const} */ ([
    [0, 'any size'],
    [1024, '≥ 1 KiB'],
    [1024 ** 2, '≥ 1 MiB'],
    [16 * 1024 ** 2, '≥ 16 MiB'],
    [256 * 1024 ** 2, '≥ 256 MiB'],
    [1024 ** 3, '≥ 1 GiB'],
]);

/** Curve points asked for per plot pixel column (the server keeps first, max and last of each). */
const MIN_POINTS = 10;
const MAX_POINTS = 5000;

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createMemory(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createMemory(root, ctx) {
    const { store, run } = ctx;
    let destroyed = false;
    /** @type {AbortController | null} */
    let ctrl = null;
    let curveKey = '';
    /** @type {MemoryCurve | null} */
    let mem = null;
    /** The unzoomed window of the device, once seen (for "zoom out"). */
    /** @type {[number, number] | null} */
    let full = null;
    let origin = 0;

    const device = h('select', { class: C.select, 'aria-label': 'Device' });
    device.addEventListener('change', () => updateRoute(store, { device: device.value, start: null, end: null, offset: 0 }));
    const windowText = h('span', { class: C.muted });
    const zoomOut = h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: onZoomOut } }, 'Zoom out');
    const reset = h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => updateRoute(store, { start: null, end: null, offset: 0 }) } }, 'Reset zoom');
    const stats = h('dl', { class: C.stats });
    const chart = createMemoryChart({
        label: 'Allocated and reserved memory over time',
        onZoom: (start, end) => updateRoute(store, { start, end, offset: 0 }),
    });
    const chartBox = h('div', null, chart.el);
    const minSel = h('select', { class: C.select, 'aria-label': 'Smallest allocation listed' });
    minSel.addEventListener('change', () => updateRoute(store, { min: Number(minSel.value), offset: 0 }));

    const table = createTable({
        label: 'Allocations',
        noun: 'allocation',
        placeholder: 'Filter by operator name',
        controls: h('label', { class: C.field }, h('span', { class: C.label }, 'Size'), minSel),
        columns: () => columns(),
        defaultSort: () => 'bytes',
        load: (params, signal) => api.getMemoryEvents(run.id, params, signal),
        csvUrl: (params) => api.analysisUrl(run.id, 'memory/events', params),
        onQuery: (patch) => updateRoute(store, patch),
    });

    const hint = h('p', { class: C.muted }, 'Drag across the chart to zoom into a time window; the allocations below follow the window.');
    const key = curveLegend();
    const toolbar = h('div', { class: C.toolbar }, h('label', { class: C.field }, h('span', { class: C.label }, 'Device'), device), windowText, h('span', { class: C.spacer }), zoomOut, reset);
    const events = h('section', { class: C.section }, h('h2', { class: C.sectionTitle }, 'Allocations in the window'), table.el);
    root.replaceChildren(
        h(
            'div',
            { class: C.page },
            toolbar,
            stats,
            h(
                'article',
                { class: [C.card, C.cardPad] },
                h('h2', { class: C.sectionTitle }, 'Memory over time'),
                hint,
                chartBox,
                key,
            ),
            events,
        ),
    );

    function onZoomOut() {
        const r = tabRoute(store.get().route, params);
        if (r.start === null || r.end === null) return;
        const mid = (r.start + r.end) / 2;
        const half = r.end - r.start;
        let start = mid - half;
        let end = mid + half;
        if (full) {
            if (start <= full[0] && end >= full[1]) return updateRoute(store, { start: null, end: null, offset: 0 });
            start = Math.max(full[0], start);
            end = Math.min(full[1], end);
        }
        updateRoute(store, { start, end, offset: 0 });
    }

    /** @param {Route} r */
    function curveParams(r) {
        const points = Math.round(Math.max(MIN_POINTS, Math.min(MAX_POINTS, chart.plotWidth() || 800)));
        return { rank: r.rank, device: r.device, start_us: r.start, end_us: r.end, points };
    }

    function update() {
        const r = tabRoute(store.get().route, params);
        zoomOut.disabled = r.start === null;
        reset.disabled = r.start === null;
        syncMinSelect(r.min);
        const query = curveParams(r);
        const key = JSON.stringify({ ...query, points: 0 });
        if (key !== curveKey) {
            curveKey = key;
            loadCurve(query);
        } else {
            syncTable();
        }
    }

    /** @param {import('../api.js').Params} query */
    async function loadCurve(query) {
        if (ctrl) ctrl.abort();
        const mine = new AbortController();
        ctrl = mine;
        chartBox.classList.add(C.busy);
        try {
            const m = await api.getMemory(run.id, query, mine.signal);
            if (destroyed || ctrl !== mine) return;
            mem = m;
            showCurve(m);
        } catch (e) {
            if (destroyed || ctrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            mem = null;
            chart.setData(null);
            replace(stats);
            const retry = () => {
                curveKey = '';
                replace(chartBox, chart.el);
                update();
            };
            replace(chartBox, analysisError(e, 'memory curve', tabRoute(store.get().route, params), retry));
            events.hidden = true; // the same failure would show twice
        } finally {
            if (ctrl === mine) chartBox.classList.remove(C.busy);
        }
    }

    /** @param {MemoryCurve} m */
    function showCurve(m) {
        const r = tabRoute(store.get().route, params);
        const rank = typeof m.rank === 'number' ? m.rank : tabRank(run, r);
        origin = rankStartUs(run, rank) ?? m.start_us;
        if (r.start === null) full = [m.start_us, m.end_us];
        const devices = m.devices || [];
        replace(device, devices.map((d) => h('option', { value: d.id }, d.label || d.id)));
        device.value = m.device;
        device.disabled = devices.length < 2;
        const dev = devices.find((d) => d.id === m.device);
        // a rank without memory events has no device and no allocations to
        // ask for (the events query would name a device the rank lacks): the
        // notice alone stands for the tab
        for (const el of [toolbar, hint, key, events]) el.hidden = !devices.length;
        if (!devices.length || !m.curve || !m.curve.ts_us.length) {
            replace(windowText);
            replace(stats);
            chart.setData(null);
            replace(
                chartBox,
                alertBox(
                    'info',
                    devices.length ? 'No memory samples in this window' : 'No memory events in this rank',
                    devices.length
                        ? 'Zoom out or reset the zoom.'
                        : 'Record them with torch.profiler.profile(profile_memory=True) to see allocations over time.',
                ),
            );
            syncTable();
            return;
        }
        if (!chart.el.isConnected) replace(chartBox, chart.el);
        replace(
            windowText,
            r.start === null
                ? `Whole rank: ${formatMicros(m.end_us - m.start_us)}`
                : `Window ${formatOffset(m.start_us, origin)} → ${formatOffset(m.end_us, origin)} (${formatMicros(m.end_us - m.start_us)})`,
        );
        replace(
            stats,
            dev ? stat(`Peak allocated, ${dev.label}`, formatBytes(dev.peak_bytes), `at ${formatOffset(dev.peak_us, origin)}`) : null,
            m.peak && r.start !== null ? stat('Peak in the window', formatBytes(m.peak.bytes), `at ${formatOffset(m.peak.ts_us, origin)}`) : null,
            stat('Peak reserved', formatBytes(Math.max(0, ...m.curve.reserved)), r.start !== null ? 'in the window' : 'by the caching allocator'),
            dev && dev.memory_bytes
                ? stat('Capacity', formatBytes(dev.memory_bytes), `peak uses ${formatPercent(dev.peak_bytes, dev.memory_bytes)}`)
                : null,
        );
        chart.setData({ start_us: m.start_us, end_us: m.end_us, curve: m.curve, peak: m.peak, steps: m.steps || [], origin });
        syncTable();
    }

    function syncTable() {
        // until the curve names the rank's devices there is none to ask for
        // (showCurve calls back), and a rank without one has no allocations
        if (!mem || !(mem.devices || []).length) return;
        const r = tabRoute(store.get().route, params);
        table.set(
            { sort: r.sort, order: r.order, q: r.q, offset: r.offset },
            {
                rank: r.rank,
                device: r.device || (mem ? mem.device : ''),
                start_us: r.start,
                end_us: r.end,
                min_bytes: r.min || null,
            },
        );
    }

    /** @param {number} min */
    function syncMinSelect(min) {
        const opts = MIN_SIZES.map(([v, label]) => /** @type {[number, string]} */ ([v, label]));
        if (!opts.some(([v]) => v === min)) opts.push([min, '≥ ' + formatBytes(min)]);
        replace(minSel, opts.map(([v, label]) => h('option', { value: String(v) }, label)));
        minSel.value = String(min);
    }

    /** @returns {import('../table.js').Column<MemoryEventRow>[]} */
    function columns() {
        return [
            { label: 'Operator', sort: 'op', cls: C.mono, clamp: true, cell: (e) => e.op || h('span', { class: C.muted }, 'unknown'), title: (e) => e.op || null },
            { label: 'Size', sort: 'bytes', num: true, cell: (e) => formatBytes(e.bytes), title: (e) => `${e.bytes} bytes` },
            { label: 'Address', cls: C.mono, cell: (e) => (typeof e.addr === 'number' ? '0x' + e.addr.toString(16) : DASH) },
            {
                label: 'Allocated at',
                sort: 'alloc',
                num: true,
                help: 'Time of the allocation, from the rank\u2019s first event',
                cell: (e) => (e.alloc_us === null ? h('span', { class: C.muted }, 'before the trace') : formatOffset(e.alloc_us, origin)),
            },
            {
                label: 'Freed at',
                sort: 'free',
                num: true,
                cell: (e) => (e.free_us === null ? h('span', { class: C.muted }, 'not freed') : formatOffset(e.free_us, origin)),
            },
            {
                label: 'Lifetime',
                sort: 'lifetime',
                num: true,
                help: 'From allocation to free; empty when either end lies outside the trace',
                cell: (e) => formatMicros(e.lifetime_us),
            },
            {
                label: '',
                cls: C.cellActions,
                cell: (e) =>
                    e.alloc_us !== null && e.free_us !== null && e.free_us > e.alloc_us
                        ? h(
                              'button',
                              {
                                  type: 'button',
                                  class: [C.btn, C.btnGhost, C.btnSm],
                                  title: 'Zoom the chart to this allocation\u2019s lifetime',
                                  on: { click: () => zoomTo(/** @type {number} */ (e.alloc_us), /** @type {number} */ (e.free_us)) },
                              },
                              'Zoom',
                          )
                        : null,
            },
        ];
    }

    /**
     * @param {number} a
     * @param {number} b
     */
    function zoomTo(a, b) {
        const pad = (b - a) * 0.1;
        let start = a - pad;
        let end = b + pad;
        if (full) {
            start = Math.max(full[0], start);
            end = Math.min(full[1], end);
        }
        updateRoute(store, { start, end, offset: 0 });
        chartBox.scrollIntoView({ block: 'nearest' });
    }

    update();
    const unsubscribe = store.subscribe((next) => {
        const r = tabRoute(next.route, params);
        if (r.view === 'run' && r.run === run.id && r.tab === 'memory') update();
    });
    return {
        destroy() {
            destroyed = true;
            if (ctrl) ctrl.abort();
            unsubscribe();
            chart.destroy();
            table.destroy();
        },
    };
}

/**
 * @param {string} label
 * @param {string} value
 * @param {string} [note]
 */
function stat(label, value, note) {
    return h('div', { class: C.stat }, h('dt', { class: C.statLabel }, label), h('dd', { class: C.statValue }, value), note ? h('dd', { class: C.muted }, note) : null);
}

function curveLegend() {
    return legend([
        { color: CHART_COLORS.allocated, label: 'allocated (tensors in use)', shape: 'line' },
        { color: CHART_COLORS.reserved, label: 'reserved (held by the caching allocator)', shape: 'line' },
        { color: CHART_COLORS.peak, label: 'peak', shape: 'line' },
        { color: CHART_COLORS.step, label: 'step boundary', shape: 'dashed' },
    ]);
}
