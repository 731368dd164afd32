#define LOG_MODULE "rundb"
#include "base/utf8.h"
#include "store/rundb.h"

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

#include "base/log.h"
#include "base/xmalloc.h"
#include "store/budget.h"
#include "store/sorter.h"

#define RUNDB_SCHEMA_VERSION 1

/* ====================================================================== */
/* Schema                                                                 */
/* ====================================================================== */

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
    "CREATE TABLE rank(rank INTEGER PRIMARY KEY, file TEXT, bytes INTEGER, format TEXT, base_ns INTEGER,"
    " t0 INTEGER, t1 INTEGER, device TEXT, distributed TEXT, header TEXT, stats TEXT);"
    "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, pid TEXT, tid TEXT, name TEXT,"
    " pname TEXT, device INTEGER, stream INTEGER, sort INTEGER, max_depth INTEGER, nslices INTEGER,"
    " first_slice INTEGER, last_slice INTEGER);"
    "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER, depth INTEGER,"
    " parent INTEGER, name INTEGER, cat INTEGER, kind INTEGER, corr INTEGER, ext INTEGER, args TEXT);"
    "CREATE TABLE flow(id INTEGER PRIMARY KEY, rank INTEGER, cat INTEGER, name INTEGER, fid TEXT, ph TEXT,"
    " bp TEXT, track INTEGER, ts INTEGER);"
    "CREATE TABLE instant(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, name INTEGER, cat INTEGER,"
    " scope TEXT, args TEXT);"
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, rank INTEGER, track INTEGER, name INTEGER, ts INTEGER,"
    " value REAL);"
    "CREATE TABLE mem(id INTEGER PRIMARY KEY, rank INTEGER, track INTEGER, ts INTEGER, dev_type INTEGER,"
    " dev_id INTEGER, addr INTEGER, bytes INTEGER, total_alloc INTEGER, total_reserved INTEGER);"
    "CREATE TABLE note(rank INTEGER, level TEXT, reason TEXT, count INTEGER, example TEXT);";

/* Built after the bulk load: building an index once is far cheaper than
 * maintaining it row by row. */
static const char index_sql[] =
    /* No (track, ts) index on slice: ids already follow (track, ts), and
     * track.first_slice/last_slice bound each track's id range, so a time
     * range is found by binary search on id (rundb_slice_at). */
    "CREATE INDEX slice_corr ON slice(corr) WHERE corr != 0;"
    /* timeline search: name ids first, then each (name, track) in time order
     * from the index alone; and a flow's other end for slice details */
    "CREATE INDEX slice_name ON slice(name, track, ts);"
    "CREATE INDEX flow_fid ON flow(rank, fid);"
    "CREATE INDEX flow_track_ts ON flow(track, ts);"
    "CREATE INDEX mem_rank_ts ON mem(rank, ts);"
    "CREATE INDEX instant_track_ts ON instant(track, ts);"
    "CREATE INDEX counter_rank_name_ts ON counter(rank, name, ts);";

/* ====================================================================== */
/* Writer state                                                           */
/* ====================================================================== */

struct strmap {
    uint64_t *hash;   /* 0 = empty slot */
    uint32_t *id;
    uint64_t *off;    /* offset in arena: [u32 len][bytes] */
    size_t cap, n;
    char *arena;
    size_t arena_len, arena_cap;
};

struct track {
    uint32_t id;
    int rank;
    enum tb_track_kind kind;
    char *pid, *tid, *name;
    size_t pid_n, tid_n;  /* pid/tid may hold NUL bytes: compare by length */
    int64_t sort;
    int has_sort;
    int device;           /* set by rundb_track_set_device; -1: from pid */
    int max_depth;
    uint64_t nslices;
    int64_t first_slice, last_slice;
};

struct trackmap {
    uint64_t *hash;
    uint32_t *idx;    /* index into tracks + 1; 0 = empty */
    size_t cap;
};

struct pname {
    char *pid, *name;
};

struct note {
    int rank;
    enum tb_note_level level;
    char *reason, *example;
    uint64_t count;
};

/* What a slice carries through the sorter besides its key. */
struct slice_payload {
    uint32_t name, cat;
    int64_t corr, ext;
    uint32_t kind;
    uint32_t args_len;
    /* args bytes follow */
};

#define BG_CHUNK ((size_t)1 << 20)
#define BG_QUEUE 8

struct bg_chunk {
    char *buf;
    size_t len, cap;
};

struct rundb_writer {
    sqlite3 *db;
    /* background writer: the parsing thread fills cur_buf with ops and
     * queues it; bg_main applies them to SQLite and the sorter */
    pthread_t bg_thread;
    int bg_started;
    pthread_mutex_t bg_mu;
    pthread_cond_t bg_get, bg_put, bg_idle;
    struct bg_chunk bg_q[BG_QUEUE];
    int bg_head, bg_count, bg_busy, bg_stop;
    char *bg_free[BG_QUEUE + 2];
    int bg_nfree;
    struct err bg_err;        /* first writer error, under bg_mu */
    atomic_int bg_err_seen;   /* set with bg_err, read without the lock */
    char *cur_buf;
    size_t cur_len, cur_cap;
    sqlite3_stmt *ins_str, *ins_slice, *ins_flow, *ins_instant, *ins_counter, *ins_mem, *ins_track, *ins_rank,
        *ins_note;
    struct strmap strs;
    uint32_t next_str;
    struct track *tracks;
    size_t ntracks, tracks_cap;
    size_t rank_first_track;  /* tracks of the current rank start here */
    struct trackmap tmap;
    struct pname *pnames;
    size_t npnames;
    struct note *notes;
    size_t nnotes;
    struct sorter *sorter;
    size_t sort_memory;
    char tmp_dir[1024];
    uint64_t seq;
    int64_t next_slice_id;
    int rank;
    int in_rank;
    struct tb_rank_stats stats;
    int64_t t0, t1;
    json_t *rank_header;      /* the importer's header, until finish_rank */
    const char *rank_format;  /* static */
    int64_t rank_base_ns;
    char *payload_buf;
    size_t payload_cap;
    void (*phase_hook)(void *, const char *);
    void *phase_ctx;
};

