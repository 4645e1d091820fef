
/*
 * hpack_status: what the module saves and holds, over every worker since
 * the start, kept in a shared zone, and the page that shows it
 * (Prometheus's text format, or JSON), by protocol: HTTP/2's HPACK ("h2")
 * and HTTP/3's QPACK ("h3").
 *
 * A block's sums are folded into the zone when the block ends
 * (ngx_http_hpack_fold()): nothing is counted per field; a refused one
 * counts in the errors of its kind.  The gauges move
 * when a connection starts or ends and when its codec allocates or frees;
 * what a worker added to them is taken back when it exits, open
 * connections and all.  The zone outlives workers and reloads, as long as
 * the directive stays.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"

#if (NGX_HTTP_HPACK_V3)
#include <qpack.h>
#endif


/*
 * the size of what the codec allocates goes in front of it, in 16 octets
 * so that the alignment ngx_palloc() gives is kept
 */
#define NGX_HTTP_HPACK_SIZE_PREFIX  16

/* the entries of the page but the errors, each a line per protocol */
#define NGX_HTTP_HPACK_METRICS      12


typedef struct {
    char                              *name;
    char                              *type;
    char                              *help;
} ngx_http_hpack_metric_t;


/* what a pool cleanup of a counted connection does */

typedef struct {
    ngx_pool_cleanup_pt                destroy;
    void                              *data;
    ngx_uint_t                         protocol;
} ngx_http_hpack_status_conn_t;


static ngx_int_t ngx_http_hpack_status_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static void *ngx_http_hpack_counted_alloc_h2(void *ctx, size_t size);
static void ngx_http_hpack_counted_free_h2(void *ctx, void *p);
static void *ngx_http_hpack_counted_alloc_h3(void *ctx, size_t size);
static void ngx_http_hpack_counted_free_h3(void *ctx, void *p);
static void *ngx_http_hpack_counted_alloc(void *ctx, size_t size,
    ngx_uint_t protocol);
static void ngx_http_hpack_counted_free(void *ctx, void *p,
    ngx_uint_t protocol);
static void ngx_http_hpack_status_close(void *data);
static void ngx_http_hpack_status_gauge(ngx_uint_t protocol, ngx_uint_t gauge,
    ngx_atomic_int_t n);
static ngx_http_hpack_status_t *ngx_http_hpack_status_counters(
    ngx_uint_t protocol);
static ngx_int_t ngx_http_hpack_status_text_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_hpack_status_json_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_hpack_status_handler(ngx_http_request_t *r,
    ngx_uint_t json);
static void ngx_http_hpack_status_values(ngx_http_hpack_status_t *st,
    uint64_t *values, uint64_t *errors);
static u_char *ngx_http_hpack_status_text(u_char *p,
    uint64_t values[][NGX_HTTP_HPACK_METRICS],
    uint64_t errors[][NGX_HTTP_HPACK_ERRORS]);
static u_char *ngx_http_hpack_status_json(u_char *p,
    uint64_t values[][NGX_HTTP_HPACK_METRICS],
    uint64_t errors[][NGX_HTTP_HPACK_ERRORS]);


/* in the order of the page and of ngx_http_hpack_status_values() */

static ngx_http_hpack_metric_t  ngx_http_hpack_metrics[] = {

    { "hpack_connections", "gauge",
      "Connections with HPACK (h2) or QPACK (h3) state, open now." },

    { "hpack_table_bytes", "gauge",
      "Bytes the decoders and encoders of open connections hold now "
      "(tables, indexes, buffers), as allocated." },

    { "hpack_in_wire_bytes_total", "counter",
      "Request header blocks as received, octets (h3: field sections and "
      "the client's encoder stream)." },

    { "hpack_in_plain_bytes_total", "counter",
      "Request header blocks decoded, RFC 7541 size "
      "(name + value + 32 per field)." },

    { "hpack_out_wire_bytes_total", "counter",
      "Response header blocks as sent, octets (h2: HEADERS and "
      "CONTINUATION payloads; h3: field sections and our encoder "
      "stream)." },

    { "hpack_out_plain_bytes_total", "counter",
      "Response header blocks before encoding, RFC 7541 size "
      "(name + value + 32 per field)." },

    { "hpack_in_fields_total", "counter",
      "Request header fields decoded." },

    { "hpack_in_indexed_total", "counter",
      "Request header fields the client sent as an index." },

    { "hpack_out_fields_total", "counter",
      "Response header fields encoded." },

    { "hpack_out_indexed_total", "counter",
      "Response header fields sent as an index." },

    { "hpack_in_stream_bytes_total", "counter",
      "Of hpack_in_wire_bytes_total, the client's QPACK encoder stream, "
      "octets (h2: none)." },

    { "hpack_out_stream_bytes_total", "counter",
      "Of hpack_out_wire_bytes_total, our QPACK encoder stream, octets "
      "(h2: none)." }
};

