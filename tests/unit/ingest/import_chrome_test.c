/* import_chrome_test.c — the Chrome/Kineto importer end to end: crafted
 * traces are written to temp files, imported with importer_import_file into
 * a fresh run database, and the result is checked with SQL. Covers both
 * top-level forms, header placement, pid/tid spellings, timestamp
 * exactness, nesting (out of order, 100 deep, zero-length), names, flows,
 * [memory], B/E, counters, metadata, every repair note, truncation,
 * malformed input and the refusal of non-trace formats. JAX and
 * TensorFlow lanes are in import_chrome_xla_test.c. */
#include "base/sbuf.h"
#include "import_chrome_fixture.h"

static void test_bare_array(void)
{
    struct result r;
    import_text("[\n{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::add\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":5},\n"
                "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":103,\"dur\":2,"
                "\"args\":{\"correlation\":77,\"stream\":7,\"device\":0}},\n"
                "{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":101,"
                "\"dur\":1,\"args\":{\"correlation\":77,\"External id\":5}}\n]\n",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto-2020");
    CHECK_EQ_INT(r.st.events, 3);
    CHECK_EQ_INT(r.st.slices, 3);
    CHECK_IDENTITY(r.st);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM track");
    /* the kernel's track is a GPU stream, device 0 stream 7 */
    CHECK_Q(r.db, 1, "SELECT kind FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 0, "SELECT device FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 7, "SELECT stream FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 77, "SELECT corr FROM slice s JOIN str n ON n.id=s.name WHERE n.s='k'");
    CHECK_Q(r.db, 5, "SELECT ext FROM slice s JOIN str n ON n.id=s.name WHERE n.s='cudaLaunchKernel'");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice WHERE corr=77");
    /* slice ids follow (track, ts): add (100) before its child runtime (101) */
    CHECK_Q(r.db, 1, "SELECT depth FROM slice s JOIN str n ON n.id=s.name WHERE n.s='cudaLaunchKernel'");
    CHECK_Q(r.db, 100000, "SELECT t0 FROM rank");
    CHECK_Q(r.db, 105000, "SELECT t1 FROM rank");
    result_close(&r);
}

static void test_object_header_after_events(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,\"ts\":10.5,\"dur\":1},\n"
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":99,\"tid\":99,\"ts\":10,\"dur\":3}\n"
                "],\n"
                "\"schemaVersion\": 1,\n"
                "\"deviceProperties\": [{\"id\":0,\"name\":\"GPU zero\"},{\"id\":1,\"name\":\"NVIDIA H100 80GB HBM3\"}],\n"
                "\"distributedInfo\": {\"backend\":\"nccl\",\"rank\":3,\"world_size\":8},\n"
                "\"baseTimeNanoseconds\": 1790857026000000001,\n"
                "\"traceName\": \"/tmp/x.json\"\n}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto");
    CHECK_Q(r.db, 1790857026000000001LL, "SELECT base_ns FROM rank"); /* above 2^53, exact */
    CHECK_Q(r.db, 1, "SELECT json_extract(header,'$.schemaVersion') FROM rank");
    CHECK_QT(r.db, "/tmp/x.json", "SELECT json_extract(header,'$.traceName') FROM rank");
    CHECK_Q(r.db, 3, "SELECT json_extract(distributed,'$.rank') FROM rank");
    /* the device is the one whose id is the GPU track's pid (1), not the first */
    CHECK_QT(r.db, "NVIDIA H100 80GB HBM3", "SELECT json_extract(device,'$.name') FROM rank");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM note");
    result_close(&r);
}

