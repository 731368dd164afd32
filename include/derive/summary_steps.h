/*
 * summary_steps.h — a rank's steps: the host ProfilerStep spans (one thread,
 * one span per name) stretched over the GPU work they launched and trimmed
 * of the partial first and last ones, each step's time broken down into
 * the priority categories of enum cat (they add up exactly to its length),
 * and the step table written from them. The step array is owned by the
 * caller (summary.c's driver), which frees each name and the array.
 */
#ifndef TB_SUMMARY_STEPS_H
#define TB_SUMMARY_STEPS_H

#include "derive/summary_rank.h"
#include "base/err.h"

/* The steps of c (after both walks). OUT *out, *nout: owned by caller. */
int summary_steps_build(struct rankctx *c, struct step **out, size_t *nout);

/* Fills s[i].part from c's category interval unions, freeing them (c->cat is
 * empty after). */
void summary_steps_breakdown(struct rankctx *c, struct step *s, size_t n);

/* Writes the step table rows of c->rank. */
int summary_steps_write(struct rankctx *c, const struct step *s, size_t n, struct err *e);

#endif
