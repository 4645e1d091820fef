// The QPACK encoder (RFC 9204): one connection's field sections, with the
// dynamic table the peer allows, the encoder stream they need, and the
// peer's decoder stream.
//
// It shares HPACK's pieces rather than copying them: the table's storage
// (DynamicTable), the chained hash index over it (ChainHeads), the
// indexing policy's memory of the connection (History, NameStats), the
// never-index policy (hpack_policy), the integers and the Huffman coder.
// What QPACK adds is the bookkeeping of what the peer has: the Known
// Received Count, the sections not yet acknowledged and the lowest entry
// each refers to, which together say which entries may be evicted and
// which may be referred to without blocking a stream (docs/DESIGN.md,
// "QPACK encoder").

#include <string.h>

#include "qpack.h"

#include "common.h"
#include "buffer.h"
#include "chain_heads.h"
#include "dynamic_table.h"
#include "hash.h"
#include "huffman.h"
#include "indexing.h"
#include "integer.h"
#include "memory.h"
#include "policy.h"
#include "qpack_static_table.h"
#include "static_table.h"
#include "string_literal.h"

namespace hpack {
namespace {

// The name+value and name buckets, one each per ring slot, and their
// written bits (as the HPACK encoder's).
constexpr size_t kBucketBytesPerSlot = 2 * sizeof(uint64_t) + 1;

// Static indexes below this take one octet in the 4-bit prefix of a
// literal with a name reference (RFC 9204 4.5.4): the policy's "costs an
// octet more" test, as HPACK's kFourBitNames.
constexpr uint32_t kFourBitNames = 15;

// Insertions the section cannot refer to are not made while this many
// wait for the decoder's acknowledgement (admit()).
constexpr uint64_t kUnackedInserts = 8;

// An entry referred to in the oldest 1/kDrainingPart of the table is
// duplicated (duplicate()).
constexpr size_t kDrainingPart = 8;

// A section's first kHints fields remember what each was found as last
// time (encode_hinted()); a static entry's hint carries kStaticHint.
constexpr size_t kHints = 32;
constexpr uint64_t kStaticHint = uint64_t{1} << 63;

// Outstanding sections the encoder's own allocation holds.
constexpr size_t kSectionsFirst = 8;

// The decoder stream's longest instruction: a 62-bit integer.
constexpr size_t kMaxInstruction = kInteger62MaxBytes;

struct Links {
    uint64_t nv_hash;
    uint64_t nv_next;    // older entry in the same name+value bucket
    uint64_t name_next;  // older entry in the same name bucket
    uint64_t at;         // octets inserted before it
};

using QEncoderTable = DynamicTable<Links>;

// A field section that refers to the dynamic table and is not yet
// acknowledged or cancelled (RFC 9204 2.1.1, 2.1.2).
struct Section {
    uint64_t stream_id;
    uint64_t ric;      // its Required Insert Count
    uint64_t min_ref;  // the lowest entry it refers to
};

// The static table by name (its lowest index, which takes the fewest
// octets) and, through the entries that share the name, by name and
// value; built once.  Open addressing on a key of the name's length and
// three of its octets, which tells the table's names apart without hashing
// them whole (a name outside the table costs a probe or two and a compare).
class StaticIndex {
public:
    StaticIndex() {
        for (uint32_t i = kQpackStaticEntries; i-- > 0;) {  // lowest index first in each run
            const StaticEntry& e = kQpackStaticTable[i];
            const uint8_t* n = reinterpret_cast<const uint8_t*>(e.name);
            hpack_name_[i] = static_cast<uint8_t>(static_name_lookup(n, e.name_len).first);
            for (uint32_t s = key(n, e.name_len);; ++s) {
                uint8_t& slot = names_[s & kMask];
                if (slot && !same_name(kQpackStaticTable[slot - 1], n, e.name_len)) continue;
                next_[i] = slot;  // the name's entries, lowest index first
                slot = static_cast<uint8_t>(i + 1);
                break;
            }
        }
    }
    // 1 + the lowest index with this name, else 0.
    uint32_t find_name(const uint8_t* name, size_t nl) const {
        if (nl == 0) return 0;
        for (uint32_t s = key(name, nl);; ++s) {
            const uint32_t i = names_[s & kMask];
            if (!i || same_name(kQpackStaticTable[i - 1], name, nl)) return i;
        }
    }
    // 1 + the index of the entry with the name of first (find_name()) and
    // this value, else 0.
    uint32_t find_value(uint32_t first, const uint8_t* value, size_t vl) const {
        for (uint32_t i = first; i; i = next_[i - 1]) {
            const StaticEntry& e = kQpackStaticTable[i - 1];
            if (e.value_len == vl && equal_bytes(reinterpret_cast<const uint8_t*>(e.value), value, vl))
                return i;
        }
        return 0;
    }

