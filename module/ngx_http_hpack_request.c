
/*
 * Request header blocks: the codec's dynamic table replaces nginx's.  Every
 * field gets the treatment stock nginx gives it (size budget, validation,
 * pseudo-headers, cookies, headers_in handlers), but what can be derived
 * once per table entry is kept in the entry's memo and reused on every
 * indexed reference.  What a name or value is found to be the first time
 * (ngx_http_hpack_facts.c) is that derivation.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"


/* fields per hpack_decode_fields() call (about 1 KiB of stack) */
#define NGX_HTTP_HPACK_BATCH           16


static ngx_int_t ngx_http_hpack_decoder(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc);
static void ngx_http_hpack_fold_in(ngx_http_hpack_conn_t *hc);
static ngx_int_t ngx_http_hpack_process_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f);
static ngx_http_hpack_memo_t *ngx_http_hpack_field_facts(
    ngx_http_request_t *r, ngx_http_hpack_conn_t *hc, hpack_field_t *f,
    ngx_uint_t us, ngx_http_hpack_memo_t *local);
static ngx_int_t ngx_http_hpack_copy_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f,
    ngx_http_v2_header_t *header);
static ngx_inline u_char *ngx_http_hpack_cpymem(u_char *dst,
    const u_char *src, size_t len);
static ngx_int_t ngx_http_hpack_never_indexed(ngx_http_request_t *r,
    ngx_str_t *value);
static ngx_int_t ngx_http_hpack_pseudo_header(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind,
    ngx_http_hpack_pseudo_t *pf);
static ngx_int_t ngx_http_hpack_pseudo_known(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind,
    ngx_http_hpack_pseudo_t *pf);
static void ngx_http_hpack_pseudo_learn(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind,
    ngx_http_hpack_pseudo_t *pf, u_char *value, size_t server);
static ngx_int_t ngx_http_hpack_header_in(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_http_hpack_memo_t *facts,
    ngx_http_hpack_memo_t *memo);
static ngx_int_t ngx_http_hpack_user_agent(ngx_http_request_t *r,
    ngx_table_elt_t *h, ngx_http_hpack_memo_t *facts);


