/* layout_transposes — the GPU spends time converting tensors between NCHW
 * and NHWC. On tensor-core GPUs cuDNN's fast convolution kernels work in
 * NHWC; given NCHW (PyTorch's default, contiguous) tensors it wraps each
 * convolution in nchwToNhwc / nhwcToNchw kernels, pure memory traffic that
 * vanishes when the model and its inputs are channels_last. Read from
 * kernel_stat by kernel name (cuDNN, TensorRT and cuDNN-frontend spell
 * them nchwToNhwc..., nhwcToNchw..., nchw2nhwc...). Saving: the share of
 * kernel time they take, applied to the average step's kernel part (the
 * conversions are removed, not sped up). */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/stats_read.h"

static const char advice_torch[] =
    "Keep activations in NHWC so cuDNN needs no conversion: convert the model and each input batch to "
    "channels_last (memory_format=torch.channels_last). Under autocast (bf16/fp16) the whole network then "
    "runs NHWC tensor-core kernels; check afterwards that no operator falls back to NCHW.";
static const char snippet_torch[] =
    "model = model.to(device=\"cuda\", memory_format=torch.channels_last)\n"
    "for x, y in loader:\n"
    "    x = x.to(\"cuda\", non_blocking=True).contiguous(memory_format=torch.channels_last)\n"
    "    with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
    "        loss = loss_fn(model(x), y)";
static const char advice_jax[] =
    "Use NHWC end to end: give convolutions dimension_numbers=(\"NHWC\", \"HWIO\", \"NHWC\") (flax.linen.Conv "
    "already does) and feed NHWC batches, so XLA inserts no layout transposes.";
static const char advice_cuda[] =
    "cuDNN converts the tensors between NCHW and NHWC around its tensor-core convolutions, which work in "
    "NHWC. Keep activations and filters NHWC end to end: describe them with CUDNN_TENSOR_NHWC (or NHWC "
    "strides in the cuDNN frontend), have your own kernels read and write NHWC, and with TensorRT use "
    "channel-last input and output formats, so no conversion kernels run.";
static const char snippet_cuda[] =
    "cudnnSetTensor4dDescriptor(xDesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, c, h, w);\n"
    "cudnnSetFilter4dDescriptor(wDesc, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, k, c, r, s);\n"
    "cudnnSetTensor4dDescriptor(yDesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, k, p, q);\n"
    "cudnnSetConvolutionMathType(convDesc, CUDNN_TENSOR_OP_MATH);";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, snippet_cuda },
};

/* Least share of the average step the conversions must take. */
#define MIN_STEP_SHARE 0.01

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double transpose_pct = rules_param(ctx, "rule_transpose_pct");
    struct stats_read_transposes t;
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        if ((rc = stats_read_transposes(ctx->db, r->rank, &t, e)) < 0) return rc;
        if (rc == 0) continue;
        rc = 0;
        double kern = t.kernel_ns, tr = t.transpose_ns, back = t.back_ns;
        int64_t calls = t.calls;
        if (kern <= 0 || tr <= 0) continue;
        double pct = tr / kern * 100.0;
        if (pct <= transpose_pct) continue;
        double steps = r->nsteps ? (double)r->nsteps : 1;
        double saving = r->nsteps ? tr / kern * r->avg_part[RULES_KERNEL] : 0;
        /* conversions that are a sliver of the step (the GPU is not what
         * holds it) are not worth a model change: as enable_amp */
        if (r->nsteps && r->avg_dur > 0 && saving < MIN_STEP_SHARE * (double)r->avg_dur) continue;
        double step_pct = r->avg_dur > 0 ? saving / (double)r->avg_dur * 100.0 : 0;
        char a[32], b[32], line[320], link[200];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:I}", "lines", "transpose_us", tr / 1000.0, "kernel_us",
                               kern / 1000.0, "transpose_pct", pct, "calls", (json_int_t)calls);
        json_t *lines = json_object_get(ev, "lines"), *ops = json_array();
        snprintf(line, sizeof line, "NCHW<->NHWC conversion kernels: %s of %s kernel time (%.1f %%), %lld calls",
                 rules_fmt_ns(tr, a, sizeof a), rules_fmt_ns(kern, b, sizeof b), pct, (long long)calls);
        json_array_append_new(lines, json_string(line));
        if (r->nsteps) {
            snprintf(line, sizeof line, "About %s of GPU time per step of %s (%.1f conversions per step)",
                     rules_fmt_ns(saving, a, sizeof a), rules_fmt_ns((double)r->avg_dur, b, sizeof b),
                     (double)calls / steps);
            json_array_append_new(lines, json_string(line));
        }
        struct stats_read_group *by;
        size_t nby;
        if ((rc = stats_read_transposes_by_op(ctx->db, r->rank, &by, &nby, e)) < 0) {
            json_decref(ops);
            json_decref(ev);
            return rc;
        }
        for (size_t i = 0; i < nby; i++) {
            const char *op = by[i].name;
            snprintf(line, sizeof line, "Around %s: %s (%lld calls)", op ? op : "?",
                     rules_fmt_ns(by[i].total, a, sizeof a), (long long)by[i].count);
            json_array_append_new(lines, json_string(line));
            json_array_append_new(ops, json_pack("{s:s,s:f,s:I}", "op", op ? op : "", "us", by[i].total / 1000.0,
                                                 "calls", (json_int_t)by[i].count));
        }
        stats_read_groups_free(by, nby);
        json_object_set_new(ev, "by_op", ops);
        /* the link filters the kernel table on the direction that costs most */
        snprintf(link, sizeof link, "view=kernels&rank=%d&q=%s", r->rank, back * 2 > tr ? "nhwcToNchw" : "nchwToNhwc");
        /* severity by what the step would gain, not the kernel share */
        enum rules_severity sev = step_pct >= 10 ? RULES_HIGH : step_pct >= 3 ? RULES_MEDIUM : RULES_LOW;
        rules_add(ctx, &rule_layout_transposes, sev, r->rank,
                  saving, ev, link, advice[r->framework].text, advice[r->framework].snippet,
                  "Layout conversions: %.0f %% of GPU kernel time converts between NCHW and NHWC", pct);
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_transpose_pct", "5", "%", 0, 100,
      "layout_transposes: NCHW/NHWC conversion kernels above this % of kernel time." },
};

const struct rules_def rule_layout_transposes = {
    "layout_transposes",
    "https://pytorch.org/tutorials/intermediate/memory_format_tutorial.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_GPU,
};