static void test_gzip_input(void)
{
    const char *json = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
                       "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":1,\"ts\":1.5,\"s\":\"g\"}]}";
    char *path = xasprintf("%s/gz-src.json.gz", tmpdir);
    gzFile g = gzopen(path, "wb");
    REQUIRE(g != NULL);
    gzwrite(g, json, (unsigned)strlen(json));
    gzclose(g);
    FILE *f = fopen(path, "rb");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct result r;
    import_bytes("trace.json.gz", buf, n, &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
    CHECK_QT(r.db, "g", "SELECT scope FROM instant");
    CHECK_Q(r.db, 1500, "SELECT ts FROM instant");
    CHECK_IDENTITY(r.st);
    result_close(&r);
    free(path);
}

/* ====================================================================== */
/* tracks and time                                                        */

static void test_pid_tid_spellings(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"a\",\"pid\":7,\"tid\":9,\"ts\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"b\",\"pid\":\"7\",\"tid\":\"9\",\"ts\":2,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"c\",\"pid\":\"7\",\"tid\":9,\"ts\":3,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"d\",\"pid\":7,\"tid\":\"\\u0039\",\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"s\",\"id\":1,\"pid\":7,\"tid\":9,\"ts\":1,\"cat\":\"async\",\"name\":\"f\"},\n"
                "{\"ph\":\"X\",\"name\":\"e\",\"pid\":7,\"tid\":10,\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"s\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":4,\"dur\":1}\n,"
                /* the same invalid UTF-8 pid twice: one track, shown repaired */
                "{\"ph\":\"X\",\"name\":\"u1\",\"pid\":\"gpu\xff\",\"tid\":1,\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"u2\",\"pid\":\"gpu\xff\",\"tid\":1,\"ts\":5,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM track WHERE pid='gpu?'");
    CHECK_Q(r.db, 4, "SELECT count(*) FROM track");
    CHECK_Q(r.db, 4, "SELECT nslices FROM track WHERE pid='7' AND tid='9'");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT track) FROM slice WHERE name IN (SELECT id FROM str WHERE s IN ('a','b','c','d'))");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM flow f JOIN track t ON t.id=f.track WHERE t.pid='7' AND t.tid='9'");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM track WHERE pid='Spans' AND tid='PyTorch Profiler'");
    result_close(&r);
}

static void test_timestamps(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                /* integer µs since the epoch */
                "{\"ph\":\"X\",\"name\":\"int\",\"pid\":1,\"tid\":1,\"ts\":1606910596297023,\"dur\":7},\n"
                /* float µs with an ns fraction: a double would round these */
                "{\"ph\":\"X\",\"name\":\"float\",\"pid\":1,\"tid\":2,\"ts\":1606910596297023.456,\"dur\":0.001},\n"
                "{\"ph\":\"X\",\"name\":\"float2\",\"pid\":1,\"tid\":3,\"ts\":1606910596297023.457,\"dur\":1.999},\n"
                /* more fraction digits than ns: rounded */
                "{\"ph\":\"X\",\"name\":\"round\",\"pid\":1,\"tid\":4,\"ts\":123.4567,\"dur\":0.0004},\n"
                "{\"ph\":\"X\",\"name\":\"exp\",\"pid\":1,\"tid\":5,\"ts\":1.5e3,\"dur\":2E1},\n"
                "{\"ph\":\"X\",\"name\":\"str\",\"pid\":1,\"tid\":6,\"ts\":\"88123.456\",\"dur\":\"1\"},\n"
                "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":7,\"ts\":-2,\"dur\":1}\n"
                "],\"baseTimeNanoseconds\":1700000000000000000}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 1606910596297023000LL, q, "ts", "int");
    CHECK_Q(r.db, 7000, q, "dur", "int");
    CHECK_Q(r.db, 1606910596297023456LL, q, "ts", "float");
    CHECK_Q(r.db, 1, q, "dur", "float");
    CHECK_Q(r.db, 1606910596297023457LL, q, "ts", "float2");
    CHECK_Q(r.db, 1999, q, "dur", "float2");
    CHECK_Q(r.db, 123457, q, "ts", "round");
    CHECK_Q(r.db, 0, q, "dur", "round");
    CHECK_Q(r.db, 1500000, q, "ts", "exp");
    CHECK_Q(r.db, 20000, q, "dur", "exp");
    CHECK_Q(r.db, 88123456, q, "ts", "str");
    CHECK_Q(r.db, -2000, q, "ts", "neg");
    /* base-relative times stay relative; the base is kept beside them */
    CHECK_Q(r.db, 1700000000000000000LL, "SELECT base_ns FROM rank");
    CHECK_Q(r.db, -2000, "SELECT t0 FROM rank");
    CHECK_Q(r.db, 1606910596297030000LL, "SELECT t1 FROM rank"); /* int: ts + 7 µs */
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* Times near the int64 ends: no overflow in end = ts + dur. */
static void test_extreme_times(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"late\",\"pid\":1,\"tid\":1,\"ts\":9000000000000000,\"dur\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":9000000000000001,\"dur\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"early\",\"pid\":1,\"tid\":2,\"ts\":-9000000000000000,\"dur\":1},\n"
                "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":3,\"ts\":-9000000000000000},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"huge\",\"pid\":1,\"tid\":4,\"ts\":1e300,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 4, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice WHERE ts + dur < ts"); /* none may wrap */
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice WHERE dur < 0");
    CHECK_Q(r.db, 1, "SELECT depth FROM slice s JOIN str n ON n.id=s.name WHERE n.s='inner'");
    CHECK(notes(r.db, "dropped", "%ts is not a finite number%") == 1);
    CHECK(notes(r.db, "repaired", "slice ending past the largest representable time%") == 2);
    CHECK_Q(r.db, INT64_MAX, "SELECT t1 FROM rank");
    result_close(&r);
}

