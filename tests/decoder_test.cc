// The decoder: every error with its exact code and HTTP/2 mapping, the
// limits that stop HPACK bombs, memo slots, size-update rules.

#include <gtest/gtest.h>

#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "memory.h"
#include "hpack.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

int decode_hex(const char* wire, size_t settings = 4096, size_t max_field = 0,
               size_t max_list = 0) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, settings);
    hpack_decoder_set_limits(d, max_field, max_list);
    std::vector<Decoded> fields;
    int rc = decode(d, unhex(wire), &fields);
    hpack_decoder_destroy(d);
    return rc;
}

// A literal with incremental indexing and a new name (shorter than 127
// octets), both strings raw: the value's length is written by hand here
// (RFC 7541 5.1, a 7-bit prefix), not by the codec under test.
std::vector<uint8_t> incremental_literal(const std::string& name, const std::string& value) {
    std::vector<uint8_t> b = {0x40, static_cast<uint8_t>(name.size())};
    b.insert(b.end(), name.begin(), name.end());
    if (value.size() < 127) {
        b.push_back(static_cast<uint8_t>(value.size()));
    } else {
        b.push_back(0x7f);
        size_t rest = value.size() - 127;
        for (; rest >= 128; rest >>= 7) b.push_back(static_cast<uint8_t>(0x80 | (rest & 0x7f)));
        b.push_back(static_cast<uint8_t>(rest));
    }
    b.insert(b.end(), value.begin(), value.end());
    return b;
}

struct ErrorCase {
    const char* what;
    const char* wire;
    int error;
};

class DecoderRejects : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(DecoderRejects, WithTheExactErrorCode) {
    const ErrorCase& c = GetParam();
    EXPECT_EQ(decode_hex(c.wire), c.error) << c.what << ": " << c.wire;
    EXPECT_EQ(hpack_h2_error(c.error), HPACK_H2_COMPRESSION_ERROR);
    EXPECT_STRNE(hpack_strerror(c.error), "unknown error");
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, DecoderRejects,
    ::testing::Values(
        ErrorCase{"index 0", "80", HPACK_E_INDEX},
        ErrorCase{"index past the empty dynamic table", "be", HPACK_E_INDEX},
        ErrorCase{"literal name index past the table", "7f00", HPACK_E_INDEX},
        ErrorCase{"integer of six octets", "ffffffffff0f", HPACK_E_INTEGER},
        ErrorCase{"integer of seven octets", "ff808080808001", HPACK_E_INTEGER},
        ErrorCase{"index in five octets (nginx takes four)", "ff81808000", HPACK_E_INTEGER},
        ErrorCase{"string length in five octets", "0001617f80808000", HPACK_E_INTEGER},
        ErrorCase{"index 127 as ff 80 00, past the table", "ff8000", HPACK_E_INDEX},
        ErrorCase{"block ends inside an integer", "ff", HPACK_E_TRUNCATED},
        ErrorCase{"block ends inside a name", "400a637573", HPACK_E_TRUNCATED},
        ErrorCase{"block ends before the value", "4001", HPACK_E_TRUNCATED},
        ErrorCase{"literal longer than the block", "00016105616263", HPACK_E_TRUNCATED},
        ErrorCase{"EOS inside a Huffman string", "00016184ffffffff", HPACK_E_HUFFMAN_EOS},
        ErrorCase{"Huffman padding longer than 7 bits", "000161821fff", HPACK_E_HUFFMAN_PADDING},
        ErrorCase{"Huffman padding not all ones", "0001618118", HPACK_E_HUFFMAN_PADDING},
        ErrorCase{"size update after a field", "823fe11f", HPACK_E_UPDATE_POSITION},
        ErrorCase{"size update above SETTINGS_HEADER_TABLE_SIZE", "3fe21f", HPACK_E_UPDATE_SIZE}),
    [](const ::testing::TestParamInfo<ErrorCase>& i) {
        std::string n;
        for (const char* p = i.param.what; *p; ++p)
            if (isalnum(static_cast<unsigned char>(*p))) n += *p;
        return n;
    });

TEST(DecoderErrors, AreStickyAndMapToHttp2Codes) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    EXPECT_EQ(decode(d, unhex("80"), &fields), HPACK_E_INDEX);
    EXPECT_EQ(decode(d, unhex("82"), &fields), HPACK_E_STATE);
    hpack_decoder_destroy(d);
    EXPECT_EQ(hpack_h2_error(HPACK_E_FIELD_TOO_LARGE), HPACK_H2_ENHANCE_YOUR_CALM);
    EXPECT_EQ(hpack_h2_error(HPACK_E_LIST_TOO_LARGE), HPACK_H2_ENHANCE_YOUR_CALM);
    EXPECT_EQ(hpack_h2_error(HPACK_E_NOMEM), HPACK_H2_INTERNAL_ERROR);
    EXPECT_EQ(hpack_h2_error(HPACK_OK), HPACK_H2_NO_ERROR);
}

TEST(DecoderSizeUpdate, AcceptedOnlyBeforeTheFirstField) {
    EXPECT_EQ(decode_hex("3fe11f82"), HPACK_OK);      // 4096 then a field
    EXPECT_EQ(decode_hex("203fe11f82"), HPACK_OK);    // 0, 4096, a field
    EXPECT_EQ(decode_hex("82203fe11f"), HPACK_E_UPDATE_POSITION);
}

