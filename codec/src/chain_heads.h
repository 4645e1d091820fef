// The heads of an encoder's hash chains, HPACK's and QPACK's: per bucket,
// the id of the newest table entry whose hash falls in it.

#ifndef HPACK_CHAIN_HEADS_H
#define HPACK_CHAIN_HEADS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace hpack {

// No entry: never a live id.
constexpr uint64_t kNoId = UINT64_MAX;

// The heads of hash chains: the newest id of each, kNoId for none.  A head
// is read only once written, as a bit beside it says, so that a new
// encoder clears the bits instead of the 2.5 KiB of heads (DESIGN.md,
// "Encoder": "Chain heads, history slots and hints read only once marked
// written").
class ChainHeads {
public:
    void attach(uint64_t* ids, uint8_t* written, size_t n) {
        ids_ = ids;
        written_ = written;
        memset(written_, 0, (n + 7) / 8);
    }
    uint64_t get(size_t i) const {
        return (written_[i / 8] >> (i % 8)) & 1 ? ids_[i] : kNoId;
    }
    // Makes id head i; returns the head it had.
    uint64_t exchange(size_t i, uint64_t id) {
        const uint64_t old = get(i);
        written_[i / 8] = static_cast<uint8_t>(written_[i / 8] | 1u << (i % 8));
        ids_[i] = id;
        return old;
    }

private:
    uint64_t* ids_ = nullptr;
    uint8_t*  written_ = nullptr;
};

// Room in an encoder's table for an entry of bytes octets of name and
// value (DynamicTable::make_room()), with bucket_bytes octets per ring
// slot for two ChainHeads (name+value, name) in the table's allocation.
// When the storage moved, the heads are attached to the new block and
// *rebuild is set: the caller links every entry again.  False on
// allocation failure (the table is unchanged).
template <class Table>
inline bool make_room_indexed(Table& table, ChainHeads& buckets, uint64_t* mask, size_t bytes,
                              size_t bucket_bytes, bool* rebuild) {
    void* extra;
    *rebuild = false;
    if (!table.make_room(bytes, bucket_bytes, &extra)) return false;
    if (!extra) return true;
    const uint64_t n = table.ring_capacity();
    uint64_t* const ids = static_cast<uint64_t*>(extra);
    buckets.attach(ids, reinterpret_cast<uint8_t*>(ids + 2 * n), 2 * n);
    *mask = n - 1;
    *rebuild = true;
    return true;
}

}  // namespace hpack

#endif
