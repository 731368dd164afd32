/* analyses_hta_test — the analyses that follow HTA's definitions (idle time
 * by cause per stream, kernel launch statistics, queue depth) on crafted
 * Kineto traces imported through the real pipeline, each figure worked out
 * by hand in the comment above its trace. Times in the traces are µs, in
 * the documents ns. */
#include "analyses_fixture.h"

#include <math.h>
#include <stdarg.h>

/* GPU events on device 0, stream 8 (args: "" or text starting with ','). */
#define GPU8(cat, name, ts, dur, args)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":8,\"ts\":" #ts            \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":8" args "}}"
#define KERNEL8(name, corr, ts, dur) GPU8("kernel", name, ts, dur, ",\"correlation\":" #corr)

/* The element of a "streams" array whose name, spaces trimmed, is
 * "stream <n>"; NULL when none. Borrowed. */
static json_t *stream_of(json_t *arr, int n)
{
    char want[32];
    snprintf(want, sizeof want, "stream %d", n);
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        const char *nm = json_string_value(json_object_get(s, "name"));
        if (!nm) continue;
        size_t k = strlen(nm);
        while (k && nm[k - 1] == ' ') k--;
        if (k == strlen(want) && strncmp(nm, want, k) == 0) return s;
    }
    return NULL;
}

static int near(double a, double b) { return fabs(a - b) < 1e-6 * (fabs(b) > 1 ? fabs(b) : 1); }

/* ---------------------------------------------------------------------- */
/* Idle time by cause                                                     */
/* ---------------------------------------------------------------------- */

/* One step [1000, 2000) (its GPU work ends at 1920): the window.
 * Stream 7 (launched from the main thread):
 *   K1 [1020,1120)  launch 1010
 *   K2 [1130,1180)  launch 1030 < 1120: a 10 µs gap, kernel_wait
 *   K3 [1280,1300)  launch 1040 < 1180: a 100 µs gap, other
 *   K4 [1420,1450)  launch 1400 > 1300: host_wait 120 µs; meanwhile the host
 *                   is in cudaStreamSynchronize [1291,1350) inside
 *                   aten::item [1290,1360): sync 50, op 10 (launching),
 *                   nothing 40, then the launch itself 20 (launching)
 *   K5 [1720,1760)  launch 1700 (inside aten::add [1695,1715)) > 1450:
 *                   host_wait 270 µs: nothing 10, DataLoader [1460,1660)
 *                   200, nothing 35, aten::add 5, the launch 20
 *   K6 [1900,1920)  launch 1880 > 1760: host_wait 140 µs: nothing 10,
 *                   gloo:all_reduce [1770,1870) 100, nothing 10, launch 20
 *   busy 100+50+20+30+40+20 = 260; host_wait 530 by launching 75, sync 50,
 *   dataloader 200, comm 100, none 105.
 * Stream 8:
 *   S1 [1100,1300)  launch 1050
 *   S2 [1320,1350)  no correlation: a 20 µs gap, kernel_wait
 *   S3 [1500,1550)  correlation without a launch: 150 µs, other
 *   S4 [1630,1640)  launch 1610, inside the DataLoader, > 1550: host_wait
 *                   80 µs: DataLoader 60, the launch 20 — swept on the same
 *                   thread as stream 7's K5 gap, which it overlaps
 *   S5 [2050,2060)  no correlation, after the window: the gap [1640,2050)
 *                   is other and counts 360 µs, its part inside the window
 *   busy 290; kernel_wait 20; other 510; host_wait 80. */
