/*
 * api_summary_memory.h — a rank's memory: the allocated and reserved curve
 * of one device, downsampled so that each time bucket keeps its first,
 * highest and last samples (the peak is never dropped), with the steps'
 * bounds; and the allocations (mem_alloc) overlapping a window as a table.
 * The invariants of api_summary.h hold. Nothing is kept between requests;
 * any MHD thread may call them.
 */
#ifndef TB_API_SUMMARY_MEMORY_H
#define TB_API_SUMMARY_MEMORY_H

struct http_req;

/* GET /api/runs/{id}/memory?rank=&device=N|cpu&start_us=&end_us=&points=
 * -> the downsampled allocated/reserved curve of one device. */
int api_summary_memory(struct http_req *req);

/* GET /api/runs/{id}/memory/events?rank=&device=&start_us=&end_us=
 * &min_bytes=&q=&sort=&order=&offset=&limit=&format= -> allocations whose
 * lifetime overlaps the window. */
int api_summary_memory_events(struct http_req *req);

#endif
