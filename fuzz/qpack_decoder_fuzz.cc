// The QPACK decoder (RFC 9204) on hostile input: one connection's encoder
// stream in fuzzer-chosen splits, field sections on stream ids decoded in
// batches, cancellations, drains of the decoder stream and retries of the
// streams unblocked, with the capacity, blocked-streams setting, limits
// and allocation failures chosen by the fuzzer.
//
// Input: the script framing of fuzz_common.h (u16 control length, control,
// wire), with this target's own operations.  The control stream starts
// with the setup: u16 SETTINGS_QPACK_MAX_TABLE_CAPACITY (table_size_of),
// u8 SETTINGS_QPACK_BLOCKED_STREAMS.  Then operations, an opcode octet
// whose low four bits modulo 9 select:
//
//   0 encoder    u8 length (u16 with opcode bit 7): the next octets of the
//                wire on the encoder stream, cut per the piece plan
//   1 section    u8 stream, u16 length: the next octets of the wire as the
//                stream's field section; opcode bit 7: decode one batch
//                only and leave the section in progress
//   2 fields     the next batch of the section in progress (HPACK_E_STATE
//                expected when there is none); bit 7: to its end
//   3 cancel     u8 stream: qpack_decoder_cancel_stream
//   4 drain      u8: qpack_decoder_drain with cap (bit 7: 512, else
//                (u8 & 31) + 1)
//   5 unblocked  u8: qpack_decoder_unblocked with max u8 % 8 + 1, then
//                each stream named decoded again from its section
//   6 limits     u8 x3: max_field, max_section, string limit (limit_of)
//   7 pieces     u8 n: n % 8 + 1 encoder piece lengths (0 = empty piece);
//                opcode bits 4-7: fields per qpack_decode_fields (0: 16)
//   8 fail       u8 k: the allocator fails once after k more allocations
//
// Stream u8 s: id 4 * (s & 31), plus 2^61 when bit 7 is set.  When the
// control stream is spent, the rest of the wire is a section on stream 0.
//
// Checked: the sanitizers (fields are copied as each batch returns, from an
// exact-size copy of the section and the decoder's own memory); a model of
// the dynamic table fed by an independent reading of the encoder stream
// (RFC 9204 3.2, 4.3: capacity, inserts, duplicates, eviction, entry size
// name + value + 32) agrees with the decoder's counts after every piece and
// with every field that references the table (name, value, memo kept per
// entry); every field is the one its line names (read here, 4.5.2-4.5.6:
// representation, static or absolute index from the Base, literal name and
// value); the Required Insert Count and Base computed here (4.5.1) decide
// whether a section must block, decode, or fail; the blocked streams are
// the ones this target counts, never above the setting, named by
// qpack_decoder_unblocked() exactly when their inserts arrived, in the
// order they blocked; the decoder stream parses as Section Acknowledgments
// and Stream Cancellations in the order they arose, then Insert Count
// Increments that are not 0 and never acknowledge more inserts than were
// received, and a full drain leaves the encoder knowing every insert;
// limits hold on every section and a limit error ends only its section;
// errors come from the documented ranges of each call and map to the
// documented HTTP/3 codes; after any other error the decoder stays failed;
// no block leaks, whatever allocation fails.

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "qpack.h"
#include "qpack_static_table.h"

using namespace hpack_fuzz;

namespace {

constexpr uint64_t kMemoMagic = 0x71706b6d656d6f21ull;
constexpr uint64_t kMax62 = (uint64_t{1} << 62) - 1;
constexpr size_t kOverhead = 32;   // RFC 9204 3.2.1

enum QOp : uint8_t {
    kQEncoder = 0, kQSection, kQFields, kQCancel, kQDrain, kQUnblocked, kQLimits, kQPieces,
    kQFail, kQOps
};

// ---------------------------------------------------- reading the wire

// An integer with an N-bit prefix (RFC 9204 4.1.1, RFC 7541 5.1), as the
// codec documents its acceptance: at most 62 bits in at most ten octets.
// st: 1 read, 0 the input ends first, -1 invalid.
struct Int {
    int st;
    uint64_t v;
    size_t len;
};

Int read_int(const uint8_t* p, size_t n, int prefix) {
    if (n == 0) return {0, 0, 0};
    const uint64_t max = (1u << prefix) - 1;
    uint64_t v = p[0] & max;
    if (v < max) return {1, v, 1};
    for (size_t i = 1; i <= 9; ++i) {
        if (i >= n) return {0, 0, 0};
        const uint8_t b = p[i];
        v += uint64_t{b & 0x7fu} << (7 * (i - 1));
        if (!(b & 0x80)) {
            if (v > kMax62) return {-1, 0, 0};
            return {1, v, i + 1};
        }
    }
    return {-1, 0, 0};
}

// A string literal (RFC 9204 4.1.2): H just above an N-bit length.  Read
// whole before its Huffman code is decoded (decode()), as an instruction
// is judged only once complete.
struct Str {
    int st;
    const uint8_t* data;
    size_t n;
    bool huffman;
    size_t len;   // octets of the line it took

