// The encoder: round trips through our decoder, one-octet references for
// repeated fields, the indexing policy, table-size signalling, bounds.

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "encoder.h"
#include "hash.h"
#include "hpack.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

const HeaderList kResponse = {
    {":status", "200"},
    {"server", "nginx"},
    {"content-type", "text/html; charset=utf-8"},
    {"cache-control", "public, max-age=3600"},
    {"strict-transport-security", "max-age=63072000; includeSubDomains; preload"},
    {"x-content-type-options", "nosniff"},
    {"x-frame-options", "DENY"},
    {"referrer-policy", "strict-origin-when-cross-origin"},
    {"content-security-policy", "default-src 'self'; img-src 'self' data:"},
    {"permissions-policy", "geolocation=(), microphone=()"},
    {"cross-origin-opener-policy", "same-origin"},
    {"vary", "Accept-Encoding"},
};

struct Pair {
    hpack_encoder_t* enc;
    hpack_decoder_t* dec;
    explicit Pair(size_t cap = 4096, const hpack_policy_t* policy = nullptr)
        : enc(hpack_encoder_create(nullptr, cap, policy)),
          dec(hpack_decoder_create(nullptr, 4096)) {}
    // A peer whose SETTINGS_HEADER_TABLE_SIZE is the encoder's cap.
    static Pair large(size_t cap) {
        Pair p(cap);
        EXPECT_EQ(hpack_decoder_set_settings_table_size(p.dec, cap), HPACK_OK);
        EXPECT_EQ(hpack_encoder_set_peer_table_size(p.enc, cap), HPACK_OK);
        return p;
    }
    Pair(Pair&& o) noexcept : enc(o.enc), dec(o.dec) { o.enc = nullptr; o.dec = nullptr; }
    ~Pair() {
        hpack_encoder_destroy(enc);
        hpack_decoder_destroy(dec);
    }
    std::vector<Decoded> round_trip(const HeaderList& list, std::vector<uint8_t>* wire = nullptr,
                                    const std::vector<unsigned>& flags = {}) {
        std::vector<uint8_t> block = encode(enc, list, flags);
        std::vector<Decoded> out;
        EXPECT_EQ(decode(dec, block, &out), HPACK_OK);
        EXPECT_EQ(names_values(out), list);
        EXPECT_EQ(hpack_decoder_table_size(dec), hpack_encoder_table_size(enc));
        if (wire) *wire = block;
        return out;
    }
};

TEST(EncoderTable, RepeatedResponseBecomesOneOctetPerField) {
    Pair p;
    std::vector<uint8_t> first, second;
    p.round_trip(kResponse, &first);
    p.round_trip(kResponse, &second);
    EXPECT_EQ(second.size(), kResponse.size()) << hex(second);
    for (uint8_t b : second) EXPECT_TRUE(b & 0x80);
    EXPECT_GT(first.size(), 200u);
}

TEST(EncoderTable, RoundTripsRandomListsWithTableSizeChanges) {
    std::mt19937 rng(7);
    hpack_encoder_t* e = hpack_encoder_create(nullptr, 65536, nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 65536);
    const size_t sizes[] = {0, 64, 256, 4096, 8192, 65536, 1000};
    for (int block = 0; block < 2000; ++block) {
        if (rng() % 17 == 0) {
            // A SETTINGS change, sometimes two before the next block.
            for (unsigned k = 0; k <= rng() % 2; ++k) {
                size_t s = sizes[rng() % 7];
                ASSERT_EQ(hpack_decoder_set_settings_table_size(d, s), HPACK_OK);
                ASSERT_EQ(hpack_encoder_set_peer_table_size(e, s), HPACK_OK);
            }
        }
        HeaderList list;
        const unsigned n = rng() % 20;
        for (unsigned i = 0; i < n; ++i) {
            std::string name = "x-h" + std::to_string(rng() % 40);
            std::string value;
            const unsigned len = rng() % 4 == 0 ? rng() % 600 : rng() % 30;
            for (unsigned j = 0; j < len; ++j) value += static_cast<char>(rng() % 256);
            if (rng() % 3 == 0) value = "v" + std::to_string(rng() % 10);
            list.emplace_back(name, value);
        }
        std::vector<uint8_t> wire = encode(e, list);
        std::vector<Decoded> out;
        ASSERT_EQ(decode(d, wire, &out), HPACK_OK) << "block " << block;
        ASSERT_EQ(names_values(out), list) << "block " << block;
        ASSERT_EQ(hpack_decoder_table_size(d), hpack_encoder_table_size(e));
        ASSERT_EQ(hpack_decoder_table_entries(d), hpack_encoder_table_entries(e));
    }
    hpack_encoder_destroy(e);
    hpack_decoder_destroy(d);
}

// Every allocation an encoder makes may fail: with the Nth failing, for
// every N of a connection whose table grows to 65536 octets and whose
// history of volatile fields grows past its first 16 slots, creation
// fails cleanly or every block still round trips (a field the table
// has no room for is sent without indexing), the peer's table stays in
// step, and nothing leaks.
TEST(EncoderTable, EveryFailedAllocationLeavesBlocksThatRoundTrip) {
    FailingAllocator b;
    auto run = [&](int fail_at) {
        b.reset(fail_at);
        hpack_encoder_t* e = hpack_encoder_create(&b.allocator, 65536, nullptr);
        if (!e) {
            EXPECT_EQ(fail_at, 0);
            return;
        }
        hpack_decoder_t* d = hpack_decoder_create(nullptr, 65536);
        ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 65536), HPACK_OK);
        ASSERT_EQ(hpack_encoder_set_peer_table_size(e, 65536), HPACK_OK);
        for (int block = 0; block < 60; ++block) {
            HeaderList list = kResponse;
            for (int i = 0; i < 10; ++i)
                list.emplace_back("x-" + std::to_string(block) + "-" + std::to_string(i),
                                  std::string(80, static_cast<char>('a' + i)));
            // volatile fields new in every block: their history grows too
            list.emplace_back("etag", "\"e" + std::to_string(block) + "\"");
            list.emplace_back("x-request-id", "id-" + std::to_string(block));
            std::vector<uint8_t> wire = encode(e, list);
            std::vector<Decoded> out;
            ASSERT_EQ(decode(d, wire, &out), HPACK_OK) << fail_at << " " << block;
            ASSERT_EQ(names_values(out), list) << fail_at << " " << block;
            ASSERT_EQ(hpack_decoder_table_size(d), hpack_encoder_table_size(e)) << fail_at;
        }
        hpack_encoder_destroy(e);
        hpack_decoder_destroy(d);
        EXPECT_EQ(b.live, 0) << fail_at;
    };
    run(-1);
    const int allocations = b.made;
    EXPECT_GT(allocations, 3);  // the table grew past its first block
    for (int n = 0; n < allocations; ++n) run(n);
}

