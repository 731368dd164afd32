/* gpuscan_test — the host/GPU readers of gpuscan.h on crafted Kineto traces
 * imported through the real pipeline (rules_fixture.h), then read from the
 * run database opened read-only: the classification of a slice, a device's
 * streams merged in start order from a window start (with the op that
 * began before the window), host sweeps over nested slices with each
 * activity's time, a slice overlapping its parent's end cut there, and
 * cursors that never move backwards. Times in the traces are µs; the
 * database holds ns, so expectations are taken relative to an anchor
 * slice read back from the database. */
#include <fcntl.h>
#include <unistd.h>

#include "rules_fixture.h"

#include "derive/gpuscan.h"
#include "store/model.h"

/* ---------------------------------------------------------------------- */
/* Traces and the run database                                              */
/* ---------------------------------------------------------------------- */

struct tbuf {
    char *s;
    size_t n, cap;
};

static void tb_add(struct tbuf *b, const char *ev)
{
    size_t k = strlen(ev);
    if (b->n + k + 2 > b->cap) b->s = xrealloc(b->s, b->cap = (b->n + k + 2) * 2);
    if (b->n) b->s[b->n++] = ',';
    memcpy(b->s + b->n, ev, k + 1);
    b->n += k;
}

/* A complete event: pid/tid as given, times in µs, args "" or members. */
static void ev(struct tbuf *b, const char *cat, const char *name, int pid, int tid, int ts, int dur, const char *args)
{
    char e[512];
    snprintf(e, sizeof e,
             "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"dur\":%d,\"args\":{%s}}",
             cat, name, pid, tid, ts, dur, args);
    tb_add(b, e);
}

#define HOST_PID 100
/* A host slice on thread 1. */
static void hostev(struct tbuf *b, const char *cat, const char *name, int ts, int dur)
{
    ev(b, cat, name, HOST_PID, 1, ts, dur, "");
}

/* A GPU op on (device, stream) with correlation id corr. */
static void gpuev(struct tbuf *b, const char *cat, int device, int stream, int ts, int dur, int corr)
{
    char args[128];
    snprintf(args, sizeof args, "\"device\":%d,\"stream\":%d,\"correlation\":%d", device, stream, corr);
    ev(b, cat, cat[0] == 'k' ? "some_kernel" : "some_copy", device, stream, ts, dur, args);
}

/* Imports events as a one-rank run and opens its database read-only;
 * NULL on failure. */
static sqlite3 *import_ro(const char *events)
{
    struct err e;
    char id[CATALOG_ID_LEN + 1];
    sqlite3 *db = NULL;
    char *path = fixture_write(DEV_H100, "", events, 0);
    if (!path) return NULL;
    struct ingest_file f = { path, path, 0 };
    struct ingest_request req = { NULL, &f, 1, NULL };
    if (ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) != 0) {
        fprintf(stderr, "import failed: %s\n", e.msg);
    } else {
        char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
        if (rundb_open_ro(dbp, &db, &e) != 0) fprintf(stderr, "open: %s\n", e.msg);
        free(dbp);
    }
    unlink(path);
    free(path);
    return db;
}

