#!/usr/bin/env bash
# Builds and installs one nginx: stock (unpatched) or hpack (patched, with
# the module as a dynamic module).
#
#   scripts/build-nginx.sh [--asan [--fail-alloc]] VERSION stock|hpack PREFIX
#   scripts/build-nginx.sh 1.26.3 stock build/nginx-stock
#   scripts/build-nginx.sh 1.26.3 hpack build/nginx-hpack
#   scripts/build-nginx.sh --asan 1.26.3 hpack build/nginx-hpack-asan
#
# Both variants use the same configure arguments and compiler flags
# (NGINX_CC_OPT, default "-O2 -g") and modules (HTTP/2, and HTTP/3 on the
# lines that have it), so they can be compared.  The source comes
# from scripts/nginx-source.sh (or NGINX_SRC=<dir>); each variant builds in
# its own copy under build/work/, which is kept: a re-run only recompiles
# what changed.  Extra configure arguments: NGINX_CONFIGURE_EXTRA.
#
# --asan adds AddressSanitizer and UndefinedBehaviorSanitizer to the same
# flags (nginx, the module and the codec library it links), and
# -DNGX_DEBUG_PALLOC=1: every pool allocation is then a malloc of its own,
# so an overflow inside pool memory (the codec's tables and the module's
# buffers live in the connection and request pools) is seen by ASan
# instead of landing in the next allocation of the same pool block.  It
# builds in build/work/nginx-VERSION-VARIANT-asan, with clang (ASAN_CC):
# gcc 12 keeps ASan and UBSan in two runtimes (libasan.so, libubsan.so)
# that disagree on where reports go (UBSan's always reach stderr, which
# nginx points at its error log; ASan's follow UBSAN_OPTIONS's log_path),
# clang has one runtime that writes both to ASAN_OPTIONS's log_path.
# UBSan is recoverable in nginx and the module (a report that
# interop/ubsan.supp does not suppress stops the process when
# UBSAN_OPTIONS has halt_on_error=1); the codec library is built with the
# Makefile's SAN_FLAGS, where every UBSan report is fatal.
#
# --fail-alloc (after --asan) adds -DNGX_HTTP_HPACK_FAIL_ALLOC=1: the
# module's test build whose Nth allocation for a connection fails
# (module/ngx_http_hpack_module.h, interop/alloc_failure_sweep.py), in
# build/work/nginx-VERSION-VARIANT-asan-fail-alloc.
set -euo pipefail

usage() {
    echo "usage: build-nginx.sh [--asan [--fail-alloc]] VERSION stock|hpack PREFIX" >&2
    exit 2
}

asan=
if [ "${1:-}" = --asan ]; then
    asan=1
    shift
fi
fail_alloc=
if [ -n "$asan" ] && [ "${1:-}" = --fail-alloc ]; then
    fail_alloc=1
    shift
fi
[ $# -eq 3 ] || usage
version="$1"
variant="$2"
prefix="$3"

case "$variant" in stock|hpack) ;; *) usage ;; esac

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
prefix="$(absolute "$prefix")"

cc_opt="${NGINX_CC_OPT:--O2 -g}"
ld_opt=
if [ -n "$asan" ]; then
    cc_opt="$cc_opt -fsanitize=address,undefined -fno-omit-frame-pointer"
    cc_opt="$cc_opt -DNGX_DEBUG_PALLOC=1"
    # nginx reads and writes frame integers as unaligned 16- and 32-bit
    # words on x86 (NGX_HAVE_NONALIGNED), which UBSan's alignment check
    # reports on every frame; 0 selects nginx's own byte-wise path, so the
    # check stays on for everything else, the module and the patch included
    cc_opt="$cc_opt -DNGX_HAVE_NONALIGNED=0"
    # the binary carries the sanitizer runtime the module resolves against;
    # its C++ part too (the codec's UBSan checks call into it).  The module
    # is linked -z nodelete: nginx dlclose()s it when a worker destroys its
    # cycle, before LeakSanitizer runs at exit, and leak stacks through an
    # unloaded object cannot be symbolized (nor attributed to the module)
    ld_opt="-fsanitize=address,undefined -fsanitize-link-c++-runtime -lstdc++"
    ld_opt="$ld_opt -Wl,-z,nodelete"
fi
[ -z "$fail_alloc" ] || cc_opt="$cc_opt -DNGX_HTTP_HPACK_FAIL_ALLOC=1"
jobs="${JOBS:-$(nproc)}"
patch_file="$repo/module/patches/nginx-$version-hpack-hooks.patch"

src="$("$repo/scripts/nginx-source.sh" "$version")"

work="$build/work/nginx-$version-$variant${asan:+-asan}${fail_alloc:+-fail-alloc}"
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
# HTTP/3 on every line that has it (1.25 and later), stock and patched
# alike; on Debian 12's OpenSSL 3.0 nginx uses its OpenSSL compatibility
# layer (no 0-RTT)
case "$version" in
    1.22.*) ;;
    *) args+=(--with-http_v3_module) ;;
esac
[ -z "$ld_opt" ] || args+=(--with-ld-opt="$ld_opt" --with-cc="${ASAN_CC:-clang}")
addon="$repo"
if [ "$variant" = hpack ] && [ -n "$asan" ]; then
    # The module's config links $ngx_addon_dir/build/codec/libhpack.a and
    # has it built by "make -C $ngx_addon_dir lib".  The sanitized library
    # is $build/codec-asan/libhpack.a (make lib-asan): the addon directory
    # given to configure is a shim whose sources are the repository's and
    # whose build/codec is that library's directory.
    addon="$build/work/hpack-asan-addon"
    mkdir -p "$addon/build" "$build/codec-asan"
    for f in config config.make codec module; do
        ln -sfn "$repo/$f" "$addon/$f"
    done
    ln -sfn "$build/codec-asan" "$addon/build/codec"
    printf '%s\n' \
        "# Written by scripts/build-nginx.sh --asan: the module's codec" \
        "# library, built with the sanitizers into $build/codec-asan/." \
        "lib:" \
        "	\$(MAKE) -C $repo BUILD=$build ASAN_CXX=${ASAN_CXX:-clang++} lib-asan" > "$addon/Makefile"
fi
if [ "$variant" = hpack ]; then
    args+=(--add-dynamic-module="$addon")
fi
# shellcheck disable=SC2206
args+=(${NGINX_CONFIGURE_EXTRA:-})

# the module's config lists its sources: a change to it reconfigures
configured="configure ${args[*]}"
[ "$variant" = stock ] || configured="$configured config=$(sha256sum < "$repo/config" | cut -c1-16)"
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
    so="$prefix/modules/ngx_http_hpack_module.so"
    ls "$so" >&2
    # nginx loads modules with RTLD_GLOBAL: of the module's own symbols and
    # the codec's, only ngx_http_hpack_module may be exported (config,
    # ngx_http_hpack_module.h)
    leaked=$(nm -D --defined-only "$so" | awk '{print $NF}' \
        | grep -E '^(hpack_|ngx_http_hpack_)' | grep -vx ngx_http_hpack_module || true)
    if [ -n "$leaked" ]; then
        echo "build-nginx: $so exports symbols it must keep hidden:" $leaked >&2
        exit 1
    fi
    # stock's members where stock has them (scripts/check-layout.py), against
    # the stock build of the line when there is one
    stock_work="$build/work/nginx-$version-stock"
    if [ -z "$asan$fail_alloc" ] && [ -f "$stock_work/objs/ngx_auto_config.h" ]; then
        "$python" "$repo/scripts/check-layout.py" "$stock_work" "$work"
    fi
fi
