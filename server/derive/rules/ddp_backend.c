/* ddp_backend — a distributed job on GPUs whose process group reduces CUDA
 * tensors with a backend other than NCCL (gloo, MPI, UCC ...).
 *
 * gloo has no GPU path for collectives: every bucket is copied to host
 * memory, reduced by CPU threads, sent over TCP sockets and copied back,
 * so it neither uses NVLink/InfiniBand nor runs beside the backward pass
 * on a CUDA stream. The backend for CUDA tensors is read from the rank's
 * distributedInfo ("gloo"; "cpu:gloo,cuda:nccl" names one per device
 * type; a config with no cuda entry, such as "mtia:hccl,cpu:gloo", is not
 * about CUDA). Without a backend in the header, host collectives named
 * gloo:* (barriers aside) with no NCCL kernels or nccl:* spans tell the
 * same. It applies only to ranks that run GPU kernels and belong to a job
 * of more than one rank (CPU-only jobs rightly use gloo), and is reported
 * once for the run.
 */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/facts.h"
#include "store/slice_read.h"

/* NCCL reduces device buffers on the GPU over NVLink/PCIe P2P or RDMA and
 * overlaps with backward; claim only half of the least-waiting rank's
 * collective time, a floor the host staging alone (two copies and a CPU
 * reduction per bucket) exceeds. */
#define BACKEND_SAVED_FRACTION 0.5

struct host_coll {
    long long gloo_calls, nccl_calls;
    double gloo_ns;
    char top[64]; /* the gloo collective with the most time */
};

/* gloo:* and nccl:* spans of rank (barriers aside: a gloo side group for
 * barriers is common in NCCL jobs and carries no tensors), summed by name
 * in the store (the order of equal sums is SQLite's). Returns 0 or < 0 (e
 * filled). */
static int host_collectives(sqlite3 *db, int rank, struct host_coll *h, struct err *e)
{
    struct stats_read_group *g;
    size_t n;
    memset(h, 0, sizeof *h);
    int rc = slice_read_host_colls(db, rank, &g, &n, e);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
        const char *s = g[i].name;
        if (!s) continue;
        if (strncmp(s, "gloo:", 5) == 0) {
            if (!h->top[0]) snprintf(h->top, sizeof h->top, "%s", s);
            h->gloo_calls += g[i].count;
            h->gloo_ns += g[i].total;
        } else {
            h->nccl_calls += g[i].count;
        }
    }
    stats_read_groups_free(g, n);
    return 0;
}

/* The backend that handles CUDA tensors, from distributedInfo.backend, into
 * out ("" when the header names none, "-" when its config has no cuda
 * entry). */
static void cuda_backend(const char *backend, char *out, size_t n)
{
    out[0] = '\0';
    if (!backend || !backend[0]) return;
    const char *p = strstr(backend, "cuda:");
    if (p) {
        p += 5;
        snprintf(out, n, "%.*s", (int)strcspn(p, ", "), p);
    } else if (!strchr(backend, ':')) {
        snprintf(out, n, "%s", backend);
    } else {
        snprintf(out, n, "-");
    }
}

static const char advice_torch[] =
    "Initialise the process group with the NCCL backend for GPU tensors. gloo reduces CUDA tensors by "
    "copying each gradient bucket to host memory, reducing it on CPU threads and sending it over TCP, "
    "then copying it back; NCCL reduces on the GPU over NVLink, PCIe peer-to-peer or InfiniBand, on its "
    "own CUDA stream, so DDP overlaps it with the backward pass. Keep gloo for CPU-side objects with a "
    "per-device backend string. NCCL needs one GPU per rank: give each process its own device "
    "(torch.cuda.set_device(local_rank)).";
static const char snippet_torch[] =
    "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
    "torch.cuda.set_device(local_rank)\n"
    "dist.init_process_group(backend=\"cpu:gloo,cuda:nccl\")  # or \"nccl\"\n"
    "model = DDP(model.cuda(local_rank), device_ids=[local_rank])";

