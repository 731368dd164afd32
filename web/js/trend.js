// @ts-check
/**
 * trend.js — pure logic of a project's trend page (views/project.js): the
 * order of the runs on the x axis (by date, or by a metadata value), the
 * metadata keys to offer, the two runs ticked for a comparison, and the
 * regression wording. No DOM; tested under node by tests/web/trend.test.mjs.
 */

/** @typedef {import('./apitypes.js').TrendRun} TrendRun */

/**
 * Metadata keys found in the runs, sorted, for the "by" menu.
 * @param {TrendRun[]} runs
 * @returns {string[]}
 */
export function metaKeys(runs) {
    const keys = new Set();
    for (const r of runs) for (const k of Object.keys(r.meta || {})) keys.add(k);
    return [...keys].sort();
}

/**
 * The metadata key of a "by" value ("meta.batch" -> "batch"), "" for date.
 * @param {string} by
 */
export function byKey(by) {
    return by.startsWith('meta.') ? by.slice(5) : '';
}

/**
 * The runs in x-axis order: as given (oldest first) by date; by a metadata
 * key, in that value's order (numbers as numbers, "run2" before "run10"),
 * then by date; runs without the key last.
 * @param {TrendRun[]} runs oldest first
 * @param {string} by "" (date) or "meta.KEY"
 * @returns {TrendRun[]}
 */
export function orderRuns(runs, by) {
    const key = byKey(by);
    if (!key) return runs;
    const coll = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
    return runs
        .map((r, i) => ({ r, i, v: r.meta && key in r.meta ? r.meta[key] : null }))
        .sort((a, b) => {
            if (a.v === null || b.v === null) return (a.v === null ? 1 : 0) - (b.v === null ? 1 : 0) || a.i - b.i;
            return coll.compare(a.v, b.v) || a.i - b.i;
        })
        .map((e) => e.r);
}

/**
 * A run's x-axis label: its date (YYYY-MM-DD, UTC) or its metadata value
 * ("—" without one). When another run on the axis shares its day, the day
 * alone would label both alike: then month, day and time (MM-DD HH:MM, UTC,
 * with seconds when runs share the minute).
 * @param {TrendRun} r
 * @param {string} by
 * @param {TrendRun[]} [runs] the runs on the axis
 */
export function xLabel(r, by, runs = []) {
    const key = byKey(by);
    if (key) return r.meta && key in r.meta ? r.meta[key] : '—';
    const iso = (/** @type {number} */ t) => new Date(t * 1000).toISOString();
    // the coarsest of day, minute, second that no other run on the axis shares
    const levels = /** @type {const} */ ([[0, 10], [5, 16], [5, 19]]);
    const at = (/** @type {number} */ t, /** @type {readonly [number, number]} */ l) => iso(t).slice(l[0], l[1]).replace('T', ' ');
    const level = levels.find((l) => !runs.some((x) => x !== r && at(x.created, l) === at(r.created, l))) || levels[2];
    return at(r.created, level);
}

/**
 * The ticked runs after ticking or unticking id: at most two, the oldest
 * tick dropped for a third (the compare page takes two).
 * @param {string[]} picks
 * @param {string} id
 * @returns {string[]}
 */
export function togglePick(picks, id) {
    if (picks.includes(id)) return picks.filter((x) => x !== id);
    return [...picks, id].slice(-2);
}

/**
 * "pick" URL value -> ids (at most two, known ones only).
 * @param {string} text "A,B"
 * @param {TrendRun[]} runs
 */
export function parsePicks(text, runs) {
    const known = new Set(runs.map((r) => r.id));
    return text.split(',').filter((id) => known.has(id)).slice(0, 2);
}

/**
 * What a run's change against the previous run of its configuration says,
 * or "" when it has none.
 * @param {TrendRun} r
 * @param {(id: string) => string} nameOf
 */
export function changeText(r, nameOf) {
    if (!r.previous || r.change_pct === null || r.change_pct === undefined) return '';
    const pct = Math.abs(r.change_pct).toFixed(1);
    const dir = r.change_pct > 0 ? 'slower' : 'faster';
    return `${pct} % ${dir} than ${nameOf(r.previous)}, the previous run of its configuration`;
}
