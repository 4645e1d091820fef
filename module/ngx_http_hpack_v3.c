
/*
 * HTTP/3 field compression by the codec's QPACK (codec/include/qpack.h):
 * response sections by its encoder, with a dynamic table, instead of
 * nginx's static-only ones; request sections and the peer's encoder stream
 * by its decoder, instead of nginx's.  "hpack_http3 on" takes a
 * connection; the host patch's HTTP/3 hooks (ngx_http_v3_qpack_hooks)
 * bring here the peer's SETTINGS, its encoder and decoder streams, every
 * request section and every response section (headers, 103 Early Hints,
 * trailers).  Each decoded field goes to nginx as nginx's own decoder
 * hands it over: ngx_http_v3_process_request() gives it to
 * ngx_http_v3_process_header(), which decides what it means.
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

#include <qpack.h>

/*
 * nginx exposes no function for what a stream's send() takes now: it is
 * computed from the QUIC connection's own state, as
 * ngx_quic_stream_send_chain() and ngx_quic_stream_flush() compute it
 */
#include <ngx_event_quic_connection.h>


#define NGX_HTTP_HPACK_V3_MAX_TABLE_CAPACITY  0x01
#define NGX_HTTP_HPACK_V3_BLOCKED_STREAMS     0x07

/* H3_MESSAGE_ERROR (RFC 9114 8.1), which nginx does not name */
#define NGX_HTTP_HPACK_V3_MESSAGE_ERROR       0x10e

/* fields per qpack_decode_fields() call */
#define NGX_HTTP_HPACK_V3_BATCH               16

/* streams named per qpack_decoder_unblocked() call */
#define NGX_HTTP_HPACK_V3_UNBLOCKED           16


/* per connection, in the QUIC connection's pool */

typedef struct {
    qpack_encoder_t                   *encoder;
    hpack_allocator_t                  allocator;

    ngx_http_hpack_srv_conf_t         *conf;
    ngx_http_hpack_main_conf_t        *main_conf;

    /* the encoder stream, once opened */
    ngx_connection_t                  *stream;

    /* request sections: the peer's dynamic table */
    qpack_decoder_t                   *decoder;

    /* of ngx_http_hpack_v3_section_t, waiting for inserts */
    ngx_queue_t                        blocked;

    /* the peer's SETTINGS, applied to the encoder once the frame ends */
    uint64_t                           peer_capacity;
    uint64_t                           peer_blocked;

    /* hpack_status: HTTP/3's counters, the indexed fields added to them */
    ngx_http_hpack_status_t           *status;
    uint64_t                           out_indexed;

    unsigned                           settings_done:1;
} ngx_http_hpack_v3_conn_t;


/*
 * A request stream's field section, in the stream's pool: the HEADERS
 * frame's payload (in nginx's buffer when it came whole, else gathered
 * here) and the decoded fields not yet handed to nginx
 */

typedef struct {
    ngx_queue_t                        queue;
    ngx_connection_t                  *connection;
    ngx_http_hpack_v3_conn_t          *hc;

    u_char                            *payload;
    size_t                             size;
    size_t                             have;
    u_char                            *buf;

    /* octets of nginx's buffer consumed when the last field is handed */
    size_t                             hold;

    qpack_field_t                      fields[NGX_HTTP_HPACK_V3_BATCH];
    size_t                             nfields;
    size_t                             next;
    int                                error;

    /* hpack_status: the section's sums so far */
    size_t                             plain;
    ngx_uint_t                         lines;
    uint64_t                           indexed;

    unsigned                           begun:1;
    unsigned                           end:1;
    unsigned                           blocked:1;
    unsigned                           cancelled:1;
} ngx_http_hpack_v3_section_t;


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
static ngx_int_t ngx_http_hpack_v3_encoder_stream(ngx_connection_t *c,
    ngx_buf_t *b);
static ngx_int_t ngx_http_hpack_v3_decode_section(ngx_connection_t *c,
    ngx_http_v3_parse_headers_t *st, ngx_buf_t *b);
static ngx_int_t ngx_http_hpack_v3_gather(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s, ngx_http_v3_parse_headers_t *st,
    ngx_buf_t *b);
