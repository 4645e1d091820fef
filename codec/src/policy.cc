#include "policy.h"

#include <string.h>

#include "hash.h"

namespace {

constexpr uint64_t kPolicySeed = 0x243f6a8885a308d3ull;
constexpr uint32_t kSlotMask = 2 * hpack_policy::kMaxNames - 1;

struct DefaultName {
    const char* name;
    unsigned    flags;
};

// RFC 7541 7.1.3 names the authorization and short cookie cases; the
// volatile names change on (almost) every message, so indexing them on
// sight only evicts entries that would have been reused.
constexpr DefaultName kDefaults[] = {
    {"authorization", HPACK_POLICY_NEVER_INDEX},
    {"proxy-authorization", HPACK_POLICY_NEVER_INDEX},
    {"cookie", HPACK_POLICY_SHORT_SECRET | HPACK_POLICY_VOLATILE},
    {"set-cookie", HPACK_POLICY_SHORT_SECRET | HPACK_POLICY_VOLATILE},
    {":path", HPACK_POLICY_VOLATILE},
    {"content-length", HPACK_POLICY_VOLATILE},
    {"content-range", HPACK_POLICY_VOLATILE},
    {"date", HPACK_POLICY_VOLATILE},
    {"expires", HPACK_POLICY_VOLATILE},
    {"age", HPACK_POLICY_VOLATILE},
    {"etag", HPACK_POLICY_VOLATILE},
    {"last-modified", HPACK_POLICY_VOLATILE},
    {"location", HPACK_POLICY_VOLATILE},
    {"if-none-match", HPACK_POLICY_VOLATILE},
    {"if-modified-since", HPACK_POLICY_VOLATILE},
    {"x-request-id", HPACK_POLICY_VOLATILE},
    {"x-correlation-id", HPACK_POLICY_VOLATILE},
    {"request-id", HPACK_POLICY_VOLATILE},
    {"traceparent", HPACK_POLICY_VOLATILE},
    {"x-amzn-trace-id", HPACK_POLICY_VOLATILE},
};

}  // namespace

void hpack_policy::note(const uint8_t* name, size_t len, unsigned flags) {
    const hpack::StaticName sn = hpack::static_name_lookup(name, len);
    if (sn.first)
        static_flags[sn.first] = flags;
    else
        other_lengths |= uint64_t{1} << (len < 63 ? len : 63);
}

hpack_policy::~hpack_policy() {
    for (auto& s : slots) alloc.free(s.data);
}

unsigned hpack_policy::lookup(const uint8_t* name, size_t len) const {
    const hpack::StaticName sn = hpack::static_name_lookup(name, len);
    return sn.first ? static_flags[sn.first] : lookup_other(name, len);
}

unsigned hpack_policy::lookup_slots(const uint8_t* name, size_t len) const {
    uint32_t i = static_cast<uint32_t>(hpack::hash_bytes(name, len, kPolicySeed)) & kSlotMask;
    for (;;) {
        const Name& s = slots[i];
        if (!s.data) return 0;
        if (s.len == len && memcmp(s.data, name, len) == 0) return s.flags;
        i = (i + 1) & kSlotMask;
    }
}

int hpack_policy::add(const uint8_t* name, size_t len, unsigned flags) {
    if (len == 0 || len > UINT32_MAX) return HPACK_E_ARGUMENT;
    uint32_t i = static_cast<uint32_t>(hpack::hash_bytes(name, len, kPolicySeed)) & kSlotMask;
    for (;;) {
        Name& s = slots[i];
        if (!s.data) break;
        if (s.len == len && memcmp(s.data, name, len) == 0) {
            // Never-indexing wins over anything else said of the name.
            s.flags |= flags;
            if (s.flags & HPACK_POLICY_NEVER_INDEX) s.flags = HPACK_POLICY_NEVER_INDEX;
            note(name, len, s.flags);
            return HPACK_OK;
        }
        i = (i + 1) & kSlotMask;
    }
    if (count == kMaxNames) return HPACK_E_ARGUMENT;
    uint8_t* copy = static_cast<uint8_t*>(alloc.alloc(len));
    if (!copy) return HPACK_E_NOMEM;
    memcpy(copy, name, len);
    slots[i] = Name{copy, static_cast<uint32_t>(len), flags};
    ++count;
    note(name, len, flags);
    return HPACK_OK;
}

bool hpack_policy::add_defaults() {
    for (const auto& d : kDefaults) {
        if (add(reinterpret_cast<const uint8_t*>(d.name), strlen(d.name), d.flags) != HPACK_OK)
            return false;
    }
    return true;
}

namespace hpack {

const hpack_policy* default_policy() {
    static const hpack_policy* p = [] {
        static hpack_policy policy(Allocator(nullptr));
        policy.add_defaults();
        return &policy;
    }();
    return p;
}

}  // namespace hpack

HPACK_API hpack_policy_t* hpack_policy_create(const hpack_allocator_t* allocator) {
    hpack::Allocator a(allocator);
    hpack_policy_t* p = a.make<hpack_policy>(a);
    if (!p) return nullptr;
    if (!p->add_defaults()) {
        a.destroy(p);
        return nullptr;
    }
    return p;
}

HPACK_API int hpack_policy_add(hpack_policy_t* policy, const char* name, size_t len,
                               unsigned flags) {
    if (!policy || !name || (flags & ~(HPACK_POLICY_NEVER_INDEX | HPACK_POLICY_VOLATILE)) ||
        !flags)
        return HPACK_E_ARGUMENT;
    for (size_t i = 0; i < len; ++i) {
        if (name[i] >= 'A' && name[i] <= 'Z') return HPACK_E_ARGUMENT;
    }
    return policy->add(reinterpret_cast<const uint8_t*>(name), len, flags);
}

HPACK_API unsigned hpack_policy_lookup(const hpack_policy_t* policy, const char* name,
                                       size_t len) {
    return policy->lookup(reinterpret_cast<const uint8_t*>(name), len) &
           (HPACK_POLICY_NEVER_INDEX | HPACK_POLICY_VOLATILE);
}

HPACK_API void hpack_policy_destroy(hpack_policy_t* policy) {
    if (policy) policy->alloc.destroy(policy);
}