// The first 32 places of a block remember the entry they used; the next
// block checks that entry before any lookup.  A hint is only a guess: a
// changed value, a field moved elsewhere, an evicted entry and a caller's
// never-indexed flag must all give what the lookups give.
TEST(EncoderHints, AChangedValueAtAHintedPlaceTakesTheLookups) {
    Pair p;
    std::vector<uint8_t> wire;
    p.round_trip({{"x-a", "one"}, {":method", "GET"}});
    auto out = p.round_trip({{"x-a", "two"}, {":method", "POST"}}, &wire);
    EXPECT_EQ(out[0].rep, HPACK_REP_INCREMENTAL);   // name from the table
    EXPECT_EQ(wire.back(), 0x83);                   // :method POST, static 3
    // The place's hint now names "two"; "one" is still in the table.
    out = p.round_trip({{"x-a", "one"}, {":method", "GET"}}, &wire);
    EXPECT_EQ(out[0].rep, HPACK_REP_INDEXED);
    EXPECT_EQ(hex(wire), "bf82");                   // dynamic 63, static 2
}

TEST(EncoderHints, MovedFieldsAreFoundByTheLookups) {
    Pair p;
    std::vector<uint8_t> wire;
    p.round_trip({{"x-a", "1"}, {"x-b", "2"}, {"x-c", "3"}});
    p.round_trip({{"x-c", "3"}, {"x-a", "1"}, {"x-b", "2"}}, &wire);
    EXPECT_EQ(hex(wire), "bec0bf");                 // 62 = x-c, the newest
    p.round_trip({{"x-c", "3"}, {"x-a", "1"}, {"x-b", "2"}}, &wire);
    EXPECT_EQ(hex(wire), "bec0bf");
}

TEST(EncoderHints, AnEvictedEntryIsNotReferenced) {
    Pair p;
    std::vector<uint8_t> wire;
    const HeaderList list = {{"x-a", "a value to enter"}, {"server", "nginx"}};
    p.round_trip(list);
    p.round_trip(list, &wire);
    EXPECT_EQ(hex(wire), "bfbe");
    // The peer empties its table and allows it again: both hints are dead.
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 0), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, 0), HPACK_OK);
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 4096), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, 4096), HPACK_OK);
    auto out = p.round_trip(list, &wire);
    EXPECT_EQ(out[0].rep, HPACK_REP_INCREMENTAL);
    EXPECT_EQ(out[1].rep, HPACK_REP_INCREMENTAL);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), 2u);
    p.round_trip(list, &wire);
    EXPECT_EQ(hex(wire), "bfbe");
}

TEST(EncoderHints, TheCallersNeverIndexFlagWinsOverAHint) {
    Pair p;
    const HeaderList list = {{"x-token", "t-0123456789"}, {":method", "GET"}};
    p.round_trip(list);
    auto out = p.round_trip(list);
    EXPECT_EQ(out[0].rep, HPACK_REP_INDEXED);
    EXPECT_EQ(out[1].rep, HPACK_REP_INDEXED);
    out = p.round_trip(list, nullptr, {HPACK_FIELD_NEVER_INDEX, HPACK_FIELD_NEVER_INDEX});
    EXPECT_EQ(out[0].rep, HPACK_REP_NEVER_INDEXED);
    EXPECT_EQ(out[1].rep, HPACK_REP_NEVER_INDEXED);
    out = p.round_trip(list);
    EXPECT_EQ(out[0].rep, HPACK_REP_INDEXED);
}

// Octets equal to the hash's constants, or to 0 or 1, at any place in a
// string of any length, leave its hash depending on the seed and on every
// other octet: no input wipes the state.
TEST(Hash, NoOctetsMakeTheSeedOrTheRestIrrelevant) {
    const uint64_t words[] = {0, 1, ~uint64_t{0}, 0xa0761d6478bd642full,
                              0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull};
    for (size_t n = 8; n <= 80; ++n) {
        for (size_t at = 0; at + 8 <= n; ++at) {
            for (uint64_t w : words) {
                std::vector<uint8_t> v(n, 'x'), u;
                memcpy(v.data() + at, &w, 8);
                u = v;
                u[at ? 0 : n - 1] ^= 1;  // an octet outside the word
                const uint64_t h1 = hpack::hash_bytes(v.data(), n, 0x1234);
                EXPECT_NE(h1, hpack::hash_bytes(v.data(), n, 0x5678)) << n << " " << at;
                EXPECT_NE(h1, hpack::hash_bytes(u.data(), n, 0x1234)) << n << " " << at;
            }
        }
    }
}

// The encoder's comparison of octets, at every length up to 100 and with
// a difference at every place, each span at the end of its buffer so that
// the sanitizer sees a read past it.
TEST(EncoderHints, EqualBytesAtEveryLengthAndPlace) {
    for (size_t n = 0; n <= 100; ++n) {
        std::vector<uint8_t> a(n), b(n);
        for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<uint8_t>(i * 37 + n);
        ASSERT_TRUE(hpack::equal_bytes(a.data(), b.data(), n)) << n;
        for (size_t i = 0; i < n; ++i) {
            b[i] ^= 0x20;
            ASSERT_FALSE(hpack::equal_bytes(a.data(), b.data(), n)) << n << " at " << i;
            b[i] ^= 0x20;
        }
    }
}

