/* gentrace.c — writes a synthetic PyTorch/Kineto-like trace for benchmarks.
 *
 *   gentrace (--bytes N | --events N) [--seed S] [--gzip] OUT
 *
 * N may end in K, M or G (powers of 1024). Generation stops at the first
 * top-level operator boundary past N uncompressed bytes or N events, so the
 * result is a little over N. The mix follows real Kineto traces: a header
 * with deviceProperties and distributedInfo; process/thread metadata;
 * ProfilerStep#N user annotations; cpu_op trees (children written before
 * their parents, as Kineto does) with "Input Dims" args; cuda_runtime
 * launches with correlation ids; kernels on two streams with grid/block
 * args; ac2g flow pairs; memcpy/memset; [memory] alloc/free instants; an
 * autograd thread; timestamps as float µs with ns fractions. GPU events of a
 * step are written after its CPU events, so the file is out of ts order like
 * the real thing.
 *
 * Memory stays bounded whatever N: events go straight to the output, GPU
 * events are held for at most one batch of operators. Same seed, same
 * bytes. Uses only libc and zlib. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---------------------------------------------------------------------- */
/* output                                                                 */

struct out {
    FILE *f;
    gzFile gz;
    uint64_t bytes; /* uncompressed bytes written so far */
    int failed;
};

static void out_write(struct out *o, const char *p, size_t n)
{
    if (!n || o->failed) return;
    if (o->gz) {
        if (gzwrite(o->gz, p, (unsigned)n) != (int)n) o->failed = 1;
    } else if (fwrite(p, 1, n, o->f) != n) {
        o->failed = 1;
    }
    o->bytes += n;
}

/* A growable text buffer: the output's staging area, or a deferred batch. */
struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
    for (;;) {
        va_list cp;
        va_copy(cp, ap);
        size_t room = b->cap - b->len;
        /* b->p is NULL before the first growth: NULL + 0 is undefined */
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, cp);
        va_end(cp);
        if (n < 0) {
            fprintf(stderr, "gentrace: formatting failed\n");
            exit(1);
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            fprintf(stderr, "gentrace: out of memory\n");
            exit(1);
        }
    }
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* generator state                                                        */

#define CPU_PID 595
#define MAIN_TID 620
#define BWD_TID 624
#define GPU_PID 0
#define NSTREAMS 2
static const int streams[NSTREAMS] = { 7, 20 };
#define BATCH_OPS 256 /* top-level ops between flushes of deferred GPU events */
#define LIVE_MAX 64

struct gen {
    uint64_t rng;
    struct sbuf cpu;   /* staged output (flushed to the file often) */
    struct sbuf gpu;   /* deferred GPU events and flow ends */
    struct out *o;
    uint64_t events;
    int64_t ext_id, corr, ev_idx, flow_id;
    int64_t gpu_clock[NSTREAMS];
    int64_t live_addr[LIVE_MAX], live_bytes[LIVE_MAX];
    int nlive;
    int64_t total_alloc;
    int first; /* no comma before the first event */
};

static uint64_t rnd(struct gen *g)
{
    /* xorshift64* */
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    return g->rng * 2685821657736338717ULL;
}

static int64_t rnd_range(struct gen *g, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}

/* Times are int64 ns; the file has float µs with 3 decimals. */
#define US(ns) (long long)((ns) / 1000), (long long)((ns) % 1000)

/* Starts an event object in b; every event but the first follows a comma
 * (the metadata events always come first, so deferred GPU text can start
 * with its comma). */
static void ev_open(struct gen *g, struct sbuf *b)
{
    sb_printf(b, "%s\n  {\n", g->first ? "" : ",");
    g->first = 0;
    g->events++;
}

/* Writes the staged text once it is large. */
static void cpu_flush(struct gen *g)
{
    if (g->cpu.len > (1u << 20)) {
        out_write(g->o, g->cpu.p, g->cpu.len);
        g->cpu.len = 0;
    }
}

