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
// input's.  And the other way: our encoder's offline-interop files (`hpack
// qpack-encode`) must decode, by `hpack qpack-decode` and by libnghttp3's
// decoder, to the lists they were encoded from.

#include <gtest/gtest.h>

#include <nghttp3/nghttp3.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
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

// ------------------------------------------- hpack qpack-encode (qif.h)
//
// Our encoder's offline-interop files (qif::encode(), what `hpack
// qpack-encode` writes) read back by `hpack qpack-decode` (qif::decode())
// and by libnghttp3's decoder, at capacities 0, 256, 4096 and 65536 with 0
// and 100 blocked streams, immediate acknowledgement or none, and with our
// cap below and above the peer's capacity.  Every mode runs on the
// built-in lists and on each qifs list: about 0.3 s in all, most of it
// fb-req's 383 sections (2.5 s under ASan, 6 s under valgrind).

struct EncodeMode {
    size_t capacity;       // the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY
    size_t blocked;        // the peer's SETTINGS_QPACK_BLOCKED_STREAMS
    bool ack;              // immediate acknowledgement
    size_t max_capacity;   // our cap; kPeerCap: the peer's capacity
};

constexpr size_t kPeerCap = SIZE_MAX;

std::string encode_mode_name(const EncodeMode& m) {
    return "capacity " + std::to_string(m.capacity) + ", blocked " + std::to_string(m.blocked) +
           (m.ack ? ", immediate ack" : ", no ack") +
           (m.max_capacity != kPeerCap ? ", our cap " + std::to_string(m.max_capacity) : "");
}

std::vector<EncodeMode> encode_modes() {
    std::vector<EncodeMode> modes;
    for (const size_t capacity : {0, 256, 4096, 65536})
        for (const size_t blocked : {0, 100})
            for (const bool ack : {true, false})
                modes.push_back({capacity, blocked, ack, kPeerCap});
    // Our cap below the peer's capacity: the table is the smaller, but the
    // Required Insert Count is encoded with the peer's (RFC 9204 4.5.1.1).
    modes.push_back({4096, 100, true, 256});
    modes.push_back({65536, 100, false, 4096});
    modes.push_back({4096, 100, true, 0});
    // Our cap above it.
    modes.push_back({256, 0, true, 65536});
    return modes;
}

struct Record {
    uint64_t stream;
    std::vector<uint8_t> data;
};

// An offline-interop file's records; "" or what is wrong with the file.
std::string split_records(const std::vector<uint8_t>& file, std::vector<Record>* out) {
    out->clear();
    size_t off = 0;
    while (off < file.size()) {
        if (file.size() - off < hpack_tools::qif::kRecordHeader) return "truncated record header";
        uint64_t stream = 0;
        size_t len = 0;
        for (size_t i = 0; i < 8; ++i) stream = stream << 8 | file[off + i];
        for (size_t i = 8; i < 12; ++i) len = len << 8 | file[off + i];
        off += hpack_tools::qif::kRecordHeader;
        if (file.size() - off < len) return "truncated record";
        out->push_back({stream, std::vector<uint8_t>(file.begin() + static_cast<long>(off),
                                                     file.begin() + static_cast<long>(off + len))});
        off += len;
    }
    return "";
}

// The layout qpack-encode promises: n sections on streams 1..n in order,
// each after at most one stream-0 record, and no empty stream-0 record.
std::string check_layout(const std::vector<Record>& records, size_t sections) {
    uint64_t next = 1;
    bool encoder_record = false;
    for (size_t i = 0; i < records.size(); ++i) {
        const std::string where = "record " + std::to_string(i + 1) + ": ";
        if (records[i].stream == 0) {
            if (records[i].data.empty()) return where + "an empty encoder-stream record";
            if (encoder_record) return where + "two encoder-stream records in a row";
            encoder_record = true;
            continue;
        }
        if (records[i].stream != next)
            return where + "stream " + std::to_string(records[i].stream) + ", expected " +
                   std::to_string(next);
        ++next;
        encoder_record = false;
    }
    if (encoder_record) return "an encoder-stream record after the last section";
    if (next != sections + 1)
        return std::to_string(next - 1) + " sections, expected " + std::to_string(sections);
    return "";
}

