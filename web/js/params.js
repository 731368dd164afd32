// @ts-check
/**
 * params.js — how a view declares its URL parameters.
 *
 * A view module exports `params`: an object whose keys are the fields of its
 * route and whose values are Param descriptors (URL key, type, default,
 * parse, serialize). router.js composes the descriptors of the active view
 * after its own global keys (run, view, rank, compare, job), so a view's
 * route object holds exactly the fields it declares.
 *
 * Invariants: parse never throws and answers undefined for an invalid value
 * (the default then applies); serialize answers null for a value that is
 * left out of the URL (its default, or one that is invalid). The URL keys
 * are written in the order the fields are declared: that order is part of
 * every shared link, so never reorder a view's descriptor.
 *
 * Pure (no DOM); no imports, so any view may import it without a cycle.
 */

/**
 * @template V
 * @typedef {object} Param
 * @property {string} key   the URL parameter
 * @property {'int' | 'string' | 'enum' | 'list' | 'time' | 'flag'} type
 * @property {V} default   the value when the URL has none (or an invalid one)
 * @property {(raw: string | null, p: URLSearchParams) => V | undefined} parse
 *           `raw` is p.get(key); `p` is there for parameters read in pairs
 * @property {(v: V, r: Readonly<Record<string, any>>) => string | null} serialize
 *           `r` is the whole route, for parameters written in pairs
 */

/**
 * @typedef {Readonly<Record<string, Param<any>>>} ParamSpec
 */

/**
 * The route fields a spec declares, with their types.
 * @template {ParamSpec} S
 * @typedef {{ -readonly [K in keyof S]: S[K] extends Param<infer V> ? V : never }} ParamValues
 */

/** Longest search text kept from a URL. */
export const Q_MAX = 200;

/** Trace-clock times in µs as URLs write them: no exponent, at most ns. */
export const TIME_RE = /^[0-9]{1,17}(\.[0-9]{1,3})?$/;

/**
 * A non-negative integer; `def` is left out of the URL, as is any negative.
 * @template {number | null} D
 * @param {string} key
 * @param {RegExp} re  the accepted spellings (no leading zeros, bounded)
 * @param {D} def
 * @returns {Param<number | D>}
 */
export function intParam(key, re, def) {
    return {
        key,
        type: 'int',
        default: def,
        parse: (raw) => (raw !== null && re.test(raw) ? Number(raw) : undefined),
        serialize: (v) => (v === null || v === def || v < 0 ? null : String(Math.floor(v))),
    };
}

/**
 * Free text (cut to `max`), or, with `re`, text of that shape; "" = none.
 * @param {string} key
 * @param {{max?: number, re?: RegExp}} [opts]
 * @returns {Param<string>}
 */
export function stringParam(key, opts = {}) {
    const { max = Q_MAX, re } = opts;
    return {
        key,
        type: 'string',
        default: '',
        parse: (raw) => (!raw || (re && !re.test(raw)) ? undefined : raw.slice(0, max)),
        serialize: (v) => v || null,
    };
}

/**
 * One of `values`; `def` (which need not be one of them) is left out.
 * @template {string} T
 * @template {string} D
 * @param {string} key
 * @param {readonly T[]} values
 * @param {D} def
 * @returns {Param<T | D>}
 */
export function enumParam(key, values, def) {
    /** @param {string | null} v @returns {v is T} */
    const ok = (v) => v !== null && v !== def && /** @type {readonly string[]} */ (values).includes(v);
    return {
        key,
        type: 'enum',
        default: def,
        parse: (raw) => (raw === def || ok(raw) ? /** @type {T | D} */ (raw) : undefined),
        serialize: (v) => (ok(v) ? v : null),
    };
}

/**
 * A list written comma-separated; `canon` turns the URL text into the
 * canonical list (valid items only, in order), and is applied again on
 * writing so a route built by hand is written canonically too.
 * @param {string} key
 * @param {(s: string) => number[]} canon
 * @returns {Param<number[]>}
 */
export function listParam(key, canon) {
    return {
        key,
        type: 'list',
        default: [],
        parse: (raw) => {
            const list = canon(raw || '');
            return list.length ? list : undefined;
        },
        serialize: (v) => {
            const list = canon((v || []).join(','));
            return list.length ? list.join(',') : null;
        },
    };
}

/**
 * "1" turns it on; off is left out.
 * @param {string} key
 * @returns {Param<boolean>}
 */
export function flagParam(key) {
    return { key, type: 'flag', default: false, parse: (raw) => (raw === '1' ? true : undefined), serialize: (v) => (v ? '1' : null) };
}

/**
 * A time window in µs as two parameters (`start`, `end`): both or neither,
 * start < end.
 * @returns {{start: Param<number | null>, end: Param<number | null>}}
 */
