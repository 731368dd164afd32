/* catalog_query_test — a version-2 catalog migrates (its runs listed with
 * no project, empty metadata and figures to backfill); the list filters
 * (project, no project, tag, GPU, dates, search, metadata); projects and a
 * project's runs oldest first; the hash lookup; the checks of project
 * names and metadata. */
#include "store/catalog_query.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/xmalloc.h"
#include "harness.h"

static char root[] = "/tmp/tb_catq_XXXXXX";

static void test_checks(void)
{
    struct err e;
    CHECK_EQ_INT(catalog_project_check("llama-7b", &e), 0);
    CHECK_EQ_INT(catalog_project_check("réseau ★", &e), 0);
    CHECK_EQ_INT(catalog_project_check("", &e), ERR_INVALID);
    CHECK_EQ_INT(catalog_project_check("a/b", &e), ERR_INVALID);
    CHECK_EQ_INT(catalog_project_check("tab\there", &e), ERR_INVALID);
    CHECK_EQ_INT(catalog_project_check("\xff", &e), ERR_INVALID);
    char longname[CATALOG_PROJECT_MAX + 2];
    memset(longname, 'p', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK_EQ_INT(catalog_project_check(longname, &e), ERR_INVALID);
    longname[CATALOG_PROJECT_MAX] = '\0';
    CHECK_EQ_INT(catalog_project_check(longname, &e), 0);

    CHECK_EQ_INT(catalog_meta_check("git.commit-sha_1", "abc", &e), 0);
    CHECK_EQ_INT(catalog_meta_check("job id", "1", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "job id") != NULL);
    CHECK_EQ_INT(catalog_meta_check("", "1", &e), ERR_INVALID);
    CHECK_EQ_INT(catalog_meta_check("k\"", "1", &e), ERR_INVALID);
    CHECK_EQ_INT(catalog_meta_check("k", "line\nbreak", &e), ERR_INVALID);
    char key[CATALOG_META_KEY_MAX + 2], value[CATALOG_META_VALUE_MAX + 2];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    CHECK_EQ_INT(catalog_meta_check(key, "1", &e), ERR_INVALID);
    key[CATALOG_META_KEY_MAX] = '\0';
    CHECK_EQ_INT(catalog_meta_check(key, "1", &e), 0);
    memset(value, 'v', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    CHECK_EQ_INT(catalog_meta_check("k", value, &e), ERR_INVALID);
    value[CATALOG_META_VALUE_MAX] = '\0';
    CHECK_EQ_INT(catalog_meta_check("k", value, &e), 0);

    json_t *meta = json_object();
    for (int i = 0; i < CATALOG_META_MAX; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        CHECK_EQ_INT(catalog_meta_add(meta, k, "v", &e), 0);
    }
    CHECK_EQ_INT(catalog_meta_add(meta, "k0", "again", &e), 0); /* a repeated key replaces */
    CHECK_EQ_INT(catalog_meta_add(meta, "one_more", "v", &e), ERR_INVALID);
    CHECK_EQ_INT(json_object_size(meta), CATALOG_META_MAX);
    CHECK_EQ_STR(json_string_value(json_object_get(meta, "k0")), "again");
    json_decref(meta);
}

/* A catalog as version 2 wrote it, with one run. */
static void write_v2(const char *dir)
{
    char *path = xasprintf("%s/catalog.db", dir);
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE runs(id TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL,"
                         " status TEXT NOT NULL DEFAULT 'ready', ranks INTEGER, gpu TEXT, bytes INTEGER,"
                         " events INTEGER, warnings INTEGER, files TEXT, tags TEXT);"
                         "CREATE INDEX runs_created ON runs(created);"
                         "CREATE TABLE logdir_seen(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, run_id TEXT);"
                         "INSERT INTO runs VALUES('00000000000000aa','old run',50,'ready',1,'A100',1,1,0,'[]','[]');"
                         "PRAGMA user_version=2;",
                         NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    free(path);
}

static void test_migration(void)
{
    struct catalog *c;
    struct err e;
    char *dir = xasprintf("%s/v2", root);
    REQUIRE(fsutil_mkdirs(dir, &e) == 0);
    write_v2(dir);
    REQUIRE(catalog_open(dir, &c, &e) == 0);
    json_t *run, *ids;
    REQUIRE(catalog_get(c, "00000000000000aa", &run, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(run, "name")), "old run");
    CHECK(json_is_null(json_object_get(run, "project")));
    CHECK_EQ_INT(json_object_size(json_object_get(run, "meta")), 0);
    CHECK(json_is_null(json_object_get(run, "figures")));
    json_decref(run);
    REQUIRE(catalog_runs_without_facts(c, &ids, &e) == 0);
    CHECK_EQ_INT(json_array_size(ids), 1);
    json_decref(ids);

    json_t *fig = json_pack("{s:f}", "avg_step_us", 1234.5), *trace = json_pack("{s:i}", "world_size", 8);
    CHECK_EQ_INT(catalog_set_facts(c, "00000000000000aa", fig, trace, "abcd", &e), 0);
    CHECK_EQ_INT(catalog_set_facts(c, "00000000000000bb", fig, trace, NULL, &e), ERR_NOT_FOUND);
    json_decref(fig);
    json_decref(trace);
    REQUIRE(catalog_runs_without_facts(c, &ids, &e) == 0);
    CHECK_EQ_INT(json_array_size(ids), 0);
    json_decref(ids);
    REQUIRE(catalog_get(c, "00000000000000aa", &run, &e) == 0);
    CHECK(json_number_value(json_object_get(json_object_get(run, "figures"), "avg_step_us")) == 1234.5);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(run, "trace"), "world_size")), 8);
    CHECK_EQ_STR(json_string_value(json_object_get(run, "hash")), "abcd");
    json_decref(run);
    char id[CATALOG_ID_LEN + 1];
    CHECK_EQ_INT(catalog_find_hash(c, "abcd", id), 1);
    CHECK_EQ_STR(id, "00000000000000aa");
    CHECK_EQ_INT(catalog_find_hash(c, "abce", id), 0);
    CHECK_EQ_INT(catalog_find_hash(c, "", id), 0);
    catalog_close(c);
    /* opened again: nothing to migrate, the facts stay */
    REQUIRE(catalog_open(dir, &c, &e) == 0);
    REQUIRE(catalog_runs_without_facts(c, &ids, &e) == 0);
    CHECK_EQ_INT(json_array_size(ids), 0);
    json_decref(ids);
    catalog_close(c);
    free(dir);
}

