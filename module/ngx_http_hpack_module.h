
/*
 * ngx_http_hpack_module: HTTP/2 header compression (RFC 7541) by the hpack
 * codec (codec/include/hpack.h) instead of nginx's own.
 *
 * The module's files: ngx_http_hpack_module.c (directives, configuration,
 * variables, the hooks, connection setup), ngx_http_hpack_request.c
 * (request header blocks, the memo, the static table's facts),
 * ngx_http_hpack_response.c (response header, 103 and trailer blocks),
 * ngx_http_hpack_status.c (the counters of hpack_status, its page) and
 * ngx_http_hpack_v3.c and ngx_http_hpack_v3_request.c (HTTP/3 by QPACK,
 * "hpack_http3", with ngx_http_hpack_v3.h).  What they share is declared
 * here; the functions they call across are hidden from the shared
 * object's symbol table (below), so those calls are direct.
 */


#ifndef _NGX_HTTP_HPACK_MODULE_H_INCLUDED_
#define _NGX_HTTP_HPACK_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include <hpack.h>

#if !(NGX_HTTP_V2)
#error ngx_http_hpack_module requires --with-http_v2_module
#endif


#define NGX_HTTP_HPACK_STATIC_ENTRIES  61


/*
 * A section's field array is needed only while it is encoded: up to this
 * many fields it is on the stack, more are allocated from the request's
 * pool
 */

#define NGX_HTTP_HPACK_LOCAL_FIELDS    32


/*
 * hpack_http3_table_size's default: nginx's own cap on the peer's table
 * (NGX_HTTP_V3_MAX_TABLE_CAPACITY), the capacity most HTTP/3 clients
 * offer
 */

#define NGX_HTTP_HPACK_HTTP3_TABLE_SIZE  4096


/*
 * Every allocation the module and the codec make for a connection goes
 * through these.  A test build (make nginx-asan-fail-alloc) defines
 * NGX_HTTP_HPACK_FAIL_ALLOC: each call is then counted by the worker and
 * logged with its function, and the one whose number is the environment's
 * NGX_HTTP_HPACK_FAIL_ALLOC fails (interop/alloc_failure_sweep.py);
 * elsewhere they are nginx's own functions.  ngx_array_push() and
 * ngx_list_push() are counted at every call, whether or not they would
 * allocate.
 */

#if (NGX_HTTP_HPACK_FAIL_ALLOC)

#if (defined __GNUC__)
#pragma GCC visibility push(hidden)
#endif
ngx_uint_t ngx_http_hpack_alloc_fails(ngx_log_t *log, const char *site);
#if (defined __GNUC__)
#pragma GCC visibility pop
#endif

#define ngx_http_hpack_failing(log, call)                                    \
    (ngx_http_hpack_alloc_fails(log, __func__) ? NULL : call)

#define ngx_http_hpack_palloc(pool, size)                                    \
    ngx_http_hpack_failing((pool)->log, ngx_palloc(pool, size))
#define ngx_http_hpack_pnalloc(pool, size)                                   \
    ngx_http_hpack_failing((pool)->log, ngx_pnalloc(pool, size))
#define ngx_http_hpack_pcalloc(pool, size)                                   \
    ngx_http_hpack_failing((pool)->log, ngx_pcalloc(pool, size))
#define ngx_http_hpack_pool_cleanup_add(pool, size)                          \
    ngx_http_hpack_failing((pool)->log, ngx_pool_cleanup_add(pool, size))
#define ngx_http_hpack_array_create(pool, n, size)                           \
    ngx_http_hpack_failing((pool)->log, ngx_array_create(pool, n, size))
#define ngx_http_hpack_array_push(a)                                         \
    ngx_http_hpack_failing((a)->pool->log, ngx_array_push(a))
#define ngx_http_hpack_list_push(l)                                          \
    ngx_http_hpack_failing((l)->pool->log, ngx_list_push(l))
#define ngx_http_hpack_create_temp_buf(pool, size)                           \
    ngx_http_hpack_failing((pool)->log, ngx_create_temp_buf(pool, size))

#else

#define ngx_http_hpack_palloc            ngx_palloc
#define ngx_http_hpack_pcalloc           ngx_pcalloc
#define ngx_http_hpack_pool_cleanup_add  ngx_pool_cleanup_add
#define ngx_http_hpack_array_create      ngx_array_create
#define ngx_http_hpack_array_push        ngx_array_push
#define ngx_http_hpack_create_temp_buf   ngx_create_temp_buf
#define ngx_http_hpack_pnalloc           ngx_pnalloc
#define ngx_http_hpack_list_push         ngx_list_push

