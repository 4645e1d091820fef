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
        uint64_t w = 0;
        // Tail: at most 7 octets, read bytewise to stay inside the input.
        for (size_t i = 0; i < n; ++i) w |= static_cast<uint64_t>(p[i]) << (8 * i);
        h = hash_mix(h ^ w, k1 ^ n);
    }
    return hash_mix(h, k0);
}

}  // namespace hpack

#endif
