/* diff.c — comparing two runs or two ranks over their analysis tables (see
 * include/derive/diff.h). */
#define LOG_MODULE "diff"
#include "derive/diff.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/summary.h"
#include "store/diff_read.h"
#include "store/rundb.h"

#define NCATS 8          /* breakdown parts, summary_categories[0..7] */
#define MIN_ABS_NS 1000.0 /* a change under 1 µs per unit is "same" */
#define Q_MAX 256

const char *const diff_status_names[DIFF_NSTATUS] = { "added", "removed", "faster", "slower", "same" };

/* Sort keys (their SQL expressions are the store's, store/diff_read.c). */
const char *const diff_sort_names[DIFF_NSORT] = { "change", "delta",   "ratio",   "name",  "a_time",
                                                  "b_time", "a_calls", "b_calls", "status" };
_Static_assert(DIFF_READ_NSORT == DIFF_NSORT, "the store sorts by every key diff_sort_names names");
_Static_assert(DIFF_ADDED == 0 && DIFF_REMOVED == 1 && DIFF_FASTER == 2 && DIFF_SLOWER == 3 && DIFF_SAME == 4,
               "the store's table numbers statuses in this order");

struct diff {
    sqlite3 *db;     /* owned, read-only; B attached as bdb */
    int rank[2];     /* the ranks compared */
    json_t *ranks[2]; /* owned arrays of every rank of each run */
    int64_t steps[2]; /* steps of each compared rank */
    int op_device;   /* 1: some operator has device time on either side */
};

/* ====================================================================== */
/* Kernel families                                                        */
/* ====================================================================== */

static int has(const char *lower, const char *word)
{
    return strstr(lower, word) != NULL;
}

char *diff_kernel_family(const char *name)
{
    size_t n = strlen(name);
    char *lo = xmalloc(n + 1);
    const char *fam = NULL;

    for (size_t i = 0; i <= n; i++) lo[i] = (char)tolower((unsigned char)name[i]);
    if (has(lo, "nccl") || has(lo, "rccl")) {
        static const struct {
            const char *word, *label;
        } coll[] = { { "allreduce", "NCCL AllReduce" },         { "all_reduce", "NCCL AllReduce" },
                     { "allgather", "NCCL AllGather" },         { "all_gather", "NCCL AllGather" },
                     { "reducescatter", "NCCL ReduceScatter" }, { "reduce_scatter", "NCCL ReduceScatter" },
                     { "alltoall", "NCCL AllToAll" },           { "sendrecv", "NCCL SendRecv" },
                     { "broadcast", "NCCL Broadcast" },         { "reduce", "NCCL Reduce" } };
        fam = "NCCL";
        for (size_t i = 0; i < sizeof coll / sizeof coll[0]; i++)
            if (has(lo, coll[i].word)) {
                fam = coll[i].label;
                break;
            }
    } else if (has(lo, "gemv")) fam = "GEMV";
    else if (has(lo, "conv") || has(lo, "wgrad") || has(lo, "dgrad") || has(lo, "fprop")) fam = "convolution";
    else if (has(lo, "flash") || has(lo, "fmha") || has(lo, "attention") || has(lo, "sdpa")) fam = "attention";
    else if (has(lo, "gemm") || has(lo, "nvjet") || has(lo, "cublas") || has(lo, "wgmma") || has(lo, "matmul"))
        fam = "GEMM";
    else if (has(lo, "softmax")) fam = "softmax";
    else if (has(lo, "layer_norm") || has(lo, "layernorm")) fam = "layer norm";
    else if (has(lo, "batch_norm") || has(lo, "batchnorm") || has(lo, "bn_fw") || has(lo, "bn_bw"))
        fam = "batch norm";
    free(lo);
    if (fam) return xstrdup(fam);

    /* Strip "void ", cut at the first template or argument list (but not at
     * "(anonymous namespace)"), keep the last "::" component. */
    const char *p = name, *start, *end;
    static const char anon[] = "(anonymous namespace)";
    if (strncmp(p, "void ", 5) == 0) p += 5;
    start = p;
    for (end = p; *end; end++) {
        if (strncmp(end, anon, sizeof anon - 1) == 0) {
            end += sizeof anon - 2;
            continue;
        }
        if (*end == '<' || *end == '(') break;
        if (end[0] == ':' && end[1] == ':') start = end + 2;
    }
    if (end <= start) return xstrdup(name);
    return xstrndup(start, (size_t)(end - start));
}

