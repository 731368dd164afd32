// @ts-check
/**
 * format.js — pure formatters for numbers, sizes, durations and dates.
 *
 * No DOM, no globals, no locale dependence except formatDate/formatDateTime,
 * which use the browser's local time zone on purpose (users read times in
 * their own zone; the ISO form in tooltips is UTC). Every function accepts
 * null/undefined/NaN and returns DASH for them, so views never print "NaN".
 * Tested by tests/web/format.test.mjs with `node --test`.
 */

/** Shown for missing or non-finite values. */
export const DASH = '—';

/** @param {unknown} v @returns {v is number} */
function isNum(v) {
    return typeof v === 'number' && Number.isFinite(v);
}

/**
 * Integer with thousands separators: 1234567 -> "1,234,567".
 * The separator is fixed (not the locale's) so tables align and tests are stable.
 * @param {number | null | undefined} n
 * @param {number} [decimals] digits after the point (default 0)
 * @returns {string}
 */
export function formatNumber(n, decimals = 0) {
    if (!isNum(n)) return DASH;
    const neg = n < 0;
    const fixed = Math.abs(n).toFixed(decimals);
    const dot = fixed.indexOf('.');
    const int = dot < 0 ? fixed : fixed.slice(0, dot);
    const frac = dot < 0 ? '' : fixed.slice(dot);
    const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    const zero = Number(fixed) === 0;
    return (neg && !zero ? '-' : '') + grouped + frac;
}

/**
 * Rounds x to `sig` significant digits and prints it without exponent.
 * @param {number} x non-negative
 * @param {number} sig
 * @returns {string}
 */
function sigDigits(x, sig) {
    if (x === 0) return '0';
    const digits = Math.floor(Math.log10(x)) + 1;
    const decimals = Math.max(0, sig - digits);
    return x.toFixed(decimals);
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * Binary byte size: 0 -> "0 B", 1536 -> "1.5 KiB", 1258291 -> "1.2 MiB",
 * 123456789 -> "118 MiB". One decimal below 100 of a unit, none above.
 * @param {number | null | undefined} n bytes
 * @returns {string}
 */
export function formatBytes(n) {
    if (!isNum(n)) return DASH;
    const sign = n < 0 ? '-' : '';
    let v = Math.abs(n);
    if (v < 1024) return sign + Math.round(v) + ' B';
    let u = 0;
    while (v >= 1024 && u < BYTE_UNITS.length - 1) {
        v /= 1024;
        u++;
    }
    let text = v < 100 ? v.toFixed(1) : Math.round(v).toString();
    // 1023.96 KiB rounds to "1024 KiB": promote it to "1.0 MiB".
    if (Number(text) >= 1024 && u < BYTE_UNITS.length - 1) {
        u++;
        text = (v / 1024).toFixed(1);
    }
    return sign + text + ' ' + BYTE_UNITS[u];
}

/** [unit, nanoseconds per unit], smallest first. */
const TIME_UNITS = /** @type {const} */ ([
    ['ns', 1],
    ['µs', 1e3],
    ['ms', 1e6],
    ['s', 1e9],
]);

/**
 * Duration given in nanoseconds, three significant digits:
 * 850 -> "850 ns", 450000 -> "450 µs", 12.3e6 -> "12.3 ms", 1.2e9 -> "1.20 s".
 * From one minute up: "2 min 05 s", and from one hour: "1 h 02 min".
 * @param {number | null | undefined} ns
 * @returns {string}
 */
export function formatDuration(ns) {
    if (!isNum(ns)) return DASH;
    const sign = ns < 0 ? '-' : '';
    const v = Math.abs(ns);
    if (v >= 60e9) {
        const totalS = Math.round(v / 1e9);
        if (totalS < 3600) {
            const m = Math.floor(totalS / 60);
            return sign + m + ' min ' + String(totalS % 60).padStart(2, '0') + ' s';
        }
        const totalM = Math.round(v / 60e9);
        const hours = Math.floor(totalM / 60);
        return sign + hours + ' h ' + String(totalM % 60).padStart(2, '0') + ' min';
    }
    if (v < 1) return sign + (v === 0 ? '0' : v.toPrecision(1)) + ' ns';
    let i = 0;
    while (i < TIME_UNITS.length - 1 && v >= TIME_UNITS[i + 1][1]) i++;
    let text = sigDigits(v / TIME_UNITS[i][1], 3);
    // 999.7 µs rounds to "1000 µs": promote it to "1.00 ms".
    if (Number(text) >= 1000 && i < TIME_UNITS.length - 1) {
        i++;
        text = sigDigits(Number(text) / 1000, 3);
    }
    return sign + text + ' ' + TIME_UNITS[i][0];
}

/** @param {number} n @returns {string} */
function pad2(n) {
    return String(n).padStart(2, '0');
}

/**
 * @param {number | null | undefined} unixSeconds
 * @returns {Date | null}
 */
function toDate(unixSeconds) {
    if (!isNum(unixSeconds)) return null;
    const d = new Date(unixSeconds * 1000);
    return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * Local date and time to the minute: "2024-05-01 14:03".
 * @param {number | null | undefined} unixSeconds
 * @returns {string}
 */
export function formatDate(unixSeconds) {
    const d = toDate(unixSeconds);
    if (!d) return DASH;
    return (
        d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) +
        ' ' + pad2(d.getHours()) + ':' + pad2(d.getMinutes())
    );
}

/**
 * Full UTC timestamp for tooltips: "2024-05-01 14:03:07 UTC".
 * @param {number | null | undefined} unixSeconds
 * @returns {string}
 */
export function formatDateTimeUtc(unixSeconds) {
    const d = toDate(unixSeconds);
    if (!d) return DASH;
    return d.toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
}

/**
 * How long ago: "just now", "5 min ago", "3 h ago", "2 d ago"; older than
 * 30 days falls back to the date. Future times (clock skew) read "just now".
 * @param {number | null | undefined} unixSeconds
 * @param {number} nowSeconds
 * @returns {string}
 */
export function formatAge(unixSeconds, nowSeconds) {
    if (!isNum(unixSeconds) || !isNum(nowSeconds)) return DASH;
    const s = nowSeconds - unixSeconds;
    if (s < 60) return 'just now';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 86400) return Math.floor(s / 3600) + ' h ago';
    if (s < 30 * 86400) return Math.floor(s / 86400) + ' d ago';
    return formatDate(unixSeconds);
}

