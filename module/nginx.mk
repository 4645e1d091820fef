# nginx builds: stock and patched (with the module) for 1.26.3 and 1.22.1.
# Included from the top-level Makefile.  The sources come from Debian's
# package registry (scripts/nginx-source.sh) or NGINX_SRC=<dir>; everything
# is cached under $(BUILD)/ so re-runs only recompile what changed.
#
#   make nginx          both pairs (1.26.3 and 1.22.1)
#   make nginx-1.26     build/nginx-stock, build/nginx-hpack
#   make nginx-1.22     build/nginx-1.22.1-stock, build/nginx-1.22.1-hpack
#   make nginx-run      run build/nginx-hpack with conf/nginx.conf (foreground)
#
# NGINX_CC_OPT sets the compiler flags of both builds (default "-O2 -g").

NGINX_CC_OPT ?= -O2 -g
NGINX_ENV    := BUILD=$(BUILD) NGINX_CC_OPT="$(NGINX_CC_OPT)"

.PHONY: nginx nginx-1.26 nginx-1.22 nginx-run nginx-help

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

nginx-run: nginx-1.26
	BUILD=$(BUILD) scripts/run-nginx.sh

nginx-help:
	@echo "make nginx         stock and patched nginx 1.26.3 and 1.22.1 + the module"
	@echo "make nginx-1.26    build/nginx-stock and build/nginx-hpack only"
	@echo "make nginx-1.22    build/nginx-1.22.1-stock and build/nginx-1.22.1-hpack only"
	@echo "make nginx-run     run build/nginx-hpack with conf/nginx.conf"
