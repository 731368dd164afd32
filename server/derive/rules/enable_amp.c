/* enable_amp — matmul/conv/attention work runs on the GPU's SIMT units
 * although the GPU has tensor cores (compute capability >= 7.0), and that
 * work is a real part of the step (>= 5 % of it). The time
 * is read from the stored tables: operators that autocast would send to
 * tensor cores (op_stat.tc_eligible, device time of the kernels they
 * launch) against kernels named as tensor-core work (kclass.h). */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/stats_read.h"

/* SIMT FP32 GEMMs against bf16/TF32 tensor cores run several times slower
 * (H100: 67 vs 495+ dense TFLOPS); assume only half of the eligible
 * non-tensor-core time is saved, a floor that memory-bound kernels meet. */
#define AMP_SAVED_FRACTION 0.5
/* Least share of the average step the SIMT matmul time must hold. */
#define MIN_STEP_SHARE 0.05

static const char advice_torch[] =
    "Run the matrix multiplications in reduced precision so they use tensor cores: wrap the forward "
    "pass and loss in torch.autocast (bf16 needs no loss scaling; fp16 needs a GradScaler). If FP32 "
    "numerics must stay, allow TF32 for matmuls and convolutions, which also runs on tensor cores.";
static const char snippet_torch[] =
    "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
    "    loss = loss_fn(model(x), y)\n"
    "loss.backward()\n"
    "# or, keeping FP32 tensors:\n"
    "torch.set_float32_matmul_precision(\"high\")  # TF32 matmuls\n"
    "torch.backends.cudnn.allow_tf32 = True";
static const char advice_jax[] =
    "Compute in bfloat16 (cast params and activations, e.g. with jmp or flax dtype=jnp.bfloat16) or set "
    "jax.default_matmul_precision(\"tensorfloat32\") so XLA's dots use tensor cores.";
static const char advice_cuda[] =
    "Let the matrix multiplications and convolutions use tensor cores. With cuBLAS, keep FP32 data and "
    "allow TF32 (cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), or cublasGemmEx/cublasLtMatmul with "
    "CUBLAS_COMPUTE_32F_FAST_TF32), or store the inputs in FP16/BF16 and accumulate in FP32 "
    "(CUBLAS_COMPUTE_32F). With cuDNN, set CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION "
    "(cudnnSetConvolutionMathType). Hand-written matmul kernels run on the SIMT units: call cuBLAS/cuBLASLt "
    "or CUTLASS instead, or use WMMA (nvcuda::wmma) fragments.";
static const char snippet_cuda[] =
    "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH);  // FP32 data, TF32 tensor cores\n"
    "// or BF16 inputs with FP32 accumulation:\n"
    "cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha,\n"
    "             A, CUDA_R_16BF, lda, B, CUDA_R_16BF, ldb, &beta,\n"
    "             C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);\n"
    "cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, snippet_cuda },
};

/* Volta and Turing (compute capability 7.x) have FP16 tensor cores only: no
 * BF16, no TF32, so autocast to float16 with a GradScaler against underflow. */
static const char advice_torch_fp16[] =
    "Run the matrix multiplications in float16 so they use tensor cores: this GPU (compute capability 7.x, "
    "Volta/Turing) has FP16 tensor cores but none for BF16 or TF32. Wrap the forward pass and loss in "
    "torch.autocast with dtype=torch.float16 and scale the loss with a GradScaler so small gradients do not "
    "underflow.";
static const char snippet_torch_fp16[] =
    "scaler = torch.amp.GradScaler(\"cuda\")\n"
    "with torch.autocast(device_type=\"cuda\", dtype=torch.float16):\n"
    "    loss = loss_fn(model(x), y)\n"
    "scaler.scale(loss).backward()\n"
    "scaler.step(opt); scaler.update()\n"
    "opt.zero_grad(set_to_none=True)";
/* Ada/Hopper/Blackwell also have FP8 tensor cores. */
static const char advice_torch_fp8[] =
    "Run the matrix multiplications in reduced precision so they use tensor cores: wrap the forward "
    "pass and loss in torch.autocast with bf16 (no loss scaling needed), or, keeping FP32 tensors, allow "
    "TF32 for matmuls and convolutions. This GPU also has FP8 tensor cores: once bf16 runs, large GEMMs "
    "can go further with FP8 training (Transformer Engine, torchao.float8).";
/* Inference: no loss, no backward, no scaler. */
static const char advice_torch_infer[] =
    "Run inference in reduced precision so the matrix multiplications use tensor cores: cast the model to "
    "bf16 (or run the forward pass under torch.autocast), or, keeping FP32 weights, allow TF32 for matmuls "
    "and convolutions.";
static const char snippet_torch_infer[] =
    "model = model.to(torch.bfloat16).eval()\n"
    "with torch.inference_mode():\n"
    "    out = model(x.to(\"cuda\", torch.bfloat16))\n"
    "# or keep FP32 weights and allow TF32:\n"
    "torch.set_float32_matmul_precision(\"high\")";