typedef char  ngx_http_hpack_metrics_t
                  [sizeof(ngx_http_hpack_metrics)
                   == NGX_HTTP_HPACK_METRICS
                      * sizeof(ngx_http_hpack_metric_t) ? 1 : -1];


/* by NGX_HTTP_HPACK_ERR_* */

static ngx_str_t  ngx_http_hpack_error_kinds[NGX_HTTP_HPACK_ERRORS] = {
    ngx_string("huffman"),
    ngx_string("integer"),
    ngx_string("index"),
    ngx_string("truncated"),
    ngx_string("size_update"),
    ngx_string("limits"),
    ngx_string("empty_name"),
    ngx_string("internal"),
    ngx_string("encoder_stream"),
    ngx_string("decoder_stream"),
    ngx_string("blocked_streams"),
    ngx_string("insert_count"),
    ngx_string("empty_section")
};


/* by NGX_HTTP_HPACK_H2, _H3: its name, and the kinds of errors it has */

typedef struct {
    ngx_str_t                          name;
    ngx_uint_t                         kinds;      /* a bit per kind */
} ngx_http_hpack_protocol_t;

#define ngx_http_hpack_kind(k)  ((ngx_uint_t) 1 << NGX_HTTP_HPACK_ERR_##k)

static ngx_http_hpack_protocol_t  ngx_http_hpack_protocols[] = {

    { ngx_string("h2"),
      ngx_http_hpack_kind(HUFFMAN) | ngx_http_hpack_kind(INTEGER)
      | ngx_http_hpack_kind(INDEX) | ngx_http_hpack_kind(TRUNCATED)
      | ngx_http_hpack_kind(SIZE_UPDATE) | ngx_http_hpack_kind(LIMITS)
      | ngx_http_hpack_kind(EMPTY_NAME) | ngx_http_hpack_kind(INTERNAL) },

    { ngx_string("h3"),
      ngx_http_hpack_kind(HUFFMAN) | ngx_http_hpack_kind(INTEGER)
      | ngx_http_hpack_kind(INDEX) | ngx_http_hpack_kind(TRUNCATED)
      | ngx_http_hpack_kind(LIMITS) | ngx_http_hpack_kind(INTERNAL)
      | ngx_http_hpack_kind(ENCODER_STREAM)
      | ngx_http_hpack_kind(DECODER_STREAM)
      | ngx_http_hpack_kind(BLOCKED_STREAMS)
      | ngx_http_hpack_kind(INSERT_COUNT)
      | ngx_http_hpack_kind(EMPTY_SECTION) }
};

typedef char  ngx_http_hpack_protocols_t
                  [sizeof(ngx_http_hpack_protocols)
                   == NGX_HTTP_HPACK_PROTOCOLS
                      * sizeof(ngx_http_hpack_protocol_t) ? 1 : -1];


static ngx_str_t  ngx_http_hpack_errors_head = ngx_string(
    "# HELP hpack_errors_total Request header blocks refused, by kind "
    "(h3: field sections and the client's QPACK streams).\n"
    "# TYPE hpack_errors_total counter\n");


/* a protocol's counters in the zone, each from a cache line of its own */

#define NGX_HTTP_HPACK_STATUS_STRIDE                                         \
    ngx_align(sizeof(ngx_http_hpack_status_t), NGX_CPU_CACHE_LINE)