static void bg_push(struct rundb_writer *w);
static void *bg_main(void *arg);
static int bg_barrier(struct rundb_writer *w, struct err *e);
static int bg_failed(struct rundb_writer *w, struct err *e);

/* Who a database file belongs to, for messages: "run <id>" for
 * DATA/runs/<id>/run.db, else the path. OUT out: filled, NUL-terminated. */
static void run_label(const char *db_path, char *out, size_t cap)
{
    size_t n = db_path ? strlen(db_path) : 0;
    const char *tail = "/run.db";
    size_t tn = strlen(tail);
    if (n > tn && strcmp(db_path + n - tn, tail) == 0) {
        const char *end = db_path + n - tn, *b = end;
        while (b > db_path && b[-1] != '/') b--;
        snprintf(out, cap, "run %.*s", (int)(end - b), b);
    } else {
        snprintf(out, cap, "%s", db_path && *db_path ? db_path : "the run database");
    }
}

/* ERR_DAMAGED for the run stored at db_path, with what is wrong (fmt) and
 * what to do about it. */
static int damaged(const char *db_path, struct err *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int damaged(const char *db_path, struct err *e, const char *fmt, ...)
{
    char label[96], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    run_label(db_path, label, sizeof label);
    return err_set(e, ERR_DAMAGED, "%s is damaged (%s): delete the run and upload its trace files again", label, why);
}

int rundb_db_error(sqlite3 *db, struct err *e, const char *what)
{
    int rc = sqlite3_errcode(db);
    /* SQLite found pages that are not what it wrote: no query of this file
     * can be trusted, and re-importing is the only cure. */
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
        const char *path = sqlite3_db_filename(db, "main");
        char label[96];
        run_label(path, label, sizeof label);
        if (strncmp(label, "run ", 4) == 0)
            return damaged(path, e, "%s: %s", what, sqlite3_errmsg(db));
        return err_set(e, ERR_DB, "%s: %s (the database file %s is damaged)", what, sqlite3_errmsg(db), label);
    }
    const char *why = rc == SQLITE_FULL       ? " (the disk holding the data folder is full)"
                      : rc == SQLITE_READONLY ? " (the data folder is read-only)"
                      : rc == SQLITE_CANTOPEN ? " (the data folder cannot be written)"
                      : rc == SQLITE_IOERR    ? " (a write failed: the disk may be full, over quota or failing)"
                                              : NULL;
    return err_set(e, why ? ERR_NOSPACE : ERR_DB, "%s: %s%s", what, sqlite3_errmsg(db), why ? why : "");
}

int rundb_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct err *e)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    LOG_WARN("prepare failed: %s: %s", sqlite3_errmsg(db), sql);
    return rundb_db_error(db, e, "run database (prepare)");
}

