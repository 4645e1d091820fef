// Differential decoding, QPACK (RFC 9204): our decoder against libnghttp3
// 0.8's (the library curl, ngtcp2's examples and h2load decode with) on one
// connection: the same SETTINGS_QPACK_MAX_TABLE_CAPACITY and
// SETTINGS_QPACK_BLOCKED_STREAMS, the same encoder stream cut into the
// same chunks, the same field sections on a few streams, cancellations, and
// the decoder streams both owe.
//
// Agreement, at the finest grain both APIs give:
//   - the encoder stream, instruction by instruction: each instruction a
//     chunk completes is given to nghttp3 alone and to ours alone (or, in
//     "whole" mode, all of them to ours in one read, located by its insert
//     count); both accept it or both reject it, and the insert counts agree.
//     The chunk's incomplete last instruction is then given to both as it is
//     (see "Timing" below);
//   - every field section: both block, or both decode it to the same fields
//     (name, value, never-indexed bit), or both reject it after the same
//     fields; the streams qpack_decoder_unblocked() names are the ones whose
//     Required Insert Count nghttp3 now has, in the order they blocked, and
//     decode the same again;
//   - the decoder streams, drained at the same points: the same Section
//     Acknowledgments, Stream Cancellations and Insert Count Increments in
//     the same order.
// Every rejection ends the connection (every QPACK error is a connection
// error for both; ours' string limit, the one stream error it can raise
// here, is a connection error for nghttp3).
//
// Differences, each a rule here (fuzz/README.md):
//
// Integers: both read an encoding longer than the shortest as its value,
// up to 62 bits.  With "canonical" on (chosen per connection for the
// encoder stream, per section for sections), our decoder gets the octets
// with every integer in its shortest form, nghttp3 the original, and both
// must read the same.
//
//   N1  nghttp3's string limits (NGHTTP3_QPACK_MAX_NAMELEN 256 and
//       NGHTTP3_QPACK_MAX_VALUELEN 65536, on the coded length, checked as
//       soon as the length is read): a literal name longer than 256 octets
//       or a value longer than 65536 octets is NGHTTP3_ERR_QPACK_HEADER_
//       TOO_LARGE, which leaves nghttp3's decoder unusable.
//       - On the encoder stream an nghttp3 deviation: RFC 9204 3.2.2 and
//         4.3.2-4.3.3 bound an entry by the table capacity alone, so an
//         insert that fits is valid, and nghttp3 closes the connection on
//         it.  Rule: nghttp3 may reject (HEADER_TOO_LARGE only) the first
//         instruction the walk finds with such a string; ours is not judged
//         from there.
//       - In a field section a limit, which RFC 9204 does not forbid; but
//         a stream error for us (QPACK_E_STRING_TOO_LARGE,
//         H3_EXCESSIVE_LOAD) and a connection error for nghttp3.  Ours'
//         string limit is set to nghttp3's 65536, so values agree; for a
//         literal name of 257 to 65536 octets nghttp3 must reject
//         (HEADER_TOO_LARGE) at that line after the same fields as ours,
//         and the connection ends there.
//
//   N2  Stream Cancellation with a maximum capacity of 0: RFC 9204 2.2.2.2
//       lets a decoder omit it, which we do and nghttp3 does not.  nghttp3's
//       cancellations are dropped from its decoder stream before the
//       comparison when the capacity is 0, and only then.
//
// Not differences:
//   - SETTINGS_QPACK_BLOCKED_STREAMS (RFC 9204 2.1.2): nghttp3's QPACK
//     decoder reports a blocked section whatever the count and leaves the
//     limit to its caller; the target is that caller and counts the streams
//     nghttp3 blocks on: one more than allowed is its rejection.
//   - The decoder stream's length: nghttp3 fails a cancellation once about
//     2000 octets wait undrained, unless
//     nghttp3_qpack_decoder_set_max_concurrent_streams() raises the bound,
//     which the target does.
//   - Timing on the encoder stream.  nghttp3 reads octet by octet and
//     rejects as soon as an octet shows an error (a Huffman code, an
//     integer past 62 bits); we reject an entry larger than the capacity
//     as soon as its lengths are read and otherwise judge an instruction
//     when it is complete.  So when a chunk ends inside an instruction and
//     one side rejects it, the other must reject that instruction when a
//     later chunk completes it (and nothing else is compared meanwhile).
//   - Error codes are not compared, only which side rejected and where.
//
// Input: the script framing of fuzz_common.h (u16 control length,
// control, wire).  The control stream starts with the setup: u16
// SETTINGS_QPACK_MAX_TABLE_CAPACITY (table_size_of), u8
// SETTINGS_QPACK_BLOCKED_STREAMS, u8 flags (bit 0: our encoder stream
// canonical, bit 1: "whole" mode, bit 2: sections canonical at first).
// Then operations, an opcode octet whose low three bits select:
//   0, 5  encoder    u8 length (u16 with opcode bit 7): the next wire
//                    octets, one chunk of the encoder stream
//   1, 6  section    u8 stream, u16 length (u8 with opcode bit 7): the next
//                    wire octets as the stream's field section (ignored on
//                    a stream still blocked)
//   2     cancel     u8 stream: both decoders cancel it
//   3     drain      both decoder streams drained and compared
//   4     canonical  sections from here canonical for ours iff bit 7
//   7     nothing
// Stream u8 s: id 4 * (s & 15), plus 2^61 when bit 7 is set.  When the
// control stream is spent, the rest of the wire is a section on stream 0;
// then both decoder streams are drained a last time.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nghttp3/nghttp3.h>

