/*
 * xmalloc.h — allocation wrappers that never return NULL.
 *
 * Allocation failure of small objects is not recoverable in a server of this
 * kind, so these wrappers log and abort(): this file is one of the two places
 * allowed to abort. Sizes coming from the network or from trace files must be
 * checked against configured limits BEFORE calling them. Every returned
 * pointer is owned by the caller and released with free().
 *
 * Test hook: xmalloc_fail_after(n) makes the n-th following allocation abort
 * deterministically (n = 0 disables), for fault-injection tests.
 */
#ifndef TB_XMALLOC_H
#define TB_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);                 /* owned by caller */
void *xcalloc(size_t n, size_t size);    /* owned by caller */
void *xrealloc(void *p, size_t n);       /* owned by caller */
char *xstrdup(const char *s);            /* owned by caller */
char *xstrndup(const char *s, size_t n); /* owned by caller: at most n bytes of s, NUL-terminated */
char *xmemdup0(const void *s, size_t n); /* owned by caller: exactly n bytes + a NUL */
char *xasprintf(const char *fmt, ...) /* owned by caller */
    __attribute__((format(printf, 1, 2)));

/* qsort for arrays that may be empty: qsort's pointer must be non-null even
 * for 0 elements, and an empty array here is often a NULL one (UBSan
 * reports it). Every sort in server/ goes through this. */
void xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