#endif

/*
 * HTTP/2 error codes (RFC 9113 section 7) the codec does not name
 * (hpack.h has HPACK_H2_INTERNAL_ERROR and the rest); ngx_http_v2.c keeps
 * its NGX_HTTP_V2_*_ERROR to itself
 */
#define NGX_HTTP_HPACK_PROTOCOL_ERROR  0x1

/* what is known about a name (ngx_http_hpack_memo_t.name_flags) */
#define NGX_HTTP_HPACK_NAME_KNOWN      0x01
#define NGX_HTTP_HPACK_NAME_PSEUDO     0x02
#define NGX_HTTP_HPACK_NAME_COOKIE     0x04
#define NGX_HTTP_HPACK_NAME_UA         0x08

/*
 * validation outcomes, by the rules of ngx_http_v2_validate_header(): 0 is
 * "not yet validated"
 */
#define NGX_HTTP_HPACK_VALID           1
#define NGX_HTTP_HPACK_INVALID         2      /* r->invalid_header */
#define NGX_HTTP_HPACK_BAD             3      /* 400 Bad Request */

/* what a connection's blocks add up to (ngx_http_hpack_status_t.in, .out) */
#define NGX_HTTP_HPACK_WIRE            0
#define NGX_HTTP_HPACK_PLAIN           1      /* name + value lengths */
#define NGX_HTTP_HPACK_FIELDS          2
#define NGX_HTTP_HPACK_INDEXED         3
#define NGX_HTTP_HPACK_SUMS            4

/* the protocols hpack_status counts, each with its own counters */
#define NGX_HTTP_HPACK_H2              0
#define NGX_HTTP_HPACK_H3              1
#define NGX_HTTP_HPACK_PROTOCOLS       2

/* the gauges (ngx_http_hpack_status_t.gauges) */
#define NGX_HTTP_HPACK_CONNECTIONS     0
#define NGX_HTTP_HPACK_TABLE_BYTES     1
#define NGX_HTTP_HPACK_GAUGES          2

/*
 * kinds of request header blocks (HTTP/3: field sections and the client's
 * QPACK streams) refused (ngx_http_hpack_status_t.errors); which a
 * protocol has: ngx_http_hpack_status.c
 */
#define NGX_HTTP_HPACK_ERR_HUFFMAN     0
#define NGX_HTTP_HPACK_ERR_INTEGER     1
#define NGX_HTTP_HPACK_ERR_INDEX       2
#define NGX_HTTP_HPACK_ERR_TRUNCATED   3
#define NGX_HTTP_HPACK_ERR_SIZE_UPDATE 4
#define NGX_HTTP_HPACK_ERR_LIMITS      5
#define NGX_HTTP_HPACK_ERR_EMPTY_NAME  6
#define NGX_HTTP_HPACK_ERR_INTERNAL    7
#define NGX_HTTP_HPACK_ERR_ENCODER_STREAM   8
#define NGX_HTTP_HPACK_ERR_DECODER_STREAM   9
#define NGX_HTTP_HPACK_ERR_BLOCKED_STREAMS  10
#define NGX_HTTP_HPACK_ERR_INSERT_COUNT     11
#define NGX_HTTP_HPACK_ERR_EMPTY_SECTION    12
#define NGX_HTTP_HPACK_ERRORS          13

/* the user-agent classification (ngx_http_hpack_memo_t.ua) */
#define NGX_HTTP_HPACK_UA_KNOWN        0x80
#define NGX_HTTP_HPACK_UA_MSIE         0x01
#define NGX_HTTP_HPACK_UA_MSIE6        0x02
#define NGX_HTTP_HPACK_UA_OPERA        0x04
#define NGX_HTTP_HPACK_UA_GECKO        0x08
#define NGX_HTTP_HPACK_UA_CHROME       0x10
#define NGX_HTTP_HPACK_UA_SAFARI       0x20
#define NGX_HTTP_HPACK_UA_KONQUEROR    0x40

/*
 * The memo of a dynamic-table entry (HPACK_MEMO_SIZE bytes, zeroed by the
 * codec on insertion): what holds for the entry, found the first time it is
 * seen.  Name facts (hash, headers_in handler, kind, the name's validity)
 * hold for every entry with the same name; value facts (the value's
 * validity, the user-agent class ngx_http_process_user_agent() set) for
 * this entry only.  The name's validity depends on underscores_in_headers
 * of the request's server, so it is kept for both settings.
 */

typedef struct {
    ngx_http_header_t                 *hh;
    ngx_uint_t                         hash;
    u_char                             name_flags;
    u_char                             name_state[2];
    u_char                             value_state;
    u_char                             ua;
} ngx_http_hpack_memo_t;