static ngx_str_t  ngx_http_hpack_status_zone_name =
    ngx_string("hpack_status");


/*
 * the zone of this process's cycle: NULL without hpack_status, and once
 * the process exits
 */
static u_char  *ngx_http_hpack_status_shm;

/* what this process added to the gauges */
static ngx_atomic_int_t  ngx_http_hpack_own_gauges[NGX_HTTP_HPACK_PROTOCOLS]
                                                  [NGX_HTTP_HPACK_GAUGES];


/* ------------------------------------------------------------- directive */

char *
ngx_http_hpack_status(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t                   *value;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_hpack_main_conf_t  *hmcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_hpack_status_text_handler;

    if (cf->args->nelts == 2) {
        value = cf->args->elts;

        if (value[1].len != sizeof("json") - 1
            || ngx_strncmp(value[1].data, "json", sizeof("json") - 1) != 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\"", &value[1]);
            return NGX_CONF_ERROR;
        }

        clcf->handler = ngx_http_hpack_status_json_handler;
    }

    hmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_hpack_module);

    if (hmcf->status_zone) {
        return NGX_CONF_OK;
    }

    /* the same name, size and tag at a reload: the counters carry over */

    hmcf->status_zone = ngx_shared_memory_add(cf,
                                              &ngx_http_hpack_status_zone_name,
                                              8 * ngx_pagesize,
                                              &ngx_http_hpack_module);
    if (hmcf->status_zone == NULL) {
        return NGX_CONF_ERROR;
    }

    hmcf->status_zone->init = ngx_http_hpack_status_init_zone;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_hpack_status_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    u_char           *p;
    ngx_slab_pool_t  *shpool;

    if (data) {
        shm_zone->data = data;
        return NGX_OK;
    }

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    p = ngx_slab_calloc(shpool, NGX_HTTP_HPACK_PROTOCOLS
                                * NGX_HTTP_HPACK_STATUS_STRIDE
                                + NGX_CPU_CACHE_LINE);
    if (p == NULL) {
        return NGX_ERROR;
    }

    shm_zone->data = ngx_align_ptr(p, NGX_CPU_CACHE_LINE);

    return NGX_OK;
}


/* the cycle's zone, for the connections this process will serve */

void
ngx_http_hpack_status_attach(ngx_http_hpack_main_conf_t *hmcf)
{
    ngx_http_hpack_status_shm = NULL;

    if (hmcf && hmcf->status_zone) {
        ngx_http_hpack_status_shm = hmcf->status_zone->data;
    }
}


/* ------------------------------------------------------------ connection */

/*
 * With hpack_status a connection of the protocol (HTTP/2's, or HTTP/3's
 * QUIC connection) counts in its gauges: the codec's objects allocate
 * through the counting allocator and are destroyed (destroy(data)) with
 * the connection's pool, so that the memory gauge gives back what they
 * held.  *status gets the protocol's counters, NULL without hpack_status.
 */

ngx_int_t
ngx_http_hpack_status_open(ngx_pool_t *pool, ngx_uint_t protocol,
    hpack_allocator_t *allocator, ngx_pool_cleanup_pt destroy, void *data,
    ngx_http_hpack_status_t **status)
{
    ngx_pool_cleanup_t            *cln;
    ngx_http_hpack_status_conn_t  *sc;

    *status = NULL;

    if (ngx_http_hpack_status_shm == NULL) {
        return NGX_OK;
    }

    cln = ngx_http_hpack_pool_cleanup_add(pool,
                                       sizeof(ngx_http_hpack_status_conn_t));
    if (cln == NULL) {
        return NGX_ERROR;
    }

    sc = cln->data;
    sc->destroy = destroy;
    sc->data = data;
    sc->protocol = protocol;

    cln->handler = ngx_http_hpack_status_close;

    *status = ngx_http_hpack_status_counters(protocol);

    if (protocol == NGX_HTTP_HPACK_H2) {
        allocator->alloc = ngx_http_hpack_counted_alloc_h2;
        allocator->free = ngx_http_hpack_counted_free_h2;

    } else {
        allocator->alloc = ngx_http_hpack_counted_alloc_h3;
        allocator->free = ngx_http_hpack_counted_free_h3;
    }

    ngx_http_hpack_status_gauge(protocol, NGX_HTTP_HPACK_CONNECTIONS, 1);

    return NGX_OK;
}