static const char idle_trace[] =
    STEP(1, 1000, 1000) ","
    LAUNCH(1, 1010, 5) "," KERNEL("k1", 1, 1020, 100) ","
    LAUNCH(2, 1030, 5) "," KERNEL("k2", 2, 1130, 50) ","
    LAUNCH(3, 1040, 5) "," KERNEL("k3", 3, 1280, 20) ","
    LAUNCH(7, 1050, 5) "," KERNEL8("s1", 7, 1100, 200) ","
    GPU8("kernel", "s2", 1320, 30, "") ","
    CPU("cpu_op", "aten::item", 1290, 70, "") ","
    CPU("cuda_runtime", "cudaStreamSynchronize", 1291, 59, "") ","
    LAUNCH(4, 1400, 10) "," KERNEL("k4", 4, 1420, 30) ","
    KERNEL8("s3", 99, 1500, 50) ","
    CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1460, 200, "") ","
    LAUNCH(8, 1610, 5) "," KERNEL8("s4", 8, 1630, 10) ","
    CPU("cpu_op", "aten::add", 1695, 20, "") ","
    LAUNCH(5, 1700, 10) "," KERNEL("k5", 5, 1720, 40) ","
    CPU("cpu_op", "gloo:all_reduce", 1770, 100, "") ","
    LAUNCH(6, 1880, 10) "," KERNEL("k6", 6, 1900, 20) ","
    GPU8("kernel", "s5", 2050, 10, "");

static void check_by(json_t *o, double launching, double sync, double dl, double comm, double none)
{
    CHECK_EQ_INT(fixture_at(o, "host_wait_by", "launching_ns", NULL), launching);
    CHECK_EQ_INT(fixture_at(o, "host_wait_by", "sync_ns", NULL), sync);
    CHECK_EQ_INT(fixture_at(o, "host_wait_by", "dataloader_ns", NULL), dl);
    CHECK_EQ_INT(fixture_at(o, "host_wait_by", "comm_ns", NULL), comm);
    CHECK_EQ_INT(fixture_at(o, "host_wait_by", "none_ns", NULL), none);
}

