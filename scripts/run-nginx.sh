#!/usr/bin/env bash
# Runs one of the nginx builds on the local ports.
#
#   scripts/run-nginx.sh                  build/nginx-hpack, conf/nginx.conf,
#                                         foreground (Ctrl-C stops it)
#   scripts/run-nginx.sh --background     the same, as a daemon; prints its pid
#   scripts/run-nginx.sh --stop           stops the daemon started that way
#   scripts/run-nginx.sh --test           nginx -t only
#
# Options (before the action):
#   --stock            build/nginx-stock with conf/nginx-stock.conf
#                      (ports 8081 and 8444 instead of 8080 and 8443)
#   --version 1.22.1   the 1.22.1 builds (build/nginx-1.22.1-{hpack,stock});
#                      the configuration is rewritten to the 1.22 syntax
#                      ("listen ... http2") under build/run/
#   --prefix DIR       another build (DIR/sbin/nginx)
#   --conf FILE        another configuration
#
# The self-signed certificate for the TLS port is made on first use in
# build/tls/ (cert.pem, key.pem; ECDSA P-256, CN=localhost, SAN localhost
# and 127.0.0.1) by interop/nginx_runner.py, as for the tests.  Before
# nginx starts, the script says where it serves, where its logs are and
# how to stop it (on stderr).
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

variant=hpack
version=1.26.3
prefix=
conf=
action=foreground

while [ $# -gt 0 ]; do
    case "$1" in
        --stock)      variant=stock ;;
        --hpack)      variant=hpack ;;
        --version)    version="$2"; shift ;;
        --prefix)     prefix="$2"; shift ;;
        --conf)       conf="$2"; shift ;;
        --background) action=background ;;
        --foreground) action=foreground ;;
        --stop)       action=stop ;;
        --test)       action=test ;;
        -h|--help)    sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "run-nginx: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

prefix_given="$prefix" conf_given="$conf"
if [ -z "$prefix" ]; then
    case "$version" in
        1.26.3) prefix="$build/nginx-$variant" ;;
        *)      prefix="$build/nginx-$version-$variant" ;;
    esac
fi
prefix="$(absolute "$prefix")"

if [ -z "$conf" ]; then
    if [ "$variant" = stock ]; then
        conf="$repo/conf/nginx-stock.conf"
    else
        conf="$repo/conf/nginx.conf"
    fi
fi
conf="$(absolute "$conf")"

# the options that name this server again (for --stop)
options=()
[ "$variant" = hpack ] || options+=(--stock)
[ "$version" = 1.26.3 ] || options+=(--version "$version")
[ -z "$prefix_given" ] || options+=(--prefix "$prefix")
[ -z "$conf_given" ] || options+=(--conf "$conf")

nginx="$prefix/sbin/nginx"
if [ ! -x "$nginx" ]; then
    echo "run-nginx: $nginx not built (make nginx)" >&2
    exit 1
fi

tls="$(BUILD="$build" pymodule interop.nginx_runner certificate)"

# The configuration as nginx sees it: as is for 1.26, or rewritten for the
# 1.22 syntax (no "http2 on;"), with the certificate path made absolute.
case "$version" in
    1.22.*)
        run="$build/run/nginx-$version-$variant"
        mkdir -p "$run"
        sed -e '/^ *http2 *on;/d' \
            -e 's/^\( *listen  *127\.0\.0\.1:[0-9]*\)\( ssl\)\{0,1\};/\1\2 http2;/' \
            -e "s#\.\./build/tls/#$tls/#" \
            "$conf" > "$run/nginx.conf"
        conf="$run/nginx.conf"
        ;;
esac

mkdir -p "$prefix/logs"
pidfile="$prefix/logs/nginx.pid"

# ports 1: the ports of the listen lines with "ssl" (TLS); ports 0: without
ports() {
    awk -v tls="$1" '$1 == "listen" {
        port = $2; sub(/^.*:/, "", port); sub(/;$/, "", port)
        if (($0 ~ /[ \t]ssl[ \t;]/) == tls) print port }' "$conf"
}

# prefix-relative paths of the configuration made absolute
in_prefix() {
    case "$1" in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac
}

# where nginx serves, its logs and the hpack variables, and how to stop it
announce() {
    local p log format stop
    for p in $(ports 0); do
        echo "run-nginx: h2c  curl --http2-prior-knowledge http://127.0.0.1:$p/"
    done
    for p in $(ports 1); do
        echo "run-nginx: TLS  curl --http2 -k https://127.0.0.1:$p/" \
             "(self-signed: $tls/cert.pem)"
    done
    log="$(sed -n 's/^ *error_log  *\([^ ;]*\).*/\1/p' "$conf" | head -1)"
    echo "run-nginx: error log   $(in_prefix "${log:-logs/error.log}")"
    read -r log format < <(sed -n \
        's/^ *access_log  *\([^ ;]*\)  *\([^ ;]*\);.*/\1 \2/p' "$conf" | head -1)
    if [ -n "${log:-}" ]; then
        echo "run-nginx: access log  $(in_prefix "$log")" \
             "(log_format $format of $conf)"
    fi
    if grep -qF "\$hpack_" "$conf"; then
        echo "run-nginx: the \$hpack_* variables in it: docs/DIRECTIVES.md"
    fi
    stop="scripts/run-nginx.sh ${options[*]:+${options[*]} }--stop"
    [ "$build" = "$repo/build" ] || stop="BUILD=$build $stop"
    case "$1" in
        foreground) echo "run-nginx: stop: Ctrl-C, or $stop" ;;
        *)          echo "run-nginx: stop: $stop" ;;
    esac
}

case "$action" in
    test)
        exec "$nginx" -p "$prefix/" -c "$conf" -t
        ;;
    foreground)
        announce foreground >&2
        exec "$nginx" -p "$prefix/" -c "$conf" -g 'daemon off;'
        ;;
    background)
        announce background >&2
        "$nginx" -p "$prefix/" -c "$conf"
        for _ in $(seq 50); do
            [ -s "$pidfile" ] && break
            sleep 0.1
        done
        cat "$pidfile"
        ;;
    stop)
        if [ -s "$pidfile" ]; then
            "$nginx" -p "$prefix/" -c "$conf" -s quit
            for _ in $(seq 50); do
                [ -e "$pidfile" ] || break
                sleep 0.1
            done
        fi
        ;;
esac
