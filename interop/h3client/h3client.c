
/*
 * h3client: one HTTP/3 connection driven by a script, for tests that need
 * to send chosen or hostile QPACK.  QUIC is libngtcp2's (TLS by gnutls,
 * ALPN "h3", the certificate is not verified); libnghttp3 gives only its
 * QPACK encoder and decoder.  The HTTP/3 framing is this file's own: the
 * control stream and its SETTINGS, the QPACK encoder and decoder streams,
 * HEADERS and DATA frames, so that any octet can be sent.
 *
 *     h3client [-b] [-s] [-t seconds] host port [script]
 *
 * -s keeps the request encoder static-only; -b prints each response's body
 * (its first 64 KiB) as "text"; -t is the time a "wait" takes
 * at most (default 5).  The script (a file, or stdin) has one command a
 * line, '#' starts a comment:
 *
 *     settings <capacity> <blocked>   SETTINGS_QPACK_MAX_TABLE_CAPACITY and
 *                                     _BLOCKED_STREAMS, the first line
 *                                     only (default 4096 100);
 *     settings none | empty           no SETTINGS frame, or an empty one
 *     request <path> [name: value]... a GET, encoded by nghttp3's encoder
 *                                     (dynamic table within the peer's
 *                                     SETTINGS)
 *     raw-request <hex>               a request stream of one HEADERS frame
 *                                     whose payload is these octets
 *     raw-stream <hex>                a request stream of these octets
 *     encoder <hex> | decoder <hex>   octets on our QPACK encoder or
 *                                     decoder stream
 *     control <hex>                   octets on our control stream
 *     fin encoder|decoder|control     ends that stream
 *     acks on | off | hold            our decoder's output (Section
 *                                     Acknowledgments, Insert Count
 *                                     Increments) sent, dropped, or held
 *     flush-acks                      sends what "hold" kept
 *     wait                            until every request has its response
 *                                     or a reset, or the connection closed
 *     wait-close                      until the peer closes the connection
 *     sleep <ms>
 *     keep-alive <ms>                 a PING after that long without
 *                                     traffic, so that a connection held
 *                                     open (sleep) outlives the idle
 *                                     timeout (30 s)
 *
 * The script runs once the handshake is done and the peer's SETTINGS have
 * come.  Output is one JSON object a line: "response" per request stream
 * (status, every section as nghttp3 decoded it with its Required Insert
 * Count and the octets of its HEADERS frame, body length, the octets of
 * the peer's encoder stream received by then), "reset" and "stop_sending"
 * (application error code), "qpack_error" (any error of nghttp3's decoder,
 * counted in "qpack_errors", or of its encoder reading the peer's decoder
 * stream, "encoder_errors": the peer acknowledges raw-request sections
 * nghttp3 never encoded), and last "close": who closed ("peer", "client",
 * "idle", "timeout"), the error code and reason of the peer's
 * CONNECTION_CLOSE, the peer's SETTINGS, its initial bidirectional stream
 * limit, the peer's encoder stream in hex, and totals.  "max_blocked" is
 * how many of our streams nghttp3's decoder had blocked at once;
 * "max_risked" how many streams at once had a section referring to inserts
 * we had not acknowledged (RFC 9204 2.1.2 bounds it by our
 * BLOCKED_STREAMS).
 *
 * Exit status: 0 when the script ran, 1 on a local failure.
 */


#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>


#define H3C_MAX_STREAMS        4096
#define H3C_MAX_RICS           16

#define H3C_FRAME_DATA         0x00
#define H3C_FRAME_HEADERS      0x01
#define H3C_FRAME_SETTINGS     0x04

#define H3C_UNI_CONTROL        0x00
#define H3C_UNI_ENCODER        0x02
#define H3C_UNI_DECODER        0x03

#define H3C_H3_NO_ERROR        0x100

#define H3C_ACKS_ON            0
#define H3C_ACKS_OFF           1
#define H3C_ACKS_HOLD          2


typedef struct {
    uint8_t                       *data;
    size_t                         len;
    size_t                         cap;
} h3c_buf_t;


/* sent octets stay where they are until exit: ngtcp2 refers to them */

typedef struct h3c_chunk_s  h3c_chunk_t;

struct h3c_chunk_s {
    h3c_chunk_t                   *next;
    size_t                         len;
    uint8_t                        data[];
};


typedef struct {
    int64_t                        id;

    h3c_chunk_t                   *head;
    h3c_chunk_t                   *tail;
    h3c_chunk_t                   *out;         /* next chunk to send */
    size_t                         out_pos;

    h3c_buf_t                      in;           /* octets not parsed yet */
    size_t                         in_pos;
    int64_t                        uni_type;

    nghttp3_qpack_stream_context  *sctx;
    size_t                         consumed;     /* of the blocked section */
    uint64_t                       rics[H3C_MAX_RICS]; /* not acknowledged */
    size_t                         nrics;

    h3c_buf_t                      sections;     /* JSON, per section */
    h3c_buf_t                      fields;
    int                            status;
    uint64_t                       body;
    h3c_buf_t                      text;         /* with -b */

    unsigned                       request:1;
    unsigned                       fin:1;
    unsigned                       fin_sent:1;
    unsigned                       skip:1;
    unsigned                       peer_fin:1;
    unsigned                       blocked:1;
    unsigned                       ric_noted:1;
    unsigned                       done:1;
    unsigned                       failed:1;
} h3c_stream_t;


typedef struct {
    int                            fd;
    struct sockaddr_storage        local;
    socklen_t                      local_len;
    struct sockaddr_storage        remote;
    socklen_t                      remote_len;

    ngtcp2_conn                   *conn;
    ngtcp2_crypto_conn_ref         conn_ref;
    gnutls_session_t               session;
    gnutls_certificate_credentials_t  cred;

    nghttp3_qpack_encoder         *encoder;
    nghttp3_qpack_decoder         *decoder;
    int                            static_only;
    int                            body_text;

    h3c_stream_t                  *streams[H3C_MAX_STREAMS];
    size_t                         nstreams;
    h3c_stream_t                  *control;
    h3c_stream_t                  *enc;
    h3c_stream_t                  *dec;

    /* our SETTINGS */
    int                            settings;     /* 0 none, 1 empty, 2 */
    uint64_t                       capacity;
    uint64_t                       max_blocked;

    /* the peer's */
    h3c_buf_t                      peer_settings; /* JSON members */
    unsigned                       peer_settings_seen:1;
    uint64_t                       peer_capacity;
    uint64_t                       peer_blocked;
    h3c_buf_t                      peer_encoder;  /* its encoder stream */
    uint64_t                       peer_decoder_octets;

    int                            acks;
    h3c_buf_t                      held;
    uint64_t                       krc;          /* as our acks tell it */
    uint64_t                       acks_dropped;

    size_t                         nblocked;
    size_t                         max_blocked_seen;
    size_t                         max_risked;

    uint64_t                       requests;
    uint64_t                       responses;
    uint64_t                       resets;
    uint64_t                       qpack_errors;  /* of the decoder */
    uint64_t                       encoder_errors;

    unsigned                       handshake_done:1;
    unsigned                       closed:1;
    const char                    *closed_by;
    ngtcp2_connection_close_error  ccerr;
} h3c_t;


