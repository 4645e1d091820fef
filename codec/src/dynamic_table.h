// The dynamic table (RFC 7541 2.3.2, 4): entries in insertion order, sized
// as name + value + 32, evicted oldest first.
//
// Layout: a ring of fixed-size descriptors (one per entry, power-of-two
// capacity, addressed by an absolute insertion id; each points at its
// name, so a reader needs no arena base; the decoder's slide down a window
// instead, see slot()) and one byte arena that holds every entry's name
// and value contiguously, oldest first.  New bytes go at the arena's end;
// when they do not fit, the live bytes (at most the table size) move to
// its start.  The arena is twice the table size, so a
// move happens at most once per table-size worth of insertions: O(1)
// amortized per octet, and a name or value is always one contiguous span
// that callers can point at.
//
// Extra is per-entry data kept beside the descriptor: the decoder's memo,
// the encoder's hash chains.

#ifndef HPACK_DYNAMIC_TABLE_H
#define HPACK_DYNAMIC_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common.h"
#include "memory.h"

namespace hpack {

// A descriptor: where an entry's name and value are (in the arena, the
// value right after the name) and the owner's Extra.  Packed (16 octets
// before Extra): a name pointer and two 32-bit lengths; the encoder's.  A
// field image (32): name, name length, value, value length, laid out as
// the first members of hpack_field_t, so that the decoder copies them into
// a field as one block (DESIGN.md, "Measurements that decided": "Decoder
// and table: the decoder's descriptor as a field image"), and the decoder's descriptor is 64
// octets, which the ring addresses with one shift.
template <class Extra, bool FieldImage>
struct TableEntry;

template <class Extra>
struct TableEntry<Extra, false> {
    uint8_t* name;
    uint32_t name_len;
    uint32_t value_len;
    Extra    extra;

    const uint8_t* value() const { return name + name_len; }
    void place(uint8_t* at, size_t nl, size_t vl) {
        name = at;
        name_len = static_cast<uint32_t>(nl);
        value_len = static_cast<uint32_t>(vl);
    }
    void move_back(size_t d) { name -= d; }
};

template <class Extra>
struct TableEntry<Extra, true> {
    uint8_t* name;
    size_t   name_len;
    uint8_t* value_at;
    size_t   value_len;
    Extra    extra;

    const uint8_t* value() const { return value_at; }
    void place(uint8_t* at, size_t nl, size_t vl) {
        name = at;
        name_len = nl;
        value_at = at + nl;
        value_len = vl;
    }
    void move_back(size_t d) {
        name -= d;
        value_at -= d;
    }
};

// Window (the decoder's table) lays the descriptors out newest first, in
// a window of slots_for(capacity) that they slide down; see slot().
template <class Extra, bool FieldImage = false, bool Window = false>
class DynamicTable {
public:
    using Entry = TableEntry<Extra, FieldImage>;
    static size_t entry_size(const Entry& e) {
        return e.name_len + e.value_len + HPACK_ENTRY_OVERHEAD;
    }

    explicit DynamicTable(const Allocator& a) : alloc_(a) {}
    ~DynamicTable() {
        if (owned_) alloc_.free(block_);
    }
    DynamicTable(const DynamicTable&) = delete;
    DynamicTable& operator=(const DynamicTable&) = delete;

    // Makes room for a table of up to max_size; keeps the entries.  False on
    // allocation failure (the table is unchanged).  One allocation holds the
    // ring, extra_per_slot octets per ring slot for the owner (*extra, 8-octet
    // aligned; set only when the storage was replaced, else nullptr) and the
    // arena: a new connection pays for one allocation, not three.
    // storage, when given, is storage_size(max_size, extra_per_slot) octets
    // the caller allocated with the table's owner (one allocation for a new
    // connection's whole object) and frees with it.
    bool reserve(size_t max_size, size_t extra_per_slot = 0, void** extra = nullptr,
                 void* storage = nullptr);
    static size_t storage_size(size_t max_size, size_t extra_per_slot) {
        const size_t ring_cap = ring_capacity_for(max_size);
        return kRingAlign - 1 + ring_bytes(slots_for(ring_cap)) + ring_cap * extra_per_slot +
               2 * max_size;
    }
    // The most entries the table can hold.
    uint64_t ring_capacity() const { return ring_mask_ + 1; }

    size_t size() const { return size_; }
    size_t max_size() const { return max_size_; }
    uint32_t count() const { return static_cast<uint32_t>(next_id_ - first_id_); }

    // Absolute ids: first_id() is the oldest live entry, next_id() the one
    // the next insertion gets.
    uint64_t first_id() const { return first_id_; }
    uint64_t next_id() const { return next_id_; }
    bool live(uint64_t id) const { return id >= first_id_ && id < next_id_; }