ngx_int_t
ngx_http_hpack_decode_block(ngx_http_v2_connection_t *h2c, u_char **pos,
    u_char *end, ngx_uint_t last)
{
    int                     rc;
    size_t                  i, n;
    u_char                 *start;
    ngx_int_t               err;
    hpack_field_t           fields[NGX_HTTP_HPACK_BATCH];
    ngx_http_request_t     *r;
    ngx_http_hpack_ctx_t   *ctx;
    ngx_http_hpack_conn_t  *hc;

    hc = h2c->hpack_ctx;

    if (hc->decoder == NULL && ngx_http_hpack_decoder(h2c, hc) != NGX_OK) {
        ngx_http_hpack_count_h2_error(hc, HPACK_H2_INTERNAL_ERROR);
        return HPACK_H2_INTERNAL_ERROR;
    }

    if (!hc->in_block) {
        hpack_decode_begin(hc->decoder);
        hc->in_block = 1;
        hc->block_wire = 0;
        hc->block_plain = 0;
        hc->block_fields = 0;
    }

    for ( ;; ) {
        start = *pos;

        rc = hpack_decode_fields(hc->decoder, (const uint8_t **) pos, end,
                                 last, fields, NGX_HTTP_HPACK_BATCH, &n);

        hc->block_wire += *pos - start;
        hc->block_fields += n;

        /*
         * in wire order: a field may refer to an entry an earlier one of
         * the batch inserted, and then shares its memo
         */

        for (i = 0; i < n; i++) {
            err = ngx_http_hpack_process_field(h2c, hc, &fields[i]);

            if (err != NGX_OK) {
                hc->in_block = 0;
                ngx_http_hpack_count_h2_error(hc, err);
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

        } else if (hpack_h2_error(rc) == HPACK_H2_INTERNAL_ERROR) {
            /* ours, not the client's: its block is not known bad */
            ngx_log_error(NGX_LOG_CRIT, h2c->connection->log, 0,
                          "hpack_decode_fields() failed: %s",
                          hpack_strerror(rc));

        } else {
            ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                          "client sent invalid header block: %s",
                          hpack_strerror(rc));
        }

        ngx_http_hpack_count_codec_error(hc, rc);

        return hpack_h2_error(rc);
    }

    if (hc->status) {
        ngx_http_hpack_fold_in(hc);
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


/* the connection's decoder, on its first request header block */

static ngx_int_t
ngx_http_hpack_decoder(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc)
{
    ngx_http_core_srv_conf_t  *cscf;

    hc->decoder = hpack_decoder_create(&hc->allocator,
                                       HPACK_DEFAULT_TABLE_SIZE);
    if (hc->decoder == NULL) {
        ngx_log_error(NGX_LOG_CRIT, h2c->connection->log, 0,
                      "hpack_decoder_create() failed");
        return NGX_ERROR;
    }

    /*
     * A guard against huge literals only: the exact limits of stock nginx
     * (per string, and header_limit per block) are checked field by field.
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

    return NGX_OK;
}


/*
 * hpack_status: a block counts once it ends, a refused one in the errors
 * only
 */

static void
ngx_http_hpack_fold_in(ngx_http_hpack_conn_t *hc)
{
    hpack_stats_t  stats;

    hpack_decoder_stats(hc->decoder, &stats);

    ngx_http_hpack_fold(hc->status->in, hc->block_wire, hc->block_plain,
                        hc->block_fields,
                        stats.indexed_static + stats.indexed_dynamic,
                        &hc->in_indexed);
}


/* what ngx_http_v2_state_process_header() does with a field */

static ngx_int_t
ngx_http_hpack_process_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f)
{
    size_t                     len;
    ngx_int_t                  rc;
    ngx_uint_t                 us;
    ngx_connection_t          *fc;
    ngx_http_request_t        *r;
    ngx_http_v2_header_t       header;
    ngx_http_hpack_memo_t     *memo, *facts, local;
    ngx_http_hpack_pseudo_t   *pf;
    ngx_http_core_srv_conf_t  *cscf;

    if (f->name_len == 0) {
        ngx_log_error(NGX_LOG_INFO, h2c->connection->log, 0,
                      "client sent zero header name length");

        return NGX_HTTP_HPACK_PROTOCOL_ERROR;
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

    cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);
    us = cscf->underscores_in_headers ? 1 : 0;

    memo = (ngx_http_hpack_memo_t *) f->memo;

    facts = ngx_http_hpack_field_facts(r, hc, f, us, &local);

    if (ngx_http_hpack_copy_field(h2c, hc, f, &header) != NGX_OK) {
        return HPACK_H2_INTERNAL_ERROR;
    }

    /* ngx_http_v2_validate_header(), from the memo */

    r->invalid_header = (facts->name_state[us] == NGX_HTTP_HPACK_INVALID);

    if (facts->name_state[us] == NGX_HTTP_HPACK_BAD) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent invalid header name: \"%V\"",
                      &header.name);
        goto invalid;
    }

    if (facts->value_state == NGX_HTTP_HPACK_BAD) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent header \"%V\" with "
                      "invalid value: \"%V\"",
                      &header.name, &header.value);
        goto invalid;
    }

    if (f->representation == HPACK_REP_NEVER_INDEXED
        && ngx_http_hpack_never_indexed(r, &header.value) != NGX_OK)
    {
        return HPACK_H2_INTERNAL_ERROR;
    }

    if (facts->name_flags & NGX_HTTP_HPACK_NAME_PSEUDO) {
        if (memo) {
            pf = &memo->pseudo;

        } else if (f->static_index
                   && f->representation == HPACK_REP_INDEXED)
        {
            pf = &hc->main_conf->statics[f->static_index].pseudo;

        } else {
            pf = NULL;
        }

        rc = ngx_http_hpack_pseudo_header(r, &header, facts->name_flags, pf);

#if (nginx_version >= 1031000)

    /* 1.31: the first regular field ends the pseudo-headers */

    } else if (ngx_http_v2_hpack_construct_request_line(r) != NGX_OK) {
        rc = NGX_DECLINED;

#endif

    } else if (r->invalid_header && cscf->ignore_invalid_headers) {
        ngx_log_error(NGX_LOG_INFO, fc->log, 0,
                      "client sent invalid header: \"%V\"", &header.name);

        return NGX_OK;

    } else {
        rc = ngx_http_hpack_header_in(r, &header, facts, memo);
    }

    if (rc == NGX_ERROR) {
        return HPACK_H2_INTERNAL_ERROR;
    }

    if (rc == NGX_DECLINED) {
        goto error;
    }

    return NGX_OK;

