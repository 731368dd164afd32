#!/bin/sh
# check_layout.sh — the code-layout habits of docs/style.md, checked:
#  - server/ is one folder per stage of the data flow (base, ingest, store,
#    derive, http, api, cli); every server/<stage>/<mod>.c has
#    include/<stage>/<mod>.h opening with a comment of at least 5 lines, and
#    tests/unit/<stage>/<mod>_test.c unless INTEGRATION_ONLY lists it (the
#    HTTP integration tests drive those);
#  - every server/<stage>/*.c, the rules/ and analyses/ folders and every
#    web/js/**/*.js are named in README.md's source map;
#  - a stage includes only the stages it may call (STAGE_DEPS below): the
#    store never reaches up into ingest or derive, derive never into the
#    HTTP layer; ingest/ingest.c, the pipeline driver, and ingest_derive.c,
#    which schedules its derive stages, are the modules that run the derive
#    stages after the store commits a run;
#  - every rule server/derive/rules/<id>.c is registered, unit-tested and
#    documented in docs/analysis.md;
#  - no exit()/abort() outside main.c and xmalloc.c; no sqlite3_prepare or
#    rundb_prepare outside the modules that own or read run tables
#    (SQL_USERS); no MHD_queue_response outside http_send.c; no raw malloc
#    outside xmalloc.c.
INTEGRATION_ONLY="main http_req api_projects cli_analyze cli_diff api_runs api_run api_table api_summary api_summary_tables api_summary_memory api_timeline api_slice api_search api_flame api_diff api_compare api_ranks cli api_logs api_live http_stream cli_logs"
# stage: the stages its files may include (besides itself)
STAGE_DEPS="base:
store:base
ingest:base,store
derive:base,store
api:base,store,ingest,derive,http
http:base,store,api
cli:base,store,ingest,derive,http,api"
PIPELINE_DRIVER="server/ingest/ingest.c server/ingest/ingest_derive.c"
# Each of these owns tables of run.db or the catalog, or reads them with
# fixed statements and bound parameters only (see each header's comment).
# The store owns run.db's raw tables (rundb_schema, rundb_writer,
# rundb_drain, rundb, rundb_renumber) and the read layer over them
# (store/scan.h: slice cursors and the launch lookup, kinds bound as
# parameters, steps that tell an error from the end; scan_span, facts,
# stats_read, slice_read: what the rules read; rank_read, comm_read: what
# the Ranks page reads (ranks, steps, kernel times; collectives and their
# launch walks); diff_read: two runs compared, B attached to A;
# analyses_read: steps and GPU ops for the analyses; findings: the finding
# table);
# api_summary and api_timeline (and their parts: api_table, api_slice,
# api_search, api_run) answer table queries; import_nsys reads an Nsight
# export. The rules prepare no statement: they read through the store.
# The derive modules named here still prepare statements of their own, and
# why: summary and timeline (and their split parts) build the derived
# tables from their own passes; analyses writes its own tables (analyses,
# anseries, ansample, critseg), reads them back and walks the ranks in
# its write transaction; what it reads of the rest (steps, GPU streams and
# ops with the copies' args, the GPU name) is store/analyses_read's.
# gpuscan (host stacks, GPU streams merged over a window) and
# critical_path (a track walked by id) read through the store (scan_range,
# scan_names, slice_read_ids).
# Every slice scan of derive binds its kinds. No kind number in derive's SQL.
SQL_USERS='^server/(store/[a-z_]+|derive/(summary|summary_[a-z]+|timeline|timeline_[a-z]+|analyses)|api/(api_summary[a-z_]*|api_table|api_timeline|api_slice|api_search|api_flame|api_run)|ingest/import_nsys|ingest/import_nsys_rows)\.c:'
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "layout: $*"; }
MODS=$(find server -mindepth 2 -maxdepth 2 -name '*.c' | sort)
for c in $MODS; do
    st=$(echo "$c" | cut -d/ -f2); m=$(basename "$c" .c)
    case "$STAGE_DEPS" in *"$st:"*) ok;; *) bad "$c is in server/$st/, which is not a stage";; esac
    h=include/$st/$m.h
    if [ ! -f "$h" ]; then bad "$c has no $h"; continue; fi
    n=$(awk 'NR==1 && !/^\/\*/ {exit} {print} /\*\// {exit}' "$h" | wc -l)
    if [ "$n" -ge 5 ]; then ok; else bad "$h must open with a design comment of 5+ lines"; fi
    case " $INTEGRATION_ONLY " in *" $m "*) ok; continue;; esac
    if [ -f "tests/unit/$st/${m}_test.c" ]; then ok; else bad "no tests/unit/$st/${m}_test.c for $c"; fi
