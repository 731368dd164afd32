#define LOG_MODULE "analysis"
#include "derive/summary_memory.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "derive/timeline_rows.h"
#include "store/model.h"
#include "store/rundb.h"

/* ====================================================================== */
/* Memory: allocations paired with frees, peaks                           */
/* ====================================================================== */

/* An allocation waiting for its free, keyed by struct pkey. */
struct pkey {
    int dt, di;
    int64_t addr;
};

struct pending {
    int64_t ts, bytes;
    uint32_t op;
};

static uint64_t pkey_hash(const struct pkey *k)
{
    return (uint32_t)hmap_hash_u64((uint64_t)k->addr ^ ((uint64_t)(uint32_t)k->di << 40) ^
                                   ((uint64_t)(uint32_t)k->dt << 56));
}

int summary_memory_events(struct rankctx *c, struct err *e)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0, src;
    if (sqlite3_prepare_v2(c->db, "SELECT id, ts, track FROM mem WHERE rank = ? AND bytes > 0 ORDER BY ts, id", -1,
                           &st, NULL) != SQLITE_OK)
        return rundb_db_error(c->db, e, "analysis (memory events)");
    sqlite3_bind_int(st, 1, c->rank);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), track = sqlite3_column_int64(st, 2);
        /* the one that does not fit is named: an id takes 32 bits, a track 31 (MEV_WALKED) */
        if (id < 0 || id > UINT32_MAX) {
            rc = err_set(e, ERR_INVALID, "analysis (memory events): event id %lld does not fit 32 bits", (long long)id);
            goto out;
        }
        if (track < 0 || track >= MEV_WALKED) {
            rc = err_set(e, ERR_INVALID, "analysis (memory events): track id %lld does not fit 31 bits",
                         (long long)track);
            goto out;
        }
        if (c->nmev == cap) {
            cap = cap ? cap * 2 : 1024;
            c->mev = xrealloc(c->mev, cap * sizeof *c->mev);
        }
        c->mev[c->nmev++] = (struct memev){ sqlite3_column_int64(st, 1), (uint32_t)id, (uint32_t)track };
    }
    if (src != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (memory events)");
out:
    sqlite3_finalize(st);
    return rc;
}

/* mem_alloc rows go TIMELINE_ROWS_BATCH to a statement through the
 * timeline's batched writer (61 k rows on tiled33: a step and a reset per
 * row were half the pass); rows keep their order, so their ids are those
 * row-by-row inserts gave. */
#define MA_ROW "(?,?,?,?,?,?,?,?)"
#define MA_INSERT "INSERT INTO mem_alloc(rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op) VALUES"

/* A mem_alloc row; no alloc_ts or free_ts: NULL (has_ats, has_fts 0). */
struct arow {
    int64_t addr, bytes, ats, fts;
    int dt, di, has_ats, has_fts;
    uint32_t op;
};

/* Adds row r of rank to w. Returns 0 or < 0 (e filled). */
static int put_alloc(struct timeline_rows *w, int rank, struct arow r, struct err *e)
{
    const union timeline_rows_val v[8] = {
        { .i = rank }, { .i = r.dt }, { .i = r.di }, { .i = r.addr }, { .i = r.bytes }, { .i = r.ats }, { .i = r.fts },
        { .i = r.op },
    };
    return timeline_rows_add(w, v, (r.has_ats ? 0 : 1u << 5) | (r.has_fts ? 0 : 1u << 6), e);
}

/* Per GPU device and step: allocated memory at the step's end and its
 * peak inside the step ({"<dev>": [{end, peak}, ...]}), what a rule needs
 * to see memory grow from step to step. */
struct stepmem {
    int dev;
    int64_t *end, *peak, last;
};