static void add(struct catalog *c, const char *name, int64_t created, const char *project, const char *gpu,
                const char *tags, const char *meta)
{
    struct err e;
    struct catalog_run r = { .name = name, .created = created, .ranks = 1, .gpu = gpu, .tags_json = tags,
                             .project = project, .meta_json = meta, .figures_json = "{\"avg_step_us\":1}" };
    catalog_new_id(r.id);
    CHECK_EQ_INT(catalog_insert(c, &r, &e), 0);
}

/* The names of the runs f finds, newest first, joined with ','. */
static char *names(struct catalog *c, const struct catalog_filter *f)
{
    struct err e;
    json_t *arr, *r;
    size_t i;
    char *out = xstrdup("");
    if (catalog_find(c, f, &arr, &e) != 0) {
        free(out);
        return xasprintf("error: %s", e.msg);
    }
    json_array_foreach(arr, i, r) {
        char *next = xasprintf("%s%s%s", out, i ? "," : "", json_string_value(json_object_get(r, "name")));
        free(out);
        out = next;
    }
    json_decref(arr);
    return out;
}

#define CHECK_FIND(f, want)                 \
    do {                                    \
        char *got_ = names(c, f);           \
        CHECK_EQ_STR(got_, want);           \
        free(got_);                         \
    } while (0)

