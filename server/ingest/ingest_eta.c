/* ingest_eta.c — the time an import has left (see include/ingest/ingest_eta.h). */
#include "ingest/ingest_eta.h"

/* tiled33.json, idle 2-core machine: parse 1.04 s; sort, write, index,
 * commit and the derived stages 2.97 s after it */
#define TAIL_PRIOR 2.85

/* Weight of the newest import: recent traces and load matter more than old
 * ones, without one odd import swinging the estimate. */
#define LEARN_WEIGHT 0.3

void ingest_eta_init(struct ingest_eta *m)
{
    m->tail = TAIL_PRIOR;
    m->learned = 0;
}

double ingest_eta_left(const struct ingest_eta *m, double t_start, double t_read, uint64_t bytes_done,
                       uint64_t bytes_total, double now)
{
    double left;
    if (t_start <= 0 || now < t_start) return -1;
    if (t_read > 0) {
        double read = t_read - t_start;
        left = m->tail * read - (now - t_read);
    } else {
        double elapsed = now - t_start, f = bytes_total ? (double)bytes_done / (double)bytes_total : 0;
        if (elapsed < 0.5 || f < 0.01) return -1;
        if (f > 1) f = 1;
        double read = elapsed / f;
        left = read - elapsed + m->tail * read;
    }
    return left < 1 ? 1 : left;
}

void ingest_eta_learn(struct ingest_eta *m, double t_start, double t_read, double t_end)
{
    double read = t_read - t_start;
    if (t_start <= 0 || t_read <= 0 || read < 0.2 || t_end < t_read) return;
    double tail = (t_end - t_read) / read;
    /* the first import replaces half the prior, later ones a share */
    double w = m->learned ? LEARN_WEIGHT : 0.5;
    m->tail = (1 - w) * m->tail + w * tail;
    m->learned++;
}