#include "fuzz_common.h"
#include "qpack.h"
#include "story.h"

using namespace hpack_fuzz;

namespace {

constexpr uint64_t kMax62 = (uint64_t{1} << 62) - 1;
constexpr size_t kNone = SIZE_MAX;

// nghttp3 0.8's lib/nghttp3_qpack.h: the longest literal name and value
// (coded length) its decoder reads.
constexpr uint64_t kNghttp3MaxName = 256;
constexpr uint64_t kNghttp3MaxValue = 65536;

// ------------------------------------------------------------ the walk
//
// The octets walked without a table, as nghttp3 reads them: where each
// instruction or field line ends, which strings pass nghttp3's limits
// (N1), and the octets with every integer in its shortest form
// (canonical).

// An integer with an N-bit prefix as nghttp3 accepts it.  st 1: read (len
// octets); 0: the input ends first; -1: invalid for both (above 2^62 - 1,
// or a tenth continuation octet), known after len octets.
struct Int {
    int st;
    uint64_t v;
    size_t len;
};

Int walk_int(const uint8_t* p, size_t n, int prefix) {
    if (n == 0) return {0, 0, 0};
    const uint64_t max = (1u << prefix) - 1;
    uint64_t v = p[0] & max;
    if (v < max) return {1, v, 1};
    for (size_t i = 1; i <= 9; ++i) {
        if (i >= n) return {0, 0, 0};
        const uint8_t b = p[i];
        v += uint64_t{b & 0x7fu} << (7 * (i - 1));
        if (!(b & 0x80)) {
            if (v > kMax62) return {-1, 0, i + 1};
            return {1, v, i + 1};
        }
    }
    // Nine continuation octets that all continue: nghttp3 rejects the
    // tenth whatever it is (we, the ninth).
    if (n < 11) return {0, 0, 0};
    return {-1, 0, 11};
}

// Walks the elements of one instruction or field line at p: integers and
// strings, copied canonically as far as they are complete.
struct Walk {
    Walk(const uint8_t* data, size_t len) : p(data), n(len) {}
    const uint8_t* p;
    size_t n;
    size_t at = 0;
    std::vector<uint8_t> canon;
    bool long_name = false;    // a literal name above kNghttp3MaxName
    bool long_value = false;   // a value above kNghttp3MaxValue

    // 1 read, 0 incomplete, -1 invalid (at moved past it).
    int integer(int prefix, uint64_t* v) {
        const Int r = walk_int(p + at, n - at, prefix);
        if (r.st == 0) return 0;
        if (r.st < 0) {
            canon.insert(canon.end(), p + at, p + at + r.len);
            at += r.len;
            return -1;
        }
        put_integer(&canon, static_cast<uint8_t>(p[at] & ~((1u << prefix) - 1)), prefix, r.v);
        at += r.len;
        *v = r.v;
        return 1;
    }
    // A string literal: its length, then as many of its octets as there
    // are.  name: a literal name (nghttp3's name limit), else a value.
    int string(int prefix, bool name) {
        uint64_t len;
        const int r = integer(prefix, &len);
        if (r <= 0) return r;
        if (name) long_name |= len > kNghttp3MaxName;
        else long_value |= len > kNghttp3MaxValue;
        const size_t take = static_cast<size_t>(std::min<uint64_t>(len, n - at));
        canon.insert(canon.end(), p + at, p + at + take);
        at += take;
        return take == len ? 1 : 0;
    }
};

// One encoder-stream instruction (RFC 9204 4.3).
struct Instr {
    int st;              // 1 complete, 0 incomplete, -1 an invalid integer
    size_t len;          // octets (st != 0)
    bool inserts;        // adds an entry
    bool too_long;       // N1: nghttp3's limits
    std::vector<uint8_t> canon;   // canonical form of the complete elements
};

Instr walk_instruction(const uint8_t* p, size_t n) {
    Walk w(p, n);
    const uint8_t b = p[0];
    uint64_t v;
    int st;
    bool inserts = true;
    if (b & 0x80) {                 // Insert With Name Reference
        st = w.integer(6, &v);
        if (st > 0) st = w.at < n ? w.string(7, false) : 0;
    } else if (b & 0x40) {          // Insert With Literal Name
        st = w.string(5, true);
        if (st > 0) st = w.at < n ? w.string(7, false) : 0;
    } else {                        // Set Dynamic Table Capacity, Duplicate
        inserts = !(b & 0x20);
        st = w.integer(5, &v);
    }
    return {st, st != 0 ? w.at : 0, inserts, w.long_name || w.long_value, std::move(w.canon)};
}

// A field section (RFC 9204 4.5): its prefix and lines, walked until the
// first line that is incomplete or holds an invalid integer.
struct SectionWalk {
    struct Line {
        bool long_string;
    };
    std::vector<Line> lines;      // every line begun, the last maybe cut
    std::vector<uint8_t> canon;   // canonical octets, then the rest as is
};

SectionWalk walk_section(const std::vector<uint8_t>& s) {
    SectionWalk out;
    Walk w(s.data(), s.size());
    uint64_t v;
    bool ok = w.integer(8, &v) > 0 && w.at < s.size() && w.integer(7, &v) > 0;
    out.canon = std::move(w.canon);
    size_t at = w.at;
    while (ok && at < s.size()) {
        Walk l(s.data() + at, s.size() - at);
        const uint8_t b = s[at];
        int st;
        if (b & 0x80) {                         // indexed
            st = l.integer(6, &v);
        } else if (b & 0x40) {                  // name reference
            st = l.integer(4, &v);
            if (st > 0) st = l.at < l.n ? l.string(7, false) : 0;
        } else if (b & 0x20) {                  // literal name
            st = l.string(3, true);
            if (st > 0) st = l.at < l.n ? l.string(7, false) : 0;
        } else if (b & 0x10) {                  // post-base indexed
            st = l.integer(4, &v);
        } else {                                // post-base name reference
            st = l.integer(3, &v);
            if (st > 0) st = l.at < l.n ? l.string(7, false) : 0;
        }
        out.lines.push_back({l.long_name || l.long_value});
        out.canon.insert(out.canon.end(), l.canon.begin(), l.canon.end());
        at += l.at;
        ok = st > 0;
    }
    out.canon.insert(out.canon.end(), s.begin() + static_cast<ptrdiff_t>(std::min(at, s.size())),
                     s.end());
    return out;
}

// ------------------------------------------------------------ decoding

struct Field {
    std::string name, value;
    bool never;

