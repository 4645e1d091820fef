// The QPACK decoder (RFC 9204): Appendix B with the decoder stream it owes
// at every step, the static table against Appendix A's text, every error
// with its code, the encoder stream split anywhere, blocked streams, limits,
// memos and allocation failures.

#include <gtest/gtest.h>

#include <string.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "integer.h"
#include "qpack.h"
#include "qpack_static_table.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

// One connection's decoder, driven with hex as the RFC writes it.
struct Qpack {
    explicit Qpack(size_t capacity = 220, size_t blocked = 100,
                   const hpack_allocator_t* a = nullptr)
        : dec(qpack_decoder_create(a, capacity, blocked)) {}
    ~Qpack() { qpack_decoder_destroy(dec); }
    Qpack(const Qpack&) = delete;
    Qpack& operator=(const Qpack&) = delete;

    int encoder(const std::string& wire) {
        const std::vector<uint8_t> b = unhex(wire);
        return qpack_decoder_read_encoder(dec, b.data(), b.size());
    }

    // Decodes a section whole, batch fields a call; the fields are copied
    // as each batch returns.  QPACK_OK for a section decoded to its end.
    int section(uint64_t stream, const std::string& wire, std::vector<Decoded>* out = nullptr,
                size_t batch = 16) {
        const std::vector<uint8_t> b = unhex(wire);
        return section_bytes(stream, b, out, batch);
    }
    int section_bytes(uint64_t stream, const std::vector<uint8_t>& b,
                      std::vector<Decoded>* out = nullptr, size_t batch = 16) {
        int rc = qpack_decode_begin(dec, stream, b.data(), b.size());
        if (rc != QPACK_OK) return rc;
        return fields(out, batch);
    }
    int fields(std::vector<Decoded>* out, size_t batch = 16) {
        std::vector<qpack_field_t> f(batch);
        for (;;) {
            size_t n = 0;
            const int rc = qpack_decode_fields(dec, f.data(), batch, &n);
            last_fields.assign(f.begin(), f.begin() + n);
            for (size_t i = 0; i < n && out; ++i) out->push_back(decoded(f[i]));
            if (rc == QPACK_SECTION_END) return QPACK_OK;
            if (rc != QPACK_OK) return rc;
        }
    }

    // Everything the decoder owes on its decoder stream now, as hex.
    std::string drain() {
        uint8_t b[256];
        std::string s;
        for (;;) {
            const size_t n = qpack_decoder_drain(dec, b, sizeof b);
            if (n == 0) return s;
            s += hex(b, n);
        }
    }

    std::vector<uint64_t> unblocked() {
        uint64_t ids[64];
        const size_t n = qpack_decoder_unblocked(dec, ids, 64);
        return std::vector<uint64_t>(ids, ids + n);
    }

    qpack_decoder_t* dec;
    std::vector<qpack_field_t> last_fields;
};

HeaderList list_of(const std::vector<Decoded>& v) { return names_values(v); }

// ------------------------------------------------------------ Appendix A