static void test_filters(void)
{
    struct catalog *c;
    struct err e;
    char *dir = xasprintf("%s/filters", root);
    REQUIRE(fsutil_mkdirs(dir, &e) == 0);
    REQUIRE(catalog_open(dir, &c, &e) == 0);
    /* 86400 s apart: 1970-01-02, -03, -04, -05 */
    add(c, "a1", 86400, "alpha", "NVIDIA H100 80GB HBM3", "[\"base\"]", "{\"batch\":\"32\",\"host\":\"n1\"}");
    add(c, "a2", 2 * 86400, "alpha", "NVIDIA H100 80GB HBM3", "[\"fast\",\"base2\"]", "{\"batch\":\"64\"}");
    add(c, "b1", 3 * 86400, "beta", "NVIDIA A100", "[]", "{\"batch\":\"32\",\"model\":\"Llama\"}");
    add(c, "loose", 4 * 86400, "", "", "[\"base\"]", NULL);

    CHECK_FIND(NULL, "loose,b1,a2,a1");
    struct catalog_filter f = { .project = "alpha" };
    CHECK_FIND(&f, "a2,a1");
    f = (struct catalog_filter){ .project = "" };
    CHECK_FIND(&f, "loose");
    f = (struct catalog_filter){ .tag = "base" }; /* a whole tag, not a part of one */
    CHECK_FIND(&f, "loose,a1");
    f = (struct catalog_filter){ .gpu = "h100" };
    CHECK_FIND(&f, "a2,a1");
    f = (struct catalog_filter){ .since = 2 * 86400, .until = 4 * 86400 };
    CHECK_FIND(&f, "b1,a2");
    f = (struct catalog_filter){ .q = "LLAMA" }; /* metadata, any case */
    CHECK_FIND(&f, "b1");
    f = (struct catalog_filter){ .q = "alp" };
    CHECK_FIND(&f, "a2,a1");
    f = (struct catalog_filter){ .nmeta = 1, .meta_key = { "batch" }, .meta_value = { "32" } };
    CHECK_FIND(&f, "b1,a1");
    f = (struct catalog_filter){ .nmeta = 2, .meta_key = { "batch", "host" }, .meta_value = { "32", "n1" } };
    CHECK_FIND(&f, "a1");
    f = (struct catalog_filter){ .project = "alpha", .nmeta = 1, .meta_key = { "batch" }, .meta_value = { "64" } };
    CHECK_FIND(&f, "a2");
    /* a key that could break out of its JSON path is refused, not run */
    f = (struct catalog_filter){ .nmeta = 1, .meta_key = { "a\") OR 1=1 --" }, .meta_value = { "x" } };
    json_t *arr;
    CHECK_EQ_INT(catalog_find(c, &f, &arr, &e), ERR_INVALID);

    json_t *p;
    REQUIRE(catalog_projects(c, &p, &e) == 0);
    json_t *list = json_object_get(p, "projects");
    CHECK_EQ_INT(json_array_size(list), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(list, 0), "name")), "alpha");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(list, 0), "runs")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(list, 0), "last")), 2 * 86400);
    json_decref(p);

    json_t *runs;
    REQUIRE(catalog_project_runs(c, "alpha", &runs, &e) == 0);
    CHECK_EQ_INT(json_array_size(runs), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(runs, 0), "name")), "a1"); /* oldest first */
    CHECK(json_number_value(json_object_get(json_object_get(json_array_get(runs, 0), "figures"), "avg_step_us")) == 1);
    json_decref(runs);
    CHECK_EQ_INT(catalog_project_runs(c, "gamma", &runs, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(catalog_project_runs(c, "", &runs, &e), ERR_NOT_FOUND);
    catalog_close(c);
    free(dir);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    RUN(test_checks);
    RUN(test_migration);
    RUN(test_filters);
    struct err e;
    fsutil_rmtree(root, &e);
    return harness_done("catalog_query");
}