static void
ngx_http_hpack_status_close(void *data)
{
    ngx_http_hpack_status_conn_t  *sc = data;

    sc->destroy(sc->data);

    ngx_http_hpack_status_gauge(sc->protocol, NGX_HTTP_HPACK_CONNECTIONS, -1);
}


static ngx_http_hpack_status_t *
ngx_http_hpack_status_counters(ngx_uint_t protocol)
{
    return (ngx_http_hpack_status_t *) (ngx_http_hpack_status_shm
                                   + protocol * NGX_HTTP_HPACK_STATUS_STRIDE);
}


/* a request block the codec refused, by the codec's error */

void
ngx_http_hpack_count_codec_error(ngx_http_hpack_conn_t *hc, int rc)
{
    ngx_uint_t  kind;

    if (hc->status == NULL) {
        return;
    }

    switch (rc) {

    case HPACK_E_HUFFMAN_EOS:
    case HPACK_E_HUFFMAN_PADDING:
        kind = NGX_HTTP_HPACK_ERR_HUFFMAN;
        break;

    case HPACK_E_INTEGER:
        kind = NGX_HTTP_HPACK_ERR_INTEGER;
        break;

    case HPACK_E_INDEX:
        kind = NGX_HTTP_HPACK_ERR_INDEX;
        break;

    case HPACK_E_TRUNCATED:
        kind = NGX_HTTP_HPACK_ERR_TRUNCATED;
        break;

    case HPACK_E_UPDATE_POSITION:
    case HPACK_E_UPDATE_SIZE:
    case HPACK_E_UPDATE_MISSING:
        kind = NGX_HTTP_HPACK_ERR_SIZE_UPDATE;
        break;

    case HPACK_E_FIELD_TOO_LARGE:
    case HPACK_E_LIST_TOO_LARGE:
    case HPACK_E_STRING_TOO_LARGE:
        kind = NGX_HTTP_HPACK_ERR_LIMITS;
        break;

    default:
        kind = NGX_HTTP_HPACK_ERR_INTERNAL;
    }

    (void) ngx_atomic_fetch_add(&hc->status->errors[kind], 1);
}


/*
 * a request block the glue refused (ngx_http_hpack_decode_block()), by
 * the HTTP/2 error it answers with
 */

void
ngx_http_hpack_count_h2_error(ngx_http_hpack_conn_t *hc, ngx_int_t err)
{
    ngx_uint_t  kind;

    if (hc->status == NULL) {
        return;
    }

    switch (err) {

    case NGX_HTTP_HPACK_PROTOCOL_ERROR:
        kind = NGX_HTTP_HPACK_ERR_EMPTY_NAME;
        break;

    case HPACK_H2_ENHANCE_YOUR_CALM:
        kind = NGX_HTTP_HPACK_ERR_LIMITS;
        break;

    default:
        kind = NGX_HTTP_HPACK_ERR_INTERNAL;
    }

    (void) ngx_atomic_fetch_add(&hc->status->errors[kind], 1);
}


#if (NGX_HTTP_HPACK_V3)

/*
 * an HTTP/3 request section or a client's QPACK stream the codec refused,
 * by the codec's error
 */

