# The codec benchmark: ours against libnghttp2 and nginx's stock Huffman
# functions, and our QPACK codec against libnghttp3, in one binary and one
# run (bench/codec_bench*.cc; bench/README.md, "make bench-codec").
#
# Everything timed is built at the same optimization, $(OPT) (-O2): the codec
# (the plain library), the two nginx files compiled unmodified from the nginx
# tree against minimal shim headers, and the benchmark.  The nginx files are
# also built at -O, nginx's own default, under renamed symbols.
# Included from the top-level Makefile.

BENCH_DIR        := $(BUILD)/bench
BENCH_BIN        := $(BENCH_DIR)/codec_bench
BENCH_NGINX      ?= 1.26.3
BENCH_NGINX_PATH := $(BENCH_DIR)/nginx-$(BENCH_NGINX).path
BENCH_JSON       := $(BENCH_DIR)/codec.json
BENCH_CORPUS_JSON := $(BENCH_DIR)/codec-corpus.json
BENCH_QPACK_JSON := $(BENCH_DIR)/codec-qpack.json
BENCH_CG_DIR     := $(BENCH_DIR)/callgrind

# Seconds per repetition and repetitions; QUICK=1 for a smoke run.
BENCH_MIN_TIME   ?= 0.3
BENCH_REPS       ?= 3
ifeq ($(QUICK),1)
BENCH_MIN_TIME   := 0.005
BENCH_REPS       := 1
endif
# Seconds each of our cases alternates with its reference (codec_bench
# --paired), the run that judges the aims, in BENCH_PAIRED_RUNS processes:
# one process can come out apart from the others (its memory layout, or
# the machine for its whole run).
BENCH_PAIRED_SECONDS ?= 1
BENCH_PAIRED_RUNS    ?= 3
BENCH_PAIRED_GROUPS  ?= huffman,request,response,qpack
ifeq ($(QUICK),1)
BENCH_PAIRED_SECONDS := 0.02
BENCH_PAIRED_RUNS    := 1
endif
BENCH_PAIRED_JSON     = $(BENCH_DIR)/codec-paired.$(1).json
BENCH_PAIRED_ALL      = $(foreach i,$(shell seq $(BENCH_PAIRED_RUNS)),$(call BENCH_PAIRED_JSON,$(i)))
# Extra Google Benchmark flags, e.g. BENCH_ARGS=--benchmark_filter=huffman
BENCH_ARGS       ?=
# Callgrind: groups of cases and iterations per case.
BENCH_CG_GROUPS  ?= huffman,request,response,qpack
# Flags of codec_bench --qpack-out for make bench-qpack-octets (and the
# QPACK section of make bench-codec), read by the benchmark alone, e.g.
# QPACK_OCTETS_ARGS='--qpack-sides=ours --qpack-conns=fb-req'.
QPACK_OCTETS_ARGS ?=
# The command the QPACK section names (no single quote in the arguments).
BENCH_QPACK_COMMAND = make $@$(if $(filter 1,$(QUICK)), QUICK=1)$(if \
                      $(QPACK_OCTETS_ARGS), QPACK_OCTETS_ARGS="$(QPACK_OCTETS_ARGS)")
BENCH_CG_ITERS   ?= 20

BENCH_CXXFLAGS   := -std=c++17 $(OPT) -g -Wall -Wextra -Werror \
                    -Icodec/include -Icodec/src -Icodec/tools -Ibench/nginx_huff_shim
# nginx's own warning set (auto/cc/gcc) with our optimization.
BENCH_NGX_WARN   := -W -Wall -Wpointer-arith -Wno-unused-parameter -Werror
BENCH_NGX_CFLAGS := $(BENCH_NGX_WARN) -g -Ibench/nginx_huff_shim
BENCH_NGX_RENAME := -Dngx_http_huff_decode=ngx_http_huff_decode_O1 \
                    -Dngx_http_huff_encode=ngx_http_huff_encode_O1
BENCH_NGX_OBJS   := $(BENCH_DIR)/ngx_http_huff_decode.o \
                    $(BENCH_DIR)/ngx_http_huff_encode.o \
                    $(BENCH_DIR)/ngx_http_huff_decode_O1.o \
                    $(BENCH_DIR)/ngx_http_huff_encode_O1.o
