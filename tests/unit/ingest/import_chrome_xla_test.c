/* import_chrome_xla_test — JAX and TensorFlow (XProf) traces through the
 * Chrome importer: device processes and their stream, "XLA Ops" and
 * derived lanes on GPU and TPU, step markers, correlation ids shared with
 * driver calls, and the counts of a real jax MLP trace. */
#include "import_chrome_fixture.h"

/* ====================================================================== */
/* JAX / TensorFlow (XProf) lanes                                         */

/* Kind of the slice called `name` (the first one). */
static int64_t kind_of(sqlite3 *db, const char *name)
{
    return q_int(db, "SELECT s.kind FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q ORDER BY s.id LIMIT 1", name);
}

/* jax.profiler.trace(create_perfetto_trace=True) on a GPU: a "/device:GPU:N"
 * process whose stream threads hold kernels and copies, the host's python
 * thread with StepTraceAnnotation("train", step_num=..) spans, CUPTI API
 * calls sharing a string correlation_id with their kernel. */
static void test_jax_gpu_lanes(void)
{
    struct result r;
    import_text("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:3\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":14,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #14(Compute)\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":15,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #15(MemcpyH2D)\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":99,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},\n"
                "{\"ph\":\"M\",\"pid\":701,\"tid\":5,\"name\":\"thread_name\",\"args\":{\"name\":\"python3\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":100,\"dur\":50,\"name\":\"train\",\"args\":{\"step_num\":\"0\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":101,\"dur\":2,\"name\":\"$train.py:12 step\"},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":103,\"dur\":3,\"name\":\"fusion_1\","
                "\"args\":{\"correlation_id\":\"7\",\"device_id\":\"0\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":160,\"dur\":50,\"name\":\"train\",\"args\":{\"step_num\":1}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":161,\"dur\":3,\"name\":\"PjitFunction(f)\"},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":110,\"dur\":5,\"name\":\"fusion_1\","
                "\"args\":{\"correlation_id\":\"7\",\"hlo_op\":\"fusion.1\"}},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":120,\"dur\":1,\"name\":\"memset32\"},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":15,\"ts\":104,\"dur\":1,\"name\":\"MemcpyH2D\","
                "\"args\":{\"correlation_id\":\"8\",\"memcpy_details\":\"kind_src:pinned size:4\"}},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":99,\"ts\":110,\"dur\":5,\"name\":\"fusion.1\"},\n"
                "{}]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    /* device lanes are GPU tracks of device 3, the stream number from the tid */
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='1' AND kind=1 AND device=3");
    CHECK_Q(r.db, 14, "SELECT stream FROM track WHERE pid='1' AND tid='14'");
    CHECK_Q(r.db, 0, "SELECT kind FROM track WHERE pid='701'");
    CHECK_Q(r.db, 1, "SELECT device IS NULL FROM track WHERE pid='701'");
    /* ops on streams: kernels, copies, sets; "XLA Ops" of a GPU is derived */
    CHECK_Q(r.db, TB_K_KERNEL, "SELECT s.kind FROM slice s JOIN track t ON t.id=s.track WHERE t.tid='14' "
                               "AND s.ts=110000");
    CHECK_Q(r.db, 7, "SELECT s.corr FROM slice s JOIN track t ON t.id=s.track WHERE t.tid='14' AND s.ts=110000");
    CHECK_EQ_INT(kind_of(r.db, "memset32"), TB_K_MEMSET);
    CHECK_EQ_INT(kind_of(r.db, "MemcpyH2D"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "fusion.1"), TB_K_GPU_ANNOTATION);
    /* host: steps named <name>#<step_num>, CUPTI calls as driver calls
     * joined to their kernel, Python frames; the rest stays other */
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s IN ('train#0','train#1') "
                     "AND s.kind=2");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s='train'");
    CHECK_Q(r.db, TB_K_DRIVER, "SELECT s.kind FROM slice s JOIN track t ON t.id=s.track WHERE t.pid='701' "
                               "AND s.corr=7");
    CHECK_EQ_INT(kind_of(r.db, "$train.py:12 step"), TB_K_PYTHON);
    CHECK_EQ_INT(kind_of(r.db, "PjitFunction(f)"), TB_K_OTHER);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* A TPU: no streams, so "XLA Ops" holds the device's ops; "XLA Modules"
 * and "Steps" are derived lines; copy-start is a copy; TPU_SYSTEM and the
 * CPU device are not accelerators. Thread names may come before the
 * process name. */
static void test_jax_tpu_lanes(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Modules\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"Steps\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":\"/device:TPU:1 (pid 3)\"}},\n"
                "{\"ph\":\"M\",\"pid\":4,\"name\":\"process_name\",\"args\":{\"name\":\"/device:TPU_SYSTEM:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":5,\"name\":\"process_name\",\"args\":{\"name\":\"/device:CPU:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":6,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:x\"}},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":10,\"dur\":4,\"name\":\"fusion.3\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":15,\"dur\":1,\"name\":\"copy-start.1\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"jit_train_step\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":0,\"ts\":9,\"dur\":8,\"name\":\"0\"},\n"
                "{\"ph\":\"X\",\"pid\":4,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"sys\"},\n"
                "{\"ph\":\"X\",\"pid\":5,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"cpu\"},\n"
                "{\"ph\":\"X\",\"pid\":6,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"odd\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='3' AND kind=1 AND device=1");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM track WHERE pid IN ('4','5','6') AND kind!=0");
    CHECK_EQ_INT(kind_of(r.db, "fusion.3"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "copy-start.1"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "jit_train_step"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "0"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "sys"), TB_K_OTHER);
    CHECK_EQ_INT(kind_of(r.db, "cpu"), TB_K_OTHER);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* TensorFlow's trace viewer JSON: derived "TensorFlow Ops"/"XLA Ops" lines
 * beside the streams of a GPU, Keras' Trace("train", step_num=N, _r=1)
 * markers, copies and sets named by CUPTI; Kineto traces are untouched. */
static void test_tf_lanes(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #7(Compute)\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":8,\"name\":\"thread_name\",\"args\":{\"name\":\"TensorFlow Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":9,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":900,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":1,\"dur\":100,\"name\":\"train\","
                "\"args\":{\"step_num\":12,\"_r\":1}},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"MatMul\"},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":3,\"dur\":1,\"name\":\"neg\",\"args\":{\"step_num\":-1}},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":5,\"dur\":2,\"name\":\"volta_sgemm_128x64_nn\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":8,\"dur\":1,\"name\":\"MemcpyD2H\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":9,\"dur\":1,\"name\":\"Memset\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":8,\"ts\":5,\"dur\":2,\"name\":\"MatMul:MatMul\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":9,\"ts\":5,\"dur\":2,\"name\":\"dot.1\"},\n"
                "{\"ph\":\"B\",\"pid\":2,\"tid\":7,\"ts\":20,\"name\":\"begin_kernel\"},\n"
                "{\"ph\":\"E\",\"pid\":2,\"tid\":7,\"ts\":21}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='2' AND kind=1 AND device=0");
    CHECK_EQ_INT(kind_of(r.db, "volta_sgemm_128x64_nn"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "begin_kernel"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "MemcpyD2H"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "Memset"), TB_K_MEMSET);
    CHECK_EQ_INT(kind_of(r.db, "MatMul:MatMul"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "dot.1"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "train#12"), TB_K_USER_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "MatMul"), TB_K_OTHER);
    CHECK_EQ_INT(kind_of(r.db, "neg"), TB_K_OTHER);
    result_close(&r);

    /* a Kineto trace keeps its categories' kinds and pid-numbered devices */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:5\"}},\n"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":2,\"name\":\"k\","
                "\"args\":{\"correlation\":3,\"correlation_id\":9}},\n"
                "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"pid\":10,\"tid\":1,\"ts\":1,\"dur\":9,\"name\":\"train\","
                "\"args\":{\"step_num\":1}}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto");
    CHECK_Q(r.db, 0, "SELECT device FROM track WHERE pid='0'");
    CHECK_Q(r.db, 3, "SELECT corr FROM slice s JOIN str n ON n.id=s.name WHERE n.s='k'");
    CHECK_EQ_INT(kind_of(r.db, "train"), TB_K_USER_ANNOTATION);
    result_close(&r);
}

