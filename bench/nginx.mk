# make bench: nginx with the hpack module against stock nginx, side by side
# (bench/nginx_bench.py, bench/README.md).  Included from the top-level
# Makefile.
#
# NGX_BENCH_PAIRS=N changes the number of pairs, NGX_BENCH_OUT=DIR the
# results directory, NGX_BENCH_ARGS passes anything else to the script.
# NGINX_VERSION=<line> benches that line's builds (make nginx-<line>) for
# make bench, bench-callgrind and bench-throughput, into
# bench/results/<date>-nginx-<line>/ (the proxy workload and README.md's
# headline stay 1.26.3's).

NGX_BENCH_NGINX  := nginx-$(or $(NGINX_VERSION),1.26)
# The HTTP/3 phase's line: the benched one when its hook patch hooks HTTP/3,
# else 1.31.4 (bench/nginx_h3.py checks the builds themselves); built when
# its source is there, else the phase is skipped.
NGX_BENCH_LINE   := $(or $(NGINX_VERSION),1.26.3)
NGX_H3_LINE      := $(if $(shell grep -s -l ngx_http_v3_qpack_hooks \
                    module/patches/nginx-$(NGX_BENCH_LINE)-hpack-hooks.patch),$(NGX_BENCH_LINE),1.31.4)

NGX_BENCH        := $(PYTHON) -m bench.nginx_bench
NGX_BENCH_PAIRS  ?=
NGX_BENCH_OUT    ?=
NGX_BENCH_ARGS   ?=

NGX_BENCH_FLAGS  := $(if $(filter 1,$(QUICK)),--quick,--update-readme) \
                    $(if $(NGINX_VERSION),--version $(NGINX_VERSION)) \
                    $(if $(NGX_BENCH_PAIRS),--pairs $(NGX_BENCH_PAIRS)) \
                    $(if $(NGX_BENCH_OUT),--out $(NGX_BENCH_OUT)) \
                    $(NGX_BENCH_ARGS)
NGX_BENCH_SHOWN  := make bench$(if $(filter 1,$(QUICK)), QUICK=1)$(if \
                    $(NGINX_VERSION), NGINX_VERSION=$(NGINX_VERSION))$(if \
                    $(NGX_BENCH_PAIRS), NGX_BENCH_PAIRS=$(NGX_BENCH_PAIRS))

.PHONY: bench bench-callgrind bench-memory bench-throughput bench-wire \
        bench-stock-cost bench-h3

# Every workload over h2c and TLS, 9 A/B pairs, callgrind, the report and
# plots in bench/results/<date>/ (about 19 minutes); QUICK=1: h2c, 2 pairs,
# few requests, 200 connections held open, into build/bench/nginx/quick/
# (about 2 minutes).  The script's last phase is the reverse-proxy workload
# (interop/proxy_bench.py), kept in the same report: req/s, worker CPU,
# header bytes per response, and instructions per request under callgrind.
## the module against stock nginx: h2load A/B pairs, callgrind, report (QUICK=1: smoke)
bench: deps $(NGX_BENCH_NGINX) $(H3CLIENT)
	@$(call nginx_if_present,$(NGX_H3_LINE))
	BUILD=$(BUILD) $(NGX_BENCH) $(NGX_BENCH_FLAGS) \
	    --command "$(NGX_BENCH_SHOWN)"

# octets per response (sections and encoder stream), instructions per
# request under callgrind, worker CPU per request and worker memory per
# connection over HTTP/3, driven by build/h3client; into
# bench/results/<date>-http3-nginx-<line>/ (QUICK=1: build/bench/nginx/quick/)
## the HTTP/3 phase only: h3client, stock against hpack_http3 on
bench-h3: deps $(H3CLIENT)
	@$(call nginx_if_present,$(NGX_H3_LINE))
	BUILD=$(BUILD) $(NGX_BENCH) --only h3 $(NGX_BENCH_FLAGS) \
	    --command "make bench-h3$(if $(filter 1,$(QUICK)), QUICK=1)"

## instructions per request only, module against stock
bench-callgrind: deps $(NGX_BENCH_NGINX)
	BUILD=$(BUILD) $(NGX_BENCH) --only callgrind $(NGX_BENCH_FLAGS) \
	    --command "make bench-callgrind"

## KiB of worker memory per connection held open, stock and module (table)
bench-memory: deps $(NGX_BENCH_NGINX)
	BUILD=$(BUILD) $(NGX_BENCH) --only memory $(NGX_BENCH_FLAGS) \
	    --command "make bench-memory"

## requests/s and header bytes only (h2load)
bench-throughput: deps $(NGX_BENCH_NGINX)
	BUILD=$(BUILD) $(NGX_BENCH) --only throughput $(NGX_BENCH_FLAGS) \
	    --command "make bench-throughput"

## the response blocks of a new connection and one warm block, no load
bench-wire: deps $(NGX_BENCH_NGINX)
	BUILD=$(BUILD) $(NGX_BENCH) --only wire $(NGX_BENCH_FLAGS) \
	    --command "make bench-wire"

# what the hook patch costs with the module absent or off (instructions per
# request against stock, under callgrind; fails above +100)
## instructions/request: stock against patched without the module, hpack off, on
bench-stock-cost: deps nginx-1.26
	BUILD=$(BUILD) bench/stock_cost.sh
