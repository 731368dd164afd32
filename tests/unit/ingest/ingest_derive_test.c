/* ingest_derive_test — the ranks of a multi-rank run derived in parallel
 * (ingest_derive.c) give the tables a serial derive gives, series ids and
 * the documents naming them included; scratch files a crash left are
 * replaced and none is left after a derive, nor after one that fails, and
 * every thread is joined; the timeline and summaries begun early (before
 * the indexes, the folder renamed under them) give the tables of a derive
 * that builds them itself. The machine's cores do not matter: the tests
 * name the threads. */
#include "base/fsutil.h"
#include "base/xmalloc.h"
#include "harness.h"
#include "ingest/ingest.h"
#include "ingest/ingest_derive.h"
#include "ingest_fixture.h"
#include "store/rundb.h"
#include "store/rundb_stage.h"

#include <dirent.h>
#include <unistd.h>

static char root[] = "/tmp/tb_ingest_derive_XXXXXX";
static struct config cfg;
static char *run_db; /* the imported 4-rank run */

/* The derived tables a rank pass writes; each compared whole. */
static const char *const tables[] = { "step",     "gpu",      "op_stat",  "kernel_stat", "mem_alloc", "analysis",
                                      "analyses", "anseries", "ansample", "critseg",     "cseries",   "clodpack",
                                      "cagg",     "cagg_level" };

static int64_t count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -2;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int scratch_left(const char *db_path)
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        char *p = xasprintf("%s.r%d", db_path, i);
        n += access(p, F_OK) == 0;
        free(p);
    }
    static const char *const sides[] = { "aside", "rules" };
    for (int i = 0; i < 2; i++) {
        char *p = xasprintf("%s.%s", db_path, sides[i]);
        n += access(p, F_OK) == 0;
        free(p);
    }
    return n;
}

static void test_import_parallel(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    char *dir = xasprintf("%s/traces/ddp_gloo_4ranks", harness_shared());
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    struct ingest_file files[4];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 4)
        if (strstr(de->d_name, ".pt.trace.json")) {
            char *p = xasprintf("%s/%s", dir, de->d_name);
            files[n++] = (struct ingest_file){ p, p, 0 };
        }
    closedir(d);
    REQUIRE(n == 4);
    int threads_before = count_entries("/proc/self/task");
    struct ingest_request req = { "ddp", files, n, NULL };
    char id[CATALOG_ID_LEN + 1];
    CHECK_EQ_INT(ingest_run(cat, &cfg, &req, NULL, id, &e), 0);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);
    run_db = xasprintf("%s/runs/%s/run.db", root, id);
    CHECK_EQ_INT(scratch_left(run_db), 0);
    for (int i = 0; i < n; i++) free((char *)files[i].path);
    free(dir);
    catalog_close(cat);
}

/* A copy of the imported run derived again by ingest_derive on threads
 * threads; stale scratch files of a crash laid beside it first when stale.
 * OUT *path: the copy's (owned by caller). */
static int derive_copy(const char *name, int threads, int stale, char **path, struct err *e)
{
    *path = xasprintf("%s/%s", root, name);
    if (rundb_copy(run_db, *path, e) != 0) return e->code;
    for (int i = 0; stale && i < 4; i += 3) {
        char *p = xasprintf("%s.r%d", *path, i);
        FILE *f = fopen(p, "w");
        if (f) {
            fputs("not a database", f);
            fclose(f);
        }
        free(p);
    }
    sqlite3 *db;
    if (sqlite3_open(*path, &db) != SQLITE_OK) return err_set(e, ERR_DB, "open");
    int rc = rundb_stage_begin(db, ingest_derive_stages, INGEST_DERIVE_NSTAGES, e);
    if (rc == 0) rc = ingest_derive(db, *path, &cfg.rules, threads, NULL, NULL, NULL, e);
    sqlite3_close(db);
    return rc;
}

/* Four ranks on four threads against the same run derived one rank after
 * the other (summary_run and analyses_run on run.db): same rows, same ids;
 * stale scratch files are replaced and none is left. The timeline's
 * counter lanes too: built aside while the critical path runs in the serial
 * derive, on run.db after the ranks' adoption in the parallel one. */
