# The interop suite: the nginx builds against real HTTP/2 peers (nghttp,
# curl, h2load, python3-h2).  Included from the top-level Makefile.
#
#   make interop          nginx 1.26.3, every case (about a minute)
#   make interop-1.22     nginx 1.22.1: clients, python3-h2, malformed blocks
#   make interop INTEROP_ARGS='--only malformed'
#
# Each target builds (or brings up to date) the nginx pair it tests first.
# interop/README.md says what every test proves.

INTEROP_ARGS ?=

.PHONY: interop interop-1.22 interop-help

interop: nginx-1.26
	BUILD=$(BUILD) interop/run.sh $(INTEROP_ARGS)

interop-1.22: nginx-1.22
	BUILD=$(BUILD) interop/run.sh --version 1.22.1 $(INTEROP_ARGS)

interop-help:
	@echo "make interop       the nginx 1.26.3 builds against nghttp, curl, h2load, python3-h2"
	@echo "make interop-1.22  the nginx 1.22.1 builds: clients, python3-h2, malformed blocks"
