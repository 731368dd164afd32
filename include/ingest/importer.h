/*
 * importer.h — the table of trace formats. Each importer has a probe (how
 * sure it is that the first bytes are its format) and an import function
 * that streams the file into a rundb_writer. Formats that we recognise but
 * cannot read (execution traces, XPlane protobufs, rocprofiler JSON, ...)
 * are entries without an import function and with a message telling the
 * user what the file is and what to upload instead. The core (ingest) only
 * calls importer_import_file(); it never names a format.
 *
 * Adding a format: write server/import_<fmt>.c exporting one
 * `const struct importer importer_<fmt>` and add it to the table in
 * importer.c.
 *
 * Everything here runs on the ingest thread; importers keep no state
 * between calls.
 */
#ifndef TB_IMPORTER_H
#define TB_IMPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "ingest/instream.h"
#include "store/rundb_writer.h"

/* What a probe sees: raw first bytes and the first inflated bytes. */
struct import_probe {
    const unsigned char *magic;  /* raw (possibly compressed) first bytes */
    size_t magic_n;
    const char *head;            /* inflated content start */
    size_t head_n;
    const char *filename;        /* original name, may be "" */
};

/* The content stream an import function reads: the probed head first, then
 * the rest of the instream. */
struct import_src {
    struct instream *in;
    const char *head;
    size_t head_n, head_pos;
};

/* Fills dst from src (signature of jtok_fill_fn). */
int import_src_read(void *src, char *dst, size_t cap, size_t *got, struct err *e);

struct import_ctx {
    /* progress: called now and then with raw bytes consumed and events read */
    void (*progress)(void *arg, uint64_t raw_done, uint64_t events);
    void *progress_arg;
    size_t max_value;            /* largest single JSON value (event or header field) */
    const char *format;          /* OUT: set by the importer, static string */
};

struct importer {
    const char *name;
    /* 0 = not mine, 1..100 = confidence */
    int (*probe)(const struct import_probe *p);
    /* NULL for recognised-but-refused formats */
    int (*import)(struct import_src *src, struct rundb_writer *w, struct import_ctx *ctx, struct err *e);
    /* the message for refused formats */
    const char *refusal;
};

/* Opens path, probes, and imports it as the writer's current rank.
 * Refused or unknown formats are ERR_UNSUPPORTED with a message naming the
 * file type and what to upload instead. */
int importer_import_file(const char *path, const char *display_name, const struct instream_limits *lim,
                         struct rundb_writer *w, struct import_ctx *ctx, struct err *e);

/* The importers, for tests. Terminated by a NULL name. */
extern const struct importer *const importer_table[];

#endif