TEST(DecoderSizeUpdate, ZeroEvictsEverything) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    ASSERT_EQ(decode(d, unhex("40016101624001630164"), &fields), HPACK_OK);
    EXPECT_EQ(hpack_decoder_table_entries(d), 2u);
    ASSERT_EQ(decode(d, unhex("20"), &fields), HPACK_OK);
    EXPECT_EQ(hpack_decoder_table_entries(d), 0u);
    EXPECT_EQ(decode(d, unhex("be"), &fields), HPACK_E_INDEX);
    hpack_decoder_destroy(d);
}

// RFC 7541 4.2: after our SETTINGS_HEADER_TABLE_SIZE shrank, the peer's
// next block must begin with an update no larger than it.
TEST(DecoderSizeUpdate, RequiredAfterSettingsShrink) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 1024), HPACK_OK);
    EXPECT_EQ(decode(d, unhex("82"), &fields), HPACK_E_UPDATE_MISSING);
    hpack_decoder_destroy(d);

    d = hpack_decoder_create(nullptr, 4096);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 1024), HPACK_OK);
    EXPECT_EQ(decode(d, unhex("3fe20782"), &fields), HPACK_E_UPDATE_SIZE);  // 1025
    hpack_decoder_destroy(d);

    d = hpack_decoder_create(nullptr, 4096);
    ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 1024), HPACK_OK);
    EXPECT_EQ(decode(d, unhex("3fe10782"), &fields), HPACK_OK);             // 1024
    EXPECT_EQ(decode(d, unhex("82"), &fields), HPACK_OK);
    hpack_decoder_destroy(d);
}

TEST(DecoderLimits, FieldTooLargeIsCaughtBeforeTheBytesArrive) {
    // A 1 MiB value announced in a 7-octet block: the limit, not truncation.
    EXPECT_EQ(decode_hex("0001617fffff3f", 4096, 4096, 0), HPACK_E_FIELD_TOO_LARGE);
    // Without limits the same block is merely truncated.
    EXPECT_EQ(decode_hex("0001617fffff3f"), HPACK_E_TRUNCATED);
    EXPECT_EQ(hpack_h2_error(HPACK_E_FIELD_TOO_LARGE), HPACK_H2_ENHANCE_YOUR_CALM);
}

// The string limit applies to the coded length, before decoding: a
// Huffman string that decodes shorter is judged by what was sent.
TEST(DecoderLimits, StringLimitJudgesTheCodedLength) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_string_limit(d, 4);
    std::vector<Decoded> fields;
    EXPECT_EQ(decode(d, unhex("000161046162636482"), &fields), HPACK_OK);     // "abcd"
    EXPECT_EQ(decode(d, unhex("00016105616263646582"), &fields), HPACK_E_STRING_TOO_LARGE);
    hpack_decoder_destroy(d);
    d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_string_limit(d, 4);
    // A 5-octet literal name, and a value announced at 1 MiB with no body.
    EXPECT_EQ(decode(d, unhex("00056162636465"), &fields), HPACK_E_STRING_TOO_LARGE);
    hpack_decoder_destroy(d);
    d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_string_limit(d, 4);
    EXPECT_EQ(decode(d, unhex("0001617fffff3f"), &fields), HPACK_E_STRING_TOO_LARGE);
    hpack_decoder_destroy(d);
    EXPECT_EQ(hpack_h2_error(HPACK_E_STRING_TOO_LARGE), HPACK_H2_ENHANCE_YOUR_CALM);
}

TEST(DecoderLimits, FieldExactlyAtTheLimitPasses) {
    std::string wire = "0001610a" + hex(reinterpret_cast<const uint8_t*>("0123456789"), 10);
    EXPECT_EQ(decode_hex(wire.c_str(), 4096, 11, 0), HPACK_OK);
    EXPECT_EQ(decode_hex(wire.c_str(), 4096, 10, 0), HPACK_E_FIELD_TOO_LARGE);
}

// An HPACK bomb: one large entry, then a block of one-octet references to
// it.  The list limit counts every reference in full.
TEST(DecoderLimits, IndexedReferencesCountAgainstTheListLimit) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_limits(d, 8192, 16384);
    const std::vector<uint8_t> insert = incremental_literal("b", std::string(4000, 'x'));
    std::vector<Decoded> fields;
    ASSERT_EQ(decode(d, insert, &fields), HPACK_OK);
    std::vector<uint8_t> bomb(1000, 0xbe);
    fields.clear();
    EXPECT_EQ(decode(d, bomb, &fields), HPACK_E_LIST_TOO_LARGE);
    EXPECT_EQ(fields.size(), 4u);  // 4 x 4033 fits in 16384, the 5th does not
    hpack_decoder_destroy(d);
}

TEST(DecoderLimits, ListLimitResetsAtEachBlock) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    hpack_decoder_set_limits(d, 0, 3 * (7 + 3 + 32));
    std::vector<Decoded> fields;
    for (int i = 0; i < 5; ++i) ASSERT_EQ(decode(d, unhex("828282"), &fields), HPACK_OK);
    EXPECT_EQ(decode(d, unhex("82828282"), &fields), HPACK_E_LIST_TOO_LARGE);
    hpack_decoder_destroy(d);
}

