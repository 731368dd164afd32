/* ingest_test — a real trace becomes a committed run; failures leave
 * nothing behind; ranks come from the traces' headers; ranks parsed on
 * worker threads fail in order; a derived stage failing on either of its
 * threads surfaces. The service is tested in ingest_service_test.c. */
#include "base/fsutil.h"
#include "ingest/ingest.h"
#include "harness.h"
#include "ingest_fixture.h"
#include "base/xmalloc.h"
#include "store/rundb.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/tb_ingest_XXXXXX";
static struct config cfg;

static void test_sync_ingest_multi_rank(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    const char *dir = "tests/data/demo/ddp_gloo_4ranks";
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    struct ingest_file files[8];
    char *paths[8];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 8) {
        if (de->d_name[0] == '.') continue;
        paths[n] = xasprintf("%s/%s", dir, de->d_name);
        files[n].path = paths[n];
        files[n].name = paths[n];
        files[n].owned = 0;
        n++;
    }
    closedir(d);
    REQUIRE(n == 4);
    struct ingest_request req = { NULL, files, n, NULL };
    struct ingest_progress pr = { 0 };
    char id[CATALOG_ID_LEN + 1];
    REQUIRE(ingest_run(cat, &cfg, &req, &pr, id, &e) == 0);
    CHECK(pr.bytes_total > 0);
    /* ranks 1..3 were parsed by workers: their bytes count all the same */
    CHECK(pr.bytes_done == pr.bytes_total);
    CHECK(pr.events > 0);
    json_t *run;
    REQUIRE(catalog_get(cat, id, &run, &e) == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(run, "ranks")), 4);
    CHECK_EQ_STR(json_string_value(json_object_get(run, "name")), "ddp_gloo_4ranks");
    json_decref(run);
    char *db = xasprintf("%s/runs/%s/run.db", root, id);
    json_t *info;
    REQUIRE(rundb_info(db, &info, &e) == 0);
    json_t *ranks = json_object_get(info, "ranks");
    CHECK_EQ_INT(json_array_size(ranks), 4);
    for (int r = 0; r < 4; r++) {
        json_t *rk = json_array_get(ranks, (size_t)r);
        char want[32];
        snprintf(want, sizeof want, "rank%d.", r);
        /* ranks come from the file names, not the directory order */
        CHECK(strncmp(json_string_value(json_object_get(rk, "file")), want, strlen(want)) == 0);
    }
    json_decref(info);
    free(db);
    char *src = xasprintf("%s/runs/%s/src", root, id);
    CHECK_EQ_INT(count_entries(src), 4); /* sources kept for download */
    free(src);
    for (int i = 0; i < n; i++) free(paths[i]);
    catalog_close(cat);
}

/* Two files named rank0/rank1 whose traces say they are ranks 1 and 0:
 * the traces win, in every table and in the catalog's file list. A run
 * where the traces claim one rank twice keeps the file-name numbering. */
static char *write_rank_file(const char *name, int said, int tid)
{
    char *path = xasprintf("%s/%s", root, name);
    FILE *f = fopen(path, "w");
    if (!f) return path;
    fprintf(f,
            "{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":%d,\"world_size\":2},"
            "\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,"
            "\"ts\":10,\"dur\":5}]}",
            said, said, tid);
    fclose(f);
    return path;
}

