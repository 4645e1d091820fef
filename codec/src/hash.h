// A fast seeded hash for table lookups.  Not cryptographic: the encoder's
// chains are bounded by the number of entries a table can hold, and the seed
// makes collisions hard to aim from outside.

#ifndef HPACK_HASH_H
#define HPACK_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace hpack {

inline uint64_t hash_mix(uint64_t a, uint64_t b) {
    __uint128_t r = static_cast<__uint128_t>(a) * b;
    return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Header names and values are short: one multiply per 16 octets, and the
// last 1..16 octets as two (overlapping) loads.  Past 32 octets two chains
// of multiplies run side by side, since each multiply waits for the one
// before (DESIGN.md, "Encoder": "Two chains of multiplies in the hash past
// 32 octets").  Both factors of every multiply carry the state, which
// carries the seed: input octets alone cannot make a factor 0 (which would
// wipe the state, and every input with those octets would hash alike
// whatever the seed) or 1.
inline uint64_t hash_bytes(const uint8_t* p, size_t n, uint64_t seed) {
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    const uint64_t k2 = 0x8ebc6af09c88c6e3ull;
    uint64_t h = seed ^ (n * k0);
    uint64_t a, b;
    size_t left = n;
    if (left > 32) {
        uint64_t g = h ^ k2;
        do {
            uint64_t c, d;
            memcpy(&a, p, 8);
            memcpy(&b, p + 8, 8);
            memcpy(&c, p + 16, 8);
            memcpy(&d, p + 24, 8);
            h = hash_mix(a ^ h, b ^ h ^ k1);
            g = hash_mix(c ^ g, d ^ g ^ k2);
            p += 32;
            left -= 32;
        } while (left > 32);
        // Not h ^ g: inputs whose halves make the two chains equal would
        // all hash alike, whatever the seed.
        h = hash_mix(h ^ k0, g ^ k1);
    }
    while (left > 16) {
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        h = hash_mix(a ^ h, b ^ h ^ k1);
        p += 16;
        left -= 16;
    }
    if (left >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + left - 8, 8);
    } else if (left >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + left - 4, 4);
        a = x;
        b = y;
    } else if (left > 0) {
        a = static_cast<uint64_t>(p[0]) << 16 | static_cast<uint64_t>(p[left / 2]) << 8 |
            p[left - 1];
        b = 0;
    } else {
        a = b = 0;
    }
    h = hash_mix(a ^ h, b ^ h ^ k1);
    return hash_mix(h ^ k0, n ^ k1);
}

// Equality of n octets, sizeof(W) <= n <= 2 * sizeof(W): the first and
// the last word, overlapping.
template <typename W>
inline bool equal_ends(const uint8_t* a, const uint8_t* b, size_t n) {
    W x0, y0, x1, y1;
    memcpy(&x0, a, sizeof x0);
    memcpy(&y0, b, sizeof y0);
    memcpy(&x1, a + n - sizeof x1, sizeof x1);
    memcpy(&y1, b + n - sizeof y1, sizeof y1);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

// Equality of two spans of n octets: past 16, 16-octet vector compares
// where SSE2 is there, else 8-octet words, and the tail as one overlapping
// load; up to 16, two overlapping loads; no call, no octet loop.
inline bool equal_bytes(const uint8_t* a, const uint8_t* b, size_t n) {
    if (n > 16) {
#ifdef __SSE2__
        const uint8_t* const a_last = a + n - 16;
        const uint8_t* const b_last = b + n - 16;
        for (; a < a_last; a += 16, b += 16) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
            const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) != 0xffff) return false;
        }
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a_last));
        const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b_last));
        return _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) == 0xffff;
#else
        const uint8_t* const a_last = a + n - 8;
        const uint8_t* const b_last = b + n - 8;
        uint64_t x, y;
        for (; a < a_last; a += 8, b += 8) {
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            if (x != y) return false;
        }
        memcpy(&x, a_last, 8);
        memcpy(&y, b_last, 8);
        return x == y;
#endif
    }
    if (n >= 8) return equal_ends<uint64_t>(a, b, n);
    if (n >= 4) return equal_ends<uint32_t>(a, b, n);
    if (n == 0) return true;
    return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

}  // namespace hpack

#endif
