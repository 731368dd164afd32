#!/bin/sh
# run.sh BUILD — runs every test suite against the binaries in BUILD and
# prints one closing line "tests: N passed, N failed". Exit status non-zero on
# any failure. Called by `make test` (BUILD=build) and `make asan`
# (BUILD=build-asan, TB_SKIP_BROWSER=1).
BUILD=${1:-build}
export TB_BIN="$PWD/$BUILD/traceboard"
export TB_SHARED="${TB_SHARED:-$(cd .. && pwd)/shared}"
pass=0; fail=0; failed_suites=""
log=$(mktemp); trap 'rm -f "$log"' EXIT

count_c() { # parse "<suite>: N passed, N failed"
    p=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -1)
    echo "${p:-0} ${f:-0}"
}
count_node() { # node --test TAP summary
    p=$(sed -n 's/^# pass \([0-9]*\)/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^# fail \([0-9]*\)/\1/p' "$log" | tail -1)
    echo "${p:-0} ${f:-0}"
}
record() { # name rc "p f"
    set -- "$1" "$2" $3
    pass=$((pass + $3)); fail=$((fail + $4))
    if [ "$2" != 0 ] && [ "$4" = 0 ]; then fail=$((fail + 1)); fi
    if [ "$2" != 0 ] || [ "$4" != 0 ]; then failed_suites="$failed_suites $1"; echo "FAILED: $1"; fi
}

echo "== layout checks"
sh tests/check_layout.sh > "$log" 2>&1; rc=$?; cat "$log"; record layout $rc "$(count_c)"

echo "== C unit tests"
for t in "$BUILD"/tests/*_test; do
    [ -x "$t" ] || continue
    "$t" > "$log" 2>&1; rc=$?
    tail -n 30 "$log" | grep -E "FAIL|passed|ERROR|Sanitizer|leak" | head -40
    record "$(basename "$t")" $rc "$(count_c)"
done

echo "== fuzz corpora replayed"
for t in "$BUILD"/fuzz-replay/*_fuzz; do
    [ -x "$t" ] || continue
    n=$(basename "$t")
    "$t" tests/fuzz/${n}_corpus > "$log" 2>&1; rc=$?
    tail -n 3 "$log"
    if [ $rc = 0 ]; then record "$n" 0 "1 0"; else cat "$log" | tail -30; record "$n" $rc "0 1"; fi
done

echo "== web unit tests (node --test)"
if command -v node >/dev/null 2>&1 && [ -d tests/web ]; then
    node --test tests/web/ > "$log" 2>&1; rc=$?
    grep -E "^not ok|^# (pass|fail)" "$log"
    record web $rc "$(count_node)"
fi

echo "== types (tsc --noEmit checks the // @ts-check JSDoc of web/, tsconfig.json)"
if command -v tsc >/dev/null 2>&1; then
    tsc --noEmit -p tsconfig.json > "$log" 2>&1; rc=$?
    if [ $rc = 0 ]; then echo "types: tsc found no errors"; record types 0 "1 0"
    else head -60 "$log"; record types $rc "0 1"; fi
else
    echo "tsc not found (apt-get install node-typescript)"; record types 1 "0 1"
fi

echo "== HTTP integration tests (real server on loopback)"
if command -v node >/dev/null 2>&1 && [ -d tests/integration ]; then
    # Under a sanitizer build the servers and CLIs these tests start report
    # leaks and errors into files (a test reads only their answers), and each
    # report fails the run. kill -9'd servers report nothing, by design.
    san=""
    if [ -n "$TB_SANITIZED" ]; then
        san="$PWD/$BUILD/sanitizer-logs"; rm -rf "$san"; mkdir -p "$san"
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$san/asan"
        export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$san/ubsan"
    fi
    node --test --test-concurrency=1 tests/integration/ > "$log" 2>&1; rc=$?
    grep -E "^not ok|^# (pass|fail)|Error|expected|actual" "$log" | head -60
    record integration $rc "$(count_node)"
    if [ -n "$san" ]; then
        unset ASAN_OPTIONS UBSAN_OPTIONS
        reports=$(ls "$san" | wc -l)
        for f in "$san"/*; do [ -f "$f" ] && { echo "--- $f"; head -40 "$f"; }; done
        echo "sanitizer reports from servers and CLIs: $reports"
        if [ "$reports" = 0 ]; then record sanitizer-logs 0 "1 0"; else record sanitizer-logs 1 "0 $reports"; fi
    fi
fi

if [ -z "$TB_SKIP_BROWSER" ] && [ -d tests/browser ]; then
    echo "== browser tests (chromium + playwright-core)"
    node --test --test-concurrency=1 tests/browser/ > "$log" 2>&1; rc=$?
    grep -E "^not ok|^# (pass|fail)|Error|expected|actual" "$log" | head -60
    record browser $rc "$(count_node)"
fi

echo
[ -n "$failed_suites" ] && echo "failed suites:$failed_suites"
echo "tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
