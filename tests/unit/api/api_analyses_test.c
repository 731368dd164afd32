/* api_analyses_test — the default rank of /critpath: the lowest key of
 * the stored documents (the handlers themselves are driven over HTTP by
 * tests/integration/analyses_api.test.mjs; their ns parameters go through
 * qparam_ns, whose parser tests/unit/http/qparam_test.c covers). */
#include "../../../server/api/api_analyses.c"

#include "harness.h"

static void test_lowest_rank(void)
{
    json_t *docs = json_pack("{s:{},s:{},s:{}}", "10", "2", "7");
    CHECK_EQ_INT(lowest_rank(docs), 2); /* numeric, not "10" < "2" */
    json_decref(docs);
    docs = json_object();
    CHECK_EQ_INT(lowest_rank(docs), -1); /* no ranks */
    json_decref(docs);
}

int main(void)
{
    RUN(test_lowest_rank);
    return harness_done("api_analyses");
}
