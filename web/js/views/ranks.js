// @ts-check
/**
 * views/ranks.js — the run page's Ranks tab (`&view=ranks`): every rank of a
 * distributed run side by side, from GET ./api/runs/ID/ranks.
 *
 * Top to bottom: the straggler callout (the stored finding, its per-step
 * evidence and links to that rank's overview and timeline); the average
 * step of each rank as a stacked bar; a rank × step heat map of step time
 * (hover a cell for its value); computation / communication / overlap per
 * rank; the collectives table (per-rank duration, time waiting for the
 * slowest rank vs transfer); the top kernels with their spread over ranks;
 * the ranks' files and clock alignment. A run of one rank says that the
 * comparison needs several and still shows its figures.
 *
 * `&rank=N` highlights that rank's rows (the straggler link uses it). All
 * charts are SVG built with dom.js svg(); every string from a trace is text.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, h, replace, svg } from '../dom.js';
import { categoryInfo, stackBreakdown } from '../charts.js';
import { DASH, formatBytes, formatMicros, formatNumber, formatPercent, plural } from '../format.js';
import { buildUrl } from '../router.js';
import { analysisError, latestRequest, legend, section, stackedBars, swatch, tabRoute } from '../tabs.js';

/** This tab declares no URL parameters beyond run, view and rank. */
export const params = Object.freeze({});

/** @typedef {import('../apitypes.js').Ranks} Ranks */
/** @typedef {import('../apitypes.js').RanksRank} RanksRank */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../router.js').TabRoute<typeof params>} Route */
/** @typedef {import('../dom.js').Child} Child */

/** Per-rank columns are listed up to this many ranks (then min/median/max only). */
const MAX_RANK_COLS = 16;
const TOP_KERNELS = 10;

const WAIT_HELP =
    'Summed over every collective of the trace, matched across ranks: transfer is the fastest rank’s duration of each call, ' +
    'waiting the time beyond it. Collectives that run side by side add up, so a sum can exceed the step.';