static ngx_int_t ngx_http_hpack_v3_fields(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s);
static ngx_int_t ngx_http_hpack_v3_field(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s, ngx_str_t *name, ngx_str_t *value);
static ngx_int_t ngx_http_hpack_v3_decode_error(ngx_connection_t *c, int rc);
static void ngx_http_hpack_v3_sum_fields(ngx_http_hpack_v3_section_t *s);
static ngx_int_t ngx_http_hpack_v3_refuse(ngx_http_hpack_v3_conn_t *hc,
    ngx_uint_t kind, ngx_int_t err);
static ngx_int_t ngx_http_hpack_v3_cancel_stream(ngx_connection_t *c,
    ngx_uint_t stream_id);
static ngx_http_hpack_v3_section_t *ngx_http_hpack_v3_section(
    ngx_connection_t *c, ngx_http_hpack_v3_conn_t *hc);
static void ngx_http_hpack_v3_section_cleanup(void *data);
static ngx_int_t ngx_http_hpack_v3_decoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc);
static ngx_int_t ngx_http_hpack_v3_send_decoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc);
static size_t ngx_http_hpack_v3_stream_room(ngx_connection_t *sc);
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
    ngx_connection_t          *c;
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
     * itself would take as literals.
     */

    budget = 0;
    stream_out = NULL;

    if (hc->settings_done && hc->peer_capacity && hc->conf->http3_table_size)
    {
        if (hc->stream == NULL) {
            hc->stream = ngx_http_v3_get_uni_stream(c,
                                                NGX_HTTP_V3_STREAM_ENCODER);
            if (hc->stream == NULL) {
                return NGX_ERROR;
            }
        }

        budget = ngx_min(ngx_http_hpack_v3_stream_room(hc->stream), bound);

        if (budget) {
            stream_out = ngx_http_hpack_pnalloc(r->pool, budget);
            if (stream_out == NULL) {
                return NGX_ERROR;
            }
        }
    }

    rc = qpack_encode(hc->encoder, c->quic->id, hs, n, out, bound, &len,
                      stream_out, budget, &stream_len);

    if (rc != QPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, c->log, 0, "qpack_encode() failed: %s",
                      qpack_strerror(rc));
        return NGX_ERROR;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "qpack section: %uz bytes, encoder stream %uz of %uz",
                   len, stream_len, budget);

    if (stream_len) {
        h3c->total_bytes += stream_len;

        sent = hc->stream->send(hc->stream, stream_out, stream_len);

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

static size_t
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


/*
 * The peer's encoder stream (c), all of what has arrived: inserts into the
 * decoder's table, then the streams they unblock are read again and the
 * Insert Count Increment is sent
 */

static ngx_int_t
ngx_http_hpack_v3_encoder_stream(ngx_connection_t *c, ngx_buf_t *b)
{
    int                           rc;
    size_t                        i, n, len;
    uint64_t                      ids[NGX_HTTP_HPACK_V3_UNBLOCKED];
    ngx_queue_t                  *q;
    ngx_http_hpack_v3_conn_t     *hc;
    ngx_http_hpack_v3_section_t  *s;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    if (hc->decoder == NULL && ngx_http_hpack_v3_decoder(c, hc) != NGX_OK) {
        return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                        NGX_HTTP_V3_ERR_INTERNAL_ERROR);
    }

    len = b->last - b->pos;

    rc = qpack_decoder_read_encoder(hc->decoder, b->pos, len);

    b->pos = b->last;

    if (rc != QPACK_OK) {

        /* ngx_http_v3_uni_read_handler() closes the connection */

        if (rc == HPACK_E_NOMEM) {
            ngx_log_error(NGX_LOG_CRIT, c->log, 0,
                          "qpack_decoder_read_encoder() failed: %s",
                          qpack_strerror(rc));

        } else {
            ngx_log_error(NGX_LOG_INFO, c->log, 0,
                          "client sent invalid encoder stream: %s",
                          qpack_strerror(rc));
        }

        return qpack_h3_error(rc);
    }

    /* hpack_status: the client's encoder stream, as read */

    if (hc->status) {
        (void) ngx_atomic_fetch_add(&hc->status->in[NGX_HTTP_HPACK_WIRE], len);
        (void) ngx_atomic_fetch_add(&hc->status->in_stream, len);
    }

    do {
        n = qpack_decoder_unblocked(hc->decoder, ids,
                                    NGX_HTTP_HPACK_V3_UNBLOCKED);

        for (i = 0; i < n; i++) {
            for (q = ngx_queue_head(&hc->blocked);
                 q != ngx_queue_sentinel(&hc->blocked);
                 q = ngx_queue_next(q))
            {
                s = ngx_queue_data(q, ngx_http_hpack_v3_section_t, queue);

                if (s->connection->quic->id == ids[i]) {
                    ngx_queue_remove(q);
                    s->blocked = 0;

                    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                                   "qpack unblock stream %uL", ids[i]);

                    ngx_post_event(s->connection->read, &ngx_posted_events);
                    break;
                }
            }
        }

    } while (n == NGX_HTTP_HPACK_V3_UNBLOCKED);

    if (ngx_http_hpack_v3_send_decoder(c, hc) != NGX_OK) {
        return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                        NGX_HTTP_V3_ERR_INTERNAL_ERROR);
    }

    return NGX_AGAIN;
}