/* Writes the deferred GPU events after the CPU ones (Kineto's order). */
static void gpu_flush(struct gen *g)
{
    if (!g->gpu.len) return;
    sb_printf(&g->cpu, "%.*s", (int)g->gpu.len, g->gpu.p);
    g->gpu.len = 0;
    cpu_flush(g);
}

/* ---------------------------------------------------------------------- */
/* event kinds                                                            */

static const char *const kernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTT",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)",
    "triton_poi_fused_add_relu_0",
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

static const char *const leaf_ops[] = { "aten::empty", "aten::as_strided", "aten::view", "aten::resize_",
                                        "aten::empty_strided", "aten::detach", "aten::zero_", "aten::fill_" };
static const char *const mid_ops[] = { "aten::t", "aten::transpose", "aten::_to_copy", "aten::copy_",
                                       "aten::addmm", "aten::relu", "aten::add", "aten::mul",
                                       "aten::cudnn_convolution", "aten::native_batch_norm" };
static const char *const top_ops[] = { "aten::linear", "aten::conv2d", "aten::batch_norm", "aten::layer_norm",
                                       "aten::softmax", "aten::dropout", "aten::matmul", "aten::gelu" };
#define N(a) (sizeof a / sizeof a[0])

static void cpu_op_args(struct gen *g, struct sbuf *b, int64_t ext)
{
    int64_t d0 = 1 << rnd_range(g, 4, 12), d1 = 1 << rnd_range(g, 4, 12);
    sb_printf(b,
              "    \"args\": {\n"
              "      \"External id\": %lld,\"Record function id\": 0, \"Sequence number\": %lld, \"Fwd thread id\": 0, "
              "\"Concrete Inputs\": [\"\", \"\", \"1\"], \"Input type\": [\"float\", \"float\", \"Scalar\"], "
              "\"Input Strides\": [[%lld, 1], [%lld, 1], []], \"Input Dims\": [[%lld, %lld], [%lld, %lld], []], "
              "\"Ev Idx\": %lld\n"
              "    }\n",
              (long long)ext, (long long)(ext / 3), (long long)d1, (long long)d0, (long long)d0, (long long)d1,
              (long long)d1, (long long)d0, (long long)g->ev_idx++);
}

static void mem_event(struct gen *g, int tid, int64_t ts)
{
    int64_t bytes, addr;
    if (g->nlive && (g->nlive == LIVE_MAX || rnd(g) % 2)) {
        int i = (int)(rnd(g) % (uint64_t)g->nlive);
        bytes = -g->live_bytes[i];
        addr = g->live_addr[i];
        g->live_addr[i] = g->live_addr[g->nlive - 1];
        g->live_bytes[i] = g->live_bytes[g->nlive - 1];
        g->nlive--;
    } else {
        bytes = 512 * rnd_range(g, 1, 65536);
        addr = 139872004276224LL + 512 * (int64_t)(rnd(g) % 100000000);
        g->live_addr[g->nlive] = addr;
        g->live_bytes[g->nlive] = bytes;
        g->nlive++;
    }
    g->total_alloc += bytes;
    ev_open(g, &g->cpu);
    sb_printf(&g->cpu,
              "    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
              "    \"pid\": %d, \"tid\": %d,\n"
              "    \"ts\": %lld.%03lld,\n"
              "    \"args\": {\n"
              "      \"Total Reserved\": %lld, \"Total Allocated\": %lld, \"Bytes\": %lld, \"Addr\": %lld, "
              "\"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": %lld\n"
              "    }\n  }",
              CPU_PID, tid, US(ts), (long long)(g->total_alloc + (64ll << 20)), (long long)g->total_alloc,
              (long long)bytes, (long long)addr, (long long)g->ev_idx++);
}

/* cudaLaunchKernel / cudaMemcpyAsync on the CPU, the kernel or copy on a
 * stream (deferred), and the ac2g flow between them. Returns the end. */
