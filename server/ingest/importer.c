#define LOG_MODULE "importer"
#include "ingest/importer.h"

#include <string.h>

#include "ingest/import_chrome.h"
#include "ingest/import_nsys.h"

/* --- recognised files we cannot import ---------------------------------- */

static const char *skip_ws(const char *s, size_t n, size_t *i)
{
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 && *i == 0) *i = 3;
    while (*i < n && (s[*i] == ' ' || s[*i] == '\n' || s[*i] == '\r' || s[*i] == '\t')) (*i)++;
    return *i < n ? s + *i : NULL;
}

static int head_has(const struct import_probe *p, const char *needle)
{
    return p->head_n && memmem(p->head, p->head_n, needle, strlen(needle)) != NULL;
}

static int probe_xplane(const struct import_probe *p)
{
    /* An XSpace protobuf starts with field 1 (planes), length-delimited, and
     * plane names such as "/host:CPU" or "/device:GPU:0" come early. */
    if (p->head_n < 8 || (unsigned char)p->head[0] != 0x0a) return 0;
    size_t n = p->head_n < 512 ? p->head_n : 512;
    if (memmem(p->head, n, "/host:", 6) || memmem(p->head, n, "/device:", 8)) return 100;
    return 0;
}

static int probe_exec_trace(const struct import_probe *p)
{
    size_t i = 0;
    const char *c = skip_ws(p->head, p->head_n, &i);
    if (!c || *c != '{') return 0;
    return head_has(p, "\"nodes\"") && head_has(p, "\"schema\"") && !head_has(p, "\"traceEvents\"") ? 100 : 0;
}

static int probe_mem_timeline(const struct import_probe *p)
{
    size_t i = 0;
    const char *c = skip_ws(p->head, p->head_n, &i);
    if (!c || *c != '[') return 0;
    i++;
    c = skip_ws(p->head, p->head_n, &i);
    return c && *c == '[' ? 100 : 0;
}

static int probe_rocprof(const struct import_probe *p)
{
    size_t n = p->head_n < 4096 ? p->head_n : 4096;
    return n && memmem(p->head, n, "\"rocprofiler-sdk-tool\"", 22) ? 100 : 0;
}

static const struct importer importer_xplane = {
    "xplane", probe_xplane, NULL,
    "this is an XPlane protobuf (*.xplane.pb) from the TensorFlow/JAX profiler, which traceboard cannot read. "
    "Upload the Chrome-format trace instead: jax.profiler.trace(dir, create_perfetto_trace=True) writes "
    "perfetto_trace.json.gz next to it, and TensorBoard's profile plugin writes *.trace.json.gz."
};

static const struct importer importer_exec_trace = {
    "execution_trace", probe_exec_trace, NULL,
    "this is a PyTorch execution trace (ExecutionTraceObserver: {\"schema\", \"nodes\": [...]}), a graph of "
    "operators without timings. Upload the profiler trace of the same run instead "
    "(*.pt.trace.json[.gz] from torch.profiler / tensorboard_trace_handler)."
};

static const struct importer importer_mem_timeline = {
    "memory_timeline", probe_mem_timeline, NULL,
    "this is a raw memory timeline (profiler.export_memory_timeline(...) rows of [time, action, bytes, "
    "category]), not a trace. Upload the profiler trace recorded with profile_memory=True instead: its "
    "[memory] events give the memory view."
};

static const struct importer importer_rocprof = {
    "rocprofiler", probe_rocprof, NULL,
    "this is rocprofiler-sdk JSON output (\"rocprofiler-sdk-tool\"), which is not a Chrome trace. Profile "
    "with torch.profiler on ROCm instead: it writes a Kineto *.pt.trace.json that traceboard reads."
};

const struct importer *const importer_table[] = {
    &importer_nsys, &importer_xplane, &importer_rocprof, &importer_exec_trace, &importer_mem_timeline,
    &importer_chrome, NULL,
};

/* --- driver -------------------------------------------------------------- */

#define HEAD_BYTES (64 * 1024)

int import_src_read(void *arg, char *dst, size_t cap, size_t *got, struct err *e)
{
    struct import_src *s = arg;
    if (s->head_pos < s->head_n) {
        size_t n = s->head_n - s->head_pos;
        if (n > cap) n = cap;
        memcpy(dst, s->head + s->head_pos, n);
        s->head_pos += n;
        *got = n;
        return 0;
    }
    return instream_read(s->in, dst, cap, got, e);
}

int importer_import_file(const char *path, const char *display_name, const struct instream_limits *lim,
                         struct rundb_writer *w, struct import_ctx *ctx, struct err *e)
{
    struct instream *in;
    char head[HEAD_BYTES];
    size_t head_n = 0;
    int rc;

    if ((rc = instream_open_file(path, lim, &in, e)) != 0) return rc;
    while (head_n < sizeof head) {
        size_t got;
        if ((rc = instream_read(in, head + head_n, sizeof head - head_n, &got, e)) != 0) {
            instream_close(in);
            return err_prefix(e, "%s", display_name);
        }
        if (!got) break;
        head_n += got;
    }
    if (head_n == 0) {
        int gz = instream_is_gzip(in); /* read before the close frees it */
        instream_close(in);
        return err_set(e, ERR_INVALID, "%s: the file is empty%s", display_name, gz ? " once decompressed" : "");
    }

    struct import_probe p;
    p.magic = instream_magic(in, &p.magic_n);
    p.head = head;
    p.head_n = head_n;
    p.filename = display_name;
    const struct importer *best = NULL;
    int best_score = 0;
    for (int i = 0; importer_table[i]; i++) {
        int sc = importer_table[i]->probe(&p);
        if (sc > best_score) {
            best_score = sc;
            best = importer_table[i];
        }
    }
    if (!best) {
        instream_close(in);
        return err_set(e, ERR_UNSUPPORTED,
                       "%s: not a trace traceboard can read (neither Chrome/Kineto JSON nor a known format). "
                       "Upload the *.pt.trace.json[.gz] written by torch.profiler.",
                       display_name);
    }
    if (!best->import) {
        instream_close(in);
        return err_set(e, ERR_UNSUPPORTED, "%s: %s", display_name, best->refusal);
    }
    struct import_src src = { in, head, head_n, 0 };
    rc = best->import(&src, w, ctx, e);
    instream_close(in);
    if (rc != 0) return err_prefix(e, "%s", display_name);
    return 0;
}