void
ngx_http_hpack_count_qpack_error(ngx_http_hpack_status_t *status, int rc)
{
    ngx_uint_t  kind;

    if (status == NULL) {
        return;
    }

    switch (rc) {

    case QPACK_E_HUFFMAN_EOS:
    case QPACK_E_HUFFMAN_PADDING:
        kind = NGX_HTTP_HPACK_ERR_HUFFMAN;
        break;

    case QPACK_E_INTEGER:
        kind = NGX_HTTP_HPACK_ERR_INTEGER;
        break;

    case QPACK_E_STATIC_INDEX:
    case QPACK_E_DYNAMIC_INDEX:
        kind = NGX_HTTP_HPACK_ERR_INDEX;
        break;

    case QPACK_E_TRUNCATED:
        kind = NGX_HTTP_HPACK_ERR_TRUNCATED;
        break;

    case QPACK_E_INSERT_COUNT:
    case QPACK_E_BASE:
        kind = NGX_HTTP_HPACK_ERR_INSERT_COUNT;
        break;

    case QPACK_E_BLOCKED_STREAMS:
        kind = NGX_HTTP_HPACK_ERR_BLOCKED_STREAMS;
        break;

    case QPACK_E_FIELD_TOO_LARGE:
    case QPACK_E_SECTION_TOO_LARGE:
    case QPACK_E_STRING_TOO_LARGE:
        kind = NGX_HTTP_HPACK_ERR_LIMITS;
        break;

    default:
        switch (qpack_h3_error(rc)) {

        case QPACK_H3_ENCODER_STREAM_ERROR:
            kind = NGX_HTTP_HPACK_ERR_ENCODER_STREAM;
            break;

        case QPACK_H3_DECODER_STREAM_ERROR:
            kind = NGX_HTTP_HPACK_ERR_DECODER_STREAM;
            break;

        default:
            kind = NGX_HTTP_HPACK_ERR_INTERNAL;
        }
    }

    (void) ngx_atomic_fetch_add(&status->errors[kind], 1);
}

#endif


static void *
ngx_http_hpack_counted_alloc_h2(void *ctx, size_t size)
{
    return ngx_http_hpack_counted_alloc(ctx, size, NGX_HTTP_HPACK_H2);
}


static void
ngx_http_hpack_counted_free_h2(void *ctx, void *p)
{
    ngx_http_hpack_counted_free(ctx, p, NGX_HTTP_HPACK_H2);
}


static void *
ngx_http_hpack_counted_alloc_h3(void *ctx, size_t size)
{
    return ngx_http_hpack_counted_alloc(ctx, size, NGX_HTTP_HPACK_H3);
}


static void
ngx_http_hpack_counted_free_h3(void *ctx, void *p)
{
    ngx_http_hpack_counted_free(ctx, p, NGX_HTTP_HPACK_H3);
}


static void *
ngx_http_hpack_counted_alloc(void *ctx, size_t size, ngx_uint_t protocol)
{
    u_char  *p;

    p = ngx_http_hpack_palloc((ngx_pool_t *) ctx,
                              NGX_HTTP_HPACK_SIZE_PREFIX + size);
    if (p == NULL) {
        return NULL;
    }

    *(size_t *) p = size;

    ngx_http_hpack_status_gauge(protocol, NGX_HTTP_HPACK_TABLE_BYTES,
                                (ngx_atomic_int_t) size);

    return p + NGX_HTTP_HPACK_SIZE_PREFIX;
}


static void
ngx_http_hpack_counted_free(void *ctx, void *p, ngx_uint_t protocol)
{
    u_char  *start;

    start = (u_char *) p - NGX_HTTP_HPACK_SIZE_PREFIX;

    ngx_http_hpack_status_gauge(protocol, NGX_HTTP_HPACK_TABLE_BYTES,
                                - (ngx_atomic_int_t) *(size_t *) start);

    (void) ngx_pfree(ctx, start);
}


static void
ngx_http_hpack_status_gauge(ngx_uint_t protocol, ngx_uint_t gauge,
    ngx_atomic_int_t n)
{
    if (ngx_http_hpack_status_shm == NULL) {
        return;
    }

    ngx_http_hpack_own_gauges[protocol][gauge] += n;
    (void) ngx_atomic_fetch_add(
                  &ngx_http_hpack_status_counters(protocol)->gauges[gauge], n);
}


/*
 * A worker that exits may leave connections open (a fast shutdown does
 * not close them): what it added to the gauges goes, and nothing it does
 * later counts.
 */

void
ngx_http_hpack_status_exit(void)
{
    ngx_uint_t                i, p;
    ngx_http_hpack_status_t  *st;

    if (ngx_http_hpack_status_shm == NULL) {
        return;
    }

    for (p = 0; p < NGX_HTTP_HPACK_PROTOCOLS; p++) {
        st = ngx_http_hpack_status_counters(p);

        for (i = 0; i < NGX_HTTP_HPACK_GAUGES; i++) {
            (void) ngx_atomic_fetch_add(&st->gauges[i],
                                        - ngx_http_hpack_own_gauges[p][i]);
            ngx_http_hpack_own_gauges[p][i] = 0;
        }
    }

    ngx_http_hpack_status_shm = NULL;
}


