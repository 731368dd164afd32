// @ts-check
/**
 * runlist.js — pure logic of the runs list: filtering, sorting, tag
 * parsing and job progress arithmetic. No DOM; tested under node by
 * tests/web/runlist.test.mjs. views/runs.js and views/job.js render what
 * these functions decide.
 */

/** @typedef {import('./apitypes.js').Run} Run */
/** @typedef {import('./apitypes.js').Job} Job */

/** Most tags a run may carry and longest tag, as enforced when parsing. */
export const TAG_MAX = 32;
export const TAG_LEN_MAX = 64;

/**
 * Tags typed as "a, b ,, a" -> ["a", "b"]: split on commas, trimmed, empty
 * and duplicate entries dropped, order kept. Throws an Error with a
 * user-facing message when there are too many or one is too long.
 * @param {string} text
 * @returns {string[]}
 */
export function parseTags(text) {
    /** @type {string[]} */
    const out = [];
    for (const part of text.split(',')) {
        const t = part.trim().replace(/\s+/g, ' ');
        if (!t || out.includes(t)) continue;
        if (t.length > TAG_LEN_MAX) throw new Error(`Tag too long (at most ${TAG_LEN_MAX} characters): ${t.slice(0, 20)}…`);
        out.push(t);
    }
    if (out.length > TAG_MAX) throw new Error(`Too many tags (at most ${TAG_MAX})`);
    return out;
}

/**
 * Runs matching every whitespace-separated word of q (case-insensitive) in
 * the name, id, GPU, status, tags, file names, project or metadata (keys
 * and values). Empty q keeps all.
 * @param {Run[]} runs
 * @param {string} q
 * @returns {Run[]}
 */
export function filterRuns(runs, q) {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return runs;
    return runs.filter((r) => {
        const meta = Object.entries(r.meta || {}).map(([k, v]) => `${k}=${v}`);
        const hay = [r.name, r.id, r.gpu, r.status, r.project || '', ...meta, ...(r.tags || []), ...(r.files || []).map((f) => f.name)]
            .join('\n')
            .toLowerCase();
        return words.every((w) => hay.includes(w));
    });
}

/** Sort keys whose first click sorts descending (numbers and dates). */
export const DESC_FIRST = Object.freeze(['created', 'ranks', 'bytes', 'events']);

/**
 * Runs sorted by key ("name", "-bytes" …; "" keeps the server's order,
 * newest first). Stable; text compares case-insensitively, with numbers
 * inside names in numeric order ("run2" < "run10").
 * @param {Run[]} runs
 * @param {string} sort
 * @returns {Run[]}
 */
export function sortRuns(runs, sort) {
    if (!sort) return runs;
    const desc = sort.startsWith('-');
    const key = /** @type {keyof Run} */ (desc ? sort.slice(1) : sort);
    const coll = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
    const sign = desc ? -1 : 1;
    return runs
        .map((r, i) => ({ r, i }))
        .sort((a, b) => {
            const x = a.r[key];
            const y = b.r[key];
            let c;
            if (typeof x === 'number' && typeof y === 'number') c = x - y;
            else c = coll.compare(String(x ?? ''), String(y ?? ''));
            return c * sign || a.i - b.i;
        })
        .map((e) => e.r);
}

/**
 * The sort value after clicking a column header: a new column starts in
 * its natural direction, clicking the current one flips it.
 * @param {string} current current sort ("" = default: newest first)
 * @param {string} key column clicked
 * @returns {string}
 */
export function nextSort(current, key) {
    const effective = current || '-created';
    if (effective === key) return '-' + key;
    if (effective === '-' + key) return key;
    return DESC_FIRST.includes(key) ? '-' + key : key;
}

/** Ingest phases in order, with what each means to a user. */
export const PHASES = Object.freeze([
    { id: 'queued', label: 'Queued', doing: 'Waiting for an ingest worker' },
    { id: 'parse', label: 'Parse', doing: 'Reading events' },
    { id: 'sort', label: 'Sort', doing: 'Sorting slices' },
    { id: 'index', label: 'Index', doing: 'Building indexes' },
    { id: 'commit', label: 'Commit', doing: 'Saving the run' },
    { id: 'analyze', label: 'Analyze', doing: 'Computing the run’s pages (the run is open; they fill in as their stage is done)' },
]);

/**
 * Position of a job's phase in PHASES (-1 if unknown). A done job is past
 * the last phase.
 * @param {Pick<Job, 'state' | 'phase'>} job
 * @returns {number}
 */