// Leading fields that repeat the last block's are written before the
// arguments of the rest are checked: a block refused after them (a bad
// field, a buffer short of the bound, even when the block is repeats
// alone and would fit) leaves no trace, not even in the statistics, and a
// block of repeats alone is counted as any other.
TEST(EncoderHints, ARefusedBlockAfterRepeatedFieldsLeavesNoTrace) {
    Pair p;
    std::vector<uint8_t> warm;
    p.round_trip(kResponse);
    p.round_trip(kResponse, &warm);
    ASSERT_EQ(warm.size(), kResponse.size());
    hpack_stats_t before{}, after{};
    hpack_encoder_stats(p.enc, &before);

    std::vector<hpack_header_t> hs = to_headers(kResponse);
    hs.push_back(hs.back());
    hs.back().name_len = 0;  // refused
    std::vector<uint8_t> out(hpack::encode_bound(hs.data(), hs.size()));
    size_t len = 0;
    EXPECT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), out.size(), &len),
              HPACK_E_ARGUMENT);
    const HeaderList fresh = {{"x-new", std::string(200, 'v')}};
    hs.back() = to_headers(fresh)[0];
    // room for the references and less than the new field needs
    EXPECT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), 64, &len), HPACK_E_BUFFER);
    // a block of repeats alone, one octet below the bound: refused too
    hs.pop_back();
    const size_t bound = hpack::encode_bound(hs.data(), hs.size());
    EXPECT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), bound - 1, &len),
              HPACK_E_BUFFER);
    // and with a pre-encoded value longer than the raw one, whose share
    // the references alone would not tell
    const std::vector<uint8_t> literal(hs[1].value_len + 50, 0x5a);
    hs[1].value_literal = literal.data();
    hs[1].value_literal_len = literal.size();
    const size_t longer = hpack::encode_bound(hs.data(), hs.size());
    ASSERT_EQ(longer, bound + 44);
    EXPECT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), longer - 1, &len),
              HPACK_E_BUFFER);
    hs[1].value_literal = nullptr;
    hs[1].value_literal_len = 0;
    hpack_encoder_stats(p.enc, &after);
    EXPECT_EQ(memcmp(&before, &after, sizeof before), 0);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), kResponse.size() - 1);  // not :status

    std::vector<uint8_t> wire;
    p.round_trip(kResponse, &wire);
    EXPECT_EQ(wire, warm);
    hpack_encoder_stats(p.enc, &after);
    EXPECT_EQ(after.blocks, before.blocks + 1);
    EXPECT_EQ(after.indexed_static, before.indexed_static + 1);
    EXPECT_EQ(after.indexed_dynamic, before.indexed_dynamic + kResponse.size() - 1);
    EXPECT_EQ(after.wire_bytes, before.wire_bytes + warm.size());
    size_t plain = 0;
    for (const auto& f : kResponse) plain += f.first.size() + f.second.size();
    EXPECT_EQ(after.plain_bytes, before.plain_bytes + plain);
    EXPECT_EQ(after.fields, before.fields + kResponse.size());
}

// A repeated field after one that is not: the references before it, the
// lookups from it on, in one block.
TEST(EncoderHints, RepeatsThenAChangeThenRepeats) {
    Pair p;
    HeaderList list = kResponse;
    p.round_trip(list);
    list[3].second = "private";
    std::vector<uint8_t> wire;
    auto out = p.round_trip(list, &wire);
    EXPECT_EQ(out[2].rep, HPACK_REP_INDEXED);
    EXPECT_EQ(out[3].rep, HPACK_REP_INCREMENTAL);
    EXPECT_EQ(out[4].rep, HPACK_REP_INDEXED);
    p.round_trip(list, &wire);
    EXPECT_EQ(wire.size(), list.size());
}

// Fields past the 32nd place keep no hint and still become references.
TEST(EncoderHints, LongBlocksBeyondTheHintedPlaces) {
    Pair p(65536);
    HeaderList list;
    for (int i = 0; i < 80; ++i) list.emplace_back("x-f" + std::to_string(i), "v");
    p.round_trip(list);
    std::vector<uint8_t> wire;
    p.round_trip(list, &wire);
    // Indexes 62 to 141: the 15 from 127 on take two octets.
    EXPECT_EQ(wire.size(), list.size() + 15u) << hex(wire);
}

// A base list mutated a little per block (values, order, never flags,
// table size changes): every block round-trips with equal tables.
TEST(EncoderHints, MutatingListsRoundTrip) {
    std::mt19937 rng(23);
    Pair p(8192);
    HeaderList base;
    for (int i = 0; i < 40; ++i) base.emplace_back("x-h" + std::to_string(i % 25), "v" + std::to_string(i));
    for (int block = 0; block < 3000; ++block) {
        if (rng() % 29 == 0) {
            const size_t s = std::vector<size_t>{0, 100, 512, 4096, 8192}[rng() % 5];
            ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, s), HPACK_OK);
            ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, s), HPACK_OK);
        }
        for (int k = rng() % 3; k > 0; --k) {
            auto& f = base[rng() % base.size()];
            f.second = "v" + std::to_string(rng() % 60);
        }
        if (rng() % 7 == 0) std::swap(base[rng() % base.size()], base[rng() % base.size()]);
        std::vector<unsigned> flags(base.size(), 0);
        for (auto& fl : flags)
            if (rng() % 50 == 0) fl = HPACK_FIELD_NEVER_INDEX;
        auto out = p.round_trip(base, nullptr, flags);
        ASSERT_EQ(out.size(), base.size());
        for (size_t i = 0; i < out.size(); ++i) {
            if (flags[i]) {
                ASSERT_EQ(out[i].rep, HPACK_REP_NEVER_INDEXED) << block << " " << i;
            }
        }
        ASSERT_EQ(hpack_decoder_table_entries(p.dec), hpack_encoder_table_entries(p.enc));
        if (testing::Test::HasFailure()) return;
    }
}

TEST(EncoderTable, AllOctetsInNamesAndValuesRoundTrip) {
    Pair p;
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    p.round_trip({{"x-all", all}, {"x-all", all}, {"x-huff", "aaaaaaaaaa"}});
}

