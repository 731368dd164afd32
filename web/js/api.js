// @ts-check
/**
 * api.js — the only module that talks to the server (fetch and XHR).
 *
 * Every path is relative to the page ("./api/runs"), so the app works under
 * a reverse-proxy base path. Requests other than GET carry the header
 * `X-Traceboard-CSRF: 1`, which the server requires for cookie-
 * authenticated writes (a cross-site form cannot set it). Responses are
 * JSON; a failure becomes an ApiError whose message is the server's
 * `error.message` (from `{"error": {"code", "message"}}`), else the HTTP
 * status text, so views can show err.message as is.
 *
 * Dev fixture pages (web/dev/) call installMock() before the app starts;
 * the mock answers requests instead of the network.
 */

/** Error from the server (status > 0) or the network (status 0). */
export class ApiError extends Error {
    /**
     * @param {string} message shown to users
     * @param {number} status HTTP status, 0 for network failures
     * @param {string} code server error code ("not_found" …), "network", "aborted" or "http"
     * @param {Record<string, any>} [details] the server's error object (a duplicate's run_id and url)
     */
    constructor(message, status, code, details) {
        super(message);
        this.name = 'ApiError';
        this.status = status;
        this.code = code;
        this.details = details || {};
    }
}

/** Header the server demands on every write. */
export const CSRF_HEADER = 'X-Traceboard-CSRF';

/**
 * A dev-page stand-in for the server. Return a value (or a promise of one)
 * to answer the request with it, throw an ApiError to fail it, or return
 * undefined to let it go to the network.
 * @typedef {(method: string, path: string, body: unknown) => unknown} MockHandler
 */

/** @type {MockHandler | null} */
let mock = null;

/**
 * Dev fixture pages only: answers requests from handler.
 * @param {MockHandler | null} handler
 */
export function installMock(handler) {
    mock = handler;
}

/**
 * Builds an ApiError from a failed response's status and body text.
 * @param {number} status
 * @param {string} statusText
 * @param {string} text
 * @returns {ApiError}
 */
export function errorFromResponse(status, statusText, text) {
    let message = '';
    let code = 'http';
    let details;
    try {
        const body = JSON.parse(text);
        if (body && body.error && typeof body.error.message === 'string') {
            message = body.error.message;
            details = body.error;
            if (typeof body.error.code === 'string') code = body.error.code;
        }
    } catch {
        // not JSON (a proxy's HTML error page): fall back to the status
    }
    if (!message) message = statusText ? `${status} ${statusText}` : `HTTP error ${status}`;
    return new ApiError(message, status, code, details);
}

/**
 * Sends one request and returns the parsed JSON answer (null when empty).
 * @param {string} method
 * @param {string} path relative, e.g. "./api/runs"
 * @param {unknown} [body] sent as JSON when not undefined
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>}
 */
export async function request(method, path, body, signal) {
    if (mock) {
        const answer = await mock(method, path, body);
        if (answer !== undefined) return answer;
    }
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    if (method !== 'GET' && method !== 'HEAD') headers[CSRF_HEADER] = '1';
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
        res = await fetch(path, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
            credentials: 'same-origin',
            cache: 'no-store',
            signal,
        });
    } catch (e) {
        if (e instanceof DOMException && e.name === 'AbortError') throw new ApiError('Request cancelled', 0, 'aborted');
        throw new ApiError('Cannot reach the traceboard server. Is it running, and is the SSH tunnel up?', 0, 'network');
    }
    const text = await res.text();
    if (!res.ok) throw errorFromResponse(res.status, res.statusText, text);
    if (!text) return null;
    try {
        return JSON.parse(text);
    } catch {
        throw new ApiError(`The server sent a response that is not JSON (${path})`, res.status, 'bad_response');
    }
}

/**
 * The server's state (answered without the token): version, and whether it
 * is read-only (uploads, renames and deletes refused) and why.
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Health>}
 */
export function getHealth(signal) {
    return request('GET', './api/health', undefined, signal);
}

/**
 * @param {string} id
 * @returns {string}
 */
const runPath = (id) => './api/runs/' + encodeURIComponent(id);

