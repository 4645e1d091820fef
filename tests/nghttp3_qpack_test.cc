// Our QPACK decoder against libnghttp3's QPACK encoder: request lists
// encoded by nghttp3 at table capacities 0, 256 and 4096, with 0 and 100
// blocked streams, the encoder stream delivered before its section or
// after it in random pieces, and our decoder stream read back by nghttp3's
// encoder, which rejects any instruction a conformant decoder would not
// send.  What would break for a user: an HTTP/3 client (curl, and every
// client built on nghttp3) whose requests we decode wrongly or whose
// connection we close.
//
// The lists: ../shared/data/qifs/*.qif (or $QIFS_DIR) when present, the
// hpack-test-case raw-data stories when present (each test says so and
// skips when its lists are absent), and a built-in set that always runs.
//
// The same lists, encoded by nghttp3 into QPACK offline-interop files, go
// through `hpack qpack-decode` (codec/tools/qif.h), whose QIF must be the
// input's.

#include <gtest/gtest.h>

#include <nghttp3/nghttp3.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "corpus.h"
#include "qif.h"
#include "qpack_lists.h"
#include "qpack.h"
#include "story.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

class Nghttp3Encoder {
public:
    Nghttp3Encoder(size_t capacity, size_t blocked) {
        nghttp3_buf_init(&prefix_);
        nghttp3_buf_init(&rest_);
        nghttp3_buf_init(&stream_);
        ok_ = nghttp3_qpack_encoder_new(&enc_, capacity, nghttp3_mem_default()) == 0;
        if (ok_) {
            nghttp3_qpack_encoder_set_max_dtable_capacity(enc_, capacity);
            nghttp3_qpack_encoder_set_max_blocked_streams(enc_, blocked);
        }
    }
    ~Nghttp3Encoder() {
        if (enc_) nghttp3_qpack_encoder_del(enc_);
        nghttp3_buf_free(&prefix_, nghttp3_mem_default());
        nghttp3_buf_free(&rest_, nghttp3_mem_default());
        nghttp3_buf_free(&stream_, nghttp3_mem_default());
    }
    Nghttp3Encoder(const Nghttp3Encoder&) = delete;
    Nghttp3Encoder& operator=(const Nghttp3Encoder&) = delete;

    bool ok() const { return ok_; }

    // Encodes list for stream: the section (prefix and field lines) and
    // the encoder-stream octets it produced.
    bool encode(int64_t stream, const HeaderList& list, std::vector<uint8_t>* section,
                std::vector<uint8_t>* encoder_stream) {
        std::vector<nghttp3_nv> nva(list.size());
        for (size_t i = 0; i < list.size(); ++i) {
            // nghttp3 0.8's nghttp3_nv takes non-const pointers; it reads only.
            nva[i].name = reinterpret_cast<uint8_t*>(const_cast<char*>(list[i].first.data()));
            nva[i].namelen = list[i].first.size();
            nva[i].value = reinterpret_cast<uint8_t*>(const_cast<char*>(list[i].second.data()));
            nva[i].valuelen = list[i].second.size();
            nva[i].flags = sensitive(list[i].first) ? NGHTTP3_NV_FLAG_NEVER_INDEX
                                                    : NGHTTP3_NV_FLAG_NONE;
        }
        nghttp3_buf_reset(&prefix_);
        nghttp3_buf_reset(&rest_);
        nghttp3_buf_reset(&stream_);
        if (nghttp3_qpack_encoder_encode(enc_, &prefix_, &rest_, &stream_, stream, nva.data(),
                                         nva.size()) != 0)
            return false;
        section->assign(prefix_.pos, prefix_.last);
        section->insert(section->end(), rest_.pos, rest_.last);
        encoder_stream->assign(stream_.pos, stream_.last);
        return true;
    }

