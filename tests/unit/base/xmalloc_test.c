/* xmalloc_test — the wrappers return usable memory and exact copies. */
#include "../../../server/base/xmalloc.c"
#include "harness.h"

static void test_wrappers(void)
{
    char *s = xstrdup("hello");
    CHECK_EQ_STR(s, "hello");
    free(s);
    s = xstrndup("hello world", 5);
    CHECK_EQ_STR(s, "hello");
    free(s);
    s = xstrndup("hi", 200); /* never reads past the terminator */
    CHECK_EQ_STR(s, "hi");
    free(s);
    s = xmemdup0("a\0b", 3); /* exact bytes, NULs included */
    CHECK(s[0] == 'a' && s[1] == '\0' && s[2] == 'b' && s[3] == '\0');
    free(s);
    s = xasprintf("%d-%s", 42, "x");
    CHECK_EQ_STR(s, "42-x");
    free(s);
    int *a = xcalloc(100, sizeof *a);
    int zero = 1;
    for (int i = 0; i < 100; i++) zero &= a[i] == 0;
    CHECK(zero);
    a = xrealloc(a, 1000 * sizeof *a);
    a[999] = 7;
    CHECK_EQ_INT(a[999], 7);
    free(a);
    void *z = xmalloc(0); /* a zero-size request still gives a pointer */
    CHECK(z != NULL);
    free(z);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* An empty array is often NULL; qsort(NULL, 0) is undefined (UBSan aborts
 * the sanitizer build), xqsort accepts it. */
static void test_xqsort(void)
{
    xqsort(NULL, 0, sizeof(int), cmp_int);
    int one[1] = { 7 };
    xqsort(one, 1, sizeof one[0], cmp_int);
    CHECK_EQ_INT(one[0], 7);
    int v[5] = { 5, -1, 3, 3, 0 };
    xqsort(v, 5, sizeof v[0], cmp_int);
    CHECK(v[0] == -1 && v[1] == 0 && v[2] == 3 && v[3] == 3 && v[4] == 5);
}

int main(void)
{
    RUN(test_wrappers);
    RUN(test_xqsort);
    return harness_done("xmalloc_test");
}