/* tb_kfamily(name) for the SQL below. */
static void sql_kfamily(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const unsigned char *s = sqlite3_value_text(argv[0]);
    char *f;

    (void)argc;
    if (!s) {
        sqlite3_result_null(ctx);
        return;
    }
    f = diff_kernel_family((const char *)s);
    sqlite3_result_text(ctx, f, -1, free);
}

void diff_register_kfamily(sqlite3 *db)
{
    sqlite3_create_function_v2(db, "tb_kfamily", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_kfamily, NULL, NULL,
                               NULL);
}

/* ====================================================================== */
/* Parameters                                                             */
/* ====================================================================== */

int diff_parse_status(const char *list, const char *name, unsigned *mask, struct err *e)
{
    const char *p = list;

    *mask = 0;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < DIFF_NSTATUS; i++)
            if (n && strlen(diff_status_names[i]) == n && strncmp(p, diff_status_names[i], n) == 0) {
                *mask |= 1u << i;
                found = 1;
            }
        if (!found && n)
            return err_set(e, ERR_INVALID,
                           "parameter '%s' must be a comma-separated list of added, removed, faster, slower, same",
                           name);
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

int diff_parse_sort(const char *s, const char *name, int *out, struct err *e)
{
    for (int i = 0; i < DIFF_NSORT; i++)
        if (strcmp(s, diff_sort_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return err_set(e, ERR_INVALID,
                   "parameter '%s' must be one of: change, delta, ratio, name, a_time, b_time, a_calls, b_calls, "
                   "status",
                   name);
}

/* ====================================================================== */
/* Connection                                                             */
/* ====================================================================== */

static int pick_rank(struct diff *d, int s, int want, struct err *e)
{
    int *ranks, found = 0;
    size_t n;
    int rc = diff_read_ranks(d->db, s, &ranks, &n, e);

    if (rc < 0) return rc;
    d->ranks[s] = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(d->ranks[s], json_integer(ranks[i]));
        if (!found && (want < 0 || want == ranks[i])) {
            found = 1;
            d->rank[s] = ranks[i];
        }
    }
    free(ranks);
    if (!found && want >= 0) return err_set(e, ERR_NOT_FOUND, "run %s has no rank %d", s ? "B" : "A", want);
    if (!found) return err_set(e, ERR_NOT_FOUND, "run %s has no ranks", s ? "B" : "A");
    return 0;
}

/* Reads what the queries need of side s (A: 0, B: 1): its rank (want, or
 * its lowest when -1), its step count and whether operators have device
 * time. */
static int side_prepare(struct diff *d, int s, int want, struct err *e)
{
    int rc = diff_read_has_steps(d->db, s, e);

    if (rc < 0) return err_set(e, ERR_NOT_FOUND, "run %s: not a run database", s ? "B" : "A");
    if (rc == 0)
        return err_set(e, ERR_CONFLICT, "run %s was imported before analysis existed; re-import it", s ? "B" : "A");
    if ((rc = pick_rank(d, s, want, e)) < 0) return rc;
    if ((rc = diff_read_step_count(d->db, s, d->rank[s], &d->steps[s], e)) < 0) return rc;
    if ((rc = diff_read_op_device(d->db, s, d->rank[s], e)) < 0) return rc;
    d->op_device |= rc;
    return 0;
}

int diff_open(const char *db_a, int rank_a, const char *db_b, int rank_b, struct diff **out, struct err *e)
{
    struct diff *d = xcalloc(1, sizeof *d);
    int rc;

    *out = NULL;
    if ((rc = diff_read_open(db_a, db_b, &d->db, e)) < 0) goto fail;
    diff_register_kfamily(d->db);
    for (int s = 0; s < 2; s++)
        if ((rc = side_prepare(d, s, s ? rank_b : rank_a, e)) < 0) goto fail;
    *out = d;
    return 0;
fail:
    diff_close(d);
    return rc;
}

void diff_close(struct diff *d)
{
    if (!d) return;
    sqlite3_close(d->db);
    json_decref(d->ranks[0]);
    json_decref(d->ranks[1]);
    free(d);
}

int diff_rank(const struct diff *d, int side)
{
    return d->rank[side ? 1 : 0];
}

/* ====================================================================== */
/* Tables                                                                 */
/* ====================================================================== */

/* The store's table query for q over d (like: q's LIKE pattern or NULL). */
static struct diff_read_q read_q(const struct diff *d, const struct diff_query *q, const char *like)
{
    return (struct diff_read_q){
        .kernels = q->kind == DIFF_KERNELS,
        .family = q->family,
        .op_device = d->op_device,
        .ra = d->rank[0],
        .rb = d->rank[1],
        .diva = q->per_step && d->steps[0] > 0 ? (double)d->steps[0] : 1.0,
        .divb = q->per_step && d->steps[1] > 0 ? (double)d->steps[1] : 1.0,
        .thr = q->threshold,
        .minabs = MIN_ABS_NS,
        .like = like,
        .mask = q->status_mask ? q->status_mask : (1u << DIFF_NSTATUS) - 1,
        .sort = q->sort >= 0 && q->sort < DIFF_NSORT ? q->sort : 0,
        .desc = q->desc,
        .limit = q->limit,
        .offset = q->offset,
    };
}

/* Counts by status (q applied) into c[DIFF_NSTATUS]. */
static int table_counts(struct diff *d, const struct diff_query *q, const char *like, int64_t c[DIFF_NSTATUS],
                        struct err *e)
{
    struct diff_read_q rq = read_q(d, q, like);
    return diff_read_counts(d->db, &rq, c, DIFF_NSTATUS, e);
}

static json_t *counts_json(const int64_t c[DIFF_NSTATUS])
{
    json_t *o = json_object();
    for (int i = 0; i < DIFF_NSTATUS; i++) json_object_set_new(o, diff_status_names[i], json_integer(c[i]));
    return o;
}

/* Number i of row w over scale, or null. */
static json_t *num_or_null(const struct diff_read_row *w, int i, double scale)
{
    return w->nulls & (1u << i) ? json_null() : json_real(w->v[i] / scale);
}

int diff_table(struct diff *d, const struct diff_query *q, json_t **out, struct err *e)
{
    int64_t c[DIFF_NSTATUS], total = 0;
    unsigned mask = q->status_mask ? q->status_mask : (1u << DIFF_NSTATUS) - 1;
    char *like = NULL;
    struct diff_read_rows *cur;
    struct diff_read_row w;
    json_t *rows;
    int rc, sort = q->sort >= 0 && q->sort < DIFF_NSORT ? q->sort : 0;

    *out = NULL;
    if (q->q && strlen(q->q) > Q_MAX) return err_set(e, ERR_INVALID, "parameter 'q' is longer than %d bytes", Q_MAX);
    if (q->q && *q->q) like = rundb_like_pattern(q->q);
    if ((rc = table_counts(d, q, like, c, e)) < 0) goto done;
    for (int i = 0; i < DIFF_NSTATUS; i++)
        if (mask & (1u << i)) total += c[i];

    struct diff_read_q rq = read_q(d, q, like);
    if ((rc = diff_read_rows_open(d->db, &rq, &cur, e)) < 0) goto done;
    rows = json_array();
    while ((rc = diff_read_rows_next(cur, &w, e)) == 1) {
        int k = w.status;
        json_t *r = json_pack("{s:s,s:o,s:o,s:o,s:o,s:f,s:o,s:s}", "name", w.name, "a_calls",
                              num_or_null(&w, DIFF_READ_A_CALLS, 1.0), "b_calls",
                              num_or_null(&w, DIFF_READ_B_CALLS, 1.0), "a_us", num_or_null(&w, DIFF_READ_A_T, 1000.0),
                              "b_us", num_or_null(&w, DIFF_READ_B_T, 1000.0), "delta_us",
                              w.v[DIFF_READ_DELTA] / 1000.0, "ratio", num_or_null(&w, DIFF_READ_RATIO, 1.0), "status",
                              k >= 0 && k < DIFF_NSTATUS ? diff_status_names[k] : "same");
        if (!r) continue; /* a name that is not UTF-8: ingest cleans names, so never */
        if (q->kind == DIFF_KERNELS) json_object_set_new(r, "tensor_cores", json_boolean(w.tc));
        json_array_append_new(rows, r);
    }
    diff_read_rows_close(cur);
    if (rc < 0) {
        json_decref(rows);
        goto done;
    }
    rc = 0;
    *out = json_pack("{s:s,s:s,s:s,s:s,s:f,s:o,s:I,s:I,s:I,s:s,s:s,s:o}", "kind",
                     q->kind == DIFF_KERNELS ? "kernels" : "operators", "group", q->family ? "family" : "name", "per",
                     q->per_step ? "step" : "total", "metric",
                     q->kind == DIFF_KERNELS ? "kernel" : d->op_device ? "device_self" : "host_self", "threshold",
                     q->threshold, "counts", counts_json(c), "total", (json_int_t)total, "offset",
                     (json_int_t)q->offset, "limit", (json_int_t)q->limit, "sort", diff_sort_names[sort], "order",
                     q->desc ? "desc" : "asc", "rows", rows);
done:
    free(like);
    return rc;
}

/* ====================================================================== */
/* Overview                                                               */
/* ====================================================================== */

static json_t *real_or_null(double v, unsigned nulls, unsigned bit)
{
    return nulls & bit ? json_null() : json_real(v);
}

/* The busiest GPU of side s: device, utilization, SM efficiency and
 * tensor-core share into o (nulls when the rank has none). */
static int gpu_json(struct diff *d, int s, json_t *o, struct err *e)
{
    struct diff_read_gpu g;
    int rc = diff_read_gpu(d->db, s, d->rank[s], &g, e);

    if (rc < 0) return rc;
    if (rc == 1) {
        json_object_set_new(o, "device",
                            json_pack("{s:s?,s:o,s:s?}", "name", g.name, "memory_bytes",
                                      g.nulls & 2 ? json_null() : json_integer(g.memory_bytes), "compute_capability",
                                      g.cc));
        json_object_set_new(o, "gpu_utilization", real_or_null(g.share[0], g.nulls, 8));
        json_object_set_new(o, "sm_efficiency", real_or_null(g.share[1], g.nulls, 16));
        json_object_set_new(o, "tensor_core_share", real_or_null(g.share[2], g.nulls, 32));
    } else {
        json_object_set_new(o, "device", json_null());
        json_object_set_new(o, "gpu_utilization", json_null());
        json_object_set_new(o, "sm_efficiency", json_null());
        json_object_set_new(o, "tensor_core_share", json_null());
    }
    free(g.name);
    free(g.cc);
    return 0;
}

/* One side of the overview. */
static int side_json(struct diff *d, int s, json_t **out, struct err *e)
{
    int rc;
    json_t *o = json_pack("{s:i,s:O,s:I}", "rank", d->rank[s], "ranks", d->ranks[s], "steps",
                          (json_int_t)d->steps[s]);
    json_t *bd = json_object();
    double avg = 0, v[1 + NCATS];

    *out = NULL;
    if ((rc = diff_read_step_avg(d->db, s, d->rank[s], v, e)) < 0) goto fail;
    if (rc == 1) {
        avg = v[0] / 1000.0;
        for (int k = 0; k < NCATS; k++) json_object_set_new(bd, summary_categories[k], json_real(v[1 + k] / 1000.0));
    }
    json_object_set_new(o, "average", json_pack("{s:f,s:O}", "dur_us", avg, "breakdown_us", bd));

    if ((rc = gpu_json(d, s, o, e)) < 0) goto fail;

    int64_t kns = 0;
    if ((rc = diff_read_kernel_ns(d->db, s, d->rank[s], &kns, e)) < 0) goto fail;
    json_object_set_new(o, "kernel_us",
                        json_real((double)kns / 1000.0 / (double)(d->steps[s] > 0 ? d->steps[s] : 1)));

    json_t *peak = json_null();
    char *text;
    if ((rc = diff_read_summary(d->db, s, d->rank[s], &text, e)) < 0) goto fail;
    if (text) {
        json_t *sum = json_loads(text, 0, NULL), *pv;
        const char *k;
        json_int_t best = -1;
        json_object_foreach(json_object_get(sum, "peak_memory"), k, pv) {
            json_int_t b = json_integer_value(json_object_get(pv, "bytes"));
            if (strcmp(k, "cpu") != 0 && b > best) best = b;
        }
        if (best >= 0) peak = json_integer(best);
        json_decref(sum);
        free(text);
    }
    json_object_set_new(o, "peak_memory_bytes", peak);
    json_decref(bd);
    *out = o;
    return 0;
fail:
    json_decref(bd);
    json_decref(o);
    return rc;
}

int diff_side(const char *db, int rank, json_t **out, struct err *e)
{
    struct diff *d = xcalloc(1, sizeof *d);
    int rc;

    *out = NULL;
    if ((rc = rundb_open_ro(db, &d->db, e)) == 0 && (rc = side_prepare(d, 0, rank, e)) == 0)
        rc = side_json(d, 0, out, e);
    diff_close(d);
    return rc;
}

/* b - a of two numbers, null unless both are numbers. */
static json_t *num_delta(json_t *a, json_t *b)
{
    if (!json_is_number(a) || !json_is_number(b)) return json_null();
    return json_real(json_number_value(b) - json_number_value(a));
}

static int counts_of(struct diff *d, enum diff_kind kind, int family, double thr, json_t **out, struct err *e)
{
    struct diff_query q = { .kind = kind, .family = family, .per_step = 1, .threshold = thr };
    int64_t c[DIFF_NSTATUS];
    int rc = table_counts(d, &q, NULL, c, e);

    *out = rc < 0 ? NULL : counts_json(c);
    return rc;
}

int diff_overview(struct diff *d, double threshold, json_t **out, struct err *e)
{
    json_t *side[2] = { NULL, NULL }, *cats, *dbd, *kc = NULL, *fc = NULL, *oc = NULL;
    int rc;

    *out = NULL;
    for (int s = 0; s < 2; s++)
        if ((rc = side_json(d, s, &side[s], e)) < 0) goto fail;
    if ((rc = counts_of(d, DIFF_KERNELS, 0, threshold, &kc, e)) < 0 ||
        (rc = counts_of(d, DIFF_KERNELS, 1, threshold, &fc, e)) < 0 ||
        (rc = counts_of(d, DIFF_OPERATORS, 0, threshold, &oc, e)) < 0)
        goto fail;

    json_t *aa = json_object_get(side[0], "average"), *ba = json_object_get(side[1], "average");
    double ad = json_number_value(json_object_get(aa, "dur_us")),
           bdur = json_number_value(json_object_get(ba, "dur_us"));
    cats = json_array();
    dbd = json_object();
    for (int k = 0; k < NCATS; k++) {
        json_array_append_new(cats, json_string(summary_categories[k]));
        json_object_set_new(dbd, summary_categories[k],
                            num_delta(json_object_get(json_object_get(aa, "breakdown_us"), summary_categories[k]),
                                      json_object_get(json_object_get(ba, "breakdown_us"), summary_categories[k])));
    }
    *out = json_pack(
        "{s:o,s:o,s:o,s:o,s:f,s:{s:f,s:o,s:o,s:o,s:o},s:o,s:o,s:o}", "a", side[0], "b", side[1], "categories", cats,
        "speedup", ad > 0 && bdur > 0 && d->steps[0] > 0 && d->steps[1] > 0 ? json_real(ad / bdur) : json_null(),
        "threshold", threshold, "delta", "dur_us", bdur - ad, "breakdown_us", dbd, "kernel_us",
        num_delta(json_object_get(side[0], "kernel_us"), json_object_get(side[1], "kernel_us")), "gpu_utilization",
        num_delta(json_object_get(side[0], "gpu_utilization"), json_object_get(side[1], "gpu_utilization")),
        "tensor_core_share",
        num_delta(json_object_get(side[0], "tensor_core_share"), json_object_get(side[1], "tensor_core_share")),
        "kernels", kc, "kernel_families", fc, "operators", oc);
    return *out ? 0 : err_set(e, ERR_INTERNAL, "diff: cannot build the overview");
fail:
    json_decref(side[0]);
    json_decref(side[1]);
    json_decref(kc);
    json_decref(fc);
    json_decref(oc);
    return rc;
}

int diff_report(struct diff *d, int top_n, json_t **out, struct err *e)
{
    static const struct {
        const char *key;
        enum diff_kind kind;
        int family;
    } parts[] = { { "top_kernels", DIFF_KERNELS, 0 },
                  { "top_kernel_families", DIFF_KERNELS, 1 },
                  { "top_operators", DIFF_OPERATORS, 0 } };
    json_t *rep, *t;
    int rc;

    if ((rc = diff_overview(d, DIFF_THRESHOLD_DEFAULT, &rep, e)) < 0) return rc;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        struct diff_query q = { .kind = parts[i].kind, .family = parts[i].family, .per_step = 1,
                                .threshold = DIFF_THRESHOLD_DEFAULT, .sort = 0, .desc = 1, .limit = top_n };
        if ((rc = diff_table(d, &q, &t, e)) < 0) {
            json_decref(rep);
            *out = NULL;
            return rc;
        }
        json_object_set(rep, parts[i].key, json_object_get(t, "rows"));
        json_decref(t);
    }
    *out = rep;
    return 0;
}