/* The real jax_mlp trace (../shared/traces/jax_mlp) against a count made
 * here with jansson: every X event on a "/device:GPU:N" process is a GPU
 * op, those named Memcpy* copies, every host event with a step_num arg a
 * step, every host event with a correlation_id a driver call. */
static void test_jax_mlp_counts(void)
{
    char *dir = xasprintf("%s/traces/jax_mlp/plugins/profile", harness_shared()), *path = NULL;
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) {
        printf("import_chrome: jax_mlp skipped (%s not found)\n", dir);
        free(dir);
        return;
    }
    while (!path && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *p = xasprintf("%s/%s/perfetto_trace.json.gz", dir, de->d_name);
        if (access(p, R_OK) == 0) path = p;
        else free(p);
    }
    closedir(d);
    free(dir);
    REQUIRE(path != NULL);

    /* the independent count */
    gzFile gz = gzopen(path, "rb");
    REQUIRE(gz != NULL);
    size_t n = 0, cap = 1 << 20;
    char *buf = xmalloc(cap);
    int got;
    while ((got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) buf = xrealloc(buf, cap *= 2);
    }
    gzclose(gz);
    json_error_t je;
    json_t *root = json_loadb(buf, n, 0, &je), *ev;
    free(buf);
    REQUIRE(root != NULL);
    json_int_t dev_pid[8];
    int ndev = 0;
    size_t i;
    long ops = 0, copies = 0, steps = 0, driver = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
        const char *nm = json_string_value(json_object_get(ev, "name"));
        const char *pn = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        if (nm && pn && strcmp(nm, "process_name") == 0 && strncmp(pn, "/device:GPU:", 12) == 0 && ndev < 8)
            dev_pid[ndev++] = json_integer_value(json_object_get(ev, "pid"));
    }
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *nm = json_string_value(json_object_get(ev, "name"));
        json_t *args = json_object_get(ev, "args");
        if (!ph || strcmp(ph, "X") != 0 || !nm) continue;
        int on_dev = 0;
        for (int k = 0; k < ndev; k++) on_dev |= json_integer_value(json_object_get(ev, "pid")) == dev_pid[k];
        if (on_dev) {
            ops++;
            copies += strncmp(nm, "Memcpy", 6) == 0;
        } else if (json_object_get(args, "step_num")) {
            steps++;
        } else if (json_object_get(args, "correlation_id")) {
            driver++;
        }
    }
    json_decref(root);
    CHECK_EQ_INT(ndev, 1);
    CHECK(ops > 100 && steps > 0 && driver > 0);

    struct result r;
    char *name = xasprintf("jax_mlp.json.gz");
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL);
    fseek(f, 0, SEEK_END);
    long fsz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *raw = xmalloc((size_t)fsz);
    REQUIRE(fread(raw, 1, (size_t)fsz, f) == (size_t)fsz);
    fclose(f);
    import_bytes(name, raw, (size_t)fsz, &r);
    free(raw);
    free(name);
    free(path);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    CHECK_Q(r.db, ops, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=1 AND t.device=0 "
                       "AND s.kind IN (6,7,8)");
    CHECK_Q(r.db, copies, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=1 AND s.kind=7");
    CHECK_Q(r.db, steps, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE s.kind=2 AND n.s GLOB 'train#*'");
    CHECK_Q(r.db, driver, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=0 AND s.kind=5");
    /* every GPU op's correlation id has its host call */
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice g JOIN track t ON t.id=g.track WHERE t.kind=1 AND g.corr!=0 AND "
                     "NOT EXISTS(SELECT 1 FROM slice h WHERE h.kind=5 AND h.corr=g.corr)");
    result_close(&r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_jax_gpu_lanes);
    RUN(test_jax_tpu_lanes);
    RUN(test_tf_lanes);
    RUN(test_jax_mlp_counts);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_chrome_xla");
}
