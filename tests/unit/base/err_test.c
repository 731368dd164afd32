/* err_test — the error pattern: codes, messages, prefixes, HTTP mapping. */
#include "../../../server/base/err.c"
#include "harness.h"

static void test_set_and_prefix(void)
{
    struct err e;
    CHECK_EQ_INT(err_set(&e, ERR_INVALID, "bad %s at %d", "thing", 7), ERR_INVALID);
    CHECK_EQ_STR(e.msg, "bad thing at 7");
    CHECK_EQ_INT(err_prefix(&e, "file %s", "a.json"), ERR_INVALID);
    CHECK_EQ_STR(e.msg, "file a.json: bad thing at 7");
    err_clear(&e);
    CHECK_EQ_INT(e.code, ERR_OK);
    CHECK_EQ_STR(e.msg, "");
    CHECK_EQ_INT(err_set(NULL, ERR_IO, "ignored"), ERR_IO);
}

static void test_long_messages_are_cut_not_overflowed(void)
{
    struct err e;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    err_set(&e, ERR_INVALID, "%s", big);
    CHECK_EQ_INT(strlen(e.msg), sizeof e.msg - 1);
    err_prefix(&e, "%s", big);
    CHECK_EQ_INT(strlen(e.msg), sizeof e.msg - 1);
}

static void test_http_mapping(void)
{
    CHECK_EQ_INT(err_http_status(ERR_INVALID), 400);
    CHECK_EQ_INT(err_http_status(ERR_TOO_LARGE), 413);
    CHECK_EQ_INT(err_http_status(ERR_NOT_FOUND), 404);
    CHECK_EQ_INT(err_http_status(ERR_UNSUPPORTED), 415);
    CHECK_EQ_INT(err_http_status(ERR_AUTH), 401);
    CHECK_EQ_INT(err_http_status(ERR_NOSPACE), 507);
    CHECK_EQ_INT(err_http_status(ERR_READ_ONLY), 503);
    CHECK_EQ_STR(err_code_name(ERR_READ_ONLY), "read_only");
    CHECK_EQ_INT(err_http_status(ERR_DAMAGED), 500);
    CHECK_EQ_STR(err_code_name(ERR_DAMAGED), "run_damaged");
    CHECK_EQ_INT(err_http_status(ERR_COMPUTING), 503);
    CHECK_EQ_STR(err_code_name(ERR_COMPUTING), "computing");
    CHECK_EQ_INT(err_http_status(ERR_DB), 500);
    CHECK_EQ_STR(err_code_name(ERR_TOO_LARGE), "too_large");
    CHECK_EQ_STR(err_code_name(12345), "internal");
}

int main(void)
{
    RUN(test_set_and_prefix);
    RUN(test_long_messages_are_cut_not_overflowed);
    RUN(test_http_mapping);
    return harness_done("err_test");
}
