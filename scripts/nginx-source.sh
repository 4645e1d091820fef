#!/usr/bin/env bash
# Obtains an unpacked nginx source tree and prints its directory.
#
#   scripts/nginx-source.sh 1.26.3        -> build/src/nginx-1.26.3
#   scripts/nginx-source.sh 1.22.1        -> build/src/nginx-1.22.1
#   scripts/nginx-source.sh 1.30.4        -> build/src/nginx-1.30.4
#
# 1.26.3 and 1.22.1 come from Debian's orig tarballs: 1.26.3 from the trixie
# source package, 1.22.1 from bookworm.  When apt has no deb-src entry for
# those suites, one is written (/etc/apt/sources.list.d/hpack-nginx-src.sources)
# from the URIs of the machine's existing Debian entries.  1.28.3, 1.30.4 and
# 1.31.4 come from ../shared/nginx beside the repository (nginx-VERSION.tar.gz,
# checked against its SHA256SUMS); without that folder the script exits 77,
# "skip".  The tree is cached under build/src, so a second run does nothing.
#
# NGINX_SRC=<dir> skips all of this and prints <dir> when it holds VERSION.
# BUILD=<dir> moves the cache (default: build, relative to the repository).
set -euo pipefail

version="${1:?usage: nginx-source.sh VERSION}"

if [ -n "${NGINX_SRC:-}" ]; then
    if [ ! -f "$NGINX_SRC/src/http/v2/ngx_http_v2.c" ]; then
        echo "nginx-source: NGINX_SRC=$NGINX_SRC is not an nginx source tree" >&2
        exit 1
    fi
    # NGINX_SRC serves the version it holds; others are fetched as usual
    # (make nginx builds two versions).
    if grep -q "define NGINX_VERSION *\"$version\"" "$NGINX_SRC/src/core/nginx.h"
    then
        (cd "$NGINX_SRC" && pwd)
        exit 0
    fi
    echo "nginx-source: NGINX_SRC=$NGINX_SRC is not nginx $version;" \
         "fetching $version" >&2
fi

case "$version" in
    1.26.3) suite=trixie ;;
    1.22.1) suite=bookworm ;;
    1.28.3|1.30.4|1.31.4) suite= ;;
    *)
        echo "nginx-source: nginx $version is not a supported line" >&2
        exit 1 ;;
esac

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cache="$build/src"
tree="$cache/nginx-$version"
tarball="$cache/nginx_$version.orig.tar.gz"

if [ -f "$tree/src/http/v2/ngx_http_v2.c" ]; then
    echo "$tree"
    exit 0
fi

mkdir -p "$cache"

if [ -z "$suite" ]; then
    shared="$repo/../shared/nginx"
    if [ ! -f "$shared/nginx-$version.tar.gz" ]; then
        echo "nginx-source: nginx $version: no $shared/nginx-$version.tar.gz;" \
             "skipping (NGINX_SRC=<tree> builds it from your own tree)" >&2
        exit 77
    fi
    if ! (cd "$shared" && grep " nginx-$version.tar.gz\$" SHA256SUMS \
              | sha256sum -c --quiet -) >&2; then
        echo "nginx-source: $shared/nginx-$version.tar.gz does not match" \
             "$shared/SHA256SUMS" >&2
        exit 1
    fi
    tarball="$shared/nginx-$version.tar.gz"
fi

has_deb_src() {
    # deb822 files and one-line lists alike: a deb-src entry naming $1.
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
             /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        case "$f" in
            *.sources)
                awk -v s="$1" '
                    BEGIN { RS = ""; FS = "\n" }
                    /(^|\n)Types:[^\n]*deb-src/ && \
                    /(^|\n)Enabled: *no/ == 0 {
                        for (i = 1; i <= NF; i++)
                            if ($i ~ /^Suites:/ && (" " $i " ") ~ (" " s " "))
                                found = 1
                    }
                    END { exit !found }' "$f" && return 0 ;;
            *)
                grep -Eq "^[[:space:]]*deb-src[[:space:]].*[[:space:]]$1[[:space:]]" \
                    "$f" && return 0 ;;
        esac
    done
    return 1
}

debian_uris() {
    # The URIs of the existing Debian "deb" entries (not -security ones).
    {
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] || continue
            awk 'BEGIN { RS = ""; FS = "\n" }
                 /(^|\n)Suites:[^\n]*(bookworm|trixie|stable|testing)/ {
                     for (i = 1; i <= NF; i++)
                         if ($i ~ /^URIs:/) {
                             sub(/^URIs:[ \t]*/, "", $i); print $i
                         }
                 }' "$f"
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] || continue
            awk '$1 == "deb" && $0 ~ /debian/ {
                     for (i = 2; i <= NF; i++)
                         if ($i ~ /^[a-z]+:\/\//) { print $i; break }
                 }' "$f"
        done
    } | tr ' ' '\n' | grep -v -- '-security' | grep -E '^[a-z]+://' | sort -u
}

if [ -n "$suite" ] && ! has_deb_src "$suite"; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "nginx-source: no deb-src entry for $suite and not root;" \
             "add one or set NGINX_SRC" >&2
        exit 1
    fi
    uris="$(debian_uris | tr '\n' ' ' | sed 's/ $//')"
    if [ -z "$uris" ]; then
        uris="http://deb.debian.org/debian"
    fi
    list=/etc/apt/sources.list.d/hpack-nginx-src.sources
    echo "nginx-source: adding deb-src entries ($uris) to $list" >&2
    cat > "$list" <<EOF
# Written by scripts/nginx-source.sh: the nginx source packages of the
# HPACK module's host builds (1.26.3 from trixie, 1.22.1 from bookworm).
Types: deb-src
URIs: $uris
Suites: trixie bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq >&2
fi

if [ -n "$suite" ] && [ ! -f "$tarball" ]; then
    echo "nginx-source: fetching nginx/$suite source (orig tarball)" >&2
    tmp="$(mktemp -d "$cache/fetch.XXXXXX")"
    chmod 755 "$tmp"     # apt downloads as _apt when it can
    # The .dsc or the Debian tarball may be missing from a mirror or
    # snapshot; the orig tarball is all we need, so a partial download is
    # fine as long as it is there.
    (cd "$tmp" && apt-get source --tar-only --download-only "nginx/$suite" >&2) \
        || true
    if [ ! -f "$tmp/nginx_$version.orig.tar.gz" ]; then
        found="$(ls "$tmp" 2>/dev/null | tr '\n' ' ')"
        rm -rf "$tmp"
        echo "nginx-source: nginx/$suite did not give" \
             "nginx_$version.orig.tar.gz (got: ${found:-nothing})" >&2
        exit 1
    fi
    mv "$tmp/nginx_$version.orig.tar.gz" "$tarball"
    rm -rf "$tmp"
fi

tmp="$(mktemp -d "$cache/unpack.XXXXXX")"
tar -xzf "$tarball" -C "$tmp"
if [ ! -f "$tmp/nginx-$version/src/http/v2/ngx_http_v2.c" ]; then
    rm -rf "$tmp"
    echo "nginx-source: $tarball does not hold nginx-$version/" >&2
    exit 1
fi
rm -rf "$tree"
mv "$tmp/nginx-$version" "$tree"
rm -rf "$tmp"
echo "$tree"
