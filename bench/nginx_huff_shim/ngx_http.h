
/*
 * A minimal stand-in for nginx's ngx_http.h: the prototypes of the two
 * Huffman functions, as nginx 1.26 declares them (for NGX_HTTP_V2).
 * Usable from C++ for the benchmark that calls them.
 */


#ifndef _NGX_HTTP_H_INCLUDED_
#define _NGX_HTTP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


#ifdef __cplusplus
extern "C" {
#endif

ngx_int_t ngx_http_huff_decode(u_char *state, u_char *src, size_t len,
    u_char **dst, ngx_uint_t last, ngx_log_t *log);
size_t ngx_http_huff_encode(u_char *src, size_t len, u_char *dst,
    ngx_uint_t lower);

#ifdef __cplusplus
}
#endif


#endif /* _NGX_HTTP_H_INCLUDED_ */
