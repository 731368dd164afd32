/* analyses.c — the driver of the deeper GPU analyses (see include/derive/analyses.h):
 * loads one rank's context (analyses_load.c: steps, GPU streams and ops,
 * launch calls with the operator and annotation around each, host slices),
 * runs the analyses of ANALYSES_LIST on it, and stores their documents,
 * series and critical-path segments.
 */
#define LOG_MODULE "analyses"
#include "derive/analyses.h"
#include "derive/analyses_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/varint.h"
#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "derive/timeline_rows.h"
#include "store/scan.h"
#include "store/rundb.h"

const char *const an_cp_names[AN_CP_NCAT] = { "cpu", "dataloader", "gpu_compute", "communication",
                                              "launch_overhead", "kernel_gap" };
const char *const an_copy_names[AN_NCOPY] = { "kernel", "HtoD", "DtoH", "DtoD", "PtoP", "Memset", "Memcpy" };
const char *const an_type_names[AN_NTYPES] = { "compute", "communication", "memory" };

/* main.: with a scratch database attached (analyses_adopt) a bare name
 * missing from main would drop the scratch's table. */
static const char drop_sql[] =
    "DROP TABLE IF EXISTS main.analyses; DROP TABLE IF EXISTS main.anseries; DROP TABLE IF EXISTS main.ansample;"
    "DROP TABLE IF EXISTS main.critpath; DROP TABLE IF EXISTS main.critseg;";

/* Without the drops: on a scratch database (analyses_run_rank) a DROP would
 * reach the attached run's table of that name. */
static const char schema_sql[] =
    "CREATE TABLE analyses(rank INTEGER PRIMARY KEY, doc TEXT);"
    "CREATE TABLE anseries(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, key INTEGER, name TEXT,"
    " unit TEXT);"
    "CREATE TABLE ansample(series INTEGER, ts INTEGER, value REAL, PRIMARY KEY(series, ts)) WITHOUT ROWID;"
    "CREATE TABLE critseg(rank INTEGER, step INTEGER, t0 INTEGER, t1 INTEGER, n INTEGER, segs BLOB);";

/* ====================================================================== */
/* Output helpers for the analyses                                        */
/* ====================================================================== */

const char *an_name(struct an_ctx *c, uint32_t id)
{
    char *buf = c->namebuf[c->nameslot];
    c->nameslot = (c->nameslot + 1) % 4;
    return gpuscan_names_text(c->names, id, buf, sizeof c->namebuf[0]);
}

#define NAME_KNOWN 0x80

int an_name_class(struct an_ctx *c, uint32_t id)
{
    if (c->ncache_n * 2 >= c->ncache_cap) {
        size_t ncap = c->ncache_cap ? c->ncache_cap * 2 : 1024;
        uint32_t *nid = xcalloc(ncap, sizeof *nid);
        uint8_t *nb = xcalloc(ncap, 1);
        for (size_t i = 0; i < c->ncache_cap; i++) {
            if (!c->ncache_bits[i]) continue;
            size_t k = (c->ncache_id[i] * 2654435761u) & (ncap - 1);
            while (nb[k]) k = (k + 1) & (ncap - 1);
            nid[k] = c->ncache_id[i];
            nb[k] = c->ncache_bits[i];
        }
        free(c->ncache_id);
        free(c->ncache_bits);
        c->ncache_id = nid;
        c->ncache_bits = nb;
        c->ncache_cap = ncap;
    }
    size_t k = (id * 2654435761u) & (c->ncache_cap - 1);
    while (c->ncache_bits[k]) {
        if (c->ncache_id[k] == id) return c->ncache_bits[k] & ~NAME_KNOWN;
        k = (k + 1) & (c->ncache_cap - 1);
    }
    const char *nm = an_name(c, id);
    int bits = (kclass_comm_kernel(nm) ? AN_NAME_COMM : 0) | (kclass_profiler_step(nm) ? AN_NAME_STEP : 0) |
               (strncmp(nm, "nn.Module: ", 11) == 0 ? AN_NAME_MODULE : 0);
    c->ncache_id[k] = id;
    c->ncache_bits[k] = (uint8_t)(bits | NAME_KNOWN);
    c->ncache_n++;
    return bits;
}

