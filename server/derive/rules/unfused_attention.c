/* unfused_attention — attention computed op by op: a batched matmul for
 * the scores, a softmax kernel over the whole score matrix (written to and
 * read back from memory, often in FP32), another batched matmul, and the
 * scale/mask/dropout kernels between them. Fused attention
 * (scaled_dot_product_attention's flash, memory-efficient or cuDNN kernels)
 * keeps the scores on chip.
 *
 * Read from kernel_stat by launching operator: softmax ops
 * (aten::_softmax, _masked_softmax, _safe_softmax) and batched matmuls
 * (aten::bmm, baddbmm) must both be there, together over the threshold of
 * kernel time, with no fused-attention kernel anywhere in the rank (a model
 * already on SDPA that keeps one softmax elsewhere is not advised).
 * Saving: half of that time (fused kernels run the same work 2-4x faster;
 * the elementwise kernels between them, not counted, also go). */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/stats_read.h"

#define SAVED_FRACTION 0.5

static const char advice_torch[] =
    "Compute attention with torch.nn.functional.scaled_dot_product_attention, which picks a fused "
    "FlashAttention, memory-efficient or cuDNN kernel and never writes the score matrix to memory; masks, "
    "dropout and causal attention are arguments. Hugging Face models select it with "
    "attn_implementation=\"sdpa\" (or \"flash_attention_2\"); torch.compile also fuses the pattern.";
static const char snippet_torch[] =
    "# instead of: attn = torch.softmax(q @ k.transpose(-2, -1) * scale + mask, dim=-1); out = attn @ v\n"
    "out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,\n"
    "                                                       dropout_p=p if training else 0.0)\n"
    "# Hugging Face:\n"
    "model = AutoModel.from_pretrained(name, attn_implementation=\"sdpa\")";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double attn_pct = rules_param(ctx, "rule_unfused_attention_pct");
    struct stats_read_attention at;
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        if (r->framework != RULES_PYTORCH) continue;
        if ((rc = stats_read_attention(ctx->db, r->rank, &at, e)) < 0) return rc;
        if (rc == 0) continue;
        rc = 0;
        double kern = at.kernel_ns, sm = at.softmax_ns, bmm = at.bmm_ns, fused = at.fused_ns;
        int64_t sm_calls = at.softmax_calls, bmm_calls = at.bmm_calls;
        if (kern <= 0 || sm <= 0 || bmm <= 0 || fused > 0) continue;
        double pct = (sm + bmm) / kern * 100.0;
        if (pct <= attn_pct) continue;
        double saving = r->nsteps ? SAVED_FRACTION * (sm + bmm) / kern * r->avg_part[RULES_KERNEL] : 0;
        double step_pct = r->avg_dur > 0 ? saving / (double)r->avg_dur * 100.0 : 0;
        char a[32], b[32], c[32], line[320], link[96];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f}", "lines", "softmax_us", sm / 1000.0, "bmm_us", bmm / 1000.0,
                               "kernel_us", kern / 1000.0, "attention_pct", pct);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "Softmax %s (%lld calls) and batched matmuls %s (%lld calls): %.0f %% of %s kernel time",
                 rules_fmt_ns(sm, a, sizeof a), (long long)sm_calls, rules_fmt_ns(bmm, b, sizeof b),
                 (long long)bmm_calls, pct, rules_fmt_ns(kern, c, sizeof c));
        json_array_append_new(lines, json_string(line));
        json_array_append_new(lines, json_string("No fused attention kernel (FlashAttention, memory-efficient, cuDNN "
                                                 "SDPA) ran in this trace"));
        if (r->nsteps) {
            snprintf(line, sizeof line, "Per step: %s of softmax + bmm; fused attention would save about %s",
                     rules_fmt_ns((sm + bmm) / kern * r->avg_part[RULES_KERNEL], a, sizeof a),
                     rules_fmt_ns(saving, b, sizeof b));
            json_array_append_new(lines, json_string(line));
        }
        snprintf(link, sizeof link, "view=operators&rank=%d&q=softmax", r->rank);
        enum rules_severity sev = step_pct >= 10 ? RULES_HIGH : step_pct >= 3 ? RULES_MEDIUM : RULES_LOW;
        rules_add(ctx, &rule_unfused_attention, sev, r->rank, saving, ev, link, advice[RULES_PYTORCH].text,
                  advice[RULES_PYTORCH].snippet, "Unfused attention: softmax and batched matmuls take %.0f %% of GPU kernel time",
                  pct);
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_unfused_attention_pct", "10", "%", 0, 100,
      "unfused_attention: softmax + batched-matmul kernels above this % of kernel time, with no fused attention." },
};

const struct rules_def rule_unfused_attention = {
    "unfused_attention",
    "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_GPU,
};
