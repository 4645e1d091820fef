# HPACK for nginx: the codec, its tests, the nginx builds and the benchmarks.
# `make help` lists the targets.

SHELL      := /bin/bash
BUILD      ?= build
CXX        ?= g++
CC         ?= gcc
PYTHON     ?= /usr/bin/python3

OPT        ?= -O2
WARN       := -Wall -Wextra -Werror
# Functions start on a cache line (-falign-functions=64): a function's
# code then lines up the same whatever comes before it.  With GCC's 16,
# cold request decode took 0.25 to 0.28 of nghttp2's time as unrelated
# changes moved the code (BENCHMARKS.md, session 19).
CODEC_FLAGS := -std=c++17 $(OPT) -g $(WARN) -fPIC -fno-exceptions -fno-rtti \
               -fvisibility=hidden -falign-functions=64 -Icodec/include -Icodec/src
TEST_FLAGS := -std=c++17 $(OPT) -g -Wall -Wextra -Icodec/include -Icodec/src \
              -Icodec/tools
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer

CODEC_SRCS := $(sort $(wildcard codec/src/*.cc))
CODEC_HDRS := codec/include/hpack.h $(wildcard codec/src/*.h codec/src/*.inc)
CODEC_OBJS := $(CODEC_SRCS:codec/src/%.cc=$(BUILD)/codec/%.o)
CODEC_LIB  := $(BUILD)/codec/libhpack.a

TOOL_HDRS  := $(wildcard codec/tools/*.h)
# alloc_test.cc needs jemalloc as the process allocator: its own binary.
TEST_SRCS  := $(filter-out tests/alloc_test.cc,$(sort $(wildcard tests/*_test.cc)))
TEST_HDRS  := $(wildcard tests/*.h)
TEST_LIBS  := -lgtest -lgtest_main -lnghttp2 -lpthread

.PHONY: help run deps lib cli unit-tests unit-tests-asan alloc-tests test \
        test-codec check-tables check-clang nginx interop bench-codec bench clean

help:
	@echo "make run           build nginx 1.26.3 with the module, run conf/nginx.conf"
	@echo "make deps          install the Debian packages everything needs"
	@echo "make lib           build the codec ($(CODEC_LIB))"
	@echo "make cli           build the hpack command-line tool"
	@echo "make test          install deps, build, run every test (CI runs this)"
	@echo "make test-codec    codec unit tests only (normal, ASan/UBSan, jemalloc)"
	@echo "make check-tables  regenerate the Huffman tables and diff them"
	@echo "make check-clang   build the codec warning-free with clang++ too"
	@echo "make nginx         build stock and patched nginx + the module"
	@echo "make interop       tests against real HTTP/2 peers"
	@echo "make bench         the module against stock nginx: h2load A/B, callgrind, report (QUICK=1: smoke)"
	@echo "make bench-stock-cost  instructions/request: stock vs patched without module / hpack off"
	@echo "make bench-codec   codec benchmark vs libnghttp2 and nginx (QUICK=1: smoke)"
	@echo "make bench-codec-callgrind  instructions per operation, deterministic"
	@echo "make bench-huffman-evicted  Huffman encode of one value, warm and with the tables in L3"
	@echo "make interop-1.22  the interop suite against the nginx 1.22.1 builds"
	@echo "make interop-asan  the interop suite against nginx + module + codec under ASan/UBSan/LSan"
	@echo "make nginx-asan    build that sanitizer nginx (build/nginx-hpack-asan)"
	@echo "make interop-proxy nginx as a TLS reverse proxy: exact headers, secrets never indexed"
	@echo "make interop-browser headless Chromium through the proxy (SKIP when not installable)"
	@echo "make bench-proxy   the reverse-proxy workload, stock vs module"
	@echo "make fuzz-smoke    every libFuzzer target for 45 s (CI); make fuzz: 600 s each"
	@echo "make unit-tests-valgrind  the unit tests under valgrind memcheck"
	@echo "make nginx-run     run build/nginx-hpack with conf/nginx.conf"
	@echo "make clean         remove $(BUILD)/"

deps:
	@scripts/install-deps.sh

# The main job: nginx with the module on 127.0.0.1:8080 (h2c) and :8443 (TLS).
run: deps
	$(MAKE) --no-print-directory nginx-run

# ------------------------------------------------------------------ codec

lib: $(CODEC_LIB)

$(BUILD)/codec/%.o: codec/src/%.cc $(CODEC_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(CODEC_FLAGS) -c $< -o $@

$(CODEC_LIB): $(CODEC_OBJS)
	@rm -f $@
	ar rcs $@ $^

# --------------------------------------------------------------- tools

cli: $(BUILD)/hpack

$(BUILD)/hpack: codec/tools/hpack_cli.cc $(TOOL_HDRS) $(CODEC_LIB)
	$(CXX) $(TEST_FLAGS) $< $(CODEC_LIB) -o $@

# --------------------------------------------------------------- tests

$(BUILD)/tests/unit_tests: $(TEST_SRCS) $(TEST_HDRS) $(TOOL_HDRS) $(CODEC_SRCS) $(CODEC_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(TEST_FLAGS) $(TEST_SRCS) $(CODEC_SRCS) $(TEST_LIBS) -o $@

$(BUILD)/tests/unit_tests_asan: $(TEST_SRCS) $(TEST_HDRS) $(TOOL_HDRS) $(CODEC_SRCS) $(CODEC_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(TEST_FLAGS) $(SAN_FLAGS) $(TEST_SRCS) $(CODEC_SRCS) $(TEST_LIBS) -o $@

$(BUILD)/tests/alloc_tests: tests/alloc_test.cc $(TEST_HDRS) $(CODEC_LIB)
	@mkdir -p $(@D)
	$(CXX) $(TEST_FLAGS) $< $(CODEC_LIB) -lgtest -lgtest_main -ljemalloc -lpthread -o $@

unit-tests: $(BUILD)/tests/unit_tests
	$(BUILD)/tests/unit_tests

unit-tests-asan: $(BUILD)/tests/unit_tests_asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(BUILD)/tests/unit_tests_asan

alloc-tests: $(BUILD)/tests/alloc_tests
	$(BUILD)/tests/alloc_tests

check-tables:
	@mkdir -p $(BUILD)
	$(PYTHON) codec/gen/gen_huffman.py > $(BUILD)/huffman_tables.inc.new
	diff -u codec/src/huffman_tables.inc $(BUILD)/huffman_tables.inc.new
	@echo "check-tables: committed Huffman tables equal the generator output"

check-clang:
	@mkdir -p $(BUILD)/clang
	for f in $(CODEC_SRCS); do \
	    clang++ $(filter-out -fPIC,$(CODEC_FLAGS)) -c $$f -o $(BUILD)/clang/$$(basename $$f .cc).o || exit 1; \
	done
	@echo "check-clang: the codec builds warning-free with clang++"

test-codec: check-clang check-tables unit-tests unit-tests-asan alloc-tests

test: deps
	@BUILD=$(BUILD) scripts/run-tests.sh

clean:
	rm -rf $(BUILD)

include module/nginx.mk

include bench/bench.mk

include interop/interop.mk
include interop/proxy.mk
include bench/nginx.mk
include fuzz/fuzz.mk