    // Reads our decoder stream: false when nghttp3 finds it malformed.
    bool read_decoder(const std::string& hex_octets) {
        const std::vector<uint8_t> b = unhex(hex_octets);
        if (b.empty()) return true;
        const nghttp3_ssize n = nghttp3_qpack_encoder_read_decoder(enc_, b.data(), b.size());
        return n == static_cast<nghttp3_ssize>(b.size());
    }

private:
    nghttp3_qpack_encoder* enc_ = nullptr;
    bool ok_ = false;
    nghttp3_buf prefix_, rest_, stream_;
};

struct Mode {
    size_t capacity;
    size_t blocked;
    bool late;        // the encoder stream arrives after its section
    bool cancel;      // some blocked streams are cancelled, not resumed
};

std::string mode_name(const Mode& m) {
    return "capacity " + std::to_string(m.capacity) + ", blocked " + std::to_string(m.blocked) +
           (m.late ? ", encoder stream late" : "") + (m.cancel ? ", cancelling" : "");
}

// Feeds octets to our decoder in random pieces.
int feed_in_pieces(qpack_decoder_t* dec, const std::vector<uint8_t>& b, Random* r) {
    size_t at = 0;
    while (at < b.size()) {
        const size_t n = 1 + r->next(static_cast<uint32_t>(std::min<size_t>(b.size() - at, 40)));
        const int rc = qpack_decoder_read_encoder(dec, b.data() + at, n);
        if (rc != QPACK_OK) return rc;
        at += n;
    }
    return QPACK_OK;
}

// What a mode's run went through, for the summary line.
struct Counts {
    size_t sections = 0;
    size_t dynamic = 0;   // fields or names from the dynamic table
    size_t blocked = 0;   // sections that blocked
};

// Decodes a section known not to be blocked; "" or what went wrong.
std::string decode_and_compare(qpack_decoder_t* dec, uint64_t stream,
                               const std::vector<uint8_t>& section, const HeaderList& want,
                               Counts* counts) {
    int rc = qpack_decode_begin(dec, stream, section.data(), section.size());
    if (rc != QPACK_OK) return std::string("begin: ") + qpack_strerror(rc);
    HeaderList got;
    std::vector<hpack_representation_t> reps;
    for (;;) {
        qpack_field_t f[16];
        size_t n = 0;
        rc = qpack_decode_fields(dec, f, 16, &n);
        for (size_t i = 0; i < n; ++i) {
            got.push_back(header_of(f[i]));
            reps.push_back(f[i].representation);
            if (f[i].name_memo) ++counts->dynamic;
        }
        if (rc == QPACK_SECTION_END) break;
        if (rc != QPACK_OK) return std::string("fields: ") + qpack_strerror(rc);
    }
    ++counts->sections;
    if (got != want) return "the fields differ";
    for (size_t i = 0; i < want.size(); ++i) {
        if (sensitive(want[i].first) && reps[i] != HPACK_REP_NEVER_INDEXED)
            return want[i].first + " not reported never-indexed";
        if (reps[i] == HPACK_REP_INCREMENTAL) return "an incremental representation";
    }
    return "";
}

std::string drain(qpack_decoder_t* dec) {
    uint8_t b[512];
    std::string s;
    for (size_t n; (n = qpack_decoder_drain(dec, b, sizeof b)) != 0;) s += hex(b, n);
    return s;
}

