// The encoder: full dynamic-table encoding with O(1) lookups.
//
// Each field is looked up in the static table (a compile-time hash) and in
// the dynamic table through two chained hash indexes, name+value and name,
// whose chains run newest to oldest by absolute insertion id.  Eviction
// never touches the indexes: a walk stops at the first id older than the
// oldest live entry, which every later link is too.  A chain is bounded by
// the entries the table can hold, and the seeded hash keeps outsiders from
// aiming at one.

#include <string.h>

#include "common.h"
#include "memory.h"
#include "chain_heads.h"
#include "dynamic_table.h"
#include "encoder.h"
#include "hash.h"
#include "huffman.h"
#include "indexing.h"
#include "integer.h"
#include "policy.h"
#include "static_table.h"
#include "string_literal.h"

namespace hpack {
namespace {

// nv_next of an entry not (yet) in the name+value index; no id and never
// live, as kNoId.
constexpr uint64_t kNotLinked = UINT64_MAX - 1;
// The name+value and name buckets, one each per ring slot, and their
// written bits (a quarter of an octet a slot, rounded up to one).
constexpr size_t kBucketBytesPerSlot = 2 * sizeof(uint64_t) + 1;
constexpr uint64_t kStaticNameKey = 0x8ebc6af09c88c6e3ull;

// Entries of a name's chain compared directly before the name+value index
// is consulted.
constexpr int kNameWalk = 8;

// Dynamic indexes below this take one octet (RFC 7541 6.1, a 7-bit prefix).
constexpr uint32_t kOneOctetIndexes = 127;
// An entry whose index takes two octets goes in again, newest, when it has
// been referred to kRefreshRefs times and its literal takes at most
// kRefreshOctets (refresh(); DESIGN.md, "Indexing policy": "Hot entries
// refreshed").
constexpr uint64_t kRefreshRefs = 12;
constexpr size_t kRefreshOctets = 16;

// Static names below this take one octet in the 4-bit prefix of a literal
// without indexing (RFC 7541 6.2.2), as in the 6-bit prefix of one with
// incremental indexing (6.2.1); from it on, one octet more.
constexpr uint32_t kFourBitNames = 15;

// A block's first kHints fields remember where each was found or entered
// last time (encode_field()): the same field at the same place in the next
// block is then one comparison with that entry.
constexpr size_t kHints = 32;
constexpr uint64_t kStaticHint = uint64_t{1} << 63;  // | first << 8 | index

// An entry's nv_hash keeps, in its top four bits, how often a block referred
// to the entry by an index of two octets since it went in or was last
// refreshed (saturating at 15); the name+value hash proper is the other 60
// bits (nv_hash_of()).
constexpr int kRefShift = 60;
constexpr uint64_t kRefOne = uint64_t{1} << kRefShift;
constexpr uint64_t kRefMax = uint64_t{15} << kRefShift;
constexpr uint64_t kHashBits = kRefOne - 1;

struct IndexLinks {
    uint64_t nv_hash;     // references; the hash when nv_next is not kNotLinked
    uint64_t nv_next;     // older entry in the same name+value bucket
    uint64_t name_next;   // older entry in the same name bucket
};

// What the walk of a name's chain (encode_field()) met.
struct NameWalk {
    uint64_t newest = kNoId;   // the newest entry with the name
    uint64_t last = kNoId;     // the chain's kNameWalk-th entry, if it has one
    bool     done = true;      // the whole chain was walked
};

// The encoder's table: each descriptor carries its links into the hash
// chains.
using EncoderTable = DynamicTable<IndexLinks>;

// encode_bound(): two size updates and the overrun of whole-word
// Huffman stores, then per field a representation octet with its index,
// the name and value with their length prefixes (a literal is never longer
// than raw).  Each field takes at most its share, so every string starts
// with room for itself raw and the overrun past that: the block is encoded
// in one pass (string_encode_in_block()).
constexpr size_t kBlockBound = 2 * kIntegerMaxBytes + kHuffmanBoundedOverrun;
static_assert(HPACK_BLOCK_BOUND == kBlockBound, "hpack.h's HPACK_BLOCK_BOUND");
// field_bound() is at most this plus name_len + value_len + value_literal_len
static_assert(HPACK_FIELD_BOUND == 3 * kIntegerMaxBytes, "hpack.h's HPACK_FIELD_BOUND");

inline size_t field_bound(const hpack_header_t& h) {
    size_t v = h.value_len + kIntegerMaxBytes;
    if (h.value_literal && h.value_literal_len > v) v = h.value_literal_len;
    return kIntegerMaxBytes + h.name_len + kIntegerMaxBytes + v;
}

inline uint64_t nv_hash_of(const uint8_t* value, size_t vl, uint64_t name_hash) {
    return hash_bytes(value, vl, name_hash) & kHashBits;
}

inline uint64_t refs_of(const IndexLinks& x) { return x.nv_hash >> kRefShift; }

// One more reference, counted up to 15.
inline void count_ref(IndexLinks& x) {
    x.nv_hash += x.nv_hash < kRefMax ? kRefOne : 0;
}

size_t string_len(const uint8_t* src, size_t len) { return string_length(src, len, 7); }

// RFC 7541 5.2: Huffman only when strictly shorter.  dst has exactly the
// room the result takes (hpack_string_encode()).
size_t string_encode(const uint8_t* src, size_t len, uint8_t* dst) {
    return string_encode_measured(src, len, dst, 0x00, 7);
}

// The same inside a block, where dst has room for the raw string and
// kHuffmanBoundedOverrun past it (kBlockBound): in one pass.
size_t string_encode_in_block(const uint8_t* src, size_t len, uint8_t* dst) {
    return string_encode_one_pass(src, len, dst, 0x00, 7);
}

}  // namespace
}  // namespace hpack

