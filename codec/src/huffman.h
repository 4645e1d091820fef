// HPACK Huffman code (RFC 7541 5.2, Appendix B): exact-length encoding and
// strict, table-driven decoding into a buffer the caller sizes once.

#ifndef HPACK_HUFFMAN_H
#define HPACK_HUFFMAN_H

#include <stddef.h>
#include <stdint.h>

namespace hpack {

// The exact length of the Huffman code of src[0..n) in octets.
size_t huffman_encoded_length(const uint8_t* src, size_t n);

// Writes exactly huffman_encoded_length(src, n) octets to dst (which may be
// exactly that large) and returns that length.
size_t huffman_encode(const uint8_t* src, size_t n, uint8_t* dst);

// Encodes src[0..n) the same way, or gives up once the code has reached
// `limit` octets and returns `limit` (the caller wants the code only when
// it is shorter than that).  Whole-word stores throughout, short strings
// included: dst has kHuffmanBoundedOverrun writable octets past
// dst + limit, which covers two groups of 8 octets of 30-bit codes begun
// below the limit and their last store.
constexpr size_t kHuffmanBoundedOverrun = 72;
size_t huffman_encode_bounded(const uint8_t* src, size_t n, uint8_t* dst, size_t limit);

// The decoder stores a group's symbols with one 8-octet store, up to 8
// octets past its last symbol: the capacity below covers it.
constexpr size_t kHuffmanDecodeSlack = 16;

// The shortest code is 5 bits, so n octets decode to at most n * 8 / 5.
inline size_t huffman_decode_capacity(size_t n) {
    return n * 8 / 5 + kHuffmanDecodeSlack;
}

// Decodes src[0..n) into dst, which has huffman_decode_capacity(n) octets;
// never writes past that.  Returns the decoded length, HPACK_E_HUFFMAN_EOS
// when the EOS symbol appears, or HPACK_E_HUFFMAN_PADDING when the string
// does not end in at most 7 one bits (RFC 7541 5.2).
ptrdiff_t huffman_decode(const uint8_t* src, size_t n, uint8_t* dst);

// The encoder and the decoder run in one of two builds of the same code:
// generic x86-64 (or whatever the target is), or with BMI2's shifts and
// MOVBE's stores, chosen when the library is loaded if the CPU has them.
// Both give the same results; tests run both.
enum class HuffmanIsa { generic, bmi2 };

bool huffman_has_isa(HuffmanIsa isa);
HuffmanIsa huffman_isa();

// Switches to `isa` if this CPU has it (returns false otherwise).  For
// tests and benchmarks: not to be called while another thread codes.
bool huffman_set_isa(HuffmanIsa isa);

}  // namespace hpack

#endif
