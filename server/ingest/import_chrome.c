#define LOG_MODULE "chrome"
#include "ingest/import_chrome.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "ingest/import_chrome_xla.h"

/* ---------------------------------------------------------------------- */
/* probe                                                                  */

static int chrome_probe(const struct import_probe *p)
{
    size_t i = 0;
    if (p->head_n >= 3 && memcmp(p->head, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < p->head_n && (p->head[i] == ' ' || p->head[i] == '\n' || p->head[i] == '\r' || p->head[i] == '\t'))
        i++;
    if (i >= p->head_n || (p->head[i] != '{' && p->head[i] != '[')) return 0;
    if (memmem(p->head, p->head_n, "\"traceEvents\"", 13) || memmem(p->head, p->head_n, "\"ph\"", 4)) return 90;
    return 10; /* JSON of some kind: try, and say what is missing */
}

/* ---------------------------------------------------------------------- */
/* per-import state                                                       */

struct import_chrome_open {
    uint32_t track, name, cat;
    enum tb_kind kind;
    int64_t ts;
    char *args;
    size_t args_len;
};

size_t import_chrome_str_decode(struct import_chrome *c, const struct jtok_val *v, const char **out)
{
    if (!v->escaped) {
        *out = v->p;
        return v->n;
    }
    if (v->n + 1 > c->scratch_cap) {
        c->scratch_cap = v->n * 2 + 64;
        c->scratch = xrealloc(c->scratch, c->scratch_cap);
    }
    *out = c->scratch;
    return jtok_unescape(v->p, v->n, c->scratch);
}

static uint32_t intern_val(struct import_chrome *c, const struct jtok_val *v)
{
    const char *s;
    size_t n;
    if (v->type == JT_STRING) {
        n = import_chrome_str_decode(c, v, &s);
        return rundb_intern(c->w, s, n);
    }
    if (v->type != JT_NONE) return rundb_intern(c->w, v->p, v->n); /* a number used as a name */
    return 0;
}

void import_chrome_id_text(const struct jtok_val *v, char *buf, size_t cap, const char **s, size_t *n)
{
    if (v->type == JT_NONE) {
        *s = "";
        *n = 0;
        return;
    }
    if (v->type == JT_STRING && v->escaped) {
        char *tmp = xmalloc(v->n + 1);
        size_t m = jtok_unescape(v->p, v->n, tmp);
        if (m > cap) m = cap;
        memcpy(buf, tmp, m);
        free(tmp);
        *s = buf;
        *n = m;
        return;
    }
    *s = v->p;
    *n = v->n;
}

static int note_drop(struct import_chrome *c, const char *reason, const struct import_chrome_ev *ev)
{
    char ex[160] = "";
    if (ev && ev->name.type == JT_STRING) snprintf(ex, sizeof ex, "%.*s", (int)(ev->name.n > 150 ? 150 : ev->name.n), ev->name.p);
    rundb_note(c->w, TB_NOTE_DROPPED, reason, ex[0] ? ex : NULL);
    return 0;
}

static void args_clear(struct import_chrome_args *a)
{
    a->corr = a->ext = a->dev_type = a->dev_id = a->addr = a->bytes = 0;
    a->total_alloc = a->total_reserved = -1;
    a->has_bytes = 0;
}

static void args_member(struct import_chrome_args *a, const struct jtok_val *k, const struct jtok_val *v)
{
    if (v->type != JT_NUMBER || k->escaped) return;
    /* the member's field first: most members (Python ids, shapes, grid)
     * are none of them, and need no conversion */
    int64_t *to = NULL;
    switch (k->n) {
    case 11:
        if (memcmp(k->p, "correlation", 11) == 0) to = &a->corr;
        else if (memcmp(k->p, "External id", 11) == 0) to = &a->ext;
        else if (memcmp(k->p, "Device Type", 11) == 0) to = &a->dev_type;
        break;
    case 9:
        if (memcmp(k->p, "Device Id", 9) == 0) to = &a->dev_id;
        break;
    case 4:
        if (memcmp(k->p, "Addr", 4) == 0) to = &a->addr;
        break;
    case 5:
        if (memcmp(k->p, "Bytes", 5) == 0) to = &a->bytes;
        break;
    case 15:
        if (memcmp(k->p, "Total Allocated", 15) == 0) to = &a->total_alloc;
        break;
    case 14:
        if (memcmp(k->p, "Total Reserved", 14) == 0) to = &a->total_reserved;
        break;
    }
    if (!to || jtok_to_i64(v, to) != 0) return;
    if (to == &a->bytes) a->has_bytes = 1;
}

void import_chrome_args_scan(const struct jtok_val *args, struct import_chrome_args *a)
{
    const char *cur = args->p, *end = args->p + args->n;
    struct jtok_val k, v;
    struct err e;

    args_clear(a);
    while (jtok_span_next_member(&cur, end, &k, &v, &e) == 1) args_member(a, &k, &v);
}

static uint32_t ev_track(struct import_chrome *c, const struct import_chrome_ev *ev)
{
    char pb[64], tb[64];
    const char *ps, *ts;
    size_t pn, tn;
    import_chrome_id_text(&ev->pid, pb, sizeof pb, &ps, &pn);
    import_chrome_id_text(&ev->tid, tb, sizeof tb, &ts, &tn);
    return rundb_track(c->w, ps, pn, ts, tn);
}

static int ev_ts(struct import_chrome *c, const struct jtok_val *v, int64_t *out)
{
    (void)c;
    if (v->type == JT_NUMBER) return jtok_us_to_ns(v->p, v->n, out);
    if (v->type == JT_STRING && !v->escaped) return jtok_us_to_ns(v->p, v->n, out); /* "123.4" */
    return ERR_INVALID;
}


/* ai: what import_chrome_args_scan finds in ev's args, read already (NULL:
 * not yet). */
static int do_slice(struct import_chrome *c, const struct import_chrome_ev *ev, const struct import_chrome_args *ai,
                    int64_t ts, int64_t dur, struct err *e)
{
    struct tb_slice s;
    const char *cs = "";
    size_t cn = 0;

    if (ev->cat.type == JT_STRING) cn = import_chrome_str_decode(c, &ev->cat, &cs);
    s.kind = tb_kind_from_cat(cs, cn);
    s.cat = cn ? rundb_intern(c->w, cs, cn) : 0;
    s.name = ev->name.type != JT_NONE ? intern_val(c, &ev->name) : c->unnamed;
    s.track = ev_track(c, ev);
    s.ts = ts;
    s.dur = dur;
    s.corr = s.ext = 0;
    s.args = NULL;
    s.args_len = 0;
    if (ev->args.type == JT_OBJECT) {
        s.args = ev->args.p;
        s.args_len = ev->args.n;
        if (s.kind != TB_K_OTHER && s.kind != TB_K_PYTHON) {
            struct import_chrome_args a;
            if (!ai) import_chrome_args_scan(&ev->args, &a);
            s.corr = (ai ? ai : &a)->corr;
            s.ext = (ai ? ai : &a)->ext;
        }
    }
    if (s.kind != TB_K_OTHER) c->saw_kineto = 1;
    else import_chrome_xla_classify(c, ev, s.track, &s.kind, &s.name, &s.corr);
    if (tb_kind_is_gpu(s.kind)) rundb_track_set_kind(c->w, s.track, TB_TRACK_GPU);
    return rundb_add_slice(c->w, &s, e);
}

static int do_begin(struct import_chrome *c, const struct import_chrome_ev *ev, int64_t ts)
{
    const char *cs = "";
    size_t cn = 0;
    if (c->nb == c->bcap) {
        c->bcap = c->bcap ? c->bcap * 2 : 32;
        c->bstack = xrealloc(c->bstack, sizeof *c->bstack * c->bcap);
    }
    struct import_chrome_open *b = &c->bstack[c->nb++];
    if (ev->cat.type == JT_STRING) cn = import_chrome_str_decode(c, &ev->cat, &cs);
    b->kind = tb_kind_from_cat(cs, cn);
    b->cat = cn ? rundb_intern(c->w, cs, cn) : 0;
    b->name = ev->name.type != JT_NONE ? intern_val(c, &ev->name) : c->unnamed;
    b->track = ev_track(c, ev);
    if (b->kind == TB_K_OTHER) {
        int64_t corr = 0; /* B/E slices carry no correlation */
        import_chrome_xla_classify(c, ev, b->track, &b->kind, &b->name, &corr);
    }
    b->ts = ts;
    b->args = ev->args.type == JT_OBJECT ? xmemdup0(ev->args.p, ev->args.n) : NULL;
    b->args_len = ev->args.type == JT_OBJECT ? ev->args.n : 0;
    return 0;
}

static int do_end(struct import_chrome *c, const struct import_chrome_ev *ev, int64_t ts, struct err *e)
{
    uint32_t track = ev_track(c, ev);
    for (size_t i = c->nb; i-- > 0;) {
        struct import_chrome_open *b = &c->bstack[i];
        if (b->track != track) continue;
        /* the difference of two int64 times may not fit one: saturate */
        uint64_t span = ts >= b->ts ? (uint64_t)ts - (uint64_t)b->ts : 0;
        int64_t dur = span > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)span;
        struct tb_slice s = { b->track, b->name, b->cat, b->kind, b->ts, dur, 0, 0, b->args, b->args_len };
        if (tb_kind_is_gpu(s.kind)) rundb_track_set_kind(c->w, s.track, TB_TRACK_GPU);
        int rc = rundb_add_slice(c->w, &s, e);
        free(b->args);
        memmove(b, b + 1, sizeof *b * (c->nb - i - 1));
        c->nb--;
        return rc;
    }
    return note_drop(c, "'E' event without a matching 'B' on its thread", ev);
}