using namespace hpack;

struct hpack_encoder {
    hpack_encoder(const Allocator& a, const hpack_policy* p)
        : alloc(a), table(a), policy(p) {
        zero_words(&stats, sizeof(stats));
    }
    ~hpack_encoder() {
        history.release(alloc);
        names.release(alloc);
    }

    bool room_for(size_t bytes) {
        return !table.needs_room(bytes) || grow(bytes);
    }
    HPACK_NOINLINE bool grow(size_t bytes);
    void rebuild_index();
    void link_name(uint64_t id, uint32_t static_name, uint64_t name_hash);
    void link_nv(uint64_t id, uint64_t nv_hash);
    void link_nv_late(uint64_t id);
    uint64_t entry_name_hash(const EncoderTable::Entry& e, uint32_t* static_name) const;
    size_t nv_slot(uint64_t nv_hash) const { return nv_hash & bucket_mask; }
    size_t name_slot(uint64_t name_hash) const {
        return bucket_mask + 1 + (name_hash & bucket_mask);
    }
    // The newest entry of a name's chain (link_name() puts one there).
    uint64_t name_head(uint32_t static_name, uint64_t name_hash) const {
        return static_name ? static_heads.get(static_name) : buckets.get(name_slot(name_hash));
    }
    uint64_t static_name_hash(uint32_t first) const {
        return hash_mix(seed ^ first, kStaticNameKey);
    }
    // Whether e holds exactly this name and value.
    bool holds(const EncoderTable::Entry& e, const uint8_t* name, size_t nl,
               const uint8_t* value, size_t vl) const {
        return e.name_len == nl && e.value_len == vl && equal_bytes(table.value(e), value, vl) &&
               equal_bytes(table.name(e), name, nl);
    }
    uint64_t find_nv(uint64_t h, const uint8_t* name, size_t nl,
                     const uint8_t* value, size_t vl) const;
    uint64_t find_name(uint64_t h, const uint8_t* name, size_t nl) const;
    // What encode_repeats() wrote: the end of its references, how many of
    // them are to the dynamic table, their octets and the lengths of their
    // pre-encoded values.
    struct Repeats {
        uint8_t* end;
        uint64_t dynamic;
        size_t   plain;
        size_t   literal;
    };
    size_t encode_repeats(const hpack_header_t* headers, size_t n, Repeats* out);
    void uncount_repeats(size_t done);
    HPACK_INLINE uint8_t* encode_field(const hpack_header_t& h, uint8_t* p, uint64_t& hint);
    HPACK_NOINLINE uint8_t* encode_literal(const hpack_header_t& h, uint8_t* p,
                                           StaticName sn, uint64_t name_hash,
                                           NameWalk walk, uint64_t& hint);
    HPACK_INLINE uint8_t* reference(const hpack_header_t& h, uint8_t* p, uint64_t id,
                                    uint64_t& hint);
    HPACK_NOINLINE uint8_t* refresh(const hpack_header_t& h, uint8_t* p, uint64_t id,
                                    uint64_t& hint);
    HPACK_INLINE void insert(const uint8_t* name, size_t nl, const uint8_t* value, size_t vl,
                             uint32_t static_name, uint64_t name_hash, const uint64_t* nv_hash,
                             uint64_t walk_last, uint64_t& hint);
    uint64_t chain_last(uint32_t static_name, uint64_t name_hash) const;
    uint8_t* emit_size_updates(uint8_t* p);