// RFC 9204 Appendix A as the RFC's source writes it, one row an entry.
const char* const kAppendixA = R"(
| 0     | :authority                       |                                                             |
| 1     | :path                            | /                                                           |
| 2     | age                              | 0                                                           |
| 3     | content-disposition              |                                                             |
| 4     | content-length                   | 0                                                           |
| 5     | cookie                           |                                                             |
| 6     | date                             |                                                             |
| 7     | etag                             |                                                             |
| 8     | if-modified-since                |                                                             |
| 9     | if-none-match                    |                                                             |
| 10    | last-modified                    |                                                             |
| 11    | link                             |                                                             |
| 12    | location                         |                                                             |
| 13    | referer                          |                                                             |
| 14    | set-cookie                       |                                                             |
| 15    | :method                          | CONNECT                                                     |
| 16    | :method                          | DELETE                                                      |
| 17    | :method                          | GET                                                         |
| 18    | :method                          | HEAD                                                        |
| 19    | :method                          | OPTIONS                                                     |
| 20    | :method                          | POST                                                        |
| 21    | :method                          | PUT                                                         |
| 22    | :scheme                          | http                                                        |
| 23    | :scheme                          | https                                                       |
| 24    | :status                          | 103                                                         |
| 25    | :status                          | 200                                                         |
| 26    | :status                          | 304                                                         |
| 27    | :status                          | 404                                                         |
| 28    | :status                          | 503                                                         |
| 29    | accept                           | */*                                                         |
| 30    | accept                           | application/dns-message                                     |
| 31    | accept-encoding                  | gzip, deflate, br                                           |
| 32    | accept-ranges                    | bytes                                                       |
| 33    | access-control-allow-headers     | cache-control                                               |
| 34    | access-control-allow-headers     | content-type                                                |
| 35    | access-control-allow-origin      | *                                                           |
| 36    | cache-control                    | max-age=0                                                   |
| 37    | cache-control                    | max-age=2592000                                             |
| 38    | cache-control                    | max-age=604800                                              |
| 39    | cache-control                    | no-cache                                                    |
| 40    | cache-control                    | no-store                                                    |
| 41    | cache-control                    | public, max-age=31536000                                    |
| 42    | content-encoding                 | br                                                          |
| 43    | content-encoding                 | gzip                                                        |
| 44    | content-type                     | application/dns-message                                     |
| 45    | content-type                     | application/javascript                                      |
| 46    | content-type                     | application/json                                            |
| 47    | content-type                     | application/x-www-form-urlencoded                           |
| 48    | content-type                     | image/gif                                                   |
| 49    | content-type                     | image/jpeg                                                  |
| 50    | content-type                     | image/png                                                   |
| 51    | content-type                     | text/css                                                    |
| 52    | content-type                     | text/html; charset=utf-8                                    |
| 53    | content-type                     | text/plain                                                  |
| 54    | content-type                     | text/plain;charset=utf-8                                    |
| 55    | range                            | bytes=0-                                                    |
| 56    | strict-transport-security        | max-age=31536000                                            |
| 57    | strict-transport-security        | max-age=31536000; includesubdomains                         |
| 58    | strict-transport-security        | max-age=31536000; includesubdomains; preload                |
| 59    | vary                             | accept-encoding                                             |
| 60    | vary                             | origin                                                      |
| 61    | x-content-type-options           | nosniff                                                     |
| 62    | x-xss-protection                 | 1; mode=block                                               |
| 63    | :status                          | 100                                                         |
| 64    | :status                          | 204                                                         |
| 65    | :status                          | 206                                                         |
| 66    | :status                          | 302                                                         |
| 67    | :status                          | 400                                                         |
| 68    | :status                          | 403                                                         |
| 69    | :status                          | 421                                                         |
| 70    | :status                          | 425                                                         |
| 71    | :status                          | 500                                                         |
| 72    | accept-language                  |                                                             |
| 73    | access-control-allow-credentials | FALSE                                                       |
| 74    | access-control-allow-credentials | TRUE                                                        |
| 75    | access-control-allow-headers     | *                                                           |
| 76    | access-control-allow-methods     | get                                                         |
| 77    | access-control-allow-methods     | get, post, options                                          |
| 78    | access-control-allow-methods     | options                                                     |
| 79    | access-control-expose-headers    | content-length                                              |
| 80    | access-control-request-headers   | content-type                                                |
| 81    | access-control-request-method    | get                                                         |
| 82    | access-control-request-method    | post                                                        |
| 83    | alt-svc                          | clear                                                       |
| 84    | authorization                    |                                                             |
| 85    | content-security-policy          | script-src 'none'; object-src 'none'; base-uri 'none'       |
| 86    | early-data                       | 1                                                           |
| 87    | expect-ct                        |                                                             |
| 88    | forwarded                        |                                                             |
| 89    | if-range                         |                                                             |
| 90    | origin                           |                                                             |
| 91    | purpose                          | prefetch                                                    |
| 92    | server                           |                                                             |
| 93    | timing-allow-origin              | *                                                           |
| 94    | upgrade-insecure-requests        | 1                                                           |
| 95    | user-agent                       |                                                             |
| 96    | x-forwarded-for                  |                                                             |
| 97    | x-frame-options                  | deny                                                        |
| 98    | x-frame-options                  | sameorigin                                                  |
)";

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(' ');
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(' ') - a + 1);
}

TEST(QpackStaticTable, EveryEntryIsTheRfcs) {
    std::istringstream in(kAppendixA);
    std::string line;
    uint32_t rows = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        // "| index | name | value |"
        std::vector<std::string> cells;
        size_t at = 1;
        for (size_t bar; (bar = line.find('|', at)) != std::string::npos; at = bar + 1)
            cells.push_back(trim(line.substr(at, bar - at)));
        ASSERT_EQ(cells.size(), 3u) << line;
        const uint32_t index = static_cast<uint32_t>(std::stoul(cells[0]));
        ASSERT_EQ(index, rows) << line;
        ASSERT_LT(index, hpack::kQpackStaticEntries);
        const hpack::StaticEntry& e = hpack::kQpackStaticTable[index];
        EXPECT_EQ(std::string(e.name, e.name_len), cells[1]) << index;
        EXPECT_EQ(std::string(e.value, e.value_len), cells[2]) << index;
        ++rows;
    }
    EXPECT_EQ(rows, hpack::kQpackStaticEntries);
    EXPECT_EQ(hpack::kQpackStaticEntries, uint32_t{QPACK_STATIC_ENTRIES});
}

// ------------------------------------------------------------ Appendix B

// The encoder stream of each example (B.2 to B.5; B.1 has none).
const char* const kB2Encoder =
    "3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468";
const char* const kB3Encoder = "4a637573746f6d2d6b65790c637573746f6d2d76616c7565";
const char* const kB4Encoder = "02";
const char* const kB5Encoder = "810d637573746f6d2d76616c756532";

// B.1 to B.5 in order, with the table the appendix shows after each step
// and the decoder stream the appendix's decoder sends, drained where the
// appendix sends it: nothing after B.1, a Section Acknowledgment after B.2
// (which also covers its two inserts), an Insert Count Increment after
// B.3, a Stream Cancellation for the section B.4 blocks; then the
// increments for B.4's duplicate and B.5's insert, which the appendix
// leaves out.
TEST(QpackAppendixB, EveryExampleWithTheDecoderStreamItOwes) {
    Qpack q(220, 1);
    std::vector<Decoded> out;

    // B.1: a literal with a static name reference, Required Insert Count 0.
    ASSERT_EQ(q.section(0, "0000510b2f696e6465782e68746d6c", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{":path", "/index.html"}}));
    EXPECT_EQ(out[0].rep, HPACK_REP_WITHOUT_INDEXING);
    EXPECT_EQ(q.last_fields[0].static_index, 2u);   // 1 + static index 1
    EXPECT_EQ(q.drain(), "");

    // B.2: capacity 220, two inserts, a section of two post-base indexed
    // fields on stream 4.
    ASSERT_EQ(q.encoder(kB2Encoder), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_capacity(q.dec), 220u);
    EXPECT_EQ(qpack_decoder_table_size(q.dec), 106u);
    out.clear();
    ASSERT_EQ(q.section(4, "03811011", &out), QPACK_OK);
    EXPECT_EQ(list_of(out),
              (HeaderList{{":authority", "www.example.com"}, {":path", "/sample/path"}}));
    EXPECT_EQ(out[0].rep, HPACK_REP_INDEXED);
    EXPECT_EQ(out[0].index, 0u);
    EXPECT_EQ(out[1].index, 1u);
    EXPECT_EQ(q.drain(), "84");

    // B.3: a speculative insert with a literal name.
    ASSERT_EQ(q.encoder(kB3Encoder), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_size(q.dec), 160u);
    EXPECT_EQ(q.drain(), "01");

    // B.4: the section on stream 8 arrives before the duplicate: blocked,
    // then cancelled.
    EXPECT_EQ(q.section(8, "050080c181"), QPACK_BLOCKED);
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 1u);
    EXPECT_EQ(q.drain(), "");
    ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 8), QPACK_OK);
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 0u);
    EXPECT_EQ(q.drain(), "48");
    ASSERT_EQ(q.encoder(kB4Encoder), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_size(q.dec), 217u);
    EXPECT_TRUE(q.unblocked().empty());   // cancelled: not named
    EXPECT_EQ(q.drain(), "01");

    // B.5: an insert with a dynamic name reference evicts entry 0.
    ASSERT_EQ(q.encoder(kB5Encoder), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_size(q.dec), 215u);
    EXPECT_EQ(qpack_decoder_table_entries(q.dec), 4u);
    EXPECT_EQ(qpack_decoder_insert_count(q.dec), 5u);
    EXPECT_EQ(q.drain(), "01");

    // The table is entries 1 to 4: Required Insert Count 5 (encoded
    // 5 mod 12 + 1), Base 5, relative indexes 0 to 3.
    out.clear();
    ASSERT_EQ(q.section(12, "060080818283", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{"custom-key", "custom-value2"},
                                        {":authority", "www.example.com"},
                                        {"custom-key", "custom-value"},
                                        {":path", "/sample/path"}}));
    EXPECT_EQ(q.drain(), "8c");
    // Entry 0 is gone.
    EXPECT_EQ(q.section(16, "060084"), QPACK_E_DYNAMIC_INDEX);
}

// B.4's section resumed instead of cancelled: named by
// qpack_decoder_unblocked() once the duplicate arrives, it decodes, and its
// acknowledgment covers the duplicate (no increment).
TEST(QpackAppendixB, TheBlockedSectionOfB4ResumesWhenTheDuplicateArrives) {
    Qpack q(220, 1);
    ASSERT_EQ(q.encoder(std::string(kB2Encoder) + kB3Encoder), QPACK_OK);
    EXPECT_EQ(q.drain(), "03");
    const std::string section = "050080c181";
    EXPECT_EQ(q.section(8, section), QPACK_BLOCKED);
    EXPECT_EQ(q.section(8, section), QPACK_BLOCKED);   // still, counted once
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 1u);
    EXPECT_TRUE(q.unblocked().empty());
    ASSERT_EQ(q.encoder(kB4Encoder), QPACK_OK);
    EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{8});
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 0u);
    std::vector<Decoded> out;
    ASSERT_EQ(q.section(8, section, &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{":authority", "www.example.com"},
                                        {":path", "/"},
                                        {"custom-key", "custom-value"}}));
    EXPECT_EQ(out[0].index, 3u);
    EXPECT_EQ(out[1].rep, HPACK_REP_INDEXED);
    EXPECT_EQ(out[2].index, 2u);
    EXPECT_EQ(q.drain(), "88");
}

// Drained after B.2's encoder stream and again after its section: the
// increment for the two inserts, then the acknowledgment.
TEST(QpackAppendixB, AnIncrementDrainedBeforeTheSectionIsNotRepeated) {
    Qpack q(220, 1);
    ASSERT_EQ(q.encoder(kB2Encoder), QPACK_OK);
    EXPECT_EQ(q.drain(), "02");
    EXPECT_EQ(q.drain(), "");
    ASSERT_EQ(q.section(4, "03811011"), QPACK_OK);
    EXPECT_EQ(q.drain(), "84");
}

// Every split of the appendix's whole encoder stream, in two and in three
// pieces, and one octet at a time, gives the same table.
TEST(QpackEncoderStream, EverySplitGivesTheSameTable) {
    const std::vector<uint8_t> all =
        unhex(std::string(kB2Encoder) + kB3Encoder + kB4Encoder + kB5Encoder);
    const HeaderList expected = {{"custom-key", "custom-value2"},
                                 {":authority", "www.example.com"},
                                 {"custom-key", "custom-value"},
                                 {":path", "/sample/path"}};
    auto check = [&](const std::vector<size_t>& cuts) {
        Qpack q(220, 0);
        size_t from = 0;
        for (size_t i = 0; i <= cuts.size(); ++i) {
            const size_t to = i < cuts.size() ? cuts[i] : all.size();
            ASSERT_EQ(qpack_decoder_read_encoder(q.dec, all.data() + from, to - from), QPACK_OK);
            from = to;
        }
        ASSERT_EQ(qpack_decoder_insert_count(q.dec), 5u);
        ASSERT_EQ(qpack_decoder_table_size(q.dec), 215u);
        std::vector<Decoded> out;
        ASSERT_EQ(q.section(0, "060080818283", &out), QPACK_OK);
        ASSERT_EQ(list_of(out), expected);
    };
    for (size_t i = 0; i <= all.size(); ++i) {
        SCOPED_TRACE(i);
        check({i});
        for (size_t j = i; j <= all.size(); ++j) check({i, j});
    }
    std::vector<size_t> every;
    for (size_t i = 1; i < all.size(); ++i) every.push_back(i);
    check(every);
}

// An instruction split across reads: nothing applies until it is whole.
TEST(QpackEncoderStream, APartialInstructionWaits) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd"), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_capacity(q.dec), 0u);
    ASSERT_EQ(q.encoder("01c00f7777772e6578616d706c65"), QPACK_OK);
    EXPECT_EQ(qpack_decoder_table_capacity(q.dec), 220u);
    EXPECT_EQ(qpack_decoder_insert_count(q.dec), 0u);
    ASSERT_EQ(q.encoder("2e636f6d"), QPACK_OK);
    EXPECT_EQ(qpack_decoder_insert_count(q.dec), 1u);
    ASSERT_EQ(q.encoder(""), QPACK_OK);
    EXPECT_EQ(qpack_decoder_insert_count(q.dec), 1u);
}

// Huffman strings on the encoder stream: a literal name and a value
// (RFC 7541 C.4.1's "www.example.com", "custom-key" and "custom-value").
TEST(QpackEncoderStream, HuffmanNamesAndValuesAreDecoded) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "c08cf1e3c2e5f23a6ba0ab90f4ff"
                        "6825a849e95ba97d7f" "8925a849e95bb8e8b4bf"),
              QPACK_OK);
    std::vector<Decoded> out;
    ASSERT_EQ(q.section(0, "03008081", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{"custom-key", "custom-value"},
                                        {":authority", "www.example.com"}}));
}

// --------------------------------------------------------------- errors

struct ErrorCase {
    const char* what;
    size_t capacity;        // our SETTINGS_QPACK_MAX_TABLE_CAPACITY
    const char* encoder;    // the encoder stream, read first
    const char* section;    // then this section on stream 0 (nullptr: none)
    int error;
};

class QpackRejects : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(QpackRejects, WithTheExactErrorCodeAndHttp3Code) {
    const ErrorCase& c = GetParam();
    Qpack q(c.capacity, 0);
    int rc = q.encoder(c.encoder);
    if (c.section && rc == QPACK_OK) rc = q.section(0, c.section);
    EXPECT_EQ(rc, c.error) << c.what;
    EXPECT_EQ(qpack_h3_error(rc), c.error <= QPACK_E_ENC_INTEGER
                                      ? unsigned{QPACK_H3_ENCODER_STREAM_ERROR}
                                      : unsigned{QPACK_H3_DECOMPRESSION_FAILED});
    EXPECT_STRNE(qpack_strerror(rc), "unknown error");
    // A connection error: the decoder is done.
    EXPECT_EQ(q.encoder("20"), HPACK_E_STATE);
    EXPECT_EQ(q.section(0, "0000"), HPACK_E_STATE);
}

// A capacity of 220 (MaxEntries 6, FullRange 12) unless given; "3fbd01"
// sets it.  Entries: "4161 0162" inserts a: b (34 octets).
INSTANTIATE_TEST_SUITE_P(
    EncoderStream, QpackRejects,
    ::testing::Values(
        ErrorCase{"capacity above the maximum", 220, "3fbe01", nullptr, QPACK_E_ENC_CAPACITY},
        ErrorCase{"capacity above a maximum of 0", 0, "21", nullptr, QPACK_E_ENC_CAPACITY},
        ErrorCase{"static name index 99, before the value", 220, "3fbd01ff24", nullptr,
                  QPACK_E_ENC_STATIC_INDEX},
        ErrorCase{"dynamic name of an empty table", 220, "3fbd018000", nullptr,
                  QPACK_E_ENC_DYNAMIC_INDEX},
        ErrorCase{"dynamic name past the newest", 220, "3fbd01416101628100", nullptr,
                  QPACK_E_ENC_DYNAMIC_INDEX},
        ErrorCase{"duplicate of an empty table", 220, "3fbd0100", nullptr,
                  QPACK_E_ENC_DYNAMIC_INDEX},
        ErrorCase{"duplicate of an evicted entry", 220, "3f2141610162416301640001", nullptr,
                  QPACK_E_ENC_DYNAMIC_INDEX},
        ErrorCase{"dynamic name of an evicted entry", 220, "3f21416101624163016481017a",
                  nullptr, QPACK_E_ENC_DYNAMIC_INDEX},
        ErrorCase{"entry larger than the capacity", 220, "3f0241610162", nullptr,
                  QPACK_E_ENC_ENTRY_SIZE},
        ErrorCase{"insert before any capacity", 220, "41610162", nullptr,
                  QPACK_E_ENC_ENTRY_SIZE},
        ErrorCase{"entry too large, known from the name's length", 220, "3f095f45", nullptr,
                  QPACK_E_ENC_ENTRY_SIZE},
        ErrorCase{"entry too large, known from the value's length", 220, "3f09c07f45",
                  nullptr, QPACK_E_ENC_ENTRY_SIZE},
        // 2^61 octets: a bound computed as len * 8 / 30 would wrap to 0.
        ErrorCase{"Huffman name of 2^61 octets", 220, "3fbd01" "7fe1ffffffffffffff1f",
                  nullptr, QPACK_E_ENC_ENTRY_SIZE},
        ErrorCase{"Huffman value of 2^61 octets", 220, "3fbd01" "c0" "ff81ffffffffffffff1f",
                  nullptr, QPACK_E_ENC_ENTRY_SIZE},
        ErrorCase{"EOS in a value", 220, "3fbd01c084ffffffff", nullptr,
                  QPACK_E_ENC_HUFFMAN_EOS},
        ErrorCase{"padding longer than 7 bits", 220, "3fbd01c0821fff", nullptr,
                  QPACK_E_ENC_HUFFMAN_PADDING},
        ErrorCase{"padding not all ones", 220, "3fbd01c08118", nullptr,
                  QPACK_E_ENC_HUFFMAN_PADDING},
        ErrorCase{"Huffman name with bad padding", 220, "3fbd01" "6118" "0161", nullptr,
                  QPACK_E_ENC_HUFFMAN_PADDING},
        ErrorCase{"integer above 62 bits", 220, "3fffffffffffffffffff7f", nullptr,
                  QPACK_E_ENC_INTEGER},
        ErrorCase{"integer of eleven octets", 220, "3f" "808080808080808080" "00", nullptr,
                  QPACK_E_ENC_INTEGER}),
    [](const ::testing::TestParamInfo<ErrorCase>& i) {
        std::string n;
        for (const char* p = i.param.what; *p; ++p)
            if (isalnum(static_cast<unsigned char>(*p))) n += *p;
        return n;
    });

INSTANTIATE_TEST_SUITE_P(
    FieldSection, QpackRejects,
    ::testing::Values(
        ErrorCase{"empty section", 220, "", "", QPACK_E_TRUNCATED},
        ErrorCase{"section ends in its prefix", 220, "", "00", QPACK_E_TRUNCATED},
        ErrorCase{"section ends before a value", 220, "", "000051", QPACK_E_TRUNCATED},
        ErrorCase{"value longer than the section", 220, "", "000051056162", QPACK_E_TRUNCATED},
        ErrorCase{"section ends inside a literal name", 220, "", "0000230102", QPACK_E_TRUNCATED},
        ErrorCase{"section ends inside an index", 220, "", "0000ff", QPACK_E_TRUNCATED},
        ErrorCase{"static index 99", 220, "", "0000ff24", QPACK_E_STATIC_INDEX},
        ErrorCase{"static name index 99", 220, "", "00005f5400", QPACK_E_STATIC_INDEX},
        ErrorCase{"dynamic reference with Required Insert Count 0", 220, "", "000080",
                  QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"post-base reference with Required Insert Count 0", 220, "", "000010",
                  QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"dynamic name with Required Insert Count 0", 220, "", "00004000",
                  QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"post-base name with Required Insert Count 0", 220, "", "00000000",
                  QPACK_E_DYNAMIC_INDEX},
        // Two entries inserted; Required Insert Count 1 (encoded 2), Base 1.
        ErrorCase{"post-base reference at the Required Insert Count", 220,
                  "3fbd014161016241630164", "020010", QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"relative reference at the Required Insert Count", 220,
                  "3fbd014161016241630164", "020180", QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"relative reference below the Base's first", 220,
                  "3fbd014161016241630164", "020081", QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"post-base name at the Required Insert Count", 220,
                  "3fbd014161016241630164", "02000000", QPACK_E_DYNAMIC_INDEX},
        // Capacity 64 holds one: entry 0 evicted by entry 1 (RIC 2 is
        // encoded 2 mod 4 + 1 = 3, Base 2).
        ErrorCase{"reference to an evicted entry", 64, "3f214161016241630164", "030081",
                  QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"name of an evicted entry", 64, "3f214161016241630164", "03004100",
                  QPACK_E_DYNAMIC_INDEX},
        ErrorCase{"encoded insert count above FullRange", 220, "", "0d00", QPACK_E_INSERT_COUNT},
        ErrorCase{"encoded insert count with a maximum capacity of 0", 0, "", "0100",
                  QPACK_E_INSERT_COUNT},
        ErrorCase{"encoded insert count of a Required Insert Count of 0", 220, "", "0100",
                  QPACK_E_INSERT_COUNT},
        ErrorCase{"encoded insert count past MaxValue, not wrapped", 220, "", "0800",
                  QPACK_E_INSERT_COUNT},
        ErrorCase{"negative Base", 220, "3fbd014161016241630164", "0281",
                  QPACK_E_BASE},
        ErrorCase{"sign bit with Required Insert Count 0", 220, "", "0080", QPACK_E_BASE},
        ErrorCase{"Huffman value of 2^61 octets", 220, "", "000051" "ff81ffffffffffffff1f",
                  QPACK_E_TRUNCATED},
        ErrorCase{"EOS in a value", 220, "", "00005184ffffffff", QPACK_E_HUFFMAN_EOS},
        ErrorCase{"padding longer than 7 bits", 220, "", "000051821fff",
                  QPACK_E_HUFFMAN_PADDING},
        ErrorCase{"padding not all ones in a literal name", 220, "", "0000291800",
                  QPACK_E_HUFFMAN_PADDING},
        ErrorCase{"index above 62 bits", 220, "", "0000ffffffffffffffffffff7f", QPACK_E_INTEGER},
        ErrorCase{"Required Insert Count of eleven octets", 220, "",
                  "ff" "808080808080808080" "00" "00", QPACK_E_INTEGER},
        ErrorCase{"blocked with SETTINGS_QPACK_BLOCKED_STREAMS 0", 220, "", "0200",
                  QPACK_E_BLOCKED_STREAMS}),
    [](const ::testing::TestParamInfo<ErrorCase>& i) {
        std::string n;
        for (const char* p = i.param.what; *p; ++p)
            if (isalnum(static_cast<unsigned char>(*p))) n += *p;
        return n;
    });

TEST(QpackErrors, MapToHttp3Codes) {
    struct Row {
        int rc;
        unsigned code;
    };
    const Row rows[] = {
        {QPACK_OK, QPACK_H3_NO_ERROR},
        {QPACK_SECTION_END, QPACK_H3_NO_ERROR},
        {QPACK_BLOCKED, QPACK_H3_NO_ERROR},
        {QPACK_E_INTEGER, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_TRUNCATED, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_STATIC_INDEX, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_DYNAMIC_INDEX, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_HUFFMAN_EOS, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_HUFFMAN_PADDING, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_INSERT_COUNT, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_BASE, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_BLOCKED_STREAMS, QPACK_H3_DECOMPRESSION_FAILED},
        {QPACK_E_ENC_INTEGER, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_CAPACITY, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_STATIC_INDEX, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_DYNAMIC_INDEX, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_ENTRY_SIZE, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_HUFFMAN_EOS, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_ENC_HUFFMAN_PADDING, QPACK_H3_ENCODER_STREAM_ERROR},
        {QPACK_E_FIELD_TOO_LARGE, QPACK_H3_EXCESSIVE_LOAD},
        {QPACK_E_SECTION_TOO_LARGE, QPACK_H3_EXCESSIVE_LOAD},
        {QPACK_E_STRING_TOO_LARGE, QPACK_H3_EXCESSIVE_LOAD},
        {HPACK_E_NOMEM, QPACK_H3_INTERNAL_ERROR},
        {HPACK_E_ARGUMENT, QPACK_H3_INTERNAL_ERROR},
        {HPACK_E_STATE, QPACK_H3_INTERNAL_ERROR},
    };
    for (const Row& r : rows) {
        EXPECT_EQ(qpack_h3_error(r.rc), r.code) << r.rc;
        EXPECT_STRNE(qpack_strerror(r.rc), "unknown error") << r.rc;
    }
    EXPECT_EQ(QPACK_H3_DECOMPRESSION_FAILED, 0x200);
    EXPECT_EQ(QPACK_H3_ENCODER_STREAM_ERROR, 0x201);
    EXPECT_EQ(QPACK_H3_DECODER_STREAM_ERROR, 0x202);
    EXPECT_EQ(qpack_h3_error(-141), unsigned{QPACK_H3_DECODER_STREAM_ERROR});
    EXPECT_STREQ(qpack_strerror(-999), "unknown error");
}

TEST(QpackErrors, CallsOutOfOrder) {
    Qpack q;
    qpack_field_t f[1];
    size_t n = 7;
    EXPECT_EQ(qpack_decode_fields(q.dec, f, 1, &n), HPACK_E_STATE);
    EXPECT_EQ(n, 0u);
    const std::vector<uint8_t> s = unhex("0000c1");
    ASSERT_EQ(qpack_decode_begin(q.dec, 0, s.data(), s.size()), QPACK_OK);
    EXPECT_EQ(qpack_decode_fields(q.dec, f, 0, &n), HPACK_E_ARGUMENT);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 1, &n), QPACK_OK);
    ASSERT_EQ(n, 1u);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 1, &n), QPACK_SECTION_END);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(qpack_decode_fields(q.dec, f, 1, &n), HPACK_E_STATE);
    EXPECT_EQ(qpack_decoder_create(nullptr, HPACK_MAX_TABLE_SIZE + 1, 0), nullptr);
}

// ------------------------------------------------------ field sections

// Every representation of RFC 9204 4.5, the 'N' bit reported, and a Base
// on either side of the Required Insert Count.
TEST(QpackSection, EveryRepresentationAndTheNBit) {
    Qpack q;
    // Entries 0 (x-a: 1) and 1 (x-b: 2).
    ASSERT_EQ(q.encoder("3fbd01" "4378" "2d61" "0131" "4378" "2d62" "0132"), QPACK_OK);
    std::vector<Decoded> out;
    // Required Insert Count 2 (encoded 3), Base 1 (S=1, delta 0):
    //   80      relative 0          -> entry 0
    //   10      post-base 0         -> entry 1
    //   d1      static 17           -> :method GET
    //   5f00 01 7a  literal, static name 15 (N=0): :method z
    //   7f00 01 79  the same with N=1
    //   40 01 71    literal, dynamic name relative 0 (entry 0)
    //   60 01 71    the same with N=1
    //   00 01 70    literal, post-base name 0 (entry 1)
    //   08 01 70    the same with N=1
    //   23 6e 61 6d 01 76    literal name "nam" (N=0)
    //   33 6e 61 6d 01 76    the same with N=1
    ASSERT_EQ(q.section(4,
                        "0380" "80" "10" "d1" "5f00017a" "7f000179" "400171" "600171"
                        "000170" "080170" "236e616d0176" "336e616d0176",
                        &out),
              QPACK_OK);
    const HeaderList expected = {{"x-a", "1"},      {"x-b", "2"},     {":method", "GET"},
                                 {":method", "z"},  {":method", "y"}, {"x-a", "q"},
                                 {"x-a", "q"},      {"x-b", "p"},     {"x-b", "p"},
                                 {"nam", "v"},      {"nam", "v"}};
    ASSERT_EQ(list_of(out), expected);
    const hpack_representation_t I = HPACK_REP_INDEXED, L = HPACK_REP_WITHOUT_INDEXING,
                                 N = HPACK_REP_NEVER_INDEXED;
    const hpack_representation_t reps[] = {I, I, I, L, N, L, N, L, N, L, N};
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].rep, reps[i]) << i;
    const uint32_t index[] = {0, 1, 17, 15, 15, 0, 0, 1, 1, 0, 0};
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].index, index[i]) << i;
    EXPECT_EQ(q.drain(), "84");
}

// The fields of one call, their static indexes and memos as qpack.h
// describes them.
TEST(QpackSection, StaticIndexesAndMemosOfEachKind) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4378" "2d61" "0131"), QPACK_OK);
    const std::vector<uint8_t> s = unhex("0200" "80" "c0" "5101" "61" "4001" "62" "2161" "0163");
    ASSERT_EQ(qpack_decode_begin(q.dec, 0, s.data(), s.size()), QPACK_OK);
    qpack_field_t f[8];
    size_t n = 0;
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 8, &n), QPACK_SECTION_END);
    ASSERT_EQ(n, 5u);
    // dynamic indexed
    EXPECT_EQ(f[0].static_index, 0u);
    EXPECT_NE(f[0].memo, nullptr);
    EXPECT_EQ(f[0].name_memo, f[0].memo);
    // static indexed: :authority, static index 0
    EXPECT_EQ(f[1].static_index, 1u);
    EXPECT_EQ(f[1].index, 0u);
    EXPECT_EQ(f[1].memo, nullptr);
    EXPECT_EQ(f[1].name_memo, nullptr);
    // literal with a static name (:path)
    EXPECT_EQ(f[2].static_index, 2u);
    EXPECT_EQ(f[2].memo, nullptr);
    // literal with a dynamic name: the entry's memo as the name's
    EXPECT_EQ(f[3].static_index, 0u);
    EXPECT_EQ(f[3].memo, nullptr);
    EXPECT_EQ(f[3].name_memo, f[0].memo);
    // literal name
    EXPECT_EQ(f[4].static_index, 0u);
    EXPECT_EQ(f[4].memo, nullptr);
    EXPECT_EQ(f[4].name_memo, nullptr);
}

// What a host writes into an entry's memo is there at the entry's next
// reference, from any section; a new entry's memo, a duplicate's
// included, starts zeroed.
TEST(QpackSection, AnEntrysMemoIsKeptAcrossSections) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4378" "2d61" "0131"), QPACK_OK);
    const std::vector<uint8_t> s = unhex("020080");
    qpack_field_t f[1];
    size_t n = 0;
    ASSERT_EQ(qpack_decode_begin(q.dec, 0, s.data(), s.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 1, &n), QPACK_OK);
    const hpack_memo_t zero{};
    EXPECT_EQ(memcmp(f[0].memo, &zero, sizeof zero), 0);
    f[0].memo->words[0] = 0x1234;
    ASSERT_EQ(q.encoder("00"), QPACK_OK);   // duplicate: entry 1
    const std::vector<uint8_t> t = unhex("0300" "81" "80");
    ASSERT_EQ(qpack_decode_begin(q.dec, 4, t.data(), t.size()), QPACK_OK);
    qpack_field_t g[2];
    ASSERT_EQ(qpack_decode_fields(q.dec, g, 2, &n), QPACK_OK);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(g[0].memo->words[0], 0x1234u);
    EXPECT_EQ(memcmp(g[1].memo, &zero, sizeof zero), 0);
    EXPECT_EQ(header_of(g[1]), header_of(g[0]));
}

// A section returns the same fields whatever the batch: all of a batch's
// fields are valid together, Huffman strings included.
TEST(QpackSection, EveryBatchSizeGivesTheSameFields) {
    std::vector<uint8_t> s = unhex("0000");
    HeaderList expected;
    for (int i = 0; i < 40; ++i) {
        // A literal name and a Huffman value of 0 to 700 octets: several
        // to a batch, and some that need the scratch to grow.
        const std::string value = std::string(i * 37 % 700, 'a') + std::to_string(i % 10);
        std::vector<uint8_t> code(value.size() + 8);
        code.resize(hpack_huffman_encode(reinterpret_cast<const uint8_t*>(value.data()),
                                         value.size(), code.data()));
        const std::string name = "x-" + std::to_string(i);
        s.push_back(static_cast<uint8_t>(0x20 | name.size()));
        s.insert(s.end(), name.begin(), name.end());
        uint8_t len[hpack::kInteger62MaxBytes];
        s.insert(s.end(), len, len + hpack::encode_integer62(len, 0x80, 7, code.size()));
        s.insert(s.end(), code.begin(), code.end());
        expected.emplace_back(name, value);
    }
    for (size_t batch = 1; batch <= 16; ++batch) {
        Qpack q;
        const int rc = qpack_decode_begin(q.dec, 0, s.data(), s.size());
        ASSERT_EQ(rc, QPACK_OK);
        HeaderList got;
        std::vector<qpack_field_t> f(batch);
        for (;;) {
            size_t n = 0;
            const int r = qpack_decode_fields(q.dec, f.data(), batch, &n);
            for (size_t i = 0; i < n; ++i) got.push_back(header_of(f[i]));
            if (r == QPACK_SECTION_END) break;
            ASSERT_EQ(r, QPACK_OK);
            ASSERT_GE(n, 1u);
        }
        EXPECT_EQ(got, expected) << batch;
    }
}

// A Base anywhere is fine for a section without dynamic references (RFC
// 9204 4.5.1.2), up to 62 bits; one above is an integer error.
TEST(QpackSection, AnyBaseWithoutDynamicReferences) {
    Qpack q;
    std::vector<uint8_t> s = {0x00};
    uint8_t b[hpack::kInteger62MaxBytes];
    s.insert(s.end(), b, b + hpack::encode_integer62(b, 0x00, 7, hpack::kInteger62Max));
    s.push_back(0xd1);
    std::vector<Decoded> out;
    ASSERT_EQ(q.section_bytes(0, s, &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{":method", "GET"}}));
    EXPECT_EQ(q.section(0, "007fffffffffffffffff7f"), QPACK_E_INTEGER);
}

// Integers in longer encodings than the shortest are read as their value,
// up to ten octets (RFC 9204 4.1.1 takes RFC 7541 5.1's integers, which
// allow them, and nginx's ngx_http_v3_parse_prefix_int() takes them).
TEST(QpackSection, LongerIntegerEncodingsAreTheirValue) {
    Qpack q(100, 0);
    ASSERT_EQ(q.encoder("3fc58000"), QPACK_OK);   // capacity 100 in four octets
    const std::string name(31, 'a');               // its length in three
    ASSERT_EQ(q.encoder("5f8000" + hex(reinterpret_cast<const uint8_t*>(name.data()),
                                       name.size()) + "00"),
              QPACK_OK);
    ASSERT_EQ(qpack_decoder_insert_count(q.dec), 1u);
    std::vector<Decoded> out;
    // the entry, then static 63 and 64 in three and four octets
    ASSERT_EQ(q.section(0, "0200" "80" "ff8000" "ff818000", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{name, ""}, {":status", "100"}, {":status", "204"}}));
    EXPECT_EQ(q.section(4, "0000" "ff" "808080808080808080" "00"), QPACK_E_INTEGER);
}

// RFC 9204 4.5.1.1's example: a 100-octet table encodes the Required
// Insert Count modulo 6; after 10 inserts an encoded 4 is 9.  And 4.5.1.2's:
// Required Insert Count 9, S=1, Delta Base 2: Base 6, and post-base 1 is
// the 8th entry inserted.
TEST(QpackSection, RequiredInsertCountWrapsModuloFullRange) {
    Qpack q(100, 0);
    std::string enc = "3f45";   // capacity 100: three entries of 33 octets
    for (char c = '0'; c <= '9'; ++c)
        enc += "41" + hex(reinterpret_cast<const uint8_t*>(&c), 1) + "00";   // name c, value ""
    ASSERT_EQ(q.encoder(enc), QPACK_OK);
    ASSERT_EQ(qpack_decoder_insert_count(q.dec), 10u);
    ASSERT_EQ(qpack_decoder_table_entries(q.dec), 3u);
    std::vector<Decoded> out;
    ASSERT_EQ(q.section(0, "040080", &out), QPACK_OK);       // Base 9: entry 8
    ASSERT_EQ(q.section(4, "048211", &out), QPACK_OK);       // Base 6: entry 7
    ASSERT_EQ(q.section(8, "050080", &out), QPACK_OK);       // encoded 5 is 10
    EXPECT_EQ(list_of(out), (HeaderList{{"8", ""}, {"7", ""}, {"9", ""}}));
    EXPECT_EQ(q.drain(), "80" "84" "88");
}

// A Required Insert Count above the largest reference + 1 is accepted (RFC
// 9204 2.2.1 permits, not requires, an error: docs/DESIGN.md, "QPACK
// decoder"), and acknowledged.
TEST(QpackSection, ARequiredInsertCountLargerThanNeededIsAccepted) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4161" "0162" "4163" "0164"), QPACK_OK);
    std::vector<Decoded> out;
    ASSERT_EQ(q.section(4, "030182", &out), QPACK_OK);   // RIC 2, Base 3: entry 0
    EXPECT_EQ(list_of(out), (HeaderList{{"a", "b"}}));
    ASSERT_EQ(q.section(8, "0300d1", &out), QPACK_OK);   // no reference at all
    EXPECT_EQ(q.drain(), "8488");
}

// A Section Acknowledgment and a Stream Cancellation carry any stream id up
// to 62 bits.
TEST(QpackDecoderStream, StreamIdsOfAnySize) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4161" "0162"), QPACK_OK);
    const uint64_t id = hpack::kInteger62Max;
    ASSERT_EQ(q.section(id, "020080"), QPACK_OK);
    ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 200), QPACK_OK);
    EXPECT_EQ(q.drain(), "ff" "80ffffffffffffff3f" "7f89" "01");
}

// No QUIC stream has an id of 2^62 or more: the calls that name one refuse
// it and change nothing (the decoder goes on).
TEST(QpackDecoderStream, StreamIdsPast62BitsAreRefused) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4161" "0162"), QPACK_OK);
    EXPECT_EQ(q.drain(), "01");
    const std::vector<uint8_t> s = unhex("020080");
    EXPECT_EQ(qpack_decode_begin(q.dec, hpack::kInteger62Max + 1, s.data(), s.size()),
              HPACK_E_ARGUMENT);
    EXPECT_EQ(qpack_decoder_cancel_stream(q.dec, UINT64_MAX), HPACK_E_ARGUMENT);
    EXPECT_EQ(q.drain(), "");
    ASSERT_EQ(q.section(4, "020080"), QPACK_OK);
    EXPECT_EQ(q.drain(), "84");
}

// A section left unfinished when another stream's begins is abandoned with
// its references: a Stream Cancellation for its stream, before the other
// section's acknowledgment (RFC 9204 2.2.2.2).  One begun again on its own
// stream is acknowledged once, when it ends.
TEST(QpackDecoderStream, ASectionLeftForAnotherIsCancelled) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4161" "0162" "4163" "0164"), QPACK_OK);
    EXPECT_EQ(q.drain(), "02");
    const std::vector<uint8_t> two = unhex("03008180");   // both entries
    qpack_field_t f[2];
    size_t n = 0;
    ASSERT_EQ(qpack_decode_begin(q.dec, 8, two.data(), two.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 1, &n), QPACK_OK);
    ASSERT_EQ(qpack_decode_begin(q.dec, 8, two.data(), two.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 2, &n), QPACK_OK);
    ASSERT_EQ(n, 2u);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 2, &n), QPACK_SECTION_END);
    EXPECT_EQ(q.drain(), "88");
    ASSERT_EQ(qpack_decode_begin(q.dec, 12, two.data(), two.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, f, 1, &n), QPACK_OK);
    ASSERT_EQ(q.section(4, "020080"), QPACK_OK);
    EXPECT_EQ(q.drain(), "4c" "84");
}

// The drain copies what fits; the increment goes out whole, after what was
// queued before it.
TEST(QpackDecoderStream, DrainsInPiecesOfAnySize) {
    Qpack q;
    ASSERT_EQ(q.encoder("3fbd01" "4161" "0162"), QPACK_OK);
    ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 1000), QPACK_OK);   // 7f a9 07
    ASSERT_EQ(q.encoder("4163" "0164"), QPACK_OK);
    uint8_t b[4];
    EXPECT_EQ(qpack_decoder_drain(q.dec, b, 2), 2u);
    EXPECT_EQ(hex(b, 2), "7fa9");
    EXPECT_EQ(qpack_decoder_drain(q.dec, b, 1), 1u);   // the increment does not fit
    EXPECT_EQ(hex(b, 1), "07");
    EXPECT_EQ(qpack_decoder_drain(q.dec, b, 0), 0u);
    EXPECT_EQ(qpack_decoder_drain(q.dec, b, 4), 1u);
    EXPECT_EQ(hex(b, 1), "02");
    EXPECT_EQ(qpack_decoder_drain(q.dec, b, 4), 0u);
}

// With a maximum capacity of 0 there is no dynamic state to speak of: no
// cancellation, no increment (RFC 9204 2.2.2.2).
TEST(QpackDecoderStream, NothingWithoutADynamicTable) {
    Qpack q(0, 0);
    ASSERT_EQ(q.encoder("20"), QPACK_OK);   // capacity 0 is allowed
    ASSERT_EQ(q.section(4, "0000d1"), QPACK_OK);
    ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 4), QPACK_OK);
    EXPECT_EQ(q.drain(), "");
}

// ------------------------------------------------------ blocked streams

// Sections blocked at different Required Insert Counts are named in the
// order they blocked, each once, as their inserts arrive; the limit counts
// streams, not retries, and a cancellation frees a place.
TEST(QpackBlocked, StreamsResumeAsTheirInsertsArrive) {
    Qpack q(220, 3);
    ASSERT_EQ(q.encoder("3fbd01"), QPACK_OK);
    // RIC 1, 2, 3: encoded 2, 3, 4, Base = RIC, the newest entry.
    EXPECT_EQ(q.section(12, "0400" "80"), QPACK_BLOCKED);
    EXPECT_EQ(q.section(4, "0200" "80"), QPACK_BLOCKED);
    EXPECT_EQ(q.section(8, "0300" "80"), QPACK_BLOCKED);
    EXPECT_EQ(q.section(8, "0300" "80"), QPACK_BLOCKED);
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 3u);
    ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 12), QPACK_OK);
    EXPECT_EQ(q.section(16, "0400" "80"), QPACK_BLOCKED);
    EXPECT_EQ(q.drain(), "4c");
    ASSERT_EQ(q.encoder("4161" "0131"), QPACK_OK);
    EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{4});
    ASSERT_EQ(q.encoder("4161" "0132" "4161"), QPACK_OK);   // and a partial third
    EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{8});
    EXPECT_TRUE(q.unblocked().empty());
    ASSERT_EQ(q.encoder("0133"), QPACK_OK);
    EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{16});
    std::vector<Decoded> out;
    ASSERT_EQ(q.section(16, "0400" "80", &out), QPACK_OK);
    ASSERT_EQ(q.section(4, "0200" "80", &out), QPACK_OK);
    ASSERT_EQ(q.section(8, "0300" "80", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{"a", "3"}, {"a", "1"}, {"a", "2"}}));
    EXPECT_EQ(q.drain(), "90" "84" "88");
}

// One stream more than SETTINGS_QPACK_BLOCKED_STREAMS is a connection
// error; a retry of a blocked stream is not one more.
TEST(QpackBlocked, OneStreamMoreThanTheSettingIsAnError) {
    Qpack q(220, 2);
    ASSERT_EQ(q.encoder("3fbd01"), QPACK_OK);
    EXPECT_EQ(q.section(0, "0200"), QPACK_BLOCKED);
    EXPECT_EQ(q.section(4, "0200"), QPACK_BLOCKED);
    EXPECT_EQ(q.section(4, "0300"), QPACK_BLOCKED);
    const int rc = q.section(8, "0200");
    EXPECT_EQ(rc, QPACK_E_BLOCKED_STREAMS);
    EXPECT_EQ(qpack_h3_error(rc), unsigned{QPACK_H3_DECOMPRESSION_FAILED});
    EXPECT_EQ(q.encoder("4161" "0131"), HPACK_E_STATE);
}

// A stream named unblocked has left the count: with a limit of 1, another
// may block at once.
TEST(QpackBlocked, AnUnblockedStreamLeavesTheCount) {
    Qpack q(220, 1);
    ASSERT_EQ(q.encoder("3fbd01"), QPACK_OK);
    EXPECT_EQ(q.section(0, "0200" "80"), QPACK_BLOCKED);
    ASSERT_EQ(q.encoder("4161" "0131"), QPACK_OK);
    EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{0});
    EXPECT_EQ(q.section(4, "0300" "80"), QPACK_BLOCKED);
    EXPECT_EQ(qpack_decoder_blocked_streams(q.dec), 1u);
}

// A blocked section keeps the Required Insert Count reconstructed when it
// arrived (RFC 9204 4.5.1.1), not the one its prefix gives against the
// inserts made since: an encoder that evicts the entry the section
// references (which RFC 9204 2.1.1 forbids) makes it an error when it is
// begun again (2.2.3), where the later count would wrap to a newer entry,
// or block the stream again after qpack_decoder_unblocked() named it.
TEST(QpackBlocked, TheRequiredInsertCountIsTheOneOfTheSectionsArrival) {
    // 64 octets: MaxEntries 2, FullRange 4.  RIC 1 (encoded 2), Base 1,
    // the entry 0; then 32-octet inserts that evict it.
    for (const char* inserts : {"4000" "4000" "4000" "4000", "4000" "4000" "4000" "4000" "4000"}) {
        Qpack q(64, 1);
        EXPECT_EQ(q.section(0, "0200" "80"), QPACK_BLOCKED);
        ASSERT_EQ(q.encoder(std::string("3f21") + inserts), QPACK_OK);
        EXPECT_EQ(q.unblocked(), std::vector<uint64_t>{0}) << inserts;
        EXPECT_EQ(q.section(0, "0200" "80"), QPACK_E_DYNAMIC_INDEX) << inserts;
    }
}

// --------------------------------------------------------------- limits

// A limit ends the section (a stream error, H3_EXCESSIVE_LOAD) and cancels
// its references; the decoder goes on.
TEST(QpackLimits, AFieldOverTheLimitEndsOnlyItsSection) {
    Qpack q;
    qpack_decoder_set_limits(q.dec, 10, 0);
    ASSERT_EQ(q.encoder("3fbd01" "4178" "0a" "30313233343536373839"), QPACK_OK);  // x: 10
    std::vector<Decoded> out;
    int rc = q.section(4, "0200" "d1" "80", &out);
    EXPECT_EQ(rc, QPACK_E_FIELD_TOO_LARGE);
    EXPECT_EQ(qpack_h3_error(rc), unsigned{QPACK_H3_EXCESSIVE_LOAD});
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(q.drain(), "44" "01");
    // A literal over the limit, known from the lengths before decoding.
    EXPECT_EQ(q.section(8, "0000" "2378" "2d61" "08" "3031323334353637"),
              QPACK_E_FIELD_TOO_LARGE);
    EXPECT_EQ(q.drain(), "");   // Required Insert Count 0: nothing to cancel
    // The decoder goes on.
    qpack_decoder_set_limits(q.dec, 11, 0);
    out.clear();
    ASSERT_EQ(q.section(12, "0200" "80", &out), QPACK_OK);
    EXPECT_EQ(list_of(out), (HeaderList{{"x", "0123456789"}}));
    EXPECT_EQ(q.drain(), "8c");
}

// Indexed references count in full against the section's size: a small
// section that references a large entry many times stops at the limit.
TEST(QpackLimits, ASectionOfManyReferencesStopsAtTheLimit) {
    Qpack q(4096, 0);
    qpack_decoder_set_limits(q.dec, 0, 16384);
    const std::string value(3000, 'v');
    std::string enc = "3fe11f" "4178" "7f" "b916";   // capacity 4096; x, 3000 octets
    enc += hex(reinterpret_cast<const uint8_t*>(value.data()), value.size());
    ASSERT_EQ(q.encoder(enc), QPACK_OK);
    std::string s = "0200";
    for (int i = 0; i < 100; ++i) s += "80";
    std::vector<Decoded> out;
    EXPECT_EQ(q.section(0, s, &out), QPACK_E_SECTION_TOO_LARGE);
    EXPECT_EQ(out.size(), 5u);   // 5 x 3033 <= 16384 < 6 x 3033
}

// qpack_decoder_set_limits() during a section takes effect at the next
// (qpack.h), the field limit as the section's.  Found while writing
// qpack_decoder_fuzz (its check, on a hand-built script): a field limit
// raised after a section's first batch let its next field through above
// the limit the section began with (and one lowered ended a section the
// old limit allowed).
TEST(QpackLimits, LimitsSetDuringASectionApplyFromTheNext) {
    Qpack q(0, 0);
    const std::vector<uint8_t> s = unhex("0000" "c2" "c0");   // age: 0 (4), :authority (10)
    qpack_field_t f;
    size_t n = 0;

    // Raised during the section: the section keeps 4.
    qpack_decoder_set_limits(q.dec, 4, 0);
    ASSERT_EQ(qpack_decode_begin(q.dec, 0, s.data(), s.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, &f, 1, &n), QPACK_OK);
    EXPECT_EQ(n, 1u);
    qpack_decoder_set_limits(q.dec, 0, 0);
    EXPECT_EQ(qpack_decode_fields(q.dec, &f, 1, &n), QPACK_E_FIELD_TOO_LARGE);
    EXPECT_EQ(n, 0u);

    // The next section has none; lowered during it, the section keeps none.
    ASSERT_EQ(qpack_decode_begin(q.dec, 4, s.data(), s.size()), QPACK_OK);
    ASSERT_EQ(qpack_decode_fields(q.dec, &f, 1, &n), QPACK_OK);
    qpack_decoder_set_limits(q.dec, 4, 0);
    ASSERT_EQ(qpack_decode_fields(q.dec, &f, 1, &n), QPACK_OK);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.name), f.name_len), ":authority");
    EXPECT_EQ(qpack_decode_fields(q.dec, &f, 1, &n), QPACK_SECTION_END);
}

TEST(QpackLimits, AStringOverTheLimitAsSent) {
    Qpack q;
    qpack_decoder_set_string_limit(q.dec, 4);
    EXPECT_EQ(q.section(0, "0000" "5104" "61626364"), QPACK_OK);
    EXPECT_EQ(q.section(0, "0000" "5105" "6162636465"), QPACK_E_STRING_TOO_LARGE);
    EXPECT_EQ(q.section(0, "0000" "2561626364650100"), QPACK_E_STRING_TOO_LARGE);
    // The encoder stream's strings are bounded by the capacity instead.
    EXPECT_EQ(q.encoder("3fbd01" "4561626364650100"), QPACK_OK);
}

// ----------------------------------------------------------- allocation

// Every allocation a connection's decoder makes, failed in turn: creation
// fails cleanly, or the call that needed it returns HPACK_E_NOMEM and every
// later one HPACK_E_STATE; with no failure every call succeeds; nothing
// leaks.  The steps grow the table past its first block, the side buffer
// of a split instruction, the scratch past its first 1 KiB, and the list of
// blocked streams and the decoder stream's queue past the room each has in
// the decoder's own allocation.
TEST(QpackAllocation, EveryFailedAllocationIsReported) {
    std::string enc = "3fe11f";   // capacity 4096; x-0 .. x-39: value
    for (int i = 0; i < 40; ++i) {
        const std::string name = "x-" + std::to_string(i);
        const uint8_t len = static_cast<uint8_t>(0x40 | name.size());
        enc += hex(&len, 1) + hex(reinterpret_cast<const uint8_t*>(name.data()), name.size());
        enc += "05" "76616c7565";
    }
    const std::vector<uint8_t> stream = unhex(enc);
    const size_t half = stream.size() / 2 + 3;   // inside an instruction
    const std::string big(3000, 'h');
    std::vector<uint8_t> code(big.size() + 8);
    code.resize(hpack_huffman_encode(reinterpret_cast<const uint8_t*>(big.data()), big.size(),
                                     code.data()));
    std::vector<uint8_t> huge = unhex("0000" "5f00");   // :method, a Huffman value
    uint8_t len[hpack::kInteger62MaxBytes];
    huge.insert(huge.end(), len, len + hpack::encode_integer62(len, 0x80, 7, code.size()));
    huge.insert(huge.end(), code.begin(), code.end());

    FailingAllocator a;
    auto run = [&](int fail_at) {
        a.reset(fail_at);
        {
            Qpack q(4096, 8, &a.allocator);
            if (!q.dec) {
                EXPECT_EQ(fail_at, 0);
                return;
            }
            // Each step's result when nothing fails.
            std::vector<int> expected, got;
            auto step = [&](int want, int rc) {
                expected.push_back(want);
                got.push_back(rc);
            };
            step(QPACK_OK, qpack_decoder_read_encoder(q.dec, stream.data(), half));
            step(QPACK_OK, q.section_bytes(0, huge));
            // Six streams blocked at Required Insert Count 79: more than the
            // list's first room.
            for (uint64_t id = 4; id <= 24; id += 4)
                step(QPACK_BLOCKED, q.section(id, "5000" "80"));
            step(QPACK_OK, qpack_decoder_read_encoder(q.dec, stream.data() + half,
                                                      stream.size() - half));
            step(QPACK_OK, q.section(100, "2900" "80" "a7"));   // entries 39 and 0
            // Cancellations of 3-octet stream ids: more than the queue's
            // first room.
            for (uint64_t id = 4; id <= 24; id += 4)
                step(QPACK_OK, qpack_decoder_cancel_stream(q.dec, id));
            for (uint64_t id = 1000; id < 1040; ++id)
                step(QPACK_OK, qpack_decoder_cancel_stream(q.dec, id));
            bool failed = false;
            for (size_t i = 0; i < got.size(); ++i) {
                if (failed) {
                    EXPECT_EQ(got[i], HPACK_E_STATE) << fail_at << " step " << i;
                } else if (got[i] == HPACK_E_NOMEM) {
                    failed = true;
                } else {
                    EXPECT_EQ(got[i], expected[i]) << fail_at << " step " << i;
                }
            }
            EXPECT_EQ(failed, fail_at >= 0) << fail_at;
            if (!failed) {
                EXPECT_EQ(q.drain().substr(0, 14), "e4" "44" "48" "4c" "50" "54" "58");
            }
        }
        EXPECT_EQ(a.live, 0) << fail_at;
    };
    run(-1);
    const int allocations = a.made;
    EXPECT_GE(allocations, 5);
    for (int n = 0; n < allocations; ++n) run(n);
}

// A new connection's decoder is one allocation, and Appendix B's traffic
// (inserts, sections, acknowledgments, a blocked stream, a cancellation)
// allocates nothing more; destroying it frees that one.
TEST(QpackAllocation, ANewConnectionIsOneAllocation) {
    FailingAllocator a;
    a.reset(-1);
    {
        Qpack q(4096, 4, &a.allocator);
        ASSERT_NE(q.dec, nullptr);
        EXPECT_EQ(a.made, 1);
        ASSERT_EQ(q.section(0, "0000510b2f696e6465782e68746d6c"), QPACK_OK);
        ASSERT_EQ(q.encoder(kB2Encoder), QPACK_OK);
        ASSERT_EQ(q.section(4, "03811011"), QPACK_OK);
        ASSERT_EQ(q.encoder(kB3Encoder), QPACK_OK);
        EXPECT_EQ(q.section(8, "050080c181"), QPACK_BLOCKED);
        ASSERT_EQ(qpack_decoder_cancel_stream(q.dec, 8), QPACK_OK);
        ASSERT_EQ(q.encoder(kB4Encoder), QPACK_OK);
        ASSERT_EQ(q.encoder(kB5Encoder), QPACK_OK);
        EXPECT_EQ(q.drain(), "84" "48" "03");
        EXPECT_EQ(a.made, 1);
    }
    EXPECT_EQ(a.live, 0);
}

}  // namespace