// Every list through nghttp3's encoder and our decoder on one connection;
// "" or the first failure.
std::string round_trip(const std::vector<HeaderList>& lists, const Mode& m, Counts* counts) {
    Nghttp3Encoder enc(m.capacity, m.blocked);
    if (!enc.ok()) return "nghttp3_qpack_encoder_new failed";
    qpack_decoder_t* dec = qpack_decoder_create(nullptr, m.capacity, m.blocked);
    Random r{m.capacity * 31 + m.blocked + (m.late ? 7 : 0) + (m.cancel ? 13 : 0)};
    std::string failure;
    for (size_t i = 0; i < lists.size() && failure.empty(); ++i) {
        const uint64_t stream = 4 * i;
        const std::string where = "list " + std::to_string(i) + ": ";
        std::vector<uint8_t> section, encoder_stream;
        if (!enc.encode(static_cast<int64_t>(stream), lists[i], &section, &encoder_stream)) {
            failure = where + "nghttp3_qpack_encoder_encode failed";
            break;
        }
        if (!m.late) {
            if (feed_in_pieces(dec, encoder_stream, &r) != QPACK_OK) {
                failure = where + "our decoder refused nghttp3's encoder stream";
                break;
            }
            failure = decode_and_compare(dec, stream, section, lists[i], counts);
            if (!failure.empty()) failure = where + failure;
        } else {
            const int rc = qpack_decode_begin(dec, stream, section.data(), section.size());
            if (rc == QPACK_BLOCKED && m.blocked == 0) {
                failure = where + "blocked with SETTINGS_QPACK_BLOCKED_STREAMS 0";
                break;
            }
            if (rc != QPACK_OK && rc != QPACK_BLOCKED) {
                failure = where + "begin: " + qpack_strerror(rc);
                break;
            }
            if (rc == QPACK_BLOCKED) ++counts->blocked;
            const bool cancelled = rc == QPACK_BLOCKED && m.cancel && r.next(3) == 0;
            if (cancelled && qpack_decoder_cancel_stream(dec, stream) != QPACK_OK) {
                failure = where + "cancel failed";
                break;
            }
            if (feed_in_pieces(dec, encoder_stream, &r) != QPACK_OK) {
                failure = where + "our decoder refused nghttp3's encoder stream";
                break;
            }
            uint64_t ids[4];
            const size_t n = qpack_decoder_unblocked(dec, ids, 4);
            const size_t expected = rc == QPACK_BLOCKED && !cancelled ? 1 : 0;
            if (n != expected || (n == 1 && ids[0] != stream)) {
                failure = where + "unblocked() named " + std::to_string(n) + " streams";
                break;
            }
            if (!cancelled) {
                // A section begun and decoded before its inserts arrived
                // referenced none of them: decode it again either way.
                failure = decode_and_compare(dec, stream, section, lists[i], counts);
                if (!failure.empty()) failure = where + failure;
            }
        }
        if (failure.empty() && !enc.read_decoder(drain(dec)))
            failure = where + "nghttp3 refused our decoder stream";
    }
    qpack_decoder_destroy(dec);
    return failure;
}

const Mode kModes[] = {
    {0, 0, false, false},      {256, 0, false, false},    {4096, 0, false, false},
    {256, 100, false, false},  {4096, 100, false, false}, {4096, 0, true, false},
    {256, 100, true, true},    {4096, 100, true, false},  {4096, 100, true, true},
};

// Runs lists in every mode; adds each mode's counts to totals.
void run_all_modes(const std::vector<HeaderList>& lists, const std::string& what,
                   std::vector<Counts>* totals) {
    totals->resize(std::size(kModes));
    for (size_t i = 0; i < std::size(kModes); ++i) {
        const Mode& m = kModes[i];
        Counts c;
        EXPECT_EQ(round_trip(lists, m, &c), "") << what << ", " << mode_name(m);
        EXPECT_GT(c.sections, 0u) << what << ", " << mode_name(m);
        (*totals)[i].sections += c.sections;
        (*totals)[i].dynamic += c.dynamic;
        (*totals)[i].blocked += c.blocked;
    }
}

// One line a mode: what the lists exercised.
void print_totals(const std::string& what, const std::vector<Counts>& totals) {
    for (size_t i = 0; i < totals.size(); ++i) {
        std::cout << "[ nghttp3  ] " << what << ", " << mode_name(kModes[i]) << ": "
                  << totals[i].sections << " sections, " << totals[i].dynamic
                  << " dynamic references, " << totals[i].blocked << " blocked\n";
    }
}