    // false: an invalid Huffman code.
    bool decode(std::string* out) const {
        if (!huffman) {
            *out = str(data, n);
            return true;
        }
        std::vector<uint8_t> b(hpack_huffman_decode_capacity(n) + 1);
        const ptrdiff_t d = hpack_huffman_decode(data, n, b.data());
        if (d < 0) return false;
        *out = str(b.data(), static_cast<size_t>(d));
        return true;
    }
};

Str read_str(const uint8_t* p, size_t n, int prefix) {
    const Int l = read_int(p, n, prefix);
    if (l.st <= 0) return {l.st, nullptr, 0, false, 0};
    if (l.v > n - l.len) return {0, nullptr, 0, false, 0};
    const size_t len = static_cast<size_t>(l.v);
    return {1, p + l.len, len, (p[0] & (1u << prefix)) != 0, l.len + len};
}

// ------------------------------------------------- the dynamic table

struct Entry {
    std::string name, value;
    size_t size() const { return name.size() + value.size() + kOverhead; }
};

struct Model {
    size_t max_capacity = 0;
    size_t capacity = 0;
    size_t size = 0;
    uint64_t dropped = 0;            // absolute index of entries[0]
    std::deque<Entry> entries;       // oldest first
    std::vector<uint8_t> pending;    // a partial instruction

    uint64_t inserted() const { return dropped + entries.size(); }
    const Entry* at(uint64_t id) const {
        return id >= dropped && id - dropped < entries.size() ? &entries[id - dropped] : nullptr;
    }
    void evict_to(size_t target) {
        while (size > target) {
            size -= entries.front().size();
            entries.pop_front();
            ++dropped;
        }
    }
    bool insert(std::string name, std::string value) {
        Entry e{std::move(name), std::move(value)};
        const size_t need = e.size();
        if (need > capacity) return false;   // 3.2.2: the encoder's error
        evict_to(capacity - need);
        size += need;
        entries.push_back(std::move(e));
        return true;
    }
    // An entry by relative index on the encoder stream (4.3, 3.2.5).
    const Entry* relative(uint64_t v) const {
        return v < entries.size() ? &entries[entries.size() - 1 - v] : nullptr;
    }

    // One instruction at p (4.3): 1 applied (*used set), 0 incomplete,
    // -1 invalid.
    int apply(const uint8_t* p, size_t n, size_t* used) {
        const uint8_t b = p[0];
        if (b & 0x80) {   // Insert With Name Reference
            const Int i = read_int(p, n, 6);
            if (i.st <= 0) return i.st;
            if (i.len == n) return 0;
            const Str v = read_str(p + i.len, n - i.len, 7);
            if (v.st <= 0) return v.st;
            std::string name, value;
            if (!v.decode(&value)) return -1;
            if (b & 0x40) {
                if (i.v >= hpack::kQpackStaticEntries) return -1;
                const auto& s = hpack::kQpackStaticTable[i.v];
                name.assign(s.name, s.name_len);
            } else {
                const Entry* e = relative(i.v);
                if (!e) return -1;
                name = e->name;
            }
            if (!insert(name, value)) return -1;
            *used = i.len + v.len;
            return 1;
        }
        if (b & 0x40) {   // Insert With Literal Name
            const Str nm = read_str(p, n, 5);
            if (nm.st <= 0) return nm.st;
            if (nm.len == n) return 0;
            const Str v = read_str(p + nm.len, n - nm.len, 7);
            if (v.st <= 0) return v.st;
            std::string name, value;
            if (!nm.decode(&name) || !v.decode(&value)) return -1;
            if (!insert(name, value)) return -1;
            *used = nm.len + v.len;
            return 1;
        }
        const Int i = read_int(p, n, 5);
        if (i.st <= 0) return i.st;
        if (b & 0x20) {   // Set Dynamic Table Capacity (4.3.1)
            if (i.v > max_capacity) return -1;
            capacity = static_cast<size_t>(i.v);
            evict_to(capacity);
        } else {          // Duplicate (4.3.4)
            const Entry* e = relative(i.v);
            if (!e) return -1;
            if (!insert(e->name, e->value)) return -1;
        }
        *used = i.len;
        return 1;
    }

