// @ts-check
/**
 * views/job.js — `./?job=N`: one ingest job's progress.
 *
 * Polls GET ./api/jobs/N every 500 ms (one request at a time; a network
 * failure backs off up to 5 s and says so). Shows the phase as a stepper
 * (queued, parse, sort, index, analyze, commit), a progress bar of
 * compressed bytes read (busy animation in the phases after parsing),
 * events parsed, the read rate, the time elapsed since this page opened
 * (the job's start is not in its answer), the server's estimate of the time
 * the whole import has left (eta_s: from the bytes read and this server's
 * past imports, server/ingest/ingest_eta.c), and the table of stages with
 * their times (the import's phases, then the derived stages). Once the run
 * is open (phase analyze, run_id given) a link leads to it while its pages
 * are computed. On state "done" it replaces the address
 * with ./?run=<run_id> (so Back skips this page); on "failed" it stops and
 * shows the server's error message in a red box with a link back.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, h, progressBar, replace, setTitle } from '../dom.js';
import { formatBytes, formatDuration, formatNumber } from '../format.js';
import { buildUrl, navigate, routeAs } from '../router.js';
import { PHASES, jobFraction, phaseIndex } from '../runlist.js';

/** @typedef {import('../apitypes.js').Job} Job */
/** @typedef {import('../state.js').AppStore} AppStore */

/** This page declares no URL parameters beyond job=N. */
export const params = Object.freeze({});

const POLL_MS = 500;
const BACKOFF_MAX_MS = 5000;

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    const id = routeAs(store.get().route, 'job').job;
    if (id !== null) active = createJobPage(root, id);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {number} id
 * @returns {{destroy: () => void}}
 */
