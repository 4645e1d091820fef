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
        interop-h3 h3client alloc-failure-sweep

## nginx 1.26.3 against nghttp, curl, h2load, python3-h2, every case (a minute)
interop: nginx-1.26
	BUILD=$(BUILD) interop/run.sh $(INTEROP_ARGS)

## nginx 1.22.1: clients, python3-h2, malformed, hostile, differential, 103, status
interop-1.22: nginx-1.22
	BUILD=$(BUILD) interop/run.sh --version 1.22.1 $(INTEROP_ARGS)

# The lines whose source comes from ../shared/nginx (or NGINX_SRC): when it
# is absent, the build step says so and the suite reports one SKIP.
## nginx 1.28.3: as 1.22.1, clients, python3-h2, malformed, hostile, differential, 103, status
interop-1.28:
	@$(call nginx_if_present,1.28.3)
	BUILD=$(BUILD) interop/run.sh --version 1.28.3 $(INTEROP_ARGS)

## nginx 1.30.4 (stable): every case, as 1.26.3
interop-1.30:
	@$(call nginx_if_present,1.30.4)
	BUILD=$(BUILD) interop/run.sh --version 1.30.4 $(INTEROP_ARGS)

## nginx 1.31.4 (mainline): as 1.22.1, clients, python3-h2, malformed, hostile, differential, 103, status
interop-1.31:
	@$(call nginx_if_present,1.31.4)
	BUILD=$(BUILD) interop/run.sh --version 1.31.4 $(INTEROP_ARGS)

# The HTTP/3 test client of interop/run_h3_hostile.py: QUIC by ngtcp2,
# nghttp3's QPACK encoder and decoder, its own HTTP/3 framing
H3CLIENT := $(BUILD)/h3client
H3CLIENT_PKGS := libngtcp2_crypto_gnutls libngtcp2 libnghttp3 gnutls

## the HTTP/3 test client that sends chosen QPACK (build/h3client)
h3client: $(H3CLIENT)

$(H3CLIENT): interop/h3client/h3client.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -Wno-unused-parameter $< -o $@ \
	    $$(pkg-config --cflags --libs $(H3CLIENT_PKGS))

# HTTP/3 (interop/run_h3.py): gtlsclient against "hpack_http3 on", off,
# the patched binary without the module and stock; then
# interop/run_h3_hostile.py: h3client's hostile QPACK and the differential
# against "hpack_http3 on" and stock.  Every line with HTTP/3 in turn
# (1.26.3, 1.28.3, 1.30.4, 1.31.4; the builds of nginx-lines, brought up
# to date), or the line NGINX_VERSION names; fails if any run does, and
# ends with the count line of them all (for the stage of make test)
H3_LINES := $(or $(NGINX_VERSION),$(filter-out 1.22.%,$(NGINX_LINES)))
## HTTP/3 on every line with it: gtlsclient's fields exact, stock's octets when off, hostile QPACK, the differential
interop-h3: $(H3CLIENT)
	@for v in $(H3_LINES); do $(call nginx_if_present,$$v) || exit 1; done
	@rc=0; log=$(BUILD)/interop/h3-runs.log; mkdir -p $(BUILD)/interop; \
	: > $$log; for v in $(H3_LINES); do \
	    BUILD=$(BUILD) $(PYTHON) -m interop.run_h3 --version $$v \
	        $(INTEROP_ARGS) 2>&1 | tee -a $$log; \
	    [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	    BUILD=$(BUILD) H3CLIENT=$(H3CLIENT) $(PYTHON) \
	        -m interop.run_h3_hostile --version $$v $(INTEROP_ARGS) 2>&1 \
	        | tee -a $$log; \
	    [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	done; \
	awk '/^[0-9]+ passed, [0-9]+ failed/ { p += $$1; f += $$3; s += $$5 } \
	    END { printf "%d passed, %d failed, %d skipped\n", p, f, s }' $$log; \
	exit $$rc

# Every case of the line but the memory one (on 1.30.4 and 1.31.4 with the
# HTTP/3 cases of run_h3.py); fails on any sanitizer report and on any
# leak of the product (interop/README.md).  Stock stays the reference: the
# line's unsanitized stock build.  On 1.26.3, or on the line
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
# or NGINX_VERSION's line (1.30.4: with 103 Early Hints and max_headers,
# and a third sweep over HTTP/3), skipped when that line's source is absent
## every allocation of a connection's first requests failed in turn (ASan)
alloc-failure-sweep:
	@$(call nginx_if_present,$(SAN_VERSION),nginx-asan-fail-alloc)
	BUILD=$(BUILD) $(PYTHON) -m interop.alloc_failure_sweep \
	    --version $(SAN_VERSION) $(ALLOC_SWEEP_ARGS)
