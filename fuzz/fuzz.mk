# Hostile input and faults: the libFuzzer targets (fuzz/README.md) and the
# unit tests under valgrind.  Included from the top-level Makefile.
#
# The targets are built with $(FUZZ_CXX) and -fsanitize=fuzzer,address,undefined
# and link the codec's fuzz variant (lib-fuzz: the same sanitizers and
# coverage instrumentation).  Corpora live in $(BUILD)/fuzz/corpus/<target>/
# (seeds, then whatever the runs add), crash inputs in
# $(BUILD)/fuzz/artifacts/<target>/, logs in $(BUILD)/fuzz/logs/.  Parallel
# runs: make -j2 fuzz-smoke.

FUZZ_DIR        := $(BUILD)/fuzz
FUZZ_TARGETS    := decoder_fuzz roundtrip_fuzz nghttp2_diff_fuzz huffman_fuzz \
                   qpack_decoder_fuzz qpack_nghttp3_diff_fuzz qpack_roundtrip_fuzz
FUZZ_BINS       := $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))
FUZZ_SECONDS    ?= 600
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_RSS_MB     ?= 2048
FUZZ_TIMEOUT    ?= 10
# Extra libFuzzer flags, e.g. FUZZ_ARGS=-jobs=2
FUZZ_ARGS       ?=

# Scripts of several blocks need room, and so do long Huffman strings.
FUZZ_MAX_LEN_decoder_fuzz      := 8192
FUZZ_MAX_LEN_nghttp2_diff_fuzz := 8192
FUZZ_MAX_LEN_roundtrip_fuzz    := 4096
FUZZ_MAX_LEN_huffman_fuzz      := 4096
FUZZ_MAX_LEN_qpack_decoder_fuzz := 8192
FUZZ_MAX_LEN_qpack_nghttp3_diff_fuzz := 8192
FUZZ_MAX_LEN_qpack_roundtrip_fuzz := 4096

FUZZ_CXXFLAGS   := -std=c++17 $(FUZZ_OPT) -g $(WARN) -Icodec/include -Icodec/src \
                   -Icodec/tools -Ifuzz
FUZZ_HDRS       := $(wildcard fuzz/*.h) $(TOOL_HDRS)
# The reference libraries the differential and round-trip targets link.
FUZZ_LIBS       := -lnghttp2 -lnghttp3

VALGRIND        ?= valgrind
VALGRIND_FLAGS  := -q --error-exitcode=1 --leak-check=full \
                   --errors-for-leak-kinds=definite,indirect \
                   --suppressions=fuzz/valgrind.supp
# e.g. VALGRIND_GTEST_ARGS=--gtest_filter=-Corpus*
VALGRIND_GTEST_ARGS ?=

.PHONY: fuzz fuzz-smoke fuzz-seeds fuzz-build unit-tests-valgrind \
        $(addprefix fuzz-,$(FUZZ_TARGETS)) $(addprefix fuzz-smoke-,$(FUZZ_TARGETS))

$(FUZZ_BINS): $(FUZZ_DIR)/%: fuzz/%.cc $(FUZZ_HDRS) $(CODEC_HDRS) $(CODEC_LIB_fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) $(SAN_FLAGS) -fsanitize=fuzzer $< \
	    $(CODEC_LIB_fuzz) $(FUZZ_LIBS) -o $@

## build every fuzz target (build/fuzz/)
fuzz-build: $(FUZZ_BINS)

# Seeds are written again whenever the target was rebuilt; inputs the runs
# added stay.
$(FUZZ_DIR)/corpus/%.seeded: $(FUZZ_DIR)/%
	$< --write-seeds=$(FUZZ_DIR)/corpus/$*
	@touch $@

## (re)write the seed corpora from hpack-test-case
fuzz-seeds: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/corpus/%.seeded)

# fuzz_run TARGET SECONDS: one libFuzzer run over the target's corpus.  The
# whole output goes to the log; shown are libFuzzer's final stat lines
# (execs, cov, ft), or the log's tail when the run failed.
define fuzz_run
	@mkdir -p $(FUZZ_DIR)/artifacts/$(1) $(FUZZ_DIR)/logs
	@echo "fuzz: $(1) for $(2) s, log in $(FUZZ_DIR)/logs/$(1).log"
	@$(FUZZ_DIR)/$(1) -max_total_time=$(2) -rss_limit_mb=$(FUZZ_RSS_MB) \
	    -timeout=$(FUZZ_TIMEOUT) -max_len=$(FUZZ_MAX_LEN_$(1)) \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$(1)/ \
	    $(FUZZ_ARGS) $(FUZZ_DIR)/corpus/$(1) > $(FUZZ_DIR)/logs/$(1).log 2>&1; \
	rc=$$?; \
	grep -E '^#[0-9]+[[:space:]]+DONE|^stat::' $(FUZZ_DIR)/logs/$(1).log | sed 's/^/  $(1): /'; \
	if [ $$rc -ne 0 ]; then \
	    tail -n 60 $(FUZZ_DIR)/logs/$(1).log; \
	    echo "fuzz: $(1) failed (exit $$rc); inputs in $(FUZZ_DIR)/artifacts/$(1)/"; \
	fi; \
	exit $$rc
endef

## one target for FUZZ_SMOKE_SECONDS, e.g. fuzz-smoke-decoder_fuzz
$(addprefix fuzz-smoke-,$(FUZZ_TARGETS)): fuzz-smoke-%: $(FUZZ_DIR)/% $(FUZZ_DIR)/corpus/%.seeded
	$(call fuzz_run,$*,$(FUZZ_SMOKE_SECONDS))

## one target for FUZZ_SECONDS, e.g. fuzz-huffman_fuzz
$(addprefix fuzz-,$(FUZZ_TARGETS)): fuzz-%: $(FUZZ_DIR)/% $(FUZZ_DIR)/corpus/%.seeded
	$(call fuzz_run,$*,$(FUZZ_SECONDS))

# fails on any crash, leak, timeout or OOM
## every fuzz target for FUZZ_SMOKE_SECONDS (30) each (CI)
fuzz-smoke: $(addprefix fuzz-smoke-,$(FUZZ_TARGETS))

## every fuzz target for FUZZ_SECONDS (600) each
fuzz: $(addprefix fuzz-,$(FUZZ_TARGETS))

## the unit tests under valgrind memcheck (about 3 minutes on 2 cores)
unit-tests-valgrind: $(BUILD)/tests/unit_tests
	$(VALGRIND) $(VALGRIND_FLAGS) $(BUILD)/tests/unit_tests $(VALGRIND_GTEST_ARGS)
