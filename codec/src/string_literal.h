// String literals (RFC 7541 5.2, RFC 9204 4.1.2): the H bit above an
// N-bit length prefix, then the octets, Huffman-coded only when that is
// strictly shorter.  The HPACK and QPACK encoders write them alike.

#ifndef HPACK_STRING_LITERAL_H
#define HPACK_STRING_LITERAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "huffman.h"
#include "integer.h"

namespace hpack {

// The length of the literal of src[0..len) with a prefix-bit length
// prefix: a pass over the string for the length of its Huffman code.
inline size_t string_length(const uint8_t* src, size_t len, int prefix) {
    const size_t h = huffman_encoded_length(src, len);
    const size_t n = h < len ? h : len;
    return integer_length(prefix, static_cast<uint32_t>(n)) + n;
}

// Writes the literal of src[0..len), measuring its code first: dst has
// exactly the room it takes (string_length()).  Returns its length.
inline size_t string_encode_measured(const uint8_t* src, size_t len, uint8_t* dst, uint8_t bits,
                                     int prefix) {
    const size_t h = huffman_encoded_length(src, len);
    if (h < len) {
        const size_t n = encode_integer(dst, static_cast<uint8_t>(bits | 1u << prefix), prefix,
                                        static_cast<uint32_t>(h));
        return n + huffman_encode(src, len, dst + n);
    }
    const size_t n = encode_integer(dst, bits, prefix, static_cast<uint32_t>(len));
    if (len) memcpy(dst + n, src, len);
    return n + len;
}

// The most octets string_encode_one_pass() writes, in the literal and past
// it: room for the raw string behind its prefix, and the Huffman coder's
// overrun.
inline size_t string_one_pass_room(size_t len, int prefix) {
    return integer_length(prefix, static_cast<uint32_t>(len)) + len + kHuffmanBoundedOverrun;
}

// Writes src[0..len) as a string literal with `bits` above the H bit and
// its prefix-bit length prefix; dst has string_one_pass_room() octets.
// The Huffman code is written at once behind a length prefix sized for the
// raw string and given up as soon as it is not shorter, when raw octets
// replace it: no pass to measure the code first, which costs about as
// much as the encoding.  Returns the literal's length.
HPACK_INLINE size_t string_encode_one_pass(const uint8_t* src, size_t len, uint8_t* dst,
                                           uint8_t bits, int prefix) {
    const size_t pre = integer_length(prefix, static_cast<uint32_t>(len));
    const size_t h = huffman_encode_bounded(src, len, dst + pre, len);
    if (h < len) {
        const size_t hpre = integer_length(prefix, static_cast<uint32_t>(h));
        if (hpre != pre) memmove(dst + hpre, dst + pre, h);
        encode_integer(dst, static_cast<uint8_t>(bits | 1u << prefix), prefix,
                       static_cast<uint32_t>(h));
        return hpre + h;
    }
    encode_integer(dst, bits, prefix, static_cast<uint32_t>(len));
    if (len) memcpy(dst + pre, src, len);
    return pre + len;
}

}  // namespace hpack

#endif