/* ====================================================================== */
/* nesting                                                                */

static void test_out_of_order_nesting(void)
{
    struct result r;
    /* A [0,100) contains B [10,60) contains C [20,30); written C, B, A,
     * plus a sibling D [60,70) that starts where B ends. */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":10},\n"
                "{\"ph\":\"X\",\"name\":\"D\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":10},\n"
                "{\"ph\":\"X\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50},\n"
                "{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 0, q, "depth", "A");
    CHECK_Q(r.db, 1, q, "depth", "B");
    CHECK_Q(r.db, 2, q, "depth", "C");
    CHECK_Q(r.db, 1, q, "depth", "D");
    CHECK_Q(r.db, q_int(r.db, q, "id", "A"), q, "parent", "B");
    CHECK_Q(r.db, q_int(r.db, q, "id", "B"), q, "parent", "C");
    CHECK_Q(r.db, q_int(r.db, q, "id", "A"), q, "parent", "D");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice WHERE parent IS NULL");
    /* ids are in (track, ts) order */
    CHECK_Q(r.db, 1, q, "id", "A");
    CHECK_Q(r.db, 4, q, "id", "D");
    CHECK_Q(r.db, 2, "SELECT max_depth FROM track");
    CHECK_Q(r.db, 1, "SELECT first_slice FROM track");
    CHECK_Q(r.db, 4, "SELECT last_slice FROM track");
    result_close(&r);
}

static void test_deep_nesting(void)
{
    /* 100 levels, level i = [i, 1000 - i), written in a shuffled order */
    char *json = xmalloc(100 * 120 + 64);
    size_t k = (size_t)sprintf(json, "{\"traceEvents\":[");
    int order[100];
    for (int i = 0; i < 100; i++) order[i] = (i * 37) % 100;
    for (int j = 0; j < 100; j++) {
        int i = order[j];
        k += (size_t)sprintf(json + k, "%s{\"ph\":\"X\",\"name\":\"L%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":%d}",
                             j ? "," : "", i, i, 1000 - 2 * i);
    }
    sprintf(json + k, "]}");
    struct result r;
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 99, "SELECT max_depth FROM track");
    CHECK_Q(r.db, 100, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s = 'L' || s.depth");
    CHECK_Q(r.db, 99, "SELECT count(*) FROM slice c JOIN slice p ON p.id=c.parent WHERE p.depth = c.depth - 1");
    result_close(&r);
}

static void test_zero_length(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"P\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
                "{\"ph\":\"X\",\"name\":\"Z0\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"Zmid\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"Zend\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"after\",\"pid\":1,\"tid\":1,\"ts\":160,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 5, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 0, q, "dur", "Zmid");
    CHECK_Q(r.db, 1, q, "depth", "Z0");
    CHECK_Q(r.db, 1, q, "depth", "Zmid");
    CHECK_Q(r.db, 0, q, "depth", "Zend"); /* at the parent's end: outside it */
    /* a zero-length slice never becomes a parent */
    CHECK_Q(r.db, 1, q, "depth", "after");
    CHECK_Q(r.db, q_int(r.db, q, "id", "P"), q, "parent", "after");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM note");
    result_close(&r);
}

/* ====================================================================== */
/* names and strings                                                      */

