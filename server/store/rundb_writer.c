#define LOG_MODULE "rundb"
#include "store/rundb_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/utf8.h"
#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/rundb_drain.h"
#include "store/rundb_schema.h"
#include "store/sorter.h"


/* The batched tables' inserts: the values of one row, and of a batch's
 * RUNDB_BATCH_ROWS rows. */
#define SLICE_INSERT "INSERT INTO slice(track,ts,dur,depth,parent,name,cat,kind,corr,ext,args) VALUES"
#define SLICE_ROW "(?,?,?,?,?,?,?,?,?,?,?)"
#define FLOW_INSERT "INSERT INTO flow(rank,cat,name,fid,ph,bp,track,ts) VALUES"
#define FLOW_ROW "(?,?,?,?,?,?,?,?)"
#define MEM_INSERT "INSERT INTO mem(rank,track,ts,dev_type,dev_id,addr,bytes,total_alloc,total_reserved) VALUES"
#define MEM_ROW "(?,?,?,?,?,?,?,?,?)"
#define ROWS4(r) r "," r "," r "," r
#define ROWS16(r) ROWS4(r) "," ROWS4(r) "," ROWS4(r) "," ROWS4(r)
_Static_assert(RUNDB_BATCH_ROWS == 16, "the batches' statements have ROWS16's 16 rows");

static void bind_flow(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d);
static void bind_mem(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d);
static void bg_push(struct rundb_writer *w);
static void *bg_main(void *arg);
static int bg_failed(struct rundb_writer *w, struct err *e);

/* TODO(i19 merge): strmap/trackmap below become the one hash map of base/. */
static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed)
{
    /* Eight bytes a step (kernel and frame names run to hundreds of bytes,
     * and every name of every event is looked up): multiply and fold, so
     * the low bits the table indexes by depend on every byte. Only lookups
     * use it: ids follow first appearance, whatever the hash. Never 0. */
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ seed ^ (uint64_t)n, x;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        h = (h ^ x) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    /* the last bytes by shifts: a memcpy of a variable size here is a call
     * and a stalled load */
    x = 0;
    for (unsigned k = 0; i + k < n; k++) x |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
    h = (h ^ x) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h ? h : 1;
}

/* Reserves room for one op in the current chunk; returns where its payload
 * goes. May hand the full chunk to the writer thread first. */
char *rundb_writer_emit(struct rundb_writer *w, enum op_type type, size_t len)
{
    size_t need = sizeof(struct op_hdr) + OP_ALIGN(len);
    if (w->cur_len + need > w->cur_cap) {
        bg_push(w);
        if (need > w->cur_cap) {
            /* one op larger than a chunk: a buffer of its own, freed after use */
            free(w->cur_buf);
            w->cur_cap = need;
            w->cur_buf = xmalloc(need);
        }
    }
    struct op_hdr *h = (struct op_hdr *)(w->cur_buf + w->cur_len);
    h->type = type;
    h->len = (uint32_t)len;
    w->cur_len += need;
    return (char *)(h + 1);
}

/* ---------------------------------------------------------------------- */
/* strings                                                                */

static void strmap_grow(struct strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 4096;
    uint64_t *nh = xcalloc(ncap, sizeof *nh);
    uint32_t *ni = xmalloc(ncap * sizeof *ni);
    uint64_t *no = xmalloc(ncap * sizeof *no);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->hash[i]) continue;
        size_t j = m->hash[i] & (ncap - 1);
        while (nh[j]) j = (j + 1) & (ncap - 1);
        nh[j] = m->hash[i];
        ni[j] = m->id[i];
        no[j] = m->off[i];
    }
    free(m->hash);
    free(m->id);
    free(m->off);
    m->hash = nh;
    m->id = ni;
    m->off = no;
    m->cap = ncap;
}

uint32_t rundb_intern(struct rundb_writer *w, const char *s, size_t n)
{
    struct strmap *m = &w->strs;
    char *fixed = NULL;

    /* Key on the repaired text, so the same bad bytes find the same id. */
    if (!utf8_valid(s, n)) {
        fixed = xmalloc(n ? n : 1);
        utf8_copy(s, n, fixed);
        s = fixed;
    }
    uint64_t h = hash_bytes(s, n, 0);

    if ((m->n + 1) * 4 > m->cap * 3) strmap_grow(m);
    size_t j = h & (m->cap - 1);
    while (m->hash[j]) {
        if (m->hash[j] == h) {
            const char *p = m->arena + m->off[j];
            uint32_t len;
            memcpy(&len, p, 4);
            if (len == n && memcmp(p + 4, s, n) == 0) {
                free(fixed);
                return m->id[j];
            }
        }
        j = (j + 1) & (m->cap - 1);
    }
    /* new string: repair UTF-8 before it is stored anywhere */
    if (m->arena_len + n + 4 > m->arena_cap) {
        m->arena_cap = (m->arena_cap + n + 4) * 2;
        m->arena = xrealloc(m->arena, m->arena_cap);
    }
    uint32_t len = (uint32_t)n;
    memcpy(m->arena + m->arena_len, &len, 4);
    char *dst = m->arena + m->arena_len + 4;
    memcpy(dst, s, n);
    free(fixed);
    m->hash[j] = h;
    m->id[j] = ++w->next_str;
    m->off[j] = m->arena_len;
    m->arena_len += n + 4;
    m->n++;

    char *o = rundb_writer_emit(w, OP_STR, 4 + n);
    uint32_t nid = w->next_str;
    memcpy(o, &nid, 4);
    memcpy(o + 4, dst, n);
    return w->next_str;
}