static const char advice_torch_infer_fp16[] =
    "Run inference in float16 so the matrix multiplications use tensor cores: this GPU (compute capability "
    "7.x, Volta/Turing) has FP16 tensor cores only. Cast the model to float16 or run the forward pass under "
    "torch.autocast(dtype=torch.float16); inference needs no loss scaling.";
static const char snippet_torch_infer_fp16[] =
    "model = model.half().eval()\n"
    "with torch.inference_mode():\n"
    "    out = model(x.to(\"cuda\", torch.float16))";

/* The PyTorch advice for GPU g (compute capability >= 7.0), training or
 * not. AMD reports its gfx version as the capability (an MI210, gfx90a,
 * says 9.0): every CDNA GPU takes bf16, and only the MI300 series FP8. */
static struct rules_advice torch_advice(const struct rules_gpu *g, int training)
{
    double cc = g->cc;
    if (strstr(g->name, "AMD") || strstr(g->name, "Radeon") || strstr(g->name, "Instinct"))
        cc = strstr(g->name, "MI3") ? 9.0 : 8.0;
    if (cc < 8.0)
        return training ? (struct rules_advice){ advice_torch_fp16, snippet_torch_fp16 }
                        : (struct rules_advice){ advice_torch_infer_fp16, snippet_torch_infer_fp16 };
    if (!training) return (struct rules_advice){ advice_torch_infer, snippet_torch_infer };
    return (struct rules_advice){ cc >= 8.9 ? advice_torch_fp8 : advice_torch, snippet_torch };
}

static int run(struct rules_ctx *c, struct err *e)
{
    const double amp_eligible_pct = rules_param(c, "rule_amp_eligible_pct");
    const double amp_tc_pct = rules_param(c, "rule_amp_tc_pct");
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        const struct rules_gpu *g = r->gpu;
        if (!g || g->kernel_ns <= 0 || g->cc < 7.0) continue;
        double elig, elig_tc;
        char top[128];
        int rc = stats_read_amp_eligible(c->db, r->rank, &elig, &elig_tc, top, sizeof top, e);
        if (rc < 0) return rc;
        double kern = (double)g->kernel_ns, elig_pct = elig / kern * 100.0, tc_pct = (double)g->tc_ns / kern * 100.0;
        if (elig_pct <= amp_eligible_pct || tc_pct >= amp_tc_pct) continue;
        double simt = elig - elig_tc > 0 ? elig - elig_tc : 0;
        double saving = r->nsteps ? simt / kern * r->avg_part[RULES_KERNEL] * AMP_SAVED_FRACTION : 0;
        /* Faster GEMMs only shorten a step whose GPU work matters: when the
         * SIMT matmul time is a sliver of the step (a host-, input- or
         * communication-bound run), precision is not what to change. */
        if (r->nsteps && r->avg_dur > 0 && saving / AMP_SAVED_FRACTION < MIN_STEP_SHARE * (double)r->avg_dur)
            continue;
        char a[32], b[32], line[320], link[200];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f,s:f}", "lines", "eligible_us", elig / 1000.0, "kernel_us",
                               kern / 1000.0, "eligible_pct", elig_pct, "tensor_core_pct", tc_pct,
                               "compute_capability", g->cc);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "Matmul/conv/attention operators: %s of %s kernel time (%.0f %%)",
                 rules_fmt_ns(elig, a, sizeof a), rules_fmt_ns(kern, b, sizeof b), elig_pct);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "Tensor-core kernels: %.1f %% of kernel time on a %s (compute capability %.1f)",
                 tc_pct, g->name[0] ? g->name : "GPU", g->cc);
        json_array_append_new(lines, json_string(line));
        if (top[0]) {
            snprintf(line, sizeof line, "Largest: %s", top);
            json_array_append_new(lines, json_string(line));
        }
        snprintf(link, sizeof link, "view=kernels&rank=%d&group=op&sort=total", r->rank);
        struct rules_advice adv = r->framework == RULES_PYTORCH ? torch_advice(g, r->training) : advice[r->framework];
        rules_add(c, &rule_enable_amp, elig_pct >= 50 ? RULES_HIGH : RULES_MEDIUM, r->rank, saving, ev, link,
                  adv.text, adv.snippet,
                  "Tensor cores unused: %.0f %% of GPU time is matmul work on SIMT units", elig_pct);
    }
    (void)e;
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_amp_eligible_pct", "10", "%", 0, 100,
      "enable_amp: tensor-core-eligible operators own more than this % of kernel time ..." },
    { "rule_amp_tc_pct", "10", "%", 0, 100,
      "... while tensor-core kernels are below this % of kernel time." },
};

const struct rules_def rule_enable_amp = {
    "enable_amp",
    "https://pytorch.org/docs/stable/amp.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_GPU,
};
