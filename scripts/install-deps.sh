#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the benchmarks need.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail

packages=(
    build-essential g++ clang libclang-rt-14-dev make pkg-config dpkg-dev
    libgtest-dev libbenchmark-dev libjemalloc-dev
    libnghttp2-dev libnghttp3-dev nghttp2-client curl
    ngtcp2-client libngtcp2-dev libngtcp2-crypto-gnutls-dev
    python3 python3-h2
    libpcre2-dev zlib1g-dev libssl-dev openssl
    valgrind python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