static int do_instant(struct import_chrome *c, const struct import_chrome_ev *ev, const struct import_chrome_args *ai,
                      int64_t ts, struct err *e)
{
    uint32_t track = ev_track(c, ev);
    if (jtok_str_eq(&ev->name, "[memory]") && ev->args.type == JT_OBJECT) {
        struct import_chrome_args a;
        if (ai) a = *ai;
        else import_chrome_args_scan(&ev->args, &a);
        if (!a.has_bytes) return note_drop(c, "[memory] event without Bytes", ev);
        struct tb_mem m = { track, ts, (int)a.dev_type, (int)a.dev_id, a.addr, a.bytes, a.total_alloc,
                            a.total_reserved };
        return rundb_add_mem(c->w, &m, e);
    }
    struct tb_instant in;
    in.track = track;
    in.ts = ts;
    in.name = ev->name.type != JT_NONE ? intern_val(c, &ev->name) : c->unnamed;
    in.cat = ev->cat.type == JT_STRING ? intern_val(c, &ev->cat) : 0;
    in.scope = ev->s.type == JT_STRING && ev->s.n == 1 ? ev->s.p[0] : 't';
    in.args = ev->args.type == JT_OBJECT ? ev->args.p : NULL;
    in.args_len = ev->args.type == JT_OBJECT ? ev->args.n : 0;
    return rundb_add_instant(c->w, &in, e);
}

