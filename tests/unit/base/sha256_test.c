/* sha256_test.c — the FIPS 180-4 test vectors (empty, "abc", the 448-bit
 * message, a million 'a' fed in uneven pieces) through the portable code and,
 * on a CPU with the SHA extensions, through them; both paths agreeing on
 * pseudo-random data of every length around the block edges; a file's hash,
 * and the run hash not depending on the order of its files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "base/sha256.h"

static void hex_of(const char *s, char out[SHA256_HEX_LEN + 1])
{
    struct sha256 h;
    sha256_init(&h);
    sha256_update(&h, s, strlen(s));
    sha256_hex(&h, out);
}

/* 1: the CPU's SHA extensions; 0: the portable code. */
static int use_accel;

static void init_path(struct sha256 *h)
{
    sha256_init(h);
    h->accel = use_accel;
}

static void path_hex(const void *p, size_t n, char out[SHA256_HEX_LEN + 1])
{
    struct sha256 h;
    init_path(&h);
    sha256_update(&h, p, n);
    sha256_hex(&h, out);
}

static void vectors_on_path(void)
{
    char hex[SHA256_HEX_LEN + 1];
    const char *abc = "abc", *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    path_hex("", 0, hex);
    CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    path_hex(abc, strlen(abc), hex);
    CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    path_hex(m448, strlen(m448), hex);
    CHECK_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    struct sha256 h;
    char a[4096];
    memset(a, 'a', sizeof a);
    init_path(&h);
    for (size_t left = 1000000; left;) {
        size_t n = left < sizeof a ? left : sizeof a;
        sha256_update(&h, a, n);
        left -= n;
    }
    sha256_hex(&h, hex);
    CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_paths(void)
{
    struct sha256 probe;
    sha256_init(&probe);
    int has = probe.accel;
    use_accel = 0;
    vectors_on_path();
    if (!has) {
        printf("  (this CPU has no SHA extensions: the portable path only)\n");
        return;
    }
    use_accel = 1;
    vectors_on_path();
    /* Lengths 0..300 cover every position of the last partial block and
     * runs of several whole blocks; the bytes come from a fixed LCG. */
    unsigned char buf[300];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    int differ = 0;
    for (size_t n = 0; n <= sizeof buf; n++) {
        char p[SHA256_HEX_LEN + 1], q[SHA256_HEX_LEN + 1];
        use_accel = 0;
        path_hex(buf, n, p);
        use_accel = 1;
        path_hex(buf, n, q);
        differ += strcmp(p, q) != 0;
    }
    CHECK_EQ_INT(differ, 0);
}

static void test_vectors(void)
{
    char hex[SHA256_HEX_LEN + 1];
    hex_of("", hex);
    CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", hex);
    CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex);
    CHECK_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    struct sha256 h;
    char a[997];
    memset(a, 'a', sizeof a);
    sha256_init(&h);
    size_t left = 1000000;
    for (size_t k = 1; left; k = k % 997 + 1) {
        size_t n = k < left ? k : left;
        sha256_update(&h, a, n);
        left -= n;
    }
    sha256_hex(&h, hex);
    CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_file_and_run(void)
{
    char path[] = "/tmp/sha256_test-XXXXXX", hex[SHA256_HEX_LEN + 1];
    struct err e;
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, "abc", 3) == 3);
    close(fd);
    CHECK_EQ_INT(sha256_file(path, hex, &e), 0);
    CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    CHECK_EQ_INT(sha256_file(path, hex, &e), ERR_IO);

    char one[2][SHA256_HEX_LEN + 1], two[2][SHA256_HEX_LEN + 1], r1[SHA256_HEX_LEN + 1], r2[SHA256_HEX_LEN + 1];
    hex_of("rank0", one[0]);
    hex_of("rank1", one[1]);
    memcpy(two[0], one[1], sizeof two[0]);
    memcpy(two[1], one[0], sizeof two[1]);
    sha256_of_hashes(one, 2, r1);
    sha256_of_hashes(two, 2, r2);
    CHECK_EQ_STR(r1, r2);
    sha256_of_hashes(one, 1, r2);
    CHECK(strcmp(r1, r2) != 0);
}

int main(void)
{
    RUN(test_vectors);
    RUN(test_paths);
    RUN(test_file_and_run);
    return harness_done("sha256");
}
