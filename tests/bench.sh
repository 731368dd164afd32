#!/bin/sh
# bench.sh BUILD — `make bench`: import throughput and peak memory of
# `traceboard import` (figures, not pass/fail).
#
# Inputs, kept in /tmp/traceboard-bench and reused by later runs: first the
# real shape, ../shared/traces/transformer_with_stack tiled 33 times by
# ../shared/tools/tile_trace.py (~100 steps, 281 MB of JSON with its Python
# stacks, misnested frames, flows and memory events), imported from .json
# and from a gzip -6 copy, and tiled 54 times (461 MB: the size of the
# held-out 458 MB trace); then a 10-million-event synthetic Kineto trace
# made by BUILD/tools/gentrace (TB_BENCH_EVENTS changes the count; the same
# file as the timeline benchmark's) and the largest real trace in
# ../shared/traces (dataloader_workers0). Each is imported into a fresh data
# folder under /usr/bin/time -v with --log-level debug, three times but the
# 10-million-event trace; the script prints, for the run of the median wall
# time, MB/s of JSON (uncompressed bytes / wall seconds), peak RSS and CPU %
# (over 100 %: more than one core busy) next to the targets and the spread
# of the runs, then the time of each stage from the log's "phase X took"
# lines (summed over ranks) and the derived tables' split.
#
# Then the query benchmark: the largest trace file of ../shared/corpus (by
# size on disk; the next largest when one does not import) is imported, a
# server is started on it, and each analysis endpoint is timed over loopback
# with curl (gzip accepted, as a browser does): median of 5 requests, next
# to the target (<= 100 ms). Skipped when ../shared/corpus is absent.
# TB_BENCH=import or TB_BENCH=query runs only that part.
#
# TB_BENCH=timeline (also part of the default run): a 10-million-event trace
# from gentrace (TB_BENCH_EVENTS changes the count) is imported once into
# /tmp/traceboard-bench/timeline-data (kept and reused, like the trace;
# TB_BENCH_IMPORT_ARGS adds import flags), a server is started on it and
# /timeline is timed at 2000 px over the whole run, 1/10, 1/1000, a single
# slice and pans (5 requests each): p50/p95 of curl's time_total next to the
# bar (p95 <= 50 ms), and the most items any track depth got (<= 2000).
# The same on a real-shaped trace (transformer_with_stack tiled --chain x50,
# made with ../shared/tools/tile_trace.py into /tmp/traceboard-bench once),
# with the whole run's gzip answer size next to its bar (<= 256 kB); then
# on each the heavy queries: /timeline/aggregate over the whole run and a
# tenth, /timeline/search pages (median of 3; bar <= 500 ms), and /ranks
# (one rank: median of 5, bar <= 100 ms).
#
# TB_BENCH=logs (also part of the default run): job logs. A demo trace is
# imported, 100 bodies of 8,000 JSON lines (~0.8 MB each, 800,000 lines in
# all) are posted to /api/runs/ID/logs, then GET /logs is timed for the
# first 10,000 lines, a text search and a window (median of 5; bar 100 ms).
BUILD=${1:-build}
BIN="$BUILD/traceboard"
GEN="$BUILD/tools/gentrace"
SHARED="${TB_SHARED:-$(cd .. && pwd)/shared}"
WORK=/tmp/traceboard-bench
EVENTS=${TB_BENCH_EVENTS:-10M}
TARGET_MBS=150
TARGET_RSS=256

TARGET_MS=100
PART=${TB_BENCH:-all}

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "$BIN not found: build it first (make)"
mkdir -p "$WORK" || die "cannot create $WORK"

# The synthetic trace, shared with timeline_bench.
gen="$WORK/gentrace-${EVENTS}ev.json"
make_gen() {
    [ -s "$gen" ] && return 0
    [ -x "$GEN" ] || die "$GEN not found (make $GEN)"
    echo "generating $gen ..."
    "$GEN" --events "$EVENTS" --seed 1 "$gen.tmp" && mv "$gen.tmp" "$gen" || die "gentrace failed"
}

