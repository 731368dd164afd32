// Tests for web/js/api.js with a stubbed fetch — run with `node --test tests/web/`.
// Checks the contract with the server: relative paths, the CSRF header on
// writes, JSON bodies, and error messages taken from {"error": {...}}.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';

import * as api from '../../web/js/api.js';

const realFetch = globalThis.fetch;
/** @type {{url: string, init: any}[]} */
let calls = [];

/**
 * Replaces fetch with one that records calls and answers (status, body).
 * @param {number} status
 * @param {string} body
 * @param {string} [statusText]
 */
function answer(status, body, statusText = '') {
    calls = [];
    globalThis.fetch = /** @type {any} */ (
        async (/** @type {string} */ url, /** @type {any} */ init) => {
            calls.push({ url, init });
            return new Response(status === 204 ? null : body, { status, statusText });
        }
    );
}

afterEach(() => {
    globalThis.fetch = realFetch;
    api.installMock(null);
});

test('GET requests use relative paths and no CSRF header', async () => {
    answer(200, '{"runs":[{"id":"a"}],"jobs":[]}');
    const r = await api.listRuns();
    assert.deepEqual(r, { runs: [{ id: 'a' }], jobs: [] });
    assert.equal(calls[0].url, './api/runs');
    assert.equal(calls[0].init.method, 'GET');
    assert.equal(calls[0].init.headers[api.CSRF_HEADER], undefined);
});

test('listRuns tolerates missing arrays', async () => {
    answer(200, '{}');
    assert.deepEqual(await api.listRuns(), { runs: [], jobs: [] });
});

test('run ids are escaped into the path', async () => {
    answer(200, '{"id":"x"}');
    await api.getRun('a/../b?c');
    assert.equal(calls[0].url, './api/runs/a%2F..%2Fb%3Fc');
    answer(200, '{"id":3}');
    await api.getJob(3);
    assert.equal(calls[0].url, './api/jobs/3');
});

test('writes carry X-Traceboard-CSRF: 1 and a JSON body', async () => {
    answer(200, '{"id":"r1","name":"n"}');
    await api.updateRun('r1', { name: 'n', tags: ['a'] });
    assert.equal(calls[0].init.method, 'PATCH');
    assert.equal(calls[0].init.headers['X-Traceboard-CSRF'], '1');
    assert.equal(calls[0].init.headers['Content-Type'], 'application/json');
    assert.deepEqual(JSON.parse(calls[0].init.body), { name: 'n', tags: ['a'] });

    answer(204, '');
    assert.equal(await api.deleteRun('r1'), null);
    assert.equal(calls[0].init.method, 'DELETE');
    assert.equal(calls[0].init.headers['X-Traceboard-CSRF'], '1');
    assert.equal(calls[0].init.body, undefined);
});

test('errors carry the server message, code and status', async () => {
    answer(404, '{"error":{"code":"not_found","message":"run abc not found"}}', 'Not Found');
    await assert.rejects(api.getRun('abc'), (e) => {
        assert.ok(e instanceof api.ApiError);
        assert.ok(e instanceof Error);
        assert.equal(e.message, 'run abc not found');
        assert.equal(e.status, 404);
        assert.equal(e.code, 'not_found');
        return true;
    });
});

test('errors without a JSON body fall back to the status text', async () => {
    answer(502, '<html>Bad Gateway</html>', 'Bad Gateway');
    await assert.rejects(api.listRuns(), { message: '502 Bad Gateway', status: 502, code: 'http' });
    answer(500, '', '');
    await assert.rejects(api.listRuns(), { message: 'HTTP error 500' });
    answer(400, '{"error":{"code":"invalid"}}', 'Bad Request');
    await assert.rejects(api.listRuns(), { message: '400 Bad Request' });
});

test('network failures become ApiError with status 0', async () => {
    globalThis.fetch = async () => {
        throw new TypeError('fetch failed');
    };
    await assert.rejects(api.listRuns(), { status: 0, code: 'network' });
});

test('a success body that is not JSON is an error', async () => {
    answer(200, 'hello');
    await assert.rejects(api.listRuns(), { code: 'bad_response' });
});

test('errorFromResponse', () => {
    const e = api.errorFromResponse(413, 'Payload Too Large', '{"error":{"code":"too_large","message":"upload exceeds 4 GiB"}}');
    assert.equal(e.message, 'upload exceeds 4 GiB');
    assert.equal(e.code, 'too_large');
    assert.equal(api.errorFromResponse(413, 'Payload Too Large', 'nope').message, '413 Payload Too Large');
});

test('installMock answers instead of the network, undefined falls through', async () => {
    answer(200, '{"runs":[],"jobs":[{"id":1}]}');
    api.installMock((method, path) => (path === './api/runs/x' ? { id: 'x', method } : undefined));
    assert.deepEqual(await api.getRun('x'), { id: 'x', method: 'GET' });
    assert.equal(calls.length, 0);
    assert.deepEqual((await api.listRuns()).jobs, [{ id: 1 }]);
    assert.equal(calls.length, 1);
});

test('analysisUrl builds relative URLs and leaves out empty parameters', () => {
    assert.equal(api.analysisUrl('r1', 'overview'), './api/runs/r1/overview');
    assert.equal(
        api.analysisUrl('r1', 'kernels', { rank: 2, group: 'op', q: '', sort: null, order: undefined, offset: 0, limit: 100 }),
        './api/runs/r1/kernels?rank=2&group=op&offset=0&limit=100',
    );
    assert.equal(api.analysisUrl('a/b', 'memory/events', { q: 'a&b=<c>' }), './api/runs/a%2Fb/memory/events?q=a%26b%3D%3Cc%3E');
    assert.equal(api.analysisUrl('r1', 'operators', { format: 'csv' }), './api/runs/r1/operators?format=csv');
});

test('analysis calls GET their endpoint with the parameters', async () => {
    answer(200, '{"rank":0}');
    await api.getOverview('r1', null);
    assert.equal(calls.at(-1).url, './api/runs/r1/overview');
    await api.getOverview('r1', 3);
    assert.equal(calls.at(-1).url, './api/runs/r1/overview?rank=3');
    answer(200, '{"rows":[]}');
    await api.getOperators('r1', { group: 'stack', sort: 'calls' });
    assert.equal(calls.at(-1).url, './api/runs/r1/operators?group=stack&sort=calls');
    await api.getKernels('r1', { q: 'gemm' });
    assert.equal(calls.at(-1).url, './api/runs/r1/kernels?q=gemm');
    await api.getMemory('r1', { device: 'cpu', start_us: 1.5, end_us: 2, points: 800 });
    assert.equal(calls.at(-1).url, './api/runs/r1/memory?device=cpu&start_us=1.5&end_us=2&points=800');
    await api.getMemoryEvents('r1', { min_bytes: 1024 });
    assert.equal(calls.at(-1).url, './api/runs/r1/memory/events?min_bytes=1024');
    assert.equal(calls.at(-1).init.method, 'GET');
});

test('a 409 from an analysis endpoint keeps its status and message', async () => {
    answer(409, '{"error":{"code":"no_analysis","message":"run r1 was imported before analyses existed"}}', 'Conflict');
    await assert.rejects(api.getOverview('r1', null), (e) => {
        assert.ok(e instanceof api.ApiError);
        assert.equal(e.status, 409);
        assert.equal(e.code, 'no_analysis');
        assert.equal(e.message, 'run r1 was imported before analyses existed');
        return true;
    });
});