    Allocator           alloc;
    EncoderTable        table;
    const hpack_policy* policy;
    uint64_t            seed = 0;
    // Name+value buckets, then name buckets, in the table's allocation;
    // before it has one, two empty buckets whose bits are none_written.
    ChainHeads          buckets;
    uint64_t            bucket_mask = 0;
    uint8_t             none_written = 0;
    // Name chains of the names the static table holds, by first entry: such
    // a name is found by the static lookup and needs no hash or compare.
    ChainHeads          static_heads;
    uint64_t            static_ids[kStaticEntries + 1];
    uint8_t             static_written[(kStaticEntries + 1 + 7) / 8];
    History             history;
    NameStats           names;
    // Per place in the block: 0, kStaticHint | first << 8 | static index,
    // or a dynamic entry's id + 1.  Only ever a guess, checked before use.
    // Read only once written, as the chain heads: a block writes the hints
    // of all its places up to kHints, so those written are the first
    // hints_known.
    uint64_t            hints[kHints];
    size_t              hints_known = 0;

    size_t   cap = 0;               // our own maximum
    size_t   peer_settings = HPACK_DEFAULT_TABLE_SIZE;
    bool     update_pending = false;
    size_t   update_min = 0;        // smallest size since the last block
    size_t   update_target = 0;     // the size to end at

    hpack_stats_t stats;  // cleared by the constructor
};

// Room in the table for an entry of bytes octets of name and value, the
// storage grown when it is short.  One bucket of each index per entry the
// table holds: chains of one on average when full, and little to clear
// for a new connection.  The buckets live in the table's allocation and
// are rebuilt with it.
bool hpack_encoder::grow(size_t bytes) {
    bool rebuild;
    if (!make_room_indexed(table, buckets, &bucket_mask, bytes, kBucketBytesPerSlot, &rebuild))
        return false;
    if (rebuild) rebuild_index();
    return true;
}

// The chains change with the number of buckets, and with them which
// entries lie past the walk (link_nv_late()): every entry goes into the
// name+value index.
void hpack_encoder::rebuild_index() {
    static_heads.attach(static_ids, static_written, kStaticEntries + 1);
    for (uint64_t id = table.first_id(); id < table.next_id(); ++id) {
        const auto& e = table.entry(id);
        uint32_t sn;
        const uint64_t name_hash = entry_name_hash(e, &sn);
        link_name(id, sn, name_hash);
        link_nv(id, e.extra.nv_next == kNotLinked
                        ? nv_hash_of(table.value(e), e.value_len, name_hash)
                        : e.extra.nv_hash & kHashBits);
    }
}

// The name hash encode_field() gives e's name; *static_name gets the name's
// first static entry, or 0.
uint64_t hpack_encoder::entry_name_hash(const EncoderTable::Entry& e,
                                        uint32_t* static_name) const {
    const uint8_t* name = table.name(e);
    *static_name = static_name_lookup(name, e.name_len).first;
    return *static_name ? static_name_hash(*static_name) : hash_bytes(name, e.name_len, seed);
}

void hpack_encoder::link_name(uint64_t id, uint32_t static_name, uint64_t name_hash) {
    table.entry(id).extra.name_next = static_name
                                          ? static_heads.exchange(static_name, id)
                                          : buckets.exchange(name_slot(name_hash), id);
}

// Chains run newest to oldest, so that a walk ends at the first entry
// evicted; an entry linked late goes past the newer ones.
void hpack_encoder::link_nv(uint64_t id, uint64_t nv_hash) {
    auto& x = table.entry(id).extra;
    x.nv_hash = nv_hash | (x.nv_hash & ~kHashBits);
    const size_t slot = nv_slot(nv_hash);
    uint64_t newer = buckets.get(slot);
    if (!table.live(newer) || newer < id) {
        x.nv_next = buckets.exchange(slot, id);
        return;
    }
    for (;;) {
        uint64_t& next = table.entry(newer).extra.nv_next;
        if (!table.live(next) || next < id) {
            x.nv_next = next;
            next = id;
            return;
        }
        newer = next;
    }
}

// An entry enters the name+value index only when the walk of its name's
// chain can no longer reach it, which most never do: the index is for
// names with many values, and a new connection's fields are then entered
// without hashing or linking their values (DESIGN.md, "Encoder": "An
// entry enters the name+value index only when the walk can no longer reach
// it").  It is reached when kNameWalk newer
// entries share its chain, and the walk that precedes each insertion met
// the entry that the insertion pushes out of reach (NameWalk::last).
void hpack_encoder::link_nv_late(uint64_t id) {
    const auto& e = table.entry(id);
    uint32_t sn;
    link_nv(id, nv_hash_of(table.value(e), e.value_len, entry_name_hash(e, &sn)));
}

