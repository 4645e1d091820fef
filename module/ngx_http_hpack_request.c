
/*
 * Request header blocks: the codec's dynamic table replaces nginx's.  Every
 * field gets what ngx_http_v2_state_process_header() gives it: the size
 * budget, validation by the rules of ngx_http_v2_validate_header(), and
 * nginx's own pseudo-header parser, cookie and headers_in handlers.  What
 * holds for a table entry (its name's hash and handler, the validation
 * outcome, the user-agent class the handler set) is found the first time
 * and kept in the entry's memo for every indexed reference.
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
static void ngx_http_hpack_name_facts(ngx_http_core_main_conf_t *cmcf,
    const u_char *name, size_t len, ngx_http_hpack_memo_t *facts);
static ngx_int_t ngx_http_hpack_copy_field(ngx_http_v2_connection_t *h2c,
    ngx_http_hpack_conn_t *hc, hpack_field_t *f,
    ngx_http_v2_header_t *header);
static ngx_uint_t ngx_http_hpack_validate_name(const u_char *name,
    size_t len, ngx_uint_t underscores);
static ngx_uint_t ngx_http_hpack_validate_value(const u_char *value,
    size_t len);
static ngx_inline ngx_uint_t ngx_http_hpack_validate_words(const u_char *p,
    const u_char *q);
static ngx_uint_t ngx_http_hpack_validate_octets(const u_char *value,
    size_t len);
static ngx_int_t ngx_http_hpack_never_indexed(ngx_http_request_t *r,
    ngx_str_t *value);
static ngx_int_t ngx_http_hpack_pseudo_header(ngx_http_request_t *r,
    ngx_http_v2_header_t *header);
static ngx_int_t ngx_http_hpack_header_in(ngx_http_request_t *r,
    ngx_http_v2_header_t *header, ngx_http_hpack_memo_t *facts);
static ngx_int_t ngx_http_hpack_user_agent(ngx_http_request_t *r,
    ngx_table_elt_t *h, ngx_http_hpack_memo_t *facts);
static ngx_int_t ngx_http_hpack_static_string(ngx_pool_t *pool,
    ngx_str_t *dst, ngx_str_t *src);


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
    ngx_http_hpack_memo_t     *facts, local;
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

    facts = ngx_http_hpack_field_facts(r, hc, f, us, &local);

    if (ngx_http_hpack_copy_field(h2c, hc, f, &header) != NGX_OK) {
        return HPACK_H2_INTERNAL_ERROR;
    }

    /* ngx_http_v2_validate_header(), from the facts */

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
        rc = ngx_http_hpack_pseudo_header(r, &header);

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
        rc = ngx_http_hpack_header_in(r, &header, facts);
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
 * of its name, the memo of the entry its name refers to, or found now.
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


/* a name's facts, into a memo cleared first */

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

        p = ngx_cpymem(p, f->name, f->name_len);
        *p++ = '\0';
    }

    header->value.len = f->value_len;
    header->value.data = p;

    p = ngx_cpymem(p, f->value, f->value_len);
    *p = '\0';

    return NGX_OK;
}


/*
 * The rules of ngx_http_v2_validate_header(), split in two so that the
 * outcome for a name is kept apart from the outcome for a value
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


/*
 * A value is refused for NUL, LF or CR.  Sixteen octets a test, as two
 * words, the last two overlapping the ones before: a word with no octet
 * below 0x0e has none of them, and the rare words that have one (a tab)
 * are looked at octet by octet.
 */

static ngx_uint_t
ngx_http_hpack_validate_value(const u_char *value, size_t len)
{
    size_t  i;

    if (len < 8) {
        return ngx_http_hpack_validate_octets(value, len);
    }

    if (len <= 16) {
        return ngx_http_hpack_validate_words(value, value + len - 8);
    }

    for (i = 0; i + 16 < len; i += 16) {
        if (ngx_http_hpack_validate_words(value + i, value + i + 8)
            == NGX_HTTP_HPACK_BAD)
        {
            return NGX_HTTP_HPACK_BAD;
        }
    }

    return ngx_http_hpack_validate_words(value + len - 16, value + len - 8);
}


/* the words at p and q, eight octets each */

