// HPACK Huffman code (RFC 7541 5.2, Appendix B).
//
// Encoding looks codes up two octets at a time (kPair, 576 KiB), left-
// aligned, and joins those of eight octets as two chains of four.  While
// the output has room for whole words, sixteen octets a turn go out from a
// bit position in two 64-bit stores when the first group of eight ends
// within the first store and the second has at most 63 bits (put_two(),
// fits_two()).  Text whose groups of eight keep missing that (random
// printable text, 7.7 bits a symbol) goes eight octets a turn, two groups
// of four.  The rest goes through a 64-bit accumulator (put()).
//
// Decoding keeps a 64-bit window of the input, MSB first.  Its top 13 bits
// index kDecode (32 KiB), whose entry holds the complete codes at the start
// of those bits (two symbols for most header text), the bits they take and
// the shift that gives the next index.  A code longer than 13 bits (a
// "link") continues with a 14-bit window into the upper part of the same
// table, so every printable ASCII octet decodes in at most two lookups of
// the same kind, without a branch.  Only codes over 22 bits (octets >= 0x80,
// controls, EOS) take a slow path.
//
// Each lookup needs the bit count of the previous one, so one position runs
// at the latency of a load and two shifts per lookup (about 7.5 cycles);
// strings of kSplitMinOctets (112) and more are decoded from two positions
// at once (see decode_split()), which takes 4 KiB of header values from 2.2
// to 1.2 ns per coded octet (fastest runs) on the 2-core EPYC this was
// written on, and a 139-octet cookie from 300 to 252 ns; from
// kSplit3MinOctets (1280) on, from three (decode_split3()).  The decoder
// hands a header block's strings over together (huffman_decode_many()),
// and they are decoded three at a time, in three lanes.
//
// Strictness (RFC 7541 5.2) comes from reading the input as if it went on
// with one bits: past the last symbol a valid string shows only ones, which
// no code but EOS (30 bits) matches, so no symbol is ever made of padding.
// A code that needs bits past the end, a run of ones that reaches EOS, and
// 8 or more bits left over are the errors the RFC names.

#include "huffman.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define HPACK_HUFFMAN_BMI2 1
#define HPACK_TARGET_BMI2 __attribute__((target("bmi2,movbe")))
#else
#define HPACK_HUFFMAN_BMI2 0
#endif

#include "common.h"
#include "memory.h"

