// Zero heap allocations per block in steady state, read from jemalloc's
// per-thread counters.  This binary links jemalloc as the process
// allocator, so every malloc of the codec (through its default allocator)
// and of the C++ runtime is counted.

#include <gtest/gtest.h>
#include <jemalloc/jemalloc.h>

#include <stdlib.h>

#include <string>
#include <vector>

#include "hpack.h"
#include "test_util.h"

namespace {

struct Counters {
    uint64_t* allocated = nullptr;
    uint64_t* deallocated = nullptr;
    Counters() {
        size_t sz = sizeof(allocated);
        EXPECT_EQ(mallctl("thread.allocatedp", &allocated, &sz, nullptr, 0), 0);
        sz = sizeof(deallocated);
        EXPECT_EQ(mallctl("thread.deallocatedp", &deallocated, &sz, nullptr, 0), 0);
    }
    // Volatile: the compiler knows malloc touches no visible memory and
    // would otherwise reuse an earlier read.
    uint64_t bytes_allocated() const { return *static_cast<volatile uint64_t*>(allocated); }
};

using hpack_test::HeaderList;
using hpack_test::to_headers;

const HeaderList kRequest = {
    {":method", "GET"},
    {":scheme", "https"},
    {":authority", "www.example.com"},
    {":path", "/assets/app.js?v=3f2a9c"},
    {"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                   "Chrome/124.0.0.0 Safari/537.36"},
    {"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
    {"accept-language", "en-US,en;q=0.9"},
    {"accept-encoding", "gzip, deflate, br"},
    {"cookie", "session=7d9f3c0a1b2e4f60a8c1d2e3f4a5b6c7; theme=dark; consent=1"},
    {"referer", "https://www.example.com/"},
    {"sec-ch-ua", "\"Chromium\";v=\"124\", \"Not-A.Brand\";v=\"99\""},
};

// Encodes and decodes `blocks` blocks; every 7th carries a fresh request id
// and path, so the tables keep inserting and evicting.
void run_blocks(hpack_encoder_t* e, hpack_decoder_t* d, HeaderList& fields,
                std::vector<hpack_header_t>& hs, std::vector<uint8_t>& out, int first,
                int blocks, size_t* decoded_fields) {
    for (int b = first; b < first + blocks; ++b) {
        if (b % 7 == 0) {
            // Overwrite in place: no allocation by the test itself.
            std::string& v = fields[3].second;
            for (size_t i = 0; i < 6; ++i) v[v.size() - 1 - i] = "0123456789abcdef"[(b >> (4 * i)) & 15];
        }
        size_t len = 0;
        ASSERT_EQ(hpack_encode(e, hs.data(), hs.size(), out.data(), out.size(), &len), HPACK_OK);
        ASSERT_EQ(hpack_tools::decode_block(d, out.data(), len,
                                            [&](const hpack_field_t&) { ++*decoded_fields; }),
                  HPACK_OK);
    }
}

TEST(SteadyStateAllocations, CountersSeeAnAllocation) {
    // The measurement itself can fail: a malloc between two reads shows.
    Counters c;
    const uint64_t before = c.bytes_allocated();
    void* volatile p = malloc(64);
    const uint64_t after = c.bytes_allocated();
    free(p);
    EXPECT_GE(after - before, 64u);
}

TEST(SteadyStateAllocations, EncoderAndDecoderAllocateNothingPerBlock) {
    Counters c;
    hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_limits(d, 8192, 32768);
    HeaderList fields = kRequest;
    std::vector<hpack_header_t> hs = to_headers(fields);
    std::vector<uint8_t> out(hpack_tools::encode_room(hs.data(), hs.size()));
    size_t decoded = 0;

    // Storage follows the tables' contents: it grows while they fill, each
    // time to twice its size at most, and stops at the RFC's accounting for
    // 4096 octets plus the indexes.  With a new path every 7 blocks the
    // tables hold their most entries (and have stopped growing) well
    // before block 1000.
    const uint64_t start = c.bytes_allocated();
    run_blocks(e, d, fields, hs, out, 0, 1000, &decoded);  // warm up
    const uint64_t before = c.bytes_allocated();
    EXPECT_GT(before - start, 0u) << "the tables grew while filling";
    EXPECT_LE(before - start, 96u * 1024) << "bytes allocated warming up";
    hpack_stats_t warm;
    hpack_encoder_stats(e, &warm);
    run_blocks(e, d, fields, hs, out, 1000, 5000, &decoded);
    const uint64_t after = c.bytes_allocated();

    EXPECT_EQ(after - before, 0u) << "bytes allocated in 5000 steady-state blocks";
    EXPECT_EQ(decoded, 6000u * kRequest.size());
    hpack_stats_t st;
    hpack_encoder_stats(e, &st);
    EXPECT_GT(st.evictions, warm.evictions + 5);   // the full table kept changing
    hpack_encoder_destroy(e);
    hpack_decoder_destroy(d);
}

TEST(SteadyStateAllocations, SplitBlocksAllocateNothingOnceWarm) {
    Counters c;
    hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    HeaderList fields = kRequest;
    std::vector<hpack_header_t> hs = to_headers(fields);
    std::vector<uint8_t> out(hpack_tools::encode_room(hs.data(), hs.size()));
    uint64_t before = 0;
    for (int b = 0; b < 400; ++b) {
        if (b == 100) before = c.bytes_allocated();
        size_t len = 0;
        ASSERT_EQ(hpack_encode(e, hs.data(), hs.size(), out.data(), out.size(), &len), HPACK_OK);
        hpack_decode_begin(d);
        const size_t cut = len / 2;
        const uint8_t* pos = out.data();
        const auto ignore = [](const hpack_field_t&) {};
        ASSERT_EQ(hpack_tools::decode_piece(d, &pos, out.data() + cut, 0, ignore),
                  HPACK_NEED_MORE);
        pos = out.data() + cut;
        ASSERT_EQ(hpack_tools::decode_piece(d, &pos, out.data() + len, 1, ignore),
                  HPACK_BLOCK_END);
    }
    EXPECT_EQ(c.bytes_allocated() - before, 0u);
    hpack_encoder_destroy(e);
    hpack_decoder_destroy(d);
}

}  // namespace