/*
 * A request's HEADERS frame (c is its stream): its payload is gathered,
 * its section begun (or blocked) and its fields handed to nginx one a
 * call, copied into the stream's pool as nginx's own decoder copies them
 */

static ngx_int_t
ngx_http_hpack_v3_decode_section(ngx_connection_t *c,
    ngx_http_v3_parse_headers_t *st, ngx_buf_t *b)
{
    int                           rc;
    ngx_int_t                     err;
    ngx_http_hpack_v3_conn_t     *hc;
    ngx_http_hpack_v3_section_t  *s;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    s = ngx_http_hpack_v3_section(c, hc);
    if (s == NULL) {
        return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                        NGX_ERROR);
    }

    if (s->payload == NULL) {
        err = ngx_http_hpack_v3_gather(c, s, st, b);
        if (err != NGX_OK) {
            return err;
        }
    }

    if (!s->begun) {
        if (hc->decoder == NULL && ngx_http_hpack_v3_decoder(c, hc) != NGX_OK)
        {
            return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                            NGX_ERROR);
        }

        rc = qpack_decode_begin(hc->decoder, c->quic->id, s->payload,
                                s->size);

        if (rc == QPACK_BLOCKED) {
            if (!s->blocked) {
                ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                               "qpack block stream %uL", c->quic->id);

                ngx_queue_insert_tail(&hc->blocked, &s->queue);
                s->blocked = 1;
            }

            return NGX_BUSY;
        }

        if (rc != QPACK_OK) {
            return ngx_http_hpack_v3_decode_error(c, rc);
        }

        s->begun = 1;
    }

    if (s->error && s->next == s->nfields) {
        return ngx_http_hpack_v3_decode_error(c, s->error);
    }

    if (s->nfields == 0) {
        if (ngx_http_hpack_v3_fields(c, s) != NGX_OK) {
            return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                            NGX_ERROR);
        }

        if (s->nfields == 0) {
            if (s->error) {
                return ngx_http_hpack_v3_decode_error(c, s->error);
            }

            /* a section of no field: nginx's parser finds no field line */

            ngx_log_error(NGX_LOG_INFO, c->log, 0,
                          "client sent field section without fields");

            return ngx_http_hpack_v3_refuse(hc,
                                            NGX_HTTP_HPACK_ERR_EMPTY_SECTION,
                                            NGX_HTTP_V3_ERR_FRAME_ERROR);
        }
    }

    err = ngx_http_hpack_v3_field(c, s, &st->field_rep.field.name,
                                  &st->field_rep.field.value);
    if (err != NGX_OK) {
        return err;
    }

    /*
     * the field is nginx's copy now: the next batch may be decoded, to
     * know whether this field is the section's last
     */

    if (s->next == s->nfields && !s->end && !s->error
        && ngx_http_hpack_v3_fields(c, s) != NGX_OK)
    {
        return ngx_http_hpack_v3_refuse(hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                        NGX_ERROR);
    }

    if (s->next < s->nfields || !s->end) {
        return NGX_OK;
    }

    b->pos += s->hold;

    return NGX_DONE;
}


/* the section's next fields, or its end or error */