static void test_idle(void)
{
    json_t *doc = fixture_analyses(DEV_H100, idle_trace, NULL);
    REQUIRE(doc);
    json_t *w = json_object_get(doc, "window_ns");
    CHECK_EQ_INT(json_integer_value(json_array_get(w, 0)), 1000000);
    CHECK_EQ_INT(json_integer_value(json_array_get(w, 1)), 2000000);
    json_t *idle = json_object_get(doc, "idle");
    CHECK_EQ_INT(fixture_at(idle, "kernel_wait_threshold_ns", NULL), 30000);
    json_t *streams = json_object_get(idle, "streams");
    CHECK_EQ_INT(json_array_size(streams), 2);

    json_t *s7 = stream_of(streams, 7), *s8 = stream_of(streams, 8);
    REQUIRE(s7 && s8);
    CHECK_EQ_INT(fixture_at(s7, "device", NULL), 0);
    CHECK_EQ_INT(fixture_at(s7, "busy_ns", NULL), 260000);
    CHECK_EQ_INT(fixture_at(s7, "idle_ns", NULL), 640000);
    CHECK_EQ_INT(fixture_at(s7, "host_wait_ns", NULL), 530000);
    CHECK_EQ_INT(fixture_at(s7, "kernel_wait_ns", NULL), 10000);
    CHECK_EQ_INT(fixture_at(s7, "other_ns", NULL), 100000);
    check_by(s7, 75000, 50000, 200000, 100000, 105000);
    CHECK_EQ_INT(fixture_at(s7, "counts", "host_wait", NULL), 3);
    CHECK_EQ_INT(fixture_at(s7, "counts", "kernel_wait", NULL), 1);
    CHECK_EQ_INT(fixture_at(s7, "counts", "other", NULL), 1);
    /* host waits of 120, 270 and 140 µs */
    CHECK_EQ_INT(fixture_at(s7, "stats", "host_wait", "count", NULL), 3);
    CHECK_EQ_INT(fixture_at(s7, "stats", "host_wait", "min_ns", NULL), 120000);
    CHECK_EQ_INT(fixture_at(s7, "stats", "host_wait", "p50_ns", NULL), 140000);
    CHECK_EQ_INT(fixture_at(s7, "stats", "host_wait", "max_ns", NULL), 270000);
    CHECK(near(fixture_at(s7, "stats", "host_wait", "mean_ns", NULL), 530000.0 / 3));
    CHECK_EQ_INT(fixture_at(s7, "stats", "other", "count", NULL), 1);

    CHECK_EQ_INT(fixture_at(s8, "busy_ns", NULL), 290000);
    CHECK_EQ_INT(fixture_at(s8, "host_wait_ns", NULL), 80000);
    CHECK_EQ_INT(fixture_at(s8, "kernel_wait_ns", NULL), 20000);
    CHECK_EQ_INT(fixture_at(s8, "other_ns", NULL), 510000);
    check_by(s8, 20000, 0, 60000, 0, 0);
    CHECK_EQ_INT(fixture_at(s8, "counts", "other", NULL), 2);
    CHECK_EQ_INT(fixture_at(s8, "stats", "other", "max_ns", NULL), 360000);
    CHECK_EQ_INT(fixture_at(s8, "stats", "other", "p50_ns", NULL), 255000);

    CHECK_EQ_INT(fixture_at(idle, "totals", "busy_ns", NULL), 550000);
    CHECK_EQ_INT(fixture_at(idle, "totals", "idle_ns", NULL), 1250000);
    CHECK_EQ_INT(fixture_at(idle, "totals", "host_wait_ns", NULL), 610000);
    CHECK_EQ_INT(fixture_at(idle, "totals", "kernel_wait_ns", NULL), 30000);
    CHECK_EQ_INT(fixture_at(idle, "totals", "other_ns", NULL), 610000);
    check_by(json_object_get(idle, "totals"), 95000, 50000, 260000, 100000, 105000);
    CHECK_EQ_INT(fixture_at(idle, "totals", "counts", "host_wait", NULL), 4);
    CHECK_EQ_INT(fixture_at(idle, "totals", "counts", "kernel_wait", NULL), 2);
    CHECK_EQ_INT(fixture_at(idle, "totals", "counts", "other", NULL), 3);
    CHECK(near(fixture_at(idle, "ratios", "host_wait", NULL), 0.488));
    CHECK(near(fixture_at(idle, "ratios", "kernel_wait", NULL), 0.024));
    CHECK(near(fixture_at(idle, "ratios", "other", NULL), 0.488));

    /* bins: [i] holds 1000 * 2^(i-1) <= len < 1000 * 2^i */
    json_t *h = json_object_get(idle, "histogram");
    json_t *edges = json_object_get(h, "edges_ns");
    CHECK_EQ_INT(json_array_size(edges), 17);
    CHECK_EQ_INT(json_integer_value(json_array_get(edges, 0)), 1000);
    CHECK_EQ_INT(json_integer_value(json_array_get(edges, 16)), 65536000);
    json_t *hw = json_object_get(h, "host_wait"), *kw = json_object_get(h, "kernel_wait"),
           *ot = json_object_get(h, "other");
    CHECK_EQ_INT(json_array_size(hw), 18);
    CHECK_EQ_INT(json_integer_value(json_array_get(hw, 7)), 2); /* 80 and 120 µs */
    CHECK_EQ_INT(json_integer_value(json_array_get(hw, 8)), 1); /* 140 */
    CHECK_EQ_INT(json_integer_value(json_array_get(hw, 9)), 1); /* 270 */
    CHECK_EQ_INT(json_integer_value(json_array_get(kw, 4)), 1); /* 10 */
    CHECK_EQ_INT(json_integer_value(json_array_get(kw, 5)), 1); /* 20 */
    CHECK_EQ_INT(json_integer_value(json_array_get(ot, 7)), 1); /* 100 */
    CHECK_EQ_INT(json_integer_value(json_array_get(ot, 8)), 1); /* 150 */
    CHECK_EQ_INT(json_integer_value(json_array_get(ot, 9)), 1); /* 360 */
    json_decref(doc);
}

/* ---------------------------------------------------------------------- */
/* Launch statistics                                                      */
/* ---------------------------------------------------------------------- */

/* One step [1000, 3000). In it (cpu, gpu, delay in µs):
 *   #1 in aten::mm     cpu 80, gpu 20,  delay 10   runtime outlier (+30)
 *   #2                 cpu 10, gpu 5,   delay 300  delay outlier (+200), short
 *   #3 in aten::add    cpu 60, gpu 100, delay 150  both (+10, +50)
 *   #4                 cpu 8,  gpu 4,   delay 22   short
 *   #5 memset          cpu 6,  gpu 2,   delay 4    short, memory
 * and #6 launched at 900, before the window: left out.
 * cpu sorted 6 8 10 60 80: mean 32.8, p50 10, p95 60 + 0.8 * 20 = 76.
 * gpu sorted 2 4 5 20 100: mean 26.2, p50 5, p95 20 + 0.8 * 80 = 84.
 * delay sorted 4 10 22 150 300: mean 97.2, p50 22, p95 150 + 0.8 * 150 = 270. */
