# Sourced by nginx's auto/make: the rule that builds the codec library with
# the repository's Makefile (its own compiler and flags).  It runs on every
# make; the library is only rebuilt when the codec changed.

cat << END                                            >> $NGX_MAKEFILE

$ngx_hpack_lib:	ngx_hpack_lib_force
	\$(MAKE) -C $ngx_addon_dir lib

ngx_hpack_lib_force:

.PHONY:	ngx_hpack_lib_force

END