/**
 * Runs (newest first) and the ingest jobs still worth showing, filtered by
 * query ("?project=P&tag=T…", see runlist.runsQuery; "" = all).
 * @param {AbortSignal} [signal]
 * @param {string} [query]
 * @returns {Promise<{runs: import('./apitypes.js').Run[], jobs: import('./apitypes.js').Job[]}>}
 */
export async function listRuns(signal, query = '') {
    const r = await request('GET', './api/runs' + query, undefined, signal);
    return { runs: (r && r.runs) || [], jobs: (r && r.jobs) || [] };
}

/**
 * Every project with its number of runs and newest run's time.
 * @param {AbortSignal} [signal]
 * @returns {Promise<{projects: {name: string, runs: number, last: number}[]}>}
 */
export function listProjects(signal) {
    return request('GET', './api/projects', undefined, signal);
}

/**
 * A project's runs, oldest first, with their figures and regression marks.
 * @param {string} project
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Trend>}
 */
export function getTrend(project, signal) {
    return request('GET', './api/projects/' + encodeURIComponent(project) + '/trend', undefined, signal);
}

/**
 * One run with its import information.
 * @param {string} id
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').RunDetail>}
 */
export function getRun(id, signal) {
    return request('GET', runPath(id), undefined, signal);
}

/**
 * Changes a run's name and/or tags, or renumbers its ranks (old -> new; the
 * server recomputes the run's derived tables).
 * @param {string} id
 * @param {{name?: string, tags?: string[], ranks?: Record<string, number>}} patch
 * @returns {Promise<import('./apitypes.js').Run | null>} the updated run if the server returns it
 */
export function updateRun(id, patch) {
    return request('PATCH', runPath(id), patch);
}

/**
 * Deletes a run and its stored data.
 * @param {string} id
 * @returns {Promise<unknown>}
 */
export function deleteRun(id) {
    return request('DELETE', runPath(id));
}

/**
 * One ingest job's progress.
 * @param {number} job
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Job>}
 */
export function getJob(job, signal) {
    return request('GET', './api/jobs/' + encodeURIComponent(String(job)), undefined, signal);
}

/**
 * Any JSON document by relative URL (dev fixture pages load fixtures so).
 * @param {string} url
 * @returns {Promise<any>}
 */
export function getJson(url) {
    return request('GET', url);
}

/**
 * @typedef {object} UploadOptions
 * @property {string} [name] run name; empty = the server derives one
 * @property {string} [project] the project the run belongs to
 * @property {Record<string, string>} [meta] key=value metadata
 * @property {boolean} [duplicate] store it even when the same files are stored (else 409 duplicate)
 * @property {(loaded: number, total: number) => void} [onProgress] bytes sent so far
 * @property {AbortSignal} [signal]
 */

/**
 * Uploads trace files (one run; several files = one rank each) as
 * multipart/form-data to ./api/runs?async=1: a text field `name` when given,
 * then one `file` field per file. Uses XHR because fetch cannot report
 * upload progress. Resolves with the server's 202 answer {job, url}.
 * @param {File[]} files
 * @param {UploadOptions} [opts]
 * @returns {Promise<{job: number, url?: string}>}
 */
export function uploadRun(files, opts = {}) {
    const form = new FormData();
    if (opts.name) form.append('name', opts.name);
    if (opts.project) form.append('project', opts.project);
    for (const [k, v] of Object.entries(opts.meta || {})) form.append('meta.' + k, v);
    if (opts.duplicate) form.append('duplicate', '1');
    for (const f of files) form.append('file', f, f.name);
    if (mock) {
        return Promise.resolve(mock('POST', './api/runs?async=1', { files, name: opts.name, onProgress: opts.onProgress })).then(
            (a) => /** @type {{job: number, url?: string}} */ (a),
        );
    }
    return new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('POST', './api/runs?async=1');
        xhr.setRequestHeader(CSRF_HEADER, '1');
        xhr.setRequestHeader('Accept', 'application/json');
        if (opts.onProgress) {
            const cb = opts.onProgress;
            xhr.upload.addEventListener('progress', (ev) => cb(ev.loaded, ev.lengthComputable ? ev.total : 0));
        }
        xhr.addEventListener('load', () => {
            if (xhr.status >= 200 && xhr.status < 300) {
                try {
                    resolve(JSON.parse(xhr.responseText));
                } catch {
                    reject(new ApiError('The server accepted the upload but its answer is not JSON', xhr.status, 'bad_response'));
                }
            } else {
                reject(errorFromResponse(xhr.status, xhr.statusText, xhr.responseText));
            }
        });
        xhr.addEventListener('error', () =>
            reject(new ApiError('The upload failed: the connection to the server was lost', 0, 'network')),
        );
        xhr.addEventListener('abort', () => reject(new ApiError('Upload cancelled', 0, 'aborted')));
        if (opts.signal) {
            if (opts.signal.aborted) {
                reject(new ApiError('Upload cancelled', 0, 'aborted'));
                return;
            }
            opts.signal.addEventListener('abort', () => xhr.abort());
        }
        xhr.send(form);
    });
}

