// Issue 15: an unclosed U+202E (RIGHT-TO-LEFT OVERRIDE) in a trace string
// (GPU, run, file, operator name) must not reverse the text around it: every
// trace-derived string on the pages is bidi-isolated (<bdi>, or
// unicode-bidi: isolate on the element holding it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, startBrowser } from './lib.mjs';

const RLO = '\u202E';
const GPU = `NVIDIA ${RLO}H100 evil`;
const RUN = `run ${RLO}name`;
const FILE = `f${RLO}ile.pt.trace.json`;

let session, srv, page, errors, id;

before(async () => {
  session = await startBrowser();
  ({ srv, page, errors } = session);
  const trace = {
    schemaVersion: 1,
    deviceProperties: [{ id: 0, name: GPU, totalGlobalMem: 85017493504, computeMajor: 9, computeMinor: 0, numSms: 132 }],
    traceEvents: [
      { ph: 'X', cat: 'user_annotation', name: 'ProfilerStep#1', pid: 1, tid: 1, ts: 1000, dur: 1000, args: {} },
      { ph: 'X', cat: 'cpu_op', name: `aten::${RLO}mm`, pid: 1, tid: 1, ts: 1100, dur: 300, args: { 'External id': 1 } },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 1150, dur: 20, args: { 'External id': 1, correlation: 7 } },
      { ph: 'X', cat: 'kernel', name: 'gemm', pid: 0, tid: 7, ts: 1200, dur: 400, args: { device: 0, stream: 7, correlation: 7 } },
    ],
  };
  id = await srv.uploadBody(JSON.stringify(trace), FILE, RUN);
  await page.goto(srv.url); // logs in (cookie)
});

after(async () => { await session?.close(); });

/** For each text, the innermost element under root holding it: whether
 * its computed unicode-bidi isolates it, and its box. */
async function isolation(root, texts) {
  return page.evaluate(([sel, ts]) => {
    const box = document.querySelector(sel);
    if (!box) return null;
    const out = {};
    for (const t of ts) {
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      let n, el = null;
      while ((n = walker.nextNode())) if (n.nodeValue.includes(t)) { el = n.parentElement; break; }
      if (!el) { out[t] = null; continue; }
      const cs = getComputedStyle(el).unicodeBidi;
      // the element holding exactly this string (not a wider line) isolates it
      const own = el.textContent.trim() === t;
      const r = el.getBoundingClientRect();
      out[t] = { own, isolate: /isolate|plaintext/.test(cs), unicodeBidi: cs, tag: el.tagName, left: r.left, right: r.right };
    }
    return out;
  }, [root, texts]);
}

test('run header: the run name and the GPU are isolated, the facts after them read left to right', async () => {
  await page.goto(`${srv.base}/?run=${id}&view=info`);
  await page.waitForSelector('.tb-subtitle');
  const got = await isolation('main', [RUN, GPU]);
  await page.screenshot({ path: join(SHOTS, 'bidi-run.png'), fullPage: true });
  for (const t of [RUN, GPU]) {
    assert.ok(got[t], `${JSON.stringify(t)} is shown`);
    assert.ok(got[t].own && got[t].isolate, `${JSON.stringify(t)} sits in an element of its own that isolates it: ${JSON.stringify(got[t])}`);
  }
  // layout: the run id comes after the GPU in the facts, so it must be laid
  // out to its right (an override leaking out would put it to the left)
  const pos = await page.evaluate((gpu) => {
    const sub = document.querySelector('.tb-subtitle');
    const idEl = sub.querySelector('[title="run id"]');
    const gpuEl = [...sub.querySelectorAll('*')].find((e) => e.textContent === gpu);
    return { id: idEl.getBoundingClientRect().left, gpu: gpuEl ? gpuEl.getBoundingClientRect().right : null };
  }, GPU);
  assert.ok(pos.gpu !== null && pos.id >= pos.gpu - 0.5, `run id at x=${pos.id}, GPU ends at x=${pos.gpu}`);
  assert.deepEqual(errors, []);
});

test('runs list, Info tab and Operators: trace strings isolated', async () => {
  await page.goto(`${srv.base}/`);
  await page.waitForSelector(`text=${RUN}`);
  let got = await isolation('main', [RUN, GPU]);
  for (const t of [RUN, GPU]) assert.ok(got[t] && got[t].own && got[t].isolate, `runs list ${JSON.stringify(t)}: ${JSON.stringify(got[t])}`);
  await page.goto(`${srv.base}/?run=${id}&view=info`);
  await page.waitForSelector('.tb-subtitle');
  got = await isolation('main', [FILE]);
  assert.ok(got[FILE] && got[FILE].own && got[FILE].isolate, `Info file: ${JSON.stringify(got[FILE])}`);
  await page.goto(`${srv.base}/?run=${id}&view=operators`);
  await page.waitForSelector(`text=aten::${RLO}mm`);
  got = await isolation('main', [`aten::${RLO}mm`]);
  assert.ok(got[`aten::${RLO}mm`].isolate, `operator: ${JSON.stringify(got[`aten::${RLO}mm`])}`);
  assert.deepEqual(errors, []);
});
