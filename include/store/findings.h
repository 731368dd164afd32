/*
 * findings.h — the store's side of recommendations: run.db's finding table,
 *
 *   finding(rank, ord, id, severity, saving_ns, body)
 *        rank NULL for a finding every rank's list shows; ord 0.. in
 *        display order; body the finding as JSON text (derive/rules.h).
 *
 * The rule engine decides what the rows say and their order; this module
 * owns the table: its schema, replacing its rows in one transaction,
 * adopting them from a scratch database attached as RUNDB_ASIDE, and
 * reading the bodies back in display order. Statements are fixed, values
 * bound; every step tells an error from the end of the rows.
 *
 * Memory: rows passed in are borrowed for the call; findings_read returns a
 * new JSON array owned by the caller. Threads: one connection, one thread
 * at a time, as SQLite's.
 */
#ifndef TB_FINDINGS_H
#define TB_FINDINGS_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

struct findings_row {
    int rank;             /* < 0: NULL (shown on every rank's list) */
    const char *id;       /* the rule */
    const char *severity; /* "low", "medium", "high" */
    int64_t saving_ns;
    const char *body; /* JSON text */
};

/* Creates the finding table when db lacks it. Returns 0 or < 0 (e filled). */
int findings_ensure(sqlite3 *db, struct err *e);

/* Replaces every row of the finding table by rows[0..n) (ord = index), in
 * one transaction: on an error nothing changes. */
int findings_replace(sqlite3 *db, const struct findings_row *rows, size_t n, struct err *e);

/* Replaces db's finding table by the one of RUNDB_ASIDE, in one
 * transaction. */
int findings_adopt(sqlite3 *db, struct err *e);

/* The bodies in display order, as a JSON array (bodies that do not parse
 * are left out). rank >= 0 keeps that rank's rows and the NULL-rank ones.
 * ERR_INVALID when db has no finding table (a run imported before
 * recommendations existed). OUT *out: owned by caller, NULL on failure. */
int findings_read(sqlite3 *db, int rank, json_t **out, struct err *e);

#endif
