/* scratch_fixture.h — a scratch data folder and its catalog for the tests
 * that import traces through ingest_run: scratch_begin makes root (a
 * mkdtemp template, changed in place), sets default config with the data
 * folder there and opens the catalog; scratch_end closes and removes it. */
#ifndef TB_SCRATCH_FIXTURE_H
#define TB_SCRATCH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "base/config.h"
#include "base/fsutil.h"
#include "store/catalog.h"

static inline int scratch_begin(char *root, struct config *cfg, struct catalog **cat)
{
    struct err e;
    if (!mkdtemp(root)) return -1;
    config_defaults(cfg);
    snprintf(cfg->data_dir, sizeof cfg->data_dir, "%s", root);
    cfg->keep_sources = 0;
    return catalog_open(root, cat, &e);
}

static inline void scratch_end(char *root, struct catalog *cat)
{
    struct err e;
    catalog_close(cat);
    fsutil_rmtree(root, &e);
}

#endif