static int64_t gen_launch(struct gen *g, int tid, int64_t t, int64_t ext)
{
    int64_t corr = ++g->corr, fid = ++g->flow_id;
    int si = (int)(rnd(g) % NSTREAMS), kind = (int)(rnd(g) % 20);
    int64_t rdur = rnd_range(g, 2000, 9000);
    const char *rname = kind == 0 ? "cudaMemcpyAsync" : kind == 1 ? "cudaMemsetAsync" : "cudaLaunchKernel";

    ev_open(g, &g->cpu);
    sb_printf(&g->cpu,
              "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
              "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n"
              "    \"args\": {\n"
              "      \"External id\": %lld, \"cbid\": 211, \"correlation\": %lld\n"
              "    }\n  }",
              rname, CPU_PID, tid, US(t), US(rdur), (long long)ext, (long long)corr);
    ev_open(g, &g->cpu);
    sb_printf(&g->cpu,
              "    \"ph\": \"s\", \"id\": %lld, \"pid\": %d, \"tid\": %d, \"ts\": %lld.%03lld,\n"
              "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }",
              (long long)fid, CPU_PID, tid, US(t));

    int64_t kts = t + rdur + rnd_range(g, 3000, 20000);
    if (kts < g->gpu_clock[si]) kts = g->gpu_clock[si] + rnd_range(g, 500, 3000);
    int64_t kdur = kind <= 1 ? rnd_range(g, 1000, 30000) : rnd_range(g, 1500, 400000);
    g->gpu_clock[si] = kts + kdur;
    ev_open(g, &g->gpu);
    if (kind <= 1) {
        sb_printf(&g->gpu,
                  "    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
                  "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n"
                  "    \"args\": {\n"
                  "      \"External id\": %lld, \"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %lld, "
                  "\"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f\n"
                  "    }\n  }",
                  kind == 0 ? "gpu_memcpy" : "gpu_memset", kind == 0 ? "Memcpy HtoD (Pinned -> Device)" : "Memset (Device)",
                  GPU_PID, streams[si], US(kts), US(kdur), (long long)ext, streams[si], (long long)corr,
                  (long long)rnd_range(g, 4096, 1 << 26), (double)rnd_range(g, 1000, 2000000) / 1000.0);
    } else {
        int64_t grid = 1 << rnd_range(g, 0, 14), block = 32 << rnd_range(g, 0, 5);
        sb_printf(&g->gpu,
                  "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
                  "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n"
                  "    \"args\": {\n"
                  "      \"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": %d, "
                  "\"correlation\": %lld, \"registers per thread\": %d, \"shared memory\": %d, \"blocks per SM\": %.6f, "
                  "\"warps per SM\": %.6f, \"grid\": [%lld, 1, 1], \"block\": [%lld, 1, 1], "
                  "\"est. achieved occupancy %%\": %d\n"
                  "    }\n  }",
                  kernels[rnd(g) % NKERNELS], GPU_PID, streams[si], US(kts), US(kdur), (long long)ext, streams[si],
                  (long long)corr, (int)rnd_range(g, 16, 255), (int)(rnd(g) % 4) * 16384, (double)grid / 132.0,
                  (double)grid * (double)block / 32.0 / 132.0, (long long)grid, (long long)block,
                  (int)rnd_range(g, 10, 100));
    }
    ev_open(g, &g->gpu);
    sb_printf(&g->gpu,
              "    \"ph\": \"f\", \"id\": %lld, \"pid\": %d, \"tid\": %d, \"ts\": %lld.%03lld,\n"
              "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
              (long long)fid, GPU_PID, streams[si], US(kts));
    return t + rdur;
}

/* One cpu_op and its subtree, children first (Kineto writes an op when it
 * ends). Returns the op's end time. */