invalid:

#if (nginx_version >= 1023000)

    ngx_http_finalize_request(r, NGX_HTTP_BAD_REQUEST);

#else

    /* nginx 1.22 resets the stream instead */

    if (ngx_http_v2_hpack_terminate_stream(h2c, h2c->state.stream,
                                           NGX_HTTP_HPACK_PROTOCOL_ERROR)
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


/*
 * What is known about a field: its entry's memo, the static table's facts
 * of its name, the memo of the entry its name refers to, or computed now.
 * Validity is checked now where it is not known.  The facts are the
 * entry's memo itself when there is one, so an indexed field seen before
 * costs two tests; else local.
 */

static ngx_http_hpack_memo_t *
ngx_http_hpack_field_facts(ngx_http_request_t *r, ngx_http_hpack_conn_t *hc,
    hpack_field_t *f, ngx_uint_t us, ngx_http_hpack_memo_t *local)
{
    u_char                        value_state;
    ngx_http_hpack_memo_t        *facts;
    ngx_http_hpack_static_t      *st;
    ngx_http_core_main_conf_t    *cmcf;
    const ngx_http_hpack_memo_t  *name_memo;

    facts = f->memo ? (ngx_http_hpack_memo_t *) f->memo : local;

    if (facts == local || !(facts->name_flags & NGX_HTTP_HPACK_NAME_KNOWN)) {
        name_memo = (const ngx_http_hpack_memo_t *) f->name_memo;
        value_state = 0;

        if (f->static_index) {
            st = &hc->main_conf->statics[f->static_index];
            *facts = st->facts;

            if (f->representation == HPACK_REP_INDEXED) {
                value_state = st->value_state;
            }

        } else if (name_memo
                   && (name_memo->name_flags & NGX_HTTP_HPACK_NAME_KNOWN))
        {
            *facts = *name_memo;

        } else {
            cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);
            ngx_http_hpack_name_facts(cmcf, f->name, f->name_len, facts);
        }

        facts->value_state = value_state;
        facts->ua = 0;
        facts->pseudo.known = 0;
    }

    if (facts->name_state[us] == 0) {
        facts->name_state[us] = ngx_http_hpack_validate_name(f->name,
                                                             f->name_len, us);
    }

    if (facts->value_state == 0) {
        facts->value_state = ngx_http_hpack_validate_value(f->value,
                                                           f->value_len);
    }

    return facts;
}


/*
 * The field outlives the codec's buffers: copy it to the stream, name
 * (unless static) and value in one allocation.  A static entry indexed
 * whole is the module's copy of it, no allocation, as stock points at its
 * static table.
 */