    Entry& entry(uint64_t id) { return ring_[slot(id)]; }
    const Entry& entry(uint64_t id) const { return ring_[slot(id)]; }
    const uint8_t* name(const Entry& e) const { return e.name; }
    const uint8_t* value(const Entry& e) const { return e.value(); }

    // A snapshot for a run of lookups that insert nothing (Window only):
    // the newest entry, which the others follow.
    struct View {
        Entry*   newest;
        uint32_t count;

        // The entry d places older than the newest (HPACK index 62 + d),
        // d < count.
        Entry& by_age(uint32_t d) const { return newest[d]; }
    };
    View view() {
        static_assert(Window, "a view needs the window's layout");
        // One past the last slot when the table is empty (not read then).
        // Opaque, so that GCC keeps the pointer rather than its two terms.
        Entry* newest = ring_ + (base_ + 1 - next_id_);
        __asm__("" : "+r"(newest));
        return View{newest, count()};
    }

    // HPACK index (62 = newest) <-> absolute id.
    uint64_t id_of_index(uint32_t index) const { return next_id_ - (index - 61); }
    uint32_t index_of_id(uint64_t id) const {
        return static_cast<uint32_t>(next_id_ - id) + 61;
    }

    // Sets the maximum size (<= the reserved size) and evicts to fit.
    // Returns the number of entries evicted.
    uint32_t set_max_size(size_t max_size) {
        max_size_ = max_size;
        return evict_to(max_size);
    }

    // Evicts oldest entries until size() <= target.  Returns how many.
    uint32_t evict_to(size_t target) {
        uint32_t n = 0;
        while (size_ > target) {
            size_ -= entry_size(entry(first_id_));
            ++first_id_;
            ++n;
        }
        // The bytes of evicted entries stay where they are until a
        // compaction: a batch of decoded fields may still point at them.
        return n;
    }

    // True when inserting an entry of name_len + value_len == bytes moves
    // no byte of the arena and no descriptor, and reuses no descriptor of
    // an entry with an id of since or later.
    bool insert_moves_nothing(size_t bytes, uint64_t since) const {
        if (arena_tail_ + bytes > arena_cap_) return false;
        if (Window) return !window_full();
        return next_id_ - since <= ring_mask_;
    }

    // Adds an entry, evicting what it needs (RFC 7541 4.4).  An entry larger
    // than the maximum size empties the table and is not added: returns
    // nullptr then.  name and value must not point into this table (the
    // arena may move).  *evicted gets the number of evictions.
    //
    // Inlined into its callers (the decoder's field parser, the encoder's
    // indexing), where GCC would keep it a call, with its frame and the
    // parser's state saved around it (DESIGN.md, "Measurements that
    // decided": "Decoder and table: `DynamicTable::insert()` inlined into
    // its callers").
    HPACK_INLINE Entry* insert(const uint8_t* name, size_t name_len,
                               const uint8_t* value, size_t value_len,
                               uint32_t* evicted) {
        const size_t need = name_len + value_len + HPACK_ENTRY_OVERHEAD;
        if (need > max_size_) {
            *evicted = evict_to(0);
            return nullptr;
        }
        *evicted = evict_to(max_size_ - need);
        const size_t bytes = name_len + value_len;
        if (arena_tail_ + bytes > arena_cap_) compact();
        if (Window && window_full()) slide();
        Entry& e = entry(next_id_);
        e.place(arena_ + arena_tail_, name_len, value_len);
        copy_octets(arena_ + arena_tail_, name, name_len);
        copy_octets(arena_ + arena_tail_ + name_len, value, value_len);
        arena_tail_ += bytes;
        size_ += need;
        ++next_id_;
        return &e;
    }

    // True when p points into the arena (the caller must copy such a name
    // before inserting).
    bool owns(const uint8_t* p) const {
        return arena_ && p >= arena_ && p < arena_ + arena_cap_;
    }

private:
    // Where an entry's descriptor is.  A ring: its id modulo the capacity.
    // A window: slots_ descriptors, half as many again as the capacity,
    // newest first: an entry goes in the slot below the one before it
    // (base_ - id), and when there is none the live ones move to the top
    // (slide()): at most capacity - 1 of them, once in (capacity + 1) / 2
    // insertions or more, so one or two descriptors per insertion.  The
    // entry of HPACK index 62 + d is then d slots after the newest, with
    // no wrap: the decoder's run of indexed fields keeps one pointer for
    // the table instead of the ring, its mask and the newest id (which GCC
    // keeps on the stack), and a dynamic field of the run takes fewer
    // instructions (DESIGN.md, "Measurements that decided": "Decoder and
    // table: descriptors in a window, newest first").  The price is memory: the
    // window for a table of 4096 octets is 192 descriptors, 12 KiB, where
    // a ring takes 8.
    uint64_t slot(uint64_t id) const { return slot_in(id, base_, ring_mask_); }
    static uint64_t slot_in(uint64_t id, uint64_t base, uint64_t mask) {
        if (Window) return base - id;
        return id & mask;
    }
    // No slot below the newest entry's (base_ - next_id_ has wrapped).
    bool window_full() const { return slot(next_id_) >= slots_; }
    static uint64_t slots_for(uint64_t capacity) {
        return Window ? capacity + (capacity + 1) / 2 : capacity;
    }

