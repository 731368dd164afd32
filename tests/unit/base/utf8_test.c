/* utf8_test.c — validity, '?' and U+FFFD repair of every kind of bad
 * sequence (lone continuation, overlong, surrogate, above U+10FFFF, cut at
 * the end), the NUL-terminated dup, and the in-place copy the store uses. */
#include <string.h>

#include "harness.h"
#include "base/utf8.h"
#include "base/xmalloc.h"

static void test_utf8(void)
{
    static const struct {
        const char *in;
        size_t n;
        int valid;
        const char *repaired;
    } cases[] = {
        { "ascii", 5, 1, "ascii" },
        { "\xc3\xa9t\xc3\xa9", 6, 1, "\xc3\xa9t\xc3\xa9" },
        { "\xf0\x9f\x98\x80", 4, 1, "\xf0\x9f\x98\x80" },
        { "\xef\xbf\xbd", 3, 1, "\xef\xbf\xbd" },
        { "a\x80" "b", 3, 0, "a?b" },                 /* lone continuation */
        { "\xc0\x80", 2, 0, "??" },                   /* overlong NUL */
        { "\xe0\x80\x80", 3, 0, "???" },              /* overlong 3-byte */
        { "\xed\xa0\x80", 3, 0, "???" },              /* UTF-16 surrogate */
        { "\xf4\x90\x80\x80", 4, 0, "????" },         /* above U+10FFFF */
        { "\xf5\x80\x80\x80", 4, 0, "????" },
        { "\xff\xfe", 2, 0, "??" },
        { "x\xe2\x82", 3, 0, "x??" },                 /* cut sequence at the end */
        { "\xe2\x82x\xe2\x82\xac", 6, 0, "??x\xe2\x82\xac" },
        { "\xc3", 1, 0, "?" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = xmalloc(cases[i].n);
        CHECK_EQ_INT(utf8_valid(cases[i].in, cases[i].n), cases[i].valid);
        CHECK_EQ_INT(utf8_copy(cases[i].in, cases[i].n, out), cases[i].n);
        if (memcmp(out, cases[i].repaired, cases[i].n) != 0) fprintf(stderr, "utf8 case %zu\n", i);
        CHECK(memcmp(out, cases[i].repaired, cases[i].n) == 0);
        CHECK(utf8_valid(out, cases[i].n));
        free(out);
        /* utf8_repair: the same, each '?' a U+FFFD */
        char want[64], *got = xmalloc(3 * cases[i].n);
        size_t wn = 0;
        for (size_t k = 0; k < cases[i].n; k++) {
            if (cases[i].repaired[k] == '?') memcpy(want + wn, "\xef\xbf\xbd", 3), wn += 3;
            else want[wn++] = cases[i].repaired[k];
        }
        CHECK_EQ_INT(utf8_repair(cases[i].in, cases[i].n, got), wn);
        CHECK(memcmp(got, want, wn) == 0);
        free(got);
    }
    /* each case inside ASCII runs of every length around the eight-byte
     * steps: the same verdict and the same repair in place */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t pre = 0; pre < 18; pre++) {
            char in[64], want[64];
            size_t n = 0;
            for (size_t k = 0; k < pre; k++) in[n++] = (char)('a' + k);
            memcpy(in + n, cases[i].in, cases[i].n);
            memcpy(want, in, n);
            memcpy(want + n, cases[i].repaired, cases[i].n);
            n += cases[i].n;
            for (size_t k = 0; k < 11; k++) in[n] = want[n] = (char)('A' + k), n++;
            CHECK_EQ_INT(utf8_valid(in, n), cases[i].valid);
            utf8_copy(in, n, in);
            CHECK(memcmp(in, want, n) == 0);
        }
    }
    char *dup = utf8_dup("raw\xff.json");
    CHECK_EQ_STR(dup, "raw\xef\xbf\xbd.json");
    free(dup);
    /* in place, as rundb does */
    char s[] = "ok\xff\xc3\xa9";
    utf8_copy(s, 5, s);
    CHECK_EQ_STR(s, "ok?\xc3\xa9");
}

static void test_put(void)
{
    char o[4];
    CHECK_EQ_INT(utf8_put(o, 'A'), 1);
    CHECK_EQ_INT(utf8_put(o, 0xE9), 2);
    CHECK(memcmp(o, "\xc3\xa9", 2) == 0);
    CHECK_EQ_INT(utf8_put(o, 0xFFFD), 3);
    CHECK(memcmp(o, "\xef\xbf\xbd", 3) == 0);
    CHECK_EQ_INT(utf8_put(o, 0x1F600), 4);
    CHECK(memcmp(o, "\xf0\x9f\x98\x80", 4) == 0);
}

int main(void)
{
    RUN(test_utf8);
    RUN(test_put);
    return harness_done("utf8");
}