// --- analyses (run page tabs) -------------------------------------------------

/**
 * Query parameters of an analysis request; null, undefined and "" are left
 * out (the server applies its default).
 * @typedef {Record<string, string | number | null | undefined>} Params
 */

/**
 * Relative URL of an analysis endpoint of a run, with its query string
 * ("./api/runs/ID/kernels?rank=1&sort=total"). Also the href of CSV links.
 * @param {string} id run id
 * @param {string} what endpoint below the run ("overview", "memory/events" …)
 * @param {Params} [params]
 * @returns {string}
 */
export function analysisUrl(id, what, params = {}) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
        if (v === null || v === undefined || v === '') continue;
        p.set(k, String(v));
    }
    const qs = p.toString();
    return runPath(id) + '/' + what + (qs ? '?' + qs : '');
}

/**
 * Step breakdown, GPUs, peaks, notes and recommendations of one rank.
 * @param {string} id
 * @param {number | null} rank null = the lowest rank
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Overview>}
 */
export function getOverview(id, rank, signal) {
    return request('GET', analysisUrl(id, 'overview', { rank }), undefined, signal);
}

/**
 * A page of operators (params: rank, group, q, sort, order, offset, limit).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').OperatorsPage>}
 */
export function getOperators(id, params, signal) {
    return request('GET', analysisUrl(id, 'operators', params), undefined, signal);
}

/**
 * A page of GPU kernels (params: rank, group, q, sort, order, offset, limit).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').KernelsPage>}
 */
export function getKernels(id, params, signal) {
    return request('GET', analysisUrl(id, 'kernels', params), undefined, signal);
}

/**
 * The memory curve of one device (params: rank, device, start_us, end_us, points).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').MemoryCurve>}
 */
export function getMemory(id, params, signal) {
    return request('GET', analysisUrl(id, 'memory', params), undefined, signal);
}

/**
 * A page of allocations (params: rank, device, start_us, end_us, min_bytes,
 * q, sort, order, offset, limit).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').MemoryEventsPage>}
 */
export function getMemoryEvents(id, params, signal) {
    return request('GET', analysisUrl(id, 'memory/events', params), undefined, signal);
}

// --- timeline (views/timeline.js) ---------------------------------------------------

/**
 * Tracks, counters, steps and time span of one rank.
 * @param {string} id
 * @param {number | null} rank
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineTracks>}
 */
export function getTimelineTracks(id, rank, signal) {
    return request('GET', analysisUrl(id, 'timeline/tracks', { rank }), undefined, signal);
}

/**
 * Slices and counters of a window at one level of detail
 * (params: rank, start, end, width, tracks "1,2,3").
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineWindow>}
 */
export function getTimeline(id, params, signal) {
    return request('GET', analysisUrl(id, 'timeline', params), undefined, signal);
}

/**
 * One slice with its details (params: rank, track, ts, dur, id).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineSlice>}
 */
export function getTimelineSlice(id, params, signal) {
    return request('GET', analysisUrl(id, 'timeline/slice', params), undefined, signal);
}

/**
 * Slices whose name contains q, case-insensitive (params: rank, q, start, end, limit).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineSearch>}
 */
export function searchTimeline(id, params, signal) {
    return request('GET', analysisUrl(id, 'timeline/search', params), undefined, signal);
}

/**
 * Slices by name and counter statistics over a window (params: rank, start, end, tracks).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineAggregate>}
 */