/* ---------------------------------------------------------------------- */
/* tracks                                                                 */

/* "0042" stays as written; the point is that 7 and "7" meet. */
static void trackmap_grow(struct rundb_writer *w)
{
    struct trackmap *m = &w->tmap;
    size_t ncap = m->cap ? m->cap * 2 : 256;
    uint64_t *nh = xcalloc(ncap, sizeof *nh);
    uint32_t *ni = xcalloc(ncap, sizeof *ni);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->idx[i]) continue;
        size_t j = m->hash[i] & (ncap - 1);
        while (ni[j]) j = (j + 1) & (ncap - 1);
        nh[j] = m->hash[i];
        ni[j] = m->idx[i];
    }
    free(m->hash);
    free(m->idx);
    m->hash = nh;
    m->idx = ni;
    m->cap = ncap;
}

uint32_t rundb_track(struct rundb_writer *w, const char *pid, size_t pid_n, const char *tid, size_t tid_n)
{
    struct trackmap *m = &w->tmap;
    char *pfix = NULL, *tfix = NULL;
    uint32_t id = 0;

    /* Key on the repaired text, as rundb_intern does: the stored pid/tid
     * are repaired, so the same bad bytes must find the same track. */
    if (!utf8_valid(pid, pid_n)) {
        pfix = xmalloc(pid_n);
        utf8_copy(pid, pid_n, pfix);
        pid = pfix;
    }
    if (!utf8_valid(tid, tid_n)) {
        tfix = xmalloc(tid_n);
        utf8_copy(tid, tid_n, tfix);
        tid = tfix;
    }
    uint64_t h = hash_bytes(tid, tid_n, hash_bytes(pid, pid_n, (uint64_t)w->rank));
    if ((w->ntracks - w->rank_first_track + 1) * 2 > m->cap) trackmap_grow(w);
    size_t j = h & (m->cap - 1);
    while (m->idx[j]) {
        if (m->hash[j] == h) {
            struct track *t = &w->tracks[m->idx[j] - 1];
            if (t->pid_n == pid_n && memcmp(t->pid, pid, pid_n) == 0 && t->tid_n == tid_n &&
                memcmp(t->tid, tid, tid_n) == 0) {
                id = t->id;
                goto out;
            }
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (w->ntracks == w->tracks_cap) {
        w->tracks_cap = w->tracks_cap ? w->tracks_cap * 2 : 64;
        w->tracks = xrealloc(w->tracks, sizeof *w->tracks * w->tracks_cap);
    }
    struct track *t = &w->tracks[w->ntracks++];
    memset(t, 0, sizeof *t);
    t->id = (uint32_t)w->ntracks; /* 1-based and equal to index + 1 */
    t->rank = w->rank;
    t->kind = TB_TRACK_CPU;
    t->pid = xmemdup0(pid, pid_n);
    t->tid = xmemdup0(tid, tid_n);
    t->pid_n = pid_n;
    t->tid_n = tid_n;
    t->first_slice = -1;
    t->device = -1;
    m->hash[j] = h;
    m->idx[j] = t->id;
    id = t->id;
out:
    free(pfix);
    free(tfix);
    return id;
}


void rundb_track_set_kind(struct rundb_writer *w, uint32_t track, enum tb_track_kind kind)
{
    struct track *t = rundb_writer_track_get(w, track);
    if (t) t->kind = kind;
}

void rundb_track_set_device(struct rundb_writer *w, uint32_t track, int device)
{
    struct track *t = rundb_writer_track_get(w, track);
    if (t && device >= 0) t->device = device;
}

void rundb_track_set_name(struct rundb_writer *w, uint32_t track, const char *name, size_t n)
{
    struct track *t = rundb_writer_track_get(w, track);
    if (!t) return;
    free(t->name);
    t->name = xmemdup0(name, n);
    utf8_copy(t->name, n, t->name);
}

void rundb_track_set_sort(struct rundb_writer *w, uint32_t track, int64_t sort)
{
    struct track *t = rundb_writer_track_get(w, track);
    if (!t) return;
    t->sort = sort;
    t->has_sort = 1;
}

void rundb_process_set_name(struct rundb_writer *w, const char *pid, size_t pid_n, const char *name, size_t n)
{
    for (size_t i = 0; i < w->npnames; i++) {
        if (strlen(w->pnames[i].pid) == pid_n && memcmp(w->pnames[i].pid, pid, pid_n) == 0) {
            free(w->pnames[i].name);
            w->pnames[i].name = xmemdup0(name, n);
            utf8_copy(w->pnames[i].name, n, w->pnames[i].name);
            return;
        }
    }
    w->pnames = xrealloc(w->pnames, sizeof *w->pnames * (w->npnames + 1));
    w->pnames[w->npnames].pid = xmemdup0(pid, pid_n);
    w->pnames[w->npnames].name = xmemdup0(name, n);
    utf8_copy(w->pnames[w->npnames].name, n, w->pnames[w->npnames].name);
    w->npnames++;
}

/* ---------------------------------------------------------------------- */
/* create                                                                 */

static int prep(struct rundb_writer *w, sqlite3_stmt **st, const char *sql, struct err *e)
{
    if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return rundb_db_error(w->db, e, "prepare");
    return 0;
}

int rundb_create(const char *path, uint64_t sort_memory, const char *tmp_dir, struct rundb_writer **out,
                 struct err *e)
{
    struct rundb_writer *w = xcalloc(1, sizeof *w);
    char *msg = NULL;

    w->spool_fd = -1;
    w->sort_memory = sort_memory ? (size_t)sort_memory : (64u << 20);
    w->slices = (struct rundb_batch){ .bind = rundb_drain_bind_row, .rowid = rundb_drain_row_id, .what = "slice insert" };
    w->flows = (struct rundb_batch){ .bind = bind_flow, .what = "flow insert" };
    w->mems = (struct rundb_batch){ .bind = bind_mem, .what = "memory event insert" };
    snprintf(w->tmp_dir, sizeof w->tmp_dir, "%s", tmp_dir ? tmp_dir : "/tmp");
    w->next_slice_id = 1;
    if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                          SQLITE_OPEN_EXCLUSIVE,
                        NULL) != SQLITE_OK) {
        err_set(e, ERR_IO, "cannot create %s: %s", path, w->db ? sqlite3_errmsg(w->db) : "out of memory");
        rundb_abort(w);
        return e->code;
    }
    /* The file is private until ingest commits it by renaming its folder,
     * so nothing is gained by journaling the bulk load. */
    if (sqlite3_exec(w->db,
                     "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-32768; PRAGMA temp_store=FILE;"
                     /* index builds sort with a helper thread: the second core is idle then */
                     "PRAGMA threads=2;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        err_set(e, ERR_DB, "cannot initialise the run database: %s", msg ? msg : "?");
        sqlite3_free(msg);
        rundb_abort(w);
        return e->code;
    }
    if (rundb_schema_create(w->db, e) != 0) {
        rundb_abort(w);
        return e->code;
    }
    if (sqlite3_exec(w->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        err_set(e, ERR_DB, "cannot initialise the run database: %s", msg ? msg : "?");
        sqlite3_free(msg);
        rundb_abort(w);
        return e->code;
    }
    if (prep(w, &w->ins_str, "INSERT INTO str(id, s) VALUES(?,?)", e) ||
        prep(w, &w->slices.one, SLICE_INSERT SLICE_ROW, e) || prep(w, &w->slices.many, SLICE_INSERT ROWS16(SLICE_ROW), e) ||
        prep(w, &w->ins_nameids, "INSERT INTO name_ids(name, first, last, n, ids) VALUES(?,?,?,?,?)", e) ||
        prep(w, &w->flows.one, FLOW_INSERT FLOW_ROW, e) || prep(w, &w->flows.many, FLOW_INSERT ROWS16(FLOW_ROW), e) ||
        prep(w, &w->ins_instant, "INSERT INTO instant(track,ts,name,cat,scope,args) VALUES(?,?,?,?,?,?)", e) ||
        prep(w, &w->ins_counter, "INSERT INTO counter(rank,track,name,ts,value) VALUES(?,?,?,?,?)", e) ||
        prep(w, &w->mems.one, MEM_INSERT MEM_ROW, e) || prep(w, &w->mems.many, MEM_INSERT ROWS16(MEM_ROW), e) ||
        prep(w, &w->ins_track,
             "INSERT INTO track(id,rank,kind,pid,tid,name,pname,device,stream,sort,max_depth,nslices,"
             "first_slice,last_slice) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
             e) ||
        prep(w, &w->ins_rank, "INSERT INTO rank(rank,file,bytes) VALUES(?,?,?)", e) ||
        prep(w, &w->ins_note, "INSERT INTO note(rank,level,reason,count,example) VALUES(?,?,?,?,?)", e)) {
        rundb_abort(w);
        return e->code;
    }
    pthread_mutex_init(&w->bg_mu, NULL);
    pthread_cond_init(&w->bg_get, NULL);
    pthread_cond_init(&w->bg_put, NULL);
    pthread_cond_init(&w->bg_idle, NULL);
    w->cur_buf = xmalloc(BG_CHUNK);
    w->cur_cap = BG_CHUNK;
    if (pthread_create(&w->bg_thread, NULL, bg_main, w) != 0) {
        err_set(e, ERR_INTERNAL, "cannot start the database writer thread");
        rundb_abort(w);
        return e->code;
    }
    w->bg_started = 1;
    *out = w;
    return 0;
}

void rundb_set_slice_sink(struct rundb_writer *w, const struct rundb_slice_sink *sink)
{
    if (sink) w->sink = *sink;
    else memset(&w->sink, 0, sizeof w->sink);
}

void rundb_set_phase_hook(struct rundb_writer *w, void (*hook)(void *ctx, const char *phase), void *ctx)
{
    w->phase_hook = hook;
    w->phase_ctx = ctx;
}


int rundb_begin_rank(struct rundb_writer *w, int rank, const char *file, int64_t bytes, struct err *e)
{
    if (w->in_rank) return err_set(e, ERR_INTERNAL, "rundb_begin_rank while a rank is open");
    if (rundb_writer_barrier(w, e) != 0) return e->code;
    sqlite3_bind_int(w->ins_rank, 1, rank);
    sqlite3_bind_text(w->ins_rank, 2, file, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(w->ins_rank, 3, bytes);
    int rc = sqlite3_step(w->ins_rank);
    sqlite3_reset(w->ins_rank);
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_CONSTRAINT) return err_set(e, ERR_INVALID, "two trace files claim rank %d", rank);
        return rundb_db_error(w->db, e, "rank insert");
    }
    w->rank = rank;
    w->in_rank = 1;
    w->rank_first_track = w->ntracks;
    free(w->tmap.hash);
    free(w->tmap.idx);
    memset(&w->tmap, 0, sizeof w->tmap);
    for (size_t i = 0; i < w->npnames; i++) {
        free(w->pnames[i].pid);
        free(w->pnames[i].name);
    }
    free(w->pnames);
    w->pnames = NULL;
    w->npnames = 0;
    memset(&w->stats, 0, sizeof w->stats);
    w->t0 = INT64_MAX;
    w->t1 = INT64_MIN;
    w->sorter = sorter_new(w->sort_memory, w->tmp_dir);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* rows                                                                   */

int rundb_add_slice(struct rundb_writer *w, const struct tb_slice *s, struct err *e)
{
    size_t need = sizeof(struct sorter_key) + sizeof(struct slice_payload) + s->args_len;
    if (need > UINT32_MAX / 2) return err_set(e, ERR_TOO_LARGE, "an event's args are larger than 2 GiB");
    if (bg_failed(w, e)) return e->code;
    /* ts + dur must stay an int64 everywhere (sort key, nesting, t1) */
    int64_t dur = s->dur < 0 ? 0 : s->dur;
    if (s->ts > 0 && dur > INT64_MAX - s->ts) {
        dur = INT64_MAX - s->ts;
        rundb_note(w, TB_NOTE_REPAIRED, "slice ending past the largest representable time: cut there", NULL);
    }
    char *o = rundb_writer_emit(w, OP_SLICE, need);
    struct sorter_key k = { s->track, s->ts, dur, w->seq++ };
    memcpy(o, &k, sizeof k);
    struct slice_payload p;
    p.name = s->name;
    p.cat = s->cat;
    p.corr = s->corr;
    p.ext = s->ext;
    p.kind = (uint32_t)s->kind;
    p.args_len = (uint32_t)s->args_len;
    memcpy(o + sizeof k, &p, sizeof p);
    if (s->args_len) utf8_copy(s->args, s->args_len, o + sizeof k + sizeof p);
    if (s->ts < w->t0) w->t0 = s->ts;
    if (s->ts + dur > w->t1) w->t1 = s->ts + dur;
    w->stats.slices++;
    if ((unsigned)s->kind < TB_K_COUNT) w->stats.by_kind[s->kind]++;
    return 0;
}


int rundb_add_flow(struct rundb_writer *w, const struct tb_flow *f, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_flow o = { w->rank, f->cat, f->name, f->track, f->ts, f->ph, f->bp, (uint32_t)f->fid_len };
    char *d = rundb_writer_emit(w, OP_FLOW, sizeof o + f->fid_len);
    memcpy(d, &o, sizeof o);
    utf8_copy(f->fid, f->fid_len, d + sizeof o);
    w->stats.flows++;
    return 0;
}

int rundb_add_instant(struct rundb_writer *w, const struct tb_instant *i, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_instant o = { i->track, i->name, i->cat, i->scope ? i->scope : 't', i->ts, (uint32_t)i->args_len };
    char *d = rundb_writer_emit(w, OP_INSTANT, sizeof o + i->args_len);
    memcpy(d, &o, sizeof o);
    if (i->args_len) utf8_copy(i->args, i->args_len, d + sizeof o);
    w->stats.instants++;
    return 0;
}

int rundb_add_counter(struct rundb_writer *w, const struct tb_counter *c, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_counter o = { w->rank, *c };
    memcpy(rundb_writer_emit(w, OP_COUNTER, sizeof o), &o, sizeof o);
    w->stats.counters++;
    return 0;
}

int rundb_add_mem(struct rundb_writer *w, const struct tb_mem *m, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_mem o = { w->rank, *m };
    memcpy(rundb_writer_emit(w, OP_MEM, sizeof o), &o, sizeof o);
    w->stats.mems++;
    return 0;
}

/* --- the writer thread's side ------------------------------------------ */

void rundb_batch_int(struct rundb_batch *b, sqlite3_stmt *st, int p, int64_t v, int null)
{
    if (st == b->many) {
        uint8_t want = null ? 2 : 1;
        if (b->set[p - 1] == want && (null || b->bound[p - 1] == v)) return;
        b->bound[p - 1] = v;
        b->set[p - 1] = want;
    }
    if (null) sqlite3_bind_null(st, p);
    else sqlite3_bind_int64(st, p, v);
}

/* Flow row d at slot k of st (8 columns a row). ph and bp are read from
 * the op in the chunk, which outlives the statement's step. */
static void bind_flow(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d)
{
    struct op_flow o;
    memcpy(&o, d, sizeof o);
    int c = 8 * k;
    rundb_batch_int(b, st, c + 1, o.rank, 0);
    rundb_batch_int(b, st, c + 2, o.cat, 0);
    rundb_batch_int(b, st, c + 3, o.name, 0);
    sqlite3_bind_text(st, c + 4, d + sizeof o, (int)o.fid_len, SQLITE_STATIC);
    sqlite3_bind_text(st, c + 5, d + offsetof(struct op_flow, ph), 1, SQLITE_STATIC);
    if (o.bp) sqlite3_bind_text(st, c + 6, d + offsetof(struct op_flow, bp), 1, SQLITE_STATIC);
    else sqlite3_bind_null(st, c + 6);
    rundb_batch_int(b, st, c + 7, o.track, 0);
    rundb_batch_int(b, st, c + 8, o.ts, 0);
}

/* Memory event d at slot k of st (9 columns a row). */
static void bind_mem(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d)
{
    struct op_mem o;
    memcpy(&o, d, sizeof o);
    int c = 9 * k;
    const int64_t v[9] = { o.rank,  o.m.track, o.m.ts, o.m.dev_type, o.m.dev_id, o.m.addr, o.m.bytes,
                           o.m.total_alloc, o.m.total_reserved };
    for (int i = 0; i < 9; i++) rundb_batch_int(b, st, c + i + 1, v[i], i >= 7 && v[i] < 0);
}

/* The rowid SQLite gave the row just inserted from d is the id the drain
 * gave it (see rundb_batch.rowid). */
static int rowid_check(struct rundb_writer *w, const struct rundb_batch *b, const char *d, struct err *e)
{
    if (!b->rowid) return 0;
    int64_t want = b->rowid(d), got = sqlite3_last_insert_rowid(w->db);
    if (got == want) return 0;
    return err_set(e, ERR_INTERNAL, "%s: row %lld stored as %lld", b->what, (long long)want, (long long)got);
}

/* Holds op d of the current chunk; a full batch goes in as one statement
 * (flows and memory events went one a statement before the slices' batch
 * served them: tiled33's 182 k flows 0.39 -> 0.29 s of the writer's thread,
 * its 120 k memory events 0.25 -> 0.16 s, during the parse, when the writer
 * shares the two cores with the parse and the hash). */
static int batch_add(struct rundb_writer *w, struct rundb_batch *b, const char *d, struct err *e)
{
    b->held[b->n++] = d;
    if (b->n < RUNDB_BATCH_ROWS) return 0;
    for (int k = 0; k < RUNDB_BATCH_ROWS; k++) b->bind(b, b->many, k, b->held[k]);
    b->n = 0;
    if (rundb_writer_step_done(w, b->many, e, b->what) != 0) return e->code;
    return rowid_check(w, b, b->held[RUNDB_BATCH_ROWS - 1], e);
}

/* The rows b holds, one statement each: before their chunk is reused. */
static int batch_flush(struct rundb_writer *w, struct rundb_batch *b, struct err *e)
{
    int n = b->n, rc = 0;
    b->n = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        b->bind(b, b->one, 0, b->held[k]);
        rc = rundb_writer_step_done(w, b->one, e, b->what);
        if (rc == 0) rc = rowid_check(w, b, b->held[k], e);
    }
    return rc;
}

static int apply_op(struct rundb_writer *w, const struct op_hdr *h, const char *d, struct err *e)
{
    switch (h->type) {
    case OP_STR: {
        uint32_t id;
        memcpy(&id, d, 4);
        sqlite3_bind_int64(w->ins_str, 1, id);
        sqlite3_bind_text(w->ins_str, 2, d + 4, (int)(h->len - 4), SQLITE_STATIC);
        return rundb_writer_step_done(w, w->ins_str, e, "string insert");
    }
    case OP_SLICE: {
        struct sorter_key k;
        memcpy(&k, d, sizeof k);
        return sorter_add(w->sorter, &k, d + sizeof k, h->len - (uint32_t)sizeof k, e);
    }
    case OP_FLOW:
        return batch_add(w, &w->flows, d, e);
    case OP_INSTANT: {
        struct op_instant o;
        char sc[2];
        memcpy(&o, d, sizeof o);
        sc[0] = o.scope;
        sc[1] = 0;
        sqlite3_stmt *st = w->ins_instant;
        sqlite3_bind_int64(st, 1, o.track);
        sqlite3_bind_int64(st, 2, o.ts);
        sqlite3_bind_int64(st, 3, o.name);
        sqlite3_bind_int64(st, 4, o.cat);
        sqlite3_bind_text(st, 5, sc, 1, SQLITE_TRANSIENT);
        if (o.args_len) sqlite3_bind_text(st, 6, d + sizeof o, (int)o.args_len, SQLITE_STATIC);
        else sqlite3_bind_null(st, 6);
        return rundb_writer_step_done(w, st, e, "instant insert");
    }
    case OP_COUNTER: {
        struct op_counter o;
        memcpy(&o, d, sizeof o);
        sqlite3_stmt *st = w->ins_counter;
        sqlite3_bind_int(st, 1, o.rank);
        sqlite3_bind_int64(st, 2, o.c.track);
        sqlite3_bind_int64(st, 3, o.c.name);
        sqlite3_bind_int64(st, 4, o.c.ts);
        sqlite3_bind_double(st, 5, o.c.value);
        return rundb_writer_step_done(w, st, e, "counter insert");
    }
    case OP_MEM:
        return batch_add(w, &w->mems, d, e);
    case OP_ROW:
        return batch_add(w, &w->slices, d, e);
    case OP_NAMEIDS: {
        struct op_nameids o;
        memcpy(&o, d, sizeof o);
        sqlite3_stmt *st = w->ins_nameids;
        sqlite3_bind_int64(st, 1, o.name);
        sqlite3_bind_int64(st, 2, o.first);
        sqlite3_bind_int64(st, 3, o.last);
        sqlite3_bind_int64(st, 4, o.n);
        sqlite3_bind_blob(st, 5, d + sizeof o, (int)o.len, SQLITE_STATIC);
        return rundb_writer_step_done(w, st, e, "name_ids insert");
    }
    }
    return err_set(e, ERR_INTERNAL, "unknown writer op %u", h->type);
}

static void *bg_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-writer");
    struct rundb_writer *w = arg;
    pthread_mutex_lock(&w->bg_mu);
    for (;;) {
        while (w->bg_count == 0 && !w->bg_stop) {
            w->bg_busy = 0;
            pthread_cond_broadcast(&w->bg_idle);
            pthread_cond_wait(&w->bg_get, &w->bg_mu);
        }
        if (w->bg_count == 0 && w->bg_stop) break;
        struct bg_chunk c = w->bg_q[w->bg_head];
        w->bg_head = (w->bg_head + 1) % BG_QUEUE;
        w->bg_count--;
        w->bg_busy = 1;
        int failed = w->bg_err.code != 0;
        pthread_cond_signal(&w->bg_put);
        pthread_mutex_unlock(&w->bg_mu);

        struct err e;
        err_clear(&e);
        for (size_t off = 0; !failed && off < c.len;) {
            const struct op_hdr *h = (const struct op_hdr *)(c.buf + off);
            if (apply_op(w, h, (const char *)(h + 1), &e) != 0) failed = 1;
            off += sizeof *h + OP_ALIGN(h->len);
        }
        /* the held rows point into c, reused once it is back in the pool */
        if (!failed && (batch_flush(w, &w->slices, &e) != 0 || batch_flush(w, &w->flows, &e) != 0 ||
                        batch_flush(w, &w->mems, &e) != 0))
            failed = 1;
        w->slices.n = w->flows.n = w->mems.n = 0;

        pthread_mutex_lock(&w->bg_mu);
        if (failed && e.code && !w->bg_err.code) {
            w->bg_err = e;
            w->bg_err_seen = 1;
        }
        if (c.cap == BG_CHUNK && w->bg_nfree < BG_QUEUE + 2) w->bg_free[w->bg_nfree++] = c.buf;
        else free(c.buf);
    }
    w->bg_busy = 0;
    pthread_cond_broadcast(&w->bg_idle);
    pthread_mutex_unlock(&w->bg_mu);
    return NULL;
}

