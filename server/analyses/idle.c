/* analyses/idle.c — placeholder until the analysis lands (see include/analyses.h). */
#include "analyses.h"

int an_idle(struct an_ctx *c, json_t *out, struct err *e)
{
    (void)c;
    (void)out;
    (void)e;
    return 0;
}
