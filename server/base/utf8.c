/* utf8.c — see include/base/utf8.h. */
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

#include "base/xmalloc.h"

size_t utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;
        if (c == 0xED && s[1] > 0x9F) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;
        if (c == 0xF4 && s[1] > 0x8F) return 0;
        return 4;
    }
    return 0;
}

/* Bytes from i on that are plain ASCII, eight at a time (args and names
 * are almost all ASCII). */
static size_t ascii_run(const char *s, size_t i, size_t n)
{
    uint64_t x;
    while (i + 8 <= n) {
        memcpy(&x, s + i, 8);
        if (x & 0x8080808080808080ULL) break;
        i += 8;
    }
    while (i < n && (unsigned char)s[i] < 0x80) i++;
    return i;
}

int utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            i = ascii_run(s, i, n);
            continue;
        }
        size_t k = utf8_seq(u + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

size_t utf8_copy(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            size_t j = ascii_run(s, i, n);
            memmove(out + i, s + i, j - i); /* the store copies in place */
            i = j;
            continue;
        }
        size_t k = utf8_seq(u + i, n - i);
        if (!k) {
            out[i++] = '?';
            continue;
        }
        memcpy(out + i, s + i, k);
        i += k;
    }
    return n;
}

size_t utf8_repair(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t k = u[i] < 0x80 ? 1 : utf8_seq(u + i, n - i);
        if (!k) {
            o += utf8_put(out + o, 0xFFFD);
            i++;
            continue;
        }
        memcpy(out + o, s + i, k);
        i += k;
        o += k;
    }
    return o;
}

char *utf8_dup(const char *s)
{
    size_t n = strlen(s);
    char *out = xmalloc(3 * n + 1);
    out[utf8_repair(s, n, out)] = '\0';
    return out;
}