/* One integer from sql with an optional text parameter; -1 when no row. */
static int64_t q_int(sqlite3 *db, const char *sql, const char *param)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    if (param) sqlite3_bind_text(st, 1, param, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Start (ns) of the slice named name. */
static int64_t ts_of(sqlite3 *db, const char *name)
{
    return q_int(db, "SELECT ts FROM slice WHERE name = (SELECT id FROM str WHERE s = ?)", name);
}

/* The host thread's track (pid HOST_PID, tid 1). */
static int64_t host_track(sqlite3 *db)
{
    return q_int(db, "SELECT id FROM track WHERE pid = '100' AND tid = '1'", NULL);
}

/* ---------------------------------------------------------------------- */
/* Classification                                                           */
/* ---------------------------------------------------------------------- */

static void test_act_of(void)
{
    CHECK_EQ_INT(gpuscan_act_of("cudaStreamSynchronize", TB_K_RUNTIME), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_act_of("cudaDeviceSynchronize", TB_K_RUNTIME), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_act_of("cudaMemcpy", TB_K_RUNTIME), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_act_of("cuMemFree_v2", TB_K_DRIVER), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_act_of("cudaMemcpyAsync", TB_K_RUNTIME), GPUSCAN_LAUNCH);
    CHECK_EQ_INT(gpuscan_act_of("cudaLaunchKernel", TB_K_RUNTIME), GPUSCAN_LAUNCH);
    CHECK_EQ_INT(gpuscan_act_of("cuLaunchKernel", TB_K_DRIVER), GPUSCAN_LAUNCH);
    CHECK_EQ_INT(gpuscan_act_of("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                                TB_K_USER_ANNOTATION),
                 GPUSCAN_DATALOADER);
    CHECK_EQ_INT(gpuscan_act_of("nccl:all_reduce", TB_K_CPU_OP), GPUSCAN_COMM);
    CHECK_EQ_INT(gpuscan_act_of("gloo:all_reduce", TB_K_USER_ANNOTATION), GPUSCAN_COMM);
    CHECK_EQ_INT(gpuscan_act_of("aten::mm", TB_K_CPU_OP), GPUSCAN_OP);
    CHECK_EQ_INT(gpuscan_act_of("Optimizer.step#AdamW.step", TB_K_USER_ANNOTATION), GPUSCAN_REGION);
    /* slices that say nothing about host activity */
    CHECK_EQ_INT(gpuscan_act_of("ProfilerStep#3", TB_K_USER_ANNOTATION), -1);
    CHECK_EQ_INT(gpuscan_act_of("train.py(10): step", TB_K_PYTHON), -1);
    CHECK_EQ_INT(gpuscan_act_of("some_kernel", TB_K_KERNEL), -1);
    CHECK_EQ_INT(gpuscan_act_of("cudaStreamSynchronize", TB_K_SYNC), -1);
    /* a stack's activity: the highest priority present */
    struct gpuscan_frame f[3] = { { 10, 1, GPUSCAN_REGION }, { 9, 2, GPUSCAN_OP }, { 8, 3, GPUSCAN_SYNC } };
    CHECK_EQ_INT(gpuscan_stack_act(f, 3), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_stack_act(f, 2), GPUSCAN_OP);
    CHECK_EQ_INT(gpuscan_stack_act(f, 0), GPUSCAN_NONE);
}

/* ---------------------------------------------------------------------- */
/* GPU streams merged in start order                                        */
/* ---------------------------------------------------------------------- */

/* Device 0 has streams 7 and 8, device 1 stream 9; the window is [1000,
 * 1100) µs, marked by a host "anchor" slice at 1000. Ops (corr): 10 on
 * s7 [800, 850) ends before the window; 1 on s7 [900, 1010) starts before
 * it and runs into it; then 2 s8 1005, 3 s7 1020, 4 s8 1040 (memcpy), 5 s7
 * 1060, 6 s8 1080 (memset); 11 on s7 at 1200 and 12 on s8 at 1150 start
 * after it; 20 on device 1 at 1030 is another device's. */
static void test_lanes_merge(void)
{
    struct tbuf b = { 0 };
    hostev(&b, "user_annotation", "anchor", 1000, 100);
    gpuev(&b, "kernel", 0, 7, 800, 50, 10);
    gpuev(&b, "kernel", 0, 7, 900, 110, 1);
    gpuev(&b, "kernel", 0, 8, 1005, 10, 2);
    gpuev(&b, "kernel", 0, 7, 1020, 10, 3);
    gpuev(&b, "gpu_memcpy", 0, 8, 1040, 5, 4);
    gpuev(&b, "kernel", 0, 7, 1060, 10, 5);
    gpuev(&b, "gpu_memset", 0, 8, 1080, 3, 6);
    gpuev(&b, "kernel", 0, 7, 1200, 10, 11);
    gpuev(&b, "kernel", 0, 8, 1150, 10, 12);
    gpuev(&b, "kernel", 1, 9, 1030, 10, 20);
    sqlite3 *db = import_ro(b.s);
    free(b.s);
    REQUIRE(db != NULL);
    int64_t t0 = ts_of(db, "anchor");
    REQUIRE(t0 >= 0);
    int64_t us = 1000; /* ns per µs */
    struct err e;
    struct gpuscan_lanes *L;
    struct gpuscan_op op;
    static const int64_t want_corr[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t want_ts[] = { 900, 1005, 1020, 1040, 1060, 1080 };
    static const int64_t want_dur[] = { 110, 10, 10, 5, 10, 3 };
    CHECK_EQ_INT(gpuscan_lanes_open(db, 0, 0, t0, t0 + 100 * us, &L, &e), 0);
    if (L) {
        size_t n = 0;
        int rc;
        while ((rc = gpuscan_lanes_next(L, &op, &e)) > 0) {
            if (n < 6) {
                CHECK_EQ_INT(op.corr, want_corr[n]);
                CHECK_EQ_INT(op.ts, t0 + (want_ts[n] - 1000) * us);
                CHECK_EQ_INT(op.end - op.ts, want_dur[n] * us);
            }
            n++;
        }
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(n, 6);
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 0); /* stays done */
        gpuscan_lanes_close(L);
    }
    /* from a window start after every op: nothing but the last op of each
     * stream before it (s7's at 1200, s8's at 1150), in start order */
    CHECK_EQ_INT(gpuscan_lanes_open(db, 0, 0, t0 + 300 * us, t0 + 400 * us, &L, &e), 0);
    if (L) {
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 1);
        CHECK_EQ_INT(op.corr, 12);
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 1);
        CHECK_EQ_INT(op.corr, 11);
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 0);
        gpuscan_lanes_close(L);
    }
    /* device 1 alone */
    CHECK_EQ_INT(gpuscan_lanes_open(db, 0, 1, t0, t0 + 100 * us, &L, &e), 0);
    if (L) {
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 1);
        CHECK_EQ_INT(op.corr, 20);
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 0);
        gpuscan_lanes_close(L);
    }
    /* a rank without GPU streams: an empty merge */
    CHECK_EQ_INT(gpuscan_lanes_open(db, 5, 0, t0, t0 + 100 * us, &L, &e), 0);
    if (L) {
        CHECK_EQ_INT(gpuscan_lanes_next(L, &op, &e), 0);
        gpuscan_lanes_close(L);
    }
    gpuscan_lanes_close(NULL);
    sqlite3_close(db);
}

