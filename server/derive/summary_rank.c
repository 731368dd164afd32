#include "derive/summary_rank.h"

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

const struct name *summary_rank_name(struct names *nm, uint32_t id)
{
    static const struct name none = { 0, 0, "" };
    if (id == 0) return &none;
    int fresh;
    struct name *e = hmap_put(&nm->map, hmap_hash_u64(id), &id, sizeof id, &fresh);
    if (!fresh) return e;
    e->id = id;
    sqlite3_bind_int64(nm->get, 1, id);
    const char *s = sqlite3_step(nm->get) == SQLITE_ROW ? (const char *)sqlite3_column_text(nm->get, 0) : NULL;
    e->s = xstrdup(s ? s : "");
    sqlite3_reset(nm->get);
    uint8_t f = 0;
    if (kclass_tensor_core(e->s)) f |= NF_TC;
    if (kclass_comm_kernel(e->s)) f |= NF_COMM_KERNEL;
    if (kclass_comm_op(e->s)) f |= NF_COMM_OP;
    if (kclass_tc_eligible_op(e->s)) f |= NF_TC_ELIGIBLE;
    if (kclass_dataloader(e->s)) f |= NF_DATALOADER;
    if (kclass_profiler_step(e->s)) f |= NF_STEP;
    if ((f & (NF_STEP | NF_DATALOADER)) || strncmp(e->s, "Optimizer.", 10) == 0 ||
        strcmp(e->s, "DataParallel.forward") == 0 || strcmp(e->s, "DistributedDataParallel.forward") == 0)
        f |= NF_NOT_OP;
    e->flags = f;
    return e;
}

static void free_name(void *v)
{
    free(((struct name *)v)->s);
}

uint8_t summary_rank_flags(struct names *nm, uint32_t id)
{
    size_t k = id % NAMES_FLAG_CACHE;
    if (nm->flag_id[k] != id) {
        nm->flag[k] = summary_rank_name(nm, id)->flags;
        nm->flag_id[k] = id;
    }
    return nm->flag[k];
}

void summary_rank_names_free(struct names *nm)
{
    hmap_free(&nm->map, free_name);
    sqlite3_finalize(nm->get);
}

void summary_rank_corr_add(struct rankctx *c, int64_t corr, uint32_t idx)
{
    if (c->nby_corr == c->cap_by_corr) {
        c->cap_by_corr = c->cap_by_corr ? c->cap_by_corr * 2 : 4096;
        c->by_corr = xrealloc(c->by_corr, c->cap_by_corr * sizeof *c->by_corr);
    }
    c->by_corr[c->nby_corr++] = (struct corrix){ corr, idx };
}

void summary_rank_corr_index(struct rankctx *c)
{
    corrix_sort(c->by_corr, c->nby_corr);
}

size_t summary_rank_corr_first(const struct rankctx *c, int64_t corr)
{
    return corr ? corrix_first(c->by_corr, c->nby_corr, corr) : c->nby_corr;
}

void summary_rank_free_opagg(void *p)
{
    struct opagg *a = p;
    free(a->shape);
    free(a->stack);
}

void summary_rank_free_kagg(void *p)
{
    struct kagg *a = p;
    free(a->limiter);
}