static h3c_t  h3c;


static void h3c_fail(const char *fmt, ...);
static void h3c_send_stream(h3c_stream_t *s, const uint8_t *p, size_t len,
    int fin);
static void h3c_process(h3c_stream_t *s);
static void h3c_flush_decoder(void);


/* ------------------------------------------------------------ helpers */

static uint64_t
h3c_now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);

    return (uint64_t) ts.tv_sec * NGTCP2_SECONDS + (uint64_t) ts.tv_nsec;
}


static void
h3c_fail(const char *fmt, ...)
{
    va_list  ap;

    va_start(ap, fmt);
    fprintf(stderr, "h3client: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);

    exit(1);
}


static void
h3c_append(h3c_buf_t *b, const void *p, size_t len)
{
    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2 + 64;
        b->data = realloc(b->data, b->cap);
        if (b->data == NULL) {
            h3c_fail("out of memory");
        }
    }

    if (len) {
        memcpy(b->data + b->len, p, len);
    }

    b->len += len;
}


static void
h3c_printf(h3c_buf_t *b, const char *fmt, ...)
{
    int      n;
    char     tmp[512];
    va_list  ap;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);

    h3c_append(b, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}


static void
h3c_json_str(h3c_buf_t *b, const uint8_t *p, size_t len)
{
    size_t  i;

    h3c_append(b, "\"", 1);

    for (i = 0; i < len; i++) {
        if (p[i] == '"' || p[i] == '\\') {
            h3c_printf(b, "\\%c", p[i]);

        } else if (p[i] < 0x20 || p[i] >= 0x7f) {
            h3c_printf(b, "\\u%04x", p[i]);

        } else {
            h3c_append(b, &p[i], 1);
        }
    }

    h3c_append(b, "\"", 1);
}


static void
h3c_hex(h3c_buf_t *b, const uint8_t *p, size_t len)
{
    size_t  i;

    h3c_append(b, "\"", 1);

    for (i = 0; i < len; i++) {
        h3c_printf(b, "%02x", p[i]);
    }

    h3c_append(b, "\"", 1);
}


static size_t
h3c_unhex(const char *s, h3c_buf_t *b)
{
    unsigned  v;

    b->len = 0;

    while (*s) {
        if (*s == ' ') {
            s++;
            continue;
        }

        if (sscanf(s, "%2x", &v) != 1 || s[1] == '\0') {
            h3c_fail("bad hex: %s", s);
        }

        h3c_append(b, &(uint8_t) { (uint8_t) v }, 1);
        s += 2;
    }

    return b->len;
}


static uint8_t *
h3c_put_varint(uint8_t *p, uint64_t v)
{
    if (v < 64) {
        *p++ = (uint8_t) v;

    } else if (v < 16384) {
        *p++ = (uint8_t) (0x40 | (v >> 8));
        *p++ = (uint8_t) v;

    } else if (v < 1073741824) {
        *p++ = (uint8_t) (0x80 | (v >> 24));
        *p++ = (uint8_t) (v >> 16);
        *p++ = (uint8_t) (v >> 8);
        *p++ = (uint8_t) v;

    } else {
        *p++ = (uint8_t) (0xc0 | (v >> 56));
        *p++ = (uint8_t) (v >> 48);
        *p++ = (uint8_t) (v >> 40);
        *p++ = (uint8_t) (v >> 32);
        *p++ = (uint8_t) (v >> 24);
        *p++ = (uint8_t) (v >> 16);
        *p++ = (uint8_t) (v >> 8);
        *p++ = (uint8_t) v;
    }

    return p;
}


/* the QUIC variable-length integer at *pos, or -1 when incomplete */

static int64_t
h3c_get_varint(const uint8_t *p, size_t len, size_t *pos)
{
    size_t    n, i;
    uint64_t  v;

    if (*pos >= len) {
        return -1;
    }

    n = (size_t) 1 << (p[*pos] >> 6);

    if (*pos + n > len) {
        return -1;
    }

    v = p[*pos] & 0x3f;

    for (i = 1; i < n; i++) {
        v = (v << 8) | p[*pos + i];
    }

    *pos += n;

    return (int64_t) v;
}


/* an HPACK prefixed integer (RFC 7541 5.1), or -1 when incomplete */

static int64_t
h3c_get_prefix_int(const uint8_t *p, size_t len, size_t *pos, int bits)
{
    int       shift;
    uint64_t  v, mask;

    mask = (1u << bits) - 1;
    v = p[(*pos)++] & mask;

    if (v < mask) {
        return (int64_t) v;
    }

    for (shift = 0; *pos < len && shift < 56; shift += 7) {
        v += (uint64_t) (p[*pos] & 0x7f) << shift;

        if (!(p[(*pos)++] & 0x80)) {
            return (int64_t) v;
        }
    }

    return -1;
}


/* ------------------------------------------------------------ streams */

static h3c_stream_t *
h3c_stream(int64_t id)
{
    size_t         i;
    h3c_stream_t  *s;

    for (i = 0; i < h3c.nstreams; i++) {
        if (h3c.streams[i]->id == id) {
            return h3c.streams[i];
        }
    }

    if (h3c.nstreams == H3C_MAX_STREAMS) {
        h3c_fail("more than %d streams", H3C_MAX_STREAMS);
    }

    s = calloc(1, sizeof(h3c_stream_t));
    if (s == NULL) {
        h3c_fail("out of memory");
    }

    s->id = id;
    s->uni_type = -1;
    s->status = -1;
    h3c.streams[h3c.nstreams++] = s;

    return s;
}


static h3c_stream_t *
h3c_open(int uni)
{
    int      rc;
    int64_t  id;

    rc = uni ? ngtcp2_conn_open_uni_stream(h3c.conn, &id, NULL)
             : ngtcp2_conn_open_bidi_stream(h3c.conn, &id, NULL);
    if (rc != 0) {
        h3c_fail("cannot open a stream: %s", ngtcp2_strerror(rc));
    }

    return h3c_stream(id);
}