static void test_names(void)
{
    size_t ln = 6000;
    char *longname = xmalloc(ln + 1);
    for (size_t i = 0; i < ln; i++) longname[i] = "void at::native::kernel<float, 4>(int&&) "[i % 41];
    longname[ln] = '\0';
    char *json = xasprintf(
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"void f<int, &g>(a&&b) <built-in function isinstance> \\u00e9\\u20ac \\ud83d\\ude00 \\\"q\\\" \\\\\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"raw \xc3\xa9 \xe2\x82\xac\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"lone \\ud800 surrogate\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"bad \xff\xfe utf8\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"bad \xff\xfe utf8\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":12345,\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":1},\n"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":13,\"dur\":1,\"args\":{\"a\":\"<&>\"}}\n"
        "]}",
        longname);
    struct result r;
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    char *got = q_text(r.db, "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE length(n.s) > 5000");
    CHECK(strlen(got) == ln && strcmp(got, longname) == 0);
    free(got);
    CHECK_QT(r.db, "void f<int, &g>(a&&b) <built-in function isinstance> \xc3\xa9\xe2\x82\xac \xf0\x9f\x98\x80 \"q\" \\",
             "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=1000 AND s.track=(SELECT id FROM track WHERE pid='1')");
    CHECK_QT(r.db, "raw \xc3\xa9 \xe2\x82\xac", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=3000");
    CHECK_QT(r.db, "lone \xef\xbf\xbd surrogate", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=5000");
    /* invalid UTF-8 is repaired, and the same bad name is one string */
    CHECK_QT(r.db, "bad ?? utf8", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=7000");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM str WHERE s='bad ?? utf8'");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT name) FROM slice WHERE ts IN (7000, 9000)");
    CHECK_QT(r.db, "12345", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=11000");
    CHECK_QT(r.db, "(unnamed)", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=13000");
    CHECK_QT(r.db, "<&>", "SELECT json_extract(args,'$.a') FROM slice WHERE ts=13000");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM str WHERE s = '(unnamed)'");
    result_close(&r);
    free(longname);
}

/* ====================================================================== */
/* event kinds                                                            */

static void test_flows(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"s\",\"id\":10,\"pid\":1,\"tid\":1,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
                "{\"ph\":\"f\",\"id\":10,\"pid\":0,\"tid\":7,\"ts\":9,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
                "{\"ph\":\"s\",\"id\":\"0x1f\",\"pid\":1,\"tid\":1,\"ts\":6,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"t\",\"id\":\"0x1f\",\"pid\":1,\"tid\":2,\"ts\":7,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"f\",\"id\":\"0x1f\",\"pid\":0,\"tid\":7,\"ts\":8,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"f\",\"bind_id\":42,\"pid\":0,\"tid\":7,\"ts\":8,\"cat\":\"fwdbwd\"},\n"
                "{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":8,\"cat\":\"ac2g\",\"name\":\"no id\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.flows, 6);
    CHECK_Q(r.db, 6, "SELECT count(*) FROM flow");
    CHECK_QT(r.db, "e", "SELECT bp FROM flow WHERE fid='10' AND ph='f'");
    CHECK_Q(r.db, 1, "SELECT bp IS NULL FROM flow WHERE fid='10' AND ph='s'");
    CHECK_Q(r.db, 1, "SELECT bp IS NULL FROM flow WHERE fid='0x1f' AND ph='f'");
    CHECK_Q(r.db, 7000, "SELECT ts FROM flow WHERE ph='t'");
    CHECK_Q(r.db, 3, "SELECT count(*) FROM flow WHERE fid='0x1f'");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM flow WHERE fid='42'");
    CHECK_QT(r.db, "ac2g", "SELECT s FROM str WHERE id=(SELECT cat FROM flow WHERE fid='10' AND ph='s')");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT track) FROM flow WHERE ph='f'");
    CHECK(notes(r.db, "dropped", "flow event without id") == 1);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

static void test_memory_events(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                /* 2021 form: no cat, three args */
                "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":5,\"s\":\"t\","
                "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":512}},\n"
                /* 2022+ form */
                "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":6,"
                "\"s\":\"t\",\"args\":{\"Total Reserved\":2097152,\"Total Allocated\":1536,\"Bytes\":-512,"
                "\"Addr\":139872004276224,\"Device Id\":3,\"Device Type\":1,\"Ev Idx\":12}},\n"
                "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":7,\"args\":{\"Device Id\":0}},\n"
                "{\"ph\":\"i\",\"name\":\"Iteration Start: PyTorch Profiler\",\"pid\":1,\"tid\":1,\"ts\":8,\"s\":\"g\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.mems, 2);
    CHECK_Q(r.db, 2, "SELECT count(*) FROM mem");
    CHECK_Q(r.db, 512, "SELECT bytes FROM mem WHERE ts=5000");
    CHECK_Q(r.db, 1, "SELECT total_alloc IS NULL AND total_reserved IS NULL FROM mem WHERE ts=5000");
    CHECK_Q(r.db, -512, "SELECT bytes FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 139872004276224LL, "SELECT addr FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 1536, "SELECT total_alloc FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 2097152, "SELECT total_reserved FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 3, "SELECT dev_id FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 1, "SELECT dev_type FROM mem WHERE ts=6000");
    CHECK(notes(r.db, "dropped", "[memory] event without Bytes") == 1);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM instant");
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* Events are read in place where they lie whole in the reader's window
 * (1 MiB at first) and cut out by the extent scan where one straddles its
 * end: both give the same rows. 40 k events, each with its correlation and
 * External id among other args (nested arrays, a string holding brackets
 * and quotes), cross the window's end ~6 times, at a different member of
 * an event each time. */
static void test_events_across_windows(void)
{
    struct sbuf b = { 0 };
    sbuf_add(&b, "{\"traceEvents\":[\n");
    const int n = 40000;
    for (int i = 0; i < n; i++)
        sbuf_printf(&b,
                    "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"op\\\"%d}\",\"pid\":1,\"tid\":%d,\"ts\":%d,"
                    "\"dur\":1,\"args\":{\"Input Dims\":[[%d,2],[]],\"s\":\"]}\\\"{\",\"correlation\":%d,"
                    "\"External id\":%d}}\n",
                    i ? "," : "", i % 3 ? "cuda_runtime" : "cpu_op", i % 7, 1 + i % 2, i * 2, i, 100000 + i, 7 * i);
    sbuf_add(&b, "]}");
    REQUIRE(b.n > (3u << 20));
    struct result r;
    import_bytes("windows.json", b.p, b.n, &r);
    free(b.p);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.slices, n);
    CHECK_Q(r.db, n, "SELECT count(*) FROM slice WHERE corr = 100000 + ts / 2000 AND ext = 7 * (ts / 2000)");
    CHECK_Q(r.db, n, "SELECT count(*) FROM slice WHERE args LIKE '{\"Input Dims\":[[%%,2],[]],\"s\":\"]}\\\"{\",%%}'");
    CHECK_Q(r.db, n, "SELECT count(*) FROM slice s JOIN str ON str.id = s.name WHERE str.s LIKE 'op\"_}'");
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

static void test_begin_end(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"user_annotation\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":{\"k\":1}},\n"
                "{\"ph\":\"B\",\"name\":\"other thread\",\"pid\":1,\"tid\":2,\"ts\":11},\n"
                "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":12},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":30},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":31},\n"
                "{\"ph\":\"B\",\"name\":\"never closed\",\"pid\":1,\"tid\":3,\"ts\":40},\n"
                "{\"ph\":\"B\",\"name\":\"never closed 2\",\"pid\":1,\"tid\":3,\"ts\":41}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 10000, q, "ts", "outer");
    CHECK_Q(r.db, 20000, q, "dur", "outer");
    CHECK_Q(r.db, 12000, q, "ts", "inner");
    CHECK_Q(r.db, 8000, q, "dur", "inner");
    CHECK_Q(r.db, 1, q, "depth", "inner");
    CHECK_Q(r.db, 1, "SELECT json_extract(args,'$.k') FROM slice s JOIN str n ON n.id=s.name WHERE n.s='outer'");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice");
    CHECK(notes(r.db, "dropped", "'E' event without a matching 'B'%") == 1);
    /* every unclosed B is counted: 'other thread' and the two on tid 3 */
    CHECK(notes(r.db, "dropped", "'B' events never closed%") == 3);
    CHECK_EQ_INT(r.st.events, 8);
    CHECK_EQ_INT(r.st.dropped, 4);
    result_close(&r);
}

static void test_counters(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"C\",\"name\":\"GPU mem\",\"pid\":1,\"ts\":5,\"args\":{\"used\":10,\"free\":5.5}},\n"
                "{\"ph\":\"C\",\"name\":\"GPU mem\",\"pid\":1,\"ts\":6,\"args\":{\"used\":12,\"bad\":NaN,\"s\":\"x\"}},\n"
                "{\"ph\":\"C\",\"name\":\"no args\",\"pid\":1,\"ts\":7}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.counters, 3);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM counter");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM counter c JOIN str n ON n.id=c.name WHERE n.s='GPU mem.used'");
    CHECK_Q(r.db, 55, "SELECT value*10 FROM counter c JOIN str n ON n.id=c.name WHERE n.s='GPU mem.free'");
    CHECK_Q(r.db, 12, "SELECT value FROM counter WHERE ts=6000");
    CHECK(notes(r.db, "dropped", "counter event without args") == 1);
    result_close(&r);

    /* series names (the args' keys) are JSON strings too: escapes decoded */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"C\",\"name\":\"m\\u00e9m\",\"pid\":1,\"ts\":5,"
                "\"args\":{\"caf\\u00e9\":1,\"q\\\"uote\":2,\"tab\\\\x\":3}}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.counters, 3);
    CHECK_Q(r.db, 1, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.caf\xc3\xa9'");
    CHECK_Q(r.db, 2, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.q\"uote'");
    CHECK_Q(r.db, 3, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.tab\\x'");
    result_close(&r);
}

static void test_metadata(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"python3 \\u00e9\"}},\n"
                "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":9,\"args\":{\"name\":\"thread 9 (python)\"}},\n"
                "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":7,\"tid\":9,\"args\":{\"sort_index\":4}},\n"
                "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":7,\"args\":{\"labels\":\"x\"}},\n"
                "{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"7\",\"tid\":\"9\",\"ts\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"b\",\"pid\":7,\"tid\":10,\"ts\":1,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.metadata, 4);
    CHECK_QT(r.db, "thread 9 (python)", "SELECT name FROM track WHERE pid='7' AND tid='9'");
    CHECK_Q(r.db, 4, "SELECT sort FROM track WHERE pid='7' AND tid='9'");
    CHECK_QT(r.db, "python3 \xc3\xa9", "SELECT pname FROM track WHERE pid='7' AND tid='9'");
    CHECK_QT(r.db, "python3 \xc3\xa9", "SELECT pname FROM track WHERE pid='7' AND tid='10'");
    CHECK_Q(r.db, 1, "SELECT name IS NULL FROM track WHERE pid='7' AND tid='10'");
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* ====================================================================== */
/* repairs and errors                                                     */

static void test_repaired_durations(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"nodur\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":-5},\n"
                "{\"ph\":\"X\",\"name\":\"neg2\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":-0.5},\n"
                "{\"ph\":\"X\",\"name\":\"baddur\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":\"soon\"},\n"
                "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"nants\",\"pid\":1,\"tid\":1,\"ts\":NaN,\"dur\":1},\n"
                "{\"name\":\"noph\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "{\"ph\":\"b\",\"name\":\"async\",\"pid\":1,\"tid\":1,\"ts\":1,\"id\":1},\n"
                "{\"ph\":\"Z\",\"name\":\"unknown\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "[1,2],\n"
                "\"a string\"\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 0, q, "dur", "nodur");
    CHECK_Q(r.db, 0, q, "dur", "neg");
    CHECK_Q(r.db, 0, q, "dur", "neg2");
    CHECK_EQ_INT(r.st.slices, 3);
    CHECK(notes(r.db, "repaired", "complete event (X) without dur%") == 1);
    CHECK(notes(r.db, "repaired", "negative dur%") == 2);
    CHECK(notes(r.db, "dropped", "X event whose dur is not a finite number") == 1);
    CHECK(notes(r.db, "dropped", "event without ts") == 1);
    CHECK(notes(r.db, "dropped", "event whose ts is not a finite number") == 1);
    CHECK(notes(r.db, "dropped", "event without a one-letter ph%") == 1);
    CHECK(notes(r.db, "dropped", "async events%") == 1);
    CHECK(notes(r.db, "dropped", "events of an unknown phase") == 1);
    CHECK(notes(r.db, "dropped", "traceEvents element that is not an object") == 2);
    CHECK_QT(r.db, "nots", "SELECT example FROM note WHERE reason='event without ts'");
    CHECK_EQ_INT(r.st.events, 11);
    CHECK_EQ_INT(r.st.repaired, 3);
    CHECK_IDENTITY(r.st);
    CHECK_Q(r.db, 3, "SELECT json_extract(stats,'$.repaired') FROM rank");
    CHECK_Q(r.db, 11, "SELECT json_extract(stats,'$.events') FROM rank");
    result_close(&r);
}

static void test_truncated(void)
{
    const char *ev = "{\"ph\":\"X\",\"name\":\"e\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}";
    char *full = xmalloc(20 * 80 + 64);
    size_t k = (size_t)sprintf(full, "{\"schemaVersion\":1,\"traceEvents\":[\n");
    size_t ends[20];
    for (int i = 0; i < 20; i++) {
        k += (size_t)sprintf(full + k, i ? ",\n" : "");
        k += (size_t)sprintf(full + k, ev, i * 10);
        ends[i] = k;
    }
    /* cut after 7 complete events: mid-event, after the comma, at the end
     * of an event, mid-string */
    size_t cuts[] = { ends[6] + 20, ends[6] + 1, ends[6], ends[6] + 9 };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        struct result r;
        import_bytes("cut.json", full, cuts[c], &r);
        REQUIRE(r.rc == 0);
        CHECK_EQ_INT(r.st.events, 7);
        CHECK_Q(r.db, 7, "SELECT count(*) FROM slice");
        CHECK(notes(r.db, "repaired", "the file is truncated%") == 1);
        CHECK_Q(r.db, 1, "SELECT example LIKE 'cut at byte %%' FROM note WHERE reason LIKE 'the file is truncated%%'");
        result_close(&r);
    }
    /* the same cut inside a gzip member */
    char *path = xasprintf("%s/cut-src.gz", tmpdir);
    gzFile g = gzopen(path, "wb");
    gzwrite(g, full, (unsigned)k);
    gzclose(g);
    FILE *f = fopen(path, "rb");
    char gz[8192];
    size_t gn = fread(gz, 1, sizeof gz, f);
    fclose(f);
    struct result r;
    import_bytes("cut.json.gz", gz, gn - 12, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID); /* a cut gzip is corrupt: the reader cannot tell what is missing */
    CHECK(strstr(r.e.msg, "truncated") != NULL);
    CHECK(strstr(r.e.msg, "cut.json.gz") != NULL);
    /* cut before the first event */
    import_bytes("cut0.json", full, 30, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "truncated") != NULL);
    free(path);
    free(full);
}

static void test_garbage_after(void)
{
    static const char *cases[] = {
        "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]\n trailing junk {",
        "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}}]garbage",
    };
    for (int i = 0; i < 2; i++) {
        struct result r;
        import_text(cases[i], &r);
        REQUIRE(r.rc == 0);
        CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
        CHECK(notes(r.db, "repaired", "bytes after the end of the JSON document were ignored") == 1);
        result_close(&r);
    }
}

static void test_malformed(void)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\" \"ts\":2},{\"ph\":\"X\",\"ts\":3}]}", "event #2" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1} {\"ph\":\"X\",\"ts\":2}]}", "expected ',' or ']'" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}] \"x\":1}", "expected ',' or '}'" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":tru}]}", "event #1" },
        { "{\"traceEvents\":{\"ph\":\"X\"}}", "'[' starting traceEvents" },
        { "[{\"ph\":\"X\",\"ts\":1},,{}]", "invalid JSON" },
        { "{\"a\":1,\"traceEvents\":[], 5:1}", "member name" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result r;
        import_text(cases[i].json, &r);
        CHECK_EQ_INT(r.rc, ERR_INVALID);
        if (!strstr(r.e.msg, cases[i].msg)) fprintf(stderr, "case %zu: %s\n", i, r.e.msg);
        CHECK(strstr(r.e.msg, cases[i].msg) != NULL);
        CHECK(strncmp(r.e.msg, "trace.json: ", 12) == 0); /* the file is named */
        result_close(&r);
    }
}

