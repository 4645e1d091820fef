#!/usr/bin/env bash
# Runs the interop suite (interop/run_interop.py) once its tools are there.
#
#   interop/run.sh                      nginx 1.26.3, every case
#   interop/run.sh --version 1.22.1     nginx 1.22.1: cases 1, 2 and 5
#   interop/run.sh --only REGEX         only the tests whose names match
#   interop/run.sh --asan [--version V] [--only REGEX]
#                                       the patched servers from the sanitizer
#                                       build (make nginx-asan, of 1.26.3 or
#                                       V; on 1.30.4 and 1.31.4 the HTTP/3
#                                       cases too), then every sanitizer
#                                       report judged
#   interop/run.sh --asan --proxy [--version V] [--only REGEX]
#                                       the same for the reverse-proxy suite
#                                       (interop/proxy_run.py): its three
#                                       proxies with the module
#
# Needs the nginx builds (make nginx), and nghttp, h2load, curl, openssl and
# python3-h2 for /usr/bin/python3 (make deps installs them).  BUILD moves
# the build directory as for the rest of the repository (default: build).
# The servers it starts listen on 127.0.0.1:18080-18094 and 18443-18457
# (--asan: 18100-18104 and 18463-18467, and the HTTP/3 servers on TCP and
# UDP 18565-18569; the hostile group adds 100 to the h2c ports;
# INTEROP_PORT_SHIFT=N moves them all) and are stopped at the
# end, also on failure, Ctrl-C or timeout.
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

missing=()
for tool in nghttp h2load curl openssl ps timeout; do
    command -v "$tool" > /dev/null || missing+=("$tool")
done
"$python" -c 'import h2, hpack, hyperframe' 2> /dev/null \
    || missing+=("python3-h2 (for /usr/bin/python3)")
if [ "${#missing[@]}" -gt 0 ]; then
    echo "interop: missing ${missing[*]} (make deps installs them)" >&2
    exit 1
fi

# The suite takes about a minute; 15 minutes means something hangs.
# SIGTERM lets the harness stop its servers before it exits.
suite=run_interop
run() {
    (cd "$repo" && timeout --kill-after=30 900 \
        "$python" -m "interop.$suite" "$@")
}

if [ "${1:-}" != --asan ]; then
    run "$@"
    exit
fi

# The sanitizer build: every nginx process (master, workers, nginx -t)
# writes what ASan, UBSan and LeakSanitizer find to $reports/san.<pid>,
# and stops at the first ASan or UBSan error (UBSan findings of stock nginx
# code are suppressed by interop/ubsan.supp).  The servers are stopped
# gracefully, so LeakSanitizer runs at every worker's and master's exit
# with no connection left open.  Then sanitizer_reports.py shows every
# report and fails on any error and on any leak of a worker with a frame
# of the product (its docstring says why leaks are judged so).
reports="$build/interop/sanitizer"
rm -rf "$reports"
mkdir -p "$reports"
# exitcode=0: nginx -t exits with the leaks of its configuration (see
# sanitizer_reports.py), which would fail the harness's start of every
# server; the reports are judged, not the exit status.
export ASAN_OPTIONS="log_path=$reports/san:halt_on_error=1:detect_leaks=1:exitcode=0"
# UBSAN_HALT=0 lets a run go on past UBSan findings, to list them all
# (reviewing ubsan.supp); it still fails on them.
export UBSAN_OPTIONS="halt_on_error=${UBSAN_HALT:-1}:print_stacktrace=1:suppressions=$repo/interop/ubsan.supp"
# --proxy (anywhere after --asan) picks the reverse-proxy suite; the rest
# goes to the suite, whose --version names the logs to judge
args=(--asan)
for arg in "${@:2}"; do
    if [ "$arg" = --proxy ]; then
        suite=proxy_run
    else
        args+=("$arg")
    fi
done
version=1.26.3
for ((i = 1; i < ${#args[@]}; i++)); do
    [ "${args[i]}" != --version ] || version="${args[i + 1]:-}"
done
# a line whose source is absent (no ../shared/nginx): the suite says SKIP
# and starts no server, and there is nothing to judge
if ! (cd "$repo" && "$python" -c 'import sys
from interop import nginx_runner
sys.exit(nginx_runner.source_absent(sys.argv[1]))' "$version"); then
    run "${args[@]}"
    exit
fi
h3_logs=()
if [ "$suite" = proxy_run ]; then
    logs=("$build"/proxy-interop/"$version"-asan/{on,small,big}/logs/error.log)
else
    logs=("$build"/interop/"$version"-{on,small,off,nomod}/logs/error.log)
    # and those of the HTTP/3 servers, on the lines where the suite runs
    # them too (run_interop.py's ASAN_H3): the ones this run writes
    h3_logs=("$build"/interop/h3-"$version"-asan-{on,small,off,nomod}/logs/error.log)
fi
# every log judged is this run's
rm -f "${logs[@]}" "${h3_logs[@]}"
rc=0
run "${args[@]}" || rc=$?
for log in "${h3_logs[@]}"; do
    [ ! -f "$log" ] || logs+=("$log")
done
pymodule interop.sanitizer_reports "$reports" "${logs[@]}" || rc=1
exit "$rc"
