/*
 * Interop with libnghttp2's HPACK (the codec inside curl, nghttpx, Apache
 * mod_http2 and many clients): blocks we encode must decode in its
 * inflater, blocks its deflater produces must decode in ours, and both
 * must stay in step when SETTINGS_HEADER_TABLE_SIZE changes mid-connection.
 * Header lists come from hpack-test-case's raw-data stories (one
 * compression context per story); without the corpus the tests are
 * skipped, saying so.
 */

#include <gtest/gtest.h>

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <iostream>
#include <random>
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

/* nghttp2 counts the 61 static entries in its table entry numbers. */
constexpr size_t kStaticEntries = 61;

std::string error_text(int rc)
{
    return std::to_string(rc) + " (" + hpack_strerror(rc) + ")";
}

std::string base_name(const std::string &path)
{
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<Story> load_raw_data(const std::string &corpus)
{
    std::vector<Story> stories;
    for (const std::string &f : story::story_files(corpus + "/raw-data")) {
        Story s;
        std::string err;
        if (!story::load(f, &s, &err)) {
            ADD_FAILURE() << err;
            continue;
        }
        s.description = "raw-data/" + base_name(f);   /* for messages */
        for (const Case &c : s.cases) {
            if (!c.has_headers) {
                ADD_FAILURE() << s.description << " seqno " << c.seqno
                              << ": no \"headers\"";
            }
        }
        stories.push_back(std::move(s));
    }
    return stories;
}


/* --------------------------------------------------------------- nghttp2 */

struct Inflater {
    nghttp2_hd_inflater *p = nullptr;
    Inflater() { nghttp2_hd_inflate_new(&p); }
    ~Inflater() { nghttp2_hd_inflate_del(p); }
    Inflater(const Inflater &) = delete;
    Inflater &operator=(const Inflater &) = delete;
};

struct Deflater {
    nghttp2_hd_deflater *p = nullptr;
    explicit Deflater(size_t max) { nghttp2_hd_deflate_new(&p, max); }
    ~Deflater() { nghttp2_hd_deflate_del(p); }
    Deflater(const Deflater &) = delete;
    Deflater &operator=(const Deflater &) = delete;
};

/* One whole block through nghttp2's inflater.  "" or what went wrong.
 * never_indexed (if not NULL) gets, per field, whether it arrived as a
 * never-indexed literal. */
std::string inflate_block(nghttp2_hd_inflater *inf,
                          const std::vector<uint8_t> &in, HeaderList *out,
                          std::vector<bool> *never_indexed = nullptr)
{
    static const uint8_t empty = 0;
    const uint8_t *p = in.empty() ? &empty : in.data();
    size_t left = in.size();

    out->clear();
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, left, 1);
        if (rv < 0) {
            return "nghttp2_hd_inflate_hd2: " + std::to_string(rv) + " ("
                   + nghttp2_strerror(int(rv)) + ") after "
                   + std::to_string(out->size()) + " fields";
        }
        p += rv;
        left -= size_t(rv);
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            out->push_back({std::string(reinterpret_cast<char *>(nv.name),
                                        nv.namelen),
                            std::string(reinterpret_cast<char *>(nv.value),
                                        nv.valuelen)});
            if (never_indexed != nullptr) {
                never_indexed->push_back(nv.flags & NGHTTP2_NV_FLAG_NO_INDEX);
            }
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            break;
        }
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && left == 0) {
            return "nghttp2 inflater wants more input after the last octet";
        }
    }
    if (left != 0) {
        return "nghttp2 inflater left " + std::to_string(left)
               + " octets unread";
    }
    return "";
}

std::string deflate_block(nghttp2_hd_deflater *def, const HeaderList &h,
                          std::vector<uint8_t> *out)
{
    std::vector<nghttp2_nv> nva(h.size());
    for (size_t i = 0; i < h.size(); i++) {
        nva[i].name = reinterpret_cast<uint8_t *>(
            const_cast<char *>(h[i].name.data()));
        nva[i].namelen = h[i].name.size();
        nva[i].value = reinterpret_cast<uint8_t *>(
            const_cast<char *>(h[i].value.data()));
        nva[i].valuelen = h[i].value.size();
        nva[i].flags = NGHTTP2_NV_FLAG_NONE;
    }
    out->assign(nghttp2_hd_deflate_bound(def, nva.data(), nva.size()), 0);
    ssize_t rv = nghttp2_hd_deflate_hd(def, out->data(), out->size(),
                                       nva.data(), nva.size());
    if (rv < 0) {
        return "nghttp2_hd_deflate_hd: " + std::to_string(rv) + " ("
               + nghttp2_strerror(int(rv)) + ")";
    }
    out->resize(size_t(rv));
    return "";
}


