#include "static_table.h"

#include <string.h>

#include "hash.h"

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

constexpr NameIndex kIndex = build_index(kStaticTable);

}  // namespace

StaticName static_name_lookup(const uint8_t* name, size_t name_len) {
    // Static names are 3 to 27 octets long.
    if (name_len < 3 || name_len > 27) return StaticName{0, 0};
    uint32_t s = name_hash(reinterpret_cast<const char*>(name), name_len);
    for (;;) {
        const uint32_t i = kIndex.slot[s];
        if (i == 0) return StaticName{0, 0};
        const StaticEntry& e = kStaticTable[i];
        if (e.name_len == name_len &&
            equal_bytes(reinterpret_cast<const uint8_t*>(e.name), name, name_len))
            return StaticName{i, kIndex.run[i]};
        s = (s + 1) & (kSlots - 1);
    }
}

uint32_t static_value_scan(StaticName sn, const uint8_t* value, size_t value_len) {
    for (uint32_t i = sn.first; i < sn.first + sn.count; ++i) {
        const StaticEntry& e = kStaticTable[i];
        if (e.value_len == value_len &&
            equal_bytes(reinterpret_cast<const uint8_t*>(e.value), value, value_len))
            return i;
    }
    return 0;
}

}  // namespace hpack