std::vector<uint8_t> join_records(const std::vector<Record>& records) {
    std::vector<uint8_t> file;
    for (const Record& r : records)
        hpack_tools::qif::append_record(&file, r.stream, r.data.data(), r.data.size());
    return file;
}

// The records with every section moved before the encoder-stream record
// that came with it: a section that refers to an insert of its own then
// blocks, which a decoder allowing no blocked stream refuses.
std::vector<Record> sections_first(std::vector<Record> records) {
    for (size_t i = 1; i < records.size(); ++i) {
        if (records[i].stream != 0 && records[i - 1].stream == 0) {
            std::swap(records[i - 1], records[i]);
            ++i;   // the encoder-stream record stays before the next section
        }
    }
    return records;
}

// libnghttp3's QPACK decoder on an offline-interop file's records in
// their order: stream 0's to nghttp3_qpack_decoder_read_encoder, any other
// as a whole section to nghttp3_qpack_decoder_read_request.  A section
// that blocks is a failure (its encoder-stream record came before it).
// "" or the first failure.
std::string nghttp3_decode(const std::vector<Record>& records, size_t capacity, size_t blocked,
                           std::vector<HeaderList>* out) {
    const nghttp3_mem* mem = nghttp3_mem_default();
    nghttp3_qpack_decoder* dec = nullptr;
    if (nghttp3_qpack_decoder_new(&dec, capacity, blocked, mem) != 0)
        return "nghttp3_qpack_decoder_new failed";
    std::string failure;
    out->clear();
    for (size_t i = 0; i < records.size() && failure.empty(); ++i) {
        const Record& rec = records[i];
        const std::string where = "record " + std::to_string(i + 1) + " (stream " +
                                  std::to_string(rec.stream) + "): ";
        if (rec.stream == 0) {
            const nghttp3_ssize n =
                nghttp3_qpack_decoder_read_encoder(dec, rec.data.data(), rec.data.size());
            if (n != static_cast<nghttp3_ssize>(rec.data.size()))
                failure = where + "nghttp3_qpack_decoder_read_encoder: " +
                          (n < 0 ? nghttp3_strerror(static_cast<int>(n)) : "short read");
            continue;
        }
        nghttp3_qpack_stream_context* sctx = nullptr;
        if (nghttp3_qpack_stream_context_new(&sctx, static_cast<int64_t>(rec.stream), mem) != 0) {
            failure = where + "nghttp3_qpack_stream_context_new failed";
            break;
        }
        HeaderList got;
        const uint8_t* p = rec.data.data();
        size_t left = rec.data.size();
        for (;;) {
            nghttp3_qpack_nv nv;
            uint8_t flags = NGHTTP3_QPACK_DECODE_FLAG_NONE;
            const nghttp3_ssize n =
                nghttp3_qpack_decoder_read_request(dec, sctx, &nv, &flags, p, left, 1);
            if (n < 0) {
                failure = where + "nghttp3_qpack_decoder_read_request: " +
                          nghttp3_strerror(static_cast<int>(n));
                break;
            }
            p += n;
            left -= static_cast<size_t>(n);
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
                const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name);
                const nghttp3_vec value = nghttp3_rcbuf_get_buf(nv.value);
                got.emplace_back(std::string(reinterpret_cast<const char*>(name.base), name.len),
                                 std::string(reinterpret_cast<const char*>(value.base), value.len));
                nghttp3_rcbuf_decref(nv.name);
                nghttp3_rcbuf_decref(nv.value);
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) {
                if (left != 0) failure = where + std::to_string(left) + " octets after the end";
                break;
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
                failure = where + "blocked, though its encoder-stream record came before it";
                break;
            }
            if (n == 0 && !(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT)) {
                failure = where + "nghttp3 made no progress";
                break;
            }
        }
        nghttp3_qpack_stream_context_del(sctx);
        out->push_back(std::move(got));
        // The decoder stream it owes, written and dropped.
        std::vector<uint8_t> owed(nghttp3_qpack_decoder_get_decoder_streamlen(dec) + 1);
        nghttp3_buf buf;
        buf.begin = buf.pos = buf.last = owed.data();
        buf.end = owed.data() + owed.size();
        nghttp3_qpack_decoder_write_decoder(dec, &buf);
    }
    nghttp3_qpack_decoder_del(dec);
    return failure;
}