/* --------------------------------------------------------- size schedules */

/* SETTINGS_HEADER_TABLE_SIZE values the decoding side sends (and sees
 * ACKed) just before the case at fraction `at` of a story; several values
 * at one point are several SETTINGS frames between two blocks (RFC 7541
 * 4.2: the encoder must signal the smallest, then the final size). */
struct Change {
    double               at;
    std::vector<size_t>  sizes;
};

struct Schedule {
    const char          *name;
    size_t               encoder_max;      /* our cap, nghttp2's deflate max */
    std::vector<Change>  changes;
};

const Schedule kSchedules[] = {
    {"None", 4096, {}},
    {"To0AndBackTo4096", 4096, {{1.0 / 3, {0}}, {2.0 / 3, {4096}}}},
    {"To1024ThenTo2048", 4096, {{1.0 / 3, {1024}}, {2.0 / 3, {2048}}}},
    {"To0AndBackBetweenTwoBlocks", 4096, {{0.5, {0, 4096}}}},
    {"To512AndTo1024BetweenTwoBlocks", 4096, {{0.5, {512, 1024}}}},
    {"To16384ThenTo512", 16384, {{1.0 / 3, {16384}}, {2.0 / 3, {512}}}},
};

/* The sizes to apply before case i of a story of n cases. */
std::vector<size_t> sizes_before(const Schedule &sc, size_t i, size_t n)
{
    std::vector<size_t> out;
    for (const Change &c : sc.changes) {
        size_t at = size_t(c.at * double(n));
        if (at == 0) {
            at = 1;                  /* after the first block, mid-story */
        }
        if (at == i) {
            out.insert(out.end(), c.sizes.begin(), c.sizes.end());
        }
    }
    return out;
}

struct Totals {
    uint64_t  cases = 0;
    uint64_t  wire = 0;
    uint64_t  plain = 0;
    uint64_t  changes = 0;
};

/* Our encoder -> nghttp2's inflater, one pair per story.  "" or the first
 * failure. */
/* Empty when two sides' dynamic tables agree, else what each holds. */
std::string tables_differ(const char *a, size_t a_entries, size_t a_size,
                          const char *b, size_t b_entries, size_t b_size)
{
    if (a_entries == b_entries && a_size == b_size) {
        return "";
    }
    return std::string("tables out of sync: ") + a + " "
           + std::to_string(a_entries) + " entries / "
           + std::to_string(a_size) + " octets, " + b + " "
           + std::to_string(b_entries) + " / " + std::to_string(b_size);
}

std::string ours_to_nghttp2(const Story &s, const Schedule &sc, Totals *t)
{
    hpack_encoder_t *enc = hpack_encoder_create(nullptr, sc.encoder_max,
                                                nullptr);
    Inflater inf;
    std::string failure;
    if (enc == nullptr || inf.p == nullptr) {
        failure = "create failed";
    }
    for (size_t i = 0; failure.empty() && i < s.cases.size(); i++) {
        const Case &c = s.cases[i];
        std::string where = s.description + " seqno "
                            + std::to_string(c.seqno) + ": ";
        for (size_t size : sizes_before(sc, i, s.cases.size())) {
            int rc = hpack_encoder_set_peer_table_size(enc, size);
            int rv = nghttp2_hd_inflate_change_table_size(inf.p, size);
            if (rc != HPACK_OK || rv != 0) {
                failure = where + "table size " + std::to_string(size)
                          + ": ours " + error_text(rc) + ", nghttp2 "
                          + std::to_string(rv);
            }
            t->changes++;
        }
        if (!failure.empty()) {
            break;
        }
        std::vector<uint8_t> wire;
        int rc = story::encode_block(enc, c.headers, &wire);
        if (rc != HPACK_OK) {
            failure = where + "hpack_encode returned " + error_text(rc);
            break;
        }
        HeaderList got;
        std::string err = inflate_block(inf.p, wire, &got);
        if (err.empty()) {
            err = story::diff(c.headers, got);
        }
        if (!err.empty()) {
            failure = where + err + "; our wire "
                      + hpack_tools::hex::encode(wire);
            break;
        }
        err = tables_differ("our encoder", hpack_encoder_table_entries(enc),
                            hpack_encoder_table_size(enc), "nghttp2 inflater",
                            nghttp2_hd_inflate_get_num_table_entries(inf.p)
                                - kStaticEntries,
                            nghttp2_hd_inflate_get_dynamic_table_size(inf.p));
        if (!err.empty()) {
            failure = where + err;
            break;
        }
        t->cases++;
        t->wire += wire.size();
        t->plain += story::plain_size(c.headers);
    }
    hpack_encoder_destroy(enc);
    return failure;
}