TEST(DecoderMemo, ZeroedOnInsertAndKeptForIndexedReferences) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<uint8_t> block = unhex("400a637573746f6d2d6b65790c637573746f6d2d76616c7565");
    hpack_decode_begin(d);
    const uint8_t* pos = block.data();
    hpack_field_t f;
    ASSERT_EQ(decode_field(d, &pos, block.data() + block.size(), 1, &f), HPACK_OK);
    ASSERT_NE(f.memo, nullptr);
    for (uint8_t b : f.memo->bytes) EXPECT_EQ(b, 0);
    f.memo->words[0] = 0x1234;
    f.memo->words[3] = 0x5678;
    EXPECT_EQ(decode_field(d, &pos, block.data() + block.size(), 1, &f), HPACK_BLOCK_END);

    // Indexed: the same memo.  Literal with the dynamic name: name_memo.
    std::vector<uint8_t> again = unhex("be7e0161");
    hpack_decode_begin(d);
    pos = again.data();
    ASSERT_EQ(decode_field(d, &pos, again.data() + again.size(), 1, &f), HPACK_OK);
    ASSERT_NE(f.memo, nullptr);
    EXPECT_EQ(f.memo->words[0], 0x1234u);
    EXPECT_EQ(f.memo->words[3], 0x5678u);
    EXPECT_EQ(f.name_memo, f.memo);
    EXPECT_EQ(f.static_index, 0u);
    EXPECT_EQ(f.index, 62u);
    ASSERT_EQ(decode_field(d, &pos, again.data() + again.size(), 1, &f), HPACK_OK);
    EXPECT_EQ(f.representation, HPACK_REP_INCREMENTAL);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.name), f.name_len), "custom-key");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.value), f.value_len), "a");
    ASSERT_NE(f.memo, nullptr);
    EXPECT_EQ(f.memo->words[0], 0u);            // the new entry's memo
    ASSERT_NE(f.name_memo, nullptr);            // the name's entry survives
    EXPECT_EQ(f.name_memo->words[0], 0x1234u);
    hpack_decoder_destroy(d);
}

// The host's memo is the entry's own while it lives, whatever the decoder
// does with the descriptors: a small table (room for 6 or 7 of these
// entries) takes hundreds of insertions, and a larger setting halfway
// moves every descriptor to new storage.  Each block references the whole
// table, inserts an entry and references that: decoded in batches, every
// field's memo, read only after its batch, holds what the host wrote in it
// when the entry was inserted (a batch whose insertion moved the
// descriptors of earlier fields would show here).
TEST(DecoderMemo, StaysWithItsEntryAsTheTableMoves) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 256);
    std::vector<hpack_field_t> f(64);
    size_t batches = 0, max_count = 0;
    for (uint64_t i = 1; i <= 400; ++i) {
        std::vector<uint8_t> block;
        if (i == 200) {
            ASSERT_EQ(hpack_decoder_set_settings_table_size(d, 1024), HPACK_OK);
            block = {0x3f, 0xe1, 0x07};  // a size update to 1024
        }
        const size_t count = hpack_decoder_table_entries(d);
        max_count = std::max(max_count, count);
        for (size_t k = 0; k < count; ++k) block.push_back(static_cast<uint8_t>(0x80 | (62 + k)));
        const std::vector<uint8_t> insert = incremental_literal("n" + std::to_string(i), "v");
        block.insert(block.end(), insert.begin(), insert.end());
        block.push_back(0xbe);

        hpack_decode_begin(d);
        const uint8_t* pos = block.data();
        const uint8_t* const end = block.data() + block.size();
        size_t fields = 0;
        int rc;
        do {
            size_t n = 0;
            rc = hpack_decode_fields(d, &pos, end, 1, f.data(), f.size(), &n);
            ASSERT_GE(rc, 0) << i;
            ++batches;
            for (size_t k = 0; k < n; ++k, ++fields) {
                ASSERT_NE(f[k].memo, nullptr) << i;
                const uint64_t id = std::stoull(
                    std::string(reinterpret_cast<const char*>(f[k].name) + 1, f[k].name_len - 1));
                if (f[k].representation == HPACK_REP_INCREMENTAL) {
                    EXPECT_EQ(id, i);
                    for (uint64_t w : f[k].memo->words) EXPECT_EQ(w, 0u) << i;
                    f[k].memo->words[0] = id;
                    f[k].memo->words[3] = ~id;
                } else {
                    EXPECT_EQ(id, fields < count ? i - 1 - fields : i) << i;
                    EXPECT_EQ(f[k].memo->words[0], id) << i << " field " << fields;
                    EXPECT_EQ(f[k].memo->words[3], ~id) << i << " field " << fields;
                }
            }
        } while (rc == HPACK_OK);
        ASSERT_EQ(rc, HPACK_BLOCK_END) << i;
        ASSERT_EQ(fields, count + 2) << i;
    }
    EXPECT_GE(max_count, 25u) << "the larger setting was not used";
    EXPECT_GT(batches, 400u) << "no insertion ended a batch";
    hpack_decoder_destroy(d);
}

