/* config_test.c — config_table: defaults, the file format, errors with
 * file:line, registered parameters, and config/traceboard.conf staying in
 * step with --help. The shipped file lists the rules' thresholds too, so
 * main registers them as the binary does (rules_config_register).
 * Run from the repository root (reads config/traceboard.conf). */
#include "harness.h"

#include "../../../server/base/config.c"
#include "base/xmalloc.h"
#include "derive/rules.h"

#include <unistd.h>

static char tmp_path[64];

/* Writes text to a fresh temporary file; returns its path. */
static const char *write_tmp(const char *text)
{
    int fd;
    FILE *f;

    if (tmp_path[0]) unlink(tmp_path);
    strcpy(tmp_path, "/tmp/tb_config_test_XXXXXX");
    fd = mkstemp(tmp_path);
    if (fd < 0) return NULL;
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return tmp_path;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = xmalloc((size_t)n + 1);
    buf[fread(buf, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return buf;
}

/* 1 if p starts with "<key> = ", a key of the table or a registered one. */
static int is_key_line(const char *p)
{
    for (size_t i = 0; i < CONFIG_NKEYS + params_nreg; i++) {
        const char *key = i < CONFIG_NKEYS ? config_table[i].key : params_reg[i - CONFIG_NKEYS]->key;
        size_t n = strlen(key);
        if (strncmp(p, key, n) == 0 && strncmp(p + n, " = ", 3) == 0) return 1;
    }
    return 0;
}

static const char *conf_path(void)
{
    static const char *cands[] = { "config/traceboard.conf", "../config/traceboard.conf",
                                   "../../config/traceboard.conf" };
    for (size_t i = 0; i < 3; i++)
        if (access(cands[i], R_OK) == 0) return cands[i];
    return cands[0];
}

static void test_defaults(void)
{
    struct config c;

    config_defaults(&c);
    CHECK_EQ_STR(c.bind, "127.0.0.1");
    CHECK_EQ_INT(c.port, 8080);
    CHECK_EQ_STR(c.data_dir, "./data");
    CHECK(c.upload_limit == 4ull << 30);
    CHECK(c.inflate_limit == 64ull << 30);
    CHECK(c.inflate_ratio == 200);
    CHECK_EQ_STR(c.inflate, "auto");
    CHECK_EQ_STR(c.token, "");
    CHECK_EQ_INT(c.no_auth, 0);
    CHECK_EQ_STR(c.logdir, "");
    CHECK_EQ_INT(c.logdir_interval, 10);
    CHECK_EQ_STR(c.base_path, "");
    CHECK_EQ_STR(c.web_dir, "");
    CHECK_EQ_INT(c.threads, 0);
    CHECK_EQ_INT(c.ingest_workers, 1);
    CHECK_EQ_INT(c.conn_timeout, 60);
    CHECK_EQ_INT(c.max_connections, 256);
    CHECK_EQ_INT(c.keep_sources, 1);
    CHECK(c.sort_memory == 64ull << 20);
    CHECK_EQ_STR(c.log_level, "info");
}

/* The shipped file loads to exactly the defaults, as written (all
 * commented out) and with every setting uncommented. */
static void test_shipped_file(void)
{
    struct config def, c;
    struct err e;
    char *text = read_all(conf_path()), *uncommented, *o;
    const char *p;
    int keys = 0;

    REQUIRE(text != NULL);
    config_defaults(&def);
    config_defaults(&c);
    CHECK_EQ_INT(config_load_file(&c, conf_path(), &e), 0);
    CHECK(memcmp(&c, &def, sizeof c) == 0);

    /* "# key = value" lines lose their "# ". */
    uncommented = o = xmalloc(strlen(text) + 1);
    for (p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
        if (n > 2 && p[0] == '#' && p[1] == ' ' && is_key_line(p + 2)) {
            p += 2, n -= 2;
            keys++;
        }
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    *o = '\0';
    CHECK_EQ_INT(keys, (int)(CONFIG_NKEYS + params_nreg));
    /* Start from other values so each line must really set its key. */
    config_defaults(&c);
    c.port = 1;
    c.upload_limit = 7;
    strcpy(c.bind, "::1");
    c.keep_sources = 0;
    c.no_auth = 1;
    REQUIRE(c.rules.nvalues > 0);
    c.rules.values[0].value = 99;
    CHECK_EQ_INT(config_load_file(&c, write_tmp(uncommented), &e), 0);
    if (e.code) fprintf(stderr, "  %s\n", e.msg);
    CHECK(memcmp(&c, &def, sizeof c) == 0);
    free(uncommented);

    /* The listing in the file is config_write_help's output. */
    {
        char *help = NULL;
        size_t hn = 0;
        FILE *m = open_memstream(&help, &hn);
        config_write_help(m);
        fclose(m);
        CHECK(strlen(text) >= hn && strcmp(text + strlen(text) - hn, help) == 0);
        free(help);
    }
    free(text);
}

static void test_sizes(void)
{
    static const struct { const char *in; uint64_t out; } ok[] = {
        { "1024", 1024 }, { "4G", 4ull << 30 }, { "64M", 64ull << 20 }, { "512k", 512ull << 10 },
        { "1TiB", 1ull << 40 }, { "2GB", 2ull << 30 }, { "3000B", 3000 }, { "1t", 1ull << 40 },
    };
    static const char *bad[] = { "", "G", "4X", "-1", " 4G", "4 G", "4.5G", "99999999999999999999",
                                 "17179869184T", "1KK", "1iB" };
    uint64_t v;

    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CHECK_EQ_INT(parse_size(ok[i].in, &v), 0);
        CHECK(v == ok[i].out);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK_EQ_INT(parse_size(bad[i], &v), -1);
}

static void test_set(void)
{
    struct config c;
    struct err e;

    config_defaults(&c);
    CHECK_EQ_INT(config_set(&c, "port", "0", &e), 0);
    CHECK_EQ_INT(c.port, 0);
    CHECK_EQ_INT(config_set(&c, "port", "65536", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "port") != NULL);
    CHECK_EQ_INT(config_set(&c, "port", "-1", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "port", "80x", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "upload-limit", "8G", &e), 0); /* command-line spelling */
    CHECK(c.upload_limit == 8ull << 30);
    CHECK_EQ_INT(config_set(&c, "upload_limit", "12", &e), ERR_INVALID); /* below 1K */
    CHECK_EQ_INT(config_set(&c, "no_auth", "yes", &e), 0);
    CHECK_EQ_INT(c.no_auth, 1);
    CHECK_EQ_INT(config_set(&c, "no_auth", "Off", &e), 0);
    CHECK_EQ_INT(c.no_auth, 0);
    CHECK_EQ_INT(config_set(&c, "no_auth", "maybe", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "bind", "::", &e), 0);
    CHECK_EQ_INT(config_set(&c, "bind", "0.0.0.0", &e), 0);
    CHECK_EQ_INT(config_set(&c, "bind", "localhost", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "bind") != NULL);
    CHECK_EQ_INT(config_set(&c, "base_path", "/tb", &e), 0);
    CHECK_EQ_INT(config_set(&c, "base_path", "/a/b-c", &e), 0);
    CHECK_EQ_INT(config_set(&c, "base_path", "", &e), 0);
    CHECK_EQ_INT(config_set(&c, "base_path", "tb", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "base_path", "/tb/", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "base_path", "/a/../b", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "base_path", "/a//b", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "base_path", "/a\r\nSet-Cookie: x", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "token", "abc-DEF_1.2~3", &e), 0);
    CHECK_EQ_INT(config_set(&c, "token", "has space", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "token", "semi;colon", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "log_level", "debug", &e), 0);
    CHECK_EQ_INT(config_set(&c, "log_level", "loud", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "threads", "1025", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "ingest_workers", "0", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "inflate_ratio", "1000", &e), 0);
    CHECK(c.inflate_ratio == 1000);
    CHECK_EQ_INT(config_set(&c, "inflate", "zlib", &e), 0);
    CHECK_EQ_STR(c.inflate, "zlib");
    CHECK_EQ_INT(config_set(&c, "inflate", "igzip", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "nonsense", "1", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "nonsense") != NULL);
    {
        char longv[CONFIG_PATH_MAX + 10];
        memset(longv, 'a', sizeof longv - 1);
        longv[sizeof longv - 1] = '\0';
        CHECK_EQ_INT(config_set(&c, "data_dir", longv, &e), ERR_INVALID);
        longv[CONFIG_PATH_MAX - 1] = '\0';
        CHECK_EQ_INT(config_set(&c, "data_dir", longv, &e), 0);
    }
}

static void test_file_syntax(void)
{
    struct config c;
    struct err e;

    config_defaults(&c);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("# comment\n\n  port=9000   # trailing comment\r\n"
                                                "data_dir = \"/srv/my data # not a comment\"\n"
                                                "web_dir = \"quote \\\" and \\\\ back\"  # c\n"
                                                "logdir = /var/log/x#y\n"
                                                "\tsort_memory\t=\t128M\n"
                                                "token = \"\"\n"),
                                      &e),
                 0);
    CHECK_EQ_INT(c.port, 9000);
    CHECK_EQ_STR(c.data_dir, "/srv/my data # not a comment");
    CHECK_EQ_STR(c.web_dir, "quote \" and \\ back");
    CHECK_EQ_STR(c.logdir, "/var/log/x#y");
    CHECK(c.sort_memory == 128ull << 20);

    /* Errors name the file, the line and the key. */
    CHECK_EQ_INT(config_load_file(&c, write_tmp("port = 1\n# ok\nupload_limit = 4Q\n"), &e), ERR_INVALID);
    CHECK(strstr(e.msg, tmp_path) != NULL);
    CHECK(strstr(e.msg, ":3:") != NULL);
    CHECK(strstr(e.msg, "upload_limit") != NULL);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("bogus = 1\n"), &e), ERR_INVALID);
    CHECK(strstr(e.msg, ":1:") != NULL && strstr(e.msg, "bogus") != NULL);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("port 8080\n"), &e), ERR_INVALID);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("= 8080\n"), &e), ERR_INVALID);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("data_dir = \"open\n"), &e), ERR_INVALID);
    CHECK(strstr(e.msg, "data_dir") != NULL);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("data_dir = \"a\" b\n"), &e), ERR_INVALID);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("port = \n"), &e), ERR_INVALID);
    CHECK_EQ_INT(config_load_file(&c, "/nonexistent/traceboard.conf", &e), ERR_IO);
    {
        char *big = xmalloc(10000);
        memset(big, 'x', 9999);
        big[9999] = '\0';
        memcpy(big, "data_dir = ", 11);
        CHECK_EQ_INT(config_load_file(&c, write_tmp(big), &e), ERR_INVALID);
        CHECK(strstr(e.msg, ":1:") != NULL);
        free(big);
    }
}