namespace hpack {
namespace {

#include "huffman_tables.inc"

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

// ------------------------------------------------------------------ encode

// An encode table widened to 64-bit entries: x86 adds a length to a sum as
// it loads the entry (one instruction instead of a load and an add).
struct Wide {
    uint64_t v[256];
};

template <typename T>
constexpr Wide widen(const T (&table)[256]) {
    Wide w{};
    for (size_t i = 0; i < 256; ++i)
        w.v[i] = table[i];
    return w;
}

alignas(64) constexpr Wide kLength = widen(kEncodeBits);

// Codes are kept left-aligned: the first bit of a code in bit 63, zeros
// below its last.  Joining two is then an OR and one shift (by the first
// one's length, which a table gives beside it), and so is adding one to
// the accumulator; writing the accumulator needs no shift at all.
constexpr uint64_t left_aligned(uint64_t code, unsigned bits) {
    return code << (64 - bits);
}

// One octet's code and length, for the ends of strings and the octets
// whose codes are too long to join; one base register reaches both
// arrays.
struct OctetTable {
    uint64_t code[256];
    uint8_t  bits[256];
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
HPACK_NOINLINE void encode_each_at(EncodeState* st,
                                              const uint8_t* s, int count) {
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
// groups.  Measured in DESIGN.md.
//
// On x86-64 the position is a bit address, the output pointer times 8 plus
// the bits of the octet under way (user-space addresses stay below 2^57,
// so it does not overflow): the octet under way is then the position
// shifted, with no base register to add (a register the sparse loop had
// reloaded from the stack every turn).  Elsewhere, where pointers may
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
// groups of four rarely need it, keeps the plain limit (with fits_two(),
// 20,694 -> 21,480 instructions for 4 KiB of printable text).  The second
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

// ------------------------------------------------------------------ decode

// One decoding position.  The top `avail` bits of `buf` are the next input
// bits; a refill leaves 56..63 of them (branch-free, whole octets at a
// time).  Octets past the end read as 0xff.
struct Stream {
    uint64_t buf;
    size_t   i;      // next octet to load
    uint8_t* d;      // next output octet
    unsigned avail;
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
// those in it, and moves the input position (an index or a pointer) past
// the whole octets it took.
template <typename Position>
HPACK_INLINE void refill_from(uint64_t& buf, unsigned& avail, Position& at, uint64_t v) {
    buf |= v >> avail;
    at += (63 - avail) >> 3;
    avail |= 56;
}

// Only while i + 8 <= n.
HPACK_INLINE void refill_fast(Stream& s, const uint8_t* src) {
    refill_from(s.buf, s.avail, s.i, load64_be(src + s.i));
}

HPACK_INLINE void refill(Stream& s, const uint8_t* src, size_t n) {
    const uint64_t v = HPACK_LIKELY(s.i + 8 <= n) ? load64_be(src + s.i)
                                                 : load_tail(src, n, s.i);
    refill_from(s.buf, s.avail, s.i, v);
}

// Input bits not consumed yet; negative once a code took implied ones.
HPACK_INLINE int64_t bits_left(const Stream& s, size_t n) {
    return (static_cast<int64_t>(n) - static_cast<int64_t>(s.i)) * 8
           + s.avail;
}

// Bits consumed so far.
HPACK_INLINE int64_t bit_position(const Stream& s) {
    return static_cast<int64_t>(s.i) * 8 - s.avail;
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

// Stores the entry's symbols (one 32-bit store; the caller's slack covers
// it) and consumes their bits.
HPACK_INLINE void consume(uint64_t& buf, unsigned& avail, uint8_t*& d, uint32_t e,
                          unsigned bits) {
    store32_le(d, e);
    d += bits >> 6;
    buf <<= (bits & 63);
    avail -= bits & 63;
}

// consume(), and the window shift the entry leads to.
HPACK_INLINE void apply(Stream& s, uint32_t e, unsigned bits) {
    consume(s.buf, s.avail, s.d, e, bits);
    s.shift = e >> 26;
}

// A refill, then four lookups: each takes at most kDecodeMaxConsumed bits
// and the next index needs 64 - kDecodeLinkShift.  The entry octets add up
// in `sum` (bits consumed below bit 6, symbols above), so the output
// pointer and the bit count are settled once per group, and the group's
// symbols (8 at most) go out with one 8-octet store: with a 4-octet store
// per lookup, decoding two positions at once ran at 1.42 or 1.72 ns per
// coded octet depending on the output buffer's address modulo 4096 (loads
// held back behind stores they might alias); with one store, 1.42
// throughout.
static_assert(3 * kDecodeMaxConsumed + (64 - kDecodeLinkShift) <= 56
                  && 4 * kDecodeMaxConsumed < 64,
              "one refill covers a group; the sums stay apart");

// What a group notes after each lookup, given the group's running sum:
// nothing, except for the second decoding position's first window
// (Recorder, below).
struct NoRecord {
    HPACK_INLINE void operator()(unsigned) const {}
};

// A group's lookup that found entry e, of `bits` (entry_bits()): its
// symbols into the group's output word, its bits consumed.  (sum >> 3) &
// ~7 is 8 times the symbols so far: sum's bits consumed (at most 42
// before the last lookup) fall below bit 3 of it.
HPACK_INLINE void take_entry(uint32_t e, unsigned bits, uint64_t& buf, unsigned& sum,
                             uint64_t& out) {
    out |= uint64_t{e & 0xffff} << ((sum >> 3) & ~7u);
    buf <<= (bits & 63);
    sum += bits;
}

template <typename OnLookup = NoRecord>
HPACK_INLINE bool group_step(uint64_t& buf, unsigned& shift, unsigned& sum, uint64_t& out,
                             const OnLookup& record = {}) {
    const size_t index = buf >> shift;
    const uint32_t e = kDecode.e[index];
    if (HPACK_UNLIKELY(e & kDecodeSlow))
        return false;
    take_entry(e, entry_bits(index), buf, sum, out);
    shift = e >> 26;
    record(sum);
    return true;
}

// The four lookups of a group after its refill, the store and the
// settling: false at a slow entry (the state is the one before it).
template <typename OnLookup = NoRecord>
HPACK_INLINE bool group_of(uint64_t& buf, unsigned& shift, unsigned& avail, uint8_t*& d,
                           const OnLookup& record = {}) {
    unsigned sum = 0;
    uint64_t out = 0;
    const bool ok = group_step(buf, shift, sum, out, record)
                    && group_step(buf, shift, sum, out, record)
                    && group_step(buf, shift, sum, out, record)
                    && group_step(buf, shift, sum, out, record);
    store64_le(d, out);
    d += sum >> 6;
    avail -= sum & 63;
    return ok;
}

HPACK_INLINE bool group_steps(Stream& s) {
    return group_of(s.buf, s.shift, s.avail, s.d);
}

constexpr int kMore = 1;  // slow_symbol(): go on decoding
constexpr int kEnd = 2;   // slow_symbol(): the string ended validly

struct SlowResult {
    Stream s;
    int    rc;  // kMore, kEnd or an hpack_error
};

constexpr uint32_t kSubCountMask = 0xc0;

// A code longer than the link window, after a lookup returned a slow entry.
// Out of line: printable text never gets here.
HPACK_NOINLINE SlowResult slow_symbol(Stream s, const uint8_t* src,
                                                 size_t n) {
    // The link before this entry consumed the code's first bits.
    const int64_t start = bits_left(s, n) + kDecodeLinkConsumed;
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
                return {s, HPACK_E_HUFFMAN_EOS};
            if (start < 0 || start >= 8)
                return {s, HPACK_E_HUFFMAN_PADDING};
            return {s, kEnd};
        }
        s.buf <<= bits;
        s.avail -= bits;
        const uint32_t t = kDecodeSub[offset + (s.buf >> (64 - width))];
        bits = t & 63;
        if (t & kSubCountMask) {
            *s.d++ = static_cast<uint8_t>(t >> 8);
            s.buf <<= bits;
            s.avail -= bits;
            s.shift = kDecodeRootShift;
            return {s, kMore};
        }
        offset = (t >> 8) & 0xffff;
        width = (t >> 24) & 31;
    }
}

// What a string decodes to when slow_symbol() ended it (kEnd: its length
// from base) or failed it.
HPACK_INLINE ptrdiff_t slow_result(const SlowResult& r, const uint8_t* base) {
    return r.rc == kEnd ? r.s.d - base : r.rc;
}

// A slow entry, the link before it taken: when its code starts fewer than
// 8 bits before the end of the input (start, in bits), the string ended
// there, validly unless a code before took implied bits (start < 0):
// decode_to_end() says why.
HPACK_INLINE bool ends_at(int64_t start) { return start < 8; }

HPACK_INLINE ptrdiff_t end_result(int64_t start, const uint8_t* d, const uint8_t* base) {
    return start < 0 ? ptrdiff_t{HPACK_E_HUFFMAN_PADDING} : d - base;
}

// At a slow entry of s (the link before it taken): the string's end, or its
// failure, with *result set (true); or a long code, decoded (false: the
// string goes on).
HPACK_INLINE bool at_slow_entry(Stream& s, const uint8_t* src, size_t n, const uint8_t* base,
                                ptrdiff_t* result) {
    const int64_t start = bits_left(s, n) + kDecodeLinkConsumed;
    if (ends_at(start)) {
        *result = end_result(start, s.d, base);
        return true;
    }
    const SlowResult r = slow_symbol(s, src, n);
    s = r.s;
    if (r.rc == kMore)
        return false;
    *result = slow_result(r, base);
    return true;
}

// Decodes from s to the end of the input, with the end-of-string checks.
// Returns the output length from base, or an error.
//
// Groups run up to the end and on into the implied ones: ones alone never
// make a symbol, so a group that reaches them stops at a slow entry, after
// a link.  Every code over 13 bits begins with 8 ones, so a slow entry
// whose code starts fewer than 8 bits before the end means that those bits
// are ones: valid padding (RFC 7541 5.2), judged here without the slow
// path.  A symbol that took implied bits leaves that start negative: the
// string fails.  Only one lookup can store such a symbol (all that follows
// it is ones), so the stores stay within huffman_decode_capacity().
HPACK_INLINE ptrdiff_t decode_to_end(Stream s, const uint8_t* src, size_t n,
                                     uint8_t* base) {
    for (;;) {
        if (s.i + 8 <= n) {
            refill_fast(s, src);
        } else {
            if (bits_left(s, n) <= 0 && s.shift == kDecodeRootShift)
                break;
            refill(s, src, n);
        }
        if (group_steps(s))
            continue;
        ptrdiff_t result;
        if (at_slow_entry(s, src, n, base, &result))
            return result;
    }
    // A code that took bits past the end: the leftover bits were not a
    // prefix of EOS.
    if (bits_left(s, n) < 0)
        return HPACK_E_HUFFMAN_PADDING;
    return s.d - base;
}

// ------------------------------------------------- two positions at once
//
// A decodes from the start, B from the middle octet as if a code began
// there.  B records where its lookups end in its first kSyncBits bits;
// when A, decoding on, ends a symbol where B did, every symbol B found from
// there on is a true one (decoding from a symbol boundary does not depend
// on what came before), and A's output is joined with B's.  Huffman codes
// resynchronise within a few symbols: in 300 trials each on 4 KiB of header
// values, hex digits and printable text, a 256-bit window always sufficed
// (arbitrary octets: 299 of 300), where 64 bits failed 10-20% of the time
// (30% on arbitrary octets); on header values A meets B 0 to 122 bits past
// the middle, 25 in the median of 35 strings.
// When it does not, or B hits an error before A could vouch for it, A
// decodes the rest itself.
//
// B's window runs beside A's groups (decode_head()), so the only serial
// parts are A's search for the join and the ends.  Slices of header values
// (fastest of 3 runs, one position / two): 108 coded octets 240 / 231 ns,
// 124: 276 / 245, 139: 300 / 252, 170: 371 / 292, 245: 521 / 388; from 78
// to 92 octets the two cost the same.  (With B's window decoded first, one
// lookup at a time, two positions paid only from about 200 octets.)

constexpr size_t kSplitMinOctets = kHuffmanSplitMinOctets;
constexpr int64_t kSyncBits = 256;

// Where B's lookups ended in its first kSyncBits bits (and the group that
// crosses them): at[k] is 1 + the symbols B decoded before bit k of its
// part when a lookup of B ended there, else 0.  A byte per bit position, so
// that B records a lookup with one store and no read.
constexpr int64_t kRecBits = kSyncBits + 4 * kDecodeMaxConsumed;
struct Record {
    uint8_t at[kRecBits];

    // A lookup outside a group (the slow path's, a lane's long code) that
    // ended at bit k, `symbols` symbols into the part.
    void note(int64_t k, size_t symbols) {
        if (k < kRecBits)
            at[k] = static_cast<uint8_t>(symbols + 1);
    }
};

HPACK_INLINE size_t recorded(const Record& r, int64_t k) {
    return static_cast<uint64_t>(k) < static_cast<uint64_t>(kRecBits) ? r.at[k] : 0;
}

// The bits of the first symbol of an entry with symbols; after a link,
// part of its code was consumed already.
HPACK_INLINE int64_t first_symbol_bits(uint32_t e, unsigned shift) {
    return kEncodeBits[e & 0xff]
           - (shift == kDecodeRootShift ? 0 : kDecodeLinkConsumed);
}

struct Pair {
    Stream a, b;
    unsigned slow;  // 1: A stopped at a slow entry, 2: B
};

// The two-position loop keeps both positions' state in registers: a stream
// has 15 registers to share with the other and the table, and any of its
// state kept on the stack instead (the window shift, the ends, the octet
// index beside the input pointer) put loads of the stack on the lookups'
// path, which ran 15-25% slower at some stack and buffer addresses and not
// at others.  So a position here is a window, an input pointer, an output
// pointer and a bit count, every group starts at the root (unlink() below:
// the shift of a link is not carried to the next group), and the ends are
// checked once per run of groups that cannot reach them.
struct Lean {
    uint64_t       buf;
    const uint8_t* p;
    uint8_t*       d;
    unsigned       avail;
};

// Every code longer than the root window begins with eight ones: a link
// consumes those.
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

// Takes back a link that a lookup just consumed: its bits were ones, so
// they go back on top of the window.  It follows a refill (56 bits or
// more) and consumed 8, so avail is at most 55 and no bit falls off.
HPACK_INLINE void unlink(uint64_t& buf, unsigned& avail) {
    buf = (buf >> kDecodeLinkConsumed) | (~uint64_t{0} << (64 - kDecodeLinkConsumed));
    avail += kDecodeLinkConsumed;
}

// A refill and a group from the root (group_of()).  Returns the window
// shift where it stopped: kDecodeRootShift after a whole group, a link's
// before a slow entry (the state is the one before that entry).
// v: the 8 octets at s.p, MSB first.
template <typename OnLookup = NoRecord>
HPACK_INLINE unsigned lean_group_of(Lean& s, uint64_t v, const OnLookup& record = {}) {
    refill_from(s.buf, s.avail, s.p, v);
    unsigned shift = kDecodeRootShift;
    if (group_of(s.buf, shift, s.avail, s.d, record)
        && HPACK_UNLIKELY(shift != kDecodeRootShift)) {
        unlink(s.buf, s.avail);
        shift = kDecodeRootShift;
    }
    return shift;
}

template <typename OnLookup = NoRecord>
HPACK_INLINE unsigned lean_group(Lean& s, const OnLookup& record = {}) {
    return lean_group_of(s, load64_be(s.p), record);
}

// A position as the two-position loops keep it.  A stream that stopped
// inside a long code, after a link, gives the link's bits back: the loops
// start from the root.
HPACK_INLINE Lean lean_of(Stream s, const uint8_t* src) {
    if (s.shift != kDecodeRootShift)
        unlink(s.buf, s.avail);
    return {s.buf, src + s.i, s.d, s.avail};
}

HPACK_INLINE Stream stream_of(const Lean& l, const uint8_t* src, unsigned shift) {
    return {l.buf, static_cast<size_t>(l.p - src), l.d, l.avail, shift};
}

// Groups of A (while it has 8 octets ahead before a_end) and of B (before
// b_end) in turn: they do not depend on each other, so their lookups
// overlap.  A group reads at most 7 octets ahead, so room / 7 + 1 groups
// run between two checks of the ends.  A function of its own (per
// instruction set, below), so that the loop has the registers to itself.
HPACK_INLINE Pair decode_pair_body(Pair p, const uint8_t* src, size_t a_end,
                                   size_t b_end) {
    Lean a = lean_of(p.a, src), b = lean_of(p.b, src);
    unsigned a_shift = kDecodeRootShift, b_shift = kDecodeRootShift, slow = 0;
    for (;;) {
        const size_t ai = static_cast<size_t>(a.p - src) + 8;
        const size_t bi = static_cast<size_t>(b.p - src) + 8;
        if (ai > a_end || bi > b_end)
            break;
        const size_t room = a_end - ai < b_end - bi ? a_end - ai : b_end - bi;
        for (size_t k = room / 7 + 1; k > 0; --k) {
            a_shift = lean_group(a);
            if (HPACK_UNLIKELY(a_shift != kDecodeRootShift)) {
                slow = 1;
                goto stop;
            }
            b_shift = lean_group(b);
            if (HPACK_UNLIKELY(b_shift != kDecodeRootShift)) {
                slow = 2;
                goto stop;
            }
        }
    }
stop:
    return {stream_of(a, src, a_shift), stream_of(b, src, b_shift), slow};
}

using PairFn = Pair (*)(Pair, const uint8_t*, size_t, size_t);

HPACK_NOINLINE Pair decode_pair_generic(Pair p, const uint8_t* src,
                                                   size_t a_end, size_t b_end) {
    return decode_pair_body(p, src, a_end, b_end);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 Pair decode_pair_bmi2(
    Pair p, const uint8_t* src, size_t a_end, size_t b_end) {
    return decode_pair_body(p, src, a_end, b_end);
}
#endif

// In B's first window, each lookup's end is recorded: `rec` points at
// the group's first bit, `count` is 1 + the symbols before the group.  A
// lookup that ends inside a long code, after a link, is recorded too: it
// ends after eight one bits, where no true symbol ends (below), so A never
// joins there.
constexpr bool no_code_ends_with_eight_ones() {
    for (size_t c = 0; c < 256; ++c) {
        const unsigned tail = kEncodeBits[c] < 8 ? kEncodeBits[c] : 8;
        const uint32_t ones = (uint32_t{1} << tail) - 1;
        if ((kEncodeCode[c] & ones) == ones)  // the last 8 bits, or all
            return false;
    }
    return true;
}
static_assert(kDecodeLinkConsumed == 8 && no_code_ends_with_eight_ones(),
              "the eight bits before a symbol end hold a zero");

struct Recorder {
    uint8_t* rec;
    unsigned count;
    HPACK_INLINE void operator()(unsigned sum) const {
        rec[sum & 63] = static_cast<uint8_t>(count + (sum >> 6));
    }
};

// B's first kSyncBits bits, recorded, into `head`, beside A's groups (as
// decode_pair_body(), whose lean positions it shares): B stops at bit
// hb + kSyncBits or later, or where either stopped at a slow entry (slow
// set as there), or where B came within 8 octets of b_end (slow 0 and B
// short of the window: the caller gives the split up).
HPACK_INLINE Pair decode_head_body(Pair p, const uint8_t* src, size_t a_end, size_t b_end,
                                   int64_t hb, Record* r, const uint8_t* head) {
    Lean a = lean_of(p.a, src), b = lean_of(p.b, src);
    unsigned a_shift = kDecodeRootShift, b_shift = kDecodeRootShift, slow = 0;
    const uint8_t* const a_last = src + a_end - 8;
    const uint8_t* const b_last = src + b_end - 8;
    for (;;) {
        const int64_t rel = static_cast<int64_t>(b.p - src) * 8 - b.avail - hb;
        if (rel >= kSyncBits || b.p > b_last)
            break;
        if (a.p <= a_last) {
            a_shift = lean_group(a);
            if (HPACK_UNLIKELY(a_shift != kDecodeRootShift)) {
                slow = 1;
                break;
            }
        }
        b_shift = lean_group(b, Recorder{r->at + rel, static_cast<unsigned>(b.d - head) + 1});
        if (HPACK_UNLIKELY(b_shift != kDecodeRootShift)) {
            slow = 2;
            break;
        }
    }
    return {stream_of(a, src, a_shift), stream_of(b, src, b_shift), slow};
}

using HeadFn = Pair (*)(Pair, const uint8_t*, size_t, size_t, int64_t, Record*,
                        const uint8_t*);

HPACK_NOINLINE Pair decode_head_generic(Pair p, const uint8_t* src, size_t a_end,
                                                   size_t b_end, int64_t hb, Record* r,
                                                   const uint8_t* head) {
    return decode_head_body(p, src, a_end, b_end, hb, r, head);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 Pair decode_head_bmi2(
    Pair p, const uint8_t* src, size_t a_end, size_t b_end, int64_t hb, Record* r,
    const uint8_t* head) {
    return decode_head_body(p, src, a_end, b_end, hb, r, head);
}
#endif

// The slow entry that stopped a two-position loop (slow: 1 A, 2 B, 0
// none), decoded for the position that met it.  A's errors and its end
// are the string's (kPairDone, *result set); B's are not known to be
// (kPairGiveUp: A decodes the rest and finds out).
enum PairStop { kPairOn, kPairDone, kPairGiveUp };

HPACK_INLINE PairStop slow_stop(Pair& p, const uint8_t* src, size_t n, const uint8_t* dst,
                                ptrdiff_t* result) {
    if (p.slow & 1) {
        const SlowResult r = slow_symbol(p.a, src, n);
        p.a = r.s;
        if (r.rc != kMore) {
            *result = slow_result(r, dst);
            return kPairDone;
        }
    }
    if (p.slow & 2) {
        const SlowResult r = slow_symbol(p.b, src, n);
        if (r.rc != kMore)
            return kPairGiveUp;
        p.b = r.s;
    }
    return kPairOn;
}

// A later position's first kSyncBits bits: where its lookups ended
// (Record) and the symbols they gave.
struct Head {
    Record  rec;
    uint8_t out[(kRecBits + 7) / 5 + 16];

    // The position at octet `at`, its output into `out`.
    Stream start(size_t at) {
        memset(rec.at, 0, sizeof rec.at);
        rec.at[0] = 1;  // its start: the position before may end a symbol there
        return Stream{0, at, out, 0, kDecodeRootShift};
    }
};

// B's first kSyncBits bits from bit hb, recorded into hd, beside A's
// groups (A up to octet a_end).  kPairOn: B is past them; kPairDone: A
// ended the string or failed it (*result set); kPairGiveUp: A is to
// decode the rest alone.
template <HeadFn decode_head>
HPACK_INLINE PairStop run_head(Stream& a, Stream& b, const uint8_t* src, size_t n,
                               size_t a_end, int64_t hb, Head& hd, const uint8_t* dst,
                               ptrdiff_t* result) {
    for (;;) {
        Pair p = decode_head({a, b, 0}, src, a_end, n, hb, &hd.rec, hd.out);
        const PairStop stop = slow_stop(p, src, n, dst, result);
        a = p.a;
        b = p.b;
        if (stop != kPairOn)
            return stop;
        if (p.slow == 0)  // else too near the end (not for kSplitMinOctets)
            return bit_position(b) - hb < kSyncBits ? kPairGiveUp : kPairOn;
        if (p.slow & 2)
            hd.rec.note(bit_position(b) - hb, static_cast<size_t>(b.d - hd.out));
    }
}

// Where a position met the one after it: its output up to there (len,
// from its base) and the symbols of the later one's head before it (o).
// rc: kMore when it did not meet it within the window, else what
// slow_symbol() ended with.
struct Join {
    size_t len, o;
    int    rc;
};

// Whether the later position's record holds a lookup that ended at bit k
// of it: s meets it there, with len octets of its output (j set).
HPACK_INLINE bool meets(const Record& rec, int64_t k, size_t len, Join* j) {
    const size_t o = recorded(rec, k);
    if (o == 0)
        return false;
    j->len = len;
    j->o = o - 1;  // recorded as 1 + the symbols
    return true;
}

// s's groups up to the last one that cannot end a symbol past bit hb (s
// is behind it), then s through the window one lookup at a time, looking
// for a symbol end where a lookup of the later position ended (rec): from
// there on that one decodes what s would.  True with j's len and o set;
// false when s did not meet it (j->rc kMore, s past the window) or a long
// code ended or failed the string (j->rc, s as slow_symbol() left it).
HPACK_INLINE bool join_at(Stream& s, const uint8_t* src, size_t n, int64_t hb,
                          const Record& rec, const uint8_t* base, Join* j) {
    j->rc = kMore;
    while (bit_position(s) + 4 * kDecodeMaxConsumed < hb && s.i + 8 <= n) {
        refill_fast(s, src);
        if (group_steps(s))
            continue;
        const SlowResult r = slow_symbol(s, src, n);
        s = r.s;
        if (r.rc != kMore) {
            j->rc = r.rc;
            return false;
        }
    }
    for (;;) {
        const int64_t rel = bit_position(s) - hb;
        if (rel >= kSyncBits)
            return false;
        refill(s, src, n);
        const size_t index = s.buf >> s.shift;
        const uint32_t e = kDecode.e[index];
        if (e & kDecodeSlow) {
            const SlowResult r = slow_symbol(s, src, n);
            s = r.s;
            if (r.rc != kMore) {
                j->rc = r.rc;
                return false;
            }
            if (meets(rec, bit_position(s) - hb, static_cast<size_t>(s.d - base), j))
                return true;
            continue;
        }
        const unsigned bits = entry_bits(index);
        const size_t d0 = static_cast<size_t>(s.d - base);
        const unsigned shift = s.shift;
        apply(s, e, bits);
        if ((bits >> 6)
            && (meets(rec, rel + first_symbol_bits(e, shift), d0 + 1, j)
                || meets(rec, rel + (bits & 63), static_cast<size_t>(s.d - base), j)))
            return true;
    }
}

// Returns false, with `a` where A stopped, when A is to decode the rest
// alone; true with *result set otherwise.
template <HeadFn decode_head, PairFn decode_pair>
HPACK_INLINE bool decode_split(Stream& a, const uint8_t* src, size_t n,
                               uint8_t* dst, ptrdiff_t* result) {
    const size_t h = n / 2;
    const int64_t hb = static_cast<int64_t>(h) * 8;
    // A stores only from symbol ends before bit hb + kSyncBits, 4 octets
    // at most there (8 before hb), so it writes below a_room; B writes its
    // symbols after its first kSyncBits bits from b_base on, 5 bits or more
    // each, and 8 octets past the last at most.  Both fit the capacity.
    const size_t a_room = static_cast<size_t>(hb + kSyncBits) / 5 + 4;
    const size_t b_room =
        static_cast<size_t>(static_cast<int64_t>(n) * 8 - hb - kSyncBits) / 5
        + 8;
    if (a_room + b_room > huffman_decode_capacity(n))
        return false;

    // B's first kSyncBits bits into `head`, recorded, beside A's groups.
    Head hd;
    Stream b = hd.start(h);
    const PairStop head_stop = run_head<decode_head>(a, b, src, n, h, hb, hd, dst, result);
    if (head_stop != kPairOn)
        return head_stop == kPairDone;
    const size_t head_len = static_cast<size_t>(b.d - hd.out);
    uint8_t* const b_base = dst + a_room;
    b.d = b_base;

    // Both positions: A up to the window, B towards the end.
    for (;;) {
        Pair p = decode_pair({a, b, 0}, src, h, n);
        const PairStop stop = slow_stop(p, src, n, dst, result);
        a = p.a;
        b = p.b;
        if (stop != kPairOn)
            return stop == kPairDone;
        if (p.slow == 0)
            break;
    }
    Join j;
    if (!join_at(a, src, n, hb, hd.rec, dst, &j)) {
        if (j.rc == kMore)
            return false;
        *result = slow_result({a, j.rc}, dst);
        return true;
    }

    // From the window on B decodes true symbols: its errors are real.
    const ptrdiff_t b_len = decode_to_end(b, src, n, b_base);
    if (b_len < 0) {
        *result = b_len;
        return true;
    }
    // The joined output: A's symbols, B's head from the join, B's rest.
    // B's rest moves first: its new place may overlap where it is, and the
    // head goes below it.
    memmove(dst + j.len + (head_len - j.o), b_base, static_cast<size_t>(b_len));
    memcpy(dst + j.len, hd.out + j.o, head_len - j.o);
    *result = static_cast<ptrdiff_t>(j.len + (head_len - j.o)) + b_len;
    return true;
}

// Many strings, three or two at a time (huffman_decode_many()): the lanes
// take the strings in the order given, and their groups alternate; a lane
// that ends its string takes the next one, so the lanes share the work
// whatever the lengths, and only the last strings' rests run alone (a lane
// takes its next string without leaving the loop, lane_stop()).  When the
// strings run out, the two that three lanes leave finish one after the
// other (decode_to_end()): two lanes for their rests, a second function
// with its own entry and exit, took more than they saved (cold request
// decode 0.328 -> 0.324 of nghttp2's time without them, the corpus stream
// cold 0.502 -> 0.497; 235,575 -> 232,875 instructions for 20 requests).  A lane
// reads its last octets as decode_to_end() does (load_tail(): ones past
// the end), so its groups run on into the implied ones and stop there:
// each string's end is judged as in decode_to_end(), and the other lanes
// do not wait for it.
//
// A lane's groups look up kLane, kDecode's root without the window shift:
// every lookup of a lane's group starts at the root, so the shift is not
// taken out of each entry, nor checked after each group.  A link (a
// window of eight ones) stops the group, and lane_stop() takes it out of
// line: a long code, or the string's end.  The benchmark request's ten
// strings, in a loop written to time them, on a Xeon (Sapphire Rapids
// class): 850 ns one after another; on kDecode, 584 ns in two lanes and
// 559 in three; on kLane, 480 in three.  Two lanes on kLane took 514 ns
// for two strings of the same 426 octets, where they run at the latency
// of their lookups.
HPACK_INLINE Stream fresh_stream(const HuffmanJob& j) {
    return {0, 0, j.dst, 0, kDecodeRootShift};
}

// kLane's entries: the bits consumed in bits 0-5, alone; 8 times the
// symbol count in bits 8-15 (0, 8 or 16); the symbols in bits 16-31,
// first in 16-23; or kLaneStop for a link, which the lanes leave to
// lane_stop().  A group adds its entries up as it goes (lane_step()):
// the low octet counts the bits consumed, the next the output octets,
// shifted left by 3, which place the next lookup's symbols; and the
// entry shifts the window by itself (x86 masks shift counts to 6 bits).
// A root entry's symbols are below 0x80 (their codes are 13 bits at
// most), so none of them reads as kLaneStop: lane_stops_are_links()
// would fail on it.
struct LaneTable {
    uint32_t e[size_t{1} << (64 - kDecodeRootShift)];
};

constexpr uint32_t kLaneStop = 0x80000000u;

constexpr LaneTable make_lane_table() {
    LaneTable t{};
    for (size_t i = 0; i < sizeof t.e / sizeof t.e[0]; ++i) {
        const uint32_t e = kDecode.e[i];
        t.e[i] = (e & kDecodeSlow) || (e >> 26) != kDecodeRootShift
                     ? kLaneStop
                     : ((e & 0xffffu) << 16) | ((e >> 16) & 0x3fu) | ((e >> 22 & 3u) << 11);
    }
    return t;
}

alignas(64) constexpr LaneTable kLane = make_lane_table();

// Every entry kLane stops at is a link (its window starts with eight
// ones), and a link window's entries are slow or lead back to the root.
constexpr bool lane_stops_are_links() {
    for (size_t i = 0; i < sizeof kLane.e / sizeof kLane.e[0]; ++i)
        if ((kLane.e[i] & kLaneStop)
            && ((kDecode.e[i] & kDecodeSlow) || (kDecode.e[i] >> 26) != kDecodeLinkShift
                || i >> (64 - kDecodeRootShift - kDecodeLinkConsumed) != 0xff))
            return false;
    for (size_t i = kDecodeLinkBase; i < kDecodeSize; ++i)
        if (!(kDecode.e[i] & kDecodeSlow) && (kDecode.e[i] >> 26) != kDecodeRootShift)
            return false;
    return true;
}
static_assert(lane_stops_are_links(), "a lane stops only at a link");

// A lane: its string's end, the bits consumed counted from that end
// (negative while bits are left), and its output.  A group takes a window
// of its own from `rel` (lane_window()): no window is carried from one
// group to the next, so a lane holds three values between its groups.
struct Lane {
    const uint8_t* end;
    int64_t        rel;
    uint8_t*       d;
};

HPACK_INLINE Lane lane_at(const HuffmanJob& j, int64_t consumed, uint8_t* d) {
    return {j.src + j.n, consumed - static_cast<int64_t>(j.n) * 8, d};
}

// The 64 bits from the lane's position on, the first in bit 63: the 8
// octets from the one that holds it, shifted by the bits of that octet
// consumed (so 57 or more are input, or ones past the end as load_tail()
// reads them, and zeros below).  rel < -56: the 8 octets lie before the
// end.
HPACK_INLINE uint64_t lane_window(const Lane& l, const HuffmanJob& j) {
    const int64_t o = l.rel >> 3;  // the octet, from the end (floor)
    const uint64_t v = HPACK_LIKELY(l.rel < -56)
                           ? load64_be(l.end + o)
                           : load_tail(j.src, j.n, static_cast<size_t>(static_cast<int64_t>(j.n) + o));
    return v << (l.rel & 7);
}
static_assert(3 * (64 - kDecodeRootShift) + (64 - kDecodeRootShift) <= 57,
              "a lane's window covers a group");

// The symbols of kLane's entry (bits 16-31), by a load of its own.
HPACK_INLINE unsigned lane_symbols(size_t index) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t v;
    memcpy(&v, reinterpret_cast<const uint8_t*>(&kLane.e[index]) + 2, 2);
    return v;
#else
    return kLane.e[index] >> 16;
#endif
}

// Where a lookup's symbols go in `out`: bits 8-13 of the group's sum, as a
// rotate, which BMI2 does in one instruction (rorx) where the shift took a
// copy and a shift; the shift that uses it reads only its low 6 bits.
// Instructions for 20 cold requests 227,695 -> 223,135; cold request
// decode over six code layouts on a first-generation EPYC, medians 0.305
// and 0.309 of nghttp2's time (two runs) -> 0.303, the range 0.303-0.337
// -> 0.302-0.306.
HPACK_INLINE unsigned lane_place(unsigned sum) {
    return ((sum >> 8) | (sum << 24)) & 63;
}

// One lookup of a lane's group, group_step() on kLane: false at a link,
// with nothing taken.  `sum` adds up the entries of the group's lookups:
// the bits consumed below bit 8 (at most 52), 8 times the symbols in bits
// 8-15 (the next symbols' place in `out`, at most 48 before the last
// lookup), and the symbols' own sum above, which nothing reads.
HPACK_INLINE bool lane_step(uint64_t& buf, unsigned& sum, uint64_t& out) {
    const size_t index = buf >> kDecodeRootShift;
    const uint32_t e = kLane.e[index];
    if (HPACK_UNLIKELY(e & kLaneStop))
        return false;
    out |= uint64_t{lane_symbols(index)} << lane_place(sum);
    buf <<= (e & 63);
    sum += e;
    return true;
}

// The end of a lane's group: its symbols out in one store, its bits
// consumed.
HPACK_INLINE void lane_settle(Lane& l, unsigned sum, uint64_t out) {
    store64_le(l.d, out);
    l.d += (sum >> 11) & 31;
    l.rel += sum & 63;
}

// The strings the lanes have yet to take.
struct LaneQueue {
    HuffmanJob*    jobs;
    const uint8_t* order;
    size_t         next, count;

    HuffmanJob* take() { return &jobs[order[next++]]; }
};

// A lane whose link was taken, at a long code: the code decoded by its
// lookup in the link window.  False at a code past that window.
HPACK_INLINE bool lane_long_code(Lane& l, const HuffmanJob& j) {
    const size_t index = lane_window(l, j) >> kDecodeLinkShift;
    const uint32_t e = kDecode.e[index];
    if (e & kDecodeSlow)
        return false;
    const unsigned bits = entry_bits(index);
    store32_le(l.d, e);
    l.d += bits >> 6;
    l.rel += bits & 63;
    return true;
}

// A lane whose group stopped at a link.  The link is taken (its eight ones
// consumed, as a kDecode lookup would).  When that is the string's end
// (the ones start fewer than 8 bits before it, as in decode_to_end()) and
// another string is left, the result is set and the lane takes that
// string; a long code is decoded by its lookup in the link window.  Both:
// true, the lane at the root.  False at the last string's end and at a
// code past the link window, with the state that at_slow_entry() (in
// decode_many()) takes.
HPACK_INLINE bool lane_stop(Lane& l, HuffmanJob*& j, LaneQueue& q) {
    const int64_t start = -l.rel;  // bits left where the link starts
    l.rel += kDecodeLinkConsumed;
    if (ends_at(start)) {
        if (q.next == q.count)
            return false;
        j->result = end_result(start, l.d, j->dst);
        j = q.take();
        l = lane_at(*j, 0, j->dst);
        return true;
    }
    return lane_long_code(l, *j);
}

// A stream as a lane, and back.  Streams come to the lanes at the root: a
// fresh one, one the lanes gave back there, or one that at_slow_entry()
// took through a long code (slow_symbol() ends at the root).
HPACK_INLINE Lane lane_of(const Stream& s, const HuffmanJob& j) {
    return lane_at(j, bit_position(s), s.d);
}

HPACK_INLINE Stream stream_of(const Lane& l, const HuffmanJob& j, unsigned shift) {
    const int64_t consumed = l.rel + static_cast<int64_t>(j.n) * 8;
    Stream s{0, static_cast<size_t>(consumed >> 3), l.d, 0, shift};
    refill(s, j.src, j.n);
    s.buf <<= (consumed & 7);
    s.avail -= static_cast<unsigned>(consumed & 7);
    return s;
}

// The lanes' state, in and out of decode_lanes(): slow is the lane that
// left the loop (its window shift is the link's; the others' the root's).
template <size_t N>
struct Lanes {
    Stream      s[N];
    HuffmanJob* j[N];
    unsigned    slow;
};

// N lanes (N is 2 or 3) until one leaves the loop.  A round takes each
// lane's window, runs their groups' lookups in step (the first lookup of
// each lane, then the second of each...) until one of them stops at a
// link, settles what each lane took, and gives the one that stopped to
// lane_stop().  A group cut short is no error: the lane goes on from
// where it is in the next round.  With two lanes, c is a copy of b that
// takes no part (the compiler drops it).
//
// In step, because each lookup waits on the one before it in its lane:
// lane after lane, a group's lookups were a chain of about 60 instructions
// and the next lane's could start only as far ahead as the processor
// looks.  On the 2-core EPYC 7001 this was measured on (its schedulers
// hold fewer instructions than recent Intel cores') the benchmark
// request's strings in the loop written to time them took 921 ns lane
// after lane and 870 in step; three strings of 420 octets, 2,239 and
// 1,903 with the lane word (lane_step()).  Then 860 -> 820 ns with the
// lanes' state as a position (Lane): three values a lane between rounds
// instead of five, and GCC no longer kept a group's sum on the stack.
// Letting the other lanes finish their groups when one stopped (a loop of
// lookups from where each was) cost more than it saved: 953-969 ns.
template <size_t N>
HPACK_INLINE void decode_lanes_body(Lanes<N>& t, LaneQueue& q) {
    static_assert(N == 2 || N == 3, "two or three lanes");
    HuffmanJob *ja = t.j[0], *jb = t.j[1], *jc = t.j[N - 1];
    Lane a = lane_of(t.s[0], *ja), b = lane_of(t.s[1], *jb), c = lane_of(t.s[N - 1], *jc);
    unsigned slow;
    for (;;) {
        uint64_t wa = lane_window(a, *ja), wb = lane_window(b, *jb),
                 wc = N == 3 ? lane_window(c, *jc) : 0;
        unsigned sa = 0, sb = 0, sc = 0;
        uint64_t oa = 0, ob = 0, oc = 0;
        unsigned first = N;  // the lane that stopped
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; ++k) {
            if (HPACK_UNLIKELY(!lane_step(wa, sa, oa))) {
                first = 0;
                break;
            }
            if (HPACK_UNLIKELY(!lane_step(wb, sb, ob))) {
                first = 1;
                break;
            }
            if (N == 3 && HPACK_UNLIKELY(!lane_step(wc, sc, oc))) {
                first = 2;
                break;
            }
        }
        lane_settle(a, sa, oa);
        lane_settle(b, sb, ob);
        if (N == 3)
            lane_settle(c, sc, oc);
        if (HPACK_LIKELY(first == N))
            continue;
        const bool on = first == 0   ? lane_stop(a, ja, q)
                        : first == 1 ? lane_stop(b, jb, q)
                                     : lane_stop(c, jc, q);
        if (!on) {
            slow = first;
            break;
        }
    }
    // Lane by lane: through an array of the lanes' addresses, GCC stored
    // them to the stack to read them back, and this function took 5,654
    // instructions of a cold request block where it takes 5,596 (the loop
    // the same 4,757).
    const auto give_back = [&](size_t k, const Lane& l, HuffmanJob* j) {
        t.j[k] = j;
        t.s[k] = stream_of(l, *j, k == slow ? kDecodeLinkShift : kDecodeRootShift);
    };
    give_back(0, a, ja);
    give_back(1, b, jb);
    if (N == 3)
        give_back(2, c, jc);
    t.slow = slow;
}

template <size_t N>
using LanesFn = void (*)(Lanes<N>&, LaneQueue&);

template <size_t N>
HPACK_NOINLINE void decode_lanes_generic(Lanes<N>& t, LaneQueue& q) {
    decode_lanes_body(t, q);
}

#if HPACK_HUFFMAN_BMI2
template <size_t N>
HPACK_NOINLINE HPACK_TARGET_BMI2 void decode_lanes_bmi2(Lanes<N>& t,
                                                                  LaneQueue& q) {
    decode_lanes_body(t, q);
}
#endif

// N lanes until the strings run out and one of them ends: the others are
// left in t.s[0..N-1), t.j[0..N-1).
template <size_t N>
HPACK_INLINE void run_lanes(Lanes<N>& t, LaneQueue& q, LanesFn<N> decode_lanes) {
    for (;;) {
        decode_lanes(t, q);
        // The lane that left goes on after a long code, or takes the next
        // string; with none left, the others go on without it.
        const unsigned k = t.slow;
        HuffmanJob* const j = t.j[k];
        if (!at_slow_entry(t.s[k], j->src, j->n, j->dst, &j->result))
            continue;
        if (q.next < q.count) {
            t.j[k] = q.take();
            t.s[k] = fresh_stream(*t.j[k]);
            continue;
        }
        for (size_t i = k; i + 1 < N; ++i) {
            t.s[i] = t.s[i + 1];
            t.j[i] = t.j[i + 1];
        }
        return;
    }
}

template <LanesFn<3> decode_lanes3, LanesFn<2> decode_lanes2>
HPACK_INLINE void decode_many(HuffmanJob* jobs, const uint8_t* order, size_t count) {
    LaneQueue q{jobs, order, 0, count};
    Lanes<3> three;
    for (size_t k = 0; k < 3 && k < count; ++k) {
        three.j[k] = q.take();
        three.s[k] = fresh_stream(*three.j[k]);
    }
    if (count >= 3) {
        run_lanes(three, q, decode_lanes3);
        // The two left, one after the other; unrolled, 23 instructions of a
        // cold request block fewer.
#pragma GCC unroll 2
        for (size_t k = 0; k < 2; ++k) {
            HuffmanJob* const j = three.j[k];
            j->result = decode_to_end(three.s[k], j->src, j->n, j->dst);
        }
        return;
    }
    Lanes<2> two;
    for (size_t k = 0; k < 2; ++k) {
        two.s[k] = three.s[k];
        two.j[k] = three.j[k];
    }
    run_lanes(two, q, decode_lanes2);
    HuffmanJob* const j = two.j[0];
    j->result = decode_to_end(two.s[0], j->src, j->n, j->dst);
}

// A string under kShortOctets as one lane of kLane takes it
// (decode_lanes_body()): the string and the implied ones after it in one
// window a group, its end judged at the link where a group stops
// (lane_stop()).  False at a link before the end (a long code, EOS, too
// much padding), with nothing to keep: the path for any length decodes
// the string again from its start.  huffman_decode() tries it before
// choosing an instruction set, whose functions carry the long strings'
// frame: 84-111 instructions for strings of 1-4 octets ("/", "200",
// "GET", "en-US") where that path took 140-192, 152-165 for 6 and 7
// octets where it took 196-212 (callgrind, a loop of decodes).  A
// header block's short names and values go this way one by one; the
// batch's lanes take strings of 8 octets and more (kPreMinOctets).
constexpr size_t kShortOctets = 8;

HPACK_INLINE bool decode_short(const uint8_t* src, size_t n, uint8_t* dst,
                               ptrdiff_t* result) {
    const HuffmanJob j{src, n, dst, 0};
    Lane l = lane_at(j, 0, dst);
    for (;;) {
        uint64_t w = lane_window(l, j);
        unsigned sum = 0;
        uint64_t out = 0;
        bool stop = false;
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; ++k) {
            if (HPACK_UNLIKELY(!lane_step(w, sum, out))) {
                stop = true;
                break;
            }
        }
        lane_settle(l, sum, out);
        if (!stop)
            continue;
        const int64_t start = -l.rel;  // bits left where the link starts
        if (!ends_at(start))
            return false;
        *result = end_result(start, l.d, dst);
        return true;
    }
}

}  // namespace

size_t huffman_encoded_length(const uint8_t* src, size_t n) {
    // Four sums: the table loads of neighbouring octets do not wait on one
    // another's adds.
    uint64_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        b0 += kLength.v[src[i]];
        b1 += kLength.v[src[i + 1]];
        b2 += kLength.v[src[i + 2]];
        b3 += kLength.v[src[i + 3]];
        b0 += kLength.v[src[i + 4]];
        b1 += kLength.v[src[i + 5]];
        b2 += kLength.v[src[i + 6]];
        b3 += kLength.v[src[i + 7]];
    }
    for (; i < n; ++i)
        b0 += kLength.v[src[i]];
    return static_cast<size_t>((b0 + b1 + b2 + b3 + 7) / 8);
}

namespace {

// Two octets at a time: kPair, indexed by the pair (the first octet in
// bits 0-7 of the index), holds their codes joined, left-aligned (every
// pair fits: 60 bits at most), and apart from them the joined length.
// 576 KiB, of which header text reads a few hundred lines and random
// printable text about 80 KiB; the price of the size, measured with the
// table pushed out to L3 first, is in DESIGN.md.
struct PairTable {
    uint64_t code[65536];
    uint8_t  bits[65536];
};

constexpr PairTable make_pair_table() {
    PairTable t{};
    for (unsigned a = 0; a < 256; ++a) {
        for (unsigned b = 0; b < 256; ++b) {
            const unsigned bits = kEncodeBits[a] + kEncodeBits[b];
            const uint64_t code = (uint64_t{kEncodeCode[a]} << kEncodeBits[b]) | kEncodeCode[b];
            t.code[a | b << 8] = left_aligned(code, bits);
            t.bits[a | b << 8] = static_cast<uint8_t>(bits);
        }
    }
    return t;
}

alignas(64) constexpr PairTable kPair = make_pair_table();

// The codes of s[0..4) joined, and their length in bits (at most 120; the
// code is whole only up to 64).
HPACK_INLINE uint64_t join4(const uint8_t* s, unsigned& bits) {
    const unsigned i0 = load16_le(s);
    const unsigned i1 = load16_le(s + 2);
    const unsigned b0 = kPair.bits[i0];
    bits = b0 + kPair.bits[i1];
    return kPair.code[i0] | (kPair.code[i1] >> b0);
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
// kept the halves' codes for it and spilled the loop's state to the stack
// (18,458 -> 20,090 instructions for 4 KiB of header values).
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
        // Two groups a turn: 4 KiB of header values in 0.39 of nginx's
        // time instead of 0.405, printable text 0.70 instead of 0.765.
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
    // Two a turn, as in encode_body(): the cold request's ten strings (56
    // octets on average) 10,002 -> 9,751 instructions with the tail below.
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
        const unsigned i = load16_le(s);
        uint64_t code = kPair.code[i];
        unsigned bits = kPair.bits[i];
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

// ----------------------------------------------- three positions at once
//
// Long strings go from three positions: A from the start, B and C from a
// third and two thirds in, each joined to the one before it as B is in
// decode_split(), all three in lanes of kLane (decode_lanes_body()'s
// loop, with stops of their own), B and C recording their heads as they
// go.  Two positions run at the latency of their lookups; three lanes
// hide more of it, for more instructions a lookup (a lane builds its
// window each group) and a fixed cost (the heads, two joins, the moves).
// Fastest of 5 runs of 20,000 decodes, three positions / two, on a Zen 4
// EPYC: header-like text of 1,000 coded octets 1.00, 1,232: 0.97, 1,539:
// 0.89, 3,167: 0.84; random printable text of 978: 1.08, 1,270: 0.99,
// 1,953: 0.93, 3,960: 0.90.
//
// What was measured on the way, 4 KiB of random printable text (the
// fastest of 20,000 decodes, or of batches of 20, TSC ticks; two
// positions 12,400-13,000): a
// reference to the lane that met a link kept all three lanes in memory,
// 14,000 against 11,650; a lane that met a link cut the round short for
// the lanes after it, so that A ran ahead and the rest went as two
// positions and one (2,400 of 12,100 ticks), against 11,000 with the
// round run out; the heads as two passes of two positions (A beside B,
// then beside C), 11,000 against 10,700 recorded in the lanes.  Lanes of
// kDecode's lookups (the link window without a branch) took header
// values from 0.197 to 0.229 of nginx's time (paired slices).

constexpr size_t kSplit3MinOctets = kHuffmanSplit3MinOctets;

// The heads of B and C, recorded by the lanes: the later position's
// first bit, where its lookups ended in its first kSyncBits bits (as
// decode_head() records them), the head's symbols, and where its symbols
// go after the head.  len is kInHead until the lane leaves its head, then
// the head's length.
constexpr size_t kInHead = ~size_t{0};

// A lane's round takes at most four lookups and a long code (a link and a
// code of up to 30 bits).  A lane leaves its head at the start of the
// first round at or past kSyncBits: its head's symbols (5 bits or more
// each) and the round's 8-octet store fit Head::out, its lookups' ends
// (the round's start plus up to four lookups) fit the record.
constexpr int64_t kRoundBits = 4 * kDecodeMaxConsumed + kDecodeLinkConsumed + 30;
static_assert((kSyncBits - 1 + kRoundBits) / 5 + 8 <= sizeof(Head::out)
                  && kSyncBits - 1 + 4 * kDecodeMaxConsumed < kRecBits,
              "a lane's head fits Head");

struct LaneHead {
    Record*  rec;
    uint8_t* out;
    uint8_t* base;
    int64_t  at;
    size_t   len;

    // Record::note() for a lane still in its head, at bit position pos
    // with its output at d.
    void note(int64_t pos, const uint8_t* d) {
        if (len == kInHead)
            rec->note(pos - at, static_cast<size_t>(d - out));
    }
};

// A lane at a round's start that is kSyncBits or more past its first bit
// leaves its head: its symbols go to base from here on.
HPACK_INLINE void leave_head(Lane& l, LaneHead& h, int64_t end) {
    if (h.len == kInHead && l.rel + end - h.at >= kSyncBits) {
        h.len = static_cast<size_t>(l.d - h.out);
        l.d = h.base;
    }
}

// Records a lookup of a lane in its head that ended `bits` into the
// round (rec: the round's first bit in the record, or a sink once the
// lane has left its head), with cnt + the round's symbols before it.
HPACK_INLINE bool lane_step_rec(uint64_t& buf, unsigned& sum, uint64_t& out, uint8_t* rec,
                                unsigned cnt) {
    if (!lane_step(buf, sum, out))
        return false;
    rec[sum & 63] = static_cast<uint8_t>(cnt + ((sum >> 11) & 31));
    return true;
}

// One round of the three lanes: four lookups each, in step.  A lane that
// meets a link sits out the rest of the round, and its long code is left
// to the caller (the bits of the lanes that met one: 1 A, 2 B, 4 C): the
// others' lookups go on, so that no lane falls behind the ones before it.
// kRec: B's and C's lookups are recorded (lane_step_rec()).
template <bool kRec>
HPACK_INLINE unsigned thirds_round(Lane& a, Lane& b, Lane& c, const HuffmanJob& j,
                                   uint8_t* rb = nullptr, unsigned cb = 0,
                                   uint8_t* rc = nullptr, unsigned cc = 0) {
    uint64_t wa = lane_window(a, j), wb = lane_window(b, j), wc = lane_window(c, j);
    unsigned sa = 0, sb = 0, sc = 0;
    uint64_t oa = 0, ob = 0, oc = 0;
    bool ma = true, mb = true, mc = true;
#pragma GCC unroll 4
    for (unsigned k = 0; k < 4; ++k) {
        if (HPACK_LIKELY(ma) && HPACK_UNLIKELY(!lane_step(wa, sa, oa)))
            ma = false;
        if (kRec) {
            if (HPACK_LIKELY(mb) && HPACK_UNLIKELY(!lane_step_rec(wb, sb, ob, rb, cb)))
                mb = false;
            if (HPACK_LIKELY(mc) && HPACK_UNLIKELY(!lane_step_rec(wc, sc, oc, rc, cc)))
                mc = false;
        } else {
            if (HPACK_LIKELY(mb) && HPACK_UNLIKELY(!lane_step(wb, sb, ob)))
                mb = false;
            if (HPACK_LIKELY(mc) && HPACK_UNLIKELY(!lane_step(wc, sc, oc)))
                mc = false;
        }
    }
    lane_settle(a, sa, oa);
    lane_settle(b, sb, ob);
    lane_settle(c, sc, oc);
    return (ma ? 0u : 1u) | (mb ? 0u : 2u) | (mc ? 0u : 4u);
}

// A lane's long code, its link taken; recorded in its head when h is
// given (B's and C's while the lanes are in their heads).
HPACK_INLINE bool take_long_code(Lane& l, const HuffmanJob& j, LaneHead* h, int64_t end) {
    l.rel += kDecodeLinkConsumed;
    if (!lane_long_code(l, j))
        return false;
    if (h)
        h->note(l.rel + end, l.d);
    return true;
}

// The long codes of the lanes that met links in a round (`links`, as
// thirds_round() returns them), lane by lane (a reference to the one
// would keep all three in memory); a lane in its head records where its
// long code ended.  Returns 1 + the first lane whose code is longer than
// the link window (its link taken), or 0.
HPACK_INLINE unsigned thirds_long_codes(Lane& a, Lane& b, Lane& c, const HuffmanJob& j,
                                        unsigned links, LaneHead* h) {
    // Lane by lane, each lane named: one lambda for the three kept more of
    // them on the stack (4 KiB of printable text +0.4% instructions).
    const int64_t end = static_cast<int64_t>(j.n) * 8;
    if ((links & 1) && HPACK_UNLIKELY(!take_long_code(a, j, nullptr, end)))
        return 1;
    if ((links & 2) && HPACK_UNLIKELY(!take_long_code(b, j, h, end)))
        return 2;
    if ((links & 4) && HPACK_UNLIKELY(!take_long_code(c, j, h ? h + 1 : nullptr, end)))
        return 3;
    return 0;
}

// A, B and C (s[0..3)) in three lanes, B and C first through their heads
// (h[0], h[1]), until one of them reaches its stop (bit positions,
// consumed): 0.  At a code longer than the link window, 1 + the lane that
// met it, its stream after the link (the others at the root).
HPACK_INLINE unsigned decode_thirds_body(Stream* s, const uint8_t* src, size_t n,
                                         const int64_t* stop, LaneHead* h) {
    const HuffmanJob j{src, n, nullptr, 0};
    const int64_t end = static_cast<int64_t>(n) * 8;
    Lane a = lane_of(s[0], j), b = lane_of(s[1], j), c = lane_of(s[2], j);
    const int64_t a_stop = stop[0] - end, b_stop = stop[1] - end, c_stop = stop[2] - end;
    const auto room = [&] {
        const int64_t ra = a_stop - a.rel, rb = b_stop - b.rel, rc = c_stop - c.rel;
        const int64_t r = ra < rb ? ra : rb;
        return r < rc ? r : rc;
    };
    unsigned slow = 0;
    // The heads, a round at a time.  A lane past its head records into
    // `sink` until the other is past its own.
    uint8_t sink[64];
    for (;;) {
        leave_head(b, h[0], end);
        leave_head(c, h[1], end);
        if ((h[0].len != kInHead && h[1].len != kInHead) || room() <= 0)
            break;
        uint8_t* const rb =
            h[0].len == kInHead ? h[0].rec->at + (b.rel + end - h[0].at) : sink;
        uint8_t* const rc =
            h[1].len == kInHead ? h[1].rec->at + (c.rel + end - h[1].at) : sink;
        const unsigned links = thirds_round<true>(
            a, b, c, j, rb, static_cast<unsigned>(b.d - h[0].out) + 1,
            rc, static_cast<unsigned>(c.d - h[1].out) + 1);
        if (HPACK_UNLIKELY(links) && (slow = thirds_long_codes(a, b, c, j, links, h)) != 0)
            goto out;
    }
    for (;;) {
        const int64_t r0 = room();
        if (r0 <= 0)
            break;
        for (int64_t r = r0 / kRoundBits + 1; r > 0; --r) {
            const unsigned links = thirds_round<false>(a, b, c, j);
            if (HPACK_UNLIKELY(links) &&
                (slow = thirds_long_codes(a, b, c, j, links, nullptr)) != 0)
                goto out;
        }
    }
out:
    s[0] = stream_of(a, j, slow == 1 ? kDecodeLinkShift : kDecodeRootShift);
    s[1] = stream_of(b, j, slow == 2 ? kDecodeLinkShift : kDecodeRootShift);
    s[2] = stream_of(c, j, slow == 3 ? kDecodeLinkShift : kDecodeRootShift);
    return slow;
}

using ThirdsFn = unsigned (*)(Stream*, const uint8_t*, size_t, const int64_t*, LaneHead*);

HPACK_NOINLINE unsigned decode_thirds_generic(Stream* s, const uint8_t* src,
                                                         size_t n, const int64_t* stop,
                                                         LaneHead* h) {
    return decode_thirds_body(s, src, n, stop, h);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 unsigned decode_thirds_bmi2(
    Stream* s, const uint8_t* src, size_t n, const int64_t* stop, LaneHead* h) {
    return decode_thirds_body(s, src, n, stop, h);
}
#endif

// As decode_split(), from three positions.  A joins B at octet h1, B
// joins C at h2; B and C record their heads as the lanes go (the heads
// cost the lanes' time, not a pass of two positions of their own).  A
// position that does not meet the next one within its window decodes
// the rest itself.
template <PairFn decode_pair, ThirdsFn decode_thirds>
HPACK_INLINE bool decode_split3(Stream& a, const uint8_t* src, size_t n,
                                uint8_t* dst, ptrdiff_t* result) {
    const size_t h1 = n / 3, h2 = 2 * n / 3;
    const int64_t hb1 = static_cast<int64_t>(h1) * 8, hb2 = static_cast<int64_t>(h2) * 8;
    // As in decode_split(): A stores from symbol ends before hb1 +
    // kSyncBits, B from its head's end (hb1 + kSyncBits or later) to
    // before hb2 + kSyncBits, 4 octets past the last, C its symbols after
    // its head and 8 octets past the last.
    const size_t a_room = static_cast<size_t>(hb1 + kSyncBits) / 5 + 4;
    const size_t b_room = static_cast<size_t>(hb2 - hb1) / 5 + 4;
    const size_t c_room =
        static_cast<size_t>(static_cast<int64_t>(n) * 8 - hb2 - kSyncBits) / 5 + 8;
    if (a_room + b_room + c_room > huffman_decode_capacity(n))
        return false;

    Head hb, hc;
    Stream b = hb.start(h1), c = hc.start(h2);
    uint8_t* const b_base = dst + a_room;
    uint8_t* const c_base = b_base + b_room;
    LaneHead heads[2] = {{&hb.rec, hb.out, b_base, hb1, kInHead},
                         {&hc.rec, hc.out, c_base, hb2, kInHead}};

    // The three in lanes, each up to the last group that cannot end a
    // symbol past its stop (A and B: join_at() goes on from there), C to
    // some way before the end.
    const int64_t stop[3] = {hb1 - 8 * kDecodeMaxConsumed, hb2 - 8 * kDecodeMaxConsumed,
                             static_cast<int64_t>(n) * 8 - 128};
    for (;;) {
        Stream s[3] = {a, b, c};
        const unsigned slow = decode_thirds(s, src, n, stop, heads);
        a = s[0];
        b = s[1];
        c = s[2];
        if (slow == 0)
            break;
        Stream& x = slow == 1 ? a : slow == 2 ? b : c;
        const SlowResult r = slow_symbol(x, src, n);
        x = r.s;
        if (r.rc != kMore) {
            if (slow != 1)
                return false;  // B's or C's: not known to be true yet
            *result = slow_result(r, dst);
            return true;
        }
        if (slow != 1)
            heads[slow - 2].note(bit_position(x), x.d);
    }
    if (heads[0].len == kInHead || heads[1].len == kInHead)
        return false;  // not for kSplit3MinOctets
    const size_t b_head = heads[0].len, c_head = heads[1].len;

    // The lanes end together only on average (their thirds of the text
    // differ): the two short of their stops go on as two positions.
    {
        const size_t ends[3] = {h1, h2, n};
        Stream* const st[3] = {&a, &b, &c};
        unsigned x = 0, y = 1;  // the two furthest from their stops
        int64_t left[3];
        for (unsigned k = 0; k < 3; ++k)
            left[k] = stop[k] - bit_position(*st[k]);
        if (left[0] <= left[1] && left[0] <= left[2])
            x = 1, y = 2;
        else if (left[1] <= left[2])
            x = 0, y = 2;
        for (;;) {
            Pair p = decode_pair({*st[x], *st[y], 0}, src, ends[x], ends[y]);
            *st[x] = p.a;
            *st[y] = p.b;
            if (p.slow == 0)
                break;
            for (unsigned k = 0; k < 2; ++k) {
                if (!(p.slow & (1u << k)))
                    continue;
                const unsigned w = k == 0 ? x : y;
                const SlowResult r = slow_symbol(*st[w], src, n);
                *st[w] = r.s;
                if (r.rc != kMore) {
                    if (w != 0)
                        return false;
                    *result = slow_result(r, dst);
                    return true;
                }
            }
        }
    }
    Join ja;
    if (!join_at(a, src, n, hb1, hb.rec, dst, &ja)) {
        if (ja.rc == kMore)
            return false;
        *result = slow_result({a, ja.rc}, dst);
        return true;
    }
    // B decodes true symbols from the join on: its errors are real.  When
    // it does not meet C, it decodes the rest.
    Join jb;
    size_t b_len, c_len = 0;
    if (join_at(b, src, n, hb2, hc.rec, b_base, &jb)) {
        b_len = jb.len;
        const ptrdiff_t r = decode_to_end(c, src, n, c_base);
        if (r < 0) {
            *result = r;
            return true;
        }
        c_len = static_cast<size_t>(r);
    } else {
        const ptrdiff_t r = jb.rc == kMore ? decode_to_end(b, src, n, b_base)
                                           : slow_result({b, jb.rc}, b_base);
        if (r < 0) {
            *result = r;
            return true;
        }
        b_len = static_cast<size_t>(r);
        jb.o = c_head;  // nothing of C
    }
    // The joined output: A's symbols, B's head from the join, B's symbols,
    // C's head from its join, C's.  B and C move first, the one whose move
    // cannot reach the other's symbols before the other: B down first (it
    // ends below C's symbols), else C (it moves to above B's new end).
    uint8_t* const b_to = dst + ja.len + (b_head - ja.o);
    uint8_t* const c_to = b_to + b_len + (c_head - jb.o);
    if (b_to <= b_base) {
        memmove(b_to, b_base, b_len);
        memmove(c_to, c_base, c_len);
    } else {
        memmove(c_to, c_base, c_len);
        memmove(b_to, b_base, b_len);
    }
    memcpy(dst + ja.len, hb.out + ja.o, b_head - ja.o);
    memcpy(b_to + b_len, hc.out + jb.o, c_head - jb.o);
    *result = (c_to + c_len) - dst;
    return true;
}

// Strings that a later position gave back to the first, by the number of
// positions they started from (huffman_split_fallbacks()).  Counted on
// the way to one position only; relaxed, since they are only counts.
size_t g_split_fallbacks[2];  // a word: lock-free wherever the codec builds

HPACK_INLINE void count_fallback(unsigned positions) {
    __atomic_fetch_add(&g_split_fallbacks[positions - 2], 1, __ATOMIC_RELAXED);
}

// A string of kSplit3MinOctets or more (decode_split3(), and A alone
// where it gives up).
template <PairFn decode_pair, ThirdsFn decode_thirds>
HPACK_INLINE ptrdiff_t decode_long_body(const uint8_t* src, size_t n, uint8_t* dst) {
    Stream a{0, 0, dst, 0, kDecodeRootShift};
    ptrdiff_t result;
    if (decode_split3<decode_pair, decode_thirds>(a, src, n, dst, &result))
        return result;
    count_fallback(3);
    return decode_to_end(a, src, n, dst);
}

using LongFn = ptrdiff_t (*)(const uint8_t*, size_t, uint8_t*);

// The long strings' path is a function of its own (per instruction set,
// below): inline, its state made every call's frame larger (five more
// stores on entry, for strings of any length).
template <HeadFn decode_head, PairFn decode_pair, LongFn decode_long>
HPACK_INLINE ptrdiff_t decode_body(const uint8_t* src, size_t n, uint8_t* dst) {
    if (n >= kSplit3MinOctets)
        return decode_long(src, n, dst);
    Stream a{0, 0, dst, 0, kDecodeRootShift};
    if (n >= kSplitMinOctets) {
        ptrdiff_t result;
        if (decode_split<decode_head, decode_pair>(a, src, n, dst, &result))
            return result;
        count_fallback(2);
    }
    return decode_to_end(a, src, n, dst);
}

// ------------------------------------------------- instruction set variants
//
// With BMI2 (shlx/shrx) every variable shift above takes its count from
// any register; without it x86 takes counts only in cl, which costs moves
// and a register in every loop.  The bodies are compiled twice, once for
// BMI2, chosen at load time from CPUID: decode of 4 KiB of header values
// took 0.275 of nginx's time generic and 0.222 with BMI2 (same binary,
// alternating runs).  That build also stores code with MOVBE instead of a
// byte swap and a store: 4 KiB of random printable text 1,499 -> 1,469 ns,
// header values 1,115 -> 1,095 (fastest slices of 4 runs each).

HPACK_NOINLINE size_t encode_generic(const uint8_t* src, size_t n,
                                                uint8_t* dst) {
    return encode_body(src, n, dst);
}

HPACK_NOINLINE size_t encode_bounded_generic(const uint8_t* src, size_t n,
                                                        uint8_t* dst, size_t limit) {
    return encode_bounded_body(src, n, dst, limit);
}

HPACK_NOINLINE ptrdiff_t decode_long_generic(const uint8_t* src, size_t n,
                                                        uint8_t* dst) {
    return decode_long_body<decode_pair_generic, decode_thirds_generic>(src, n, dst);
}

HPACK_NOINLINE ptrdiff_t decode_generic(const uint8_t* src, size_t n,
                                                   uint8_t* dst) {
    return decode_body<decode_head_generic, decode_pair_generic, decode_long_generic>(src, n,
                                                                                      dst);
}

HPACK_NOINLINE void decode_many_generic(HuffmanJob* jobs, const uint8_t* order,
                                                   size_t count) {
    decode_many<decode_lanes_generic<3>, decode_lanes_generic<2>>(jobs, order, count);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 size_t encode_bmi2(const uint8_t* src,
                                                               size_t n, uint8_t* dst) {
    return encode_body(src, n, dst);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 size_t encode_bounded_bmi2(
    const uint8_t* src, size_t n, uint8_t* dst, size_t limit) {
    return encode_bounded_body(src, n, dst, limit);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 ptrdiff_t decode_long_bmi2(const uint8_t* src,
                                                                       size_t n, uint8_t* dst) {
    return decode_long_body<decode_pair_bmi2, decode_thirds_bmi2>(src, n, dst);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 ptrdiff_t decode_bmi2(const uint8_t* src,
                                                                  size_t n, uint8_t* dst) {
    return decode_body<decode_head_bmi2, decode_pair_bmi2, decode_long_bmi2>(src, n, dst);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 void decode_many_bmi2(HuffmanJob* jobs,
                                                                   const uint8_t* order,
                                                                   size_t count) {
    decode_many<decode_lanes_bmi2<3>, decode_lanes_bmi2<2>>(jobs, order, count);
}

// The build named for BMI2 also writes code with MOVBE (a byte-swapping
// store), so the CPU must have both.
bool cpu_has_bmi2() {
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_BMI2) != 0 &&
           __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_MOVBE) != 0;
}

// Set once when the library is loaded; zero (generic) before that.
bool g_bmi2 = cpu_has_bmi2();
#else
constexpr bool g_bmi2 = false;
#endif

}  // namespace

bool huffman_has_isa(HuffmanIsa isa) {
#if HPACK_HUFFMAN_BMI2
    return isa == HuffmanIsa::generic || cpu_has_bmi2();
#else
    return isa == HuffmanIsa::generic;
#endif
}

HuffmanIsa huffman_isa() { return g_bmi2 ? HuffmanIsa::bmi2 : HuffmanIsa::generic; }

bool huffman_set_isa(HuffmanIsa isa) {
    if (!huffman_has_isa(isa)) return false;
#if HPACK_HUFFMAN_BMI2
    g_bmi2 = isa == HuffmanIsa::bmi2;
#endif
    return true;
}

size_t huffman_encode(const uint8_t* src, size_t n, uint8_t* dst) {
#if HPACK_HUFFMAN_BMI2
    if (g_bmi2) return encode_bmi2(src, n, dst);
#endif
    return encode_generic(src, n, dst);
}

size_t huffman_encode_bounded(const uint8_t* src, size_t n, uint8_t* dst, size_t limit) {
#if HPACK_HUFFMAN_BMI2
    if (g_bmi2) return encode_bounded_bmi2(src, n, dst, limit);
#endif
    return encode_bounded_generic(src, n, dst, limit);
}

ptrdiff_t huffman_decode(const uint8_t* src, size_t n, uint8_t* dst) {
    ptrdiff_t result;
    if (n < kShortOctets && decode_short(src, n, dst, &result))
        return result;
#if HPACK_HUFFMAN_BMI2
    if (g_bmi2) return decode_bmi2(src, n, dst);
#endif
    return decode_generic(src, n, dst);
}

size_t huffman_split_fallbacks(unsigned positions) {
    if (positions < 2 || positions > 3) return 0;
    return __atomic_load_n(&g_split_fallbacks[positions - 2], __ATOMIC_RELAXED);
}

void huffman_decode_many(HuffmanJob* jobs, const uint8_t* order, size_t count) {
    if (count < 2) {
        if (count == 1) {
            HuffmanJob& j = jobs[order[0]];
            j.result = huffman_decode(j.src, j.n, j.dst);
        }
        return;
    }
#if HPACK_HUFFMAN_BMI2
    if (g_bmi2)
        return decode_many_bmi2(jobs, order, count);
#endif
    decode_many_generic(jobs, order, count);
}

}  // namespace hpack

HPACK_API size_t hpack_huffman_encoded_len(const uint8_t* src, size_t len) {
    return hpack::huffman_encoded_length(src, len);
}

HPACK_API size_t hpack_huffman_encode(const uint8_t* src, size_t len,
                                      uint8_t* dst) {
    return hpack::huffman_encode(src, len, dst);
}

HPACK_API size_t hpack_huffman_decode_capacity(size_t len) {
    return hpack::huffman_decode_capacity(len);
}

HPACK_API ptrdiff_t hpack_huffman_decode(const uint8_t* src, size_t len,
                                         uint8_t* dst) {
    return hpack::huffman_decode(src, len, dst);
}
