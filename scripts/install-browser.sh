#!/usr/bin/env bash
# Installs what the real-browser test (interop/proxy_browser.py) needs:
# Debian's chromium (/usr/bin/chromium) with apt, and playwright-core (the
# driver library only, no browser download) with npm into $BUILD/node/.
#
#   scripts/install-browser.sh          installs what is missing, then says
#                                       "install-browser: ready: ..."
#
# Idempotent and quiet when everything is there.  Kept apart from
# install-deps.sh because chromium is large (about 300 MB installed) and only
# this one test needs it.  On failure it says what failed on stderr, in one
# line starting "install-browser: cannot", and exits 1: the browser test
# turns that line into its SKIP reason.
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
node_dir="$build/node"
# A version known to drive Debian 12's chromium (CDP only, no bundled browser).
playwright_version="${PLAYWRIGHT_CORE_VERSION:-1.65.1}"

fail() {
    echo "install-browser: cannot $*" >&2
    exit 1
}

# ---------------------------------------------------------------- chromium
apt_log="$build/install-browser-apt.log"
npm_log="$build/install-browser-npm.log"
mkdir -p "$build"

if [ ! -x /usr/bin/chromium ]; then
    [ "$(id -u)" -eq 0 ] \
        || fail "install chromium: not root (apt-get install chromium as root)"
    command -v apt-get > /dev/null \
        || fail "install chromium: no apt-get on this machine"
    echo "install-browser: installing chromium with apt (large: a few minutes)"
    export DEBIAN_FRONTEND=noninteractive
    # another install may hold dpkg's lock: wait for it rather than fail
    apt_opts=(-o DPkg::Lock::Timeout=600 -q)
    apt-get "${apt_opts[@]}" update -qq > "$apt_log" 2>&1 \
        || fail "install chromium: apt-get update failed" \
                "($(tail -1 "$apt_log"); log in $apt_log)"
    apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends \
            chromium fonts-liberation >> "$apt_log" 2>&1 \
        || fail "install chromium: apt-get install chromium failed" \
                "($(tail -1 "$apt_log"); log in $apt_log)"
    [ -x /usr/bin/chromium ] \
        || fail "install chromium: apt succeeded, /usr/bin/chromium is missing"
fi
chromium_version="$(/usr/bin/chromium --version 2> /dev/null || true)"
[ -n "$chromium_version" ] || fail "run /usr/bin/chromium --version"

# ----------------------------------------------------------- playwright-core
for tool in node npm; do
    command -v "$tool" > /dev/null \
        || fail "find $tool (node 18+ and npm run playwright-core)"
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] \
    || fail "use node $(node --version): playwright-core needs node 18+"

installed() {
    node -p "require('$node_dir/node_modules/playwright-core/package.json')\
.version" 2> /dev/null || true
}

have="$(installed)"
if [ "$have" != "$playwright_version" ]; then
    echo "install-browser: installing playwright-core@$playwright_version" \
         "with npm into $node_dir"
    mkdir -p "$node_dir"
    [ -f "$node_dir/package.json" ] \
        || echo '{"name": "hpack-browser-test", "private": true}' \
                > "$node_dir/package.json"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$node_dir" \
            --no-audit --no-fund --loglevel=error \
            "playwright-core@$playwright_version" > "$npm_log" 2>&1 \
        || fail "install playwright-core@$playwright_version with npm" \
                "($(grep -m1 -i err "$npm_log" || tail -1 "$npm_log");" \
                "log in $npm_log)"
    have="$(installed)"
    [ "$have" = "$playwright_version" ] \
        || fail "load playwright-core from $node_dir after npm install"
fi

echo "install-browser: ready: $chromium_version," \
     "playwright-core $have in $node_dir"