static ngx_int_t
ngx_http_hpack_copy_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f, ngx_http_v2_header_t *header)
{
    u_char                   *p;
    ngx_http_hpack_static_t  *st;

    if (f->static_index && f->representation == HPACK_REP_INDEXED) {
        st = &hc->main_conf->statics[f->static_index];

        header->name = st->name;
        header->value = st->value;

        return NGX_OK;
    }

    p = ngx_http_hpack_pnalloc(h2c->state.pool,
                               (f->static_index ? 0 : f->name_len + 1)
                               + f->value_len + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (f->static_index) {
        header->name = hc->main_conf->statics[f->static_index].name;

    } else {
        header->name.len = f->name_len;
        header->name.data = p;

        p = ngx_http_hpack_cpymem(p, f->name, f->name_len);
        *p++ = '\0';
    }

    header->value.len = f->value_len;
    header->value.data = p;

    p = ngx_http_hpack_cpymem(p, f->value, f->value_len);
    *p = '\0';

    return NGX_OK;
}


/*
 * A request's names and values are mostly short: up to 32 octets they are
 * copied by overlapping words inline, not by a call to memcpy()
 */

static ngx_inline u_char *
ngx_http_hpack_cpymem(u_char *dst, const u_char *src, size_t len)
{
    uint32_t  a32, b32;
    uint64_t  a, b, c, d;

    if (len > 32) {
        return ngx_cpymem(dst, src, len);
    }

    if (len > 16) {
        ngx_memcpy(&a, src, 8);
        ngx_memcpy(&b, src + 8, 8);
        ngx_memcpy(&c, src + len - 16, 8);
        ngx_memcpy(&d, src + len - 8, 8);
        ngx_memcpy(dst, &a, 8);
        ngx_memcpy(dst + 8, &b, 8);
        ngx_memcpy(dst + len - 16, &c, 8);
        ngx_memcpy(dst + len - 8, &d, 8);

    } else if (len >= 8) {
        ngx_memcpy(&a, src, 8);
        ngx_memcpy(&b, src + len - 8, 8);
        ngx_memcpy(dst, &a, 8);
        ngx_memcpy(dst + len - 8, &b, 8);

    } else if (len >= 4) {
        ngx_memcpy(&a32, src, 4);
        ngx_memcpy(&b32, src + len - 4, 4);
        ngx_memcpy(dst, &a32, 4);
        ngx_memcpy(dst + len - 4, &b32, 4);

    } else if (len) {
        dst[0] = src[0];
        dst[len / 2] = src[len / 2];
        dst[len - 1] = src[len - 1];
    }

    return dst + len;
}


/* a value sent never-indexed: a response value equal to it is sent so too */

static ngx_int_t
ngx_http_hpack_never_indexed(ngx_http_request_t *r, ngx_str_t *value)
{
    ngx_str_t             *nv;
    ngx_http_hpack_ctx_t  *ctx;

    ctx = ngx_http_hpack_get_ctx(r);
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    if (ctx->never_indexed == NULL) {
        ctx->never_indexed = ngx_http_hpack_array_create(r->pool, 2,
                                                         sizeof(ngx_str_t));
        if (ctx->never_indexed == NULL) {
            return NGX_ERROR;
        }
    }

    nv = ngx_http_hpack_array_push(ctx->never_indexed);
    if (nv == NULL) {
        return NGX_ERROR;
    }

    *nv = *value;

    return NGX_OK;
}


/*
 * A pseudo-header goes to stock's parser, unless what the parser made of
 * the same value is known (pf): NGX_DECLINED when the request was ended,
 * NGX_ERROR on a failure of ours.
 */

static ngx_int_t
ngx_http_hpack_pseudo_header(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind, ngx_http_hpack_pseudo_t *pf)
{
    u_char     *value;
    size_t      server;
    ngx_int_t   rc;

    value = NULL;
    server = 0;

    if (pf) {
        if (pf->known) {
            rc = ngx_http_hpack_pseudo_known(r, header, kind, pf);

            if (rc == NGX_ABORT) {
                return NGX_DECLINED;
            }

            if (rc != NGX_DECLINED) {
                return rc;
            }
        }

        value = header->value.data;
        server = r->headers_in.server.len;
    }

    rc = ngx_http_v2_hpack_pseudo_header(r, header);

    if (rc == NGX_OK) {
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "http2 header: \":%V: %V\"",
                       &header->name, &header->value);

        if (pf && !pf->known) {
            ngx_http_hpack_pseudo_learn(r, header, kind, pf, value, server);
        }

        return NGX_OK;
    }

    if (rc == NGX_ABORT) {
        return NGX_DECLINED;
    }

    if (rc == NGX_DECLINED) {
        ngx_http_finalize_request(r, NGX_HTTP_BAD_REQUEST);
        return NGX_DECLINED;
    }

    return NGX_ERROR;
}