static ngx_int_t
ngx_http_hpack_v3_fields(ngx_connection_t *c, ngx_http_hpack_v3_section_t *s)
{
    int       rc;
    uint64_t  indexed;

    rc = qpack_decode_fields(s->hc->decoder, s->fields,
                             NGX_HTTP_HPACK_V3_BATCH, &s->nfields);
    s->next = 0;

    if (s->hc->status) {
        ngx_http_hpack_v3_sum_fields(s);
    }

    if (rc == QPACK_SECTION_END) {
        s->end = 1;

        /* hpack_status: a section counts when the decoder has ended it */

        if (s->hc->status) {
            indexed = 0;
            ngx_http_hpack_fold(s->hc->status->in, s->size, s->plain,
                                s->lines, s->indexed, &indexed);
        }

        return ngx_http_hpack_v3_send_decoder(c, s->hc);
    }

    if (rc != QPACK_OK) {

        /* the fields before the error go to nginx first, as stock's */

        s->error = rc;
    }

    return NGX_OK;
}


/*
 * The frame's payload: where nginx's buffer holds it whole it is decoded
 * there, else it is gathered into the stream's pool; either way the last
 * octet stays in nginx's buffer until the last field is handed over
 */

static ngx_int_t
ngx_http_hpack_v3_gather(ngx_connection_t *c, ngx_http_hpack_v3_section_t *s,
    ngx_http_v3_parse_headers_t *st, ngx_buf_t *b)
{
    size_t                     n, max;
    ngx_http_core_srv_conf_t  *cscf;

    if (s->buf == NULL) {

        if ((size_t) (b->last - b->pos) >= st->length) {
            s->payload = b->pos;
            s->size = st->length;
            s->hold = st->length;
            return NGX_OK;
        }

        /*
         * nginx's own limits are on the decoded fields, checked by
         * ngx_http_v3_process_header(); the frame itself is bounded by
         * twice their sum
         */

        cscf = ngx_http_v3_get_module_srv_conf(c, ngx_http_core_module);

        max = 2 * cscf->large_client_header_buffers.size
                * cscf->large_client_header_buffers.num;

        if (st->length > max) {
            ngx_log_error(NGX_LOG_INFO, c->log, 0,
                          "client sent too large field section");
            return ngx_http_hpack_v3_refuse(s->hc, NGX_HTTP_HPACK_ERR_LIMITS,
                                            NGX_HTTP_V3_ERR_EXCESSIVE_LOAD);
        }

        s->buf = ngx_http_hpack_pnalloc(c->pool, st->length);
        if (s->buf == NULL) {
            return ngx_http_hpack_v3_refuse(s->hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                            NGX_ERROR);
        }

        s->size = st->length;
    }

    n = ngx_min((size_t) (b->last - b->pos), s->size - s->have);

    ngx_memcpy(s->buf + s->have, b->pos, n);
    s->have += n;

    if (s->have < s->size) {
        b->pos += n;
        return NGX_AGAIN;
    }

    b->pos += n - 1;

    s->payload = s->buf;
    s->hold = 1;

    return NGX_OK;
}


/* the next decoded field, as nginx's parser leaves one */

static ngx_int_t
ngx_http_hpack_v3_field(ngx_connection_t *c, ngx_http_hpack_v3_section_t *s,
    ngx_str_t *name, ngx_str_t *value)
{
    u_char         *p;
    qpack_field_t  *f;

    f = &s->fields[s->next++];

    if (f->name_len == 0) {

        /*
         * a malformed request (RFC 9114 4.1.2, RFC 9110 5.1); nginx's
         * parser takes no empty name either
         */

        ngx_log_error(NGX_LOG_INFO, c->log, 0,
                      "client sent zero field name length");

        return NGX_HTTP_HPACK_V3_MESSAGE_ERROR;
    }

    p = ngx_http_hpack_pnalloc(c->pool, f->name_len + f->value_len + 2);
    if (p == NULL) {
        return NGX_ERROR;
    }

    name->len = f->name_len;
    name->data = p;
    p = ngx_cpymem(p, f->name, f->name_len);
    *p++ = '\0';

    value->len = f->value_len;
    value->data = p;
    p = ngx_cpymem(p, f->value, f->value_len);
    *p = '\0';

    ngx_log_debug4(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "qpack field: \"%*s: %*s\"",
                   f->name_len, f->name, f->value_len, f->value);

    return NGX_OK;
}


