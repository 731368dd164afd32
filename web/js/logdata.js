// @ts-check
/**
 * logdata.js — pure: a job log's lines (GET /api/runs/{id}/logs, or a live
 * stream's events) turned into what the pages draw: the timeline's log
 * lane as items of a synthetic track, its numeric fields as counter
 * series, and the series of the metric charts (by time, or by the "step"
 * field when the lines carry one). No DOM (tested by tests/web/logdata.test.mjs).
 *
 * A numeric field is one whose values are finite numbers on at least one
 * line (strings and booleans are shown in the details only); "step",
 * "epoch" and "iter" are axes, not metrics, so they get no chart of their
 * own. Lines keep their order (the API's: by time, then id).
 */

/** @typedef {import('./apitypes.js').LogLine} LogLine */

/** The timeline's id of the log lane (track ids of the API are positive). */
export const LOG_TRACK = -1;
/** Counter ids of the log's numeric fields: LOG_COUNTER0 - i. */
export const LOG_COUNTER0 = -100;
/** Fields that number the lines rather than measure them. */
export const AXIS_FIELDS = Object.freeze(['step', 'epoch', 'iter', 'iteration']);

/**
 * Names of the numeric fields, in first-seen order, axes left out.
 * @param {LogLine[]} lines
 * @returns {string[]}
 */
export function numericFields(lines) {
    /** @type {string[]} */
    const out = [];
    const seen = new Set();
    for (const l of lines) {
        for (const [k, v] of Object.entries(l.fields || {})) {
            if (seen.has(k) || typeof v !== 'number' || !Number.isFinite(v) || AXIS_FIELDS.includes(k)) continue;
            seen.add(k);
            out.push(k);
        }
    }
    return out;
}

/**
 * The log lane's items (one depth of zero-length markers, named by their
 * text's first line) and the synthetic track that carries them.
 * @param {LogLine[]} lines sorted by ts_us
 */
export function logItems(lines) {
    const items = {
        ts: lines.map((l) => l.ts_us),
        dur: lines.map(() => 0),
        name: lines.map((l) => firstLine(l)),
        n: lines.map(() => 1),
        id: lines.map((l) => l.id),
    };
    /** @type {import('./apitypes.js').TimelineTrack} */
    const track = {
        id: LOG_TRACK, kind: 'cpu', name: 'log lines', process: 'Job log', pid: 'log', tid: 'log', device: null, stream: null,
        max_depth: 0, nslices: lines.length,
    };
    return { items: [items], track };
}

/**
 * A line's label: its text's first line, else its fields as "k=v".
 * @param {LogLine} l
 * @returns {string}
 */
export function firstLine(l) {
    const t = (l.text || '').split('\n', 1)[0];
    if (t) return t;
    return Object.entries(l.fields || {}).map(([k, v]) => `${k}=${v}`).join(' ');
}

/**
 * Counter definitions and series of the numeric fields, as the timeline's
 * counters hold them (one sample per line carrying the field).
 * @param {LogLine[]} lines
 * @returns {{defs: {id: number, name: string, unit: string}[], series: Map<number, {ts: number[], min: number[], max: number[], last: number[]}>}}
 */
export function logCounters(lines) {
    const names = numericFields(lines);
    const defs = names.map((name, i) => ({ id: LOG_COUNTER0 - i, name: `log: ${name}`, unit: '' }));
    const series = new Map();
    names.forEach((name, i) => {
        /** @type {number[]} */
        const ts = [];
        /** @type {number[]} */
        const vs = [];
        for (const l of lines) {
            const v = l.fields ? l.fields[name] : undefined;
            if (typeof v === 'number' && Number.isFinite(v)) {
                ts.push(l.ts_us);
                vs.push(v);
            }
        }
        series.set(LOG_COUNTER0 - i, { ts, min: vs, max: vs, last: vs });
    });
    return { defs, series };
}

/**
 * The series of the metric charts: per numeric field its points, x the
 * "step" field when every line with the metric has one, else the time.
 * @param {LogLine[]} lines
 * @returns {{name: string, x: 'step' | 'time', points: [number, number][]}[]}
 */
export function metricSeries(lines) {
    return numericFields(lines).map((name) => {
        /** @type {[number, number][]} */
        const byStep = [];
        /** @type {[number, number][]} */
        const byTime = [];
        let steps = true;
        for (const l of lines) {
            const v = l.fields ? l.fields[name] : undefined;
            if (typeof v !== 'number' || !Number.isFinite(v)) continue;
            const s = l.fields.step;
            if (typeof s === 'number' && Number.isFinite(s)) byStep.push([s, v]);
            else steps = false;
            byTime.push([l.ts_us, v]);
        }
        return steps && byStep.length ? { name, x: /** @type {'step'} */ ('step'), points: byStep } : { name, x: /** @type {'time'} */ ('time'), points: byTime };
    });
}

/**
 * The index of the line a log marker stands for (its id), or -1.
 * @param {LogLine[]} lines
 * @param {number | undefined} id
 * @returns {number}
 */
export function lineIndex(lines, id) {
    return id === undefined ? -1 : lines.findIndex((l) => l.id === id);
}