// RFC 7541 7.1: secrets never enter the table and stay never-indexed.
TEST(EncoderPolicy, NeverIndexesSecrets) {
    Pair p;
    const HeaderList list = {{"authorization", "Bearer abc.def.ghi"},
                             {"proxy-authorization", "Basic dXNlcjpwYXNz"},
                             {"set-cookie", "sid=31d4d96e407a"},       // short: a guessable id
                             {"cookie", "sid=31d4d96e407a"}};
    for (int i = 0; i < 3; ++i) {
        auto out = p.round_trip(list);
        for (const auto& f : out) EXPECT_EQ(f.rep, HPACK_REP_NEVER_INDEXED) << f.name;
    }
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), 0u);
}

TEST(EncoderPolicy, CallerFlagAndAddedNamesAreNeverIndexed) {
    hpack_policy_t* policy = hpack_policy_create(nullptr);
    ASSERT_EQ(hpack_policy_add(policy, "x-api-key", 9, HPACK_POLICY_NEVER_INDEX), HPACK_OK);
    EXPECT_EQ(hpack_policy_add(policy, "X-Upper", 7, HPACK_POLICY_NEVER_INDEX), HPACK_E_ARGUMENT);
    EXPECT_EQ(hpack_policy_add(policy, "x", 1, 0), HPACK_E_ARGUMENT);
    EXPECT_EQ(hpack_policy_lookup(policy, "x-api-key", 9), unsigned{HPACK_POLICY_NEVER_INDEX});
    EXPECT_EQ(hpack_policy_lookup(policy, "date", 4), unsigned{HPACK_POLICY_VOLATILE});
    {
        Pair p(4096, policy);
        const HeaderList list = {{"x-api-key", "k-123456789012345678901234"},
                                 {"x-custom", "flagged by the caller"},
                                 {"x-plain", "indexed"}};
        for (int i = 0; i < 2; ++i) {
            auto out = p.round_trip(list, nullptr, {0, HPACK_FIELD_NEVER_INDEX, 0});
            EXPECT_EQ(out[0].rep, HPACK_REP_NEVER_INDEXED);
            EXPECT_EQ(out[1].rep, HPACK_REP_NEVER_INDEXED);
            EXPECT_EQ(out[2].rep, i == 0 ? HPACK_REP_INCREMENTAL : HPACK_REP_INDEXED);
        }
    }
    hpack_policy_destroy(policy);
}

// Fills p's table past half of its 4096 octets with fields of one name of
// its own, which never recur (64 octets an entry).
static void fill_past_half(Pair& p, int from = 100000) {
    for (int i = from; hpack_encoder_table_size(p.enc) <= 2048; ++i)
        p.round_trip({{"x-fill", "filler-value-" + std::to_string(i) + "-abcdef"}});
}