    // The policy's flags for a name, first = find_name(name): a static
    // name's by HPACK's static index of it, without hashing the name.
    unsigned policy_flags(const hpack_policy& p, uint32_t first, const uint8_t* name,
                          size_t nl) const {
        if (!first) return p.lookup(name, nl);
        const uint32_t h = hpack_name_[first - 1];
        return h ? p.lookup_static(h) : p.lookup_other(name, nl);
    }

private:
    static constexpr uint32_t kMask = 255;
    static uint32_t key(const uint8_t* n, size_t nl) {
        return static_cast<uint32_t>(nl * 131 + n[0] * 31 + n[nl / 2] * 7 + n[nl - 1]);
    }
    static bool same_name(const StaticEntry& e, const uint8_t* n, size_t nl) {
        return e.name_len == nl && equal_bytes(reinterpret_cast<const uint8_t*>(e.name), n, nl);
    }
    uint8_t names_[kMask + 1] = {};
    uint8_t next_[kQpackStaticEntries] = {};
    uint8_t hpack_name_[kQpackStaticEntries] = {};  // HPACK's first entry of the name, or 0
};

const StaticIndex& qpack_static_index() {
    static const StaticIndex index;
    return index;
}

// A string literal with the H bit above an N-bit length prefix (RFC 9204
// 4.1.2; string_literal.h), or a field's pre-encoded value (7-bit
// prefix).
struct Coded {
    const uint8_t* s;
    size_t         len;
    const uint8_t* literal;      // hpack_header_t.value_literal, or NULL
    size_t         literal_len;

    static Coded of(const uint8_t* s, size_t len) { return Coded{s, len, nullptr, 0}; }
    static Coded value_of(const hpack_header_t& h) {
        return Coded{h.value, h.value_len, h.value_literal, h.value_literal_len};
    }
    // The octets put() writes: at most (the raw string's, no pass over
    // it), and exactly.
    size_t bound(int prefix) const {
        return literal ? literal_len : integer_length(prefix, static_cast<uint32_t>(len)) + len;
    }
    size_t length(int prefix) const { return literal ? literal_len : string_length(s, len, prefix); }
    // Writes it to dst, which has room octets, length() or more: in one
    // pass when they cover the Huffman coder's overrun past bound().
    size_t put(uint8_t* dst, uint8_t bits, int prefix, size_t room) const {
        if (literal) {  // 7-bit prefix, the H bit in place
            memcpy(dst, literal, literal_len);
            dst[0] = static_cast<uint8_t>(dst[0] | bits);
            return literal_len;
        }
        if (room >= string_one_pass_room(len, prefix))
            return string_encode_one_pass(s, len, dst, bits, prefix);
        return string_encode_measured(s, len, dst, bits, prefix);
    }
};

}  // namespace
}  // namespace hpack

using namespace hpack;

struct qpack_encoder {
    qpack_encoder(const Allocator& a, const hpack_policy* p)
        : alloc(a), table(a), policy(p), sections(a), statics(qpack_static_index()) {
        zero_words(&stats, sizeof(stats));
    }
    ~qpack_encoder() {
        history.release(alloc);
        names.release(alloc);
    }

    // What a section in progress knows.
    struct Pass {
        uint64_t stream_id;
        uint64_t base;          // the insert count when it began
        uint64_t ric = 0;       // 1 + the highest entry referred to
        uint64_t min_ref = kNoId;
        bool     may_refer;     // the section may refer to the table at all
        bool     may_block;     // ... and to entries not yet acknowledged
        uint8_t* out_end;       // the end of the section's buffer
        uint8_t* stream;        // the encoder-stream budget
        size_t   stream_used = 0;
        size_t   stream_cap;
        uint64_t hint = 0;      // what the field at hand was found as

        // The section refers to entry id, as a field or as a name.
        void note_ref(uint64_t id) {
            if (id + 1 > ric) ric = id + 1;
            if (id < min_ref) min_ref = id;
        }
    };

    bool room_for(size_t bytes) { return !table.needs_room(bytes) || grow(bytes); }
    HPACK_NOINLINE bool grow(size_t bytes);
    void rebuild_index();
    void link(uint64_t id, uint64_t name_hash, uint64_t nv_hash);
    uint64_t name_hash_of(const uint8_t* name, size_t nl) const {
        return hash_bytes(name, nl, seed);
    }
    uint64_t find_nv(uint64_t h, const hpack_header_t& f) const;
    uint64_t find_name(uint64_t h, const uint8_t* name, size_t nl) const;