/* Hands the current chunk to the writer (waiting while the queue is full)
 * and starts a fresh one. */
static void bg_push(struct rundb_writer *w)
{
    if (w->cur_len == 0) return;
    if (w->spool_fd >= 0) {
        rundb_spool_put(w);
        return;
    }
    pthread_mutex_lock(&w->bg_mu);
    while (w->bg_count == BG_QUEUE) pthread_cond_wait(&w->bg_put, &w->bg_mu);
    struct bg_chunk c = { w->cur_buf, w->cur_len, w->cur_cap };
    w->bg_q[(w->bg_head + w->bg_count) % BG_QUEUE] = c;
    w->bg_count++;
    pthread_cond_signal(&w->bg_get);
    char *fresh = w->bg_nfree ? w->bg_free[--w->bg_nfree] : NULL;
    pthread_mutex_unlock(&w->bg_mu);
    w->cur_buf = fresh ? fresh : xmalloc(BG_CHUNK);
    w->cur_cap = BG_CHUNK;
    w->cur_len = 0;
}

/* Waits until the writer has applied everything emitted so far. After it
 * returns the caller may use the connection: the writer is idle. */
int rundb_writer_barrier(struct rundb_writer *w, struct err *e)
{
    bg_push(w);
    pthread_mutex_lock(&w->bg_mu);
    while (w->bg_count > 0 || w->bg_busy) pthread_cond_wait(&w->bg_idle, &w->bg_mu);
    int rc = 0;
    if (w->bg_err.code) {
        *e = w->bg_err;
        rc = e->code;
    }
    pthread_mutex_unlock(&w->bg_mu);
    return rc;
}