// Volatile fields go in when they recur, or once when no table holds their
// name, so that their later values can refer to it (those with a static
// name from 15 on also while the table is half empty: the next test).
TEST(EncoderPolicy, VolatileFieldsAreIndexedOnlyWhenTheyRecur) {
    Pair p;
    auto a = p.round_trip({{":path", "/a?x=0"}});
    EXPECT_EQ(a[0].rep, HPACK_REP_WITHOUT_INDEXING);
    fill_past_half(p);
    auto b = p.round_trip({{"x-request-id", "4f2a9c"}, {":path", "/a?x=1"}});
    EXPECT_EQ(b[0].rep, HPACK_REP_INCREMENTAL);     // enters once: its name
    EXPECT_EQ(b[1].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(b[1].index, 4u);
    auto c = p.round_trip({{"x-request-id", "77e1d0"}, {":path", "/a?x=1"}});
    EXPECT_EQ(c[0].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(c[0].index, 62u);                     // the name from the table
    EXPECT_EQ(c[1].rep, HPACK_REP_INCREMENTAL);     // the same path again
    auto d = p.round_trip({{":path", "/a?x=1"}});
    EXPECT_EQ(d[0].rep, HPACK_REP_INDEXED);
}

// Once the table is full, a name whose values keep coming new is learned
// volatile for the connection: its new values go without indexing, while a
// name whose values recur goes on being indexed on sight.  Secrets stay out
// whatever is learned.
TEST(EncoderPolicy, NamesWhoseValuesKeepComingNewAreLearnedVolatile) {
    Pair p;
    fill_past_half(p);
    // full: 64 more octets would evict
    for (int i = 200000; hpack_encoder_table_size(p.enc) + 64 <= 4096; ++i)
        p.round_trip({{"x-fill", "filler-value-" + std::to_string(i) + "-abcdef"}});
    int id_indexed = 0, type_indexed = 0, last_id = -1;
    for (int i = 0; i < 40; ++i) {
        auto out = p.round_trip({{"x-trace", "t-" + std::to_string(7919 * i)},
                                 {"content-type", i % 2 ? "text/css" : "image/png"},
                                 {"authorization", "Basic c2VjcmV0OnNlY3JldA=="}});
        if (out[0].rep == HPACK_REP_INCREMENTAL) {
            ++id_indexed;
            last_id = i;
        }
        type_indexed += out[1].rep == HPACK_REP_INCREMENTAL;
        EXPECT_EQ(out[2].rep, HPACK_REP_NEVER_INDEXED);
    }
    EXPECT_LE(id_indexed, 8);   // on sight until the name's counts say volatile
    EXPECT_LT(last_id, 10);
    EXPECT_LE(type_indexed, 2);  // each value once, then references
}

// On a connection whose table holds more than 64 entries, a field that
// blocks keep referring to drifts to indexes of two octets as new fields go
// in; the 12th reference there to a short one writes it again instead, as
// the newest entry, one octet from then on.  A long one is left where it is.
const Header kHot("x-hot", "yes");
const Header kLongHot("x-long", std::string(60, 'L'));

// A 65536-octet table where x-hot and x-long were entered first, then 100
// fields that recur: both have two-octet indexes.
Pair hot_entries_far_back() {
    Pair p = Pair::large(65536);
    p.round_trip({kHot, kLongHot});
    for (int i = 0; i < 100; ++i)  // every value recurs: all go in
        p.round_trip({{"x-fill", std::to_string(i)}, {"x-fill", std::to_string(i)}});
    return p;
}

TEST(EncoderPolicy, HotEntriesWithTwoOctetIndexesAreRefreshed) {
    Pair p = hot_entries_far_back();
    std::vector<hpack_representation_t> reps;
    for (int i = 0; i < 14; ++i) {
        auto out = p.round_trip({kHot, kLongHot});
        reps.push_back(out[0].rep);
        EXPECT_EQ(out[1].rep, HPACK_REP_INDEXED);
        EXPECT_GE(out[1].index, 127u);
    }
    const std::vector<hpack_representation_t> want = {
        HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INDEXED,
        HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INDEXED,
        HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INDEXED, HPACK_REP_INCREMENTAL,
        HPACK_REP_INDEXED, HPACK_REP_INDEXED};
    EXPECT_EQ(reps, want);
    auto last = p.round_trip({kHot});
    EXPECT_EQ(last[0].index, 62u);  // the refreshed copy, the newest entry
}

// hpack.h's lists of the built-in policy, name by name.
TEST(EncoderPolicy, TheBuiltInListsAreTheDocumentedOnes) {
    hpack_policy_t* policy = hpack_policy_create(nullptr);
    ASSERT_NE(policy, nullptr);
    auto flags = [&](const std::string& n) {
        return hpack_policy_lookup(policy, n.data(), n.size());
    };
    for (const char* n : {"authorization", "proxy-authorization"})
        EXPECT_EQ(flags(n), unsigned{HPACK_POLICY_NEVER_INDEX}) << n;
    for (const char* n : {"cookie", "set-cookie", "content-length", "date", "etag", "last-modified", "expires", "age",
                          ":path", "location", "if-none-match", "if-modified-since",
                          "x-request-id", "x-correlation-id", "request-id", "traceparent",
                          "x-amzn-trace-id", "content-range"})
        EXPECT_EQ(flags(n), unsigned{HPACK_POLICY_VOLATILE}) << n;
    for (const char* n : {"server", "content-type", "cache-control", "vary", "x-frame-options"})
        EXPECT_EQ(flags(n), 0u) << n;
    hpack_policy_destroy(policy);
}

// A refresh inserts into the name's chain as any insertion does: the entry
// it pushes out of the walk's reach is linked into the name+value index,
// and found there.
TEST(EncoderPolicy, ARefreshLeavesTheChainsEntriesFound) {
    Pair p = Pair::large(65536);
    auto one = [&](const std::string& n, const std::string& v) {
        return p.round_trip({{n, v}}).at(0);
    };
    one("via", "old");
    for (int i = 0; i < 70; ++i) one("x-fill-" + std::to_string(i), "f");
    for (int i = 0; i < 8; ++i) one("via", "v" + std::to_string(i));
    Decoded v0 = one("via", "v0");  // the chain's 8th entry: found by the walk
    ASSERT_EQ(v0.rep, HPACK_REP_INDEXED);
    ASSERT_EQ(v0.index, 69u);
    std::vector<hpack_representation_t> reps;
    for (int i = 0; i < 12; ++i) reps.push_back(one("via", "old").rep);
    ASSERT_EQ(reps.back(), HPACK_REP_INCREMENTAL);  // the refresh, a 10th via
    v0 = one("via", "v0");  // now 9th in the chain
    EXPECT_EQ(v0.rep, HPACK_REP_INDEXED);
    EXPECT_EQ(v0.index, 70u);
}

// References the repeats of a refused block counted are taken back: the
// refresh of a hot entry with a two-octet index comes at its 12th
// reference, however many blocks were refused between.
TEST(EncoderHints, ARefusedBlockCountsNoReferences) {
    Pair p = hot_entries_far_back();
    auto first = p.round_trip({kHot, kLongHot});  // the 1st reference, two octets
    ASSERT_EQ(first[0].rep, HPACK_REP_INDEXED);
    ASSERT_GE(first[0].index, 127u);
    // its hints made, the repeats run, then the bound refuses the block
    const HeaderList refused = {kHot, kLongHot, {"x-big", std::string(200, 'b')}};
    std::vector<hpack_header_t> hs = to_headers(refused);
    std::vector<uint8_t> out(200);
    size_t len = 0;
    for (int i = 0; i < 10; ++i)
        ASSERT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), out.size(), &len),
                  HPACK_E_BUFFER);
    hs[2].name_len = 0;
    ASSERT_EQ(hpack_encode(p.enc, hs.data(), hs.size(), out.data(), out.size(), &len),
              HPACK_E_ARGUMENT);
    std::vector<hpack_representation_t> reps;
    for (int i = 0; i < 12; ++i) reps.push_back(p.round_trip({kHot, kLongHot})[0].rep);
    std::vector<hpack_representation_t> want(12, HPACK_REP_INDEXED);
    want[10] = HPACK_REP_INCREMENTAL;  // the 12th reference
    EXPECT_EQ(reps, want);
}

// The history of volatile fields starts at 16 slots and moves to 512 once
// 8 new fields went in: what the first slots held is still known after
// the move, and 80 more distinct values (paths) recur as incremental
// fields.  Each set keeps its two newest: a value is forgotten when two
// later ones fall into its set.  Placement follows the hash, which is
// seeded per encoder (by its address), hence the margins: with 512 slots
// 7.0 of the first 8 and 76.3 of the next 80 recur on average over 23,000
// encoders (never fewer than 1 and 59), with 16 slots none of the first
// and at most 16 of the others, and with the move leaving the first slots
// behind none of the first.
TEST(EncoderPolicy, HistoryOfVolatileFieldsGrowsAndKeepsWhatItHeld) {
    Pair p;
    fill_past_half(p);  // where volatile fields go in only when they recur
    auto path = [](int i) { return "/page/" + std::to_string(i) + "?v=" + std::to_string(i * 7); };
    auto recurs = [&](int from, int to) {
        int n = 0;
        for (int i = from; i < to; ++i)
            n += p.round_trip({{":path", path(i)}})[0].rep == HPACK_REP_INCREMENTAL;
        return n;
    };
    EXPECT_EQ(recurs(0, 8), 0);     // all new, in the first 16 slots
    EXPECT_EQ(recurs(100, 180), 0); // the move to 512 slots at the first
    EXPECT_GE(recurs(0, 8), 1);     // held across the move
    EXPECT_GE(recurs(100, 180), 40);
}