/*
 * A request section's error: a limit of ours (a string longer than
 * large_client_header_buffers, as nginx's parser refuses it) ends the
 * stream, its Stream Cancellation sent; any other error ends the
 * connection (RFC 9204 2.2)
 */

static ngx_int_t
ngx_http_hpack_v3_decode_error(ngx_connection_t *c, int rc)
{
    ngx_uint_t                 err;
    ngx_http_hpack_v3_conn_t  *hc;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    ngx_http_hpack_count_qpack_error(hc->status, rc);

    err = qpack_h3_error(rc);

    if (err == QPACK_H3_EXCESSIVE_LOAD) {
        ngx_log_error(NGX_LOG_INFO, c->log, 0,
                      "client sent too large field line");

        if (ngx_http_hpack_v3_send_decoder(c, hc) != NGX_OK) {
            return NGX_ERROR;
        }

        return err;
    }

    if (err == QPACK_H3_INTERNAL_ERROR) {
        ngx_log_error(NGX_LOG_CRIT, c->log, 0, "qpack decoder failed: %s",
                      qpack_strerror(rc));

    } else {
        ngx_log_error(NGX_LOG_INFO, c->log, 0,
                      "client sent invalid qpack: %s", qpack_strerror(rc));
    }

    ngx_http_v3_finalize_connection(c, err, "qpack decoding failed");

    return err;
}


/*
 * hpack_status: the batch of fields the decoder has just returned, added
 * to the section's sums (folded when the section ends)
 */

static void
ngx_http_hpack_v3_sum_fields(ngx_http_hpack_v3_section_t *s)
{
    size_t          i;
    qpack_field_t  *f;

    for (i = 0; i < s->nfields; i++) {
        f = &s->fields[i];

        s->plain += f->name_len + f->value_len;
        s->indexed += (f->representation == HPACK_REP_INDEXED);
    }

    s->lines += s->nfields;
}


/* hpack_status: a section or a QPACK stream refused by the glue, by kind */

static ngx_int_t
ngx_http_hpack_v3_refuse(ngx_http_hpack_v3_conn_t *hc, ngx_uint_t kind,
    ngx_int_t err)
{
    if (hc->status) {
        (void) ngx_atomic_fetch_add(&hc->status->errors[kind], 1);
    }

    return err;
}


/*
 * The request stream c is reset or abandoned before its section was read
 * (ngx_http_v3_reset_stream()): the decoder forgets the stream and owes a
 * Stream Cancellation
 */

static ngx_int_t
ngx_http_hpack_v3_cancel_stream(ngx_connection_t *c, ngx_uint_t stream_id)
{
    int                           rc;
    ngx_pool_cleanup_t           *cln;
    ngx_http_hpack_v3_conn_t     *hc;
    ngx_http_hpack_v3_section_t  *s;

    hc = ngx_http_v3_get_session(c)->qpack_ctx;

    for (cln = c->pool->cleanup; cln; cln = cln->next) {
        if (cln->handler == ngx_http_hpack_v3_section_cleanup) {
            s = cln->data;
            s->cancelled = 1;

            if (s->blocked) {
                ngx_queue_remove(&s->queue);
                s->blocked = 0;
            }

            break;
        }
    }

    if (hc->decoder == NULL) {
        return NGX_OK;
    }

    rc = qpack_decoder_cancel_stream(hc->decoder, stream_id);

    if (rc == HPACK_E_STATE) {

        /* the decoder failed: its error is closing the connection */

        return NGX_OK;
    }

    if (rc != QPACK_OK) {
        ngx_log_error(NGX_LOG_CRIT, c->log, 0,
                      "qpack_decoder_cancel_stream() failed: %s",
                      qpack_strerror(rc));
        return NGX_ERROR;
    }

    return ngx_http_hpack_v3_send_decoder(c, hc);
}


/* the request stream's section state, made on its first call */

