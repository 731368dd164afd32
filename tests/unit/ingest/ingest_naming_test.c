/* ingest_naming_test — names from file names: ranks written as rank3,
 * rank-3, rank_3 or worker3; a run's default name without the profiler's
 * suffixes, timestamp and (for several files) rank token, or its folder;
 * UTF-8 kept whole in a prefix; safe source file names. */
#include "ingest/ingest_naming.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_rank(void)
{
    CHECK_EQ_INT(ingest_naming_rank("rank3.pt.trace.json"), 3);
    CHECK_EQ_INT(ingest_naming_rank("job_rank-12.json"), 12);
    CHECK_EQ_INT(ingest_naming_rank("rank_7"), 7);
    CHECK_EQ_INT(ingest_naming_rank("worker5.json"), 5);
    CHECK_EQ_INT(ingest_naming_rank("trace.json"), -1);
    CHECK_EQ_INT(ingest_naming_rank("ranking.json"), -1);
    CHECK_EQ_STR(ingest_naming_base("a/b/c.json"), "c.json");
    CHECK_EQ_STR(ingest_naming_base("c.json"), "c.json");
}

static void run_name_is(const char *const *names, int n, const char *want)
{
    struct ingest_file f[4];
    memset(f, 0, sizeof f);
    for (int i = 0; i < n; i++) f[i].name = names[i];
    char *s = ingest_naming_run(f, n);
    CHECK_EQ_STR(s, want);
    free(s);
}

static void test_run_name(void)
{
    static const char *const one[] = { "dir/rank0.1795344527679083192.pt.trace.json.gz" };
    static const char *const job[] = { "job_rank0.json", "job_rank1.json" };
    static const char *const bare[] = { "exp/rank0.json", "exp/rank1.json" };
    static const char *const flat[] = { "rank0.json", "rank1.json" };
    run_name_is(one, 1, "rank0");
    run_name_is(job, 2, "job");
    run_name_is(bare, 2, "exp");
    run_name_is(flat, 2, "2-rank run");
}

static void test_prefix_and_safe(void)
{
    char *p = ingest_naming_prefix("ab\xc3\xa9", 3); /* é would be cut in two */
    CHECK_EQ_STR(p, "ab");
    free(p);
    p = ingest_naming_prefix("abc", 10);
    CHECK_EQ_STR(p, "abc");
    free(p);
    char *s = ingest_naming_safe_file("dir/my trace (1).json");
    CHECK_EQ_STR(s, "my_trace__1_.json");
    free(s);
    s = ingest_naming_safe_file(".hidden");
    CHECK_EQ_STR(s, "trace.hidden");
    free(s);
}

int main(void)
{
    RUN(test_rank);
    RUN(test_run_name);
    RUN(test_prefix_and_safe);
    return harness_done("ingest_naming");
}