size_t an_ops_from(const struct an_ctx *c, int64_t t)
{
    size_t lo = 0, hi = c->nops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ops[mid].ts < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int an_stream_ix(const struct an_ctx *c, uint32_t track)
{
    size_t lo = 0, hi = c->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->streams[mid].track < track) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nstreams && c->streams[lo].track == track ? (int)lo : -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void an_sort_i64(int64_t *v, size_t n)
{
    if (n) xqsort(v, n, sizeof *v, cmp_i64);
}

double an_quantile(const int64_t *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return (double)v[n - 1];
    return (double)v[i] + (pos - (double)i) * (double)(v[i + 1] - v[i]);
}

int an_series(struct an_ctx *c, int kind, int64_t key, const char *name, const char *unit, int64_t *series,
              struct err *e)
{
    sqlite3_stmt *st = c->ins_series;
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, c->rank);
    sqlite3_bind_int(st, 2, kind);
    sqlite3_bind_int64(st, 3, key);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, unit, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) return rundb_db_error(c->db, e, "analyses (series insert)");
    *series = sqlite3_last_insert_rowid(c->db);
    return 0;
}

/* Samples are written AN_BATCH rows per statement (through the batched
 * writer, timeline_rows.h): one row per sqlite3_step cost more than the
 * analyses. Rows keep their order, so rowids and the sample that wins at
 * one ts are the same as row by row. */
#define AN_BATCH TIMELINE_ROWS_BATCH
#define AN_SAMPLE_SQL "INSERT OR REPLACE INTO ansample(series, ts, value) VALUES"

/* A step's critical-path segments are one row of critseg, encoded by
 * an_segment: ~5 k segments a step (556 k for tiled33) as rows cost 0.2 s of
 * SQLite's inserts on the import's path, as blobs nothing. */
struct an_wbuf {
    struct timeline_rows smp; /* series, ts, value (a double) */
    struct varint_buf seg;    /* the current step's segments, encoded */
    int64_t nseg, t0, t1, last_ts, last_slice;
    int step;
};

/* The encoding of a segment in critseg.segs: five LEB128 varints, ts and
 * slice as zigzag deltas from the step's previous segment (from 0 for its
 * first), then dur, cat and track as they are. Time order makes the ts
 * deltas small, and a slice's pieces are mostly near each other. */
/* a - prev as zigzag: small either way; wraps like two's complement, so
 * any pair of int64 round-trips through get_delta */
static void put_delta(struct an_wbuf *b, int64_t a, int64_t prev)
{
    varint_buf_put(&b->seg, varint_zigzag((int64_t)((uint64_t)a - (uint64_t)prev)));
}

static int get_delta(const uint8_t **p, const uint8_t *end, int64_t prev, int64_t *v)
{
    uint64_t z;
    if (!varint_get(p, end, &z)) return 0;
    *v = (int64_t)((uint64_t)prev + (uint64_t)varint_unzigzag(z));
    return 1;
}

/* The current step's segments as its critseg row. */
static int flush_segments(struct an_ctx *c, struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    if (!b->nseg) return 0;
    sqlite3_stmt *st = c->ins_seg;
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, c->rank);
    sqlite3_bind_int(st, 2, b->step);
    sqlite3_bind_int64(st, 3, b->t0);
    sqlite3_bind_int64(st, 4, b->t1);
    sqlite3_bind_int64(st, 5, b->nseg);
    sqlite3_bind_blob(st, 6, b->seg.v, (int)b->seg.len, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : rundb_db_error(c->db, e, "analyses (critical path insert)");
    sqlite3_bind_null(st, 6); /* the buffer is reused */
    b->nseg = 0;
    b->seg.len = 0;
    return rc;
}

int an_sample(struct an_ctx *c, int64_t series, int64_t ts, double value, struct err *e)
{
    const union timeline_rows_val v[3] = { { .i = series }, { .i = ts }, { .d = value } };
    return timeline_rows_add(&c->wbuf->smp, v, 0, e);
}

int an_segment(struct an_ctx *c, int step, int64_t ts, int64_t dur, int cat, uint32_t track, int64_t slice,
               struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    int rc;
    if (b->nseg && step != b->step && (rc = flush_segments(c, e)) != 0) return rc;
    if (!b->nseg) {
        b->step = step;
        b->t0 = ts;
        b->t1 = ts + dur;
        b->last_ts = b->last_slice = 0;
    }
    put_delta(b, ts, b->last_ts);
    varint_buf_put(&b->seg, (uint64_t)dur);
    varint_buf_put(&b->seg, (uint64_t)cat);
    varint_buf_put(&b->seg, track);
    put_delta(b, slice, b->last_slice);
    b->last_ts = ts;
    b->last_slice = slice;
    if (ts < b->t0) b->t0 = ts;
    if (ts + dur > b->t1) b->t1 = ts + dur;
    b->nseg++;
    return 0;
}