/* nghttp2's deflater -> our decoder, one pair per story. */
std::string nghttp2_to_ours(const Story &s, const Schedule &sc, Totals *t)
{
    Deflater def(sc.encoder_max);
    hpack_decoder_t *dec = hpack_decoder_create(nullptr,
                                                HPACK_DEFAULT_TABLE_SIZE);
    std::string failure;
    if (dec == nullptr || def.p == nullptr) {
        failure = "create failed";
    }
    for (size_t i = 0; failure.empty() && i < s.cases.size(); i++) {
        const Case &c = s.cases[i];
        std::string where = s.description + " seqno "
                            + std::to_string(c.seqno) + ": ";
        for (size_t size : sizes_before(sc, i, s.cases.size())) {
            int rv = nghttp2_hd_deflate_change_table_size(def.p, size);
            int rc = hpack_decoder_set_settings_table_size(dec, size);
            if (rc != HPACK_OK || rv != 0) {
                failure = where + "table size " + std::to_string(size)
                          + ": ours " + error_text(rc) + ", nghttp2 "
                          + std::to_string(rv);
            }
            t->changes++;
        }
        if (!failure.empty()) {
            break;
        }
        std::vector<uint8_t> wire;
        std::string err = deflate_block(def.p, c.headers, &wire);
        if (!err.empty()) {
            failure = where + err;
            break;
        }
        HeaderList got;
        int rc = story::decode_block(dec, wire, &got);
        if (rc != HPACK_OK) {
            failure = where + "decoding returned " + error_text(rc)
                      + " after " + std::to_string(got.size())
                      + " fields; nghttp2 wire "
                      + hpack_tools::hex::encode(wire);
            break;
        }
        err = story::diff(c.headers, got);
        if (!err.empty()) {
            failure = where + err + "; nghttp2 wire "
                      + hpack_tools::hex::encode(wire);
            break;
        }
        err = tables_differ("nghttp2 deflater",
                            nghttp2_hd_deflate_get_num_table_entries(def.p)
                                - kStaticEntries,
                            nghttp2_hd_deflate_get_dynamic_table_size(def.p),
                            "our decoder", hpack_decoder_table_entries(dec),
                            hpack_decoder_table_size(dec));
        if (!err.empty()) {
            failure = where + err;
            break;
        }
        t->cases++;
        t->wire += wire.size();
        t->plain += story::plain_size(c.headers);
    }
    hpack_decoder_destroy(dec);
    return failure;
}


/* ------------------------------------------------------------ the tests */

class Nghttp2Interop : public ::testing::TestWithParam<Schedule> {};

using Direction = std::string (*)(const Story &, const Schedule &, Totals *);

/* Every raw-data story through one direction under the test's schedule. */
void run_direction(const std::string &corpus, const Schedule &sc,
                   Direction direction, const char *label)
{
    std::vector<Story> stories = load_raw_data(corpus);
    ASSERT_FALSE(stories.empty()) << "no stories in " << corpus
                                  << "/raw-data";
    Totals t;
    for (const Story &s : stories) {
        EXPECT_EQ(direction(s, sc, &t), "");
    }
    EXPECT_GT(t.cases, 0u);
    if (!sc.changes.empty()) {
        EXPECT_GT(t.changes, 0u) << "the schedule changed no table size";
    }
    std::cout << "[ nghttp2  ] " << label << ", " << sc.name << ": "
              << t.cases << " blocks, " << t.wire << " wire octets, "
              << t.changes << " size changes\n";
}