uint64_t hpack_encoder::find_nv(uint64_t h, const uint8_t* name, size_t nl,
                                const uint8_t* value, size_t vl) const {
    for (uint64_t id = buckets.get(nv_slot(h)); table.live(id);
         id = table.entry(id).extra.nv_next) {
        const auto& e = table.entry(id);
        if ((e.extra.nv_hash & kHashBits) == h && holds(e, name, nl, value, vl)) return id;
    }
    return kNoId;
}

uint64_t hpack_encoder::find_name(uint64_t h, const uint8_t* name, size_t nl) const {
    for (uint64_t id = buckets.get(name_slot(h)); table.live(id);
         id = table.entry(id).extra.name_next) {
        const auto& e = table.entry(id);
        if (e.name_len == nl && equal_bytes(table.name(e), name, nl)) return id;
    }
    return kNoId;
}

uint8_t* hpack_encoder::emit_size_updates(uint8_t* p) {
    // RFC 7541 4.2: the smallest size reached since the last block, then
    // the final one.
    if (update_min < update_target && update_min < table.max_size()) {
        p += encode_integer(p, 0x20, 5, static_cast<uint32_t>(update_min));
        stats.evictions += table.set_max_size(update_min);
        ++stats.size_updates;
    }
    p += encode_integer(p, 0x20, 5, static_cast<uint32_t>(update_target));
    stats.evictions += table.set_max_size(update_target);
    ++stats.size_updates;
    update_pending = false;
    return p;
}

inline uint8_t* hpack_encoder::encode_field(const hpack_header_t& h, uint8_t* p,
                                            uint64_t& hint) {
    const uint8_t* name = h.name;
    const uint8_t* value = h.value;
    const size_t nl = h.name_len;
    const size_t vl = h.value_len;

    // Responses repeat their fields in the same order: the entry this
    // place of the last block used, if it is still there and holds exactly
    // this field, is the answer the lookups below would give (the table
    // holds no field twice, and nothing the policy keeps out; a field the
    // caller marks never-indexed goes the long way).
    if (hint != 0 && !(h.flags & HPACK_FIELD_NEVER_INDEX)) {
        if (hint & kStaticHint) {
            const uint32_t i = static_cast<uint32_t>(hint & 0xff);
            const StaticEntry& e = kStaticTable[i];
            if (e.name_len == nl && e.value_len == vl &&
                equal_bytes(reinterpret_cast<const uint8_t*>(e.value), value, vl) &&
                equal_bytes(reinterpret_cast<const uint8_t*>(e.name), name, nl) &&
                !is_never(h, policy->lookup_static(static_cast<uint32_t>(hint >> 8) & 0xff))) {
                *p++ = static_cast<uint8_t>(0x80 | i);
                ++stats.indexed_static;
                return p;
            }
        } else if (table.live(hint - 1)) {
            if (holds(table.entry(hint - 1), name, nl, value, vl))
                return reference(h, p, hint - 1, hint);
        }
    }

    // The static table first: a name it holds needs no hash (its dynamic
    // entries have their own chain) and its policy flags are an array read.
    // Other names ask the policy only when the dynamic table lacks them.
    const StaticName sn = static_name_lookup(name, nl);
    const bool never = is_never(h, sn.first ? policy->lookup_static(sn.first) : 0);
    if (sn.first && !never) {
        const uint32_t full = static_value_lookup(sn, value, vl);
        if (full) {
            *p++ = static_cast<uint8_t>(0x80 | full);
            ++stats.indexed_static;
            hint = kStaticHint | uint64_t{sn.first} << 8 | full;
            return p;
        }
    }

    // A field in the dynamic table is the common case on a warm
    // connection.  The first few entries of the name's chain are compared
    // directly, which spares hashing the value; only a name with more
    // entries than that (many values of one name) falls back to the
    // name+value index, which keeps hostile input O(1).  The table holds
    // nothing the policy keeps out, so a never-indexed field finds no value
    // there, only its name.
    const uint64_t name_hash = sn.first ? static_name_hash(sn.first)
                                        : hash_bytes(name, nl, seed);
    NameWalk walk;
    if (table.count() != 0) {
        int steps = 0;
        for (uint64_t id = name_head(sn.first, name_hash); table.live(id);
             id = table.entry(id).extra.name_next) {
            if (steps == kNameWalk) {
                walk.done = false;
                break;
            }
            if (++steps == kNameWalk) walk.last = id;
            const auto& e = table.entry(id);
            if (!sn.first && (e.name_len != nl || !equal_bytes(table.name(e), name, nl)))
                continue;
            if (walk.newest == kNoId) walk.newest = id;
            if (!never && e.value_len == vl && equal_bytes(table.value(e), value, vl))
                return reference(h, p, id, hint);
        }
    }
    return encode_literal(h, p, sn, name_hash, walk, hint);
}