static void stepmem_note(struct stepmem **sm, size_t *nsm, size_t nsteps, int dev, int64_t total)
{
    size_t i = 0;
    while (i < *nsm && (*sm)[i].dev != dev) i++;
    if (i == *nsm) {
        *sm = xrealloc(*sm, (*nsm + 1) * sizeof **sm);
        (*sm)[i].dev = dev;
        (*sm)[i].end = xcalloc(nsteps ? nsteps : 1, sizeof(int64_t));
        (*sm)[i].peak = xcalloc(nsteps ? nsteps : 1, sizeof(int64_t));
        for (size_t k = 0; k < nsteps; k++) (*sm)[i].end[k] = (*sm)[i].peak[k] = -1;
        (*sm)[i].last = -1;
        (*nsm)++;
    }
    (*sm)[i].last = total;
}

/* The peak of one "peak_memory" key: "cpu" or a device number (of any
 * other type), kept in C while the events stream by (a JSON lookup
 * and a printed key per event showed in the profile) and written in the
 * order the keys were first met. */
struct peak {
    int cpu, dev;
    int64_t bytes, ts, reserved;
};

struct peaks {
    struct peak *p;
    size_t n, last;
};

static void peak_note(struct peaks *pk, int dt, int di, int64_t ts, int64_t total, int64_t reserved)
{
    int cpu = dt == 0, dev = cpu ? 0 : di;
    size_t i = pk->last;
    if (i >= pk->n || pk->p[i].cpu != cpu || pk->p[i].dev != dev) {
        for (i = 0; i < pk->n && (pk->p[i].cpu != cpu || pk->p[i].dev != dev); i++)
            ;
        if (i == pk->n) {
            pk->p = xrealloc(pk->p, (pk->n + 1) * sizeof *pk->p);
            pk->p[pk->n++] = (struct peak){ cpu, dev, -1, 0, 0 };
        }
        pk->last = i;
    }
    struct peak *p = &pk->p[i];
    if (total > p->bytes) {
        p->bytes = total;
        p->ts = ts;
    }
    if (reserved > p->reserved) p->reserved = reserved;
}