/* What breaks without it: curl and other nghttp2 clients close the
 * connection with COMPRESSION_ERROR on our responses. */
TEST_P(Nghttp2Interop, Nghttp2InflaterDecodesEveryBlockWeEncode)
{
    REQUIRE_CORPUS(corpus);
    run_direction(corpus, GetParam(), ours_to_nghttp2, "ours -> nghttp2");
}

/* What breaks without it: requests from nghttp2 clients fail to decode. */
TEST_P(Nghttp2Interop, WeDecodeEveryBlockNghttp2Deflates)
{
    REQUIRE_CORPUS(corpus);
    run_direction(corpus, GetParam(), nghttp2_to_ours, "nghttp2 -> ours");
}

INSTANTIATE_TEST_SUITE_P(
    , Nghttp2Interop, ::testing::ValuesIn(kSchedules),
    [](const ::testing::TestParamInfo<Schedule> &info) {
        return std::string(info.param.name);
    });

/* The goal: fewer octets than nghttp2 (0.310 of the raw size on
 * this corpus) for the same lists, one compression context per story,
 * 4096-octet tables on both. */
TEST(Nghttp2InteropSize, WeEncodeRawDataInFewerOctetsThanNghttp2)
{
    REQUIRE_CORPUS(corpus);
    std::vector<Story> stories = load_raw_data(corpus);
    ASSERT_FALSE(stories.empty());
    Totals ours, theirs;
    for (const Story &s : stories) {
        ASSERT_EQ(ours_to_nghttp2(s, kSchedules[0], &ours), "");
        ASSERT_EQ(nghttp2_to_ours(s, kSchedules[0], &theirs), "");
    }
    ASSERT_EQ(ours.plain, theirs.plain);
    ASSERT_GT(ours.plain, 0u);
    double raw = double(ours.plain);
    std::cout << "[ nghttp2  ] raw-data: raw " << ours.plain
              << " octets; ours " << ours.wire << " ("
              << double(ours.wire) / raw << "); nghttp2 "
              << NGHTTP2_VERSION << " deflater " << theirs.wire << " ("
              << double(theirs.wire) / raw << ")\n";
    ::testing::Test::RecordProperty("raw_octets", std::to_string(ours.plain));
    ::testing::Test::RecordProperty("our_wire_octets",
                                    std::to_string(ours.wire));
    ::testing::Test::RecordProperty("nghttp2_wire_octets",
                                    std::to_string(theirs.wire));
    EXPECT_LT(ours.wire, theirs.wire);
}

/* RFC 7541 7.1.3: a field sent as never-indexed must stay so through
 * intermediaries; both sides must say so on the wire and read it back. */
TEST(Nghttp2InteropSensitive, NeverIndexedFieldsAreSeenAsSuchBothWays)
{
    const HeaderList h = {
        {":method", "GET"},
        {":path", "/"},
        {"authorization", "Basic dXNlcjpwYXNzd29yZA=="},
        {"cookie", "sid=31d4d96e"},
        {"user-agent", "interop/1.0"},
    };
    const std::vector<bool> sensitive = {false, false, true, true, false};

    /* ours -> nghttp2, twice: the second block must not index them. */
    hpack_encoder_t *enc = hpack_encoder_create(nullptr, 4096, nullptr);
    ASSERT_NE(enc, nullptr);
    Inflater inf;
    for (int round = 0; round < 2; round++) {
        std::vector<uint8_t> wire;
        ASSERT_EQ(story::encode_block(enc, h, &wire), HPACK_OK);
        HeaderList got;
        std::vector<bool> never;
        ASSERT_EQ(inflate_block(inf.p, wire, &got, &never), "")
            << hpack_tools::hex::encode(wire);
        EXPECT_EQ(story::diff(h, got), "");
        EXPECT_EQ(never, sensitive) << "round " << round << ", wire "
                                    << hpack_tools::hex::encode(wire);
    }
    hpack_encoder_destroy(enc);

    /* nghttp2 -> ours (nghttp2 never indexes these two). */
    Deflater def(4096);
    hpack_decoder_t *dec = hpack_decoder_create(nullptr, 4096);
    ASSERT_NE(dec, nullptr);
    std::vector<uint8_t> wire;
    ASSERT_EQ(deflate_block(def.p, h, &wire), "");
    std::vector<bool> never;
    auto collect = [&never](const hpack_field_t &f) {
        never.push_back(f.representation == HPACK_REP_NEVER_INDEXED);
    };
    EXPECT_EQ(hpack_tools::decode_block(dec, wire.data(), wire.size(), collect),
              HPACK_OK);
    EXPECT_EQ(never, sensitive) << hpack_tools::hex::encode(wire);
    hpack_decoder_destroy(dec);
}