// Everything but a fully indexed field: the name+value index when the name's
// chain was too long to walk, the policy, and the literal representation.
uint8_t* hpack_encoder::encode_literal(const hpack_header_t& h, uint8_t* p, StaticName sn,
                                       uint64_t name_hash, NameWalk walk, uint64_t& hint) {
    hint = 0;
    const uint8_t* name = h.name;
    const uint8_t* value = h.value;
    const size_t nl = h.name_len;
    const size_t vl = h.value_len;
    const unsigned pflags = sn.first ? policy->lookup_static(sn.first)
                                     : policy->lookup_other(name, nl);
    const bool never = is_never(h, pflags);

    uint64_t nv_hash = 0;
    bool have_nv_hash = false;
    if (!walk.done) {
        nv_hash = nv_hash_of(value, vl, name_hash);
        have_nv_hash = true;
        if (!never) {
            const uint64_t id = find_nv(nv_hash, name, nl, value, vl);
            if (id != kNoId) return reference(h, p, id, hint);
        }
        if (walk.newest == kNoId && !sn.first) walk.newest = find_name(name_hash, name, nl);
    }

    uint32_t name_index = sn.first;
    if (!name_index && walk.newest != kNoId) name_index = table.index_of_id(walk.newest);

    const size_t entry_size = nl + vl + HPACK_ENTRY_OVERHEAD;
    bool index = false;
    uint8_t bits;
    int prefix;
    if (never) {
        bits = 0x10;
        prefix = 4;
    } else {
        // A field that would take more than three quarters of the table
        // would evict nearly everything for one entry.  A volatile field
        // (by the policy's lists, or learned on this connection when it
        // would evict: NameStats) goes in when it recurs, or once when no
        // table holds its name, so that its later values can refer to the
        // name.  One whose static name the 4-bit prefix of a literal
        // without indexing makes an octet longer also goes in while the
        // table stays at most half full, so that it costs what stock
        // nginx's literal with incremental indexing costs and a long
        // connection's changing values (date) leave half of the table to
        // the fields that recur, which then evict nothing.  Any other field
        // goes in on sight (DESIGN.md, "Indexing policy").
        if (!(h.flags & HPACK_FIELD_NO_INDEX) &&
            entry_size <= table.max_size() - table.max_size() / 4) {
            const bool half = table.size() + entry_size <= table.max_size() / 2;
            if (!half && !names.active()) names.start(alloc);
            const bool on_sight = name_index == 0 || (half && sn.first >= kFourBitNames);
            if (names.active()) {
                // every literal counts, to learn its name
                if (!have_nv_hash) nv_hash = nv_hash_of(value, vl, name_hash);
                have_nv_hash = true;
                const bool recurs = history.seen_or_add(nv_hash, alloc);
                const bool learned = names.note(name_hash, recurs);
                // a learned name holds out only what would evict
                const bool evicts = table.size() + entry_size > table.max_size();
                index = on_sight || recurs ||
                        !((learned && evicts) || (pflags & HPACK_POLICY_VOLATILE));
            } else if (!(pflags & HPACK_POLICY_VOLATILE) || on_sight) {
                index = true;
            } else {
                if (!have_nv_hash) nv_hash = nv_hash_of(value, vl, name_hash);
                have_nv_hash = true;
                index = history.seen_or_add(nv_hash, alloc);
            }
            // a table that cannot grow leaves the field unindexed
            index = index && room_for(nl + vl);
        }
        bits = index ? 0x40 : 0x00;
        prefix = index ? 6 : 4;
    }

    p += encode_integer(p, bits, prefix, name_index);
    if (name_index) {
        ++stats.name_indexed;
    } else {
        ++stats.literal_names;
        p += string_encode_in_block(name, nl, p);
    }
    if (h.value_literal) {
        memcpy(p, h.value_literal, h.value_literal_len);
        p += h.value_literal_len;
    } else {
        p += string_encode_in_block(value, vl, p);
    }

    if (index)
        insert(name, nl, value, vl, sn.first, name_hash, have_nv_hash ? &nv_hash : nullptr,
               walk.last, hint);
    return p;
}

