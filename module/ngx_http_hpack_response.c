
/*
 * Response header blocks: every block of the connection, headers, 103
 * Early Hints and trailers, goes through one encoder with the full dynamic
 * table, in the order the blocks reach the wire.  The field lists are
 * built here for HTTP/3's sections too (ngx_http_hpack_header_fields(),
 * ngx_http_hpack_list_fields()).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include "ngx_http_hpack_module.h"


/*
 * Last-Modified as ngx_http_time() writes it, for the times of the
 * responses before (ngx_http_hpack_http_time()): direct-mapped on the
 * time, per worker
 */

#define NGX_HTTP_HPACK_HTTP_TIMES    32

typedef struct {
    time_t                      time;
    u_char                      len;        /* 0: the slot is empty */
    u_char                      text[sizeof("Wed, 31 Dec 1986 18:00:00 GMT")];
} ngx_http_hpack_http_time_t;

static ngx_http_hpack_http_time_t
    ngx_http_hpack_http_times[NGX_HTTP_HPACK_HTTP_TIMES];


/*
 * Content-Length as ngx_http_v2_header_filter() writes it ("%O"), for the
 * lengths of the responses before (ngx_http_hpack_length_text()):
 * direct-mapped on the length
 */

#define NGX_HTTP_HPACK_LENGTHS       32

typedef struct {
    off_t                       length;
    u_char                      len;        /* 0: the slot is empty */
    u_char                      text[NGX_OFF_T_LEN];
} ngx_http_hpack_length_text_t;

static ngx_http_hpack_length_text_t
    ngx_http_hpack_lengths[NGX_HTTP_HPACK_LENGTHS];


/*
 * :status as ngx_http_v2_header_filter() writes it ("%03ui"), per status
 * below 1000, once per worker (ngx_http_hpack_status_text())
 */

#define NGX_HTTP_HPACK_STATUS_TEXTS  1000

static u_char  ngx_http_hpack_status_texts[NGX_HTTP_HPACK_STATUS_TEXTS][3];


#define ngx_http_hpack_field(hd, name, value, value_len)                      \
    ngx_http_hpack_set_field(hd, (u_char *) name, sizeof(name) - 1, value,    \
                             value_len)

static ngx_inline void ngx_http_hpack_set_field(hpack_header_t *hd,
    u_char *name, size_t name_len, u_char *value, size_t value_len);
static void ngx_http_hpack_server(ngx_http_request_t *r,
    ngx_http_hpack_main_conf_t *hmcf, hpack_header_t *hd);
static ngx_http_hpack_http_time_t *ngx_http_hpack_http_time(time_t t);
static ngx_http_hpack_length_text_t *ngx_http_hpack_length_text(off_t length);
static size_t ngx_http_hpack_status_text(ngx_uint_t status, u_char *buf,
    u_char **text);
static ngx_int_t ngx_http_hpack_content_type(ngx_http_request_t *r,
    hpack_header_t *hd);
static hpack_header_t *ngx_http_hpack_fields(ngx_http_request_t *r,
    ngx_uint_t n, hpack_header_t *local);
static ngx_int_t ngx_http_hpack_add_list(ngx_http_request_t *r,
    ngx_list_t *list, hpack_header_t *hs, ngx_uint_t *n);
static size_t ngx_http_hpack_names_len(ngx_list_part_t *part, ngx_uint_t i);
static ngx_uint_t ngx_http_hpack_has_upper(u_char *src, size_t len);
static ngx_int_t ngx_http_hpack_encode(ngx_http_request_t *r,
    hpack_header_t *hs, ngx_uint_t n, u_char **start, u_char **end);
static ngx_int_t ngx_http_hpack_encoder(ngx_http_request_t *r,
    ngx_http_hpack_conn_t *hc);