    bool operator==(const Field& o) const {
        return name == o.name && value == o.value && never == o.never;
    }
    std::string show() const {
        return "{" + hex(reinterpret_cast<const uint8_t*>(name.data()), name.size()) + ": " +
               hex(reinterpret_cast<const uint8_t*>(value.data()), value.size()) +
               (never ? " never" : "") + "}";
    }
};

std::string show_fields(const std::vector<Field>& v) {
    std::string s;
    for (const Field& f : v) s += "\n    " + f.show();
    return s;
}

// What a decoder made of a section.
struct Outcome {
    enum Kind { kDone, kBlocked, kError } kind = kDone;
    std::vector<Field> fields;
    int rc = 0;
    std::string show(const char* who) const {
        const char* k = kind == kDone ? "done" : kind == kBlocked ? "blocked" : "error";
        return std::string(who) + ": " + k + " " + std::to_string(rc) + ", " +
               std::to_string(fields.size()) + " fields" + show_fields(fields);
    }
};

// nghttp3's rejection of one stream blocked too many (the target counts
// for it: see "Not differences").
constexpr int kNghttp3TooManyBlocked = -1000000;

// A section left blocked, on both sides.
struct Blocked {
    uint64_t stream;
    nghttp3_qpack_stream_context* sctx;
    std::unique_ptr<Exact> theirs;   // the octets nghttp3 has not read
    std::vector<uint8_t> ours;       // the whole section as ours got it
    SectionWalk walk;
    bool canonical;
};

// Instructions on a decoder stream (RFC 9204 4.4): 0 Insert Count
// Increment, 1 Stream Cancellation, 2 Section Acknowledgment.
struct DsInstr {
    int type;
    uint64_t v;
    bool operator==(const DsInstr& o) const { return type == o.type && v == o.v; }
};

std::vector<DsInstr> parse_decoder_stream(const std::vector<uint8_t>& b, const char* who) {
    std::vector<DsInstr> out;
    size_t at = 0;
    while (at < b.size()) {
        const int type = b[at] & 0x80 ? 2 : b[at] & 0x40 ? 1 : 0;
        const Int r = walk_int(b.data() + at, b.size() - at, type == 2 ? 7 : 6);
        FUZZ_CHECK(r.st == 1,
                   std::string(who) + " wrote a decoder stream that does not parse: " + hex(b));
        out.push_back({type, r.v});
        at += r.len;
    }
    return out;
}

std::string show(const std::vector<DsInstr>& v) {
    static const char* const kNames[] = {"increment ", "cancel ", "ack "};
    std::string s;
    for (const DsInstr& i : v) s += std::string(" ") + kNames[i.type] + std::to_string(i.v);
    return s;
}

// Ends the input: the connection is closed.
struct Closed {};

struct Conn {
    FaultyAllocator alloc;   // a leak check: no failure is injected
    qpack_decoder_t* ours = nullptr;
    nghttp3_qpack_decoder* theirs = nullptr;
    size_t max_capacity, max_blocked;
    bool canon_encoder, whole, canon_sections;

    // The encoder stream: all of it so far, the end of its last complete
    // instruction, the octets nghttp3 (and ours when not canonical) read,
    // and the canonical octets of the pending instruction ours read.
    std::vector<uint8_t> es;
    size_t es_done = 0, es_fed = 0, canon_sent = 0;
    // After a timing difference: the side that must still reject the
    // pending instruction (0: none, 1: ours, 2: nghttp3).
    int owes = 0;

    std::vector<Blocked> blocked;   // in the order they blocked

    Conn(size_t capacity, size_t blocked_streams, uint8_t flags)
        : max_capacity(capacity), max_blocked(blocked_streams), canon_encoder(flags & 1),
          whole(flags & 2), canon_sections(flags & 4) {
        ours = qpack_decoder_create(&alloc.a, capacity, blocked_streams);
        FUZZ_CHECK(ours && nghttp3_qpack_decoder_new(&theirs, capacity, blocked_streams,
                                                     nghttp3_mem_default()) == 0,
                   "create");
        // nghttp3's value limit, so that values agree (N1).
        qpack_decoder_set_string_limit(ours, kNghttp3MaxValue);
        // nghttp3 bounds its undrained decoder stream by this hint;
        // ours has no such bound ("Not differences").
        nghttp3_qpack_decoder_set_max_concurrent_streams(theirs, 1u << 20);
    }
    ~Conn() {
        for (Blocked& b : blocked) nghttp3_qpack_stream_context_del(b.sctx);
        qpack_decoder_destroy(ours);
        nghttp3_qpack_decoder_del(theirs);
        FUZZ_CHECK(alloc.live == 0, std::to_string(alloc.live) + " blocks leaked");
    }

