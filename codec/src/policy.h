// The indexing policy: which names the encoder never indexes, and which it
// indexes only when a field recurs.  Built once (per configuration), then
// read-only and shared by every encoder that uses it.

#ifndef HPACK_POLICY_H
#define HPACK_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

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
    int add(const uint8_t* name, size_t len, unsigned flags);
    bool add_defaults();

    hpack::Allocator alloc;
    // Open addressing over twice the maximum number of names.
    Name     slots[2 * kMaxNames] = {};
    uint32_t count = 0;
};

namespace hpack {
// The built-in policy used by encoders created without one.
const hpack_policy* default_policy();
}

#endif
