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
# build/tls/ (cert.pem, key.pem; CN=localhost, SAN localhost and 127.0.0.1).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-build}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac

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
        -h|--help)    sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "run-nginx: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -z "$prefix" ]; then
    case "$version" in
        1.26.3) prefix="$build/nginx-$variant" ;;
        *)      prefix="$build/nginx-$version-$variant" ;;
    esac
fi
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

if [ -z "$conf" ]; then
    if [ "$variant" = stock ]; then
        conf="$repo/conf/nginx-stock.conf"
    else
        conf="$repo/conf/nginx.conf"
    fi
fi
case "$conf" in /*) ;; *) conf="$(pwd)/$conf" ;; esac

nginx="$prefix/sbin/nginx"
if [ ! -x "$nginx" ]; then
    echo "run-nginx: $nginx not built (make nginx)" >&2
    exit 1
fi

# the certificate
tls="$build/tls"
if [ ! -f "$tls/cert.pem" ] || [ ! -f "$tls/key.pem" ]; then
    mkdir -p "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 \
        -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null
    chmod 644 "$tls/cert.pem"
    echo "run-nginx: made $tls/cert.pem" >&2
fi

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

case "$action" in
    test)
        exec "$nginx" -p "$prefix/" -c "$conf" -t
        ;;
    foreground)
        exec "$nginx" -p "$prefix/" -c "$conf" -g 'daemon off;'
        ;;
    background)
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
