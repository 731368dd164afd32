/*
 * timeline_flame.h — the flame graph (icicle) of a time window: the slices
 * of some tracks aggregated by call path, with the same time also added up
 * by lane and by category (the timeline's area selection groups by those).
 *
 * Call paths come from time containment, not from the stored depth or
 * parent: a slice's parent is the innermost earlier slice of its track that
 * contains it whole ([ts, ts+dur] within the other's), so a partial overlap
 * (Kineto with_stack spans that start inside a short Python frame and end
 * after it) makes a sibling path, never a deeper one. Each slice counts its
 * time clipped to the window; self = clipped time minus that of the slices
 * it contains. With `contained`, only slices wholly inside the window count
 * (the flame graph of one operator: the window is its span). Over a
 * window (not `contained`) the steps' annotations (ProfilerStep#N) are one
 * name, TFLAME_STEP, so the steps of a run add up under one path instead
 * of a tree each.
 *
 * Memory: a struct tflame owns its nodes and maps (timeline_flame_free).
 * Bounds: at most TFLAME_NODES nodes (slices past it are counted in
 * `dropped`); timeline_flame_track reads at most max_scan slices in all
 * (ERR_TOO_LARGE past it). Not thread-safe: one tflame per request.
 */
#ifndef TB_TIMELINE_FLAME_H
#define TB_TIMELINE_FLAME_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/hmap.h"

#define TFLAME_NODES 50000
/* The name of every ProfilerStep#N node (no str id is this large). */
#define TFLAME_STEP UINT32_MAX

/* A call-path node: parent index (−1 for a root), the name's str id. */
struct tflame_node {
    int32_t parent;
    uint32_t name;
    int64_t count, total, self; /* ns */
};

/* Time of a lane (key = track id) or a category (key = str id, 0 = none). */
struct tflame_group {
    int64_t key, count, total, self;
};

struct tflame {
    struct tflame_node *nodes;
    size_t n, cap;
    struct hmap index;    /* (parent, name) -> node index */
    struct hmap lanes;    /* track -> struct tflame_group */
    struct hmap cats;     /* cat str id -> struct tflame_group */
    struct hmap steps;    /* str ids of ProfilerStep#N names (value: unused byte) */
    int steps_loaded;     /* steps read from the run (timeline_flame_track) */
    int64_t dropped;      /* slices left out: TFLAME_NODES reached */
    int64_t scanned;      /* slices read so far */
};

/* One slice of a track as the builder takes it. */
struct tflame_slice {
    int64_t ts, dur;
    uint32_t name, cat;
};

void timeline_flame_init(struct tflame *f);
void timeline_flame_free(struct tflame *f);

/* Names str id `name` as a step annotation (TFLAME_STEP in the paths). */
void timeline_flame_step_name(struct tflame *f, uint32_t name);

/* Adds the slices of one track (any order; sorted in place) over
 * [start, end): call paths by containment, clipped time. */
void timeline_flame_add(struct tflame *f, int64_t track, struct tflame_slice *s, size_t n, int64_t start, int64_t end,
                        int contained);

/* Reads the slices of `track` overlapping [start, end) (those open at
 * start found through their stored parents, the rest by id range) and
 * adds them; at most max_scan slices read over all calls on f. */
int timeline_flame_track(sqlite3 *db, struct tflame *f, int64_t track, int64_t start, int64_t end, int contained,
                         int64_t max_scan, struct err *e);

/* The groups of a map (lanes or cats), longest total first; *n of them,
 * malloc'd, the caller frees. */
struct tflame_group *timeline_flame_groups(const struct hmap *m, size_t *n);

#endif