static void test_no_trace_events(void)
{
    struct result r;
    import_text("{\"schemaVersion\":1,\"deviceProperties\":[],\"traceName\":\"x\"}", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "without \"traceEvents\"") != NULL);
    CHECK(strstr(r.e.msg, "not a Chrome/Kineto trace") != NULL);
    result_close(&r);
    /* an empty events list is a valid, empty trace */
    import_text("{\"traceEvents\":[]}", &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.events, 0);
    CHECK(notes(r.db, "info", "the trace has no events") == 1);
    result_close(&r);
}

static void test_refused_formats(void)
{
    static const struct {
        const char *name;
        const char *data;
        size_t n;
        const char *msg;
    } cases[] = {
        { "et.json", "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"x\", \"nodes\": [{\"id\": 1}]}", 0,
          "PyTorch execution trace" },
        { "memory_timeline.raw", "[[1700000000000000000, 0, 512, 3],\n [1700000000000000001, 2, -512, 3]]", 0,
          "raw memory timeline" },
        { "908_results.json", "{\n \"rocprofiler-sdk-tool\": [{\"metadata\": {\"pid\": 1}}]}", 0,
          "rocprofiler-sdk JSON" },
        { "tw003.xplane.pb", "\x0a\x8a\x01\x0a\x09/host:CPU\x12\x05\x08\x01\x12\x01x\x1a\x10/device:GPU:0 data", 40,
          "XPlane protobuf" },
        { "notes.txt", "hello, this is not a trace", 0, "not a trace traceboard can read" },
        { "blob.bin", "\x00\x01\x02\x03\x04\x05\x06\x07\x08", 9, "not a trace traceboard can read" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result r;
        size_t n = cases[i].n ? cases[i].n : strlen(cases[i].data);
        import_bytes(cases[i].name, cases[i].data, n, &r);
        CHECK_EQ_INT(r.rc, ERR_UNSUPPORTED);
        if (!strstr(r.e.msg, cases[i].msg)) fprintf(stderr, "case %s: %s\n", cases[i].name, r.e.msg);
        CHECK(strstr(r.e.msg, cases[i].msg) != NULL);
        CHECK(strstr(r.e.msg, cases[i].name) != NULL);
        result_close(&r);
    }
}

static void test_empty_file(void)
{
    struct result r;
    import_bytes("empty.json", "", 0, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "empty.json: the file is empty") != NULL);
    result_close(&r);
    import_bytes("blank.json", " \n\t\n", 4, &r);
    CHECK_EQ_INT(r.rc, ERR_UNSUPPORTED);
    result_close(&r);
    /* a gzip of nothing */
    unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0 };
    import_bytes("empty.json.gz", gz, sizeof gz, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "empty once decompressed") != NULL);
    result_close(&r);
}

