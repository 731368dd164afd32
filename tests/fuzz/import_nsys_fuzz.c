/* import_nsys_fuzz.c — the Nsight Systems SQLite importer through the
 * importer front door (importer_import_file: gzip detection, probes, then
 * import_nsys) into a fresh run database. The input is written to a file in
 * a private temp folder, which is also TMPDIR so the importer's temp copy
 * lands there; the rank is finished and the writer closed (or aborted on an
 * error). Invariants: an error has a code and a message and is never I/O or
 * a bug (ERR_INVALID, ERR_UNSUPPORTED, ERR_TOO_LARGE only); the temp copy is
 * gone in every case; on success the rows match the rank's stats, no slice
 * has a negative duration, and every child lies inside its parent on the
 * same track. Leaks are caught by LeakSanitizer. The corpus holds a crafted
 * export (plain, gzip, truncated, bit-flipped) and SQLite files that are not
 * exports. */
#include <dirent.h>
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

static int temp_copy_left(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int left = 0;
    if (!d) abort();
    while ((de = readdir(d)) != NULL) left |= strncmp(de->d_name, "tb-nsys-", 8) == 0;
    closedir(d);
    return left;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static char base[512];
    char dir[600], file[700], db[700];
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 64u << 20, 200, 0 };
    struct import_ctx ctx = { NULL, NULL, 1u << 20, NULL };
    struct tb_rank_stats st;
    int rc;

    if (!base[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(base, sizeof base, "%s", t && *t ? t : "/tmp");
    }
    snprintf(dir, sizeof dir, "%s/import_nsys_fuzz-XXXXXX", base);
    if (!mkdtemp(dir)) abort();
    if (setenv("TMPDIR", dir, 1) != 0) abort();
    snprintf(file, sizeof file, "%s/in.sqlite", dir);
    snprintf(db, sizeof db, "%s/run.db", dir);
    FILE *f = fopen(file, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) abort();

    if (rundb_create(db, 1u << 20, dir, &w, &e) != 0) abort();
    if (rundb_begin_rank(w, 0, "in.sqlite", (int64_t)n, &e) != 0) abort();
    rc = importer_import_file(file, "in.sqlite", &lim, w, &ctx, &e);
    if (temp_copy_left(dir)) abort();
    if (rc == 0) rc = rundb_finish_rank(w, &st, &e);
    if (rc != 0) {
        if (rc != e.code || rc >= 0 || !e.msg[0]) abort();
        if (rc != ERR_INVALID && rc != ERR_UNSUPPORTED && rc != ERR_TOO_LARGE) abort();
        rundb_abort(w);
    } else {
        if (!ctx.format) abort();
        if (st.slices + st.instants + st.dropped != st.events) abort();
        if (rundb_close_writer(w, &e) != 0) abort();
        fuzz_check_run(db, &st);
    }
    if (setenv("TMPDIR", base, 1) != 0) abort();
    if (fsutil_rmtree(dir, &e) != 0) abort();
    return 0;
}
