#!/usr/bin/env bash
# Runs every test suite (the README's `make test` after `make deps`), each
# stage's output both shown and kept in build/test-logs/, then the seconds
# each stage took and one closing line that adds up the tests of all
# stages: "test: N passed, N failed".
# A stage that fails does not stop the others; the exit status is non-zero
# when any test or stage failed.
set -uo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$repo" || exit 1
logs="$build/test-logs"
mkdir -p "$logs"

passed=0 failed=0 skipped=0 broken=() timings=()

# stage NAME COMMAND...: runs it, adds its counts (GoogleTest's summary
# lines, or the interop runner's "N passed, N failed").
stage() {
    local name="$1" log="$logs/$1.log" rc p f s start
    shift
    echo "=== $name: $*"
    start=$SECONDS
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    timings+=("$(printf '%5ds  %s' $((SECONDS - start)) "$name")")
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    if [ -z "$p$f" ]; then
        p=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed.*/\1/p' "$log" | tail -1)
        f=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -1)
        s=$(sed -n 's/^[0-9]* passed, [0-9]* failed, \([0-9]*\) skipped.*/\1/p' "$log" | tail -1)
    fi
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ]; then
        broken+=("$name (exit $rc)")
        # a stage that failed without counting a test still counts once
        [ -n "$f" ] && [ "$f" -gt 0 ] || failed=$((failed + 1))
    fi
}

stage clang      make --no-print-directory check-clang
stage tables     make --no-print-directory check-tables
stage unit       make --no-print-directory unit-tests
stage unit-asan  make --no-print-directory unit-tests-asan
stage unit-valgrind make --no-print-directory unit-tests-valgrind
stage alloc      make --no-print-directory alloc-tests
stage fuzz-smoke make --no-print-directory -j2 fuzz-smoke
# every line built once (those whose source is absent are skipped); the
# stages after it reuse the builds
stage nginx-lines make --no-print-directory nginx-lines
stage interop    make --no-print-directory interop
stage interop-asan  make --no-print-directory interop-asan
stage alloc-failure make --no-print-directory alloc-failure-sweep
stage alloc-failure-1.30 make --no-print-directory alloc-failure-sweep NGINX_VERSION=1.30.4
stage interop-1.22 make --no-print-directory interop-1.22
stage interop-1.28 make --no-print-directory interop-1.28
stage interop-1.30 make --no-print-directory interop-1.30
stage interop-1.31 make --no-print-directory interop-1.31
stage interop-asan-1.31 make --no-print-directory interop-asan NGINX_VERSION=1.31.4
# HTTP/3 on every line that has it, in one run
stage interop-h3 make --no-print-directory interop-h3
stage interop-proxy   make --no-print-directory interop-proxy
stage interop-proxy-asan make --no-print-directory interop-proxy-asan
stage interop-proxy-1.30 make --no-print-directory interop-proxy NGINX_VERSION=1.30.4
stage interop-browser make --no-print-directory interop-browser
stage bench-smoke make --no-print-directory bench-codec QUICK=1
stage bench-nginx-smoke make --no-print-directory bench QUICK=1
stage stock-cost make --no-print-directory bench-stock-cost

# how long each stage took: CI's budget is the sum
echo
echo "test: seconds per stage (total ${SECONDS}s):"
printf '%s\n' "${timings[@]}"

echo
if [ "${#broken[@]}" -gt 0 ]; then
    # the failing tests by name, so that the last lines of the output are
    # enough to tell what broke (GoogleTest's, the interop runner's and
    # the allocation failure sweep's)
    grep -H -E '^\[  FAILED  \] [A-Za-z_]|^FAIL  |^  N=[0-9]+ [a-z_0-9]+: FAIL|: the run without a failure: FAIL' "$logs"/*.log |
        sed "s|^$logs/||" | cut -c1-300 | head -40
    echo "test: failed stages: ${broken[*]} (logs in $logs/)"
fi
if [ "$skipped" -gt 0 ]; then
    echo "test: $passed passed, $failed failed, $skipped skipped"
else
    echo "test: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