    // Moves the live descriptors to the top of the window (memos with
    // them: a memo is the entry's own, not its slot's).
    void slide() {
        const uint64_t n = count();
        if (n) {
            memmove(ring_ + (slots_ - n), ring_ + slot(next_id_ - 1), n * sizeof(Entry));
        }
        base_ = slots_ - 1 + first_id_;
    }

    // Moves the live bytes to the start of the arena.
    void compact() {
        if (first_id_ == next_id_) {
            arena_tail_ = 0;
            return;
        }
        const size_t head = static_cast<size_t>(entry(first_id_).name - arena_);
        memmove(arena_, arena_ + head, arena_tail_ - head);
        for (uint64_t id = first_id_; id < next_id_; ++id) entry(id).move_back(head);
        arena_tail_ -= head;
    }

    // Every entry takes at least 32 octets.
    static size_t ring_capacity_for(size_t max_size) {
        // The smallest power of two >= max_size / 32, without a loop
        // (DESIGN.md, "Measurements that decided": "Encoder: the ring
        // capacity with `clz`").
        const unsigned long long n = max_size / HPACK_ENTRY_OVERHEAD;
        return n <= 1 ? 1 : size_t{1} << (64 - __builtin_clzll(n - 1));
    }
    // The ring starts on a cache line, so that each of the decoder's
    // 64-octet descriptors is one line, whatever the allocator's alignment
    // (malloc's 16 leaves a decoder's ring on a line or 32 octets off one,
    // with the size of the object before it): the layout is one thing,
    // though its time is the same either way.
    static constexpr size_t kRingAlign = 64;
    static size_t ring_bytes(size_t n_slots) {
        return (n_slots * sizeof(Entry) + 7) & ~size_t{7};
    }

    Allocator alloc_;
    bool      owned_ = false;   // block_ came from alloc_
    void*     block_ = nullptr; // the storage of ring_, the owner's extra and arena_
    Entry*    ring_ = nullptr;
    uint64_t  ring_mask_ = 0;
    uint64_t  slots_ = 0;       // descriptors in the ring or window
    uint64_t  base_ = 0;        // a window's slot(id) = base_ - id
    uint8_t*  arena_ = nullptr;
    size_t    arena_cap_ = 0;
    size_t    arena_tail_ = 0;
    size_t    reserved_ = 0;
    size_t    size_ = 0;
    size_t    max_size_ = 0;
    uint64_t  first_id_ = 0;
    uint64_t  next_id_ = 0;
};

template <class Extra, bool FieldImage, bool Window>
bool DynamicTable<Extra, FieldImage, Window>::reserve(size_t max_size, size_t extra_per_slot,
                                              void** extra, void* storage) {
    if (extra) *extra = nullptr;
    if (max_size <= reserved_ && ring_) return true;
    const size_t ring_cap = ring_capacity_for(max_size);
    const size_t n_slots = slots_for(ring_cap);
    const size_t arena_cap = 2 * max_size;
    const size_t rbytes = ring_bytes(n_slots);
    const size_t extra_bytes = ring_cap * extra_per_slot;
    void* const p = storage ? storage : alloc_.alloc(storage_size(max_size, extra_per_slot));
    if (!p) return false;
    uint8_t* const block =
        static_cast<uint8_t*>(p) + (-reinterpret_cast<uintptr_t>(p) & (kRingAlign - 1));
    Entry* ring = reinterpret_cast<Entry*>(block);
    uint8_t* arena = block + rbytes + extra_bytes;
    // Copy the live entries, compacted, into the new storage (a window's
    // at its top).
    const uint64_t new_base = n_slots - 1 + first_id_;
    size_t tail = 0;
    for (uint64_t id = first_id_; id < next_id_; ++id) {
        Entry e = entry(id);
        const size_t bytes = e.name_len + e.value_len;
        memcpy(arena + tail, e.name, bytes);
        e.place(arena + tail, e.name_len, e.value_len);
        tail += bytes;
        ring[slot_in(id, new_base, ring_cap - 1)] = e;
    }
    if (owned_) alloc_.free(block_);
    owned_ = storage == nullptr;
    block_ = p;
    ring_ = ring;
    ring_mask_ = ring_cap - 1;
    slots_ = n_slots;
    base_ = new_base;
    arena_ = arena;
    arena_cap_ = arena_cap;
    arena_tail_ = tail;
    reserved_ = max_size;
    if (extra) *extra = block + rbytes;
    return true;
}

}  // namespace hpack

#endif
