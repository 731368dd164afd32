/* analysis_test — the derived tables on small crafted traces whose answers
 * are worked out by hand (times in µs in the traces, ns in the tables):
 * priority accounting, step stretching and trimming, communication by name,
 * GPU metrics, operator and kernel tables, memory pairing. Real traces are
 * checked in golden_test.c. */
#include "base/fsutil.h"
#include "derive/summary.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/ingest.h"
#include "store/rundb.h"

#include <math.h>
#include <stdarg.h>
#include <unistd.h>

static char root[] = "/tmp/tb_analysis_XXXXXX";
static struct config cfg;
static struct catalog *cat;
static int seq;

/* Imports a trace given as its traceEvents body; returns the open run db. */
static sqlite3 *import(const char *events)
{
    struct err e;
    char *path = xasprintf("%s/t%d.pt.trace.json", root, ++seq);
    char *text = xasprintf("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"Test GPU\","
                           "\"totalGlobalMem\":1000000,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],"
                           "\"traceEvents\":[%s]}",
                           events);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    free(text);
    struct ingest_file file = { path, path, 0 };
    struct ingest_request req = { NULL, &file, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    sqlite3 *db = NULL;
    if (ingest_run(cat, &cfg, &req, NULL, id, &e) != 0) {
        fprintf(stderr, "import failed: %s\n", e.msg);
    } else {
        char *dbp = xasprintf("%s/runs/%s/run.db", root, id);
        if (rundb_open_ro(dbp, &db, &e) != 0) db = NULL;
        free(dbp);
    }
    free(path);
    return db;
}

/* One integer from a query with optional text/int parameters ("%s"/"%d" free). */
static long long q1(sqlite3 *db, const char *sql, ...)
{
    sqlite3_stmt *st;
    long long v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bad sql %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    va_list ap;
    va_start(ap, sql);
    for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) sqlite3_bind_text(st, i, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
    va_end(ap);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static double qd(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

#define X(cat, name, tid, ts, dur, args)                                                                \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" tid ",\"tid\":" tid ",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{" args "}}"
#define CPU(cat, name, ts, dur, args) X(cat, name, "1", ts, dur, args)
#define GPU(cat, name, ts, dur, args)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts            \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7," args "}}"

/* Worked example: step [0,100); kernel 20-60 over cpu work; memcpy 50-70
 * shows only from 60; launches 12-14 and 15-16; DataLoader 70-80; the op
 * 10-30 is cpu_exec where nothing above covers it. */
static void test_priority_accounting(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         CPU("cpu_op", "aten::mm", 10, 20, "") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 12, 2, "\"correlation\":1") ","
                         CPU("cuda_runtime", "cudaMemcpyAsync", 15, 1, "\"correlation\":2") ","
                         CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 70, 10, "") ","
                         GPU("kernel", "some_kernel", 20, 40, "\"correlation\":1") ","
                         GPU("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 50, 20, "\"correlation\":2"));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM step"), 1);
    CHECK_EQ_INT(q1(db, "SELECT dur FROM step"), 100000);
    CHECK_EQ_INT(q1(db, "SELECT kernel FROM step"), 40000);
    CHECK_EQ_INT(q1(db, "SELECT memcpy FROM step"), 10000);
    CHECK_EQ_INT(q1(db, "SELECT runtime FROM step"), 3000);
    CHECK_EQ_INT(q1(db, "SELECT dataloader FROM step"), 10000);
    CHECK_EQ_INT(q1(db, "SELECT cpu_exec FROM step"), 7000);
    CHECK_EQ_INT(q1(db, "SELECT other FROM step"), 30000);
    CHECK_EQ_INT(q1(db, "SELECT kernel+memcpy+memset+comm+runtime+dataloader+cpu_exec+other - dur FROM step"), 0);
    sqlite3_close(db);
}

/* Step 1 launches a kernel that ends at 150: it stretches to 150 and step 2
 * starts there. Step 3 launches nothing: dropped, and said so. A GPU-side
 * ProfilerStep# annotation is not a step of its own. */
static void test_steps_stretch_and_trim(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         CPU("user_annotation", "ProfilerStep#2", 100, 100, "") ","
                         CPU("user_annotation", "ProfilerStep#3", 200, 100, "") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 10, 5, "\"correlation\":1") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 110, 5, "\"correlation\":2") ","
                         GPU("gpu_user_annotation", "ProfilerStep#1", 20, 130, "") ","
                         GPU("kernel", "k1", 20, 130, "\"correlation\":1") ","
                         GPU("kernel", "k2", 160, 10, "\"correlation\":2"));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM step"), 2);
    CHECK_EQ_INT(q1(db, "SELECT dur FROM step WHERE idx = 0"), 150000);
    CHECK_EQ_INT(q1(db, "SELECT ts FROM step WHERE idx = 1"), 150000);
    CHECK_EQ_INT(q1(db, "SELECT dur FROM step WHERE idx = 1"), 50000);
    CHECK_EQ_INT(q1(db, "SELECT host_dur FROM step WHERE idx = 1"), 100000);
    CHECK_EQ_INT(q1(db, "SELECT ngpu FROM step WHERE idx = 0"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.steps_dropped') FROM analysis"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.steps_found') FROM analysis"), 3);
    CHECK_EQ_INT(q1(db, "SELECT instr(json_extract(summary, '$.notes[0]'), 'ProfilerStep#3') > 0 FROM analysis"), 1);
    sqlite3_close(db);
}