int summary_memory_pair(struct rankctx *c, const struct step *steps, size_t nsteps, json_t *summary, struct err *e)
{
    struct stepmem *sm = NULL;
    size_t nsm = 0, cur_step = 0;
    sqlite3_stmt *st = NULL;
    struct timeline_rows *aw = xcalloc(1, sizeof *aw); /* 2.7 KB: not on the stack */
    struct hmap pm; /* struct pkey -> struct pending */
    hmap_init(&pm, sizeof(struct pending), 1024);
    json_t *peaks = json_object();
    struct peaks pk_all = { NULL, 0, 0 };
    int rc = 0;
    uint64_t double_free = 0;
    size_t next_ev = 0; /* c->mev is in this statement's order: the allocations' operators come in turn */
    if (sqlite3_prepare_v2(c->db,
                           "SELECT id, ts, dev_type, dev_id, addr, bytes, total_alloc, total_reserved FROM mem"
                           " WHERE rank = ? ORDER BY ts, id",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (memory)");
        goto out;
    }
    if ((rc = timeline_rows_open(aw, c->db, MA_INSERT MA_ROW, MA_INSERT TIMELINE_ROWS32(MA_ROW), 8, 0,
                                 "analysis (memory)", e)) < 0)
        goto out;
    sqlite3_bind_int(st, 1, c->rank);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int dt = sqlite3_column_int(st, 2), di = sqlite3_column_int(st, 3);
        int64_t addr = sqlite3_column_int64(st, 4), bytes = sqlite3_column_int64(st, 5);
        /* NULL totals (the trace did not say) must not read as 0 bytes */
        int64_t total = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
        int64_t reserved = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
        if (dt == 1 && total >= 0 && nsteps) {
            /* close the steps this sample lies after: their end value is
             * the last sample before it */
            while (cur_step < nsteps && ts >= steps[cur_step].end) {
                for (size_t k = 0; k < nsm; k++) sm[k].end[cur_step] = sm[k].last;
                cur_step++;
            }
            stepmem_note(&sm, &nsm, nsteps, di, total);
            if (cur_step < nsteps && ts >= steps[cur_step].ts)
                for (size_t k = 0; k < nsm; k++)
                    if (sm[k].dev == di && total > sm[k].peak[cur_step]) sm[k].peak[cur_step] = total;
        }
        if (total >= 0) peak_note(&pk_all, dt, di, ts, total, reserved);
        if (bytes > 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_put(&pm, pkey_hash(&pk), &pk, sizeof pk, NULL);
            if (p->ts || p->bytes) {
                /* allocated twice without a free in between: close the old one unseen */
                struct arow r = { .dt = dt, .di = di, .addr = addr, .bytes = p->bytes, .ats = p->ts, .has_ats = 1,
                                  .op = p->op };
                if (put_alloc(aw, c->rank, r, e)) goto fail;
            }
            p->ts = ts;
            p->bytes = bytes;
            p->op = 0;
            if (next_ev < c->nmev && c->mev[next_ev].id == id) {
                uint32_t who = c->mev[next_ev++].who;
                if (who & MEV_WALKED) p->op = who & ~MEV_WALKED;
            }
        } else if (bytes < 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_get(&pm, pkey_hash(&pk), &pk, sizeof pk);
            if (p) {
                struct arow r = { .dt = dt, .di = di, .addr = addr, .bytes = p->bytes, .ats = p->ts, .has_ats = 1,
                                  .fts = ts, .has_fts = 1, .op = p->op };
                if (put_alloc(aw, c->rank, r, e)) goto fail;
                hmap_del(&pm, pkey_hash(&pk), &pk, sizeof pk);
            } else {
                double_free++;
                struct arow r = { .dt = dt, .di = di, .addr = addr, .bytes = bytes, .fts = ts, .has_fts = 1 };
                if (put_alloc(aw, c->rank, r, e)) goto fail;
            }
        }
    }
    if (src != SQLITE_DONE) goto dberr;
    size_t pos = 0;
    const void *kp;
    const struct pending *p;
    while ((p = hmap_next(&pm, &pos, &kp, NULL))) {
        const struct pkey *k = kp;
        struct arow r = { .dt = k->dt, .di = k->di, .addr = k->addr, .bytes = p->bytes, .ats = p->ts, .has_ats = 1,
                          .op = p->op };
        if (put_alloc(aw, c->rank, r, e)) goto fail;
    }
    if (timeline_rows_flush(aw, e)) goto fail;
    for (; cur_step < nsteps; cur_step++)
        for (size_t k = 0; k < nsm; k++) sm[k].end[cur_step] = sm[k].last;
    if (nsm) {
        json_t *smj = json_object();
        for (size_t k = 0; k < nsm; k++) {
            json_t *arr = json_array();
            for (size_t i = 0; i < nsteps; i++)
                json_array_append_new(arr, json_pack("{s:I,s:I}", "end", (json_int_t)sm[k].end[i], "peak",
                                                     (json_int_t)sm[k].peak[i]));
            char key[16];
            snprintf(key, sizeof key, "%d", sm[k].dev);
            json_object_set_new(smj, key, arr);
        }
        json_object_set_new(summary, "step_memory", smj);
    }
    for (size_t i = 0; i < pk_all.n; i++) {
        char key[16];
        if (pk_all.p[i].cpu) snprintf(key, sizeof key, "cpu");
        else snprintf(key, sizeof key, "%d", pk_all.p[i].dev);
        json_object_set_new(peaks, key,
                            json_pack("{s:I,s:I,s:I}", "bytes", (json_int_t)pk_all.p[i].bytes, "ts",
                                      (json_int_t)pk_all.p[i].ts, "reserved", (json_int_t)pk_all.p[i].reserved));
    }
    json_object_set(summary, "peak_memory", peaks);
    if (double_free)
        json_object_set_new(summary, "frees_without_allocation", json_integer((json_int_t)double_free));
    goto out;
dberr:
    rc = rundb_db_error(c->db, e, "analysis (memory)");
    goto out;
fail: /* the writer's error, e filled */
    rc = e->code;
out:
    for (size_t k = 0; k < nsm; k++) {
        free(sm[k].end);
        free(sm[k].peak);
    }
    free(sm);
    free(pk_all.p);
    json_decref(peaks);
    hmap_free(&pm, NULL);
    sqlite3_finalize(st);
    timeline_rows_close(aw);
    free(aw);
    return rc;
}