int rundb_pick_rank(sqlite3 *db, const char *run_id, int have_rank, long long want, int *rank, int64_t *t0,
                    int64_t *t1, json_t *ranks, struct err *e)
{
    sqlite3_stmt *st;
    int rc, found = 0;
    if (sqlite3_prepare_v2(db, "SELECT rank, coalesce(t0, 0), coalesce(t1, 0) FROM rank ORDER BY rank", -1, &st,
                           NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "run database (ranks)");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        if (ranks) json_array_append_new(ranks, json_integer(k));
        if ((!have_rank && !found) || (have_rank && k == want)) {
            found = 1;
            *rank = k;
            *t0 = sqlite3_column_int64(st, 1);
            *t1 = sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rundb_db_error(db, e, "run database (ranks)");
    if (!found && have_rank) return err_set(e, ERR_NOT_FOUND, "run %s has no rank %lld", run_id, want);
    if (!found) return err_set(e, ERR_NOT_FOUND, "run %s has no ranks", run_id);
    return 0;
}

static int db_err(struct rundb_writer *w, struct err *e, const char *what)
{
    return rundb_db_error(w->db, e, what);
}

static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed)
{
    /* FNV-1a, widened; good enough for interning and never 0. */
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* Rows travel to the background writer as ops in 1 MiB chunks: the parsing
 * thread never waits for SQLite, and SQLite never waits for parsing. */
enum op_type { OP_STR = 1, OP_SLICE, OP_FLOW, OP_INSTANT, OP_COUNTER, OP_MEM };

struct op_hdr {
    uint32_t type, len; /* len: payload bytes after the header */
};

struct op_flow {
    int32_t rank;
    uint32_t cat, name, track;
    int64_t ts;
    char ph, bp;
    uint32_t fid_len;
};

struct op_instant {
    uint32_t track, name, cat;
    char scope;
    int64_t ts;
    uint32_t args_len;
};

struct op_counter {
    int32_t rank;
    struct tb_counter c;
};

struct op_mem {
    int32_t rank;
    struct tb_mem m;
};

#define OP_ALIGN(n) (((n) + 7) & ~(size_t)7)

/* Reserves room for one op in the current chunk; returns where its payload
 * goes. May hand the full chunk to the writer thread first. */
static char *emit(struct rundb_writer *w, enum op_type type, size_t len)
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

    char *o = emit(w, OP_STR, 4 + n);
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

static struct track *track_get(struct rundb_writer *w, uint32_t id)
{
    return id >= 1 && id <= w->ntracks ? &w->tracks[id - 1] : NULL;
}

void rundb_track_set_kind(struct rundb_writer *w, uint32_t track, enum tb_track_kind kind)
{
    struct track *t = track_get(w, track);
    if (t) t->kind = kind;
}

void rundb_track_set_device(struct rundb_writer *w, uint32_t track, int device)
{
    struct track *t = track_get(w, track);
    if (t && device >= 0) t->device = device;
}

void rundb_track_set_name(struct rundb_writer *w, uint32_t track, const char *name, size_t n)
{
    struct track *t = track_get(w, track);
    if (!t) return;
    free(t->name);
    t->name = xmemdup0(name, n);
    utf8_copy(t->name, n, t->name);
}

void rundb_track_set_sort(struct rundb_writer *w, uint32_t track, int64_t sort)
{
    struct track *t = track_get(w, track);
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
        return db_err(w, e, "prepare");
    return 0;
}

int rundb_create(const char *path, uint64_t sort_memory, const char *tmp_dir, struct rundb_writer **out,
                 struct err *e)
{
    struct rundb_writer *w = xcalloc(1, sizeof *w);
    char *msg = NULL;

    w->sort_memory = sort_memory ? (size_t)sort_memory : (64u << 20);
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
                     NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        err_set(e, ERR_DB, "cannot initialise the run database: %s", msg ? msg : "?");
        sqlite3_free(msg);
        rundb_abort(w);
        return e->code;
    }
    if (prep(w, &w->ins_str, "INSERT INTO str(id, s) VALUES(?,?)", e) ||
        prep(w, &w->ins_slice,
             "INSERT INTO slice(id,track,ts,dur,depth,parent,name,cat,kind,corr,ext,args)"
             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
             e) ||
        prep(w, &w->ins_flow, "INSERT INTO flow(rank,cat,name,fid,ph,bp,track,ts) VALUES(?,?,?,?,?,?,?,?)", e) ||
        prep(w, &w->ins_instant, "INSERT INTO instant(track,ts,name,cat,scope,args) VALUES(?,?,?,?,?,?)", e) ||
        prep(w, &w->ins_counter, "INSERT INTO counter(rank,track,name,ts,value) VALUES(?,?,?,?,?)", e) ||
        prep(w, &w->ins_mem,
             "INSERT INTO mem(rank,track,ts,dev_type,dev_id,addr,bytes,total_alloc,total_reserved)"
             " VALUES(?,?,?,?,?,?,?,?,?)",
             e) ||
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

void rundb_set_phase_hook(struct rundb_writer *w, void (*hook)(void *ctx, const char *phase), void *ctx)
{
    w->phase_hook = hook;
    w->phase_ctx = ctx;
}

static void phase(struct rundb_writer *w, const char *name)
{
    if (w->phase_hook) w->phase_hook(w->phase_ctx, name);
}

int rundb_begin_rank(struct rundb_writer *w, int rank, const char *file, int64_t bytes, struct err *e)
{
    if (w->in_rank) return err_set(e, ERR_INTERNAL, "rundb_begin_rank while a rank is open");
    if (bg_barrier(w, e) != 0) return e->code;
    sqlite3_bind_int(w->ins_rank, 1, rank);
    sqlite3_bind_text(w->ins_rank, 2, file, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(w->ins_rank, 3, bytes);
    int rc = sqlite3_step(w->ins_rank);
    sqlite3_reset(w->ins_rank);
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_CONSTRAINT) return err_set(e, ERR_INVALID, "two trace files claim rank %d", rank);
        return db_err(w, e, "rank insert");
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
    char *o = emit(w, OP_SLICE, need);
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

static int step_done(struct rundb_writer *w, sqlite3_stmt *st, struct err *e, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : db_err(w, e, what);
}

int rundb_add_flow(struct rundb_writer *w, const struct tb_flow *f, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_flow o = { w->rank, f->cat, f->name, f->track, f->ts, f->ph, f->bp, (uint32_t)f->fid_len };
    char *d = emit(w, OP_FLOW, sizeof o + f->fid_len);
    memcpy(d, &o, sizeof o);
    utf8_copy(f->fid, f->fid_len, d + sizeof o);
    w->stats.flows++;
    return 0;
}

int rundb_add_instant(struct rundb_writer *w, const struct tb_instant *i, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_instant o = { i->track, i->name, i->cat, i->scope ? i->scope : 't', i->ts, (uint32_t)i->args_len };
    char *d = emit(w, OP_INSTANT, sizeof o + i->args_len);
    memcpy(d, &o, sizeof o);
    if (i->args_len) utf8_copy(i->args, i->args_len, d + sizeof o);
    w->stats.instants++;
    return 0;
}

int rundb_add_counter(struct rundb_writer *w, const struct tb_counter *c, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_counter o = { w->rank, *c };
    memcpy(emit(w, OP_COUNTER, sizeof o), &o, sizeof o);
    w->stats.counters++;
    return 0;
}

int rundb_add_mem(struct rundb_writer *w, const struct tb_mem *m, struct err *e)
{
    if (bg_failed(w, e)) return e->code;
    struct op_mem o = { w->rank, *m };
    memcpy(emit(w, OP_MEM, sizeof o), &o, sizeof o);
    w->stats.mems++;
    return 0;
}

/* --- the writer thread's side ------------------------------------------ */

static int apply_op(struct rundb_writer *w, const struct op_hdr *h, const char *d, struct err *e)
{
    switch (h->type) {
    case OP_STR: {
        uint32_t id;
        memcpy(&id, d, 4);
        sqlite3_bind_int64(w->ins_str, 1, id);
        sqlite3_bind_text(w->ins_str, 2, d + 4, (int)(h->len - 4), SQLITE_STATIC);
        return step_done(w, w->ins_str, e, "string insert");
    }
    case OP_SLICE: {
        struct sorter_key k;
        memcpy(&k, d, sizeof k);
        return sorter_add(w->sorter, &k, d + sizeof k, h->len - (uint32_t)sizeof k, e);
    }
    case OP_FLOW: {
        struct op_flow o;
        char ph[2], bp[2];
        memcpy(&o, d, sizeof o);
        ph[0] = o.ph;
        ph[1] = 0;
        bp[0] = o.bp;
        bp[1] = 0;
        sqlite3_stmt *st = w->ins_flow;
        sqlite3_bind_int(st, 1, o.rank);
        sqlite3_bind_int64(st, 2, o.cat);
        sqlite3_bind_int64(st, 3, o.name);
        sqlite3_bind_text(st, 4, d + sizeof o, (int)o.fid_len, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, ph, 1, SQLITE_TRANSIENT);
        if (o.bp) sqlite3_bind_text(st, 6, bp, 1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(st, 6);
        sqlite3_bind_int64(st, 7, o.track);
        sqlite3_bind_int64(st, 8, o.ts);
        return step_done(w, st, e, "flow insert");
    }
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
        return step_done(w, st, e, "instant insert");
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
        return step_done(w, st, e, "counter insert");
    }
    case OP_MEM: {
        struct op_mem o;
        memcpy(&o, d, sizeof o);
        sqlite3_stmt *st = w->ins_mem;
        sqlite3_bind_int(st, 1, o.rank);
        sqlite3_bind_int64(st, 2, o.m.track);
        sqlite3_bind_int64(st, 3, o.m.ts);
        sqlite3_bind_int(st, 4, o.m.dev_type);
        sqlite3_bind_int(st, 5, o.m.dev_id);
        sqlite3_bind_int64(st, 6, o.m.addr);
        sqlite3_bind_int64(st, 7, o.m.bytes);
        if (o.m.total_alloc >= 0) sqlite3_bind_int64(st, 8, o.m.total_alloc);
        else sqlite3_bind_null(st, 8);
        if (o.m.total_reserved >= 0) sqlite3_bind_int64(st, 9, o.m.total_reserved);
        else sqlite3_bind_null(st, 9);
        return step_done(w, st, e, "memory event insert");
    }
    }
    return err_set(e, ERR_INTERNAL, "unknown writer op %u", h->type);
}

static void *bg_main(void *arg)
{
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
static int bg_barrier(struct rundb_writer *w, struct err *e)
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
    if (level == TB_NOTE_DROPPED) w->stats.dropped++;
    if (level == TB_NOTE_REPAIRED) w->stats.repaired++;
    for (size_t i = 0; i < w->nnotes; i++) {
        struct note *n = &w->notes[i];
        if (n->rank == w->rank && n->level == level && strcmp(n->reason, reason) == 0) {
            n->count++;
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
    n->count = 1;
}

/* ---------------------------------------------------------------------- */
/* rank header                                                            */

/* The device a rank ran on: deviceProperties lists every GPU of the node,
 * so pick the entry whose id matches the busiest GPU track's pid. */
static json_t *pick_device(struct rundb_writer *w, json_t *header)
{
    json_t *props = json_object_get(header, "deviceProperties");
    if (!json_is_array(props) || json_array_size(props) == 0) {
        /* 2021 tb_plugin test input spells it computeProperties */
        props = json_object_get(header, "computeProperties");
        if (!json_is_array(props) || json_array_size(props) == 0) return NULL;
    }
    long best_dev = -1;
    uint64_t best_n = 0;
    for (size_t i = w->rank_first_track; i < w->ntracks; i++) {
        struct track *t = &w->tracks[i];
        char *end;
        long dev;
        if (t->kind != TB_TRACK_GPU) continue;
        dev = strtol(t->pid, &end, 10);
        if (*end || end == t->pid) continue;
        if (t->nslices > best_n || best_dev < 0) {
            best_n = t->nslices;
            best_dev = dev;
        }
    }
    size_t i;
    json_t *d;
    json_array_foreach(props, i, d) {
        json_t *id = json_object_get(d, "id");
        if (best_dev >= 0 && json_is_integer(id) && json_integer_value(id) == best_dev) return d;
    }
    return best_dev >= 0 ? NULL : json_array_get(props, 0);
}

int rundb_set_rank_header(struct rundb_writer *w, json_t *header, const char *format, int64_t base_ns,
                          struct err *e)
{
    (void)e;
    /* kept until rundb_finish_rank: the connection belongs to the writer
     * thread while the rank is being parsed */
    json_decref(w->rank_header);
    w->rank_header = header ? json_incref(header) : NULL;
    w->rank_format = format;
    w->rank_base_ns = base_ns;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* finishing a rank: drain the sorter into clustered slice rows           */

struct open_slice {
    int64_t end, id;
};

static int drain_slices(struct rundb_writer *w, struct err *e)
{
    struct open_slice *stack = NULL;
    size_t sp = 0, scap = 0;
    uint32_t cur_track = 0;
    struct sorter_key k;
    const void *pl;
    uint32_t n;
    int rc;
    uint64_t misnested = 0;

    phase(w, "sort");
    if (sorter_finish(w->sorter, e) != 0) return e->code;
    phase(w, "write");
    while ((rc = sorter_next(w->sorter, &k, &pl, &n, e)) == 1) {
        const struct slice_payload *p = pl;
        struct track *t = track_get(w, k.track);
        int64_t id = w->next_slice_id++;

        if (k.track != cur_track) {
            cur_track = k.track;
            sp = 0;
        }
        while (sp && stack[sp - 1].end <= k.ts) sp--;
        if (sp && k.ts + k.dur > stack[sp - 1].end) misnested++;
        if (sp == scap) {
            scap = scap ? scap * 2 : 64;
            stack = xrealloc(stack, sizeof *stack * scap);
        }
        sqlite3_stmt *st = w->ins_slice;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, k.track);
        sqlite3_bind_int64(st, 3, k.ts);
        sqlite3_bind_int64(st, 4, k.dur);
        sqlite3_bind_int(st, 5, (int)sp);
        if (sp) sqlite3_bind_int64(st, 6, stack[sp - 1].id);
        else sqlite3_bind_null(st, 6);
        sqlite3_bind_int64(st, 7, p->name);
        if (p->cat) sqlite3_bind_int64(st, 8, p->cat);
        else sqlite3_bind_null(st, 8);
        sqlite3_bind_int(st, 9, (int)p->kind);
        sqlite3_bind_int64(st, 10, p->corr);
        sqlite3_bind_int64(st, 11, p->ext);
        if (p->args_len) sqlite3_bind_text(st, 12, (const char *)(p + 1), (int)p->args_len, SQLITE_STATIC);
        else sqlite3_bind_null(st, 12);
        if (step_done(w, st, e, "slice insert") != 0) {
            free(stack);
            return e->code;
        }
        stack[sp].end = k.ts + k.dur;
        stack[sp].id = id;
        sp++;
        if (t) {
            if ((int)sp - 1 > t->max_depth) t->max_depth = (int)sp - 1;
            t->nslices++;
            if (t->first_slice < 0) t->first_slice = id;
            t->last_slice = id;
        }
    }
    free(stack);
    if (rc < 0) return rc;
    if (misnested) {
        char ex[96];
        snprintf(ex, sizeof ex, "%llu slices", (unsigned long long)misnested);
        rundb_note(w, TB_NOTE_INFO, "slices that end after their enclosing slice (drawn one level deeper)", ex);
    }
    sorter_free(w->sorter);
    w->sorter = NULL;
    return 0;
}

static int write_tracks(struct rundb_writer *w, struct err *e)
{
    for (size_t i = w->rank_first_track; i < w->ntracks; i++) {
        struct track *t = &w->tracks[i];
        sqlite3_stmt *st = w->ins_track;
        const char *pname = NULL;
        char *end;
        long dev, stream;

        for (size_t j = 0; j < w->npnames; j++)
            if (strcmp(w->pnames[j].pid, t->pid) == 0) pname = w->pnames[j].name;
        sqlite3_bind_int64(st, 1, t->id);
        sqlite3_bind_int(st, 2, t->rank);
        sqlite3_bind_int(st, 3, (int)t->kind);
        sqlite3_bind_text(st, 4, t->pid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, t->tid, -1, SQLITE_STATIC);
        if (t->name) sqlite3_bind_text(st, 6, t->name, -1, SQLITE_STATIC);
        else sqlite3_bind_null(st, 6);
        if (pname) sqlite3_bind_text(st, 7, pname, -1, SQLITE_STATIC);
        else sqlite3_bind_null(st, 7);
        dev = strtol(t->pid, &end, 10);
        if (t->kind == TB_TRACK_GPU && t->device >= 0) sqlite3_bind_int64(st, 8, t->device);
        else if (t->kind == TB_TRACK_GPU && *end == '\0' && end != t->pid) sqlite3_bind_int64(st, 8, dev);
        else sqlite3_bind_null(st, 8);
        /* GPU tids are numbers or "stream 7" */
        const char *sdig = t->tid;
        if (strncmp(sdig, "stream ", 7) == 0) sdig += 7;
        stream = strtol(sdig, &end, 10);
        if (t->kind == TB_TRACK_GPU && end != sdig) sqlite3_bind_int64(st, 9, stream);
        else sqlite3_bind_null(st, 9);
        if (t->has_sort) sqlite3_bind_int64(st, 10, t->sort);
        else sqlite3_bind_null(st, 10);
        sqlite3_bind_int(st, 11, t->max_depth);
        sqlite3_bind_int64(st, 12, (int64_t)t->nslices);
        if (t->first_slice >= 0) {
            sqlite3_bind_int64(st, 13, t->first_slice);
            sqlite3_bind_int64(st, 14, t->last_slice);
        } else {
            sqlite3_bind_null(st, 13);
            sqlite3_bind_null(st, 14);
        }
        if (step_done(w, st, e, "track insert") != 0) return e->code;
    }
    return 0;
}

static int write_notes(struct rundb_writer *w, struct err *e)
{
    static const char *levels[] = { "info", "repaired", "dropped" };
    for (size_t i = 0; i < w->nnotes; i++) {
        struct note *n = &w->notes[i];
        if (n->rank != w->rank) continue;
        sqlite3_bind_int(w->ins_note, 1, n->rank);
        sqlite3_bind_text(w->ins_note, 2, levels[n->level], -1, SQLITE_STATIC);
        sqlite3_bind_text(w->ins_note, 3, n->reason, -1, SQLITE_STATIC);
        sqlite3_bind_int64(w->ins_note, 4, (int64_t)n->count);
        if (n->example) sqlite3_bind_text(w->ins_note, 5, n->example, -1, SQLITE_STATIC);
        else sqlite3_bind_null(w->ins_note, 5);
        if (step_done(w, w->ins_note, e, "note insert") != 0) return e->code;
    }
    return 0;
}

static json_t *stats_json(const struct tb_rank_stats *s)
{
    json_t *by = json_object();
    for (int k = 0; k < TB_K_COUNT; k++)
        if (s->by_kind[k]) json_object_set_new(by, tb_kind_name((enum tb_kind)k), json_integer((json_int_t)s->by_kind[k]));
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "events", (json_int_t)s->events, "slices",
                     (json_int_t)s->slices, "flows", (json_int_t)s->flows, "instants", (json_int_t)s->instants,
                     "counters", (json_int_t)s->counters, "mems", (json_int_t)s->mems, "metadata",
                     (json_int_t)s->metadata, "dropped", (json_int_t)s->dropped, "repaired",
                     (json_int_t)s->repaired, "by_kind", by);
}

int rundb_finish_rank(struct rundb_writer *w, struct tb_rank_stats *stats, struct err *e)
{
    sqlite3_stmt *st = NULL;

    if (!w->in_rank) return err_set(e, ERR_INTERNAL, "rundb_finish_rank without a rank");
    if (bg_barrier(w, e) != 0) return e->code;
    if (drain_slices(w, e) != 0 || write_tracks(w, e) != 0 || write_notes(w, e) != 0) return e->code;

    json_t *header = w->rank_header;
    json_t *dist = header ? json_object_get(header, "distributedInfo") : NULL;
    json_t *dev = header ? pick_device(w, header) : NULL;
    char *htext = header ? json_dumps(header, JSON_COMPACT) : NULL;
    char *disttext = json_is_object(dist) ? json_dumps(dist, JSON_COMPACT) : NULL;
    char *dtext = dev ? json_dumps(dev, JSON_COMPACT) : NULL;
    json_t *sj = stats_json(&w->stats);
    char *stext = json_dumps(sj, JSON_COMPACT);
    json_decref(sj);
    if (sqlite3_prepare_v2(w->db,
                           "UPDATE rank SET format=?, base_ns=?, device=?, distributed=?, header=?, stats=?,"
                           " t0=?, t1=? WHERE rank=?",
                           -1, &st, NULL) != SQLITE_OK) {
        free(htext);
        free(disttext);
        free(dtext);
        free(stext);
        return db_err(w, e, "rank update");
    }
    sqlite3_bind_text(st, 1, w->rank_format ? w->rank_format : "?", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, w->rank_base_ns);
    if (dtext) sqlite3_bind_text(st, 3, dtext, -1, free);
    if (disttext) sqlite3_bind_text(st, 4, disttext, -1, free);
    if (htext) sqlite3_bind_text(st, 5, htext, -1, free);
    sqlite3_bind_text(st, 6, stext, -1, free);
    if (w->t0 <= w->t1) {
        sqlite3_bind_int64(st, 7, w->t0);
        sqlite3_bind_int64(st, 8, w->t1);
    }
    sqlite3_bind_int(st, 9, w->rank);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_err(w, e, "rank update");
    json_decref(w->rank_header);
    w->rank_header = NULL;
    if (stats) *stats = w->stats;
    w->in_rank = 0;
    return 0;
}

/* Bumps the events counter; the importer calls it once per event read. */
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
    free(w->cur_buf);
    json_decref(w->rank_header);
    sqlite3_stmt *sts[] = { w->ins_str,     w->ins_slice, w->ins_flow,  w->ins_instant, w->ins_counter,
                            w->ins_mem,     w->ins_track, w->ins_rank,  w->ins_note };
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
    free(w->payload_buf);
    free(w);
}

void rundb_abort(struct rundb_writer *w)
{
    if (w) free_writer(w);
}

int rundb_close_writer(struct rundb_writer *w, struct err *e)
{
    char *msg = NULL;
    char ver[32];
    int rc = 0;

    if (w->in_rank) {
        rc = err_set(e, ERR_INTERNAL, "rundb_close_writer with an unfinished rank");
        goto out;
    }
    if (bg_barrier(w, e) != 0) {
        rc = e->code;
        goto out;
    }
    phase(w, "index");
    snprintf(ver, sizeof ver, "%d", RUNDB_SCHEMA_VERSION);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w->db, "INSERT INTO meta(key, value) VALUES('schema_version', ?)", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, ver, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    if (sqlite3_exec(w->db, index_sql, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
        sqlite3_free(msg);
        rc = rundb_db_error(w->db, e, "cannot finish the run database");
        goto out;
    }
    /* Readers get WAL so a later writer (analyses) never blocks them. */
    if (sqlite3_exec(w->db, "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL; PRAGMA user_version=1;", NULL,
                     NULL, &msg) != SQLITE_OK) {
        rc = err_set(e, ERR_DB, "cannot switch the run database to WAL: %s", msg ? msg : "?");
        sqlite3_free(msg);
    }
out:
    free_writer(w);
    return rc;
}

/* ====================================================================== */
/* Readers                                                                */
/* ====================================================================== */

static json_t *col_json(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    json_t *j = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
    return j ? j : json_null();
}

/* Tables with a rank column before the analyses run; the SQL is fixed per
 * table (two passes through negative ranks so no row ever collides). */
static const char *const renumber_sql[][2] = {
    { "UPDATE rank SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE rank SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE track SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE track SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE flow SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE flow SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE counter SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE counter SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE mem SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE mem SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE note SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE note SET rank = -rank - 1 WHERE rank < 0" },
};

int rundb_renumber_ranks(sqlite3 *db, const int *from, const int *to, int n, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, have = 0;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "ranks");
    /* every rank of the run moves somewhere: a partial map would collide */
    if (sqlite3_prepare_v2(db, "SELECT rank FROM rank", -1, &st, NULL) != SQLITE_OK)
        rc = err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        int r = sqlite3_column_int(st, 0), k = 0;
        while (k < n && from[k] != r) k++;
        if (k == n) rc = err_set(e, ERR_INVALID, "rank %d of the run is not given a new number", r);
        have++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && have != n) rc = err_set(e, ERR_INVALID, "the run has %d ranks, %d were given", have, n);
    for (size_t t = 0; t < sizeof renumber_sql / sizeof renumber_sql[0] && rc == 0; t++) {
        for (int i = 0; i < n && rc == 0; i++) {
            if (sqlite3_prepare_v2(db, renumber_sql[t][0], -1, &st, NULL) != SQLITE_OK) {
                rc = err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
                break;
            }
            sqlite3_bind_int(st, 1, from[i]);
            sqlite3_bind_int(st, 2, to[i]);
            if (sqlite3_step(st) != SQLITE_DONE) rc = rundb_db_error(db, e, "ranks");
            sqlite3_finalize(st);
            st = NULL;
        }
        if (rc == 0 && sqlite3_exec(db, renumber_sql[t][1], NULL, NULL, NULL) != SQLITE_OK)
            rc = rundb_db_error(db, e, "ranks");
    }
    if (sqlite3_exec(db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
        rc = rundb_db_error(db, e, "ranks");
    return rc;
}

int rundb_copy(const char *src_path, const char *dst_path, struct err *e)
{
    sqlite3 *src = NULL, *dst = NULL;
    int rc = rundb_open_ro(src_path, &src, e);
    if (rc) return rc;
    if (sqlite3_open_v2(dst_path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        rc = dst ? rundb_db_error(dst, e, "cannot create the run database copy")
                 : err_set(e, ERR_INTERNAL, "out of memory");
        goto out;
    }
    /* the copy is private until it is swapped in: no journal needed */
    sqlite3_exec(dst, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;", NULL, NULL, NULL);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        rc = rundb_db_error(dst, e, "cannot copy the run database");
        goto out;
    }
    int step, busy = 0;
    /* nobody writes a committed run, so busy is brief (a reader's checkpoint) */
    while ((step = sqlite3_backup_step(b, 4096)) == SQLITE_OK ||
           ((step == SQLITE_BUSY || step == SQLITE_LOCKED) && ++busy < 1000))
        if (step != SQLITE_OK) sqlite3_sleep(5);
    /* finish() leaves the step's error on dst, where rundb_db_error reads it */
    if (sqlite3_backup_finish(b) != SQLITE_OK || step != SQLITE_DONE)
        rc = rundb_db_error(dst, e, "cannot copy the run database");
out:
    sqlite3_close(src);
    if (dst && sqlite3_close(dst) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database copy");
    return rc;
}

int rundb_ranks_from_headers(sqlite3 *db, int *map, int n, int *changed, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, seen = 0;
    *changed = 0;
    for (int i = 0; i < n; i++) map[i] = i;
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, json_extract(distributed, '$.rank') FROM rank"
                           " WHERE json_valid(distributed) ORDER BY rank",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
    int *said = xcalloc((size_t)(n ? n : 1), sizeof *said);
    for (int i = 0; i < n; i++) said[i] = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int old = sqlite3_column_int(st, 0);
        if (old < 0 || old >= n || sqlite3_column_type(st, 1) != SQLITE_INTEGER) continue;
        sqlite3_int64 r = sqlite3_column_int64(st, 1);
        if (r < 0 || r > 1000000) continue;
        said[old] = (int)r;
        seen++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (seen != n) goto out; /* some file does not say: keep names/order */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (said[i] == said[j]) goto out; /* two files claim one rank */
    for (int i = 0; i < n; i++)
        if (said[i] != i) *changed = 1;
    if (!*changed) goto out;
    int *from = xcalloc((size_t)n, sizeof *from);
    for (int i = 0; i < n; i++) from[i] = i;
    rc = rundb_renumber_ranks(db, from, said, n, e);
    free(from);
    if (rc == 0)
        for (int i = 0; i < n; i++) map[i] = said[i];
    else *changed = 0;
out:
    sqlite3_finalize(st);
    free(said);
    return rc;
}

/* ====================================================================== */
/* Read-only opening                                                      */
/* ====================================================================== */

/* Errors that mean "this folder cannot be written" rather than "this file
 * is bad": a WAL reader must create or grow the -shm (and maybe -wal)
 * beside the database, which a read-only folder or a full disk refuses. */
static int cannot_write(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY || rc == SQLITE_FULL ||
           rc == SQLITE_PERM;
}

/* "file:<path percent-encoded>?immutable=1" (owned by caller). */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = xmalloc(3 * n + 32), *o = u;
    o += sprintf(o, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
            *o++ = (char)*p;
        else o += sprintf(o, "%%%02X", *p);
    }
    strcpy(o, "?immutable=1");
    return u;
}

/* Opens path read-only and runs probe (first row only) to make SQLite read
 * the file now: opening is lazy, and the -shm is made at the first read.
 * Returns SQLITE_OK or the SQLite error code; *db is open either way
 * (NULL only when out of memory). */
static int open_probe(const char *name, int flags, const char *probe, sqlite3 **db)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(name, db, flags | SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return *db ? sqlite3_extended_errcode(*db) : SQLITE_NOMEM;
    sqlite3_busy_timeout(*db, 5000);
    if (sqlite3_prepare_v2(*db, probe, -1, &st, NULL) != SQLITE_OK) return sqlite3_extended_errcode(*db);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : sqlite3_extended_errcode(*db);
    sqlite3_finalize(st);
    return rc;
}

int rundb_open_snapshot(const char *path, const char *probe, sqlite3 **out, int *immutable, struct err *e)
{
    char *shm = xasprintf("%s-shm", path);
    struct stat sb;
    int had_shm = stat(shm, &sb) == 0;
    sqlite3 *db = NULL;
    int rc = open_probe(path, 0, probe, &db);

    *out = NULL;
    if (immutable) *immutable = 0;
    if (rc != SQLITE_OK && cannot_write(rc)) {
        LOG_DEBUG("%s: %s; reading it as immutable", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        db = NULL;
        /* A failed first read on a full disk leaves the -shm SQLite had just
         * made, 3 bytes, never mapped. It would be harmless (the next writer
         * re-initialises it) but looks like damage: remove ours, never one
         * that was there before or that someone has since sized. */
        if (!had_shm && stat(shm, &sb) == 0 && sb.st_size < 32768) unlink(shm);
        /* Nobody can write this file now (a writer needs the -shm too), so
         * reading it without locks or -shm is safe. Rows still in a -wal
         * (left by a crash) are not seen: logged. */
        char *wal = xasprintf("%s-wal", path);
        if (stat(wal, &sb) == 0 && sb.st_size > 0)
            LOG_WARN("%s: its -wal cannot be read without a -shm here; recent changes in it are not shown", path);
        free(wal);
        char *uri = immutable_uri(path);
        rc = open_probe(uri, SQLITE_OPEN_URI, probe, &db);
        free(uri);
        if (rc == SQLITE_OK && immutable) *immutable = 1;
    }
    free(shm);
    if (rc != SQLITE_OK) {
        if (!db) rc = err_set(e, ERR_INTERNAL, "cannot open %s: out of memory", path);
        else if ((rc & 0xff) == SQLITE_CANTOPEN) rc = err_set(e, ERR_NOT_FOUND, "cannot open %s: %s", path, sqlite3_errmsg(db));
        else rc = rundb_db_error(db, e, "cannot read the database");
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The checks on a run.db's bytes that need no SQLite: present, not empty,
 * an SQLite header that is ours (the fixed payload fractions, a valid page
 * size) and not shorter than the header says. ERR_DAMAGED, or ERR_IO when
 * the file cannot be read at all. */
static int check_file(const char *path, struct err *e)
{
    unsigned char h[100];
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int en = errno;
        /* missing: a stored run's callers call that damage (catalog_open_run) */
        if (en == ENOENT) return err_set(e, ERR_NOT_FOUND, "cannot open %s: no such file", path);
        return err_set(e, ERR_IO, "cannot open %s: %s", path, strerror(en));
    }
    ssize_t n = fstat(fd, &sb) == 0 ? pread(fd, h, sizeof h, 0) : -1;
    close(fd);
    if (n < 0) return err_set(e, ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (sb.st_size == 0) return damaged(path, e, "its run.db is empty, 0 bytes");
    if (n < (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return damaged(path, e, "its run.db is not an SQLite database: the header is overwritten");
    uint32_t psize = (uint32_t)h[16] << 8 | h[17];
    if (psize == 1) psize = 65536;
    if (psize < 512 || (psize & (psize - 1)) != 0 || h[21] != 64 || h[22] != 32 || h[23] != 32)
        return damaged(path, e, "its run.db has a garbled header");
    /* The page count is valid when the two change counters agree; a live
     * -wal may hold a checkpoint in progress that grows the file. */
    uint32_t pages = be32(h + 28);
    char *wal = xasprintf("%s-wal", path);
    struct stat ws;
    int wal_busy = stat(wal, &ws) == 0 && ws.st_size > 0;
    free(wal);
    if (!wal_busy && pages > 0 && be32(h + 24) == be32(h + 92) && (int64_t)pages * psize > (int64_t)sb.st_size)
        return damaged(path, e, "its run.db is cut short: %lld of %lld bytes", (long long)sb.st_size,
                       (long long)pages * psize);
    return 0;
}

int rundb_open_ro(const char *db_path, sqlite3 **out, struct err *e)
{
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if (check_file(db_path, e) < 0) return e->code;
    /* Reading the two tables every run has had since the first version
     * parses the whole schema and touches the first pages: a garbled
     * schema, or a valid SQLite file that is not a run, shows here. Old
     * runs (tables added later missing) pass and get their 409 from the
     * API that needs the newer table. */
    rc = rundb_open_snapshot(db_path, "SELECT (SELECT count(*) FROM meta), (SELECT count(*) FROM rank)", &db, NULL, e);
    if (rc == ERR_DB && strstr(e->msg, "no such table"))
        return damaged(db_path, e, "its run.db lacks the run tables");
    if (rc < 0) return rc;
    /* On a query worker: stop when the request is over budget or its
     * client has gone (see budget.h). */
    budget_attach(db);
    *out = db;
    return 0;
}

int rundb_info(const char *db_path, json_t **out, struct err *e)
{
    sqlite3 *db;
    sqlite3_stmt *st = NULL, *nt = NULL;
    json_t *ranks = json_array();

    if (rundb_open_ro(db_path, &db, e) != 0) {
        json_decref(ranks);
        return e->code;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, file, bytes, format, base_ns, t0, t1, device, distributed, stats"
                           " FROM rank ORDER BY rank",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT level, reason, count, example FROM note WHERE rank=? ORDER BY rowid", -1,
                           &nt, NULL) != SQLITE_OK) {
        err_set(e, ERR_DB, "run database: %s", sqlite3_errmsg(db));
        goto fail;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *notes = json_array();
        int rank = sqlite3_column_int(st, 0);
        sqlite3_bind_int(nt, 1, rank);
        while (sqlite3_step(nt) == SQLITE_ROW) {
            json_array_append_new(
                notes, json_pack("{s:s,s:s,s:I,s:s?}", "level", (const char *)sqlite3_column_text(nt, 0), "reason",
                                 (const char *)sqlite3_column_text(nt, 1), "count",
                                 (json_int_t)sqlite3_column_int64(nt, 2), "example",
                                 (const char *)sqlite3_column_text(nt, 3)));
        }
        sqlite3_reset(nt);
        /* a file name stored before ingest repaired names may not be UTF-8 */
        const char *file = (const char *)sqlite3_column_text(st, 1);
        char *fixed = file && !utf8_valid(file, strlen(file)) ? utf8_dup(file) : NULL;
        json_t *r = json_pack("{s:i,s:s?,s:I,s:s?,s:I}", "rank", rank, "file", fixed ? fixed : file, "bytes",
                              (json_int_t)sqlite3_column_int64(st, 2), "format",
                              (const char *)sqlite3_column_text(st, 3), "base_ns",
                              (json_int_t)sqlite3_column_int64(st, 4));
        json_object_set_new(r, "t0_ns", sqlite3_column_type(st, 5) == SQLITE_NULL
                                            ? json_null()
                                            : json_integer(sqlite3_column_int64(st, 5)));
        json_object_set_new(r, "t1_ns", sqlite3_column_type(st, 6) == SQLITE_NULL
                                            ? json_null()
                                            : json_integer(sqlite3_column_int64(st, 6)));
        json_object_set_new(r, "device", col_json(st, 7));
        json_object_set_new(r, "distributed", col_json(st, 8));
        json_object_set_new(r, "stats", col_json(st, 9));
        free(fixed);
        json_object_set_new(r, "notes", notes);
        json_array_append_new(ranks, r);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(nt);
    st = nt = NULL;
    json_int_t ntracks = 0, nslices = 0;
    if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM track), (SELECT max(id) FROM slice)", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        ntracks = sqlite3_column_int64(st, 0);
        nslices = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    *out = json_pack("{s:o,s:I,s:I}", "ranks", ranks, "tracks", ntracks, "slices", nslices);
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(nt);
    sqlite3_close(db);
    json_decref(ranks);
    return e->code;
}

char *rundb_like_pattern(const char *s)
{
    size_t n = strlen(s), j = 0;
    char *p = xmalloc(2 * n + 3);

    p[j++] = '%';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' || s[i] == '_' || s[i] == '\\') p[j++] = '\\';
        p[j++] = s[i];
    }
    p[j++] = '%';
    p[j] = '\0';
    return p;
}
