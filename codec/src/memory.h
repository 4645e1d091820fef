// Memory helpers of the codec: unaligned loads and stores in a given byte
// order, and the copies and clears that its hot paths make inline.

#ifndef HPACK_MEMORY_H
#define HPACK_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common.h"

namespace hpack {

// Wire order is big-endian (MSB first); memcpy is the one unaligned access
// that every compiler turns into a plain load or store.  Static, as zstd's
// mem.h has them: each file that uses them has copies of its own (internal
// linkage), which is what the hot loops' inlining and registers are tuned
// with.
static HPACK_INLINE uint64_t load64_be(const uint8_t* p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

static HPACK_INLINE uint32_t load32_be(const uint8_t* p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
}

static HPACK_INLINE void store64_be(uint8_t* p, uint64_t v) {
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

static HPACK_INLINE unsigned load16_le(const uint8_t* p) {
    uint16_t v;
    memcpy(&v, p, 2);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    return v;
}

// Decoded symbols are kept first-in-lowest-octet.
static HPACK_INLINE void store32_le(uint8_t* p, uint32_t v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, 4);
}

static HPACK_INLINE void store64_le(uint8_t* p, uint64_t v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

// Zeroes n octets (a multiple of 8) at p with plain stores.  GCC compiles
// a memset of a constant size, or a loop of stores, into rep stos, which
// runs from microcode and holds up the instructions after it (DESIGN.md,
// "Encoder": "Clears by plain 16-octet stores").  The empty asm hides the
// loop from that rewrite.
inline void zero_words(void* p, size_t n) {
    uint8_t* q = static_cast<uint8_t*>(p);
    uint8_t* const end = q + n;
#ifdef __SSE2__
    for (; end - q >= 16; q += 16) {
        asm("" : "+r"(q));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm_setzero_si128());
    }
#endif
    for (; q < end; q += 8) {
        asm("" : "+r"(q));
        memset(q, 0, 8);
    }
}

// The first and the last sizeof(T) octets of n, sizeof(T) <= n <=
// 2 sizeof(T): all n, by two loads and two stores.
template <class T>
inline void copy_ends(uint8_t* d, const uint8_t* s, size_t n) {
    T a, b;
    memcpy(&a, s, sizeof a);
    memcpy(&b, s + n - sizeof b, sizeof b);
    memcpy(d, &a, sizeof a);
    memcpy(d + n - sizeof b, &b, sizeof b);
}

// Copies n octets from s to d (which do not overlap) inline: 16 at a time
// and the last 16 again, or two overlapping words below that, never
// touching an octet outside either span.  A table insertion copies a name
// and a value of any length, and the library call costs more than the copy
// (DESIGN.md, "Dynamic table layout": "Names and values copied into the
// arena inline").
inline void copy_octets(uint8_t* d, const uint8_t* s, size_t n) {
    if (n >= 16) {
#ifdef __SSE2__
        for (size_t i = 0; i + 16 < n; i += 16)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + n - 16),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + n - 16)));
#else
        memcpy(d, s, n);
#endif
    } else if (n >= 8) {
        copy_ends<uint64_t>(d, s, n);
    } else if (n >= 4) {
        copy_ends<uint32_t>(d, s, n);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

}  // namespace hpack

#endif