static void test_same_as_serial(void)
{
    REQUIRE(run_db != NULL);
    struct err e;
    char *serial, *par;
    REQUIRE(derive_copy("serial.db", 1, 0, &serial, &e) == 0);
    int threads_before = count_entries("/proc/self/task");
    CHECK_EQ_INT(derive_copy("par.db", 4, 1, &par, &e), 0);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);
    CHECK_EQ_INT(scratch_left(par), 0);
    sqlite3 *db;
    REQUIRE(sqlite3_open(par, &db) == SQLITE_OK);
    char *att = sqlite3_mprintf("ATTACH %Q AS s", serial);
    REQUIRE(sqlite3_exec(db, att, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(att);
    /* the series ids of ranks after the first are renumbered on adoption */
    CHECK(count(db, "SELECT count(DISTINCT rank) FROM anseries") >= 2);
    CHECK(count(db, "SELECT count(*) FROM analyses WHERE doc LIKE '%\"series\":%'") >= 2);
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char *sql = sqlite3_mprintf("SELECT (SELECT count(*) FROM main.%s) - (SELECT count(*) FROM s.%s)", tables[i],
                                    tables[i]);
        CHECK_EQ_INT(count(db, sql), 0);
        sqlite3_free(sql);
        sql = sqlite3_mprintf("SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM s.%s)", tables[i],
                              tables[i]);
        int64_t diff = count(db, sql);
        if (diff != 0) fprintf(stderr, "table %s: %lld rows differ\n", tables[i], (long long)diff);
        CHECK_EQ_INT(diff, 0);
        sqlite3_free(sql);
    }
    CHECK(count(db, "SELECT count(*) FROM main.step") > 0);
    sqlite3_close(db);
    unlink(serial);
    unlink(par);
    free(serial);
    free(par);
}

/* The timeline's tables, each compared whole with the serial derive's. */
static const char *const timeline_tables[] = { "lodpack", "lod_level", "clodpack", "taggpack", "topen", "gpubusypack" };

/* The timeline and the summaries of the four ranks begun early, as an
 * import does (before the indexes, then the run's folder renamed under
 * them): the same tables as a derive that builds them itself; no scratch and no thread left. Begun and freed
 * without a derive (an import failing after its rows): nothing left. */
static void test_early_timeline(void)
{
    REQUIRE(run_db != NULL);
    struct err e;
    char *serial, *dir0 = xasprintf("%s/early0", root), *dir1 = xasprintf("%s/early1", root);
    char *db0 = xasprintf("%s/run.db", dir0), *db1 = xasprintf("%s/run.db", dir1);
    REQUIRE(derive_copy("tl-serial.db", 1, 0, &serial, &e) == 0);
    REQUIRE(fsutil_mkdirs(dir0, &e) == 0);
    REQUIRE(rundb_copy(run_db, db0, &e) == 0);
    int threads_before = count_entries("/proc/self/task");

    struct ingest_derive_early *x = ingest_derive_early_start(db0, 2, NULL, NULL);
    REQUIRE(x != NULL);
    REQUIRE(rename(dir0, dir1) == 0);
    ingest_derive_early_moved(x, db1);
    sqlite3 *db;
    REQUIRE(sqlite3_open(db1, &db) == SQLITE_OK);
    int rc = rundb_stage_begin(db, ingest_derive_stages, INGEST_DERIVE_NSTAGES, &e);
    if (rc == 0) rc = ingest_derive(db, db1, &cfg.rules, 1, x, NULL, NULL, &e);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);
    CHECK_EQ_INT(scratch_left(db1), 0);
    char *att = sqlite3_mprintf("ATTACH %Q AS s", serial);
    REQUIRE(sqlite3_exec(db, att, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(att);
    const size_t ntl = sizeof timeline_tables / sizeof timeline_tables[0], nsum = sizeof tables / sizeof tables[0];
    for (size_t i = 0; i < ntl + nsum; i++) {
        const char *t = i < ntl ? timeline_tables[i] : tables[i - ntl];
        char *sql = sqlite3_mprintf("SELECT (SELECT count(*) FROM main.%s) - (SELECT count(*) FROM s.%s)", t, t);
        CHECK_EQ_INT(count(db, sql), 0);
        sqlite3_free(sql);
        sql = sqlite3_mprintf("SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM s.%s)", t, t);
        int64_t diff = count(db, sql);
        if (diff != 0) fprintf(stderr, "table %s: %lld rows differ\n", t, (long long)diff);
        CHECK_EQ_INT(diff, 0);
        sqlite3_free(sql);
    }
    CHECK(count(db, "SELECT count(*) FROM main.lodpack") > 0);
    CHECK_EQ_INT(count(db, "SELECT count(*) FROM derive_stage WHERE state != 'done'"), 0);
    sqlite3_close(db);

    x = ingest_derive_early_start(db1, 2, NULL, NULL);
    REQUIRE(x != NULL);
    ingest_derive_early_free(x);
    CHECK_EQ_INT(scratch_left(db1), 0);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);

    fsutil_rmtree(dir1, &e);
    unlink(serial);
    free(serial);
    free(dir0);
    free(dir1);
    free(db0);
    free(db1);
}