/* The end of the document after the events: header fields that are not
 * strict JSON, cuts inside or between header members, a trailing comma. */
static void test_header_edges(void)
{
    const char *ev = "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}";
    struct result r;
    char *json = xasprintf("{\"traceEvents\":[%s],\"bad\":NaN,\"ok\":{\"x\":[1,2]},\"big\":9007199254740993}", ev);
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    CHECK(notes(r.db, "repaired", "header field that is not strict JSON: ignored") == 1);
    CHECK_QT(r.db, "bad", "SELECT example FROM note WHERE reason LIKE 'header field%'");
    CHECK_Q(r.db, 2, "SELECT json_extract(header,'$.ok.x[1]') FROM rank");
    CHECK_Q(r.db, 9007199254740993LL, "SELECT json_extract(header,'$.big') FROM rank");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM rank WHERE json_extract(header,'$.bad') IS NOT NULL");
    result_close(&r);

    /* cut after the events array: inside a header value, after a member,
     * right after ']', inside a member name, after a member name */
    static const char *tails[] = { ",\"deviceProperties\":[{\"id\":0,", ",\"schemaVersion\":1,", "", ",\"trace",
                                   ",\"traceName\"", ",\"traceName\":" };
    for (int i = 0; i < 6; i++) {
        json = xasprintf("{\"traceEvents\":[%s]%s", ev, tails[i]);
        import_text(json, &r);
        free(json);
        REQUIRE(r.rc == 0);
        CHECK_EQ_INT(r.st.events, 1);
        CHECK(notes(r.db, "repaired", "the file is truncated%") == 1);
        result_close(&r);
    }

    json = xasprintf("{\"traceEvents\":[%s],}", ev); /* a trailing comma is forgiven */
    import_text(json, &r);
    free(json);
    CHECK_EQ_INT(r.rc, 0);
    CHECK(r.rc != 0 || notes(r.db, "%", "%") == 0);
    result_close(&r);

    import_text("{}", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "without \"traceEvents\"") != NULL);
    result_close(&r);
}