export function windowParams() {
    /** @param {URLSearchParams} p @returns {[number, number] | null} */
    const read = (p) => {
        const s = p.get('start') || '', e = p.get('end') || '';
        return TIME_RE.test(s) && TIME_RE.test(e) && Number(s) < Number(e) ? [Number(s), Number(e)] : null;
    };
    /** @param {Readonly<Record<string, any>>} r */
    const valid = (r) => r.start !== null && r.end !== null && r.start !== undefined && r.end !== undefined && r.start < r.end;
    return {
        start: { key: 'start', type: 'time', default: null, parse: (_, p) => read(p)?.[0], serialize: (v, r) => (v !== null && valid(r) ? urlTime(v) : null) },
        end: { key: 'end', type: 'time', default: null, parse: (_, p) => read(p)?.[1], serialize: (v, r) => (v !== null && valid(r) ? urlTime(v) : null) },
    };
}

/**
 * The fields of `spec` read from `p`, each at its default when missing or
 * invalid.
 * @template {ParamSpec} S
 * @param {S} spec
 * @param {URLSearchParams} p
 * @returns {ParamValues<S>}
 */
export function readParams(spec, p) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [name, d] of Object.entries(spec)) {
        const v = d.parse(p.get(d.key), p);
        out[name] = v === undefined ? copy(d.default) : v;
    }
    return /** @type {ParamValues<S>} */ (out);
}

/**
 * The fields of `spec` at their defaults, overridden by those of `fields`
 * that the spec declares (the others are dropped).
 * @template {ParamSpec} S
 * @param {S} spec
 * @param {Readonly<Record<string, any>>} fields
 * @returns {ParamValues<S>}
 */
export function pickParams(spec, fields) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [name, d] of Object.entries(spec)) out[name] = fields[name] !== undefined ? fields[name] : copy(d.default);
    return /** @type {ParamValues<S>} */ (out);
}

/**
 * Sets on `p`, in declaration order, the parameters of `spec` that `r`
 * does not leave at their defaults.
 * @param {ParamSpec} spec
 * @param {Readonly<Record<string, any>>} r
 * @param {URLSearchParams} p
 */
export function writeParams(spec, r, p) {
    for (const [name, d] of Object.entries(spec)) {
        const s = d.serialize(r[name] !== undefined ? r[name] : d.default, r);
        if (s !== null) p.set(d.key, s);
    }
}

/**
 * @template T
 * @param {T} v
 * @returns {T}
 */
function copy(v) {
    return Array.isArray(v) ? /** @type {T} */ (/** @type {unknown} */ ([...v])) : v;
}

/**
 * A time in µs as written in the URL: at most 3 decimals (ns), no exponent.
 * @param {number} us
 * @returns {string}
 */
export function urlTime(us) {
    return us.toFixed(3).replace(/\.?0+$/, '');
}

/** Ranks as URLs write them. */
export const RANK_RE = /^(0|[1-9][0-9]{0,5})$/;
export const OFFSET_RE = /^(0|[1-9][0-9]{0,8})$/;
const SEL_RE = /^(0|[1-9][0-9]{0,8}):([0-9]{1,17}(?:\.[0-9]{1,3})?):([0-9]{1,17}(?:\.[0-9]{1,3})?)$/;
const TRACK_RE = /^(0|[1-9][0-9]{0,8})$/;
const PINS_MAX = 64;

/** Sort directions of the server-side tables; "" = the server's default. */
export const ORDERS = /** @type {const} */ (['asc', 'desc']);

/**
 * A tab's server-side table: its `sort` keys and `group` modes (the
 * analysis API's names), the first group being the default.
 * @typedef {{sorts: readonly string[], groups: readonly string[]}} TableSpec
 */

/**
 * The parameters of a tab showing a server-side table, in URL order:
 * group (its default left out), search text, sort key, direction, first row.
 * @param {TableSpec} t
 */
export function tableParams(t) {
    return {
        group: enumParam('group', t.groups.slice(1), ''),
        q: stringParam('q'),
        sort: enumParam('sort', t.sorts, ''),
        order: enumParam('order', ORDERS, ''),
        offset: intParam('offset', OFFSET_RE, 0),
    };
}

/**
 * A selected slice as the URL writes it: track id, start and duration
 * (µs, at most 3 decimals); never a row id, so links survive a re-import.
 * @typedef {{track: number, ts: number, dur: number}} SliceRef
 */

/**
 * Parses "track:ts:dur"; null when malformed.
 * @param {string} s
 * @returns {SliceRef | null}
 */
export function parseSel(s) {
    const m = SEL_RE.exec(s);
    return m ? { track: Number(m[1]), ts: Number(m[2]), dur: Number(m[3]) } : null;
}

/**
 * @param {SliceRef} r
 * @returns {string} "track:ts:dur"
 */
export function buildSel(r) {
    return `${Math.floor(r.track)}:${urlTime(Math.max(0, r.ts))}:${urlTime(Math.max(0, r.dur))}`;
}

/**
 * Pinned track ids from "3,1,3": valid ids only, deduplicated, ascending,
 * at most PINS_MAX.
 * @param {string} s
 * @returns {number[]}
 */
export function parsePins(s) {
    const ids = new Set();
    for (const part of s.split(',')) if (TRACK_RE.test(part)) ids.add(Number(part));
    return [...ids].sort((a, b) => a - b).slice(0, PINS_MAX);
}

/** Devices as the memory tab's URL names them: a GPU index or "cpu". */
export const DEVICE_RE = /^(cpu|0|[1-9][0-9]{0,2})$/;