export function getTimelineAggregate(id, params, signal) {
    return request('GET', analysisUrl(id, 'timeline/aggregate', params), undefined, signal);
}

/**
 * The flame graph of a window (params: rank, start, end, tracks, contained).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').TimelineFlame>}
 */
export function getTimelineFlame(id, params, signal) {
    return request('GET', analysisUrl(id, 'timeline/flame', params), undefined, signal);
}

/**
 * Every rank of a run side by side (top: how many kernels, 1..100).
 * @param {string} id
 * @param {number | null} top
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Ranks>}
 */
export function getRanks(id, top, signal) {
    return request('GET', analysisUrl(id, 'ranks', { top }), undefined, signal);
}

// --- deeper GPU analyses (views/analyses.js) ------------------------------------

/**
 * The stored analyses of one rank, or of every rank (rank null). A run
 * imported before the analyses existed answers 404.
 * @param {string} id
 * @param {number | null} rank
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Analyses>}
 */
export function getAnalyses(id, rank, signal) {
    return request('GET', analysisUrl(id, 'analyses', { rank }), undefined, signal);
}

/**
 * Critical-path segments (params: rank, step, start, end; times integer ns).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Critpath>}
 */
export function getCritpath(id, params, signal) {
    return request('GET', analysisUrl(id, 'critpath', params), undefined, signal);
}

// --- comparing two runs (views/compare.js) ------------------------------------------

/**
 * Relative URL of a diff endpoint ("", "kernels", "operators") with its
 * query; also the href of CSV links.
 * @param {string} what
 * @param {Params} params
 * @returns {string}
 */
export function diffUrl(what, params) {
    return withQuery('./api/diff' + (what ? '/' + what : ''), params);
}

/**
 * path + "?" + the non-empty params ("," left unescaped).
 * @param {string} path
 * @param {Params} params
 * @returns {string}
 */
function withQuery(path, params) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
        if (v === null || v === undefined || v === '') continue;
        p.set(k, String(v));
    }
    return path + '?' + p.toString().replace(/%2C/g, ',');
}

/**
 * Overview of two runs compared (params: a, b, rank_a, rank_b).
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').Diff>}
 */
export function getDiff(params, signal) {
    return request('GET', diffUrl('', params), undefined, signal);
}

/**
 * A page of the kernel or operator comparison (params: a, b, rank_a,
 * rank_b, status, group, per, q, sort, order, offset, limit).
 * @param {'kernels' | 'operators'} what
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').DiffPage>}
 */
export function getDiffTable(what, params, signal) {
    return request('GET', diffUrl(what, params), undefined, signal);
}

/**
 * Three to eight runs side by side (params: runs = "A,B,C", rank).
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').CompareN>}
 */
export function getCompare(params, signal) {
    return request('GET', withQuery('./api/compare', params), undefined, signal);
}

/**
 * A page of a run's job log on the trace clock of a rank (params: rank,
 * start, end, q, limit, after).
 * @param {string} id
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('./apitypes.js').RunLogs>}
 */
export function getRunLogs(id, params, signal) {
    return request('GET', analysisUrl(id, 'logs', params), undefined, signal);
}

/**
 * Every line of a run's job log (pages of 10,000 followed, at most `max`).
 * @param {string} id
 * @param {Params} params rank, q, start, end
 * @param {AbortSignal} [signal]
 * @param {number} [max]
 * @returns {Promise<import('./apitypes.js').RunLogs>}
 */
export async function getAllRunLogs(id, params, signal, max = 50000) {
    const first = await getRunLogs(id, { ...params, limit: 10000 }, signal);
    let next = first.next;
    while (next && first.lines.length < max) {
        const page = await getRunLogs(id, { ...params, limit: 10000, after: next }, signal);
        first.lines.push(...page.lines);
        next = page.next;
    }
    return { ...first, next };
}

/**
 * URL of a project's live-line event stream (text/event-stream; params: job, backlog).
 * @param {string} project
 * @param {Params} [params]
 * @returns {string}
 */
export function liveUrl(project, params = {}) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') p.set(k, String(v));
    const qs = p.toString();
    return `./api/projects/${encodeURIComponent(project)}/live${qs ? '?' + qs : ''}`;
}