/* A parameter table registered like a rule's: defaults, file and flag
 * spellings, bounds, --help, and refusals (duplicate keys, bad defaults). */
static const struct config_param demo_params[] = {
    { "test_share_pct", "12.5", "%", 0, 100, "A share, percent." },
    { "test_steps", "3", "steps", 1, 1000, "A count of steps." },
};

static void test_registered(void)
{
    static const struct config_param dup[] = { { "port", "1", "", 0, 10, "taken" } };
    static const struct config_param bad_def[] = { { "test_bad", "200", "%", 0, 100, "out of bounds" } };
    struct config c;
    struct err e;
    size_t before = params_nreg;
    char *help = NULL;
    size_t hn = 0;
    FILE *m;

    /* readable before registration: the declared default */
    config_defaults(&c);
    CHECK(config_param_value(&c.rules, &demo_params[0]) == 12.5);
    CHECK_EQ_INT(config_set(&c, "test_steps", "4", &e), ERR_INVALID);
    REQUIRE(config_register(demo_params, 2, &e) == 0);
    CHECK_EQ_INT(config_register(demo_params, 2, &e), 0); /* again: no-op */
    CHECK(params_nreg == before + 2);
    CHECK_EQ_INT(config_register(dup, 1, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "port") != NULL);
    CHECK_EQ_INT(config_register(bad_def, 1, &e), ERR_INVALID);
    CHECK(params_nreg == before + 2);

    config_defaults(&c);
    CHECK(config_param_value(&c.rules, &demo_params[1]) == 3);
    CHECK_EQ_INT(config_set(&c, "test-steps", "7", &e), 0); /* command-line spelling */
    CHECK(config_param_value(&c.rules, &demo_params[1]) == 7);
    CHECK_EQ_INT(config_set(&c, "test_steps", "0", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "test_steps: '0' is not a number from 1 to 1000") != NULL);
    CHECK_EQ_INT(config_set(&c, "test_share_pct", "1e2", &e), ERR_INVALID);
    CHECK_EQ_INT(config_set(&c, "test_share_pct", "-1", &e), ERR_INVALID);
    CHECK_EQ_INT(config_load_file(&c, write_tmp("test_share_pct = 99.5\n"), &e), 0);
    CHECK(config_param_value(&c.rules, &demo_params[0]) == 99.5);

    m = open_memstream(&help, &hn);
    config_write_help(m);
    fclose(m);
    CHECK(strstr(help, "\n\n# A count of steps.\n# test_steps = 3\n") != NULL);
    CHECK(help[hn - 1] == '\n' && help[hn - 2] != '\n');
    free(help);
}

int main(void)
{
    struct err e;

    if (rules_config_register(&e) != 0) {
        fprintf(stderr, "rules_config_register: %s\n", e.msg);
        return 1;
    }
    RUN(test_defaults);
    RUN(test_shipped_file);
    RUN(test_sizes);
    RUN(test_set);
    RUN(test_file_syntax);
    RUN(test_registered); /* last: it registers more keys than the shipped file has */
    if (tmp_path[0]) unlink(tmp_path);
    return harness_done("config");
}