/* ---------------------------------------------------------------------- */
/* Host sweeps                                                              */
/* ---------------------------------------------------------------------- */

#define MAXSTRETCH 32
struct rec {
    int n;
    int act[MAXSTRETCH], depth[MAXSTRETCH];
    int64_t ns[MAXSTRETCH];
    uint32_t inner[MAXSTRETCH], outer[MAXSTRETCH];
    int64_t total[GPUSCAN_NACT];
};

static void on_stretch(void *arg, int act, const struct gpuscan_frame *stack, int n, int64_t ns)
{
    struct rec *r = arg;
    r->total[act] += ns;
    if (r->n == MAXSTRETCH) return;
    r->act[r->n] = act;
    r->depth[r->n] = n;
    r->ns[r->n] = ns;
    r->inner[r->n] = n ? stack[n - 1].name : 0;
    r->outer[r->n] = n ? stack[0].name : 0;
    r->n++;
}

static const char *name_of(struct gpuscan_names *nm, uint32_t id)
{
    static char buf[128];
    return gpuscan_names_text(nm, id, buf, sizeof buf);
}

/* One host thread (times µs):
 *   ProfilerStep#1 [985, 1600) and a Python frame [995, 1105): ignored;
 *   nest 1, each inner slice of higher priority than the one around it:
 *     region [1000, 1100) > op [1010, 1090) > launch [1020, 1080) >
 *     sync [1030, 1070) > collective [1035, 1065) > DataLoader [1040, 1060);
 *   nest 2, a DataLoader call around an op and its launch:
 *     DataLoader [1200, 1300) > op [1210, 1290) > launch [1220, 1230);
 *   nest 3, a launch overlapping its op's end:
 *     op [1400, 1450) > launch [1440, 1460). */
