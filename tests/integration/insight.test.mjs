// Insight on real hardware: the kernel taxonomy and the rules against the
// public corpus (AMD MI300/MI210, Blackwell B200, DeepSeek's DeepEP, V100)
// and our own H200 captures (tests/data/h200). Each case is a figure or a
// finding that was wrong before, and a look-alike that must stay quiet.
// Corpus cases skip when ../shared is not there; the captures always run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SHARED } from './lib.mjs';
import { analyzeJson } from './tracejson.mjs';

const CORPUS = join(SHARED, 'corpus');
const H200 = resolve('tests/data/h200');
const TRACES = join(SHARED, 'traces');

const fired = (rep, id) => rep.recommendations.filter((r) => r.id === id);

// [path, checks(rep)]: path under CORPUS, TRACES or H200
const cases = [
  // AMD matrix cores: Tensile _MI GEMMs and Triton attn_fwd (was 0 %)
  // MI300 resnet_act_checkpoint: 94 % "busy", 2.4 ms of compute in 18.9 ms steps
  [join(CORPUS, 'tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz'), (rep) => {
    const r = rep.ranks[0];
    assert.ok(r.gpu_utilization > 0.9 && r.compute_utilization < 0.35, `${r.gpu_utilization} busy, ${r.compute_utilization} compute`);
    assert.ok(fired(rep, 'low_gpu_utilization').length > 0);
  }],
  [join(CORPUS, 'tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz'), (rep) => {
    assert.ok(rep.ranks[0].tensor_core_share > 0.45, `MI300 Qwen TC share ${rep.ranks[0].tensor_core_share}`);
    assert.equal(fired(rep, 'enable_amp').length, 0, 'bf16 MFMA GEMMs are not "tensor cores unused"');
    // ROCm numbers the kernels' GPU 2 (HSA agents, CPUs first); deviceProperties and memory say 0
    assert.equal(rep.ranks[0].device.name, 'AMD Instinct MI300X VF');
    assert.equal(rep.ranks[0].device.memory_bytes, 205571227648);
  }],
  // MIOpen SubTensorOp elementwise kernels are not tensor-core work; xdlops igemm is
  [join(CORPUS, 'tracelens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz'), (rep) => {
    const s = rep.ranks[0].tensor_core_share;
    assert.ok(s > 0.25 && s < 0.4, `MI210 TC share ${s} (was 0.09: exactly the SubTensorOp kernels)`);
    const sub = rep.ranks[0].top_kernels.filter((k) => /SubTensorOp/.test(k.name));
    assert.ok(sub.length > 0, "SubTensorOp kernels are among the top kernels");
    for (const k of sub) assert.equal(k.tensor_cores, false, k.name);
  }],
  // Blackwell block-scaled FP8/FP4 bmm (48 % of kernel time) is tensor-core work
  [join(CORPUS, 'tracelens/tests/traces/b200/eager_trace.json.gz'), (rep) => {
    assert.ok(rep.ranks[0].tensor_core_share > 0.6, `B200 TC share ${rep.ranks[0].tensor_core_share}`);
  }],
  // DeepEP dispatch/combine is communication, not compute
  [join(CORPUS, 'deepseek_profile_data/train.json.gz'), (rep) => {
    const b = rep.ranks[0].average.breakdown_us;
    assert.ok(b.communication > 0.4 * rep.ranks[0].average.dur_us, `DeepEP comm ${b.communication} µs`);
  }],
  // old cuDNN backward ops are AMP-eligible: high, ~30 ms (was medium, 10.6 ms)
  [join(CORPUS, 'kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz'), (rep) => {
    const [amp] = fired(rep, 'enable_amp');
    assert.ok(amp, 'enable_amp on the V100 FP32 ResNet-50');
    assert.equal(amp.severity, 'high');
    assert.ok(amp.evidence.eligible_pct > 60 && amp.evidence.eligible_pct < 75, `eligible ${amp.evidence.eligible_pct} %`);
    // ~67 ms of GPU compute on the path per step: the 33 ms saving stands (no cap)
    assert.equal(amp.evidence.saving_cap, undefined);
    assert.ok(amp.saving_us > 25000, `${amp.saving_us} µs`);
    // a V100 (cc 7.0) has no BF16/TF32 tensor cores: fp16 with a GradScaler
    assert.match(amp.snippet, /GradScaler/);
    assert.doesNotMatch(amp.snippet, /bfloat16/);
  }],
  // unfused AdamW: 53 % and 68 % of kernel time
  [join(TRACES, 'matmul_amp'), (rep) => {
    const [f] = fired(rep, 'optimizer_dominated');
    assert.ok(f, 'optimizer_dominated on matmul_amp');
    assert.ok(f.evidence.optimizer_pct > 45 && f.evidence.optimizer_pct < 60, `${f.evidence.optimizer_pct} %`);
    assert.equal(f.evidence.optimizer, 'AdamW');
  }],
  [join(TRACES, 'torch_compile'), (rep) => {
    const [f] = fired(rep, 'optimizer_dominated');
    assert.ok(f && f.evidence.optimizer_pct > 60 && f.evidence.optimizer_pct < 75, 'torch_compile: 68 %');
  }],
  // a compiled model is not told to compile: CUDA graphs (reduce-overhead) instead
  [join(TRACES, 'torch_compile'), (rep) => {
    const [f] = fired(rep, 'kernel_launch_bound');
    assert.ok(f);
    assert.match(f.snippet, /reduce-overhead/);
    for (const x of rep.recommendations)
      assert.doesNotMatch(x.snippet || '', /torch\.compile\(model\)(?!.*reduce-overhead)/, x.id);
  }],
  // 404 all-reduces per step (HTA's df_index_resolver) -> bucketing; DLRM's few large ones do not
  [join(CORPUS, 'hta/tests/data/df_index_resolver/df_index_resolver.json.gz'), (rep) => {
    const [f] = fired(rep, 'many_small_collectives');
    assert.ok(f && Math.round(f.evidence.per_step) === 404, 'df_index_resolver: 404 collectives per step');
  }],
  [join(CORPUS, 'param/et_replay/tests/inputs/dlrm_kineto'), (rep) => {
    assert.equal(fired(rep, 'many_small_collectives').length, 0);
    // ranks 1 and 3 look 55-62 % busy, but most of it is NCCL waiting on peers: compute is ~6 %
    for (const r of [1, 3]) {
      const rk = rep.ranks.find((x) => x.rank === r);
      assert.ok(rk.gpu_utilization > 0.5 && rk.compute_utilization < 0.1, `rank ${r}: ${rk.gpu_utilization} busy, ${rk.compute_utilization} compute`);
      assert.ok(fired(rep, 'low_gpu_utilization').some((f) => f.rank === r), `rank ${r} gets low_gpu_utilization`);
    }
    // the host-side nccl: spans the main thread waits in are communication on the critical path
    const r7 = rep.ranks.find((x) => x.rank === 7);
    assert.ok(r7.analyses.critical_path.shares.communication > 0.01, 'rank 7 waits in collectives on its path');
    assert.equal(fired(rep, 'shared_gpu').length, 0, 'eight ranks on eight GPUs');
  }],
  [join(TRACES, 'ddp_gloo_4ranks'), (rep) => {
    const [f] = fired(rep, 'shared_gpu');
    assert.ok(f && f.rank === null, 'four ranks on one H100: a run-level finding');
    assert.deepEqual(f.evidence.ranks, [0, 1, 2, 3]);
  }],
  [join(TRACES, 'transformer_with_stack'), (rep) => {
    assert.equal(fired(rep, 'optimizer_dominated').length, 0, 'a GEMM-heavy step is not optimizer-dominated');
    assert.equal(fired(rep, 'unfused_attention').length, 0);
  }],
  // attention: by hand vs SDPA on the same shapes (H200), owlv2's softmax (47 %) vs BERT-small
  [join(H200, 'attention_unfused.pt.trace.json.gz'), (rep) => {
    const [f] = fired(rep, 'unfused_attention');
    assert.ok(f, 'unfused_attention on softmax(QK^T)V');
    assert.ok(f.evidence.softmax_us > 0 && f.evidence.bmm_us > 0);
  }],
  [join(H200, 'attention_sdpa.pt.trace.json.gz'), (rep) => {
    assert.equal(fired(rep, 'unfused_attention').length, 0, 'SDPA is fused');
  }],
  [join(CORPUS, 'tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz'), (rep) => {
    const [f] = fired(rep, 'unfused_attention');
    assert.ok(f && f.evidence.softmax_us > 0.4 * f.evidence.kernel_us, 'owlv2: softmax ~47 % of kernel time');
  }],
  // launch-bound under the profiler: 14 ms profiled steps, 7.45 ms without it; the saving
  // must fit in the unprofiled step's idle time (was 10.6 ms: more than that step's idle)
  [join(H200, 'launch_bound.pt.trace.json.gz'), (rep) => {
    const [f] = fired(rep, 'kernel_launch_bound');
    assert.ok(f, 'launch-bound');
    const facts = JSON.parse(readFileSync(join(H200, 'facts.json'), 'utf8')).launch_bound;
    const wall = [...facts.step_wall_s_unprofiled].sort((a, b) => a - b)[facts.step_wall_s_unprofiled.length >> 1] * 1e6;
    const idle = wall - rep.ranks[0].average.breakdown_us.kernel;
    assert.ok(f.saving_us > 0 && f.saving_us <= idle, `saving ${f.saving_us} µs, unprofiled idle ${idle} µs`);
    assert.ok(f.evidence.profiler_overhead_us > 5000, 'the profiler cost is estimated and said');
    assert.ok(f.evidence.lines.some((l) => /The profiler itself adds about/.test(l)));
  }],
  [join(CORPUS, 'tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz'), (rep) => {
    assert.equal(fired(rep, 'unfused_attention').length, 0);
  }],
];