# The real-shape trace, its gzip copy and the held-out size.
tiled="$WORK/tiled33.json"
tiled54="$WORK/tiled54.json"
make_tiled() {
    src=$(ls "$SHARED"/traces/transformer_with_stack/*.pt.trace.json* 2> /dev/null | head -1)
    if [ ! -s "$tiled" ]; then
        [ -n "$src" ] || return 1
        command -v python3 > /dev/null 2>&1 || return 1
        echo "generating $tiled ..."
        python3 "$SHARED/tools/tile_trace.py" --copies 33 "$src" "$WORK/tiled33.tmp.json" &&
            mv "$WORK/tiled33.tmp.json" "$tiled" || return 1
        rm -f "$WORK/facts.json" "$tiled.gz" # tile_trace.py writes facts.json beside its output
    fi
    if [ ! -s "$tiled.gz" ]; then
        gzip -6 -c "$tiled" > "$tiled.gz.tmp" && mv "$tiled.gz.tmp" "$tiled.gz" || return 1
    fi
}

# The held-out trace's size (458 MB): its main thread and host slices pass
# limits that tiled33's stay under. Made after make_tiled succeeded.
make_tiled54() {
    [ -s "$tiled54" ] && return 0
    echo "generating $tiled54 ..."
    python3 "$SHARED/tools/tile_trace.py" --copies 54 "$src" "$WORK/tiled54.tmp.json" &&
        mv "$WORK/tiled54.tmp.json" "$tiled54" || return 1
    rm -f "$WORK/facts.json"
}

# Uncompressed size in bytes (gzip -l is wrong past 4 GiB, so count).
json_bytes() {
    case "$1" in
    *.gz) gzip -dc "$1" | wc -c ;;
    *) wc -c < "$1" ;;
    esac
}

# wall_of LOG: the wall seconds /usr/bin/time -v wrote in LOG.
wall_of() {
    sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'
}

# bench LABEL FILE [RUNS]: RUNS imports (default 1), one result line: the
# run of the median wall time (its RSS, CPU and stages), with the spread
# when there were several: on 2 cores one import's wall time varies by
# +-5 % from run to run.
bench() {
    label=$1 file=$2 runs=${3:-1}
    bytes=$(json_bytes "$file" | tr -d ' ')
    walls="" i=0 rc=0
    while [ $i -lt "$runs" ]; do
        data=$(mktemp -d "$WORK/data.XXXXXX") || die "mktemp failed"
        /usr/bin/time -v "$BIN" import --data-dir "$data" --log-level debug "$file" > "$data.out" 2> "$data.time"
        rc=$?
        w=$(wall_of "$data.time")
        if [ $rc != 0 ] || [ -z "$w" ]; then
            echo "$label: import FAILED (exit $rc)"
            cat "$data.out" "$data.time" | tail -20
            rm -rf "$data" "$data.out" "$data.time" "$WORK"/bench-run.*
            return
        fi
        mv "$data.time" "$WORK/bench-run.$i"
        walls="$walls $w:$i"
        rm -rf "$data" "$data.out"
        i=$((i + 1))
    done
    set -- $(echo $walls | tr ' ' '\n' | sort -n | awk -F: '{ w[NR] = $1; r[NR] = $2 }
        END { m = int((NR + 1) / 2); print r[m], w[1], w[NR] }')
    log="$WORK/bench-run.$1" spread=""
    [ "$runs" -gt 1 ] && spread="  (median of $runs: $2-$3 s)"
    wall=$(wall_of "$log")
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    cpu=$(sed -n 's/.*Percent of CPU this job got: //p' "$log")
    {
        awk -v l="$label" -v b="$bytes" -v w="$wall" -v r="$rss_kb" -v c="$cpu" -v tm="$TARGET_MBS" -v tr="$TARGET_RSS" \
            -v sp="$spread" 'BEGIN {
            mbs = w > 0 ? b / 1e6 / w : 0; rss = r / 1024
            printf "%-22s %8.1f MB JSON  %7.2f s  %7.1f MB/s (target >= %d: %s)  peak RSS %6.1f MB (target <= %d: %s)  CPU %s%s\n",
                l, b / 1e6, w, mbs, tm, (mbs >= tm ? "ok" : "BELOW"), rss, tr, (rss <= tr ? "ok" : "ABOVE"), c, sp }'
        # stages in the order they first ran, each summed over the ranks
        awk '/ phase [a-z]+ took / { for (i = 1; i < NF; i++) if ($i == "phase") { p = $(i + 1); t = $(i + 3) }
                 if (!(p in s)) o[n++] = p; s[p] += t }
             END { line = "  stages:"; for (i = 0; i < n; i++) if (s[o[i]] >= 0.0005)
                     line = line sprintf(" %s %.2f s,", o[i], s[o[i]]); sub(/,$/, "", line); print line }' "$log"
        # the phases before "analyze" run one after another on the job's
        # thread: their sum is when the run opens (its derived pages fill in after)
        awk -v b="$bytes" '/ phase [a-z]+ took / { for (i = 1; i < NF; i++) if ($i == "phase") { p = $(i + 1); t = $(i + 3) }
                 if (p != "analyze") v += t }
             END { if (v > 0) printf "  visible after %.2f s (%.1f MB/s): the run opens, its derived pages fill in after\n", v, b / 1e6 / v }' "$log"
        sed -n 's/.*derived tables: /  analyze: /p' "$log" | head -1
    }
    rm -f "$WORK"/bench-run.*
}

# start_server DATA LOG: `traceboard serve` on DATA in the background, its
# output in LOG; sets spid, token and base (the URL without the query).
# Fails, the server killed, when it has not printed its URL within 10 s.
start_server() {
    "$BIN" serve --port 0 --data-dir "$1" --log-level warn > "$2" 2>&1 &
    spid=$!
    url=""
    for i in $(seq 1 100); do
        url=$(sed -n 's/^open: \(http[^ ]*\)/\1/p' "$2" | head -1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        kill "$spid" 2> /dev/null
        return 1
    fi
    token=$(echo "$url" | sed -n 's/.*[?&]token=\([^&]*\).*/\1/p')
    base=$(echo "$url" | sed 's/?.*//; s:/$::')
}

# stop_server: ends the server of start_server.
stop_server() {
    kill "$spid" 2> /dev/null
    wait "$spid" 2> /dev/null
}

# query_time URL: median of 5 request times in ms, or "FAILED <status>".
query_time() {
    times=$(for i in 1 2 3 4 5; do
        curl -s --compressed -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $token" "$1"
    done)
    bad=$(echo "$times" | awk '$1 != 200 { print $1; exit }')
    if [ -n "$bad" ]; then
        echo "FAILED (HTTP $bad)"
        return
    fi
    echo "$times" | awk '{ printf "%.3f\n", $2 * 1000 }' | sort -n | sed -n 3p
}

# The analysis endpoints on the largest corpus trace, timed over loopback.
query_bench() {
    if [ ! -d "$SHARED/corpus" ]; then
        echo "query benchmark: skipped ($SHARED/corpus not found; set TB_SHARED)"
        return 0
    fi
    command -v curl > /dev/null 2>&1 || { echo "query benchmark: skipped (curl not installed)"; return 0; }
    qdata=$(mktemp -d "$WORK/query.XXXXXX") || die "mktemp failed"
    run="" qfile=""
    find "$SHARED/corpus" -type f \( -name '*.json.gz' -o -name '*.json' \) -printf '%s %p\n' | sort -rn |
        head -5 | cut -d' ' -f2- > "$qdata.candidates"
    while IFS= read -r f; do
        if "$BIN" import --data-dir "$qdata" --log-level error "$f" > "$qdata.out" 2>&1; then
            run=$(sed -n 's/.* as run \([0-9a-f]\{16\}\) .*/\1/p' "$qdata.out" | head -1)
            qfile=$f
            break
        fi
        echo "query benchmark: $f does not import, taking the next largest"
    done < "$qdata.candidates"
    if [ -z "$run" ]; then
        echo "query benchmark: FAILED (no corpus trace imported)"
        rm -rf "$qdata" "$qdata.candidates" "$qdata.out"
        return 1
    fi
    if ! start_server "$qdata" "$qdata.serve"; then
        echo "query benchmark: FAILED (server did not start)"
        cat "$qdata.serve"
        rm -rf "$qdata" "$qdata.candidates" "$qdata.out" "$qdata.serve"
        return 1
    fi
    json_mb=$(json_bytes "$qfile" | awk '{ printf "%.1f", $1 / 1e6 }')
    echo "query benchmark: $(basename "$qfile") ($json_mb MB JSON), run $run; median of 5 requests"
    for path in overview operators "operators?group=shape" "operators?group=stack&q=aten&sort=name" \
        "operators?format=csv" kernels "kernels?group=op&sort=occupancy" "kernels?format=csv" memory \
        "memory?points=5000" "memory?device=cpu" memory/events "memory/events?sort=lifetime&q=aten" \
        "memory/events?format=csv" analyses critpath ranks; do
        ms=$(query_time "$base/api/runs/$run/$path")
        case "$ms" in
        FAILED*) echo "  $path: $ms" ;;
        *) awk -v p="$path" -v ms="$ms" -v t="$TARGET_MS" 'BEGIN {
               printf "  %-42s %7.1f ms (target <= %d: %s)\n", p, ms, t, (ms <= t ? "ok" : "ABOVE") }' ;;
        esac
    done
    stop_server
    rm -rf "$qdata" "$qdata.candidates" "$qdata.out" "$qdata.serve"
}