static int64_t gen_op(struct gen *g, int tid, int64_t t, int depth, const char *name)
{
    int64_t start = t, ext = ++g->ext_id;
    t += rnd_range(g, 1000, 6000);
    if (rnd(g) % 4 == 0) mem_event(g, tid, t);
    int nchild = depth >= 4 ? 0 : (int)rnd_range(g, depth == 0 ? 1 : 0, 3);
    for (int i = 0; i < nchild; i++) {
        if (depth >= 1 && rnd(g) % 3 == 0) t = gen_launch(g, tid, t, ext);
        else t = gen_op(g, tid, t, depth + 1, depth + 1 >= 3 ? leaf_ops[rnd(g) % N(leaf_ops)] : mid_ops[rnd(g) % N(mid_ops)]);
        t += rnd_range(g, 200, 2000);
    }
    if (nchild == 0 && depth >= 1 && depth < 3 && rnd(g) % 2) t = gen_launch(g, tid, t, ext);
    t += rnd_range(g, 500, 4000);
    ev_open(g, &g->cpu);
    sb_printf(&g->cpu,
              "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
              "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n",
              name, CPU_PID, tid, US(start), US(t - start));
    cpu_op_args(g, &g->cpu, ext);
    sb_printf(&g->cpu, "  }");
    return t;
}

static void header(struct sbuf *b)
{
    sb_printf(b,
              "\n  {\n"
              "    \"schemaVersion\": 1,\n"
              "    \"deviceProperties\": [\n"
              "    {\n"
              "      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85017493504,\n"
              "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
              "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
              "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
              "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
              "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
              "\"sharedMemPerMultiprocessor\": 233472\n"
              "    }\n"
              "    ],\n"
              "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1},\n"
              "      \"trace_id\": \"0123456789ABCDEF0123456789ABCDEF\",\n"
              "      \"profile_memory\": 1,\n"
              "      \"record_shapes\": 1,\n"
              "      \"cuda_runtime_version\": 13000,\n"
              "  \"displayTimeUnit\": \"ms\",\n"
              "  \"baseTimeNanoseconds\": 1790857026000000000,\n"
              "  \"traceEvents\": [");
}

static void metadata(struct gen *g)
{
    static const struct {
        const char *what;
        int pid, tid;
        const char *name;
    } md[] = {
        { "process_name", CPU_PID, 0, "python3" },      { "process_labels", CPU_PID, 0, "CPU" },
        { "process_name", GPU_PID, 0, "python3" },      { "process_labels", GPU_PID, 0, "GPU 0" },
        { "thread_name", CPU_PID, MAIN_TID, "thread 620 (python3)" },
        { "thread_name", CPU_PID, BWD_TID, "thread 624 (pt_autograd_0)" },
        { "thread_name", GPU_PID, 7, "stream 7 " },     { "thread_name", GPU_PID, 20, "stream 20 " },
    };
    for (size_t i = 0; i < N(md); i++) {
        ev_open(g, &g->cpu);
        const char *key = strcmp(md[i].what, "process_labels") == 0 ? "labels" : "name";
        sb_printf(&g->cpu,
                  "    \"name\": \"%s\", \"ph\": \"M\", \"ts\": 4487348863000.000, \"pid\": %d, \"tid\": %d,\n"
                  "    \"args\": {\n      \"%s\": \"%s\"\n    }\n  }",
                  md[i].what, md[i].pid, md[i].tid, key, md[i].name);
    }
}