// Enters a field that has just been written as a literal with incremental
// indexing, with what the lookups learned of it.
inline void hpack_encoder::insert(const uint8_t* name, size_t nl, const uint8_t* value, size_t vl,
                           uint32_t static_name, uint64_t name_hash, const uint64_t* nv_hash,
                           uint64_t walk_last, uint64_t& hint) {
    uint32_t evicted;
    if (table.insert(name, nl, value, vl, &evicted)) {
        const uint64_t id = table.next_id() - 1;
        IndexLinks& x = table.entry(id).extra;
        x.nv_hash = 0;  // no references yet
        link_name(id, static_name, name_hash);
        if (nv_hash)
            link_nv(id, *nv_hash);
        else
            x.nv_next = kNotLinked;
        if (table.live(walk_last) && table.entry(walk_last).extra.nv_next == kNotLinked)
            link_nv_late(walk_last);
        ++stats.insertions;
        hint = table.next_id();  // the new entry's id + 1
    }
    stats.evictions += evicted;
}

// A field found in the dynamic table, entry id.  A reference whose index
// takes two octets is counted in the entry, and the kRefreshRefs-th
// refreshes the entry instead when its literal is short.
inline uint8_t* hpack_encoder::reference(const hpack_header_t& h, uint8_t* p, uint64_t id,
                                         uint64_t& hint) {
    const uint32_t index = table.index_of_id(id);
    if (HPACK_UNLIKELY(index >= kOneOctetIndexes)) {
        IndexLinks& x = table.entry(id).extra;
        if (refs_of(x) + 1 >= kRefreshRefs) {
            uint8_t* q = refresh(h, p, id, hint);
            if (q) return q;
        } else {
            count_ref(x);
        }
    }
    p += encode_integer(p, 0x80, 7, index);
    ++stats.indexed_dynamic;
    hint = id + 1;
    return p;
}

// Writes entry id's field again as a literal with incremental indexing, so
// that its newest copy has a one-octet index: on a connection whose table
// holds more than 64 entries, the fields every response repeats drift past
// them as new ones go in, and each reference then takes two octets
// (DESIGN.md, "Indexing policy": "Hot entries refreshed").  nullptr when the
// literal would be longer than kRefreshOctets or the table cannot take it;
// the entry's count starts again, so the question is not asked on every
// reference.
uint8_t* hpack_encoder::refresh(const hpack_header_t& h, uint8_t* p, uint64_t id,
                                uint64_t& hint) {
    IndexLinks& x = table.entry(id).extra;
    x.nv_hash &= kHashBits;
    const StaticName sn = static_name_lookup(h.name, h.name_len);
    const uint32_t name_index = sn.first ? sn.first : table.index_of_id(id);
    const size_t value_octets = h.value_literal ? h.value_literal_len
                                                : string_len(h.value, h.value_len);
    if ((h.flags & HPACK_FIELD_NO_INDEX) ||
        integer_length(6, name_index) + value_octets > kRefreshOctets ||
        !room_for(h.name_len + h.value_len))
        return nullptr;
    p += encode_integer(p, 0x40, 6, name_index);
    ++stats.name_indexed;
    if (h.value_literal) {
        memcpy(p, h.value_literal, h.value_literal_len);
        p += h.value_literal_len;
    } else {
        p += string_encode_in_block(h.value, h.value_len, p);
    }
    const uint64_t name_hash = sn.first ? static_name_hash(sn.first)
                                        : hash_bytes(h.name, h.name_len, seed);
    insert(h.name, h.name_len, h.value, h.value_len, sn.first, name_hash, nullptr,
           chain_last(sn.first, name_hash), hint);
    return p;
}

// The kNameWalk-th entry of a name's chain, which the next insertion into
// the chain pushes out of the walk's reach (NameWalk::last, for an
// insertion that follows no walk: a refresh).
uint64_t hpack_encoder::chain_last(uint32_t static_name, uint64_t name_hash) const {
    int steps = 0;
    for (uint64_t id = name_head(static_name, name_hash); table.live(id);
         id = table.entry(id).extra.name_next)
        if (++steps == kNameWalk) return id;
    return kNoId;
}

// ----------------------------------------------------------------- C ABI

