/* budget_test.c — the deadline, the client-gone peek and the stop flag,
 * and SQLite statements interrupted through budget_attach. */
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "store/budget.h"
#include "harness.h"

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
}

static void test_deadline(void)
{
    struct budget b;

    CHECK_EQ_INT(budget_check(), 0); /* no budget on this thread */
    budget_begin(&b, 30, -1, NULL);
    CHECK_EQ_INT(budget_check(), 0);
    sleep_ms(40);
    CHECK_EQ_INT(budget_check(), 1);
    CHECK_EQ_INT(b.state, BUDGET_OVER);
    budget_end();
    CHECK_EQ_INT(budget_check(), 0);
}

static void test_client_gone_and_stop(void)
{
    struct budget b;
    atomic_int stop = 0;
    int sv[2];

    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    budget_begin(&b, 60000, sv[0], &stop);
    CHECK_EQ_INT(budget_check(), 0);
    send(sv[1], "x", 1, 0); /* a pipelined byte is not a hang-up */
    sleep_ms(BUDGET_POLL_MS + 2);
    CHECK_EQ_INT(budget_check(), 0);
    close(sv[1]);
    sleep_ms(BUDGET_POLL_MS + 2);
    char c;
    CHECK_EQ_INT(recv(sv[0], &c, 1, 0), 1); /* drain the byte: then EOF */
    sleep_ms(BUDGET_POLL_MS + 2);
    CHECK_EQ_INT(budget_check(), 1);
    CHECK_EQ_INT(b.state, BUDGET_GONE);
    budget_end();
    close(sv[0]);

    budget_begin(&b, 60000, -1, &stop);
    atomic_store(&stop, 1);
    CHECK_EQ_INT(budget_check(), 1);
    CHECK_EQ_INT(b.state, BUDGET_STOPPED);
    budget_end();
}

static void test_sqlite_interrupted(void)
{
    struct budget b;
    sqlite3 *db;
    sqlite3_stmt *st;
    const char *endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    budget_begin(&b, 50, -1, NULL);
    budget_attach(db);
    REQUIRE(sqlite3_prepare_v2(db, endless, -1, &st, NULL) == SQLITE_OK);
    CHECK_EQ_INT(sqlite3_step(st), SQLITE_INTERRUPT);
    CHECK_EQ_INT(b.state, BUDGET_OVER);
    sqlite3_finalize(st);
    budget_end();
    /* the handler stays installed but reads the thread's (now no) budget */
    REQUIRE(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL) == SQLITE_OK);
    CHECK_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_deadline);
    RUN(test_client_gone_and_stop);
    RUN(test_sqlite_interrupted);
    return harness_done("budget");
}
