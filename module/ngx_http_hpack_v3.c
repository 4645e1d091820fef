
/*
 * HTTP/3 field compression by the codec's QPACK (codec/include/qpack.h).
 * "hpack_http3 on" takes a connection; the host patch's HTTP/3 hooks
 * (ngx_http_v3_qpack_hooks) bring here the peer's SETTINGS, its decoder
 * stream and every response section (headers, 103 Early Hints, trailers),
 * which the codec's encoder encodes with a dynamic table instead of
 * nginx's static-only ones.  Request sections and the peer's encoder
 * stream, by the codec's decoder, are ngx_http_hpack_v3_request.c's.
 *
 * Built only when config finds the hooks in the tree
 * (NGX_HTTP_HPACK_V3): nginx without HTTP/3, or a line whose patch has no
 * HTTP/3 hooks, builds the module without this file's code.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"


#if (NGX_HTTP_HPACK_V3)

#include "ngx_http_hpack_v3.h"


static ngx_int_t ngx_http_hpack_v3_init_session(ngx_connection_t *c);
static ngx_int_t ngx_http_hpack_v3_set_param(ngx_connection_t *c,
    uint64_t id, uint64_t value);
static ngx_int_t ngx_http_hpack_v3_settings_done(ngx_connection_t *c);
static ngx_int_t ngx_http_hpack_v3_decoder_instruction(ngx_connection_t *c,
    ngx_uint_t type, uint64_t value);
static ngx_int_t ngx_http_hpack_v3_encode_headers(ngx_http_request_t *r,
    u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_v3_encode_trailers(ngx_http_request_t *r,
    u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_v3_encode_early_hints(ngx_http_request_t *r,
    u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_v3_encode(ngx_http_request_t *r,
    hpack_header_t *hs, ngx_uint_t n, u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_v3_encoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc);
static void *ngx_http_hpack_v3_alloc(void *ctx, size_t size);
static void ngx_http_hpack_v3_free(void *ctx, void *p);
static void ngx_http_hpack_v3_destroy(void *data);


static ngx_http_v3_qpack_hooks_t  ngx_http_hpack_v3_hooks = {
    ngx_http_hpack_v3_init_session,
    ngx_http_hpack_v3_set_param,
    ngx_http_hpack_v3_settings_done,
    ngx_http_hpack_v3_decoder_instruction,
    ngx_http_hpack_v3_encode_headers,
    ngx_http_hpack_v3_encode_trailers,
    ngx_http_hpack_v3_encode_early_hints,
    ngx_http_hpack_v3_encoder_stream,
    ngx_http_hpack_v3_decode_section,
    ngx_http_hpack_v3_cancel_stream
};


void
ngx_http_hpack_v3_hook(void)
{
    ngx_http_v3_qpack_hooks = ngx_http_hpack_v3_hooks;
}


void
ngx_http_hpack_v3_unhook(void)
{
    ngx_memzero(&ngx_http_v3_qpack_hooks, sizeof(ngx_http_v3_qpack_hooks_t));
}


/*
 * An HTTP/3 connection (c, the QUIC connection) whose handshake is done:
 * the server is the one SNI chose, as for nginx's http3 settings
 */