static void
h3c_send_stream(h3c_stream_t *s, const uint8_t *p, size_t len, int fin)
{
    h3c_chunk_t  *c;

    if (len) {
        c = malloc(sizeof(h3c_chunk_t) + len);
        if (c == NULL) {
            h3c_fail("out of memory");
        }

        c->next = NULL;
        c->len = len;
        memcpy(c->data, p, len);

        if (s->tail) {
            s->tail->next = c;

        } else {
            s->head = c;
        }

        s->tail = c;

        if (s->out == NULL) {
            s->out = c;
            s->out_pos = 0;
        }
    }

    if (fin) {
        s->fin = 1;
    }
}


/* ------------------------------------------------------------ output */

static void
h3c_event(h3c_buf_t *b)
{
    h3c_append(b, "}\n", 2);
    fwrite(b->data, 1, b->len, stdout);
    fflush(stdout);
    b->len = 0;
}


static void
h3c_qpack_error(int64_t id, const char *where, int rc)
{
    h3c_buf_t  b = { 0 };

    /*
     * nghttp3's encoder reading the peer's decoder stream fails also when
     * the peer acknowledges a raw-request section: counted apart
     */

    if (strcmp(where, "decoder stream") == 0) {
        h3c.encoder_errors++;

    } else {
        h3c.qpack_errors++;
    }

    h3c_printf(&b, "{\"event\":\"qpack_error\",\"stream\":%lld,"
               "\"where\":\"%s\",\"error\":\"%s\"", (long long) id, where,
               nghttp3_strerror(rc));
    h3c_event(&b);
    free(b.data);
}


static void
h3c_response(h3c_stream_t *s)
{
    h3c_buf_t  b = { 0 };

    if (s->done || !s->request) {
        return;
    }

    s->done = 1;
    h3c.responses++;

    h3c_printf(&b, "{\"event\":\"response\",\"stream\":%lld,\"status\":%d,"
               "\"sections\":[", (long long) s->id, s->status);
    if (s->sections.len) {
        h3c_append(&b, s->sections.data, s->sections.len);
    }

    h3c_printf(&b, "],\"body\":%llu,\"encoder_stream\":%zu",
               (unsigned long long) s->body, h3c.peer_encoder.len);

    if (h3c.body_text) {
        h3c_printf(&b, ",\"text\":");
        h3c_json_str(&b, s->text.data, s->text.len);
    }

    h3c_event(&b);
    free(b.data);
}


static void
h3c_reset(h3c_stream_t *s, const char *what, uint64_t code)
{
    h3c_buf_t  b = { 0 };

    h3c_printf(&b, "{\"event\":\"%s\",\"stream\":%lld,\"code\":%llu", what,
               (long long) s->id, (unsigned long long) code);
    h3c_event(&b);
    free(b.data);

    if (s->request && !s->done) {
        s->done = 1;
        h3c.resets++;

        if (s->blocked) {
            s->blocked = 0;
            h3c.nblocked--;
            (void) nghttp3_qpack_decoder_cancel_stream(h3c.decoder, s->id);
            h3c_flush_decoder();
        }
    }
}


/* ------------------------------------------------------------ QPACK */

/*
 * What our acknowledgements tell the peer's encoder (RFC 9204 4.4): its
 * Known Received Count, and which of our streams have sections referring
 * to inserts beyond it, the ones that could block
 */

static void
h3c_count_risked(void)
{
    size_t         i, j, n;
    h3c_stream_t  *s;

    n = 0;

    for (i = 0; i < h3c.nstreams; i++) {
        s = h3c.streams[i];

        for (j = 0; j < s->nrics; j++) {
            if (s->rics[j] > h3c.krc) {
                n++;
                break;
            }
        }
    }

    if (n > h3c.max_risked) {
        h3c.max_risked = n;
    }
}


static void
h3c_note_acks(const uint8_t *p, size_t len)
{
    size_t         pos;
    int64_t        v;
    h3c_stream_t  *s;

    for (pos = 0; pos < len; /* void */) {

        if (p[pos] & 0x80) {                    /* Section Acknowledgment */
            v = h3c_get_prefix_int(p, len, &pos, 7);
            s = h3c_stream(v);

            if (s->nrics) {
                if (s->rics[0] > h3c.krc) {
                    h3c.krc = s->rics[0];
                }

                memmove(s->rics, s->rics + 1, --s->nrics * sizeof(uint64_t));
            }

        } else if (p[pos] & 0x40) {             /* Stream Cancellation */
            v = h3c_get_prefix_int(p, len, &pos, 6);
            h3c_stream(v)->nrics = 0;

        } else {                                /* Insert Count Increment */
            v = h3c_get_prefix_int(p, len, &pos, 6);
            h3c.krc += (uint64_t) v;
        }

        if (v < 0) {
            h3c_fail("nghttp3 wrote a truncated decoder instruction");
        }
    }
}


static void
h3c_send_acks(const uint8_t *p, size_t len)
{
    h3c_note_acks(p, len);
    h3c_send_stream(h3c.dec, p, len, 0);
}


static void
h3c_flush_decoder(void)
{
    size_t       len;
    nghttp3_buf  b;
    uint8_t      tmp[4096];

    len = nghttp3_qpack_decoder_get_decoder_streamlen(h3c.decoder);
    if (len == 0) {
        return;
    }

    if (len > sizeof(tmp)) {
        h3c_fail("decoder stream output of %zu octets", len);
    }

    b.begin = b.pos = b.last = tmp;
    b.end = tmp + sizeof(tmp);
    nghttp3_qpack_decoder_write_decoder(h3c.decoder, &b);
    len = (size_t) (b.last - b.pos);

    switch (h3c.acks) {

    case H3C_ACKS_ON:
        h3c_send_acks(tmp, len);
        break;

    case H3C_ACKS_OFF:
        h3c.acks_dropped += len;
        break;

    default:
        h3c_append(&h3c.held, tmp, len);
    }
}


/*
 * The HEADERS frame [frame, payload + len) of a request stream, decoded
 * from where a blocked pass stopped; NGTCP2_ERR_STREAM_DATA_BLOCKED when
 * it waits for inserts
 */