static ngx_http_hpack_v3_section_t *
ngx_http_hpack_v3_section(ngx_connection_t *c, ngx_http_hpack_v3_conn_t *hc)
{
    ngx_pool_cleanup_t           *cln;
    ngx_http_hpack_v3_section_t  *s;

    for (cln = c->pool->cleanup; cln; cln = cln->next) {
        if (cln->handler == ngx_http_hpack_v3_section_cleanup) {
            return cln->data;
        }
    }

    cln = ngx_http_hpack_pool_cleanup_add(c->pool,
                                          sizeof(ngx_http_hpack_v3_section_t));
    if (cln == NULL) {
        return NULL;
    }

    s = cln->data;
    ngx_memzero(s, sizeof(ngx_http_hpack_v3_section_t));

    s->connection = c;
    s->hc = hc;

    cln->handler = ngx_http_hpack_v3_section_cleanup;

    return s;
}


/*
 * The stream closes: a section still blocked or not read to its end is
 * abandoned (RFC 9204 2.2.2.2), unless ngx_http_v3_reset_stream() has
 * cancelled it already or the connection is closing
 */

static void
ngx_http_hpack_v3_section_cleanup(void *data)
{
    ngx_http_hpack_v3_section_t  *s = data;

    ngx_connection_t       *c;
    ngx_quic_connection_t  *qc;

    if (s->blocked) {
        ngx_queue_remove(&s->queue);
        s->blocked = 0;

    } else if (!s->begun || s->end) {
        return;
    }

    if (s->cancelled) {
        return;
    }

    c = s->connection;
    qc = ngx_quic_get_connection(c->quic->parent);

    if (qc->closing) {
        return;
    }

    (void) ngx_http_hpack_v3_cancel_stream(c, c->quic->id);
}


/*
 * The connection's decoder, on the peer's first encoder-stream octets or
 * request: nginx's http3_max_table_capacity and http3_max_blocked_streams,
 * which its SETTINGS announced, and the longest string nginx's parser
 * takes
 */

static ngx_int_t
ngx_http_hpack_v3_decoder(ngx_connection_t *c, ngx_http_hpack_v3_conn_t *hc)
{
    ngx_http_v3_srv_conf_t    *h3scf;
    ngx_http_core_srv_conf_t  *cscf;

    h3scf = ngx_http_v3_get_module_srv_conf(c, ngx_http_v3_module);

    hc->decoder = qpack_decoder_create(&hc->allocator,
                                       h3scf->max_table_capacity,
                                       h3scf->max_blocked_streams);
    if (hc->decoder == NULL) {
        ngx_log_error(NGX_LOG_CRIT, c->log, 0, "qpack_decoder_create() failed");
        return NGX_ERROR;
    }

    cscf = ngx_http_v3_get_module_srv_conf(c, ngx_http_core_module);

    qpack_decoder_set_string_limit(hc->decoder,
                                   cscf->large_client_header_buffers.size);

    return NGX_OK;
}


/*
 * What the decoder owes the peer (Section Acknowledgments, Stream
 * Cancellations, the Insert Count Increment), as much as the decoder
 * stream takes now; the rest waits for the next call
 */

static ngx_int_t
ngx_http_hpack_v3_send_decoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc)
{
    size_t                   n, room;
    u_char                   buf[64];
    ngx_connection_t        *dc;
    ngx_http_v3_srv_conf_t  *h3scf;

    h3scf = ngx_http_v3_get_module_srv_conf(c, ngx_http_v3_module);

    /* at capacity 0 the decoder owes nothing (RFC 9204 2.2.2.2, 4.4) */

    if (h3scf->max_table_capacity == 0) {
        return NGX_OK;
    }

    dc = ngx_http_v3_get_uni_stream(c, NGX_HTTP_V3_STREAM_DECODER);
    if (dc == NULL) {
        return NGX_ERROR;
    }

    for ( ;; ) {
        room = ngx_min(ngx_http_hpack_v3_stream_room(dc), sizeof(buf));

        n = qpack_decoder_drain(hc->decoder, buf, room);

        if (n == 0) {
            return NGX_OK;
        }

        ngx_http_v3_get_session(c)->total_bytes += n;

        if (dc->send(dc, buf, n) != (ssize_t) n) {
            ngx_log_error(NGX_LOG_ERR, c->log, 0,
                          "failed to send qpack decoder instructions");
            return NGX_ERROR;
        }

        if (n < room) {
            return NGX_OK;
        }
    }
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
