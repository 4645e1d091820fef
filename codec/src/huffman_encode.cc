// HPACK Huffman encoding (RFC 7541 5.2, Appendix B).
//
// Encoding looks codes up an octet at a time (kOctet, 4 KiB), left-
// aligned, and joins those of eight octets as two chains of four.  While
// the output has room for whole words, sixteen octets a turn go out from a
// bit position in two 64-bit stores when the first group of eight ends
// within the first store and the second has at most 63 bits (put_two(),
// fits_two()).  Text whose groups of eight keep missing that (random
// printable text, 7.7 bits a symbol) goes eight octets a turn, two groups
// of four.  The rest goes through a 64-bit accumulator (put()).

#include "huffman_internal.h"

namespace hpack {
namespace {

// Codes are kept left-aligned: the first bit of a code in bit 63, zeros
// below its last.  Joining two is then an OR and one shift (by the first
// one's length, which a table gives beside it), and so is adding one to
// the accumulator; writing the accumulator needs no shift at all.
constexpr uint64_t left_aligned(uint64_t code, unsigned bits) {
    return code << (64 - bits);
}

// One octet's code and length, one base register for both arrays; the
// lengths are 64-bit, so that x86 adds one to a sum as it loads it (one
// instruction instead of a load and an add).
struct OctetTable {
    uint64_t code[256];
    uint64_t bits[256];
};

constexpr OctetTable make_octet_table() {
    OctetTable t{};
    for (size_t i = 0; i < 256; ++i) {
        t.code[i] = left_aligned(kEncodeCode[i], kEncodeBits[i]);
        t.bits[i] = kEncodeBits[i];
    }
    return t;
}

alignas(64) constexpr OctetTable kOctet = make_octet_table();

// The bits not yet written are the top `pending` bits of `acc`, with zeros
// below them.
struct EncodeState {
    uint64_t acc;
    uint8_t* d;
    unsigned pending;  // < 8 between puts
};

// A put takes at most this many bits: with the 7 that may be pending they
// stay below 64, so that the shift that drops the octets written is by 56
// bits at most.
constexpr unsigned kPutMaxBits = 56;

// Adds `bits` (<= kPutMaxBits) bits of left-aligned code and writes them
// with one 8-octet store that may run up to 8 octets past the last whole
// octet.
HPACK_INLINE void put(EncodeState& st, uint64_t code, unsigned bits) {
    st.acc |= code >> st.pending;
    st.pending += bits;
    store64_be(st.d, st.acc);
    const unsigned written = st.pending & ~7u;  // bits, in whole octets
    st.d += written >> 3;
    st.acc <<= written;
    st.pending ^= written;
}

// Symbols whose codes together exceed kPutMaxBits (octets >= 0x80,
// controls): one code at a time keeps the accumulator within 7 + 30 bits.
// Out of line: header text does not get here.
// (A copy goes by reference, so that the state stays in registers on the
// common path.)
HPACK_NOINLINE void encode_each_at(EncodeState* st, const uint8_t* s, int count) {
    for (int k = 0; k < count; ++k) put(*st, kOctet.code[s[k]], kOctet.bits[s[k]]);
}

HPACK_INLINE void encode_each(EncodeState& st, const uint8_t* s, int count) {
    EncodeState copy = st;
    encode_each_at(&copy, s, count);
    st = copy;
}

// The group loop (encode_groups16()) writes from a bit position instead,
// two groups a turn in two stores: the first holds the octet under way,
// the first group's code and as much of the second's as fits; the second
// store holds the rest.  Nothing carries from one turn to the next but
// the position and the last code put, whose last bits are the octet under
// way (a group has at least 20 bits, the octet under way at most 7): no
// accumulator is shifted, and one position's bookkeeping serves two
// groups (DESIGN.md, "Huffman encode": "Sparse text sixteen symbols a
// turn").
//
// On x86-64 the position is a bit address, the output pointer times 8 plus
// the bits of the octet under way (user-space addresses stay below 2^57,
// so it does not overflow): the octet under way is then the position
// shifted, with no base register to add (a register the sparse loop would
// reload from the stack every turn).  Elsewhere, where pointers may
// carry tags in their top bits, it counts from a base.
#if defined(__x86_64__)
struct GroupBase {
    explicit GroupBase(uint8_t*) {}
    uint64_t bits_at(const uint8_t* d) const { return reinterpret_cast<uintptr_t>(d) * 8; }
    uint8_t* octet_at(uint64_t pos) const { return reinterpret_cast<uint8_t*>(pos >> 3); }
};
#else
struct GroupBase {
    explicit GroupBase(uint8_t* base) : base(base) {}
    uint64_t bits_at(const uint8_t* d) const { return static_cast<uint64_t>(d - base) * 8; }
    uint8_t* octet_at(uint64_t pos) const { return base + (pos >> 3); }
    uint8_t* base;
};
#endif

struct GroupState {
    GroupBase at;
    uint64_t pos;        // bits written, from at
    uint64_t last;       // the last code put, left-aligned
    unsigned last_bits;  // its length, >= pos & 7
};

HPACK_INLINE GroupState to_groups(const EncodeState& st, GroupBase at) {
    return GroupState{at, at.bits_at(st.d) + st.pending, st.acc, st.pending};
}

HPACK_INLINE uint8_t* out_of(const GroupState& g) { return g.at.octet_at(g.pos); }

HPACK_INLINE EncodeState to_octets(const GroupState& g) {
    const unsigned s = g.pos & 7;
    return EncodeState{g.last << (g.last_bits - s), out_of(g), s};
}

// The first code of put_two() must end within the first store, after the
// bits of the octet under way (0..7).  The sparse loop asks that of the
// position it starts at (fits_two()), not of the worst one (kPutMaxBits):
// fewer of its turns go through the accumulator, and the dense loop, whose
// groups of four rarely need it, keeps the plain limit, which costs it
// fewer instructions (DESIGN.md, "Huffman encode": "The group loop's
// position as a bit address").  The second
// code starts in the first store at bit 20..63 and what does not fit goes
// to the second store.  It becomes the last code put, which the next turn
// shifts left by its length less the bits of the octet under way: 63 bits
// keep that shift below 64 when the octet under way is empty.
constexpr unsigned kPutSecondMaxBits = 63;

HPACK_INLINE bool fits_two(const GroupState& g, unsigned la, unsigned lb) {
    const unsigned s = g.pos & 7;  // as put_two() has it, to be shared
    return s + la <= 63 && lb <= kPutSecondMaxBits;
}

// Adds two left-aligned codes of four or eight symbols, at least 20 bits
// each, the first ending by bit 63 of the first store and the second of
// at most kPutSecondMaxBits (fits_two() in the sparse loop, kPutMaxBits
// for the first in the dense one), with two 8-octet stores, which may run
// up to 16 octets past the last whole octet.
HPACK_INLINE void put_two(GroupState& g, uint64_t a, unsigned la, uint64_t b, unsigned lb) {
    const unsigned s = g.pos & 7;
    const unsigned sb = s + la;  // where b starts: 20..63
    uint8_t* const at = out_of(g);
    store64_be(at, (g.last << (g.last_bits - s)) | (a >> s) | (b >> sb));
    store64_be(at + 8, b << ((0u - sb) & 63));  // sb > 0: 64 - sb, as neg
    g.pos += la + lb;
    g.last = b;
    g.last_bits = lb;
}

}  // namespace

size_t huffman_encoded_length(const uint8_t* src, size_t n) {
    // Four sums: the table loads of neighbouring octets do not wait on one
    // another's adds.
    uint64_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        b0 += kOctet.bits[src[i]];
        b1 += kOctet.bits[src[i + 1]];
        b2 += kOctet.bits[src[i + 2]];
        b3 += kOctet.bits[src[i + 3]];
        b0 += kOctet.bits[src[i + 4]];
        b1 += kOctet.bits[src[i + 5]];
        b2 += kOctet.bits[src[i + 6]];
        b3 += kOctet.bits[src[i + 7]];
    }
    for (; i < n; ++i)
        b0 += kOctet.bits[src[i]];
    return static_cast<size_t>((b0 + b1 + b2 + b3 + 7) / 8);
}

