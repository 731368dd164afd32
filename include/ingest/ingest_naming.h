/*
 * ingest_naming.h — names an ingest gives from file names: the rank written
 * in a trace's name, the run's default name, the safe name a source file is
 * kept under in the run's src/ folder. Pure string functions with no
 * state: any thread may call them; returned strings are owned by the
 * caller, except ingest_naming_base's (borrowed, a pointer into its
 * argument).
 */
#ifndef TB_INGEST_NAMING_H
#define TB_INGEST_NAMING_H

#include <stddef.h>

#include "ingest/ingest.h"

/* The rank written in a file name: rank3, rank-3, rank_3, worker3. -1 if none. */
int ingest_naming_rank(const char *name);

/* The last component of path (borrowed). */
const char *ingest_naming_base(const char *path);

/* "rank0.1795344527679083192.pt.trace.json.gz" -> "rank0"; several files of
 * one job lose their rank part too ("job_rank0", "job_rank1" -> "job"), or
 * are named after their folder. Owned by caller. */
char *ingest_naming_run(const struct ingest_file *files, int n);

/* The first bytes of s, at most max, without cutting a UTF-8 character in
 * two. Owned by caller. */
char *ingest_naming_prefix(const char *s, size_t max);

/* A file name made a boring path component: letters, digits, . - _ only,
 * never hidden or empty. Owned by caller. */
char *ingest_naming_safe_file(const char *name);

#endif