    bool referable(const Pass& s, uint64_t id) const {
        return s.may_refer && table.live(id) && (id < known_received || s.may_block);
    }
    // evicts_only_free(), at once when the insertion evicts nothing.
    bool evictable_for(const Pass& s, size_t need, uint64_t keep = kNoId) const {
        if (need > table.max_size()) return false;
        return table.size() <= table.max_size() - need || evicts_only_free(s, need, keep);
    }
    bool evicts_only_free(const Pass& s, size_t need, uint64_t keep) const;
    void begin(Pass& s);
    uint8_t* encode_field(Pass& s, const hpack_header_t& h, uint8_t* p);
    uint8_t* encode_hinted(Pass& s, const hpack_header_t& h, uint8_t* p);
    uint8_t* refer(Pass& s, uint64_t id, uint8_t* p);
    bool admit(const Pass& s, const hpack_header_t& h, unsigned pflags, bool on_sight,
               uint64_t name_hash, uint64_t nv_hash, size_t entry_size);
    bool insert(Pass& s, const hpack_header_t& h, const Coded& value, uint32_t static_name,
                uint64_t name_id, uint64_t name_hash, uint64_t nv_hash);
    void entered(uint64_t name_hash, uint64_t nv_hash, uint32_t evicted);
    // Whether entry id is in the oldest kDrainingPart of the table: the
    // next insertions evict it.
    bool draining(uint64_t id) const {
        return bytes_in - table.entry(id).extra.at + table.max_size() / kDrainingPart >
               table.max_size();
    }
    uint8_t* duplicate(Pass& s, const hpack_header_t& h, uint64_t id, uint64_t name_hash,
                       uint64_t nv_hash, uint8_t* p);

    // The decoder stream.
    int apply(uint8_t first, uint64_t v);
    void released();
    size_t count_blocking(uint64_t stream_id, bool* this_one) const;

    Allocator           alloc;
    QEncoderTable       table;
    const hpack_policy* policy;
    uint64_t            seed = 0;
    ChainHeads          buckets;
    uint64_t            bucket_mask = 0;
    uint8_t             none_written = 0;
    History             history;
    NameStats           names;
    Buffer              sections;         // Section[], oldest first
    const StaticIndex&  statics;

    size_t   cap = 0;                  // our own maximum
    bool     settings = false;         // the peer's SETTINGS arrived
    uint64_t peer_max_capacity = 0;    // its SETTINGS_QPACK_MAX_TABLE_CAPACITY
    uint64_t max_blocked = 0;          // its SETTINGS_QPACK_BLOCKED_STREAMS
    bool     capacity_pending = false; // Set Dynamic Table Capacity unsent
    uint64_t known_received = 0;       // Known Received Count (2.1.4)
    uint64_t min_ref = kNoId;          // the lowest entry an outstanding
                                       // section refers to
    uint8_t  partial[kMaxInstruction]; // a decoder-stream instruction split
    size_t   partial_len = 0;
    int      error = 0;                // sticky
    bool     last_recorded = false;    // the last section is sections' last
                                       // and qpack_encoder_withdraw() may
                                       // take it
    // Per place in the section, for the first kHints: what the field there
    // was found as last time (kStaticHint | index, or a dynamic entry's id
    // + 1), the first hints_known of them written.  Only ever a guess,
    // checked before use.
    uint64_t hints[kHints];
    size_t   hints_known = 0;

    hpack_stats_t stats;
    uint64_t      stream_bytes = 0;
    uint64_t      bytes_in = 0;        // octets (RFC measure) ever inserted

    size_t outstanding() const { return sections.size() / sizeof(Section); }
    Section* section_at(size_t i) { return reinterpret_cast<Section*>(sections.data()) + i; }
    const Section* section_at(size_t i) const {
        return reinterpret_cast<const Section*>(sections.data()) + i;
    }
};

// Room in the table for an entry of bytes octets of name and value, the
// storage grown when it is short; the buckets live in the table's
// allocation and are rebuilt with it (as the HPACK encoder's).
bool qpack_encoder::grow(size_t bytes) {
    bool rebuild;
    if (!make_room_indexed(table, buckets, &bucket_mask, bytes, kBucketBytesPerSlot, &rebuild))
        return false;
    if (rebuild) rebuild_index();
    return true;
}

void qpack_encoder::rebuild_index() {
    for (uint64_t id = table.first_id(); id < table.next_id(); ++id) {
        const auto& e = table.entry(id);
        link(id, name_hash_of(table.name(e), e.name_len), e.extra.nv_hash);
    }
}

// Every entry is in both chains, newest first: a walk stops at the first
// evicted id, which every later link is too.
HPACK_INLINE void qpack_encoder::link(uint64_t id, uint64_t name_hash, uint64_t nv_hash) {
    Links& x = table.entry(id).extra;
    x.nv_hash = nv_hash;
    x.nv_next = buckets.exchange(nv_hash & bucket_mask, id);
    x.name_next = buckets.exchange(bucket_mask + 1 + (name_hash & bucket_mask), id);
}

uint64_t qpack_encoder::find_nv(uint64_t h, const hpack_header_t& f) const {
    if (table.count() == 0) return kNoId;
    for (uint64_t id = buckets.get(h & bucket_mask); table.live(id);
         id = table.entry(id).extra.nv_next) {
        const auto& e = table.entry(id);
        if (e.extra.nv_hash == h && e.name_len == f.name_len && e.value_len == f.value_len &&
            equal_bytes(table.value(e), f.value, f.value_len) &&
            equal_bytes(table.name(e), f.name, f.name_len))
            return id;
    }
    return kNoId;
}