static ngx_int_t
ngx_http_hpack_v3_init_session(ngx_connection_t *c)
{
    ngx_http_v3_session_t      *h3c;
    ngx_http_hpack_v3_conn_t   *hc;
    ngx_http_hpack_srv_conf_t  *hscf;

    hscf = ngx_http_v3_get_module_srv_conf(c, ngx_http_hpack_module);

    if (!hscf->http3) {
        return NGX_OK;
    }

    hc = ngx_http_hpack_pcalloc(c->pool, sizeof(ngx_http_hpack_v3_conn_t));
    if (hc == NULL) {
        return NGX_ERROR;
    }

    /* the encoder's memory is the connection pool's, freed with it */

    hc->allocator.alloc = ngx_http_hpack_v3_alloc;
    hc->allocator.free = ngx_http_hpack_v3_free;
    hc->allocator.ctx = c->pool;

    ngx_queue_init(&hc->blocked);

    hc->conf = hscf;
    hc->main_conf = ngx_http_get_module_main_conf(
                                  ngx_http_quic_get_connection(c)->conf_ctx,
                                  ngx_http_hpack_module);

    if (ngx_http_hpack_status_open(c->pool, NGX_HTTP_HPACK_H3, &hc->allocator,
                                   ngx_http_hpack_v3_destroy, hc, &hc->status)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    h3c = ngx_http_v3_get_session(c);
    h3c->qpack_ctx = hc;

    return NGX_OK;
}


static ngx_int_t
ngx_http_hpack_v3_set_param(ngx_connection_t *c, uint64_t id, uint64_t value)
{
    ngx_http_hpack_v3_conn_t  *hc;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    switch (id) {

    case NGX_HTTP_HPACK_V3_MAX_TABLE_CAPACITY:
        hc->peer_capacity = value;
        break;

    case NGX_HTTP_HPACK_V3_BLOCKED_STREAMS:
        hc->peer_blocked = value;
        break;
    }

    return NGX_OK;
}


/*
 * The peer's SETTINGS are complete (nginx refuses a second frame).  A
 * parameter the frame did not carry is 0: an empty frame, or none, keeps
 * the encoder static-only.
 */

static ngx_int_t
ngx_http_hpack_v3_settings_done(ngx_connection_t *c)
{
    ngx_http_hpack_v3_conn_t  *hc;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    if (hc->settings_done) {
        return NGX_OK;
    }

    hc->settings_done = 1;

    if (hc->encoder
        && qpack_encoder_set_peer_settings(hc->encoder, hc->peer_capacity,
                                           hc->peer_blocked)
           != QPACK_OK)
    {
        ngx_log_error(NGX_LOG_ALERT, c->log, 0,
                      "qpack_encoder_set_peer_settings() failed");
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * One instruction of the peer's decoder stream, as nginx parsed it: its
 * octets are written back for the encoder, which reads the stream raw
 */

static ngx_int_t
ngx_http_hpack_v3_decoder_instruction(ngx_connection_t *c, ngx_uint_t type,
    uint64_t value)
{
    int                        rc;
    u_char                    *p, buf[NGX_HTTP_V3_PREFIX_INT_LEN];
    ngx_http_hpack_v3_conn_t  *hc;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    if (hc->encoder == NULL) {

        /*
         * nothing was encoded yet: nothing to acknowledge or count, and a
         * stream with no section need not be known (RFC 9204 4.4.2)
         */

        if (type == 0x40) {
            return NGX_OK;
        }

        ngx_log_error(NGX_LOG_INFO, c->log, 0,
                      "client sent decoder instruction 0x%02xi "
                      "before any field section", type);

        return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_DECODER_STREAM,
                                        NGX_HTTP_V3_ERR_DECODER_STREAM_ERROR);
    }

    buf[0] = (u_char) type;
    p = (u_char *) ngx_http_v3_encode_prefix_int(buf, value,
                                                 type == 0x80 ? 7 : 6);

    rc = qpack_encoder_read_decoder(hc->encoder, buf, p - buf);

    if (rc != QPACK_OK) {
        ngx_log_error(NGX_LOG_INFO, c->log, 0,
                      "client sent invalid decoder instruction: %s",
                      qpack_strerror(rc));

        ngx_http_hpack_count_qpack_error(hc->status, rc);

        return qpack_h3_error(rc);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_hpack_v3_encode_headers(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    ngx_uint_t                 n;
    hpack_header_t            *hs;
    ngx_http_hpack_v3_conn_t  *hc;
    hpack_header_t             local[NGX_HTTP_HPACK_LOCAL_FIELDS];
    u_char                     status[NGX_INT_T_LEN];

    hc = ngx_http_v3_get_session(r->connection)->qpack_ctx;

    if (ngx_http_hpack_header_fields(r, hc->main_conf, local, status, &hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_v3_encode(r, hs, n, start, end);
}


static ngx_int_t
ngx_http_hpack_v3_encode_trailers(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    ngx_uint_t       n;
    hpack_header_t  *hs;
    hpack_header_t   local[NGX_HTTP_HPACK_LOCAL_FIELDS];

    if (ngx_http_hpack_list_fields(r, &r->headers_out.trailers, NULL, local,
                                   &hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_v3_encode(r, hs, n, start, end);
}


/* ngx_http_v3_early_hints_filter() has checked that there is a field */

static ngx_int_t
ngx_http_hpack_v3_encode_early_hints(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    ngx_uint_t       n;
    hpack_header_t  *hs;
    hpack_header_t   local[NGX_HTTP_HPACK_LOCAL_FIELDS];

    if (ngx_http_hpack_list_fields(r, &r->headers_out.headers, "103", local,
                                   &hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_v3_encode(r, hs, n, start, end);
}


/*
 * A section of the request's stream.  The encoder-stream octets it needs
 * are at most what the encoder stream's send() takes now, and are handed
 * to it before the section is returned, so they are queued ahead of the
 * HEADERS frame and never cut short.
 */

static ngx_int_t
ngx_http_hpack_v3_encode(ngx_http_request_t *r, hpack_header_t *hs,
    ngx_uint_t n, u_char **start, u_char **end)
{
    int                        rc;
    u_char                    *out, *stream_out;
    size_t                     bound, len, plain, literal, budget, stream_len;
    ssize_t                    sent;
    ngx_uint_t                 i;
    hpack_stats_t              stats;
    ngx_connection_t          *c, *sc;
    ngx_http_v3_session_t     *h3c;
    ngx_http_hpack_v3_conn_t  *hc;

    c = r->connection;
    h3c = ngx_http_v3_get_session(c);
    hc = h3c->qpack_ctx;

    if (hc->encoder == NULL && ngx_http_hpack_v3_encoder(c, hc) != NGX_OK) {
        return NGX_ERROR;
    }

    plain = 0;
    literal = 0;

    for (i = 0; i < n; i++) {
        plain += hs[i].name_len + hs[i].value_len;
        literal += hs[i].value_literal_len;

        ngx_log_debug3(NGX_LOG_DEBUG_HTTP, c->log, 0,
                       "qpack output header: \"%*s: ...\" (%uz bytes)",
                       hs[i].name_len, hs[i].name, hs[i].value_len);
    }

    bound = QPACK_ENCODE_BOUND(n, plain + literal);

    out = ngx_http_hpack_pnalloc(r->pool, bound);
    if (out == NULL) {
        return NGX_ERROR;
    }

    /*
     * The encoder stream is opened when the peer's table can hold
     * something; the section's inserts need at most about what the section
     * itself would take as literals.  Once closed (the connection is
     * closing) it takes nothing more.
     */

    budget = 0;
    stream_out = NULL;
    sc = h3c->known_streams[NGX_HTTP_V3_STREAM_SERVER_ENCODER];

    if (hc->settings_done && hc->peer_capacity && hc->conf->http3_table_size
        && (sc || !hc->stream_opened))
    {
        if (sc == NULL) {
            sc = ngx_http_v3_get_uni_stream(c, NGX_HTTP_V3_STREAM_ENCODER);
            if (sc == NULL) {
                return NGX_ERROR;
            }

            hc->stream_opened = 1;
        }

        budget = ngx_min(ngx_http_hpack_v3_stream_room(sc), bound);

        if (budget) {
            stream_out = ngx_http_hpack_pnalloc(r->pool, budget);
            if (stream_out == NULL) {
                return NGX_ERROR;
            }
        }
    }

    rc = qpack_encode(hc->encoder, c->quic->id, hs, n, out, bound, &len,
                      stream_out, budget, &stream_len);

    if (rc == HPACK_E_STATE) {

        /*
         * an error on the peer's decoder stream failed the encoder and is
         * closing the connection
         */

        return NGX_ERROR;
    }

    if (rc != QPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, c->log, 0, "qpack_encode() failed: %s",
                      qpack_strerror(rc));
        return NGX_ERROR;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "qpack section: %uz bytes, encoder stream %uz of %uz",
                   len, stream_len, budget);

    if (c->quic->send_state != NGX_QUIC_STREAM_SEND_READY
        && c->quic->send_state != NGX_QUIC_STREAM_SEND_SEND)
    {
        /*
         * the stream was reset (the client stopped reading it): the
         * section never goes out and its acknowledgment never comes, so
         * the encoder keeps no entry for it; its inserts go all the same
         */

        (void) qpack_encoder_withdraw(hc->encoder);
    }

    if (stream_len) {
        h3c->total_bytes += stream_len;

        sent = sc->send(sc, stream_out, stream_len);

        if (sent != (ssize_t) stream_len) {

            /* the peer's decoder would miss inserts: the connection ends */

            ngx_log_error(NGX_LOG_ALERT, c->log, 0,
                          "qpack encoder stream took %z of %uz bytes",
                          sent, stream_len);

            ngx_http_v3_finalize_connection(c, NGX_HTTP_V3_ERR_INTERNAL_ERROR,
                                            "encoder stream failed");
            return NGX_ERROR;
        }
    }

    /* hpack_status: the section and its encoder-stream octets */

    if (hc->status) {
        qpack_encoder_stats(hc->encoder, &stats, NULL);

        ngx_http_hpack_fold(hc->status->out, len + stream_len, plain, n,
                            stats.indexed_static + stats.indexed_dynamic,
                            &hc->out_indexed);

        if (stream_len) {
            (void) ngx_atomic_fetch_add(&hc->status->out_stream, stream_len);
        }
    }

    *start = out;
    *end = out + len;

    return NGX_OK;
}


/*
 * The connection's encoder, on its first section: our cap, the policy of
 * hpack_never_index, and the peer's SETTINGS if they have arrived (static
 * only until they do)
 */

static ngx_int_t
ngx_http_hpack_v3_encoder(ngx_connection_t *c, ngx_http_hpack_v3_conn_t *hc)
{
    hc->encoder = qpack_encoder_create(&hc->allocator,
                                       hc->conf->http3_table_size,
                                       hc->conf->policy);
    if (hc->encoder == NULL) {
        ngx_log_error(NGX_LOG_CRIT, c->log, 0, "qpack_encoder_create() failed");
        return NGX_ERROR;
    }

    if (hc->settings_done
        && qpack_encoder_set_peer_settings(hc->encoder, hc->peer_capacity,
                                           hc->peer_blocked)
           != QPACK_OK)
    {
        ngx_log_error(NGX_LOG_ALERT, c->log, 0,
                      "qpack_encoder_set_peer_settings() failed");
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * What the encoder stream sc takes now and can send at once: its send()
 * takes up to its buffer (quic stream_buffer_size beyond what the peer
 * acknowledged), and flow control lets out what the peer's stream and
 * connection windows allow beyond what is buffered already.  The smaller
 * is the encoder's budget: every octet it writes is taken whole, and none
 * waits for the peer's MAX_STREAM_DATA or MAX_DATA.
 */

size_t
ngx_http_hpack_v3_stream_room(ngx_connection_t *sc)
{
    uint64_t                room, max_data;
    ngx_quic_stream_t      *qs;
    ngx_quic_connection_t  *qc;

    qs = sc->quic;
    qc = ngx_quic_get_connection(qs->parent);

    if (qs->send_state != NGX_QUIC_STREAM_SEND_READY
        && qs->send_state != NGX_QUIC_STREAM_SEND_SEND)
    {
        return 0;
    }

    room = qs->acked + qc->conf->stream_buffer_size - qs->sent;

    if (qs->send_max_data <= qs->sent) {
        return 0;
    }

    room = ngx_min(room, qs->send_max_data - qs->sent);

    /* set by ngx_quic_stream_flush() on the first flush */

    max_data = qc->streams.send_max_data ? qc->streams.send_max_data
                                         : qc->ctp.initial_max_data;

    if (max_data <= qc->streams.sent) {
        return 0;
    }

    room = ngx_min(room, max_data - qc->streams.sent);

    return (size_t) room;
}


/* hpack_status: a section or a QPACK stream refused by the glue, by kind */

ngx_int_t
ngx_http_hpack_v3_refuse(ngx_http_hpack_v3_conn_t *hc, ngx_uint_t kind,
    ngx_int_t err)
{
    if (hc->status) {
        (void) ngx_atomic_fetch_add(&hc->status->errors[kind], 1);
    }

    return err;
}


static void *
ngx_http_hpack_v3_alloc(void *ctx, size_t size)
{
    return ngx_http_hpack_palloc((ngx_pool_t *) ctx, size);
}


static void
ngx_http_hpack_v3_free(void *ctx, void *p)
{
    (void) ngx_pfree(ctx, p);
}


/*
 * hpack_status: the codec's objects, when the QUIC connection's pool is
 * freed
 */

static void
ngx_http_hpack_v3_destroy(void *data)
{
    ngx_http_hpack_v3_conn_t  *hc = data;

    qpack_decoder_destroy(hc->decoder);
    qpack_encoder_destroy(hc->encoder);

    hc->decoder = NULL;
    hc->encoder = NULL;
}

#endif /* NGX_HTTP_HPACK_V3 */
