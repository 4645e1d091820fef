// RFC 7541 Appendix C: every example, decoded whole and split at every
// octet, with the dynamic table states the appendix gives; and the encoder
// reproducing the Huffman request examples octet for octet.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpack.h"
#include "integer.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

struct Step {
    const char* wire;
    HeaderList headers;
    HeaderList table;    // newest first, as the appendix lists it
    size_t table_size;
};

struct Example {
    const char* name;
    size_t settings;     // SETTINGS_HEADER_TABLE_SIZE of the example
    std::vector<Step> steps;
};

const HeaderList kReq1 = {{":method", "GET"}, {":scheme", "http"}, {":path", "/"},
                          {":authority", "www.example.com"}};
const HeaderList kReq2 = {{":method", "GET"}, {":scheme", "http"}, {":path", "/"},
                          {":authority", "www.example.com"}, {"cache-control", "no-cache"}};
const HeaderList kReq3 = {{":method", "GET"}, {":scheme", "https"}, {":path", "/index.html"},
                          {":authority", "www.example.com"}, {"custom-key", "custom-value"}};
const HeaderList kReqT1 = {{":authority", "www.example.com"}};
const HeaderList kReqT2 = {{"cache-control", "no-cache"}, {":authority", "www.example.com"}};
const HeaderList kReqT3 = {{"custom-key", "custom-value"}, {"cache-control", "no-cache"},
                           {":authority", "www.example.com"}};

const std::string kDate1 = "Mon, 21 Oct 2013 20:13:21 GMT";
const std::string kDate2 = "Mon, 21 Oct 2013 20:13:22 GMT";
const std::string kLoc = "https://www.example.com";
const std::string kCookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
const HeaderList kResp1 = {{":status", "302"}, {"cache-control", "private"}, {"date", kDate1},
                           {"location", kLoc}};
const HeaderList kResp2 = {{":status", "307"}, {"cache-control", "private"}, {"date", kDate1},
                           {"location", kLoc}};
const HeaderList kResp3 = {{":status", "200"}, {"cache-control", "private"}, {"date", kDate2},
                           {"location", kLoc}, {"content-encoding", "gzip"},
                           {"set-cookie", kCookie}};
const HeaderList kRespT1 = {{"location", kLoc}, {"date", kDate1}, {"cache-control", "private"},
                            {":status", "302"}};
const HeaderList kRespT2 = {{":status", "307"}, {"location", kLoc}, {"date", kDate1},
                            {"cache-control", "private"}};
const HeaderList kRespT3 = {{"set-cookie", kCookie}, {"content-encoding", "gzip"},
                            {"date", kDate2}};

const std::vector<Example>& examples() {
    static const std::vector<Example> ex = {
        {"C.3", 4096,
         {{"828684410f7777772e6578616d706c652e636f6d", kReq1, kReqT1, 57},
          {"828684be58086e6f2d6361636865", kReq2, kReqT2, 110},
          {"828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565", kReq3, kReqT3, 164}}},
        {"C.4", 4096,
         {{"828684418cf1e3c2e5f23a6ba0ab90f4ff", kReq1, kReqT1, 57},
          {"828684be5886a8eb10649cbf", kReq2, kReqT2, 110},
          {"828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf", kReq3, kReqT3, 164}}},
        {"C.5", 256,
         {{"4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a32"
           "3120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
           kResp1, kRespT1, 222},
          {"4803333037c1c0bf", kResp2, kRespT2, 222},
          {"88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a6970"
           "7738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d61"
           "67653d333630303b2076657273696f6e3d31",
           kResp3, kRespT3, 215}}},
        {"C.6", 256,
         {{"488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad"
           "171863c78f0b97c8e9ae82ae43d3",
           kResp1, kRespT1, 222},
          {"4883640effc1c0bf", kResp2, kRespT2, 222},
          {"88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2"
           "e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
           kResp3, kRespT3, 215}}},
    };
    return ex;
}

