// Critical path on the shared real traces (`traceboard analyze --json`, the
// `analyses.critical_path` object of each rank): per step the categories add
// up exactly to the step's duration, which is the step the analysis reports;
// totals are the sums of the steps and the shares their fractions; and the
// scenarios built to show one bound are bound by it (matmul_fp32_strict by
// GPU compute, dataloader_workers0 by data loading). Skipped when
// ../shared/traces is absent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TRACES, analyzeJson } from './tracejson.mjs';

const CATS = ['cpu', 'dataloader', 'gpu_compute', 'communication', 'launch_overhead', 'kernel_gap'];
const EXPECT = { matmul_fp32_strict: 'gpu_compute', dataloader_workers0: 'dataloader' };

const scenarios = existsSync(TRACES)
  ? readdirSync(TRACES).filter((d) => statSync(join(TRACES, d)).isDirectory()).sort()
  : [];

for (const sc of scenarios) {
  test(`critical path of ${sc}`, () => {
    const doc = analyzeJson(join(TRACES, sc) + '/');
    assert.ok(doc.ranks.length >= 1, 'ranks');
    for (const rk of doc.ranks) {
      const cp = rk.analyses && rk.analyses.critical_path;
      assert.ok(cp && Array.isArray(cp.steps), `rank ${rk.rank}: critical_path.steps`);
      assert.equal(cp.steps.length, rk.steps.length, `rank ${rk.rank}: one path per step`);
      const totals = Object.fromEntries(CATS.map((c) => [c, 0]));
      cp.steps.forEach((s, i) => {
        const where = `${sc} rank ${rk.rank} ${s.name}`;
        assert.deepEqual(Object.keys(s.by).sort(), CATS.map((c) => c + '_ns').sort(), where);
        let sum = 0;
        for (const c of CATS) {
          const v = s.by[c + '_ns'];
          assert.ok(Number.isInteger(v) && v >= 0, `${where}: ${c} = ${v}`);
          sum += v;
          totals[c] += v;
        }
        assert.equal(sum, s.dur, `${where}: categories add up to the step`);
        // the step the analysis reports (µs, rounded to ns in JSON)
        assert.equal(s.name, rk.steps[i].name, where);
        assert.ok(Math.abs(s.dur / 1000 - rk.steps[i].dur_us) < 0.01, `${where}: ${s.dur} ns vs ${rk.steps[i].dur_us} µs`);
        const top = CATS.reduce((a, c) => (s.by[c + '_ns'] > s.by[a + '_ns'] ? c : a), CATS[0]);
        assert.equal(s.bound_by, top, `${where}: bound_by is the largest category`);
        assert.ok(s.segments >= 1 && s.segments <= 50000, `${where}: segments ${s.segments}`);
      });
      const all = CATS.reduce((a, c) => a + totals[c], 0);
      for (const c of CATS) {
        assert.equal(cp.totals[c + '_ns'], totals[c], `${sc} rank ${rk.rank}: total ${c}`);
        if (all) assert.ok(Math.abs(cp.shares[c] - totals[c] / all) < 1e-9, `${sc}: share ${c}`);
      }
      if (EXPECT[sc]) {
        assert.equal(cp.bound_by, EXPECT[sc], `${sc}: ${JSON.stringify(cp.shares)}`);
        for (const s of cp.steps) assert.equal(s.bound_by, EXPECT[sc], `${sc} ${s.name}`);
      }
    }
  });
}

test('shared traces present (else the cases above were skipped)', { skip: scenarios.length === 0 }, () => {
  assert.ok(scenarios.length > 0);
});
