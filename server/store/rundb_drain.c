#include "store/rundb_drain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "store/nesting.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"
#include "store/sorter.h"

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

int64_t rundb_drain_row_id(const char *d)
{
    struct op_row r;
    memcpy(&r, d, sizeof r);
    return r.id;
}

void rundb_drain_bind_row(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d)
{
    struct op_row r;
    memcpy(&r, d, sizeof r);
    int c = 11 * k;
    const int64_t v[10] = { r.track, r.ts, r.dur, r.depth, r.parent, r.name, r.cat, r.kind, r.corr, r.ext };
    for (int i = 0; i < 10; i++) rundb_batch_int(b, st, c + i + 1, v[i], (i == 4 && !r.parent) || (i == 6 && !r.cat));
    /* always: the text lives in the chunk, which is reused */
    if (r.args_len) sqlite3_bind_text(st, c + 11, d + sizeof r, (int)r.args_len, SQLITE_STATIC);
    else sqlite3_bind_null(st, c + 11);
}

/* A full name_ids chunk on its way to the writer thread. */
static int emit_names(void *ctx, const struct nameids_chunk *c, struct err *e)
{
    struct rundb_writer *w = ctx;
    (void)e;
    struct op_nameids o = { c->first, c->last, c->n, c->name, (uint32_t)c->len };
    char *d = rundb_writer_emit(w, OP_NAMEIDS, sizeof o + c->len);
    memcpy(d, &o, sizeof o);
    if (c->len) memcpy(d + sizeof o, c->ids, c->len);
    return 0;
}

int rundb_drain_names_flush(struct rundb_writer *w, struct err *e)
{
    return w->names ? nameids_build_flush(w->names, e) : 0;
}

/* The sink's news of a track whose slices are all given: its row's
 * figures are final (write_tracks writes them). */
static void track_end(struct rundb_writer *w, uint32_t track)
{
    if (!w->sink.slice) return;
    const struct track *t = rundb_writer_track_get(w, track);
    w->sink.track_end(w->sink.ctx, track, t != NULL, t ? t->max_depth : 0, t ? (int64_t)t->nslices : 0);
}

/* Keeps slice id's correlation id for corr_ids, up to a quarter of the
 * sort budget (tiled33: 114 k pairs, 1.8 MB; the 10 M-event trace's 6.6 M
 * would be 106 MB: it gets the index instead). */
static void corr_keep(struct rundb_writer *w, int64_t corr, int64_t id)
{
    if (w->corr_over) return;
    if (w->ncorr == w->corr_cap) {
        size_t cap = w->corr_cap ? w->corr_cap * 2 : 4096;
        if (cap * sizeof *w->corr > w->sort_memory / 4) {
            free(w->corr);
            w->corr = NULL;
            w->ncorr = w->corr_cap = 0;
            w->corr_over = 1;
            return;
        }
        w->corr = xrealloc(w->corr, cap * sizeof *w->corr);
        w->corr_cap = cap;
    }
    w->corr[w->ncorr++] = (struct rundb_corr){ corr, id };
}

/* The sorted slices become rows: the merge, depth and parent here, the
 * inserts on the writer thread (OP_ROW), so both cores work; the caller's
 * barrier waits for the last insert and returns its error. parent is the
 * latest-started slice still open (a stack: the analyses' walks rely on
 * it); depth is the drawing level of nesting.h, which does not cascade on
 * partial overlaps. */
