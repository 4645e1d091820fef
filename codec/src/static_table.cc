#include "static_table.h"

// The static table's out-of-line part; the table and its name index are
// compile-time data in the header.

namespace hpack {

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
