// The Huffman decoder's internals, shared by its two files: the decode
// table, one decoding position, the lanes of kLane and what joins a later
// position to the one before it.  huffman_decode.cc decodes from one and
// two positions and in lanes; huffman_decode_long.cc from three.

#ifndef HPACK_HUFFMAN_DECODE_H
#define HPACK_HUFFMAN_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "huffman_internal.h"

namespace hpack {

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

// Inline, as kLane below: one copy for both decoding files.
alignas(64) inline constexpr DecodeTable kDecode = assemble_decode_table();

// A lane's groups look up kLane, kDecode's root without the window shift:
// every lookup of a lane's group starts at the root, so the shift is not
// taken out of each entry, nor checked after each group.  A link (a
// window of eight ones) stops the group, and lane_stop() takes it out of
// line: a long code, or the string's end (DESIGN.md, "Measurements that
// decided": "Huffman decode: three lanes on `kLane`").
//
// kLane's entries: the bits consumed in bits 0-5, alone; 8 times the
// symbol count in bits 8-15 (0, 8 or 16); the symbols in bits 16-31,
// first in 16-23; or kLaneStop for a link, which the lanes leave to
// lane_stop().  A group adds its entries up as it goes (lane_step()):
// the low octet counts the bits consumed, the next the output octets,
// shifted left by 3, which place the next lookup's symbols; and the
// entry shifts the window by itself (x86 masks shift counts to 6 bits).
// A root entry's symbols are below 0x80 (their codes are 12 bits at
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

alignas(64) inline constexpr LaneTable kLane = make_lane_table();

// Strings that a later position gave back to the first, by the number of
// positions they started from (huffman_split_fallbacks()).
extern HPACK_HIDDEN size_t g_huffman_split_fallbacks[2];

namespace {

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
// per lookup, the speed of two positions at once depends on the output
// buffer's address modulo 4096, loads held back behind stores they might
// alias (DESIGN.md, "Measurements that decided": "Huffman decode: one
// 8-octet store of a group's symbols").
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
HPACK_NOINLINE SlowResult slow_symbol(Stream s, const uint8_t* src, size_t n) {
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
// a link.  Every code over 12 bits begins with 8 ones, so a slow entry
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

// Two positions at once.
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
// parts are A's search for the join and the ends, and two positions pay
// from kSplitMinOctets on (DESIGN.md, "Measurements that decided":
// "Huffman decode: two positions from 112 coded octets").

constexpr size_t kSplitMinOctets = kHuffmanSplitMinOctets;
constexpr size_t kSplit3MinOctets = kHuffmanSplit3MinOctets;
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
// index beside the input pointer) puts loads of the stack on the lookups'
// path, slower at some stack and buffer addresses and not at others
// (DESIGN.md, "Measurements that decided": "Huffman decode: the
// two-position loop's state in registers").  So a position here is a window, an
// input pointer, an output pointer and a bit count, every group starts at
// the root (unlink() below: the shift of a link is not carried to the next
// group), and the ends are checked once per run of groups that cannot
// reach them.
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

HPACK_NOINLINE Pair decode_pair_generic(Pair p, const uint8_t* src, size_t a_end, size_t b_end) {
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
// rotate, which BMI2 does in one instruction (rorx) where a shift takes a
// copy and a shift; the shift that uses it reads only its low 6 bits
// (DESIGN.md, "Measurements that decided": "Huffman decode: a lane's
// symbol place as a rotate").
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

// A string given back to the first position; relaxed, since it is a count.
HPACK_INLINE void count_fallback(unsigned positions) {
    __atomic_fetch_add(&g_huffman_split_fallbacks[positions - 2], 1, __ATOMIC_RELAXED);
}

}  // namespace

// A string of kSplit3MinOctets or more (huffman_decode_long.cc), per
// instruction set.
HPACK_HIDDEN ptrdiff_t decode_long_generic(const uint8_t* src, size_t n, uint8_t* dst);
#if HPACK_HUFFMAN_BMI2
HPACK_HIDDEN HPACK_TARGET_BMI2 ptrdiff_t decode_long_bmi2(const uint8_t* src, size_t n,
                                                          uint8_t* dst);
#endif

}  // namespace hpack

#endif
