/*
 * The hpack-test-case corpus (github.com/http2jp/hpack-test-case): every
 * story encoded by other implementations decodes to exactly its headers,
 * and every raw-data story survives our encoder and decoder.
 *
 * The corpus is read in place from $HPACK_TEST_CASE_DIR or
 * ../shared/data/hpack-test-case (relative to the repository root, where
 * the tests run); without it these tests are skipped, saying so.
 */

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "hpack.h"
#include "corpus.h"
#include "story.h"

namespace {

using hpack_tools::story::Case;
using hpack_tools::story::HeaderList;
using hpack_tools::story::Story;
namespace story = hpack_tools::story;

/* The encoder directories of hpack-test-case (all but raw-data).
 * CorpusDecode.EveryEncoderDirectoryIsCovered fails when the corpus and
 * this list disagree, so a new directory cannot go untested. */
const char *const kEncoderDirs[] = {
    "go-hpack",
    "haskell-http2-linear",
    "haskell-http2-linear-huffman",
    "haskell-http2-naive",
    "haskell-http2-naive-huffman",
    "haskell-http2-static",
    "haskell-http2-static-huffman",
    "nghttp2",
    "nghttp2-16384-4096",
    "nghttp2-change-table-size",
    "node-http2-hpack",
    "python-hpack",
    "swift-nio-hpack-huffman",
    "swift-nio-hpack-plain-text",
};

std::string param_name(const std::string &s)
{
    std::string out;
    for (char c : s) {
        out.push_back(std::isalnum((unsigned char) c) ? c : '_');
    }
    return out;
}

/* "story_03.json" from a path. */
std::string base_name(const std::string &path)
{
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string error_text(int rc)
{
    return std::to_string(rc) + " (" + hpack_strerror(rc) + ")";
}

struct Totals {
    uint64_t  stories = 0;
    uint64_t  cases = 0;
    uint64_t  fields = 0;
    uint64_t  wire = 0;
    uint64_t  plain = 0;
};

/* Decodes every case of a story with one decoder, whole blocks
 * (piece_len 0) or in pieces of piece_len octets.  Returns "" or the first
 * failure, naming the case; a failure ends the story (the decoder's table
 * can no longer be trusted).  If stats is not NULL, the decoder's counters
 * are stored there. */
std::string decode_story(const Story &s, size_t piece_len, Totals *totals,
                         hpack_stats_t *stats)
{
    hpack_decoder_t *dec = hpack_decoder_create(nullptr,
                                                HPACK_DEFAULT_TABLE_SIZE);
    if (dec == nullptr) {
        return "hpack_decoder_create failed";
    }
    std::string failure;
    for (const Case &c : s.cases) {
        std::string where = "seqno " + std::to_string(c.seqno) + ": ";
        if (!c.has_wire || !c.has_headers) {
            failure = where + "no \"wire\" or no \"headers\"";
            break;
        }
        if (c.has_table_size) {
            int rc = hpack_decoder_set_settings_table_size(dec, c.table_size);
            if (rc != HPACK_OK) {
                failure = where + "set_settings_table_size("
                          + std::to_string(c.table_size) + ") returned "
                          + error_text(rc);
                break;
            }
        }
        HeaderList got;
        int rc = piece_len == 0
            ? story::decode_block(dec, c.wire, &got)
            : story::decode_block_in_pieces(dec, c.wire.data(),
                                            c.wire.size(), piece_len, &got);
        if (rc != HPACK_OK) {
            failure = where + "decode returned " + error_text(rc)
                      + " after " + std::to_string(got.size())
                      + " fields; wire " + hpack_tools::hex::encode(c.wire);
            break;
        }
        std::string d = story::diff(c.headers, got);
        if (!d.empty()) {
            failure = where + d + "; wire " + hpack_tools::hex::encode(c.wire);
            break;
        }
        totals->cases++;
        totals->fields += got.size();
        totals->wire += c.wire.size();
        totals->plain += story::plain_size(got);
    }
    totals->stories++;
    if (stats != nullptr) {
        hpack_decoder_stats(dec, stats);
    }
    hpack_decoder_destroy(dec);
    return failure;
}


/* ----------------------------------------------------------- CorpusDecode */

class CorpusDecode : public ::testing::TestWithParam<const char *> {};

/* Decodes every story of the directory, with every piece length given
 * (0: whole blocks). */
void decode_directory(const char *name, std::vector<size_t> piece_lens)
{
    REQUIRE_CORPUS(corpus);
    std::string dir = corpus + "/" + name;
    std::vector<std::string> files = story::story_files(dir);
    ASSERT_FALSE(files.empty()) << "no story_*.json in " << dir;

    for (size_t piece_len : piece_lens) {
        Totals t;
        for (const std::string &f : files) {
            Story s;
            std::string err;
            if (!story::load(f, &s, &err)) {
                ADD_FAILURE() << err;
                continue;
            }
            std::string fail = decode_story(s, piece_len, &t, nullptr);
            EXPECT_EQ(fail, "") << name << "/" << base_name(f)
                                << (piece_len ? " in pieces of "
                                                + std::to_string(piece_len)
                                                + " octets"
                                              : std::string(""));
        }
        EXPECT_GT(t.cases, 0u);
        std::cout << "[ corpus   ] " << name << ": " << t.stories
                  << " stories, " << t.cases << " blocks, " << t.fields
                  << " fields, " << t.wire << " wire octets"
                  << (piece_len ? " (pieces of " + std::to_string(piece_len)
                                  + ")"
                                : std::string(""))
                  << "\n";
    }
}

TEST_P(CorpusDecode, EveryStoryDecodesToItsHeaders)
{
    decode_directory(GetParam(), {0});
}

/* A block split over reads and CONTINUATION frames at any octet. */
TEST_P(CorpusDecode, EveryStoryDecodesWhenSplitIntoPieces)
{
    decode_directory(GetParam(), {1, 7});
}

/* The counters of hpack_decoder_stats() agree with what was decoded. */
TEST_P(CorpusDecode, StatsCountEveryBlockFieldAndOctet)
{
    REQUIRE_CORPUS(corpus);
    std::string dir = corpus + "/" + GetParam();
    std::vector<std::string> files = story::story_files(dir);
    ASSERT_FALSE(files.empty()) << "no story_*.json in " << dir;

    for (const std::string &f : files) {
        Story s;
        std::string err;
        ASSERT_TRUE(story::load(f, &s, &err)) << err;
        Totals t;
        hpack_stats_t st;
        std::string fail = decode_story(s, 0, &t, &st);
        ASSERT_EQ(fail, "") << GetParam() << "/" << base_name(f);

        SCOPED_TRACE(std::string(GetParam()) + "/" + base_name(f));
        EXPECT_EQ(st.blocks, t.cases);
        EXPECT_EQ(st.fields, t.fields);
        EXPECT_EQ(st.wire_bytes, t.wire);
        EXPECT_EQ(st.plain_bytes, t.plain);
        EXPECT_EQ(st.indexed_static + st.indexed_dynamic + st.name_indexed
                      + st.literal_names,
                  st.fields)
            << "every field is exactly one of the four kinds";
        EXPECT_GE(st.insertions, st.evictions);
    }
}

INSTANTIATE_TEST_SUITE_P(
    , CorpusDecode, ::testing::ValuesIn(kEncoderDirs),
    [](const ::testing::TestParamInfo<const char *> &info) {
        return param_name(info.param);
    });

TEST(CorpusDecodeDirectories, EveryEncoderDirectoryIsCovered)
{
    REQUIRE_CORPUS(corpus);
    std::vector<std::string> known(std::begin(kEncoderDirs),
                                   std::end(kEncoderDirs));
    std::vector<std::string> found;
    for (const std::string &d : story::subdirectories(corpus)) {
        if (d != "raw-data" && !story::story_files(corpus + "/" + d).empty()) {
            found.push_back(d);
        }
    }
    EXPECT_EQ(found, known)
        << "the corpus's encoder directories and kEncoderDirs differ";
}


/* -------------------------------------------------------- CorpusRoundTrip */

struct RoundTripTotals {
    uint64_t  cases = 0;
    uint64_t  wire = 0;
    uint64_t  plain = 0;
};

/* Encodes every case of a story with one encoder of our own, and decodes
 * with one decoder of our own: the headers must come back, and after every
 * block both tables must hold the same number of entries and octets.
 * table_size is the decoder's SETTINGS_HEADER_TABLE_SIZE from the start
 * (and the encoder's cap); a case's header_table_size is applied to both
 * sides before it.  "" or the first failure. */
std::string round_trip_story(const Story &s, size_t table_size,
                             RoundTripTotals *t)
{
    hpack_encoder_t *enc = hpack_encoder_create(
        nullptr, std::max<size_t>(table_size, HPACK_DEFAULT_TABLE_SIZE),
        nullptr);
    hpack_decoder_t *dec = hpack_decoder_create(nullptr, table_size);
    std::string failure;

    if (enc == nullptr || dec == nullptr) {
        failure = "create failed";
    } else if (table_size != HPACK_DEFAULT_TABLE_SIZE) {
        int rc = hpack_encoder_set_peer_table_size(enc, table_size);
        if (rc != HPACK_OK) {
            failure = "set_peer_table_size returned " + error_text(rc);
        }
    }
    for (size_t i = 0; failure.empty() && i < s.cases.size(); i++) {
        const Case &c = s.cases[i];
        std::string where = "seqno " + std::to_string(c.seqno) + ": ";
        if (!c.has_headers) {
            failure = where + "no \"headers\"";
            break;
        }
        if (c.has_table_size) {
            int rc = hpack_encoder_set_peer_table_size(enc, c.table_size);
            int rc2 = hpack_decoder_set_settings_table_size(dec,
                                                            c.table_size);
            if (rc != HPACK_OK || rc2 != HPACK_OK) {
                failure = where + "table size " + std::to_string(c.table_size)
                          + ": encoder " + error_text(rc) + ", decoder "
                          + error_text(rc2);
                break;
            }
        }
        std::vector<uint8_t> wire;
        int rc = story::encode_block(enc, c.headers, &wire);
        if (rc != HPACK_OK) {
            failure = where + "encode returned " + error_text(rc);
            break;
        }
        HeaderList got;
        rc = story::decode_block(dec, wire, &got);
        if (rc != HPACK_OK) {
            failure = where + "decode of our block returned " + error_text(rc)
                      + "; wire " + hpack_tools::hex::encode(wire);
            break;
        }
        std::string d = story::diff(c.headers, got);
        if (!d.empty()) {
            failure = where + d + "; wire " + hpack_tools::hex::encode(wire);
            break;
        }
        if (hpack_encoder_table_size(enc) != hpack_decoder_table_size(dec)
            || hpack_encoder_table_entries(enc)
                   != hpack_decoder_table_entries(dec))
        {
            failure = where + "tables out of sync: encoder "
                      + std::to_string(hpack_encoder_table_entries(enc))
                      + " entries / "
                      + std::to_string(hpack_encoder_table_size(enc))
                      + " octets, decoder "
                      + std::to_string(hpack_decoder_table_entries(dec))
                      + " entries / "
                      + std::to_string(hpack_decoder_table_size(dec))
                      + " octets";
            break;
        }
        t->cases++;
        t->wire += wire.size();
        t->plain += story::plain_size(c.headers);
    }
    hpack_encoder_destroy(enc);
    hpack_decoder_destroy(dec);
    return failure;
}

class CorpusRoundTrip : public ::testing::TestWithParam<size_t> {};

TEST_P(CorpusRoundTrip, EveryRawDataStoryComesBackThroughOurCodec)
{
    REQUIRE_CORPUS(corpus);
    std::vector<std::string> files = story::story_files(corpus + "/raw-data");
    ASSERT_FALSE(files.empty()) << "no stories in " << corpus << "/raw-data";

    RoundTripTotals t;
    for (const std::string &f : files) {
        Story s;
        std::string err;
        if (!story::load(f, &s, &err)) {
            ADD_FAILURE() << err;
            continue;
        }
        EXPECT_EQ(round_trip_story(s, GetParam(), &t), "")
            << "raw-data/" << base_name(f) << " with table size "
            << GetParam();
    }
    EXPECT_GT(t.cases, 0u);
    std::cout << "[ corpus   ] raw-data, table size " << GetParam() << ": "
              << t.cases << " blocks, " << t.wire << " wire octets for "
              << t.plain << " raw octets ("
              << double(t.wire) / double(t.plain ? t.plain : 1) << ")\n";
}

INSTANTIATE_TEST_SUITE_P(
    , CorpusRoundTrip,
    ::testing::Values(size_t(4096), size_t(0), size_t(256), size_t(16384)),
    [](const ::testing::TestParamInfo<size_t> &info) {
        return "TableSize" + std::to_string(info.param);
    });

/* nghttp2-change-table-size carries a SETTINGS_HEADER_TABLE_SIZE schedule
 * (4096, 1365, 2730): our encoder and decoder follow it in step. */
TEST(CorpusRoundTripTableSize, FollowsTheCorpusTableSizeSchedule)
{
    REQUIRE_CORPUS(corpus);
    std::string dir = corpus + "/nghttp2-change-table-size";
    std::vector<std::string> files = story::story_files(dir);
    ASSERT_FALSE(files.empty()) << "no stories in " << dir;

    RoundTripTotals t;
    uint64_t changes = 0;
    for (const std::string &f : files) {
        Story s;
        std::string err;
        ASSERT_TRUE(story::load(f, &s, &err)) << err;
        for (const Case &c : s.cases) {
            changes += c.has_table_size;
        }
        EXPECT_EQ(round_trip_story(s, HPACK_DEFAULT_TABLE_SIZE, &t), "")
            << "nghttp2-change-table-size/" << base_name(f);
    }
    EXPECT_GT(changes, 0u) << "the schedule has no size change to follow";
    EXPECT_GT(t.cases, 0u);
}

/* Our wire size on raw-data against the raw size and the corpus's nghttp2
 * directory (the same header lists, encoded by nghttp2 with a 4096 table). */
TEST(CorpusRoundTripSize, ReportsOurWireOctetsAgainstRawAndNghttp2)
{
    REQUIRE_CORPUS(corpus);
    std::vector<std::string> raw = story::story_files(corpus + "/raw-data");
    std::vector<std::string> ng = story::story_files(corpus + "/nghttp2");
    ASSERT_FALSE(raw.empty());
    ASSERT_FALSE(ng.empty());

    RoundTripTotals ours;
    uint64_t nghttp2_wire = 0;
    uint64_t nghttp2_plain = 0;
    for (const std::string &f : raw) {
        Story s;
        std::string err;
        ASSERT_TRUE(story::load(f, &s, &err)) << err;
        ASSERT_EQ(round_trip_story(s, HPACK_DEFAULT_TABLE_SIZE, &ours), "")
            << "raw-data/" << base_name(f);
    }
    for (const std::string &f : ng) {
        Story s;
        std::string err;
        ASSERT_TRUE(story::load(f, &s, &err)) << err;
        for (const Case &c : s.cases) {
            nghttp2_wire += c.wire.size();
            nghttp2_plain += story::plain_size(c.headers);
        }
    }
    /* The ratio is only comparable if nghttp2/ holds the same lists. */
    ASSERT_EQ(nghttp2_plain, ours.plain)
        << "corpus nghttp2/ and raw-data/ hold different header lists";
    ASSERT_GT(ours.plain, 0u);

    double r_ours = double(ours.wire) / double(ours.plain);
    double r_ng = double(nghttp2_wire) / double(ours.plain);
    std::cout << "[ corpus   ] raw-data: raw " << ours.plain
              << " octets; ours " << ours.wire << " (" << r_ours
              << "); corpus nghttp2/ " << nghttp2_wire << " (" << r_ng
              << ")\n";
    ::testing::Test::RecordProperty("raw_octets", std::to_string(ours.plain));
    ::testing::Test::RecordProperty("our_wire_octets",
                                    std::to_string(ours.wire));
    ::testing::Test::RecordProperty("corpus_nghttp2_wire_octets",
                                    std::to_string(nghttp2_wire));
    EXPECT_LT(ours.wire, ours.plain) << "our encoder does not compress";
}

}  // namespace