export function phaseIndex(job) {
    if (job.state === 'done') return PHASES.length;
    return PHASES.findIndex((p) => p.id === job.phase);
}

/**
 * Fraction of a job's progress bar: bytes read while parsing; null (busy,
 * amount unknown) in the phases after parsing; 0 while queued; 1 when done.
 * @param {Job} job
 * @returns {number | null}
 */
export function jobFraction(job) {
    if (job.state === 'done') return 1;
    if (job.state === 'queued' || job.phase === 'queued') return 0;
    if (job.phase === 'parse' || job.state === 'failed') {
        return job.bytes_total > 0 ? Math.min(1, job.bytes_done / job.bytes_total) : null;
    }
    return null;
}

/**
 * Whether a list of jobs still has work under way (so the page polls).
 * @param {Job[]} jobs
 * @returns {boolean}
 */
export function anyActive(jobs) {
    return jobs.some((j) => j.state === 'queued' || j.state === 'running');
}

/** File names the uploader accepts (Kineto/Chrome JSON, maybe gzipped;
 * Nsight Systems SQLite exports). */
export const ACCEPT = '.json,.gz,.sqlite';

/**
 * Splits picked or dropped files into those we upload and those we skip.
 * @template {{name: string}} F
 * @param {F[]} files
 * @returns {{ok: F[], skipped: F[]}}
 */
export function splitAccepted(files) {
    /** @type {F[]} */
    const ok = [];
    /** @type {F[]} */
    const skipped = [];
    for (const f of files) (/\.(json|gz|sqlite)$/i.test(f.name) ? ok : skipped).push(f);
    return { ok, skipped };
}

/** The runs list's server-side filters (URL keys of views/runs.js). */
/**
 * @typedef {object} RunFilters
 * @property {string} in     project; "-" = runs without a project; "" = any
 * @property {string} tag    a whole tag
 * @property {string} meta   "KEY=VALUE"
 * @property {string} gpu    a part of the GPU name
 * @property {string} since  YYYY-MM-DD (UTC)
 * @property {string} until  YYYY-MM-DD (UTC, included)
 */

/**
 * The GET /api/runs query of the filters: "" when none is set, else
 * "?project=…&meta.KEY=VALUE…" (docs/api.md). A meta filter without "="
 * or with a bad key is left out (the filter bar says so).
 * @param {Partial<RunFilters>} f
 * @returns {string}
 */
export function runsQuery(f) {
    const p = new URLSearchParams();
    if (f.in) p.set('project', f.in === '-' ? '' : f.in);
    if (f.tag) p.set('tag', f.tag);
    const m = parseMetaFilter(f.meta || '');
    if (m) p.set('meta.' + m.key, m.value);
    if (f.gpu) p.set('gpu', f.gpu);
    if (f.since) p.set('since', f.since);
    if (f.until) p.set('until', f.until);
    const qs = p.toString();
    return qs ? '?' + qs : '';
}

/** Metadata keys as the server allows them. */
export const META_KEY_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * "batch=32" -> {key: "batch", value: "32"} (spaces around trimmed); null
 * when there is no "=" or the key is not [A-Za-z0-9_.-]{1,64}.
 * @param {string} text
 * @returns {{key: string, value: string} | null}
 */
export function parseMetaFilter(text) {
    const i = text.indexOf('=');
    if (i < 0) return null;
    const key = text.slice(0, i).trim();
    const value = text.slice(i + 1).trim();
    return META_KEY_RE.test(key) ? { key, value } : null;
}

/**
 * The compare page of the runs ticked, in the order ticked (the first is
 * the baseline): two open the two-run compare, three or more the N-way
 * one (./?compare=A,B,C); null for fewer than two.
 * @param {string[]} ids
 * @returns {string | null}
 */
export function compareUrl(ids) {
    if (ids.length < 2) return null;
    return './?compare=' + ids.map(encodeURIComponent).join(',');
}

/**
 * Upload metadata typed as "batch=32, model=gpt" (commas or new lines
 * between pairs) -> {batch: "32", model: "gpt"}; a later key wins. Throws
 * an Error naming the first pair that is not key=value with a key of
 * [A-Za-z0-9_.-]{1,64}.
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseMetaList(text) {
    /** @type {Record<string, string>} */
    const out = {};
    for (const part of text.split(/[,\n]/)) {
        if (!part.trim()) continue;
        const m = parseMetaFilter(part);
        if (!m) throw new Error(`Metadata must be key=value pairs (keys of letters, digits, _ . -): “${part.trim().slice(0, 40)}”`);
        out[m.key] = m.value;
    }
    return out;
}