HPACK_API hpack_encoder_t* hpack_encoder_create(const hpack_allocator_t* allocator,
                                                size_t max_table_size,
                                                const hpack_policy_t* policy) {
    if (max_table_size > HPACK_MAX_TABLE_SIZE) return nullptr;
    Allocator a(allocator);
    const size_t initial = max_table_size < HPACK_DEFAULT_TABLE_SIZE
                               ? max_table_size : HPACK_DEFAULT_TABLE_SIZE;
    // One allocation: the encoder and its table's first block (the encoder
    // is made for a first response block).
    const size_t first = EncoderTable::first_storage_size(max_table_size, kBucketBytesPerSlot);
    hpack_encoder_t* e =
        a.make_with_tail<hpack_encoder>(first, a, policy ? policy : default_policy());
    if (!e) return nullptr;
    // The seed only needs to differ between encoders and be unknown to the
    // peer: the object's address and the allocator's entropy suffice.
    e->seed = hash_mix(reinterpret_cast<uintptr_t>(e) ^ 0x9e3779b97f4a7c15ull,
                       reinterpret_cast<uintptr_t>(&e->stats) | 1);
    e->cap = max_table_size;
    e->table.lend(Allocator::tail_of(e), first, max_table_size);
    e->buckets.attach(nullptr, &e->none_written, 2);
    e->rebuild_index();
    // The peer's decoder starts at 4096 (RFC 7540 6.5.2); a smaller cap of
    // ours is signalled in the first block.
    e->table.set_max_size(initial);
    if (initial != HPACK_DEFAULT_TABLE_SIZE) {
        e->update_pending = true;
        e->update_min = e->update_target = initial;
    }
    return e;
}

HPACK_API void hpack_encoder_destroy(hpack_encoder_t* enc) {
    if (enc) enc->alloc.destroy(enc);
}

HPACK_API int hpack_encoder_set_peer_table_size(hpack_encoder_t* enc, size_t size) {
    if (size > UINT32_MAX) return HPACK_E_ARGUMENT;
    const size_t target = size < enc->cap ? size : enc->cap;
    enc->peer_settings = size;
    if (!enc->update_pending) {
        if (target == enc->table.max_size()) return HPACK_OK;
        enc->update_pending = true;
        enc->update_min = target;
    } else if (target < enc->update_min) {
        enc->update_min = target;
    }
    enc->update_target = target;
    if (enc->update_min > enc->table.max_size()) enc->update_min = enc->table.max_size();
    return HPACK_OK;
}

size_t hpack::encode_bound(const hpack_header_t* headers, size_t n) {
    size_t bound = kBlockBound;
    for (size_t i = 0; i < n; ++i) bound += field_bound(headers[i]);
    return bound;
}

// The leading fields of a block that are, each, what its place in the last
// block found: single references, written without touching the encoder's
// state but for the references counted in entries past the one-octet
// indexes, which a refused block takes back (uncount_repeats()).  Returns
// how many, and what they took in *out (Repeats).  A
// field is one of them when its hint's entry holds exactly its name and value: its lengths
// are then an entry's, so its arguments are valid, and the policy let that
// name and value be indexed when the hint was made (a static hint is made
// only for such a field, and the dynamic table holds no other).  The
// caller has room for n references.
size_t hpack_encoder::encode_repeats(const hpack_header_t* headers, size_t n,
                                     Repeats* out) {
    // the hints written, from the first on
    if (n > hints_known) n = hints_known;
    uint8_t* q = out->end;  // where the block starts
    size_t i = 0, octets = 0, literals = 0;
    uint64_t refs = 0;
    for (; i < n; ++i) {
        const hpack_header_t& h = headers[i];
        const uint64_t hint = hints[i];
        const uint8_t* name;
        const uint8_t* value;
        size_t nl, vl;
        uint32_t index;
        if (hint & kStaticHint) {
            index = static_cast<uint32_t>(hint & 0xff);
            const StaticEntry& e = kStaticTable[index];
            name = reinterpret_cast<const uint8_t*>(e.name);
            value = reinterpret_cast<const uint8_t*>(e.value);
            nl = e.name_len;
            vl = e.value_len;
        } else {
            const uint64_t id = hint - 1;
            if (!table.live(id)) break;
            auto& e = table.entry(id);
            name = table.name(e);
            value = table.value(e);
            nl = e.name_len;
            vl = e.value_len;
            index = table.index_of_id(id);
            ++refs;
        }
        if (nl != h.name_len || vl != h.value_len || (h.flags & HPACK_FIELD_NEVER_INDEX) ||
            !equal_bytes(value, h.value, vl) || !equal_bytes(name, h.name, nl)) {
            refs -= !(hint & kStaticHint);
            break;
        }
        if (HPACK_UNLIKELY(index >= kOneOctetIndexes)) {  // a dynamic entry
            IndexLinks& x = table.entry(hint - 1).extra;
            if (refs_of(x) + 1 >= kRefreshRefs) {  // due for a refresh: encode_field()
                --refs;
                break;
            }
            count_ref(x);
        }
        q += encode_integer(q, 0x80, 7, index);
        octets += nl + vl;
        literals += h.value_literal_len;
    }
    out->end = q;
    out->dynamic = refs;
    out->plain = octets;
    out->literal = literals;
    return i;
}

