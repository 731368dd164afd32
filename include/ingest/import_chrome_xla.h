/*
 * import_chrome_xla.h — JAX and TensorFlow (XProf, jax.profiler) traces in
 * the Chrome importer: they carry no categories, so what an event is
 * follows from its lane. process_name and thread_name metadata mark the
 * device processes ("/device:<TYPE>:<N>") and the lanes on them (streams,
 * "XLA Ops", derived lines); an event without a category is then
 * classified from its lane and args (device ops, GPU annotations, step
 * markers, driver calls, Python frames). State lives in struct
 * import_chrome (dp, lanes), on the ingest thread.
 */
#ifndef TB_IMPORT_CHROME_XLA_H
#define TB_IMPORT_CHROME_XLA_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/import_chrome.h"

/* process_name metadata: remembers (or forgets) an XLA device process. */
void import_chrome_xla_note_process(struct import_chrome *c, const char *pid, size_t pn, const char *name,
                                    size_t n);

/* thread_name metadata: what the lane's name says it holds. */
void import_chrome_xla_note_thread(struct import_chrome *c, uint32_t track, const char *name, size_t n);

/* Kind (and name, correlation) of an event whose category says nothing,
 * from its lane and args; TB_K_OTHER when nothing applies. */
void import_chrome_xla_classify(struct import_chrome *c, const struct import_chrome_ev *ev, uint32_t track,
                                enum tb_kind *kind, uint32_t *name, int64_t *corr);

#endif
