# shellcheck shell=bash
# Sourced by the repository's shell scripts for what they all start with:
#
#   repo    the repository's root (this file's parent directory's parent)
#   build   $BUILD (default build) as an absolute path; a relative BUILD is
#           taken from the repository's root, as the Makefile does
#   python  /usr/bin/python3: Debian's, where make deps installs python3-h2
#           and matplotlib
#
#   absolute PATH   prints PATH made absolute against the working directory
#   pymodule M ARG...  runs the Python module M of interop/ or bench/
#                   (interop.nginx_runner, ...) as "$python -m M ARG..." from
#                   the repository's root, where the packages are found; a
#                   relative path among the ARGs is then taken from the root
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-build}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
# shellcheck disable=SC2034
python=/usr/bin/python3

absolute() {
    case "$1" in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac
}

pymodule() {
    (cd "$repo" && "$python" -m "$@")
}