// A browser's requests to one site, which nghttp3 indexes and references,
// a value larger than a 256-octet table, and the sensitive fields.
TEST(Nghttp3Qpack, BuiltInRequestsDecodeAtEveryCapacity) {
    std::vector<Counts> totals;
    run_all_modes(builtin_lists(), "built-in requests", &totals);
    // The table is used at 4096, blocking or not, and a late encoder
    // stream blocks.
    EXPECT_GT(totals[2].dynamic, 0u);
    EXPECT_GT(totals[4].dynamic, 0u);
    EXPECT_GT(totals[7].blocked, 0u);
    print_totals("built-in requests", totals);
}

TEST(Nghttp3Qpack, QifRequestListsDecodeAtEveryCapacity) {
    std::string dir;
    const std::vector<std::string> files = qif_files(&dir);
    if (files.empty()) {
        GTEST_SKIP() << "no .qif files at " << dir << " (set QIFS_DIR to a directory of them)";
    }
    std::vector<Counts> totals;
    for (const std::string& f : files) {
        const std::vector<HeaderList> lists = read_qif(f);
        EXPECT_FALSE(lists.empty()) << f;
        if (!lists.empty()) run_all_modes(lists, f, &totals);
    }
    print_totals(std::to_string(files.size()) + " qif files", totals);
}

TEST(Nghttp3Qpack, HpackTestCaseRawDataDecodesAtEveryCapacity) {
    REQUIRE_CORPUS(corpus);
    const auto stories = story_lists(corpus + "/raw-data");
    ASSERT_FALSE(stories.empty()) << "no stories in " << corpus << "/raw-data";
    std::vector<Counts> totals;
    for (size_t i = 0; i < stories.size(); ++i)
        run_all_modes(stories[i], "raw-data story " + std::to_string(i), &totals);
    print_totals("raw-data", totals);
}

// ------------------------------------------- hpack qpack-decode (qif.h)

// The lists encoded by one nghttp3 encoder into an offline-interop file:
// list i is stream i + 1's section, its encoder-stream octets in a stream
// 0 record before it, or after it (late: every section that references a
// new insert blocks until the next record).  No decoder stream reaches the
// encoder, as offline.  "" or what failed.
std::string encode_interop(const std::vector<HeaderList>& lists, size_t capacity, size_t blocked,
                           bool late, std::vector<uint8_t>* out) {
    namespace qif = hpack_tools::qif;
    Nghttp3Encoder enc(capacity, blocked);
    if (!enc.ok()) return "nghttp3_qpack_encoder_new failed";
    out->clear();
    for (size_t i = 0; i < lists.size(); ++i) {
        std::vector<uint8_t> section, encoder_stream;
        if (!enc.encode(static_cast<int64_t>(i + 1), lists[i], &section, &encoder_stream))
            return "list " + std::to_string(i) + ": nghttp3_qpack_encoder_encode failed";
        if (!late && !encoder_stream.empty())
            qif::append_record(out, 0, encoder_stream.data(), encoder_stream.size());
        qif::append_record(out, i + 1, section.data(), section.size());
        if (late && !encoder_stream.empty())
            qif::append_record(out, 0, encoder_stream.data(), encoder_stream.size());
    }
    return "";
}

std::string qif_text(const std::vector<HeaderList>& lists) {
    std::string s;
    for (const HeaderList& l : lists) {
        hpack_tools::qif::HeaderList h;
        for (const Header& f : l) h.push_back({f.first, f.second});
        hpack_tools::qif::append(&s, h);
    }
    return s;
}

// A file in the temporary directory, removed with the object.
struct TempFile {
    explicit TempFile(const std::string& tag)
        : path((std::filesystem::temp_directory_path() /
                ("hpack-qif-" + std::to_string(getpid()) + "-" + tag))
                   .string()) {}
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    bool write(const std::vector<uint8_t>& b) const {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        return static_cast<bool>(f);
    }
    std::string path;
};

struct CliRun {
    int status;
    std::string out, err;
};

