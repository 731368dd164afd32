/*
 * budget.h — a time budget and a client-gone check for one heavy request,
 * enforced inside SQLite and in long C loops (issue 15).
 *
 * A query worker (http.c) calls budget_begin before it runs a heavy route's
 * handler and budget_end after. In between, the budget is bound to that
 * thread: every run database opened on it (rundb_open_ro calls
 * budget_attach) gets a SQLite progress handler that stops the statement
 * (SQLITE_INTERRUPT) once the deadline has passed or the client has hung up,
 * and long C loops call budget_check. The handler's answer is then
 * discarded by http.c, which sends 503 over_budget instead (or nothing, to a
 * client that left), so a statement cut short never passes for a result.
 *
 * Why a thread-bound budget and not a parameter: the connections are opened
 * deep inside the handlers and the analyses; the budget is the one piece of
 * request context they need, and a thread runs one request at a time.
 *
 * The client check peeks at the request's socket (recv MSG_PEEK|
 * MSG_DONTWAIT) at most every BUDGET_POLL_MS: 0 bytes means the client
 * closed its end. The connection is suspended meanwhile, so libmicrohttpd
 * does not read the socket under us.
 *
 * States of a struct budget: running (budget_begin) -> over (deadline
 * passed), gone (client hung up) or stopped (the server is shutting down);
 * the first stop wins and sticks.
 * Threads: a struct budget is touched only by the thread that began it.
 */
#ifndef TB_BUDGET_H
#define TB_BUDGET_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

#define BUDGET_POLL_MS 10 /* how often the client's socket is peeked at */

enum budget_state { BUDGET_RUNNING, BUDGET_OVER, BUDGET_GONE, BUDGET_STOPPED };

struct budget {
    int64_t deadline_ms;  /* CLOCK_MONOTONIC ms */
    int64_t next_poll_ms; /* next peek at fd */
    int fd;               /* the client's socket; -1: none to watch */
    const atomic_int *stop; /* nonzero: stop now (server shutting down); may be NULL */
    enum budget_state state;
};

/* Binds b to this thread with limit_ms from now; fd is the client's socket
 * or -1; stop (may be NULL, borrowed until budget_end) is a flag that ends
 * the work early. A thread holds one budget at a time. */
void budget_begin(struct budget *b, int64_t limit_ms, int fd, const atomic_int *stop);

/* Unbinds this thread's budget (b keeps its final state). */
void budget_end(void);

/* 1 when this thread's budget is over, its client is gone or its stop flag
 * is set (the caller
 * should stop and return any error: its answer will be replaced), else 0.
 * 0 on a thread without a budget. Cheap enough for inner loops every few
 * thousand iterations. */
int budget_check(void);

/* Installs the budget's progress handler on db when this thread has a
 * budget; otherwise nothing. The handler reads the thread's budget at each
 * call, so a db used later on another thread is not stopped by it. */
void budget_attach(sqlite3 *db);

#endif
