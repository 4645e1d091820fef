#include "static_table.h"

#include <string.h>

namespace hpack {

namespace {

// 128 slots for 52 distinct names: open addressing with short probes, built
// at compile time.
constexpr uint32_t kSlots = 128;

constexpr uint32_t name_hash(const char* p, size_t n) {
    // Length, the last octets and the first: distinct enough for the 52
    // names that a probe rarely goes past one slot.
    uint32_t h = static_cast<uint32_t>(n) * 0x9e3779b1u;
    h ^= static_cast<uint8_t>(p[n - 1]) * 0x85ebca6bu;
    h ^= static_cast<uint8_t>(p[n / 2]) * 0xc2b2ae35u;
    h ^= static_cast<uint8_t>(p[1]) * 0x27d4eb2fu;
    return (h ^ (h >> 15)) & (kSlots - 1);
}

struct NameIndex {
    uint8_t slot[kSlots] = {};
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
    }
    return ix;
}


constexpr NameIndex kIndex = build_index(kStaticTable);

}  // namespace

StaticMatch static_lookup(const uint8_t* name, size_t name_len,
                          const uint8_t* value, size_t value_len) {
    StaticMatch m{0, 0};
    // Static names are 3 to 27 octets long.
    if (name_len < 3 || name_len > 27) return m;
    uint32_t s = name_hash(reinterpret_cast<const char*>(name), name_len);
    for (;;) {
        const uint32_t i = kIndex.slot[s];
        if (i == 0) return m;
        const StaticEntry& e = kStaticTable[i];
        if (e.name_len == name_len && memcmp(e.name, name, name_len) == 0) {
            m.name_index = i;
            break;
        }
        s = (s + 1) & (kSlots - 1);
    }
    for (uint32_t i = m.name_index; i <= kStaticEntries; ++i) {
        const StaticEntry& e = kStaticTable[i];
        if (e.name_len != name_len || memcmp(e.name, name, name_len) != 0)
            break;
        if (e.value_len == value_len && memcmp(e.value, value, value_len) == 0) {
            m.full_index = i;
            break;
        }
    }
    return m;
}

}  // namespace hpack
