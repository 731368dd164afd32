/*
 * harness.h — the C unit-test harness (header only).
 *
 * A test file defines `static void test_xxx(void)` functions and lists them
 * in main() with RUN(test_xxx). CHECK(cond) records a failure with file and
 * line and continues; REQUIRE(cond) also returns from the test. main()
 * returns harness_done(), which prints "N passed, N failed" (checks) and
 * exits non-zero on any failure. Tests find ../shared through
 * harness_shared() (env TB_SHARED, default ../shared relative to the repo).
 */
#ifndef TB_HARNESS_H
#define TB_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_pass, harness_fail;
static const char *harness_current;

#define CHECK(cond)                                                                                     \
    do {                                                                                                \
        if (cond) harness_pass++;                                                                       \
        else {                                                                                          \
            harness_fail++;                                                                             \
            fprintf(stderr, "FAIL %s:%d in %s: %s\n", __FILE__, __LINE__, harness_current, #cond);      \
        }                                                                                               \
    } while (0)

#define REQUIRE(cond)                                                                                   \
    do {                                                                                                \
        if (cond) harness_pass++;                                                                       \
        else {                                                                                          \
            harness_fail++;                                                                             \
            fprintf(stderr, "FAIL %s:%d in %s: %s (stopping this test)\n", __FILE__, __LINE__,         \
                    harness_current, #cond);                                                            \
            return;                                                                                     \
        }                                                                                               \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                              \
    do {                                                                                                \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                           \
        if (va_ == vb_) harness_pass++;                                                                 \
        else {                                                                                          \
            harness_fail++;                                                                             \
            fprintf(stderr, "FAIL %s:%d in %s: %s == %s (%lld != %lld)\n", __FILE__, __LINE__,          \
                    harness_current, #a, #b, va_, vb_);                                                 \
        }                                                                                               \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                              \
    do {                                                                                                \
        const char *sa_ = (a), *sb_ = (b);                                                              \
        if (sa_ && sb_ && strcmp(sa_, sb_) == 0) harness_pass++;                                        \
        else {                                                                                          \
            harness_fail++;                                                                             \
            fprintf(stderr, "FAIL %s:%d in %s: %s == %s (\"%s\" != \"%s\")\n", __FILE__, __LINE__,      \
                    harness_current, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");               \
        }                                                                                               \
    } while (0)

#define RUN(fn)                                                                                         \
    do {                                                                                                \
        harness_current = #fn;                                                                          \
        fn();                                                                                           \
    } while (0)

/* xorshift64: reproducible pseudo-random numbers for generated inputs;
 * *state must not start at 0. */
static inline unsigned long long harness_rand(unsigned long long *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static inline const char *harness_shared(void)
{
    const char *s = getenv("TB_SHARED");
    return s && *s ? s : "../shared";
}

static inline int harness_done(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, harness_pass, harness_fail);
    return harness_fail ? 1 : 0;
}

#endif