static int do_flow(struct import_chrome *c, const struct import_chrome_ev *ev, char ph, int64_t ts, struct err *e)
{
    struct tb_flow f;
    const struct jtok_val *id = ev->id.type != JT_NONE ? &ev->id : &ev->bind_id;
    if (id->type == JT_NONE) return note_drop(c, "flow event without id", ev);
    f.track = ev_track(c, ev);
    f.cat = ev->cat.type == JT_STRING ? intern_val(c, &ev->cat) : 0;
    f.name = ev->name.type != JT_NONE ? intern_val(c, &ev->name) : 0;
    f.fid = id->p;
    f.fid_len = id->n;
    f.ph = ph;
    f.bp = ev->bp.type == JT_STRING && ev->bp.n == 1 && ev->bp.p[0] == 'e' ? 'e' : 0;
    f.ts = ts;
    return rundb_add_flow(c->w, &f, e);
}

static int do_counter(struct import_chrome *c, const struct import_chrome_ev *ev, int64_t ts, struct err *e)
{
    if (ev->args.type != JT_OBJECT) return note_drop(c, "counter event without args", ev);
    const char *cur = ev->args.p, *end = ev->args.p + ev->args.n, *nm = "";
    size_t nn = 0;
    struct jtok_val k, v;
    struct err ie;
    uint32_t track = ev_track(c, ev);
    if (ev->name.type == JT_STRING) nn = import_chrome_str_decode(c, &ev->name, &nm);
    char *name = xmemdup0(nm, nn);
    int rc = 0;
    while (rc == 0 && jtok_span_next_member(&cur, end, &k, &v, &ie) == 1) {
        double d;
        if (jtok_to_double(&v, &d) != 0 || !isfinite(d)) continue;
        /* the key names the series: a JSON string like any other, so
         * "caf\u00e9" is shown as café (the name is already copied out of
         * the scratch buffer this reuses) */
        const char *ks;
        size_t kn = import_chrome_str_decode(c, &k, &ks);
        char *full = xasprintf("%s.%.*s", name, (int)kn, ks);
        struct tb_counter ct = { rundb_intern(c->w, full, strlen(full)), track, ts, d };
        free(full);
        rc = rundb_add_counter(c->w, &ct, e);
    }
    free(name);
    return rc;
}

