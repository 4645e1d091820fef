// Helpers shared by the codec tests: hex, and decoding a block into a list.

#ifndef HPACK_TEST_UTIL_H
#define HPACK_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

#include "block.h"
#include "hex.h"
#include "hpack.h"

namespace hpack_test {

using Header = std::pair<std::string, std::string>;
using HeaderList = std::vector<Header>;

// Hex from the RFC's examples, which may group digits with spaces.
inline std::vector<uint8_t> unhex(const std::string& s) {
    std::string digits;
    for (char c : s)
        if (c != ' ') digits += c;
    std::vector<uint8_t> out;
    if (!hpack_tools::hex::decode(digits, &out)) out.clear();
    return out;
}

inline std::string hex(const uint8_t* p, size_t n) { return hpack_tools::hex::encode(p, n); }
inline std::string hex(const std::vector<uint8_t>& v) { return hpack_tools::hex::encode(v); }

struct Decoded {
    std::string name, value;
    hpack_representation_t rep;
    uint32_t index;
    bool operator==(const Header& h) const { return name == h.first && value == h.second; }
};

// The next field of the current block: hpack_decode_fields() for one field.
inline int decode_field(hpack_decoder_t* d, const uint8_t** pos, const uint8_t* end, int last,
                        hpack_field_t* f) {
    size_t n = 0;
    return hpack_decode_fields(d, pos, end, last, f, 1, &n);
}

inline Header header_of(const hpack_field_t& f) {
    return {std::string(reinterpret_cast<const char*>(f.name), f.name_len),
            std::string(reinterpret_cast<const char*>(f.value), f.value_len)};
}

inline Decoded decoded(const hpack_field_t& f) {
    Header h = header_of(f);
    return {std::move(h.first), std::move(h.second), f.representation, f.index};
}

// Decodes a whole block, batch fields a call; returns the status and
// appends the fields.
inline int decode(hpack_decoder_t* d, const std::vector<uint8_t>& block,
                  std::vector<Decoded>* out, size_t batch = hpack_tools::kDecodeBatch) {
    return hpack_tools::decode_block(
        d, block.data(), block.size(), [out](const hpack_field_t& f) { out->push_back(decoded(f)); },
        batch);
}

// An allocator that fails once, at a chosen allocation, and counts what it
// made and what is still live: every allocation path's failure, and no leak
// after it.
struct FailingAllocator {
    int left = -1;   // allocations until the failing one; -1: none fails
    int made = 0;
    int live = 0;
    hpack_allocator_t allocator{[](void* ctx, size_t n) -> void* {
                                    auto* b = static_cast<FailingAllocator*>(ctx);
                                    if (b->left >= 0 && b->left-- == 0) return nullptr;
                                    ++b->made;
                                    ++b->live;
                                    return malloc(n);
                                },
                                [](void* ctx, void* p) {
                                    --static_cast<FailingAllocator*>(ctx)->live;
                                    free(p);
                                },
                                this};

    FailingAllocator() = default;
    FailingAllocator(const FailingAllocator&) = delete;
    FailingAllocator& operator=(const FailingAllocator&) = delete;

    // Counts anew; the allocation fail_at (0 the first) fails, none at -1.
    void reset(int fail_at) {
        left = fail_at;
        made = 0;
        live = 0;
    }
};

inline HeaderList names_values(const std::vector<Decoded>& v) {
    HeaderList out;
    for (const auto& d : v) out.emplace_back(d.name, d.value);
    return out;
}

// The codec's view of a list (pointing into it), with per-field flags (0
// for all when empty).
inline std::vector<hpack_header_t> to_headers(const HeaderList& list,
                                              const std::vector<unsigned>& flags = {}) {
    std::vector<hpack_header_t> hs(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        hs[i] = hpack_header_t{};
        hs[i].name = reinterpret_cast<const uint8_t*>(list[i].first.data());
        hs[i].name_len = list[i].first.size();
        hs[i].value = reinterpret_cast<const uint8_t*>(list[i].second.data());
        hs[i].value_len = list[i].second.size();
        hs[i].flags = i < flags.size() ? flags[i] : 0;
    }
    return hs;
}

// Encodes a list as one block; empty on failure.
inline std::vector<uint8_t> encode(hpack_encoder_t* e, const HeaderList& list,
                                   const std::vector<unsigned>& flags = {}) {
    std::vector<hpack_header_t> hs = to_headers(list, flags);
    std::vector<uint8_t> out(hpack_tools::encode_room(hs.data(), hs.size()));
    size_t len = 0;
    int rc = hpack_encode(e, hs.data(), hs.size(), out.data(), out.size(), &len);
    if (rc != HPACK_OK) return {};
    out.resize(len);
    return out;
}

}  // namespace hpack_test

#endif