static int
h3c_section(h3c_stream_t *s, const uint8_t *frame, const uint8_t *payload,
    size_t len)
{
    int               first;
    uint8_t           flags;
    uint64_t          ric;
    nghttp3_vec       n, v;
    nghttp3_ssize     nread;
    nghttp3_qpack_nv  nv;

    if (s->sctx == NULL
        && nghttp3_qpack_stream_context_new(&s->sctx, s->id,
                                            nghttp3_mem_default())
           != 0)
    {
        h3c_fail("out of memory");
    }

    if (s->consumed == 0) {
        s->fields.len = 0;
        s->ric_noted = 0;
    }

    for ( ;; ) {
        nread = nghttp3_qpack_decoder_read_request(h3c.decoder, s->sctx, &nv,
                                                   &flags,
                                                   payload + s->consumed,
                                                   len - s->consumed, 1);
        if (nread < 0) {
            h3c_qpack_error(s->id, "request", (int) nread);
            s->failed = 1;
            return -1;
        }

        s->consumed += (size_t) nread;

        if (!s->ric_noted
            && (flags & (NGHTTP3_QPACK_DECODE_FLAG_BLOCKED
                         |NGHTTP3_QPACK_DECODE_FLAG_FINAL
                         |NGHTTP3_QPACK_DECODE_FLAG_EMIT)))
        {
            s->ric_noted = 1;
            ric = nghttp3_qpack_stream_context_get_ricnt(s->sctx);

            if (ric && s->nrics < H3C_MAX_RICS) {
                s->rics[s->nrics++] = ric;
                h3c_count_risked();
            }
        }

        if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
            if (!s->blocked) {
                s->blocked = 1;

                if (++h3c.nblocked > h3c.max_blocked_seen) {
                    h3c.max_blocked_seen = h3c.nblocked;
                }
            }

            return NGTCP2_ERR_STREAM_DATA_BLOCKED;
        }

        if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
            n = nghttp3_rcbuf_get_buf(nv.name);
            v = nghttp3_rcbuf_get_buf(nv.value);

            h3c_append(&s->fields, s->fields.len ? ",[" : "[", s->fields.len
                       ? 2 : 1);
            h3c_json_str(&s->fields, n.base, n.len);
            h3c_append(&s->fields, ",", 1);
            h3c_json_str(&s->fields, v.base, v.len);
            h3c_append(&s->fields, "]", 1);

            if (n.len == 7 && memcmp(n.base, ":status", 7) == 0) {
                s->status = atoi((char *) v.base);
            }

            nghttp3_rcbuf_decref(nv.name);
            nghttp3_rcbuf_decref(nv.value);
        }

        if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) {
            break;
        }

        if (nread == 0 && flags == 0) {
            h3c_fail("nghttp3's decoder stopped on stream %lld",
                     (long long) s->id);
        }
    }

    first = (s->sections.len == 0);
    h3c_printf(&s->sections, "%s{\"ric\":%llu,\"fields\":[", first ? "" : ",",
               (unsigned long long)
               nghttp3_qpack_stream_context_get_ricnt(s->sctx));
    if (s->fields.len) {
        h3c_append(&s->sections, s->fields.data, s->fields.len);
    }

    h3c_append(&s->sections, "],\"octets\":", 11);
    h3c_hex(&s->sections, frame, (size_t) (payload + len - frame));
    h3c_append(&s->sections, "}", 1);

    nghttp3_qpack_stream_context_reset(s->sctx);
    s->consumed = 0;

    if (s->blocked) {
        s->blocked = 0;
        h3c.nblocked--;
    }

    h3c_flush_decoder();

    return 0;
}


static void
h3c_settings(const uint8_t *p, size_t len)
{
    size_t   pos;
    int64_t  id, value;

    h3c.peer_settings_seen = 1;

    for (pos = 0; pos < len; /* void */) {
        id = h3c_get_varint(p, len, &pos);
        value = h3c_get_varint(p, len, &pos);

        if (id < 0 || value < 0) {
            break;
        }

        h3c_printf(&h3c.peer_settings, "%s\"%lld\":%lld",
                   h3c.peer_settings.len ? "," : "", (long long) id,
                   (long long) value);

        if (id == 0x01) {
            h3c.peer_capacity = (uint64_t) value;

        } else if (id == 0x07) {
            h3c.peer_blocked = (uint64_t) value;
        }
    }

    nghttp3_qpack_encoder_set_max_dtable_capacity(h3c.encoder,
                                      h3c.static_only ? 0 : h3c.peer_capacity);
    nghttp3_qpack_encoder_set_max_blocked_streams(h3c.encoder,
                                                  h3c.peer_blocked);
}


/* the frames of a request stream or the peer's control stream */

static void
h3c_frames(h3c_stream_t *s)
{
    size_t    pos, start;
    int64_t   type, len;
    uint8_t  *p;

    p = s->in.data;

    while (!s->failed) {
        pos = s->in_pos;
        start = pos;

        type = h3c_get_varint(p, s->in.len, &pos);
        len = h3c_get_varint(p, s->in.len, &pos);

        if (type < 0 || len < 0 || pos + (size_t) len > s->in.len) {
            break;
        }

        if (s->request && type == H3C_FRAME_HEADERS) {
            if (h3c_section(s, p + start, p + pos, (size_t) len) != 0) {
                return;
            }

        } else if (s->request && type == H3C_FRAME_DATA) {
            s->body += (uint64_t) len;

            if (h3c.body_text && s->text.len + (size_t) len <= 65536) {
                h3c_append(&s->text, p + pos, (size_t) len);
            }

        } else if (!s->request && type == H3C_FRAME_SETTINGS) {
            h3c_settings(p + pos, (size_t) len);
        }

        s->in_pos = pos + (size_t) len;
    }

    if (s->request && s->peer_fin && !s->failed && s->in_pos == s->in.len) {
        h3c_response(s);
    }
}


static void
h3c_unblock(void)
{
    size_t  i;

    for (i = 0; i < h3c.nstreams; i++) {
        if (h3c.streams[i]->blocked) {
            h3c_frames(h3c.streams[i]);
        }
    }
}


static void
h3c_process(h3c_stream_t *s)
{
    size_t          pos, len;
    uint8_t        *p;
    nghttp3_ssize   n;

    if (s->request) {
        h3c_frames(s);
        return;
    }

    if (s->uni_type < 0) {
        pos = 0;
        s->uni_type = h3c_get_varint(s->in.data, s->in.len, &pos);
        if (s->uni_type < 0) {
            return;
        }

        s->in_pos = pos;
    }

    if (s->uni_type == H3C_UNI_CONTROL) {
        h3c_frames(s);
        return;
    }

    p = s->in.data + s->in_pos;
    len = s->in.len - s->in_pos;
    s->in_pos = s->in.len;
    n = 0;

    if (s->uni_type == H3C_UNI_ENCODER) {
        h3c_append(&h3c.peer_encoder, p, len);

        if (!s->failed) {
            n = nghttp3_qpack_decoder_read_encoder(h3c.decoder, p, len);
        }

    } else if (s->uni_type == H3C_UNI_DECODER) {
        h3c.peer_decoder_octets += len;

        if (!s->failed) {
            n = nghttp3_qpack_encoder_read_decoder(h3c.encoder, p, len);
        }
    }

    if (n < 0) {
        h3c_qpack_error(s->id, s->uni_type == H3C_UNI_ENCODER
                               ? "encoder stream" : "decoder stream", (int) n);
        s->failed = 1;
    }

    if (s->uni_type == H3C_UNI_ENCODER) {
        h3c_unblock();
        h3c_flush_decoder();
    }
}