static const char launch_trace[] =
    STEP(1, 1000, 2000) ","
    LAUNCH(6, 900, 5) "," KERNEL("k_before", 6, 950, 10) ","
    CPU("cpu_op", "aten::mm", 1000, 100, "") ","
    LAUNCH(1, 1010, 80) "," KERNEL("k_mm", 1, 1100, 20) ","
    LAUNCH(2, 1200, 10) "," KERNEL("k_late", 2, 1510, 5) ","
    CPU("cpu_op", "aten::add", 1600, 100, "") ","
    LAUNCH(3, 1610, 60) "," KERNEL("k_add", 3, 1820, 100) ","
    LAUNCH(4, 1900, 8) "," KERNEL("k_short", 4, 1930, 4) ","
    CPU("cuda_runtime", "cudaMemsetAsync", 1950, 6, "\"correlation\":5") ","
    GPU("gpu_memset", "Memset (Device)", 1960, 2, "\"correlation\":5");

static void check_summary(json_t *l, const char *m, double mean, double p50, double p95, double max, double total)
{
    CHECK(near(fixture_at(l, m, "mean", NULL), mean));
    CHECK(near(fixture_at(l, m, "p50", NULL), p50));
    CHECK(near(fixture_at(l, m, "p95", NULL), p95));
    CHECK(near(fixture_at(l, m, "max", NULL), max));
    CHECK(near(fixture_at(l, m, "total", NULL), total));
}

static void check_outlier(json_t *o, const char *kernel, const char *op, const char *launch, const char *why,
                          int64_t cpu, int64_t gpu, int64_t delay)
{
    CHECK_EQ_STR(json_string_value(json_object_get(o, "kernel")), kernel);
    CHECK_EQ_STR(json_string_value(json_object_get(o, "op")), op);
    CHECK_EQ_STR(json_string_value(json_object_get(o, "launch")), launch);
    CHECK_EQ_STR(json_string_value(json_object_get(o, "why")), why);
    CHECK_EQ_INT(fixture_at(o, "cpu_ns", NULL), cpu);
    CHECK_EQ_INT(fixture_at(o, "gpu_ns", NULL), gpu);
    CHECK_EQ_INT(fixture_at(o, "delay_ns", NULL), delay);
}

static void test_launch(void)
{
    json_t *doc = fixture_analyses(DEV_H100, launch_trace, NULL);
    REQUIRE(doc);
    json_t *l = json_object_get(doc, "launch");
    CHECK_EQ_INT(fixture_at(l, "count", NULL), 5);
    CHECK_EQ_INT(fixture_at(l, "kernels", NULL), 4);
    CHECK_EQ_INT(fixture_at(l, "memory", NULL), 1);
    check_summary(l, "cpu_ns", 32800, 10000, 76000, 80000, 164000);
    check_summary(l, "gpu_ns", 26200, 5000, 84000, 100000, 131000);
    check_summary(l, "delay_ns", 97200, 22000, 270000, 300000, 486000);
    /* kernels only: cpu 8 10 60 80 */
    CHECK(near(fixture_at(l, "kernels_only", "cpu_ns", "mean", NULL), 39500));
    CHECK(near(fixture_at(l, "kernels_only", "cpu_ns", "p50", NULL), 35000));
    CHECK_EQ_INT(fixture_at(l, "short_kernels", NULL), 3);
    CHECK(near(fixture_at(l, "short_share", NULL), 0.6));
    CHECK_EQ_INT(fixture_at(l, "runtime_cutoff_ns", NULL), 50000);
    CHECK_EQ_INT(fixture_at(l, "delay_cutoff_ns", NULL), 100000);
    CHECK_EQ_INT(fixture_at(l, "runtime_outliers", NULL), 2);
    CHECK_EQ_INT(fixture_at(l, "delay_outliers", NULL), 2);
    json_t *out = json_object_get(l, "outliers");
    REQUIRE(json_array_size(out) == 3);
    check_outlier(json_array_get(out, 0), "k_late", "", "cudaLaunchKernel", "delay", 10000, 5000, 300000);
    check_outlier(json_array_get(out, 1), "k_add", "aten::add", "cudaLaunchKernel", "both", 60000, 100000, 150000);
    check_outlier(json_array_get(out, 2), "k_mm", "aten::mm", "cudaLaunchKernel", "runtime", 80000, 20000, 10000);
    CHECK_EQ_INT(fixture_at(json_array_get(out, 0), "ts", NULL), 1200000);
    json_t *s7 = stream_of(json_object_get(json_object_get(doc, "idle"), "streams"), 7);
    REQUIRE(s7);
    CHECK_EQ_INT(fixture_at(json_array_get(out, 0), "stream", NULL), fixture_at(s7, "stream", NULL));
    json_decref(doc);
}

