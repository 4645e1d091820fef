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
        bench-stock-cost

# Every workload over h2c and TLS, 9 A/B pairs, callgrind, the report and
# plots in bench/results/<date>/ (about 19 minutes); QUICK=1: h2c, 2 pairs,
# few requests, 200 connections held open, into build/bench/nginx/quick/
# (about 2 minutes).  The script's last phase is the reverse-proxy workload
# (interop/proxy_bench.py), kept in the same report: req/s, worker CPU,
# header bytes per response, and instructions per request under callgrind.
## the module against stock nginx: h2load A/B pairs, callgrind, report (QUICK=1: smoke)
bench: deps $(NGX_BENCH_NGINX)
	BUILD=$(BUILD) $(NGX_BENCH) $(NGX_BENCH_FLAGS) \
	    --command "$(NGX_BENCH_SHOWN)"

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