typedef char  ngx_http_hpack_memo_fits_t
                  [sizeof(ngx_http_hpack_memo_t) <= HPACK_MEMO_SIZE ? 1 : -1];


/*
 * A static-table entry: its name's facts, and its value with that value's
 * validity; a field indexed whole takes both from here, as stock nginx
 * takes them from its static table.
 */

typedef struct {
    ngx_str_t                          name;
    ngx_str_t                          value;
    ngx_http_hpack_memo_t              facts;
    u_char                             value_state;
} ngx_http_hpack_static_t;


/*
 * The counters of hpack_status of one protocol, over every worker, in the
 * shared zone, each protocol's from a cache line of its own.  The sums
 * that every block adds to come first, in a cache line of their own.
 * in_stream and out_stream are HTTP/3's encoder-stream octets (the
 * client's, ours), also in in[], out[NGX_HTTP_HPACK_WIRE].
 */

typedef struct {
    ngx_atomic_t                       in[NGX_HTTP_HPACK_SUMS];
    ngx_atomic_t                       out[NGX_HTTP_HPACK_SUMS];
    ngx_atomic_t                       in_stream;
    ngx_atomic_t                       out_stream;
    ngx_atomic_t                       gauges[NGX_HTTP_HPACK_GAUGES];
    ngx_atomic_t                       errors[NGX_HTTP_HPACK_ERRORS];
} ngx_http_hpack_status_t;


typedef struct {
    /* index 1..61, as field.static_index */
    ngx_http_hpack_static_t            statics[NGX_HTTP_HPACK_STATIC_ENTRIES
                                               + 1];

    /* "server" values in their literal form, by server_tokens */
    ngx_str_t                          server_literal[3];

    /* the zone of hpack_status, NULL without the directive */
    ngx_shm_zone_t                    *status_zone;
} ngx_http_hpack_main_conf_t;


typedef struct {
    ngx_flag_t                         enable;
    size_t                             table_size;
    ngx_flag_t                         http3;
    size_t                             http3_table_size;
    ngx_array_t                       *never_index;    /* of ngx_str_t */
    hpack_policy_t                    *policy;
} ngx_http_hpack_srv_conf_t;


/* per connection, in c->pool */

typedef struct {
    hpack_decoder_t                   *decoder;
    hpack_encoder_t                   *encoder;
    hpack_allocator_t                  allocator;

    ngx_http_hpack_srv_conf_t         *conf;
    ngx_http_hpack_main_conf_t        *main_conf;

    size_t                             peer_table_size;

    size_t                             block_wire;
    size_t                             block_plain;
    ngx_uint_t                         block_fields;

    /* hpack_status: the zone's counters, the indexed fields added to them */
    ngx_http_hpack_status_t           *status;
    uint64_t                           in_indexed;
    uint64_t                           out_indexed;

    unsigned                           peer_table_size_set:1;
    unsigned                           in_block:1;
} ngx_http_hpack_conn_t;


/* per request */

typedef struct {
    size_t                             in_wire;
    size_t                             in_plain;
    size_t                             out_wire;
    size_t                             out_plain;
    ngx_array_t                       *never_indexed;  /* of ngx_str_t */
} ngx_http_hpack_ctx_t;


/*
 * The functions the module's files call across are the module's own: hidden
 * from the dynamic symbol table, so that calls between them are direct.
 * ngx_http_hpack_module stays exported, as every nginx module's object is
 * (the loader itself looks up the ngx_modules array nginx generates).
 */

#if (defined __GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ngx_http_hpack_module.c */

void ngx_http_hpack_ctx_cleanup(void *data);

/* ngx_http_hpack_request.c */

ngx_int_t ngx_http_hpack_decode_block(ngx_http_v2_connection_t *h2c,
    u_char **pos, u_char *end, ngx_uint_t last);
ngx_int_t ngx_http_hpack_init_statics(ngx_conf_t *cf,
    ngx_http_hpack_main_conf_t *hmcf);

/* ngx_http_hpack_response.c */

ngx_int_t ngx_http_hpack_settings_table_size(ngx_http_v2_connection_t *h2c,
    size_t size);
ngx_int_t ngx_http_hpack_encode_headers(ngx_http_request_t *r,
    u_char **start, u_char **end);
ngx_int_t ngx_http_hpack_encode_trailers(ngx_http_request_t *r,
    u_char **start, u_char **end);
#if (nginx_version >= 1029000)
ngx_int_t ngx_http_hpack_encode_early_hints(ngx_http_request_t *r,
    u_char **start, u_char **end);