// ProfilerStep#1 left open 13.3 s around 1.5 ms of work: the step is clipped to the activity
cases.push([join(CORPUS, 'hta/tests/data/triton_example/triton_example.json.gz'), (rep) => {
  const [st] = rep.ranks[0].steps;
  assert.ok(st.dur_us < 5000 && st.host_dur_us > 13e6, `step ${st.dur_us} µs of a ${st.host_dur_us} µs span`);
  assert.ok(rep.ranks[0].notes.some((n) => /clipped/.test(n)), 'a note says so');
  for (const f of rep.recommendations) assert.ok(f.saving_us <= st.dur_us, `${f.id} saves no more than the step`);
}]);

// 64 ms gaps whose next op was queued 65 ms earlier: not "Python between ops"
cases.push([join(CORPUS, 'hta/tests/data/negative_queue_length_values_check/rank0.json.gz'), (rep) => {
  const [f] = fired(rep, 'gpu_idle_gaps');
  assert.ok(f && f.evidence.main_host === 'queued', `main host ${f && f.evidence.main_host}`);
  assert.doesNotMatch(f.title, /Python/);
  const [u] = fired(rep, 'low_gpu_utilization');
  assert.match(u.title, /queued ops waiting on a dependency/);
}]);

// vLLM's CUDA-graph capture on an MI300X: 428 launches recorded, 7 kernels run. Not a
// utilization problem; the 178 GiB KV cache reserved before the trace is a memory one
cases.push([join(CORPUS, 'tracelens/tests/traces/inference/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz'), (rep) => {
  const ids = rep.recommendations.map((r) => r.id);
  for (const id of ['low_gpu_utilization', 'gpu_idle_gaps', 'kernel_launch_bound', 'low_gpu_memory'])
    assert.ok(!ids.includes(id), `${id} on a graph capture`);
  const [m] = fired(rep, 'memory_near_limit');
  assert.ok(m && /before the trace began/.test(m.advice), 'the peak was reserved before the trace');
}]);