function createJobPage(root, id) {
    setTitle(`Import #${id}`);
    let destroyed = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let ctrl = new AbortController();
    let failures = 0;
    /** @type {{t: number, bytes: number} | null} */
    let firstSample = null;
    const opened = performance.now();

    const back = h('a', { href: buildUrl({ view: 'runs' }) }, '← All runs');
    const title = h('h1', { class: C.title }, `Import #${id}`);
    const body = h('div', { class: C.section }, h('p', { class: [C.muted, C.loading] }, 'Loading…'));
    const netNote = h('div', { hidden: true });
    replace(root, h('div', { class: C.page }, h('div', { class: C.pageHead }, back, title), netNote, body));

    async function poll() {
        ctrl = new AbortController();
        let job;
        try {
            job = await api.getJob(id, ctrl.signal);
        } catch (e) {
            if (destroyed || (e instanceof api.ApiError && e.code === 'aborted')) return;
            if (e instanceof api.ApiError && e.status === 404) {
                showNotFound();
                return;
            }
            failures++;
            netNote.hidden = false;
            replace(netNote, alertBox('warn', 'Lost contact with the server; retrying…', e instanceof Error ? e.message : String(e)));
            timer = setTimeout(poll, Math.min(BACKOFF_MAX_MS, POLL_MS * 2 ** failures));
            return;
        }
        if (destroyed) return;
        failures = 0;
        netNote.hidden = true;
        if (job.state === 'done') {
            if (job.run_id) {
                navigate({ view: 'run', run: job.run_id }, { replace: true });
            } else {
                replace(body, alertBox('info', 'The import is done', h('a', { href: buildUrl({ view: 'runs' }) }, 'Open the runs list')));
            }
            return;
        }
        render(job);
        if (job.state !== 'failed') timer = setTimeout(poll, POLL_MS);
    }

    function showNotFound() {
        title.textContent = `Import #${id}`;
        replace(
            body,
            alertBox(
                'error',
                `Import job #${id} not found`,
                h('p', null, 'The server keeps finished jobs only for a while, and forgets them when it restarts. If the import succeeded, the run is in the list.'),
                h('p', null, h('a', { href: buildUrl({ view: 'runs' }) }, 'Back to the runs list')),
            ),
        );
    }

    /** @param {Job} job */
    function render(job) {
        const name = job.name || `Import #${id}`;
        title.textContent = job.state === 'failed' ? `Import failed: ${name}` : `Importing ${name}`;
        setTitle(title.textContent);
        const current = phaseIndex(job);
        const failed = job.state === 'failed';

        const steps = h(
            'ol',
            { class: C.steps, 'aria-label': 'Import phases' },
            PHASES.map((p, i) =>
                h(
                    'li',
                    {
                        class: [
                            C.step,
                            i < current && C.stepDone,
                            i === current && (failed ? C.stepFailed : C.stepCurrent),
                        ],
                        'aria-current': i === current ? 'step' : null,
                    },
                    p.label,
                ),
            ),
        );

        const bar = progressBar('Import progress');
        bar.set(failed ? jobFraction(job) ?? 1 : jobFraction(job), failed ? 'error' : 'ok');
        const phase = PHASES[current];
        const doing = failed ? 'Stopped' : phase ? phase.doing + '…' : job.phase;

        const now = performance.now();
        if (!firstSample && job.bytes_done > 0) firstSample = { t: now, bytes: job.bytes_done };
        const secs = firstSample ? (now - firstSample.t) / 1000 : 0;
        const rate =
            job.phase === 'parse' && firstSample && secs >= 1 ? formatBytes((job.bytes_done - firstSample.bytes) / secs) + '/s' : '—';

        const stats = h(
            'dl',
            { class: C.stats },
            stat('Read', job.bytes_total > 0 ? `${formatBytes(job.bytes_done)} of ${formatBytes(job.bytes_total)}` : formatBytes(job.bytes_done)),
            stat('Events parsed', formatNumber(job.events)),
            stat('Read rate', rate),
            stat('Elapsed', seconds((now - opened) / 1000), 'since this page opened'),
            failed ? null : stat('Time left', eta(job), 'of the whole import, estimated from the reading and the imports before it'),
        );

        replace(
            body,
            steps,
            h('div', { class: C.toolbar }, h('strong', null, doing), h('span', { class: C.spacer }), h('span', { class: C.muted }, `job #${job.id}`)),
            bar.el,
            stats,
            job.run_id && !failed
                ? alertBox('info', 'The run is open', h('p', null, h('a', { href: buildUrl({ view: 'run', run: job.run_id }), 'data-open-run': '' }, 'Open the run'), ': its timeline, tables and analyses fill in as their stage below is done.'))
                : null,
            stageTable(job.stages || []),
            failed
                ? alertBox(
                      'error',
                      'The import failed',
                      h('p', null, (job.error && job.error.message) || 'The server gave no reason.'),
                      job.error && job.error.code ? h('p', { class: [C.muted, C.mono] }, `code: ${job.error.code}`) : null,
                      h('p', null, h('a', { href: buildUrl({ view: 'runs' }) }, 'Back to the runs list'), ' to try another file.'),
                  )
                : job.run_id
                  ? null
                  : h('p', { class: C.muted }, 'You can leave this page: the import goes on in the server, and the run appears in the list when it is open.'),
        );
    }

    /**
     * The server's estimate of the time left, or a dash while it has none
     * (a done job never gets here: poll leaves the page instead).
     * @param {Job} job
     */
    function eta(job) {
        return typeof job.eta_s === 'number' ? `about ${seconds(Math.max(1, job.eta_s))}` : '—';
    }

    poll();

    return {
        destroy() {
            destroyed = true;
            clearTimeout(timer);
            ctrl.abort();
        },
    };
}

/**
 * The job's stages and their times.
 * @param {import('../apitypes.js').JobStage[]} stages
 */
function stageTable(stages) {
    if (!stages.length) return null;
    return h(
        'table',
        { class: [C.table, C.tableCompact], 'aria-label': 'Import stages' },
        h('thead', null, h('tr', null, h('th', null, 'Stage'), h('th', null, 'State'), h('th', null, 'Time'))),
        h(
            'tbody',
            null,
            stages.map((s) => h('tr', null, h('td', null, s.name), h('td', null, s.state === 'running' ? 'running…' : s.state), h('td', null, formatDuration(s.seconds * 1e9)))),
        ),
    );
}

/**
 * @param {string} label
 * @param {string} value
 * @param {string} [note]
 */
function stat(label, value, note) {
    return h('div', { class: C.stat }, h('dt', { class: C.statLabel }, label), h('dd', { class: C.statValue }, value), note ? h('dd', { class: C.muted }, note) : null);
}

/**
 * Whole seconds: "7 s", "2 min 05 s".
 * @param {number} s
 */
function seconds(s) {
    const whole = Math.round(s);
    /* formatDuration writes nothing as "0 ns": a page just opened has spent 0 s */
    return whole > 0 ? formatDuration(whole * 1e9).replace(/^(\d+)\.0+ s$/, '$1 s') : '0 s';
}