/* ------------------------------------------------------------ ngtcp2 */

static int
h3c_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t id,
    uint64_t offset, const uint8_t *data, size_t datalen, void *user_data,
    void *stream_user_data)
{
    h3c_stream_t  *s;

    s = h3c_stream(id);

    /* a request stream's octets are kept whole: sections quote them */

    if (!s->request && s->in_pos == s->in.len) {
        s->in.len = 0;
        s->in_pos = 0;
    }

    h3c_append(&s->in, data, datalen);

    if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
        s->peer_fin = 1;
    }

    ngtcp2_conn_extend_max_stream_offset(conn, id, datalen);
    ngtcp2_conn_extend_max_offset(conn, datalen);

    h3c_process(s);

    return 0;
}


static int
h3c_stream_reset(ngtcp2_conn *conn, int64_t id, uint64_t final_size,
    uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    h3c_reset(h3c_stream(id), "reset", app_error_code);

    return 0;
}


static int
h3c_stream_stop_sending(ngtcp2_conn *conn, int64_t id,
    uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    h3c_reset(h3c_stream(id), "stop_sending", app_error_code);

    return 0;
}


static int
h3c_handshake_completed(ngtcp2_conn *conn, void *user_data)
{
    h3c.handshake_done = 1;

    return 0;
}


static void
h3c_rand(uint8_t *dest, size_t destlen, const ngtcp2_rand_ctx *rand_ctx)
{
    (void) gnutls_rnd(GNUTLS_RND_RANDOM, dest, destlen);
}


static int
h3c_new_connection_id(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token,
    size_t cidlen, void *user_data)
{
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0
        || gnutls_rnd(GNUTLS_RND_RANDOM, token,
                      NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
    {
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }

    cid->datalen = cidlen;

    return 0;
}


static ngtcp2_conn *
h3c_get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return h3c.conn;
}


static void
h3c_connect(const char *host, const char *port)
{
    int                        rc;
    ngtcp2_cid                 dcid, scid;
    ngtcp2_path                path;
    struct addrinfo            hints, *ai;
    ngtcp2_settings            settings;
    ngtcp2_callbacks           cb;
    gnutls_datum_t             alpn;
    ngtcp2_transport_params    params;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;

    if (getaddrinfo(host, port, &hints, &ai) != 0) {
        h3c_fail("cannot resolve %s", host);
    }

    h3c.fd = socket(ai->ai_family, SOCK_DGRAM, 0);
    if (h3c.fd < 0 || connect(h3c.fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        h3c_fail("connect(): %s", strerror(errno));
    }

    memcpy(&h3c.remote, ai->ai_addr, ai->ai_addrlen);
    h3c.remote_len = ai->ai_addrlen;
    freeaddrinfo(ai);

    h3c.local_len = sizeof(h3c.local);
    if (getsockname(h3c.fd, (struct sockaddr *) &h3c.local, &h3c.local_len)
        != 0)
    {
        h3c_fail("getsockname(): %s", strerror(errno));
    }

    (void) fcntl(h3c.fd, F_SETFL, O_NONBLOCK);

    /* TLS 1.3 as ngtcp2_crypto_gnutls needs it, nothing verified */

    if (gnutls_certificate_allocate_credentials(&h3c.cred) != 0
        || gnutls_init(&h3c.session, GNUTLS_CLIENT | GNUTLS_ENABLE_EARLY_DATA
                                     | GNUTLS_NO_END_OF_EARLY_DATA) != 0
        || gnutls_priority_set_direct(h3c.session,
               "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE",
               NULL) != 0
        || ngtcp2_crypto_gnutls_configure_client_session(h3c.session) != 0
        || gnutls_credentials_set(h3c.session, GNUTLS_CRD_CERTIFICATE,
                                  h3c.cred) != 0)
    {
        h3c_fail("gnutls set-up failed");
    }

    h3c.conn_ref.get_conn = h3c_get_conn;
    gnutls_session_set_ptr(h3c.session, &h3c.conn_ref);

    alpn.data = (unsigned char *) "h3";
    alpn.size = 2;
    gnutls_alpn_set_protocols(h3c.session, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    gnutls_server_name_set(h3c.session, GNUTLS_NAME_DNS, "localhost", 9);

    memset(&cb, 0, sizeof(cb));
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
    cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    cb.encrypt = ngtcp2_crypto_encrypt_cb;
    cb.decrypt = ngtcp2_crypto_decrypt_cb;
    cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
    cb.update_key = ngtcp2_crypto_update_key_cb;
    cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
    cb.handshake_completed = h3c_handshake_completed;
    cb.recv_stream_data = h3c_recv_stream_data;
    cb.stream_reset = h3c_stream_reset;
    cb.stream_stop_sending = h3c_stream_stop_sending;
    cb.rand = h3c_rand;
    cb.get_new_connection_id = h3c_new_connection_id;

    dcid.datalen = 18;
    scid.datalen = 8;
    (void) gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen);
    (void) gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);

    ngtcp2_settings_default(&settings);
    settings.initial_ts = h3c_now();

    ngtcp2_transport_params_default(&params);
    params.initial_max_streams_uni = 16;
    params.initial_max_stream_data_bidi_local = 1 << 20;
    params.initial_max_stream_data_uni = 1 << 20;
    params.initial_max_data = 64 << 20;
    params.max_idle_timeout = 30 * NGTCP2_SECONDS;

    path.local.addr = (ngtcp2_sockaddr *) &h3c.local;
    path.local.addrlen = h3c.local_len;
    path.remote.addr = (ngtcp2_sockaddr *) &h3c.remote;
    path.remote.addrlen = h3c.remote_len;
    path.user_data = NULL;

    rc = ngtcp2_conn_client_new(&h3c.conn, &dcid, &scid, &path,
                                NGTCP2_PROTO_VER_V1, &cb, &settings, &params,
                                NULL, NULL);
    if (rc != 0) {
        h3c_fail("ngtcp2_conn_client_new(): %s", ngtcp2_strerror(rc));
    }

    ngtcp2_conn_set_tls_native_handle(h3c.conn, h3c.session);
}


static void
h3c_closed(const char *by)
{
    if (h3c.closed) {
        return;
    }

    h3c.closed = 1;
    h3c.closed_by = by;
    ngtcp2_conn_get_connection_close_error(h3c.conn, &h3c.ccerr);
}