# timeline_import FILE DATA: imports FILE once into DATA (kept and reused).
timeline_import() {
    if [ ! -d "$2/runs" ] || [ -z "$(ls "$2/runs" 2> /dev/null)" ]; then
        rm -rf "$2"
        echo "importing $1 (once; kept in $2) ..."
        # shellcheck disable=SC2086
        /usr/bin/time -v "$BIN" import --data-dir "$2" --log-level info $TB_BENCH_IMPORT_ARGS "$1" \
            > "$2.out" 2> "$2.time" || { tail -20 "$2.time"; die "timeline import of $1 failed"; }
        grep -E "level of detail|lod:" "$2.time" | sed 's/^/  /'
        sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): /  import wall time: /p;
            s/.*Maximum resident set size (kbytes): \(.*\)/  import peak RSS (kB): \1/p' "$2.time"
    fi
}

# timeline_windows DATA LABEL: a server on DATA; /timeline timed over the
# windows (5 requests each), with gzip and without.
timeline_windows() {
    tdata=$1 label=$2
    start_server "$tdata" "$tdata.serve" || { cat "$tdata.serve"; die "timeline server did not start"; }
    run=$(ls "$tdata/runs" | head -1)
    api="$base/api/runs/$run/timeline"
    out="$tdata.resp"
    curl -s -H "Authorization: Bearer $token" "$api/tracks" > "$out.tracks"
    # windows: name start end (µs), worked out from the run's span and one kernel
    python3 - "$out.tracks" > "$tdata.windows" << 'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t0, t1 = t["t0_us"], t["t1_us"]
span = t1 - t0
w = [("full", t0, t1)]
for f in (0.1, 0.5, 0.9):
    w.append(("1/10@%g" % f, t0 + f * span - span / 20, t0 + f * span + span / 20))
for f in (0.1, 0.5, 0.9):
    w.append(("1/1000@%g" % f, t0 + f * span - span / 2000, t0 + f * span + span / 2000))
s0 = t0 + 0.3 * span
for k in range(5):
    w.append(("pan1/100#%d" % k, s0 + k * span / 300, s0 + k * span / 300 + span / 100))
for n, a, b in w:
    print(n, "%.3f" % a, "%.3f" % b)
PY
    # a single-slice window: the longest real item of a 1/100000 view
    set -- $(sed -n 5p "$tdata.windows")
    curl -s -H "Authorization: Bearer $token" "$api?start=$2&end=$3&width=2000" > "$out.one"
    python3 - "$out.one" >> "$tdata.windows" << 'PY'
import json, sys
v = json.load(open(sys.argv[1]))
best = None
for t in v["tracks"]:
    for d in t["depths"]:
        for ts, dur, i in zip(d["ts"], d["dur"], d["id"]):
            if i and dur > 0 and (best is None or dur > best[1]):
                best = (ts, dur)
if best:
    print("one-slice", "%.3f" % (best[0] - best[1] * 0.1), "%.3f" % (best[0] + best[1] * 1.1))
PY
    for enc in gzip identity; do
    if [ $enc = gzip ]; then zip=--compressed; else zip=; fi
    echo "timeline benchmark: $label, run $run, width 2000, 5 requests per window ($enc)"
    : > "$out.times"
    maxitems=0
    fullkb=0
    while read -r name start end; do
        for i in 1 2 3 4 5; do
            curl -s $zip -o "$out.body" -w '%{http_code} %{time_total} %{size_download}\n' \
                -H "Authorization: Bearer $token" "$api?start=$start&end=$end&width=2000" >> "$out.times"
        done
        m=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(max([len(d["ts"]) for t in v["tracks"] for d in t["depths"]] or [0]), sum(len(d["ts"]) for t in v["tracks"] for d in t["depths"]), len(open(sys.argv[1],"rb").read()), max([len(t["depths"]) for t in v["tracks"]] or [0]))' "$out.body")
        set -- $m
        [ "$1" -gt "$maxitems" ] && maxitems=$1
        wire=$(tail -1 "$out.times" | awk '{ print $3 }')
        [ "$name" = full ] && fullkb=$(awk -v b="$wire" 'BEGIN { printf "%.1f", b / 1024 }')
        ms=$(tail -5 "$out.times" | awk '{ printf "%.1f\n", $2 * 1000 }' | sort -n | sed -n '3p;5p' | tr '\n' ' ')
        echo "$name $ms $m $wire" | awk '{ printf "  %-16s median %6.1f ms  max %6.1f ms  items %6d (max per depth %4d, depths %3d)  %7.1f kB JSON, %7.1f kB sent\n",
            $1, $2, $3, $5, $4, $7, $6 / 1024, $8 / 1024 }'
    done < "$tdata.windows"
    bad=$(awk '$1 != 200' "$out.times" | head -1)
    [ -n "$bad" ] && echo "  FAILED: a request answered $bad"
    awk '{ printf "%.3f\n", $2 * 1000 }' "$out.times" | sort -n > "$out.sorted"
    n=$(wc -l < "$out.sorted")
    p50=$(sed -n "$(( (n + 1) / 2 ))p" "$out.sorted")
    p95=$(sed -n "$(( (n * 95 + 99) / 100 ))p" "$out.sorted")
    awk -v n="$n" -v p50="$p50" -v p95="$p95" -v mi="$maxitems" -v kb="$fullkb" -v enc="$enc" 'BEGIN {
        printf "  all %d requests: p50 %.1f ms, p95 %.1f ms (bar p95 <= 50: %s); max items per track depth %d (bar <= 2000: %s)",
            n, p50, p95, (p95 <= 50 ? "ok" : "ABOVE"), mi, (mi <= 2000 ? "ok" : "ABOVE")
        if (enc == "gzip") printf "; whole run %.1f kB sent (bar <= 256: %s)", kb, (kb <= 256 ? "ok" : "ABOVE")
        printf "\n" }'
    done
    # the heavy ones: the area selection of the whole run and of a tenth, and
    # search pages (a name most slices match, and the next page by cursor)
    set -- $(sed -n 1p "$tdata.windows")
    w0=$2 w1=$3
    set -- $(sed -n 3p "$tdata.windows")
    echo "timeline heavy queries: $label (median of 3, gzip)"
    next=$(curl -s -H "Authorization: Bearer $token" "$api/search?q=a&limit=1000" |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("next") or "")')
    for q in "aggregate?start=$w0&end=$w1" "aggregate?start=$2&end=$3" "search?q=a" "search?q=a&limit=1000" \
        "search?q=a&limit=1000&after=$next" "search?q=kernel&start=$2&end=$3"; do
        for i in 1 2 3; do
            curl -s --compressed -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $token" \
                "$api/$q"
        done | sort -k2 -n | sed -n 2p | awk -v q="$q" '{ printf "  %-40.40s %6.1f ms (%s)\n", q, $2 * 1000, $1 }'
    done
    # the Ranks tab of this one-rank run: answered from the stored tables
    # (issue 21: it swept every slice, 1.3 s on the review's machine)
    ms=$(query_time "$base/api/runs/$run/ranks")
    printf "  %-40.40s %s ms (median of 5; bar <= 100)\n" "ranks (one rank)" "$ms"
    stop_server
    rm -f "$out".* "$tdata.serve" "$tdata.windows"
}

