#!/bin/sh
# analyze_all.sh BIN OUTDIR — `BIN analyze --json` of every ../shared trace
# folder and every corpus trace file, one output file each, for checking that
# a refactor changes no figure: run it with the binary before and after and
# compare the two folders with `diff -r`. Files that are not traces (an
# execution trace, a rocprof dump) record their exit status instead.
set -u
BIN=$1; OUT=$2
SHARED=${TB_SHARED:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}
mkdir -p "$OUT"
for d in "$SHARED"/traces/*/; do
    n=$(basename "$d")
    "$BIN" analyze --json "$d" > "$OUT/trace_$n.json" 2>/dev/null || echo "rc=$?" >> "$OUT/trace_$n.json"
done
find "$SHARED/corpus" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite' \) | sort |
while read -r f; do
    n=$(echo "${f#"$SHARED"/corpus/}" | sed 's|/|__|g')
    "$BIN" analyze --json "$f" > "$OUT/corpus_$n.json" 2>/dev/null || echo "rc=$?" >> "$OUT/corpus_$n.json"
done