static int do_metadata(struct import_chrome *c, const struct import_chrome_ev *ev)
{
    const struct jtok_val *nv = &ev->name;
    if (ev->args.type != JT_OBJECT) return 0;
    const char *cur = ev->args.p, *end = ev->args.p + ev->args.n;
    struct jtok_val k, v, name = { 0 }, sort = { 0 };
    struct err ie;
    while (jtok_span_next_member(&cur, end, &k, &v, &ie) == 1) {
        if (jtok_str_eq(&k, "name")) name = v;
        else if (jtok_str_eq(&k, "sort_index")) sort = v;
    }
    if (jtok_str_eq(nv, "process_name") && name.type == JT_STRING) {
        char pb[64];
        const char *ps, *s;
        size_t pn;
        import_chrome_id_text(&ev->pid, pb, sizeof pb, &ps, &pn);
        char *pid = xmemdup0(ps, pn);
        size_t n = import_chrome_str_decode(c, &name, &s);
        rundb_process_set_name(c->w, pid, pn, s, n);
        import_chrome_xla_note_process(c, pid, pn, s, n);
        free(pid);
    } else if (jtok_str_eq(nv, "thread_name") && name.type == JT_STRING) {
        uint32_t t = ev_track(c, ev);
        const char *s;
        size_t n = import_chrome_str_decode(c, &name, &s);
        rundb_track_set_name(c->w, t, s, n);
        import_chrome_xla_note_thread(c, t, s, n);
    } else if (jtok_str_eq(nv, "thread_sort_index") && sort.type == JT_NUMBER) {
        int64_t x;
        if (jtok_to_i64(&sort, &x) == 0) rundb_track_set_sort(c->w, ev_track(c, ev), x);
    }
    return 0;
}

/* Keeps member (k, v) of an event where it is one of those read. */
static void ev_member(struct import_chrome_ev *ev, const struct jtok_val *k, const struct jtok_val *v)
{
    if (k->escaped) return;
    switch (k->n) {
    case 2:
        if (k->p[0] == 'p' && k->p[1] == 'h') ev->ph = *v;
        else if (k->p[0] == 't' && k->p[1] == 's') ev->ts = *v;
        else if (k->p[0] == 'i' && k->p[1] == 'd') ev->id = *v;
        else if (k->p[0] == 'b' && k->p[1] == 'p') ev->bp = *v;
        break;
    case 3:
        if (memcmp(k->p, "cat", 3) == 0) ev->cat = *v;
        else if (memcmp(k->p, "pid", 3) == 0) ev->pid = *v;
        else if (memcmp(k->p, "tid", 3) == 0) ev->tid = *v;
        else if (memcmp(k->p, "dur", 3) == 0) ev->dur = *v;
        break;
    case 4:
        if (memcmp(k->p, "name", 4) == 0) ev->name = *v;
        else if (memcmp(k->p, "args", 4) == 0) ev->args = *v;
        break;
    case 1:
        if (k->p[0] == 's') ev->s = *v;
        break;
    case 7:
        if (memcmp(k->p, "bind_id", 7) == 0) ev->bind_id = *v;
        break;
    }
}

/* One pass over the event's bytes instead of three (the extent scan, the
 * members, then its args object's members again): the args object, most
 * of an event's bytes, is read member by member instead of skipped. Both
 * find the same end where both read a whole object, as the members'
 * strings and nested values are the scan's. */