    // Octets the decoder accepted: every complete instruction must be valid.
    void feed(const uint8_t* p, size_t n) {
        pending.insert(pending.end(), p, p + n);
        size_t off = 0;
        while (off < pending.size()) {
            size_t used = 0;
            const int r = apply(pending.data() + off, pending.size() - off, &used);
            FUZZ_CHECK(r >= 0, "the decoder accepted an instruction the model rejects: " +
                                   hex(pending.data() + off, pending.size() - off));
            if (r == 0) break;
            off += used;
        }
        pending.erase(pending.begin(), pending.begin() + static_cast<ptrdiff_t>(off));
    }
};

// The prefix of a section (4.5.1): Required Insert Count and Base as the
// RFC's decoder computes them, when the section arrives: known is the
// count of a stream's blocked section, which the same encoded value stands
// for when it is begun again (0: none).  st: 1 valid, -1 invalid or
// truncated.
struct Prefix {
    int st;
    uint64_t ric, base;
    size_t len;
};

Prefix read_prefix(const std::vector<uint8_t>& s, size_t max_capacity, uint64_t inserts,
                   uint64_t known) {
    const Int enc = read_int(s.data(), s.size(), 8);
    if (enc.st <= 0) return {-1, 0, 0, 0};
    const Int delta = read_int(s.data() + enc.len, s.size() - enc.len, 7);
    if (delta.st <= 0) return {-1, 0, 0, 0};
    uint64_t ric = 0;
    if (enc.v != 0) {
        const uint64_t max_entries = max_capacity / 32;
        const uint64_t full_range = 2 * max_entries;
        if (enc.v > full_range) return {-1, 0, 0, 0};
        if (known && enc.v == known % full_range + 1) {
            ric = known;
        } else {
            const uint64_t max_value = inserts + max_entries;
            const uint64_t max_wrapped = max_value / full_range * full_range;
            ric = max_wrapped + enc.v - 1;
            if (ric > max_value) {
                if (ric <= full_range) return {-1, 0, 0, 0};
                ric -= full_range;
            }
            if (ric == 0) return {-1, 0, 0, 0};
        }
    }
    const bool sign = s[enc.len] & 0x80;
    if (sign && ric <= delta.v) return {-1, 0, 0, 0};
    return {1, ric, sign ? ric - delta.v - 1 : ric + delta.v, enc.len + delta.len};
}

// A field line (4.5.2 to 4.5.6) as the RFC lays it out, read here to know
// what the decoder must return for it.  st: 1 read, -1 invalid or cut.
struct Line {
    int st;
    size_t len;
    int rep;             // HPACK_REP_*
    int kind;            // 0 static, 1 dynamic, 2 literal name
    uint64_t index;      // the static index, or the absolute index
    std::string name;    // a literal name
    std::string value;   // a literal's value
};

Line read_line(const uint8_t* p, size_t n, uint64_t base) {
    Line l{-1, 0, HPACK_REP_WITHOUT_INDEXING, 0, 0, {}, {}};
    if (n == 0) return l;
    const uint8_t b = p[0];
    size_t at = 0;
    auto relative = [&](uint64_t i) -> bool {   // base - 1 - i, if any
        if (i >= base) return false;
        l.index = base - 1 - i;
        return true;
    };
    if (b & 0x80 || (b & 0xf0) == 0x10) {       // indexed
        const bool post = !(b & 0x80);
        const Int i = read_int(p, n, post ? 4 : 6);
        if (i.st <= 0) return l;
        l.rep = HPACK_REP_INDEXED;
        l.kind = !post && (b & 0x40) ? 0 : 1;
        if (l.kind == 0) l.index = i.v;
        else if (post) l.index = base + i.v;
        else if (!relative(i.v)) return l;
        l.st = 1;
        l.len = i.len;
        return l;
    }
    if ((b & 0xe0) == 0x20) {                   // literal name
        const Str nm = read_str(p, n, 3);
        if (nm.st <= 0 || !nm.decode(&l.name)) return l;
        l.rep = b & 0x10 ? HPACK_REP_NEVER_INDEXED : HPACK_REP_WITHOUT_INDEXING;
        l.kind = 2;
        at = nm.len;
    } else {                                    // name reference
        const bool post = (b & 0xc0) == 0;
        const Int i = read_int(p, n, post ? 3 : 4);
        if (i.st <= 0) return l;
        l.rep = (post ? b & 0x08 : b & 0x20) ? HPACK_REP_NEVER_INDEXED : HPACK_REP_WITHOUT_INDEXING;
        l.kind = !post && (b & 0x10) ? 0 : 1;
        if (l.kind == 0) l.index = i.v;
        else if (post) l.index = base + i.v;
        else if (!relative(i.v)) return l;
        at = i.len;
    }
    if (at == n) return l;
    const Str v = read_str(p + at, n - at, 7);
    if (v.st <= 0 || !v.decode(&l.value)) return l;
    l.st = 1;
    l.len = at + v.len;
    return l;
}

// -------------------------------------------------------- the errors

bool section_error(int rc) { return rc <= QPACK_E_INTEGER && rc >= QPACK_E_BLOCKED_STREAMS; }
bool encoder_error(int rc) { return rc <= QPACK_E_ENC_INTEGER && rc >= QPACK_E_ENC_HUFFMAN_PADDING; }
bool limit_error(int rc) { return rc <= QPACK_E_FIELD_TOO_LARGE && rc >= QPACK_E_STRING_TOO_LARGE; }

// rc is one of the documented errors, with its documented HTTP/3 code.
void check_error(int rc) {
    unsigned want = 0;
    if (section_error(rc)) want = QPACK_H3_DECOMPRESSION_FAILED;
    else if (encoder_error(rc)) want = QPACK_H3_ENCODER_STREAM_ERROR;
    else if (limit_error(rc)) want = QPACK_H3_EXCESSIVE_LOAD;
    else if (rc == HPACK_E_NOMEM || rc == HPACK_E_ARGUMENT || rc == HPACK_E_STATE)
        want = QPACK_H3_INTERNAL_ERROR;
    FUZZ_CHECK(want != 0, "an undocumented result " + std::to_string(rc));
    FUZZ_CHECK(qpack_h3_error(rc) == want,
               std::to_string(rc) + " maps to " + std::to_string(qpack_h3_error(rc)));
    FUZZ_CHECK(strcmp(qpack_strerror(rc), "unknown error") != 0, std::to_string(rc));
}

// ------------------------------------------------------ the connection

struct Expected {   // a decoder-stream instruction owed
    bool ack;       // Section Acknowledgment, else Stream Cancellation
    uint64_t stream, ric;
};

struct Blocked {
    uint64_t stream, ric;
};

// Ends the input: the connection is closed.
struct Closed {};

struct Conn {
    FaultyAllocator alloc;
    qpack_decoder_t* dec = nullptr;
    Model model;
    size_t max_blocked;
    size_t max_field = 0, max_section = 0;     // as set
    size_t sec_field = 0, sec_section = 0;     // the section's (set at begin)
    size_t batch = 16;
    std::vector<uint8_t> pieces{3, 1, 7, 64};

