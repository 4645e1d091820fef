// HPACK Huffman decoding (RFC 7541 5.2, Appendix B): one position, one
// table.
//
// Decoding keeps a 64-bit window of the input, MSB first.  Its top 12 bits
// index kDecode (its root, 16 KiB), whose entry holds the complete codes at
// the start of those bits (two symbols for much header text), the bits they
// take and the shift that gives the next index.  A code longer than 12 bits
// (a "link") continues with a 13-bit window into the upper part of the same
// table, so every printable ASCII octet decodes in at most two lookups of
// the same kind, without a branch.  Only codes over 21 bits (octets >= 0x80,
// controls, EOS) take a slow path.
//
// Strictness (RFC 7541 5.2) comes from reading the input as if it went on
// with one bits: past the last symbol a valid string shows only ones, which
// no code but EOS (30 bits) matches, so no symbol is ever made of padding.
// A code that needs bits past the end, a run of ones that reaches EOS, and
// 8 or more bits left over are the errors the RFC names.

#include <stddef.h>
#include <stdint.h>

#include "huffman_internal.h"

namespace hpack {
namespace {

// The decode table: the root, then the link windows at kDecodeLinkBase.
// The indexes in between are never reached (only a link leads above the
// root, and into its own block); they hold a slow entry of width 0, which
// the slow path would reject as EOS.
constexpr size_t kDecodeSize =
    kDecodeLinkBase + sizeof kDecodeLink / sizeof kDecodeLink[0];

struct DecodeTable {
    uint32_t e[kDecodeSize];
};

constexpr DecodeTable assemble_decode_table() {
    DecodeTable t{};
    for (size_t i = 0; i < kDecodeSize; ++i)
        t.e[i] = kDecodeSlow;
    for (size_t i = 0; i < sizeof kDecodeRoot / sizeof kDecodeRoot[0]; ++i)
        t.e[i] = kDecodeRoot[i];
    for (size_t i = 0; i < sizeof kDecodeLink / sizeof kDecodeLink[0]; ++i)
        t.e[kDecodeLinkBase + i] = kDecodeLink[i];
    return t;
}

alignas(64) constexpr DecodeTable kDecode = assemble_decode_table();

// Every code longer than the root window begins with eight ones, which a
// link consumes: a slow entry's code starts kDecodeLinkConsumed bits
// before it (slow_symbol(), decode_string()).
constexpr bool long_codes_begin_with_ones() {
    for (size_t c = 0; c < 256; ++c) {
        const unsigned len = kEncodeBits[c];
        if (len > 64 - kDecodeRootShift
            && kEncodeCode[c] >> (len - kDecodeLinkConsumed) != 0xff)
            return false;
    }
    return true;
}
static_assert(kDecodeLinkConsumed == 8 && long_codes_begin_with_ones(),
              "a link consumes eight one bits");

// The decoding position.  The top avail() bits of `buf` are the next input
// bits; a refill leaves 56..63 of them (branch-free, whole octets at a
// time).  Octets past the end read as 0xff.
struct Stream {
    uint64_t buf;
    size_t   i;      // next octet to load
    uint8_t* d;      // next output octet
    unsigned left;   // its low 6 bits are avail(): a group subtracts its
                     // entry octets, symbol counts included
    unsigned avail() const { return left & 63; }
    unsigned shift;  // kDecodeRootShift at a symbol boundary, else inside
                     // a long code (kDecodeLinkShift)
};

// The 8 octets at src[i..], MSB first, octets at or past n reading as
// 0xff.  Reads only src[0..n).
inline uint64_t load_tail(const uint8_t* src, size_t n, size_t i) {
    if (i >= n)
        return ~uint64_t{0};
    const size_t r = n - i;  // 1..7
    uint64_t v;
    if (n >= 8) {
        v = load64_be(src + n - 8) << (8 * (8 - r));
    } else if (r >= 4) {
        v = (uint64_t{load32_be(src + i)} << 32)
            | (uint64_t{load32_be(src + n - 4)} << (8 * (8 - r)));
    } else {
        v = (uint64_t{src[i]} << 56)
            | (uint64_t{src[i + r / 2]} << (56 - 8 * (r / 2)))
            | (uint64_t{src[n - 1]} << (56 - 8 * (r - 1)));
    }
    return v | (~uint64_t{0} >> (8 * r));
}

// Every symbol stored took at least 5 input bits, so a store starts at most
// n * 8 / 5 octets into the output, and at most one store (of a lookup that
// ran past the end, which fails the string) holds bits past the end.
static_assert(kHuffmanDecodeSlack >= 8, "8-octet stores of symbols");

// Tops up the window from v, the next 8 input octets (MSB first) after
// those in it, and moves the input position past the whole octets it took.
HPACK_INLINE void refill_from(Stream& s, uint64_t v) {
    s.buf |= v >> s.avail();
    s.i += (63 - s.avail()) >> 3;
    s.left = s.avail() | 56;
}

HPACK_INLINE void refill(Stream& s, const uint8_t* src, size_t n) {
    refill_from(s, HPACK_LIKELY(s.i + 8 <= n) ? load64_be(src + s.i) : load_tail(src, n, s.i));
}

// Input bits not consumed yet; negative once a code took implied ones.
HPACK_INLINE int64_t bits_left(const Stream& s, size_t n) {
    return (static_cast<int64_t>(n) - static_cast<int64_t>(s.i)) * 8
           + s.avail();
}

// The entry octet with the bits consumed (bits 0-5) and the symbol count
// (bits 6-7) of kDecode's entry, by a load of its own: it feeds the shift
// as it comes (x86 masks shift counts to 6 bits), so the lookup's
// dependency chain is the load, that shift and the next index's shift.
HPACK_INLINE unsigned entry_bits(size_t index) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return reinterpret_cast<const uint8_t*>(&kDecode.e[index])[2];
#else
    return (kDecode.e[index] >> 16) & 0xff;
#endif
}

// A group is three lookups, the window refilled after the first (below):
// each lookup takes at most kDecodeMaxConsumed bits, and its index needs
// 64 - kDecodeLinkShift.  A group starts with 30 bits or more (a refill
// leaves 56, the two lookups after it take 26 at most), so the first
// lookup leaves the second its index (17 bits or more): the second lookup
// reads its index from the window before the refill, and the refill's
// shift, which waits on the bits the first lookup took, is off the path
// from one lookup to the next.  The bits consumed (below bit 6) and the
// symbol counts (above) of the entry octets add up in `sum`; the output
// pointer moves once per group, and the group's symbols (6 at most) go out
// with one 8-octet store.
static_assert(3 * kDecodeMaxConsumed + (64 - kDecodeLinkShift) <= 56
                  && 3 * kDecodeMaxConsumed < 64,
              "a group's lookups have their index bits; the sums stay apart");

// A lookup of the entry at the top of w: false at a slow entry.
HPACK_INLINE bool lookup(uint64_t w, unsigned shift, uint32_t* e, unsigned* bits) {
    const size_t index = w >> shift;
    *e = kDecode.e[index];
    if (HPACK_UNLIKELY(*e & kDecodeSlow))
        return false;
    *bits = entry_bits(index);
    return true;
}

// Takes a lookup's entry: its symbols into the group's output word, its
// bits out of the window.  (sum >> 3) & ~7 is 8 times the symbols so far:
// the bits consumed (at most 26 before the last lookup) fall below bit 3.
HPACK_INLINE void take(Stream& s, uint32_t e, unsigned bits, unsigned& sum, uint64_t& out) {
    out |= uint64_t{e & 0xffff} << ((sum >> 3) & ~7u);
    s.buf <<= (bits & 63);
    s.left -= bits;
    sum += bits;
    s.shift = e >> 26;
}

// A group: the first lookup, the refill from v (the 8 octets at s.i, MSB
// first), the other two lookups, the store.  False at a slow entry (the
// state is the one before it).
HPACK_INLINE bool group(Stream& s, uint64_t v) {
    unsigned sum = 0;
    uint64_t out = 0;
    uint32_t e;
    unsigned bits;
    bool ok = lookup(s.buf, s.shift, &e, &bits);
    if (HPACK_LIKELY(ok)) {
        take(s, e, bits, sum, out);
        const uint64_t w = s.buf;
        refill_from(s, v);
        ok = lookup(w, s.shift, &e, &bits);
        if (HPACK_LIKELY(ok)) {
            take(s, e, bits, sum, out);
            ok = lookup(s.buf, s.shift, &e, &bits);
            if (HPACK_LIKELY(ok))
                take(s, e, bits, sum, out);
        }
    }
    store64_le(s.d, out);
    s.d += sum >> 6;
    return ok;
}

constexpr int kMore = 1;  // slow_symbol(): go on decoding
constexpr int kEnd = 2;   // slow_symbol(): the string ended validly

constexpr uint32_t kSubCountMask = 0xc0;

// A code longer than the link window, after a lookup returned a slow entry
// whose code starts `start` bits before the end of the input.  Returns
// kMore with the symbol stored and s at the root, kEnd, or an error.  Out
// of line: printable text never gets here.
HPACK_NOINLINE int slow_symbol(Stream& s, const uint8_t* src, size_t n, int64_t start) {
    refill(s, src, n);
    const uint32_t e = kDecode.e[s.buf >> s.shift];
    unsigned bits = (e >> 16) & 63;
    unsigned offset = e & 0xffff;
    unsigned width = e >> 26;
    for (;;) {
        if (width == 0) {
            // EOS made of real bits: inside the string (RFC 7541 5.2).
            // Else ones ran from `start` past the end: padding, too long
            // from 8 bits on; a negative `start` means an earlier code
            // already took implied bits.
            if (start >= 30)
                return HPACK_E_HUFFMAN_EOS;
            if (start < 0 || start >= 8)
                return HPACK_E_HUFFMAN_PADDING;
            return kEnd;
        }
        s.buf <<= bits;
        s.left -= bits;
        const uint32_t t = kDecodeSub[offset + (s.buf >> (64 - width))];
        bits = t & 63;
        if (t & kSubCountMask) {
            *s.d++ = static_cast<uint8_t>(t >> 8);
            s.buf <<= bits;
            s.left -= bits;
            s.shift = kDecodeRootShift;
            return kMore;
        }
        offset = (t >> 8) & 0xffff;
        width = (t >> 24) & 31;
    }
}

// Groups run up to the end and on into the implied ones: ones alone never
// make a symbol, so a group that reaches them stops at a slow entry, after
// a link.  Every code over 12 bits begins with 8 ones, so a slow entry
// whose code starts fewer than 8 bits before the end means that those bits
// are ones: valid padding (RFC 7541 5.2), judged here without the slow
// path.  A symbol that took implied bits leaves that start negative: the
// string fails.  Only one lookup can store such a symbol (all that follows
// it is ones), so the stores stay within huffman_decode_capacity().
HPACK_INLINE ptrdiff_t decode_body(const uint8_t* src, size_t n, uint8_t* dst) {
    Stream s{0, 0, dst, 0, kDecodeRootShift};
    refill(s, src, n);
    for (;;) {
        uint64_t v;
        if (HPACK_LIKELY(s.i + 8 <= n)) {
            v = load64_be(src + s.i);
        } else {
            if (bits_left(s, n) <= 0 && s.shift == kDecodeRootShift)
                break;
            v = load_tail(src, n, s.i);
        }
        if (group(s, v))
            continue;
        // A slow entry, the link before it taken.
        const int64_t start = bits_left(s, n) + kDecodeLinkConsumed;
        if (start < 8)
            return start < 0 ? ptrdiff_t{HPACK_E_HUFFMAN_PADDING} : s.d - dst;
        const int rc = slow_symbol(s, src, n, start);
        if (rc == kEnd)
            return s.d - dst;
        if (rc != kMore)
            return rc;
    }
    // A code that took bits past the end: the leftover bits were not a
    // prefix of EOS.
    if (bits_left(s, n) < 0)
        return HPACK_E_HUFFMAN_PADDING;
    return s.d - dst;
}

HPACK_NOINLINE ptrdiff_t decode_generic(const uint8_t* src, size_t n, uint8_t* dst) {
    return decode_body(src, n, dst);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 ptrdiff_t decode_bmi2(const uint8_t* src, size_t n,
                                                       uint8_t* dst) {
    return decode_body(src, n, dst);
}
#endif

}  // namespace

ptrdiff_t huffman_decode(const uint8_t* src, size_t n, uint8_t* dst) {
#if HPACK_HUFFMAN_BMI2
    if (g_huffman_bmi2) return decode_bmi2(src, n, dst);
#endif
    return decode_generic(src, n, dst);
}

}  // namespace hpack

HPACK_API size_t hpack_huffman_decode_capacity(size_t len) {
    return hpack::huffman_decode_capacity(len);
}

HPACK_API ptrdiff_t hpack_huffman_decode(const uint8_t* src, size_t len,
                                         uint8_t* dst) {
    return hpack::huffman_decode(src, len, dst);
}
