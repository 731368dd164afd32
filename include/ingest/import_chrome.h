/*
 * import_chrome.h — the Chrome trace-event JSON importer: PyTorch/Kineto
 * traces of every schema seen 2020–2026 and generic Chrome/Perfetto JSON.
 *
 * Streaming: the file is cut into one event object at a time by jtok and
 * the hot fields are pulled from each object in place; only the non-event
 * top-level members (deviceProperties, distributedInfo, ...) are parsed
 * with jansson, and each is bounded by ctx->max_value. Memory therefore
 * stays flat whatever the trace size.
 *
 * Repairs (each recorded as a rundb note, never silent): X events without
 * dur or with negative dur get dur 0; a file truncated after complete events
 * keeps them; bytes after the JSON document are ignored; unknown phases,
 * async events and events without ts are dropped.
 *
 * JAX/TensorFlow (XProf) traces have no categories: events whose category
 * names no kind are classified by lane ("/device:GPU:N" processes become
 * GPU tracks of device N, their stream ops kernels/copies/sets, derived
 * XProf lines GPU annotations) and by args (host "step_num" markers become
 * `<name>#<N>` steps, CUPTI "correlation_id" calls driver calls). Process
 * and thread names must come before a lane's first event, as XProf writes
 * them. ctx->format is "chrome-xla" for such traces.
 */
#ifndef TB_IMPORT_CHROME_H
#define TB_IMPORT_CHROME_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jtok.h"
#include "ingest/importer.h"
#include "store/model.h"

extern const struct importer importer_chrome;

/* ---- Inside the importer: import_chrome.c and import_chrome_xla.c ---- */

struct import_chrome_open; /* an open 'B' event (import_chrome.c) */

/* JAX and TensorFlow (XProf, jax.profiler) traces carry no categories:
 * what an event is follows from where it lies. A process named
 * "/device:<TYPE>:<N>" (TYPE not CPU) is accelerator N; on it, "Stream #.."
 * threads (and "XLA Ops" when the device has no streams, as on a TPU)
 * hold the ops the device ran, and the other threads ("XLA Modules",
 * "Steps", "TensorFlow Ops", ...) are derived from those ops, so they are
 * kept as GPU annotations and never counted twice. Every other process is
 * the host. XProf writes all metadata before the events; a name that comes
 * after a thread's first event does not reclassify the events before it. */
struct import_chrome_devproc {
    char *pid;
    size_t pid_n;
    int device;
    int gpu; /* TYPE is GPU: its "XLA Ops" line is derived from the streams */
};

enum lane_kind { LANE_UNSEEN = 0, LANE_HOST, LANE_OPS, LANE_DERIVED };

enum lane_name { TN_NONE = 0, TN_STREAM, TN_XLA_OPS, TN_OTHER };

struct import_chrome_lane {
    uint8_t kind;  /* enum lane_kind, resolved at the track's first slice */
    uint8_t tname; /* enum lane_name, from its thread_name metadata */
};

/* One import's state, on the ingest thread. */
struct import_chrome {
    struct rundb_writer *w;
    struct import_ctx *ctx;
    struct import_src *src;
    json_t *header;
    uint64_t events;
    int saw_kineto;
    char *scratch;          /* decoded strings */
    size_t scratch_cap;
    struct import_chrome_open *bstack; /* open 'B' events across tracks */
    size_t nb, bcap;
    uint32_t unnamed;
    struct import_chrome_devproc *dp;  /* XLA device processes ("/device:GPU:0") */
    size_t ndp;
    struct import_chrome_lane *lanes;  /* by track id: what the metadata made of it */
    size_t lanes_cap;
};

/* One event's members, as tokens of its object. */
struct import_chrome_ev {
    struct jtok_val ph, cat, name, pid, tid, ts, dur, id, bp, s, args, bind_id;
};

/* The integer members of an args object the importer reads: correlation
 * and External id for slices, the [memory] fields for memory events;
 * the last of a key wins, the rest stay as import_chrome_args_scan clears
 * them (0, totals -1). */
struct import_chrome_args {
    int64_t corr, ext;
    int64_t dev_type, dev_id, addr, bytes, total_alloc, total_reserved;
    int has_bytes;
};

/* args's members up to the first that does not parse. */
void import_chrome_args_scan(const struct jtok_val *args, struct import_chrome_args *a);

/* The members of the event object [p, p + n) (cut out by
 * jtok_value_extent); 0, or < 0 with e filled. */
int import_chrome_event_members(const char *p, size_t n, struct import_chrome_ev *ev, struct err *e);

/* An event read in one pass where its bytes lie (see
 * import_chrome_event_fast). */
struct import_chrome_event {
    struct import_chrome_ev ev;
    struct import_chrome_args a; /* of the last args object, when has_a */
    int has_a;
};

/* The event object at p (its '{', else 0) read in place, the bytes ending
 * at end (the window's end): 1 and *n its length when it ends before end and every
 * member reads, the args object's integers read on the way; else 0, having
 * done nothing. Where it returns 1, jtok_value_extent cuts out the same n
 * bytes, import_chrome_event_members reads the same members from them and
 * import_chrome_args_scan the same integers from its args object
 * (chrome_event_fuzz checks it). */
int import_chrome_event_fast(const char *p, const char *end, struct import_chrome_event *x, size_t *n);

/* Decodes a string value into c's scratch (borrowed until the next call);
 * returns its length. */
size_t import_chrome_str_decode(struct import_chrome *c, const struct jtok_val *v, const char **out);

/* pid/tid as text: numbers as written, strings decoded ("7" == 7). Uses
 * buf (64 bytes) for decoded strings so two ids can be alive at once. */
void import_chrome_id_text(const struct jtok_val *v, char *buf, size_t cap, const char **s, size_t *n);

#endif