// A volatile field is entered on sight while the table stays at most half
// full (with a static name from 15 on it is then what stock nginx sends,
// 0x40 | index, an octet shorter than a literal without indexing), and
// beyond that only when it recurs.
TEST(EncoderPolicy, VolatileFieldsEnterOnSightWhileTheTableIsHalfEmpty) {
    Pair p;
    const std::string date = "Mon, 21 Oct 2013 20:13:21 GMT";  // 65 octets an entry
    std::vector<uint8_t> wire;
    auto a = p.round_trip({{"date", date}}, &wire);
    EXPECT_EQ(a[0].rep, HPACK_REP_INCREMENTAL);
    EXPECT_EQ(wire[0], 0x40 | 33);
    EXPECT_EQ(p.round_trip({{"date", date}})[0].rep, HPACK_REP_INDEXED);
    // A long set-cookie is volatile, not secret.
    std::string cookie = "prefs=" + std::string(40, 'q') + "; Path=/; Secure";
    EXPECT_EQ(p.round_trip({{"set-cookie", cookie}})[0].rep, HPACK_REP_INCREMENTAL);
    // Entries of 64 octets until the next date would fill more than half.
    for (int i = 0; hpack_encoder_table_size(p.enc) + 65 <= 2048; ++i) {
        const std::string v = "filler-value-" + std::to_string(100000 + i) + "-abcdef";
        ASSERT_EQ(v.size() + 6 + 32, 64u);
        p.round_trip({{"x-fill", v}});
    }
    const size_t entries = hpack_encoder_table_entries(p.enc);
    const std::string later = "Mon, 21 Oct 2013 20:13:22 GMT";
    auto b = p.round_trip({{"date", later}}, &wire);
    EXPECT_EQ(b[0].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(b[0].index, 33u);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), entries);
    EXPECT_EQ(p.round_trip({{"date", later}})[0].rep, HPACK_REP_INCREMENTAL);  // recurs
    EXPECT_EQ(p.round_trip({{"date", later}})[0].rep, HPACK_REP_INDEXED);
}

TEST(EncoderPolicy, NoIndexFlagKeepsTheTableUntouched) {
    Pair p;
    auto a = p.round_trip({{"x-once", "1"}}, nullptr, {HPACK_FIELD_NO_INDEX});
    EXPECT_EQ(a[0].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), 0u);
}

TEST(EncoderPolicy, HugeFieldsDoNotFlushTheTable) {
    Pair p;
    p.round_trip(kResponse);
    const size_t entries = hpack_encoder_table_entries(p.enc);
    auto a = p.round_trip({{"x-big", std::string(3500, 'z')}});
    EXPECT_EQ(a[0].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), entries);
}

// RFC 7541 4.2: after SETTINGS_HEADER_TABLE_SIZE changes, the next block
// starts with the smallest size reached, then the final one.
TEST(EncoderSizeUpdate, DropThenRiseSignalsMinimumThenFinal) {
    Pair p;
    p.round_trip(kResponse);
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 0), HPACK_OK);
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 4096), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, 0), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, 4096), HPACK_OK);
    std::vector<uint8_t> wire;
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "203fe11f88");
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), 0u);
}

TEST(EncoderSizeUpdate, ShrinkSignalsOnceAndEvicts) {
    Pair p;
    p.round_trip(kResponse);
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 1024), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(p.dec, 1024), HPACK_OK);
    std::vector<uint8_t> wire;
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "3fe10788");
    EXPECT_LE(hpack_encoder_table_size(p.enc), 1024u);
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "88");
}

TEST(EncoderSizeUpdate, UnchangedOrAboveOurCapSendsNothing) {
    Pair p;
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 4096), HPACK_OK);
    std::vector<uint8_t> wire;
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "88");
    ASSERT_EQ(hpack_encoder_set_peer_table_size(p.enc, 65536), HPACK_OK);  // cap is 4096
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "88");
}

TEST(EncoderSizeUpdate, OurSmallerCapIsSignalledInTheFirstBlock) {
    Pair p(1024);
    std::vector<uint8_t> wire;
    p.round_trip({{":status", "200"}}, &wire);
    EXPECT_EQ(hex(wire), "3fe10788");
    Pair zero(0);
    zero.round_trip(kResponse, &wire);
    EXPECT_EQ(wire[0], 0x20);
    EXPECT_EQ(hpack_encoder_table_entries(zero.enc), 0u);
}

TEST(EncoderStrings, HuffmanOnlyWhenStrictlyShorter) {
    uint8_t buf[64];
    // "aaaa": 4 x 5 bits = 20 bits -> 3 octets < 4: Huffman.
    EXPECT_EQ(hpack_string_encode(reinterpret_cast<const uint8_t*>("aaaa"), 4, buf), 4u);
    EXPECT_EQ(buf[0], 0x83);
    // "\xff\xff": 26 bits each: raw.
    EXPECT_EQ(hpack_string_encode(reinterpret_cast<const uint8_t*>("\xff\xff"), 2, buf), 3u);
    EXPECT_EQ(buf[0], 0x02);
    // "ab" (5 + 6 bits -> 2 octets == 2): not strictly shorter: raw.
    EXPECT_EQ(hpack_string_encode(reinterpret_cast<const uint8_t*>("ab"), 2, buf), 3u);
    EXPECT_EQ(buf[0], 0x02);
    EXPECT_EQ(hpack_string_encoded_len(reinterpret_cast<const uint8_t*>("aaaa"), 4), 4u);
}

