#include "derive/kclass.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

/* Case-insensitive substring search; names are short, so a plain scan. */
static int has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int has_any(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (has(s, *list)) return 1;
    return 0;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* AMD Tensile names its matrix-core (MFMA) GEMMs after the instruction
 * shape, `..._MT256x128x64_MI16x16x1_...`: "_MI" then NxNxN. */
static int tensile_mfma(const char *name)
{
    for (const char *p = strstr(name, "_MI"); p; p = strstr(p + 1, "_MI")) {
        const char *d = p + 3;
        int groups = 0;
        for (;;) {
            if (!isdigit((unsigned char)*d)) break;
            while (isdigit((unsigned char)*d)) d++;
            groups++;
            if (*d != 'x') break;
            d++;
        }
        if (groups == 3) return 1;
    }
    return 0;
}

int kclass_tensor_core(const char *name)
{
    /* SIMT first: these names win even when the kernel family (xmma, gemm,
     * implicit_gemm) also makes tensor-core variants. MIOpen's elementwise
     * SubTensorOp kernels would otherwise match "tensorop". */
    static const char *const simt[] = { "ffma", "simt", "sgemm", "dgemm", "dfma", "hfma", "gemv", "scudnn",
                                        "dcudnn", "subtensorop", NULL };
    /* Named after the matrix instruction or the tensor-core tile shape:
     * NVIDIA MMA/wgmma/tcgen05, AMD MFMA (CK "xdlops", MIOpen "gtcx"
     * igemm), WMMA on both, and the block-scaled FP8/FP6/FP4 (MX, NVFP4)
     * types that only tensor cores read. */
    static const char *const mma[] = { "nvjet", "wgmma", "gmma", "hmma", "imma", "tensorop", "16816", "1688",
                                       "h884", "s884", "i884", "884gemm", "884cudnn", "tcgen05", "umma",
                                       "mma_sm", "mfma", "xdlops", "gtcx", "wmma", "mxe2m1", "mxe4m3",
                                       "mxe5m2", "mxe3m2", "mxe2m3", "mxf4", "mxf6", "mxf8", "nvfp4", NULL };
    /* Element types tensor cores take, as xmma/fmha/flash kernels spell them. */
    static const char *const tc_types[] = { "f16", "bf16", "tf32", "e4m3", "e5m2", "e2m1", "fp8", "int8", "i8i8",
                                            "s8", "fp16", "half", "bfloat16", "float16", NULL };
    if (has_any(name, simt)) {
        /* "s16816gemm"/"s1688gemm" hold "gemm" but not "sgemm"; nothing in
         * the SIMT list is a substring of a tensor-core spelling. */
        return 0;
    }
    if (has_any(name, mma) || tensile_mfma(name)) return 1;
    if ((has(name, "xmma") || has(name, "fmha") || has(name, "flash") || has(name, "cutlass") ||
         starts(name, "bmm_")) &&
        has_any(name, tc_types))
        return 1;
    /* FlashAttention kernels run on tensor cores whatever their name says
     * about types (they only exist for 16-bit inputs); so do Triton's fused
     * attention (`attn_fwd`, `_attn_bwd`), Inductor's GEMM/conv/attention
     * templates (`triton_tem_*`) and Triton matmuls, all built on tl.dot. */
    if (has(name, "flash_fwd") || has(name, "flash_bwd") || has(name, "flash::")) return 1;
    if (has(name, "attn_fwd") || has(name, "attn_bwd") || starts(name, "triton_tem_") || has(name, "matmul_kernel"))
        return 1;
    return 0;
}

int kclass_comm_kernel(const char *name)
{
    /* DeepEP's expert-parallel dispatch/combine kernels live in the
     * `deep_ep::` namespace (`dpsk::ep::` in DeepSeek's own build). */
    static const char *const comm[] = { "nccl", "rccl", "hccl", "msccl", "nvshmem", "cross_device_reduce",
                                        "allreduce", "all_reduce", "allgather", "all_gather",
                                        "reducescatter", "reduce_scatter", "alltoall", "all_to_all", "all2all",
                                        "sendrecv", "deep_ep::", "dpsk::ep::", "ep::internode::",
                                        "ep::intranode::", NULL };
    return has_any(name, comm);
}

/* unbounded: a count other than the header's conflicts with its declaration */
const char *const kclass_comm_op_prefixes[] = { "nccl:", "gloo:", "rccl:", "mpi:", "ucc:", "xccl:", "hccl:", NULL };

int kclass_comm_op(const char *name)
{
    for (const char *const *p = kclass_comm_op_prefixes; *p; p++)
        if (starts(name, *p)) return 1;
    return 0;
}

int kclass_tc_eligible_op(const char *name)
{
    static const char *const exact[] = {
        "aten::mm", "aten::bmm", "aten::addmm", "aten::addbmm", "aten::baddbmm", "aten::matmul",
        "aten::linear", "aten::addmv", "aten::addr", "aten::mv", "aten::chain_matmul",
        "aten::linalg_multi_dot", "aten::_addmm_activation", "aten::prelu", "aten::conv1d", "aten::conv2d",
        "aten::conv3d", "aten::conv_tbc", "aten::conv_transpose1d", "aten::conv_transpose2d",
        "aten::conv_transpose3d", "aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
        "aten::cudnn_convolution_transpose", "aten::convolution_backward",
        "aten::cudnn_convolution_backward", "aten::cudnn_convolution_backward_input",
        "aten::cudnn_convolution_backward_weight", "aten::cudnn_convolution_transpose_backward",
        "aten::miopen_convolution", "aten::miopen_convolution_transpose", "aten::miopen_depthwise_convolution", "aten::_scaled_mm",
        "aten::_int_mm", "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention",
        "aten::_flash_attention_forward", "aten::_flash_attention_backward", "aten::_efficient_attention_forward",
        "aten::_efficient_attention_backward", "aten::_scaled_dot_product_flash_attention_backward",
        "aten::_scaled_dot_product_efficient_attention_backward", "aten::_thnn_fused_lstm_cell",
        "aten::_thnn_fused_gru_cell", "aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell",
        "aten::rnn_relu_cell", "aten::_cudnn_rnn", "aten::_cudnn_rnn_backward", "MmBackward0", "MmBackward",
        "AddmmBackward0", "AddmmBackward", "BmmBackward0", "BmmBackward", "ConvolutionBackward0",
        "CudnnConvolutionBackward", "CudnnConvolutionBackward0", "LinearBackward0", "AddbmmBackward0",
        "BaddbmmBackward0", "MvBackward0", "ScaledDotProductFlashAttentionBackward0",
        "ScaledDotProductEfficientAttentionBackward0", "ScaledDotProductCudnnAttentionBackward0", NULL
    };
    for (const char *const *p = exact; *p; p++)
        if (strcmp(name, *p) == 0) return 1;
    return 0;
}

int kclass_dataloader(const char *name)
{
    size_t n = strlen(name);
    if (starts(name, "enumerate(DataLoader)#") && n >= 9 && strcmp(name + n - 9, ".__next__") == 0) return 1;
    return starts(name, "enumerate(DataPipe)#");
}

int kclass_profiler_step(const char *name)
{
    static const char *const words[] = { "step", "train", "eval", "test", "predict", "iter", NULL };
    char head[64];
    if (starts(name, "ProfilerStep#")) return 1;
    const char *h = strrchr(name, '#');
    if (!h || h == name || !h[1] || (size_t)(h - name) >= sizeof head) return 0;
    for (const char *d = h + 1; *d; d++)
        if (*d < '0' || *d > '9') return 0;
    memcpy(head, name, (size_t)(h - name));
    head[h - name] = '\0';
    return has_any(head, words);
}
