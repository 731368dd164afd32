/* sink_fixture.h — a stored run's slices handed to a slice sink
 * (rundb_writer.h) as the writer's drain hands them, for the tests of the
 * sink's consumers (timeline_stream, slice_feed): each rank's span, then
 * its slices in id order with their correlation id, kind and args, each
 * track's end after its last slice with its row's figures. */
#ifndef TB_SINK_FIXTURE_H
#define TB_SINK_FIXTURE_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/rundb_writer.h"

/* Feeds sink the slices of run (open read-only); edit (may be NULL)
 * changes each slice before the sink sees it. 0, or -1 on a read error. */
static inline int sink_feed_run(sqlite3 *run, const struct rundb_slice_sink *sink,
                                void (*edit)(struct rundb_slice_out *s))
{
    sqlite3_stmt *st;
    int64_t cur = 0, rank = -1;
    if (sqlite3_prepare_v2(run,
                           "SELECT s.id, s.track, s.ts, s.dur, coalesce(s.parent, 0), s.name, s.depth, t.rank,"
                           " r.t0, r.t1, t.max_depth, t.nslices, coalesce(s.corr, 0), s.kind, s.args"
                           " FROM slice s JOIN track t ON t.id = s.track JOIN rank r ON r.rank = t.rank ORDER BY s.id",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc, maxd = 0;
    int64_t ns = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct rundb_slice_out s = { .id = sqlite3_column_int64(st, 0),
                                     .track = sqlite3_column_int64(st, 1),
                                     .ts = sqlite3_column_int64(st, 2),
                                     .dur = sqlite3_column_int64(st, 3),
                                     .parent = sqlite3_column_int64(st, 4),
                                     .name = (uint32_t)sqlite3_column_int64(st, 5),
                                     .depth = sqlite3_column_int(st, 6),
                                     .corr = sqlite3_column_int64(st, 12),
                                     .kind = (uint32_t)sqlite3_column_int(st, 13),
                                     .args = (const char *)sqlite3_column_text(st, 14),
                                     .args_len = (uint32_t)sqlite3_column_bytes(st, 14) };
        if (edit) edit(&s);
        if (s.track != cur && cur) sink->track_end(sink->ctx, cur, 1, maxd, ns);
        if (sqlite3_column_int64(st, 7) != rank) {
            rank = sqlite3_column_int64(st, 7);
            sink->rank(sink->ctx, sqlite3_column_type(st, 8) != SQLITE_NULL, sqlite3_column_int64(st, 8),
                       sqlite3_column_int64(st, 9));
        }
        cur = s.track;
        maxd = sqlite3_column_int(st, 10);
        ns = sqlite3_column_int64(st, 11);
        sink->slice(sink->ctx, &s);
    }
    if (cur) sink->track_end(sink->ctx, cur, 1, maxd, ns);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

#endif