static char *host_trace(void)
{
    struct tbuf b = { 0 };
    hostev(&b, "user_annotation", "ProfilerStep#1", 985, 615);
    hostev(&b, "python_function", "train.py(10): step", 995, 110);
    hostev(&b, "user_annotation", "my_region", 1000, 100);
    hostev(&b, "cpu_op", "aten::foo", 1010, 80);
    hostev(&b, "cuda_runtime", "cudaLaunchKernel", 1020, 60);
    hostev(&b, "cuda_runtime", "cudaDeviceSynchronize", 1030, 40);
    hostev(&b, "cpu_op", "nccl:all_reduce", 1035, 30);
    hostev(&b, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1040, 20);
    hostev(&b, "user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1200, 100);
    hostev(&b, "cpu_op", "aten::copy_", 1210, 80);
    hostev(&b, "cuda_runtime", "cudaMemcpyAsync", 1220, 10);
    hostev(&b, "cpu_op", "aten::bar", 1400, 50);
    hostev(&b, "cuda_runtime", "cuLaunchKernelEx", 1440, 20);
    gpuev(&b, "kernel", 0, 7, 1000, 10, 1);
    return b.s;
}

/* The sweeps of host_trace's thread, its rows read from run.db or (held)
 * held in memory as the rules' launch preload keeps them: alike. */
static void host_sweep(int held)
{
    char *events = host_trace();
    sqlite3 *db = import_ro(events);
    free(events);
    REQUIRE(db != NULL);
    int64_t t0 = ts_of(db, "my_region"), track = host_track(db), us = 1000;
    REQUIRE(t0 >= 0);
    REQUIRE(track >= 0);
    struct err e;
    struct gpuscan_names *nm;
    REQUIRE(gpuscan_names_open(db, &nm, &e) == 0);
    struct gpuscan_hosts *H = gpuscan_hosts_open(db, nm);
    struct scan_launch *l = NULL;
    if (held) {
        const struct scan_brief *rows;
        size_t n, nheld = 0;
        int64_t tr;
        REQUIRE(scan_launch_open(db, 0, &l, &e) == 0);
        CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, 1000, &e), 1);
        for (size_t i = 0; scan_launch_acts(l, i, &tr, &rows, &n); i++) {
            gpuscan_hosts_hold(H, tr, rows, n, sizeof *rows);
            if (tr == track) nheld = n;
        }
        CHECK_EQ_INT(nheld, 12); /* the thread's operators, annotations and launch calls */
    }
    struct gpuscan_host *h = NULL, *h2 = NULL;
    CHECK_EQ_INT(gpuscan_hosts_get(H, track, &h, &e), 0);
    CHECK_EQ_INT(gpuscan_hosts_get(H, track, &h2, &e), 0);
    CHECK(h && h == h2); /* one cursor per thread */
    if (!h) goto out;

    /* nest 1, swept over [990, 1110): every level in turn, in and out */
    struct rec r = { 0 };
    CHECK_EQ_INT(gpuscan_host_sweep(h, t0 - 10 * us, t0 + 110 * us, on_stretch, &r, &e), 0);
    static const int want_act[] = { GPUSCAN_NONE, GPUSCAN_REGION, GPUSCAN_OP,    GPUSCAN_LAUNCH, GPUSCAN_SYNC,
                                    GPUSCAN_COMM, GPUSCAN_DATALOADER, GPUSCAN_COMM, GPUSCAN_SYNC, GPUSCAN_LAUNCH,
                                    GPUSCAN_OP,   GPUSCAN_REGION, GPUSCAN_NONE };
    static const int64_t want_ns[] = { 10, 10, 10, 10, 5, 5, 20, 5, 5, 10, 10, 10, 10 };
    static const int want_depth[] = { 0, 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1, 0 };
    CHECK_EQ_INT(r.n, 13);
    for (int i = 0; i < 13 && i < r.n; i++) {
        CHECK_EQ_INT(r.act[i], want_act[i]);
        CHECK_EQ_INT(r.ns[i], want_ns[i] * us);
        CHECK_EQ_INT(r.depth[i], want_depth[i]); /* the Python frame and the step are not on the stack */
    }
    CHECK_EQ_INT(r.total[GPUSCAN_DATALOADER], 20 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_COMM], 10 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_SYNC], 10 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_LAUNCH], 20 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_OP], 20 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_REGION], 20 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_NONE], 20 * us);
    if (r.n > 6) { /* the stack, outermost first */
        CHECK_EQ_STR(name_of(nm, r.outer[6]), "my_region");
        CHECK_EQ_STR(name_of(nm, r.inner[6]), "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        CHECK_EQ_STR(name_of(nm, r.inner[4]), "cudaDeviceSynchronize");
    }

    /* nest 2, swept on from where the last sweep ended: the DataLoader
     * holds its whole span although an op and a launch run inside it */
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(gpuscan_host_sweep(h, t0 + 110 * us, t0 + 310 * us, on_stretch, &r, &e), 0);
    CHECK_EQ_INT(r.total[GPUSCAN_DATALOADER], 100 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_NONE], 100 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_OP] + r.total[GPUSCAN_LAUNCH], 0);
    CHECK(r.n > 2 && r.depth[2] == 2 && r.act[2] == GPUSCAN_DATALOADER);

    /* nest 3: the launch [1440, 1460) is cut at its op's end (1450) */
    CHECK(ts_of(db, "cuLaunchKernelEx") + 20 * us > ts_of(db, "aten::bar") + 50 * us); /* stored uncut */
    CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 445 * us, &e), 0);
    int n;
    const struct gpuscan_frame *f = gpuscan_host_stack(h, &n);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_STR(name_of(nm, f[0].name), "aten::bar");
        CHECK_EQ_INT(f[0].act, GPUSCAN_OP);
        CHECK_EQ_STR(name_of(nm, f[1].name), "cuLaunchKernelEx");
        CHECK_EQ_INT(f[1].act, GPUSCAN_LAUNCH);
        CHECK_EQ_INT(f[1].end, t0 + 450 * us);
        CHECK_EQ_INT(f[0].end, t0 + 450 * us);
    }
    CHECK_EQ_INT(gpuscan_host_in(h, GPUSCAN_LAUNCH), 1);
    CHECK_EQ_INT(gpuscan_host_in(h, GPUSCAN_SYNC), 0);

    /* seek never moves backwards: an earlier time (inside nest 1) leaves
     * the cursor at 1445 with the same stack */
    CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 45 * us, &e), 0);
    f = gpuscan_host_stack(h, &n);
    CHECK_EQ_INT(n, 2);
    if (n == 2) CHECK_EQ_STR(name_of(nm, f[1].name), "cuLaunchKernelEx");
    CHECK_EQ_INT(gpuscan_host_in(h, GPUSCAN_DATALOADER), 0);

    /* the rest of nest 3: 5 µs of launch to the cut, then nothing open */
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(gpuscan_host_sweep(h, t0 + 445 * us, t0 + 500 * us, on_stretch, &r, &e), 0);
    CHECK_EQ_INT(r.n, 2);
    CHECK_EQ_INT(r.act[0], GPUSCAN_LAUNCH);
    CHECK_EQ_INT(r.ns[0], 5 * us);
    CHECK_EQ_INT(r.total[GPUSCAN_NONE], 50 * us);

    /* a thread without slices: nothing open, ever */
    struct gpuscan_host *none = NULL;
    CHECK_EQ_INT(gpuscan_hosts_get(H, 999999, &none, &e), 0);
    if (none) {
        memset(&r, 0, sizeof r);
        CHECK_EQ_INT(gpuscan_host_sweep(none, t0, t0 + 100 * us, on_stretch, &r, &e), 0);
        CHECK_EQ_INT(r.n, 1);
        CHECK_EQ_INT(r.total[GPUSCAN_NONE], 100 * us);
    }