// What a list set exercised in one mode, for the assertions and the
// summary line.
struct EncodeCounts {
    size_t sections = 0;
    size_t section_octets = 0;
    size_t encoder_stream = 0;   // octets on stream 0
    size_t decoder_stream = 0;   // octets the encoder read back
    size_t dynamic = 0;          // sections with a Required Insert Count
};

// One list set (its QIF text want) in one mode: encoded, then read back by
// our decoder as it is and with every section before its encoder-stream
// record, and by nghttp3.  Adds to *counts.
void expect_encode_round_trip(const std::vector<HeaderList>& lists, const std::string& want,
                              const EncodeMode& m, const std::string& what,
                              EncodeCounts* counts) {
    namespace qif = hpack_tools::qif;
    const std::string where = what + ", " + encode_mode_name(m);
    qif::EncodeSettings s;
    s.capacity = m.capacity;
    s.blocked = m.blocked;
    s.ack = m.ack;
    s.max_capacity = m.max_capacity != kPeerCap ? m.max_capacity : m.capacity;
    qif::EncodeResult r;
    ASSERT_TRUE(qif::encode(qif::parse(want), s, &r)) << where << ": " << r.error;
    ASSERT_EQ(r.sections, lists.size()) << where;

    std::vector<Record> records;
    ASSERT_EQ(split_records(r.octets, &records), "") << where;
    ASSERT_EQ(check_layout(records, lists.size()), "") << where;
    size_t dynamic = 0, section_octets = 0;
    for (const Record& rec : records) {
        if (rec.stream == 0) continue;
        section_octets += rec.data.size();
        // An Encoded Required Insert Count of 0 is one zero octet.
        if (!rec.data.empty() && rec.data[0] != 0) ++dynamic;
    }
    if (std::min(s.capacity, s.max_capacity) == 0) {
        EXPECT_EQ(r.encoder_stream, 0u) << where;
        EXPECT_EQ(dynamic, 0u) << where;
    }
    if (!m.ack) {
        // Nothing is ever acknowledged: every section that refers to the
        // table blocks its stream for good (RFC 9204 2.1.2).
        EXPECT_LE(dynamic, m.blocked) << where;
        EXPECT_EQ(r.decoder_stream, 0u) << where;
    }

    // (a) hpack qpack-decode gives back the QIF.
    const std::string octets(r.octets.begin(), r.octets.end());
    std::ostringstream out, err;
    EXPECT_EQ(qif::run_decode(what, octets, m.capacity, m.blocked, out, err), 0)
        << where << ": " << err.str();
    EXPECT_TRUE(out.str() == want) << where << ": " << first_difference(want, out.str());

    // Each section refers only to inserts the encoder could count as
    // received, or blocks within the peer's limit.
    const std::vector<uint8_t> late = join_records(sections_first(records));
    qif::DecodeResult d;
    EXPECT_TRUE(qif::decode(late.data(), late.size(), m.capacity, m.blocked, &d))
        << where << ", sections before their encoder stream: " << d.error;

    // (b) libnghttp3's decoder gives the same fields.
    std::vector<HeaderList> got;
    EXPECT_EQ(nghttp3_decode(records, m.capacity, m.blocked, &got), "") << where;
    EXPECT_EQ(got.size(), lists.size()) << where;
    for (size_t i = 0; i < std::min(got.size(), lists.size()); ++i) {
        if (got[i] != lists[i]) {
            ADD_FAILURE() << where << ": nghttp3 decoded section " << i + 1 << " differently";
            break;
        }
    }

    counts->sections += r.sections;
    counts->section_octets += section_octets;
    counts->encoder_stream += r.encoder_stream;
    counts->decoder_stream += r.decoder_stream;
    counts->dynamic += dynamic;
}

// Every mode on one list set; one summary line a mode.
std::vector<EncodeCounts> expect_encode_all_modes(const std::vector<HeaderList>& lists,
                                                  const std::string& want,
                                                  const std::string& what) {
    const std::vector<EncodeMode> modes = encode_modes();
    std::vector<EncodeCounts> counts(modes.size());
    for (size_t i = 0; i < modes.size(); ++i) {
        expect_encode_round_trip(lists, want, modes[i], what, &counts[i]);
        const EncodeCounts& c = counts[i];
        std::cout << "[ qpack-enc] " << what << ", " << encode_mode_name(modes[i]) << ": "
                  << c.sections << " sections of " << c.section_octets << " octets, "
                  << c.dynamic << " referring to the table, " << c.encoder_stream
                  << " encoder-stream and " << c.decoder_stream << " decoder-stream octets\n";
    }
    return counts;
}

