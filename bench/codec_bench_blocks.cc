// codec_bench's header-block cases: request, response and corpus, each
// decoded and encoded, cold and warm, by ours and by nghttp2.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codec_bench.h"

namespace codec_bench {

// A browser navigation (Chrome 124 on Windows) with a query, a ~200-byte
// cookie and a referer.
const HeaderList kRequest = {
    {":method", "GET"},
    {":scheme", "https"},
    {":authority", "www.example.com"},
    {":path", "/search?q=hpack+header+compression&hl=en&start=10"},
    {"user-agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) "
                   "AppleWebKit/537.36 (KHTML, like Gecko) "
                   "Chrome/124.0.0.0 Safari/537.36"},
    {"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,"
               "*/*;q=0.8"},
    {"accept-language", "en-US,en;q=0.9"},
    {"accept-encoding", "gzip, deflate, br, zstd"},
    {"cookie", "_ga=GA1.2.1402749313.1700000000; "
               "_gid=GA1.2.803402375.1701234567; "
               "sessionid=6f1c2a9e8b7d4c3f9a1e2b3c4d5e6f70a1b2c3d4; "
               "csrftoken=Qm9vbGVhbk1hc2tlZFRva2VuMTIzNDU2Nzg5MA; "
               "theme=dark; lang=en-US"},
    {"referer", "https://www.example.com/"},
    {"sec-ch-ua", "\"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", "
                  "\"Not-A.Brand\";v=\"99\""},
};

// A typical HTML response from nginx behind a hardened configuration.
const HeaderList kResponse = {
    {":status", "200"},
    {"server", "nginx"},
    {"date", "Sat, 29 Nov 2025 18:57:13 GMT"},
    {"content-type", "text/html; charset=utf-8"},
    {"content-length", "48213"},
    {"cache-control", "private, max-age=0, must-revalidate"},
    {"strict-transport-security", "max-age=63072000; includeSubDomains; "
                                  "preload"},
    {"x-content-type-options", "nosniff"},
    {"x-frame-options", "SAMEORIGIN"},
    {"referrer-policy", "strict-origin-when-cross-origin"},
    {"content-security-policy", "default-src 'self'; script-src 'self' "
                                "https://cdn.example.com; img-src 'self' "
                                "data: https:; style-src 'self' "
                                "'unsafe-inline'; frame-ancestors 'none'"},
    {"vary", "Accept-Encoding"},
};

namespace {

// The wire of a stream that a warmed encoder keeps producing, and decoders
// left in the state that wire was encoded against.
//
// Each pass encodes the whole stream with one encoder and feeds it to both
// decoders (verifying every block).  Once the passes repeat, the encoder
// has reached a steady state: a block that inserts nothing leaves the table
// as it was, and a stream that inserts more than the table holds leaves a
// table made only of what the passes themselves inserted, so decoding the
// same wire again is valid again.  The steady state may be a cycle of a few
// passes rather than one (our encoder refreshes an entry at its 12th
// two-octet reference, which a long stream on a small table meets every
// few passes): the wire is then the cycle's passes in order, found twice in
// a row before it is taken.  The decoders are verified again after timing.
struct WarmWire {
    std::vector<Bytes> wire;   // cycle passes of the stream
    size_t             cycle = 1;
    OursDecoder        ours;
    NgInflater         ng;
};

template <class Encode>
std::unique_ptr<WarmWire> warm_wire(const Stream &s, Encode encode,
                                    const std::string &what)
{
    auto w = std::make_unique<WarmWire>();
    w->ours.reset(ours_decoder());
    w->ng.reset(ng_inflater());
    constexpr size_t kMaxCycle = 16;
    std::vector<std::vector<Bytes>> passes;
    size_t cycle = 0;
    for (int pass = 0; pass < 64 && cycle == 0; pass++) {
        std::vector<Bytes> cur;
        const uint64_t ins = insertions(w->ours.get());
        for (const auto &b : s) {
            cur.push_back(encode(*b));
            expect_headers(b->headers, ours_decode_list(w->ours.get(),
                                                        cur.back()),
                           what + ", our decoder, warm pass");
            expect_headers(b->headers, ng_decode_list(w->ng.get(),
                                                      cur.back()),
                           what + ", nghttp2 decoder, warm pass");
        }
        const bool inserts = insertions(w->ours.get()) != ins;
        passes.push_back(std::move(cur));
        // the shortest cycle whose passes came twice in a row, the first
        // time after one more pass of it (three equal passes for a fixed
        // point)
        const size_t n = passes.size();
        for (size_t c = 1; c <= kMaxCycle && cycle == 0; c++) {
            const size_t need = c == 1 ? 3 : 2 * c;
            bool repeats = n >= need;
            for (size_t j = 0; repeats && j + c < need; j++) {
                repeats = passes[n - 1 - j] == passes[n - 1 - j - c];
            }
            if (repeats) {
                expect(c > 1 || !inserts || s.size() > 1,
                       what + ": a single steady block still inserts");
                cycle = c;
            }
        }
    }
    expect(cycle != 0, what + ": the warm encoder never reached a steady "
                              "state of at most 16 passes");
    for (size_t i = passes.size() - cycle; i < passes.size(); i++) {
        for (Bytes &b : passes[i]) {
            w->wire.push_back(std::move(b));
        }
    }
    w->cycle = cycle;
    return w;
}

double total_size(const std::vector<Bytes> &v)
{
    double n = 0;
    for (const Bytes &b : v) {
        n += static_cast<double>(b.size());
    }
    return n;
}

size_t max_bound(const Stream &s)
{
    OursEncoder e(ours_encoder());
    NgDeflater d(ng_deflater());
    size_t m = 0;
    for (const auto &b : s) {
        m = std::max(m, hpack_tools::encode_room(b->ours.data(),
                                                 b->ours.size()));
        m = std::max(m, nghttp2_hd_deflate_bound(d.get(), b->ng.data(),
                                                 b->ng.size()));
    }
    return m;
}

}  // namespace

// request, response, corpus: decode and encode, cold and warm.
void add_stream_cases(const std::string &group,
                      std::shared_ptr<const Stream> s, bool ng_wire_variant)
{
    double blocks = static_cast<double>(s->size());
    double plain = 0;
    for (const auto &b : *s) {
        plain += static_cast<double>(b->plain);
    }
    auto out = std::make_shared<Bytes>(max_bound(*s));

    // COLD wire: each block as the first of a fresh encoder.  Both
    // encoders' cold output is verified with both decoders; the decoders
    // are timed on ours.
    auto cold = std::make_shared<std::vector<Bytes>>();
    std::vector<Bytes> ng_cold;
    for (const auto &b : *s) {
        OursEncoder e(ours_encoder());
        NgDeflater d(ng_deflater());
        cold->push_back(ours_encode_bytes(e.get(), *b));
        ng_cold.push_back(ng_encode_bytes(d.get(), *b));
        for (const Bytes *w : {&cold->back(), &ng_cold.back()}) {
            OursDecoder od(ours_decoder());
            NgInflater ni(ng_inflater());
            expect_headers(b->headers, ours_decode_list(od.get(), *w),
                           group + " cold, our decoder");
            expect_headers(b->headers, ng_decode_list(ni.get(), *w),
                           group + " cold, nghttp2 decoder");
        }
    }

    add_case(group + "/decode/cold/ours", blocks, total_size(*cold), plain,
             [cold] {
                 uint64_t sink = 0;
                 for (const Bytes &w : *cold) {
                     hpack_decoder_t *d = ours_decoder();
                     sink += ours_decode(d, w.data(), w.size());
                     hpack_decoder_destroy(d);
                 }
                 return sink;
             });
    add_case(group + "/decode/cold/nghttp2", blocks, total_size(*cold),
             plain, [cold] {
                 uint64_t sink = 0;
                 for (const Bytes &w : *cold) {
                     nghttp2_hd_inflater *d = ng_inflater();
                     sink += ng_decode(d, w.data(), w.size());
                     nghttp2_hd_inflate_del(d);
                 }
                 return sink;
             });

    // WARM decode: the steady-state wire of our warmed encoder, and (for
    // the request) of nghttp2's, which leaves :path a literal.
    std::vector<std::pair<std::string, std::shared_ptr<WarmWire>>> warm;
    {
        // at a fixed address: the encoder's hash seed, and with it which
        // recurring fields its history keeps, is then the same from run to
        // run, and so is whether (and how soon) its passes repeat; freed
        // at once, so the arena is taken anew for each group
        static Arena *arena = new Arena(kWarmWireArenaBase, 16u << 20);
        OursEncoder e(ours_encoder(arena->allocator(0)));
        warm.emplace_back(group + "/decode/warm",
                          warm_wire(*s, [&e](const Block &b) {
                              return ours_encode_bytes(e.get(), b);
                          }, group + " (our encoder)"));
    }
    if (ng_wire_variant) {
        NgDeflater d(ng_deflater());
        warm.emplace_back(group + "/decode-ngwire/warm",
                          warm_wire(*s, [&d](const Block &b) {
                              return ng_encode_bytes(d.get(), b);
                          }, group + " (nghttp2 encoder)"));
    }
    for (auto &[name, w] : warm) {
        auto post_ours = [s, w, name] {
            for (size_t i = 0; i < w->wire.size(); i++) {
                expect_headers((*s)[i % s->size()]->headers,
                               ours_decode_list(w->ours.get(), w->wire[i]),
                               name + ", our decoder after timing");
            }
        };
        auto post_ng = [s, w, name] {
            for (size_t i = 0; i < w->wire.size(); i++) {
                expect_headers((*s)[i % s->size()]->headers,
                               ng_decode_list(w->ng.get(), w->wire[i]),
                               name + ", nghttp2 decoder after timing");
            }
        };
        // a cycle of passes is timed whole: blocks and plain octets per
        // iteration are the cycle's
        const double c = static_cast<double>(w->cycle);
        add_case(name + "/ours", blocks * c, total_size(w->wire), plain * c,
                 [w] {
                     uint64_t sink = 0;
                     for (const Bytes &b : w->wire) {
                         sink += ours_decode(w->ours.get(), b.data(),
                                             b.size());
                     }
                     return sink;
                 }, post_ours);
        add_case(name + "/nghttp2", blocks * c, total_size(w->wire), plain * c,
                 [w] {
                     uint64_t sink = 0;
                     for (const Bytes &b : w->wire) {
                         sink += ng_decode(w->ng.get(), b.data(), b.size());
                     }
                     return sink;
                 }, post_ng);
    }

    // Encode, cold: create, encode, destroy per block.
    double ng_cold_size = total_size(ng_cold);
    add_case(group + "/encode/cold/ours", blocks, total_size(*cold), plain,
             [s, out] {
                 uint64_t sink = 0;
                 for (const auto &b : *s) {
                     hpack_encoder_t *e = ours_encoder();
                     sink += ours_encode(e, *b, out->data(), out->size());
                     hpack_encoder_destroy(e);
                 }
                 return sink;
             });
    add_case(group + "/encode/cold/nghttp2", blocks, ng_cold_size, plain,
             [s, out] {
                 uint64_t sink = 0;
                 for (const auto &b : *s) {
                     nghttp2_hd_deflater *d = ng_deflater();
                     sink += ng_encode(d, *b, out->data(), out->size());
                     nghttp2_hd_deflate_del(d);
                 }
                 return sink;
             });

    // Encode, warm: one long-lived encoder, warmed by two passes (its
    // steady output was verified above by warm_wire()).
    std::shared_ptr<hpack_encoder_t> oe(ours_encoder(), hpack_encoder_destroy);
    std::shared_ptr<nghttp2_hd_deflater> nd(ng_deflater(),
                                            nghttp2_hd_deflate_del);
    double ours_warm = 0, ng_warm = 0;
    for (int pass = 0; pass < 3; pass++) {
        ours_warm = ng_warm = 0;
        for (const auto &b : *s) {
            ours_warm += static_cast<double>(
                ours_encode(oe.get(), *b, out->data(), out->size()));
            ng_warm += static_cast<double>(
                ng_encode(nd.get(), *b, out->data(), out->size()));
        }
    }
    add_case(group + "/encode/warm/ours", blocks, ours_warm, plain,
             [s, out, oe] {
                 uint64_t sink = 0;
                 for (const auto &b : *s) {
                     sink += ours_encode(oe.get(), *b, out->data(),
                                         out->size());
                 }
                 return sink;
             });
    add_case(group + "/encode/warm/nghttp2", blocks, ng_warm, plain,
             [s, out, nd] {
                 uint64_t sink = 0;
                 for (const auto &b : *s) {
                     sink += ng_encode(nd.get(), *b, out->data(),
                                       out->size());
                 }
                 return sink;
             });
}

std::shared_ptr<const Stream> single(const HeaderList &h)
{
    auto s = std::make_shared<Stream>();
    s->push_back(std::make_unique<Block>(h));
    return s;
}

std::string g_corpus_note = "not selected";

bool add_corpus_cases(const std::string &dir_flag)
{
    std::string dir = dir_flag;
    std::string tried = dir_flag;
    if (dir.empty()) {
        dir = story::corpus_dir(&tried);
    } else if (story::story_files(dir + "/raw-data").empty()) {
        dir.clear();
    }
    std::vector<std::string> files;
    if (!dir.empty()) {
        files = story::story_files(dir + "/raw-data");
    }
    if (files.empty()) {
        g_corpus_note = "skipped: corpus not found (no "
                        "raw-data/story_*.json under " + tried + ")";
        std::fprintf(stderr, "codec_bench: corpus/* %s; set --corpus=DIR "
                     "or HPACK_TEST_CASE_DIR\n", g_corpus_note.c_str());
        return false;
    }
    auto s = std::make_shared<Stream>();
    size_t fields = 0;
    for (const std::string &f : files) {
        story::Story st;
        std::string err;
        if (!story::load(f, &st, &err)) {
            die("corpus: " + err);
        }
        for (const story::Case &c : st.cases) {
            s->push_back(std::make_unique<Block>(c.headers));
            fields += c.headers.size();
        }
    }
    g_corpus_note = std::to_string(files.size()) + " stories from " + dir
                    + "/raw-data, " + std::to_string(s->size()) + " blocks, "
                    + std::to_string(fields) + " fields, one stream";
    std::fprintf(stderr, "codec_bench: corpus: %s\n", g_corpus_note.c_str());
    add_stream_cases("corpus", s, false);
    return true;
}

}  // namespace codec_bench