/* RFC 7541 4.2: when SETTINGS_HEADER_TABLE_SIZE changes more than once
 * between two blocks, the encoder must signal the smallest size, then the
 * final one; hpack.h: "If it shrank below the current table size, the
 * peer's next block must start with a size update no larger than it (else
 * HPACK_E_UPDATE_MISSING)".  A peer that signals only the final size did
 * not flush its table; nghttp2's inflater rejects such a block, and so
 * must we. */
TEST(Nghttp2InteropTableSize, MissingSmallestSizeUpdateIsRejectedLikeNghttp2)
{
    struct Step {
        std::vector<size_t>   sizes;        /* settings between the blocks */
        std::vector<uint8_t>  bad;          /* signals the final size only */
        std::vector<uint8_t>  good;         /* smallest, then final */
    };
    const Step steps[] = {
        /* 4096 -> 0 -> 4096; then :method GET, x-a: b (index 62) */
        {{0, 4096}, {0x3f, 0xe1, 0x1f, 0x82, 0xbe},
         {0x20, 0x3f, 0xe1, 0x1f, 0x82}},
        /* 4096 -> 1024 -> 2048 */
        {{1024, 2048}, {0x3f, 0xe1, 0x0f, 0x82, 0xbe},
         {0x3f, 0xe1, 0x07, 0x3f, 0xe1, 0x0f, 0x82, 0xbe}},
    };
    /* x-a: b, literal with incremental indexing, new name */
    const std::vector<uint8_t> first = {0x40, 0x03, 'x', '-', 'a', 0x01, 'b'};

    for (const Step &st : steps) {
        for (bool good : {false, true}) {
            const std::vector<uint8_t> &second = good ? st.good : st.bad;
            SCOPED_TRACE("sizes " + std::to_string(st.sizes[0]) + ", "
                         + std::to_string(st.sizes[1]) + "; second block "
                         + hpack_tools::hex::encode(second));
            HeaderList got;

            Inflater inf;
            ASSERT_EQ(inflate_block(inf.p, first, &got), "");
            hpack_decoder_t *dec = hpack_decoder_create(nullptr, 4096);
            ASSERT_NE(dec, nullptr);
            ASSERT_EQ(story::decode_block(dec, first, &got), HPACK_OK);
            for (size_t size : st.sizes) {
                ASSERT_EQ(nghttp2_hd_inflate_change_table_size(inf.p, size),
                          0);
                ASSERT_EQ(hpack_decoder_set_settings_table_size(dec, size),
                          HPACK_OK);
            }
            std::string theirs = inflate_block(inf.p, second, &got);
            int ours = story::decode_block(dec, second, &got);
            hpack_decoder_destroy(dec);

            if (good) {
                EXPECT_EQ(theirs, "");
                EXPECT_EQ(ours, HPACK_OK) << error_text(ours);
            } else {
                ASSERT_NE(theirs, "") << "nghttp2 accepts it: test premise";
                EXPECT_EQ(ours, HPACK_E_UPDATE_MISSING) << error_text(ours);
            }
        }
    }
}

/* Header lists the corpus lacks (values longer than the table, any octet,
 * empty values, repeats) and table sizes around the entry overhead, changed
 * at random between blocks: both peers decode every block and keep the
 * same table, both ways.  Deterministic (fixed seeds). */