uint64_t qpack_encoder::find_name(uint64_t h, const uint8_t* name, size_t nl) const {
    if (table.count() == 0) return kNoId;
    for (uint64_t id = buckets.get(bucket_mask + 1 + (h & bucket_mask)); table.live(id);
         id = table.entry(id).extra.name_next) {
        const auto& e = table.entry(id);
        if (e.name_len == nl && equal_bytes(table.name(e), name, nl)) return id;
    }
    return kNoId;
}

// Whether inserting an entry of need octets (RFC measure, at most the
// capacity) evicts only entries that may go (RFC 9204 2.1.1): acknowledged by the decoder, with
// no outstanding section and not this one referring to them, and not keep
// (an entry the section is about to refer to).  The entry an insertion
// names or duplicates may be among them (3.2.2: the decoder reads it
// before it evicts).
bool qpack_encoder::evicts_only_free(const Pass& s, size_t need, uint64_t keep) const {
    size_t size = table.size();
    uint64_t id = table.first_id();
    const uint64_t floor = min_ref < s.min_ref ? min_ref : s.min_ref;
    while (size > table.max_size() - need) {
        if (id >= known_received || id >= floor || id == keep) return false;
        size -= QEncoderTable::entry_size(table.entry(id));
        ++id;
    }
    return true;
}

// Streams with a section that refers to an entry the decoder may not have
// (its Required Insert Count above the Known Received Count), counted once
// each; *this_one says whether stream_id is one of them.
size_t qpack_encoder::count_blocking(uint64_t stream_id, bool* this_one) const {
    *this_one = false;
    size_t n = 0;
    const size_t count = outstanding();
    for (size_t i = 0; i < count; ++i) {
        const Section& a = *section_at(i);
        if (a.ric <= known_received) continue;
        if (a.stream_id == stream_id) *this_one = true;
        bool counted = false;
        for (size_t j = 0; j < i && !counted; ++j) {
            const Section& b = *section_at(j);
            counted = b.ric > known_received && b.stream_id == a.stream_id;
        }
        n += !counted;
    }
    return n;
}

void qpack_encoder::begin(Pass& s) {
    s.base = table.next_id();
    s.may_refer = settings && table.max_size() != 0 && outstanding() < QPACK_MAX_OUTSTANDING;
    s.may_block = false;
    if (s.may_refer && max_blocked != 0) {
        bool this_one;
        const size_t blocking = count_blocking(s.stream_id, &this_one);
        s.may_block = this_one || blocking < max_blocked;
    }
}

// An indexed field line for entry id: relative to the Base, or post-Base
// for an entry this section inserted (RFC 9204 4.5.2, 4.5.3).
uint8_t* qpack_encoder::refer(Pass& s, uint64_t id, uint8_t* p) {
    if (id < s.base)
        p += encode_integer62(p, 0x80, 6, s.base - 1 - id);
    else
        p += encode_integer62(p, 0x10, 4, id - s.base);
    s.note_ref(id);
    ++stats.indexed_dynamic;
    s.hint = id + 1;
    return p;
}

// The indexing policy of the HPACK encoder (encoder.cc, encode_literal();
// DESIGN.md, "Indexing policy"), on QPACK's table, when the section may
// refer to the entry it inserts: a field that would take more than three
// quarters of it stays out; a volatile field goes in when it recurs, or
// when no table holds its name; one whose static name a literal writes in
// one octet more goes in while the table is at most half full; and once
// the table has been half full, names learned volatile hold out the values
// that would evict.
//
// When it may not (no blocking allowed now), an insertion costs its
// literal twice, on the encoder stream and in the section, and pays only
// if the field comes again: a field goes in when it recurs, and not while
// kUnackedInserts insertions wait for the decoder's acknowledgement (a
// peer that never acknowledges gets no more) (DESIGN.md, "QPACK encoder":
// "Insertions when the section cannot refer to them").
HPACK_INLINE bool qpack_encoder::admit(const Pass& s, const hpack_header_t& h, unsigned pflags,
                          bool on_sight, uint64_t name_hash, uint64_t nv_hash,
                          size_t entry_size) {
    const size_t max = table.max_size();
    if ((h.flags & HPACK_FIELD_NO_INDEX) || entry_size > max - max / 4) return false;
    if (!s.may_block) {
        return table.next_id() - known_received < kUnackedInserts &&
               history.seen_or_add(nv_hash, alloc);
    }
    const bool half = table.size() + entry_size <= max / 2;
    if (!half && !names.active()) names.start(alloc);
    if (names.active()) {
        const bool recurs = history.seen_or_add(nv_hash, alloc);
        const bool learned = names.note(name_hash, recurs);
        const bool evicts = table.size() + entry_size > max;
        return on_sight || recurs || !((learned && evicts) || (pflags & HPACK_POLICY_VOLATILE));
    }
    if (!(pflags & HPACK_POLICY_VOLATILE) || on_sight) return true;
    return history.seen_or_add(nv_hash, alloc);
}

