// The QPACK static table (RFC 9204 Appendix A): 99 entries, indexed from 0.
// Written out here as static_table.h writes HPACK's; the test
// QpackStaticTable.EveryEntryIsTheRfcs compares each entry with the
// appendix's text.

#ifndef HPACK_QPACK_STATIC_TABLE_H
#define HPACK_QPACK_STATIC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "static_table.h"

namespace hpack {

constexpr uint32_t kQpackStaticEntries = 99;

#define QPACK_STATIC_ENTRY(n, v) {n, sizeof(n) - 1, v, sizeof(v) - 1}
#define E QPACK_STATIC_ENTRY
inline constexpr StaticEntry kQpackStaticTable[kQpackStaticEntries] = {
    E(":authority", ""),
    E(":path", "/"),
    E("age", "0"),
    E("content-disposition", ""),
    E("content-length", "0"),
    E("cookie", ""),
    E("date", ""),
    E("etag", ""),
    E("if-modified-since", ""),
    E("if-none-match", ""),
    E("last-modified", ""),
    E("link", ""),
    E("location", ""),
    E("referer", ""),
    E("set-cookie", ""),
    E(":method", "CONNECT"),
    E(":method", "DELETE"),
    E(":method", "GET"),
    E(":method", "HEAD"),
    E(":method", "OPTIONS"),
    E(":method", "POST"),
    E(":method", "PUT"),
    E(":scheme", "http"),
    E(":scheme", "https"),
    E(":status", "103"),
    E(":status", "200"),
    E(":status", "304"),
    E(":status", "404"),
    E(":status", "503"),
    E("accept", "*/*"),
    E("accept", "application/dns-message"),
    E("accept-encoding", "gzip, deflate, br"),
    E("accept-ranges", "bytes"),
    E("access-control-allow-headers", "cache-control"),
    E("access-control-allow-headers", "content-type"),
    E("access-control-allow-origin", "*"),
    E("cache-control", "max-age=0"),
    E("cache-control", "max-age=2592000"),
    E("cache-control", "max-age=604800"),
    E("cache-control", "no-cache"),
    E("cache-control", "no-store"),
    E("cache-control", "public, max-age=31536000"),
    E("content-encoding", "br"),
    E("content-encoding", "gzip"),
    E("content-type", "application/dns-message"),
    E("content-type", "application/javascript"),
    E("content-type", "application/json"),
    E("content-type", "application/x-www-form-urlencoded"),
    E("content-type", "image/gif"),
    E("content-type", "image/jpeg"),
    E("content-type", "image/png"),
    E("content-type", "text/css"),
    E("content-type", "text/html; charset=utf-8"),
    E("content-type", "text/plain"),
    E("content-type", "text/plain;charset=utf-8"),
    E("range", "bytes=0-"),
    E("strict-transport-security", "max-age=31536000"),
    E("strict-transport-security", "max-age=31536000; includesubdomains"),
    E("strict-transport-security", "max-age=31536000; includesubdomains; preload"),
    E("vary", "accept-encoding"),
    E("vary", "origin"),
    E("x-content-type-options", "nosniff"),
    E("x-xss-protection", "1; mode=block"),
    E(":status", "100"),
    E(":status", "204"),
    E(":status", "206"),
    E(":status", "302"),
    E(":status", "400"),
    E(":status", "403"),
    E(":status", "421"),
    E(":status", "425"),
    E(":status", "500"),
    E("accept-language", ""),
    E("access-control-allow-credentials", "FALSE"),
    E("access-control-allow-credentials", "TRUE"),
    E("access-control-allow-headers", "*"),
    E("access-control-allow-methods", "get"),
    E("access-control-allow-methods", "get, post, options"),
    E("access-control-allow-methods", "options"),
    E("access-control-expose-headers", "content-length"),
    E("access-control-request-headers", "content-type"),
    E("access-control-request-method", "get"),
    E("access-control-request-method", "post"),
    E("alt-svc", "clear"),
    E("authorization", ""),
    E("content-security-policy",
      "script-src 'none'; object-src 'none'; base-uri 'none'"),
    E("early-data", "1"),
    E("expect-ct", ""),
    E("forwarded", ""),
    E("if-range", ""),
    E("origin", ""),
    E("purpose", "prefetch"),
    E("server", ""),
    E("timing-allow-origin", "*"),
    E("upgrade-insecure-requests", "1"),
    E("user-agent", ""),
    E("x-forwarded-for", ""),
    E("x-frame-options", "deny"),
    E("x-frame-options", "sameorigin"),
};
#undef E
#undef QPACK_STATIC_ENTRY

}  // namespace hpack

#endif
