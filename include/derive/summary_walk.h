/*
 * summary_walk.h — the two passes that read one rank's slices into its
 * struct rankctx: pass 1 loads the GPU ops (kernels, memcpys, memsets) with
 * their correlation ids and the figures Kineto left in their args; pass 2
 * walks each CPU thread's slices as a tree, charging operators their self
 * and device times, pairing runtime launches with GPU ops, attributing
 * memory events to the innermost operator and filling the breakdown
 * interval unions. Operators are cpu_op slices, or, when c->api_ops (an
 * Nsight export), the CUDA API calls (device time: what each launched) and
 * NVTX ranges. Both read the run tables with fixed statements; what
 * they add is owned by the rankctx. Called by summary.c's driver only.
 */
#ifndef TB_SUMMARY_WALK_H
#define TB_SUMMARY_WALK_H

#include "derive/summary_rank.h"
#include "base/err.h"

/* Pass 1: every GPU op of c->rank into c->g, indexed by correlation. */
int summary_walk_gpu(struct rankctx *c, struct err *e);

/* Pass 2: the CPU threads (needs pass 1). */
int summary_walk_cpu(struct rankctx *c, struct err *e);

/* An operator's input shapes from its args text (n bytes): the first
 * "Input Dims" (or "Input dims") array member as compact JSON
 * ("[[4,8],[8]]", whitespace outside strings dropped), NULL when there is
 * none, it is empty, or the args stop parsing before it. Owned by caller. */
char *summary_walk_shapes(const char *args, size_t n);

#endif