    // The section in progress.
    bool in_section = false;
    uint64_t stream = 0, ric = 0;
    std::unique_ptr<Exact> section;
    std::vector<uint8_t> lines;   // the section's bytes, for read_line()
    size_t line_at = 0;           // where the next field's line starts
    uint64_t base = 0;
    size_t section_total = 0;

    std::vector<Blocked> blocked;                       // in the order they blocked
    std::map<uint64_t, std::vector<uint8_t>> saved;     // blocked streams' sections
    std::deque<Expected> owed;
    std::vector<uint8_t> ds;                            // decoder stream not yet parsed
    uint64_t known_received = 0;                        // the encoder's view

    Conn(size_t capacity, size_t blocked_streams)
        : max_blocked(blocked_streams) {
        model.max_capacity = capacity;
        dec = qpack_decoder_create(&alloc.a, capacity, blocked_streams);
        FUZZ_CHECK(dec, "create failed");
    }
    ~Conn() {
        qpack_decoder_destroy(dec);
        FUZZ_CHECK(alloc.live == 0, std::to_string(alloc.live) + " blocks leaked");
    }

    // An error that ends the connection: the decoder must stay failed.
    [[noreturn]] void failed(int rc) {
        check_error(rc);
        FUZZ_CHECK(rc != HPACK_E_NOMEM || alloc.failed, "out of memory without an injected failure");
        FUZZ_CHECK(qpack_decoder_read_encoder(dec, nullptr, 0) == HPACK_E_STATE,
                   "a failed decoder read its encoder stream");
        static const uint8_t kEmpty[2] = {0, 0};
        FUZZ_CHECK(qpack_decode_begin(dec, 0, kEmpty, 2) == HPACK_E_STATE,
                   "a failed decoder began a section");
        qpack_field_t f;
        size_t n = 1;
        FUZZ_CHECK(qpack_decode_fields(dec, &f, 1, &n) == HPACK_E_STATE && n == 0,
                   "a failed decoder decoded");
        FUZZ_CHECK(qpack_decoder_cancel_stream(dec, 0) == HPACK_E_STATE,
                   "a failed decoder cancelled");
        throw Closed{};
    }
    void nomem_or(int rc) {
        if (rc == HPACK_E_NOMEM && alloc.failed) failed(rc);
    }

