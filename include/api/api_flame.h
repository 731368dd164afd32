/*
 * api_flame.h — GET /api/runs/{id}/timeline/flame: the flame graph (icicle)
 * of a window over some lanes of one rank, with the same time added up by
 * lane and by category (derive/timeline_flame.h builds it: call paths by
 * time containment, time clipped to the window). Follows the invariants of
 * api_timeline.h (bound parameters, 400/404/409, µs out); its work is
 * bounded: at most 4 million slices read (413 past it; a track's slices
 * are held while they are sorted) and TFLAME_NODES nodes. Nothing is kept between requests; any MHD thread
 * may call it.
 */
#ifndef TB_API_FLAME_H
#define TB_API_FLAME_H

struct http_req;

/* ?rank=&start=&end=[&tracks=][&contained=1] -> {start_us, end_us, nodes:
 * [{parent, name, count, total_us, self_us}], lanes: [{track, …}], cats:
 * [{cat, …}], dropped}. */
int api_timeline_flame(struct http_req *req);

#endif
