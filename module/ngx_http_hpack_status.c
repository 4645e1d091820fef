
/*
 * hpack_status: what the module saves and holds, over every worker since
 * the start, kept in a shared zone, and the page that shows it
 * (Prometheus's text format, or JSON).
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


/*
 * the size of what the codec allocates goes in front of it, in 16 octets
 * so that the alignment ngx_palloc() gives is kept
 */
#define NGX_HTTP_HPACK_SIZE_PREFIX  16

/* one entry of the page a line */
#define NGX_HTTP_HPACK_METRICS      10


typedef struct {
    char                              *name;
    char                              *type;
    char                              *help;
} ngx_http_hpack_metric_t;


static ngx_int_t ngx_http_hpack_status_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static void *ngx_http_hpack_counted_alloc(void *ctx, size_t size);
static void ngx_http_hpack_counted_free(void *ctx, void *p);
static void ngx_http_hpack_status_close(void *data);
static void ngx_http_hpack_status_gauge(ngx_uint_t gauge, ngx_atomic_int_t n);
static ngx_int_t ngx_http_hpack_status_text_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_hpack_status_json_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_hpack_status_handler(ngx_http_request_t *r,
    ngx_uint_t json);
static void ngx_http_hpack_status_values(uint64_t *values, uint64_t *errors);
static u_char *ngx_http_hpack_status_text(u_char *p, uint64_t *values,
    uint64_t *errors);
static u_char *ngx_http_hpack_status_json(u_char *p, uint64_t *values,
    uint64_t *errors);


/* in the order of the page and of ngx_http_hpack_status_values() */

static ngx_http_hpack_metric_t  ngx_http_hpack_metrics[] = {

    { "hpack_connections", "gauge",
      "HTTP/2 connections with HPACK state, open now." },

    { "hpack_table_bytes", "gauge",
      "Bytes the decoders and encoders of open connections hold now "
      "(tables, indexes, buffers), as allocated." },

    { "hpack_in_wire_bytes_total", "counter",
      "Request header blocks as received, octets." },

    { "hpack_in_plain_bytes_total", "counter",
      "Request header blocks decoded, RFC 7541 size "
      "(name + value + 32 per field)." },

    { "hpack_out_wire_bytes_total", "counter",
      "Response header blocks as sent, octets (HEADERS and CONTINUATION "
      "payloads)." },

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
      "Response header fields sent as an index." }
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
    ngx_string("internal")
};


static ngx_str_t  ngx_http_hpack_errors_head = ngx_string(
    "# HELP hpack_errors_total Request header blocks refused, by kind.\n"
    "# TYPE hpack_errors_total counter\n");


static ngx_str_t  ngx_http_hpack_status_zone_name =
    ngx_string("hpack_status");


/*
 * the zone of this process's cycle: NULL without hpack_status, and once
 * the process exits
 */
static ngx_http_hpack_status_t  *ngx_http_hpack_status_shm;

