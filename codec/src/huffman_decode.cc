// HPACK Huffman decoding (RFC 7541 5.2, Appendix B).
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
// Each lookup needs the bit count of the previous one, so one position runs
// at the latency of a load and two shifts per lookup; strings of
// kSplitMinOctets (112) and more are decoded from two positions at once
// (see decode_split(); DESIGN.md, "Measurements that decided": "Huffman
// decode: two positions from 112 coded octets"), and from
// kSplit3MinOctets (1280) on from three (huffman_decode_long.cc).  The decoder
// hands a header block's strings over together (huffman_decode_many()),
// and they are decoded three at a time, in three lanes.
//
// Strictness (RFC 7541 5.2) comes from reading the input as if it went on
// with one bits: past the last symbol a valid string shows only ones, which
// no code but EOS (30 bits) matches, so no symbol is ever made of padding.
// A code that needs bits past the end, a run of ones that reaches EOS, and
// 8 or more bits left over are the errors the RFC names.

#include "huffman_decode.h"

namespace hpack {

// Strings that a later position gave back to the first, by the number of
// positions they started from (huffman_split_fallbacks()).
// Counted on the way to one position only; relaxed, since they are only
// counts.  A word: lock-free wherever the codec builds.
size_t g_huffman_split_fallbacks[2];

namespace {

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
// with its own entry and exit, take more than they save (DESIGN.md,
// "Measurements that decided": "Huffman decode: the two strings three
// lanes leave finish one after the other").  A lane
// reads its last octets as decode_to_end() does (load_tail(): ones past
// the end), so its groups run on into the implied ones and stop there:
// each string's end is judged as in decode_to_end(), and the other lanes
// do not wait for it.
HPACK_INLINE Stream fresh_stream(const HuffmanJob& j) {
    return {0, 0, j.dst, 0, kDecodeRootShift};
}

// The strings the lanes have yet to take.
struct LaneQueue {
    HuffmanJob*    jobs;
    const uint8_t* order;
    size_t         next, count;

    HuffmanJob* take() { return &jobs[order[next++]]; }
};

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
// lane after lane, a group's lookups are a chain of about 60 instructions
// and the next lane's can start only as far ahead as the processor looks
// (DESIGN.md, "Measurements that decided": "Huffman decode: the lanes'
// lookups in step").  A lane's state is a position (Lane): three values a lane
// between rounds, so that GCC keeps a group's sum in a register ("Huffman
// decode: a lane as a position from its string's end").  Letting the other lanes
// finish their groups when one stopped (a loop of lookups from where each
// was) costs more than it saves.
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
    // Lane by lane: through an array of the lanes' addresses, GCC stores
    // them to the stack to read them back (DESIGN.md, "Measurements that
    // decided": "Huffman decode: the lanes handed back one by one").
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
HPACK_NOINLINE HPACK_TARGET_BMI2 void decode_lanes_bmi2(Lanes<N>& t, LaneQueue& q) {
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
        // The two left, one after the other, unrolled ("Huffman decode: the
        // lanes handed back one by one" in DESIGN.md).
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
// frame (DESIGN.md, "Measurements that decided": "Huffman decode: strings
// under 8 coded octets as one lane of `kLane`").  A
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

using LongFn = ptrdiff_t (*)(const uint8_t*, size_t, uint8_t*);

// The long strings' path is a function of its own (per instruction set,
// in huffman_decode_long.cc): inline, its state would make every call's
// frame larger (five more stores on entry, for strings of any length).
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

// The bodies above, compiled once per instruction set (huffman_internal.h).
HPACK_NOINLINE ptrdiff_t decode_generic(const uint8_t* src, size_t n, uint8_t* dst) {
    return decode_body<decode_head_generic, decode_pair_generic, decode_long_generic>(src, n,
                                                                                      dst);
}

HPACK_NOINLINE void decode_many_generic(HuffmanJob* jobs, const uint8_t* order, size_t count) {
    decode_many<decode_lanes_generic<3>, decode_lanes_generic<2>>(jobs, order, count);
}

#if HPACK_HUFFMAN_BMI2
HPACK_NOINLINE HPACK_TARGET_BMI2 ptrdiff_t decode_bmi2(const uint8_t* src, size_t n, uint8_t* dst) {
    return decode_body<decode_head_bmi2, decode_pair_bmi2, decode_long_bmi2>(src, n, dst);
}

HPACK_NOINLINE HPACK_TARGET_BMI2 void decode_many_bmi2(HuffmanJob* jobs,
                                                       const uint8_t* order,
                                                       size_t count) {
    decode_many<decode_lanes_bmi2<3>, decode_lanes_bmi2<2>>(jobs, order, count);
}
#endif

}  // namespace

ptrdiff_t huffman_decode(const uint8_t* src, size_t n, uint8_t* dst) {
    ptrdiff_t result;
    if (n < kShortOctets && decode_short(src, n, dst, &result))
        return result;
#if HPACK_HUFFMAN_BMI2
    if (g_huffman_bmi2) return decode_bmi2(src, n, dst);
#endif
    return decode_generic(src, n, dst);
}

size_t huffman_split_fallbacks(unsigned positions) {
    if (positions < 2 || positions > 3) return 0;
    return __atomic_load_n(&g_huffman_split_fallbacks[positions - 2], __ATOMIC_RELAXED);
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
    if (g_huffman_bmi2)
        return decode_many_bmi2(jobs, order, count);
#endif
    decode_many_generic(jobs, order, count);
}

}  // namespace hpack

HPACK_API size_t hpack_huffman_decode_capacity(size_t len) {
    return hpack::huffman_decode_capacity(len);
}

HPACK_API ptrdiff_t hpack_huffman_decode(const uint8_t* src, size_t len,
                                         uint8_t* dst) {
    return hpack::huffman_decode(src, len, dst);
}
