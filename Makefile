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
# code then lines up the same whatever comes before it (docs/DESIGN.md,
# "Build": "`-falign-functions=64`").
CODEC_FLAGS := -std=c++17 -g $(WARN) -fPIC -fno-exceptions -fno-rtti \
               -fvisibility=hidden -falign-functions=64 -Icodec/include -Icodec/src
TEST_FLAGS := -std=c++17 $(OPT) -g -Wall -Wextra -Icodec/include -Icodec/src \
              -Icodec/tools
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer
# The sanitizer builds use clang: one runtime for ASan and UBSan, the one
# the sanitizer build of nginx loads (scripts/build-nginx.sh --asan).
CLANG_CXX  ?= clang++
ASAN_CXX   ?= $(CLANG_CXX)
FUZZ_CXX   ?= $(CLANG_CXX)
FUZZ_OPT   ?= -O1

CODEC_SRCS := $(sort $(wildcard codec/src/*.cc))
CODEC_HDRS := codec/include/hpack.h codec/include/qpack.h $(wildcard codec/src/*.h codec/src/*.inc)

TOOL_HDRS  := $(wildcard codec/tools/*.h)
# alloc_test.cc needs jemalloc as the process allocator: its own binary.
TEST_SRCS  := $(filter-out tests/alloc_test.cc,$(sort $(wildcard tests/*_test.cc)))
TEST_HDRS  := $(wildcard tests/*.h)
TEST_LIBS  := -lgtest -lgtest_main -lnghttp2 -lnghttp3 -lpthread

.DEFAULT_GOAL := help

.PHONY: help run deps lib lib-asan lib-clang lib-fuzz cli unit-tests \
        unit-tests-asan alloc-tests test test-codec check-tables check-clang \
        clean FORCE

# Each target that `make help` lists has a one-line `## ` comment right
# above its rule; the list is read from the makefiles, rules and all.
## every target with what it does (this list)
help:
	@awk 'FNR == 1 { printf "%s%s\n", NR == 1 ? "" : "\n", FILENAME } \
	    /^## / { doc = substr($$0, 4); next } \
	    doc != "" { \
	        if ($$0 !~ /^[^#[:space:]][^=]*[^:=]:([^=]|$$)/) { \
	            printf "help: %s:%d: no rule under its ## line\n", FILENAME, FNR; \
	            exit 1 } \
	        split($$0, part, ":"); t = part[1]; \
	        if (t ~ /[$$]/) { t = part[2]; gsub(/%/, "<target>", t) } \
	        gsub(/^ +| +$$/, "", t); \
	        printf "  make %-22s %s\n", t, doc } \
	    { doc = "" }' $(MAKEFILE_LIST)

## install the Debian packages everything needs
deps:
	@scripts/install-deps.sh

## build nginx 1.26.3 with the module and run it (h2c :8080, TLS :8443)
run: deps
	$(MAKE) --no-print-directory nginx-run

# ------------------------------------------------------------------ codec

# codec_variant NAME,COMPILER,FLAGS: the one rule that builds the codec,
# into $(BUILD)/codec-NAME/libhpack.a ($(BUILD)/codec/ for plain, the
# library nginx's build links: config), by COMPILER with $(CODEC_FLAGS)
# FLAGS.  CODEC_LIB_NAME names the library.  The objects are rebuilt when
# the command changes (its copy in the directory's file "command").
define codec_variant
CODEC_DIR_$(1) := $(BUILD)/codec$(if $(filter plain,$(1)),,-$(1))
CODEC_LIB_$(1) := $$(CODEC_DIR_$(1))/libhpack.a
CODEC_CMD_$(1) := $(2) $$(CODEC_FLAGS) $(3)

$$(CODEC_DIR_$(1))/command: FORCE
	@mkdir -p $$(@D)
	@echo '$$(CODEC_CMD_$(1))' | cmp -s - $$@ || echo '$$(CODEC_CMD_$(1))' > $$@

$$(CODEC_DIR_$(1))/%.o: codec/src/%.cc $$(CODEC_HDRS) $$(CODEC_DIR_$(1))/command
	$$(CODEC_CMD_$(1)) -c $$< -o $$@

$$(CODEC_LIB_$(1)): $$(CODEC_SRCS:codec/src/%.cc=$$(CODEC_DIR_$(1))/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
endef

# plain: the library of nginx's build, the tools, the unit tests and the
# benchmarks; asan: nginx-asan's and unit-tests-asan's, every UBSan report
# fatal; clang: check-clang; fuzz: the libFuzzer targets', with coverage.
$(eval $(call codec_variant,plain,$(CXX),$(OPT)))
$(eval $(call codec_variant,asan,$(ASAN_CXX),$(OPT) $(SAN_FLAGS)))
$(eval $(call codec_variant,clang,$(CLANG_CXX),$(OPT)))
$(eval $(call codec_variant,fuzz,$(FUZZ_CXX),$(FUZZ_OPT) $(SAN_FLAGS) -fsanitize=fuzzer-no-link))

CODEC_LIB  := $(CODEC_LIB_plain)

## build the codec (build/codec/libhpack.a)
lib: $(CODEC_LIB)

## the codec with ASan and UBSan, by clang++ (build/codec-asan/libhpack.a)
lib-asan: $(CODEC_LIB_asan)

## the codec by clang++ (build/codec-clang/libhpack.a)
lib-clang: $(CODEC_LIB_clang)

## the codec for the fuzz targets: sanitizers and coverage (build/codec-fuzz/)
lib-fuzz: $(CODEC_LIB_fuzz)

FORCE:

# --------------------------------------------------------------- tools

## build the hpack command-line tool (build/hpack)
cli: $(BUILD)/hpack

$(BUILD)/hpack: codec/tools/hpack_cli.cc $(TOOL_HDRS) $(CODEC_LIB)
	$(CXX) $(TEST_FLAGS) $< $(CODEC_LIB) -o $@

# --------------------------------------------------------------- tests

# The tests link the library as it is built (its flags, its hidden
# symbols resolved statically); the ASan suite links the asan variant, by
# the same compiler.
TEST_DEPS  := $(TEST_SRCS) $(TEST_HDRS) $(TOOL_HDRS) $(CODEC_HDRS)

$(BUILD)/tests/unit_tests: $(TEST_DEPS) $(CODEC_LIB)
	@mkdir -p $(@D)
	$(CXX) $(TEST_FLAGS) $(TEST_SRCS) $(CODEC_LIB) $(TEST_LIBS) -o $@

$(BUILD)/tests/unit_tests_asan: $(TEST_DEPS) $(CODEC_LIB_asan)
	@mkdir -p $(@D)
	$(ASAN_CXX) $(TEST_FLAGS) $(SAN_FLAGS) $(TEST_SRCS) $(CODEC_LIB_asan) $(TEST_LIBS) -o $@

$(BUILD)/tests/alloc_tests: tests/alloc_test.cc $(TEST_HDRS) $(CODEC_LIB)
	@mkdir -p $(@D)
	$(CXX) $(TEST_FLAGS) $< $(CODEC_LIB) -lgtest -lgtest_main -ljemalloc -lpthread -o $@

## the codec unit tests (GoogleTest)
unit-tests: $(BUILD)/tests/unit_tests
	$(BUILD)/tests/unit_tests

## the unit tests and the codec under ASan, UBSan and LeakSanitizer (clang++)
unit-tests-asan: $(BUILD)/tests/unit_tests_asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(BUILD)/tests/unit_tests_asan

## zero allocations per block in steady state (jemalloc's counters)
alloc-tests: $(BUILD)/tests/alloc_tests
	$(BUILD)/tests/alloc_tests

## regenerate the Huffman tables and diff them with the committed ones
check-tables:
	@mkdir -p $(BUILD)
	$(PYTHON) codec/gen/gen_huffman.py > $(BUILD)/huffman_tables.inc.new
	diff -u codec/src/huffman_tables.inc $(BUILD)/huffman_tables.inc.new
	@echo "check-tables: committed Huffman tables equal the generator output"

## build the codec warning-free with clang++ too (lib-clang)
check-clang: $(CODEC_LIB_clang)
	@echo "check-clang: the codec builds warning-free with clang++"

## the codec's tests only: check-clang, check-tables, the three unit suites
test-codec: check-clang check-tables unit-tests unit-tests-asan alloc-tests

## install deps, build, run every test (CI runs this; logs in build/test-logs/)
test: deps
	@BUILD=$(BUILD) scripts/run-tests.sh

## remove build/
clean:
	rm -rf $(BUILD)

include module/nginx.mk
include interop/interop.mk
include interop/proxy.mk
include fuzz/fuzz.mk
include bench/bench.mk
include bench/nginx.mk