/* ------------------------------------------------------------------ page */

static ngx_int_t
ngx_http_hpack_status_text_handler(ngx_http_request_t *r)
{
    return ngx_http_hpack_status_handler(r, 0);
}


static ngx_int_t
ngx_http_hpack_status_json_handler(ngx_http_request_t *r)
{
    return ngx_http_hpack_status_handler(r, 1);
}


/* json is the location's format; ?format=json or ?format=text chooses */

static ngx_int_t
ngx_http_hpack_status_handler(ngx_http_request_t *r, ngx_uint_t json)
{
    size_t        size;
    uint64_t      values[NGX_HTTP_HPACK_PROTOCOLS][NGX_HTTP_HPACK_METRICS];
    uint64_t      errors[NGX_HTTP_HPACK_PROTOCOLS][NGX_HTTP_HPACK_ERRORS];
    ngx_int_t     rc;
    ngx_str_t     format;
    ngx_buf_t    *b;
    ngx_uint_t    i, p;
    ngx_chain_t   out;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    if (ngx_http_arg(r, (u_char *) "format", sizeof("format") - 1, &format)
        == NGX_OK)
    {
        if (format.len == 4 && ngx_strncmp(format.data, "json", 4) == 0) {
            json = 1;

        } else if (format.len == 4
                   && ngx_strncmp(format.data, "text", 4) == 0)
        {
            json = 0;

        } else {
            return NGX_HTTP_BAD_REQUEST;
        }
    }

    rc = ngx_http_discard_request_body(r);

    if (rc != NGX_OK) {
        return rc;
    }

    if (json) {
        ngx_str_set(&r->headers_out.content_type, "application/json");

    } else {
        /* Prometheus's text exposition format */
        ngx_str_set(&r->headers_out.content_type,
                    "text/plain; version=0.0.4; charset=utf-8");
    }

    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    /*
     * the text form is the longer one: each name twice, then once per
     * protocol with its label
     */

    size = ngx_http_hpack_errors_head.len;

    for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
        size += sizeof("# HELP  \n# TYPE  \n")
                + 2 * ngx_strlen(ngx_http_hpack_metrics[i].name)
                + ngx_strlen(ngx_http_hpack_metrics[i].type)
                + ngx_strlen(ngx_http_hpack_metrics[i].help);

        for (p = 0; p < NGX_HTTP_HPACK_PROTOCOLS; p++) {
            size += sizeof("{protocol=\"\"} \n")
                    + ngx_strlen(ngx_http_hpack_metrics[i].name)
                    + ngx_http_hpack_protocols[p].name.len + NGX_INT64_LEN;
        }
    }

    for (p = 0; p < NGX_HTTP_HPACK_PROTOCOLS; p++) {
        for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
            size += sizeof("hpack_errors_total{protocol=\"\",kind=\"\"} \n")
                    + ngx_http_hpack_protocols[p].name.len
                    + ngx_http_hpack_error_kinds[i].len + NGX_INT64_LEN;
        }
    }

    b = ngx_http_hpack_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.buf = b;
    out.next = NULL;

    for (p = 0; p < NGX_HTTP_HPACK_PROTOCOLS; p++) {
        ngx_http_hpack_status_values(ngx_http_hpack_status_counters(p),
                                     values[p], errors[p]);
    }

    if (json) {
        b->last = ngx_http_hpack_status_json(b->last, values, errors);

    } else {
        b->last = ngx_http_hpack_status_text(b->last, values, errors);
    }

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;

    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    return ngx_http_output_filter(r, &out);
}


/* a protocol's counters now, in the order of ngx_http_hpack_metrics */

