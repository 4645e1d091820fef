#!/usr/bin/env bash
# Runs the interop suite (interop/run_interop.py) once its tools are there.
#
#   interop/run.sh                      nginx 1.26.3, every case
#   interop/run.sh --version 1.22.1     nginx 1.22.1: cases 1, 2 and 5
#   interop/run.sh --only REGEX         only the tests whose names match
#
# Needs the nginx builds (make nginx), and nghttp, h2load, curl, openssl and
# python3-h2 for /usr/bin/python3 (make deps installs them).  BUILD moves
# the build directory as for the rest of the repository (default: build).
# The servers it starts listen on 127.0.0.1:18080-18094 and 18443-18457
# (the hostile group adds 18180-18194; INTEROP_PORT_SHIFT=N moves them all)
# and are stopped at the end, also on failure, Ctrl-C or timeout.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

missing=()
for tool in nghttp h2load curl openssl ps timeout; do
    command -v "$tool" > /dev/null || missing+=("$tool")
done
/usr/bin/python3 -c 'import h2, hpack, hyperframe' 2> /dev/null \
    || missing+=("python3-h2 (for /usr/bin/python3)")
if [ "${#missing[@]}" -gt 0 ]; then
    echo "interop: missing ${missing[*]} (make deps installs them)" >&2
    exit 1
fi

# The suite takes about a minute; 15 minutes means something hangs.
# SIGTERM lets the harness stop its servers before it exits.
exec timeout --kill-after=30 900 \
    /usr/bin/python3 "$repo/interop/run_interop.py" "$@"