static void test_ranks_from_traces(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    for (int dup = 0; dup < 2; dup++) {
        char *p0 = write_rank_file("job_rank0.pt.trace.json", 1, 11);
        char *p1 = write_rank_file("job_rank1.pt.trace.json", dup ? 1 : 0, 22);
        struct ingest_file files[2] = { { p0, p0, 0 }, { p1, p1, 0 } };
        struct ingest_request req = { NULL, files, 2, NULL };
        char id[CATALOG_ID_LEN + 1];
        REQUIRE(ingest_run(cat, &cfg, &req, NULL, id, &e) == 0);
        char *dbp = xasprintf("%s/runs/%s/run.db", root, id);
        sqlite3 *db;
        REQUIRE(rundb_open_ro(dbp, &db, &e) == 0);
        sqlite3_stmt *st;
        REQUIRE(sqlite3_prepare_v2(db,
                                   "SELECT r.rank, r.file, t.tid FROM rank r JOIN track t ON t.rank = r.rank"
                                   " ORDER BY r.rank",
                                   -1, &st, NULL) == SQLITE_OK);
        for (int r = 0; r < 2; r++) {
            REQUIRE(sqlite3_step(st) == SQLITE_ROW);
            CHECK_EQ_INT(sqlite3_column_int(st, 0), r);
            /* no dup: rank 0 is the file named rank1 (its trace says 0) */
            int want_file = dup ? r : 1 - r;
            char want[32];
            snprintf(want, sizeof want, "job_rank%d", want_file);
            CHECK(strncmp((const char *)sqlite3_column_text(st, 1), want, strlen(want)) == 0);
            CHECK_EQ_STR((const char *)sqlite3_column_text(st, 2), want_file ? "22" : "11");
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        json_t *run;
        REQUIRE(catalog_get(cat, id, &run, &e) == 0);
        json_t *fl = json_object_get(run, "files");
        size_t i;
        json_t *f;
        json_array_foreach(fl, i, f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            int file_rank = strstr(name, "rank1") ? 1 : 0;
            CHECK_EQ_INT(json_integer_value(json_object_get(f, "rank")), dup ? file_rank : 1 - file_rank);
        }
        json_decref(run);
        free(dbp);
        unlink(p0);
        unlink(p1);
        free(p0);
        free(p1);
    }
    catalog_close(cat);
}

static void test_failure_leaves_nothing(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    char *upload = ingest_upload_dir(&cfg, &e);
    REQUIRE(upload != NULL);
    char *bad = xasprintf("%s/rank0.json", upload);
    FILE *f = fopen(bad, "w");
    fputs("{\"traceEvents\": [{\"ph\":\"X\",\"ts\":1,\"dur\":2} {oops", f);
    fclose(f);
    struct ingest_file file = { bad, "rank0.json", 1 };
    struct ingest_request req = { "broken", &file, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    CHECK_EQ_INT(ingest_run(cat, &cfg, &req, NULL, id, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "rank0.json") != NULL);
    CHECK(access(bad, F_OK) != 0); /* the owned upload is removed */
    char *tmp = xasprintf("%s/tmp", root);
    CHECK_EQ_INT(count_entries(tmp), 0); /* the upload folder went with its file */
    json_t *list;
    REQUIRE(catalog_list(cat, &list, &e) == 0);
    CHECK_EQ_INT(json_array_size(list), 1); /* only the earlier good run */
    json_decref(list);
    free(tmp);
    free(bad);
    free(upload);
    catalog_close(cat);
}

/* The derived stages run on two threads (ingest.c's derive): a failure on
 * either surfaces from ingest_rederive, the second thread is joined and its
 * scratch database removed. The copy of a run loses the counter table's
 * columns (only the second thread's timeline reads it), then the mem
 * table's too (the first thread's analysis fails while the second may still
 * run). */
static void test_rederive_errors(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    char *p0 = write_rank_file("solo_rank0.pt.trace.json", 0, 11);
    struct ingest_file file = { p0, p0, 0 };
    struct ingest_request req = { NULL, &file, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    REQUIRE(ingest_run(cat, &cfg, &req, NULL, id, &e) == 0);
    char *dbp = xasprintf("%s/runs/%s/run.db", root, id), *copy = xasprintf("%s/copy.db", root);
    char *scratch = xasprintf("%s.aside", copy);
    /* a table with the rank column alone: the renumbering passes, the reads fail */
    static const char *const drops[] = { "DROP TABLE counter; CREATE TABLE counter(rank INTEGER)",
                                         "DROP TABLE mem; CREATE TABLE mem(rank INTEGER)" };
    static const char *const names[] = { "no such column: name", "analysis" };
    int from = 0, to = 0;
    REQUIRE(rundb_copy(dbp, copy, &e) == 0);
    CHECK_EQ_INT(ingest_rederive(copy, &from, &to, 1, &cfg.rules, &e), 0); /* the copy itself derives */
    for (int i = 0; i < 2; i++) {
        sqlite3 *db;
        REQUIRE(sqlite3_open(copy, &db) == SQLITE_OK);
        REQUIRE(sqlite3_exec(db, drops[i], NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
        err_clear(&e);
        CHECK(ingest_rederive(copy, &from, &to, 1, &cfg.rules, &e) != 0);
        CHECK(strstr(e.msg, names[i]) != NULL);
        CHECK(access(scratch, F_OK) != 0);
    }
    unlink(copy);
    unlink(p0);
    free(p0);
    free(scratch);
    free(copy);
    free(dbp);
    catalog_close(cat);
}

/* Ranks are parsed on worker threads (ingest.c): a run whose ranks 2 and 3
 * are broken reports rank 2's error, as a serial import would, whichever
 * finished first; no thread and no spool or tmp file is left behind; and
 * the same files, repaired, import to the same run a direct write gives. */
static void test_parallel_ranks_fail_in_order(void)
{
    struct catalog *cat;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    int threads_before = count_entries("/proc/self/task");
    char *paths[4];
    struct ingest_file files[4];
    for (int r = 0; r < 4; r++) {
        paths[r] = xasprintf("%s/par_rank%d.json", root, r);
        FILE *f = fopen(paths[r], "w");
        REQUIRE(f != NULL);
        fputs("{\"traceEvents\": [", f);
        /* rank 2 is long, so that rank 3 (broken at once) fails first */
        for (int i = 0; i < (r == 2 ? 200000 : 10); i++)
            fprintf(f, "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1},", i * 2);
        if (r >= 2) fputs("{\"ph\":\"X\",\"ts\":1,\"dur\":2} {oops", f); /* a missing comma */
        else fputs("{\"ph\":\"X\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}", f);
        fclose(f);
        files[r].path = paths[r];
        files[r].name = paths[r];
        files[r].owned = 0;
    }
    struct ingest_request req = { "par", files, 4, NULL };
    char id[CATALOG_ID_LEN + 1];
    CHECK_EQ_INT(ingest_run(cat, &cfg, &req, NULL, id, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "par_rank2.json") != NULL);
    CHECK_EQ_INT(count_entries("/proc/self/task"), threads_before);
    char *tmp = xasprintf("%s/tmp", root);
    CHECK_EQ_INT(count_entries(tmp), 0);
    free(tmp);
    for (int r = 0; r < 4; r++) {
        unlink(paths[r]);
        free(paths[r]);
    }
    catalog_close(cat);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    config_defaults(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", root);
    RUN(test_sync_ingest_multi_rank);
    RUN(test_failure_leaves_nothing);
    RUN(test_parallel_ranks_fail_in_order);
    RUN(test_ranks_from_traces); /* adds runs: after the tests that count them */
    RUN(test_rederive_errors);
    struct err e;
    fsutil_rmtree(root, &e);
    return harness_done("ingest_test");
}