int import_chrome_event_fast(const char *p, const char *end, struct import_chrome_event *x, size_t *n)
{
    const char *cur = p;
    struct jtok_val k, v;
    struct err e;
    int rc;

    memset(x, 0, sizeof *x);
    if (p >= end || *p != '{') return 0;
    while ((rc = jtok_span_next_key(&cur, end, &k, &e)) == 1) {
        if (cur < end && *cur == '{' && !k.escaped && k.n == 4 && memcmp(k.p, "args", 4) == 0) {
            const char *a0 = cur;
            struct jtok_val ak, av;
            args_clear(&x->a);
            while ((rc = jtok_span_next_member(&cur, end, &ak, &av, &e)) == 1) args_member(&x->a, &ak, &av);
            if (rc < 0) return 0;
            x->ev.args = (struct jtok_val){ JT_OBJECT, a0, (size_t)(cur - a0), 0 };
            x->has_a = 1;
        } else {
            if (jtok_span_value(&cur, end, &v, &e) != 0) return 0;
            ev_member(&x->ev, &k, &v);
        }
        if (jtok_span_member_end(&cur, end, &e) != 0) return 0;
    }
    if (rc < 0) return 0;
    *n = (size_t)(cur - p);
    return 1;
}

static int event_act(struct import_chrome *c, const struct import_chrome_ev *ev, const struct import_chrome_args *ai,
                     struct err *e);

int import_chrome_event_members(const char *p, size_t n, struct import_chrome_ev *ev, struct err *e)
{
    const char *cur = p, *end = p + n;
    struct jtok_val k, v;
    int rc;

    memset(ev, 0, sizeof *ev);
    while ((rc = jtok_span_next_member(&cur, end, &k, &v, e)) == 1) ev_member(ev, &k, &v);
    return rc < 0 ? rc : 0;
}

/* One event object, complete in memory. */
static int do_event(struct import_chrome *c, const char *p, size_t n, struct err *e)
{
    struct import_chrome_ev ev;
    if (import_chrome_event_members(p, n, &ev, e) < 0)
        return err_prefix(e, "event #%llu", (unsigned long long)c->events + 1);
    return event_act(c, &ev, NULL, e);
}

/* What event ev does: ai, its args' integers when read (NULL: not yet). */
static int event_act(struct import_chrome *c, const struct import_chrome_ev *ev, const struct import_chrome_args *ai,
                     struct err *e)
{
    c->events++;
    if (ev->ph.type != JT_STRING || ev->ph.n != 1) {
        rundb_count_event(c->w, 0);
        return note_drop(c, "event without a one-letter ph (phase)", ev);
    }
    char ph = ev->ph.p[0];
    rundb_count_event(c->w, ph == 'M');
    if (ph == 'M') return do_metadata(c, ev);

    int64_t ts;
    if (ev->ts.type == JT_NONE) return note_drop(c, "event without ts", ev);
    if (ev_ts(c, &ev->ts, &ts) != 0) return note_drop(c, "event whose ts is not a finite number", ev);

    switch (ph) {
    case 'X': {
        int64_t dur = 0;
        if (ev->dur.type == JT_NONE) {
            rundb_note(c->w, TB_NOTE_REPAIRED, "complete event (X) without dur: taken as 0", NULL);
        } else if (ev_ts(c, &ev->dur, &dur) != 0) {
            return note_drop(c, "X event whose dur is not a finite number", ev);
        } else if (dur < 0) {
            rundb_note(c->w, TB_NOTE_REPAIRED, "negative dur: taken as 0", NULL);
            dur = 0;
        }
        return do_slice(c, ev, ai, ts, dur, e);
    }
    case 'B': return do_begin(c, ev, ts);
    case 'E': return do_end(c, ev, ts, e);
    case 'i':
    case 'I':
    case 'R': return do_instant(c, ev, ai, ts, e);
    case 's':
    case 't':
    case 'f': return do_flow(c, ev, ph, ts, e);
    case 'C': return do_counter(c, ev, ts, e);
    case 'b':
    case 'e':
    case 'n': return note_drop(c, "async events (ph b/e/n) are not shown yet", ev);
    default: return note_drop(c, "events of an unknown phase", ev);
    }
}

/* ---------------------------------------------------------------------- */
/* top-level structure                                                    */

static void report_progress(struct import_chrome *c)
{
    if (c->ctx->progress)
        c->ctx->progress(c->ctx->progress_arg, instream_raw_consumed(c->src->in), c->events);
}