size_t mode_index(size_t capacity, size_t blocked, bool ack) {
    const std::vector<EncodeMode> modes = encode_modes();
    for (size_t i = 0; i < modes.size(); ++i)
        if (modes[i].capacity == capacity && modes[i].blocked == blocked && modes[i].ack == ack &&
            modes[i].max_capacity == kPeerCap)
            return i;
    return 0;
}

TEST(QpackEncodeCli, BuiltInRequestsRoundTrip) {
    const std::vector<HeaderList> lists = builtin_lists();
    const std::vector<EncodeCounts> c =
        expect_encode_all_modes(lists, qif_text(lists), "built-in requests");
    // The table is used: with acknowledgements even when no stream may
    // block, and without them when streams may.
    for (const size_t capacity : {256, 4096, 65536}) {
        EXPECT_GT(c[mode_index(capacity, 0, true)].dynamic, 0u) << capacity;
        EXPECT_GT(c[mode_index(capacity, 100, false)].dynamic, 0u) << capacity;
        EXPECT_GT(c[mode_index(capacity, 0, true)].decoder_stream, 0u) << capacity;
    }
    EXPECT_LT(c[mode_index(4096, 0, true)].section_octets,
              c[mode_index(0, 0, true)].section_octets);
}

TEST(QpackEncodeCli, QifFilesRoundTrip) {
    std::string dir;
    const std::vector<std::string> files = qif_files(&dir);
    if (files.empty()) {
        GTEST_SKIP() << "no .qif files at " << dir
                     << " (../shared absent? set QIFS_DIR to a directory of them)";
    }
    for (const std::string& f : files) {
        const std::vector<HeaderList> lists = read_qif(f);
        ASSERT_FALSE(lists.empty()) << f;
        const std::vector<EncodeCounts> c = expect_encode_all_modes(lists, qif_text(lists), f);
        EXPECT_GT(c[mode_index(4096, 0, true)].dynamic, 0u) << f;
        EXPECT_LT(c[mode_index(4096, 100, true)].section_octets,
                  c[mode_index(0, 100, true)].section_octets)
            << f;
    }
}

// run_encode() is encode() on the QIF text: comments and blank-line runs
// do not count, a failure names the section and writes nothing.
TEST(QpackEncodeCli, RunEncodeParsesQifAndNamesTheFailingSection) {
    namespace qif = hpack_tools::qif;
    qif::EncodeSettings s;
    std::vector<uint8_t> octets;
    std::ostringstream err;
    const std::string text = "# a comment\n:method\tGET\n:path\t/\n\n\n\nx-empty\n\n";
    ASSERT_EQ(qif::run_encode("in.qif", text, s, &octets, err), 0) << err.str();
    EXPECT_EQ(err.str(), "");
    std::vector<Record> records;
    ASSERT_EQ(split_records(octets, &records), "");
    EXPECT_EQ(check_layout(records, 2), "");
    std::ostringstream out, derr;
    EXPECT_EQ(qif::run_decode("out", std::string(octets.begin(), octets.end()), 4096, 100, out,
                              derr),
              0)
        << derr.str();
    EXPECT_EQ(out.str(), ":method\tGET\n:path\t/\n\nx-empty\t\n\n");

    // An empty name cannot be encoded: the second section fails.
    std::ostringstream err2;
    EXPECT_EQ(qif::run_encode("in.qif", "a\tb\n\n\tno name\n", s, &octets, err2), 1);
    EXPECT_TRUE(octets.empty());
    EXPECT_NE(err2.str().find("hpack: in.qif: section 2 (stream 2), encoding: "), std::string::npos)
        << err2.str();
    EXPECT_NE(err2.str().find("(error -32)"), std::string::npos) << err2.str();

    // No sections: an empty file.
    std::ostringstream err3;
    EXPECT_EQ(qif::run_encode("in.qif", "# nothing\n\n", s, &octets, err3), 0);
    EXPECT_TRUE(octets.empty());
}

}  // namespace
