
/*
 * ngx_http_hpack_module: HTTP/2 header compression (RFC 7541) by the hpack
 * codec (codec/include/hpack.h) instead of nginx's own.
 *
 * Needs the host patch in module/patches/: it declares the hooks
 * (ngx_http_v2_hpack_hooks) and calls them where nginx decodes request
 * header blocks and encodes response header blocks.  This file holds the
 * directives, the configuration, the variables, the hooks' installation
 * and the connection setup; ngx_http_hpack_request.c decodes request
 * header blocks, ngx_http_hpack_response.c encodes response ones,
 * ngx_http_hpack_status.c keeps the counters of hpack_status,
 * ngx_http_hpack_v3.c encodes HTTP/3 response sections ("hpack_http3",
 * where the patch has the HTTP/3 hooks).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"


/*
 * What the connection variables read: the decoder's and the encoder's
 * statistics and the encoder's table size, side by side so that a
 * variable's data is an offset into one struct.
 */

typedef struct {
    hpack_stats_t                      in;
    hpack_stats_t                      out;
    uint64_t                           out_table;
} ngx_http_hpack_conn_stats_t;


static ngx_int_t ngx_http_hpack_init_connection(ngx_http_v2_connection_t *h2c);
static void *ngx_http_hpack_alloc(void *ctx, size_t size);
static void ngx_http_hpack_free(void *ctx, void *p);
static void ngx_http_hpack_destroy(void *data);