/* The sizes a rank's memory cost is made of: its GPU ops and host slices,
 * as the slices on its tracks count them. */
static void test_rank_sizes(void)
{
    REQUIRE(run_db != NULL);
    struct err e;
    sqlite3 *db;
    REQUIRE(sqlite3_open_v2(run_db, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    int *ranks = NULL, n = 0;
    int64_t *gpu = NULL, *host = NULL;
    CHECK_EQ_INT(rundb_rank_sizes(db, &ranks, &gpu, &host, &n, &e), 0);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < n; i++) {
        char *sql = sqlite3_mprintf("SELECT count(*) FROM slice s JOIN track t ON t.id = s.track"
                                    " WHERE t.rank = %d AND t.kind = %d",
                                    ranks[i], TB_TRACK_GPU);
        CHECK_EQ_INT(gpu[i], count(db, sql));
        sqlite3_free(sql);
        sql = sqlite3_mprintf("SELECT count(*) FROM slice s JOIN track t ON t.id = s.track"
                              " WHERE t.rank = %d AND t.kind != %d",
                              ranks[i], TB_TRACK_GPU);
        CHECK_EQ_INT(host[i], count(db, sql));
        CHECK(host[i] > 0 && gpu[i] > 0);
        sqlite3_free(sql);
    }
    free(ranks);
    free(gpu);
    free(host);
    sqlite3_close(db);
}

/* A rank failing fails the derive the same way on threads, leaving no
 * scratch file and no thread; a renumbered copy derives again. */
static void test_failure(void)
{
    REQUIRE(run_db != NULL);
    struct err e;
    char *copy = xasprintf("%s/copy.db", root);
    REQUIRE(rundb_copy(run_db, copy, &e) == 0);
    int from[4] = { 0, 1, 2, 3 }, to[4] = { 3, 2, 1, 0 };
    CHECK_EQ_INT(ingest_rederive(copy, from, to, 4, &cfg.rules, &e), 0);
    CHECK_EQ_INT(scratch_left(copy), 0);
    sqlite3 *db;
    REQUIRE(sqlite3_open(copy, &db) == SQLITE_OK);
    CHECK_EQ_INT(count(db, "SELECT count(DISTINCT rank) FROM step"), 4);
    REQUIRE(sqlite3_exec(db, "DROP TABLE mem; CREATE TABLE mem(rank INTEGER)", NULL, NULL, NULL) == SQLITE_OK);
    int threads_before = count_entries("/proc/self/task");
    err_clear(&e);
    CHECK(ingest_derive(db, copy, &cfg.rules, 3, NULL, NULL, NULL, &e) != 0);
    CHECK(strstr(e.msg, "analysis") != NULL);
    CHECK_EQ_INT(scratch_left(copy), 0);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);
    sqlite3_close(db);
    unlink(copy);
    free(copy);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    config_defaults(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", root);
    RUN(test_import_parallel);
    RUN(test_same_as_serial);
    RUN(test_rank_sizes);
    RUN(test_early_timeline);
    RUN(test_failure);
    free(run_db);
    struct err e;
    fsutil_rmtree(root, &e);
    return harness_done("ingest_derive_test");
}