static void test_no_steps_is_one_step(void)
{
    sqlite3 *db = import(CPU("cpu_op", "aten::add", 5, 10, "") "," CPU("cpu_op", "aten::mul", 40, 10, ""));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM step"), 1);
    CHECK_EQ_INT(q1(db, "SELECT ts FROM step"), 5000);
    CHECK_EQ_INT(q1(db, "SELECT dur FROM step"), 45000);
    CHECK_EQ_INT(q1(db, "SELECT cpu_exec FROM step"), 20000);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM gpu"), 0); /* no kernels, no GPU rows */
    sqlite3_close(db);
}

/* NCCL by name, a collective by its args, gloo by its host span; a
 * communication kernel is charged before the compute kernel it overlaps. */
static void test_communication(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 200, "") ","
                         CPU("user_annotation", "gloo:all_reduce", 150, 20, "") ","
                         GPU("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 10, 30, "") ","
                         GPU("kernel", "compute", 20, 40, "") ","
                         GPU("kernel", "custom_collective", 100, 10, "\"Collective name\":\"allreduce\""));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT comm FROM step"), 30000 + 10000 + 20000);
    CHECK_EQ_INT(q1(db, "SELECT kernel FROM step"), 20000); /* 40..60: the part NCCL did not cover */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM kernel_stat WHERE comm = 1"), 2);
    CHECK_EQ_INT(q1(db, "SELECT comm FROM kernel_stat WHERE name = 'compute'"), 0);
    sqlite3_close(db);
}

/* Window [0,100): kernels 0-20 (nvjet, 0.5 blocks/SM, occ 50 %) and 10-30
 * (FFMA GEMM, 1.0 blocks/SM, occ 20 %): busy 30; SM efficiency 0.5*10 +
 * min(1.5,1)*10 + 1.0*10 = 25 -> 0.25; occupancy (50*20 + 20*20)/40 = 35 %;
 * tensor-core share 20/40. */
static void test_gpu_metrics(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         GPU("kernel", "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT", 0, 20,
                             "\"blocks per SM\":0.5,\"est. achieved occupancy %\":50") ","
                         GPU("kernel", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel_cudnn", 10, 20,
                             "\"blocks per SM\":1.0,\"est. achieved occupancy %\":20"));
    REQUIRE(db != NULL);
    CHECK(fabs(qd(db, "SELECT util FROM gpu") - 0.30) < 1e-9);
    CHECK(fabs(qd(db, "SELECT sm_eff FROM gpu") - 0.25) < 1e-6);
    CHECK(fabs(qd(db, "SELECT occupancy FROM gpu") - 0.35) < 1e-6);
    CHECK(fabs(qd(db, "SELECT tc_share FROM gpu") - 0.5) < 1e-9);
    CHECK_EQ_INT(q1(db, "SELECT memory_bytes FROM gpu"), 1000000);
    CHECK_EQ_INT(q1(db, "SELECT cc = '9.0' FROM gpu"), 1);
    CHECK_EQ_INT(q1(db, "SELECT tc FROM kernel_stat WHERE name LIKE 'nvjet%'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT tc FROM kernel_stat WHERE name LIKE 'sm80_xmma%'"), 0);
    sqlite3_close(db);
}

/* linear [0,50) > addmm [10,40) > launch [15,20) -> kernel of 30; a second
 * addmm with other shapes launches nothing. */
static void test_operator_and_kernel_tables(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 200, "") ","
                         CPU("cpu_op", "aten::linear", 0, 50, "\"Input Dims\":[[4,8],[8,8]]") ","
                         CPU("cpu_op", "aten::addmm", 10, 30, "\"Input Dims\":[[8],[4,8],[8,8]]") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 15, 5, "\"correlation\":5") ","
                         CPU("cpu_op", "aten::addmm", 100, 10, "\"Input Dims\":[[2],[2,2],[2,2]]") ","
                         GPU("kernel", "gemm_kernel", 50, 30, "\"correlation\":5"));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT host_total FROM op_stat WHERE name = 'aten::linear'"), 50000);
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::linear'"), 20000);
    CHECK_EQ_INT(q1(db, "SELECT dev_self FROM op_stat WHERE name = 'aten::linear'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT dev_total FROM op_stat WHERE name = 'aten::linear'"), 30000);
    CHECK_EQ_INT(q1(db, "SELECT tc_eligible FROM op_stat WHERE name = 'aten::linear'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM op_stat WHERE name = 'aten::addmm'"), 2); /* by shape */
    CHECK_EQ_INT(q1(db, "SELECT sum(calls) FROM op_stat WHERE name = 'aten::addmm'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::addmm' AND shape = '[[8],[4,8],[8,8]]'"),
                 25000);
    CHECK_EQ_INT(q1(db, "SELECT dev_self FROM op_stat WHERE name = 'aten::addmm' AND shape = '[[8],[4,8],[8,8]]'"),
                 30000);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM op_stat WHERE name = 'ProfilerStep#1'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT op = 'aten::addmm' FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT calls FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT total FROM kernel_stat"), 30000);
    sqlite3_close(db);
}

