/* http_test.c — a live server on 127.0.0.1:0 (real catalog + ingest in a scratch data dir)
 * driven over raw sockets: security headers, token auth and its cookie
 * redirect, CSRF, early 413s and cleanup after a client disconnects
 * mid-upload. */
#include "harness.h"

#include "../../../server/http/http.c"

#include <dirent.h>
#include <zlib.h>

#include "ingest/ingest.h"
#include "ingest/ingest_service.h"
#include "store/catalog.h"

/* ------------------------------------------------------------------------ */
/* Live server                                                                */
/* ------------------------------------------------------------------------ */

static struct app app;
static struct http_server *srv;
static char data_dir[64];

static int dial(void)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)http_port(srv));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends req, reads the whole answer (the server closes: Connection: close). */
static char *roundtrip(const char *req)
{
    static char buf[65536];
    size_t n = 0;
    ssize_t r;
    int fd = dial();

    if (fd < 0) return strcpy(buf, "(connect failed)");
    if (write(fd, req, strlen(req)) < 0) buf[0] = '\0';
    while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
    buf[n] = '\0';
    close(fd);
    return buf;
}

static int status_of(const char *resp)
{
    return strncmp(resp, "HTTP/1.1 ", 9) == 0 ? atoi(resp + 9) : -1;
}

static int tmp_uploads(void)
{
    char path[128];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(path, sizeof path, "%s/tmp", data_dir);
    if (!(d = opendir(path))) return 0;
    while ((de = readdir(d)))
        if (strncmp(de->d_name, "upload-", 7) == 0) n++;
    closedir(d);
    return n;
}

