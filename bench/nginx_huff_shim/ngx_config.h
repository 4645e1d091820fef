
/*
 * A minimal stand-in for nginx's ngx_config.h: exactly what the stock
 * src/http/ngx_http_huff_decode.c and ngx_http_huff_encode.c use, so that the
 * benchmark compiles those two files unmodified from the nginx tree.  The
 * values are what nginx's configure finds on a 64-bit Linux host with gcc.
 */


#ifndef _NGX_CONFIG_H_INCLUDED_
#define _NGX_CONFIG_H_INCLUDED_


#include <sys/types.h>          /* u_char, as on nginx's Linux build */
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>          /* htonl, used when NGX_PTR_SIZE is 4 */


typedef intptr_t        ngx_int_t;
typedef uintptr_t       ngx_uint_t;


#define ngx_inline      inline

#define ngx_align(d, a)     (((d) + (a - 1)) & ~(a - 1))


/* What auto/configure would have written to ngx_auto_config.h. */

#define NGX_PTR_SIZE  __SIZEOF_POINTER__

#if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#define NGX_HAVE_LITTLE_ENDIAN  1
#endif

#define NGX_HAVE_GCC_BSWAP64  1


#endif /* _NGX_CONFIG_H_INCLUDED_ */