static ngx_int_t ngx_http_hpack_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_hpack_request_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_hpack_conn_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_hpack_variable_value(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uint64_t value);

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
static void ngx_http_hpack_exit_process(ngx_cycle_t *cycle);
#if (NGX_HTTP_HPACK_FAIL_ALLOC)
static void ngx_http_hpack_fail_init(ngx_log_t *log);
#endif


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

    { ngx_string("hpack_http3"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_SRV_CONF_OFFSET,
      offsetof(ngx_http_hpack_srv_conf_t, http3),
      NULL },

    { ngx_string("hpack_http3_table_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_SRV_CONF_OFFSET,
      offsetof(ngx_http_hpack_srv_conf_t, http3_table_size),
      &ngx_http_hpack_table_size_p },

    { ngx_string("hpack_never_index"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_1MORE,
      ngx_http_hpack_never_index,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("hpack_status"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS|NGX_CONF_TAKE1,
      ngx_http_hpack_status,
      0,
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
    ngx_http_hpack_exit_process,           /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/* installed by ngx_http_hpack_init_module() for the cycle that loaded it */

static ngx_http_v2_hpack_hooks_t  ngx_http_hpack_hooks = {
    /* init_connection: a connection starts HTTP/2; "hpack on" takes it */
    ngx_http_hpack_init_connection,

    /* decode_block: a piece of a request header block */
    ngx_http_hpack_decode_block,

    /* settings_table_size: the peer's SETTINGS_HEADER_TABLE_SIZE */
    ngx_http_hpack_settings_table_size,

    /* encode_headers: a response's header block */
    ngx_http_hpack_encode_headers,

    /* encode_trailers: a response's trailers block */
    ngx_http_hpack_encode_trailers,

#if (nginx_version >= 1029000)
    /* encode_early_hints: a 103 Early Hints block */
    ngx_http_hpack_encode_early_hints,
#endif
};


/* the cycle whose configuration installed the hooks */
static ngx_cycle_t  *ngx_http_hpack_hooks_owner;


static ngx_http_variable_t  ngx_http_hpack_vars[] = {

    { ngx_string("hpack_in_wire"), NULL, ngx_http_hpack_request_variable,
      offsetof(ngx_http_hpack_ctx_t, in_wire), NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_in_plain"), NULL, ngx_http_hpack_request_variable,
      offsetof(ngx_http_hpack_ctx_t, in_plain), NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_wire"), NULL, ngx_http_hpack_request_variable,
      offsetof(ngx_http_hpack_ctx_t, out_wire), NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_plain"), NULL, ngx_http_hpack_request_variable,
      offsetof(ngx_http_hpack_ctx_t, out_plain),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_in_wire"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, in.wire_bytes),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_in_plain"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, in.plain_bytes),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_out_wire"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, out.wire_bytes),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_conn_out_plain"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, out.plain_bytes),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_in_hits"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, in.indexed_dynamic),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_hits"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, out.indexed_dynamic),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("hpack_out_table"), NULL, ngx_http_hpack_conn_variable,
      offsetof(ngx_http_hpack_conn_stats_t, out_table),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


/* ------------------------------------------------------------ connection */

static ngx_int_t
ngx_http_hpack_init_connection(ngx_http_v2_connection_t *h2c)
{
    ngx_connection_t           *c;
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

    hc = ngx_http_hpack_pcalloc(c->pool, sizeof(ngx_http_hpack_conn_t));
    if (hc == NULL) {
        return NGX_ERROR;
    }

    /*
     * The codec's objects are allocated from the connection's pool and
     * freed with it, as nginx's own per-connection memory is: none is
     * destroyed one by one, unless hpack_status counts the memory they
     * hold (ngx_http_hpack_status_open()).
     */

    hc->allocator.alloc = ngx_http_hpack_alloc;
    hc->allocator.free = ngx_http_hpack_free;
    hc->allocator.ctx = c->pool;

    hc->conf = hscf;
    hc->main_conf = ngx_http_get_module_main_conf(
                                             h2c->http_connection->conf_ctx,
                                             ngx_http_hpack_module);

    if (ngx_http_hpack_status_open(c->pool, NGX_HTTP_HPACK_H2, &hc->allocator,
                                   ngx_http_hpack_destroy, hc, &hc->status)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    h2c->hpack_ctx = hc;

    return NGX_OK;
}


static void *
ngx_http_hpack_alloc(void *ctx, size_t size)
{
    return ngx_http_hpack_palloc((ngx_pool_t *) ctx, size);
}


static void
ngx_http_hpack_free(void *ctx, void *p)
{
    (void) ngx_pfree(ctx, p);
}


/* hpack_status: the codec's objects, when the connection's pool is freed */

static void
ngx_http_hpack_destroy(void *data)
{
    ngx_http_hpack_conn_t  *hc = data;

    hpack_decoder_destroy(hc->decoder);
    hpack_encoder_destroy(hc->encoder);

    hc->decoder = NULL;
    hc->encoder = NULL;
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


/*
 * Marks the cleanup of a request's pool that holds its context
 * (ngx_http_hpack_find_ctx()); the context goes with the pool
 */

void
ngx_http_hpack_ctx_cleanup(void *data)
{
}


/*
 * $hpack_in_wire, $hpack_in_plain, $hpack_out_wire, $hpack_out_plain: the
 * request's counters, data is their offset in ngx_http_hpack_ctx_t
 */

static ngx_int_t
ngx_http_hpack_request_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_hpack_ctx_t  *ctx;

    if (r->stream == NULL || r->stream->connection->hpack_ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    ctx = ngx_http_hpack_find_ctx(r->main);

    if (ctx == NULL) {
        return ngx_http_hpack_variable_value(r, v, 0);
    }

    return ngx_http_hpack_variable_value(r, v,
                                         *(size_t *) ((u_char *) ctx + data));
}


/*
 * $hpack_conn_*, $hpack_in_hits, $hpack_out_hits, $hpack_out_table: the
 * connection's, data is their offset in ngx_http_hpack_conn_stats_t
 */

static ngx_int_t
ngx_http_hpack_conn_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_hpack_conn_t        *hc;
    ngx_http_hpack_conn_stats_t   stats;

    if (r->stream == NULL || r->stream->connection->hpack_ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    hc = r->stream->connection->hpack_ctx;

    ngx_memzero(&stats, sizeof(ngx_http_hpack_conn_stats_t));

    if (hc->decoder) {
        hpack_decoder_stats(hc->decoder, &stats.in);
    }

    if (hc->encoder) {
        hpack_encoder_stats(hc->encoder, &stats.out);
        stats.out_table = hpack_encoder_table_size(hc->encoder);
    }

    return ngx_http_hpack_variable_value(r, v,
                                         *(uint64_t *) ((u_char *) &stats
                                                        + data));
}


static ngx_int_t
ngx_http_hpack_variable_value(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uint64_t value)
{
    u_char  *p;

    p = ngx_http_hpack_pnalloc(r->pool, NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->len = ngx_sprintf(p, "%uL", value) - p;
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
    hscf->http3 = NGX_CONF_UNSET;
    hscf->http3_table_size = NGX_CONF_UNSET_SIZE;
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
    ngx_conf_merge_value(conf->http3, prev->http3, 0);
    ngx_conf_merge_size_value(conf->http3_table_size, prev->http3_table_size,
                              NGX_HTTP_HPACK_HTTP3_TABLE_SIZE);
    ngx_conf_merge_ptr_value(conf->never_index, prev->never_index, NULL);

#if !(NGX_HTTP_HPACK_V3)
    if (conf->http3) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"hpack_http3\" requires nginx built with "
                           "--with-http_v3_module and the HTTP/3 hooks of "
                           "the hook patch");
        return NGX_CONF_ERROR;
    }
#endif

    if (!conf->enable && !conf->http3) {
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
    ngx_http_hpack_main_conf_t  *hmcf;

    hmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_hpack_module);

    return ngx_http_hpack_init_statics(cf, hmcf);
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
    ngx_pool_cleanup_t          *cln;
    ngx_http_hpack_main_conf_t  *hmcf;

    /* NULL without an http block */
    hmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_hpack_module);

    ngx_http_hpack_status_attach(hmcf);

#if (NGX_HTTP_HPACK_FAIL_ALLOC)
    ngx_http_hpack_fail_init(cycle->log);
#endif

    cln = ngx_pool_cleanup_add(cycle->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_hpack_unhook;
    cln->data = cycle;

    ngx_http_v2_hpack_hooks = ngx_http_hpack_hooks;
#if (NGX_HTTP_HPACK_V3)
    ngx_http_hpack_v3_hook();
#endif
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
#if (NGX_HTTP_HPACK_V3)
        ngx_http_hpack_v3_unhook();
#endif
        ngx_http_hpack_hooks_owner = NULL;
    }
}


static void
ngx_http_hpack_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_hpack_status_exit();
}


#if (NGX_HTTP_HPACK_FAIL_ALLOC)

/*
 * The test build's failure injection: read in the master, before the
 * workers' environment is cleared, and counted by each worker from its
 * start, so that with one worker allocation N is the Nth made for its
 * first connections.
 */

static ngx_uint_t  ngx_http_hpack_fail_at;
static ngx_uint_t  ngx_http_hpack_alloc_count;


static void
ngx_http_hpack_fail_init(ngx_log_t *log)
{
    char       *env;
    ngx_int_t   n;

    env = getenv("NGX_HTTP_HPACK_FAIL_ALLOC");
    if (env == NULL) {
        return;
    }

    n = ngx_atoi((u_char *) env, ngx_strlen(env));
    ngx_http_hpack_fail_at = (n == NGX_ERROR) ? 0 : (ngx_uint_t) n;

    ngx_log_error(NGX_LOG_NOTICE, log, 0,
                  "hpack: allocation %ui will fail", ngx_http_hpack_fail_at);
}


ngx_uint_t
ngx_http_hpack_alloc_fails(ngx_log_t *log, const char *site)
{
    ngx_http_hpack_alloc_count++;

    if (ngx_http_hpack_alloc_count != ngx_http_hpack_fail_at) {
        ngx_log_error(NGX_LOG_INFO, log, 0, "hpack: allocation %ui in %s()",
                      ngx_http_hpack_alloc_count, site);
        return 0;
    }

    ngx_log_error(NGX_LOG_ERR, log, 0, "hpack: allocation %ui in %s() failed",
                  ngx_http_hpack_alloc_count, site);
    return 1;
}

#endif