#endif
ngx_int_t ngx_http_hpack_header_fields(ngx_http_request_t *r,
    ngx_http_hpack_main_conf_t *hmcf, hpack_header_t *local, u_char *status,
    hpack_header_t **fields, ngx_uint_t *nfields);
ngx_int_t ngx_http_hpack_list_fields(ngx_http_request_t *r, ngx_list_t *list,
    char *status, hpack_header_t *local, hpack_header_t **fields,
    ngx_uint_t *nfields);

/* ngx_http_hpack_v3.c: NGX_HTTP_HPACK_V3 is set by config */

#if (NGX_HTTP_HPACK_V3)
void ngx_http_hpack_v3_hook(void);
void ngx_http_hpack_v3_unhook(void);
#endif

/* ngx_http_hpack_status.c */

char *ngx_http_hpack_status(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
void ngx_http_hpack_status_attach(ngx_http_hpack_main_conf_t *hmcf);
ngx_int_t ngx_http_hpack_status_open(ngx_pool_t *pool, ngx_uint_t protocol,
    hpack_allocator_t *allocator, ngx_pool_cleanup_pt destroy, void *data,
    ngx_http_hpack_status_t **status);
void ngx_http_hpack_count_codec_error(ngx_http_hpack_conn_t *hc, int rc);
void ngx_http_hpack_count_h2_error(ngx_http_hpack_conn_t *hc, ngx_int_t err);
#if (NGX_HTTP_HPACK_V3)
void ngx_http_hpack_count_qpack_error(ngx_http_hpack_status_t *status,
    int rc);
#endif
void ngx_http_hpack_status_exit(void);

#if (defined __GNUC__)
#pragma GCC visibility pop
#endif


extern ngx_module_t  ngx_http_hpack_module;


/*
 * A request's context outlives the internal redirects and named locations
 * that clear every module's (ngx_http_internal_redirect(),
 * ngx_http_named_location(), ngx_http_filter_finalize_request()): the
 * cleanup of the request's pool that holds it finds it again, as the
 * realip module finds its own (ngx_http_realip_get_module_ctx()).  Of the
 * main request: the stream's.
 */

static ngx_inline ngx_http_hpack_ctx_t *
ngx_http_hpack_find_ctx(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t    *cln;
    ngx_http_hpack_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_hpack_module);

    if (ctx == NULL && (r->internal || r->filter_finalize)) {
        for (cln = r->pool->cleanup; cln; cln = cln->next) {
            if (cln->handler == ngx_http_hpack_ctx_cleanup) {
                ctx = cln->data;
                ngx_http_set_ctx(r, ctx, ngx_http_hpack_module);
                break;
            }
        }
    }

    return ctx;
}


static ngx_inline ngx_http_hpack_ctx_t *
ngx_http_hpack_get_ctx(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t    *cln;
    ngx_http_hpack_ctx_t  *ctx;

    ctx = ngx_http_hpack_find_ctx(r);

    if (ctx == NULL) {
        cln = ngx_http_hpack_pool_cleanup_add(r->pool,
                                              sizeof(ngx_http_hpack_ctx_t));
        if (cln == NULL) {
            return NULL;
        }

        ctx = cln->data;
        ngx_memzero(ctx, sizeof(ngx_http_hpack_ctx_t));
        cln->handler = ngx_http_hpack_ctx_cleanup;

        ngx_http_set_ctx(r, ctx, ngx_http_hpack_module);
    }

    return ctx;
}


/*
 * A block's sums go to the zone's when it ends: one atomic add per sum and
 * block, none per field.  Wire and plain octets and fields are the
 * module's own count of the block; of the indexed fields the codec keeps
 * the count (indexed: its total now, folded: what was added before).
 */

static ngx_inline void
ngx_http_hpack_fold(ngx_atomic_t *total, size_t wire, size_t plain,
    ngx_uint_t fields, uint64_t indexed, uint64_t *folded)
{
    (void) ngx_atomic_fetch_add(&total[NGX_HTTP_HPACK_WIRE], wire);
    (void) ngx_atomic_fetch_add(&total[NGX_HTTP_HPACK_PLAIN], plain);
    (void) ngx_atomic_fetch_add(&total[NGX_HTTP_HPACK_FIELDS], fields);
    (void) ngx_atomic_fetch_add(&total[NGX_HTTP_HPACK_INDEXED],
                                (ngx_atomic_int_t) (indexed - *folded));
    *folded = indexed;
}


#endif /* _NGX_HTTP_HPACK_MODULE_H_INCLUDED_ */