    void check_table() const {
        const uint64_t ins = qpack_decoder_insert_count(dec);
        const size_t size = qpack_decoder_table_size(dec);
        const size_t cap = qpack_decoder_table_capacity(dec);
        const size_t n = qpack_decoder_table_entries(dec);
        FUZZ_CHECK(ins == model.inserted() && size == model.size && cap == model.capacity &&
                       n == model.entries.size(),
                   "table: inserts " + std::to_string(ins) + " size " + std::to_string(size) +
                       " capacity " + std::to_string(cap) + " entries " + std::to_string(n) +
                       "; model " + std::to_string(model.inserted()) + " " +
                       std::to_string(model.size) + " " + std::to_string(model.capacity) + " " +
                       std::to_string(model.entries.size()));
        FUZZ_CHECK(size <= cap, "table above its capacity");
        FUZZ_CHECK(qpack_decoder_blocked_streams(dec) == blocked.size(),
                   "blocked streams " + std::to_string(qpack_decoder_blocked_streams(dec)) +
                       ", expected " + std::to_string(blocked.size()));
        FUZZ_CHECK(blocked.size() <= max_blocked, "more blocked streams than allowed");
    }

    void encoder(const std::vector<uint8_t>& bytes) {
        size_t off = 0, k = 0;
        while (off < bytes.size()) {
            size_t len = pieces[k++ % pieces.size()];
            if (len > bytes.size() - off) len = bytes.size() - off;
            const Exact piece(bytes.data() + off, len);
            const int rc = qpack_decoder_read_encoder(dec, piece.begin(), piece.n);
            nomem_or(rc);
            if (rc != QPACK_OK) {
                FUZZ_CHECK(encoder_error(rc), "read_encoder: " + std::to_string(rc));
                failed(rc);
            }
            model.feed(piece.begin(), piece.n);
            check_table();
            off += len;
        }
    }

    // One field as it came, checked against the model and the limits.
    void check_field(const qpack_field_t& f) {
        const std::string name = str(f.name, f.name_len), value = str(f.value, f.value_len);
        const std::string what = "field " + hex(reinterpret_cast<const uint8_t*>(name.data()), name.size()) +
                                 ": " + hex(reinterpret_cast<const uint8_t*>(value.data()), value.size()) +
                                 " rep " + std::to_string(f.representation) + " index " +
                                 std::to_string(f.index) + " static " + std::to_string(f.static_index);
        FUZZ_CHECK(f.representation == HPACK_REP_INDEXED ||
                       f.representation == HPACK_REP_WITHOUT_INDEXING ||
                       f.representation == HPACK_REP_NEVER_INDEXED, what);
        const bool indexed = f.representation == HPACK_REP_INDEXED;
        // The line this field came from, read here.
        const Line l = read_line(lines.data() + line_at, lines.size() - line_at, base);
        FUZZ_CHECK(l.st == 1, "a field from a line the model cannot read: " + what + "; line " +
                                  hex(lines.data() + line_at, lines.size() - line_at));
        line_at += l.len;
        FUZZ_CHECK(f.representation == l.rep, "not the line's representation: " + what);
        if (l.kind == 0) {
            FUZZ_CHECK(f.static_index == l.index + 1, "not the line's static entry: " + what);
        } else if (l.kind == 1) {
            FUZZ_CHECK(f.name_memo && f.index == l.index,
                       "not the line's dynamic entry " + std::to_string(l.index) + ": " + what);
        } else {
            FUZZ_CHECK(name == l.name && !f.static_index && !f.name_memo,
                       "not the line's literal name: " + what);
        }
        if (!indexed) FUZZ_CHECK(value == l.value, "not the line's value: " + what);
        if (f.static_index) {
            FUZZ_CHECK(f.static_index <= QPACK_STATIC_ENTRIES && f.index == f.static_index - 1, what);
            const auto& s = hpack::kQpackStaticTable[f.index];
            FUZZ_CHECK(name == std::string(s.name, s.name_len), "not the static name: " + what);
            if (indexed)
                FUZZ_CHECK(value == std::string(s.value, s.value_len), "not the static value: " + what);
            FUZZ_CHECK(!f.memo && !f.name_memo, what);
        } else if (f.name_memo) {
            // A dynamic entry, below the Required Insert Count, live now.
            FUZZ_CHECK(f.index < ric, "a reference at or above the Required Insert Count: " + what);
            const Entry* e = model.at(f.index);
            FUZZ_CHECK(e, "a reference to an entry the model does not have: " + what);
            FUZZ_CHECK(name == e->name, "not the entry's name: " + what);
            if (indexed) {
                FUZZ_CHECK(f.memo == f.name_memo, what);
                FUZZ_CHECK(value == e->value, "not the entry's value: " + what);
            } else {
                FUZZ_CHECK(!f.memo, what);
            }
            // The memo stays with its entry: zeroed at insertion, then ours.
            hpack_memo_t* m = const_cast<hpack_memo_t*>(f.name_memo);
            if (m->words[1] == kMemoMagic) {
                FUZZ_CHECK(m->words[0] == f.index, "the memo of another entry: " + what);
            } else {
                for (uint8_t b : m->bytes) FUZZ_CHECK(b == 0, "a new entry's memo is not zeroed");
                m->words[0] = f.index;
                m->words[1] = kMemoMagic;
            }
        } else {
            FUZZ_CHECK(!indexed && !f.memo && f.index == 0, "a literal name with an index: " + what);
        }
        const size_t n = name.size() + value.size();
        FUZZ_CHECK(!sec_field || n <= sec_field, "a field above max_field_size: " + what);
        section_total += n + kOverhead;
        FUZZ_CHECK(!sec_section || section_total <= sec_section, "a section above max_section_size");
    }