# timeline_bench: viewport queries on a 10M-event synthetic run and on a
# real-shaped one: ../shared/traces/transformer_with_stack tiled with
# tile_trace.py --chain --copies 50 (about 100 steps, 1.1 M events, Python
# stacks misnesting across every step), made once in $WORK and reused.
timeline_bench() {
    command -v curl > /dev/null 2>&1 || { echo "timeline benchmark: skipped (curl not installed)"; return 0; }
    command -v python3 > /dev/null 2>&1 || { echo "timeline benchmark: skipped (python3 not installed)"; return 0; }
    events=$EVENTS
    tgen=$gen
    make_gen
    timeline_import "$tgen" "$WORK/timeline-data-$events"
    timeline_windows "$WORK/timeline-data-$events" "$events events (gentrace)"
    tws=$(ls "$SHARED"/traces/transformer_with_stack/*.json.gz 2> /dev/null | head -1)
    if [ -z "$tws" ] || [ ! -f "$SHARED/tools/tile_trace.py" ]; then
        echo "timeline benchmark, real shape: skipped ($SHARED/traces or tools not found; set TB_SHARED)"
        return 0
    fi
    rgen="$WORK/transformer_with_stack-chain50.json"
    if [ ! -s "$rgen" ]; then
        echo "generating $rgen ..."
        python3 "$SHARED/tools/tile_trace.py" --chain --copies 50 "$tws" "$rgen.tmp" && mv "$rgen.tmp" "$rgen" ||
            die "tile_trace.py failed"
    fi
    timeline_import "$rgen" "$WORK/timeline-data-chain50"
    timeline_windows "$WORK/timeline-data-chain50" "transformer_with_stack tiled --chain x50"
}

# Job logs: posting throughput and the reads of a long log.
logs_bench() {
    command -v curl > /dev/null 2>&1 || { echo "logs benchmark: skipped (curl not installed)"; return 0; }
    ldata=$(mktemp -d "$WORK/logs.XXXXXX") || die "mktemp failed"
    trace=$(ls tests/data/demo/matmul_amp/*.gz | head -1)
    "$BIN" import --data-dir "$ldata" --log-level error "$trace" > "$ldata.out" 2>&1 || die "logs: import failed"
    run=$(sed -n 's/.* as run \([0-9a-f]\{16\}\) .*/\1/p' "$ldata.out" | head -1)
    awk 'BEGIN { for (i = 0; i < 8000; i++) printf "{\"ts\": %.6f, \"step\": %d, \"loss\": %.4f, \"msg\": \"step %d of the training loop\"}\n", 1795344370 + i / 1000, i, 3 - i / 8000, i }' > "$ldata.body"
    start_server "$ldata" "$ldata.log" || die "logs: server did not start"
    t0=$(date +%s.%N)
    for i in $(seq 1 100); do
        curl -s -o /dev/null -H "Authorization: Bearer $token" --data-binary @"$ldata.body" "$base/api/runs/$run/logs" || break
    done
    t1=$(date +%s.%N)
    echo "logs: 800,000 lines posted in $(echo "$t1 - $t0" | bc) s (100 bodies of $(wc -c < "$ldata.body") bytes)"
    for q in "limit=10000" "q=step%20799%20&limit=1000" "start=4487348861000&end=4487348862000&limit=10000"; do
        echo "  GET /logs?$q: $(query_time "$base/api/runs/$run/logs?$q") ms (target <= $TARGET_MS)"
    done
    stop_server
    rm -rf "$ldata" "$ldata.out" "$ldata.body" "$ldata.log"
}

if [ "$PART" = logs ]; then
    logs_bench
    exit $?
fi
if [ "$PART" = timeline ]; then
    timeline_bench
    exit $?
fi
if [ "$PART" != query ]; then
    [ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
    echo "traceboard import benchmark ($(nproc) CPUs; $(uname -m))"
    if make_tiled; then
        bench "tiled33 (real shape)" "$tiled" 3
        bench "tiled33.json.gz" "$tiled.gz" 3
        if make_tiled54; then
            bench "tiled54 (the held-out trace's size)" "$tiled54" 3
        else
            echo "tiled54: skipped (tile_trace.py failed)"
        fi
    else
        echo "tiled33: skipped (needs python3 and $SHARED/traces/transformer_with_stack; set TB_SHARED)"
    fi
    make_gen
    bench "gentrace $EVENTS events" "$gen"
    real=$(ls "$SHARED"/traces/dataloader_workers0/*.pt.trace.json* 2>/dev/null | head -1)
    if [ -n "$real" ]; then
        bench "dataloader_workers0" "$real" 3
    else
        echo "dataloader_workers0: skipped ($SHARED/traces not found; set TB_SHARED)"
    fi
fi
[ "$PART" = import ] || query_bench
[ "$PART" != all ] || timeline_bench
[ "$PART" != all ] || logs_bench