BENCH_SHIM_HDRS  := $(wildcard bench/nginx_huff_shim/*.h)
# The benchmark: main and the drivers first, then the cases and adapters.
BENCH_OBJS       := $(patsubst bench/%.cc,$(BENCH_DIR)/%.o,bench/codec_bench.cc \
                    $(filter-out bench/codec_bench.cc,$(sort $(wildcard bench/codec_bench*.cc))))
BENCH_HDRS       := bench/codec_bench.h bench/codec_bench_qpack.h
# libnghttp2 and libnghttp3 linked statically, like the codec: no PLT calls
# on either side.  The references (nginx's functions, then all of
# libnghttp2 and libnghttp3) are linked
# first, behind bench/refs_start.c (page-aligned), so that their code lies
# at the same place in its pages whatever the codec and the benchmark's own
# code: otherwise a change of ours that moves them by a few octets changes
# their times by several percent.
BENCH_REFS       := $(BENCH_DIR)/refs_start.o $(BENCH_NGX_OBJS) \
                    -Wl,-Bstatic,--whole-archive -lnghttp2 -lnghttp3 \
                    -Wl,--no-whole-archive,-Bdynamic
BENCH_LIBS       := -lbenchmark -lpthread

.PHONY: bench-codec bench-corpus bench-qpack-octets bench-codec-callgrind \
        bench-huffman-evicted

# Which codec was measured: the commit and a hash of the sources built.
BENCH_CODEC_ID = $$(git rev-parse --short HEAD 2>/dev/null || echo none)+$$(cat \
                 $(CODEC_SRCS) $(CODEC_HDRS) | sha256sum | cut -c1-12)

# The nginx tree (fetched on first use); its path is kept for the rules below.
$(BENCH_NGINX_PATH): scripts/nginx-source.sh
	@mkdir -p $(@D)
	scripts/nginx-source.sh $(BENCH_NGINX) > $@.tmp
	@mv $@.tmp $@

$(BENCH_DIR)/ngx_http_huff_%_O1.o: $(BENCH_NGINX_PATH) $(BENCH_SHIM_HDRS)
	$(CC) -O $(BENCH_NGX_CFLAGS) $(BENCH_NGX_RENAME) \
	    -c "$$(cat $<)/src/http/ngx_http_huff_$*.c" -o $@

$(BENCH_DIR)/ngx_http_huff_%.o: $(BENCH_NGINX_PATH) $(BENCH_SHIM_HDRS)
	$(CC) $(OPT) $(BENCH_NGX_CFLAGS) \
	    -c "$$(cat $<)/src/http/ngx_http_huff_$*.c" -o $@

$(BENCH_OBJS): $(BENCH_DIR)/%.o: bench/%.cc $(BENCH_HDRS) $(CODEC_HDRS) $(TOOL_HDRS) $(BENCH_SHIM_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(BENCH_CXXFLAGS) -c $< -o $@

$(BENCH_DIR)/refs_start.o: bench/refs_start.c
	@mkdir -p $(@D)
	$(CC) -O2 -c $< -o $@

$(BENCH_BIN): $(BENCH_DIR)/refs_start.o $(BENCH_OBJS) $(BENCH_NGX_OBJS) $(CODEC_LIB)
	$(CXX) $(BENCH_REFS) $(BENCH_OBJS) $(CODEC_LIB) $(BENCH_LIBS) -o $@

# Google Benchmark (BENCH_REPS repetitions, medians), the paired slices
# that judge the aims, the corpus octets and the QPACK allocations and
# octets (untimed, seconds; the corpora skipped with a message without
# ../shared/data), then the report (about 3.5 minutes)
## the codec against libnghttp2, nginx and libnghttp3 (QUICK=1: one short smoke run)
bench-codec: $(BENCH_BIN)
	$(BENCH_BIN) --benchmark_min_time=$(BENCH_MIN_TIME) \
	    --benchmark_repetitions=$(BENCH_REPS) \
	    --benchmark_report_aggregates_only=true \
	    --benchmark_enable_random_interleaving=true \
	    --benchmark_out=$(BENCH_JSON) --benchmark_out_format=json \
	    --benchmark_context=codec_bench.codec=$(BENCH_CODEC_ID) \
	    $(BENCH_ARGS)
	@rm -f $(BENCH_DIR)/codec-paired.*.json
	for f in $(BENCH_PAIRED_ALL); do \
	    $(BENCH_BIN) --paired=$(BENCH_PAIRED_GROUPS) \
	        --paired-seconds=$(BENCH_PAIRED_SECONDS) \
	        --paired-out=$$f --paired-codec=$(BENCH_CODEC_ID) || exit 1; \
	done
	$(BENCH_BIN) --corpus-out=$(BENCH_CORPUS_JSON) \
	    --corpus-codec=$(BENCH_CODEC_ID)
	$(BENCH_BIN) --qpack-out=$(BENCH_QPACK_JSON) \
	    --corpus-codec=$(BENCH_CODEC_ID) $(QPACK_OCTETS_ARGS) \
	    --qpack-command='$(BENCH_QPACK_COMMAND)'
	@echo
	set -o pipefail; { $(PYTHON) -m bench.report_codec $(BENCH_JSON) \
	    && echo && $(PYTHON) -m bench.report_codec --paired $(BENCH_PAIRED_ALL) \
	    && echo && $(PYTHON) -m bench.report_codec --corpus $(BENCH_CORPUS_JSON) \
	    && echo && $(PYTHON) -m bench.report_codec --qpack $(BENCH_QPACK_JSON) \
	        --gbench=$(BENCH_JSON) --paired $(BENCH_PAIRED_ALL); } \
	    | tee $(BENCH_DIR)/codec-report.md

# The corpus octets alone, make bench-codec's last section, in seconds:
# what an indexing-policy change does to the octets on the wire, and what
# each table size buys for the memory it takes.
## octets on the wire of the corpus: ours, libnghttp2, the bound; ours against memory
bench-corpus: $(BENCH_BIN)
	$(BENCH_BIN) --corpus-out=$(BENCH_CORPUS_JSON) \
	    --corpus-codec=$(BENCH_CODEC_ID)
	@echo
	set -o pipefail; $(PYTHON) -m bench.report_codec --corpus $(BENCH_CORPUS_JSON) \
	    | tee $(BENCH_DIR)/codec-corpus.md

# The QPACK allocations per section and octets on the wire alone, make
# bench-codec's QPACK section without its times, in seconds: what an
# indexing-policy change of the QPACK encoder does to the octets.
## QPACK: allocations per section, octets on the wire of the corpora, ours and nghttp3
bench-qpack-octets: $(BENCH_BIN)
	$(BENCH_BIN) --qpack-out=$(BENCH_QPACK_JSON) \
	    --corpus-codec=$(BENCH_CODEC_ID) $(QPACK_OCTETS_ARGS) \
	    --qpack-command='$(BENCH_QPACK_COMMAND)'
	@echo
	set -o pipefail; $(PYTHON) -m bench.report_codec --qpack $(BENCH_QPACK_JSON) \
	    | tee $(BENCH_DIR)/codec-qpack.md

## instructions per codec operation under callgrind, deterministic
bench-codec-callgrind: $(BENCH_BIN)
	@rm -rf $(BENCH_CG_DIR) && mkdir -p $(BENCH_CG_DIR)
	valgrind --tool=callgrind --callgrind-out-file=$(BENCH_CG_DIR)/cg.out \
	    --compress-strings=no --compress-pos=no \
	    $(BENCH_BIN) --callgrind-driver=$(BENCH_CG_GROUPS) \
	    --callgrind-iters=$(BENCH_CG_ITERS) > $(BENCH_CG_DIR)/valgrind.log 2>&1 \
	    || { cat $(BENCH_CG_DIR)/valgrind.log; exit 1; }
	@echo
	set -o pipefail; $(PYTHON) -m bench.report_codec --callgrind \
	    $(BENCH_CG_DIR) --annotate --codec=$(BENCH_CODEC_ID) \
	    | tee $(BENCH_DIR)/codec-callgrind.md

# Huffman encode of single values with the tables out of L1/L2 (and warm).
$(BENCH_DIR)/huffman_evicted: bench/huffman_evicted.cc codec/include/hpack.h $(CODEC_LIB)
	@mkdir -p $(@D)
	$(CXX) $(BENCH_CXXFLAGS) $< $(CODEC_LIB) -o $@

## Huffman encode of one value, warm and with the tables in L3
bench-huffman-evicted: $(BENCH_DIR)/huffman_evicted
	$(BENCH_DIR)/huffman_evicted 0
	$(BENCH_DIR)/huffman_evicted 2048