    uint64_t their_inserts() const { return nghttp3_qpack_decoder_get_icnt(theirs); }

    // where(): the failure's context, built only on failure.
    template <class Where>
    void check_inserts(const Where& where) const {
        FUZZ_CHECK(qpack_decoder_insert_count(ours) == their_inserts(),
                   "insert counts differ: ours " + std::to_string(qpack_decoder_insert_count(ours)) +
                       ", nghttp3 " + std::to_string(their_inserts()) + ": " + where());
    }

    // ------------------------------------------------- encoder stream

    int read_ours(const std::vector<uint8_t>& b) {
        const Exact in(b.data(), b.size());
        const int rc = qpack_decoder_read_encoder(ours, in.begin(), in.n);
        FUZZ_CHECK(rc == QPACK_OK || (rc <= QPACK_E_ENC_INTEGER && rc >= QPACK_E_ENC_HUFFMAN_PADDING),
                   "read_encoder: " + std::to_string(rc));
        return rc;
    }
    // 0 or nghttp3's error.
    int read_theirs(const uint8_t* p, size_t n) {
        const Exact in(p, n);
        const nghttp3_ssize r = nghttp3_qpack_decoder_read_encoder(theirs, in.begin(), in.n);
        if (r < 0) return static_cast<int>(r);
        FUZZ_CHECK(static_cast<size_t>(r) == n, "nghttp3 read part of the encoder stream");
        return 0;
    }

    // One complete instruction's verdicts (ours rc, nghttp3's) judged.
    // Returns normally when both accepted it.
    template <class Where>
    void judge(const Instr& in, int ro, int rn, const Where& where) {
        if (ro == QPACK_OK && rn == 0) {
            FUZZ_CHECK(in.st > 0, "both accepted an invalid integer: " + where());
            FUZZ_CHECK(!in.too_long, "nghttp3 accepted a string above its limits: " + where());
            check_inserts(where);
            return;
        }
        if (ro != QPACK_OK && rn != 0) throw Closed{};
        if (ro != QPACK_OK) {
            FUZZ_CHECK(false, "we rejected an instruction nghttp3 accepted (" +
                                  std::to_string(ro) + "): " + where());
        } else {
            FUZZ_CHECK(in.too_long && rn == NGHTTP3_ERR_QPACK_HEADER_TOO_LARGE,
                       "nghttp3 rejected an instruction we accepted (" +
                           std::string(nghttp3_strerror(rn)) + "): " + where());
        }
        throw Closed{};
    }