out:
    gpuscan_hosts_close(H);
    scan_launch_close(l);
    gpuscan_names_close(nm);
    sqlite3_close(db);
}

static void test_host_sweep(void)
{
    host_sweep(0);
}

static void test_host_sweep_held(void)
{
    host_sweep(1);
}

/* A fresh cursor seeked straight into a nest: the stack is the slices open
 * then; the name cache answers like the str table; a held cursor reads
 * only what it holds. */
static void test_seek_and_names(void)
{
    char *events = host_trace();
    sqlite3 *db = import_ro(events);
    free(events);
    REQUIRE(db != NULL);
    int64_t t0 = ts_of(db, "my_region"), track = host_track(db), us = 1000;
    struct err e;
    struct gpuscan_names *nm;
    REQUIRE(gpuscan_names_open(db, &nm, &e) == 0);
    struct gpuscan_hosts *H = gpuscan_hosts_open(db, nm);
    struct gpuscan_host *h = NULL;
    CHECK_EQ_INT(gpuscan_hosts_get(H, track, &h, &e), 0);
    if (h) {
        int n;
        CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 50 * us, &e), 0);
        const struct gpuscan_frame *f = gpuscan_host_stack(h, &n);
        CHECK_EQ_INT(n, 6);
        CHECK_EQ_INT(gpuscan_stack_act(f, n), GPUSCAN_DATALOADER);
        CHECK_EQ_INT(gpuscan_host_in(h, GPUSCAN_SYNC), 1);
        /* at a slice's end it is closed */
        CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 60 * us, &e), 0);
        f = gpuscan_host_stack(h, &n);
        CHECK_EQ_INT(n, 5);
        CHECK_EQ_INT(gpuscan_stack_act(f, n), GPUSCAN_COMM);
        /* past the nest, then back: still past it */
        CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 150 * us, &e), 0);
        gpuscan_host_stack(h, &n);
        CHECK_EQ_INT(n, 0);
        CHECK_EQ_INT(gpuscan_host_seek(h, t0 + 50 * us, &e), 0);
        gpuscan_host_stack(h, &n);
        CHECK_EQ_INT(n, 0);
    }
    uint32_t id = (uint32_t)q_int(db, "SELECT id FROM str WHERE s = ?", "cudaDeviceSynchronize");
    CHECK_EQ_INT(gpuscan_names_act(nm, id, TB_K_RUNTIME), GPUSCAN_SYNC);
    CHECK_EQ_INT(gpuscan_names_act(nm, id, TB_K_RUNTIME), GPUSCAN_SYNC); /* cached */
    CHECK_EQ_INT(gpuscan_names_act(nm, id, TB_K_CPU_OP), GPUSCAN_OP);   /* the kind is part of the key */
    char small[8];
    CHECK_EQ_STR(gpuscan_names_text(nm, id, small, sizeof small), "cudaDev");
    CHECK_EQ_STR(gpuscan_names_text(nm, 0x7fffffff, small, sizeof small), "");
    gpuscan_hosts_close(H);
    /* a held thread's cursor reads the rows it was given, not run.db: none
     * given, nothing open where the trace has a whole nest */
    H = gpuscan_hosts_open(db, nm);
    gpuscan_hosts_hold(H, track, NULL, 0, sizeof(struct scan_brief));
    h = NULL;
    CHECK_EQ_INT(gpuscan_hosts_get(H, track, &h, &e), 0);
    if (h) {
        struct rec r = { 0 };
        CHECK_EQ_INT(gpuscan_host_sweep(h, t0, t0 + 100 * us, on_stretch, &r, &e), 0);
        CHECK_EQ_INT(r.n, 1);
        CHECK_EQ_INT(r.total[GPUSCAN_NONE], 100 * us);
    }
    gpuscan_hosts_close(H);
    gpuscan_names_close(nm);
    sqlite3_close(db);
}