// Inside a block the Huffman code is written at once and given up when it
// is not shorter, in a buffer of exactly the bound and in a larger one: the
// bytes are those hpack_string_encode() gives (length pass first), for
// strings whose code is shorter, equally long or longer, and for a string
// whose length prefix shrinks when coded (130 octets into fewer than 127).
TEST(EncoderStrings, InBlockLiteralsEqualTheStandaloneForm) {
    const std::string values[] = {
        "aaaa", "ab", std::string("\xff\xfe\xfd", 3), std::string(130, 'a'),
        std::string(126, '0'), std::string(300, 'z'), "",
    };
    for (const std::string& v : values) {
        const uint8_t* src = reinterpret_cast<const uint8_t*>(v.data());
        std::vector<uint8_t> lit(hpack_string_encoded_len(src, v.size()));
        ASSERT_EQ(hpack_string_encode(src, v.size(), lit.data()), lit.size());
        hpack_header_t h{};
        h.name = reinterpret_cast<const uint8_t*>("x-test");
        h.name_len = 6;
        h.value = src;
        h.value_len = v.size();
        h.flags = HPACK_FIELD_NO_INDEX;
        for (size_t extra : {size_t{0}, size_t{4096}}) {
            hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
            std::vector<uint8_t> out(hpack::encode_bound(&h, 1) + extra);
            size_t len = 0;
            ASSERT_EQ(hpack_encode(e, &h, 1, out.data(), out.size(), &len), HPACK_OK);
            out.resize(len);
            // 0x00, the name "x-test" as a literal (Huffman, 5 octets), the value.
            ASSERT_GT(out.size(), lit.size());
            EXPECT_EQ(hex(out.data() + out.size() - lit.size(), lit.size()), hex(lit))
                << v.size() << " octets, room beyond the bound " << extra;
            hpack_encoder_destroy(e);
        }
    }
}

TEST(EncoderStrings, PreEncodedValuesAreCopied) {
    Pair p;
    const std::string value = "max-age=63072000; includeSubDomains";
    std::vector<uint8_t> lit(hpack_string_encoded_len(
        reinterpret_cast<const uint8_t*>(value.data()), value.size()));
    hpack_string_encode(reinterpret_cast<const uint8_t*>(value.data()), value.size(), lit.data());
    hpack_header_t h{};
    h.name = reinterpret_cast<const uint8_t*>("strict-transport-security");
    h.name_len = 25;
    h.value = reinterpret_cast<const uint8_t*>(value.data());
    h.value_len = value.size();
    h.value_literal = lit.data();
    h.value_literal_len = lit.size();
    std::vector<uint8_t> out(hpack_tools::encode_room(&h, 1));
    size_t len;
    ASSERT_EQ(hpack_encode(p.enc, &h, 1, out.data(), out.size(), &len), HPACK_OK);
    out.resize(len);
    // 0x40|56 then the literal exactly.
    EXPECT_EQ(hex(out), "78" + hex(lit));
    std::vector<Decoded> fields;
    ASSERT_EQ(decode(p.dec, out, &fields), HPACK_OK);
    EXPECT_EQ(fields[0].value, value);
}

TEST(EncoderApi, BufferBelowTheBoundIsRefusedWithoutSideEffects) {
    Pair p;
    hpack_header_t h{};
    h.name = reinterpret_cast<const uint8_t*>("x-a");
    h.name_len = 3;
    h.value = reinterpret_cast<const uint8_t*>("b");
    h.value_len = 1;
    uint8_t out[4];
    size_t len = 0;
    EXPECT_EQ(hpack_encode(p.enc, &h, 1, out, sizeof out, &len), HPACK_E_BUFFER);
    EXPECT_EQ(hpack_encoder_table_entries(p.enc), 0u);
    h.name_len = 0;
    std::vector<uint8_t> big(64);
    EXPECT_EQ(hpack_encode(p.enc, &h, 1, big.data(), big.size(), &len), HPACK_E_ARGUMENT);
    EXPECT_EQ(hpack_encoder_create(nullptr, HPACK_MAX_TABLE_SIZE + 1, nullptr), nullptr);
}

TEST(EncoderApi, BoundHoldsForWorstCaseInput) {
    Pair p;
    std::string worst;
    for (int i = 0; i < 1000; ++i) worst += static_cast<char>(0xff - i % 8);
    HeaderList list = {{"x-w", worst}, {std::string(300, '\xfe'), worst}};
    std::vector<uint8_t> wire;
    p.round_trip(list, &wire);
    EXPECT_FALSE(wire.empty());
}

// HPACK_ENCODE_BOUND() from the sizes alone is never below the bound
// hpack_encode() checks (encode_bound()), and a block encodes into that much room: random
// lists with raw, Huffman-friendly and incompressible values, with and
// without pre-encoded literals, and with a size update pending.
TEST(EncoderApi, TheBoundFromSizesCoversTheBoundOfTheCall) {
    std::mt19937 rng(35);
    const std::string alphabet[] = {"abcdefghijklmnopqrstuvwxyz-0123456789",
                                    "\xff\xfe\xfd\xfc\x01\x02", "ABC/=;, \"%"};
    for (int round = 0; round < 300; ++round) {
        hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
        if (round % 3 == 0) {
            ASSERT_EQ(hpack_encoder_set_peer_table_size(e, 1024), HPACK_OK);
        }
        const size_t n = rng() % 20;
        std::vector<std::string> names(n), values(n);
        std::vector<std::vector<uint8_t>> literals(n);
        std::vector<hpack_header_t> hs(n);
        size_t octets = 0;
        for (size_t i = 0; i < n; ++i) {
            const std::string& a = alphabet[rng() % 3];
            names[i] = "x-" + std::to_string(rng() % 7);
            for (size_t k = rng() % 300; k; --k) values[i] += a[rng() % a.size()];
            hpack_header_t& h = hs[i];
            h = hpack_header_t{};
            h.name = reinterpret_cast<const uint8_t*>(names[i].data());
            h.name_len = names[i].size();
            h.value = reinterpret_cast<const uint8_t*>(values[i].data());
            h.value_len = values[i].size();
            if (rng() % 4 == 0) {
                literals[i].resize(hpack_string_encoded_len(h.value, h.value_len));
                hpack_string_encode(h.value, h.value_len, literals[i].data());
                h.value_literal = literals[i].data();
                h.value_literal_len = literals[i].size();
            }
            octets += h.name_len + h.value_len + h.value_literal_len;
        }
        const size_t bound = HPACK_ENCODE_BOUND(n, octets);
        ASSERT_GE(bound, hpack::encode_bound(hs.data(), n)) << "round " << round;
        for (int block = 0; block < 2; ++block) {
            std::vector<uint8_t> out(bound);
            size_t len = 0;
            ASSERT_EQ(hpack_encode(e, hs.data(), n, out.data(), out.size(), &len), HPACK_OK);
            ASSERT_LE(len, bound);
        }
        hpack_encoder_destroy(e);
    }
}