// The decoder's dynamic table, newest first, read back through indexed
// references (a separate decoder state is not exposed, so the table is
// probed with a block of indexed fields on a copy of the history).
HeaderList table_of(const Example& ex, size_t upto) {
    hpack_decoder_t* d = hpack_decoder_create(nullptr, ex.settings);
    std::vector<Decoded> sink;
    for (size_t i = 0; i <= upto; ++i) decode(d, unhex(ex.steps[i].wire), &sink);
    std::vector<uint8_t> probe;
    for (size_t i = 0; i < hpack_decoder_table_entries(d); ++i)
        probe.push_back(static_cast<uint8_t>(0x80 | (62 + i)));
    std::vector<Decoded> fields;
    EXPECT_EQ(decode(d, probe, &fields), HPACK_OK);
    hpack_decoder_destroy(d);
    return names_values(fields);
}

class AppendixC : public ::testing::TestWithParam<size_t> {};

TEST_P(AppendixC, DecodesEveryBlockWithTheTableStatesOfTheRfc) {
    const Example& ex = examples()[GetParam()];
    hpack_decoder_t* d = hpack_decoder_create(nullptr, ex.settings);
    ASSERT_NE(d, nullptr);
    for (size_t i = 0; i < ex.steps.size(); ++i) {
        const Step& s = ex.steps[i];
        std::vector<Decoded> fields;
        ASSERT_EQ(decode(d, unhex(s.wire), &fields), HPACK_OK) << ex.name << " step " << i;
        EXPECT_EQ(names_values(fields), s.headers) << ex.name << " step " << i;
        EXPECT_EQ(hpack_decoder_table_size(d), s.table_size) << ex.name << " step " << i;
        EXPECT_EQ(hpack_decoder_table_entries(d), s.table.size());
        EXPECT_EQ(table_of(ex, i), s.table) << ex.name << " step " << i;
    }
    hpack_decoder_destroy(d);
}

// Every split point of every block (and the table carried across blocks)
// gives the same fields as the whole block.
TEST_P(AppendixC, SplitAtEveryOctetEqualsWholeBlock) {
    const Example& ex = examples()[GetParam()];
    for (size_t step = 0; step < ex.steps.size(); ++step) {
        const std::vector<uint8_t> block = unhex(ex.steps[step].wire);
        for (size_t cut = 0; cut <= block.size(); ++cut) {
            hpack_decoder_t* d = hpack_decoder_create(nullptr, ex.settings);
            std::vector<Decoded> sink;
            for (size_t i = 0; i < step; ++i) decode(d, unhex(ex.steps[i].wire), &sink);

            HeaderList got;
            hpack_decode_begin(d);
            const uint8_t* pieces[3] = {block.data(), block.data() + cut,
                                        block.data() + block.size()};
            int rc = HPACK_OK;
            for (int piece = 0; piece < 2 && rc >= 0; ++piece) {
                // Copy each piece so a stale pointer into it would show.
                std::vector<uint8_t> buf(pieces[piece], pieces[piece + 1]);
                const uint8_t* pos = buf.data();
                const uint8_t* end = pos + buf.size();
                const int last = piece == 1;
                rc = hpack_tools::decode_piece(d, &pos, end, last, [&got](const hpack_field_t& f) {
                    got.push_back(header_of(f));
                });
                if (!last) {
                    ASSERT_EQ(rc, HPACK_NEED_MORE) << ex.name << " cut " << cut;
                    EXPECT_EQ(pos, end);
                }
            }
            EXPECT_EQ(rc, HPACK_BLOCK_END) << ex.name << " step " << step << " cut " << cut;
            EXPECT_EQ(got, ex.steps[step].headers) << ex.name << " step " << step << " cut " << cut;
            EXPECT_EQ(hpack_decoder_table_size(d), ex.steps[step].table_size);
            hpack_decoder_destroy(d);
        }
    }
}

// Every block fed one octet at a time.
TEST_P(AppendixC, OneOctetAtATime) {
    const Example& ex = examples()[GetParam()];
    hpack_decoder_t* d = hpack_decoder_create(nullptr, ex.settings);
    for (const Step& s : ex.steps) {
        const std::vector<uint8_t> block = unhex(s.wire);
        HeaderList got;
        hpack_decode_begin(d);
        int rc = HPACK_NEED_MORE;
        for (size_t i = 0; i < block.size(); ++i) {
            uint8_t octet = block[i];
            const uint8_t* pos = &octet;
            const int last = i + 1 == block.size();
            rc = hpack_tools::decode_piece(d, &pos, &octet + 1, last, [&got](const hpack_field_t& f) {
                got.push_back(header_of(f));
            });
            ASSERT_EQ(rc, last ? HPACK_BLOCK_END : HPACK_NEED_MORE);
        }
        EXPECT_EQ(got, s.headers);
        EXPECT_EQ(hpack_decoder_table_size(d), s.table_size);
    }
    hpack_decoder_destroy(d);
}