/*
 * What stock's parser does with a value it accepted before, from what it
 * made of it then: NGX_ABORT when the request was ended (the server the
 * host names refused it).  Whatever the parser would refuse (a duplicate,
 * a pseudo-header after a regular field) is left to it: NGX_DECLINED.
 *
 * :authority has three forms among the lines the patches exist for: 1.22
 * (stock's path always: the host functions are static there), 1.26, and
 * 1.28 on (the port from 1.30); the version tests split between them.
 */

static ngx_int_t
ngx_http_hpack_pseudo_known(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind, ngx_http_hpack_pseudo_t *pf)
{
#if (nginx_version >= 1025000 && nginx_version < 1027000)
    ngx_str_t         host;
    ngx_table_elt_t  *h;

    static ngx_str_t  host_name = ngx_string("host");
#endif

#if (nginx_version >= 1031000)
    if (r->request_line.len) {
        return NGX_DECLINED;
    }
#endif

    if (kind & NGX_HTTP_HPACK_NAME_METHOD) {
        if (r->method_name.len) {
            return NGX_DECLINED;
        }

        r->method_name = header->value;
        r->method = pf->value;

    } else if (kind & NGX_HTTP_HPACK_NAME_SCHEME) {
        if (r->schema.len) {
            return NGX_DECLINED;
        }

        r->schema = header->value;

#if (nginx_version >= 1025000 && nginx_version < 1027000)

    /*
     * 1.26: ngx_http_v2_parse_authority() and ngx_http_process_host() on a
     * Host field of its own
     */

    } else if (kind & NGX_HTTP_HPACK_NAME_AUTHORITY) {
        if (r->headers_in.host) {
            return NGX_DECLINED;
        }

        h = ngx_http_hpack_list_push(&r->headers_in.headers);
        if (h == NULL) {
            return NGX_ERROR;
        }

        h->hash = ngx_hash(ngx_hash(ngx_hash('h', 'o'), 's'), 't');
        h->key = host_name;
        h->value = header->value;
        h->lowcase_key = host_name.data;
        h->next = NULL;

        r->headers_in.host = h;

        if (r->headers_in.server.len == 0) {
            host.len = pf->value;
            host.data = header->value.data;

            if (ngx_http_set_virtual_server(r, &host) == NGX_ERROR) {
                return NGX_ABORT;
            }

            r->headers_in.server = host;
        }

#elif (nginx_version >= 1027000)

    /* 1.28 and later: ngx_http_v2_parse_authority() */

    } else if (kind & NGX_HTTP_HPACK_NAME_AUTHORITY) {
        if (r->host_start) {
            return NGX_DECLINED;
        }

        r->host_start = header->value.data;
        r->host_end = header->value.data + header->value.len;

        header->value.len = pf->value;

        if (ngx_http_set_virtual_server(r, &header->value) == NGX_ERROR) {
            return NGX_ABORT;
        }

        r->headers_in.server = header->value;

#if (nginx_version >= 1029000)
        r->port = pf->port;
#endif

#endif

    } else {
        return NGX_DECLINED;
    }

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "http2 header: \"%V: %V\"",
                   &header->name, &header->value);

    return NGX_OK;
}


/*
 * What stock's parser made of a value it accepted, where it depends on the
 * value alone: the method; a host it took as sent, shortened (a port, a
 * trailing dot), not lower-cased into a copy.  value and server are the
 * field's value and the length of r->headers_in.server before the parser
 * ran.
 */

