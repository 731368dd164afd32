/* summary_steps_test — priority accounting of the breakdown, step stretching and
 * trimming, communication by name.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

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

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_priority_accounting);
    RUN(test_steps_stretch_and_trim);
    RUN(test_communication);
    fixture_end();
    return harness_done("summary_steps");
}