// a trace of a few µs (one 0.02 µs kernel in 0.13 µs) is too short to judge
for (const f of ['before_fix_trace.json', 'after_fix_trace.json'])
  cases.push([join(CORPUS, 'kineto/docs/traces', f), (rep) => {
    assert.deepEqual(rep.recommendations.map((r) => r.id), [], 'no finding on 0.13 µs of activity');
  }]);

// Nsight captures of C/MPI programs: no Python in the evidence or titles
for (const f of ['cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite', 'saxpy-mpi-cuda_nsys_perlmutter0.sqlite'])
  cases.push([join(CORPUS, 'pipit/pipit/tests/data', f), (rep) => {
    assert.ok(rep.recommendations.length > 0);
    for (const x of rep.recommendations)
      assert.doesNotMatch([x.title, ...x.evidence.lines].join('\n'), /Python|NumPy/, x.id);
  }]);

// inference traces (no backward pass, no optimizer): no advice about training
const TRAINING_WORDS = /learning rate|lr=|optimizer|backward|GradScaler|zero_grad|AdamW/;
for (const p of [join(H200, 'inference_fp16.pt.trace.json.gz'),
  join(CORPUS, 'tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz'),
  join(CORPUS, 'tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz'),
  join(CORPUS, 'tracelens/tests/traces/b200/eager_trace.json.gz'),
  join(CORPUS, 'tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz')]) {
  cases.push([p, (rep) => {
    assert.ok(rep.recommendations.length > 0, 'the trace has findings to check');
    for (const f of rep.recommendations) {
      const text = [f.advice, f.snippet || '', ...f.evidence.lines].join('\n');
      assert.doesNotMatch(text, TRAINING_WORDS, `${f.id} speaks of training in an inference trace`);
    }
  }]);
}

// Savings capped by the critical path (rules_cap.c). A fix cannot shorten the step by more than
// its side's time on the path: capped findings say so and rank by the capped saving.
const capOf = (f) => f.evidence.saving_cap;
const perStep = (rk, cat) => {
  const cp = rk.analyses.critical_path;
  return cp.totals[`${cat}_ns`] / 1000 / cp.steps.length;
};