/* Cheap check of an earlier writer failure, so parsing stops early. */
static int bg_failed(struct rundb_writer *w, struct err *e)
{
    if (!w->bg_err_seen) return 0;
    pthread_mutex_lock(&w->bg_mu);
    *e = w->bg_err;
    pthread_mutex_unlock(&w->bg_mu);
    return 1;
}

void rundb_note(struct rundb_writer *w, enum tb_note_level level, const char *reason, const char *example)
{
    rundb_note_n(w, level, reason, example, 1);
}

void rundb_note_n(struct rundb_writer *w, enum tb_note_level level, const char *reason, const char *example,
                  uint64_t count)
{
    if (level == TB_NOTE_DROPPED) w->stats.dropped += count;
    if (level == TB_NOTE_REPAIRED) w->stats.repaired += count;
    for (size_t i = 0; i < w->nnotes; i++) {
        struct note *n = &w->notes[i];
        if (n->rank == w->rank && n->level == level && strcmp(n->reason, reason) == 0) {
            n->count += count;
            return;
        }
    }
    w->notes = xrealloc(w->notes, sizeof *w->notes * (w->nnotes + 1));
    struct note *n = &w->notes[w->nnotes++];
    n->rank = w->rank;
    n->level = level;
    n->reason = xstrdup(reason);
    n->example = example ? xstrndup(example, strnlen(example, 300)) : NULL;
    if (n->example) utf8_copy(n->example, strlen(n->example), n->example);
    n->count = count;
}
void rundb_count_event(struct rundb_writer *w, int metadata)
{
    w->stats.events++;
    if (metadata) w->stats.metadata++;
}

