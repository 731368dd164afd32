/* conntrack_test.c — the head deadline and the untrusted share, on
 * socketpairs: a cut connection's peer reads EOF. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/conntrack.h"
#include "harness.h"

struct pair {
    int ours, peer;
};

static struct pair mkpair(void)
{
    int sv[2];
    struct pair p = { -1, -1 };

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return p;
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    p.ours = sv[0];
    p.peer = sv[1];
    return p;
}

/* 1 if our end was shut down: the peer reads EOF (not EAGAIN). */
static int was_cut(struct pair p)
{
    char c;
    return recv(p.peer, &c, 1, 0) == 0;
}

static void closepair(struct pair p)
{
    close(p.ours);
    close(p.peer);
}

static void test_head_deadline(void)
{
    struct conntrack *ct;
    struct conntrack_stats st;
    struct err e;
    struct pair a = mkpair(), b = mkpair(), c = mkpair();

    REQUIRE(conntrack_start(5, 10, &ct, &e) == 0);
    struct conntrack_conn *ca = conntrack_open(ct, a.ours);
    struct conntrack_conn *cb = conntrack_open(ct, b.ours);
    struct conntrack_conn *cc = conntrack_open(ct, c.ours);
    int64_t now = conntrack_now_ms();

    conntrack_head_done(ct, cb, 1); /* b showed its token */
    conntrack_head_done(ct, cc, 0); /* c is inside an anonymous request */
    CHECK_EQ_INT(conntrack_reap(ct, now + 1000), 0);
    CHECK_EQ_INT(conntrack_reap(ct, now + 6000), 1); /* only a: still sending its head */
    CHECK(was_cut(a));
    CHECK(!was_cut(b));
    CHECK(!was_cut(c));
    /* c's request ends: a new deadline from now on */
    conntrack_request_done(ct, cc);
    CHECK_EQ_INT(conntrack_reap(ct, now + 4000), 0);
    CHECK_EQ_INT(conntrack_reap(ct, conntrack_now_ms() + 6000), 1);
    CHECK(was_cut(c));
    /* b is trusted for good, between requests too */
    conntrack_request_done(ct, cb);
    CHECK_EQ_INT(conntrack_reap(ct, now + 100000), 0);
    CHECK(!was_cut(b));
    conntrack_get_stats(ct, &st);
    CHECK_EQ_INT(st.open, 1);
    CHECK_EQ_INT(st.untrusted, 0);
    CHECK_EQ_INT(st.cut_deadline, 2);
    conntrack_close(ct, ca);
    conntrack_close(ct, cb);
    conntrack_close(ct, cc);
    conntrack_get_stats(ct, &st);
    CHECK_EQ_INT(st.open, 0);
    conntrack_stop(ct);
    closepair(a), closepair(b), closepair(c);
}

static void test_untrusted_share(void)
{
    struct conntrack *ct;
    struct conntrack_stats st;
    struct err e;
    struct pair p[6];
    struct conntrack_conn *cs[6];

    REQUIRE(conntrack_start(60, 3, &ct, &e) == 0);
    for (int i = 0; i < 6; i++) p[i] = mkpair();
    cs[0] = conntrack_open(ct, p[0].ours);
    conntrack_head_done(ct, cs[0], 1); /* trusted: never evicted */
    cs[1] = conntrack_open(ct, p[1].ours);
    conntrack_head_done(ct, cs[1], 0); /* busy anonymous request: not evicted */
    cs[2] = conntrack_open(ct, p[2].ours);
    cs[3] = conntrack_open(ct, p[3].ours); /* untrusted: 1, 2, 3 */
    CHECK(!was_cut(p[2]));
    cs[4] = conntrack_open(ct, p[4].ours); /* 4 untrusted: the oldest idle one (2) goes */
    CHECK(was_cut(p[2]));
    CHECK(!was_cut(p[1]));
    CHECK(!was_cut(p[3]));
    cs[5] = conntrack_open(ct, p[5].ours); /* then 3 */
    CHECK(was_cut(p[3]));
    CHECK(!was_cut(p[0]));
    CHECK(!was_cut(p[4]));
    CHECK(!was_cut(p[5]));
    conntrack_get_stats(ct, &st);
    CHECK_EQ_INT(st.untrusted, 3);
    CHECK_EQ_INT(st.open, 4);
    CHECK_EQ_INT(st.cut_evicted, 2);
    /* MHD closes them in any order */
    for (int i = 5; i >= 0; i--) conntrack_close(ct, cs[i]);
    conntrack_get_stats(ct, &st);
    CHECK_EQ_INT(st.open, 0);
    CHECK_EQ_INT(st.untrusted, 0);
    conntrack_stop(ct);
    for (int i = 0; i < 6; i++) closepair(p[i]);
}

int main(void)
{
    RUN(test_head_deadline);
    RUN(test_untrusted_share);
    return harness_done("conntrack");
}