    // One batch of the section in progress; false once it ended.
    bool fields() {
        qpack_field_t f[16];
        size_t n = 99;
        const int rc = qpack_decode_fields(dec, f, batch, &n);
        FUZZ_CHECK(n <= batch, "more fields than asked for");
        if (!in_section) {
            FUZZ_CHECK(rc == HPACK_E_STATE && n == 0, "fields without a section: " + std::to_string(rc));
            return false;
        }
        // All of a batch's fields are valid until the next call.
        for (size_t i = 0; i < n; ++i) check_field(f[i]);
        if (rc == QPACK_OK) {
            FUZZ_CHECK(n >= 1, "QPACK_OK without a field");
            return true;
        }
        in_section = false;
        section.reset();
        if (rc == QPACK_SECTION_END) {
            if (ric) owed.push_back({true, stream, ric});
            return false;
        }
        nomem_or(rc);
        if (limit_error(rc)) {
            check_error(rc);
            // A stream error: the section ends, the decoder goes on.
            if (ric) owed.push_back({false, stream, 0});
            size_t m = 99;
            FUZZ_CHECK(qpack_decode_fields(dec, f, 1, &m) == HPACK_E_STATE && m == 0,
                       "the section went on after a limit error");
            return false;
        }
        FUZZ_CHECK(section_error(rc) && rc != QPACK_E_BLOCKED_STREAMS && rc != QPACK_E_INSERT_COUNT &&
                       rc != QPACK_E_BASE,
                   "decode_fields: " + std::to_string(rc));
        failed(rc);
    }

    // known: the Required Insert Count of the stream's section when it
    // blocked, for a stream qpack_decoder_unblocked() named (0: none).
    void begin(uint64_t id, const std::vector<uint8_t>& bytes, bool one_batch, uint64_t known = 0) {
        // another stream's section left unfinished is cancelled
        if (in_section && ric != 0 && stream != id) owed.push_back({false, stream, 0});
        in_section = false;
        section.reset(new Exact(bytes.data(), bytes.size()));
        for (const Blocked& b : blocked)
            if (b.stream == id) known = b.ric;
        const Prefix pre = read_prefix(bytes, model.max_capacity, model.inserted(), known);
        const int rc = qpack_decode_begin(dec, id, section->begin(), section->n);
        nomem_or(rc);
        const std::string what = "stream " + std::to_string(id) + " section " + hex(bytes) +
                                 ": " + std::to_string(rc);
        size_t at = SIZE_MAX;
        for (size_t i = 0; i < blocked.size(); ++i)
            if (blocked[i].stream == id) at = i;
        if (pre.st < 0) {
            FUZZ_CHECK(section_error(rc) && rc != QPACK_E_BLOCKED_STREAMS,
                       "a prefix the model rejects: " + what);
            failed(rc);
        }
        if (pre.ric > model.inserted()) {
            if (at == SIZE_MAX && blocked.size() >= max_blocked) {
                FUZZ_CHECK(rc == QPACK_E_BLOCKED_STREAMS, "one stream too many blocked: " + what);
                failed(rc);
            }
            FUZZ_CHECK(rc == QPACK_BLOCKED, "a section that must block: " + what);
            if (at == SIZE_MAX) blocked.push_back({id, pre.ric});
            else blocked[at].ric = pre.ric;
            saved[id] = bytes;
            section.reset();
            return;
        }
        FUZZ_CHECK(rc == QPACK_OK, "a section that must decode: " + what);
        if (at != SIZE_MAX) blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(at));
        saved.erase(id);
        in_section = true;
        stream = id;
        ric = pre.ric;
        section_total = 0;
        lines = bytes;
        line_at = pre.len;
        base = pre.base;
        sec_field = max_field;
        sec_section = max_section;
        if (one_batch) {
            fields();
        } else {
            while (fields()) {}
        }
    }

    void cancel(uint64_t id) {
        const int rc = qpack_decoder_cancel_stream(dec, id);
        nomem_or(rc);
        FUZZ_CHECK(rc == QPACK_OK, "cancel: " + std::to_string(rc));
        if (in_section && stream == id) {
            in_section = false;
            section.reset();
        }
        for (size_t i = 0; i < blocked.size(); ++i) {
            if (blocked[i].stream == id) {
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
                break;
            }
        }
        saved.erase(id);
        if (model.max_capacity) owed.push_back({false, id, 0});
    }