// Thousands of unique names stay O(1) per lookup; correctness here, speed
// in the benchmark.
// A name with many values (a static name and another): each value the
// table holds is found again, whether the walk of the name's chain reaches
// it or the name+value index must, which an entry enters only once the walk
// no longer reaches it; also after the table grew and its chains were
// rebuilt.  Which values go in is the policy's (a name whose values keep
// coming new is volatile once the table is half full): the test follows
// the representations the decoder saw.
TEST(EncoderTable, EveryValueOfANameWithManyValuesIsFoundAgain) {
    for (const char* name : {"accept", "x-many"}) {
        SCOPED_TRACE(name);
        hpack_encoder_t* e = hpack_encoder_create(nullptr, 65536, nullptr);
        hpack_decoder_t* d = hpack_decoder_create(nullptr, 65536);
        ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 65536), HPACK_OK);
        std::set<std::string> held;
        auto blocks = [&](int from, int to) {  // values from..to, step +-1, 50 a block
            const int step = from <= to ? 1 : -1;
            for (int v = from; v != to + step;) {
                HeaderList list;
                for (int i = 0; i < 50 && v != to + step; ++i, v += step)
                    list.emplace_back(name, "value-" + std::to_string(v));
                std::vector<Decoded> out;
                ASSERT_EQ(decode(d, encode(e, list), &out), HPACK_OK);
                ASSERT_EQ(names_values(out), list);
                for (const Decoded& f : out) {
                    ASSERT_EQ(f.rep == HPACK_REP_INDEXED, held.count(f.value) == 1) << f.value;
                    if (f.rep == HPACK_REP_INCREMENTAL) held.insert(f.value);
                }
            }
        };
        hpack_stats_t st;
        blocks(0, 59);  // within the first 4096 octets
        blocks(59, 0);
        blocks(0, 59);
        hpack_encoder_stats(e, &st);
        EXPECT_EQ(st.insertions, 60u);  // each value went in, at its first or second sight
        ASSERT_EQ(hpack_encoder_set_peer_table_size(e, 65536), HPACK_OK);
        blocks(60, 299);
        blocks(299, 0);
        blocks(0, 299);
        hpack_encoder_stats(e, &st);
        EXPECT_EQ(st.insertions, 300u);
        EXPECT_EQ(st.evictions, 0u);
        hpack_encoder_destroy(e);
        hpack_decoder_destroy(d);
    }
}

// Fields of a few names with many values each, drawn at random, with the
// table evicting all along: a field is a reference exactly when a model of
// the table (RFC 7541 4.4), kept from the representations the decoder saw,
// holds it, so no entry is lost from reach, however late it entered the
// name+value index and whichever entries left the table before it.  The
// one exception is a refresh: a held field whose index takes two octets
// written again with incremental indexing.
TEST(EncoderTable, AFieldInTheTableIsAlwaysFound) {
    const std::vector<std::string> names = {"accept", "x-many", "x-more", "via"};
    std::mt19937 rng(7);
    Pair pair;
    std::deque<std::pair<std::string, std::string>> model;  // newest first
    size_t model_size = 0, found = 0, refreshed = 0;
    for (int b = 0; b < 2000; ++b) {
        HeaderList list;
        const int n = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < n; ++i) {
            // One name in two draws, so that its chain is long and the
            // others' short.
            const std::string& name = names[rng() % 2 ? 0 : 1 + rng() % 3];
            list.emplace_back(name, "v" + std::to_string(rng() % 60));
        }
        const std::vector<Decoded> out = pair.round_trip(list);
        for (const Decoded& f : out) {
            const auto held = std::find(model.begin(), model.end(),
                                        std::make_pair(f.name, f.value));
            if (held != model.end()) {
                const size_t index = 62 + static_cast<size_t>(held - model.begin());
                if (f.rep == HPACK_REP_INDEXED) {
                    ASSERT_EQ(f.index, index) << "block " << b;
                    ++found;
                    continue;
                }
                ASSERT_EQ(f.rep, HPACK_REP_INCREMENTAL) << "block " << b << " " << f.value;
                ASSERT_GE(index, 127u) << "block " << b;
                ++refreshed;
            } else {
                ASSERT_NE(f.rep, HPACK_REP_INDEXED) << "block " << b;
            }
            if (f.rep != HPACK_REP_INCREMENTAL) continue;
            const size_t size = 32 + f.name.size() + f.value.size();
            while (model_size + size > 4096) {
                model_size -= 32 + model.back().first.size() + model.back().second.size();
                model.pop_back();
            }
            model.emplace_front(f.name, f.value);
            model_size += size;
        }
    }
    EXPECT_GT(found, 10000u);
    EXPECT_LE(refreshed, found / 12);
}

TEST(EncoderTable, ThousandsOfUniqueFieldsInALargeTable) {
    hpack_encoder_t* e = hpack_encoder_create(nullptr, HPACK_MAX_TABLE_SIZE, nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, HPACK_MAX_TABLE_SIZE);
    ASSERT_EQ(hpack_encoder_set_peer_table_size(e, HPACK_MAX_TABLE_SIZE), HPACK_OK);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(d, HPACK_MAX_TABLE_SIZE), HPACK_OK);
    for (int b = 0; b < 100; ++b) {
        HeaderList list;
        for (int i = 0; i < 100; ++i)
            list.emplace_back("x-u" + std::to_string(b * 100 + i), std::to_string(i));
        std::vector<Decoded> out;
        ASSERT_EQ(decode(d, encode(e, list), &out), HPACK_OK);
        ASSERT_EQ(names_values(out), list);
    }
    EXPECT_EQ(hpack_encoder_table_entries(e), 10000u);
    hpack_stats_t st;
    hpack_encoder_stats(e, &st);
    EXPECT_EQ(st.insertions, 10000u);
    hpack_encoder_destroy(e);
    hpack_decoder_destroy(d);
}

}  // namespace