/** Epoch bounds (ns) between which a trace timestamp is read as wall-clock time. */
const EPOCH_2000_NS = 946684800e9;
const EPOCH_2100_NS = 4102444800e9;

/**
 * A trace timestamp in nanoseconds. Kineto writes wall-clock (Unix epoch)
 * times on most systems: those print as UTC to the millisecond,
 * "2024-05-20 10:13:10.123 UTC" (epoch nanoseconds exceed 2^53, so finer
 * digits would be noise anyway). Other clocks (time since boot) print as
 * seconds: "5123.456789 s".
 * @param {number | null | undefined} ns
 * @returns {string}
 */
export function formatTraceTime(ns) {
    if (!isNum(ns)) return DASH;
    if (ns >= EPOCH_2000_NS && ns < EPOCH_2100_NS) {
        const d = new Date(Math.floor(ns / 1e6));
        return d.toISOString().slice(0, 23).replace('T', ' ') + ' UTC';
    }
    return (ns / 1e9).toFixed(6) + ' s';
}

/**
 * Wall-clock time (epoch ns) of a trace-clock timestamp, or null if it
 * cannot be known. Traces either use the epoch directly, or a clock since
 * boot plus a base (Kineto's baseTimeNanoseconds: the epoch time of trace
 * clock zero).
 * @param {number | null | undefined} ns timestamp on the trace clock
 * @param {number | null | undefined} baseNs epoch time of trace clock zero, if any
 * @returns {number | null}
 */
export function traceWallClock(ns, baseNs) {
    if (!isNum(ns)) return null;
    if (ns >= EPOCH_2000_NS && ns < EPOCH_2100_NS) return ns;
    if (isNum(baseNs) && baseNs + ns >= EPOCH_2000_NS && baseNs + ns < EPOCH_2100_NS) return baseNs + ns;
    return null;
}

/**
 * Share as a percentage: (1, 3) -> "33.3 %"; one decimal, "0 %" for zero,
 * "<0.1 %" for tiny non-zero shares. DASH when whole is not positive.
 * @param {number | null | undefined} part
 * @param {number | null | undefined} whole
 * @returns {string}
 */
export function formatPercent(part, whole) {
    if (!isNum(part) || !isNum(whole) || whole <= 0) return DASH;
    const p = (part / whole) * 100;
    if (p === 0) return '0 %';
    if (p > 0 && p < 0.1) return '<0.1 %';
    return p.toFixed(1) + ' %';
}

/**
 * Count with a noun: (1, "rank") -> "1 rank", (3, "rank") -> "3 ranks",
 * (1200, "event") -> "1,200 events". Irregular plurals via `plural`.
 * @param {number | null | undefined} n
 * @param {string} singular
 * @param {string} [plural] default singular + "s"
 * @returns {string}
 */
export function plural(n, singular, plural) {
    if (!isNum(n)) return DASH + ' ' + (plural ?? singular + 's');
    return formatNumber(n) + ' ' + (n === 1 ? singular : plural ?? singular + 's');
}

/**
 * Compute capability from CUDA device properties: (9, 0) -> "9.0".
 * @param {number | null | undefined} major
 * @param {number | null | undefined} minor
 * @returns {string}
 */
export function formatComputeCapability(major, minor) {
    if (!isNum(major)) return DASH;
    return major + '.' + (isNum(minor) ? minor : 0);
}

/**
 * Duration given in microseconds (the analysis API's unit), as
 * formatDuration: 850 -> "850 µs", 12345 -> "12.3 ms", 0.5 -> "500 ns";
 * zero reads "0 µs".
 * @param {number | null | undefined} us
 * @returns {string}
 */
export function formatMicros(us) {
    if (us === 0) return '0 µs';
    return isNum(us) ? formatDuration(us * 1000) : DASH;
}

/**
 * A fraction 0..1 as a percentage: 0.4213 -> "42.1 %", 0 -> "0 %",
 * 0.0004 -> "<0.1 %". DASH for null (a figure the trace does not give).
 * @param {number | null | undefined} x
 * @returns {string}
 */
export function formatShare(x) {
    return isNum(x) ? formatPercent(x, 1) : DASH;
}

/**
 * A point in time as an offset from a reference, both in microseconds,
 * with fixed decimals so a column of times lines up and keeps its
 * resolution: 812.4 -> "812.4 µs", 12345.678 -> "12.346 ms",
 * 4.2e6 -> "4.2000 s". Negative offsets keep their sign.
 * @param {number | null | undefined} us  time
 * @param {number} [originUs] reference (default 0)
 * @returns {string}
 */
export function formatOffset(us, originUs = 0) {
    if (!isNum(us) || !isNum(originUs)) return DASH;
    const d = us - originUs;
    const v = Math.abs(d);
    const sign = d < 0 ? '-' : '';
    if (v < 1000) return sign + v.toFixed(1) + ' µs';
    if (v < 1e6) return sign + (v / 1e3).toFixed(3) + ' ms';
    return sign + (v / 1e6).toFixed(4) + ' s';
}