TEST(DecoderMemo, StaticFieldsCarryTheirStaticIndexAndNoMemo) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<uint8_t> block = unhex("820f2b0161");  // :method GET; user-agent: a
    hpack_decode_begin(d);
    const uint8_t* pos = block.data();
    hpack_field_t f;
    ASSERT_EQ(decode_field(d, &pos, block.data() + block.size(), 1, &f), HPACK_OK);
    EXPECT_EQ(f.static_index, 2u);
    EXPECT_EQ(f.memo, nullptr);
    ASSERT_EQ(decode_field(d, &pos, block.data() + block.size(), 1, &f), HPACK_OK);
    EXPECT_EQ(f.static_index, 58u);
    EXPECT_EQ(f.memo, nullptr);
    EXPECT_EQ(f.name_memo, nullptr);
    hpack_decoder_destroy(d);
}

// RFC 7541 4.4: a new entry may take its name from the entry its insertion
// evicts.
TEST(DecoderTable, NameReferencingTheEntryItEvicts) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    // Table of 64: "aaaa"/"bbbbbbbbbbbbbbbbbbbbbbbbbbbb" (4 + 28 + 32 = 64).
    std::string wire = "3f21";  // size update to 64
    wire += "4004" + hex(reinterpret_cast<const uint8_t*>("aaaa"), 4) + "1c" +
            hex(reinterpret_cast<const uint8_t*>(std::string(28, 'b').data()), 28);
    ASSERT_EQ(decode(d, unhex(wire), &fields), HPACK_OK);
    EXPECT_EQ(hpack_decoder_table_entries(d), 1u);
    fields.clear();
    // Literal, incremental, name = index 62 (the entry itself), value "c".
    ASSERT_EQ(decode(d, unhex("7e0163"), &fields), HPACK_OK);
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0].name, "aaaa");
    EXPECT_EQ(fields[0].value, "c");
    fields.clear();
    ASSERT_EQ(decode(d, unhex("be"), &fields), HPACK_OK);
    EXPECT_EQ(fields[0].name, "aaaa");
    EXPECT_EQ(fields[0].value, "c");
    EXPECT_EQ(hpack_decoder_table_entries(d), 1u);
    hpack_decoder_destroy(d);
}

// RFC 7541 4.4: an entry larger than the table empties it and is not added.
TEST(DecoderTable, EntryLargerThanTheTableEmptiesIt) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    ASSERT_EQ(decode(d, unhex("3f0140016101624001630164"), &fields), HPACK_OK);  // size 32
    EXPECT_EQ(hpack_decoder_table_entries(d), 0u);
    EXPECT_EQ(fields.size(), 2u);
    hpack_decoder_destroy(d);
}

TEST(DecoderTable, ThousandsOfInsertionsWrapTheArena) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    for (int i = 0; i < 5000; ++i) {
        std::string name = "n" + std::to_string(i % 97);
        std::string value(static_cast<size_t>(i % 300), static_cast<char>('a' + i % 26));
        std::vector<uint8_t> block = incremental_literal(name, value);
        block.push_back(0xbe);  // and the entry just added
        std::vector<Decoded> fields;
        ASSERT_EQ(decode(d, block, &fields), HPACK_OK) << i;
        ASSERT_EQ(fields.size(), 2u);
        EXPECT_EQ(fields[1].name, name);
        EXPECT_EQ(fields[1].value, value);
        ASSERT_LE(hpack_decoder_table_size(d), 4096u);
    }
    hpack_decoder_destroy(d);
}

TEST(DecoderStats, CountRepresentationsAndBytes) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<Decoded> fields;
    ASSERT_EQ(decode(d, unhex("828684418cf1e3c2e5f23a6ba0ab90f4ff"), &fields), HPACK_OK);
    ASSERT_EQ(decode(d, unhex("828684be5886a8eb10649cbf"), &fields), HPACK_OK);
    hpack_stats_t st;
    hpack_decoder_stats(d, &st);
    EXPECT_EQ(st.blocks, 2u);
    EXPECT_EQ(st.fields, 9u);
    EXPECT_EQ(st.indexed_static, 6u);
    EXPECT_EQ(st.indexed_dynamic, 1u);
    EXPECT_EQ(st.name_indexed, 2u);
    EXPECT_EQ(st.insertions, 2u);
    EXPECT_EQ(st.huffman_strings, 2u);
    EXPECT_EQ(st.wire_bytes, 17u + 12u);
    hpack_decoder_destroy(d);
}

// Decodes a block with hpack_decode_fields() in batches of up to max and
// copies every field only after its whole batch is decoded: a batch whose
// later fields moved what earlier ones point at would show up here.  Memos
// handed out in one batch must belong to distinct entries.
int decode_batched(hpack_decoder_t* d, const std::vector<uint8_t>& block, size_t max,
                   std::vector<Decoded>* out, size_t* batches) {
    hpack_decode_begin(d);
    const uint8_t* pos = block.data();
    const uint8_t* end = pos + block.size();
    std::vector<hpack_field_t> f(max);
    for (;;) {
        size_t n = 99;
        int rc = hpack_decode_fields(d, &pos, end, 1, f.data(), max, &n);
        if (rc < 0) return rc;
        EXPECT_LE(n, max);
        ++*batches;
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = 0; j < i; ++j) {
                if (f[i].memo && f[i].representation != HPACK_REP_INDEXED) {
                    EXPECT_NE(f[i].memo, f[j].memo) << "an insertion reused a memo";
                }
            }
            out->push_back({std::string(reinterpret_cast<const char*>(f[i].name), f[i].name_len),
                            std::string(reinterpret_cast<const char*>(f[i].value), f[i].value_len),
                            f[i].representation, f[i].index});
        }
        if (rc == HPACK_BLOCK_END) return HPACK_OK;
        EXPECT_EQ(rc, HPACK_OK);
        if (rc == HPACK_OK) {
            EXPECT_GE(n, 1u);
        }
    }
}