/* ---------------------------------------------------------------------- */
/* close                                                                  */

static void free_writer(struct rundb_writer *w)
{
    if (w->bg_started) {
        pthread_mutex_lock(&w->bg_mu);
        w->bg_stop = 1;
        pthread_cond_signal(&w->bg_get);
        pthread_mutex_unlock(&w->bg_mu);
        pthread_join(w->bg_thread, NULL);
        /* chunks the writer never took */
        for (int i = 0; i < w->bg_count; i++) free(w->bg_q[(w->bg_head + i) % BG_QUEUE].buf);
        for (int i = 0; i < w->bg_nfree; i++) free(w->bg_free[i]);
        pthread_mutex_destroy(&w->bg_mu);
        pthread_cond_destroy(&w->bg_get);
        pthread_cond_destroy(&w->bg_put);
        pthread_cond_destroy(&w->bg_idle);
    }
    if (w->spool_fd >= 0) {
        close(w->spool_fd);
        pthread_mutex_destroy(&w->bg_mu);
    }
    free(w->cur_buf);
    free(w->corr);
    json_decref(w->rank_header);
    sqlite3_stmt *sts[] = { w->ins_str,    w->slices.one, w->slices.many, w->ins_nameids, w->flows.one,
                            w->flows.many, w->ins_instant, w->ins_counter, w->mems.one,    w->mems.many,
                            w->ins_track,  w->ins_rank,    w->ins_note };
    for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) sqlite3_finalize(sts[i]);
    if (w->db) sqlite3_close(w->db);
    free(w->strs.hash);
    free(w->strs.id);
    free(w->strs.off);
    free(w->strs.arena);
    for (size_t i = 0; i < w->ntracks; i++) {
        free(w->tracks[i].pid);
        free(w->tracks[i].tid);
        free(w->tracks[i].name);
    }
    free(w->tracks);
    free(w->tmap.hash);
    free(w->tmap.idx);
    for (size_t i = 0; i < w->npnames; i++) {
        free(w->pnames[i].pid);
        free(w->pnames[i].name);
    }
    free(w->pnames);
    for (size_t i = 0; i < w->nnotes; i++) {
        free(w->notes[i].reason);
        free(w->notes[i].example);
    }
    free(w->notes);
    sorter_free(w->sorter);
    nameids_build_free(w->names);
    free(w->payload_buf);
    free(w);
}