/* what this process added to the gauges */
static ngx_atomic_int_t  ngx_http_hpack_own_gauges[NGX_HTTP_HPACK_GAUGES];


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

    p = ngx_slab_calloc(shpool, sizeof(ngx_http_hpack_status_t)
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
 * With hpack_status the codec's objects allocate through the counting
 * allocator and are destroyed with the connection's pool, so that the
 * memory gauge gives back what they held.
 */

ngx_int_t
ngx_http_hpack_status_open(ngx_http_hpack_conn_t *hc, ngx_pool_t *pool)
{
    ngx_pool_cleanup_t  *cln;

    if (ngx_http_hpack_status_shm == NULL) {
        return NGX_OK;
    }

    cln = ngx_http_hpack_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_hpack_status_close;
    cln->data = hc;

    hc->status = ngx_http_hpack_status_shm;

    hc->allocator.alloc = ngx_http_hpack_counted_alloc;
    hc->allocator.free = ngx_http_hpack_counted_free;

    ngx_http_hpack_status_gauge(NGX_HTTP_HPACK_CONNECTIONS, 1);

    return NGX_OK;
}


static void
ngx_http_hpack_status_close(void *data)
{
    ngx_http_hpack_conn_t  *hc = data;

    hpack_decoder_destroy(hc->decoder);
    hpack_encoder_destroy(hc->encoder);

    hc->decoder = NULL;
    hc->encoder = NULL;

    ngx_http_hpack_status_gauge(NGX_HTTP_HPACK_CONNECTIONS, -1);
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


static void *
ngx_http_hpack_counted_alloc(void *ctx, size_t size)
{
    u_char  *p;

    p = ngx_http_hpack_palloc((ngx_pool_t *) ctx,
                              NGX_HTTP_HPACK_SIZE_PREFIX + size);
    if (p == NULL) {
        return NULL;
    }

    *(size_t *) p = size;

    ngx_http_hpack_status_gauge(NGX_HTTP_HPACK_TABLE_BYTES,
                                (ngx_atomic_int_t) size);

    return p + NGX_HTTP_HPACK_SIZE_PREFIX;
}


static void
ngx_http_hpack_counted_free(void *ctx, void *p)
{
    u_char  *start;

    start = (u_char *) p - NGX_HTTP_HPACK_SIZE_PREFIX;

    ngx_http_hpack_status_gauge(NGX_HTTP_HPACK_TABLE_BYTES,
                                - (ngx_atomic_int_t) *(size_t *) start);

    (void) ngx_pfree(ctx, start);
}


static void
ngx_http_hpack_status_gauge(ngx_uint_t gauge, ngx_atomic_int_t n)
{
    if (ngx_http_hpack_status_shm == NULL) {
        return;
    }

    ngx_http_hpack_own_gauges[gauge] += n;
    (void) ngx_atomic_fetch_add(&ngx_http_hpack_status_shm->gauges[gauge], n);
}


/*
 * A worker that exits may leave connections open (a fast shutdown does
 * not close them): what it added to the gauges goes, and nothing it does
 * later counts.
 */

void
ngx_http_hpack_status_exit(void)
{
    ngx_uint_t  i;

    if (ngx_http_hpack_status_shm == NULL) {
        return;
    }

    for (i = 0; i < NGX_HTTP_HPACK_GAUGES; i++) {
        (void) ngx_atomic_fetch_add(&ngx_http_hpack_status_shm->gauges[i],
                                    - ngx_http_hpack_own_gauges[i]);
        ngx_http_hpack_own_gauges[i] = 0;
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
    uint64_t      values[NGX_HTTP_HPACK_METRICS];
    uint64_t      errors[NGX_HTTP_HPACK_ERRORS];
    ngx_int_t     rc;
    ngx_str_t     format;
    ngx_buf_t    *b;
    ngx_uint_t    i;
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

    /* the text form is the longer one: each name three times */

    size = ngx_http_hpack_errors_head.len;

    for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
        size += sizeof("# HELP  \n# TYPE  \n \n")
                + 3 * ngx_strlen(ngx_http_hpack_metrics[i].name)
                + ngx_strlen(ngx_http_hpack_metrics[i].type)
                + ngx_strlen(ngx_http_hpack_metrics[i].help)
                + NGX_INT64_LEN;
    }

    for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
        size += sizeof("hpack_errors_total{kind=\"\"} \n")
                + ngx_http_hpack_error_kinds[i].len + NGX_INT64_LEN;
    }

    b = ngx_http_hpack_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.buf = b;
    out.next = NULL;

    ngx_http_hpack_status_values(values, errors);

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


/* the zone now, in the order of ngx_http_hpack_metrics */

static void
ngx_http_hpack_status_values(uint64_t *values, uint64_t *errors)
{
    uint64_t                 in_fields, out_fields;
    ngx_uint_t               i;
    ngx_http_hpack_status_t  *st;

    st = ngx_http_hpack_status_shm;

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

    for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
        errors[i] = st->errors[i];
    }
}


static u_char *
ngx_http_hpack_status_text(u_char *p, uint64_t *values, uint64_t *errors)
{
    ngx_uint_t                i;
    ngx_http_hpack_metric_t  *m;

    for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
        m = &ngx_http_hpack_metrics[i];

        p = ngx_sprintf(p, "# HELP %s %s\n# TYPE %s %s\n%s %uL\n",
                        m->name, m->help, m->name, m->type, m->name,
                        values[i]);
    }

    p = ngx_cpymem(p, ngx_http_hpack_errors_head.data,
                   ngx_http_hpack_errors_head.len);

    for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
        p = ngx_sprintf(p, "hpack_errors_total{kind=\"%V\"} %uL\n",
                        &ngx_http_hpack_error_kinds[i], errors[i]);
    }

    return p;
}


static u_char *
ngx_http_hpack_status_json(u_char *p, uint64_t *values, uint64_t *errors)
{
    ngx_uint_t  i;

    *p++ = '{';

    for (i = 0; i < NGX_HTTP_HPACK_METRICS; i++) {
        p = ngx_sprintf(p, "\"%s\":%uL,", ngx_http_hpack_metrics[i].name,
                        values[i]);
    }

    p = ngx_cpymem(p, "\"hpack_errors_total\":{",
                   sizeof("\"hpack_errors_total\":{") - 1);

    for (i = 0; i < NGX_HTTP_HPACK_ERRORS; i++) {
        p = ngx_sprintf(p, "%s\"%V\":%uL", i ? "," : "",
                        &ngx_http_hpack_error_kinds[i], errors[i]);
    }

    return ngx_cpymem(p, "}}\n", 3);
}