/* ====================================================================== */
/* Driver                                                                 */
/* ====================================================================== */

typedef int (*an_fn)(struct an_ctx *, json_t *, struct err *);
static const struct {
    const char *name;
    an_fn fn;
} registry[] = {
#define AN_ENTRY(n) { #n, an_##n },
    ANALYSES_LIST(AN_ENTRY)
#undef AN_ENTRY
};

/* Told once the series are committed (analyses_run_then): NULL, or called
 * before the last rank's critical path. */
struct series_hook {
    void (*fn)(void *arg);
    void *arg;
};

/* The samples so far flushed and the transaction committed (a new one
 * begun), then h told: nothing after the critical path adds a series or a
 * sample (critical_path is last in ANALYSES_LIST). */
static int series_commit(struct an_ctx *c, const struct series_hook *h, struct err *e)
{
    int rc = timeline_rows_flush(&c->wbuf->smp, e);
    if (rc == 0 && sqlite3_exec(c->db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(c->db, e, "analyses (series commit)");
    if (rc == 0) h->fn(h->arg);
    return rc;
}

static int run_rank(struct an_ctx *c, sqlite3_stmt *ins_doc, struct analyses_pre *pre, const struct series_hook *h,
                    struct err *e)
{
    int rc = analyses_load_rank(c, pre, e);
    if (rc) return rc;
    json_t *doc = json_object();
    json_object_set_new(doc, "window_ns", json_pack("[I,I]", (json_int_t)c->w0, (json_int_t)c->w1));
    json_object_set_new(doc, "steps", json_integer((json_int_t)c->nsteps));
    json_object_set_new(doc, "gpu", json_pack("{s:s,s:f,s:f}", "name", c->gpu_name, "memory_gbps",
                                              c->gpu_mem_gbps, "link_gbps", c->link_gbps));
    double t = log_now_s();
    for (size_t i = 0; i < sizeof registry / sizeof registry[0] && rc == 0; i++) {
        if (h && registry[i].fn == an_critical_path && (rc = series_commit(c, h, e)) != 0) break;
        json_t *o = json_object();
        rc = registry[i].fn(c, o, e);
        json_object_set_new(doc, registry[i].name, o);
        LOG_LAP(c->rank, registry[i].name, &t);
    }
    if (rc == 0) rc = timeline_rows_flush(&c->wbuf->smp, e);
    if (rc == 0) rc = flush_segments(c, e);
    if (rc == 0) {
        char *text = json_dumps(doc, JSON_COMPACT);
        sqlite3_reset(ins_doc);
        sqlite3_bind_int(ins_doc, 1, c->rank);
        sqlite3_bind_text(ins_doc, 2, text, -1, free);
        if (sqlite3_step(ins_doc) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analyses (document insert)");
    }
    json_decref(doc);
    analyses_load_free(c);
    return rc;
}

/* analyses_run over every rank (rank < 0) or one, on a scratch database
 * (scratch: no drops); h (may be NULL) told before the last rank's
 * critical path; pre (may be NULL) read ahead for one of them. */
static int run_ranks(sqlite3 *db, int rank, int scratch, size_t host_rows, struct analyses_pre *pre,
                     const struct series_hook *h, struct err *e)
{
    struct an_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.host_rows_max = host_rows;
    c.wbuf = xcalloc(1, sizeof *c.wbuf);
    sqlite3_stmt *ranks = NULL, *ins_doc = NULL;
    int rc = 0, nranks = 0, done = 0;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "analyses (begin)");
    if ((!scratch && sqlite3_exec(db, drop_sql, NULL, NULL, NULL) != SQLITE_OK) ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "analyses (schema)");
        goto out;
    }
    if ((rc = rundb_prepare(db, "INSERT INTO anseries(rank, kind, key, name, unit) VALUES(?,?,?,?,?)", &c.ins_series,
                            e)) ||
        (rc = timeline_rows_open(&c.wbuf->smp, db, AN_SAMPLE_SQL "(?,?,?)", AN_SAMPLE_SQL TIMELINE_ROWS32("(?,?,?)"),
                                 3, 1u << 2, "analyses (sample insert)", e)) ||
        (rc = rundb_prepare(db, "INSERT INTO critseg(rank, step, t0, t1, n, segs) VALUES(?,?,?,?,?,?)", &c.ins_seg,
                            e)) ||
        (rc = rundb_prepare(db, "INSERT INTO analyses(rank, doc) VALUES(?,?)", &ins_doc, e)) ||
        (rc = rundb_prepare(db, "SELECT rank, count(*) OVER () FROM rank WHERE ?1 < 0 OR rank = ?1 ORDER BY rank",
                            &ranks, e)))
        goto out;
    sqlite3_bind_int(ranks, 1, rank);
    if ((rc = gpuscan_names_open(db, &c.names, e))) goto out;
    int src;
    while (rc == 0 && (src = sqlite3_step(ranks)) == SQLITE_ROW) {
        c.rank = sqlite3_column_int(ranks, 0);
        nranks = sqlite3_column_int(ranks, 1);
        rc = run_rank(&c, ins_doc, pre, ++done == nranks ? h : NULL, e);
    }
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (ranks)");
    if (rc == 0 && gpuscan_names_error(c.names, e) < 0) rc = err_prefix(e, "analyses");
out:
    analyses_load_free(&c);
    gpuscan_names_close(c.names);
    sqlite3_finalize(ranks);
    sqlite3_finalize(ins_doc);
    sqlite3_finalize(c.ins_series);
    sqlite3_finalize(c.ins_seg);
    timeline_rows_close(&c.wbuf->smp);
    varint_buf_free(&c.wbuf->seg);
    free(c.wbuf);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analyses (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int analyses_run(sqlite3 *db, struct err *e)
{
    return run_ranks(db, -1, 0, AN_HOST_ROWS, NULL, NULL, e);
}

int analyses_run_then(sqlite3 *db, struct analyses_pre *pre, void (*series_done)(void *arg), void *arg,
                      struct err *e)
{
    const struct series_hook h = { series_done, arg };
    return run_ranks(db, -1, 0, AN_HOST_ROWS, pre, series_done ? &h : NULL, e);
}

int analyses_run_held(sqlite3 *db, size_t host_rows, struct err *e)
{
    return run_ranks(db, -1, 0, host_rows, NULL, NULL, e);
}

int analyses_run_rank(sqlite3 *db, int rank, struct err *e)
{
    return run_ranks(db, rank, 1, AN_HOST_ROWS, NULL, NULL, e);
}

/* The scratch's documents copied into the run's, their queue series ids
 * (queue.c) moved by base like the anseries rows; JSON written back as
 * run_rank writes it. */
static int adopt_docs(sqlite3 *db, int64_t base, struct err *e)
{
    sqlite3_stmt *rd = NULL, *ins = NULL;
    int rc = rundb_prepare(db, "SELECT rank, doc FROM " RUNDB_ASIDE ".analyses ORDER BY rank", &rd, e);
    if (rc == 0) rc = rundb_prepare(db, "INSERT INTO main.analyses(rank, doc) VALUES(?,?)", &ins, e);
    int src = SQLITE_DONE;
    while (rc == 0 && (src = sqlite3_step(rd)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(rd, 1);
        json_t *doc = base && text ? json_loads(text, 0, NULL) : NULL;
        json_t *streams = json_object_get(json_object_get(doc, "queue"), "streams"), *st;
        size_t k;
        json_array_foreach(streams, k, st) {
            json_t *id = json_object_get(st, "series");
            if (json_is_integer(id)) json_integer_set(id, json_integer_value(id) + base);
        }
        sqlite3_reset(ins);
        sqlite3_bind_int(ins, 1, sqlite3_column_int(rd, 0));
        if (doc) sqlite3_bind_text(ins, 2, json_dumps(doc, JSON_COMPACT), -1, free);
        else sqlite3_bind_value(ins, 2, sqlite3_column_value(rd, 1));
        json_decref(doc);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
    }
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
    sqlite3_finalize(rd);
    sqlite3_finalize(ins);
    return rc;
}

/* The rows of analyses_adopt, inside its transaction. */
static int adopt_rows(sqlite3 *db, int first, struct err *e)
{
    if (first && (sqlite3_exec(db, drop_sql, NULL, NULL, NULL) != SQLITE_OK ||
                  sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK))
        return rundb_db_error(db, e, "analyses (adopt)");
    /* series ids go on from the ranks adopted before, as analyses_run numbers them */
    static const char *const copy[] = {
        "SELECT coalesce(max(id), 0) FROM main.anseries",
        "INSERT INTO main.anseries SELECT id + ?1, rank, kind, key, name, unit FROM " RUNDB_ASIDE ".anseries"
        " ORDER BY id",
        "INSERT INTO main.ansample SELECT series + ?1, ts, value FROM " RUNDB_ASIDE ".ansample",
        "INSERT INTO main.critseg SELECT * FROM " RUNDB_ASIDE ".critseg",
    };
    int64_t base = 0;
    int rc = 0;
    for (size_t i = 0; i < sizeof copy / sizeof copy[0] && rc == 0; i++) {
        sqlite3_stmt *st;
        if ((rc = rundb_prepare(db, copy[i], &st, e)) != 0) break;
        if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, base);
        int step = sqlite3_step(st);
        if (i == 0 && step == SQLITE_ROW) base = sqlite3_column_int64(st, 0);
        else if (step != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
        sqlite3_finalize(st);
        if (i == 0 && rc == 0) rc = adopt_docs(db, base, e);
    }
    return rc;
}

int analyses_adopt(sqlite3 *db, int first, int last, struct err *e)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "analyses (adopt)");
    (void)last; /* the key needs no index built at the end */
    int rc = adopt_rows(db, first, e);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analyses (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ====================================================================== */
/* Readers                                                                */
/* ====================================================================== */

int analyses_read(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    *out = NULL;
    int rc = scan_has_table(db, "analyses", e);
    if (rc <= 0) return rc;
    sqlite3_stmt *st;
    if (rundb_prepare(db, "SELECT rank, doc FROM analyses WHERE ?1 < 0 OR rank = ?1 ORDER BY rank", &st, e))
        return e->code;
    sqlite3_bind_int(st, 1, rank);
    json_t *all = json_object();
    char key[16];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_error_t je;
        json_t *doc = json_loadb((const char *)sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1), 0,
                                 &je);
        snprintf(key, sizeof key, "%d", sqlite3_column_int(st, 0));
        json_object_set_new(all, key, doc ? doc : json_null());
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(all);
        return rundb_db_error(db, e, "analyses (read)");
    }
    *out = all;
    return 0;
}

/* GET /critpath's answer is at most this many segments (the earliest). */
#define CP_READ_MAX 200000
#define CP_STR_(x) #x
#define CP_STR(x) CP_STR_(x)

struct cp_read {
    int64_t ts, dur, track, slice;
    int step, cat;
};

static int cp_read_cmp(const void *a, const void *b)
{
    const struct cp_read *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* The segments of the critseg rows that st yields (step, t0, n, segs, by
 * t0) overlapping [t0, t1): the first CP_READ_MAX in (ts, step) order, the
 * order of the table's key before the blobs. OUT *out, *n: owned by caller. */
static int critseg_read(sqlite3 *db, sqlite3_stmt *st, int64_t t0, int64_t t1, struct cp_read **out, size_t *n,
                        struct err *e)
{
    struct cp_read *v = NULL;
    size_t nv = 0, cap = 0;
    int sorted = 1, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        /* blobs come by start: none of a later one can go before the
         * CP_READ_MAX first held, once those are in order */
        if (sorted && nv >= CP_READ_MAX && sqlite3_column_int64(st, 1) > v[CP_READ_MAX - 1].ts) {
            rc = SQLITE_DONE;
            break;
        }
        const int step = sqlite3_column_int(st, 0);
        const int64_t nseg = sqlite3_column_int64(st, 2);
        /* an empty blob comes as NULL: no offset on it */
        const uint8_t *p = sqlite3_column_blob(st, 3), *end = p ? p + sqlite3_column_bytes(st, 3) : p;
        int64_t ts = 0, slice = 0;
        for (int64_t k = 0; k < nseg; k++) {
            uint64_t dur, cat, track;
            if (!get_delta(&p, end, ts, &ts) || !varint_get(&p, end, &dur) || !varint_get(&p, end, &cat) ||
                !varint_get(&p, end, &track) || !get_delta(&p, end, slice, &slice) || dur > INT64_MAX ||
                cat >= AN_CP_NCAT) {
                free(v);
                return rundb_damaged(db, e, "a critical-path segment cut short or out of range");
            }
            int64_t last;
            if (ts >= t1 || (!__builtin_add_overflow(ts, (int64_t)dur, &last) && last <= t0)) continue;
            if (nv == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 4096) * sizeof *v);
            v[nv] = (struct cp_read){ ts, (int64_t)dur, (int64_t)track, slice, step, (int)cat };
            if (nv && cp_read_cmp(&v[nv - 1], &v[nv]) > 0) sorted = 0;
            nv++;
        }
        if (p != end) {
            free(v);
            return rundb_damaged(db, e, "a critical-path step holds more than its segments");
        }
        if (!sorted && nv > 2 * CP_READ_MAX) { /* steps that overlap: keep the earliest */
            qsort(v, nv, sizeof *v, cp_read_cmp);
            nv = CP_READ_MAX;
            sorted = 1;
        }
    }
    if (rc != SQLITE_DONE) {
        free(v);
        return rundb_db_error(db, e, "analyses (critical path)");
    }
    if (!sorted) qsort(v, nv, sizeof *v, cp_read_cmp);
    *out = v;
    *n = nv < CP_READ_MAX ? nv : CP_READ_MAX;
    return 0;
}

/* The same from a run stored before the blobs: critpath, a row per
 * segment (a WITHOUT ROWID table keyed (rank, ts, step), or earlier a
 * rowid table with its index critpath_rank_ts). */
static int critpath_rows_read(sqlite3 *db, sqlite3_stmt *st, struct cp_read **out, size_t *n, struct err *e)
{
    struct cp_read *v = NULL;
    size_t nv = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (nv == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 4096) * sizeof *v);
        v[nv++] = (struct cp_read){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), 0,
                                    sqlite3_column_int(st, 2) };
    }
    if (rc != SQLITE_DONE) {
        free(v);
        return rundb_db_error(db, e, "analyses (critical path)");
    }
    *out = v;
    *n = nv;
    return 0;
}