// `hpack qpack-decode --table-capacity capacity --blocked-streams blocked
// FILE` on the octets, through a temporary file as the tool reads it.
CliRun qpack_decode_file(const std::vector<uint8_t>& octets, size_t capacity, size_t blocked,
                         const std::string& tag) {
    TempFile f(tag);
    if (!f.write(octets)) return {-1, "", "cannot write " + f.path};
    std::string text, err;
    if (!hpack_tools::story::read_file(f.path, &text, &err)) return {-1, "", err};
    std::ostringstream out, errs;
    const int status = hpack_tools::qif::run_decode(f.path, text, capacity, blocked, out, errs);
    return {status, out.str(), errs.str()};
}

// The first section where two QIF texts differ, for a failure message.
std::string first_difference(const std::string& want, const std::string& got) {
    namespace qif = hpack_tools::qif;
    const std::vector<qif::HeaderList> w = qif::parse(want), g = qif::parse(got);
    for (size_t i = 0; i < std::min(w.size(), g.size()); ++i) {
        const std::string d = hpack_tools::story::diff(w[i], g[i]);
        if (!d.empty()) return "section " + std::to_string(i + 1) + ": " + d;
    }
    if (w.size() != g.size())
        return "expected " + std::to_string(w.size()) + " sections, got " +
               std::to_string(g.size());
    return "the texts differ outside the fields";
}

// Every list through an interop file at capacity 4096 and 100 blocked
// streams, the encoder stream before and after its sections; the tool's
// output must be the QIF of the lists (want: the input file's text when
// there is one).
void expect_cli_round_trip(const std::vector<HeaderList>& lists, const std::string& want,
                           const std::string& what) {
    for (const bool late : {false, true}) {
        const std::string where = what + (late ? ", encoder stream late" : "");
        std::vector<uint8_t> file;
        ASSERT_EQ(encode_interop(lists, 4096, 100, late, &file), "") << where;
        const CliRun r = qpack_decode_file(file, 4096, 100, late ? "late" : "early");
        EXPECT_EQ(r.status, 0) << where << ": " << r.err;
        EXPECT_EQ(r.err, "") << where;
        EXPECT_TRUE(r.out == want) << where << ": " << first_difference(want, r.out);
        hpack_tools::qif::DecodeResult d;
        ASSERT_TRUE(hpack_tools::qif::decode(file.data(), file.size(), 4096, 100, &d))
            << where << ": " << d.error;
        EXPECT_GT(d.decoder_stream, 0u) << where << ": no acknowledgment owed";
        if (late) {
            EXPECT_GT(d.blocked, 0u) << where << ": no section blocked";
        }
        std::cout << "[ qif      ] " << where << ": " << lists.size() << " sections, "
                  << file.size() << " octets, " << d.blocked << " blocked\n";
    }
}

TEST(QpackDecodeCli, BuiltInRequestsFromNghttp3) {
    const std::vector<HeaderList> lists = builtin_lists();
    expect_cli_round_trip(lists, qif_text(lists), "built-in requests");
}

TEST(QpackDecodeCli, QifFilesFromNghttp3) {
    std::string dir;
    const std::vector<std::string> files = qif_files(&dir);
    if (files.empty()) {
        GTEST_SKIP() << "no .qif files at " << dir
                     << " (../shared absent? set QIFS_DIR to a directory of them)";
    }
    for (const std::string& f : files) {
        std::string text, err;
        ASSERT_TRUE(hpack_tools::story::read_file(f, &text, &err)) << err;
        const std::vector<HeaderList> lists = read_qif(f);
        ASSERT_FALSE(lists.empty()) << f;
        // The qifs files are in the form the tool writes: compare with
        // the file itself, else with its lists.
        const std::string want = qif_text(lists) == text ? text : qif_text(lists);
        expect_cli_round_trip(lists, want, f);
    }
}

