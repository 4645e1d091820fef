
/*
 * What a request field's name or value is found to be the first time it is
 * seen: the name's facts (hash, headers_in handler, the flags of the names
 * the request side treats apart) and the validity of names and values, by
 * the rules of ngx_http_v2_validate_header().  The request side keeps them
 * in a dynamic entry's memo (ngx_http_hpack_request.c); the static table's
 * are computed here once per cycle.  What the user-agent handler made of a
 * value is kept here per worker, for the connections that send it after.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_hpack_module.h"


/*
 * The user-agent classes a worker found (ngx_http_hpack_ua_seen()): 16
 * slots of 256 octets, direct-mapped on a hash of the value
 */

#define NGX_HTTP_HPACK_UA_SLOTS  16
#define NGX_HTTP_HPACK_UA_LEN    254

struct ngx_http_hpack_ua_slot_s {
    u_char                      ua;         /* 0: the slot is empty */
    u_char                      len;
    u_char                      value[NGX_HTTP_HPACK_UA_LEN];
};


#if defined(__SSE2__)
static ngx_uint_t ngx_http_hpack_validate_long(const u_char *value,
    size_t len) ngx_http_hpack_noinline;
#endif
static ngx_int_t ngx_http_hpack_static_string(ngx_pool_t *pool,
    ngx_str_t *dst, ngx_str_t *src);


static ngx_http_hpack_ua_slot_t
    ngx_http_hpack_ua_slots[NGX_HTTP_HPACK_UA_SLOTS];


/* a name's facts, into a memo cleared first */

void
ngx_http_hpack_name_facts(ngx_http_core_main_conf_t *cmcf,
    const u_char *name, size_t len, ngx_http_hpack_memo_t *facts)
{
    ngx_memzero(facts, sizeof(ngx_http_hpack_memo_t));

    facts->name_flags = NGX_HTTP_HPACK_NAME_KNOWN;

    if (name[0] == ':') {
        facts->name_flags |= NGX_HTTP_HPACK_NAME_PSEUDO;

        if (len == sizeof(":method") - 1
            && ngx_memcmp(name, ":method", sizeof(":method") - 1) == 0)
        {
            facts->name_flags |= NGX_HTTP_HPACK_NAME_METHOD;

        } else if (len == sizeof(":scheme") - 1
                   && ngx_memcmp(name, ":scheme", sizeof(":scheme") - 1)
                      == 0)
        {
            facts->name_flags |= NGX_HTTP_HPACK_NAME_SCHEME;

        } else if (len == sizeof(":authority") - 1
                   && ngx_memcmp(name, ":authority",
                                 sizeof(":authority") - 1)
                      == 0)
        {
            facts->name_flags |= NGX_HTTP_HPACK_NAME_AUTHORITY;
        }

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
 * The rules of ngx_http_v2_validate_header(), split in two so that the
 * outcome for a name can be kept apart from the outcome for a value.
 */

ngx_uint_t
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


#if defined(__SSE2__)

/* whether an octet of x is NUL, LF or CR */

static ngx_inline ngx_uint_t
ngx_http_hpack_ctl16(__m128i x)
{
    __m128i  m;

    m = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_setzero_si128()),
                     _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(LF)),
                                  _mm_cmpeq_epi8(x, _mm_set1_epi8(CR))));

    return _mm_movemask_epi8(m) != 0;
}

#endif


/*
 * A value is refused for NUL, LF or CR: octet by octet below eight octets
 * (or without SSE2), else ngx_http_hpack_validate_long()
 */

ngx_uint_t
ngx_http_hpack_validate_value(const u_char *value, size_t len)
{
    u_char      ch;
    ngx_uint_t  i;

#if defined(__SSE2__)
    if (len >= 8) {
        return ngx_http_hpack_validate_long(value, len);
    }
#endif

    for (i = 0; i != len; i++) {
        ch = value[i];

        if (ch == '\0' || ch == LF || ch == CR) {
            return NGX_HTTP_HPACK_BAD;
        }
    }

    return NGX_HTTP_HPACK_VALID;
}


#if defined(__SSE2__)

/* out of line: a warm request's values are mostly short */

static ngx_uint_t
ngx_http_hpack_validate_long(const u_char *value, size_t len)
{
    return ngx_http_hpack_any16(value, len, ngx_http_hpack_ctl16)
           ? NGX_HTTP_HPACK_BAD : NGX_HTTP_HPACK_VALID;
}

#endif


/*
 * What ngx_http_process_user_agent() made of a value the worker's slots
 * hold (NGX_HTTP_HPACK_UA_*), or 0.  A new connection's first user-agent
 * is mostly one the worker has classified before, and the handler's
 * searches for "MSIE ", "Opera", "Gecko/", "Chrome/", "Safari/" take about
 * 2,700 instructions a browser's value where this takes a hash and a
 * compare; the class is a function of the value alone, as the memo's is.
 * *slot is the value's slot, for ngx_http_hpack_ua_learn() on a miss, or
 * NULL past 254 octets.
 */

ngx_uint_t
ngx_http_hpack_ua_seen(ngx_str_t *value, ngx_http_hpack_ua_slot_t **slot)
{
    size_t                     i, len;
    uint64_t                   h, w;
    u_char                    *p;
    ngx_http_hpack_ua_slot_t  *s;

    len = value->len;
    p = value->data;

    if (len > NGX_HTTP_HPACK_UA_LEN) {
        *slot = NULL;
        return 0;
    }

    /* the slot: the value's 8-octet words mixed, the last one overlapping */

    h = len;

    if (len >= 8) {
        for (i = 0; i + 8 < len; i += 8) {
            ngx_memcpy(&w, p + i, 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15;
        }

        ngx_memcpy(&w, p + len - 8, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15;

    } else {
        for (i = 0; i < len; i++) {
            h = (h ^ p[i]) * 0x9e3779b97f4a7c15;
        }
    }

    s = &ngx_http_hpack_ua_slots[h >> (64 - 4)];
    *slot = s;

    if (s->ua == 0 || s->len != len || ngx_memcmp(s->value, p, len) != 0) {
        return 0;
    }

    return s->ua;
}


/* ua, the handler's class of value, into value's slot (from ua_seen()) */

void
ngx_http_hpack_ua_learn(ngx_http_hpack_ua_slot_t *slot, ngx_str_t *value,
    ngx_uint_t ua)
{
    if (slot == NULL) {
        return;
    }

    slot->ua = (u_char) ua;
    slot->len = (u_char) value->len;
    ngx_memcpy(slot->value, value->data, value->len);
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
 * per static-table entry: the name's hash, handler and validity, the
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

        st->value_state = ngx_http_hpack_validate_value(st->value.data,
                                                        st->value.len);

        ngx_http_hpack_name_facts(cmcf, st->name.data, st->name.len,
                                  &st->facts);

        st->facts.name_state[0] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 0);
        st->facts.name_state[1] = ngx_http_hpack_validate_name(st->name.data,
                                                           st->name.len, 1);
    }

    return NGX_OK;
}