static void
h3c_write(void)
{
    int                 fin;
    size_t              i, max;
    uint32_t            flags;
    int64_t             id;
    ngtcp2_vec          vec;
    ngtcp2_ssize        n, datalen;
    h3c_stream_t       *s;
    ngtcp2_pkt_info     pi;
    ngtcp2_path_storage ps;
    uint8_t             buf[1500];

    if (h3c.closed) {
        return;
    }

    ngtcp2_path_storage_zero(&ps);
    max = ngtcp2_conn_get_path_max_tx_udp_payload_size(h3c.conn);
    max = max < sizeof(buf) ? max : sizeof(buf);

    for (i = 0; i < h3c.nstreams; i++) {
        h3c.streams[i]->skip = 0;
    }

    for ( ;; ) {
        s = NULL;

        for (i = 0; i < h3c.nstreams; i++) {
            if (!h3c.streams[i]->skip
                && (h3c.streams[i]->out
                    || (h3c.streams[i]->fin && !h3c.streams[i]->fin_sent)))
            {
                s = h3c.streams[i];
                break;
            }
        }

        id = -1;
        flags = 0;
        fin = 0;
        vec.base = NULL;
        vec.len = 0;

        if (s) {
            id = s->id;
            flags = NGTCP2_WRITE_STREAM_FLAG_MORE;

            if (s->out) {
                vec.base = s->out->data + s->out_pos;
                vec.len = s->out->len - s->out_pos;
            }

            if (s->fin && (s->out == NULL || s->out->next == NULL)) {
                fin = 1;
                flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
            }
        }

        n = ngtcp2_conn_writev_stream(h3c.conn, &ps.path, &pi, buf, max,
                                      &datalen, flags, id, &vec, s ? 1 : 0,
                                      h3c_now());

        if (s && datalen >= 0) {
            s->out_pos += (size_t) datalen;

            if (s->out && s->out_pos == s->out->len) {
                s->out = s->out->next;
                s->out_pos = 0;
            }

            if (fin && (size_t) datalen == vec.len) {
                s->fin_sent = 1;
            }
        }

        if (n < 0) {
            if (n == NGTCP2_ERR_WRITE_MORE) {
                continue;
            }

            if (s && (n == NGTCP2_ERR_STREAM_DATA_BLOCKED
                      || n == NGTCP2_ERR_STREAM_SHUT_WR
                      || n == NGTCP2_ERR_STREAM_NOT_FOUND))
            {
                s->skip = 1;
                continue;
            }

            if (n == NGTCP2_ERR_CLOSING || n == NGTCP2_ERR_DRAINING) {
                h3c_closed("peer");
                return;
            }

            h3c_fail("ngtcp2_conn_writev_stream(): %s", ngtcp2_strerror(n));
        }

        if (n == 0) {
            return;             /* congestion: the rest waits */
        }

        if (send(h3c.fd, buf, (size_t) n, 0) < 0 && errno != EAGAIN) {
            h3c_fail("send(): %s", strerror(errno));
        }
    }
}


static void
h3c_read(void)
{
    int              rc;
    ssize_t          n;
    ngtcp2_path      path;
    ngtcp2_pkt_info  pi;
    uint8_t          buf[65536];

    path.local.addr = (ngtcp2_sockaddr *) &h3c.local;
    path.local.addrlen = h3c.local_len;
    path.remote.addr = (ngtcp2_sockaddr *) &h3c.remote;
    path.remote.addrlen = h3c.remote_len;
    path.user_data = NULL;
    memset(&pi, 0, sizeof(pi));

    while (!h3c.closed) {
        n = recv(h3c.fd, buf, sizeof(buf), 0);

        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return;
            }

            if (errno == ECONNREFUSED) {
                h3c_closed("refused");
                return;
            }

            h3c_fail("recv(): %s", strerror(errno));
        }

        rc = ngtcp2_conn_read_pkt(h3c.conn, &path, &pi, buf, (size_t) n,
                                  h3c_now());
        if (rc == NGTCP2_ERR_DRAINING || rc == NGTCP2_ERR_CLOSING) {
            h3c_closed("peer");
            return;
        }

        if (rc != 0) {
            fprintf(stderr, "h3client: ngtcp2_conn_read_pkt(): %s\n",
                    ngtcp2_strerror(rc));
            h3c_closed("error");
            return;
        }
    }
}


/* runs the connection until done() holds or the deadline (ns) passes */

static int
h3c_run(int (*done)(void), uint64_t deadline)
{
    int             rc;
    uint64_t        now, expiry, until;
    struct pollfd   pfd;

    for ( ;; ) {
        h3c_write();

        if (h3c.closed || (done && done())) {
            return 1;
        }

        now = h3c_now();
        if (now >= deadline) {
            return 0;
        }

        expiry = ngtcp2_conn_get_expiry(h3c.conn);
        until = expiry < deadline ? expiry : deadline;

        pfd.fd = h3c.fd;
        pfd.events = POLLIN;
        (void) poll(&pfd, 1, until > now
                             ? (int) ((until - now) / NGTCP2_MILLISECONDS) + 1
                             : 0);

        if (pfd.revents & (POLLIN | POLLERR)) {
            h3c_read();
        }

        now = h3c_now();

        if (!h3c.closed && ngtcp2_conn_get_expiry(h3c.conn) <= now) {
            rc = ngtcp2_conn_handle_expiry(h3c.conn, now);
            if (rc != 0) {
                h3c_closed(rc == NGTCP2_ERR_IDLE_CLOSE ? "idle" : "timeout");
            }
        }
    }
}


static int
h3c_handshaken(void)
{
    return h3c.handshake_done;
}


static int
h3c_settings_seen(void)
{
    return h3c.peer_settings_seen;
}


static int
h3c_answered(void)
{
    size_t  i;

    for (i = 0; i < h3c.nstreams; i++) {
        if (h3c.streams[i]->request && !h3c.streams[i]->done) {
            return 0;
        }
    }

    return 1;
}


static int
h3c_stream_credit(void)
{
    return ngtcp2_conn_get_streams_bidi_left(h3c.conn) > 0;
}


/* ------------------------------------------------------------ script */

static h3c_stream_t *
h3c_request_stream(uint64_t timeout)
{
    h3c_stream_t  *s;

    if (!h3c_run(h3c_stream_credit, h3c_now() + timeout)) {
        h3c_fail("no stream credit from the peer");
    }

    s = h3c_open(0);
    s->request = 1;
    h3c.requests++;

    return s;
}


static void
h3c_headers_frame(h3c_stream_t *s, const uint8_t *p1, size_t l1,
    const uint8_t *p2, size_t l2)
{
    uint8_t  *p, head[16];

    p = h3c_put_varint(head, H3C_FRAME_HEADERS);
    p = h3c_put_varint(p, l1 + l2);

    h3c_send_stream(s, head, (size_t) (p - head), 0);
    h3c_send_stream(s, p1, l1, 0);
    h3c_send_stream(s, p2, l2, 1);
}