static void
ngx_http_hpack_status_values(ngx_http_hpack_status_t *st, uint64_t *values,
    uint64_t *errors)
{
    uint64_t    in_fields, out_fields;
    ngx_uint_t  i;

    in_fields = st->in[NGX_HTTP_HPACK_FIELDS];
    out_fields = st->out[NGX_HTTP_HPACK_FIELDS];

    values[0] = st->gauges[NGX_HTTP_HPACK_CONNECTIONS];
    values[1] = st->gauges[NGX_HTTP_HPACK_TABLE_BYTES];
    values[2] = st->in[NGX_HTTP_HPACK_WIRE];
    values[3] = st->in[NGX_HTTP_HPACK_PLAIN] + in_fields * 32;
    values[4] = st->out[NGX_HTTP_HPACK_WIRE];
    values[5] = st->out[NGX_HTTP_HPACK_PLAIN] + out_fields * 32;
    values[6] = in_fields;
    values[7] = st->in[NGX_HTTP_HPACK_INDEXED];
    values[8] = out_fields;
    values[9] = st->out[NGX_HTTP_HPACK_INDEXED];
    values[10] = st->in_stream;
    values[11] = st->out_stream;

    for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
        errors[i] = st->errors[i];
    }
}


/*
 * name{protocol="h2"} value, a line per protocol; of the errors, the
 * kinds each protocol has
 */

static u_char *
ngx_http_hpack_status_text(u_char *p,
    uint64_t values[][NGX_HTTP_HPACK_METRICS],
    uint64_t errors[][NGX_HTTP_HPACK_ERRORS])
{
    ngx_uint_t                  i, k;
    ngx_http_hpack_metric_t    *m;
    ngx_http_hpack_protocol_t  *pr;

    for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
        m = &ngx_http_hpack_metrics[i];

        p = ngx_sprintf(p, "# HELP %s %s\n# TYPE %s %s\n",
                        m->name, m->help, m->name, m->type);

        for (k = 0; k < NGX_HTTP_HPACK_PROTOCOLS; k++) {
            p = ngx_sprintf(p, "%s{protocol=\"%V\"} %uL\n", m->name,
                            &ngx_http_hpack_protocols[k].name, values[k][i]);
        }
    }

    p = ngx_cpymem(p, ngx_http_hpack_errors_head.data,
                   ngx_http_hpack_errors_head.len);

    for (k = 0; k < NGX_HTTP_HPACK_PROTOCOLS; k++) {
        pr = &ngx_http_hpack_protocols[k];

        for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
            if (pr->kinds & ((ngx_uint_t) 1 << i)) {
                p = ngx_sprintf(p, "hpack_errors_total{protocol=\"%V\","
                                "kind=\"%V\"} %uL\n", &pr->name,
                                &ngx_http_hpack_error_kinds[i], errors[k][i]);
            }
        }
    }

    return p;
}


/* {"h2":{"hpack_connections":0,...,"hpack_errors_total":{...}},"h3":{...}} */

static u_char *
ngx_http_hpack_status_json(u_char *p,
    uint64_t values[][NGX_HTTP_HPACK_METRICS],
    uint64_t errors[][NGX_HTTP_HPACK_ERRORS])
{
    ngx_uint_t                  i, k;
    const char                 *sep;
    ngx_http_hpack_protocol_t  *pr;

    *p++ = '{';

    for (k = 0; k < NGX_HTTP_HPACK_PROTOCOLS; k++) {
        pr = &ngx_http_hpack_protocols[k];

        p = ngx_sprintf(p, "%s\"%V\":{", k ? "," : "", &pr->name);

        for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
            p = ngx_sprintf(p, "\"%s\":%uL,", ngx_http_hpack_metrics[i].name,
                            values[k][i]);
        }

        p = ngx_cpymem(p, "\"hpack_errors_total\":{",
                       sizeof("\"hpack_errors_total\":{") - 1);

        sep = "";

        for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
            if (pr->kinds & ((ngx_uint_t) 1 << i)) {
                p = ngx_sprintf(p, "%s\"%V\":%uL", sep,
                                &ngx_http_hpack_error_kinds[i], errors[k][i]);
                sep = ",";
            }
        }

        p = ngx_cpymem(p, "}}", 2);
    }

    return ngx_cpymem(p, "}\n", 2);
}
