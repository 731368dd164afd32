/* import_chrome_fuzz.c — the importer front door (importer_import_file:
 * gzip detection, format probes, the Chrome/Kineto importer) into a fresh
 * run database. The input is written to a file in a private temp folder,
 * imported as rank 0, the run is finished and closed (or aborted on an
 * error), and the folder is removed.
 * Invariants: an error has a code and a message; on success the rows in the
 * database match the rank's stats, no event is counted twice (every stat
 * but counters, which are one row per series, adds up to at most the
 * events read), no slice has a negative duration, every child lies on
 * its parent's track, starting inside it, at another level (deeper when
 * wholly inside), and no two slices of one level overlap. Leaks are
 * caught by LeakSanitizer. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "import_fuzz.h"
#include "ingest/importer.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    const char *base = getenv("TMPDIR");
    char dir[512], file[600], db[600];
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 64u << 20, 200, 0 };
    struct import_ctx ctx = { NULL, NULL, 1u << 20, NULL };
    struct tb_rank_stats st;
    int rc;

    snprintf(dir, sizeof dir, "%s/import_chrome_fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) abort();
    snprintf(file, sizeof file, "%s/in.json", dir);
    snprintf(db, sizeof db, "%s/run.db", dir);
    FILE *f = fopen(file, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) abort();

    if (rundb_create(db, 1u << 20, dir, &w, &e) != 0) abort();
    if (rundb_begin_rank(w, 0, "in.json", (int64_t)n, &e) != 0) abort();
    rc = importer_import_file(file, "in.json", &lim, w, &ctx, &e);
    if (rc == 0) rc = rundb_finish_rank(w, &st, &e);
    if (rc != 0) {
        if (rc != e.code || rc >= 0 || !e.msg[0]) abort();
        if (rc != ERR_INVALID && rc != ERR_UNSUPPORTED && rc != ERR_TOO_LARGE) abort(); /* never I/O or a bug */
        rundb_abort(w);
    } else {
        if (!ctx.format) abort();
        if (st.slices + st.flows + st.instants + st.mems + st.metadata + st.dropped > st.events) abort();
        if (rundb_close_writer(w, &e) != 0) abort();
        fuzz_check_run(db, &st);
    }
    if (fsutil_rmtree(dir, &e) != 0) abort();
    return 0;
}