static ngx_inline ngx_uint_t
ngx_http_hpack_validate_words(const u_char *p, const u_char *q)
{
    uint64_t  a, b;

    ngx_memcpy(&a, p, 8);
    ngx_memcpy(&b, q, 8);

    a = (a - 0x0e0e0e0e0e0e0e0eULL) & ~a;
    b = (b - 0x0e0e0e0e0e0e0e0eULL) & ~b;

    if ((a | b) & 0x8080808080808080ULL) {
        if (ngx_http_hpack_validate_octets(p, 8) == NGX_HTTP_HPACK_BAD) {
            return NGX_HTTP_HPACK_BAD;
        }

        return ngx_http_hpack_validate_octets(q, 8);
    }

    return NGX_HTTP_HPACK_VALID;
}


static ngx_uint_t
ngx_http_hpack_validate_octets(const u_char *value, size_t len)
{
    u_char  ch;
    size_t  i;

    for (i = 0; i != len; i++) {
        ch = value[i];

        if (ch == '\0' || ch == LF || ch == CR) {
            return NGX_HTTP_HPACK_BAD;
        }
    }

    return NGX_HTTP_HPACK_VALID;
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
 * A pseudo-header goes to stock's parser: NGX_DECLINED when the request was
 * ended, NGX_ERROR on a failure of ours
 */

static ngx_int_t
ngx_http_hpack_pseudo_header(ngx_http_request_t *r,
    ngx_http_v2_header_t *header)
{
    ngx_int_t  rc;

    rc = ngx_http_v2_hpack_pseudo_header(r, header);

    if (rc == NGX_OK) {
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "http2 header: \":%V: %V\"",
                       &header->name, &header->value);
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
 * A regular field joins the cookies or headers_in and goes to its
 * handler: NGX_DECLINED when the handler refused it and ended the
 * request, NGX_ERROR on a failure of ours.
 */

static ngx_int_t
ngx_http_hpack_header_in(ngx_http_request_t *r, ngx_http_v2_header_t *header,
    ngx_http_hpack_memo_t *facts)
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
 * it sees the request's first user-agent: the flags it set are kept in the
 * facts (the entry's memo) and set from there on the entry's next
 * references.  A request's second user-agent goes to the handler.
 */

static ngx_int_t
ngx_http_hpack_user_agent(ngx_http_request_t *r, ngx_table_elt_t *h,
    ngx_http_hpack_memo_t *facts)
{
    u_char              ua;
    ngx_int_t           rc;
    ngx_http_header_t  *hh;

    hh = facts->hh;
    ua = facts->ua;

    if (r->headers_in.user_agent == NULL && (ua & NGX_HTTP_HPACK_UA_KNOWN)) {
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

    /* the handler takes h as the user-agent only when it is the first */

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


/* a static entry's string, NUL-terminated as a request's strings are */

static ngx_int_t
ngx_http_hpack_static_string(ngx_pool_t *pool, ngx_str_t *dst, ngx_str_t *src)
{
    dst->len = src->len;
    dst->data = ngx_pnalloc(pool, src->len + 1);
    if (dst->data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(dst->data, src->data, src->len);
    dst->data[src->len] = '\0';

    return NGX_OK;
}


/*
 * per static-table entry: its strings, its name's facts and validity, its
 * value's validity, once per cycle
 */

ngx_int_t
ngx_http_hpack_init_statics(ngx_conf_t *cf, ngx_http_hpack_main_conf_t *hmcf)
{
    ngx_uint_t                  i;
    ngx_http_hpack_static_t    *st;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    for (i = 1; i <= NGX_HTTP_HPACK_STATIC_ENTRIES; i++) {
        st = &hmcf->statics[i];

        if (ngx_http_hpack_static_string(cf->pool, &st->name,
                                         ngx_http_v2_get_static_name(i))
            != NGX_OK
            || ngx_http_hpack_static_string(cf->pool, &st->value,
                                            ngx_http_v2_get_static_value(i))
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_hpack_name_facts(cmcf, st->name.data, st->name.len,
                                  &st->facts);

        st->facts.name_state[0] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 0);
        st->facts.name_state[1] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 1);
        st->value_state = ngx_http_hpack_validate_value(st->value.data,
                                                        st->value.len);
    }

    return NGX_OK;
}
