#!/bin/sh
# check_layout.sh — the code-layout habits of docs/style.md, checked:
#  - every server/*.c except main.c has include/<mod>.h opening with a
#    comment of at least 5 lines;
#  - every server/*.c and web/js/**/*.js is named in README.md's source map;
#  - every server/*.c has tests/unit/<mod>_test.c, except the modules listed
#    in INTEGRATION_ONLY, which the HTTP integration tests drive;
#  - every rule server/rules/<id>.c is registered, unit-tested and documented;
#  - no exit()/abort() outside main.c and xmalloc.c; no sqlite3_prepare
#    outside store modules (rundb.c, catalog.c, analysis.c: each owns its
#    tables; api_analysis.c reads analysis.c's tables read-only, through
#    allow-listed fragments and bound parameters; rules.c owns `finding`
#    and, with the rules in server/rules/, reads the analysis tables
#    read-only; gpuscan.c reads the slice, track and str tables read-only
#    for the rules; timeline.c owns the LOD tables lod, lod_level, cseries and
#    clod; api_timeline.c reads the run tables and those read-only, with
#    bound parameters only; diff.c reads the analysis tables of two run
#    databases read-only, B ATTACHed, through fixed fragments and bound
#    parameters; ranks.c reads the run, analysis and finding tables of one
#    run read-only, with bound parameters only; import_nsys.c reads an
#    uploaded Nsight Systems export, opened read-only and defensively, with
#    fixed fragments and column names it checked exist; analyses.c owns
#    analyses, anseries, ansample and critpath, and with the analyses in
#    server/analyses/ reads the run and analysis tables read-only, bound
#    parameters only); no MHD_queue_response
#    outside http.c; no raw malloc outside xmalloc.c.
INTEGRATION_ONLY="main api_runs api_analysis api_timeline api_diff api_ranks cli"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "layout: $*"; }
for c in server/*.c; do
    m=$(basename "$c" .c)
    [ "$m" = main ] && continue
    h=include/$m.h
    if [ ! -f "$h" ]; then bad "$c has no $h"; continue; fi
    n=$(awk 'NR==1 && !/^\/\*/ {exit} {print} /\*\// {exit}' "$h" | wc -l)
    if [ "$n" -ge 5 ]; then ok; else bad "$h must open with a design comment of 5+ lines"; fi
done
for f in server/*.c $(find web/js -name '*.js' 2>/dev/null | sort); do
    if grep -q "$f" README.md 2>/dev/null; then ok; else bad "README.md source map does not mention $f"; fi
done
for c in server/*.c; do
    m=$(basename "$c" .c)
    case " $INTEGRATION_ONLY " in *" $m "*) ok; continue;; esac
    if [ -f "tests/unit/${m}_test.c" ]; then ok; else bad "no tests/unit/${m}_test.c for $c"; fi
done
# A rule is one file server/rules/<id>.c plus its X(<id>) line in
# include/rules.h; each is named in a rules*_test.c and in README.md.
for c in server/rules/*.c; do
    [ -f "$c" ] || continue
    id=$(basename "$c" .c)
    if grep -q "X($id)" include/rules.h; then ok; else bad "$c is not registered in RULES_LIST (include/rules.h)"; fi
    if grep -qs "\"$id\"" tests/unit/rules*_test.c; then ok; else bad "no tests/unit/rules*_test.c names rule $id"; fi
    if grep -q "\`$id\`" README.md; then ok; else bad "README.md does not describe rule $id"; fi
done
x=$(grep -nE '\b(exit|abort)\s*\(' server/*.c | grep -vE '^server/(main|xmalloc)\.c:')
if [ -z "$x" ]; then ok; else bad "exit/abort outside main.c/xmalloc.c: $x"; fi
x=$(grep -n 'sqlite3_prepare' server/*.c server/rules/*.c server/analyses/*.c |
    grep -vE '^server/(rundb|catalog|analysis|analyses|api_analysis|rules|gpuscan|timeline|api_timeline|diff|ranks|import_nsys|store_[a-z_]*|rules/[a-z_]+|analyses/[a-z_]+)\.c:')
if [ -z "$x" ]; then ok; else bad "SQL outside the store modules: $x"; fi
x=$(grep -n 'MHD_queue_response' server/*.c | grep -v '^server/http\.c:')
if [ -z "$x" ]; then ok; else bad "MHD_queue_response outside http.c: $x"; fi
x=$(grep -nE '[^x_]malloc\(' server/*.c | grep -v '^server/xmalloc\.c:')
if [ -z "$x" ]; then ok; else bad "raw malloc outside xmalloc.c: $x"; fi
echo "layout: $pass passed, $fail failed"
[ "$fail" = 0 ]
