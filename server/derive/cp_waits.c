/* cp_waits.c — what a host wait of the critical path waits for (see include/derive/cp_waits.h). */
#include "derive/cp_waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "store/facts.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/slice_read.h"

static int cmp_sync(const void *a, const void *b)
{
    const struct cp_sync *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int load_syncs(struct an_ctx *c, struct cp_waits *wt, struct err *e)
{
    struct scan_slices *cur;
    struct scan_slice sl;
    int rc = scan_slices_open(c->db, c->rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_SYNC), &cur, e);
    if (rc) return rc;
    size_t cap = 0;
    while ((rc = scan_slices_next(cur, &sl, e)) == 1) {
        /* device/event syncs: any stream */
        if (!sl.corr || !strstr(an_name(c, sl.name), "Stream")) continue;
        if (wt->nsyncs == cap) wt->syncs = xrealloc(wt->syncs, (cap = cap ? cap * 2 : 64) * sizeof *wt->syncs);
        wt->syncs[wt->nsyncs++] = (struct cp_sync){ sl.corr, (uint32_t)sl.track };
    }
    scan_slices_close(cur);
    if (rc < 0) return rc;
    if (wt->nsyncs) xqsort(wt->syncs, wt->nsyncs, sizeof *wt->syncs, cmp_sync);
    return 0;
}

static int cmp_coll(const void *a, const void *b)
{
    const struct cp_coll *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Every prefix is looked up: one past the reader's limit would be left out
 * unseen. */
_Static_assert(KCLASS_COMM_OP_PREFIXES <= FACTS_MAX_PATTERNS, "the collectives' prefixes fit one name lookup");

static int load_colls(struct an_ctx *c, struct cp_waits *wt, struct err *e)
{
    char pats[KCLASS_COMM_OP_PREFIXES][16];
    const char *pp[KCLASS_COMM_OP_PREFIXES];
    struct scan_slice *rows = NULL;
    size_t n = 0;
    for (size_t k = 0; k < KCLASS_COMM_OP_PREFIXES; k++) {
        snprintf(pats[k], sizeof pats[k], "%s%%", kclass_comm_op_prefixes[k]);
        pp[k] = pats[k];
    }
    int rc = slice_read_named_spans(c->db, c->rank, pp, KCLASS_COMM_OP_PREFIXES, &rows, &n, e);
    wt->colls = xmalloc((n ? n : 1) * sizeof *wt->colls);
    wt->colls_last = xmalloc((n ? n : 1) * sizeof *wt->colls_last);
    for (size_t i = 0; i < n; i++) /* LIKE ignores case */
        if (rows[i].dur > 0 && kclass_comm_op(an_name(c, rows[i].name)))
            wt->colls[wt->ncolls++] = (struct cp_coll){ rows[i].ts, rows[i].ts + rows[i].dur, (uint32_t)rows[i].track };
    free(rows);
    if (rc < 0 || !wt->ncolls) return rc < 0 ? rc : 0;
    xqsort(wt->colls, wt->ncolls, sizeof *wt->colls, cmp_coll);
    for (size_t k = 0; k < wt->ncolls; k++) {
        int32_t best = k ? wt->colls_last[k - 1] : -1;
        wt->colls_last[k] = best >= 0 && wt->colls[best].end >= wt->colls[k].end ? best : (int32_t)k;
    }
    return 0;
}

int cp_waits_load(struct an_ctx *c, struct cp_waits *wt, struct err *e)
{
    memset(wt, 0, sizeof *wt);
    int rc = load_syncs(c, wt, e);
    if (rc == 0) rc = load_colls(c, wt, e);
    return rc;
}

uint32_t cp_waits_sync_stream(const struct cp_waits *wt, int64_t corr)
{
    if (!corr || !wt->nsyncs) return 0;
    struct cp_sync key = { corr, 0 };
    const struct cp_sync *f = bsearch(&key, wt->syncs, wt->nsyncs, sizeof key, cmp_sync);
    return f ? f->stream : 0;
}

int32_t cp_waits_collective(const struct cp_waits *wt, uint32_t track, int64_t a, int64_t t)
{
    size_t lo = 0, hi = wt->ncolls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wt->colls[mid].ts < t) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    int32_t k = wt->colls_last[lo - 1];
    return wt->colls[k].end > a && wt->colls[k].track != track ? k : -1;
}

void cp_waits_free(struct cp_waits *wt)
{
    free(wt->syncs);
    free(wt->colls);
    free(wt->colls_last);
    memset(wt, 0, sizeof *wt);
}