/* Returns 0 after ']' (or a tolerated truncation), else an error. */
static int events_array(struct import_chrome *c, struct jtok *t, int *truncated, struct err *e)
{
    int ch;
    const char *p;
    size_t n;

    if (jtok_expect(t, '[', "'[' starting traceEvents", e) != 0) return e->code;
    for (;;) {
        if (jtok_peek(t, &ch, e) != 0) return e->code;
        if (ch == ']') {
            t->pos++;
            return 0;
        }
        if (ch < 0) goto cut;
        int tr = 0;
        const char *wend;
        struct import_chrome_event x;
        jtok_window(t, &p, &wend);
        if (ch == '{' && import_chrome_event_fast(p, wend, &x, &n)) {
            jtok_consume(t, n);
            if (event_act(c, &x.ev, x.has_a ? &x.a : NULL, e) != 0) return e->code;
        } else if (jtok_value_extent(t, &p, &n, &tr, e) != 0) {
            if (tr) goto cut;
            return e->code;
        } else if (p[0] == '{') {
            if (do_event(c, p, n, e) != 0) return e->code;
        } else {
            c->events++;
            rundb_count_event(c->w, 0);
            rundb_note(c->w, TB_NOTE_DROPPED, "traceEvents element that is not an object", NULL);
        }
        if ((c->events & 0x3fff) == 0) report_progress(c);
        if (jtok_peek(t, &ch, e) != 0) return e->code;
        if (ch == ',') {
            t->pos++;
            continue;
        }
        if (ch == ']') {
            t->pos++;
            return 0;
        }
        if (ch < 0) goto cut;
        return err_set(e, ERR_INVALID, "invalid JSON at byte %llu (after event #%llu): expected ',' or ']', found '%c'",
                       (unsigned long long)jtok_offset(t), (unsigned long long)c->events,
                       ch >= 32 && ch < 127 ? ch : '?');
    }
cut:
    if (c->events == 0) return err_set(e, ERR_INVALID, "the file is truncated before its first event");
    *truncated = 1;
    return 0;
}

static int header_member(struct import_chrome *c, const char *key, size_t kn, const char *p, size_t n)
{
    json_error_t je;
    json_t *v = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    char *k = xmemdup0(key, kn);
    if (!v) {
        /* NaN/Infinity or broken UTF-8 in a header field: keep the trace */
        rundb_note(c->w, TB_NOTE_REPAIRED, "header field that is not strict JSON: ignored", k);
    } else {
        json_object_set_new(c->header, k, v);
    }
    free(k);
    return 0;
}

