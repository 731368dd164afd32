/* catalog_test — runs are listed, updated, deleted; orphans are collected;
 * ids are validated before they reach a path. */
#include "base/fsutil.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/tb_catalog_XXXXXX";

static void test_ids(void)
{
    char id[CATALOG_ID_LEN + 1], id2[CATALOG_ID_LEN + 1];
    catalog_new_id(id);
    catalog_new_id(id2);
    CHECK(catalog_id_valid(id));
    CHECK(strcmp(id, id2) != 0);
    CHECK(!catalog_id_valid("../../etc/passwd"));
    CHECK(!catalog_id_valid("0123456789ABCDEF")); /* upper case is not ours */
    CHECK(!catalog_id_valid("0123456789abcde"));
    CHECK(!catalog_id_valid(""));
    CHECK(!catalog_id_valid(NULL));
}

static void test_crud(void)
{
    struct catalog *c;
    struct err e;
    REQUIRE(catalog_open(root, &c, &e) == 0);
    struct catalog_run r = { "", "first <run>", 100, 2, "NVIDIA H100", 1234, 99, 1,
                             "[{\"name\":\"rank0.json\",\"bytes\":1,\"rank\":0}]", "[\"a\"]", NULL, NULL, NULL, NULL, NULL, NULL };
    catalog_new_id(r.id);
    CHECK_EQ_INT(catalog_insert(c, &r, &e), 0);
    struct catalog_run r2 = r;
    catalog_new_id(r2.id);
    r2.name = "second";
    r2.created = 200;
    CHECK_EQ_INT(catalog_insert(c, &r2, &e), 0);
    json_t *list;
    REQUIRE(catalog_list(c, &list, &e) == 0);
    CHECK_EQ_INT(json_array_size(list), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(list, 0), "name")), "second"); /* newest first */
    json_t *one = json_array_get(list, 1);
    CHECK_EQ_STR(json_string_value(json_object_get(one, "gpu")), "NVIDIA H100");
    CHECK_EQ_INT(json_integer_value(json_object_get(one, "ranks")), 2);
    CHECK_EQ_INT(json_array_size(json_object_get(one, "files")), 1);
    CHECK_EQ_STR(json_string_value(json_object_get(one, "status")), "ready");
    json_decref(list);

    /* a run listed while it derives, then ready */
    struct catalog_run r3 = r;
    catalog_new_id(r3.id);
    r3.status = CATALOG_DERIVING;
    CHECK_EQ_INT(catalog_insert(c, &r3, &e), 0);
    json_t *d;
    REQUIRE(catalog_get(c, r3.id, &d, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(d, "status")), "deriving");
    CHECK_EQ_INT(catalog_row_deriving(d), 1);
    json_decref(d);
    CHECK_EQ_INT(catalog_set_status(c, r3.id, CATALOG_READY, &e), 0);
    REQUIRE(catalog_get(c, r3.id, &d, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(d, "status")), "ready");
    CHECK_EQ_INT(catalog_row_deriving(d), 0);
    json_decref(d);
    CHECK_EQ_INT(catalog_set_status(c, "0123456789abcdef", CATALOG_READY, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(catalog_delete(c, r3.id, &e), 0);

    json_t *tags = json_pack("[s,s]", "baseline", "bs=64");
    CHECK_EQ_INT(catalog_update(c, r.id, "renamed", tags, &e), 0);
    json_decref(tags);
    json_t *got;
    REQUIRE(catalog_get(c, r.id, &got, &e) == 0);
    CHECK_EQ_STR(json_string_value(json_object_get(got, "name")), "renamed");
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(got, "tags"), 1)), "bs=64");
    json_decref(got);

    CHECK_EQ_INT(catalog_update(c, r.id, "", NULL, &e), ERR_INVALID);
    json_t *bad = json_pack("[i]", 3);
    CHECK_EQ_INT(catalog_update(c, r.id, NULL, bad, &e), ERR_INVALID);
    json_decref(bad);
    CHECK_EQ_INT(catalog_update(c, "ffffffffffffffff", "x", NULL, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(catalog_get(c, "../x", &got, &e), ERR_NOT_FOUND);

    /* the file list is replaced whole (ranks renumbered) */
    json_t *files = json_pack("[{s:s,s:i,s:i}]", "name", "rank0.json", "bytes", 10, "rank", 3);
    CHECK_EQ_INT(catalog_set_files(c, r.id, files, &e), 0);
    REQUIRE(catalog_get(c, r.id, &got, &e) == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(got, "files"), 0), "rank")), 3);
    json_decref(got);
    CHECK_EQ_INT(catalog_set_files(c, "ffffffffffffffff", files, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(catalog_set_files(c, r.id, json_object_get(files, "x"), &e), ERR_INVALID);
    json_decref(files);

    char *dir = catalog_run_dir(c, r.id);
    CHECK_EQ_INT(fsutil_mkdirs(dir, &e), 0);
    CHECK_EQ_INT(catalog_delete(c, r.id, &e), 0);
    struct stat st;
    CHECK(stat(dir, &st) != 0); /* the folder went with the row */
    CHECK_EQ_INT(catalog_delete(c, r.id, &e), ERR_NOT_FOUND);
    free(dir);
    catalog_close(c);
}

static void test_orphans_collected_at_open(void)
{
    struct catalog *c;
    struct err e;
    char *orphan = xasprintf("%s/runs/0123456789abcdef", root);
    CHECK_EQ_INT(fsutil_mkdirs(orphan, &e), 0);
    REQUIRE(catalog_open(root, &c, &e) == 0);
    struct stat st;
    CHECK(stat(orphan, &st) != 0);
    json_t *list;
    REQUIRE(catalog_list(c, &list, &e) == 0);
    CHECK_EQ_INT(json_array_size(list), 1); /* the committed run survived */
    json_decref(list);
    CHECK_EQ_INT(catalog_logdir_seen(c, "/x/rank0.json", 10, 5), 0);
    CHECK_EQ_INT(catalog_logdir_mark(c, "/x/rank0.json", 10, 5, "", &e), 0);
    CHECK_EQ_INT(catalog_logdir_seen(c, "/x/rank0.json", 10, 5), 1);
    CHECK_EQ_INT(catalog_logdir_seen(c, "/x/rank0.json", 11, 5), 0);
    catalog_close(c);
    free(orphan);
}

/* One file in dir with the given text (a stand-in for run.db). */
static void put(const char *dir, const char *name, const char *text)
{
    char *p = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    free(p);
}

static int has(const char *dir, const char *name, const char *text)
{
    char *p = xasprintf("%s/%s", dir, name), buf[64] = "";
    FILE *f = fopen(p, "r");
    free(p);
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strcmp(buf, text) == 0;
}

static long first_rank(struct catalog *c, const char *id)
{
    json_t *got;
    struct err e;
    if (catalog_get(c, id, &got, &e) != 0) return -100;
    long r = (long)json_integer_value(json_object_get(json_array_get(json_object_get(got, "files"), 0), "rank"));
    json_decref(got);
    return r;
}

/* catalog_swap_run: folder and row change together; a marker left in the
 * run folder by a crash after the rename is finished at the next open. */
static void test_swap_and_finish_at_open(void)
{
    struct catalog *c;
    struct err e;
    REQUIRE(catalog_open(root, &c, &e) == 0);
    struct catalog_run r = { "", "swap", 300, 1, "", 1, 1, 0, "[{\"name\":\"a.json\",\"bytes\":1,\"rank\":0}]", "[]",
                             NULL, NULL, NULL, NULL, NULL, NULL };
    catalog_new_id(r.id);
    REQUIRE(catalog_insert(c, &r, &e) == 0);
    char *dir = catalog_run_dir(c, r.id);
    char *next = xasprintf("%s/next", root);
    CHECK_EQ_INT(fsutil_mkdirs(dir, &e), 0);
    CHECK_EQ_INT(fsutil_mkdirs(next, &e), 0);
    put(dir, "run.db", "old");
    put(next, "run.db", "new");
    json_t *files = json_pack("[{s:s,s:i,s:i}]", "name", "a.json", "bytes", 1, "rank", 4);
    CHECK_EQ_INT(catalog_swap_run(c, r.id, next, files, &e), 0);
    CHECK(has(dir, "run.db", "new"));
    CHECK(has(next, "run.db", "old")); /* the caller's to remove */
    CHECK(!has(dir, "catalog-files.json", "")); /* the marker is gone */
    CHECK_EQ_INT(first_rank(c, r.id), 4);
    CHECK_EQ_INT(catalog_swap_run(c, "ffffffffffffffff", next, files, &e), ERR_NOT_FOUND);
    CHECK(has(next, "run.db", "old"));
    json_decref(files);

    /* a crash after the rename: the folder is new, the row old, the marker there */
    put(dir, "catalog-files.json", "[{\"name\":\"a.json\",\"bytes\":1,\"rank\":9}]");
    catalog_close(c);
    REQUIRE(catalog_open(root, &c, &e) == 0);
    CHECK_EQ_INT(first_rank(c, r.id), 9);
    struct stat st;
    char *marker = xasprintf("%s/catalog-files.json", dir);
    CHECK(stat(marker, &st) != 0);
    CHECK(has(dir, "run.db", "new"));
    CHECK_EQ_INT(catalog_delete(c, r.id, &e), 0);
    catalog_close(c);
    fsutil_rmtree(next, &e);
    free(marker);
    free(next);
    free(dir);
}

/* The list's damage marks are remembered per run.db identity, and a change
 * to the file (size, mtime, inode) is seen at the next list. */
static void test_damage_marks_follow_the_file(void)
{
    struct catalog *c;
    struct err e;
    REQUIRE(catalog_open(root, &c, &e) == 0);
    struct catalog_run r = { .name = "marked", .created = 400, .ranks = 1 };
    catalog_new_id(r.id);
    REQUIRE(catalog_insert(c, &r, &e) == 0);
    char *dir = catalog_run_dir(c, r.id), *db = xasprintf("%s/run.db", dir);
    REQUIRE(fsutil_mkdirs(dir, &e) == 0);
    FILE *f = fopen(db, "w");
    REQUIRE(f != NULL);
    for (int i = 0; i < 200; i++) fputs("not a database at all ", f);
    fclose(f);
    for (int round = 0; round < 2; round++) {
        json_t *got;
        REQUIRE(catalog_get(c, r.id, &got, &e) == 0);
        json_t *list;
        REQUIRE(catalog_list(c, &list, &e) == 0);
        json_t *row = json_array_get(list, 0);
        CHECK_EQ_STR(json_string_value(json_object_get(row, "id")), r.id);
        CHECK(json_is_true(json_object_get(row, "damaged")));
        CHECK(strstr(json_string_value(json_object_get(row, "damage")), "not an SQLite database") != NULL);
        json_decref(list);
        json_decref(got);
    }
    REQUIRE(truncate(db, 0) == 0);
    json_t *list;
    REQUIRE(catalog_list(c, &list, &e) == 0);
    CHECK(strstr(json_string_value(json_object_get(json_array_get(list, 0), "damage")), "empty") != NULL);
    json_decref(list);
    CHECK_EQ_INT(catalog_delete(c, r.id, &e), 0);
    catalog_close(c);
    free(db);
    free(dir);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    RUN(test_ids);
    RUN(test_crud);
    RUN(test_orphans_collected_at_open);
    RUN(test_swap_and_finish_at_open);
    RUN(test_damage_marks_follow_the_file);
    struct err e;
    fsutil_rmtree(root, &e);
    return harness_done("catalog_test");
}