    // The decoder stream, parsed as the peer's encoder would.
    void drain(size_t cap) {
        uint8_t out[512];
        const size_t n = qpack_decoder_drain(dec, out, cap);
        FUZZ_CHECK(n <= cap, "drained past the cap");
        ds.insert(ds.end(), out, out + n);
        size_t off = 0;
        while (off < ds.size()) {
            const uint8_t b = ds[off];
            const int prefix = b & 0x80 ? 7 : 6;
            const Int v = read_int(ds.data() + off, ds.size() - off, prefix);
            FUZZ_CHECK(v.st >= 0, "an invalid decoder-stream integer: " + hex(ds));
            if (v.st == 0) break;
            if (b & 0xc0) {
                const bool ack = b & 0x80;
                FUZZ_CHECK(!owed.empty() && owed.front().ack == ack && owed.front().stream == v.v,
                           std::string(ack ? "a Section Acknowledgment" : "a Stream Cancellation") +
                               " for stream " + std::to_string(v.v) + " not owed");
                if (ack && owed.front().ric > known_received) known_received = owed.front().ric;
                owed.pop_front();
            } else {
                FUZZ_CHECK(v.v != 0, "an Insert Count Increment of 0");
                FUZZ_CHECK(owed.empty(), "an increment before the instructions queued before it");
                known_received += v.v;
            }
            FUZZ_CHECK(known_received <= model.inserted(),
                       "the decoder stream acknowledges " + std::to_string(known_received) +
                           " inserts of " + std::to_string(model.inserted()));
            off += v.len;
        }
        ds.erase(ds.begin(), ds.begin() + static_cast<ptrdiff_t>(off));
        if (owed.empty() && ds.empty() && cap - n >= 10) {
            FUZZ_CHECK(known_received == model.inserted(),
                       "a drain left inserts unacknowledged: " + std::to_string(known_received) +
                           " of " + std::to_string(model.inserted()));
        }
    }

