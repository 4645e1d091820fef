// A fast seeded hash for table lookups.  Not cryptographic: the encoder's
// chains are bounded by the number of entries a table can hold, and the seed
// makes collisions hard to aim from outside.

#ifndef HPACK_HASH_H
#define HPACK_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace hpack {

inline uint64_t hash_mix(uint64_t a, uint64_t b) {
    __uint128_t r = static_cast<__uint128_t>(a) * b;
    return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Header names and values are short: one multiply per 8 octets.
inline uint64_t hash_bytes(const uint8_t* p, size_t n, uint64_t seed) {
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = seed ^ (n * k0);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = hash_mix(h ^ w, k1);
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        // 1..7 octets: two overlapping loads, no loop.
        uint64_t w;
        if (n >= 4) {
            uint32_t a, b;
            memcpy(&a, p, 4);
            memcpy(&b, p + n - 4, 4);
            w = static_cast<uint64_t>(a) << 32 | b;
        } else {
            w = static_cast<uint64_t>(p[0]) << 16 | static_cast<uint64_t>(p[n / 2]) << 8 | p[n - 1];
        }
        h = hash_mix(h ^ w, k1 ^ n);
    }
    return hash_mix(h, k0);
}

// Equality of two spans of n octets: word compares, no call.
inline bool equal_bytes(const uint8_t* a, const uint8_t* b, size_t n) {
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return false;
        a += 8;
        b += 8;
        n -= 8;
    }
    if (n >= 4) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return x0 == y0 && x1 == y1;
    }
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

}  // namespace hpack

#endif