/* Progress reports: now and then while parsing, and once at the end with
 * every event and every raw byte. */
struct progress_log {
    int calls, backwards;
    uint64_t raw, events;
};

static void on_progress(void *arg, uint64_t raw_done, uint64_t events)
{
    struct progress_log *p = arg;
    if (raw_done < p->raw || events < p->events) p->backwards++;
    p->calls++;
    p->raw = raw_done;
    p->events = events;
}

static void test_progress(void)
{
    size_t n = 40000, k = 0;
    char *json = xmalloc(n * 80 + 64);
    k += (size_t)sprintf(json, "{\"traceEvents\":[");
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(json + k, "%s{\"ph\":\"X\",\"name\":\"e\",\"pid\":1,\"tid\":1,\"ts\":%zu,\"dur\":1}",
                             i ? "," : "", i * 2);
    k += (size_t)sprintf(json + k, "]}");
    char *path = write_file("progress.json", json, k);
    char *db = xasprintf("%s/%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 0, 0, 0 };
    struct progress_log log = { 0, 0, 0, 0 };
    struct import_ctx ctx = { on_progress, &log, 0, NULL };
    struct tb_rank_stats st;
    REQUIRE(rundb_create(db, 0, tmpdir, &w, &e) == 0);
    CHECK_EQ_INT(rundb_begin_rank(w, 0, "progress.json", (int64_t)k, &e), 0);
    CHECK_EQ_INT(importer_import_file(path, "progress.json", &lim, w, &ctx, &e), 0);
    CHECK_EQ_INT(rundb_finish_rank(w, &st, &e), 0);
    CHECK_EQ_INT(rundb_close_writer(w, &e), 0);
    CHECK(log.calls >= 3); /* every 16384 events, then at the end */
    CHECK_EQ_INT(log.backwards, 0);
    CHECK_EQ_INT(log.events, n);
    CHECK_EQ_INT(log.raw, k);
    CHECK_EQ_INT(st.slices, n);
    free(json);
    free(path);
    free(db);
}

/* A BOM before the JSON is accepted (Windows editors write one). */
static void test_bom(void)
{
    struct result r;
    import_text("\xef\xbb\xbf[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]", &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
    result_close(&r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_bare_array);
    RUN(test_object_header_after_events);
    RUN(test_gzip_input);
    RUN(test_pid_tid_spellings);
    RUN(test_timestamps);
    RUN(test_extreme_times);
    RUN(test_out_of_order_nesting);
    RUN(test_deep_nesting);
    RUN(test_zero_length);
    RUN(test_names);
    RUN(test_flows);
    RUN(test_memory_events);
    RUN(test_events_across_windows);
    RUN(test_begin_end);
    RUN(test_counters);
    RUN(test_metadata);
    RUN(test_repaired_durations);
    RUN(test_truncated);
    RUN(test_garbage_after);
    RUN(test_malformed);
    RUN(test_no_trace_events);
    RUN(test_refused_formats);
    RUN(test_empty_file);
    RUN(test_header_edges);
    RUN(test_progress);
    RUN(test_bom);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_chrome");
}
