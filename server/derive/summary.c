#define LOG_MODULE "analysis"
#include "derive/summary.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hmap.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/summary_memory.h"
#include "derive/summary_metrics.h"
#include "derive/summary_rank.h"
#include "derive/summary_steps.h"
#include "derive/summary_walk.h"
#include "store/model.h"
#include "store/rundb.h"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER,"
    " host_ts INTEGER, host_dur INTEGER, ngpu INTEGER, kernel INTEGER, memcpy INTEGER, memset INTEGER,"
    " comm INTEGER, runtime INTEGER, dataloader INTEGER, cpu_exec INTEGER, other INTEGER,"
    " PRIMARY KEY(rank, idx));"
    "CREATE TABLE IF NOT EXISTS gpu(rank INTEGER, device INTEGER, name TEXT, memory_bytes INTEGER, cc TEXT,"
    " util REAL, sm_eff REAL, occupancy REAL, tc_share REAL, kernel_ns INTEGER, tc_ns INTEGER,"
    " window_ns INTEGER, PRIMARY KEY(rank, device));"
    "CREATE TABLE IF NOT EXISTS op_stat(rank INTEGER, name TEXT, shape TEXT, stack TEXT, calls INTEGER,"
    " host_self INTEGER, host_total INTEGER, dev_self INTEGER, dev_total INTEGER, tc_self INTEGER,"
    " tc_total INTEGER, tc_eligible INTEGER);"
    "CREATE TABLE IF NOT EXISTS kernel_stat(rank INTEGER, device INTEGER, name TEXT, op TEXT, calls INTEGER,"
    " total INTEGER, min INTEGER, max INTEGER, tc INTEGER, comm INTEGER, bps_w REAL, bps_dur INTEGER,"
    " occ_w REAL, occ_dur INTEGER, limiter TEXT);"
    "CREATE TABLE IF NOT EXISTS mem_alloc(id INTEGER PRIMARY KEY, rank INTEGER, dev_type INTEGER,"
    " dev_id INTEGER, addr INTEGER, bytes INTEGER, alloc_ts INTEGER, free_ts INTEGER, op INTEGER);"
    "CREATE TABLE IF NOT EXISTS analysis(rank INTEGER PRIMARY KEY, summary TEXT);";

static const char clear_sql[] = "DELETE FROM step; DELETE FROM gpu; DELETE FROM op_stat; DELETE FROM kernel_stat;"
                                "DELETE FROM mem_alloc; DELETE FROM analysis;";

static const char index_sql[] =
    "CREATE INDEX IF NOT EXISTS op_stat_rank ON op_stat(rank);"
    "CREATE INDEX IF NOT EXISTS kernel_stat_rank ON kernel_stat(rank);"
    "CREATE INDEX IF NOT EXISTS mem_alloc_rank_dev ON mem_alloc(rank, dev_type, dev_id, alloc_ts);";


/* ====================================================================== */
/* Driver                                                                 */
/* ====================================================================== */

static int analyse_rank(sqlite3 *db, int rank, const char *header_text, int api_ops, const struct slice_feed *feed,
                        struct err *e)
{
    struct rankctx c;
    struct step *steps = NULL;
    size_t nsteps = 0;
    json_t *header = header_text ? json_loads(header_text, 0, NULL) : NULL;
    json_t *summary = json_object();
    int rc = 0;

    memset(&c, 0, sizeof c);
    c.db = db;
    c.rank = rank;
    c.api_ops = api_ops;
    c.feed = feed;
    c.cpu_min = c.all_min = INT64_MAX;
    c.cpu_max = c.all_max = INT64_MIN;
    c.notes = json_array();
    hmap_init(&c.names.map, sizeof(struct name), 1024);
    hmap_init(&c.ops, sizeof(struct opagg), 256);
    hmap_init(&c.kernels, sizeof(struct kagg), 256);
    if (sqlite3_prepare_v2(db, "SELECT s FROM str WHERE id = ?", -1, &c.names.get, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "analysis (strings)");
        goto out;
    }
    /* phase timings at debug level: what a slow ingest needs explained */
    double t = log_now_s(), t0 = t;
    if ((rc = summary_walk_gpu(&c, e)) != 0) goto out;
    LOG_LAP(rank, "GPU ops", &t);
    if ((rc = summary_walk_cpu(&c, e)) != 0) goto out;
    free(c.by_corr); /* the launches are matched: 16 bytes an op the later passes do not need */
    c.by_corr = NULL;
    c.nby_corr = c.cap_by_corr = 0;
    LOG_LAP(rank, "CPU threads", &t);
    if ((rc = summary_steps_build(&c, &steps, &nsteps)) != 0) goto out;
    summary_steps_breakdown(&c, steps, nsteps);
    if ((rc = summary_steps_write(&c, steps, nsteps, e)) != 0) goto out;
    LOG_LAP(rank, "steps and breakdown", &t);
    int64_t w0 = nsteps ? steps[0].ts : 0, w1 = nsteps ? steps[nsteps - 1].end : 0;
    if ((rc = summary_metrics_gpu(&c, header, w0, w1, summary, e)) != 0) goto out;
    if ((rc = summary_metrics_write_ops(&c, e)) != 0) goto out;
    if ((rc = summary_metrics_write_kernels(&c, e)) != 0) goto out;
    LOG_LAP(rank, "metrics and tables", &t);
    if ((rc = summary_memory_pair(&c, steps, nsteps, summary, e)) != 0) goto out;
    LOG_LAP(rank, "memory", &t);
    t = t0;
    LOG_LAP(rank, "all", &t);

