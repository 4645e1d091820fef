# The interop suite: the nginx builds against real HTTP/2 peers (nghttp,
# curl, h2load, python3-h2).  Included from the top-level Makefile.
#
#   make interop          nginx 1.26.3, every case (about a minute)
#   make interop-1.22     nginx 1.22.1: clients, python3-h2, malformed blocks
#   make interop INTEROP_ARGS='--only malformed'
#   make interop-asan     nginx 1.26.3 + the module with ASan, UBSan and
#                         LeakSanitizer (make nginx-asan): every case but the
#                         memory one; fails on any sanitizer report and on
#                         any leak of the product (interop/README.md)
#
# Each target builds (or brings up to date) the nginx pair it tests first.
# interop/README.md says what every test proves.

INTEROP_ARGS ?=

.PHONY: interop interop-1.22 interop-asan interop-help

interop: nginx-1.26
	BUILD=$(BUILD) interop/run.sh $(INTEROP_ARGS)

interop-1.22: nginx-1.22
	BUILD=$(BUILD) interop/run.sh --version 1.22.1 $(INTEROP_ARGS)

# stock stays the reference: the unsanitized build/nginx-stock
interop-asan: nginx-1.26 nginx-asan
	BUILD=$(BUILD) interop/run.sh --asan $(INTEROP_ARGS)

interop-help:
	@echo "make interop       the nginx 1.26.3 builds against nghttp, curl, h2load, python3-h2"
	@echo "make interop-1.22  the nginx 1.22.1 builds: clients, python3-h2, malformed blocks"
	@echo "make interop-asan  the suite against nginx + module built with ASan/UBSan/LSan"