static int drain_slices(struct rundb_writer *w, struct err *e)
{
    struct open_slice *stack = NULL;
    size_t sp = 0, scap = 0;
    uint32_t cur_track = 0;
    struct sorter_key k;
    const void *pl;
    uint32_t n;
    int rc;
    struct nesting lv = { 0 };
    /* slices placed one level deeper, beside in a free level, GPU ops in a
     * sub-lane; and where the first of each is, for the note's example */
    uint64_t odd[3] = { 0 };
    char first[3][160] = { "", "", "" };

    rundb_writer_phase(w, "sort");
    if (sorter_finish(w->sorter, e) != 0) return e->code;
    rundb_writer_phase(w, "write");
    if (!w->names) w->names = nameids_build_new(emit_names, w);
    if (w->sink.slice) w->sink.rank(w->sink.ctx, w->t0 <= w->t1, w->t0, w->t1);
    while ((rc = sorter_next(w->sorter, &k, &pl, &n, e)) == 1) {
        const struct slice_payload *p = pl;
        struct track *t = rundb_writer_track_get(w, k.track);
        int64_t id = w->next_slice_id++;
        enum nesting_place how;
        int depth;

        if (k.track != cur_track) {
            if (cur_track) track_end(w, cur_track);
            cur_track = k.track;
            sp = 0;
            nesting_reset(&lv);
        }
        while (sp && stack[sp - 1].end <= k.ts) sp--;
        depth = nesting_place(&lv, k.ts, k.ts + k.dur, &how);
        if (how != NESTING_NESTED) {
            int o = t && t->kind == TB_TRACK_GPU ? 2 : how == NESTING_DEEPER ? 0 : 1;
            if (!odd[o]++ && t)
                snprintf(first[o], sizeof first[o], "the first on pid %.*s, tid %.*s", (int)(t->pid_n < 48 ? t->pid_n : 48),
                         t->pid, (int)(t->tid_n < 48 ? t->tid_n : 48), t->tid);
        }
        if (sp == scap) {
            scap = scap ? scap * 2 : 64;
            stack = xrealloc(stack, sizeof *stack * scap);
        }
        if (w->bg_err_seen) break; /* the barrier after the drain reports it */
        if ((rc = nameids_build_add(w->names, p->name, id, e)) < 0) break;
        if (p->corr) corr_keep(w, p->corr, id);
        struct op_row r = { id, k.ts, k.dur, sp ? stack[sp - 1].id : 0, p->corr, p->ext, k.track, p->name, p->cat,
                            p->kind, (uint32_t)depth, p->args_len };
        char *o = rundb_writer_emit(w, OP_ROW, sizeof r + p->args_len);
        memcpy(o, &r, sizeof r);
        if (p->args_len) memcpy(o + sizeof r, p + 1, p->args_len);
        if (w->sink.slice) {
            struct rundb_slice_out so = { id,      k.track,  k.ts,        k.dur, r.parent, p->corr, p->name,
                                          p->kind, p->args_len, depth, (const char *)(p + 1) };
            w->sink.slice(w->sink.ctx, &so);
        }
        stack[sp].end = k.ts + k.dur;
        stack[sp].id = id;
        sp++;
        if (t) {
            if (depth > t->max_depth) t->max_depth = depth;
            t->nslices++;
            if (t->first_slice < 0) t->first_slice = id;
            t->last_slice = id;
        }
    }
    if (rc == 0 && cur_track) track_end(w, cur_track);
    free(stack);
    nesting_free(&lv);
    if (rc < 0) return rc;
    /* the count is the slices (as other notes count events); the example
     * says where the first one is, not the count again */
    static const char *const reason[3] = {
        "slices that end after a slice they start in, kept whole: drawn one level deeper than it",
        "slices that end after a slice they start in, kept whole: drawn in a free level above it",
        "GPU ops that overlap another op of their stream, kept whole: drawn in a sub-lane",
    };
    for (int o = 0; o < 3; o++)
        if (odd[o]) rundb_note_n(w, TB_NOTE_INFO, reason[o], first[o][0] ? first[o] : NULL, odd[o]);
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
        if (rundb_writer_step_done(w, st, e, "track insert") != 0) return e->code;
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
        if (rundb_writer_step_done(w, w->ins_note, e, "note insert") != 0) return e->code;
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
    if (rundb_writer_barrier(w, e) != 0) return e->code;
    if (drain_slices(w, e) != 0 || rundb_writer_barrier(w, e) != 0 || write_tracks(w, e) != 0 ||
        write_notes(w, e) != 0)
        return e->code;

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
        return rundb_db_error(w->db, e, "rank update");
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
    if (rc != SQLITE_DONE) return rundb_db_error(w->db, e, "rank update");
    json_decref(w->rank_header);
    w->rank_header = NULL;
    if (stats) *stats = w->stats;
    w->in_rank = 0;
    return 0;
}

/* Bumps the events counter; the importer calls it once per event read. */