/** Colours of the overlap bars. */
const OVERLAP_COLORS = Object.freeze({
    compute: '#4e79a7',
    overlap: '#9c755f',
    exposed: '#b07aa1',
});

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createRanks(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createRanks(root, ctx) {
    const { store, run } = ctx;
    /** @type {Ranks | null} */
    let data = null;
    let shownRank = /** @type {number | null | undefined} */ (undefined);
    /** @type {import('../tabs.js').LatestRequest} */
    const req = latestRequest(
        root,
        (signal) => api.getRanks(run.id, TOP_KERNELS, signal),
        (d) => {
            data = d;
            show();
        },
        (e) => replace(root, analysisError(e, 'rank comparison', tabRoute(store.get().route, params), req.load)),
    );

    function show() {
        if (!data) return;
        const route = tabRoute(store.get().route, params);
        shownRank = route.rank;
        replace(root, render(data, route, renumber));
    }

    /**
     * Sends a new numbering (old rank -> new rank); the server recomputes the
     * run's tables, then the comparison is fetched again.
     * @param {Record<string, number>} map
     * @returns {Promise<string | null>} an error message, or null
     */
    async function renumber(map) {
        try {
            await api.updateRun(run.id, { ranks: map });
        } catch (e) {
            return e instanceof Error ? e.message : String(e);
        }
        await req.load();
        return null;
    }

    replace(root, h('p', { class: [C.muted, C.loading] }, 'Comparing the ranks…'));
    req.load();
    const unsubscribe = store.subscribe((next) => {
        const r = tabRoute(next.route, params);
        if (r.view === 'run' && r.run === run.id && r.tab === 'ranks' && r.rank !== shownRank) show();
    });
    return {
        destroy() {
            req.stop();
            unsubscribe();
        },
    };
}

/**
 * @param {Ranks} d
 * @param {Route} route
 * @param {(map: Record<string, number>) => Promise<string | null>} renumber
 */
function render(d, route, renumber) {
    const cats = d.categories && d.categories.length ? d.categories : Object.keys((d.ranks[0] || { breakdown_us: {} }).breakdown_us);
    const strag = d.straggler ? d.straggler.rank : null;
    /** @param {number} rank */
    const hl = (rank) => (rank === route.rank || rank === strag ? C.rkHl : null);
    const many = d.ranks.length > MAX_RANK_COLS;
    return h(
        'div',
        { class: C.page, dataset: { ranks: String(d.ranks.length) } },
        d.comparable
            ? stragglerCallout(d, route)
            : alertBox(
                  'info',
                  'Comparing ranks needs several',
                  `This run holds ${plural(d.ranks.length, 'rank')}. Upload all rank files of a job together (rank0…rankN) to compare them; the figures of this rank are below.`,
              ),
        d.truncated && (d.truncated.collectives || d.truncated.steps)
            ? alertBox('warn', 'Partial comparison', 'The run has more collectives or steps than the page compares at once; the first ones are shown.')
            : null,
        h(
            'div',
            { class: C.grid },
            h(
                'article',
                { class: [C.card, C.cardPad] },
                h('h2', { class: C.sectionTitle }, 'Average step by rank'),
                breakdownChart(d, cats, route),
                legend(cats.map((k) => categoryInfo(k))),
            ),
            h(
                'article',
                { class: [C.card, C.cardPad] },
                h('h2', { class: C.sectionTitle }, `Step time by rank and step (${plural(d.heatmap.steps.length, 'step')})`),
                heatmap(d, route),
            ),
        ),
        cardSection(
            'Computation, communication and overlap (per step)',
            overlapChart(d, route),
            legend([
                { label: 'Compute only', color: OVERLAP_COLORS.compute, help: 'Compute kernels running with no collective beside them.' },
                { label: 'Overlapped', color: OVERLAP_COLORS.overlap, help: 'Collectives running while compute kernels run: hidden communication.' },
                { label: 'Exposed communication', color: OVERLAP_COLORS.exposed, help: 'Collectives with no compute beside them (includes waiting for other ranks).' },
            ]),
            overlapTable(d, hl),
        ),
        cardSection('Collectives', commTable(d, hl, many)),
        cardSection(`Top ${plural(d.kernels.length, 'kernel')} across ranks`, kernelTable(d, hl, many)),
        cardSection('Files and clock alignment', filesTable(d, route, hl), rankEditor(d, renumber)),
    );
}

/**
 * A titled section in a card: its wide tables scroll inside the card
 * (C.rkScroll) instead of running past the page at 8 or 16 ranks.
 * @param {string} title
 * @param {...Child} body
 */
function cardSection(title, ...body) {
    return h('article', { class: [C.card, C.cardPad, C.rkCard] }, section(title, ...body));
}

// --- straggler ---------------------------------------------------------------------

/**
 * @param {Ranks} d
 * @param {Route} route
 */
function stragglerCallout(d, route) {
    const s = d.straggler;
    if (!s) {
        return alertBox(
            'info',
            'No straggler',
            'No rank does markedly more work per step than the others while they wait for it in collectives.',
        );
    }
    const link = (/** @type {string} */ tab, /** @type {string} */ label) =>
        h('a', { href: buildUrl({ view: 'run', run: route.run, rank: s.rank, tab }) }, label);
    const steps = s.steps || [];
    return h(
        'div',
        { class: [C.alert, C.alertWarn], role: 'status', dataset: { straggler: String(s.rank) } },
        h('p', { class: C.alertTitle }, s.title || `Straggler: rank ${s.rank}`),
        h(
            'p',
            null,
            `Rank ${s.rank} reaches the collectives ${formatMicros(s.late_us)} later per step (its steps’ latest collective, on average) while the other ranks wait for it.`,
        ),
        s.lines && s.lines.length ? h('ul', { class: C.notes }, s.lines.map((l) => h('li', null, l))) : null,
        steps.length
            ? h(
                  'table',
                  { class: [C.table, C.tableCompact], 'aria-label': `Straggler evidence per step, rank ${s.rank}` },
                  h(
                      'thead',
                      null,
                      h(
                          'tr',
                          null,
                          h('th', { scope: 'col' }, 'Step'),
                          h('th', { scope: 'col', class: C.num }, `Step on rank ${s.rank}`),
                          h('th', { scope: 'col', class: C.num, title: 'Step time outside collectives' }, `Own work, rank ${s.rank}`),
                          h('th', { scope: 'col', class: C.num }, 'Own work, other ranks (median)'),
                          h('th', { scope: 'col', class: C.num, title: 'How much later than the other ranks it enters the step’s latest collective' }, 'Reaches collectives later by'),
                      ),
                  ),
                  h(
                      'tbody',
                      null,
                      steps.map((x) =>
                          h(
                              'tr',
                              null,
                              h('td', null, x.name),
                              h('td', { class: C.num }, formatMicros(x.step_us)),
                              h('td', { class: C.num }, formatMicros(x.own_us)),
                              h('td', { class: C.num }, formatMicros(x.others_own_us)),
                              h('td', { class: C.num }, formatMicros(x.late_us)),
                          ),
                      ),
                  ),
              )
            : null,
        h(
            'p',
            null,
            link('overview', `Overview of rank ${s.rank}`),
            ' · ',
            link('timeline', `Timeline of rank ${s.rank}`),
            ' · ',
            link('kernels', `Kernels of rank ${s.rank}`),
        ),
    );
}

// --- charts ------------------------------------------------------------------------

const HB = { w: 640, left: 64, right: 24, top: 8, row: 22, gap: 6, bottom: 28 };

/**
 * Horizontal stacked bars, one row per rank, on a shared time axis.
 * @param {RanksRank[]} ranks
 * @param {(r: RanksRank) => {key: string, value: number, color: string, label: string}[]} segments
 * @param {(r: RanksRank) => number} total
 * @param {string} label aria label
 * @param {Route} route
 * @param {number} [width] viewBox width: wider for a chart that spans the page, so its text keeps its size
 */
function hbars(ranks, segments, total, label, route, width = HB.w) {
    return stackedBars({
        label,
        box: { ...HB, w: width },
        ticks: 4,
        fmt: formatMicros,
        rows: ranks.map((r) => ({
            label: `rank ${r.rank}`,
            name: `Rank ${r.rank}`,
            segs: segments(r),
            total: total(r),
            labelClass: r.rank === route.rank && C.rkHlText,
            attrs: { 'data-rank': String(r.rank) },
        })),
    });
}

/**
 * @param {Ranks} d
 * @param {string[]} cats
 * @param {Route} route
 */
function breakdownChart(d, cats, route) {
    if (!d.ranks.some((r) => r.steps > 0)) return h('p', { class: C.muted }, 'No steps: the traces have no ProfilerStep# spans.');
    return hbars(
        d.ranks,
        (r) =>
            stackBreakdown(r.breakdown_us, cats).map((s) => ({
                key: s.key,
                value: s.value,
                color: categoryInfo(s.key).color,
                label: categoryInfo(s.key).label,
            })),
        (r) => r.avg_step_us,
        'Average step of each rank by category',
        route,
    );
}

/**
 * @param {Ranks} d
 * @param {Route} route
 */
function overlapChart(d, route) {
    if (!d.ranks.some((r) => r.comm_us > 0 || r.compute_us > 0)) return h('p', { class: C.muted }, 'No kernels or collectives inside the steps.');
    return hbars(
        d.ranks,
        (r) => [
            { key: 'compute', value: Math.max(0, r.compute_us - r.overlap_us), color: OVERLAP_COLORS.compute, label: 'Compute only' },
            { key: 'overlap', value: r.overlap_us, color: OVERLAP_COLORS.overlap, label: 'Overlapped' },
            { key: 'exposed', value: Math.max(0, r.exposed_us), color: OVERLAP_COLORS.exposed, label: 'Exposed communication' },
        ],
        (r) => Math.max(0, r.compute_us - r.overlap_us) + r.overlap_us + Math.max(0, r.exposed_us),
        'Compute, overlapped and exposed communication per step of each rank',
        route,
        1320,
    );
}

const HM = { left: 64, top: 8, cellH: 22, bottom: 28, w: 640, right: 12 };

/**
 * Light to dark blue by t in 0..1.
 * @param {number} t
 */
function heatColor(t) {
    const a = [222, 235, 247];
    const b = [8, 48, 107];
    const c = a.map((v, i) => Math.round(v + (b[i] - v) * Math.max(0, Math.min(1, t))));
    return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/**
 * Rank × step grid coloured by step time (min..max of the run).
 * @param {Ranks} d
 * @param {Route} route
 */
function heatmap(d, route) {
    const hm = d.heatmap;
    if (!hm.steps.length) return h('p', { class: C.muted }, 'No steps: the traces have no ProfilerStep# spans.');
    const lo = hm.min_us ?? 0;
    const hi = hm.max_us ?? 0;
    const plotW = HM.w - HM.left - HM.right;
    const cw = plotW / hm.steps.length;
    const height = HM.top + hm.ranks.length * HM.cellH + HM.bottom;
    const every = Math.ceil(hm.steps.length / Math.max(1, Math.floor(plotW / 44)));
    const stepLabel = (/** @type {string} */ n) => {
        const m = /#(\d+)$/.exec(n);
        return m ? '#' + m[1] : n.length > 10 ? n.slice(0, 9) + '…' : n;
    };
    const chart = svg(
        'svg',
        { class: [C.chart, C.rkHeat], viewBox: `0 0 ${HM.w} ${height}`, role: 'img', 'aria-label': `Step time of ${hm.ranks.length} ranks over ${hm.steps.length} steps` },
        hm.ranks.map((rank, i) => {
            const y = HM.top + i * HM.cellH;
            const row = hm.dur_us[i] || [];
            return svg(
                'g',
                { 'data-rank': String(rank), class: C.rkHeatRow },
                svg('text', { class: [C.axis, rank === route.rank && C.rkHlText], x: HM.left - 6, y: y + HM.cellH / 2 + 4, 'text-anchor': 'end' }, `rank ${rank}`),
                hm.steps.map((name, j) => {
                    const v = row[j];
                    const has = typeof v === 'number';
                    return svg(
                        'rect',
                        {
                            x: (HM.left + j * cw + 0.5).toFixed(2),
                            y: y + 0.5,
                            width: Math.max(0.5, cw - 1).toFixed(2),
                            height: HM.cellH - 1,
                            fill: has ? heatColor(hi > lo ? (v - lo) / (hi - lo) : 0.5) : null,
                            class: has ? null : C.rkHeatNone,
                        },
                        svg('title', null, has ? `Rank ${rank}, ${name}: ${formatMicros(v)}` : `Rank ${rank}, ${name}: not recorded`),
                    );
                }),
            );
        }),
        hm.steps.map((name, j) =>
            j % every === 0
                ? svg('text', { class: C.axis, x: (HM.left + j * cw + cw / 2).toFixed(2), y: HM.top + hm.ranks.length * HM.cellH + 16, 'text-anchor': 'middle' }, stepLabel(name))
                : null,
        ),
    );
    const scale = h(
        'p',
        { class: C.muted },
        swatch(heatColor(0)),
        ` ${formatMicros(lo)}  `,
        swatch(heatColor(1)),
        ` ${formatMicros(hi)} — hover a cell for its step time`,
        hm.matched_by === 'index' ? '; no step name is common to every rank, so steps are matched by position' : null,
    );
    return [chart, scale];
}

// --- tables ------------------------------------------------------------------------

/**
 * @param {string[]} heads
 * @param {number} numFrom first numeric column
 */
function thead(heads, numFrom) {
    return h(
        'thead',
        null,
        h(
            'tr',
            null,
            heads.map((t, i) => h('th', { scope: 'col', class: i >= numFrom ? C.num : null }, t)),
        ),
    );
}

/**
 * @param {Ranks} d
 * @param {(rank: number) => string | null} hl
 */
function overlapTable(d, hl) {
    return h(
        'div',
        { class: C.rkScroll },
        h(
            'table',
            { class: [C.table, C.tableCompact], 'aria-label': 'Computation and communication per rank' },
            thead(['Rank', 'Average step', 'Compute', 'Communication', 'Overlapped', 'Exposed', 'Waiting in collectives (sum)', 'Transfer (sum)'], 1),
            h(
                'tbody',
                null,
                d.ranks.map((r) =>
                    h(
                        'tr',
                        { class: hl(r.rank), dataset: { rank: String(r.rank) } },
                        h('td', null, `rank ${r.rank}`, r.host_collectives ? h('span', { class: C.muted, title: 'Collectives run on host threads (gloo): no communication kernels' }, ' (host collectives)') : null),
                        h('td', { class: C.num }, formatMicros(r.avg_step_us)),
                        h('td', { class: C.num }, formatMicros(r.compute_us)),
                        h('td', { class: C.num }, formatMicros(r.comm_us)),
                        h('td', { class: C.num }, formatMicros(r.overlap_us), h('span', { class: C.muted }, ` (${formatPercent(r.overlap_us, r.comm_us)})`)),
                        h('td', { class: C.num }, formatMicros(r.exposed_us)),
                        h('td', { class: C.num, title: WAIT_HELP }, formatMicros(r.wait_us)),
                        h('td', { class: C.num, title: WAIT_HELP }, formatMicros(r.transfer_us)),
                    ),
                ),
            ),
        ),
    );
}

/** @param {import('../apitypes.js').RanksCommOp} op */
function messageSize(op) {
    if (op.in_nelems_max === null) return DASH;
    const n =
        op.in_nelems_min !== null && op.in_nelems_min !== op.in_nelems_max
            ? `${formatNumber(op.in_nelems_min)}–${formatNumber(op.in_nelems_max)}`
            : formatNumber(op.in_nelems_max);
    return [
        `${n} elements`,
        op.dtype ? h('span', { class: C.muted }, ` ${op.dtype}`) : null,
        op.bytes_max !== null ? h('span', { class: C.muted }, ` (≤ ${formatBytes(op.bytes_max)})`) : null,
    ];
}

/**
 * @param {Ranks} d
 * @param {(rank: number) => string | null} hl
 * @param {boolean} many
 */
function commTable(d, hl, many) {
    if (!d.comm_ops.length) return h('p', { class: C.muted }, 'No collectives recorded (no NCCL kernels, no gloo/nccl host spans).');
    const ranks = many ? [] : d.ranks;
    return h(
        'div',
        { class: C.rkScroll },
        h(
            'table',
            { class: [C.table, C.tableCompact], 'aria-label': 'Collectives' },
            thead(
                ['Collective', 'Process group', 'Message', 'Calls', 'Time, all ranks', 'Waiting', 'Transfer', ...ranks.map((r) => `rank ${r.rank}`)],
                3,
            ),
            h(
                'tbody',
                null,
                d.comm_ops.map((op) =>
                    h(
                        'tr',
                        null,
                        h('td', { class: C.mono }, op.collective || DASH),
                        h('td', null, op.group || DASH, op.group_size ? h('span', { class: C.muted }, ` (${op.group_size} ranks)`) : null),
                        h('td', { class: C.rkWrap }, messageSize(op)),
                        h('td', { class: C.num }, formatNumber(op.calls)),
                        h('td', { class: C.num }, formatMicros(op.dur_us)),
                        h('td', { class: C.num }, formatMicros(op.wait_us), op.wait_us !== null ? h('div', { class: C.muted }, formatPercent(op.wait_us, op.dur_us)) : null),
                        h('td', { class: C.num, title: 'Per matched call: the shortest duration among the ranks' }, formatMicros(op.transfer_us)),
                        ranks.map((r) => {
                            const c = op.ranks.find((x) => x.rank === r.rank);
                            if (!c || !c.calls) return h('td', { class: [C.num, C.muted, hl(r.rank)] }, DASH);
                            return h(
                                'td',
                                { class: [C.num, hl(r.rank)], title: `rank ${r.rank}: ${c.calls} calls, ${formatMicros(c.dur_us)}, waiting ${formatMicros(c.wait_us)}, transfer ${formatMicros(c.transfer_us)}` },
                                formatMicros(c.dur_us),
                                h('div', { class: C.muted }, `wait ${formatMicros(c.wait_us)}`),
                            );
                        }),
                    ),
                ),
            ),
        ),
        h(
            'p',
            { class: C.muted },
            'Calls are matched across ranks by order within each collective and process group. Transfer is the shortest rank’s duration of a call; waiting is a rank’s duration beyond it (time spent for the slowest rank to arrive). Totals over the whole trace.',
        ),
    );
}

/**
 * @param {Ranks} d
 * @param {(rank: number) => string | null} hl
 * @param {boolean} many
 */
function kernelTable(d, hl, many) {
    if (!d.kernels.length) return h('p', { class: C.muted }, 'No GPU kernels in this run.');
    const ranks = many ? [] : d.ranks;
    return h(
        'div',
        { class: C.rkScroll },
        h(
            'table',
            { class: [C.table, C.tableCompact], 'aria-label': 'Top kernels across ranks' },
            thead(['Kernel', 'Min', 'Median', 'Max', 'Spread', ...ranks.map((r) => `rank ${r.rank}`)], 1),
            h(
                'tbody',
                null,
                d.kernels.map((k) =>
                    h(
                        'tr',
                        null,
                        h(
                            'td',
                            { class: C.mono, title: k.name },
                            h('div', { class: C.cellClamp }, k.name, k.communication ? h('span', { class: [C.badge, C.badgeInfo] }, ' comm') : null),
                        ),
                        h('td', { class: C.num, title: `rank ${k.min_rank}` }, formatMicros(k.min_us)),
                        h('td', { class: C.num }, formatMicros(k.median_us)),
                        h('td', { class: C.num, title: `rank ${k.max_rank}` }, formatMicros(k.max_us)),
                        h('td', { class: C.num, title: 'max ÷ min' }, k.min_us > 0 ? `${(k.max_us / k.min_us).toFixed(2)}×` : DASH),
                        ranks.map((r, i) => h('td', { class: [C.num, hl(r.rank)], title: `${k.calls[i]} calls` }, formatMicros(k.ranks_us[i]))),
                    ),
                ),
            ),
        ),
    );
}

/**
 * A form to renumber the ranks (when the files' names and headers were
 * wrong): one number per file; the server checks the numbering.
 * @param {Ranks} d
 * @param {(map: Record<string, number>) => Promise<string | null>} renumber
 */
function rankEditor(d, renumber) {
    const inputs = d.ranks.map((r) =>
        h('input', { type: 'number', min: '0', step: '1', value: String(r.rank), class: C.rkRankInput, 'aria-label': `New rank of ${r.file || 'rank ' + r.rank}` }),
    );
    const msg = h('span', { class: C.muted, role: 'status' });
    const save = h('button', { type: 'submit', class: C.btn }, 'Save ranks');
    const form = h(
        'form',
        { class: C.rkEditor, 'aria-label': 'Renumber ranks' },
        h('p', { class: C.muted }, 'Wrong numbering? Give each file its rank; the run’s tables and findings are computed again.'),
        h(
            'ul',
            null,
            d.ranks.map((r, i) => h('li', null, h('span', { class: C.mono }, r.file || `rank ${r.rank}`), ' → rank ', inputs[i])),
        ),
        save,
        msg,
    );
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        /** @type {Record<string, number>} */
        const map = {};
        for (let i = 0; i < d.ranks.length; i++) {
            const v = Number(inputs[i].value);
            if (!Number.isInteger(v) || v < 0) {
                msg.textContent = `“${inputs[i].value}” is not a rank number.`;
                return;
            }
            if (v !== d.ranks[i].rank) map[String(d.ranks[i].rank)] = v;
        }
        if (!Object.keys(map).length) {
            msg.textContent = 'Nothing changed.';
            return;
        }
        save.disabled = true;
        msg.textContent = 'Recomputing the run…';
        const err = await renumber(map);
        save.disabled = false;
        msg.textContent = err ? `Not saved: ${err}` : 'Saved.';
    });
    return form;
}

