/* xmalloc_test — the wrappers return usable memory and exact copies. */
#include "../../server/xmalloc.c"
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

int main(void)
{
    RUN(test_wrappers);
    return harness_done("xmalloc_test");
}