// Random lists through small and large tables, indexed and literal, with
// table-size changes: batches of any size give the fields one-at-a-time
// decoding gives, in the same order, with the same representations.
TEST(DecoderBatch, EqualsFieldByFieldDecoding) {
    uint32_t seed = 12345;
    auto rnd = [&seed](uint32_t n) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 8) % n;
    };
    for (size_t table : {64u, 256u, 4096u}) {
        for (size_t max : {1u, 2u, 3u, 16u, 64u}) {
            hpack_encoder_t* e = hpack_encoder_create(nullptr, table, nullptr);
            hpack_decoder_t* one = hpack_decoder_create(nullptr, 4096);
            hpack_decoder_t* many = hpack_decoder_create(nullptr, 4096);
            size_t batches = 0, fields = 0;
            for (int b = 0; b < 200; ++b) {
                HeaderList list;
                const uint32_t n = 1 + rnd(24);
                for (uint32_t i = 0; i < n; ++i) {
                    std::string name = "x-h" + std::to_string(rnd(12));
                    std::string value(rnd(3) == 0 ? 1 + rnd(90) : 1 + rnd(8),
                                      static_cast<char>('a' + rnd(26)));
                    if (rnd(4) == 0) name = ":method", value = "GET";
                    list.emplace_back(name, value);
                }
                std::vector<uint8_t> wire = encode(e, list);
                ASSERT_FALSE(wire.empty());
                std::vector<Decoded> a, c;
                ASSERT_EQ(decode(one, wire, &a, 1), HPACK_OK);
                ASSERT_EQ(decode_batched(many, wire, max, &c, &batches), HPACK_OK);
                ASSERT_EQ(names_values(c), list) << "table " << table << " batch " << max;
                ASSERT_EQ(a.size(), c.size());
                for (size_t i = 0; i < a.size(); ++i) {
                    EXPECT_EQ(a[i].rep, c[i].rep);
                    EXPECT_EQ(a[i].index, c[i].index);
                }
                fields += list.size();
            }
            EXPECT_EQ(hpack_decoder_table_size(one), hpack_decoder_table_size(many));
            if (max > 1) {
                EXPECT_LT(batches, fields) << "batches never held two fields";
            }
            hpack_encoder_destroy(e);
            hpack_decoder_destroy(one);
            hpack_decoder_destroy(many);
        }
    }
}

// With every kind of damage to the block (a flipped bit, a cut, a Huffman
// string made invalid), under limits, batches of 1 to 16 fields give
// exactly what one field a call gives: the same fields, then the same
// error.
TEST(DecoderBatch, BatchesGiveTheSameFieldsAndErrorsAsOneFieldACall) {
    uint32_t seed = 777;
    auto rnd = [&seed](uint32_t n) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 8) % n;
    };
    const std::string text = "abcdefghijklmnopqrstuvwxyz0123456789-_.:/=;, ?&%ABCDEFGH\\<>{}";
    size_t errors = 0, huffman_errors = 0;
    for (int b = 0; b < 3000; ++b) {
        hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
        HeaderList list;
        const uint32_t n = 1 + rnd(20);
        for (uint32_t i = 0; i < n; ++i) {
            std::string name = rnd(2) ? "x-custom-" + std::to_string(rnd(50)) : "user-agent";
            std::string value(rnd(4) == 0 ? rnd(300) : rnd(40), ' ');
            for (char& c : value) c = text[rnd(static_cast<uint32_t>(text.size()))];
            list.emplace_back(name, value);
        }
        std::vector<uint8_t> wire = encode(e, list);
        hpack_encoder_destroy(e);
        ASSERT_FALSE(wire.empty());
        switch (b % 4) {
        case 0:
            wire[rnd(static_cast<uint32_t>(wire.size()))] ^= static_cast<uint8_t>(1 << rnd(8));
            break;
        case 1:
            wire.resize(rnd(static_cast<uint32_t>(wire.size())));
            break;
        case 2:  // the last octet of the block (a string's padding) zeroed
            wire.back() = 0;
            break;
        default:
            break;
        }
        const size_t max_field = b % 5 == 0 ? 1 + rnd(200) : 0;
        hpack_decoder_t* one = hpack_decoder_create(nullptr, 4096);
        hpack_decoder_t* many = hpack_decoder_create(nullptr, 4096);
        hpack_decoder_set_limits(one, max_field, 0);
        hpack_decoder_set_limits(many, max_field, 0);
        std::vector<Decoded> a, c;
        const int rc_one = decode(one, wire, &a, 1);
        hpack_decode_begin(many);
        const uint8_t* pos = wire.data();
        int rc_many;
        for (;;) {
            hpack_field_t f[16];
            size_t got = 0;
            rc_many = hpack_decode_fields(many, &pos, wire.data() + wire.size(), 1, f,
                                          1 + rnd(16), &got);
            for (size_t i = 0; i < got; ++i)
                c.push_back({std::string(reinterpret_cast<const char*>(f[i].name), f[i].name_len),
                             std::string(reinterpret_cast<const char*>(f[i].value), f[i].value_len),
                             f[i].representation, f[i].index});
            if (rc_many != HPACK_OK) break;
        }
        if (rc_many == HPACK_BLOCK_END) rc_many = HPACK_OK;
        ASSERT_EQ(rc_many, rc_one) << "block " << b;
        ASSERT_EQ(names_values(c), names_values(a)) << "block " << b;
        if (rc_one != HPACK_OK) ++errors;
        if (rc_one == HPACK_E_HUFFMAN_PADDING || rc_one == HPACK_E_HUFFMAN_EOS) ++huffman_errors;
        hpack_decoder_destroy(one);
        hpack_decoder_destroy(many);
    }
    // The damage must have hit Huffman strings, and not every block.
    EXPECT_GT(huffman_errors, 200u);
    EXPECT_LT(errors, 2500u);
}

