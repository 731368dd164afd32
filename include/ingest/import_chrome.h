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

#include "ingest/importer.h"

extern const struct importer importer_chrome;

#endif
