# nginx builds: stock and patched (with the module) for 1.26.3 and 1.22.1.
# Included from the top-level Makefile.  The sources come from Debian's
# package registry (scripts/nginx-source.sh) or NGINX_SRC=<dir>; everything
# is cached under $(BUILD)/ so re-runs only recompile what changed.
#
#   make nginx          both pairs (1.26.3 and 1.22.1)
#   make nginx-1.26     build/nginx-stock, build/nginx-hpack
#   make nginx-1.22     build/nginx-1.22.1-stock, build/nginx-1.22.1-hpack
#   make nginx-run      run build/nginx-hpack with conf/nginx.conf (foreground)
#   make nginx-asan     build/nginx-hpack-asan: patched 1.26.3 + the module,
#                       nginx, module and codec with ASan and UBSan
#                       (scripts/build-nginx.sh --asan)
#   make lib-asan       the codec library of that build ($(BUILD)/codec-asan)
#
# NGINX_CC_OPT sets the compiler flags of all builds (default "-O2 -g").

NGINX_CC_OPT ?= -O2 -g
NGINX_ENV    := BUILD=$(BUILD) NGINX_CC_OPT="$(NGINX_CC_OPT)"

.PHONY: nginx nginx-1.26 nginx-1.22 nginx-asan lib-asan nginx-run nginx-help FORCE

# one after the other: each build is parallel inside (JOBS, default nproc)
nginx: lib
	$(MAKE) --no-print-directory nginx-1.26
	$(MAKE) --no-print-directory nginx-1.22

nginx-1.26: lib
	$(NGINX_ENV) scripts/build-nginx.sh 1.26.3 stock $(BUILD)/nginx-stock
	$(NGINX_ENV) scripts/build-nginx.sh 1.26.3 hpack $(BUILD)/nginx-hpack

nginx-1.22: lib
	$(NGINX_ENV) scripts/build-nginx.sh 1.22.1 stock $(BUILD)/nginx-1.22.1-stock
	$(NGINX_ENV) scripts/build-nginx.sh 1.22.1 hpack $(BUILD)/nginx-1.22.1-hpack

# The codec as $(CODEC_LIB), compiled once more with the sanitizers, by the
# compiler of the sanitizer build of nginx (its runtime is the one loaded).
ASAN_CXX        ?= clang++
CODEC_ASAN_OBJS := $(CODEC_SRCS:codec/src/%.cc=$(BUILD)/codec-asan/%.o)
CODEC_ASAN_LIB  := $(BUILD)/codec-asan/libhpack.a

# the objects are rebuilt when the compiler or its flags change
CODEC_ASAN_CMD  := $(ASAN_CXX) $(CODEC_FLAGS) $(SAN_FLAGS)

$(BUILD)/codec-asan/command: FORCE
	@mkdir -p $(@D)
	@echo '$(CODEC_ASAN_CMD)' | cmp -s - $@ || echo '$(CODEC_ASAN_CMD)' > $@

$(BUILD)/codec-asan/%.o: codec/src/%.cc $(CODEC_HDRS) $(BUILD)/codec-asan/command
	$(CODEC_ASAN_CMD) -c $< -o $@

$(CODEC_ASAN_LIB): $(CODEC_ASAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

lib-asan: $(CODEC_ASAN_LIB)

FORCE:

# nginx's own make builds the library through the module's config
nginx-asan:
	$(NGINX_ENV) scripts/build-nginx.sh --asan 1.26.3 hpack $(BUILD)/nginx-hpack-asan

nginx-run: nginx-1.26
	BUILD=$(BUILD) scripts/run-nginx.sh

nginx-help:
	@echo "make nginx         stock and patched nginx 1.26.3 and 1.22.1 + the module"
	@echo "make nginx-1.26    build/nginx-stock and build/nginx-hpack only"
	@echo "make nginx-1.22    build/nginx-1.22.1-stock and build/nginx-1.22.1-hpack only"
	@echo "make nginx-asan    build/nginx-hpack-asan: nginx 1.26.3 + the module with ASan/UBSan"
	@echo "make nginx-run     run build/nginx-hpack with conf/nginx.conf"
