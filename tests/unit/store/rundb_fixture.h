/*
 * rundb_fixture.h — shared by the tests/unit/store rundb*_test.c and
 * scan_test.c files (header only): a scratch folder, a one-value query, a
 * slice adder and a small finished run written through the real writer.
 *
 * Usage: fixture_dir() once in main (mkdtemp), then fixture_path("x.db");
 * fixture_run(path, nranks) writes ranks 0..n-1 each with one CPU thread
 * (cpu_op A over runtime launches) and one GPU stream (two kernels, one
 * memcpy), distributedInfo.rank = n-1-rank. fixture_cleanup() at the end.
 */
#ifndef TB_RUNDB_FIXTURE_H
#define TB_RUNDB_FIXTURE_H

#include <unistd.h>

#include "base/fsutil.h"
#include "base/xmalloc.h"
#include "harness.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"

static char fixture_root[] = "/tmp/tb_store_XXXXXX";
static int fixture_add_failures;

static inline int fixture_dir(void)
{
    return mkdtemp(fixture_root) ? 0 : -1;
}

/* Owned by caller. */
static inline char *fixture_path(const char *name)
{
    return xasprintf("%s/%s", fixture_root, name);
}

static inline int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -2;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static inline void add_kind(struct rundb_writer *w, uint32_t track, uint32_t name, enum tb_kind kind, int64_t ts,
                     int64_t dur, int64_t corr)
{
    struct err e;
    struct tb_slice s = { track, name, 0, kind, ts, dur, corr, 0, "{\"a\":1}", 7 };
    if (rundb_add_slice(w, &s, &e) != 0) fixture_add_failures++;
}

static inline void add(struct rundb_writer *w, uint32_t track, uint32_t name, int64_t ts, int64_t dur)
{
    add_kind(w, track, name, TB_K_CPU_OP, ts, dur, 0);
}

/* A new writer at fixture_path(name) with rank open, and one track and
 * name to add slices with. OUT *w: NULL when a step failed (the test
 * fails here). */
static inline void fixture_writer(const char *name, int rank, struct rundb_writer **w, uint32_t *track,
                                  uint32_t *str)
{
    struct err e;
    char *path = fixture_path(name);
    *w = NULL;
    *track = *str = 0;
    int rc = rundb_create(path, 1 << 20, fixture_root, w, &e);
    free(path);
    REQUIRE(rc == 0);
    REQUIRE(rundb_begin_rank(*w, rank, "rank.json", 1, &e) == 0);
    *track = rundb_track(*w, "1", 1, "1", 1);
    *str = rundb_intern(*w, "op", 2);
}

static inline int fixture_run(const char *path, int nranks)
{
    struct rundb_writer *w;
    struct err e;
    if (rundb_create(path, 1 << 20, fixture_root, &w, &e) != 0) return -1;
    for (int r = 0; r < nranks; r++) {
        char file[32];
        snprintf(file, sizeof file, "rank%d.json", r);
        if (rundb_begin_rank(w, r, file, 1, &e) != 0) goto fail;
        uint32_t cpu = rundb_track(w, "1", 1, "1", 1), gpu = rundb_track(w, "0", 1, "7", 1);
        rundb_track_set_kind(w, gpu, TB_TRACK_GPU);
        uint32_t op = rundb_intern(w, "aten::mm", 8), launch = rundb_intern(w, "cudaLaunchKernel", 16);
        uint32_t k = rundb_intern(w, "gemm", 4);
        add_kind(w, cpu, op, TB_K_CPU_OP, 100, 1000, 0);
        add_kind(w, cpu, launch, TB_K_RUNTIME, 200, 10, 11);
        add_kind(w, cpu, launch, TB_K_RUNTIME, 400, 10, 12);
        add_kind(w, gpu, k, TB_K_KERNEL, 300, 50, 11);
        add_kind(w, gpu, k, TB_K_MEMCPY, 360, 5, 0);
        add_kind(w, gpu, k, TB_K_KERNEL, 500, 50, 12);
        json_t *hdr = json_pack("{s:{s:i}}", "distributedInfo", "rank", nranks - 1 - r);
        int rc = rundb_set_rank_header(w, hdr, "kineto", 0, &e);
        json_decref(hdr);
        if (rc != 0 || rundb_finish_rank(w, NULL, &e) != 0) goto fail;
    }
    return rundb_close_writer(w, &e);
fail:
    rundb_abort(w);
    return -1;
}

static inline void fixture_cleanup(void)
{
    struct err e;
    CHECK_EQ_INT(fixture_add_failures, 0);
    fsutil_rmtree(fixture_root, &e);
}

#endif
