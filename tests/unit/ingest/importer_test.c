/* importer_test — the format table: each probe recognises its own samples
 * and nothing else, and the driver refuses what it cannot import. */
#include "../../../server/ingest/importer.c"
#include "harness.h"

#include "base/fsutil.h"
#include "base/xmalloc.h"

#include <unistd.h>

static int probe_all(const char *head, size_t n, const unsigned char *magic, size_t mn, const char **who)
{
    struct import_probe p = { magic, mn, head, n, "x" };
    int best = 0;
    *who = "none";
    for (int i = 0; importer_table[i]; i++) {
        int s = importer_table[i]->probe(&p);
        if (s > best) {
            best = s;
            *who = importer_table[i]->name;
        }
    }
    return best;
}

static void test_probes(void)
{
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        { "{\"traceEvents\": []}", "chrome" },
        { "  [{\"ph\": \"X\"}]", "chrome" },
        { "\xEF\xBB\xBF{\"schemaVersion\":1,\"traceEvents\":[]}", "chrome" },
        { "{\"schema\": \"1.0.1\", \"nodes\": []}", "execution_trace" },
        { "[[-1, 1, 37888, 7], [1, 2, 3, 4]]", "memory_timeline" },
        { "{\"rocprofiler-sdk-tool\": [{}]}", "rocprofiler" },
        { "{\"something\": 1}", "chrome" }, /* JSON: tried, and told what is missing */
        { "hello", "none" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *who;
        probe_all(cases[i].text, strlen(cases[i].text), (const unsigned char *)cases[i].text,
                  strlen(cases[i].text) < 16 ? strlen(cases[i].text) : 16, &who);
        CHECK_EQ_STR(who, cases[i].want);
    }
    const char *who;
    unsigned char sq[16];
    memcpy(sq, "SQLite format 3", 16);
    probe_all("", 0, sq, 16, &who);
    CHECK_EQ_STR(who, "nsys");
    const char xp[] = "\x0a\xa1\xf0\x08\x12\x0e/host:metadata\"";
    probe_all(xp, sizeof xp - 1, (const unsigned char *)xp, 16, &who);
    CHECK_EQ_STR(who, "xplane");
}

static void test_src_read_joins_head_and_stream(void)
{
    struct instream *in;
    struct err e;
    struct instream_limits lim = { 0, 0, 0 };
    const char rest[] = "world";
    REQUIRE(instream_open_mem(rest, 5, &lim, &in, &e) == 0);
    struct import_src src = { in, "hello ", 6, 0 };
    char buf[4], out[32];
    size_t got, n = 0;
    do {
        REQUIRE(import_src_read(&src, buf, sizeof buf, &got, &e) == 0);
        memcpy(out + n, buf, got);
        n += got;
    } while (got);
    out[n] = '\0';
    CHECK_EQ_STR(out, "hello world");
    instream_close(in);
}

static void test_refusals_name_the_file(void)
{
    char dir[] = "/tmp/tb_importer_XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char *path = xasprintf("%s/et.json", dir), *db = xasprintf("%s/run.db", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\": \"x\"}]}", f);
    fclose(f);
    struct rundb_writer *w;
    struct err e;
    REQUIRE(rundb_create(db, 1 << 20, dir, &w, &e) == 0);
    REQUIRE(rundb_begin_rank(w, 0, "et.json", 10, &e) == 0);
    struct import_ctx ctx = { NULL, NULL, 1 << 20, NULL };
    struct instream_limits lim = { 0, 0, 0 };
    CHECK_EQ_INT(importer_import_file(path, "et.json", &lim, w, &ctx, &e), ERR_UNSUPPORTED);
    CHECK(strncmp(e.msg, "et.json: ", 9) == 0);
    CHECK(strstr(e.msg, "execution trace") != NULL);
    CHECK_EQ_INT(importer_import_file("/nonexistent.json", "gone.json", &lim, w, &ctx, &e), ERR_NOT_FOUND);
    rundb_abort(w);
    fsutil_rmtree(dir, &e);
    free(path);
    free(db);
}

int main(void)
{
    RUN(test_probes);
    RUN(test_src_read_joins_head_and_stream);
    RUN(test_refusals_name_the_file);
    return harness_done("importer_test");
}
