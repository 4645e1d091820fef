// The indexing policy's memory of one connection: what its encoder has
// sent as literals, from which it decides, per field, whether a literal
// goes into the dynamic table (DESIGN.md, "Indexing policy").  O(1) per
// field and bounded: a history of name+value hashes and, once the table
// is half full, a count per name of new and recurring values.

#ifndef HPACK_INDEXING_H
#define HPACK_INDEXING_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "memory.h"

namespace hpack {

// Name+value hashes of fields sent as literals: whether a field recurs.
// Fed by the volatile fields from the start and by every literal once the
// table is half full (NameStats::active()).  Two slots per
// set: a field pushes out only the older of its set, so that two fields
// met together never forget each other (direct-mapped, the second of two
// volatile fields of a block would take the first's slot now and then, and
// the first would not be indexed when it recurs).
//
// The slots follow what the connection shows, as the table does: 16 in
// the encoder, enough for the dates, ids and lengths of a connection's
// first responses, then 512 allocated apart once 8 new hashes have gone
// in, which remember a browser page's worth of etags and dates, so a
// reload finds them (DESIGN.md, "Indexing policy": "A history of 16
// slots, 512 once 8 hashes went in").  A slot keeps the
// hash's upper half, whose low bits also pick its set, so the slots are
// placed again when they move to the larger array.  If that allocation
// fails, the 16 slots go on.  A bitmap says which slots were ever written:
// a new encoder clears 8 octets instead of its slots (the same decision
// in DESIGN.md as ChainHeads).
class History {
public:
    static constexpr uint32_t kInline = 16;
    static constexpr uint32_t kLarge = 512;
    static constexpr uint32_t kGrowAfter = 8;  // new hashes

    History() { attach(inline_, inline_written_, kInline); }
    History(const History&) = delete;
    History& operator=(const History&) = delete;

    bool seen_or_add(uint64_t h, const Allocator& a) {
        const uint32_t tag = static_cast<uint32_t>(h >> 32);
        if (lookup(tag)) return true;
        if (added_ == kGrowAfter && size_ == kInline) grow(a);
        ++added_;
        insert(tag);
        return false;
    }
    void release(const Allocator& a) {
        if (slots_ != inline_) a.free(slots_);
    }

private:
    void attach(uint32_t* slots, uint64_t* written, uint32_t size) {
        slots_ = slots;
        written_ = written;
        size_ = size;
        zero_words(written_, (size + 63) / 64 * 8);
    }
    // The set of a tag: its first slot, whose bit and its partner's are
    // in one word (the index is even).
    uint32_t set_of(uint32_t tag) const { return (tag & (size_ / 2 - 1)) * 2; }
    bool lookup(uint32_t tag) const {
        const uint32_t i = set_of(tag);
        const uint64_t bits = written_[i / 64] >> (i % 64);
        return ((bits & 1) && slots_[i] == tag) || ((bits & 2) && slots_[i + 1] == tag);
    }
    void insert(uint32_t tag) {
        const uint32_t i = set_of(tag);
        uint64_t& word = written_[i / 64];
        if ((word >> (i % 64)) & 1) {
            slots_[i + 1] = slots_[i];
            word |= uint64_t{2} << (i % 64);
        }
        slots_[i] = tag;
        word |= uint64_t{1} << (i % 64);
    }
    // Moves the slots to kLarge, the older of each set first so that the
    // newer stays the newer; the inline slots are read where they are.
    void grow(const Allocator& a) {
        void* p = a.alloc(kLarge * sizeof(uint32_t) + kLarge / 8);
        if (!p) return;
        uint32_t* const slots = static_cast<uint32_t*>(p);
        attach(slots, reinterpret_cast<uint64_t*>(slots + kLarge), kLarge);
        for (uint32_t i = 0; i < kInline; i += 2) {
            const uint64_t bits = inline_written_[i / 64] >> (i % 64);
            if (bits & 2) insert(inline_[i + 1]);
            if (bits & 1) insert(inline_[i]);
        }
    }

    uint32_t* slots_;
    uint64_t* written_;
    uint32_t  size_ = 0;
    uint32_t  added_ = 0;
    uint64_t  inline_written_[(kInline + 63) / 64];
    uint32_t  inline_[kInline];  // read only once written
};

// Per name, how its values came as literals since the table was half
// full: new to the connection, or recurring.  A name whose values keep
// coming new (ids, hashes, per-response dates and lengths, whatever the
// policy's lists say of it) is volatile for the connection: a new value
// that would evict an entry goes without indexing, so that it does not
// push out what recurs (DESIGN.md, "Indexing policy": "Names learned
// volatile").  64 slots of four octets, direct-mapped on the name's hash,
// allocated when the table first passes half full, so that a connection
// whose table stays small (a server's usual responses) holds none.  The
// counts are halved when one reaches 15: recent behaviour weighs most.
class NameStats {
public:
    static constexpr uint32_t kSlots = 64;

    bool active() const { return slots_ != nullptr; }
    void start(const Allocator& a) {
        slots_ = static_cast<Slot*>(a.alloc(kSlots * sizeof(Slot)));
        if (slots_) zero_words(slots_, kSlots * sizeof(Slot));
    }
    void release(const Allocator& a) { a.free(slots_); }

    // Counts a literal value of the name, new or recurring, and says
    // whether the name was volatile before it: more than 4 new values for
    // each recurring one, and 4 more.
    bool note(uint64_t name_hash, bool recurred) {
        Slot& s = slots_[(name_hash >> 32) & (kSlots - 1)];
        const uint16_t tag = static_cast<uint16_t>(name_hash >> 48);
        if (s.tag != tag) s = Slot{tag, 0, 0};
        const bool is_volatile = s.fresh > 4 * s.recurred + 4;
        if (recurred) ++s.recurred; else ++s.fresh;
        if (s.fresh == 15 || s.recurred == 15) {
            s.fresh /= 2;
            s.recurred /= 2;
        }
        return is_volatile;
    }

private:
    struct Slot {
        uint16_t tag;
        uint8_t  fresh;
        uint8_t  recurred;
    };
    Slot* slots_ = nullptr;
};

}  // namespace hpack

#endif
