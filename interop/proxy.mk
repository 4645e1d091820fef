# nginx as a reverse proxy with the module (conf/proxy.conf in front of the
# HTTP/1.1 origin interop/upstream.py), a real browser through it, and the
# proxy workload of the benchmark.  Included from the top-level Makefile.
#
# PROXY_ARGS passes options to interop/proxy_run.py (--only REGEX),
# PROXY_BENCH_ARGS to interop/proxy_bench.py (--pairs N, --duration S,
# --kind big; --help lists them), PROXY_STORIES_ARGS to
# interop/proxy_stories.py (--sizes 4096, --stories DIR).  Ports:
# 19600-19603 (origins), 19643-19646, 19653-19657 (19656-19657 TCP and
# UDP), 19663-19665, 19673-19676 (proxies), 127.0.0.1 only, each moved by
# INTEROP_PORT_SHIFT.

PROXY_ARGS       ?=
PROXY_BENCH_ARGS ?=
PROXY_BENCH_JSON ?= $(BUILD)/bench/proxy.json
PROXY_BENCH_FLAGS := --callgrind --json $(PROXY_BENCH_JSON) \
                     $(if $(filter 1,$(QUICK)),--quick) $(PROXY_BENCH_ARGS)
PROXY_STORIES_ARGS ?=
PROXY_STORIES_JSON ?= $(BUILD)/bench/proxy-stories.json

.PHONY: interop-proxy interop-proxy-asan interop-browser bench-proxy \
        bench-proxy-stories

# Timeouts as interop/run.sh's: SIGTERM first, the runners stop their
# servers.  3,000 responses per connection carry exactly the origin's
# headers, secrets never indexed, the same lists as stock (about a minute).
# NGINX_VERSION=<line>: that line's builds (make nginx-<line>).
## nginx as a TLS reverse proxy: nghttp, h2load, python3-h2 through it
interop-proxy: $(if $(NGINX_VERSION),lib,nginx-1.26)
	$(if $(NGINX_VERSION),@$(call nginx_if_present,$(NGINX_VERSION)))
	BUILD=$(BUILD) timeout --kill-after=30 600 \
	    $(PYTHON) -m interop.proxy_run $(PROXY_ARGS) \
	    $(if $(NGINX_VERSION),--version $(NGINX_VERSION))

# The same cases with the module's three proxies from the sanitizer build
# (make nginx-asan): fails on any sanitizer report and on any leak of the
# product (interop/run.sh --asan --proxy, as make interop-asan); on 1.26.3,
# or the line NGINX_VERSION names, skipped when its source is absent
## the reverse-proxy cases against nginx-asan: ASan, UBSan and LeakSanitizer
interop-proxy-asan:
	@$(call nginx_if_present,$(SAN_VERSION))
	@$(call nginx_if_present,$(SAN_VERSION),nginx-asan)
	BUILD=$(BUILD) interop/run.sh --asan --proxy --version $(SAN_VERSION) \
	    $(PROXY_ARGS)

# A 200-subresource page 3 times on one connection, over HTTP/2 (1.26.3)
# and then over HTTP/3 (1.31.4, its part skipped when that source is
# absent); installs chromium and playwright-core first
# (scripts/install-browser.sh), SKIP with the reason when that cannot be
# done.
## headless Chromium through the proxy, HTTP/2 and HTTP/3
interop-browser: nginx-1.26
	@$(call nginx_if_present,1.31.4)
	BUILD=$(BUILD) timeout --kill-after=30 900 \
	    $(PYTHON) -m interop.proxy_browser

# req/s, worker CPU and header bytes per response (medians of interleaved
# pairs), callgrind instructions per request; numbers in
# $(BUILD)/bench/proxy.json.  QUICK=1: 1 pair of 1 s, 300 requests.
## the reverse-proxy workload, stock against the module (QUICK=1: smoke)
bench-proxy: deps nginx-1.26
	BUILD=$(BUILD) timeout --kill-after=30 1800 \
	    $(PYTHON) -m interop.proxy_bench $(PROXY_BENCH_FLAGS)

# The 11 hpack-test-case response stories (3,035 responses of real sites)
# from the origin through stock and the module, one connection per story,
# at table sizes 4096, 16384 and 65536: header block octets per story and
# size, module/stock, module against a bound, the lists checked to be
# stock's (about 20 s); figures in $(BUILD)/bench/proxy-stories.json.
# Without ../shared/data/hpack-test-case it says so and succeeds.
## response header octets of real sites' stories through stock and the module
bench-proxy-stories: deps nginx-1.26
	BUILD=$(BUILD) timeout --kill-after=30 600 \
	    $(PYTHON) -m interop.proxy_stories --json $(PROXY_STORIES_JSON) \
	    $(PROXY_STORIES_ARGS)
