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

static int cmp_memop(const void *x, const void *y)
{
    const struct memop *p = x, *q = y;
    return (p->mem_id > q->mem_id) - (p->mem_id < q->mem_id);
}

static uint32_t memop_find(const struct rankctx *c, int64_t id)
{
    size_t lo = 0, hi = c->nmo;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->mo[mid].mem_id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nmo && c->mo[lo].mem_id == id ? c->mo[lo].op : 0;
}

static int put_alloc(sqlite3_stmt *ins, int rank, int dt, int di, int64_t addr, int64_t bytes, int64_t ats,
                     int has_ats, int64_t fts, int has_fts, uint32_t op)
{
    sqlite3_bind_int(ins, 1, rank);
    sqlite3_bind_int(ins, 2, dt);
    sqlite3_bind_int(ins, 3, di);
    sqlite3_bind_int64(ins, 4, addr);
    sqlite3_bind_int64(ins, 5, bytes);
    if (has_ats) sqlite3_bind_int64(ins, 6, ats);
    else sqlite3_bind_null(ins, 6);
    if (has_fts) sqlite3_bind_int64(ins, 7, fts);
    else sqlite3_bind_null(ins, 7);
    sqlite3_bind_int64(ins, 8, op);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : -1;
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

int summary_memory_pair(struct rankctx *c, const struct step *steps, size_t nsteps, json_t *summary, struct err *e)
{
    struct stepmem *sm = NULL;
    size_t nsm = 0, cur_step = 0;
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct hmap pm; /* struct pkey -> struct pending */
    hmap_init(&pm, sizeof(struct pending), 1024);
    json_t *peaks = json_object();
    int rc = 0;
    uint64_t double_free = 0;
    if (c->nmo) xqsort(c->mo, c->nmo, sizeof *c->mo, cmp_memop); /* xqsort(NULL, 0) is undefined */
    if (sqlite3_prepare_v2(c->db,
                           "SELECT id, ts, dev_type, dev_id, addr, bytes, total_alloc, total_reserved FROM mem"
                           " WHERE rank = ? ORDER BY ts, id",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db,
                           "INSERT INTO mem_alloc(rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op)"
                           " VALUES(?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (memory)");
        goto out;
    }
    sqlite3_bind_int(st, 1, c->rank);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int dt = sqlite3_column_int(st, 2), di = sqlite3_column_int(st, 3);
        int64_t addr = sqlite3_column_int64(st, 4), bytes = sqlite3_column_int64(st, 5);
        /* NULL totals (the trace did not say) must not read as 0 bytes */
        int64_t total = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
        int64_t reserved = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
        char key[32];
        if (dt == 0) snprintf(key, sizeof key, "cpu");
        else snprintf(key, sizeof key, "%d", di);
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
        if (total >= 0) {
            json_t *p = json_object_get(peaks, key);
            if (!p) {
                p = json_pack("{s:I,s:I,s:I}", "bytes", (json_int_t)-1, "ts", (json_int_t)0, "reserved",
                              (json_int_t)0);
                json_object_set_new(peaks, key, p);
            }
            if (total > json_integer_value(json_object_get(p, "bytes"))) {
                json_object_set_new(p, "bytes", json_integer(total));
                json_object_set_new(p, "ts", json_integer(ts));
            }
            if (reserved > json_integer_value(json_object_get(p, "reserved")))
                json_object_set_new(p, "reserved", json_integer(reserved));
        }
        if (bytes > 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_put(&pm, pkey_hash(&pk), &pk, sizeof pk, NULL);
            if (p->ts || p->bytes) {
                /* allocated twice without a free in between: close the old one unseen */
                if (put_alloc(ins, c->rank, dt, di, addr, p->bytes, p->ts, 1, 0, 0, p->op)) goto dberr;
            }
            p->ts = ts;
            p->bytes = bytes;
            p->op = memop_find(c, id);
        } else if (bytes < 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_get(&pm, pkey_hash(&pk), &pk, sizeof pk);
            if (p) {
                if (put_alloc(ins, c->rank, dt, di, addr, p->bytes, p->ts, 1, ts, 1, p->op)) goto dberr;
                hmap_del(&pm, pkey_hash(&pk), &pk, sizeof pk);
            } else {
                double_free++;
                if (put_alloc(ins, c->rank, dt, di, addr, bytes, 0, 0, ts, 1, 0)) goto dberr;
            }
        }
    }
    if (src != SQLITE_DONE) goto dberr;
    size_t pos = 0;
    const void *kp;
    const struct pending *p;
    while ((p = hmap_next(&pm, &pos, &kp, NULL))) {
        const struct pkey *k = kp;
        if (put_alloc(ins, c->rank, k->dt, k->di, k->addr, p->bytes, p->ts, 1, 0, 0, p->op)) goto dberr;
    }
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
    json_object_set(summary, "peak_memory", peaks);
    if (double_free)
        json_object_set_new(summary, "frees_without_allocation", json_integer((json_int_t)double_free));
    goto out;
dberr:
    rc = rundb_db_error(c->db, e, "analysis (memory)");
out:
    for (size_t k = 0; k < nsm; k++) {
        free(sm[k].end);
        free(sm[k].peak);
    }
    free(sm);
    json_decref(peaks);
    hmap_free(&pm, NULL);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return rc;
}