/* A name that cannot be read (a garbled page of str) is kept as an error
 * for whoever used the reader, not taken for an unknown name. */
static void test_names_error(void)
{
    char dir[] = "/tmp/tb_gpuscan_names_XXXXXX", path[64];
    sqlite3 *db;
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/run.db", dir);
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "PRAGMA page_size=1024; CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT);"
                         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
                         " INSERT INTO str SELECT i, 'aten::op_' || i || '................................' FROM n;",
                         NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    int fd = open(path, O_RDWR);
    REQUIRE(fd >= 0);
    off_t end = lseek(fd, 0, SEEK_END);
    char junk[1024];
    memset(junk, 0x5a, sizeof junk);
    REQUIRE(pwrite(fd, junk, sizeof junk, end - 1024) == 1024); /* the leaf holding the last ids */
    close(fd);
    REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    struct gpuscan_names *nm;
    struct err e;
    char buf[64];
    REQUIRE(gpuscan_names_open(db, &nm, &e) == 0);
    CHECK_EQ_STR(gpuscan_names_text(nm, 1, buf, sizeof buf), "aten::op_1................................");
    CHECK_EQ_INT(gpuscan_names_error(nm, &e), 0);
    CHECK_EQ_STR(gpuscan_names_text(nm, 2000, buf, sizeof buf), "");
    CHECK(gpuscan_names_error(nm, &e) < 0);
    CHECK(strstr(e.msg, "malformed") != NULL);
    /* the activity answer is not cached on a failed lookup */
    CHECK_EQ_INT(gpuscan_names_act(nm, 1999, TB_K_CPU_OP), GPUSCAN_OP);
    gpuscan_names_close(nm);
    sqlite3_close(db);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    fixture_init();
    RUN(test_act_of);
    RUN(test_lanes_merge);
    RUN(test_host_sweep);
    RUN(test_host_sweep_held);
    RUN(test_seek_and_names);
    RUN(test_names_error);
    fixture_done();
    return harness_done("gpuscan");
}