// Stream 1's section, then stream 2's that needs an insert which never
// comes: stream 1's fields, then the error.
TEST(QpackDecodeCli, SectionStillBlockedAtTheEndIsAnError) {
    std::vector<uint8_t> file;
    const std::vector<uint8_t> ok = unhex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
    const std::vector<uint8_t> blocked = unhex("0381 10 11");   // RFC 9204 B.2
    hpack_tools::qif::append_record(&file, 1, ok.data(), ok.size());
    hpack_tools::qif::append_record(&file, 2, blocked.data(), blocked.size());
    const CliRun r = qpack_decode_file(file, 4096, 100, "blocked");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, ":path\t/index.html\n\n");
    EXPECT_NE(r.err.find("still blocked, the first on stream 2"), std::string::npos) << r.err;
}

// The insert arrives after the section it unblocks: decoded, and listed in
// stream order before the later stream decoded first.
TEST(QpackDecodeCli, BlockedSectionResumesInStreamOrder) {
    std::vector<uint8_t> file;
    const std::vector<uint8_t> enc = unhex(
        "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c1 0c 2f 7361 6d70 6c65 2f70 6174 68");
    const std::vector<uint8_t> blocked = unhex("0381 10 11");
    const std::vector<uint8_t> plain = unhex("0000 d1");     // :method GET
    hpack_tools::qif::append_record(&file, 1, blocked.data(), blocked.size());
    hpack_tools::qif::append_record(&file, 2, plain.data(), plain.size());
    hpack_tools::qif::append_record(&file, 0, enc.data(), enc.size());
    const CliRun r = qpack_decode_file(file, 4096, 100, "resume");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, ":authority\twww.example.com\n:path\t/sample/path\n\n:method\tGET\n\n");
    // With no stream allowed to block, the same file is an error.
    const CliRun z = qpack_decode_file(file, 4096, 0, "resume0");
    EXPECT_EQ(z.status, 1);
    EXPECT_EQ(z.out, "");
    EXPECT_NE(z.err.find("QPACK_DECOMPRESSION_FAILED (0x200)"), std::string::npos) << z.err;
}

TEST(QpackDecodeCli, ErrorsNameTheRecordAndTheHttp3Code) {
    namespace qif = hpack_tools::qif;
    std::vector<uint8_t> bad_section, bad_encoder, truncated;
    const std::vector<uint8_t> past_static = unhex("0000 ff7f");   // static index 190
    qif::append_record(&bad_section, 1, past_static.data(), past_static.size());
    const std::vector<uint8_t> too_big = unhex("3fe21f");          // capacity 4096 + 1
    qif::append_record(&bad_encoder, 0, too_big.data(), too_big.size());
    const std::vector<uint8_t> get = unhex("0000 d1");
    qif::append_record(&truncated, 1, get.data(), get.size());
    truncated.pop_back();

    CliRun r = qpack_decode_file(bad_section, 4096, 100, "bad-section");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("record 1 at offset 0 (stream 1): "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(qpack_strerror(QPACK_E_STATIC_INDEX)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("QPACK_DECOMPRESSION_FAILED (0x200)"), std::string::npos) << r.err;

    r = qpack_decode_file(bad_encoder, 4096, 100, "bad-encoder");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(qpack_strerror(QPACK_E_ENC_CAPACITY)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("QPACK_ENCODER_STREAM_ERROR (0x201)"), std::string::npos) << r.err;

    r = qpack_decode_file(truncated, 4096, 100, "truncated");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("truncated record: 2 of 3 octets"), std::string::npos) << r.err;
    truncated.resize(5);
    r = qpack_decode_file(truncated, 4096, 100, "truncated-header");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("truncated record header"), std::string::npos) << r.err;

    std::vector<uint8_t> twice;
    qif::append_record(&twice, 1, get.data(), get.size());
    qif::append_record(&twice, 1, get.data(), get.size());
    r = qpack_decode_file(twice, 4096, 100, "twice");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, ":method\tGET\n\n");
    EXPECT_NE(r.err.find("a second field section"), std::string::npos) << r.err;
}

}  // namespace