/* ---------------------------------------------------------------------- */
/* Queue depth                                                            */
/* ---------------------------------------------------------------------- */

/* One step [1000, 1300), stretched to 1310 by the kernel of its last
 * launch. Launches at 1010, 1020, 1030, 1040 (kernels start at 1100, 1150,
 * 1200, 1250) and at 1200 (kernel at 1300): the depth goes 1 2 3 4 3 2,
 * stays 2 at 1200 (a launch and a start: one change, collapsed), then 1
 * and 0. Time at each depth in [1000, 1310): 0: 20, 1: 60, 2: 110, 3: 60,
 * 4: 60; mean 700 / 310, median 2. After the window, a kernel at 1390 that
 * precedes its own launch at 1400 (clock skew): the depth would dip to -1,
 * is shown as 0 (no sample), and counts one negative fix. */
static const char queue_trace[] =
    STEP(1, 1000, 300) ","
    LAUNCH(1, 1010, 2) "," KERNEL("q1", 1, 1100, 50) ","
    LAUNCH(2, 1020, 2) "," KERNEL("q2", 2, 1150, 50) ","
    LAUNCH(3, 1030, 2) "," KERNEL("q3", 3, 1200, 50) ","
    LAUNCH(4, 1040, 2) "," KERNEL("q4", 4, 1250, 50) ","
    LAUNCH(6, 1200, 2) "," KERNEL("q6", 6, 1300, 10) ","
    LAUNCH(5, 1400, 5) "," KERNEL("q5", 5, 1390, 5);

static void test_queue(void)
{
    char *db;
    json_t *doc = fixture_analyses(DEV_H100, queue_trace, &db);
    REQUIRE(doc);
    json_t *w = json_object_get(doc, "window_ns");
    CHECK_EQ_INT(json_integer_value(json_array_get(w, 1)), 1310000);
    json_t *q = json_object_get(doc, "queue");
    CHECK_EQ_INT(fixture_at(q, "limit", NULL), 1024);
    CHECK_EQ_INT(fixture_at(q, "negative_fixes", NULL), 1);
    json_t *s = stream_of(json_object_get(q, "streams"), 7);
    REQUIRE(s);
    CHECK_EQ_INT(fixture_at(s, "launches", NULL), 6);
    CHECK_EQ_INT(fixture_at(s, "max", NULL), 4);
    CHECK(near(fixture_at(s, "mean", NULL), 700.0 / 310.0));
    CHECK_EQ_INT(fixture_at(s, "p50", NULL), 2);
    CHECK_EQ_INT(fixture_at(s, "at_limit_ns", NULL), 0);
    CHECK_EQ_INT(fixture_at(s, "negative_fixes", NULL), 1);
    int64_t series = (int64_t)fixture_at(s, "series", NULL);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM ansample WHERE series = %lld", (long long)series);
    CHECK_EQ_INT(fixture_query_int(db, sql), 8);
    snprintf(sql, sizeof sql, "SELECT value FROM ansample WHERE series = %lld AND ts = 1040000", (long long)series);
    CHECK_EQ_INT(fixture_query_int(db, sql), 4);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM ansample WHERE series = %lld AND ts = 1200000", (long long)series);
    CHECK_EQ_INT(fixture_query_int(db, sql), 0);
    snprintf(sql, sizeof sql, "SELECT min(value) FROM ansample WHERE series = %lld", (long long)series);
    CHECK_EQ_INT(fixture_query_int(db, sql), 0);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM anseries WHERE id = %lld AND kind = %d AND key = %lld"
             " AND name LIKE 'Queue depth (stream 7%%)' AND unit = 'launches'",
             (long long)series, AN_SERIES_QUEUE, (long long)fixture_at(s, "stream", NULL));
    CHECK_EQ_INT(fixture_query_int(db, sql), 1);
    json_decref(doc);
    free(db);
}

