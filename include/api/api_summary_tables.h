/*
 * api_summary_tables.h — the operator and kernel tables of a run's rank
 * (op_stat, kernel_stat), grouped, filtered by ?q= and sorted through the
 * allow-lists of api_table.h, as JSON pages or whole CSV files. The
 * invariants of api_summary.h hold: bound parameters only, 400/404/409,
 * µs out. Nothing is kept between requests; any MHD thread may call them.
 */
#ifndef TB_API_SUMMARY_TABLES_H
#define TB_API_SUMMARY_TABLES_H

struct http_req;

/* GET /api/runs/{id}/operators?rank=&group=name|shape|stack&q=&sort=&order=
 * &offset=&limit=&format=json|csv -> operator table (csv: every matching row). */
int api_summary_operators(struct http_req *req);

/* GET /api/runs/{id}/kernels?rank=&group=name|op&q=&sort=&order=&offset=
 * &limit=&format= -> GPU kernel table. */
int api_summary_kernels(struct http_req *req);

#endif