HeaderList random_list(std::mt19937 *rng)
{
    static const char *const names[] = {
        ":path", "cookie", "set-cookie", "authorization", "x-a",
        "content-length", "date", "etag", "user-agent", "accept",
        "x-a-rather-long-header-name-to-fill-the-table", "location",
    };
    HeaderList h;
    size_t n = (*rng)() % 12;
    for (size_t i = 0; i < n; i++) {
        if (!h.empty() && (*rng)() % 3 == 0) {
            h.push_back(h[(*rng)() % h.size()]);
            continue;
        }
        size_t len = (*rng)() % 10 == 0 ? (*rng)() % 6000 : (*rng)() % 40;
        unsigned kind = (*rng)() % 3;
        std::string v;
        for (size_t j = 0; j < len; j++) {
            v.push_back(kind == 0 ? char('a' + (*rng)() % 4)
                        : kind == 1 ? char((*rng)() % 256)
                                    : char('0' + (*rng)() % 10));
        }
        h.push_back({names[(*rng)() % (sizeof(names) / sizeof(names[0]))],
                     v});
    }
    return h;
}

const size_t kRandomSizes[] = {0, 1, 31, 32, 33, 100, 256, 1024, 4096,
                               8192, 16384, 65536};
constexpr int kRandomSeeds = 100;
constexpr int kRandomBlocks = 60;

size_t random_size(std::mt19937 *rng)
{
    return kRandomSizes[(*rng)() % (sizeof(kRandomSizes)
                                    / sizeof(kRandomSizes[0]))];
}

TEST(Nghttp2InteropRandom, RandomListsAndSizeChangesStayInSyncBothWays)
{
    for (int seed = 0; seed < kRandomSeeds; seed++) {
        std::mt19937 rng(seed);
        size_t cap = random_size(&rng);
        size_t piece = 1 + rng() % 9;
        hpack_encoder_t *enc = hpack_encoder_create(nullptr, cap, nullptr);
        hpack_decoder_t *dec = hpack_decoder_create(nullptr, 4096);
        Inflater inf;
        Deflater def(cap);
        ASSERT_NE(enc, nullptr);
        ASSERT_NE(dec, nullptr);
        std::string failure;
        for (int b = 0; failure.empty() && b < kRandomBlocks; b++) {
            std::string where = "seed " + std::to_string(seed) + " cap "
                                + std::to_string(cap) + " block "
                                + std::to_string(b) + ": ";
            for (int k = rng() % 8 == 0 ? 1 + rng() % 3 : 0; k > 0; k--) {
                size_t size = random_size(&rng);
                where += "[size " + std::to_string(size) + "] ";
                if (hpack_encoder_set_peer_table_size(enc, size) != HPACK_OK
                    || hpack_decoder_set_settings_table_size(dec, size)
                           != HPACK_OK
                    || nghttp2_hd_inflate_change_table_size(inf.p, size) != 0
                    || nghttp2_hd_deflate_change_table_size(def.p, size) != 0)
                {
                    failure = where + "a table size change failed";
                }
            }
            HeaderList h = random_list(&rng);
            std::vector<uint8_t> ours, theirs;
            HeaderList got;
            int rc = story::encode_block(enc, h, &ours);
            if (rc != HPACK_OK) {
                failure = where + "hpack_encode: " + error_text(rc);
                break;
            }
            std::string err = inflate_block(inf.p, ours, &got);
            if (err.empty()) {
                err = story::diff(h, got);
            }
            if (err.empty() && nghttp2_hd_inflate_get_dynamic_table_size(inf.p)
                                   != hpack_encoder_table_size(enc))
            {
                err = "tables out of sync";
            }
            if (!err.empty()) {
                failure = where + "ours -> nghttp2: " + err + "; wire "
                          + hpack_tools::hex::encode(ours);
                break;
            }
            err = deflate_block(def.p, h, &theirs);
            rc = story::decode_block_in_pieces(dec, theirs.data(),
                                               theirs.size(), piece, &got);
            if (err.empty() && rc != HPACK_OK) {
                err = error_text(rc);
            }
            if (err.empty()) {
                err = story::diff(h, got);
            }
            if (err.empty() && nghttp2_hd_deflate_get_dynamic_table_size(def.p)
                                   != hpack_decoder_table_size(dec))
            {
                err = "tables out of sync";
            }
            if (!err.empty()) {
                failure = where + "nghttp2 -> ours (pieces of "
                          + std::to_string(piece) + "): " + err + "; wire "
                          + hpack_tools::hex::encode(theirs);
            }
        }
        hpack_encoder_destroy(enc);
        hpack_decoder_destroy(dec);
        EXPECT_EQ(failure.substr(0, 2000), "");
    }
}

}  // namespace
