// @ts-check
/**
 * dev/runs.js — mounts the real app on canned JSON (dev/fixtures/), so the
 * views can be looked at and poked without a server API: the runs list
 * (fixtures/runs.json), each run's page (fixtures/run-info.json), job pages
 * whose progress is simulated, uploads (simulated transfer, then a job that
 * turns into a run), rename, tags and delete (kept in memory until reload).
 *
 * The run page's analysis tabs are answered by dev/analysis.js from
 * fixtures/analysis-<run id>.json, the Timeline tab by dev/timeline.js
 * (a generated trace), the compare page by dev/compare.js (the two runs'
 * fixture tables joined in JS).
 *
 * Fixture names include hostile strings (`<img src=x onerror=…>`) on
 * purpose: they must show up as text.
 */

import { ApiError, getJson, installMock } from '../js/api.js';
import { answerAnalysis } from './analysis.js';
import { answerDiff } from './compare.js';
import { answerTimeline } from './timeline.js';

/** @typedef {import('../js/apitypes.js').Run} Run */
/** @typedef {import('../js/apitypes.js').Job} Job */
/** @typedef {import('../js/apitypes.js').RunInfo} RunInfo */

/** @type {{runs: Run[], jobs: Job[]}} */
const list = await getJson('./fixtures/runs.json');
/** @type {Record<string, RunInfo>} */
const infos = await getJson('./fixtures/run-info.json');

/** Simulated jobs: start time and how they end. */
/** @type {Map<number, {job: Job, start: number, makes: Run | null}>} */
const sims = new Map();
const PHASE_MS = [['queued', 600], ['parse', 3000], ['sort', 700], ['index', 700], ['analyze', 500], ['commit', 300]];

for (const j of list.jobs) sims.set(j.id, { job: j, start: performance.now(), makes: null });

/** @param {number} id */
function jobNow(id) {
    const sim = sims.get(id);
    if (!sim) return null;
    const j = sim.job;
    if (j.state === 'failed' || j.state === 'done' || !sim.makes) return j;
    let t = performance.now() - sim.start;
    for (const [phase, ms] of PHASE_MS) {
        if (t < /** @type {number} */ (ms)) {
            const frac = phase === 'parse' ? t / /** @type {number} */ (ms) : phase === 'queued' ? 0 : 1;
            return { ...j, state: phase === 'queued' ? 'queued' : 'running', phase: String(phase), bytes_done: Math.round(j.bytes_total * frac), events: Math.round(frac * 812345) };
        }
        t -= /** @type {number} */ (ms);
    }
    sim.job = { ...j, state: 'done', phase: 'commit', bytes_done: j.bytes_total, events: 812345, run_id: sim.makes.id };
    if (!list.runs.some((r) => r.id === sim.makes?.id)) list.runs.unshift(sim.makes);
    return sim.job;
}

let nextJob = 100;

/** @param {string} path */
const runId = (path) => decodeURIComponent(path.replace('./api/runs/', ''));

installMock(async (method, path, body) => {
    if (path.startsWith('./fixtures/')) return undefined; // the fixture files themselves
    await new Promise((r) => setTimeout(r, 120)); // a little latency
    const diff = answerDiff(method, path);
    if (diff) return diff;
    const analysis = answerAnalysis(method, path);
    if (analysis) return analysis;
    const timeline = answerTimeline(method, path);
    if (timeline) return timeline;
    if (method === 'GET' && path === './api/runs') {
        return { runs: list.runs, jobs: list.jobs.map((j) => jobNow(j.id)).filter((j) => j && j.state !== 'done') };
    }
    if (path.startsWith('./api/jobs/')) {
        const j = jobNow(Number(path.slice('./api/jobs/'.length)));
        if (!j) throw new ApiError('no such job', 404, 'not_found');
        return j;
    }
    if (method === 'POST' && path.startsWith('./api/runs')) {
        const b = /** @type {{files: File[], name?: string, onProgress?: (a: number, b: number) => void}} */ (body);
        const total = b.files.reduce((s, f) => s + f.size, 0);
        for (let i = 1; i <= 10; i++) {
            await new Promise((r) => setTimeout(r, 150));
            if (b.onProgress) b.onProgress((total * i) / 10, total);
        }
        const id = nextJob++;
        const name = b.name || b.files[0].name.replace(/\.(pt\.)?trace\.json(\.gz)?$|\.json(\.gz)?$/, '');
        const runIdNew = 'dev' + String(id).padStart(13, '0');
        /** @type {Run} */
        const run = {
            id: runIdNew, name, created: Math.floor(Date.now() / 1000), status: 'ready', ranks: b.files.length,
            gpu: '', bytes: total, events: 812345, warnings: 0,
            files: b.files.map((f, i) => ({ name: f.name, bytes: f.size, rank: i })), tags: [],
        };
        infos[runIdNew] = {
            tracks: 1, slices: 0,
            ranks: run.files.map((f) => ({
                rank: f.rank, file: f.name, bytes: f.bytes, format: 'kineto-json', device: null, distributed: null,
                t0_ns: 0, t1_ns: 1e9, base_ns: 0, notes: [],
                stats: { events: 812345, slices: 0, flows: 0, instants: 0, counters: 0, mems: 0, metadata: 0, dropped: 0, repaired: 0, by_kind: {} },
            })),
        };
        const job = { id, state: /** @type {const} */ ('queued'), phase: 'queued', name, bytes_done: 0, bytes_total: total, events: 0 };
        list.jobs.unshift(job);
        sims.set(id, { job, start: performance.now(), makes: run });
        return { job: id, url: './?job=' + id };
    }
    if (path.startsWith('./api/runs/')) {
        const id = runId(path);
        const run = list.runs.find((r) => r.id === id);
        if (!run) throw new ApiError(`run ${id} not found`, 404, 'not_found');
        if (method === 'GET') return { ...run, info: infos[id] || { ranks: [], tracks: 0, slices: 0 } };
        if (method === 'PATCH') {
            const p = /** @type {{name?: string, tags?: string[]}} */ (body);
            if (p.name !== undefined && /fail/i.test(p.name)) throw new ApiError('names containing "fail" are refused by this dev mock', 400, 'invalid');
            Object.assign(run, p);
            return run;
        }
        if (method === 'DELETE') {
            list.runs = list.runs.filter((r) => r !== run);
            return null;
        }
    }
    throw new ApiError(`dev mock: no fixture for ${method} ${path}`, 404, 'not_found');
});

await import('../js/app.js');
