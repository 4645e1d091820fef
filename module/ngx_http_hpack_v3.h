
/*
 * What ngx_http_hpack_v3.c (the connection, its SETTINGS, the response
 * sections and the peer's decoder stream) and ngx_http_hpack_v3_request.c
 * (the request sections and the peer's encoder stream) share.  Included
 * only under NGX_HTTP_HPACK_V3.
 */


#ifndef _NGX_HTTP_HPACK_V3_H_INCLUDED_
#define _NGX_HTTP_HPACK_V3_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <qpack.h>

/*
 * nginx exposes no function for what a stream's send() takes now: it is
 * computed from the QUIC connection's own state, as
 * ngx_quic_stream_send_chain() and ngx_quic_stream_flush() compute it
 */
#include <ngx_event_quic_connection.h>

#include "ngx_http_hpack_module.h"


#define NGX_HTTP_HPACK_V3_MAX_TABLE_CAPACITY  0x01
#define NGX_HTTP_HPACK_V3_BLOCKED_STREAMS     0x07

/* H3_MESSAGE_ERROR (RFC 9114 8.1), which nginx does not name */
#define NGX_HTTP_HPACK_V3_MESSAGE_ERROR       0x10e

/* the least a section's payload gathered in pieces is given at first */
#define NGX_HTTP_HPACK_V3_GATHER              4096

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

    /*
     * the encoder stream was opened: nginx knows it as
     * known_streams[NGX_HTTP_V3_STREAM_SERVER_ENCODER] until it closes,
     * and it is never opened again
     */
    unsigned                           stream_opened:1;
} ngx_http_hpack_v3_conn_t;


/*
 * A request stream's field section, in the stream's pool: the HEADERS
 * frame's payload (in nginx's buffer when it came whole, else gathered
 * here) and the decoded fields not yet handed to nginx; zeroed up to
 * fields[] when made
 */

typedef struct {
    ngx_queue_t                        queue;
    ngx_connection_t                  *connection;
    ngx_http_hpack_v3_conn_t          *hc;

    u_char                            *payload;
    size_t                             size;
    size_t                             have;
    size_t                             cap;
    u_char                            *buf;

    /* octets of nginx's buffer consumed when the last field is handed */
    size_t                             hold;

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

    /* the batch decoded last, its names and values copied to the pool */
    qpack_field_t                      fields[NGX_HTTP_HPACK_V3_BATCH];
} ngx_http_hpack_v3_section_t;


#if (defined __GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ngx_http_hpack_v3.c */

size_t ngx_http_hpack_v3_stream_room(ngx_connection_t *sc);
ngx_int_t ngx_http_hpack_v3_refuse(ngx_http_hpack_v3_conn_t *hc,
    ngx_uint_t kind, ngx_int_t err);

/* ngx_http_hpack_v3_request.c: the hooks of the request side */

ngx_int_t ngx_http_hpack_v3_encoder_stream(ngx_connection_t *c,
    ngx_buf_t *b);
ngx_int_t ngx_http_hpack_v3_decode_section(ngx_connection_t *c,
    ngx_http_v3_parse_headers_t *st, ngx_buf_t *b);
ngx_int_t ngx_http_hpack_v3_cancel_stream(ngx_connection_t *c,
    ngx_uint_t stream_id);

#if (defined __GNUC__)
#pragma GCC visibility pop
#endif


#endif /* _NGX_HTTP_HPACK_V3_H_INCLUDED_ */