ngx_int_t
ngx_http_hpack_settings_table_size(ngx_http_v2_connection_t *h2c,
    size_t size)
{
    ngx_http_hpack_conn_t  *hc;

    hc = h2c->hpack_ctx;

    if (size > HPACK_MAX_TABLE_SIZE) {
        size = HPACK_MAX_TABLE_SIZE;
    }

    if (hc->encoder == NULL) {
        hc->peer_table_size = size;
        hc->peer_table_size_set = 1;
        return NGX_OK;
    }

    if (hpack_encoder_set_peer_table_size(hc->encoder, size) != HPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, h2c->connection->log, 0,
                      "hpack_encoder_set_peer_table_size(%uz) failed", size);
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_hpack_encode_headers(ngx_http_request_t *r, u_char **start,
    u_char **end)
{
    ngx_uint_t              n;
    hpack_header_t         *hs;
    ngx_http_hpack_conn_t  *hc;
    hpack_header_t          local[NGX_HTTP_HPACK_LOCAL_FIELDS];
    u_char                  status[NGX_INT_T_LEN];

    hc = r->stream->connection->hpack_ctx;

    if (ngx_http_hpack_header_fields(r, hc->main_conf, local, status, &hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_hpack_encode(r, hs, n, start, end);
}


/*
 * The fields of a response's header section and their order: those of
 * ngx_http_v2_header_filter() and ngx_http_v3_header_filter(), the same
 * on both, which have already settled the status, the location and
 * gzip_vary.  The array is local when they fit, status a buffer for the
 * text of a status from 1000; both are needed until the section is
 * encoded.
 */

ngx_int_t
ngx_http_hpack_header_fields(ngx_http_request_t *r,
    ngx_http_hpack_main_conf_t *hmcf, hpack_header_t *local, u_char *status,
    hpack_header_t **fields, ngx_uint_t *nfields)
{
    size_t                         len;
    u_char                        *text;
    ngx_uint_t                     n;
    hpack_header_t                *hs, *hd;
    ngx_list_part_t               *part;
    ngx_http_hpack_http_time_t    *modified;
    ngx_http_hpack_length_text_t  *length;

    n = 8;

    for (part = &r->headers_out.headers.part; part; part = part->next) {
        n += part->nelts;
    }

    hs = ngx_http_hpack_fields(r, n, local);
    if (hs == NULL) {
        return NGX_ERROR;
    }

    hd = hs;

    len = ngx_http_hpack_status_text(r->headers_out.status, status, &text);
    ngx_http_hpack_field(hd, ":status", text, len);
    hd++;

    if (r->headers_out.server == NULL) {
        ngx_http_hpack_server(r, hmcf, hd);
        hd++;
    }

    if (r->headers_out.date == NULL) {
        ngx_http_hpack_field(hd, "date", ngx_cached_http_time.data,
                             ngx_cached_http_time.len);
        hd++;
    }

    if (r->headers_out.content_type.len) {
        if (ngx_http_hpack_content_type(r, hd) != NGX_OK) {
            return NGX_ERROR;
        }

        hd++;
    }

    if (r->headers_out.content_length == NULL
        && r->headers_out.content_length_n >= 0)
    {
        length = ngx_http_hpack_length_text(
                                         r->headers_out.content_length_n);
        ngx_http_hpack_field(hd, "content-length", length->text,
                             length->len);
        hd++;
    }

    if (r->headers_out.last_modified == NULL
        && r->headers_out.last_modified_time != -1)
    {
        modified = ngx_http_hpack_http_time(
                                         r->headers_out.last_modified_time);
        ngx_http_hpack_field(hd, "last-modified", modified->text,
                             modified->len);
        hd++;
    }

    if (r->headers_out.location && r->headers_out.location->value.len) {
        ngx_http_hpack_field(hd, "location",
                             r->headers_out.location->value.data,
                             r->headers_out.location->value.len);
        hd++;
    }

#if (NGX_HTTP_GZIP)
    if (r->gzip_vary) {
        ngx_http_hpack_field(hd, "vary", (u_char *) "Accept-Encoding",
                             sizeof("Accept-Encoding") - 1);
        hd++;
    }
#endif

    n = hd - hs;

    if (ngx_http_hpack_add_list(r, &r->headers_out.headers, hs, &n)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    *fields = hs;
    *nfields = n;

    return NGX_OK;
}


/* a field of the module's own: no pre-encoded value, no flags */

static ngx_inline void
ngx_http_hpack_set_field(hpack_header_t *hd, u_char *name, size_t name_len,
    u_char *value, size_t value_len)
{
    hd->name = name;
    hd->name_len = name_len;
    hd->value = value;
    hd->value_len = value_len;
    hd->value_literal = NULL;
    hd->value_literal_len = 0;
    hd->flags = 0;
}


/*
 * A static file's Last-Modified is the same text on every response, and
 * ngx_http_time() takes about 1,200 instructions to write it (ngx_gmtime(),
 * ngx_sprintf()) where a slot that holds it takes a compare.  The text is
 * a function of the time alone, so a slot is never stale; one of a worker's
 * 32 (1,280 octets) per time, the next time in that slot overwrites it.
 * The text stays put until the block is encoded: a worker writes one block
 * at a time.
 */

static ngx_http_hpack_http_time_t *
ngx_http_hpack_http_time(time_t t)
{
    ngx_http_hpack_http_time_t  *slot;

    slot = &ngx_http_hpack_http_times[(ngx_uint_t) t
                                      % NGX_HTTP_HPACK_HTTP_TIMES];

    if (slot->len == 0 || slot->time != t) {
        slot->time = t;
        slot->len = (u_char) (ngx_http_time(slot->text, t) - slot->text);
    }

    return slot;
}


/*
 * The text of a Content-Length, as ngx_http_hpack_http_time() keeps a
 * Last-Modified: ngx_sprintf() takes about 180 instructions to write it,
 * and the same files are sent again and again.
 */

static ngx_http_hpack_length_text_t *
ngx_http_hpack_length_text(off_t length)
{
    ngx_http_hpack_length_text_t  *slot;

    slot = &ngx_http_hpack_lengths[(ngx_uint_t) length
                                   % NGX_HTTP_HPACK_LENGTHS];

    if (slot->len == 0 || slot->length != length) {
        slot->length = length;
        slot->len = (u_char) (ngx_sprintf(slot->text, "%O", length)
                              - slot->text);
    }

    return slot;
}


/*
 * The text of a status: ngx_sprintf() takes about 180 instructions to
 * write it, on every response, where the worker's copy of the text is a
 * load.  Statuses from 1000 ("error_page ... =code" takes any number) are
 * written into buf.
 */

static size_t
ngx_http_hpack_status_text(ngx_uint_t status, u_char *buf, u_char **text)
{
    u_char  *t;

    if (status >= NGX_HTTP_HPACK_STATUS_TEXTS) {
        *text = buf;
        return ngx_sprintf(buf, "%03ui", status) - buf;
    }

    t = ngx_http_hpack_status_texts[status];

    if (t[0] == '\0') {
        (void) ngx_sprintf(t, "%03ui", status);
    }

    *text = t;

    return 3;
}


/* "server" by server_tokens, with its literal form encoded at startup */

static void
ngx_http_hpack_server(ngx_http_request_t *r, ngx_http_hpack_main_conf_t *hmcf,
    hpack_header_t *hd)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (clcf->server_tokens == NGX_HTTP_SERVER_TOKENS_ON) {
        ngx_http_hpack_field(hd, "server", (u_char *) NGINX_VER,
                             sizeof(NGINX_VER) - 1);
        hd->value_literal = hmcf->server_literal[1].data;
        hd->value_literal_len = hmcf->server_literal[1].len;

    } else if (clcf->server_tokens == NGX_HTTP_SERVER_TOKENS_BUILD) {
        ngx_http_hpack_field(hd, "server", (u_char *) NGINX_VER_BUILD,
                             sizeof(NGINX_VER_BUILD) - 1);
        hd->value_literal = hmcf->server_literal[2].data;
        hd->value_literal_len = hmcf->server_literal[2].len;

    } else {
        ngx_http_hpack_field(hd, "server", (u_char *) "nginx",
                             sizeof("nginx") - 1);
        hd->value_literal = hmcf->server_literal[0].data;
        hd->value_literal_len = hmcf->server_literal[0].len;
    }
}


static ngx_int_t
ngx_http_hpack_content_type(ngx_http_request_t *r, hpack_header_t *hd)
{
    u_char  *p;
    size_t   len;

    if (r->headers_out.content_type_len == r->headers_out.content_type.len
        && r->headers_out.charset.len)
    {
        len = r->headers_out.content_type.len + sizeof("; charset=") - 1
              + r->headers_out.charset.len;

        p = ngx_http_hpack_pnalloc(r->pool, len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        p = ngx_cpymem(p, r->headers_out.content_type.data,
                       r->headers_out.content_type.len);

        p = ngx_cpymem(p, "; charset=", sizeof("; charset=") - 1);

        p = ngx_cpymem(p, r->headers_out.charset.data,
                       r->headers_out.charset.len);

        /* updated r->headers_out.content_type is also needed for logging */

        r->headers_out.content_type.len = len;
        r->headers_out.content_type.data = p - len;
    }

    ngx_http_hpack_field(hd, "content-type", r->headers_out.content_type.data,
                         r->headers_out.content_type.len);

    return NGX_OK;
}


ngx_int_t
ngx_http_hpack_encode_trailers(ngx_http_request_t *r, u_char **start,
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

    return ngx_http_hpack_encode(r, hs, n, start, end);
}


#if (nginx_version >= 1029000)

/*
 * The fields of ngx_http_v2_early_hints_filter(), which has checked their
 * lengths and that there is at least one: ":status: 103" and the headers
 * the early hints carry.  A pending table size update leads this block if
 * it is the first to go, as it would any other.
 */

ngx_int_t
ngx_http_hpack_encode_early_hints(ngx_http_request_t *r, u_char **start,
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

    return ngx_http_hpack_encode(r, hs, n, start, end);
}

#endif


/*
 * The fields of list, after ":status: status" unless NULL (trailers, and a
 * 103's fields), in an array as ngx_http_hpack_header_fields() gives it
 */

ngx_int_t
ngx_http_hpack_list_fields(ngx_http_request_t *r, ngx_list_t *list,
    char *status, hpack_header_t *local, hpack_header_t **fields,
    ngx_uint_t *nfields)
{
    ngx_uint_t        n;
    hpack_header_t   *hs;
    ngx_list_part_t  *part;

    n = 1;

    for (part = &list->part; part; part = part->next) {
        n += part->nelts;
    }

    hs = ngx_http_hpack_fields(r, n, local);
    if (hs == NULL) {
        return NGX_ERROR;
    }

    n = 0;

    if (status) {
        ngx_http_hpack_field(hs, ":status", (u_char *) status,
                             ngx_strlen(status));
        n = 1;
    }

    if (ngx_http_hpack_add_list(r, list, hs, &n) != NGX_OK) {
        return NGX_ERROR;
    }

    *fields = hs;
    *nfields = n;

    return NGX_OK;
}


/* an array for n fields: local when they fit */

static hpack_header_t *
ngx_http_hpack_fields(ngx_http_request_t *r, ngx_uint_t n,
    hpack_header_t *local)
{
    if (n <= NGX_HTTP_HPACK_LOCAL_FIELDS) {
        return local;
    }

    return ngx_http_hpack_palloc(r->pool, n * sizeof(hpack_header_t));
}


static ngx_int_t
ngx_http_hpack_add_list(ngx_http_request_t *r, ngx_list_t *list,
    hpack_header_t *hs, ngx_uint_t *n)
{
    u_char                *p;
    ngx_str_t             *nv;
    ngx_uint_t             i, j, k;
    hpack_header_t        *hd;
    ngx_list_part_t       *part;
    ngx_table_elt_t       *header;
    ngx_http_hpack_ctx_t  *ctx;

    ctx = ngx_http_hpack_find_ctx(r);

    nv = NULL;
    j = 0;

    if (ctx && ctx->never_indexed) {
        nv = ctx->never_indexed->elts;
        j = ctx->never_indexed->nelts;
    }

    p = NULL;
    hd = hs + *n;

    for (part = &list->part; part; part = part->next) {
        header = part->elts;

        for (i = 0; i < part->nelts; i++) {

            if (header[i].hash == 0) {
                continue;
            }

            /*
             * The codec wants lowercase names; header names from the
             * configuration (add_header) are mostly lowercase already and
             * are used as they are.  Names with uppercase letters are
             * copied, lowered, into one allocation for them and the rest
             * of the list.
             */

            hd->name = header[i].key.data;

            if (ngx_http_hpack_has_upper(header[i].key.data,
                                         header[i].key.len))
            {
                if (p == NULL) {
                    p = ngx_http_hpack_pnalloc(r->pool,
                                           ngx_http_hpack_names_len(part, i));
                    if (p == NULL) {
                        return NGX_ERROR;
                    }
                }

                hd->name = p;
                ngx_strlow(p, header[i].key.data, header[i].key.len);
                p += header[i].key.len;
            }

            hd->name_len = header[i].key.len;
            hd->value = header[i].value.data;
            hd->value_len = header[i].value.len;
            hd->value_literal = NULL;
            hd->value_literal_len = 0;
            hd->flags = 0;

            hd++;
        }
    }

    *n = hd - hs;

    /*
     * a value the client sent never-indexed stays never-indexed, in the
     * list's fields and in those before it (location, content-type...)
     */

    for (hd = hs; j && hd < hs + *n; hd++) {

        if (hd->name[0] == ':') {
            continue;
        }

        for (k = 0; k < j; k++) {
            if (nv[k].len == hd->value_len
                && ngx_memcmp(nv[k].data, hd->value, nv[k].len) == 0)
            {
                hd->flags = HPACK_FIELD_NEVER_INDEX;
                break;
            }
        }
    }

    return NGX_OK;
}


/* the length of the names from the i-th field of part to the list's end */

static size_t
ngx_http_hpack_names_len(ngx_list_part_t *part, ngx_uint_t i)
{
    size_t            len;
    ngx_table_elt_t  *header;

    len = 0;

    for ( /* void */ ; part; part = part->next, i = 0) {
        header = part->elts;

        for ( /* void */ ; i < part->nelts; i++) {
            if (header[i].hash) {
                len += header[i].key.len;
            }
        }
    }

    return len;
}


/* 0x80 in each octet of the word w that is 'A'..'Z', without carries */

#define ngx_http_hpack_upper_mask(w)                                          \
    (((((w) & 0x7f7f7f7f7f7f7f7fULL) + 0x3f3f3f3f3f3f3f3fULL)                \
      ^ (((w) & 0x7f7f7f7f7f7f7f7fULL) + 0x2525252525252525ULL))             \
     & ~(w) & 0x8080808080808080ULL)


/*
 * Whether a name has an upper-case letter (the codec takes lower case):
 * eight octets a test, the last eight overlapping
 */

static ngx_uint_t
ngx_http_hpack_has_upper(u_char *src, size_t len)
{
    size_t    i;
    uint64_t  w;

    if (len < 8) {
        for (i = 0; i != len; i++) {
            if (src[i] >= 'A' && src[i] <= 'Z') {
                return 1;
            }
        }

        return 0;
    }

    for (i = 0; i + 8 < len; i += 8) {
        ngx_memcpy(&w, src + i, 8);

        if (ngx_http_hpack_upper_mask(w)) {
            return 1;
        }
    }

    ngx_memcpy(&w, src + len - 8, 8);

    return ngx_http_hpack_upper_mask(w) != 0;
}


static ngx_int_t
ngx_http_hpack_encode(ngx_http_request_t *r, hpack_header_t *hs,
    ngx_uint_t n, u_char **start, u_char **end)
{
    int                     rc;
    u_char                 *out;
    size_t                  bound, len, plain, literal;
    ngx_uint_t              i;
    hpack_stats_t           stats;
    ngx_connection_t       *c;
    ngx_http_hpack_ctx_t   *ctx;
    ngx_http_hpack_conn_t  *hc;

    hc = r->stream->connection->hpack_ctx;
    c = r->stream->connection->connection;

    if (hc->encoder == NULL && ngx_http_hpack_encoder(r, hc) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the sizes give the bound too (HPACK_ENCODE_BOUND, hpack.h) */

    plain = 0;
    literal = 0;

    for (i = 0; i < n; i++) {
        plain += hs[i].name_len + hs[i].value_len;
        literal += hs[i].value_literal_len;

        ngx_log_debug3(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "hpack output header: \"%*s: ...\" (%uz bytes)",
                       hs[i].name_len, hs[i].name, hs[i].value_len);
    }

    /* everything that can fail is done before the encoder's state moves */

    ctx = ngx_http_hpack_get_ctx(r);
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    bound = HPACK_ENCODE_BOUND(n, plain + literal);

    out = ngx_http_hpack_pnalloc(r->pool, bound);
    if (out == NULL) {
        return NGX_ERROR;
    }

    rc = hpack_encode(hc->encoder, hs, n, out, bound, &len);

    if (rc != HPACK_OK) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "hpack_encode() failed: %s", hpack_strerror(rc));

        /* the encoder may be out of step with the peer: close */
        c->error = 1;

        return NGX_ERROR;
    }

    ctx->out_wire += len;
    ctx->out_plain += plain;

    if (hc->status) {
        hpack_encoder_stats(hc->encoder, &stats);

        ngx_http_hpack_fold(hc->status->out, len, plain, n,
                            stats.indexed_static + stats.indexed_dynamic,
                            &hc->out_indexed);
    }

    *start = out;
    *end = out + len;

    return NGX_OK;
}


/*
 * The connection's encoder, on its first response block: the server's
 * table size and never-index policy, and a SETTINGS_HEADER_TABLE_SIZE that
 * arrived earlier
 */

static ngx_int_t
ngx_http_hpack_encoder(ngx_http_request_t *r, ngx_http_hpack_conn_t *hc)
{
    ngx_connection_t  *c;

    c = r->stream->connection->connection;

    hc->encoder = hpack_encoder_create(&hc->allocator, hc->conf->table_size,
                                       hc->conf->policy);
    if (hc->encoder == NULL) {
        ngx_log_error(NGX_LOG_CRIT, c->log, 0, "hpack_encoder_create() failed");
        return NGX_ERROR;
    }

    if (hc->peer_table_size_set
        && hpack_encoder_set_peer_table_size(hc->encoder, hc->peer_table_size)
           != HPACK_OK)
    {
        ngx_log_error(NGX_LOG_ALERT, c->log, 0,
                      "hpack_encoder_set_peer_table_size(%uz) failed",
                      hc->peer_table_size);
        return NGX_ERROR;
    }

    return NGX_OK;
}