static int run(struct rules_ctx *c, struct err *e)
{
    const double comm_pct = rules_param(c, "rule_comm_pct");
    struct facts_rank *fr;
    size_t nfr;
    char backend[32] = "", line[512], a[32], b[32], link[160], list[128] = "";
    const struct rules_rank *best = NULL; /* a rank that uses it, least time in collectives */
    size_t nbad = 0, ngpu = 0;
    int from_header = 0, ddp = 0, world = 0, rc;
    if ((rc = facts_ranks(c->db, &fr, &nfr, e))) return rc;
    for (size_t k = 0; k < nfr; k++) {
        int rank = fr[k].rank;
        const struct rules_rank *r = NULL;
        for (size_t i = 0; i < c->nranks; i++)
            if (c->ranks[i].rank == rank) r = &c->ranks[i];
        if (!r || !r->gpu || r->gpu->kernel_ns <= 0) continue; /* no GPU work: gloo is right */
        ngpu++;
        const char *text = fr[k].distributed;
        json_t *di = text ? json_loads(text, 0, NULL) : NULL;
        char be[32];
        cuda_backend(json_string_value(json_object_get(di, "backend")), be, sizeof be);
        int size = r->world_size;
        json_decref(di);
        if (be[0] == '-') continue;                /* no CUDA entry in the config */
        if (size == 1 && c->nranks == 1) continue; /* one process: nothing to reduce */
        int header = be[0] != '\0', bad;
        if (header) {
            bad = strcmp(be, "nccl") != 0;
        } else {
            struct host_coll h;
            if ((rc = host_collectives(c->db, rank, &h, e)) < 0) break;
            bad = 0;
            if (h.gloo_calls > 0 && !h.nccl_calls) {
                rc = stats_read_has_comm_kernel(c->db, rank, e);
                if (rc < 0) break;
                bad = !rc;
            }
            snprintf(be, sizeof be, "gloo");
        }
        if (!bad) continue;
        if (!nbad || (header && !from_header)) {
            snprintf(backend, sizeof backend, "%s", be);
            from_header = header;
        }
        if (!best || r->avg_part[RULES_COMM] < best->avg_part[RULES_COMM]) best = r;
        if (size > world) world = size;
        size_t m = strlen(list);
        if (nbad < 8) snprintf(list + m, sizeof list - m, "%s%d", nbad ? ", " : "", rank);
        else if (nbad == 8) snprintf(list + m, sizeof list - m, ", ...");
        nbad++;
    }
    facts_ranks_free(fr, nfr);
    if (rc < 0) return rc;
    if (!nbad) return 0;

    /* DDP itself, for the wording */
    static const char *const ddp_name[] = { "DistributedDataParallel.forward" };
    ddp = facts_names_exist(c->db, FACTS_EQUAL, ddp_name, 1, e);
    if (ddp < 0) return ddp;
    struct host_coll hc;
    if ((rc = host_collectives(c->db, best->rank, &hc, e)) < 0) return rc;
    double comm = best->nsteps ? best->avg_part[RULES_COMM] : 0, step = (double)best->avg_dur;
    double share = step > 0 ? comm / step * 100.0 : 0;
    json_t *ev = json_pack("{s:[],s:s,s:s,s:i,s:i,s:b,s:f,s:f,s:I,s:f}", "lines", "backend", backend, "source",
                           from_header ? "distributedInfo" : "host spans", "ranks", (int)nbad, "world_size", world,
                           "ddp", ddp, "comm_us", comm / 1000.0, "step_us", step / 1000.0, "gloo_calls",
                           (json_int_t)hc.gloo_calls, "gloo_us", hc.gloo_ns / 1000.0);
    json_t *lines = json_object_get(ev, "lines");
    if (!from_header)
        snprintf(line, sizeof line, "Collectives run as gloo host spans; no NCCL kernels or nccl: spans");
    else if (world)
        snprintf(line, sizeof line, "Process-group backend for CUDA tensors: %s (distributedInfo, world size %d)",
                 backend, world);
    else
        snprintf(line, sizeof line, "Process-group backend for CUDA tensors: %s (distributedInfo)", backend);
    json_array_append_new(lines, json_string(line));
    snprintf(line, sizeof line, "%s on GPU: rank%s %s of %zu running GPU kernels, on %s",
             ddp ? "DistributedDataParallel" : "Distributed job", nbad > 1 ? "s" : "", list, ngpu,
             best->gpu->name[0] ? best->gpu->name : "a GPU");
    json_array_append_new(lines, json_string(line));
    if (hc.gloo_calls) {
        snprintf(line, sizeof line, "Host collectives on rank %d: %lld gloo spans in the trace (mostly %s), %s summed",
                 best->rank, hc.gloo_calls, hc.top, rules_fmt_ns(hc.gloo_ns, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }
    if (best->nsteps) {
        snprintf(line, sizeof line, "Communication: %s of a %s step (%.0f %%) on rank %d%s",
                 rules_fmt_ns(comm, a, sizeof a), rules_fmt_ns(step, b, sizeof b), share, best->rank,
                 nbad > 1 ? ", the rank that waits least" : "");
        json_array_append_new(lines, json_string(line));
    }
    const struct rules_step *w = rules_worst_step(best, RULES_COMM);
    rules_add(c, &rule_ddp_backend, share > comm_pct ? RULES_HIGH : RULES_MEDIUM, -1,
              comm * BACKEND_SAVED_FRACTION, ev, w ? rules_link_step(best, w, link, sizeof link) : NULL, advice_torch,
              snippet_torch, "%s on GPUs uses the %s backend: use NCCL for CUDA tensors",
              ddp ? "DDP" : "Distributed training", backend);
    return 0;
}

const struct rules_def rule_ddp_backend = {
    "ddp_backend",
    "https://pytorch.org/docs/stable/distributed.html#which-backend-to-use",
    run,
    NULL,
    0,
    RULES_PER_RANK,
    RULES_SIDE_COMM,
};