    void unblocked(size_t max) {
        uint64_t ids[8];
        const size_t n = qpack_decoder_unblocked(dec, ids, max);
        FUZZ_CHECK(n <= max, "more unblocked streams than asked for");
        std::vector<uint64_t> want;
        std::vector<uint64_t> rics;
        for (size_t i = 0; i < blocked.size() && want.size() < max;) {
            if (blocked[i].ric <= model.inserted()) {
                want.push_back(blocked[i].stream);
                rics.push_back(blocked[i].ric);
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        FUZZ_CHECK(want == std::vector<uint64_t>(ids, ids + n),
                   "unblocked " + std::to_string(n) + " streams, expected " + std::to_string(want.size()));
        check_table();
        for (size_t i = 0; i < want.size(); ++i) {
            const uint64_t id = want[i];
            const std::vector<uint8_t> bytes = saved[id];
            saved.erase(id);
            begin(id, bytes, false, rics[i]);
            check_table();
        }
    }
};

uint64_t stream_of(uint8_t s) { return 4 * uint64_t{s & 31u} + (s & 0x80 ? uint64_t{1} << 61 : 0); }

// ------------------------------------------------------------- seeds

struct Seed {
    ScriptWriter w;
    Seed(size_t capacity, uint8_t blocked) {
        w.control = {static_cast<uint8_t>(capacity >> 8), static_cast<uint8_t>(capacity), blocked};
    }
    void encoder(const char* h) {
        const std::vector<uint8_t> b = unhex(h);
        w.control.insert(w.control.end(), {0x80 | kQEncoder, static_cast<uint8_t>(b.size() >> 8),
                                           static_cast<uint8_t>(b.size())});
        w.wire.insert(w.wire.end(), b.begin(), b.end());
    }
    void section(uint8_t s, const char* h) {
        const std::vector<uint8_t> b = unhex(h);
        w.control.insert(w.control.end(), {kQSection, s, static_cast<uint8_t>(b.size() >> 8),
                                           static_cast<uint8_t>(b.size())});
        w.wire.insert(w.wire.end(), b.begin(), b.end());
    }
    void op(std::initializer_list<uint8_t> o) { w.control.insert(w.control.end(), o); }
};

// RFC 9204 Appendix B (as tests/qpack_decoder_test.cc drives it).
size_t write_seeds(const std::string& dir) {
    std::vector<std::vector<uint8_t>> seeds;
    const char* b2 = "3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468";
    const char* b3 = "4a637573746f6d2d6b65790c637573746f6d2d76616c7565";
    const char* b5 = "810d637573746f6d2d76616c756532";
    {   // B.1 to B.5 with the drains and the cancellation.
        Seed s(220, 1);
        s.section(0, "0000510b2f696e6465782e68746d6c");
        s.op({kQDrain, 0x80});
        s.encoder(b2);
        s.section(1, "03811011");
        s.op({kQDrain, 0x80});
        s.encoder(b3);
        s.op({kQDrain, 0x80});
        s.section(2, "050080c181");
        s.op({kQCancel, 2, kQDrain, 0x80});
        s.encoder("02");
        s.op({kQUnblocked, 7, kQDrain, 0x80});
        s.encoder(b5);
        s.op({kQDrain, 0x80});
        s.section(3, "060080818283");
        s.op({kQDrain, 0x80});
        s.section(4, "060084");
        seeds.push_back(s.w.bytes());
    }
    {   // B.4 resumed: blocked, then named by unblocked, in pieces.
        Seed s(220, 4);
        s.op({kQPieces, 3, 1, 2, 0, 5, 0x10 | kQPieces, 0, 64});
        s.encoder(b2);
        s.encoder(b3);
        s.section(2, "050080c181");
        s.op({kQDrain, 3, kQUnblocked, 7});
        s.encoder("02");
        s.op({kQUnblocked, 7, kQDrain, 0x80, kQDrain, 0x80});
        seeds.push_back(s.w.bytes());
    }
    {   // Huffman inserts, one batch at a time, with limits.
        Seed s(220, 2);
        s.op({0x10 | kQPieces, 0, 64});
        s.encoder("3fbd01" "c08cf1e3c2e5f23a6ba0ab90f4ff" "6825a849e95ba97d7f" "8925a849e95bb8e8b4bf");
        s.op({kQSection | 0x80, 0});
        s.w.control.insert(s.w.control.end(), {0, 4});
        const std::vector<uint8_t> sec = unhex("03008081");
        s.w.wire.insert(s.w.wire.end(), sec.begin(), sec.end());
        s.op({kQFields, kQFields | 0x80, kQDrain, 0x80, kQLimits, 0x0f, 0x40, 0});
        s.section(5, "03811011");
        seeds.push_back(s.w.bytes());
    }
    {   // Limits changed inside a section (they apply from the next one).
        Seed s(0, 0);
        s.op({0x10 | kQPieces, 0, 1, kQLimits, 4, 0, 0, kQSection | 0x80, 0, 0, 4});
        const std::vector<uint8_t> sec = unhex("0000c2c0");
        s.w.wire.insert(s.w.wire.end(), sec.begin(), sec.end());
        s.op({kQLimits, 0, 0, 0, kQFields | 0x80});
        seeds.push_back(s.w.bytes());
    }
    {   // An allocation failure in the middle of B.2.
        Seed s(4096, 2);
        s.op({kQFail, 1});
        s.encoder(b2);
        s.section(1, "03811011");
        seeds.push_back(s.w.bytes());
    }
    size_t n = 0;
    for (const auto& b : seeds)
        if (write_seed(dir, n++, b) == false) return 0;
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
    Conn conn(capacity, blocked);
    try {
        for (int ops = 0; ops < 4096; ++ops) {
            if (c.empty()) {
                if (script.wire_left()) conn.begin(0, script.take(SIZE_MAX), false);
                break;
            }
            const uint8_t op = c.u8();
            switch ((op & 15) % kQOps) {
            case kQEncoder:
                conn.encoder(script.take(op & 0x80 ? c.u16() : c.u8()));
                break;
            case kQSection: {
                const uint64_t id = stream_of(c.u8());
                conn.begin(id, script.take(c.u16()), op & 0x80);
                break;
            }
            case kQFields:
                if (op & 0x80) {
                    while (conn.fields()) {}
                } else {
                    conn.fields();
                }
                break;
            case kQCancel:
                conn.cancel(stream_of(c.u8()));
                break;
            case kQDrain: {
                const uint8_t b = c.u8();
                conn.drain(b & 0x80 ? 512 : (b & 31) + 1);
                break;
            }
            case kQUnblocked:
                conn.unblocked(c.u8() % 8 + 1);
                break;
            case kQLimits: {
                conn.max_field = limit_of(c.u8());
                conn.max_section = limit_of(c.u8());
                qpack_decoder_set_limits(conn.dec, conn.max_field, conn.max_section);
                qpack_decoder_set_string_limit(conn.dec, limit_of(c.u8()));
                break;
            }
            case kQPieces: {
                const size_t n = c.u8() % 8 + 1;
                conn.pieces.assign(n, 0);
                for (uint8_t& l : conn.pieces) l = c.u8();
                bool any = false;
                for (uint8_t l : conn.pieces) any |= l != 0;
                if (!any) conn.pieces.push_back(1);   // progress
                conn.batch = op >> 4 ? op >> 4 : 16;
                break;
            }
            case kQFail:
                conn.alloc.countdown = c.u8();
                break;
            }
            conn.check_table();
        }
        // Whatever is owed drains whole and parses.
        conn.drain(512);
        conn.drain(512);
    } catch (const Closed&) {
    }
    return 0;
}