#define MEM(ts, addr, bytes, total)                                                                     \
    "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1," \
    "\"ts\":" #ts ",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" #addr ",\"Bytes\":" #bytes  \
    ",\"Total Allocated\":" #total ",\"Total Reserved\":4096}}"

static void test_memory_pairing(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         CPU("cpu_op", "aten::empty", 10, 5, "") ","
                         MEM(12, 1000, 100, 100) "," MEM(20, 2000, 300, 400) "," MEM(45, 1000, -100, 300) ","
                         MEM(50, 3000, -64, 236));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM mem_alloc"), 3);
    CHECK_EQ_INT(q1(db, "SELECT free_ts - alloc_ts FROM mem_alloc WHERE addr = 1000"), 33000);
    CHECK_EQ_INT(q1(db, "SELECT s.s = 'aten::empty' FROM mem_alloc m JOIN str s ON s.id = m.op WHERE addr = 1000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT op FROM mem_alloc WHERE addr = 2000"), 0); /* no op running at 20 */
    CHECK_EQ_INT(q1(db, "SELECT free_ts IS NULL FROM mem_alloc WHERE addr = 2000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT alloc_ts IS NULL AND bytes < 0 FROM mem_alloc WHERE addr = 3000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.peak_memory.\"0\".bytes') FROM analysis"), 400);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.peak_memory.\"0\".ts') FROM analysis"), 20000);
    /* per step: allocated at its end, and its peak */
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.step_memory.\"0\"[0].end') FROM analysis"), 236);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.step_memory.\"0\"[0].peak') FROM analysis"), 400);
    sqlite3_close(db);
}

/* Old traces log [memory] without running totals: pairing still works, and
 * the peak is unknown (absent), never 0 bytes. */
static void test_memory_without_totals(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":12,"
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1000,\"Bytes\":100}},"
                         "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":40,"
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1000,\"Bytes\":-100}}");
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM mem_alloc WHERE free_ts IS NOT NULL"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_type(summary, '$.peak_memory.\"0\"') IS NULL FROM analysis"), 1);
    sqlite3_close(db);
}

/* The report is what `analyze --json` prints: the shape. */
static void test_report_shape(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#7", 0, 100, "") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 10, 5, "\"correlation\":1") ","
                         GPU("kernel", "k", 20, 10, "\"correlation\":1"));
    REQUIRE(db != NULL);
    json_t *rep = NULL;
    struct err e;
    REQUIRE(summary_report(db, "x", 5, &rep, &e) == 0);
    json_t *r0 = json_array_get(json_object_get(rep, "ranks"), 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(rep, "run"), "ranks")), 1);
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(r0, "device"), "name")), "Test GPU");
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(r0, "device"), "compute_capability")), "9.0");
    json_t *s0 = json_array_get(json_object_get(r0, "steps"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(s0, "name")), "ProfilerStep#7");
    CHECK(fabs(json_number_value(json_object_get(s0, "dur_us")) - 100.0) < 1e-9);
    json_t *bd = json_object_get(s0, "breakdown_us");
    CHECK_EQ_INT(json_object_size(bd), 8);
    CHECK(fabs(json_number_value(json_object_get(bd, "kernel")) - 10.0) < 1e-9);
    CHECK(fabs(json_number_value(json_object_get(r0, "gpu_utilization")) - 0.1) < 1e-9);
    CHECK(json_is_array(json_object_get(rep, "recommendations")));
    json_decref(rep);
    sqlite3_close(db);
}

int main(void)
{
    struct err e;
    if (!mkdtemp(root)) return 1;
    config_defaults(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", root);
    cfg.keep_sources = 0;
    if (catalog_open(root, &cat, &e) != 0) return 1;
    RUN(test_priority_accounting);
    RUN(test_steps_stretch_and_trim);
    RUN(test_no_steps_is_one_step);
    RUN(test_communication);
    RUN(test_gpu_metrics);
    RUN(test_operator_and_kernel_tables);
    RUN(test_memory_pairing);
    RUN(test_memory_without_totals);
    RUN(test_report_shape);
    catalog_close(cat);
    fsutil_rmtree(root, &e);
    return harness_done("summary");
}
