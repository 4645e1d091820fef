#!/usr/bin/env bash
# What the hook patch costs when the module is absent or switched off:
# instructions per request, under callgrind, of
#
#   stock      build/nginx-stock/sbin/nginx (unpatched)
#   no-module  build/nginx-hpack/sbin/nginx without load_module
#   hpack-off  build/nginx-hpack/sbin/nginx with the module and "hpack off"
#   hpack-on   the same with "hpack on" (for information: the module's own
#              cost or saving on this small request, not checked)
#   hpack-status  "hpack on" and a location with hpack_status (never
#              requested): what keeping its counters costs a request
#
# One worker in the foreground (daemon off, master_process off) serves
# GET /tiny (return 200 "ok\n") to h2load on one connection, with a real
# browser's user-agent, accept and accept-language (keepalive_requests
# raised so that all of them share the connection).  Each build runs twice,
# with 100 and with 1,100 requests; the difference divided by 1,000 is the
# cost of a request net of start-up and shutdown.  ROUNDS (3) repeats the
# whole measurement and the check uses the median: the Huffman-coded date
# can still make one run differ from the next by an instruction or so.
#
# The check counts the instructions executed in nginx's own code and the
# module's (the objects sbin/nginx and ngx_http_hpack_module.so, from
# callgrind's ob= records: bench/nginx_callgrind.py's --objects), not those
# in libc and the dynamic loader: glibc's malloc costs a request more or
# less depending on the heap's layout, which the module's configuration-time
# allocations and even the length of the checkout's path shift (moving the
# same binaries from /work/main to /check/work/main made hpack-off cost 33
# more instructions of _int_malloc per request, and nothing else).  A change
# in how often the host calls libc still shows, as the calls themselves.
# The whole-process figure is printed beside it for information.  Both
# leave out ngx_time_update() (callgrind's --toggle-collect switches
# collection off inside it): it formats nginx's time strings once a second,
# so its share of a request is the run's length in seconds, not code.
#
#   bench/stock_cost.sh [--max-extra N]      (default 100)
#
# Exits 1 when the no-module or hpack-off median exceeds stock's by more
# than N instructions per request, or when
# hpack-status's exceeds hpack-on's by 1% or more.
# BUILD (build) locates the binaries; OUT (BUILD/bench/stock-cost) keeps
# the profiles.
set -euo pipefail
shopt -s inherit_errexit

max_extra=100
if [ "${1:-}" = --max-extra ]; then
    max_extra="${2:?--max-extra needs a number}"
fi

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
out="${OUT:-$build/bench/stock-cost}"
rounds="${ROUNDS:-3}"
stock="$build/nginx-stock/sbin/nginx"
hpack="$build/nginx-hpack/sbin/nginx"
module="$build/nginx-hpack/modules/ngx_http_hpack_module.so"

for f in "$stock" "$hpack" "$module"; do
    if [ ! -e "$f" ]; then
        echo "stock-cost: $f is missing (make nginx-1.26)" >&2
        exit 2
    fi
done
command -v valgrind >/dev/null && command -v h2load >/dev/null || {
    echo "stock-cost: needs valgrind and h2load (make deps)" >&2
    exit 2
}

port="$(pymodule interop.nginx_runner free-port)"

ua='Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'
accept='text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

# Graceful stop, the signal repeated once a second: nginx looks at its quit
# flag after an event loop pass, and a signal that lands while it is busy
# (a long window under valgrind) waits for the next event, which an idle
# nginx without timers never gets; the next signal interrupts epoll_wait().
stop() {
    local pid="$1"
    for _ in $(seq 1 30); do
        kill -QUIT "$pid" 2>/dev/null || break
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$pid" 2>/dev/null || break 2
            sleep 0.1
        done
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" || true
}

