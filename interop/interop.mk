# The interop suite: the nginx builds against real HTTP/2 peers (nghttp,
# curl, h2load, python3-h2).  Included from the top-level Makefile.
# INTEROP_ARGS passes options to interop/run.sh, e.g.
# make interop INTEROP_ARGS='--only malformed'.
#
# Each target builds (or brings up to date) the nginx pair it tests first.
# interop/README.md says what every test proves.

INTEROP_ARGS ?=
ALLOC_SWEEP_ARGS ?=

.PHONY: interop interop-1.22 interop-1.28 interop-1.30 interop-1.31 interop-asan \
        interop-h3 alloc-failure-sweep

## nginx 1.26.3 against nghttp, curl, h2load, python3-h2, every case (a minute)
interop: nginx-1.26
	BUILD=$(BUILD) interop/run.sh $(INTEROP_ARGS)

## nginx 1.22.1: clients, python3-h2, malformed, hostile, differential, 103, status
interop-1.22: nginx-1.22
	BUILD=$(BUILD) interop/run.sh --version 1.22.1 $(INTEROP_ARGS)

# The lines whose source comes from ../shared/nginx (or NGINX_SRC): when it
# is absent, the build step says so and the suite reports every server SKIP.
## nginx 1.28.3: the core clients, the differential, Early Hints and status tests
interop-1.28:
	@$(call nginx_if_present,1.28.3)
	BUILD=$(BUILD) interop/run.sh --version 1.28.3 $(INTEROP_ARGS)

## nginx 1.30.4 (stable): every case, as 1.26.3
interop-1.30:
	@$(call nginx_if_present,1.30.4)
	BUILD=$(BUILD) interop/run.sh --version 1.30.4 $(INTEROP_ARGS)

## nginx 1.31.4 (mainline): the core clients, the differential, 103 and status tests
interop-1.31:
	@$(call nginx_if_present,1.31.4)
	BUILD=$(BUILD) interop/run.sh --version 1.31.4 $(INTEROP_ARGS)

# HTTP/3 (interop/run_h3.py): gtlsclient against "hpack_http3 on", off,
# the patched binary without the module and stock, on 1.31.4 or the line
# NGINX_VERSION names (1.30.4)
H3_VERSION := $(or $(NGINX_VERSION),1.31.4)
## HTTP/3 with gtlsclient: every field exact, stock's octets when off
interop-h3:
	@$(call nginx_if_present,$(H3_VERSION))
	BUILD=$(BUILD) $(PYTHON) -m interop.run_h3 --version $(H3_VERSION) \
	    $(INTEROP_ARGS)

# Every case of the line but the memory one; fails on any sanitizer report
# and on any leak of the product (interop/README.md).  Stock stays the
# reference: the line's unsanitized stock build.  On 1.26.3, or on the line
# NGINX_VERSION names (make interop-asan NGINX_VERSION=1.31.4), skipped
# when that line's source is absent
## the suite against nginx-asan: ASan, UBSan and LeakSanitizer
interop-asan:
	@$(call nginx_if_present,$(SAN_VERSION))
	@$(call nginx_if_present,$(SAN_VERSION),nginx-asan)
	BUILD=$(BUILD) interop/run.sh --asan --version $(SAN_VERSION) \
	    $(INTEROP_ARGS)

# Fails each allocation of the module and the codec for a connection's
# first requests in turn, under ASan and LeakSanitizer, plain and with
# hpack_status's counting allocator (interop/README.md); on nginx 1.26.3,
# or NGINX_VERSION's line (1.30.4: with 103 Early Hints and max_headers),
# skipped when that line's source is absent
## every allocation of a connection's first requests failed in turn (ASan)
alloc-failure-sweep:
	@$(call nginx_if_present,$(SAN_VERSION),nginx-asan-fail-alloc)
	BUILD=$(BUILD) $(PYTHON) -m interop.alloc_failure_sweep \
	    --version $(SAN_VERSION) $(ALLOC_SWEEP_ARGS)