void rundb_abort(struct rundb_writer *w)
{
    if (w) free_writer(w);
}

/* Runs sql (COMMIT or BEGIN) at the end of the load; a failure reads
 * "cannot finish the run database" with SQLite's message. */
static int finish_exec(struct rundb_writer *w, const char *sql, struct err *e)
{
    return sqlite3_exec(w->db, sql, NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : rundb_db_error(w->db, e, "cannot finish the run database");
}

/* The rows loaded so far committed and the file switched to WAL, so that
 * other connections read them while this one goes on in a new
 * transaction. */
static int commit_rows(struct rundb_writer *w, struct err *e)
{
    char *msg = NULL;
    if (finish_exec(w, "COMMIT", e) != 0) return e->code;
    /* Readers get WAL so a later writer (indexes, analyses) never blocks
     * them. */
    if (sqlite3_exec(w->db, "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL;", NULL, NULL, &msg) != SQLITE_OK) {
        int rc = err_set(e, ERR_DB, "cannot switch the run database to WAL: %s", msg ? msg : "?");
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

int rundb_commit_rows(struct rundb_writer *w, struct err *e)
{
    if (w->in_rank) return err_set(e, ERR_INTERNAL, "rundb_commit_rows with an unfinished rank");
    if (w->rows_committed) return err_set(e, ERR_INTERNAL, "rundb_commit_rows called twice");
    if (rundb_drain_names_flush(w, e) != 0 || rundb_writer_barrier(w, e) != 0 || commit_rows(w, e) != 0 ||
        finish_exec(w, "BEGIN", e) != 0)
        return e->code;
    w->rows_committed = 1;
    return 0;
}

int rundb_close_writer(struct rundb_writer *w, struct err *e)
{
    char *msg = NULL;
    int rc = 0;

    if (w->in_rank) {
        rc = err_set(e, ERR_INTERNAL, "rundb_close_writer with an unfinished rank");
        goto out;
    }
    if (rundb_drain_names_flush(w, e) != 0 || rundb_writer_barrier(w, e) != 0) {
        rc = e->code;
        goto out;
    }
    rundb_writer_phase(w, "index");
    /* The index build's sorter sizes its in-memory runs by the page cache:
     * 32 MiB of them per sorter thread beside the derived stages begun
     * meanwhile (ingest_derive_early_start) took the import's peak RSS
     * from 98 to 131 MB on tiled33 and to 253 MB at 10 M events; 8 MiB:
     * 98 and 222 MB, the index no slower. The bulk load before needed the
     * larger cache. */
    sqlite3_exec(w->db, "PRAGMA cache_size=-8192", NULL, NULL, NULL);
    if (rundb_schema_finish(w->db, !w->corr_over, w->corr, w->ncorr, e) != 0) {
        rc = e->code;
        goto out;
    }
    /* rows committed before: only the indexes' transaction is left */
    if ((rc = w->rows_committed ? finish_exec(w, "COMMIT", e) : commit_rows(w, e)) != 0) goto out;
    /* the mark of a complete file: written last */
    if (sqlite3_exec(w->db, "PRAGMA user_version=1;", NULL, NULL, &msg) != SQLITE_OK) {
        rc = err_set(e, ERR_DB, "cannot finish the run database: %s", msg ? msg : "?");
        sqlite3_free(msg);
    }
out:
    free_writer(w);
    return rc;
}
