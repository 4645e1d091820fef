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

// The entries that share a name, as found by static_name_lookup(): first
// is 0 when no entry has the name.
struct StaticName {
    uint32_t first;   // the first entry with the name (its name index)
    uint32_t count;   // consecutive entries with it (:status has seven)
};

// One hash probe on the name (rarely two), one comparison of the octets.
StaticName static_name_lookup(const uint8_t* name, size_t name_len);

// The entry among those of sn whose value is value, or 0.  Only five names
// have entries with non-empty values: the others end at the length.
uint32_t static_value_scan(StaticName sn, const uint8_t* value, size_t value_len);

inline uint32_t static_value_lookup(StaticName sn, const uint8_t* value, size_t value_len) {
    if (sn.count == 1 && kStaticTable[sn.first].value_len != value_len) return 0;
    return static_value_scan(sn, value, value_len);
}

}  // namespace hpack

#endif
