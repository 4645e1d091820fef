# nginx builds: stock and patched (with the module) for 1.26.3 and 1.22.1,
# and the sanitizer build.  Included from the top-level Makefile.  The
# sources come from Debian's package registry (scripts/nginx-source.sh) or
# NGINX_SRC=<dir>; everything is cached under $(BUILD)/ so re-runs only
# recompile what changed.  NGINX_CC_OPT sets the compiler flags of all
# builds (default "-O2 -g").

NGINX_CC_OPT ?= -O2 -g
NGINX_ENV    := BUILD=$(BUILD) NGINX_CC_OPT="$(NGINX_CC_OPT)"

.PHONY: nginx nginx-1.26 nginx-1.22 nginx-asan nginx-run

# one after the other: each build is parallel inside (JOBS, default nproc)
## stock and patched nginx 1.26.3 and 1.22.1 with the module
nginx: lib
	$(MAKE) --no-print-directory nginx-1.26
	$(MAKE) --no-print-directory nginx-1.22

## build/nginx-stock and build/nginx-hpack (nginx 1.26.3)
nginx-1.26: lib
	$(NGINX_ENV) scripts/build-nginx.sh 1.26.3 stock $(BUILD)/nginx-stock
	$(NGINX_ENV) scripts/build-nginx.sh 1.26.3 hpack $(BUILD)/nginx-hpack

## build/nginx-1.22.1-stock and build/nginx-1.22.1-hpack
nginx-1.22: lib
	$(NGINX_ENV) scripts/build-nginx.sh 1.22.1 stock $(BUILD)/nginx-1.22.1-stock
	$(NGINX_ENV) scripts/build-nginx.sh 1.22.1 hpack $(BUILD)/nginx-1.22.1-hpack

# nginx, the module and the codec (lib-asan, linked through the module's
# config) with ASan and UBSan, by clang (scripts/build-nginx.sh --asan).
# nginx's own make asks for the library again; built first, it is then
# up to date.
## build/nginx-hpack-asan: patched 1.26.3 + the module under ASan/UBSan
nginx-asan: lib-asan
	$(NGINX_ENV) scripts/build-nginx.sh --asan 1.26.3 hpack $(BUILD)/nginx-hpack-asan

## run build/nginx-hpack with conf/nginx.conf in the foreground
nginx-run: nginx-1.26
	BUILD=$(BUILD) scripts/run-nginx.sh