static void
ngx_http_hpack_pseudo_learn(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_uint_t kind,
    ngx_http_hpack_pseudo_t *pf, u_char *value, size_t server)
{
    if (kind & NGX_HTTP_HPACK_NAME_METHOD) {
        pf->value = r->method;
        pf->known = 1;

    } else if (kind & NGX_HTTP_HPACK_NAME_SCHEME) {
        pf->known = 1;

#if (nginx_version >= 1025000 && nginx_version < 1027000)

    } else if (kind & NGX_HTTP_HPACK_NAME_AUTHORITY) {

        /* the host, unless the server was named before */

        if (server == 0 && r->headers_in.server.data == value) {
            pf->value = r->headers_in.server.len;
            pf->known = 1;
        }

#elif (nginx_version >= 1027000)

    } else if (kind & NGX_HTTP_HPACK_NAME_AUTHORITY) {

        /* ngx_http_validate_host() shortened the value in place */

        if (header->value.data == value) {
            pf->value = header->value.len;
#if (nginx_version >= 1029000)
            pf->port = r->port;
#endif
            pf->known = 1;
        }

#endif
    }
}


/*
 * A regular field joins the cookies or headers_in and goes to its
 * handler: NGX_DECLINED when the handler refused it and ended the
 * request, NGX_ERROR on a failure of ours.
 */

static ngx_int_t
ngx_http_hpack_header_in(ngx_http_request_t *r, ngx_http_v2_header_t *header,
    ngx_http_hpack_memo_t *facts, ngx_http_hpack_memo_t *memo)
{
    ngx_int_t                  rc;
    ngx_table_elt_t           *h;
#if (nginx_version >= 1029000)
    ngx_http_core_srv_conf_t  *cscf;
#endif

    if (facts->name_flags & NGX_HTTP_HPACK_NAME_COOKIE) {
        if (ngx_http_v2_hpack_cookie(r, header) != NGX_OK) {
            return NGX_ERROR;
        }

    } else {
#if (nginx_version >= 1029000)
        cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);

        if (r->headers_in.count++ >= cscf->max_headers) {
            ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                          "client sent too many header lines");
            ngx_http_finalize_request(r, NGX_HTTP_REQUEST_HEADER_TOO_LARGE);
            return NGX_DECLINED;
        }
#endif

        h = ngx_http_hpack_list_push(&r->headers_in.headers);
        if (h == NULL) {
            return NGX_ERROR;
        }

        h->key = header->name;
        h->hash = facts->hash;
        h->value = header->value;
        h->lowcase_key = h->key.data;

        if (facts->hh) {
            if (facts->name_flags & NGX_HTTP_HPACK_NAME_UA) {
                rc = ngx_http_hpack_user_agent(r, h, facts);

                if (memo) {
                    memo->ua = facts->ua;
                }

            } else {
                rc = facts->hh->handler(r, h, facts->hh->offset);
            }

            if (rc != NGX_OK) {
                return NGX_DECLINED;
            }
        }
    }

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "http2 header: \"%V: %V\"",
                   &header->name, &header->value);

    return NGX_OK;
}


/*
 * The user-agent handler classifies the browser from the value alone when
 * it sees the request's first user-agent: that result is kept in the memo
 * and replayed, and in the worker's slots for the connections after
 * (ngx_http_hpack_ua_seen()).
 */

static ngx_int_t
ngx_http_hpack_user_agent(ngx_http_request_t *r, ngx_table_elt_t *h,
    ngx_http_hpack_memo_t *facts)
{
    u_char                     ua;
    ngx_int_t                  rc;
    ngx_http_header_t         *hh;
    ngx_http_hpack_ua_slot_t  *slot;

    hh = facts->hh;

    if (r->headers_in.user_agent != NULL) {
        return hh->handler(r, h, hh->offset);
    }

    ua = facts->ua;
    slot = NULL;

    if (!(ua & NGX_HTTP_HPACK_UA_KNOWN)) {
        ua = ngx_http_hpack_ua_seen(&h->value, &slot);
        facts->ua = ua;
    }

    if (ua & NGX_HTTP_HPACK_UA_KNOWN) {
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
        ngx_http_hpack_ua_learn(slot, &h->value, ua);
    }

    return rc;
}
