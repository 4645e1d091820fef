// HPACK Huffman decoding of long strings from three positions.

#include "huffman_decode.h"

namespace hpack {
namespace {

// Long strings go from three positions: A from the start, B and C from a
// third and two thirds in, each joined to the one before it as B is in
// decode_split(), all three in lanes of kLane (decode_lanes_body()'s
// loop, with stops of their own), B and C recording their heads as they
// go.  Two positions run at the latency of their lookups; three lanes
// hide more of it, for more instructions a lookup (a lane builds its
// window each group) and a fixed cost (the heads, two joins, the moves),
// which pays from kSplit3MinOctets on.  A lane that meets a link sits out
// the rest of its round rather than cutting it short for the others, the
// lanes are named one by one rather than referred to, the heads are
// recorded in the lanes rather than in passes of two positions, and the
// lanes look up kLane rather than kDecode: each the faster (DESIGN.md,
// "Measurements that decided": "Huffman decode: three positions from 1,280
// coded octets").

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
    // them on the stack.
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

}  // namespace

HPACK_NOINLINE ptrdiff_t decode_long_generic(const uint8_t* src, size_t n, uint8_t* dst) {
    return decode_long_body<decode_pair_generic, decode_thirds_generic>(src, n, dst);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 ptrdiff_t decode_long_bmi2(const uint8_t* src,
                                                            size_t n, uint8_t* dst) {
    return decode_long_body<decode_pair_bmi2, decode_thirds_bmi2>(src, n, dst);
}
#endif

}  // namespace hpack