INSTANTIATE_TEST_SUITE_P(Rfc7541, AppendixC, ::testing::Values(0, 1, 2, 3),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                             std::string n = examples()[i.param].name;
                             n.erase(n.find('.'), 1);
                             return n;
                         });

// C.4: the encoder's choices (index :authority and cache-control with a
// static name, Huffman where shorter) are the appendix's, octet for octet.
TEST(AppendixCEncode, C4RequestsAreReproducedExactly) {
    hpack_encoder_t* e = hpack_encoder_create(nullptr, 4096, nullptr);
    const Example& c4 = examples()[1];
    for (const Step& s : c4.steps) {
        EXPECT_EQ(hex(encode(e, s.headers)), s.wire);
        EXPECT_EQ(hpack_encoder_table_size(e), s.table_size);
    }
    hpack_encoder_destroy(e);
}

// C.5/C.6 headers through our encoder (a 256-octet table, as there) decode
// back to the same lists in our decoder.
TEST(AppendixCEncode, ResponsesRoundTripWithA256OctetTable) {
    hpack_encoder_t* e = hpack_encoder_create(nullptr, 256, nullptr);
    hpack_decoder_t* d = hpack_decoder_create(nullptr, 256);
    for (const Step& s : examples()[3].steps) {
        std::vector<uint8_t> block = encode(e, s.headers);
        ASSERT_FALSE(block.empty());
        std::vector<Decoded> fields;
        ASSERT_EQ(decode(d, block, &fields), HPACK_OK);
        EXPECT_EQ(names_values(fields), s.headers);
        EXPECT_EQ(hpack_decoder_table_size(d), hpack_encoder_table_size(e));
    }
    hpack_encoder_destroy(e);
    hpack_decoder_destroy(d);
}

// C.1: integers.
TEST(AppendixCIntegers, C1Examples) {
    uint8_t buf[hpack::kIntegerMaxBytes];
    EXPECT_EQ(hpack::encode_integer(buf, 0, 5, 10), 1u);
    EXPECT_EQ(hex(buf, 1), "0a");
    EXPECT_EQ(hpack::encode_integer(buf, 0, 5, 1337), 3u);
    EXPECT_EQ(hex(buf, 3), "1f9a0a");
    EXPECT_EQ(hpack::encode_integer(buf, 0, 8, 42), 1u);
    EXPECT_EQ(hex(buf, 1), "2a");
    uint32_t v = 0;
    const uint8_t in[] = {0x1f, 0x9a, 0x0a};
    EXPECT_EQ(hpack::decode_integer(in, in + 3, 5, &v), 3);
    EXPECT_EQ(v, 1337u);
}

// C.2: single representations.
TEST(AppendixCFields, C2RepresentationsAndTheirTableEffects) {
    struct Case {
        const char* wire;
        Header h;
        hpack_representation_t rep;
        size_t table_size;
    } cases[] = {
        {"400a637573746f6d2d6b65790d637573746f6d2d686561646572", {"custom-key", "custom-header"},
         HPACK_REP_INCREMENTAL, 55},
        {"040c2f73616d706c652f70617468", {":path", "/sample/path"}, HPACK_REP_WITHOUT_INDEXING, 0},
        {"100870617373776f726406736563726574", {"password", "secret"}, HPACK_REP_NEVER_INDEXED, 0},
        {"82", {":method", "GET"}, HPACK_REP_INDEXED, 0},
    };
    for (const Case& c : cases) {
        hpack_decoder_t* d = hpack_decoder_create(nullptr, 4096);
        std::vector<Decoded> fields;
        ASSERT_EQ(decode(d, unhex(c.wire), &fields), HPACK_OK) << c.wire;
        ASSERT_EQ(fields.size(), 1u);
        EXPECT_TRUE(fields[0] == c.h) << c.wire;
        EXPECT_EQ(fields[0].rep, c.rep) << c.wire;
        EXPECT_EQ(hpack_decoder_table_size(d), c.table_size) << c.wire;
        hpack_decoder_destroy(d);
    }
}

}  // namespace