namespace {

// The codes of s[0..2) joined, left-aligned (60 bits at most), and their
// length: two lookups in kOctet, whose 4 KiB stay in L1 beside the rest
// of a server, where a table of octet pairs (576 KiB) missed L1 and L2 in
// the worker (DESIGN.md, "Huffman encode": "Codes looked up an octet at a
// time").
HPACK_INLINE uint64_t join2(const uint8_t* s, unsigned& bits) {
    const uint64_t b0 = kOctet.bits[s[0]];
    bits = static_cast<unsigned>(b0 + kOctet.bits[s[1]]);
    return kOctet.code[s[0]] | (kOctet.code[s[1]] >> b0);
}

// The codes of s[0..4) joined, and their length in bits (at most 120; the
// code is whole only up to 64).
HPACK_INLINE uint64_t join4(const uint8_t* s, unsigned& bits) {
    unsigned b0, b1;
    const uint64_t a = join2(s, b0), b = join2(s + 2, b1);
    bits = b0 + b1;
    return a | (b >> b0);
}

// Four symbols, one store.
HPACK_INLINE void encode_group4(EncodeState& st, const uint8_t* s) {
    unsigned bits;
    const uint64_t c = join4(s, bits);
    if (HPACK_UNLIKELY(bits > kPutMaxBits))
        encode_each(st, s, 4);
    else
        put(st, c, bits);
}

// Eight symbols through the accumulator, one store when they fit it:
// header values and hex digits (5-6 bits a symbol) nearly always do;
// random printable text (7.7 on average) mostly does not and takes two.
HPACK_INLINE void encode_group8(EncodeState& st, const uint8_t* s) {
    unsigned la, lb;
    const uint64_t a = join4(s, la), b = join4(s + 4, lb);
    if (HPACK_LIKELY(la + lb <= kPutMaxBits)) {
        put(st, a | (b >> la), la + lb);
    } else if (HPACK_UNLIKELY(la > kPutMaxBits || lb > kPutMaxBits)) {
        encode_each(st, s, 8);
    } else {
        put(st, a, la);
        put(st, b, lb);
    }
}

// Eight symbols of text whose groups of eight keep missing put_two() (the
// test that fails at random costs more than a turn of sixteen saves): two
// groups of four in put_two(), or a symbol at a time when they do not fit
// it.
HPACK_INLINE void encode_dense8(GroupState& g, const uint8_t* s) {
    unsigned la, lb;
    const uint64_t a = join4(s, la), b = join4(s + 4, lb);
    if (HPACK_LIKELY(la <= kPutMaxBits && lb <= kPutSecondMaxBits)) {
        put_two(g, a, la, b, lb);
    } else {
        EncodeState st = to_octets(g);
        encode_each(st, s, 8);
        g = to_groups(st, g.at);
    }
}

// Turns of sixteen whose groups of eight did not fit put_two(): `misses`
// of them in the `done` octets before.  Text that misses often (from the
// third miss, one turn in four) is written in groups of four from there
// on.
HPACK_INLINE bool is_dense(unsigned misses, size_t done) {
    return misses >= 3 && misses * 64 >= done;
}

// Sixteen symbols whose groups of eight do not fit put_two().  Out
// of line, so that the group loop keeps nothing alive for it: inline, GCC
// keeps the halves' codes for it and spills the loop's state to the stack
// (DESIGN.md, "Huffman encode": "Sparse text sixteen symbols a turn, the
// misfits out of line").
HPACK_NOINLINE void encode16_apart(EncodeState* st, const uint8_t* s) {
    EncodeState copy = *st;
    encode_group8(copy, s);
    encode_group8(copy, s + 8);
    *st = copy;
}

// The code of s[0..8) and its length; the code is whole only up to 64
// bits (the shift's count is taken modulo 64, as x86 takes it anyway).
HPACK_INLINE uint64_t join8(const uint8_t* s, unsigned& bits) {
    unsigned la, lb;
    const uint64_t a = join4(s, la), b = join4(s + 4, lb);
    bits = la + lb;
    return a | (b >> (la & 63));
}

// Groups of sixteen symbols from src while more(at, g) says the next one
// may start at `at`: the two groups of eight in put_two() when they fit
// it, until the text is dense; after that, while more_dense(at,
// g) does, two groups of four in put_two() a turn.  Returns where they
// stopped.
template <typename More, typename MoreDense>
HPACK_INLINE const uint8_t* encode_groups16(EncodeState& st, const uint8_t* src, More more,
                                            MoreDense more_dense) {
    const uint8_t* s = src;
    unsigned misses = 0;
    GroupState g = to_groups(st, GroupBase(st.d));
    for (; more(s, g); s += 16) {
        unsigned la, lb;
        const uint64_t a = join8(s, la), b = join8(s + 8, lb);
        if (HPACK_LIKELY(fits_two(g, la, lb))) {
            put_two(g, a, la, b, lb);
            continue;
        }
        EncodeState o = to_octets(g);
        encode16_apart(&o, s);
        g = to_groups(o, g.at);
        if (is_dense(++misses, static_cast<size_t>(s - src))) {
            for (s += 16; more_dense(s, g); s += 16) {
                encode_dense8(g, s);
                encode_dense8(g, s + 8);
            }
            break;
        }
    }
    st = to_octets(g);
    return s;
}

// RFC 7541 5.2: pad with the most significant bits of EOS (all ones).
HPACK_INLINE uint8_t* encode_finish(EncodeState st) {
    if (st.pending > 0)
        *st.d++ = static_cast<uint8_t>((st.acc >> 56) | (0xffu >> st.pending));
    return st.d;
}

HPACK_INLINE size_t encode_body(const uint8_t* src, size_t n, uint8_t* dst) {
    EncodeState st{0, dst, 0};
    const uint8_t* s = src;
    const uint8_t* const end = src + n;

    // The 8-octet store may run ahead of the output, so it is used only
    // while 12 more symbols follow a group: their 60 bits or more keep
    // those octets inside the output.
    if (n >= 20) {
        // Two groups a turn (DESIGN.md, "Huffman encode": "Two groups a
        // turn").
        if (n >= 28) {
            // put_two()'s stores reach 16 octets from where a turn starts:
            // a turn of sixteen symbols has at least 80 bits of code, and
            // 12 symbols after it make that 140; a dense turn of eight has
            // 40, and needs 20 after it.
            const uint8_t* const last = end - 28;
            s = encode_groups16(
                st, src, [last](const uint8_t* at, const GroupState&) { return at <= last; },
                [last](const uint8_t* at, const GroupState&) { return at + 8 <= last; });
        }
        if (end - s >= 20) {
            encode_group8(st, s);
            s += 8;
        }
    }
    if (end - s >= 16) {
        encode_group4(st, s);
        s += 4;
    }

    for (; s < end; ++s) {
        st.acc |= kOctet.code[*s] >> st.pending;
        st.pending += kOctet.bits[*s];
        while (st.pending >= 8) {
            *st.d++ = static_cast<uint8_t>(st.acc >> 56);
            st.acc <<= 8;
            st.pending -= 8;
        }
    }
    return static_cast<size_t>(encode_finish(st) - dst);
}

HPACK_INLINE size_t encode_bounded_body(const uint8_t* src, size_t n, uint8_t* dst,
                                        size_t limit) {
    // Two groups start below dst + limit and write at most 60 octets of
    // code plus a store's 8 (encode_group8()); the last 0..15 octets less.
    // A turn of put_two() starts below it too and its stores reach 16
    // octets from there; a dense turn's second put_two() starts at most 15
    // octets further (the first put_two() ends by bit 63 + 63; 31 in all).
    // Two a turn, as in encode_body(), and the tail below (DESIGN.md,
    // "Huffman encode": "Two groups a turn").
    static_assert(kHuffmanBoundedOverrun >= (7 + 16 * 30) / 8 + 8, "two groups past limit");
    EncodeState st{0, dst, 0};
    const uint8_t* s = src;
    const uint8_t* const end = src + n;
    uint8_t* const stop = dst + limit;
    // The bit position of stop, loop-invariant: a turn may start while the
    // position is below it.
    auto more = [end, stop](const uint8_t* at, const GroupState& now) {
        return end - at >= 16 && now.pos < now.at.bits_at(stop);
    };
    s = encode_groups16(st, src, more, more);
    if (end - s >= 8 && st.d < stop) {
        encode_group8(st, s);
        s += 8;
    }
    if (st.d >= stop) return limit;
    if (end - s >= 4) {
        encode_group4(st, s);
        s += 4;
    }
    // The last 0..3 octets with one store when they fit it.
    if (end - s >= 2) {
        unsigned bits;
        uint64_t code = join2(s, bits);
        if (end - s == 3) {
            code |= kOctet.code[s[2]] >> bits;
            bits += kOctet.bits[s[2]];
        }
        if (HPACK_LIKELY(bits <= kPutMaxBits)) {
            put(st, code, bits);
            s = end;
        }
    }
    for (; s < end; ++s) put(st, kOctet.code[*s], kOctet.bits[*s]);
    const size_t h = static_cast<size_t>(encode_finish(st) - dst);
    return h < limit ? h : limit;
}

// The bodies above, compiled once per instruction set (huffman_internal.h).
HPACK_NOINLINE size_t encode_generic(const uint8_t* src, size_t n, uint8_t* dst) {
    return encode_body(src, n, dst);
}

HPACK_NOINLINE size_t encode_bounded_generic(const uint8_t* src, size_t n,
                                             uint8_t* dst, size_t limit) {
    return encode_bounded_body(src, n, dst, limit);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 size_t encode_bmi2(const uint8_t* src, size_t n, uint8_t* dst) {
    return encode_body(src, n, dst);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 size_t encode_bounded_bmi2(
    const uint8_t* src, size_t n, uint8_t* dst, size_t limit) {
    return encode_bounded_body(src, n, dst, limit);
}
#endif

}  // namespace

size_t huffman_encode(const uint8_t* src, size_t n, uint8_t* dst) {
#if HPACK_HUFFMAN_BMI2
    if (g_huffman_bmi2) return encode_bmi2(src, n, dst);
#endif
    return encode_generic(src, n, dst);
}

size_t huffman_encode_bounded(const uint8_t* src, size_t n, uint8_t* dst, size_t limit) {
#if HPACK_HUFFMAN_BMI2
    if (g_huffman_bmi2) return encode_bounded_bmi2(src, n, dst, limit);
#endif
    return encode_bounded_generic(src, n, dst, limit);
}

}  // namespace hpack

HPACK_API size_t hpack_huffman_encoded_len(const uint8_t* src, size_t len) {
    return hpack::huffman_encoded_length(src, len);
}

HPACK_API size_t hpack_huffman_encode(const uint8_t* src, size_t len,
                                      uint8_t* dst) {
    return hpack::huffman_encode(src, len, dst);
}
