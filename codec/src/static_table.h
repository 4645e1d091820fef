// The static table (RFC 7541 Appendix A) and its O(1) lookups.

#ifndef HPACK_STATIC_TABLE_H
#define HPACK_STATIC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

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

namespace static_index {

// 128 slots for 52 distinct names: open addressing with short probes, built
// at compile time.
constexpr uint32_t kSlots = 128;

constexpr uint32_t name_hash(const char* p, size_t n) {
    // Length, the second, middle and last octets, one multiply: distinct
    // enough for the 52 names that a probe rarely goes past one slot.
    const uint32_t key = static_cast<uint32_t>(n) |
                         static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 8 |
                         static_cast<uint32_t>(static_cast<uint8_t>(p[n / 2])) << 16 |
                         static_cast<uint32_t>(static_cast<uint8_t>(p[n - 1])) << 24;
    return (key * 0x9e3779b1u) >> (32 - 7);
}

struct NameIndex {
    uint8_t slot[kSlots] = {};
    uint8_t run[kStaticEntries + 1] = {};   // entries sharing the name, at its first
};

constexpr bool same_name(const StaticEntry& a, const StaticEntry& b) {
    if (a.name_len != b.name_len) return false;
    for (size_t i = 0; i < a.name_len; ++i)
        if (a.name[i] != b.name[i]) return false;
    return true;
}

constexpr NameIndex build_index(const StaticEntry* t) {
    NameIndex ix{};
    for (uint32_t i = 1; i <= kStaticEntries; ++i) {
        if (i > 1 && same_name(t[i], t[i - 1])) continue;  // keep the first
        uint32_t s = name_hash(t[i].name, t[i].name_len);
        while (ix.slot[s] != 0) s = (s + 1) & (kSlots - 1);
        ix.slot[s] = static_cast<uint8_t>(i);
        uint32_t j = i;
        while (j <= kStaticEntries && same_name(t[j], t[i])) ++j;
        ix.run[i] = static_cast<uint8_t>(j - i);
    }
    return ix;
}

inline constexpr NameIndex kIndex = build_index(kStaticTable);

}  // namespace static_index

// One hash probe on the name (rarely two), one comparison of the octets.
inline StaticName static_name_lookup(const uint8_t* name, size_t name_len) {
    // Static names are 3 to 27 octets long.
    if (name_len < 3 || name_len > 27) return StaticName{0, 0};
    uint32_t s = static_index::name_hash(reinterpret_cast<const char*>(name), name_len);
    for (;;) {
        const uint32_t i = static_index::kIndex.slot[s];
        if (i == 0) return StaticName{0, 0};
        const StaticEntry& e = kStaticTable[i];
        if (e.name_len == name_len &&
            equal_bytes(reinterpret_cast<const uint8_t*>(e.name), name, name_len))
            return StaticName{i, static_index::kIndex.run[i]};
        s = (s + 1) & (static_index::kSlots - 1);
    }
}

// The entry among those of sn whose value is value, or 0.  Only five names
// have entries with non-empty values.
inline uint32_t static_value_lookup(StaticName sn, const uint8_t* value, size_t value_len) {
    for (uint32_t i = sn.first; i < sn.first + sn.count; ++i) {
        const StaticEntry& e = kStaticTable[i];
        if (e.value_len == value_len &&
            equal_bytes(reinterpret_cast<const uint8_t*>(e.value), value, value_len))
            return i;
    }
    return 0;
}

}  // namespace hpack

#endif
