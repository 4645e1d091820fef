
/*
 * HTTP/3 request sections and the peer's encoder stream by the codec's
 * QPACK decoder (the hooks encoder_stream, decode_section and
 * cancel_stream of ngx_http_v3_qpack_hooks).  nginx parses the request
 * stream's frames; a HEADERS frame's payload is decoded here and its
 * fields are handed back one a call, as nginx's own decoder hands them to
 * ngx_http_v3_process_request(), which gives each to
 * ngx_http_v3_process_header().  What the decoder owes the peer goes on
 * nginx's decoder stream.
 *
 * Built only when config finds the hooks in the tree (NGX_HTTP_HPACK_V3).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"


#if (NGX_HTTP_HPACK_V3)

#include "ngx_http_hpack_v3.h"


static ngx_int_t ngx_http_hpack_v3_gather(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s, ngx_http_v3_parse_headers_t *st,
    ngx_buf_t *b);
static ngx_int_t ngx_http_hpack_v3_fields(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s);
static ngx_int_t ngx_http_hpack_v3_field(ngx_connection_t *c,
    ngx_http_hpack_v3_section_t *s, ngx_str_t *name, ngx_str_t *value);
static ngx_int_t ngx_http_hpack_v3_decode_error(ngx_connection_t *c, int rc);
static ngx_http_hpack_v3_section_t *ngx_http_hpack_v3_section(
    ngx_connection_t *c, ngx_http_hpack_v3_conn_t *hc);
static void ngx_http_hpack_v3_section_cleanup(void *data);
static ngx_int_t ngx_http_hpack_v3_decoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc);
static ngx_int_t ngx_http_hpack_v3_send_decoder(ngx_connection_t *c,
    ngx_http_hpack_v3_conn_t *hc);


/*
 * The peer's encoder stream (c), all of what has arrived: inserts into the
 * decoder's table, then the streams they unblock are read again and the
 * Insert Count Increment is sent
 */

ngx_int_t
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

ngx_int_t
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


/*
 * The section's next fields, or its end or error: the batch's names and
 * values are copied into the stream's pool at once, as nginx's own decoder
 * copies each, so that the next batch may be decoded while nginx holds
 * them
 */

static ngx_int_t
ngx_http_hpack_v3_fields(ngx_connection_t *c, ngx_http_hpack_v3_section_t *s)
{
    int             rc;
    u_char         *p;
    size_t          i, len;
    uint64_t        indexed;
    qpack_field_t  *f;

    rc = qpack_decode_fields(s->hc->decoder, s->fields,
                             NGX_HTTP_HPACK_V3_BATCH, &s->nfields);
    s->next = 0;

    if (s->nfields) {
        len = 0;

        for (i = 0; i < s->nfields; i++) {
            len += s->fields[i].name_len + s->fields[i].value_len + 2;
        }

        p = ngx_http_hpack_pnalloc(c->pool, len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        for (i = 0; i < s->nfields; i++) {
            f = &s->fields[i];

            ngx_memcpy(p, f->name, f->name_len);
            f->name = p;
            p += f->name_len;
            *p++ = '\0';

            ngx_memcpy(p, f->value, f->value_len);
            f->value = p;
            p += f->value_len;
            *p++ = '\0';

            /* hpack_status: the section's sums, folded when it ends */

            s->plain += f->name_len + f->value_len;
            s->indexed += (f->representation == HPACK_REP_INDEXED);
        }

        s->lines += s->nfields;
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
    size_t                     n, max, cap;
    u_char                    *p;
    ngx_http_core_srv_conf_t  *cscf;

    if (s->size == 0) {

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

        s->size = st->length;
    }

    n = ngx_min((size_t) (b->last - b->pos), s->size - s->have);

    if (s->have + n > s->cap) {

        /*
         * the buffer grows with what has come, doubling up to the frame's
         * length: a peer that announces a long frame and sends little of
         * it makes the stream hold little
         */

        cap = ngx_min(s->size, ngx_max(2 * s->cap,
                                       ngx_max(s->have + n,
                                               NGX_HTTP_HPACK_V3_GATHER)));

        p = ngx_http_hpack_pnalloc(c->pool, cap);
        if (p == NULL) {
            return ngx_http_hpack_v3_refuse(s->hc, NGX_HTTP_HPACK_ERR_INTERNAL,
                                            NGX_ERROR);
        }

        if (s->have) {
            ngx_memcpy(p, s->buf, s->have);
        }

        s->buf = p;
        s->cap = cap;
    }

    if (n) {
        ngx_memcpy(s->buf + s->have, b->pos, n);
        s->have += n;
    }

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

    name->len = f->name_len;
    name->data = (u_char *) f->name;
    value->len = f->value_len;
    value->data = (u_char *) f->value;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "qpack field: \"%V: %V\"", name, value);

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

    if (rc == HPACK_E_STATE) {

        /* an error before failed the decoder and is closing the connection */

        return NGX_HTTP_V3_ERR_INTERNAL_ERROR;
    }

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
 * The request stream c is reset or abandoned before its section was read
 * (ngx_http_v3_reset_stream()): the decoder forgets the stream and owes a
 * Stream Cancellation
 */

ngx_int_t
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
    ngx_memzero(s, offsetof(ngx_http_hpack_v3_section_t, fields));

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

            /*
             * the instructions drained are lost and the peer's encoder
             * would wait for them: the connection ends, as stock's does
             */

            ngx_log_error(NGX_LOG_ERR, c->log, 0,
                          "failed to send qpack decoder instructions");

            ngx_http_v3_finalize_connection(c, NGX_HTTP_V3_ERR_INTERNAL_ERROR,
                                            "decoder stream failed");
            return NGX_ERROR;
        }

        if (n < room) {
            return NGX_OK;
        }
    }
}

#endif /* NGX_HTTP_HPACK_V3 */