// Writes the insertion of h to the encoder stream and enters it, when the
// budget, the table's evictable entries and its storage allow: with the
// name of static entry static_name - 1, of entry name_id, or a literal
// name (RFC 9204 4.3.2, 4.3.3).
bool qpack_encoder::insert(Pass& s, const hpack_header_t& h, const Coded& value,
                           uint32_t static_name, uint64_t name_id, uint64_t name_hash,
                           uint64_t nv_hash) {
    const size_t need = h.name_len + h.value_len + HPACK_ENTRY_OVERHEAD;
    if (!evictable_for(s, need)) return false;
    const Coded name = Coded::of(h.name, h.name_len);
    size_t index_octets = 0;
    if (static_name)
        index_octets = integer_length(6, static_name - 1);
    else if (name_id != kNoId)
        index_octets = integer_length(6, static_cast<uint32_t>(table.next_id() - 1 - name_id));
    const size_t set_capacity =
        capacity_pending ? integer_length(5, static_cast<uint32_t>(table.max_size())) : 0;
    // Whether the instruction fits the budget: at once when it would raw,
    // with the coder's overrun (the usual budget), else by its length.
    const size_t room = s.stream_cap - s.stream_used;
    const size_t raw = set_capacity + (index_octets ? index_octets : name.bound(5)) +
                       value.bound(7) + kHuffmanBoundedOverrun;
    if (raw > room &&
        set_capacity + (index_octets ? index_octets : name.length(5)) + value.length(7) > room)
        return false;
    if (!room_for(h.name_len + h.value_len)) return false;

    uint8_t* q = s.stream + s.stream_used;
    if (capacity_pending) {
        q += encode_integer(q, 0x20, 5, static_cast<uint32_t>(table.max_size()));
        capacity_pending = false;
        ++stats.size_updates;
    }
    if (static_name)
        q += encode_integer(q, 0xc0, 6, static_name - 1);
    else if (name_id != kNoId)
        q += encode_integer62(q, 0x80, 6, table.next_id() - 1 - name_id);
    else
        q += name.put(q, 0x40, 5, static_cast<size_t>(s.stream + s.stream_cap - q));
    q += value.put(q, 0x00, 7, static_cast<size_t>(s.stream + s.stream_cap - q));
    s.stream_used = static_cast<size_t>(q - s.stream);

    uint32_t evicted;
    table.insert(h.name, h.name_len, h.value, h.value_len, &evicted);
    entered(name_hash, nv_hash, evicted);
    return true;
}

// The newest entry was inserted: its place in the insertion order, its
// links.
HPACK_INLINE void qpack_encoder::entered(uint64_t name_hash, uint64_t nv_hash, uint32_t evicted) {
    const uint64_t id = table.next_id() - 1;
    auto& e = table.entry(id);
    e.extra.at = bytes_in;
    bytes_in += QEncoderTable::entry_size(e);
    link(id, name_hash, nv_hash);
    ++stats.insertions;
    stats.evictions += evicted;
}

// Responses repeat their fields in the same places: the entry the field at
// this place was found as last time, if it still holds exactly this field
// and may be referred to, is what the lookups would find (the table holds
// no field the policy keeps out, and a static hint is made only for a
// field the policy let through), without hashing.  A field the caller
// marks never-indexed, or whose entry is draining, goes the long way.
uint8_t* qpack_encoder::encode_hinted(Pass& s, const hpack_header_t& h, uint8_t* p) {
    const uint64_t hint = s.hint;
    if (hint != 0 && !(h.flags & HPACK_FIELD_NEVER_INDEX)) {
        if (hint & kStaticHint) {
            const uint32_t i = static_cast<uint32_t>(hint);
            const StaticEntry& e = kQpackStaticTable[i];
            if (e.name_len == h.name_len && e.value_len == h.value_len &&
                equal_bytes(reinterpret_cast<const uint8_t*>(e.value), h.value, h.value_len) &&
                equal_bytes(reinterpret_cast<const uint8_t*>(e.name), h.name, h.name_len)) {
                ++stats.indexed_static;
                return p + encode_integer(p, 0xc0, 6, i);
            }
        } else if (referable(s, hint - 1) && !draining(hint - 1)) {
            const auto& e = table.entry(hint - 1);
            if (e.name_len == h.name_len && e.value_len == h.value_len &&
                equal_bytes(table.value(e), h.value, h.value_len) &&
                equal_bytes(table.name(e), h.name, h.name_len))
                return refer(s, hint - 1, p);
        }
    }
    s.hint = 0;
    return encode_field(s, h, p);
}

