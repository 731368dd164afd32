/*
 * ingest_eta.h — how long a running import has left, for its job page
 * (`eta_s` of GET /api/jobs/N) and for a script polling the job.
 *
 * An import reads its files first (the only phase whose progress we can
 * count: bytes), then sorts, writes, indexes and derives. The time after
 * the reading grows with what was read, so the model is one ratio: tail =
 * (time after the last byte was read) / (time to read every byte). While
 * reading, the time to read everything follows from the bytes read so far;
 * after it, the tail is that ratio times the reading time. The ratio starts
 * from a prior measured on the real-shape benchmark (tiled33.json on an
 * idle 2-core machine: read 1.04 s, then 2.97 s) and learns from each
 * import this server finishes, so it follows the machine and the traces it
 * sees (a multi-rank job writes ranks while it reads; a small trace is all
 * overhead).
 *
 * Pure functions over a struct ingest_eta the caller owns and guards (the
 * ingest service keeps one under its mutex); times are log_now_s() seconds.
 */
#ifndef TB_INGEST_ETA_H
#define TB_INGEST_ETA_H

#include <stdint.h>

struct ingest_eta {
    double tail;  /* time after the reading / time of the reading */
    int learned;  /* imports it has learned from */
};

void ingest_eta_init(struct ingest_eta *m);

/* Seconds left for an import that started at t_start and has read
 * bytes_done of bytes_total; t_read is when the last byte was read (0:
 * still reading). -1 when there is no estimate yet (under half a second or
 * 1 % read). Never below 0; once the tail is overdue, 1 s. */
double ingest_eta_left(const struct ingest_eta *m, double t_start, double t_read, uint64_t bytes_done,
                       uint64_t bytes_total, double now);

/* Learns from a finished import (ignored when its reading took under
 * 0.2 s: all overhead, no rate). */
void ingest_eta_learn(struct ingest_eta *m, double t_start, double t_read, double t_end);

#endif
