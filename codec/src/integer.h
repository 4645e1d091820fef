// HPACK integers (RFC 7541 5.1): an N-bit prefix, then 7-bit groups.

#ifndef HPACK_INTEGER_H
#define HPACK_INTEGER_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

namespace hpack {

// HPACK integers are read up to four octets, the prefix octet and three
// continuations, as nginx reads them (ngx_http_v2_parse_int(),
// NGX_HTTP_V2_INT_OCTETS): at most 2^21 + 254, more than any length,
// index or table size a decoder takes.  Longer ones are HPACK_E_INTEGER.
constexpr uint32_t kIntegerMax = UINT32_MAX;
constexpr int kIntegerMaxContinuation = 3;

// Longest encoding of a 32-bit integer that the encoder writes: the prefix
// octet + 5 continuations.
constexpr size_t kIntegerMaxBytes = 6;

enum IntegerResult : int {
    kIntegerIncomplete = 0,
    // > 0: octets consumed
    // HPACK_E_INTEGER: overflow or overlong
};

// QPACK (RFC 9204 4.1.1) takes the same integers up to 62 bits: a stream
// id, a Base that a section without dynamic references may set anywhere.
constexpr uint64_t kInteger62Max = (uint64_t{1} << 62) - 1;
// 2^62 - 1 with a 1-bit prefix needs 62 bits in groups of 7.
constexpr int kInteger62MaxContinuation = 9;
constexpr size_t kInteger62MaxBytes = 1 + kInteger62MaxContinuation;

// Decodes an integer with a prefix_bits prefix starting at *p (the
// representation bits above the prefix are ignored), up to Max in at most
// MaxContinuation continuation octets.  Returns the number of octets
// consumed, kIntegerIncomplete when the input ends first, or
// HPACK_E_INTEGER when the value exceeds Max or the encoding is longer.
// An encoding longer than the shortest is read as the value it denotes:
// RFC 7541 5.1 and RFC 9204 4.1.1 allow it, and nginx takes it.  Group i
// adds at most 7 bits at 7 (i - 1): for 9 groups the sum stays below 2^63
// + 2^8, so it cannot wrap before the test.
template <class T, uint64_t Max, int MaxContinuation>
inline int decode_prefixed(const uint8_t* p, const uint8_t* end, int prefix_bits, T* value) {
    const uint32_t max_prefix = (1u << prefix_bits) - 1;
    const uint32_t v = p[0] & max_prefix;
    if (HPACK_LIKELY(v < max_prefix)) {
        *value = v;
        return 1;
    }
    uint64_t acc = v;
    for (int i = 1; i <= MaxContinuation; ++i) {
        if (p + i >= end) return kIntegerIncomplete;
        const uint8_t b = p[i];
        acc += static_cast<uint64_t>(b & 0x7f) << (7 * (i - 1));
        if (!(b & 0x80)) {
            if (acc > Max) return HPACK_E_INTEGER;
            *value = static_cast<T>(acc);
            return i + 1;
        }
    }
    return HPACK_E_INTEGER;
}

// HPACK's integers: up to four octets.
inline int decode_integer(const uint8_t* p, const uint8_t* end,
                          int prefix_bits, uint32_t* value) {
    return decode_prefixed<uint32_t, kIntegerMax, kIntegerMaxContinuation>(p, end, prefix_bits,
                                                                           value);
}

// QPACK's: up to kInteger62Max, in up to ten octets, as nginx's
// ngx_http_v3_parse_prefix_int() takes them.
inline int decode_integer62(const uint8_t* p, const uint8_t* end,
                            int prefix_bits, uint64_t* value) {
    return decode_prefixed<uint64_t, kInteger62Max, kInteger62MaxContinuation>(p, end, prefix_bits,
                                                                               value);
}

// Writes v with a prefix_bits prefix; first_byte_bits are the
// representation bits above the prefix.  dst needs kIntegerMaxBytes for a
// 32-bit v, kInteger62MaxBytes for a 62-bit one.  Returns the octets
// written.
template <class T>
inline size_t encode_prefixed(uint8_t* dst, uint8_t first_byte_bits, int prefix_bits, T v) {
    const uint32_t max_prefix = (1u << prefix_bits) - 1;
    if (v < max_prefix) {
        dst[0] = static_cast<uint8_t>(first_byte_bits | v);
        return 1;
    }
    dst[0] = static_cast<uint8_t>(first_byte_bits | max_prefix);
    v -= max_prefix;
    size_t n = 1;
    while (v >= 0x80) {
        dst[n++] = static_cast<uint8_t>(0x80 | (v & 0x7f));
        v >>= 7;
    }
    dst[n++] = static_cast<uint8_t>(v);
    return n;
}

inline size_t encode_integer(uint8_t* dst, uint8_t first_byte_bits, int prefix_bits,
                             uint32_t v) {
    return encode_prefixed(dst, first_byte_bits, prefix_bits, v);
}

inline size_t encode_integer62(uint8_t* dst, uint8_t first_byte_bits, int prefix_bits,
                               uint64_t v) {
    return encode_prefixed(dst, first_byte_bits, prefix_bits, v);
}

inline size_t integer_length(int prefix_bits, uint32_t v) {
    const uint32_t max_prefix = (1u << prefix_bits) - 1;
    if (v < max_prefix) return 1;
    v -= max_prefix;
    size_t n = 2;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

}  // namespace hpack

#endif