# run NAME BINARY LOAD_MODULE(0|1) HPACK(on|off|none|status) REQUESTS
#   -> "OWN TOTAL": Ir in nginx and the module, Ir of the whole process
run() {
    local name="$1" bin="$2" load="$3" hp="$4" n="$5"
    local d="$out/$name-$n"
    rm -rf "$d"
    mkdir -p "$d/logs"
    {
        echo "error_log $d/logs/error.log warn; pid $d/nginx.pid;"
        [ "$load" = 1 ] && echo "load_module $module;"
        echo "events { worker_connections 64; }"
        # keepalive_requests: the default 1000 would end the connection
        echo "http { access_log off; keepalive_requests 10000;"
        echo "  server { listen 127.0.0.1:$port; http2 on;"
        case "$hp" in
            on|off) echo "    hpack $hp;" ;;
            status) echo "    hpack on;"
                    echo "    location = /hpack_status { hpack_status; }" ;;
        esac
        echo '    location /tiny { return 200 "ok\n"; } } }'
    } > "$d/nginx.conf"
    valgrind --tool=callgrind --callgrind-out-file="$d/callgrind.out" \
        --toggle-collect=ngx_time_update --collect-atstart=yes \
        "$bin" -p "$d" -c "$d/nginx.conf" \
        -g "daemon off; master_process off; worker_processes 1;" \
        > "$d/valgrind.log" 2>&1 &
    local vg=$! up=0
    for _ in $(seq 1 100); do
        if curl -s -o /dev/null --http2-prior-knowledge \
                "http://127.0.0.1:$port/tiny"; then
            up=1
            break
        fi
        sleep 0.2
    done
    if [ "$up" != 1 ]; then
        kill "$vg" 2>/dev/null || true
        echo "stock-cost: $name did not start; $d/valgrind.log:" >&2
        tail -5 "$d/valgrind.log" >&2
        exit 2
    fi
    h2load -n "$n" -c 1 -m 1 -H "user-agent: $ua" -H "accept: $accept" \
        -H 'accept-language: en-US,en;q=0.9' \
        "http://127.0.0.1:$port/tiny" > "$d/h2load.log" 2>&1
    grep -q "$n succeeded" "$d/h2load.log" || {
        echo "stock-cost: h2load against $name failed:" >&2
        tail -5 "$d/h2load.log" >&2
        stop "$vg"
        exit 2
    }
    stop "$vg"
    local total own
    total="$(sed -n 's/^summary: //p' "$d/callgrind.out" 2>/dev/null)"
    if [ -z "$total" ]; then
        echo "stock-cost: $name wrote no profile ($d)" >&2
        exit 2
    fi
    # Self cost of the nginx binary's and the module's objects, read from
    # callgrind's ob= records (callgrind_annotate leaves some inlined code
    # without its object, and how much varied between rounds).
    own="$(pymodule bench.nginx_callgrind --objects "$(absolute "$d")/callgrind.out" \
           | awk '$2 ~ /(\/sbin\/nginx|\/ngx_http_hpack_module\.so)$/ {
                      s += $1 }
                  END { print s + 0 }')"
    if [ "$own" -le 0 ]; then
        echo "stock-cost: no nginx code in $name's profile ($d)" >&2
        exit 2
    fi
    echo "$own $total"
}

# per_request NAME BINARY LOAD HPACK -> "OWN TOTAL" per request
per_request() {
    local a b
    a=($(run "$@" 100))
    b=($(run "$@" 1100))
    echo "$(( (b[0] - a[0]) / 1000 )) $(( (b[1] - a[1]) / 1000 ))"
}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

declare -A got all
measure() {
    local b="$1" r
    shift
    r=($(per_request "$b" "$@"))
    got[$b]+="${r[0]} "
    all[$b]+="${r[1]} "
}
for r in $(seq 1 "$rounds"); do
    measure stock "$stock" 0 none
    measure no-module "$hpack" 0 none
    measure hpack-off "$hpack" 1 off
    measure hpack-on "$hpack" 1 on
    measure hpack-status "$hpack" 1 status
done

base="$(tr ' ' '\n' <<< "${got[stock]}" | grep . | median)"
abase="$(tr ' ' '\n' <<< "${all[stock]}" | grep . | median)"
status=0
echo "instructions per request in nginx and the module (checked), and in the"
echo "whole process with libc and the loader (for information):"
printf '%-12s %-20s %7s %8s   %-20s %7s %8s\n' build "nginx+module" median \
    "vs stock" "whole process" median "vs stock"
for b in stock no-module hpack-off hpack-on hpack-status; do
    m="$(tr ' ' '\n' <<< "${got[$b]}" | grep . | median)"
    a="$(tr ' ' '\n' <<< "${all[$b]}" | grep . | median)"
    printf '%-12s %-20s %7d %+8d   %-20s %7d %+8d\n' "$b" "${got[$b]}" "$m" \
        $(( m - base )) "${all[$b]}" "$a" $(( a - abase ))
    if [ "$b" = hpack-on ]; then
        on="$m"
    fi
    if [ "$b" = hpack-status ] && [ $(( (m - on) * 100 )) -ge "$on" ]; then
        echo "stock-cost: hpack_status costs $(( m - on )) instructions per" \
             "request, 1% of hpack-on's $on or more" >&2
        status=1
    fi
    if { [ "$b" = no-module ] || [ "$b" = hpack-off ]; } \
       && [ $(( m - base )) -gt "$max_extra" ]; then
        echo "stock-cost: $b costs $(( m - base )) instructions per request" \
             "more than stock (allowed: $max_extra)" >&2
        status=1
    fi
done
exit "$status"
