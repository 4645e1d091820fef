// The dynamic table (RFC 7541 2.3.2, 4): entries in insertion order, sized
// as name + value + 32, evicted oldest first.
//
// Layout: a ring of fixed-size descriptors (one per entry, power-of-two
// capacity, addressed by an absolute insertion id; each points at its
// name, so a reader needs no arena base; the decoder's slide down a window
// instead, see slot()) and one byte arena that holds every entry's name
// and value contiguously, oldest first.  New bytes go at the arena's end;
// when they do not fit, the live bytes (at most the table size) move to
// its start.  A name or value is always one contiguous span that callers
// can point at.
//
// Storage follows the contents: a table allocates nothing until its first
// insertion, then one block holding a ring of kFirstSlots descriptors and
// an arena of kFirstArena octets, and doubles either when an insertion
// finds it short (make_room()), up to the bounds of the table's largest
// permitted size S: S / 32 descriptors (every entry takes 32 octets or
// more) and an arena of 2 S.  The arena grows when its live bytes would
// fill more than three quarters of it, so a compaction moves at most three
// octets per octet inserted since the last: O(1) amortized per octet.
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
// a field as one block (DESIGN.md, "Dynamic table layout": "The decoder's
// descriptor as a field image"), and the decoder's descriptor is 64 octets,
// which the window addresses with one shift.
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
        if (block_ && block_ != lent_) alloc_.free(block_);
    }
    DynamicTable(const DynamicTable&) = delete;
    DynamicTable& operator=(const DynamicTable&) = delete;

    // Permits a maximum size of up to max_size (set_max_size()); allocates
    // nothing: the storage grows to it as entries come (make_room()).
    void permit(size_t max_size) {
        if (max_size > permitted_) permitted_ = max_size;
    }

    // True when an entry of name_len + value_len == bytes needs make_room()
    // before insert(): no free descriptor, or no room at the arena's end.
    HPACK_INLINE bool needs_room(size_t bytes) const {
        return count() >= ring_cap_ || arena_tail_ + bytes > arena_cap_;
    }
    // Grows the storage, when it is short, for an insertion of bytes
    // (needs_room()); keeps the entries.  False on allocation failure (the
    // table is unchanged).  One allocation holds the ring, extra_per_slot
    // octets per ring slot for the owner (*extra, 8-octet aligned; set only
    // when the storage was replaced, else nullptr) and the arena.
    HPACK_NOINLINE bool make_room(size_t bytes, size_t extra_per_slot = 0,
                                  void** extra = nullptr);
    // Lends the table n octets (first_storage_size()) for its first block,
    // which the caller allocated with the table's owner (one allocation for
    // a new connection's object and its first fields) and frees with it;
    // permits max_size.
    void lend(void* storage, size_t n, size_t max_size) {
        lent_ = storage;
        lent_bytes_ = n;
        permit(max_size);
    }
    static size_t first_storage_size(size_t max_size, size_t extra_per_slot) {
        const uint64_t ring_cap = first_slots(max_size);
        return block_bytes(ring_cap, first_arena(max_size), extra_per_slot);
    }
    // Descriptors the ring holds now.
    uint64_t ring_capacity() const { return ring_cap_; }
    // Octets of storage the table holds now.
    size_t storage_bytes() const { return block_bytes_; }

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
    // an entry with an id of since or later: its make_room() moves nothing
    // either when it is the table's first allocation.
    bool insert_moves_nothing(size_t bytes, uint64_t since) const {
        if (needs_room(bytes)) return block_ == nullptr;
        if (Window) return !window_full();
        return next_id_ - since <= ring_mask_;
    }

    // Adds an entry, evicting what it needs (RFC 7541 4.4).  An entry larger
    // than the maximum size empties the table and is not added: returns
    // nullptr then.  name and value must not point into this table (the
    // arena may move).  *evicted gets the number of evictions.  The caller
    // has made room (needs_room(), make_room()).
    //
    // Inlined into its callers (the decoder's field parser, the encoder's
    // indexing), where GCC would keep it a call, with its frame and the
    // parser's state saved around it (DESIGN.md, "Dynamic table layout":
    // "`DynamicTable::insert()` inlined into its callers").
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
    // instructions (DESIGN.md, "Dynamic table layout": "Descriptors in a
    // window, newest first").  The price is memory: the window for a table
    // of 4096 octets is 192 descriptors, 12 KiB, where a ring takes 8.
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
        // (DESIGN.md, "Encoder": "The ring capacity with `clz`").
        const unsigned long long n = max_size / HPACK_ENTRY_OVERHEAD;
        return n <= 1 ? 1 : size_t{1} << (64 - __builtin_clzll(n - 1));
    }
    // The first block: a request's or a response's worth of fields (a
    // browser's navigation indexes 8 entries of 620 octets, a response of 12
    // fields 10), so that the first block decoded or encoded allocates once
    // and a batch of fields (hpack_decode_fields) runs to its end.
    static constexpr uint64_t kFirstSlots = 16;
    static constexpr size_t kFirstArena = 1024;
    static uint64_t first_slots(size_t max_size) {
        const uint64_t ring_max = ring_capacity_for(max_size);
        return kFirstSlots < ring_max ? kFirstSlots : ring_max;
    }
    static size_t first_arena(size_t max_size) {
        return kFirstArena < 2 * max_size ? kFirstArena : 2 * max_size;
    }
    static size_t block_bytes(uint64_t ring_cap, size_t arena_cap, size_t extra_per_slot) {
        return kRingAlign - 1 + ring_bytes(slots_for(ring_cap)) + ring_cap * extra_per_slot +
               arena_cap;
    }
    bool replace(uint64_t ring_cap, size_t arena_cap, size_t extra_per_slot, void** extra);
    // The ring starts on a cache line, so that each of the decoder's
    // 64-octet descriptors is one line, whatever the allocator's alignment
    // (malloc's 16 leaves a decoder's ring on a line or 32 octets off one,
    // with the size of the object before it): the layout is one thing,
    // though its time is the same either way.
    static constexpr size_t kRingAlign = 64;
    static size_t ring_bytes(size_t n_slots) {
        return (n_slots * sizeof(Entry) + 7) & ~size_t{7};
    }

    // The ring of a table without storage: view() points one past it.
    static inline Entry empty_ring_[1];

    Allocator alloc_;
    void*     block_ = nullptr; // the storage of ring_, the owner's extra and arena_
    void*     lent_ = nullptr;  // the first block's storage, the owner's
    size_t    lent_bytes_ = 0;
    size_t    block_bytes_ = 0;
    Entry*    ring_ = empty_ring_;
    uint64_t  ring_cap_ = 0;
    uint64_t  ring_mask_ = 0;
    uint64_t  slots_ = 0;       // descriptors in the ring or window
    uint64_t  base_ = 0;        // a window's slot(id) = base_ - id
    uint8_t*  arena_ = nullptr;
    size_t    arena_cap_ = 0;
    size_t    arena_tail_ = 0;
    size_t    permitted_ = 0;
    size_t    size_ = 0;
    size_t    max_size_ = 0;
    uint64_t  first_id_ = 0;
    uint64_t  next_id_ = 0;
};