int analyses_critpath(sqlite3 *db, int rank, int step, int64_t t0, int64_t t1, json_t **out, struct err *e)
{
    *out = NULL;
    int blobs = scan_has_table(db, "critseg", e), rc = blobs;
    if (rc == 0) rc = scan_has_table(db, "critpath", e);
    if (rc < 0) return rc;
    if (!rc) return err_set(e, ERR_NOT_FOUND, "this run has no critical path (imported before the analyses existed)");
    sqlite3_stmt *st;
    if (rundb_prepare(db,
                      blobs ? "SELECT step, t0, n, segs FROM critseg WHERE rank = ?1 AND (?2 < 0 OR step = ?2)"
                              " AND t0 < ?4 AND t1 > ?3 ORDER BY t0, step"
                            : "SELECT ts, dur, cat, track, slice FROM critpath WHERE rank = ?1 AND (?2 < 0 OR step = ?2)"
                              " AND ts < ?4 AND ts + dur > ?3 ORDER BY ts LIMIT " CP_STR(CP_READ_MAX),
                      &st, e))
        return e->code;
    sqlite3_bind_int(st, 1, rank);
    sqlite3_bind_int(st, 2, step);
    sqlite3_bind_int64(st, 3, t0);
    sqlite3_bind_int64(st, 4, t1);
    struct cp_read *v = NULL;
    size_t n = 0;
    rc = blobs ? critseg_read(db, st, t0, t1, &v, &n, e) : critpath_rows_read(db, st, &v, &n, e);
    sqlite3_finalize(st);
    if (rc) return rc;
    json_t *segs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(segs, json_pack("[I,I,i,I,I]", (json_int_t)v[i].ts, (json_int_t)v[i].dur, v[i].cat,
                                              (json_int_t)v[i].track, (json_int_t)v[i].slice));
    free(v);
    json_t *cats = json_array();
    for (int i = 0; i < AN_CP_NCAT; i++) json_array_append_new(cats, json_string(an_cp_names[i]));
    *out = json_pack("{s:i,s:o,s:o}", "step", step, "categories", cats, "segments", segs);
    return 0;
}