// DDP over gloo: ranks 0, 1 and 3 wait in backward() outside any span while the gloo thread
// all-reduces; that wait is communication on their path (was "cpu 98 %, communication 0 %")
cases.push([join(TRACES, 'ddp_gloo_4ranks'), (rep) => {
  for (const r of [0, 1, 3]) {
    const cp = rep.ranks.find((x) => x.rank === r).analyses.critical_path;
    assert.ok(cp.shares.communication > 0.5 && cp.shares.cpu < 0.3, `rank ${r}: ${JSON.stringify(cp.shares)}`);
    assert.equal(cp.bound_by, 'communication');
  }
  // rank 2 is the straggler: its own host work holds the step, not a wait
  const cp2 = rep.ranks.find((x) => x.rank === 2).analyses.critical_path;
  assert.equal(cp2.bound_by, 'cpu');
  // the run-level communication findings fit in the path's communication: not capped
  for (const id of ['communication_heavy', 'ddp_backend']) {
    const [f] = fired(rep, id);
    assert.ok(f && !capOf(f), `${id} within its cap`);
  }
}]);

// A conv net in NCHW (ResNet, FP32 on an RTX 2080 Ti): a 14.5 s step the host holds (data
// loading, host work). AMP would halve 2.8 s of GEMM/conv kernels, but only ~136 ms of GPU time
// lies on the path: the GPU-side fix is capped and ranks below the host-side findings
// (it ranked third, above pageable_memcpy, at 1.38 s)
cases.push([join(CORPUS, 'param/et_replay/tests/inputs/resnet_kineto.json.gz'), (rep) => {
  const rk = rep.ranks[0];
  const [amp] = fired(rep, 'enable_amp');
  assert.ok(amp && capOf(amp), 'enable_amp capped');
  assert.equal(capOf(amp).side, 'gpu');
  assert.ok(capOf(amp).estimate_us > 1e6 && amp.saving_us < 0.25 * capOf(amp).estimate_us, `${amp.saving_us} µs`);
  const gpu = perStep(rk, 'gpu_compute') + perStep(rk, 'kernel_gap');
  assert.ok(amp.saving_us <= gpu + capOf(amp).profiler_us + 1, `${amp.saving_us} > ${gpu} + profiler`);
  assert.ok(amp.evidence.lines.some((l) => /^Capped at .* the critical path spends only .* on GPU compute/.test(l)));
  const ids = rep.recommendations.map((f) => f.id);
  for (const id of ['dataloader_bound', 'gpu_idle_gaps', 'pageable_memcpy'])
    assert.ok(ids.indexOf(id) < ids.indexOf('enable_amp'), `${id} ranks above enable_amp: ${ids}`);
  // the host-side findings fit in the host's part of the path: not capped
  for (const id of ['dataloader_bound', 'gpu_idle_gaps']) assert.ok(!capOf(fired(rep, id)[0]), id);
}]);

// HTA's sampled rank: ~100 ms of collectives per step run beside the host's work; the path is
// the host's (99 %). The communication findings are capped, the host-side idle-gap one is not.
cases.push([join(CORPUS, 'hta/tests/data/trace_filter/sampled_rank-0.json.gz'), (rep) => {
  const rk = rep.ranks[0];
  for (const id of ['communication_heavy', 'comm_not_overlapped']) {
    const [f] = fired(rep, id);
    assert.ok(f && capOf(f) && capOf(f).side === 'comm', `${id} capped`);
    const comm = perStep(rk, 'communication') + perStep(rk, 'kernel_gap');
    assert.ok(f.saving_us <= comm + capOf(f).profiler_us + 1 && f.saving_us < 10000, `${id}: ${f.saving_us} µs`);
    // under 1 % of the step once capped: graded low, not the high the estimate gave
    assert.equal(f.severity, 'low', id);
    assert.equal(capOf(f).severity_was, 'high', id);
  }
  const [gaps] = fired(rep, 'gpu_idle_gaps');
  assert.ok(gaps && !capOf(gaps) && gaps.saving_us > 200000, 'gpu_idle_gaps keeps its 281 ms');
  assert.equal(rep.recommendations[0].id, 'gpu_idle_gaps');
}]);

// DeepSeek's training step: DeepEP's dispatch/combine (113 ms of 130) overlap the grouped GEMMs,
// which hold the path (91 %): halving the communication cannot save 57 ms
cases.push([join(CORPUS, 'deepseek_profile_data/train.json.gz'), (rep) => {
  const [f] = fired(rep, 'communication_heavy');
  assert.ok(f && capOf(f), 'communication_heavy capped');
  assert.ok(capOf(f).estimate_us > 50000 && f.saving_us < 15000, `${f.saving_us} µs`);
  // ~9 % of the step once capped: medium, not high
  assert.equal(f.severity, 'medium');
  assert.equal(capOf(f).severity_was, 'high');
}]);

for (const [path, check] of cases) {
  const name = path.replace(SHARED + '/', '').replace(resolve('.') + '/', '');
  test(name, (t) => {
    if (!existsSync(path)) { t.skip(`${path} not found`); return; }
    check(analyzeJson(path));
  });
}
