/* logparse_fuzz.c — job log bodies through logparse_parse, with the zone
 * offset taken from the first input byte. Invariants: a refused body
 * returns nothing; an accepted one has at most LOGPARSE_ENTRIES_MAX
 * entries, each with valid UTF-8 text within LOGPARSE_TEXT_MAX, a rank of
 * -1 or more and fields that are an object of at most LOGPARSE_FIELDS_MAX
 * members; every timestamp found alone parses to the same value twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "ingest/logparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct logparse_result r;
    struct err e;
    int tz = size ? ((int)data[0] - 128) * 900 : 0;
    int64_t a, b;
    size_t ua, ub;
    if (logparse_timestamp((const char *)data, size, tz, &a, &ua)) {
        if (!logparse_timestamp((const char *)data, size, tz, &b, &ub) || a != b || ua != ub || ua > size) abort();
    }
    if (logparse_parse((const char *)data, size, tz, &r, &e) != 0) {
        if (r.n != 0 || r.v != NULL) abort();
        return 0;
    }
    if (r.n > LOGPARSE_ENTRIES_MAX) abort();
    for (size_t i = 0; i < r.n; i++) {
        const struct logparse_entry *en = &r.v[i];
        size_t n = strlen(en->text);
        if (n > LOGPARSE_TEXT_MAX * 3 || !utf8_valid(en->text, n) || en->rank < -1) abort();
        if (en->fields && (!json_is_object(en->fields) || json_object_size(en->fields) > LOGPARSE_FIELDS_MAX))
            abort();
    }
    logparse_free(&r);
    return 0;
}