    void encoder(const std::vector<uint8_t>& chunk) {
        es.insert(es.end(), chunk.begin(), chunk.end());
        // The instructions the chunk completes, and the one it leaves cut.
        std::vector<Instr> done;
        std::vector<size_t> starts;
        size_t p = es_done;
        Instr pending{0, 0, false, false, {}};
        bool cut = false;
        while (p < es.size()) {
            Instr in = walk_instruction(es.data() + p, es.size() - p);
            if (in.st == 0) {
                pending = std::move(in);
                cut = true;
                break;
            }
            starts.push_back(p);
            p += in.len;
            done.push_back(std::move(in));
            if (done.back().st < 0) break;   // both must reject it
        }
        auto at = [&](size_t off) {
            return "encoder stream " + hex(es) + " at " + std::to_string(off);
        };

        if (owes) {
            // A side rejected the pending instruction early; the other
            // must reject it by its end, and is given nothing more.
            const size_t end = done.empty() ? es.size() : starts[0] + done[0].len;
            int r;
            if (owes == 2) {
                r = read_theirs(es.data() + es_fed, end - es_fed);
            } else if (canon_encoder) {
                const std::vector<uint8_t>& canon = done.empty() ? pending.canon : done[0].canon;
                r = read_ours(std::vector<uint8_t>(canon.begin() + static_cast<ptrdiff_t>(canon_sent),
                                                   canon.end()));
                canon_sent = canon.size();
            } else {
                r = read_ours(std::vector<uint8_t>(es.begin() + static_cast<ptrdiff_t>(es_fed),
                                                   es.begin() + static_cast<ptrdiff_t>(end)));
            }
            es_fed = end;
            if (r != 0) throw Closed{};
            FUZZ_CHECK(done.empty(), std::string(owes == 2 ? "nghttp3" : "we") +
                                         " accepted an instruction the other rejected: " +
                                         at(starts[0]));
            return;
        }

        // Our octets for instruction k, and nghttp3's.
        auto ours_of = [&](size_t k) {
            if (canon_encoder) {
                const size_t skip = k == 0 ? canon_sent : 0;
                return std::vector<uint8_t>(done[k].canon.begin() + static_cast<ptrdiff_t>(skip),
                                            done[k].canon.end());
            }
            const size_t from = std::max(starts[k], es_fed);
            return std::vector<uint8_t>(es.begin() + static_cast<ptrdiff_t>(from),
                                        es.begin() + static_cast<ptrdiff_t>(starts[k] + done[k].len));
        };
        auto theirs_of = [&](size_t k) {
            const size_t from = std::max(starts[k], es_fed);
            return std::make_pair(es.data() + from, starts[k] + done[k].len - from);
        };

        if (!whole) {
            for (size_t k = 0; k < done.size(); ++k) {
                const int ro = read_ours(ours_of(k));
                const auto t = theirs_of(k);
                const int rn = read_theirs(t.first, t.second);
                judge(done[k], ro, rn, [&] { return at(starts[k]); });
                es_fed = es_done = starts[k] + done[k].len;
                canon_sent = 0;
            }
        } else if (!done.empty()) {
            // Ours reads them in one call, nghttp3 one by one.
            const uint64_t before = qpack_decoder_insert_count(ours);
            std::vector<uint8_t> all;
            for (size_t k = 0; k < done.size(); ++k) {
                const std::vector<uint8_t> b = ours_of(k);
                all.insert(all.end(), b.begin(), b.end());
            }
            const int ro = read_ours(all);
            const uint64_t ours_count = qpack_decoder_insert_count(ours);
            size_t failed = kNone, exception = kNone;
            int rn = 0;
            uint64_t count = before, count_at_exception = 0, count_at_failure = 0;
            for (size_t k = 0; k < done.size(); ++k) {
                if (exception == kNone && done[k].too_long) {
                    exception = k;
                    count_at_exception = count;
                }
                const auto t = theirs_of(k);
                rn = read_theirs(t.first, t.second);
                if (rn != 0) {
                    failed = k;
                    count_at_failure = count;
                    break;
                }
                if (done[k].inserts) ++count;
            }
            auto where = [&] {
                return at(starts[0]) + " (whole: ours " + std::to_string(ro) + " with " +
                       std::to_string(ours_count) + " inserts)";
            };
            if (exception == kNone || (failed != kNone && failed < exception)) {
                if (failed == kNone) {
                    FUZZ_CHECK(done.back().st > 0, "nghttp3 accepted an invalid integer: " + where());
                    FUZZ_CHECK(ro == QPACK_OK, "we rejected instructions nghttp3 accepted: " + where());
                    check_inserts(where);
                } else {
                    FUZZ_CHECK(ro != QPACK_OK && ours_count == count_at_failure,
                               "nghttp3 rejected instruction " + std::to_string(failed) +
                                   " after " + std::to_string(count_at_failure) +
                                   " inserts: " + where());
                    throw Closed{};
                }
            } else {
                FUZZ_CHECK(failed == exception && rn == NGHTTP3_ERR_QPACK_HEADER_TOO_LARGE,
                           "nghttp3 did not reject the long string of instruction " +
                               std::to_string(exception) + ": " + where());
                FUZZ_CHECK(ro == QPACK_OK || ours_count >= count_at_exception,
                           "we rejected an instruction before " + std::to_string(exception) +
                               ": " + where());
                throw Closed{};
            }
            es_fed = es_done = starts.back() + done.back().len;
            canon_sent = 0;
        }
        // The cut instruction, as far as it goes.
        if (cut) {
            std::vector<uint8_t> b;
            if (canon_encoder) {
                b.assign(pending.canon.begin() + static_cast<ptrdiff_t>(canon_sent),
                         pending.canon.end());
            } else {
                b.assign(es.begin() + static_cast<ptrdiff_t>(es_fed), es.end());
            }
            const int ro = read_ours(b);
            const int rn = read_theirs(es.data() + es_fed, es.size() - es_fed);
            es_fed = es.size();
            canon_sent = pending.canon.size();

            if (ro != QPACK_OK && rn != 0) throw Closed{};
            if (ro != QPACK_OK) {
                owes = 2;
                return;
            }
            if (rn != 0) {
                if (pending.too_long && rn == NGHTTP3_ERR_QPACK_HEADER_TOO_LARGE) throw Closed{};
                owes = 1;
                return;
            }
            FUZZ_CHECK(!pending.too_long,
                       "nghttp3 accepted a string above its limits: " + at(p) + " (cut)");
        }
        unblocked();
    }

    // ------------------------------------------------- field sections

    Outcome decode_ours(uint64_t id, const std::vector<uint8_t>& bytes) {
        Outcome o;
        const Exact in(bytes.data(), bytes.size());
        int rc = qpack_decode_begin(ours, id, in.begin(), in.n);
        if (rc == QPACK_BLOCKED) {
            o.kind = Outcome::kBlocked;
            return o;
        }
        while (rc == QPACK_OK) {
            qpack_field_t f[16];
            size_t n = 0;
            rc = qpack_decode_fields(ours, f, 16, &n);
            for (size_t i = 0; i < n; ++i) {
                FUZZ_CHECK(f[i].representation != HPACK_REP_INCREMENTAL, "an incremental field");
                o.fields.push_back({str(f[i].name, f[i].name_len), str(f[i].value, f[i].value_len),
                                    f[i].representation == HPACK_REP_NEVER_INDEXED});
            }
        }
        if (rc != QPACK_SECTION_END) {
            const bool section = rc <= QPACK_E_INTEGER && rc >= QPACK_E_BLOCKED_STREAMS;
            FUZZ_CHECK(section || rc == QPACK_E_STRING_TOO_LARGE,
                       "an unexpected error " + std::to_string(rc));
            o.kind = Outcome::kError;
            o.rc = rc;
        }
        return o;
    }