// A block refused after encode_repeats(): the references it counted,
// taken back (none reached kRefMax, where counting stops: an entry due
// for a refresh leaves the repeats).
void hpack_encoder::uncount_repeats(size_t done) {
    for (size_t i = 0; i < done; ++i) {
        const uint64_t hint = hints[i];
        if (hint & kStaticHint) continue;
        const uint64_t id = hint - 1;
        if (table.index_of_id(id) >= kOneOctetIndexes) table.entry(id).extra.nv_hash -= kRefOne;
    }
}

HPACK_API int hpack_encode(hpack_encoder_t* enc, const hpack_header_t* headers, size_t n,
                           uint8_t* out, size_t out_cap, size_t* out_len) {
    // A warm connection's block mostly repeats the last one: its leading
    // fields found where their hints say go before the argument pass, and
    // when that is all of them, nothing else is done (DESIGN.md,
    // "Encoder": "The leading fields that repeat the last block's in a loop
    // of their own before the argument pass").
    const size_t hinted = n < kHints ? n : kHints;
    hpack_encoder::Repeats r{out, 0, 0, 0};
    size_t done = 0;
    if (enc->hints_known != 0 && !enc->update_pending &&
        out_cap >= kBlockBound + hinted * kIntegerMaxBytes) {
        done = enc->encode_repeats(headers, hinted, &r);
    }
    uint8_t* p = r.end;
    size_t plain = r.plain;
    // The repeated fields' shares of the bound, but for what a pre-encoded
    // value longer than the raw one adds (at most its length).
    size_t bound = kBlockBound + done * HPACK_FIELD_BOUND + plain;

    // One pass checks the other fields' arguments and adds their shares of
    // the bound: below encode_bound() a block is refused, whatever
    // it would have taken.
    for (size_t i = done; i < n; ++i) {
        const hpack_header_t& h = headers[i];
        if (h.name_len == 0 || h.name_len > UINT32_MAX || h.value_len > UINT32_MAX) {
            enc->uncount_repeats(done);
            return HPACK_E_ARGUMENT;
        }
        bound += field_bound(h);
        plain += h.name_len + h.value_len;
    }
    if (out_cap < bound + r.literal) {
        for (size_t i = 0; i < done; ++i) {
            const hpack_header_t& h = headers[i];
            bound += field_bound(h) - (HPACK_FIELD_BOUND + h.name_len + h.value_len);
        }
        if (out_cap < bound) {
            enc->uncount_repeats(done);
            return HPACK_E_BUFFER;
        }
    }
    enc->stats.plain_bytes += plain;
    enc->stats.indexed_dynamic += r.dynamic;
    enc->stats.indexed_static += done - r.dynamic;
    if (enc->update_pending) p = enc->emit_size_updates(p);
    // The hint is a local: through a reference into the encoder, it is
    // reloaded after every octet written (DESIGN.md, "Encoder": "The
    // field's hint a local copy").
    const hpack_header_t* h = headers + done;
    uint64_t* slot = enc->hints + done;
    uint64_t* const known = enc->hints + enc->hints_known;
    for (const hpack_header_t* const end = headers + hinted; h < end; ++h, ++slot) {
        uint64_t hint = slot < known ? *slot : 0;
        p = enc->encode_field(*h, p, hint);
        *slot = hint;
    }
    if (enc->hints_known < hinted) enc->hints_known = hinted;
    for (size_t i = hinted; i < n; ++i) {
        uint64_t none = 0;  // fields past kHints keep no hint
        p = enc->encode_field(headers[i], p, none);
    }
    *out_len = static_cast<size_t>(p - out);
    enc->stats.wire_bytes += *out_len;
    ++enc->stats.blocks;
    return HPACK_OK;
}

HPACK_API size_t hpack_string_encoded_len(const uint8_t* src, size_t len) {
    return string_len(src, len);
}

HPACK_API size_t hpack_string_encode(const uint8_t* src, size_t len, uint8_t* dst) {
    return string_encode(src, len, dst);
}

HPACK_API size_t hpack_encoder_table_size(const hpack_encoder_t* enc) {
    return enc->table.size();
}

HPACK_API size_t hpack_encoder_table_entries(const hpack_encoder_t* enc) {
    return enc->table.count();
}

HPACK_API void hpack_encoder_stats(const hpack_encoder_t* enc, hpack_stats_t* stats) {
    *stats = enc->stats;
    // Every field is exactly one of four kinds: the total is not kept apart.
    stats->fields = stats->indexed_static + stats->indexed_dynamic +
                    stats->name_indexed + stats->literal_names;
}
