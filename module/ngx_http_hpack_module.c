
/*
 * ngx_http_hpack_module: HTTP/2 header compression (RFC 7541) by the hpack
 * codec (codec/include/hpack.h) instead of nginx's own.
 *
 * Needs the host patch in module/patches/: it declares the hooks
 * (ngx_http_v2_hpack_hooks) and calls them where nginx decodes request
 * header blocks and encodes response header blocks.
 *
 * Decoder: the codec's dynamic table replaces nginx's.  Every field gets
 * the treatment stock nginx gives it (size budget, validation, pseudo-
 * headers, cookies, headers_in handlers), but what can be derived once per
 * table entry is kept in the entry's memo and reused on every indexed
 * reference.  Encoder: every response header block of the connection goes
 * through one encoder with the full dynamic table.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include <hpack.h>


#if !(NGX_HTTP_V2)
#error ngx_http_hpack_module requires --with-http_v2_module
#endif


#define NGX_HTTP_HPACK_STATIC_ENTRIES  61

/* fields per hpack_decode_fields() call (about 1 KiB of stack) */
#define NGX_HTTP_HPACK_BATCH           16

/* what is known about a name (ngx_http_hpack_memo_t.name_flags) */
#define NGX_HTTP_HPACK_NAME_KNOWN      0x01
#define NGX_HTTP_HPACK_NAME_PSEUDO     0x02
#define NGX_HTTP_HPACK_NAME_COOKIE     0x04
#define NGX_HTTP_HPACK_NAME_UA         0x08

/* validation outcomes: 0 is "not yet validated" */
#define NGX_HTTP_HPACK_VALID           1
#define NGX_HTTP_HPACK_INVALID         2      /* r->invalid_header */
#define NGX_HTTP_HPACK_BAD             3      /* 400 Bad Request */

/* the user-agent classification (ngx_http_hpack_memo_t.ua) */
#define NGX_HTTP_HPACK_UA_KNOWN        0x80
#define NGX_HTTP_HPACK_UA_MSIE         0x01
#define NGX_HTTP_HPACK_UA_MSIE6        0x02
#define NGX_HTTP_HPACK_UA_OPERA        0x04
#define NGX_HTTP_HPACK_UA_GECKO        0x08
#define NGX_HTTP_HPACK_UA_CHROME       0x10
#define NGX_HTTP_HPACK_UA_SAFARI       0x20
#define NGX_HTTP_HPACK_UA_KONQUEROR    0x40

/* variables */
#define NGX_HTTP_HPACK_IN_WIRE         0
#define NGX_HTTP_HPACK_IN_PLAIN        1
#define NGX_HTTP_HPACK_OUT_WIRE        2
#define NGX_HTTP_HPACK_OUT_PLAIN       3
#define NGX_HTTP_HPACK_CONN_IN_WIRE    4
#define NGX_HTTP_HPACK_CONN_IN_PLAIN   5
#define NGX_HTTP_HPACK_CONN_OUT_WIRE   6
#define NGX_HTTP_HPACK_CONN_OUT_PLAIN  7
#define NGX_HTTP_HPACK_IN_HITS         8
#define NGX_HTTP_HPACK_OUT_HITS        9
#define NGX_HTTP_HPACK_OUT_TABLE       10


/*
 * The memo of a dynamic-table entry (HPACK_MEMO_SIZE bytes, zeroed by the
 * codec on insertion).  Name facts (hash, handler, kind, name validity)
 * hold for every entry with the same name; value facts (value validity,
 * user-agent classification) for this entry only.  Validity of the name
 * depends on underscores_in_headers of the request's server, so it is kept
 * for both settings.
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


typedef struct {
    ngx_str_t                          name;
    ngx_http_hpack_memo_t              facts;
} ngx_http_hpack_static_t;


typedef struct {
    /* index 1..61, as field.static_index */
    ngx_http_hpack_static_t            statics[NGX_HTTP_HPACK_STATIC_ENTRIES
                                               + 1];

    /* "server" values in their literal form, by server_tokens */
    ngx_str_t                          server_literal[3];
} ngx_http_hpack_main_conf_t;


typedef struct {
    ngx_flag_t                         enable;
    size_t                             table_size;
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


static ngx_int_t ngx_http_hpack_init_connection(ngx_http_v2_connection_t *h2c);
static void *ngx_http_hpack_alloc(void *ctx, size_t size);
static void ngx_http_hpack_free(void *ctx, void *p);
static void ngx_http_hpack_cleanup(void *data);

static ngx_int_t ngx_http_hpack_decode_block(ngx_http_v2_connection_t *h2c,
    u_char **pos, u_char *end, ngx_uint_t last);
static ngx_int_t ngx_http_hpack_process_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f);
static void ngx_http_hpack_name_facts(ngx_http_core_main_conf_t *cmcf,
    const u_char *name, size_t len, ngx_http_hpack_memo_t *facts);
static ngx_uint_t ngx_http_hpack_validate_name(const u_char *name, size_t len,
    ngx_uint_t underscores);
static ngx_uint_t ngx_http_hpack_validate_value(const u_char *value,
    size_t len);
static ngx_int_t ngx_http_hpack_user_agent(ngx_http_request_t *r,
    ngx_table_elt_t *h, ngx_http_hpack_memo_t *facts);
static ngx_http_hpack_ctx_t *ngx_http_hpack_get_ctx(ngx_http_request_t *r);

static ngx_int_t ngx_http_hpack_settings_table_size(
    ngx_http_v2_connection_t *h2c, size_t size);