static void
h3c_request(char *args, uint64_t timeout)
{
    int            rc;
    char          *tok, *save, *value, *vbuf;
    size_t         n, len, vlen;
    nghttp3_nv     nva[64];
    nghttp3_buf    pbuf, rbuf, ebuf;
    h3c_stream_t  *s;

    n = 0;

#define h3c_nv(nm, vl)                                                       \
    nva[n].name = (uint8_t *) (nm); nva[n].namelen = strlen(nm);             \
    nva[n].value = (uint8_t *) (vl); nva[n].valuelen = strlen(vl);           \
    nva[n].flags = NGHTTP3_NV_FLAG_NONE; n++

    tok = strtok_r(args, " ", &save);
    if (tok == NULL) {
        h3c_fail("request: no path");
    }

    h3c_nv(":method", "GET");
    h3c_nv(":scheme", "https");
    h3c_nv(":authority", "localhost");
    h3c_nv(":path", tok);

    /*
     * "name: value words": a token ending in ':' starts a field; the
     * values follow one another in vbuf, the last one growing
     */

    vbuf = calloc(1, strlen(save ? save : "") + 1);
    if (vbuf == NULL) {
        h3c_fail("out of memory");
    }

    vlen = 0;

    while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
        len = strlen(tok);

        if (tok[len - 1] == ':') {
            if (n == 64) {
                h3c_fail("request: more than 60 fields");
            }

            tok[len - 1] = '\0';
            value = vbuf + vlen++;
            h3c_nv(tok, value);
            continue;
        }

        if (n == 4) {
            h3c_fail("request: a value without a name: %s", tok);
        }

        value = (char *) nva[n - 1].value;

        if (*value) {
            strcat(value, " ");
            vlen++;
        }

        strcat(value, tok);
        vlen += len;
        nva[n - 1].valuelen = strlen(value);
    }

#undef h3c_nv

    s = h3c_request_stream(timeout);

    nghttp3_buf_init(&pbuf);
    nghttp3_buf_init(&rbuf);
    nghttp3_buf_init(&ebuf);

    rc = nghttp3_qpack_encoder_encode(h3c.encoder, &pbuf, &rbuf, &ebuf, s->id,
                                      nva, n);
    if (rc != 0) {
        h3c_qpack_error(s->id, "encode", rc);
        h3c_fail("nghttp3_qpack_encoder_encode() failed");
    }

    /* the inserts go out ahead of the section that refers to them */

    h3c_send_stream(h3c.enc, ebuf.pos, (size_t) (ebuf.last - ebuf.pos), 0);
    h3c_headers_frame(s, pbuf.pos, (size_t) (pbuf.last - pbuf.pos), rbuf.pos,
                      (size_t) (rbuf.last - rbuf.pos));

    nghttp3_buf_free(&pbuf, nghttp3_mem_default());
    nghttp3_buf_free(&rbuf, nghttp3_mem_default());
    nghttp3_buf_free(&ebuf, nghttp3_mem_default());
    free(vbuf);
}


static void
h3c_start(void)
{
    uint8_t  *p, frame[32], payload[24];

    h3c.control = h3c_open(1);
    h3c.enc = h3c_open(1);
    h3c.dec = h3c_open(1);

    p = frame;
    *p++ = H3C_UNI_CONTROL;

    if (h3c.settings) {
        p = h3c_put_varint(p, H3C_FRAME_SETTINGS);

        if (h3c.settings == 1) {
            *p++ = 0;

        } else {
            uint8_t  *q = payload;

            q = h3c_put_varint(q, 0x01);
            q = h3c_put_varint(q, h3c.capacity);
            q = h3c_put_varint(q, 0x07);
            q = h3c_put_varint(q, h3c.max_blocked);

            p = h3c_put_varint(p, (uint64_t) (q - payload));
            memcpy(p, payload, (size_t) (q - payload));
            p += q - payload;
        }
    }

    h3c_send_stream(h3c.control, frame, (size_t) (p - frame), 0);

    frame[0] = H3C_UNI_ENCODER;
    h3c_send_stream(h3c.enc, frame, 1, 0);

    frame[0] = H3C_UNI_DECODER;
    h3c_send_stream(h3c.dec, frame, 1, 0);
}


static void
h3c_command(char *line, uint64_t timeout)
{
    char          *cmd, *arg;
    h3c_stream_t  *s;
    h3c_buf_t      hex = { 0 };

    cmd = strtok_r(line, " \t", &arg);
    arg += strspn(arg, " \t");

    if (strcmp(cmd, "request") == 0) {
        h3c_request(arg, timeout);

    } else if (strcmp(cmd, "raw-request") == 0) {
        h3c_unhex(arg, &hex);
        h3c_headers_frame(h3c_request_stream(timeout), hex.data, hex.len,
                          NULL, 0);

    } else if (strcmp(cmd, "raw-stream") == 0) {
        h3c_unhex(arg, &hex);
        h3c_send_stream(h3c_request_stream(timeout), hex.data, hex.len, 1);

    } else if (strcmp(cmd, "encoder") == 0) {
        h3c_unhex(arg, &hex);
        h3c_send_stream(h3c.enc, hex.data, hex.len, 0);

    } else if (strcmp(cmd, "decoder") == 0) {
        h3c_unhex(arg, &hex);
        h3c_send_stream(h3c.dec, hex.data, hex.len, 0);

    } else if (strcmp(cmd, "control") == 0) {
        h3c_unhex(arg, &hex);
        h3c_send_stream(h3c.control, hex.data, hex.len, 0);

    } else if (strcmp(cmd, "fin") == 0) {
        s = strcmp(arg, "encoder") == 0 ? h3c.enc
            : strcmp(arg, "decoder") == 0 ? h3c.dec
            : strcmp(arg, "control") == 0 ? h3c.control : NULL;
        if (s == NULL) {
            h3c_fail("fin: %s", arg);
        }

        h3c_send_stream(s, NULL, 0, 1);

    } else if (strcmp(cmd, "acks") == 0) {
        h3c.acks = strcmp(arg, "off") == 0 ? H3C_ACKS_OFF
                   : strcmp(arg, "hold") == 0 ? H3C_ACKS_HOLD : H3C_ACKS_ON;

    } else if (strcmp(cmd, "flush-acks") == 0) {
        h3c_send_acks(h3c.held.data, h3c.held.len);
        h3c.held.len = 0;

    } else if (strcmp(cmd, "wait") == 0) {
        (void) h3c_run(h3c_answered, h3c_now() + timeout);

    } else if (strcmp(cmd, "wait-close") == 0) {
        (void) h3c_run(NULL, h3c_now() + timeout);

    } else if (strcmp(cmd, "sleep") == 0) {
        (void) h3c_run(NULL, h3c_now()
                             + (uint64_t) atoi(arg) * NGTCP2_MILLISECONDS);

    } else if (strcmp(cmd, "keep-alive") == 0) {
        ngtcp2_conn_set_keep_alive_timeout(h3c.conn,
                                 (ngtcp2_duration) atoi(arg)
                                 * NGTCP2_MILLISECONDS);

    } else if (strcmp(cmd, "settings") != 0) {
        h3c_fail("unknown command: %s", cmd);
    }

    free(hex.data);
}