/**
 * @param {Ranks} d
 * @param {Route} route
 * @param {(rank: number) => string | null} hl
 */
function filesTable(d, route, hl) {
    const method =
        d.alignment === 'baseTimeNanoseconds'
            ? 'Clocks aligned with each trace’s baseTimeNanoseconds (Kineto): aligned time = ts + base.'
            : 'The traces carry no baseTimeNanoseconds: their clocks are compared as recorded.';
    return [
        h(
            'div',
            { class: C.rkScroll },
            h(
                'table',
                { class: [C.table, C.tableCompact], 'aria-label': 'Rank files and clock alignment' },
                thead(['Rank', 'File', 'Distributed rank', 'Backend', 'Base time (ns)', 'Starts after first rank', 'Collective end skew', 'Steps', 'Average step'], 5),
                h(
                    'tbody',
                    null,
                    d.ranks.map((r) =>
                        h(
                            'tr',
                            { class: hl(r.rank), dataset: { rank: String(r.rank) } },
                            h('td', null, h('a', { href: buildUrl({ view: 'run', run: route.run, rank: r.rank, tab: 'overview' }) }, `rank ${r.rank}`)),
                            h('td', { class: C.mono, title: r.file || '' }, h('div', { class: C.cellClamp }, r.file || DASH)),
                            h('td', null, r.distributed_rank === null ? DASH : `${r.distributed_rank}${r.world_size !== null ? ` of ${r.world_size}` : ''}`),
                            h('td', null, r.backend || DASH),
                            h('td', { class: C.mono }, r.base_ns || DASH),
                            h('td', { class: C.num }, formatMicros(r.offset_us)),
                            h('td', { class: C.num, title: 'Median, over its collectives, of when they end on this rank minus when they end on the others: near zero when the clocks agree' }, formatMicros(r.end_skew_us)),
                            h('td', { class: C.num }, formatNumber(r.steps)),
                            h('td', { class: C.num }, formatMicros(r.avg_step_us)),
                        ),
                    ),
                ),
            ),
        ),
        h(
            'p',
            { class: C.muted },
            method,
            d.world_size !== null && d.world_size > d.ranks.length ? ` This run holds ${d.ranks.length} of the job’s ${d.world_size} ranks.` : null,
        ),
    ];
}
