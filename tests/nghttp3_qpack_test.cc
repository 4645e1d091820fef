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

#include <gtest/gtest.h>

#include <nghttp3/nghttp3.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "corpus.h"
#include "qpack.h"
#include "story.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

// A deterministic generator for the splits and the cancellations.
struct Random {
    uint64_t s;
    uint32_t next(uint32_t n) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        return static_cast<uint32_t>((s >> 33) % n);
    }
};

// The names nghttp3 is told never to index: our decoder must report each
// as HPACK_REP_NEVER_INDEXED.
bool sensitive(const std::string& name) { return name == "authorization" || name == "cookie"; }

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
std::vector<HeaderList> builtin_lists() {
    std::vector<HeaderList> lists;
    const std::string ua =
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0.0.0 Safari/537.36";
    for (int i = 0; i < 40; ++i) {
        HeaderList l = {{":method", i % 7 == 3 ? "POST" : "GET"},
                        {":scheme", "https"},
                        {":authority", i % 5 == 4 ? "static.example.com" : "www.example.com"},
                        {":path", "/assets/" + std::to_string(i) + ".js?v=" +
                                      std::to_string(i * 7)},
                        {"user-agent", ua},
                        {"accept", "*/*"},
                        {"accept-encoding", "gzip, deflate, br"},
                        {"accept-language", "en-US,en;q=0.9"},
                        {"cookie", "session=" + std::string(40, static_cast<char>('a' + i % 3))},
                        {"referer", "https://www.example.com/"}};
        if (i % 4 == 1) l.emplace_back("authorization", "Bearer token" + std::to_string(i));
        if (i % 9 == 2) l.emplace_back("x-large", std::string(300, 'z'));
        if (i % 6 == 5) l.emplace_back("x-empty", "");
        lists.push_back(std::move(l));
    }
    return lists;
}

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

// The request lists of a .qif file: name TAB value per line, a blank line
// between lists, '#' lines are comments.
std::vector<HeaderList> read_qif(const std::string& path) {
    std::ifstream in(path);
    std::vector<HeaderList> lists;
    HeaderList cur;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line[0] == '#') continue;
        if (line.empty()) {
            if (!cur.empty()) lists.push_back(std::move(cur));
            cur.clear();
            continue;
        }
        const size_t tab = line.find('\t');
        if (tab == std::string::npos)
            cur.emplace_back(line, "");
        else
            cur.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
    if (!cur.empty()) lists.push_back(std::move(cur));
    return lists;
}

TEST(Nghttp3Qpack, QifRequestListsDecodeAtEveryCapacity) {
    const char* env = getenv("QIFS_DIR");
    const std::string dir = env && *env ? env : "../shared/data/qifs";
    std::error_code ec;
    std::vector<std::string> files;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (it->path().extension() == ".qif") files.push_back(it->path().string());
    }
    if (files.empty()) {
        GTEST_SKIP() << "no .qif files at " << dir << " (set QIFS_DIR to a directory of them)";
    }
    std::sort(files.begin(), files.end());
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
    namespace story = hpack_tools::story;
    const std::vector<std::string> files = story::story_files(corpus + "/raw-data");
    ASSERT_FALSE(files.empty()) << "no stories in " << corpus << "/raw-data";
    std::vector<Counts> totals;
    for (const std::string& f : files) {
        story::Story s;
        std::string err;
        ASSERT_TRUE(story::load(f, &s, &err)) << err;
        std::vector<HeaderList> lists;
        for (const story::Case& c : s.cases) {
            HeaderList l;
            for (const story::Header& h : c.headers) l.emplace_back(h.name, h.value);
            lists.push_back(std::move(l));
        }
        run_all_modes(lists, f, &totals);
    }
    print_totals("raw-data", totals);
}

}  // namespace