TEST(DecoderBatch, ReportsFieldsBeforeAnErrorAndRejectsAnEmptyArray) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    std::vector<uint8_t> block = unhex("828680");
    hpack_field_t f[4];
    size_t n = 99;
    hpack_decode_begin(d);
    const uint8_t* pos = block.data();
    EXPECT_EQ(hpack_decode_fields(d, &pos, block.data() + block.size(), 1, f, 0, &n),
              HPACK_E_ARGUMENT);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(hpack_decode_fields(d, &pos, block.data() + block.size(), 1, f, 4, &n),
              HPACK_E_INDEX);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(f[1].static_index, 6u);
    hpack_decoder_destroy(d);
}

// The field limit holds for indexed references, whichever path decodes
// them: one at a time, or in a batch, where runs of one-octet references
// judge the limit once when it admits the whole table (4064 = 4096 - 32 and
// up) and leave the run to the full path below that.
TEST(DecoderLimits, IndexedFieldsOverTheFieldLimitAreRefused) {
    const std::string big(4064 - 3, 'v');   // name "x-a": an entry of 4096
    struct Case {
        size_t      limit;
        const char* block;
        int         rc;
        size_t      fields;   // decoded before the error
    };
    // The table of two_entries(): 62 = "x-b: 0123456789" (13 octets), 63 =
    // "x-c: 01" (5).
    const Case cases[] = {
        {12, "bebf", HPACK_E_FIELD_TOO_LARGE, 0},
        {12, "bfbf82be", HPACK_E_FIELD_TOO_LARGE, 3},
        {13, "bfbf82be", HPACK_OK, 4},
        {9, "bf82", HPACK_E_FIELD_TOO_LARGE, 1},    // :method GET is 10
        {10, "bf82", HPACK_OK, 2},
        {4063, "82bebf", HPACK_OK, 3},
        {4064, "82bebf", HPACK_OK, 3},
    };
    // A decoder whose table holds the two small entries.
    auto two_entries = [](size_t limit) {
        hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
        std::vector<uint8_t> inserts = incremental_literal("x-c", "01");
        const std::vector<uint8_t> b = incremental_literal("x-b", "0123456789");
        inserts.insert(inserts.end(), b.begin(), b.end());
        std::vector<Decoded> fields;
        EXPECT_EQ(decode(d, inserts, &fields), HPACK_OK);
        EXPECT_EQ(hpack_decoder_table_size(d), 2u * 32 + 13 + 5);
        hpack_decoder_set_limits(d, limit, 0);
        return d;
    };
    for (size_t max : {1u, 16u}) {
        // The one entry of 4096: refused below 4064, at the boundary of the
        // run's single check, and passed at it.
        for (size_t limit : {4063u, 4064u}) {
            hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
            std::vector<Decoded> fields;
            size_t batches = 0;
            ASSERT_EQ(decode(d, incremental_literal("x-a", big), &fields), HPACK_OK);
            hpack_decoder_set_limits(d, limit, 0);
            fields.clear();
            const int rc = decode_batched(d, unhex("bebe"), max, &fields, &batches);
            if (limit == 4063) {
                EXPECT_EQ(rc, HPACK_E_FIELD_TOO_LARGE) << "batch " << max;
            } else {
                ASSERT_EQ(rc, HPACK_OK) << "batch " << max;
                ASSERT_EQ(fields.size(), 2u);
                EXPECT_EQ(fields[1].value, big);
            }
            hpack_decoder_destroy(d);
        }
        for (const Case& c : cases) {
            hpack_decoder_t* d = two_entries(c.limit);
            std::vector<Decoded> fields;
            size_t batches = 0;
            const int rc = decode_batched(d, unhex(c.block), max, &fields, &batches);
            EXPECT_EQ(rc, c.rc) << "limit " << c.limit << " block " << c.block
                                << " batch " << max;
            if (rc == HPACK_OK) {
                EXPECT_EQ(fields.size(), c.fields);
            }
            hpack_decoder_destroy(d);

            // One field at a time: the fields before the error too.
            d = two_entries(c.limit);
            fields.clear();
            EXPECT_EQ(decode(d, unhex(c.block), &fields), c.rc);
            EXPECT_EQ(fields.size(), c.fields) << "limit " << c.limit << " block " << c.block;
            hpack_decoder_destroy(d);
        }
    }
}

