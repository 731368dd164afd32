/*
 * catalog_query.h — the catalog's runs by project, metadata and figures
 * (issue 20): the filtered runs list, the projects, a project's trend
 * rows, the duplicate lookup by content hash, and filling in the facts and
 * key figures of a run (at a renumber, and for runs stored by an older
 * version: the backfill).
 *
 * Invariants: every statement is prepared and bound (a metadata key
 * reaches SQL only as a bound JSON path, after catalog_meta_check); the
 * names checked here are what ingest and the API store. Every function
 * takes the catalog's mutex (catalog_lock) for its statement only, so any
 * thread may call it. Every json_t * returned is a new reference owned by
 * the caller; struct catalog_filter's strings are borrowed for the call.
 */
#ifndef TB_CATALOG_QUERY_H
#define TB_CATALOG_QUERY_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "store/catalog.h"

#define CATALOG_PROJECT_MAX 100   /* characters of a project name */
#define CATALOG_META_KEY_MAX 64   /* bytes of a metadata key: [A-Za-z0-9_.-] */
#define CATALOG_META_VALUE_MAX 1024 /* bytes of a metadata value */
#define CATALOG_META_MAX 64       /* keys per run */
#define CATALOG_FILTER_META 8     /* meta.K=V filters in one list query */

/* ERR_INVALID with a message for users unless name is a project name:
 * 1 to 100 characters of UTF-8, no control characters, no '/'. */
int catalog_project_check(const char *name, struct err *e);

/* ERR_INVALID unless key is 1-64 of [A-Za-z0-9_.-] and value is UTF-8
 * without control characters, at most 1024 bytes. */
int catalog_meta_check(const char *key, const char *value, struct err *e);

/* Adds key=value to the metadata object meta (checked as above; at most
 * CATALOG_META_MAX keys; a repeated key takes the last value). */
int catalog_meta_add(json_t *meta, const char *key, const char *value, struct err *e);

struct catalog_filter {
    const char *project;  /* NULL: any; "": runs without a project */
    const char *tag;      /* a tag the run has, exactly */
    const char *gpu;      /* a part of the GPU name, any case */
    int64_t since, until; /* created in [since, until) (unix s); 0: open */
    const char *q;        /* a part of name, project, tags or metadata, any case (ASCII) */
    int nmeta;            /* meta.K=V: run's metadata K equals V */
    const char *meta_key[CATALOG_FILTER_META], *meta_value[CATALOG_FILTER_META];
};

/* The runs matching f (NULL: all), newest first, as catalog_list answers
 * them (with "damaged"). OUT *out: JSON array. */
int catalog_find(struct catalog *c, const struct catalog_filter *f, json_t **out, struct err *e);

/* {"projects": [{"name", "runs", "last"}]}: every project with its number
 * of runs and the newest run's created time, by name; runs without a
 * project are not one. OUT *out. */
int catalog_projects(struct catalog *c, json_t **out, struct err *e);

/* The runs of project, oldest first: [{id, name, created, meta, trace,
 * figures}] (figures/trace null when not computed yet). ERR_NOT_FOUND when
 * the project has no run. OUT *out: JSON array. */
int catalog_project_runs(struct catalog *c, const char *project, json_t **out, struct err *e);

/* 1 with OUT id (the oldest such run) when a run has content hash hash,
 * 0 when none (or hash is empty). */
int catalog_find_hash(struct catalog *c, const char *hash, char id[CATALOG_ID_LEN + 1]);

/* Sets a run's figures and trace facts (JSON objects, borrowed; NULL
 * leaves one as is) and its hash when hash is non-empty and the row has
 * none. ERR_NOT_FOUND. */
int catalog_set_facts(struct catalog *c, const char *id, json_t *figures, json_t *trace, const char *hash,
                      struct err *e);

/* Ids of the runs whose figures were never computed (stored by a version
 * before them), oldest first. OUT *out: JSON array of strings. */
int catalog_runs_without_facts(struct catalog *c, json_t **out, struct err *e);

#endif