uint8_t* qpack_encoder::encode_field(Pass& s, const hpack_header_t& h, uint8_t* p) {
    const uint8_t* name = h.name;
    const size_t nl = h.name_len;
    // The static table, then the dynamic one.
    const uint32_t static_name = statics.find_name(name, nl);
    const unsigned pflags = statics.policy_flags(*policy, static_name, name, nl);
    const bool never = is_never(h, pflags);
    if (!never && static_name) {
        const uint32_t full = statics.find_value(static_name, h.value, h.value_len);
        if (full) {
            p += encode_integer(p, 0xc0, 6, full - 1);
            ++stats.indexed_static;
            s.hint = kStaticHint | (full - 1);
            return p;
        }
    }
    const uint64_t name_hash = name_hash_of(name, nl);
    const uint64_t nv_hash = hash_bytes(h.value, h.value_len, name_hash);
    uint64_t found = kNoId;
    if (!never && s.may_refer) {
        found = find_nv(nv_hash, h);
        if (found != kNoId && referable(s, found))
            return draining(found) && !(h.flags & HPACK_FIELD_NO_INDEX)
                       ? duplicate(s, h, found, name_hash, nv_hash, p)
                       : refer(s, found, p);
    }

    // A literal, and maybe an insertion first.
    const Coded value = Coded::value_of(h);
    uint64_t name_id = static_name || !s.may_refer ? kNoId : find_name(name_hash, name, nl);
    if (!never && found == kNoId && s.may_refer) {
        const size_t entry_size = nl + h.value_len + HPACK_ENTRY_OVERHEAD;
        const bool half = table.size() + entry_size <= table.max_size() / 2;
        const bool on_sight = (!static_name && name_id == kNoId) ||
                              (half && static_name > kFourBitNames);
        if (admit(s, h, pflags, on_sight, name_hash, nv_hash, entry_size) &&
            insert(s, h, value, static_name, name_id, name_hash, nv_hash)) {
            const uint64_t id = table.next_id() - 1;
            if (referable(s, id)) return refer(s, id, p);
            if (name_id != kNoId && !table.live(name_id)) name_id = kNoId;
        }
    }

    const uint8_t n_bit = never ? 0x20 : 0x00;
    if (static_name) {
        p += encode_integer(p, static_cast<uint8_t>(0x50 | n_bit), 4, static_name - 1);
        ++stats.name_indexed;
    } else if (name_id != kNoId && referable(s, name_id)) {
        if (name_id < s.base)
            p += encode_integer62(p, static_cast<uint8_t>(0x40 | n_bit), 4, s.base - 1 - name_id);
        else
            p += encode_integer62(p, static_cast<uint8_t>(n_bit >> 2), 3, name_id - s.base);
        s.note_ref(name_id);
        ++stats.name_indexed;
    } else {
        p += Coded::of(name, nl).put(p, static_cast<uint8_t>(0x20 | n_bit >> 1), 3,
                                     static_cast<size_t>(s.out_end - p));
        ++stats.literal_names;
    }
    return p + value.put(p, 0x00, 7, static_cast<size_t>(s.out_end - p));
}

// A reference to entry id, which the next insertions evict: the entry is
// duplicated first (RFC 9204 4.3.4, one or two octets on the encoder
// stream), and the copy, newest, referred to when the section may refer to
// it, so that a field that keeps coming keeps its entry without being
// inserted again in full (DESIGN.md, "QPACK encoder": "Entries about to
// be evicted duplicated").  The name and value are the field's, equal to
// the entry's (insert() may not read the table's own octets).
uint8_t* qpack_encoder::duplicate(Pass& s, const hpack_header_t& h, uint64_t id,
                                  uint64_t name_hash, uint64_t nv_hash, uint8_t* p) {
    const uint64_t relative = table.next_id() - 1 - id;
    const size_t octets = integer_length(5, static_cast<uint32_t>(relative));
    const size_t need = h.name_len + h.value_len + HPACK_ENTRY_OVERHEAD;
    // the copy is referred to when the section may block, else the entry
    if (s.stream_used + octets > s.stream_cap ||
        !evictable_for(s, need, s.may_block ? kNoId : id) ||
        !room_for(h.name_len + h.value_len))
        return refer(s, id, p);
    s.stream_used += encode_integer62(s.stream + s.stream_used, 0x00, 5, relative);
    uint32_t evicted;
    table.insert(h.name, h.name_len, h.value, h.value_len, &evicted);
    entered(name_hash, nv_hash, evicted);
    return refer(s, s.may_block ? table.next_id() - 1 : id, p);
}

// A decoder-stream instruction whose integer is v (RFC 9204 4.4).
int qpack_encoder::apply(uint8_t first, uint64_t v) {
    if (first & 0x80) {  // Section Acknowledgment: the stream's oldest
        const size_t n = outstanding();
        for (size_t i = 0; i < n; ++i) {
            Section* a = section_at(i);
            if (a->stream_id != v) continue;
            if (a->ric > known_received) known_received = a->ric;
            memmove(a, a + 1, (n - i - 1) * sizeof(Section));
            sections.truncate((n - 1) * sizeof(Section));
            released();
            return QPACK_OK;
        }
        return QPACK_E_DEC_ACK;
    }
    if (first & 0x40) {  // Stream Cancellation: all of the stream's
        const size_t n = outstanding();
        size_t kept = 0;
        for (size_t i = 0; i < n; ++i) {
            if (section_at(i)->stream_id != v) *section_at(kept++) = *section_at(i);
        }
        sections.truncate(kept * sizeof(Section));
        released();
        return QPACK_OK;
    }
    // Insert Count Increment
    if (v == 0 || v > table.next_id() - known_received) return QPACK_E_DEC_INCREMENT;
    known_received += v;
    return QPACK_OK;
}