/* ---------------------------------------------------------------------- */
/* main                                                                   */

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    if (*end == 'K' || *end == 'k') v <<= 10, end++;
    else if (*end == 'M' || *end == 'm') v <<= 20, end++;
    else if (*end == 'G' || *end == 'g') v <<= 30, end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: gentrace (--bytes N | --events N) [--seed S] [--gzip] OUT\n"
                    "  N may end in K, M or G; OUT is written (a Kineto-like *.pt.trace.json[.gz])\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t max_bytes = 0, max_events = 0, seed = 1;
    const char *path = NULL;
    int gzip = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
            if (parse_size(argv[++i], &max_bytes) != 0) usage();
        } else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc) {
            if (parse_size(argv[++i], &max_events) != 0) usage();
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (parse_size(argv[++i], &seed) != 0) usage();
        } else if (strcmp(argv[i], "--gzip") == 0) {
            gzip = 1;
        } else if (argv[i][0] == '-' || path) {
            usage();
        } else {
            path = argv[i];
        }
    }
    if (!path || (!max_bytes && !max_events)) usage();

    struct out o;
    memset(&o, 0, sizeof o);
    if (gzip) o.gz = gzopen(path, "wb6");
    else o.f = fopen(path, "wb");
    if ((gzip && !o.gz) || (!gzip && !o.f)) {
        fprintf(stderr, "gentrace: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }

    struct gen g;
    memset(&g, 0, sizeof g);
    g.rng = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
    if (!g.rng) g.rng = 1;
    g.o = &o;
    g.first = 1;
    g.ext_id = 500;
    g.corr = 100000;
    header(&g.cpu);
    metadata(&g);

    int64_t t = 4487348863622036LL; /* ns on the trace clock */
    int done = 0;
    for (int step = 1; !done; step++) {
        int64_t step_start = t;
        int nops = (int)rnd_range(&g, 40, 160);
        /* forward on the main thread */
        for (int i = 0; i < nops && !done; i++) {
            t = gen_op(&g, MAIN_TID, t, 0, top_ops[rnd(&g) % N(top_ops)]) + rnd_range(&g, 1000, 10000);
            if ((i + 1) % BATCH_OPS == 0) gpu_flush(&g);
            cpu_flush(&g);
            if ((max_bytes && o.bytes + g.cpu.len + g.gpu.len >= max_bytes) || (max_events && g.events >= max_events))
                done = 1;
        }
        /* backward on the autograd thread */
        int64_t bt = t;
        for (int i = 0; i < nops / 2 && !done; i++) {
            char name[96];
            snprintf(name, sizeof name, "autograd::engine::evaluate_function: %sBackward0",
                     (const char *[]){ "Addmm", "Relu", "Mul", "Convolution", "NativeBatchNorm" }[rnd(&g) % 5]);
            bt = gen_op(&g, BWD_TID, bt, 0, name) + rnd_range(&g, 500, 5000);
            cpu_flush(&g);
            if ((max_bytes && o.bytes + g.cpu.len + g.gpu.len >= max_bytes) || (max_events && g.events >= max_events))
                done = 1;
        }
        t = bt > t ? bt : t;
        t = gen_op(&g, MAIN_TID, t, 1, "Optimizer.step#SGD.step") + rnd_range(&g, 1000, 5000);
        ev_open(&g, &g.cpu);
        sb_printf(&g.cpu,
                  "    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": %d, "
                  "\"tid\": %d,\n"
                  "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n"
                  "    \"args\": {\n      \"External id\": %lld,\"Record function id\": 0, \"Ev Idx\": %lld\n    }\n  }",
                  step, CPU_PID, MAIN_TID, US(step_start), US(t - step_start), (long long)++g.ext_id,
                  (long long)g.ev_idx++);
        gpu_flush(&g);
        t += rnd_range(&g, 10000, 100000);
    }
    gpu_flush(&g);
    ev_open(&g, &g.cpu);
    sb_printf(&g.cpu,
              "    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
              "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\",\n"
              "    \"ts\": %lld.%03lld\n  }",
              US(t));
    sb_printf(&g.cpu, "\n],\n  \"traceName\": \"%s\"\n}\n", path);
    out_write(&o, g.cpu.p, g.cpu.len); /* the rest, whatever its size */
    free(g.cpu.p);
    free(g.gpu.p);
    int rc = 0;
    if (o.gz ? gzclose(o.gz) != Z_OK : fclose(o.f) != 0) rc = 1;
    if (o.failed || rc) {
        fprintf(stderr, "gentrace: writing %s failed: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(stderr, "gentrace: %s: %" PRIu64 " events, %" PRIu64 " bytes of JSON\n", path, g.events, o.bytes);
    return 0;
}
