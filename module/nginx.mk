# nginx builds: stock and patched (with the module) for every supported
# line, and the sanitizer build.  Included from the top-level Makefile.
# The sources come from Debian's package registry (1.26.3, 1.22.1), from
# ../shared/nginx (1.28.3, 1.30.4, 1.31.4) or NGINX_SRC=<dir>
# (scripts/nginx-source.sh); everything is cached under $(BUILD)/ so
# re-runs only recompile what changed.  NGINX_CC_OPT sets the compiler
# flags of all builds (default "-O2 -g").
#
# 1.26.3 installs into $(BUILD)/nginx-stock and $(BUILD)/nginx-hpack, every
# other line into $(BUILD)/nginx-<version>-stock and -hpack.

NGINX_CC_OPT  ?= -O2 -g
NGINX_ENV     := BUILD=$(BUILD) NGINX_CC_OPT="$(NGINX_CC_OPT)"
NGINX_LINES   := 1.22.1 1.26.3 1.28.3 1.30.4 1.31.4
NGINX_VERSION ?=
NGINX_LINE_TARGETS := $(NGINX_LINES:%=nginx-%)

# nginx_prefix VERSION,VARIANT: where that build is installed
nginx_prefix = $(BUILD)/nginx-$(if $(filter 1.26.3,$(1)),,$(1)-)$(2)

# nginx_if_present VERSION[,TARGET]: a shell command that builds that line
# (make nginx-VERSION, or TARGET), or says why not and succeeds when its
# source is absent (the tests then SKIP)
nginx_if_present = { rc=0; BUILD=$(BUILD) scripts/nginx-source.sh $(1) > /dev/null \
    || rc=$$?; [ $$rc -eq 77 ] || { [ $$rc -eq 0 ] && \
    $(MAKE) --no-print-directory $(or $(2),nginx-$(1)); }; }

.PHONY: nginx nginx-1.26 nginx-1.22 nginx-lines nginx-asan \
        nginx-asan-fail-alloc nginx-run \
        $(NGINX_LINE_TARGETS)

# one after the other: each build is parallel inside (JOBS, default nproc)
## stock and patched nginx 1.26.3 and 1.22.1 (NGINX_VERSION=<line>: that line)
nginx: lib
ifeq ($(NGINX_VERSION),)
	$(MAKE) --no-print-directory nginx-1.26
	$(MAKE) --no-print-directory nginx-1.22
else
	$(MAKE) --no-print-directory nginx-$(NGINX_VERSION)
endif

## stock and patched nginx of one line, e.g. make nginx-1.30.4
$(NGINX_LINE_TARGETS): nginx-%: lib
	$(NGINX_ENV) scripts/build-nginx.sh $* stock $(call nginx_prefix,$*,stock)
	$(NGINX_ENV) scripts/build-nginx.sh $* hpack $(call nginx_prefix,$*,hpack)

# a line whose source is absent (scripts/nginx-source.sh exits 77) is
# skipped with the script's message; any other failure stops
## every supported line once, skipping those whose source is absent
nginx-lines: lib
	@for v in $(NGINX_LINES); do $(call nginx_if_present,$$v) || exit 1; done

## build/nginx-stock and build/nginx-hpack (nginx 1.26.3)
nginx-1.26: nginx-1.26.3

## build/nginx-1.22.1-stock and build/nginx-1.22.1-hpack
nginx-1.22: nginx-1.22.1

# nginx, the module and the codec (lib-asan, linked through the module's
# config) with ASan and UBSan, by clang (scripts/build-nginx.sh --asan), of
# 1.26.3 or of the line NGINX_VERSION names (then into
# build/nginx-<version>-hpack-asan).  nginx's own make asks for the
# library again; built first, it is then up to date.
SAN_VERSION := $(or $(NGINX_VERSION),1.26.3)
## build/nginx-hpack-asan: patched 1.26.3 (or NGINX_VERSION) + the module under ASan/UBSan
nginx-asan: lib-asan
	$(NGINX_ENV) scripts/build-nginx.sh --asan $(SAN_VERSION) hpack \
	    $(call nginx_prefix,$(SAN_VERSION),hpack-asan)

# the same with the module's allocation failure injection
# (module/ngx_http_hpack_module.h: NGX_HTTP_HPACK_FAIL_ALLOC)
## build/nginx-hpack-asan-fail-alloc: nginx-asan failing a chosen allocation
nginx-asan-fail-alloc: lib-asan
	$(NGINX_ENV) scripts/build-nginx.sh --asan --fail-alloc \
	    $(SAN_VERSION) hpack \
	    $(call nginx_prefix,$(SAN_VERSION),hpack-asan-fail-alloc)

## run build/nginx-hpack with conf/nginx.conf in the foreground
nginx-run: nginx-1.26
	BUILD=$(BUILD) scripts/run-nginx.sh