// Sections went: the lowest entry still referred to.
void qpack_encoder::released() {
    min_ref = kNoId;
    const size_t n = outstanding();
    for (size_t i = 0; i < n; ++i) {
        if (section_at(i)->min_ref < min_ref) min_ref = section_at(i)->min_ref;
    }
}

// ----------------------------------------------------------------- C ABI

HPACK_API qpack_encoder_t* qpack_encoder_create(const hpack_allocator_t* allocator,
                                                size_t max_table_capacity,
                                                const hpack_policy_t* policy) {
    if (max_table_capacity > HPACK_MAX_TABLE_SIZE) return nullptr;
    Allocator a(allocator);
    // One allocation: the encoder, its table's first block and room for
    // the first outstanding sections (a connection's first section).
    const size_t first =
        (QEncoderTable::first_storage_size(max_table_capacity, kBucketBytesPerSlot) + 7) &
        ~size_t{7};  // the sections after it aligned
    qpack_encoder_t* e = a.make_with_tail<qpack_encoder>(first + kSectionsFirst * sizeof(Section),
                                                         a, policy ? policy : default_policy());
    if (!e) return nullptr;
    e->table.lend(Allocator::tail_of(e), first, max_table_capacity);
    e->sections.lend(Allocator::tail_of(e) + first, kSectionsFirst * sizeof(Section));
    // As the HPACK encoder's: differs between encoders, unknown to the peer.
    e->seed = hash_mix(reinterpret_cast<uintptr_t>(e) ^ 0x9e3779b97f4a7c15ull,
                       reinterpret_cast<uintptr_t>(&e->stats) | 1);
    e->cap = max_table_capacity;
    e->buckets.attach(nullptr, &e->none_written, 2);
    return e;
}

HPACK_API void qpack_encoder_destroy(qpack_encoder_t* enc) {
    if (enc) enc->alloc.destroy(enc);
}

HPACK_API int qpack_encoder_set_peer_settings(qpack_encoder_t* enc, uint64_t max_table_capacity,
                                              uint64_t blocked_streams) {
    if (enc->settings) return HPACK_E_STATE;
    enc->settings = true;
    enc->peer_max_capacity = max_table_capacity;
    enc->max_blocked = blocked_streams;
    const size_t capacity = max_table_capacity < enc->cap ? max_table_capacity : enc->cap;
    enc->table.permit(capacity);
    enc->table.set_max_size(capacity);
    enc->capacity_pending = capacity != 0;
    return QPACK_OK;
}

HPACK_API int qpack_encode(qpack_encoder_t* enc, uint64_t stream_id,
                           const hpack_header_t* headers, size_t n, uint8_t* out,
                           size_t out_cap, size_t* out_len, uint8_t* stream_out,
                           size_t stream_cap, size_t* stream_len) {
    *out_len = 0;
    *stream_len = 0;
    if (enc->error) return HPACK_E_STATE;
    if (stream_id > kInteger62Max) return HPACK_E_ARGUMENT;
    size_t bound = QPACK_SECTION_BOUND;
    for (size_t i = 0; i < n; ++i) {
        const hpack_header_t& h = headers[i];
        if (h.name_len == 0 || h.name_len > UINT32_MAX || h.value_len > UINT32_MAX)
            return HPACK_E_ARGUMENT;
        bound += HPACK_FIELD_BOUND + h.name_len + h.value_len + h.value_literal_len;
    }
    if (out_cap < bound) return HPACK_E_BUFFER;
    // The outstanding section this one may become, allocated first so that
    // a failure changes nothing.
    if (enc->settings && enc->table.max_size() != 0 &&
        !enc->sections.reserve(enc->sections.size() + sizeof(Section), true))
        return HPACK_E_NOMEM;

    enc->last_recorded = false;
    qpack_encoder::Pass s;
    s.stream_id = stream_id;
    s.out_end = out + out_cap;
    s.stream = stream_out;
    s.stream_cap = stream_out ? stream_cap : 0;
    enc->begin(s);
    // The field lines go after the room of the longest prefix, which is
    // written when the Required Insert Count is known.
    constexpr size_t kPrefix = QPACK_SECTION_BOUND;
    uint8_t* p = out + kPrefix;
    uint64_t plain = 0;
    const size_t hinted = n < kHints ? n : kHints;
    for (size_t i = 0; i < hinted; ++i) {
        s.hint = i < enc->hints_known ? enc->hints[i] : 0;
        p = enc->encode_hinted(s, headers[i], p);
        enc->hints[i] = s.hint;
        plain += headers[i].name_len + headers[i].value_len;
    }
    if (enc->hints_known < hinted) enc->hints_known = hinted;
    for (size_t i = hinted; i < n; ++i) {
        p = enc->encode_field(s, headers[i], p);
        plain += headers[i].name_len + headers[i].value_len;
    }

    // The prefix (RFC 9204 4.5.1).
    uint8_t prefix[kPrefix];
    size_t k;
    if (s.ric == 0) {
        prefix[0] = 0;
        prefix[1] = 0;
        k = 2;
    } else {
        const uint64_t max_entries = enc->peer_max_capacity / 32;
        k = encode_integer62(prefix, 0x00, 8, s.ric % (2 * max_entries) + 1);
        if (s.ric <= s.base)
            k += encode_integer62(prefix + k, 0x00, 7, s.base - s.ric);
        else
            k += encode_integer62(prefix + k, 0x80, 7, s.ric - s.base - 1);
        Section a{stream_id, s.ric, s.min_ref};
        enc->sections.append(reinterpret_cast<const uint8_t*>(&a), sizeof(a));
        if (s.min_ref < enc->min_ref) enc->min_ref = s.min_ref;
        enc->last_recorded = true;
    }
    const size_t lines = static_cast<size_t>(p - (out + kPrefix));
    memmove(out + k, out + kPrefix, lines);
    memcpy(out, prefix, k);
    *out_len = k + lines;
    *stream_len = s.stream_used;

    enc->stats.plain_bytes += plain;
    enc->stats.wire_bytes += *out_len;
    ++enc->stats.blocks;
    enc->stream_bytes += s.stream_used;
    return QPACK_OK;
}