// A piece that ends inside a representation: the fields before it, then
// NEED_MORE; the rest arrives in the next piece.
TEST(DecoderBatch, SplitPiecesGiveTheSameFields) {
    std::vector<uint8_t> block =
        unhex("828684418cf1e3c2e5f23a6ba0ab90f4ff");   // RFC 7541 C.4.1
    for (size_t cut = 0; cut <= block.size(); ++cut) {
        hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
        hpack_decode_begin(d);
        hpack_field_t f[8];
        std::vector<std::string> got;
        const uint8_t* pos = block.data();
        size_t n;
        int rc = hpack_decode_fields(d, &pos, block.data() + cut, 0, f, 8, &n);
        for (size_t i = 0; i < n; ++i)
            got.emplace_back(reinterpret_cast<const char*>(f[i].value), f[i].value_len);
        while (rc == HPACK_OK) {
            rc = hpack_decode_fields(d, &pos, block.data() + cut, 0, f, 8, &n);
            for (size_t i = 0; i < n; ++i)
                got.emplace_back(reinterpret_cast<const char*>(f[i].value), f[i].value_len);
        }
        ASSERT_EQ(rc, HPACK_NEED_MORE) << cut;
        pos = block.data() + cut;
        do {
            rc = hpack_decode_fields(d, &pos, block.data() + block.size(), 1, f, 8, &n);
            for (size_t i = 0; i < n; ++i)
                got.emplace_back(reinterpret_cast<const char*>(f[i].value), f[i].value_len);
        } while (rc == HPACK_OK);
        ASSERT_EQ(rc, HPACK_BLOCK_END) << cut;
        EXPECT_EQ(got, (std::vector<std::string>{"GET", "http", "/", "www.example.com"}))
            << cut;
        hpack_decoder_destroy(d);
    }
}

// A representation split at a piece's end takes of the next piece what it
// needs, not the piece: a block cut after the first octet of a size update,
// whose next piece is 60 KB of size updates and then a field, leaves the
// decoder no allocation near the piece's size.
TEST(DecoderBatch, ASplitRepresentationBuffersNotTheWholeNextPiece) {
    size_t largest = 0;
    hpack_allocator_t a{[](void* ctx, size_t n) -> void* {
                            size_t& m = *static_cast<size_t*>(ctx);
                            if (n > m) m = n;
                            return malloc(n);
                        },
                        [](void*, void* p) { free(p); }, &largest};
    hpack_decoder_t* d = hpack_decoder_create(&a, 4096);
    ASSERT_NE(d, nullptr);
    hpack_decode_begin(d);
    std::vector<uint8_t> rest = unhex("e11f");   // the first update's end
    for (int i = 0; i < 20000; ++i)
        for (uint8_t b : unhex("3fe11f")) rest.push_back(b);   // size 4096
    rest.push_back(0x82);   // :method GET
    const uint8_t first = 0x3f;
    const uint8_t* pos = &first;
    hpack_field_t f[8];
    size_t n;
    ASSERT_EQ(hpack_decode_fields(d, &pos, &first + 1, 0, f, 8, &n), HPACK_NEED_MORE);
    std::vector<std::string> got;
    pos = rest.data();
    int rc;
    do {
        rc = hpack_decode_fields(d, &pos, rest.data() + rest.size(), 1, f, 8, &n);
        for (size_t i = 0; i < n; ++i)
            got.emplace_back(reinterpret_cast<const char*>(f[i].value), f[i].value_len);
    } while (rc == HPACK_OK);
    EXPECT_EQ(rc, HPACK_BLOCK_END);
    EXPECT_EQ(got, std::vector<std::string>{"GET"});
    EXPECT_LT(largest, size_t{16384}) << "the side buffer took the piece";
    hpack_decoder_destroy(d);
}

