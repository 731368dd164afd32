/*
 * kclass.h — what a GPU kernel or host op is, judged from its name: tensor-
 * core work, a collective (communication), a tensor-core-eligible operator,
 * a DataLoader call, a profiler step.
 *
 * Pure functions over NUL-terminated names; no state, callable from any
 * thread. The lists follow how the kernels are built rather than a list of
 * known names: cuBLAS/cuDNN/CUTLASS name their tensor-core kernels after
 * the MMA instruction or tile shape (hmma, 16816, wgmma, tensorop, nvjet)
 * and their SIMT kernels after the FMA they use (ffma, simt, sgemm); an
 * `xmma` kernel is tensor-core work only when its element types are ones
 * tensor cores take (f16, bf16, tf32, fp8, int8) and it is not an FFMA
 * kernel — on an H100 an FP32 GEMM is `sm80_xmma_gemm_f32f32_..._ffma_...`.
 */
#ifndef TB_KCLASS_H
#define TB_KCLASS_H

/* 1 when the kernel runs on tensor cores. */
int kclass_tensor_core(const char *name);

/* 1 when the kernel is a collective / communication kernel (NCCL, RCCL,
 * HCCL, MSCCL, NVSHMEM, custom all-reduce ...). */
int kclass_comm_kernel(const char *name);

/* 1 when a host span is a communication op: its name starts with one of
 * kclass_comm_op_prefixes (KCLASS_COMM_OP_PREFIXES of them, then NULL:
 * "nccl:", "gloo:", ...), which a reader can look up by name prefix
 * instead of testing every span. */
int kclass_comm_op(const char *name);
#define KCLASS_COMM_OP_PREFIXES 7
extern const char *const kclass_comm_op_prefixes[KCLASS_COMM_OP_PREFIXES + 1];

/* 1 when the operator could run on tensor cores (matmul, linear, conv,
 * bmm, attention ... and their backward ops), as autocast's lists. */
int kclass_tc_eligible_op(const char *name);

/* 1 for `enumerate(DataLoader)#...__next__` and DataPipe spans. */
int kclass_dataloader(const char *name);

/* 1 for a training-step span: PyTorch's `ProfilerStep#N`, or a JAX /
 * TensorFlow step marker as the Chrome importer names it, `<name>#<N>`
 * (N digits only) whose name says step, train, eval, test, predict or
 * iter: `train#3` from StepTraceAnnotation("train", step_num=3) or Keras'
 * Trace("train", step_num=3). */
int kclass_profiler_step(const char *name);

#endif