HPACK_API int qpack_encoder_withdraw(qpack_encoder_t* enc) {
    if (enc->error) return HPACK_E_STATE;
    if (enc->last_recorded) {
        enc->last_recorded = false;
        enc->sections.truncate(enc->sections.size() - sizeof(Section));
        enc->released();
    }
    return QPACK_OK;
}

HPACK_API int qpack_encoder_read_decoder(qpack_encoder_t* enc, const uint8_t* data, size_t len) {
    if (enc->error) return HPACK_E_STATE;
    enc->last_recorded = false;
    const uint8_t* p = data;
    const uint8_t* const end = data + len;
    while (p < end || enc->partial_len) {
        // An instruction begun in an earlier call is completed octet by
        // octet (at most kMaxInstruction); the rest is read in place.
        const uint8_t* q;
        const uint8_t* e;
        if (enc->partial_len) {
            if (p == end) break;
            enc->partial[enc->partial_len++] = *p++;
            q = enc->partial;
            e = enc->partial + enc->partial_len;
        } else {
            q = p;
            e = end;
        }
        const int prefix = (q[0] & 0x80) ? 7 : 6;
        uint64_t v;
        const int r = decode_integer62(q, e, prefix, &v);
        if (r < 0) return enc->error = QPACK_E_DEC_INTEGER;
        if (r == kIntegerIncomplete) {
            if (enc->partial_len) continue;  // one more octet, if any
            memcpy(enc->partial, p, static_cast<size_t>(end - p));  // keep it
            enc->partial_len = static_cast<size_t>(end - p);
            break;
        }
        const uint8_t first = q[0];
        if (enc->partial_len)
            enc->partial_len = 0;
        else
            p += r;
        const int rc = enc->apply(first, v);
        if (rc < 0) return enc->error = rc;
    }
    return QPACK_OK;
}

HPACK_API size_t qpack_encoder_table_size(const qpack_encoder_t* enc) {
    return enc->table.size();
}

HPACK_API size_t qpack_encoder_table_capacity(const qpack_encoder_t* enc) {
    return enc->table.max_size();
}

HPACK_API size_t qpack_encoder_table_entries(const qpack_encoder_t* enc) {
    return enc->table.count();
}

HPACK_API uint64_t qpack_encoder_insert_count(const qpack_encoder_t* enc) {
    return enc->table.next_id();
}

HPACK_API uint64_t qpack_encoder_known_received_count(const qpack_encoder_t* enc) {
    return enc->known_received;
}

HPACK_API size_t qpack_encoder_blocked_streams(const qpack_encoder_t* enc) {
    bool unused;
    return enc->count_blocking(UINT64_MAX, &unused);
}

HPACK_API size_t qpack_encoder_outstanding_sections(const qpack_encoder_t* enc) {
    return enc->outstanding();
}

HPACK_API void qpack_encoder_stats(const qpack_encoder_t* enc, hpack_stats_t* stats,
                                   uint64_t* stream_bytes) {
    *stats = enc->stats;
    stats->fields = stats->indexed_static + stats->indexed_dynamic + stats->name_indexed +
                    stats->literal_names;
    if (stream_bytes) *stream_bytes = enc->stream_bytes;
}