static ngx_int_t ngx_http_hpack_encode_headers(ngx_http_request_t *r,
    u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_encode_trailers(ngx_http_request_t *r,
    u_char **start, u_char **end);
static u_char *ngx_http_hpack_lowcase(u_char *dst, u_char *src, size_t len);
static u_char *ngx_http_hpack_decimal(u_char *p, uint64_t n, size_t width);
static ngx_int_t ngx_http_hpack_add_list(ngx_http_request_t *r,
    ngx_list_t *list, hpack_header_t *hs, ngx_uint_t *n);
static ngx_int_t ngx_http_hpack_encode(ngx_http_request_t *r,
    hpack_header_t *hs, ngx_uint_t n, u_char **start, u_char **end);

static ngx_int_t ngx_http_hpack_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_hpack_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

static void *ngx_http_hpack_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_hpack_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_hpack_create_srv_conf(ngx_conf_t *cf);
static char *ngx_http_hpack_merge_srv_conf(ngx_conf_t *cf, void *parent,
    void *child);
static char *ngx_http_hpack_never_index(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_hpack_table_size(ngx_conf_t *cf, void *post,
    void *data);
static void ngx_http_hpack_policy_cleanup(void *data);
static ngx_int_t ngx_http_hpack_postconfiguration(ngx_conf_t *cf);
static ngx_int_t ngx_http_hpack_init_module(ngx_cycle_t *cycle);
static void ngx_http_hpack_unhook(void *data);


static ngx_conf_post_handler_pt  ngx_http_hpack_table_size_p =
    ngx_http_hpack_table_size;


static ngx_command_t  ngx_http_hpack_commands[] = {

    { ngx_string("hpack"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_SRV_CONF_OFFSET,
      offsetof(ngx_http_hpack_srv_conf_t, enable),
      NULL },

    { ngx_string("hpack_table_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_SRV_CONF_OFFSET,
      offsetof(ngx_http_hpack_srv_conf_t, table_size),
      &ngx_http_hpack_table_size_p },

    { ngx_string("hpack_never_index"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_1MORE,
      ngx_http_hpack_never_index,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_hpack_module_ctx = {
    ngx_http_hpack_add_variables,          /* preconfiguration */
    ngx_http_hpack_postconfiguration,      /* postconfiguration */

    ngx_http_hpack_create_main_conf,       /* create main configuration */
    ngx_http_hpack_init_main_conf,         /* init main configuration */

    ngx_http_hpack_create_srv_conf,        /* create server configuration */
    ngx_http_hpack_merge_srv_conf,         /* merge server configuration */

    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_hpack_module = {
    NGX_MODULE_V1,
    &ngx_http_hpack_module_ctx,            /* module context */
    ngx_http_hpack_commands,               /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_hpack_init_module,            /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_http_v2_hpack_hooks_t  ngx_http_hpack_hooks = {
    ngx_http_hpack_init_connection,
    ngx_http_hpack_decode_block,
    ngx_http_hpack_settings_table_size,
    ngx_http_hpack_encode_headers,
    ngx_http_hpack_encode_trailers
};


/* the cycle whose configuration installed the hooks */
static ngx_cycle_t  *ngx_http_hpack_hooks_owner;


static ngx_http_variable_t  ngx_http_hpack_vars[] = {

    { ngx_string("hpack_in_wire"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_IN_WIRE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_in_plain"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_IN_PLAIN, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_wire"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_OUT_WIRE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_plain"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_OUT_PLAIN, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_in_wire"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_CONN_IN_WIRE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_in_plain"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_CONN_IN_PLAIN, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_out_wire"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_CONN_OUT_WIRE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_out_plain"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_CONN_OUT_PLAIN, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_in_hits"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_IN_HITS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_hits"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_OUT_HITS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_table"), NULL, ngx_http_hpack_variable,
      NGX_HTTP_HPACK_OUT_TABLE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


/* ------------------------------------------------------------ connection */

static ngx_int_t
ngx_http_hpack_init_connection(ngx_http_v2_connection_t *h2c)
{
    ngx_connection_t           *c;
    ngx_pool_cleanup_t         *cln;
    ngx_http_hpack_conn_t      *hc;
    ngx_http_hpack_srv_conf_t  *hscf;

    /*
     * Connection-level settings come from the server that owns the
     * connection when HTTP/2 starts: the default server of the listen
     * address, or the server chosen by SNI, as for nginx's http2 settings.
     */

    hscf = ngx_http_get_module_srv_conf(h2c->http_connection->conf_ctx,
                                        ngx_http_hpack_module);

    if (!hscf->enable) {
        return NGX_OK;
    }

    c = h2c->connection;

    hc = ngx_pcalloc(c->pool, sizeof(ngx_http_hpack_conn_t));
    if (hc == NULL) {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(c->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_hpack_cleanup;
    cln->data = hc;

    hc->allocator.alloc = ngx_http_hpack_alloc;
    hc->allocator.free = ngx_http_hpack_free;
    hc->allocator.ctx = c->pool;

    hc->conf = hscf;
    hc->main_conf = ngx_http_get_module_main_conf(
                                             h2c->http_connection->conf_ctx,
                                             ngx_http_hpack_module);

    h2c->hpack_ctx = hc;

    return NGX_OK;
}


static void *
ngx_http_hpack_alloc(void *ctx, size_t size)
{
    return ngx_palloc(ctx, size);
}


static void
ngx_http_hpack_free(void *ctx, void *p)
{
    (void) ngx_pfree(ctx, p);
}


static void
ngx_http_hpack_cleanup(void *data)
{
    ngx_http_hpack_conn_t  *hc = data;

    hpack_decoder_destroy(hc->decoder);
    hpack_encoder_destroy(hc->encoder);

    hc->decoder = NULL;
    hc->encoder = NULL;
}


/* --------------------------------------------------------------- decoder */

static ngx_int_t
ngx_http_hpack_decode_block(ngx_http_v2_connection_t *h2c, u_char **pos,
    u_char *end, ngx_uint_t last)
{
    int                        rc;
    size_t                     i, n;
    u_char                    *start;
    ngx_int_t                  err;
    hpack_field_t              fields[NGX_HTTP_HPACK_BATCH];
    ngx_http_request_t        *r;
    ngx_http_hpack_ctx_t      *ctx;
    ngx_http_hpack_conn_t     *hc;
    ngx_http_core_srv_conf_t  *cscf;

    hc = h2c->hpack_ctx;

    if (hc->decoder == NULL) {
        hc->decoder = hpack_decoder_create(&hc->allocator,
                                           HPACK_DEFAULT_TABLE_SIZE);
        if (hc->decoder == NULL) {
            ngx_log_error(NGX_LOG_CRIT, h2c->connection->log, 0,
                          "hpack_decoder_create() failed");
            return HPACK_H2_INTERNAL_ERROR;
        }

        /*
         * A guard against huge literals only: the exact limits of stock
         * nginx (per string, and header_limit per block) are checked
         * field by field below.
         */

        cscf = ngx_http_get_module_srv_conf(h2c->http_connection->conf_ctx,
                                            ngx_http_core_module);

        hpack_decoder_set_limits(hc->decoder,
                                 cscf->large_client_header_buffers.size
                                 * cscf->large_client_header_buffers.num,
                                 0);

        /* stock refuses any string longer than this as sent */

        hpack_decoder_set_string_limit(hc->decoder,
                                       cscf->large_client_header_buffers.size);
    }

    if (!hc->in_block) {
        hpack_decode_begin(hc->decoder);
        hc->in_block = 1;
        hc->block_wire = 0;
        hc->block_plain = 0;
    }

    for ( ;; ) {
        start = *pos;

        rc = hpack_decode_fields(hc->decoder, (const uint8_t **) pos, end,
                                 last, fields, NGX_HTTP_HPACK_BATCH, &n);

        hc->block_wire += *pos - start;

        /*
         * in wire order: a field may refer to an entry an earlier one of
         * the batch inserted, and then shares its memo
         */

        for (i = 0; i < n; i++) {
            err = ngx_http_hpack_process_field(h2c, hc, &fields[i]);

            if (err != NGX_OK) {
                hc->in_block = 0;
                return err;
            }
        }

        if (rc == HPACK_OK) {
            continue;
        }

        if (rc == HPACK_NEED_MORE) {
            return NGX_AGAIN;
        }

        hc->in_block = 0;

        if (rc == HPACK_BLOCK_END) {
            break;
        }

        if (rc == HPACK_E_STRING_TOO_LARGE) {
            ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                          "client sent too large header field");

        } else {
            ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                          "client sent invalid header block: %s",
                          hpack_strerror(rc));
        }

        return hpack_h2_error(rc);
    }

    if (h2c->state.stream) {
        r = h2c->state.stream->request;

        ctx = ngx_http_hpack_get_ctx(r);
        if (ctx == NULL) {
            return HPACK_H2_INTERNAL_ERROR;
        }

        ctx->in_wire += hc->block_wire;
        ctx->in_plain += hc->block_plain;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_hpack_process_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f)
{
    u_char                      *p;
    size_t                       len;
    ngx_int_t                    rc;
    ngx_str_t                   *nv;
    ngx_uint_t                   us;
    ngx_table_elt_t             *h;
    ngx_connection_t            *fc;
    ngx_http_request_t          *r;
    ngx_http_hpack_ctx_t        *ctx;
    ngx_http_v2_header_t         header;
    ngx_http_hpack_memo_t       *memo, facts;
    ngx_http_core_srv_conf_t    *cscf;
    ngx_http_core_main_conf_t   *cmcf;
    const ngx_http_hpack_memo_t *name_memo;

    if (f->name_len == 0) {
        ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                      "client sent zero header name length");

        return 0x1;                                     /* PROTOCOL_ERROR */
    }

    len = f->name_len + f->value_len;

    if (len > h2c->state.header_limit) {
        ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                      "client sent too large header");

        return HPACK_H2_ENHANCE_YOUR_CALM;
    }

    h2c->state.header_limit -= len;
    hc->block_plain += len;

    if (h2c->state.stream == NULL) {
        return NGX_OK;
    }

    r = h2c->state.stream->request;
    fc = r->connection;

    /* what is known about the field: its memo, the static table, or now */

    memo = (ngx_http_hpack_memo_t *) f->memo;
    name_memo = (const ngx_http_hpack_memo_t *) f->name_memo;

    if (memo && (memo->name_flags & NGX_HTTP_HPACK_NAME_KNOWN)) {
        facts = *memo;

    } else {
        if (f->static_index) {
            facts = hc->main_conf->statics[f->static_index].facts;

        } else if (name_memo
                   && (name_memo->name_flags & NGX_HTTP_HPACK_NAME_KNOWN))
        {
            facts = *name_memo;

        } else {
            cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);
            ngx_http_hpack_name_facts(cmcf, f->name, f->name_len, &facts);
        }

        facts.value_state = 0;
        facts.ua = 0;
    }

    cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);
    us = cscf->underscores_in_headers ? 1 : 0;

    if (facts.name_state[us] == 0) {
        facts.name_state[us] = ngx_http_hpack_validate_name(f->name,
                                                            f->name_len, us);
    }

    if (facts.value_state == 0) {
        facts.value_state = ngx_http_hpack_validate_value(f->value,
                                                          f->value_len);
    }

    if (memo) {
        *memo = facts;
    }

    /*
     * the field outlives the codec's buffers: copy it to the stream, name
     * (unless static) and value in one allocation
     */

    p = ngx_pnalloc(h2c->state.pool, (f->static_index ? 0 : f->name_len + 1)
                                     + f->value_len + 1);
    if (p == NULL) {
        return HPACK_H2_INTERNAL_ERROR;
    }

    if (f->static_index) {
        header.name = hc->main_conf->statics[f->static_index].name;

    } else {
        header.name.len = f->name_len;
        header.name.data = p;

        p = ngx_cpymem(p, f->name, f->name_len);
        *p++ = '\0';
    }

    header.value.len = f->value_len;
    header.value.data = p;

    p = ngx_cpymem(p, f->value, f->value_len);
    *p = '\0';

    /* ngx_http_v2_validate_header(), from the memo */

    r->invalid_header = (facts.name_state[us] == NGX_HTTP_HPACK_INVALID);

    if (facts.name_state[us] == NGX_HTTP_HPACK_BAD) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent invalid header name: \"%V\"",
                      &header.name);
        goto invalid;
    }

    if (facts.value_state == NGX_HTTP_HPACK_BAD) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent header \"%V\" with "
                      "invalid value: \"%V\"",
                      &header.name, &header.value);
        goto invalid;
    }

    if (f->representation == HPACK_REP_NEVER_INDEXED) {
        ctx = ngx_http_hpack_get_ctx(r);
        if (ctx == NULL) {
            return HPACK_H2_INTERNAL_ERROR;
        }

        if (ctx->never_indexed == NULL) {
            ctx->never_indexed = ngx_array_create(r->pool, 2,
                                                  sizeof(ngx_str_t));
            if (ctx->never_indexed == NULL) {
                return HPACK_H2_INTERNAL_ERROR;
            }
        }

        nv = ngx_array_push(ctx->never_indexed);
        if (nv == NULL) {
            return HPACK_H2_INTERNAL_ERROR;
        }

        *nv = header.value;
    }

    if (facts.name_flags & NGX_HTTP_HPACK_NAME_PSEUDO) {
        rc = ngx_http_v2_hpack_pseudo_header(r, &header);

        if (rc == NGX_OK) {
            ngx_log_debug2(NGX_LOG_DEBUG_HTTP, fc->log, 0,
                           "http2 header: \":%V: %V\"",
                           &header.name, &header.value);

            return NGX_OK;
        }

        if (rc == NGX_ABORT) {
            goto error;
        }

        if (rc == NGX_DECLINED) {
            ngx_http_finalize_request(r, NGX_HTTP_BAD_REQUEST);
            goto error;
        }

        return HPACK_H2_INTERNAL_ERROR;
    }

    if (r->invalid_header && cscf->ignore_invalid_headers) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent invalid header: \"%V\"", &header.name);

        return NGX_OK;
    }

    if (facts.name_flags & NGX_HTTP_HPACK_NAME_COOKIE) {
        if (ngx_http_v2_hpack_cookie(r, &header) != NGX_OK) {
            return HPACK_H2_INTERNAL_ERROR;
        }

    } else {
        h = ngx_list_push(&r->headers_in.headers);
        if (h == NULL) {
            return HPACK_H2_INTERNAL_ERROR;
        }

        h->key = header.name;
        h->hash = facts.hash;
        h->value = header.value;
        h->lowcase_key = h->key.data;

        if (facts.hh) {
            if (facts.name_flags & NGX_HTTP_HPACK_NAME_UA) {
                rc = ngx_http_hpack_user_agent(r, h, &facts);

                if (memo) {
                    memo->ua = facts.ua;
                }

            } else {
                rc = facts.hh->handler(r, h, facts.hh->offset);
            }

            if (rc != NGX_OK) {
                goto error;
            }
        }
    }

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, fc->log, 0,
                   "http2 header: \"%V: %V\"",
                   &header.name, &header.value);

    return NGX_OK;

invalid:

#if (nginx_version >= 1023000)

    ngx_http_finalize_request(r, NGX_HTTP_BAD_REQUEST);

#else

    /* nginx 1.22 resets the stream instead */

    if (ngx_http_v2_hpack_terminate_stream(h2c, h2c->state.stream,
                                           0x1 /* PROTOCOL_ERROR */)
        == NGX_ERROR)
    {
        return HPACK_H2_INTERNAL_ERROR;
    }

#endif

error:

    h2c->state.stream = NULL;

#if (nginx_version >= 1023000)
    ngx_http_run_posted_requests(fc);
#endif

    return NGX_OK;
}


static void
ngx_http_hpack_name_facts(ngx_http_core_main_conf_t *cmcf,
    const u_char *name, size_t len, ngx_http_hpack_memo_t *facts)
{
    ngx_memzero(facts, sizeof(ngx_http_hpack_memo_t));

    facts->name_flags = NGX_HTTP_HPACK_NAME_KNOWN;

    if (name[0] == ':') {
        facts->name_flags |= NGX_HTTP_HPACK_NAME_PSEUDO;
        return;
    }

    if (len == sizeof("cookie") - 1
        && ngx_memcmp(name, "cookie", sizeof("cookie") - 1) == 0)
    {
        facts->name_flags |= NGX_HTTP_HPACK_NAME_COOKIE;
        return;
    }

    facts->hash = ngx_hash_key((u_char *) name, len);
    facts->hh = ngx_hash_find(&cmcf->headers_in_hash, facts->hash,
                              (u_char *) name, len);

    if (facts->hh
        && facts->hh->offset == offsetof(ngx_http_headers_in_t, user_agent))
    {
        facts->name_flags |= NGX_HTTP_HPACK_NAME_UA;
    }
}


/*
 * The rules of ngx_http_v2_validate_header(), split in two so that the
 * outcome for a name can be kept apart from the outcome for a value.
 */

static ngx_uint_t
ngx_http_hpack_validate_name(const u_char *name, size_t len,
    ngx_uint_t underscores)
{
    u_char      ch;
    ngx_uint_t  i, state;

    state = NGX_HTTP_HPACK_VALID;

    for (i = (name[0] == ':'); i != len; i++) {
        ch = name[i];

        if ((ch >= 'a' && ch <= 'z')
            || (ch == '-')
            || (ch >= '0' && ch <= '9')
            || (ch == '_' && underscores))
        {
            continue;
        }

        if (ch <= 0x20 || ch == 0x7f || ch == ':'
            || (ch >= 'A' && ch <= 'Z'))
        {
            return NGX_HTTP_HPACK_BAD;
        }

        state = NGX_HTTP_HPACK_INVALID;
    }

    return state;
}


static ngx_uint_t
ngx_http_hpack_validate_value(const u_char *value, size_t len)
{
    u_char      ch;
    ngx_uint_t  i;

    for (i = 0; i != len; i++) {
        ch = value[i];

        if (ch == '\0' || ch == LF || ch == CR) {
            return NGX_HTTP_HPACK_BAD;
        }
    }

    return NGX_HTTP_HPACK_VALID;
}


/*
 * The user-agent handler classifies the browser from the value alone when
 * it sees the request's first user-agent: that result is kept in the memo
 * and replayed.
 */

static ngx_int_t
ngx_http_hpack_user_agent(ngx_http_request_t *r, ngx_table_elt_t *h,
    ngx_http_hpack_memo_t *facts)
{
    u_char             ua;
    ngx_int_t          rc;
    ngx_http_header_t  *hh;

    hh = facts->hh;

    if (r->headers_in.user_agent != NULL) {
        return hh->handler(r, h, hh->offset);
    }

    if (facts->ua & NGX_HTTP_HPACK_UA_KNOWN) {
        ua = facts->ua;

        r->headers_in.user_agent = h;
#if (nginx_version >= 1023000)
        h->next = NULL;
#endif

        r->headers_in.msie = (ua & NGX_HTTP_HPACK_UA_MSIE) ? 1 : 0;
        r->headers_in.msie6 = (ua & NGX_HTTP_HPACK_UA_MSIE6) ? 1 : 0;
        r->headers_in.opera = (ua & NGX_HTTP_HPACK_UA_OPERA) ? 1 : 0;
        r->headers_in.gecko = (ua & NGX_HTTP_HPACK_UA_GECKO) ? 1 : 0;
        r->headers_in.chrome = (ua & NGX_HTTP_HPACK_UA_CHROME) ? 1 : 0;
        r->headers_in.safari = (ua & NGX_HTTP_HPACK_UA_SAFARI) ? 1 : 0;
        r->headers_in.konqueror = (ua & NGX_HTTP_HPACK_UA_KONQUEROR) ? 1 : 0;

        return NGX_OK;
    }

    rc = hh->handler(r, h, hh->offset);

    if (rc == NGX_OK && r->headers_in.user_agent == h) {
        ua = NGX_HTTP_HPACK_UA_KNOWN;

        if (r->headers_in.msie) {
            ua |= NGX_HTTP_HPACK_UA_MSIE;
        }

        if (r->headers_in.msie6) {
            ua |= NGX_HTTP_HPACK_UA_MSIE6;
        }

        if (r->headers_in.opera) {
            ua |= NGX_HTTP_HPACK_UA_OPERA;
        }

        if (r->headers_in.gecko) {
            ua |= NGX_HTTP_HPACK_UA_GECKO;
        }

        if (r->headers_in.chrome) {
            ua |= NGX_HTTP_HPACK_UA_CHROME;
        }

        if (r->headers_in.safari) {
            ua |= NGX_HTTP_HPACK_UA_SAFARI;
        }

        if (r->headers_in.konqueror) {
            ua |= NGX_HTTP_HPACK_UA_KONQUEROR;
        }

        facts->ua = ua;
    }

    return rc;
}


static ngx_http_hpack_ctx_t *
ngx_http_hpack_get_ctx(ngx_http_request_t *r)
{
    ngx_http_hpack_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_hpack_module);

    if (ctx == NULL) {
        ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_hpack_ctx_t));
        if (ctx == NULL) {
            return NULL;
        }

        ngx_http_set_ctx(r, ctx, ngx_http_hpack_module);
    }

    return ctx;
}


