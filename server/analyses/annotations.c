/* analyses/annotations.c — placeholder until the analysis lands (see include/analyses.h). */
#include "analyses.h"

int an_annotations(struct an_ctx *c, json_t *out, struct err *e)
{
    (void)c;
    (void)out;
    (void)e;
    return 0;
}
