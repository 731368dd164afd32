// Issue 21: "Operators tab on an Nsight run is empty (0 operators). Show
// what the export has instead: CUDA API calls and NVTX ranges with calls
// and times." On ../shared/corpus's saxpy MPI+CUDA export (Nsight 2022.2),
// through the API and in the browser: the rows are its CUDA API calls, with
// the device time of what each launched, and its NVTX ranges (MPI_* from
// the MPI NVTX domain); the tab says what they are. Screenshot:
// operators-nsys.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { SHARED } from '../integration/lib.mjs';
import { SHOTS, startBrowser } from './lib.mjs';

const NSYS = join(SHARED, 'corpus/pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite');

let session, srv, page, errors, id;

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  await page.goto(srv.url); // the token link logs in
  await page.waitForSelector('.tb-drop');
  if (existsSync(NSYS)) id = await srv.uploadBody(readFileSync(NSYS), basename(NSYS), 'nsys saxpy');
});

after(async () => { await session?.close(); });

test('API: the operators of an Nsight export are its CUDA API calls and NVTX ranges', async (t) => {
  if (!id) return t.skip(`${NSYS} is not there`);
  const p = await srv.json(`/api/runs/${id}/operators?limit=1000`);
  assert.equal(p.source, 'cuda_api_nvtx');
  const by = Object.fromEntries(p.rows.map((r) => [r.name, r]));
  // the export's own counts (CUPTI_ACTIVITY_KIND_RUNTIME, NVTX_EVENTS)
  assert.equal(by.cudaMemcpy?.calls, 15, JSON.stringify(p.rows.map((r) => r.name)));
  assert.equal(by.cudaLaunchKernel?.calls, 5);
  assert.equal(by.cudaMalloc?.calls, 15);
  assert.equal(by.MPI_Init?.calls, 1, 'an NVTX range');
  assert.ok(by.MPI_Send?.calls >= 1);
  // device time: what each call launched; a launch runs the kernels, a memcpy the copies
  const kernels = await srv.json(`/api/runs/${id}/kernels?limit=1000`);
  const kernelUs = kernels.rows.reduce((s, r) => s + r.total_us, 0);
  assert.ok(Math.abs(by.cudaLaunchKernel.device_self_us - kernelUs) < 0.01, `${by.cudaLaunchKernel.device_self_us} vs ${kernelUs}`);
  assert.ok(by.cudaMemcpy.device_self_us > 0);
  assert.equal(by.cudaMalloc.device_self_us, 0);
  for (const r of p.rows) assert.ok(r.host_self_us > 0 && r.host_total_us >= r.host_self_us - 1e-6, r.name);
  assert.equal(p.rows.filter((r) => r.tc_eligible).length, 0, 'an API call is no matmul');
  // a Kineto run keeps its operators
  const amp = join(SHARED, 'traces/matmul_amp');
  const file = join(amp, readdirSync(amp).find((f) => f.endsWith('.pt.trace.json.gz')));
  const kin = await srv.json(`/api/runs/${await srv.uploadBody(readFileSync(file), basename(file), 'amp')}/operators`);
  assert.equal(kin.source, 'operators');
  assert.ok(kin.rows.some((r) => r.name.startsWith('aten::')));
});

test('browser: the Operators tab lists them and says what they are', async (t) => {
  if (!id) return t.skip(`${NSYS} is not there`);
  errors.length = 0;
  await page.goto(`${srv.base}/?run=${id}&view=operators`);
  await page.waitForSelector('table[aria-label="Operators"] tbody tr td');
  const body = await page.locator('table[aria-label="Operators"] tbody').innerText();
  for (const name of ['cudaMemcpy', 'cudaLaunchKernel', 'MPI_Init']) assert.match(body, new RegExp(name));
  assert.match(await page.locator('table[aria-label="Operators"] thead').textContent(), /API call \/ NVTX range/);
  assert.match(await page.locator('.tb-table-box').first().innerText(), /CUDA API calls and NVTX ranges/);
  assert.equal(await page.getByText('0 operators').count(), 0);
  await page.screenshot({ path: join(SHOTS, 'operators-nsys.png'), fullPage: true });
  assert.deepEqual(errors, []);
});
