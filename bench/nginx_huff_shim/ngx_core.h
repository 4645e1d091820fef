
/*
 * A minimal stand-in for nginx's ngx_core.h: the return codes and the debug
 * log calls of the stock Huffman files.  nginx built without --with-debug
 * compiles ngx_log_debugN() to nothing, as here, so the log is never read.
 */


#ifndef _NGX_CORE_H_INCLUDED_
#define _NGX_CORE_H_INCLUDED_


#include <ngx_config.h>


typedef struct ngx_log_s  ngx_log_t;     /* never dereferenced */


#define NGX_OK          0
#define NGX_ERROR      -1

#define NGX_LOG_DEBUG_HTTP  0x100

#define ngx_log_debug1(level, log, err, fmt, arg1)
#define ngx_log_debug2(level, log, err, fmt, arg1, arg2)


#endif /* _NGX_CORE_H_INCLUDED_ */