    json_object_set_new(summary, "window_ns", json_pack("[I,I]", (json_int_t)w0, (json_int_t)w1));
    json_object_set_new(summary, "steps_found", json_integer((json_int_t)c.nhost));
    json_object_set_new(summary, "steps_dropped",
                        json_integer(c.nhost > nsteps ? (json_int_t)(c.nhost - nsteps) : 0));
    json_object_set_new(summary, "has_python_stacks", json_boolean(c.has_python));
    json_object_set(summary, "notes", c.notes);
    {
        char *text = json_dumps(summary, JSON_COMPACT);
        sqlite3_stmt *ins;
        if (sqlite3_prepare_v2(db, "INSERT INTO analysis(rank, summary) VALUES(?, ?)", -1, &ins, NULL) !=
            SQLITE_OK) {
            free(text);
            rc = rundb_db_error(db, e, "analysis (analysis table)");
            goto out;
        }
        sqlite3_bind_int(ins, 1, rank);
        sqlite3_bind_text(ins, 2, text, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(db, e, "analysis (analysis table)");
        sqlite3_finalize(ins);
        free(text);
    }
    LOG_DEBUG("rank %d: %zu GPU ops, %zu steps, %zu operator groups", rank, c.ng, nsteps, c.ops.n);
out:
    for (size_t i = 0; i < nsteps; i++) free(steps[i].name);
    free(steps);
    for (size_t i = 0; i < c.ng; i++) free(c.g[i].limiter);
    free(c.g);
    free(c.by_corr);
    free(c.hs);
    free(c.mev);
    for (int k = 0; k < C_N; k++) ivlist_free(&c.cat[k]);
    hmap_free(&c.ops, summary_rank_free_opagg);
    hmap_free(&c.kernels, summary_rank_free_kagg);
    summary_rank_names_free(&c.names);
    json_decref(c.notes);
    json_decref(summary);
    json_decref(header);
    return rc;
}

/* summary_run over every rank (rank < 0), or summary_run_rank (no
 * emptying, no index: a scratch database). */
static int run_ranks(sqlite3 *db, int rank, const struct slice_feed *feed, struct err *e)
{
    sqlite3_stmt *ranks = NULL;
    int rc = 0;
    /* run again (ranks renumbered after import), it starts from empty tables */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        (rank < 0 && sqlite3_exec(db, clear_sql, NULL, NULL, NULL) != SQLITE_OK)) {
        rc = rundb_db_error(db, e, "analysis (tables)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if ((rc = rundb_prepare(db,
                            "SELECT rank, header, format = 'nsys' FROM rank WHERE ?1 < 0 OR rank = ?1"
                            " ORDER BY rank",
                            &ranks, e)) < 0)
        goto out;
    sqlite3_bind_int(ranks, 1, rank);
    int src;
    while ((src = sqlite3_step(ranks)) == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(ranks, 1);
        char *header = h ? xstrdup(h) : NULL;
        rc = analyse_rank(db, sqlite3_column_int(ranks, 0), header, sqlite3_column_int(ranks, 2), feed, e);
        free(header);
        if (rc) goto out;
    }
    if (src != SQLITE_DONE) {
        rc = rundb_db_error(db, e, "analysis (ranks)");
        goto out;
    }
    if (rank < 0 && sqlite3_exec(db, index_sql, NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analysis (index)");
out:
    sqlite3_finalize(ranks);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analysis (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int summary_run(sqlite3 *db, struct err *e)
{
    return run_ranks(db, -1, NULL, e);
}

int summary_run_rank(sqlite3 *db, int rank, struct err *e)
{
    return run_ranks(db, rank, NULL, e);
}

int summary_run_rank_fed(sqlite3 *db, int rank, const struct slice_feed *feed, struct err *e)
{
    return run_ranks(db, rank, feed, e);
}

int summary_adopt(sqlite3 *db, int first, int last, struct err *e)
{
    err_clear(e);
    /* mem_alloc's ids are given here, in rank order, as summary_run gives
     * them: the first rank's as they are (1..n in the emptied table, so
     * SQLite copies the records whole), the next ones' after them */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        (first && (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
                   sqlite3_exec(db, clear_sql, NULL, NULL, NULL) != SQLITE_OK)) ||
        sqlite3_exec(db, "INSERT INTO main.step SELECT * FROM " RUNDB_ASIDE ".step;"
                         "INSERT INTO main.gpu SELECT * FROM " RUNDB_ASIDE ".gpu;"
                         "INSERT INTO main.op_stat SELECT * FROM " RUNDB_ASIDE ".op_stat;"
                         "INSERT INTO main.kernel_stat SELECT * FROM " RUNDB_ASIDE ".kernel_stat;"
                         "INSERT INTO main.analysis SELECT * FROM " RUNDB_ASIDE ".analysis",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db,
                     first ? "INSERT INTO main.mem_alloc SELECT * FROM " RUNDB_ASIDE ".mem_alloc"
                           : "INSERT INTO main.mem_alloc(rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op)"
                             " SELECT rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op FROM " RUNDB_ASIDE
                             ".mem_alloc ORDER BY id",
                     NULL, NULL, NULL) != SQLITE_OK ||
        (last && sqlite3_exec(db, index_sql, NULL, NULL, NULL) != SQLITE_OK) ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "analysis (adopt)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    return e->code;
}


/* Named here, where the step table's columns are filled; the report and
 * the CLI read them. */
const char *const summary_categories[9] = { "kernel",  "memcpy",     "memset",   "communication", "runtime",
                                             "dataloader", "cpu_exec", "other", NULL };

