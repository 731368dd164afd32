#!/bin/sh
# bench.sh BUILD — `make bench`: import throughput and peak memory of
# `traceboard import` (figures, not pass/fail).
#
# Inputs: a ~1 GB synthetic Kineto trace made by BUILD/tools/gentrace (kept
# in /tmp/traceboard-bench and reused by later runs; TB_BENCH_BYTES changes
# its size) and the largest real trace in ../shared/traces
# (dataloader_workers0). Each is imported into a fresh data folder under
# /usr/bin/time -v; the script prints MB/s of JSON (uncompressed bytes /
# wall seconds) and peak RSS next to the targets.
BUILD=${1:-build}
BIN="$BUILD/traceboard"
GEN="$BUILD/tools/gentrace"
SHARED="${TB_SHARED:-$(cd .. && pwd)/shared}"
WORK=/tmp/traceboard-bench
SIZE=${TB_BENCH_BYTES:-1G}
TARGET_MBS=150
TARGET_RSS=256

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "$BIN not found: build it first (make)"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"
mkdir -p "$WORK" || die "cannot create $WORK"

gen="$WORK/gentrace-$SIZE.pt.trace.json"
if [ ! -s "$gen" ]; then
    [ -x "$GEN" ] || die "$GEN not found (make $GEN)"
    echo "generating $gen ..."
    "$GEN" --bytes "$SIZE" --seed 1 "$gen.tmp" && mv "$gen.tmp" "$gen" || die "gentrace failed"
fi

# Uncompressed size in bytes (gzip -l is wrong past 4 GiB, so count).
json_bytes() {
    case "$1" in
    *.gz) gzip -dc "$1" | wc -c ;;
    *) wc -c < "$1" ;;
    esac
}

# bench LABEL FILE: one import, one result line.
bench() {
    label=$1 file=$2
    data=$(mktemp -d "$WORK/data.XXXXXX") || die "mktemp failed"
    log="$data.time"
    bytes=$(json_bytes "$file" | tr -d ' ')
    /usr/bin/time -v "$BIN" import --data-dir "$data" --log-level warn "$file" > "$data.out" 2> "$log"
    rc=$?
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    if [ $rc != 0 ] || [ -z "$wall" ]; then
        echo "$label: import FAILED (exit $rc)"
        cat "$data.out" "$log" | tail -20
    else
        awk -v l="$label" -v b="$bytes" -v w="$wall" -v r="$rss_kb" -v tm="$TARGET_MBS" -v tr="$TARGET_RSS" 'BEGIN {
            mbs = w > 0 ? b / 1e6 / w : 0; rss = r / 1024
            printf "%-22s %8.1f MB JSON  %7.2f s  %7.1f MB/s (target >= %d: %s)  peak RSS %6.1f MB (target <= %d: %s)\n",
                l, b / 1e6, w, mbs, tm, (mbs >= tm ? "ok" : "BELOW"), rss, tr, (rss <= tr ? "ok" : "ABOVE") }'
    fi
    rm -rf "$data" "$data.out" "$log"
}

echo "traceboard import benchmark ($(nproc) CPUs; $(uname -m))"
bench "gentrace $SIZE" "$gen"
real=$(ls "$SHARED"/traces/dataloader_workers0/*.pt.trace.json* 2>/dev/null | head -1)
if [ -n "$real" ]; then
    bench "dataloader_workers0" "$real"
else
    echo "dataloader_workers0: skipped ($SHARED/traces not found; set TB_SHARED)"
fi
