/* logstore_test — a run's lines and live lines of its job read together
 * in time order, with the rank, window, text and paging filters; live
 * lines after an id; deleting a run keeps the live lines; read-only. */
#include "store/logstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct got { int n; int64_t id[16], ts[16]; char text[16][32]; int rank[16]; };

static int collect(void *arg, int64_t id, int64_t ts, int rank, const char *text, const char *fields, const char *job)
{
    struct got *g = arg;
    (void)fields, (void)job;
    if (g->n == 16) return 1;
    g->id[g->n] = id, g->ts[g->n] = ts, g->rank[g->n] = rank;
    snprintf(g->text[g->n], sizeof g->text[0], "%s", text);
    g->n++;
    return 0;
}

static char dir[] = "/tmp/tb_logstore_XXXXXX";

static void test_store_and_query(void)
{
    struct logstore *ls;
    struct err e;
    REQUIRE(logstore_open(dir, 0, &ls, &e) == 0);
    struct logstore_line run[] = { { 300, 0, "r0 three", "{\"loss\":1}", NULL }, { 100, 1, "r1 one", NULL, NULL },
                                   { 200, -1, "all two", NULL, NULL } };
    struct logstore_line live[] = { { 150, -1, "live A", NULL, NULL }, { 250, -1, "other job", NULL, "J2" } };
    int64_t last = 0;
    CHECK(logstore_add(ls, "aaaaaaaaaaaaaaaa", NULL, NULL, run, 3, &last, &e) == 0);
    CHECK(logstore_add(ls, NULL, "P", "J1", live, 2, &last, &e) == 0);
    CHECK_EQ_INT(last, 5);
    struct logstore_query q = { "aaaaaaaaaaaaaaaa", "P", "J1", -1, 0, 1000, NULL, 0, -1, 100 };
    struct got g = { 0 };
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    REQUIRE(g.n == 4);
    CHECK_EQ_STR(g.text[0], "r1 one");
    CHECK_EQ_STR(g.text[1], "live A");
    CHECK_EQ_STR(g.text[3], "r0 three");
    q.rank = 0;
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    CHECK_EQ_INT(g.n, 3); /* rank 0 and the rank-less lines */
    q.rank = -1, q.q = "THREE";
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    CHECK(g.n == 1 && g.ts[0] == 300);
    q.q = NULL, q.limit = 2;
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    REQUIRE(g.n == 2);
    q.after_ts = g.ts[1], q.after_id = g.id[1];
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    CHECK(g.n == 2 && g.ts[0] == 200);
    q = (struct logstore_query){ "aaaaaaaaaaaaaaaa", NULL, NULL, -1, 150, 250, NULL, 0, -1, 100 };
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    CHECK(g.n == 1 && g.ts[0] == 200); /* no live lines without a project */
    /* live: after an id, by job, and the backlog cursor */
    memset(&g, 0, sizeof g);
    CHECK(logstore_live_after(ls, "P", NULL, 0, 10, collect, &g, &e) == 0);
    CHECK_EQ_INT(g.n, 2);
    memset(&g, 0, sizeof g);
    CHECK(logstore_live_after(ls, "P", "J2", 0, 10, collect, &g, &e) == 0);
    CHECK(g.n == 1 && strcmp(g.text[0], "other job") == 0);
    int64_t cur;
    CHECK(logstore_live_cursor(ls, "P", NULL, 1, &cur, &e) == 0 && cur == 4);
    CHECK(logstore_live_cursor(ls, "P", NULL, 10, &cur, &e) == 0 && cur == 0);
    CHECK(logstore_live_cursor(ls, "P", NULL, 0, &cur, &e) == 0 && cur == 5);
    CHECK(logstore_live_cursor(ls, "Q", NULL, 0, &cur, &e) == 0 && cur == 0);
    /* deleting the run keeps the live lines */
    CHECK(logstore_delete_run(ls, "aaaaaaaaaaaaaaaa", &e) == 0);
    q = (struct logstore_query){ "aaaaaaaaaaaaaaaa", "P", "J1", -1, 0, 1000, NULL, 0, -1, 100 };
    memset(&g, 0, sizeof g);
    CHECK(logstore_query(ls, &q, collect, &g, &e) == 0);
    CHECK(g.n == 1 && strcmp(g.text[0], "live A") == 0);
    logstore_close(ls);
    /* read-only: stored lines are read, writes refused */
    REQUIRE(logstore_open(dir, 1, &ls, &e) == 0);
    memset(&g, 0, sizeof g);
    CHECK(logstore_live_after(ls, "P", NULL, 0, 10, collect, &g, &e) == 0 && g.n == 2);
    CHECK(logstore_add(ls, NULL, "P", "J1", live, 1, NULL, &e) == ERR_READ_ONLY);
    logstore_close(ls);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN(test_store_and_query);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return harness_done("logstore");
}