/* A queue past CUDA's limit: 1030 launches, one per µs from 1000, run
 * from 3000 on, one every 2 µs. The depth reaches 1024 at the 1024th
 * launch (2023) and drops below when the 7th kernel starts (3012): 989 µs
 * at the limit. The step [1000, 5100) is the window (the last kernel ends
 * at 5059). */
static void test_queue_limit(void)
{
    size_t cap = 1 << 20, n = 0;
    char *ev = xmalloc(cap);
    n += (size_t)snprintf(ev + n, cap - n, "%s", STEP(1, 1000, 4100));
    for (int i = 0; i < 1030; i++)
        n += (size_t)snprintf(ev + n, cap - n,
                              ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%d,\"dur\":0.5,\"args\":{\"correlation\":%d}}"
                              ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"qk\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                              "\"dur\":1,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                              1000 + i, i + 1, 3000 + 2 * i, i + 1);
    REQUIRE(n < cap);
    json_t *doc = fixture_analyses(DEV_H100, ev, NULL);
    free(ev);
    REQUIRE(doc);
    json_t *s = stream_of(json_object_get(json_object_get(doc, "queue"), "streams"), 7);
    REQUIRE(s);
    CHECK_EQ_INT(fixture_at(s, "max", NULL), 1030);
    CHECK_EQ_INT(fixture_at(s, "at_limit_ns", NULL), 989000);
    CHECK(near(fixture_at(s, "at_limit_share", NULL), 989.0 / 4100.0));
    CHECK_EQ_INT(fixture_at(s, "negative_fixes", NULL), 0);
    /* every kernel after its launch: host_wait never, the 1 µs gaps are
     * kernel_wait; 1030 launches, none short of their (0.5 µs) call */
    json_t *idle = json_object_get(doc, "idle");
    CHECK_EQ_INT(fixture_at(idle, "totals", "counts", "kernel_wait", NULL), 1029);
    CHECK_EQ_INT(fixture_at(idle, "totals", "host_wait_ns", NULL), 0);
    CHECK_EQ_INT(fixture_at(doc, "launch", "count", NULL), 1030);
    CHECK_EQ_INT(fixture_at(doc, "launch", "short_kernels", NULL), 0);
    json_decref(doc);
}

/* No GPU work at all: empty but well-formed objects. */
static void test_empty(void)
{
    json_t *doc = fixture_analyses(DEV_H100, STEP(1, 1000, 100) "," CPU("cpu_op", "aten::add", 1010, 5, ""), NULL);
    REQUIRE(doc);
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(doc, "idle"), "streams")), 0);
    CHECK_EQ_INT(fixture_at(doc, "idle", "totals", "idle_ns", NULL), 0);
    CHECK_EQ_INT(fixture_at(doc, "idle", "ratios", "host_wait", NULL), 0);
    CHECK_EQ_INT(fixture_at(doc, "launch", "count", NULL), 0);
    CHECK_EQ_INT(fixture_at(doc, "launch", "cpu_ns", "p95", NULL), 0);
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(doc, "launch"), "outliers")), 0);
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(doc, "queue"), "streams")), 0);
    json_decref(doc);
}

int main(void)
{
    fixture_init();
    RUN(test_idle);
    RUN(test_launch);
    RUN(test_queue);
    RUN(test_queue_limit);
    RUN(test_empty);
    fixture_done();
    return harness_done("analyses_hta");
}