TEST(DecoderApi, RejectsOversizedSettings) {
    EXPECT_EQ(hpack_decoder_create(nullptr, HPACK_MAX_TABLE_SIZE + 1), nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
    EXPECT_EQ(hpack_decoder_set_settings_table_size(d, HPACK_MAX_TABLE_SIZE + 1),
              HPACK_E_ARGUMENT);
    hpack_decoder_destroy(d);
}

// A literal with incremental indexing, a new raw name and a Huffman value.
std::vector<uint8_t> huffman_literal(const std::string& name, const std::string& value) {
    std::vector<uint8_t> code(value.size() + 8);
    code.resize(hpack_huffman_encode(reinterpret_cast<const uint8_t*>(value.data()),
                                     value.size(), code.data()));
    std::vector<uint8_t> b = incremental_literal(name, std::string(code.begin(), code.end()));
    b[2 + name.size()] |= 0x80;  // the value's H bit
    return b;
}

// A decoder comes with 1 KiB of scratch in its own allocation: a block
// that needs no more allocates nothing for it; one that needs more
// allocates the scratch's own storage once; the table's first block comes
// with the decoder too, and entries larger than it take one allocation of
// the table's own; destroying the decoder frees every allocation, the lent
// octets never.
TEST(DecoderScratch, GrowsOutOfWhatComesWithTheDecoder) {
    struct Count { int allocs = 0, frees = 0; };
    Count count;
    hpack_allocator_t a{[](void* ctx, size_t n) -> void* {
                            ++static_cast<Count*>(ctx)->allocs;
                            return malloc(n);
                        },
                        [](void* ctx, void* p) {
                            ++static_cast<Count*>(ctx)->frees;
                            free(p);
                        },
                        &count};
    const std::string small(200, 'a'), large(3000, 'b');
    for (const std::string* value : {&small, &large}) {
        count = Count{};
        hpack_decoder_t* d = hpack_decoder_create(&a, 4096);
        ASSERT_NE(d, nullptr);
        EXPECT_EQ(count.allocs, 1);
        std::vector<uint8_t> block = huffman_literal("x-a", *value);
        const std::vector<uint8_t> second = huffman_literal("x-b", *value);
        block.insert(block.end(), second.begin(), second.end());
        std::vector<Decoded> fields;
        ASSERT_EQ(decode(d, block, &fields), HPACK_OK);
        ASSERT_EQ(fields.size(), 2u);
        EXPECT_EQ(fields[0].value, *value);
        EXPECT_EQ(fields[1].value, *value);
        EXPECT_EQ(count.allocs, value == &small ? 1 : 3) << value->size();
        hpack_decoder_destroy(d);
        EXPECT_EQ(count.frees, count.allocs) << value->size();
    }
}

// The table's storage follows its contents: a decoder permitted 65536
// octets allocates no more than one permitted 4096 for a request's worth
// of entries (8 of about 100 octets: none beyond the decoder's own
// allocation), grows as a 4096-octet table fills, stays within the RFC
// size accounting's bounds (4096 / 32 descriptors of 64 octets in a window
// half as large again, an arena of twice the size) however long the peer
// inserts, and frees it all.
TEST(DecoderTable, StorageGrowsWithTheContentsWithinTheirBound) {
    struct Live {
        std::map<void*, size_t> blocks;
        size_t bytes = 0;
    };
    Live live;
    hpack_allocator_t a{[](void* ctx, size_t n) -> void* {
                            void* p = malloc(n);
                            auto* l = static_cast<Live*>(ctx);
                            l->blocks[p] = n;
                            l->bytes += n;
                            return p;
                        },
                        [](void* ctx, void* p) {
                            auto* l = static_cast<Live*>(ctx);
                            l->bytes -= l->blocks[p];
                            l->blocks.erase(p);
                            free(p);
                        },
                        &live};
    const std::string value(100, 'v');
    size_t created[2];
    for (size_t settings : {size_t{4096}, size_t{65536}}) {
        hpack_decoder_t* d = hpack_decoder_create(&a, settings);
        ASSERT_NE(d, nullptr);
        const size_t base = live.bytes;
        created[settings == 65536] = base;
        std::vector<Decoded> fields;
        for (int i = 0; i < 8; ++i) {
            ASSERT_EQ(decode(d, incremental_literal("x-" + std::to_string(i), value), &fields),
                      HPACK_OK);
        }
        EXPECT_EQ(live.bytes, base) << settings;
        size_t most = 0;
        for (int i = 8; i < 2000; ++i) {
            ASSERT_EQ(decode(d, incremental_literal("x-" + std::to_string(i), value), &fields),
                      HPACK_OK);
            most = std::max(most, live.bytes);
        }
        EXPECT_GT(most, base) << settings;
        EXPECT_LE(most, base + 4096 / 32 * 64 * 3 / 2 + 2 * 4096 + 64) << settings;
        hpack_decoder_destroy(d);
        EXPECT_EQ(live.bytes, 0u) << settings;
    }
    EXPECT_EQ(created[0], created[1]);
}

// The table's copies (copy_octets()): every length from 0 to 100 copies
// exactly its span, from any offset, and touches nothing around it.
TEST(DecoderTable, CopiesExactlyTheSpanOfEveryLength) {
    uint8_t src[160], dst[160];
    for (size_t i = 0; i < sizeof src; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
    for (size_t n = 0; n <= 100; ++n) {
        for (size_t at = 0; at < 16; ++at) {
            memset(dst, 0xa5, sizeof dst);
            hpack::copy_octets(dst + 24 + at, src + at, n);
            for (size_t i = 0; i < sizeof dst; ++i) {
                const bool inside = i >= 24 + at && i < 24 + at + n;
                ASSERT_EQ(dst[i], inside ? src[i - 24] : 0xa5)
                    << "length " << n << ", offset " << at << ", octet " << i;
            }
        }
    }
}

// Allocation failure surfaces as HPACK_E_NOMEM, never a crash.
TEST(DecoderApi, AllocatorFailureIsReported) {
    struct Budget { int left; };
    Budget budget{0};
    hpack_allocator_t a{[](void* ctx, size_t n) -> void* {
                            auto* b = static_cast<Budget*>(ctx);
                            return b->left-- > 0 ? malloc(n) : nullptr;
                        },
                        [](void*, void* p) { free(p); }, &budget};
    for (int allowed = 0; allowed < 8; ++allowed) {
        budget.left = allowed;
        hpack_decoder_t* d = hpack_decoder_create(&a, 4096);
        if (!d) continue;
        std::vector<Decoded> fields;
        int rc = decode(d, unhex("828684418cf1e3c2e5f23a6ba0ab90f4ff"), &fields);
        EXPECT_TRUE(rc == HPACK_OK || rc == HPACK_E_NOMEM) << rc;
        hpack_decoder_destroy(d);
    }
}

}  // namespace
