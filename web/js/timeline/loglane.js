// @ts-check
/**
 * timeline/loglane.js — the job log on the Timeline tab: the run's log
 * lines of the rank shown (GET /api/runs/{id}/logs, on that rank's trace
 * clock) as a "Job log" group at the top of the lanes: a lane of markers
 * (one per line, a synthetic track with id LOG_TRACK that the server never
 * sees) and a counter lane per numeric field (negative counter ids). The
 * search box finds lines too (searchSource: the lines are all in memory,
 * so text and field values are matched here), and a click on a marker
 * shows the line and its fields in the details panel (showLine).
 *
 * Not shown while ranks are stacked (each rank has its own clock and its
 * own lines). The lines are fetched once per rank; inject() puts the lane's
 * items and series into the state after every window arrives (fetch.js
 * replaces both maps). Every string of a line is text.
 */

import { getAllRunLogs } from '../api.js';
import { C } from '../classes.js';
import { h, replace } from '../dom.js';
import { formatOffset } from '../format.js';
import { LOG_TRACK, lineIndex, logCounters, logItems } from '../logdata.js';
import { argText } from './data.js';
import { SEARCH_LIMIT } from './searchpager.js';

/** @typedef {import('../apitypes.js').LogLine} LogLine */

export { LOG_TRACK };

/**
 * @param {string} runId
 * @param {() => void} changed  lines arrived (or went): lay out and draw again
 */
export function createLogLane(runId, changed) {
    /** @type {LogLine[]} */
    let lines = [];
    /** @type {ReturnType<typeof logItems> | null} */
    let lane = null;
    /** @type {ReturnType<typeof logCounters>} */
    let counters = { defs: [], series: new Map() };
    /** @type {AbortController | null} */
    let ctl = null;

    /**
     * Loads the lines of a rank (null: none, e.g. ranks stacked).
     * @param {number | null} rank
     */
    async function load(rank) {
        if (ctl) ctl.abort();
        ctl = null;
        const had = lines.length > 0;
        lines = [];
        lane = null;
        counters = { defs: [], series: new Map() };
        if (had) changed();
        if (rank === null) return;
        const mine = (ctl = new AbortController());
        try {
            const r = await getAllRunLogs(runId, { rank }, mine.signal);
            if (mine.signal.aborted) return;
            lines = r.lines;
        } catch {
            return; // the log is an extra: the lanes stay as they are
        }
        if (!lines.length) return;
        lane = logItems(lines);
        counters = logCounters(lines);
        changed();
    }

    return {
        load,
        /** The layout's `logs` option, or null without lines. */
        layout() {
            return lane ? { track: lane.track, count: lines.length, counters: counters.defs } : null;
        },
        /** @param {{items: Map<number, any>, counters: Map<number, any>}} st */
        inject(st) {
            if (!lane) return;
            st.items.set(LOG_TRACK, lane.items);
            for (const [id, s] of counters.series) st.counters.set(id, s);
        },
        /**
         * The search box's source of log matches (text or a field value,
         * case-insensitive), earliest first, a page at a time.
         * @param {string} q
         */
        searchSource(q) {
            const lower = q.toLowerCase();
            const match = lines.filter((l) => l.text.toLowerCase().includes(lower) || Object.entries(l.fields || {}).some(([k, v]) => `${k}=${v}`.toLowerCase().includes(lower)));
            return {
                /** @param {number | null} after */
                async fetch(after) {
                    const from = after === null ? match : match.filter((l) => l.ts_us >= after);
                    return { total: match.length, hits: from.slice(0, SEARCH_LIMIT).map((l) => ({ id: l.id, track: LOG_TRACK, ts_us: l.ts_us, dur_us: 0, name: l.text.split('\n', 1)[0] })) };
                },
            };
        },
        /**
         * Shows the line a marker stands for in the details panel.
         * @param {HTMLElement} box
         * @param {number | undefined} id
         * @param {number} origin µs of the rank's start (offsets are shown from it)
         * @param {() => void} clear
         * @returns {boolean} false when there is no such line
         */
        showLine(box, id, origin, clear) {
            const i = lineIndex(lines, id);
            if (i < 0) return false;
            const l = lines[i];
            const fields = Object.entries(l.fields || {});
            replace(
                box,
                h('div', { class: C.tlDetailsHead }, h('h2', { class: C.sectionTitle }, 'Log line'), h('span', { class: C.spacer }), h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: clear } }, 'Clear')),
                h('pre', { class: [C.mono, C.tlSliceName, C.logText], dataset: { logLine: String(l.id) } }, l.text || '(no text)'),
                h(
                    'dl',
                    { class: C.kv },
                    [
                        ['At', formatOffset(l.ts_us, origin)],
                        ['Rank', l.rank === null ? 'the whole job' : String(l.rank)],
                        ['Source', l.live ? 'posted live' : 'the run\u2019s log'],
                    ].map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
                ),
                fields.length
                    ? h('dl', { class: [C.kv, C.tlArgs], dataset: { logFields: String(fields.length) } }, fields.map(([k, v]) => [h('dt', { class: C.mono }, k), h('dd', { class: C.mono }, argText(v))]))
                    : h('p', { class: C.muted }, 'No fields.'),
            );
            return true;
        },
        destroy() {
            if (ctl) ctl.abort();
        },
    };
}
