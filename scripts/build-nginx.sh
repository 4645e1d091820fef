#!/usr/bin/env bash
# Builds and installs one nginx: stock (unpatched) or hpack (patched, with
# the module as a dynamic module).
#
#   scripts/build-nginx.sh VERSION stock|hpack PREFIX
#   scripts/build-nginx.sh 1.26.3 stock build/nginx-stock
#   scripts/build-nginx.sh 1.26.3 hpack build/nginx-hpack
#
# Both variants use the same configure arguments and compiler flags
# (NGINX_CC_OPT, default "-O2 -g"), so they can be compared.  The source comes
# from scripts/nginx-source.sh (or NGINX_SRC=<dir>); each variant builds in
# its own copy under build/work/, which is kept: a re-run only recompiles
# what changed.  Extra configure arguments: NGINX_CONFIGURE_EXTRA.
set -euo pipefail

usage() {
    echo "usage: build-nginx.sh VERSION stock|hpack PREFIX" >&2
    exit 2
}

[ $# -eq 3 ] || usage
version="$1"
variant="$2"
prefix="$3"

case "$variant" in stock|hpack) ;; *) usage ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-build}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

cc_opt="${NGINX_CC_OPT:--O2 -g}"
jobs="${JOBS:-$(nproc)}"
patch_file="$repo/module/patches/nginx-$version-hpack-hooks.patch"

src="$("$repo/scripts/nginx-source.sh" "$version")"

work="$build/work/nginx-$version-$variant"
stamp="$work/.hpack-build-stamp"

# What the work tree was made from: the source tree, and the patch.
want="src=$src"
if [ "$variant" = hpack ]; then
    if [ ! -f "$patch_file" ]; then
        echo "build-nginx: no hook patch for nginx $version ($patch_file)" >&2
        exit 1
    fi
    want="$want patch=$(sha256sum < "$patch_file" | cut -c1-16)"
fi

if [ ! -f "$stamp" ] || [ "$(sed -n 1p "$stamp")" != "$want" ]; then
    echo "build-nginx: preparing $work" >&2
    rm -rf "$work"
    mkdir -p "$(dirname "$work")"
    cp -a "$src" "$work"
    if [ "$variant" = hpack ]; then
        (cd "$work" && patch -p1 --no-backup-if-mismatch -s < "$patch_file")
    fi
    echo "$want" > "$stamp"
fi

args=(
    --prefix="$prefix"
    --with-compat
    --with-http_v2_module
    --with-http_ssl_module
    --with-http_stub_status_module
    --with-cc-opt="$cc_opt"
)
if [ "$variant" = hpack ]; then
    args+=(--add-dynamic-module="$repo")
fi
# shellcheck disable=SC2206
args+=(${NGINX_CONFIGURE_EXTRA:-})

configured="configure ${args[*]}"
if [ ! -f "$work/objs/Makefile" ] || [ "$(sed -n 2p "$stamp")" != "$configured" ]; then
    echo "build-nginx: configuring nginx $version ($variant)" >&2
    (cd "$work" && ./configure "${args[@]}" > objs.configure.log 2>&1) || {
        tail -30 "$work/objs.configure.log" >&2
        echo "build-nginx: configure failed, see $work/objs.configure.log" >&2
        exit 1
    }
    printf '%s\n%s\n' "$want" "$configured" > "$stamp"
fi

echo "build-nginx: building nginx $version ($variant) into $prefix" >&2
make -C "$work" -j"$jobs" >&2
make -C "$work" install >/dev/null

"$prefix/sbin/nginx" -V 2>&1 | sed -n 1p >&2
if [ "$variant" = hpack ]; then
    ls "$prefix/modules/ngx_http_hpack_module.so" >&2
fi
