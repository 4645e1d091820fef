// The static table (RFC 7541 Appendix A) and its O(1) lookups.

#ifndef HPACK_STATIC_TABLE_H
#define HPACK_STATIC_TABLE_H

#include <stddef.h>
#include <stdint.h>

namespace hpack {

struct StaticEntry {
    const char* name;
    uint8_t     name_len;
    const char* value;
    uint8_t     value_len;
};

constexpr uint32_t kStaticEntries = 61;

// Entries 1..61; entry 0 is unused so that an HPACK index is the subscript.
#define HPACK_STATIC_ENTRY(n, v) {n, sizeof(n) - 1, v, sizeof(v) - 1}
#define E HPACK_STATIC_ENTRY
inline constexpr StaticEntry kStaticTable[kStaticEntries + 1] = {
    E("", ""),
    E(":authority", ""),
    E(":method", "GET"),
    E(":method", "POST"),
    E(":path", "/"),
    E(":path", "/index.html"),
    E(":scheme", "http"),
    E(":scheme", "https"),
    E(":status", "200"),
    E(":status", "204"),
    E(":status", "206"),
    E(":status", "304"),
    E(":status", "400"),
    E(":status", "404"),
    E(":status", "500"),
    E("accept-charset", ""),
    E("accept-encoding", "gzip, deflate"),
    E("accept-language", ""),
    E("accept-ranges", ""),
    E("accept", ""),
    E("access-control-allow-origin", ""),
    E("age", ""),
    E("allow", ""),
    E("authorization", ""),
    E("cache-control", ""),
    E("content-disposition", ""),
    E("content-encoding", ""),
    E("content-language", ""),
    E("content-length", ""),
    E("content-location", ""),
    E("content-range", ""),
    E("content-type", ""),
    E("cookie", ""),
    E("date", ""),
    E("etag", ""),
    E("expect", ""),
    E("expires", ""),
    E("from", ""),
    E("host", ""),
    E("if-match", ""),
    E("if-modified-since", ""),
    E("if-none-match", ""),
    E("if-range", ""),
    E("if-unmodified-since", ""),
    E("last-modified", ""),
    E("link", ""),
    E("location", ""),
    E("max-forwards", ""),
    E("proxy-authenticate", ""),
    E("proxy-authorization", ""),
    E("range", ""),
    E("referer", ""),
    E("refresh", ""),
    E("retry-after", ""),
    E("server", ""),
    E("set-cookie", ""),
    E("strict-transport-security", ""),
    E("transfer-encoding", ""),
    E("user-agent", ""),
    E("vary", ""),
    E("via", ""),
    E("www-authenticate", ""),
};

#undef E
#undef HPACK_STATIC_ENTRY

struct StaticMatch {
    uint32_t name_index;   // first entry with this name, 0 if none
    uint32_t full_index;   // entry with this name and value, 0 if none
};

// Looks a field up: one hash probe on the name, then a scan of the at most
// seven consecutive entries that share it (:status has seven values).
StaticMatch static_lookup(const uint8_t* name, size_t name_len,
                          const uint8_t* value, size_t value_len);

}  // namespace hpack

#endif
