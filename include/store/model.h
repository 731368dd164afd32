/*
 * model.h — the trace event model every importer produces and the run
 * database stores. Plain value types, no functions with state.
 *
 * Times are int64 nanoseconds on the trace's own clock (Chrome `ts` in µs x
 * 1000). Strings are interned ids (uint32, 0 = none) except `args`, which is
 * the raw JSON text of the event's args object, borrowed for the duration of
 * the rundb_add_* call that receives it.
 *
 * tb_kind_from_cat() maps every category spelling seen in the corpus
 * (Kineto 2020 `Operator`/`Runtime`/`Kernel`/`Memcpy`/`Memset` and later
 * `cpu_op`/`cuda_runtime`/`kernel`/`gpu_memcpy`/...) to one enum, so no later
 * stage compares category strings.
 */
#ifndef TB_MODEL_H
#define TB_MODEL_H

#include <stddef.h>
#include <stdint.h>

enum tb_kind {
    TB_K_OTHER = 0,
    TB_K_CPU_OP,          /* cpu_op, Operator */
    TB_K_USER_ANNOTATION, /* user_annotation (record_function, ProfilerStep#N) */
    TB_K_PYTHON,          /* python_function */
    TB_K_RUNTIME,         /* cuda_runtime, Runtime, mtia_runtime, ... */
    TB_K_DRIVER,          /* cuda_driver */
    TB_K_KERNEL,          /* kernel, Kernel */
    TB_K_MEMCPY,          /* gpu_memcpy, Memcpy */
    TB_K_MEMSET,          /* gpu_memset, Memset */
    TB_K_GPU_ANNOTATION,  /* gpu_user_annotation */
    TB_K_TRACE,           /* Trace: the profiler's own range */
    TB_K_SYNC,            /* cuda_sync */
    TB_K_COUNT
};

enum tb_track_kind { TB_TRACK_CPU = 0, TB_TRACK_GPU = 1, TB_TRACK_OTHER = 2 };

enum tb_note_level { TB_NOTE_INFO = 0, TB_NOTE_REPAIRED = 1, TB_NOTE_DROPPED = 2 };

struct tb_slice {
    uint32_t track;
    uint32_t name, cat;
    enum tb_kind kind;
    int64_t ts, dur;
    int64_t corr;         /* args.correlation, 0 = none */
    int64_t ext;          /* args["External id"], 0 = none */
    const char *args;     /* raw JSON object text or NULL */
    size_t args_len;
};

struct tb_flow {
    uint32_t track;
    uint32_t cat, name;
    const char *fid;      /* id text as written (numbers or strings) */
    size_t fid_len;
    char ph;              /* 's', 't' or 'f' */
    char bp;              /* 'e' (enclosing) or 0 (next slice) */
    int64_t ts;
};

struct tb_instant {
    uint32_t track;
    uint32_t name, cat;
    char scope;           /* 't', 'p', 'g' */
    int64_t ts;
    const char *args;
    size_t args_len;
};

struct tb_counter {
    uint32_t name;        /* "<event name>.<series>" */
    uint32_t track;       /* the process's track for the pid */
    int64_t ts;
    double value;
};

struct tb_mem {
    uint32_t track;
    int64_t ts;
    int dev_type;         /* 0 CPU, 1 CUDA, ... as Kineto writes it */
    int dev_id;
    int64_t addr;
    int64_t bytes;        /* + alloc, - free */
    int64_t total_alloc;  /* -1 when the trace does not say */
    int64_t total_reserved;
};

struct tb_rank_stats {
    uint64_t events;      /* events read from the file */
    uint64_t slices, flows, instants, counters, mems, metadata;
    uint64_t dropped, repaired;
    uint64_t by_kind[TB_K_COUNT];
};

/* Maps a category spelling to its kind (case-insensitive). Static table. */
enum tb_kind tb_kind_from_cat(const char *cat, size_t n);

/* A short stable name for a kind ("kernel", "cpu_op", ...). Static. */
const char *tb_kind_name(enum tb_kind k);

/* 1 when slices of this kind run on a GPU stream. */
int tb_kind_is_gpu(enum tb_kind k);

#endif