template <class Extra, bool FieldImage, bool Window>
bool DynamicTable<Extra, FieldImage, Window>::make_room(size_t bytes, size_t extra_per_slot,
                                                        void** extra) {
    if (extra) *extra = nullptr;
    // insert() adds no entry larger than the maximum size.
    if (bytes + HPACK_ENTRY_OVERHEAD > max_size_) return true;
    // What insert() leaves of the table when it evicts for the entry.
    size_t size = size_;
    uint64_t first = first_id_;
    while (size > max_size_ - (bytes + HPACK_ENTRY_OVERHEAD)) size -= entry_size(entry(first++));
    const size_t live =
        first < next_id_ ? arena_tail_ - static_cast<size_t>(entry(first).name - arena_) : 0;
    const uint64_t ring_max = ring_capacity_for(permitted_);
    const size_t arena_max = 2 * permitted_;
    uint64_t ring_cap = ring_cap_;
    size_t arena_cap = arena_cap_;
    if (ring_cap == 0) {
        ring_cap = first_slots(permitted_);
        arena_cap = first_arena(permitted_);
    } else if (next_id_ - first >= ring_cap && ring_cap < ring_max) {
        ring_cap *= 2;
    }
    while ((live + bytes) * 4 > arena_cap * 3 && arena_cap < arena_max)
        arena_cap = 2 * arena_cap < arena_max ? 2 * arena_cap : arena_max;
    if (ring_cap == ring_cap_ && arena_cap == arena_cap_) return true;  // insert() compacts
    return replace(ring_cap, arena_cap, extra_per_slot, extra);
}

// New storage of ring_cap descriptors and arena_cap octets, the live
// entries copied into it compacted (a window's at its top).
template <class Extra, bool FieldImage, bool Window>
bool DynamicTable<Extra, FieldImage, Window>::replace(uint64_t ring_cap, size_t arena_cap,
                                                      size_t extra_per_slot, void** extra) {
    const uint64_t n_slots = slots_for(ring_cap);
    const size_t rbytes = ring_bytes(n_slots);
    const size_t bytes = block_bytes(ring_cap, arena_cap, extra_per_slot);
    const bool first = !block_ && lent_ && bytes <= lent_bytes_;
    void* const p = first ? lent_ : alloc_.alloc(bytes);
    if (!p) return false;
    uint8_t* const block =
        static_cast<uint8_t*>(p) + (-reinterpret_cast<uintptr_t>(p) & (kRingAlign - 1));
    Entry* ring = reinterpret_cast<Entry*>(block);
    uint8_t* arena = block + rbytes + ring_cap * extra_per_slot;
    const uint64_t new_base = n_slots - 1 + first_id_;
    size_t tail = 0;
    for (uint64_t id = first_id_; id < next_id_; ++id) {
        Entry e = entry(id);
        const size_t n = e.name_len + e.value_len;
        memcpy(arena + tail, e.name, n);
        e.place(arena + tail, e.name_len, e.value_len);
        tail += n;
        ring[slot_in(id, new_base, ring_cap - 1)] = e;
    }
    if (block_ && block_ != lent_) alloc_.free(block_);
    block_ = p;
    block_bytes_ = bytes;
    ring_ = ring;
    ring_cap_ = ring_cap;
    ring_mask_ = ring_cap - 1;
    slots_ = n_slots;
    base_ = new_base;
    arena_ = arena;
    arena_cap_ = arena_cap;
    arena_tail_ = tail;
    if (extra) *extra = block + rbytes;
    return true;
}

// A decoder's table, HPACK's and QPACK's: each descriptor carries the
// caller's memo, begins with a field's image and lives in a window.  QPACK
// addresses it by absolute index, which is the entry's id.
using DecoderTable = DynamicTable<hpack_memo_t, true, true>;

}  // namespace hpack

#endif
