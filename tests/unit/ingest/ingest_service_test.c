/* ingest_service_test — the service runs queued jobs and reports them
 * (start-up cleans DATA/tmp); a rank renumbering swaps in a renumbered copy
 * and refuses bad mappings and unknown runs. */
#include "base/fsutil.h"
#include "ingest/ingest.h"
#include "ingest/ingest_service.h"
#include "harness.h"
#include "ingest_fixture.h"
#include "base/xmalloc.h"
#include "store/rundb.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/tb_ingest_service_XXXXXX";
static struct config cfg;

static void test_service_jobs(void)
{
    struct catalog *cat;
    struct ingest_service *svc;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    REQUIRE(ingest_service_start(cat, &cfg, &svc, &e) == 0);
    char *tmp = xasprintf("%s/tmp", root);
    CHECK_EQ_INT(count_entries(tmp), 0); /* start-up cleaned the debris */
    free(tmp);
    struct ingest_file ok = { "tests/data/demo/matmul_amp/matmul_amp.1795344374941025894.pt.trace.json.gz",
                              "matmul_amp.1795344374941025894.pt.trace.json.gz", 0 };
    struct ingest_file missing = { "/nonexistent/trace.json", "trace.json", 0 };
    struct ingest_request r1 = { NULL, &ok, 1, NULL }, r2 = { NULL, &missing, 1, NULL };
    int j1, j2;
    REQUIRE(ingest_submit(svc, &r1, &j1, &e) == 0);
    REQUIRE(ingest_submit(svc, &r2, &j2, &e) == 0);
    char id[CATALOG_ID_LEN + 1];
    CHECK_EQ_INT(ingest_wait(svc, j1, id, &e), 0);
    CHECK(catalog_id_valid(id));
    CHECK(ingest_wait(svc, j2, id, &e) != 0);
    json_t *j;
    REQUIRE(ingest_job_json(svc, j1, &j, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(j, "state")), "done");
    CHECK_EQ_STR(json_string_value(json_object_get(j, "name")), "matmul_amp.1795344374941025894.pt.trace.json.gz");
    json_decref(j);
    REQUIRE(ingest_job_json(svc, j2, &j, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(j, "state")), "failed");
    CHECK(json_object_get(json_object_get(j, "error"), "message") != NULL);
    json_decref(j);
    json_t *active = ingest_jobs_json(svc);
    CHECK_EQ_INT(json_array_size(active), 1); /* the failure stays visible for a while */
    json_decref(active);
    CHECK_EQ_INT(ingest_job_json(svc, 999, &j, &e), ERR_NOT_FOUND);
    ingest_service_stop(svc);
    catalog_close(cat);
}

/* The file of rank r in run.db (rundb_info), "" when none. */
static const char *db_file_of(json_t *info, int r)
{
    size_t i;
    json_t *rk;
    json_array_foreach(json_object_get(info, "ranks"), i, rk) {
        if (json_integer_value(json_object_get(rk, "rank")) == r)
            return json_string_value(json_object_get(rk, "file"));
    }
    return "";
}

/* ingest_renumber swaps in a renumbered copy: run.db, src/ and the
 * catalog's file list agree, nothing is left in tmp/, and a refused
 * mapping changes nothing. */
static void test_renumber(void)
{
    struct catalog *cat;
    struct ingest_service *svc;
    struct err e;
    REQUIRE(catalog_open(root, &cat, &e) == 0);
    REQUIRE(ingest_service_start(cat, &cfg, &svc, &e) == 0);
    struct ingest_file files[2] = {
        { "tests/data/demo/ddp_gloo_4ranks/rank0.1795344527679083192.pt.trace.json.gz",
          "rank0.1795344527679083192.pt.trace.json.gz", 0 },
        { "tests/data/demo/ddp_gloo_4ranks/rank1.1795344527678531866.pt.trace.json.gz",
          "rank1.1795344527678531866.pt.trace.json.gz", 0 },
    };
    struct ingest_request req = { "renum", files, 2, NULL };
    char id[CATALOG_ID_LEN + 1];
    REQUIRE(ingest_run(cat, &cfg, &req, NULL, id, &e) == 0);
    int from[2] = { 0, 1 }, to[2] = { 1, 0 }, bad[2] = { 1, 1 };
    CHECK_EQ_INT(ingest_renumber(svc, id, from, bad, 2, &e), ERR_INVALID);
    CHECK_EQ_INT(ingest_renumber(svc, "ffffffffffffffff", from, to, 2, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(ingest_renumber(svc, id, from, to, 2, &e), 0);

    char *dir = catalog_run_dir(cat, id), *db = xasprintf("%s/run.db", dir);
    json_t *info = NULL, *run = NULL;
    CHECK_EQ_INT(count_entries(dir), 2); /* run.db and src/: no marker, no -wal left (before a reader opens it) */
    REQUIRE(rundb_info(db, &info, &e) == 0);
    CHECK(strncmp(db_file_of(info, 0), "rank1.", 6) == 0);
    CHECK(strncmp(db_file_of(info, 1), "rank0.", 6) == 0);
    char *src0 = xasprintf("%s/src/0-%s", dir, files[1].name), *src1 = xasprintf("%s/src/1-%s", dir, files[0].name);
    CHECK(fsutil_file_size(src0) > 0);
    CHECK(fsutil_file_size(src1) > 0);
    char *src_dir = xasprintf("%s/src", dir), *tmp = xasprintf("%s/tmp", root);
    CHECK_EQ_INT(count_entries(src_dir), 2);
    CHECK_EQ_INT(count_entries(tmp), 0);
    REQUIRE(catalog_get(cat, id, &run, &e) == 0);
    json_t *f0 = json_array_get(json_object_get(run, "files"), 0);
    CHECK(strncmp(json_string_value(json_object_get(f0, "name")), "rank0.", 6) == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(f0, "rank")), 1);
    json_decref(info);
    json_decref(run);
    free(src0);
    free(src1);
    free(src_dir);
    free(tmp);
    free(db);
    free(dir);
    ingest_service_stop(svc);
    catalog_close(cat);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    config_defaults(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", root);
    RUN(test_service_jobs);
    RUN(test_renumber);
    struct err e;
    fsutil_rmtree(root, &e);
    return harness_done("ingest_service_test");
}