done
for f in server/main.c $MODS server/derive/rules/ server/derive/analyses/ $(find web/js -name '*.js' 2>/dev/null | sort); do
    if grep -q "$f" README.md 2>/dev/null; then ok; else bad "README.md source map does not mention $f"; fi
done
for f in $(find server include -name '*.[ch]' ! -path server/main.c | sort); do
    st=$(echo "$f" | cut -d/ -f2)
    allowed=$(echo "$STAGE_DEPS" | sed -n "s/^$st://p")
    for inc in $(sed -n 's/^#include "\([a-z]*\)\/[a-z_0-9]*\.h".*/\1/p' "$f" | sort -u); do
        [ "$inc" = "$st" ] && continue
        case ",$allowed," in *",$inc,"*) continue;; esac
        case " $PIPELINE_DRIVER " in *" $f "*) [ "$inc" = derive ] && continue;; esac
        bad "$f ($st) includes $inc/: $st may include only ${allowed:-base}"
    done
    ok
done
x=$(grep -ln '#include "[a-z_0-9]*\.h"' $(find server include -name '*.[ch]'))
if [ -z "$x" ]; then ok; else bad "include a header by its stage (\"base/err.h\"): $x"; fi
# A rule is one file server/derive/rules/<id>.c plus its X(<id>) line in
# include/derive/rules.h; each is named in a rules*_test.c and described in
# docs/analysis.md (the README links there).
for c in server/derive/rules/*.c; do
    [ -f "$c" ] || continue
    id=$(basename "$c" .c)
    if grep -q "X($id)" include/derive/rules.h; then ok; else bad "$c is not registered in RULES_LIST (include/derive/rules.h)"; fi
    if grep -qs "\"$id\"" tests/unit/derive/rules*_test.c; then ok; else bad "no tests/unit/derive/rules*_test.c names rule $id"; fi
    if grep -q "\`$id\`" docs/analysis.md; then ok; else bad "docs/analysis.md does not describe rule $id"; fi
done
ALL=$(find server -name '*.c' | sort)
x=$(grep -nE '\b(exit|abort)\s*\(' $ALL | grep -vE '^server/(main|base/xmalloc)\.c:')
if [ -z "$x" ]; then ok; else bad "exit/abort outside main.c/xmalloc.c: $x"; fi
x=$(grep -nE '(sqlite3|rundb)_prepare' $ALL | grep -vE "$SQL_USERS")
if [ -z "$x" ]; then ok; else bad "SQL outside the store and its allow-listed readers: $x"; fi
x=$(grep -n 'MHD_queue_response' $ALL | grep -v '^server/http/http_send\.c:')
if [ -z "$x" ]; then ok; else bad "MHD_queue_response outside http_send.c: $x"; fi
x=$(grep -nE '[^x_]malloc\(' $ALL | grep -v '^server/base/xmalloc\.c:')
if [ -z "$x" ]; then ok; else bad "raw malloc outside xmalloc.c: $x"; fi
echo "layout: $pass passed, $fail failed"
[ "$fail" = 0 ]