static void test_live(void)
{
    struct err e;
    char *r, req[1024];

    strcpy(data_dir, "/tmp/tb_http_test_XXXXXX");
    REQUIRE(mkdtemp(data_dir) != NULL);
    config_defaults(&app.cfg);
    strcpy(app.cfg.data_dir, data_dir);
    app.cfg.port = 0;
    app.cfg.threads = 2;
    app.cfg.upload_limit = 4096;
    strcpy(app.token, "T0ken");
    REQUIRE(catalog_open(data_dir, &app.cat, &e) == 0);
    REQUIRE(ingest_service_start(app.cat, &app.cfg, &app.ing, &e) == 0);
    REQUIRE(http_start(&app, &srv, &e) == 0);
    CHECK(http_port(srv) > 0);

    r = roundtrip("GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 200);
    CHECK(strstr(r, "Content-Security-Policy: default-src 'self'") != NULL);
    CHECK(strstr(r, "X-Content-Type-Options: nosniff") != NULL);
    CHECK(strstr(r, "X-Frame-Options: DENY") != NULL);
    CHECK(strstr(r, "Referrer-Policy: no-referrer") != NULL);
    CHECK(strstr(r, "Cache-Control: no-store") != NULL);
    CHECK(strstr(r, "\"ok\":true") != NULL);

    r = roundtrip("GET /api/runs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 401);
    CHECK(strstr(r, "\"code\":\"unauthorized\"") != NULL);
    r = roundtrip("GET /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 401);
    r = roundtrip("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 401);
    CHECK(strstr(r, "text/html") != NULL && strstr(r, "?token=") != NULL);
    r = roundtrip("GET /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 200);
    CHECK(strstr(r, "\"runs\":") != NULL);

    r = roundtrip("GET /x?a=1&token=T0ken&b=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 303);
    CHECK(strstr(r, "Location: /x?a=1&b=2\r\n") != NULL);
    {
        /* the cookie carries the port: other users' servers on the node use other ports */
        char want[96];
        snprintf(want, sizeof want, "Set-Cookie: tb_token_%d=T0ken; Path=/; HttpOnly; SameSite=Strict",
                 http_port(srv));
        CHECK(strstr(r, want) != NULL);
        CHECK(strstr(r, "Set-Cookie: tb_token=") == NULL);
    }
    r = roundtrip("GET //evil.example/?token=T0ken HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(strstr(r, "Location: /evil.example/\r\n") != NULL);

    {
        char q[256];
        snprintf(q, sizeof q, "DELETE /api/runs/0123456789abcdef HTTP/1.1\r\nHost: x\r\nCookie: tb_token_%d=T0ken\r\n"
                 "Connection: close\r\n\r\n", http_port(srv));
        r = roundtrip(q);
        CHECK_EQ_INT(status_of(r), 403);
        snprintf(q, sizeof q, "DELETE /api/runs/0123456789abcdef HTTP/1.1\r\nHost: x\r\nCookie: tb_token_%d=T0ken\r\n"
                 "X-Traceboard-CSRF: 1\r\nConnection: close\r\n\r\n", http_port(srv));
        r = roundtrip(q);
        CHECK_EQ_INT(status_of(r), 404);
        /* another port's cookie is not ours */
        r = roundtrip("DELETE /api/runs/0123456789abcdef HTTP/1.1\r\nHost: x\r\nCookie: tb_token=T0ken\r\n"
                      "X-Traceboard-CSRF: 1\r\nConnection: close\r\n\r\n");
        CHECK_EQ_INT(status_of(r), 401);
    }
    r = roundtrip("DELETE /api/runs/0123456789abcdef HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                  "Connection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 404);
    r = roundtrip("PUT /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 405);
    CHECK(strstr(r, "Allow: GET, POST") != NULL);
    r = roundtrip("GET /api/nothing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 404);
    CHECK(strstr(r, "application/json") != NULL);

    /* Limits are enforced from Content-Length before any byte is read. */
    r = roundtrip("POST /api/runs?filename=a.json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                  "Content-Type: application/json\r\nContent-Length: 999999\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 413);
    r = roundtrip("PATCH /api/runs/0123456789abcdef HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                  "Content-Length: 2000000\r\nConnection: close\r\n\r\n");
    CHECK_EQ_INT(status_of(r), 413);
    /* a raw body of any type needs ?filename= */
    r = roundtrip("POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                  "Content-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
    CHECK_EQ_INT(status_of(r), 400);
    CHECK(strstr(r, "filename") != NULL);
    r = roundtrip("POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                  "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    CHECK_EQ_INT(status_of(r), 400);

    /* Chunked body over upload_limit: answered 413 once it ends. */
    {
        char big[5000];
        memset(big, '{', sizeof big);
        snprintf(req, sizeof req, "POST /api/runs?filename=a.json HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                 "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n",
                 (unsigned)sizeof big);
        int fd = dial();
        REQUIRE(fd >= 0);
        CHECK(write(fd, req, strlen(req)) > 0);
        CHECK(write(fd, big, sizeof big) > 0);
        CHECK(write(fd, "\r\n0\r\n\r\n", 7) > 0);
        {
            char buf[2048];
            ssize_t n = read(fd, buf, sizeof buf - 1);
            buf[n > 0 ? n : 0] = '\0';
            CHECK_EQ_INT(status_of(buf), 413);
        }
        close(fd);
    }

    /* A client that vanishes mid-upload leaves no files behind. */
    {
        static const char head[] = "POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T0ken\r\n"
                                   "Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: 4000\r\n\r\n"
                                   "--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.json\"\r\n\r\n{{{{";
        /* the refused uploads above remove their folders after answering */
        for (int i = 0; i < 100 && tmp_uploads() > 0; i++) usleep(20000);
        CHECK_EQ_INT(tmp_uploads(), 0);
        int fd = dial();
        REQUIRE(fd >= 0);
        CHECK(write(fd, head, sizeof head - 1) > 0);
        for (int i = 0; i < 50 && tmp_uploads() == 0; i++) usleep(20000);
        CHECK_EQ_INT(tmp_uploads(), 1);
        close(fd);
        for (int i = 0; i < 100 && tmp_uploads() > 0; i++) usleep(20000);
        CHECK_EQ_INT(tmp_uploads(), 0);
    }

    http_stop(srv);
    ingest_service_stop(app.ing);
    catalog_close(app.cat);
    snprintf(req, sizeof req, "rm -rf '%s'", data_dir);
    CHECK(system(req) == 0);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    RUN(test_live);
    return harness_done("http");
}
