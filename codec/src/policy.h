// The indexing policy: which names the encoder never indexes, and which it
// indexes only when a field recurs.  Built once (per configuration), then
// read-only and shared by every encoder that uses it.

#ifndef HPACK_POLICY_H
#define HPACK_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "static_table.h"

// Internal flag: values shorter than kShortSecretLen are guessable secrets
// (session ids, CSRF tokens) and are never indexed (RFC 7541 7.1.3).
#define HPACK_POLICY_SHORT_SECRET  0x100

struct hpack_policy {
    explicit hpack_policy(const hpack::Allocator& a) : alloc(a) {}
    ~hpack_policy();

    static constexpr size_t kShortSecretLen = 20;
    static constexpr uint32_t kMaxNames = 256;

    struct Name {
        uint8_t* data;
        uint32_t len;
        unsigned flags;
    };

    unsigned lookup(const uint8_t* name, size_t len) const;
    // The flags of a static-table name, by its first entry: no hashing.
    unsigned lookup_static(uint32_t first) const { return static_flags[first]; }
    // The flags of a name known not to be in the static table.
    unsigned lookup_other(const uint8_t* name, size_t len) const {
        return other_lengths >> (len < 63 ? len : 63) & 1 ? lookup_slots(name, len) : 0;
    }
    unsigned lookup_slots(const uint8_t* name, size_t len) const;
    int add(const uint8_t* name, size_t len, unsigned flags);
    void note(const uint8_t* name, size_t len, unsigned flags);
    bool add_defaults();

    hpack::Allocator alloc;
    // Open addressing over twice the maximum number of names.
    Name     slots[2 * kMaxNames] = {};
    uint32_t count = 0;
    // Flags of the names that are in the static table, by first entry, and
    // the lengths (bit min(len, 63)) of the others: most names that no list
    // holds are turned away by their length alone.
    unsigned static_flags[hpack::kStaticEntries + 1] = {};
    uint64_t other_lengths = 0;
};

namespace hpack {
// The built-in policy used by encoders created without one.
const hpack_policy* default_policy();

// Whether a field goes as a never-indexed literal, from its flags and its
// name's policy flags: HPACK's and QPACK's encoders alike.
inline bool is_never(const hpack_header_t& h, unsigned pflags) {
    return (h.flags & HPACK_FIELD_NEVER_INDEX) || (pflags & HPACK_POLICY_NEVER_INDEX) ||
           ((pflags & HPACK_POLICY_SHORT_SECRET) && h.value_len < hpack_policy::kShortSecretLen);
}
}

#endif