static int chrome_import(struct import_src *src, struct rundb_writer *w, struct import_ctx *ctx, struct err *e)
{
    struct import_chrome c;
    struct jtok t;
    int ch, rc = 0, truncated = 0, saw_events = 0, bare = 0;

    memset(&c, 0, sizeof c);
    c.w = w;
    c.ctx = ctx;
    c.src = src;
    c.header = json_object();
    c.unnamed = rundb_intern(w, "(unnamed)", 9);
    jtok_init(&t, import_src_read, src, ctx->max_value ? ctx->max_value : (64u << 20));

    if ((rc = jtok_peek(&t, &ch, e)) != 0) goto out;
    if (ch == 0xEF) t.pos += 3; /* UTF-8 BOM */
    if ((rc = jtok_peek(&t, &ch, e)) != 0) goto out;
    if (ch == '[') {
        bare = 1;
        saw_events = 1;
        if ((rc = events_array(&c, &t, &truncated, e)) != 0) goto out;
    } else if (ch == '{') {
        t.pos++;
        for (;;) {
            const char *kp, *vp;
            size_t kn, vn;
            int tr = 0;
            if ((rc = jtok_peek(&t, &ch, e)) != 0) goto out;
            if (ch == '}') {
                t.pos++;
                break;
            }
            if (ch != '"') {
                if (ch < 0 && saw_events) {
                    truncated = 1;
                    break;
                }
                rc = err_set(e, ERR_INVALID, "invalid JSON at byte %llu: expected a member name",
                             (unsigned long long)jtok_offset(&t));
                goto out;
            }
            if ((rc = jtok_value_extent(&t, &kp, &kn, &tr, e)) != 0) {
                /* cut inside a member name after the events: keep them */
                if (tr && saw_events) {
                    truncated = 1;
                    rc = 0;
                    break;
                }
                goto out;
            }
            char key[64];
            size_t klen = kn - 2 < sizeof key ? kn - 2 : sizeof key - 1;
            memcpy(key, kp + 1, klen);
            key[klen] = '\0';
            if ((rc = jtok_peek(&t, &ch, e)) != 0) goto out;
            if (ch < 0 && saw_events) { /* cut right after a member name */
                truncated = 1;
                break;
            }
            if ((rc = jtok_expect(&t, ':', "':'", e)) != 0) goto out;
            if (strcmp(key, "traceEvents") == 0) {
                saw_events = 1;
                if ((rc = events_array(&c, &t, &truncated, e)) != 0) goto out;
                if (truncated) break;
            } else {
                if ((rc = jtok_value_extent(&t, &vp, &vn, &tr, e)) != 0) {
                    if (tr && saw_events) {
                        truncated = 1;
                        rc = 0;
                        break;
                    }
                    goto out;
                }
                header_member(&c, key, klen, vp, vn);
            }
            if ((rc = jtok_peek(&t, &ch, e)) != 0) goto out;
            if (ch == ',') {
                t.pos++;
                continue;
            }
            if (ch == '}') {
                t.pos++;
                break;
            }
            if (ch < 0 && saw_events) {
                truncated = 1;
                break;
            }
            rc = err_set(e, ERR_INVALID, "invalid JSON at byte %llu: expected ',' or '}' between members",
                         (unsigned long long)jtok_offset(&t));
            goto out;
        }
    } else {
        rc = err_set(e, ERR_INVALID, "not JSON: the content starts with '%c' where '{' or '[' was expected",
                     ch >= 32 && ch < 127 ? ch : '?');
        goto out;
    }
    if (!saw_events) {
        rc = err_set(e, ERR_INVALID,
                     "a JSON object without \"traceEvents\": not a Chrome/Kineto trace (top-level keys seen: %d)",
                     (int)json_object_size(c.header));
        goto out;
    }
    if (truncated) {
        char ex[96];
        snprintf(ex, sizeof ex, "cut at byte %llu", (unsigned long long)jtok_offset(&t));
        rundb_note(w, TB_NOTE_REPAIRED, "the file is truncated: the complete events before the cut were kept", ex);
    } else if ((rc = jtok_peek(&t, &ch, e)) == 0 && ch >= 0) {
        char ex[96];
        snprintf(ex, sizeof ex, "from byte %llu", (unsigned long long)jtok_offset(&t));
        rundb_note(w, TB_NOTE_REPAIRED, "bytes after the end of the JSON document were ignored", ex);
    } else if (rc != 0) {
        goto out;
    }
    if (c.nb) {
        char ex[64];
        snprintf(ex, sizeof ex, "%zu events", c.nb);
        /* one note per event, so stats.dropped counts each of them */
        for (size_t i = 0; i < c.nb; i++) rundb_note(w, TB_NOTE_DROPPED, "'B' events never closed by an 'E'", ex);
    }
    if (c.events == 0) rundb_note(w, TB_NOTE_INFO, "the trace has no events", NULL);

    int kineto = c.saw_kineto || json_object_get(c.header, "schemaVersion") ||
                 json_object_get(c.header, "deviceProperties");
    ctx->format = kineto ? (bare ? "kineto-2020" : "kineto") : c.ndp ? "chrome-xla" : "chrome";
    int64_t base_ns = 0;
    json_t *b = json_object_get(c.header, "baseTimeNanoseconds");
    if (json_is_integer(b)) base_ns = (int64_t)json_integer_value(b);
    rc = rundb_set_rank_header(w, c.header, ctx->format, base_ns, e);
    report_progress(&c);
out:
    for (size_t i = 0; i < c.nb; i++) free(c.bstack[i].args);
    free(c.bstack);
    for (size_t i = 0; i < c.ndp; i++) free(c.dp[i].pid);
    free(c.dp);
    free(c.lanes);
    free(c.scratch);
    json_decref(c.header);
    jtok_free(&t);
    return rc;
}

const struct importer importer_chrome = { "chrome", chrome_probe, chrome_import, NULL };