    // Reads p[0..n) into sctx; *used: the octets read.
    Outcome decode_theirs(nghttp3_qpack_stream_context* sctx, const uint8_t* p, size_t n,
                          size_t* used) {
        Outcome o;
        size_t at = 0;
        for (;;) {
            nghttp3_qpack_nv nv;
            uint8_t flags = 0;
            const nghttp3_ssize r =
                nghttp3_qpack_decoder_read_request(theirs, sctx, &nv, &flags, p + at, n - at, 1);
            if (r < 0) {
                o.kind = Outcome::kError;
                o.rc = static_cast<int>(r);
                break;
            }
            at += static_cast<size_t>(r);
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
                const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name);
                const nghttp3_vec value = nghttp3_rcbuf_get_buf(nv.value);
                o.fields.push_back({str(name.base, name.len), str(value.base, value.len),
                                    (nv.flags & NGHTTP3_NV_FLAG_NEVER_INDEX) != 0});
                nghttp3_rcbuf_decref(nv.name);
                nghttp3_rcbuf_decref(nv.value);
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) break;
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
                o.kind = Outcome::kBlocked;
                break;
            }
            FUZZ_CHECK(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT, "nghttp3 made no progress");
        }
        *used = at;
        return o;
    }

    // Both outcomes of one section judged (rule N1).  Returns
    // normally when both decoded it or both blocked.
    template <class What>
    void compare(const Outcome& o, const Outcome& n, const SectionWalk& w, const What& what) {
        auto where = [&] { return what() + "\n  " + o.show("ours") + "\n  " + n.show("nghttp3"); };
        size_t ex = kNone;
        for (size_t i = 0; i < w.lines.size() && ex == kNone; ++i)
            if (w.lines[i].long_string) ex = i;
        const bool ours_before = o.kind == Outcome::kError && o.fields.size() < ex;
        const bool theirs_before = n.kind == Outcome::kError && n.fields.size() < ex;
        if (ex != kNone && o.kind != Outcome::kBlocked && n.kind != Outcome::kBlocked &&
            !ours_before && !theirs_before) {
            for (size_t i = 0; i < ex; ++i)
                FUZZ_CHECK(o.fields[i] == n.fields[i], "field " + std::to_string(i) + ": " + where());
            // Both failing at line ex is plain agreement.
            const bool ours_at = o.kind == Outcome::kError && o.fields.size() == ex;
            const bool theirs_at = n.kind == Outcome::kError && n.fields.size() == ex;
            FUZZ_CHECK(theirs_at && (ours_at || n.rc == NGHTTP3_ERR_QPACK_HEADER_TOO_LARGE),
                       "nghttp3 did not reject line " + std::to_string(ex) +
                           " (a long string): " + where());
            throw Closed{};
        }
        FUZZ_CHECK(o.kind == n.kind, "outcomes differ: " + where());
        FUZZ_CHECK(o.fields.size() == n.fields.size(), "field counts differ: " + where());
        for (size_t i = 0; i < o.fields.size(); ++i)
            FUZZ_CHECK(o.fields[i] == n.fields[i], "field " + std::to_string(i) + ": " + where());
        if (n.rc == kNghttp3TooManyBlocked)
            FUZZ_CHECK(o.rc == QPACK_E_BLOCKED_STREAMS, "one stream too many blocked: " + where());
        if (o.kind == Outcome::kError) throw Closed{};
    }

    bool is_blocked(uint64_t id) const {
        for (const Blocked& b : blocked)
            if (b.stream == id) return true;
        return false;
    }

    void section(uint64_t id, const std::vector<uint8_t>& bytes) {
        if (owes || is_blocked(id)) return;
        const bool canonical = canon_sections;
        SectionWalk w = walk_section(bytes);
        const std::vector<uint8_t>& mine = canonical ? w.canon : bytes;
        const Outcome o = decode_ours(id, mine);
        nghttp3_qpack_stream_context* sctx = nullptr;
        FUZZ_CHECK(nghttp3_qpack_stream_context_new(&sctx, static_cast<int64_t>(id),
                                                    nghttp3_mem_default()) == 0,
                   "stream context");
        const Exact theirs_in(bytes.data(), bytes.size());
        size_t used = 0;
        Outcome n = decode_theirs(sctx, theirs_in.begin(), theirs_in.n, &used);
        if (n.kind == Outcome::kBlocked && blocked.size() >= max_blocked) {
            n.kind = Outcome::kError;
            n.rc = kNghttp3TooManyBlocked;
        }
        auto what = [&] {
            return std::string(canonical ? "canonical " : "") + "stream " + std::to_string(id) +
                   " section " + hex(bytes);
        };
        try {
            compare(o, n, w, what);
        } catch (const Closed&) {
            nghttp3_qpack_stream_context_del(sctx);
            throw;
        }
        if (o.kind == Outcome::kBlocked) {
            blocked.push_back({id, sctx,
                               std::make_unique<Exact>(bytes.data() + used, bytes.size() - used),
                               mine, std::move(w), canonical});
            return;
        }
        nghttp3_qpack_stream_context_del(sctx);
    }

    // The streams whose inserts have arrived, decoded again by both.
    void unblocked() {
        std::vector<uint64_t> named;
        uint64_t ids[8];
        for (size_t k; (k = qpack_decoder_unblocked(ours, ids, 8)) != 0;)
            named.insert(named.end(), ids, ids + k);
        std::vector<Blocked> ready;
        for (size_t i = 0; i < blocked.size();) {
            if (nghttp3_qpack_stream_context_get_ricnt(blocked[i].sctx) <= their_inserts()) {
                ready.push_back(std::move(blocked[i]));
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        std::vector<uint64_t> want;
        for (const Blocked& b : ready) want.push_back(b.stream);
        auto list = [](const std::vector<uint64_t>& v) {
            std::string s;
            for (uint64_t id : v) s += " " + std::to_string(id);
            return s;
        };
        FUZZ_CHECK(named == want, "unblocked:" + list(named) + ", nghttp3 can decode:" + list(want));
        FUZZ_CHECK(qpack_decoder_blocked_streams(ours) == blocked.size(),
                   "blocked streams: ours " + std::to_string(qpack_decoder_blocked_streams(ours)) +
                       ", nghttp3 " + std::to_string(blocked.size()));
        for (size_t i = 0; i < ready.size(); ++i) {
            Blocked& b = ready[i];
            const Outcome o = decode_ours(b.stream, b.ours);
            size_t used = 0;
            const Outcome n = decode_theirs(b.sctx, b.theirs->begin(), b.theirs->n, &used);
            auto what = [&] {
                return std::string(b.canonical ? "canonical " : "") + "unblocked stream " +
                       std::to_string(b.stream) + " section " + hex(b.ours);
            };
            try {
                compare(o, n, b.walk, what);
            } catch (const Closed&) {
                for (size_t j = i; j < ready.size(); ++j) nghttp3_qpack_stream_context_del(ready[j].sctx);
                throw;
            }
            nghttp3_qpack_stream_context_del(b.sctx);
        }
    }

    void cancel(uint64_t id) {
        if (owes) return;
        FUZZ_CHECK(qpack_decoder_cancel_stream(ours, id) == QPACK_OK, "cancel");
        FUZZ_CHECK(nghttp3_qpack_decoder_cancel_stream(theirs, static_cast<int64_t>(id)) == 0,
                   "nghttp3 cancel");
        for (size_t i = 0; i < blocked.size(); ++i) {
            if (blocked[i].stream == id) {
                nghttp3_qpack_stream_context_del(blocked[i].sctx);
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
                break;
            }
        }
        FUZZ_CHECK(qpack_decoder_blocked_streams(ours) == blocked.size(), "blocked after cancel");
    }

    // ------------------------------------------------- decoder streams

    void drain() {
        if (owes) return;
        std::vector<uint8_t> mine;
        uint8_t b[512];
        for (size_t n; (n = qpack_decoder_drain(ours, b, sizeof b)) != 0;) mine.insert(mine.end(), b, b + n);
        std::vector<uint8_t> their(nghttp3_qpack_decoder_get_decoder_streamlen(theirs));
        nghttp3_buf buf;
        buf.begin = buf.pos = buf.last = their.data();
        buf.end = their.data() + their.size();
        nghttp3_qpack_decoder_write_decoder(theirs, &buf);
        FUZZ_CHECK(buf.pos == their.data() && buf.last <= buf.end, "nghttp3 write_decoder");
        their.resize(static_cast<size_t>(buf.last - buf.pos));
        const std::vector<DsInstr> o = parse_decoder_stream(mine, "ours");
        std::vector<DsInstr> n = parse_decoder_stream(their, "nghttp3");
        if (max_capacity == 0) {   // N2
            n.erase(std::remove_if(n.begin(), n.end(), [](const DsInstr& i) { return i.type == 1; }),
                    n.end());
        }
        FUZZ_CHECK(o == n, "decoder streams differ: ours" + show(o) + ", nghttp3" + show(n));
    }
};

uint64_t stream_of(uint8_t s) { return 4 * uint64_t{s & 15u} + (s & 0x80 ? uint64_t{1} << 61 : 0); }

enum DOp : uint8_t { kDEncoder = 0, kDSection, kDCancel, kDDrain, kDCanonical, kDEncoder2, kDSection2 };

// ------------------------------------------------------------- seeds

struct Seed {
    ScriptWriter w;
    Seed(size_t capacity, uint8_t blocked, uint8_t flags) {
        w.control = {static_cast<uint8_t>(capacity >> 8), static_cast<uint8_t>(capacity), blocked,
                     flags};
    }
    void encoder(const std::vector<uint8_t>& b) {
        for (size_t at = 0; at < b.size(); at += 0xffff) {
            const size_t n = std::min<size_t>(b.size() - at, 0xffff);
            w.control.insert(w.control.end(), {0x80 | kDEncoder, static_cast<uint8_t>(n >> 8),
                                               static_cast<uint8_t>(n)});
            w.wire.insert(w.wire.end(), b.begin() + static_cast<ptrdiff_t>(at),
                          b.begin() + static_cast<ptrdiff_t>(at + n));
        }
    }
    void encoder(const char* h) { encoder(unhex(h)); }
    void section(uint8_t s, const std::vector<uint8_t>& b) {
        w.control.insert(w.control.end(), {kDSection, s, static_cast<uint8_t>(b.size() >> 8),
                                           static_cast<uint8_t>(b.size())});
        w.wire.insert(w.wire.end(), b.begin(), b.end());
    }
    void section(uint8_t s, const char* h) { section(s, unhex(h)); }
    void op(std::initializer_list<uint8_t> o) { w.control.insert(w.control.end(), o); }
};

// A story's header lists through nghttp3's encoder: the encoder stream
// before each section (acknowledged at once, as a peer would soon), or
// after it (late: the section blocks until it arrives).
std::vector<uint8_t> story_seed(const hpack_tools::story::Story& s, size_t capacity, bool late,
                                size_t max_bytes) {
    nghttp3_qpack_encoder* enc = nullptr;
    if (nghttp3_qpack_encoder_new(&enc, capacity, nghttp3_mem_default()) != 0) return {};
    nghttp3_qpack_encoder_set_max_dtable_capacity(enc, capacity);
    nghttp3_qpack_encoder_set_max_blocked_streams(enc, late ? 100 : 0);
    Seed seed(capacity, late ? 100 : 0, late ? 2 : 0);
    nghttp3_buf pbuf, rbuf, ebuf;
    nghttp3_buf_init(&pbuf);
    nghttp3_buf_init(&rbuf);
    nghttp3_buf_init(&ebuf);
    uint8_t stream = 0;
    for (const auto& c : s.cases) {
        std::vector<nghttp3_nv> nva;
        for (const auto& h : c.headers) {
            nghttp3_nv nv;
            nv.name = reinterpret_cast<uint8_t*>(const_cast<char*>(h.name.data()));
            nv.namelen = h.name.size();
            nv.value = reinterpret_cast<uint8_t*>(const_cast<char*>(h.value.data()));
            nv.valuelen = h.value.size();
            nv.flags = NGHTTP3_NV_FLAG_NONE;
            nva.push_back(nv);
        }
        nghttp3_buf_reset(&pbuf);
        nghttp3_buf_reset(&rbuf);
        nghttp3_buf_reset(&ebuf);
        const int64_t id = 4 * (stream & 15);
        if (nghttp3_qpack_encoder_encode(enc, &pbuf, &rbuf, &ebuf, id, nva.data(), nva.size()) != 0)
            break;
        std::vector<uint8_t> sec(pbuf.pos, pbuf.last);
        sec.insert(sec.end(), rbuf.pos, rbuf.last);
        const std::vector<uint8_t> es(ebuf.pos, ebuf.last);
        if (!late && !es.empty()) seed.encoder(es);
        seed.section(stream & 15, sec);
        if (late && !es.empty()) seed.encoder(es);
        seed.op({kDDrain});
        if (!late) nghttp3_qpack_encoder_ack_everything(enc);
        ++stream;
        if (seed.w.size() >= max_bytes) break;
    }
    nghttp3_buf_free(&pbuf, nghttp3_mem_default());
    nghttp3_buf_free(&rbuf, nghttp3_mem_default());
    nghttp3_buf_free(&ebuf, nghttp3_mem_default());
    nghttp3_qpack_encoder_del(enc);
    return seed.w.bytes();
}

size_t write_seeds(const std::string& dir) {
    std::vector<std::vector<uint8_t>> seeds;
    const char* b2 = "3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468";
    const char* b3 = "4a637573746f6d2d6b65790c637573746f6d2d76616c7565";
    const char* b5 = "810d637573746f6d2d76616c756532";
    {   // RFC 9204 B.1 to B.5, with the drains and the cancellation.
        Seed s(220, 1, 0);
        s.section(0, "0000510b2f696e6465782e68746d6c");
        s.op({kDDrain});
        s.encoder(b2);
        s.section(1, "03811011");
        s.op({kDDrain});
        s.encoder(b3);
        s.op({kDDrain});
        s.section(2, "050080c181");
        s.op({kDCancel, 2, kDDrain});
        s.encoder("02");
        s.op({kDDrain});
        s.encoder(b5);
        s.op({kDDrain});
        s.section(3, "060080818283");
        s.op({kDDrain});
        seeds.push_back(s.w.bytes());
    }
    {   // B.4 blocked, then resumed; the encoder stream in "whole" mode.
        Seed s(220, 4, 2);
        s.encoder(b2);
        s.encoder(b3);
        s.section(2, "050080c181");
        s.encoder("02");
        s.op({kDDrain});
        seeds.push_back(s.w.bytes());
    }
    {   // The same inserts cut inside instructions, Huffman-coded, and an
        // integer in a longer encoding given canonically.
        Seed s(4096, 2, 1);
        s.encoder("3fe11f" "c08cf1e3c2e5f2");
        s.encoder("3a6ba0ab90f4ff" "6825a849e95ba97d7f" "8925a849e95bb8e8b4bf");
        s.op({kDCanonical | 0x80});
        s.section(5, "04 00 80 81 ff8000");
        s.op({kDDrain});
        seeds.push_back(s.w.bytes());
    }
    {   // An integer in a longer encoding, and a long literal name.
        Seed s(0, 0, 0);
        s.section(1, "0000 ff8000");
        seeds.push_back(s.w.bytes());
        Seed t(0, 0, 0);
        std::vector<uint8_t> sec = unhex("0000 27fa01");   // 7 + 127 + 1 * 128: 262
        sec.insert(sec.end(), 262, 'a');
        sec.push_back(0);
        t.section(1, sec);
        seeds.push_back(t.w.bytes());
    }
    for (const auto& story : load_stories(true)) {
        for (const bool late : {false, true}) {
            std::vector<uint8_t> b = story_seed(story, late ? 4096 : 256, late, 4096);
            if (!b.empty()) seeds.push_back(std::move(b));
        }
    }
    size_t n = 0;
    for (const auto& b : seeds)
        if (!write_seed(dir, n++, b)) return 0;
    return n;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Script script(data, size);
    Control& c = script.control;
    const size_t capacity = table_size_of(c.u16());
    const size_t blocked = c.u8();
    const uint8_t flags = c.u8();
    Conn conn(capacity, blocked, flags);
    try {
        for (int ops = 0; ops < 4096; ++ops) {
            if (c.empty()) {
                if (script.wire_left()) conn.section(0, script.take(SIZE_MAX));
                break;
            }
            const uint8_t op = c.u8();
            switch (op & 7) {
            case kDEncoder:
            case kDEncoder2:
                conn.encoder(script.take(op & 0x80 ? c.u16() : c.u8()));
                break;
            case kDSection:
            case kDSection2: {
                const uint64_t id = stream_of(c.u8());
                conn.section(id, script.take(op & 0x80 ? c.u8() : c.u16()));
                break;
            }
            case kDCancel:
                conn.cancel(stream_of(c.u8()));
                break;
            case kDDrain:
                conn.drain();
                break;
            case kDCanonical:
                conn.canon_sections = op & 0x80;
                break;
            }
        }
        conn.drain();
    } catch (const Closed&) {
    }
    return 0;
}
