/* timeline_flame_test — the flame graph's call paths by time containment on
 * hand-made tracks: a partial overlap (a with_stack annotation that starts
 * inside a short Python frame and ends after it) is a sibling path, not a
 * deeper one; time is clipped to the window; self = own minus contained;
 * `contained` keeps only the slices wholly inside (one operator's graph). */
#include "derive/timeline_flame.h"

#include <string.h>

#include "harness.h"

enum { A = 1, B, P, C, D, CAT_PY = 7, CAT_OP = 8 };

/* The node of a path of names from the roots, or -1. */
static int find(const struct tflame *f, const uint32_t *path, int n)
{
    int32_t parent = -1;
    for (int d = 0; d < n; d++) {
        int32_t hit = -1;
        for (size_t i = 0; i < f->n; i++)
            if (f->nodes[i].parent == parent && f->nodes[i].name == path[d]) hit = (int32_t)i;
        if (hit < 0) return -1;
        parent = hit;
    }
    return parent;
}

/* The root node `root` (asserted to hold `child`), or -1. */
static int root_with(const struct tflame *f, uint32_t root, uint32_t child)
{
    int r = find(f, (uint32_t[]){ root }, 1);
    CHECK(r >= 0 && find(f, (uint32_t[]){ root, child }, 2) >= 0);
    return r;
}

static struct tflame_slice sl(int64_t ts, int64_t dur, uint32_t name, uint32_t cat)
{
    return (struct tflame_slice){ ts, dur, name, cat };
}

static void test_partial_overlap_is_a_sibling(void)
{
    /* A [0,100) holds B [10,20); P starts inside B and ends after it: its parent is A. C [30,40) is in P. */
    struct tflame_slice s[] = { sl(30, 10, C, CAT_OP), sl(0, 100, A, CAT_PY), sl(15, 75, P, CAT_OP), sl(10, 10, B, CAT_PY) };
    struct tflame f;
    timeline_flame_init(&f);
    timeline_flame_add(&f, 5, s, 4, 0, 1000, 0);
    CHECK_EQ_INT(f.n, 4);
    int a = find(&f, (uint32_t[]){ A }, 1), ab = find(&f, (uint32_t[]){ A, B }, 2), ap = find(&f, (uint32_t[]){ A, P }, 2),
        apc = find(&f, (uint32_t[]){ A, P, C }, 3);
    CHECK(a >= 0 && ab >= 0 && ap >= 0 && apc >= 0);
    CHECK_EQ_INT(find(&f, (uint32_t[]){ A, B, P }, 3), -1); /* the cascade the stored depths would make */
    CHECK_EQ_INT(f.nodes[a].total, 100);
    CHECK_EQ_INT(f.nodes[a].self, 100 - 10 - 75);
    CHECK_EQ_INT(f.nodes[ap].self, 75 - 10);
    CHECK_EQ_INT(f.nodes[apc].count, 1);
    size_t n;
    struct tflame_group *lanes = timeline_flame_groups(&f.lanes, &n);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(lanes[0].key, 5);
    CHECK_EQ_INT(lanes[0].count, 4);
    CHECK_EQ_INT(lanes[0].self, 100); /* the lane's busy time */
    free(lanes);
    struct tflame_group *cats = timeline_flame_groups(&f.cats, &n);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(cats[0].key, CAT_PY); /* 110 before 85 */
    CHECK_EQ_INT(cats[0].total, 110);
    CHECK_EQ_INT(cats[1].self, 65 + 10);
    free(cats);
    timeline_flame_free(&f);
}

static void test_window_clips_and_contained(void)
{
    struct tflame_slice s[] = { sl(0, 100, A, 0), sl(15, 75, P, 0), sl(30, 10, C, 0), sl(95, 20, D, 0) };
    struct tflame_slice t[4];
    struct tflame f;
    memcpy(t, s, sizeof s);
    timeline_flame_init(&f);
    timeline_flame_add(&f, 1, t, 4, 50, 200, 0);
    int a = find(&f, (uint32_t[]){ A }, 1), ap = find(&f, (uint32_t[]){ A, P }, 2), d = find(&f, (uint32_t[]){ D }, 1);
    CHECK(a >= 0 && ap >= 0 && d >= 0); /* D ends after A: a root of its own */
    CHECK_EQ_INT(find(&f, (uint32_t[]){ A, P, C }, 3), -1); /* C ended before the window */
    CHECK_EQ_INT(f.nodes[a].total, 50);
    CHECK_EQ_INT(f.nodes[ap].total, 40);
    CHECK_EQ_INT(f.nodes[a].self, 10);
    timeline_flame_free(&f);

    /* one operator: P's span, only what lies wholly inside it */
    memcpy(t, s, sizeof s);
    timeline_flame_init(&f);
    timeline_flame_add(&f, 1, t, 4, 15, 90, 1);
    CHECK_EQ_INT(f.n, 2);
    int p = root_with(&f, P, C);
    CHECK_EQ_INT(f.nodes[p].total, 75);
    CHECK_EQ_INT(f.nodes[p].self, 65);
    timeline_flame_free(&f);
}

static void test_repeated_steps_do_not_deepen(void)
{
    /* 50 steps, each an annotation that starts inside a short frame and ends after it: depth stays 2 */
    struct tflame_slice s[100];
    for (int i = 0; i < 50; i++) {
        s[2 * i] = sl(i * 100, 10, B, 0);     /* the frame */
        s[2 * i + 1] = sl(i * 100 + 5, 90, P, 0); /* the annotation, partial overlap */
    }
    struct tflame f;
    timeline_flame_init(&f);
    timeline_flame_add(&f, 1, s, 100, 0, 100000, 0);
    CHECK_EQ_INT(f.n, 2);
    int p = find(&f, (uint32_t[]){ P }, 1);
    CHECK(p >= 0);
    CHECK_EQ_INT(f.nodes[p].count, 50);
    timeline_flame_free(&f);
}

static void test_steps_add_up_under_one_name(void)
{
    /* three steps, each its own str id: as step names they share one path */
    struct tflame_slice s[] = { sl(0, 100, 50, 0), sl(10, 20, C, 0), sl(100, 100, 51, 0), sl(110, 20, C, 0), sl(200, 100, 52, 0) };
    struct tflame f;
    timeline_flame_init(&f);
    for (uint32_t n = 50; n <= 52; n++) timeline_flame_step_name(&f, n);
    timeline_flame_add(&f, 1, s, 5, 0, 1000, 0);
    CHECK_EQ_INT(f.n, 2);
    int st = root_with(&f, TFLAME_STEP, C);
    CHECK(f.nodes[st].count == 3 && f.nodes[st].total == 300 && f.nodes[st].self == 300 - 2 * 20);
    timeline_flame_free(&f);
}

int main(void)
{
    RUN(test_partial_overlap_is_a_sibling);
    RUN(test_window_clips_and_contained);
    RUN(test_repeated_steps_do_not_deepen);
    RUN(test_steps_add_up_under_one_name);
    return harness_done("timeline_flame");
}