static void
h3c_close(void)
{
    ngtcp2_ssize                   n;
    ngtcp2_pkt_info                pi;
    ngtcp2_path_storage            ps;
    ngtcp2_connection_close_error  ccerr;
    uint8_t                        buf[1500];

    if (h3c.closed) {
        return;
    }

    h3c_closed("client");

    ngtcp2_path_storage_zero(&ps);
    ngtcp2_connection_close_error_set_application_error(&ccerr,
                                                        H3C_H3_NO_ERROR,
                                                        NULL, 0);

    n = ngtcp2_conn_write_connection_close(h3c.conn, &ps.path, &pi, buf,
                                           sizeof(buf), &ccerr, h3c_now());
    if (n > 0) {
        (void) send(h3c.fd, buf, (size_t) n, 0);
    }
}


static void
h3c_report(void)
{
    const char                     *type;
    h3c_buf_t                       b = { 0 };
    const ngtcp2_transport_params  *tp;

    type = h3c.ccerr.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION
           ? "application" : "transport";

    h3c_printf(&b, "{\"event\":\"close\",\"by\":\"%s\"", h3c.closed_by);

    if (strcmp(h3c.closed_by, "peer") == 0) {
        h3c_printf(&b, ",\"type\":\"%s\",\"code\":%llu,\"reason\":", type,
                   (unsigned long long) h3c.ccerr.error_code);
        h3c_json_str(&b, h3c.ccerr.reason, h3c.ccerr.reasonlen);
    }

    h3c_append(&b, ",\"peer_settings\":", 17);
    if (h3c.peer_settings_seen) {
        h3c_append(&b, "{", 1);
        h3c_append(&b, h3c.peer_settings.data, h3c.peer_settings.len);
        h3c_append(&b, "}", 1);

    } else {
        h3c_append(&b, "null", 4);
    }

    tp = ngtcp2_conn_get_remote_transport_params(h3c.conn);

    h3c_printf(&b, ",\"peer_max_streams_bidi\":%llu,\"requests\":%llu,"
               "\"responses\":%llu,\"resets\":%llu,\"qpack_errors\":%llu,"
               "\"encoder_errors\":%llu,"
               "\"max_blocked\":%zu,\"max_risked\":%zu,\"blocked\":%zu,"
               "\"known_received_count\":%llu,\"acks_dropped\":%llu,"
               "\"acks_held\":%zu,\"peer_decoder_stream\":%llu,"
               "\"encoder_stream\":",
               tp ? (unsigned long long) tp->initial_max_streams_bidi : 0ULL,
               (unsigned long long) h3c.requests,
               (unsigned long long) h3c.responses,
               (unsigned long long) h3c.resets,
               (unsigned long long) h3c.qpack_errors,
               (unsigned long long) h3c.encoder_errors,
               h3c.max_blocked_seen, h3c.max_risked, h3c.nblocked,
               (unsigned long long) h3c.krc,
               (unsigned long long) h3c.acks_dropped, h3c.held.len,
               (unsigned long long) h3c.peer_decoder_octets);
    h3c_hex(&b, h3c.peer_encoder.data, h3c.peer_encoder.len);
    h3c_event(&b);
    free(b.data);
}


int
main(int argc, char **argv)
{
    int        opt;
    char      *p, *line;
    size_t     cap;
    FILE      *in;
    size_t     i, nlines;
    uint64_t   timeout;
    char     **lines;

    timeout = 5 * NGTCP2_SECONDS;
    h3c.settings = 2;
    h3c.capacity = 4096;
    h3c.max_blocked = 100;

    while ((opt = getopt(argc, argv, "bst:")) != -1) {
        switch (opt) {
        case 'b':
            h3c.body_text = 1;
            break;
        case 's':
            h3c.static_only = 1;
            break;
        case 't':
            timeout = (uint64_t) (atof(optarg) * NGTCP2_SECONDS);
            break;
        default:
            h3c_fail("usage: h3client [-b] [-s] [-t seconds] host port "
                     "[script]");
        }
    }

    if (argc - optind < 2) {
        h3c_fail("usage: h3client [-b] [-s] [-t seconds] host port "
                 "[script]");
    }

    in = argc - optind > 2 ? fopen(argv[optind + 2], "r") : stdin;
    if (in == NULL) {
        h3c_fail("cannot open %s", argv[optind + 2]);
    }

    lines = NULL;
    nlines = 0;
    line = NULL;
    cap = 0;

    /* lines of any length: a raw section's hex may be long */

    while (getline(&line, &cap, in) != -1) {
        line[strcspn(line, "#\r\n")] = '\0';

        for (p = line + strlen(line); p > line && p[-1] == ' '; p--) {
            p[-1] = '\0';
        }

        p = line + strspn(line, " \t");
        if (*p == '\0') {
            continue;
        }

        lines = realloc(lines, (nlines + 1) * sizeof(char *));
        lines[nlines++] = strdup(p);
    }

    /* "settings" is the script's first line or absent */

    if (nlines && strncmp(lines[0], "settings", 8) == 0) {
        p = lines[0] + 8 + strspn(lines[0] + 8, " ");

        if (strcmp(p, "none") == 0) {
            h3c.settings = 0;

        } else if (strcmp(p, "empty") == 0) {
            h3c.settings = 1;

        } else if (sscanf(p, "%" SCNu64 " %" SCNu64, &h3c.capacity,
                          &h3c.max_blocked)
                   != 2)
        {
            h3c_fail("settings: %s", p);
        }
    }

    if (nghttp3_qpack_encoder_new(&h3c.encoder, 4096, nghttp3_mem_default())
        != 0
        || nghttp3_qpack_decoder_new(&h3c.decoder,
                                     h3c.settings == 2 ? h3c.capacity : 0,
                                     h3c.settings == 2 ? h3c.max_blocked : 0,
                                     nghttp3_mem_default())
           != 0)
    {
        h3c_fail("out of memory");
    }

    h3c_connect(argv[optind], argv[optind + 1]);

    if (!h3c_run(h3c_handshaken, h3c_now() + timeout)) {
        h3c_fail("no handshake");
    }

    if (!h3c.closed) {
        h3c_start();
        (void) h3c_run(h3c_settings_seen, h3c_now() + timeout);
    }

    for (i = 0; i < nlines && !h3c.closed; i++) {
        h3c_command(lines[i], timeout);
    }

    (void) h3c_run(h3c_answered, h3c_now() + timeout);

    h3c_close();
    h3c_report();

    return 0;
}