/* --------------------------------------------------------------- encoder */

static ngx_int_t
ngx_http_hpack_settings_table_size(ngx_http_v2_connection_t *h2c,
    size_t size)
{
    ngx_http_hpack_conn_t  *hc;

    hc = h2c->hpack_ctx;

    if (size > HPACK_MAX_TABLE_SIZE) {
        size = HPACK_MAX_TABLE_SIZE;
    }

    if (hc->encoder == NULL) {
        hc->peer_table_size = size;
        hc->peer_table_size_set = 1;
        return NGX_OK;
    }

    if (hpack_encoder_set_peer_table_size(hc->encoder, size) != HPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, h2c->connection->log, 0,
                      "hpack_encoder_set_peer_table_size(%uz) failed", size);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_hpack_encode_headers(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    u_char                      *p;
    size_t                       len;
    ngx_uint_t                   n;
    hpack_header_t              *hs, *hd;
    ngx_list_part_t             *part;
    ngx_http_hpack_conn_t       *hc;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_hpack_main_conf_t  *hmcf;

    hc = r->stream->connection->hpack_ctx;
    hmcf = hc->main_conf;

    /*
     * The fields and their order are those of ngx_http_v2_header_filter(),
     * which has already settled the status, the location and gzip_vary.
     */

    n = 8;

    for (part = &r->headers_out.headers.part; part; part = part->next) {
        n += part->nelts;
    }

    hs = ngx_palloc(r->pool, n * sizeof(hpack_header_t));
    if (hs == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(hs, 8 * sizeof(hpack_header_t));

    hd = hs;

    /*
     * three digits as a rule ("%03ui"), but "error_page ... =code" takes
     * any number
     */

    p = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    hd->name = (u_char *) ":status";
    hd->name_len = sizeof(":status") - 1;
    hd->value = p;
    hd->value_len = ngx_http_hpack_decimal(p, r->headers_out.status, 3) - p;
    hd++;

    if (r->headers_out.server == NULL) {
        clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

        hd->name = (u_char *) "server";
        hd->name_len = sizeof("server") - 1;

        if (clcf->server_tokens == NGX_HTTP_SERVER_TOKENS_ON) {
            hd->value = (u_char *) NGINX_VER;
            hd->value_len = sizeof(NGINX_VER) - 1;
            hd->value_literal = hmcf->server_literal[1].data;
            hd->value_literal_len = hmcf->server_literal[1].len;

        } else if (clcf->server_tokens == NGX_HTTP_SERVER_TOKENS_BUILD) {
            hd->value = (u_char *) NGINX_VER_BUILD;
            hd->value_len = sizeof(NGINX_VER_BUILD) - 1;
            hd->value_literal = hmcf->server_literal[2].data;
            hd->value_literal_len = hmcf->server_literal[2].len;

        } else {
            hd->value = (u_char *) "nginx";
            hd->value_len = sizeof("nginx") - 1;
            hd->value_literal = hmcf->server_literal[0].data;
            hd->value_literal_len = hmcf->server_literal[0].len;
        }

        hd++;
    }

    if (r->headers_out.date == NULL) {
        hd->name = (u_char *) "date";
        hd->name_len = sizeof("date") - 1;
        hd->value = ngx_cached_http_time.data;
        hd->value_len = ngx_cached_http_time.len;
        hd++;
    }

    if (r->headers_out.content_type.len) {

        if (r->headers_out.content_type_len == r->headers_out.content_type.len
            && r->headers_out.charset.len)
        {
            len = r->headers_out.content_type.len + sizeof("; charset=") - 1
                  + r->headers_out.charset.len;

            p = ngx_pnalloc(r->pool, len);
            if (p == NULL) {
                return NGX_ERROR;
            }

            p = ngx_cpymem(p, r->headers_out.content_type.data,
                           r->headers_out.content_type.len);

            p = ngx_cpymem(p, "; charset=", sizeof("; charset=") - 1);

            p = ngx_cpymem(p, r->headers_out.charset.data,
                           r->headers_out.charset.len);

            /* updated r->headers_out.content_type is also needed for logging */

            r->headers_out.content_type.len = len;
            r->headers_out.content_type.data = p - len;
        }

        hd->name = (u_char *) "content-type";
        hd->name_len = sizeof("content-type") - 1;
        hd->value = r->headers_out.content_type.data;
        hd->value_len = r->headers_out.content_type.len;
        hd++;
    }

    if (r->headers_out.content_length == NULL
        && r->headers_out.content_length_n >= 0)
    {
        p = ngx_pnalloc(r->pool, NGX_OFF_T_LEN);
        if (p == NULL) {
            return NGX_ERROR;
        }

        hd->name = (u_char *) "content-length";
        hd->name_len = sizeof("content-length") - 1;
        hd->value = p;
        hd->value_len = ngx_http_hpack_decimal(p,
                            (uint64_t) r->headers_out.content_length_n, 1)
                        - p;
        hd++;
    }

    if (r->headers_out.last_modified == NULL
        && r->headers_out.last_modified_time != -1)
    {
        p = ngx_pnalloc(r->pool, sizeof("Wed, 31 Dec 1986 18:00:00 GMT") - 1);
        if (p == NULL) {
            return NGX_ERROR;
        }

        hd->name = (u_char *) "last-modified";
        hd->name_len = sizeof("last-modified") - 1;
        hd->value = p;
        hd->value_len = ngx_http_time(p, r->headers_out.last_modified_time)
                        - p;
        hd++;
    }

    if (r->headers_out.location && r->headers_out.location->value.len) {
        hd->name = (u_char *) "location";
        hd->name_len = sizeof("location") - 1;
        hd->value = r->headers_out.location->value.data;
        hd->value_len = r->headers_out.location->value.len;
        hd++;
    }

#if (NGX_HTTP_GZIP)
    if (r->gzip_vary) {
        hd->name = (u_char *) "vary";
        hd->name_len = sizeof("vary") - 1;
        hd->value = (u_char *) "Accept-Encoding";
        hd->value_len = sizeof("Accept-Encoding") - 1;
        hd++;
    }
#endif

    n = hd - hs;

    if (ngx_http_hpack_add_list(r, &r->headers_out.headers, hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_encode(r, hs, n, start, end);
}


static ngx_int_t
ngx_http_hpack_encode_trailers(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    ngx_uint_t        n;
    hpack_header_t   *hs;
    ngx_list_part_t  *part;

    n = 0;

    for (part = &r->headers_out.trailers.part; part; part = part->next) {
        n += part->nelts;
    }

    hs = ngx_palloc(r->pool, n * sizeof(hpack_header_t));
    if (hs == NULL) {
        return NGX_ERROR;
    }

    n = 0;

    if (ngx_http_hpack_add_list(r, &r->headers_out.trailers, hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_encode(r, hs, n, start, end);
}


static ngx_int_t
ngx_http_hpack_add_list(ngx_http_request_t *r, ngx_list_t *list,
    hpack_header_t *hs, ngx_uint_t *n)
{
    u_char                *p;
    size_t                 len;
    ngx_str_t             *nv;
    ngx_uint_t             i, j, k;
    hpack_header_t        *hd;
    ngx_list_part_t       *part;
    ngx_table_elt_t       *header;
    ngx_http_hpack_ctx_t  *ctx;

    len = 0;

    for (part = &list->part; part; part = part->next) {
        header = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (header[i].hash) {
                len += header[i].key.len;
            }
        }
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_hpack_module);

    nv = NULL;
    j = 0;

    if (ctx && ctx->never_indexed) {
        nv = ctx->never_indexed->elts;
        j = ctx->never_indexed->nelts;
    }

    hd = hs + *n;

    for (part = &list->part; part; part = part->next) {
        header = part->elts;

        for (i = 0; i < part->nelts; i++) {

            if (header[i].hash == 0) {
                continue;
            }

            hd->name = ngx_http_hpack_lowcase(p, header[i].key.data,
                                              header[i].key.len);
            hd->name_len = header[i].key.len;
            hd->value = header[i].value.data;
            hd->value_len = header[i].value.len;
            hd->value_literal = NULL;
            hd->value_literal_len = 0;
            hd->flags = 0;

            p += header[i].key.len;

            /* a value the client sent never-indexed stays never-indexed */

            for (k = 0; k < j; k++) {
                if (nv[k].len == hd->value_len
                    && ngx_memcmp(nv[k].data, hd->value, nv[k].len) == 0)
                {
                    hd->flags = HPACK_FIELD_NEVER_INDEX;
                    break;
                }
            }

            hd++;
        }
    }

    *n = hd - hs;

    return NGX_OK;
}

/*
 * The codec wants lowercase names; header names from the configuration
 * (add_header) and upstreams are mostly lowercase already.  Eight octets
 * at a time: an already lowercase name is used as it is, without a copy,
 * and only a name with uppercase letters is copied, lowered, into dst.
 */

static u_char *
ngx_http_hpack_lowcase(u_char *dst, u_char *src, size_t len)
{
    size_t    i;
    uint64_t  w, x, upper;

    for (i = 0; i + 8 <= len; i += 8) {
        ngx_memcpy(&w, src + i, 8);

        /* 0x80 in each octet that is 'A'..'Z', without carries */

        x = w & 0x7f7f7f7f7f7f7f7fULL;
        upper = ((x + 0x3f3f3f3f3f3f3f3fULL) ^ (x + 0x2525252525252525ULL))
                & ~w & 0x8080808080808080ULL;

        if (upper) {
            goto copy;
        }
    }

    for ( /* void */ ; i < len; i++) {
        if (src[i] >= 'A' && src[i] <= 'Z') {
            goto copy;
        }
    }

    return src;

copy:

    for (i = 0; i + 8 <= len; i += 8) {
        ngx_memcpy(&w, src + i, 8);

        x = w & 0x7f7f7f7f7f7f7f7fULL;
        upper = ((x + 0x3f3f3f3f3f3f3f3fULL) ^ (x + 0x2525252525252525ULL))
                & ~w & 0x8080808080808080ULL;

        w |= upper >> 2;

        ngx_memcpy(dst + i, &w, 8);
    }

    for ( /* void */ ; i < len; i++) {
        dst[i] = ngx_tolower(src[i]);
    }

    return dst;
}


/*
 * n in decimal, zero-padded to at least width digits: what ngx_sprintf()
 * makes of "%03ui", "%O" and "%uL" here, without its parsing of the format
 */

static u_char *
ngx_http_hpack_decimal(u_char *p, uint64_t n, size_t width)
{
    size_t    len;
    u_char   *q;
    uint64_t  m;

    len = 1;

    for (m = n; m >= 10; m /= 10) {
        len++;
    }

    if (len < width) {
        len = width;
    }

    q = p + len;

    do {
        *--q = (u_char) ('0' + n % 10);
        n /= 10;
    } while (q != p);

    return p + len;
}


static ngx_int_t
ngx_http_hpack_encode(ngx_http_request_t *r, hpack_header_t *hs,
    ngx_uint_t n, u_char **start, u_char **end)
{
    int                     rc;
    u_char                 *out;
    size_t                  bound, len, plain;
    ngx_uint_t              i;
    ngx_connection_t       *c;
    ngx_http_hpack_ctx_t   *ctx;
    ngx_http_hpack_conn_t  *hc;

    hc = r->stream->connection->hpack_ctx;
    c = r->stream->connection->connection;

    if (hc->encoder == NULL) {
        hc->encoder = hpack_encoder_create(&hc->allocator,
                                           hc->conf->table_size,
                                           hc->conf->policy);
        if (hc->encoder == NULL) {
            ngx_log_error(NGX_LOG_CRIT, c->log, 0,
                          "hpack_encoder_create() failed");
            return NGX_ERROR;
        }

        if (hc->peer_table_size_set
            && hpack_encoder_set_peer_table_size(hc->encoder,
                                                 hc->peer_table_size)
               != HPACK_OK)
        {
            ngx_log_error(NGX_LOG_ALERT, c->log, 0,
                          "hpack_encoder_set_peer_table_size(%uz) failed",
                          hc->peer_table_size);
            return NGX_ERROR;
        }
    }

    plain = 0;

    for (i = 0; i < n; i++) {
        plain += hs[i].name_len + hs[i].value_len;

        ngx_log_debug3(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "hpack output header: \"%*s: ...\" (%uz bytes)",
                       hs[i].name_len, hs[i].name, hs[i].value_len);
    }

    /* everything that can fail is done before the encoder's state moves */

    ctx = ngx_http_hpack_get_ctx(r);
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    bound = hpack_encode_bound(hc->encoder, hs, n);

    out = ngx_pnalloc(r->pool, bound);
    if (out == NULL) {
        return NGX_ERROR;
    }

    rc = hpack_encode(hc->encoder, hs, n, out, bound, &len);

    if (rc != HPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "hpack_encode() failed: %s", hpack_strerror(rc));

        /* the encoder may be out of step with the peer: close */
        c->error = 1;

        return NGX_ERROR;
    }

    ctx->out_wire += len;
    ctx->out_plain += plain;

    *start = out;
    *end = out + len;

    return NGX_OK;
}


/* ------------------------------------------------------------- variables */

static ngx_int_t
ngx_http_hpack_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_hpack_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_hpack_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
    uintptr_t data)
{
    u_char                 *p;
    uint64_t                value;
    hpack_stats_t           stats;
    ngx_http_hpack_ctx_t   *ctx;
    ngx_http_hpack_conn_t  *hc;

    if (r->stream == NULL || r->stream->connection->hpack_ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    hc = r->stream->connection->hpack_ctx;
    ctx = ngx_http_get_module_ctx(r->main, ngx_http_hpack_module);

    value = 0;

    switch (data) {

    case NGX_HTTP_HPACK_IN_WIRE:
        value = ctx ? ctx->in_wire : 0;
        break;

    case NGX_HTTP_HPACK_IN_PLAIN:
        value = ctx ? ctx->in_plain : 0;
        break;

    case NGX_HTTP_HPACK_OUT_WIRE:
        value = ctx ? ctx->out_wire : 0;
        break;

    case NGX_HTTP_HPACK_OUT_PLAIN:
        value = ctx ? ctx->out_plain : 0;
        break;

    case NGX_HTTP_HPACK_CONN_IN_WIRE:
    case NGX_HTTP_HPACK_CONN_IN_PLAIN:
    case NGX_HTTP_HPACK_IN_HITS:
        if (hc->decoder) {
            hpack_decoder_stats(hc->decoder, &stats);

            value = (data == NGX_HTTP_HPACK_CONN_IN_WIRE) ? stats.wire_bytes
                    : (data == NGX_HTTP_HPACK_CONN_IN_PLAIN) ? stats.plain_bytes
                    : stats.indexed_dynamic;
        }

        break;

    case NGX_HTTP_HPACK_OUT_TABLE:
        if (hc->encoder) {
            value = hpack_encoder_table_size(hc->encoder);
        }

        break;

    default: /* NGX_HTTP_HPACK_CONN_OUT_WIRE, _CONN_OUT_PLAIN, _OUT_HITS */
        if (hc->encoder) {
            hpack_encoder_stats(hc->encoder, &stats);

            value = (data == NGX_HTTP_HPACK_CONN_OUT_WIRE) ? stats.wire_bytes
                    : (data == NGX_HTTP_HPACK_CONN_OUT_PLAIN)
                      ? stats.plain_bytes
                      : stats.indexed_dynamic;
        }

        break;
    }

    p = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->len = ngx_http_hpack_decimal(p, value, 1) - p;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
    v->data = p;

    return NGX_OK;
}


/* --------------------------------------------------------- configuration */

static void *
ngx_http_hpack_create_main_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_hpack_main_conf_t));
}


static char *
ngx_http_hpack_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_hpack_main_conf_t *hmcf = conf;

    size_t      len;
    ngx_str_t  *lit;
    ngx_uint_t  i;

    static ngx_str_t  values[3] = {
        ngx_string("nginx"),
        ngx_string(NGINX_VER),
        ngx_string(NGINX_VER_BUILD)
    };

    /* "server" values are configuration constants: encode them once */

    for (i = 0; i < 3; i++) {
        lit = &hmcf->server_literal[i];

        len = hpack_string_encoded_len(values[i].data, values[i].len);

        lit->data = ngx_pnalloc(cf->pool, len);
        if (lit->data == NULL) {
            return NGX_CONF_ERROR;
        }

        lit->len = hpack_string_encode(values[i].data, values[i].len,
                                       lit->data);
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_hpack_create_srv_conf(ngx_conf_t *cf)
{
    ngx_http_hpack_srv_conf_t  *hscf;

    hscf = ngx_pcalloc(cf->pool, sizeof(ngx_http_hpack_srv_conf_t));
    if (hscf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     hscf->policy = NULL;
     */

    hscf->enable = NGX_CONF_UNSET;
    hscf->table_size = NGX_CONF_UNSET_SIZE;
    hscf->never_index = NGX_CONF_UNSET_PTR;

    return hscf;
}


static char *
ngx_http_hpack_merge_srv_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_hpack_srv_conf_t *prev = parent;
    ngx_http_hpack_srv_conf_t *conf = child;

    int                  rc;
    ngx_str_t           *name;
    ngx_uint_t           i;
    ngx_pool_cleanup_t  *cln;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_size_value(conf->table_size, prev->table_size,
                              HPACK_DEFAULT_TABLE_SIZE);
    ngx_conf_merge_ptr_value(conf->never_index, prev->never_index, NULL);

    if (!conf->enable) {
        return NGX_CONF_OK;
    }

    conf->policy = hpack_policy_create(NULL);
    if (conf->policy == NULL) {
        return NGX_CONF_ERROR;
    }

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        hpack_policy_destroy(conf->policy);
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_http_hpack_policy_cleanup;
    cln->data = conf->policy;

    if (conf->never_index == NULL) {
        return NGX_CONF_OK;
    }

    name = conf->never_index->elts;

    for (i = 0; i < conf->never_index->nelts; i++) {
        rc = hpack_policy_add(conf->policy, (const char *) name[i].data,
                              name[i].len, HPACK_POLICY_NEVER_INDEX);

        if (rc != HPACK_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "hpack_never_index \"%V\": %s",
                               &name[i], hpack_strerror(rc));
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_hpack_never_index(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_hpack_srv_conf_t *hscf = conf;

    u_char      ch;
    ngx_str_t  *value, *name;
    ngx_uint_t  i, j;

    if (hscf->never_index == NGX_CONF_UNSET_PTR) {
        hscf->never_index = ngx_array_create(cf->pool, 4, sizeof(ngx_str_t));
        if (hscf->never_index == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {

        for (j = 0; j < value[i].len; j++) {
            ch = value[i].data[j];

            if (ch <= 0x20 || ch >= 0x7f || ch == ':' || ch == '"') {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid header name \"%V\" in \"%V\"",
                                   &value[i], &cmd->name);
                return NGX_CONF_ERROR;
            }
        }

        if (value[i].len == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "empty header name in \"%V\"", &cmd->name);
            return NGX_CONF_ERROR;
        }

        name = ngx_array_push(hscf->never_index);
        if (name == NULL) {
            return NGX_CONF_ERROR;
        }

        /* HTTP/2 field names are lowercase */

        name->len = value[i].len;
        name->data = value[i].data;
        ngx_strlow(name->data, name->data, name->len);
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_hpack_table_size(ngx_conf_t *cf, void *post, void *data)
{
    size_t *sp = data;

    if (*sp > HPACK_MAX_TABLE_SIZE) {
        return "must not be larger than 1m";
    }

    return NGX_CONF_OK;
}


static void
ngx_http_hpack_policy_cleanup(void *data)
{
    hpack_policy_destroy(data);
}


static ngx_int_t
ngx_http_hpack_postconfiguration(ngx_conf_t *cf)
{
    ngx_str_t                   *name;
    ngx_uint_t                   i;
    ngx_http_hpack_static_t     *st;
    ngx_http_core_main_conf_t   *cmcf;
    ngx_http_hpack_main_conf_t  *hmcf;

    hmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_hpack_module);
    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    /* per static-table name: hash, handler and validity, once */

    for (i = 1; i <= NGX_HTTP_HPACK_STATIC_ENTRIES; i++) {
        st = &hmcf->statics[i];
        name = ngx_http_v2_get_static_name(i);

        st->name.len = name->len;
        st->name.data = ngx_pnalloc(cf->pool, name->len + 1);
        if (st->name.data == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(st->name.data, name->data, name->len);
        st->name.data[name->len] = '\0';

        ngx_http_hpack_name_facts(cmcf, st->name.data, st->name.len,
                                  &st->facts);

        st->facts.name_state[0] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 0);
        st->facts.name_state[1] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 1);
    }

    return NGX_OK;
}


/*
 * The hooks live in the host binary and point into this module: they are
 * installed for the cycle that loaded it and removed with that cycle, so a
 * reload that drops load_module never leaves them pointing into an
 * unloaded object.
 */

static ngx_int_t
ngx_http_hpack_init_module(ngx_cycle_t *cycle)
{
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(cycle->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_hpack_unhook;
    cln->data = cycle;

    ngx_http_v2_hpack_hooks = ngx_http_hpack_hooks;
    ngx_http_hpack_hooks_owner = cycle;

    return NGX_OK;
}


static void
ngx_http_hpack_unhook(void *data)
{
    ngx_cycle_t  *cycle = data;

    if (ngx_http_hpack_hooks_owner == cycle) {
        ngx_memzero(&ngx_http_v2_hpack_hooks,
                    sizeof(ngx_http_v2_hpack_hooks_t));
        ngx_http_hpack_hooks_owner = NULL;
    }
}
