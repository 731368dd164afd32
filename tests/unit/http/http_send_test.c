/* http_send_test — response helpers: gzip round trip through zlib and the
 * Content-Disposition of a download name (ASCII fallback and RFC 5987
 * form). The live server in http_test.c checks the security headers. */
#include "harness.h"

#include "../../../server/http/http_send.c"

static void test_gzip_and_disposition(void)
{
    static const char text[] = "{\"runs\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}";
    char back[sizeof text];
    size_t n = 0;
    uLongf bn = sizeof back;
    char *gz = gzip_bytes(text, sizeof text - 1, &n);
    z_stream z;

    REQUIRE(gz != NULL);
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 31);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)back;
    z.avail_out = (uInt)bn;
    CHECK_EQ_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
    CHECK_EQ_INT((int)z.total_out, (int)sizeof text - 1);
    CHECK(memcmp(back, text, sizeof text - 1) == 0);
    inflateEnd(&z);
    free(gz);

    {
        char *cd = content_disposition("rank 0 \"x\"/é.json");
        CHECK(strstr(cd, "filename=\"rank_0__x____.json\"") != NULL);
        CHECK(strstr(cd, "filename*=UTF-8''rank%200%20%22x%22%2F%C3%A9.json") != NULL);
        free(cd);
    }
}

int main(void)
{
    RUN(test_gzip_and_disposition);
    return harness_done("http_send");
}
