// Tests for web/js/runlist.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
    PHASES,
    TAG_MAX,
    anyActive,
    compareUrl,
    filterRuns,
    parseMetaFilter,
    parseMetaList,
    runsQuery,
    jobFraction,
    nextSort,
    parseTags,
    phaseIndex,
    sortRuns,
    splitAccepted,
} from '../../web/js/runlist.js';

/** @param {Partial<import('../../web/js/apitypes.js').Run>} f */
const run = (f) => ({ id: 'x', name: '', created: 0, status: 'ready', ranks: 1, gpu: '', bytes: 0, events: 0, warnings: 0, files: [], tags: [], ...f });

const RUNS = [
    run({ id: 'a1', name: 'resnet50 baseline', created: 300, bytes: 10, gpu: 'NVIDIA H100 80GB HBM3', tags: ['baseline'] }),
    run({ id: 'b2', name: 'run10', created: 100, bytes: 30, ranks: 8, files: [{ name: 'rank7.pt.trace.json.gz', bytes: 1, rank: 7 }] }),
    run({ id: 'c3', name: 'run2', created: 200, bytes: 20, tags: ['bf16', 'compile'] }),
];

test('parseTags splits, trims, dedupes', () => {
    assert.deepEqual(parseTags(''), []);
    assert.deepEqual(parseTags(' , ,'), []);
    assert.deepEqual(parseTags('a, b ,, a'), ['a', 'b']);
    assert.deepEqual(parseTags('  two   words , <b>x</b>'), ['two words', '<b>x</b>']);
});

test('parseTags rejects too many or too long tags', () => {
    const many = Array.from({ length: TAG_MAX + 1 }, (_, i) => 't' + i).join(',');
    assert.throws(() => parseTags(many), /Too many tags/);
    assert.throws(() => parseTags('x'.repeat(65)), /too long/);
});

test('filterRuns matches all words across fields', () => {
    assert.equal(filterRuns(RUNS, ''), RUNS);
    assert.deepEqual(filterRuns(RUNS, 'H100').map((r) => r.id), ['a1']);
    assert.deepEqual(filterRuns(RUNS, 'BF16').map((r) => r.id), ['c3']);
    assert.deepEqual(filterRuns(RUNS, 'rank7').map((r) => r.id), ['b2'], 'file names');
    assert.deepEqual(filterRuns(RUNS, 'run compile').map((r) => r.id), ['c3']);
    assert.deepEqual(filterRuns(RUNS, 'nothing-like-this'), []);
});

test('sortRuns sorts by column, numeric-aware, stable', () => {
    assert.equal(sortRuns(RUNS, ''), RUNS);
    assert.deepEqual(sortRuns(RUNS, 'name').map((r) => r.name), ['resnet50 baseline', 'run2', 'run10']);
    assert.deepEqual(sortRuns(RUNS, '-name').map((r) => r.name), ['run10', 'run2', 'resnet50 baseline']);
    assert.deepEqual(sortRuns(RUNS, 'bytes').map((r) => r.id), ['a1', 'c3', 'b2']);
    assert.deepEqual(sortRuns(RUNS, '-created').map((r) => r.id), ['a1', 'c3', 'b2']);
    assert.deepEqual(sortRuns(RUNS, 'ranks').map((r) => r.id), ['a1', 'c3', 'b2'], 'ties keep order');
    assert.deepEqual(RUNS.map((r) => r.id), ['a1', 'b2', 'c3'], 'input untouched');
});

test('nextSort toggles and starts numbers descending', () => {
    assert.equal(nextSort('', 'created'), 'created', 'default is newest first, so created flips');
    assert.equal(nextSort('created', 'created'), '-created');
    assert.equal(nextSort('', 'name'), 'name');
    assert.equal(nextSort('name', 'name'), '-name');
    assert.equal(nextSort('-name', 'name'), 'name');
    assert.equal(nextSort('name', 'bytes'), '-bytes');
});

test('phaseIndex and jobFraction follow the job', () => {
    /** @param {Partial<import('../../web/js/apitypes.js').Job>} f */
    const job = (f) => ({ id: 1, state: 'running', phase: 'parse', name: 'n', bytes_done: 50, bytes_total: 200, events: 0, ...f });
    assert.deepEqual(PHASES.map((p) => p.id), ['queued', 'parse', 'sort', 'index', 'commit', 'analyze']);
    assert.equal(phaseIndex(job({})), 1);
    assert.equal(phaseIndex(job({ state: 'done', phase: 'commit' })), PHASES.length);
    assert.equal(phaseIndex(job({ phase: 'mystery' })), -1);
    assert.equal(jobFraction(job({})), 0.25);
    assert.equal(jobFraction(job({ bytes_total: 0 })), null);
    assert.equal(jobFraction(job({ bytes_done: 500 })), 1);
    assert.equal(jobFraction(job({ state: 'queued', phase: 'queued' })), 0);
    assert.equal(jobFraction(job({ phase: 'index' })), null);
    assert.equal(jobFraction(job({ state: 'done' })), 1);
});

test('anyActive', () => {
    assert.equal(anyActive([]), false);
    assert.equal(anyActive([{ state: 'failed' }, { state: 'done' }].map((j) => /** @type {any} */ (j))), false);
    assert.equal(anyActive([{ state: 'failed' }, { state: 'queued' }].map((j) => /** @type {any} */ (j))), true);
});

test('splitAccepted keeps .json, .gz and Nsight .sqlite exports', () => {
    const { ok, skipped } = splitAccepted([
        { name: 'rank0.pt.trace.json' },
        { name: 'rank1.pt.trace.json.gz' },
        { name: 'TRACE.JSON' },
        { name: 'report1.sqlite' },
        { name: 'notes.txt' },
        { name: 'model.pt' },
    ]);
    assert.deepEqual(ok.map((f) => f.name), ['rank0.pt.trace.json', 'rank1.pt.trace.json.gz', 'TRACE.JSON', 'report1.sqlite']);
    assert.deepEqual(skipped.map((f) => f.name), ['notes.txt', 'model.pt']);
});

test('runs list filters become the API query; compare URLs for 2 and N runs', () => {
    assert.equal(runsQuery({}), '');
    assert.equal(runsQuery({ in: 'llm', tag: 'a b', meta: ' batch = 32 ', gpu: 'H100', since: '2026-11-01', until: '2026-11-02' }),
        '?project=llm&tag=a+b&meta.batch=32&gpu=H100&since=2026-11-01&until=2026-11-02');
    assert.equal(runsQuery({ in: '-' }), '?project=', 'no project');
    assert.equal(runsQuery({ meta: 'no equals' }), '');
    assert.deepEqual(parseMetaFilter('git.sha=abc=d'), { key: 'git.sha', value: 'abc=d' });
    assert.equal(parseMetaFilter('bad key=1'), null);
    assert.equal(compareUrl(['a']), null);
    assert.equal(compareUrl(['a', 'b']), './?compare=a,b');
    assert.equal(compareUrl(['a', 'b', 'c']), './?compare=a,b,c');
    assert.deepEqual(filterRuns([{ id: 'p', name: 'x', project: 'vision', meta: { batch: '64' } }], 'BATCH=64').map((r) => r.id), ['p']);
});

test('upload metadata: key=value pairs by commas or lines; a bad pair is refused by name', () => {
    assert.deepEqual(parseMetaList(' batch = 32, model=gpt\nmodel=llama ,'), { batch: '32', model: 'llama' });
    assert.deepEqual(parseMetaList(''), {});
    assert.throws(() => parseMetaList('batch=32, oops'), /oops/);
});
