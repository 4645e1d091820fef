// codec_bench: our HPACK codec against libnghttp2 and nginx's stock Huffman
// functions, side by side in one process (make bench-codec).
//
// Cases (every name is group/operation/mode/implementation):
//   request, response   one typical header block, decoded and encoded
//   corpus              hpack-test-case raw-data stories as one stream
//   huffman             4 KiB of header values, hex digits, random printable
//
// COLD: a fresh context per block (create, code it, destroy).  WARM: one
// long-lived context; decode then takes the steady-state wire the warmed
// encoder produced, which leaves the decoder's table as it found it (see
// warm_wire()), so the same bytes stay valid for every iteration.
//
// Nothing is timed before it was verified: every wire decodes, with our
// decoder and with nghttp2's, to exactly its header list; every Huffman
// output equals the input and nginx's output equals ours.  Warm decoders
// are verified again after timing.  A mismatch ends the run with a message.
//
// Without Google Benchmark: --callgrind-driver=GROUP[,GROUP] runs each case
// of those groups (whose name contains --callgrind-filter's text, if given)
// --callgrind-iters times between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT(case), for instruction counts per operation
// (make bench-codec-callgrind).
//
// --paired=GROUP[,GROUP] times each case X/ours against X/nginx or
// X/nghttp2 in alternating slices and writes the fastest slices and the
// per-pair ratios to --paired-out's JSON (make bench-codec; see "paired
// slices" below).

#include <benchmark/benchmark.h>
#include <nghttp2/nghttp2.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "hpack.h"
#include "huffman.h"
#include "story.h"

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

// The same two nginx files compiled a second time at -O (nginx's default
// optimization), renamed on the command line (bench/bench.mk).
extern "C" {
ngx_int_t ngx_http_huff_decode_O1(u_char *state, u_char *src, size_t len,
    u_char **dst, ngx_uint_t last, ngx_log_t *log);
size_t ngx_http_huff_encode_O1(u_char *src, size_t len, u_char *dst,
    ngx_uint_t lower);
}

namespace {

namespace story = hpack_tools::story;
using story::HeaderList;
using Bytes = std::vector<uint8_t>;

[[noreturn]] void die(const std::string &what)
{
    std::fprintf(stderr, "codec_bench: %s\n", what.c_str());
    std::fflush(stderr);
    std::exit(1);
}

void expect(bool ok, const std::string &what)
{
    if (!ok) {
        die("verification failed: " + what);
    }
}

std::string hex_prefix(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n && i < 16; i++) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return n > 16 ? s + "..." : s;
}


// ------------------------------------------------------------------- data

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

// More realistic values for the Huffman text (with those of the two blocks).
const char *const kMoreValues[] = {
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "/static/js/main.7c9f2b1e.chunk.js",
    "/api/v2/users/84213/orders?status=shipped&page=3&per_page=50",
    "application/json",
    "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
    "W/\"5e8b-18c2f1a9d40\"",
    "Tue, 14 May 2024 09:21:37 GMT",
    "public, max-age=31536000, immutable",
    "bytes",
    "keep-alive",
    "https://cdn.example.com/assets/fonts/inter-var.woff2",
    "no-cache",
    "same-origin",
    "cors",
    "empty",
    "?0",
    "\"Windows\"",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "f3a9c2e1-7b4d-4e8a-9c2f-1d6e5b4a3c21",
    "text/css,*/*;q=0.1",
    "Origin, Accept-Encoding",
    "max-age=600",
    "gzip",
    "sid=31d4d96e407aad42; Path=/; Secure; HttpOnly; SameSite=Lax",
};

constexpr size_t kHuffmanInputSize = 4096;

std::string header_values_text()
{
    std::string all;
    for (const HeaderList *list : {&kRequest, &kResponse}) {
        for (const story::Header &h : *list) {
            all += h.value;
        }
    }
    for (const char *v : kMoreValues) {
        all += v;
    }
    std::string s;
    while (s.size() < kHuffmanInputSize) {
        s += all;
    }
    s.resize(kHuffmanInputSize);
    return s;
}

// Fixed seeds; mt19937's output is specified by the standard, and the
// reduction below does not depend on the library's distributions.
std::string random_text(const char *alphabet, size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::string s(kHuffmanInputSize, ' ');
    for (char &c : s) {
        c = alphabet[rng() % n];
    }
    return s;
}

std::string hex_text()
{
    return random_text("0123456789abcdef", 16, 20250101);
}

std::string printable_text()
{
    char alphabet[95];
    for (int i = 0; i < 95; i++) {
        alphabet[i] = static_cast<char>(0x20 + i);
    }
    return random_text(alphabet, 95, 20250102);
}


// -------------------------------------------------------- codec adapters

// A header block in both libraries' input forms (pointing into headers).
struct Block {
    explicit Block(const HeaderList &h) : headers(h)
    {
        ours = story::to_hpack(headers);
        for (const story::Header &x : headers) {
            nghttp2_nv nv;
            nv.name = reinterpret_cast<uint8_t *>(
                const_cast<char *>(x.name.data()));
            nv.namelen = x.name.size();
            nv.value = reinterpret_cast<uint8_t *>(
                const_cast<char *>(x.value.data()));
            nv.valuelen = x.value.size();
            nv.flags = NGHTTP2_NV_FLAG_NONE;
            ng.push_back(nv);
        }
        for (const story::Header &x : headers) {
            plain += x.name.size() + x.value.size();
        }
    }

    Block(const Block &) = delete;

    HeaderList                  headers;
    std::vector<hpack_header_t> ours;
    std::vector<nghttp2_nv>     ng;
    size_t                      plain = 0;
};

using Stream = std::vector<std::unique_ptr<Block>>;

// The timed operations: plain calls, each field touched once (lengths and
// first octets) as a host would, so no library can skip work.

// Ours decodes with hpack_decode_fields(), a batch of fields per call, as
// the nginx module does; nghttp2 has no such call.
inline uint64_t ours_decode(hpack_decoder_t *dec, const uint8_t *in, size_t n)
{
    const uint8_t *pos = in;
    const uint8_t *end = in + n;
    uint64_t sink = 0;
    hpack_field_t f[16];
    hpack_decode_begin(dec);
    for (;;) {
        size_t got;
        int rc = hpack_decode_fields(dec, &pos, end, 1, f, 16, &got);
        for (size_t i = 0; i < got; i++) {
            sink += f[i].name_len + f[i].value_len + f[i].name[0]
                    + (f[i].value_len ? f[i].value[0] : 0);
        }
        if (rc == HPACK_OK) {
            continue;
        }
        if (rc == HPACK_BLOCK_END) {
            return sink;
        }
        die(std::string("our decoder failed in a timed run: ")
            + hpack_strerror(rc));
    }
}

inline uint64_t ng_decode(nghttp2_hd_inflater *inf, const uint8_t *in,
                          size_t n)
{
    uint64_t sink = 0;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, n, 1);
        if (rv < 0) {
            die(std::string("nghttp2 decoder failed in a timed run: ")
                + nghttp2_strerror(static_cast<int>(rv)));
        }
        in += rv;
        n -= static_cast<size_t>(rv);
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            sink += nv.namelen + nv.valuelen + nv.name[0]
                    + (nv.valuelen ? nv.value[0] : 0);
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return sink;
        }
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && n == 0) {
            die("nghttp2 decoder: block ended without FINAL");
        }
    }
}

inline size_t ours_encode(hpack_encoder_t *enc, const Block &b, uint8_t *out,
                          size_t cap)
{
    size_t len = 0;
    int rc = hpack_encode(enc, b.ours.data(), b.ours.size(), out, cap, &len);
    if (rc != HPACK_OK) {
        die(std::string("our encoder failed: ") + hpack_strerror(rc));
    }
    return len;
}

inline size_t ng_encode(nghttp2_hd_deflater *def, const Block &b,
                        uint8_t *out, size_t cap)
{
    ssize_t rv = nghttp2_hd_deflate_hd(def, out, cap, b.ng.data(),
                                       b.ng.size());
    if (rv < 0) {
        die(std::string("nghttp2 encoder failed: ")
            + nghttp2_strerror(static_cast<int>(rv)));
    }
    return static_cast<size_t>(rv);
}

hpack_decoder_t *ours_decoder()
{
    hpack_decoder_t *d = hpack_decoder_create(nullptr, 4096);
    if (d == nullptr) {
        die("hpack_decoder_create failed");
    }
    return d;
}

hpack_encoder_t *ours_encoder()
{
    hpack_encoder_t *e = hpack_encoder_create(nullptr, 4096, nullptr);
    if (e == nullptr) {
        die("hpack_encoder_create failed");
    }
    return e;
}

nghttp2_hd_inflater *ng_inflater()
{
    nghttp2_hd_inflater *i = nullptr;
    if (nghttp2_hd_inflate_new(&i) != 0) {
        die("nghttp2_hd_inflate_new failed");
    }
    return i;
}

nghttp2_hd_deflater *ng_deflater()
{
    nghttp2_hd_deflater *d = nullptr;
    if (nghttp2_hd_deflate_new(&d, 4096) != 0) {
        die("nghttp2_hd_deflate_new failed");
    }
    return d;
}

struct OursDecoderDel {
    void operator()(hpack_decoder_t *p) const { hpack_decoder_destroy(p); }
};
struct OursEncoderDel {
    void operator()(hpack_encoder_t *p) const { hpack_encoder_destroy(p); }
};
struct NgInflaterDel {
    void operator()(nghttp2_hd_inflater *p) const { nghttp2_hd_inflate_del(p); }
};
struct NgDeflaterDel {
    void operator()(nghttp2_hd_deflater *p) const { nghttp2_hd_deflate_del(p); }
};
using OursDecoder = std::unique_ptr<hpack_decoder_t, OursDecoderDel>;
using OursEncoder = std::unique_ptr<hpack_encoder_t, OursEncoderDel>;
using NgInflater = std::unique_ptr<nghttp2_hd_inflater, NgInflaterDel>;
using NgDeflater = std::unique_ptr<nghttp2_hd_deflater, NgDeflaterDel>;

// Untimed, collecting forms for verification.

HeaderList ours_decode_list(hpack_decoder_t *dec, const Bytes &in)
{
    HeaderList out;
    int rc = story::decode_block(dec, in, &out);
    if (rc != HPACK_OK) {
        die(std::string("verification failed: our decoder: ")
            + hpack_strerror(rc) + " on " + hex_prefix(in.data(), in.size()));
    }
    return out;
}

HeaderList ng_decode_list(nghttp2_hd_inflater *inf, const Bytes &in)
{
    HeaderList out;
    const uint8_t *p = in.data();
    size_t n = in.size();
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, n, 1);
        if (rv < 0) {
            die(std::string("verification failed: nghttp2 decoder: ")
                + nghttp2_strerror(static_cast<int>(rv)));
        }
        p += rv;
        n -= static_cast<size_t>(rv);
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            out.push_back({std::string(reinterpret_cast<char *>(nv.name),
                                       nv.namelen),
                           std::string(reinterpret_cast<char *>(nv.value),
                                       nv.valuelen)});
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return out;
        }
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && n == 0) {
            die("verification failed: nghttp2 decoder: no FINAL");
        }
    }
}

Bytes ours_encode_bytes(hpack_encoder_t *enc, const Block &b)
{
    Bytes out(hpack_encode_bound(enc, b.ours.data(), b.ours.size()));
    out.resize(ours_encode(enc, b, out.data(), out.size()));
    return out;
}

Bytes ng_encode_bytes(nghttp2_hd_deflater *def, const Block &b)
{
    Bytes out(nghttp2_hd_deflate_bound(def, b.ng.data(), b.ng.size()));
    out.resize(ng_encode(def, b, out.data(), out.size()));
    return out;
}

void expect_headers(const HeaderList &want, const HeaderList &got,
                    const std::string &what)
{
    if (want != got) {
        die("verification failed: " + what + ": "
            + story::diff(want, got));
    }
}

uint64_t insertions(const hpack_decoder_t *dec)
{
    hpack_stats_t st;
    hpack_decoder_stats(dec, &st);
    return st.insertions;
}


// ------------------------------------------------------------------ cases

struct Case {
    std::string                name;
    std::function<uint64_t()>  op;
    std::function<void()>      after;     // verification after timing
    double                     blocks = 0;
    double                     wire_bytes = 0;
    double                     plain_bytes = 0;
};

std::vector<Case> g_cases;

void add_case(const std::string &name, double blocks, double wire,
              double plain, std::function<uint64_t()> op,
              std::function<void()> after = nullptr)
{
    Case c;
    c.name = name;
    c.op = std::move(op);
    c.after = std::move(after);
    c.blocks = blocks;
    c.wire_bytes = wire;
    c.plain_bytes = plain;
    g_cases.push_back(std::move(c));
}

// The wire of a stream that a warmed encoder keeps producing, and decoders
// left in the state that wire was encoded against.
//
// Each pass encodes the whole stream with one encoder and feeds it to both
// decoders (verifying every block).  Once two consecutive passes give the
// same bytes the encoder has reached a fixed point: a block that inserts
// nothing leaves the table as it was, and a stream that inserts more than
// the table holds leaves a table made only of what the pass itself
// inserted, so decoding the same wire again is valid again.  A third equal
// pass confirms it; the decoders are verified again after timing.
struct WarmWire {
    std::vector<Bytes> wire;
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
    std::vector<Bytes> prev;
    int equal = 0;
    for (int pass = 0; pass < 32 && equal < 2; pass++) {
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
        if (cur == prev) {
            expect(!inserts || s.size() > 1,
                   what + ": a single steady block still inserts");
            equal++;
        } else {
            equal = 0;
        }
        prev = std::move(cur);
    }
    expect(equal == 2, what + ": the warm encoder never reached a fixed "
                              "point");
    w->wire = std::move(prev);
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
        m = std::max(m, hpack_encode_bound(e.get(), b->ours.data(),
                                           b->ours.size()));
        m = std::max(m, nghttp2_hd_deflate_bound(d.get(), b->ng.data(),
                                                 b->ng.size()));
    }
    return m;
}

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
        OursEncoder e(ours_encoder());
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
            for (size_t i = 0; i < s->size(); i++) {
                expect_headers((*s)[i]->headers,
                               ours_decode_list(w->ours.get(), w->wire[i]),
                               name + ", our decoder after timing");
            }
        };
        auto post_ng = [s, w, name] {
            for (size_t i = 0; i < s->size(); i++) {
                expect_headers((*s)[i]->headers,
                               ng_decode_list(w->ng.get(), w->wire[i]),
                               name + ", nghttp2 decoder after timing");
            }
        };
        add_case(name + "/ours", blocks, total_size(w->wire), plain,
                 [w] {
                     uint64_t sink = 0;
                     for (const Bytes &b : w->wire) {
                         sink += ours_decode(w->ours.get(), b.data(),
                                             b.size());
                     }
                     return sink;
                 }, post_ours);
        add_case(name + "/nghttp2", blocks, total_size(w->wire), plain,
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


// --------------------------------------------------------------- Huffman

// One literal without indexing, name user-agent (static index 58), value
// s in Huffman form: what nghttp2 and our encoder both produce for a value
// too large to index.
Bytes huffman_literal_block(const Bytes &coded)
{
    Bytes b = {0x0f, 0x2b};
    size_t n = coded.size();
    if (n < 127) {
        b.push_back(static_cast<uint8_t>(0x80 | n));
    } else {
        b.push_back(0xff);
        n -= 127;
        while (n >= 128) {
            b.push_back(static_cast<uint8_t>(0x80 | (n & 0x7f)));
            n >>= 7;
        }
        b.push_back(static_cast<uint8_t>(n));
    }
    b.insert(b.end(), coded.begin(), coded.end());
    return b;
}

struct HuffmanInput {
    std::string                     text;
    Bytes                           coded;
    Bytes                           block;
    std::unique_ptr<Block>          header;    // user-agent: text
    mutable Bytes                   dst;
    OursDecoder                     ours_dec;
    NgInflater                      ng_inf;
    OursEncoder                     ours_enc;
    NgDeflater                      ng_def;
};

using NgxDecode = ngx_int_t (*)(u_char *, u_char *, size_t, u_char **,
                                ngx_uint_t, ngx_log_t *);
using NgxEncode = size_t (*)(u_char *, size_t, u_char *, ngx_uint_t);

struct NgxVariant {
    const char *name;
    NgxDecode   decode;
    NgxEncode   encode;
};

const NgxVariant kNgx[] = {
    {"nginx", ngx_http_huff_decode, ngx_http_huff_encode},
    {"nginx-O1", ngx_http_huff_decode_O1, ngx_http_huff_encode_O1},
};

void add_huffman_cases(const std::string &label, const std::string &text)
{
    auto in = std::make_shared<HuffmanInput>();
    const std::string what = "huffman " + label;
    in->text = text;
    const auto *src = reinterpret_cast<const uint8_t *>(in->text.data());
    const size_t n = in->text.size();

    in->coded.resize(hpack_huffman_encoded_len(src, n));
    expect(hpack_huffman_encode(src, n, in->coded.data()) == in->coded.size(),
           what + ": hpack_huffman_encode length");
    const size_t cap = std::max(hpack_huffman_decode_capacity(
                                    in->coded.size()),
                                in->coded.size() * 8 / 5 + 1);
    in->dst.assign(std::max(cap, n + 64), 0);

    ptrdiff_t got = hpack_huffman_decode(in->coded.data(), in->coded.size(),
                                         in->dst.data());
    expect(got == static_cast<ptrdiff_t>(n)
           && std::memcmp(in->dst.data(), src, n) == 0,
           what + ": our decode differs from the input");

    for (const NgxVariant &v : kNgx) {
        Bytes d(cap, 0);
        u_char state = 0;
        u_char *p = d.data();
        ngx_int_t rc = v.decode(&state, in->coded.data(), in->coded.size(),
                                &p, 1, nullptr);
        expect(rc == NGX_OK && p - d.data() == got
               && std::memcmp(d.data(), in->dst.data(), n) == 0,
               what + ": " + v.name + " decode differs from ours");
        Bytes e(n, 0);
        size_t el = v.encode(const_cast<u_char *>(src), n, e.data(), 0);
        expect(el == in->coded.size()
               && std::memcmp(e.data(), in->coded.data(), el) == 0,
               what + ": " + v.name + " encode differs from ours");
    }

    in->block = huffman_literal_block(in->coded);
    in->header = std::make_unique<Block>(HeaderList{{"user-agent", text}});
    in->ours_dec.reset(ours_decoder());
    in->ng_inf.reset(ng_inflater());
    in->ours_enc.reset(ours_encoder());
    in->ng_def.reset(ng_deflater());
    for (int i = 0; i < 2; i++) {
        expect_headers(in->header->headers,
                       ours_decode_list(in->ours_dec.get(), in->block),
                       what + ": our decoder, one-literal block");
        expect_headers(in->header->headers,
                       ng_decode_list(in->ng_inf.get(), in->block),
                       what + ": nghttp2 decoder, one-literal block");
        expect(ours_encode_bytes(in->ours_enc.get(), *in->header)
                   == in->block,
               what + ": our encoder's one-literal block");
        expect(ng_encode_bytes(in->ng_def.get(), *in->header) == in->block,
               what + ": nghttp2's one-literal block");
    }
    expect(hpack_decoder_table_entries(in->ours_dec.get()) == 0,
           what + ": the one-literal block inserted");

    const double coded = static_cast<double>(in->coded.size());
    const double plain = static_cast<double>(n);
    const std::string dec = "huffman/decode/" + label + "/";
    const std::string enc = "huffman/encode/" + label + "/";

    add_case(dec + "ours", 0, coded, plain, [in] {
        return static_cast<uint64_t>(hpack_huffman_decode(
            in->coded.data(), in->coded.size(), in->dst.data()));
    });
    for (const NgxVariant &v : kNgx) {
        NgxDecode fn = v.decode;
        add_case(dec + v.name, 0, coded, plain, [in, fn] {
            u_char state = 0;
            u_char *p = in->dst.data();
            if (fn(&state, in->coded.data(), in->coded.size(), &p, 1,
                   nullptr) != NGX_OK)
            {
                die("nginx decode failed in a timed run");
            }
            return static_cast<uint64_t>(p - in->dst.data());
        });
    }
    add_case(dec + "ours-block", 1, coded, plain, [in] {
        return ours_decode(in->ours_dec.get(), in->block.data(),
                           in->block.size());
    });
    add_case(dec + "nghttp2-block", 1, coded, plain, [in] {
        return ng_decode(in->ng_inf.get(), in->block.data(),
                         in->block.size());
    });

    add_case(enc + "ours", 0, coded, plain, [in, src, n] {
        return static_cast<uint64_t>(hpack_huffman_encode(src, n,
                                                          in->dst.data()));
    });
    add_case(enc + "ours-string", 0, coded, plain, [in, src, n] {
        return static_cast<uint64_t>(hpack_string_encode(src, n,
                                                         in->dst.data()));
    });
    for (const NgxVariant &v : kNgx) {
        NgxEncode fn = v.encode;
        add_case(enc + v.name, 0, coded, plain, [in, src, n, fn] {
            return static_cast<uint64_t>(fn(const_cast<u_char *>(src), n,
                                            in->dst.data(), 0));
        });
    }
    add_case(enc + "ours-block", 1, coded, plain, [in] {
        return static_cast<uint64_t>(ours_encode(
            in->ours_enc.get(), *in->header, in->dst.data(),
            in->dst.size()));
    });
    add_case(enc + "nghttp2-block", 1, coded, plain, [in] {
        return static_cast<uint64_t>(ng_encode(
            in->ng_def.get(), *in->header, in->dst.data(), in->dst.size()));
    });
}


// ---------------------------------------------------------------- drivers

void build_cases(const std::vector<std::string> &groups,
                 const std::string &corpus)
{
    auto want = [&groups](const char *g) {
        return groups.empty()
               || std::find(groups.begin(), groups.end(), g) != groups.end();
    };
    if (want("request")) {
        add_stream_cases("request", single(kRequest), true);
    }
    if (want("response")) {
        add_stream_cases("response", single(kResponse), false);
    }
    if (want("corpus")) {
        add_corpus_cases(corpus);
    }
    if (want("huffman")) {
        add_huffman_cases("values", header_values_text());
        add_huffman_cases("hex", hex_text());
        add_huffman_cases("printable", printable_text());
    }
}

void run_benchmark(benchmark::State &state, const Case &c)
{
    uint64_t sink = 0;
    for (auto _ : state) {
        sink += c.op();
    }
    benchmark::DoNotOptimize(sink);
    if (c.after) {
        c.after();
    }
    // Per operation, constant: the report divides times by them.
    state.counters["blocks"] = c.blocks;
    state.counters["wire_B"] = c.wire_bytes;
    state.counters["plain_B"] = c.plain_bytes;
    state.SetBytesProcessed(static_cast<int64_t>(
        static_cast<double>(state.iterations()) * c.plain_bytes));
}

volatile uint64_t g_sink;

int run_callgrind_driver(const std::string &filter, long iters)
{
    int ran = 0;
    for (const Case &c : g_cases) {
        if (c.name.find(filter) == std::string::npos) {
            continue;
        }
        // The report reads the count and the per-operation sizes from the
        // dump's name.
        char sizes[96];
        std::snprintf(sizes, sizeof(sizes), " x%ld blocks=%.0f wire=%.0f "
                      "plain=%.0f", iters, c.blocks, c.wire_bytes,
                      c.plain_bytes);
        const std::string dump = c.name + sizes;
        uint64_t sink = c.op() + c.op();    // warm caches and allocator
        CALLGRIND_ZERO_STATS;
        for (long i = 0; i < iters; i++) {
            sink += c.op();
        }
        CALLGRIND_DUMP_STATS_AT(dump.c_str());
        g_sink = sink;
        if (c.after) {
            c.after();
        }
        std::printf("callgrind-driver: %s x %ld\n", c.name.c_str(), iters);
        ran++;
    }
    if (ran == 0) {
        die("--callgrind-driver: no case matches");
    }
    if (!RUNNING_ON_VALGRIND) {
        std::fprintf(stderr, "codec_bench: not under valgrind: the driver "
                     "ran but counted nothing (make bench-codec-callgrind)\n");
    }
    return 0;
}

// ------------------------------------------------------------ paired slices
//
// The machine this runs on is shared: the same code takes 2,200 ns or
// 3,300 ns for 4 KiB in runs minutes apart, and the two sides of a ratio do
// not slow down alike, so the medians of Google Benchmark's repetitions
// (each side sampled over different seconds) move the aims' ratios by 20%
// from run to run.  Here each of our cases alternates with its reference
// (nginx -O2 for Huffman, nghttp2 for blocks) in slices of about 100 us,
// thousands of times, the order flipped every pair.  Noise only adds time,
// so each side's fastest slice is its speed on a quiet machine; the ratio
// of the two, over a few processes (make bench-codec runs three: one
// process can come out apart from the others), is the verdict, and the
// median of the per-pair ratios is shown beside it.

struct PairedResult {
    std::string         ours, other;
    std::vector<double> a, b;   // ns per operation, one per slice
    std::vector<double> q;      // a / b, one per pair
};

// Operations per slice of about target_ns, from a first timing.
long slice_ops(const Case &c, double target_ns)
{
    using clock = std::chrono::steady_clock;
    uint64_t sink = 0;
    long ops = 0;
    const auto t0 = clock::now();
    double elapsed = 0;
    while (elapsed < target_ns) {
        sink += c.op();
        ops++;
        elapsed = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    }
    g_sink = sink;
    return std::max(1L, ops);
}

double time_slice(const Case &c, long ops)
{
    using clock = std::chrono::steady_clock;
    uint64_t sink = 0;
    const auto t0 = clock::now();
    for (long i = 0; i < ops; i++) {
        sink += c.op();
    }
    const auto t1 = clock::now();
    g_sink = sink;
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / ops;
}

double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// The processor the figures come from: the aims' verdicts differ between
// processors (their L1 data cache above all: the Huffman encoder's pair
// table and the decoder's 32 KiB table), so every result names its own.
// "model name, family F model M, L1d N KiB" from /proc/cpuinfo and
// sysconf(); what cannot be read is left out.
std::string cpu_description()
{
    std::string name, family, model;
    if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
        char line[512];
        while (std::fgets(line, sizeof(line), f) != nullptr) {
            const char *colon = std::strchr(line, ':');
            if (colon == nullptr) {
                if (!name.empty()) {
                    break;      // the first processor's block ended
                }
                continue;
            }
            std::string key(line, static_cast<size_t>(colon - line));
            key.erase(key.find_last_not_of(" \t") + 1);
            std::string value(colon + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            value.erase(value.find_last_not_of(" \t\n") + 1);
            if (key == "model name" && name.empty()) {
                name = value;
            } else if (key == "cpu family" && family.empty()) {
                family = value;
            } else if (key == "model" && model.empty()) {
                model = value;
            }
        }
        std::fclose(f);
    }
    std::string d = name.empty() ? "unknown processor" : name;
    if (!family.empty() && !model.empty()) {
        d += ", family " + family + " model " + model;
    }
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (l1d > 0) {
        d += ", L1d " + std::to_string(l1d / 1024) + " KiB";
    }
#endif
    return d;
}

std::string json_escape(const std::string &s)
{
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
        }
        out += ch;
    }
    return out;
}

int run_paired_driver(double seconds, const std::string &out_path,
                      const std::string &codec_id)
{
    std::vector<PairedResult> results;
    for (const Case &c : g_cases) {
        const std::string suffix = "/ours";
        if (c.name.size() < suffix.size()
            || c.name.compare(c.name.size() - suffix.size(), suffix.size(),
                              suffix) != 0) {
            continue;
        }
        const std::string prefix = c.name.substr(0, c.name.size() - 4);
        const Case *ref = nullptr;
        for (const Case &r : g_cases) {
            if (r.name == prefix + "nginx" || r.name == prefix + "nghttp2") {
                ref = &r;
            }
        }
        if (ref == nullptr) {
            continue;
        }
        const long na = slice_ops(c, 100e3), nb = slice_ops(*ref, 100e3);
        PairedResult r{c.name, ref->name, {}, {}, {}};
        using clock = std::chrono::steady_clock;
        const auto end = clock::now() + std::chrono::duration<double>(seconds);
        for (bool flip = false; clock::now() < end || r.a.size() < 2; flip = !flip) {
            if (flip) {
                r.b.push_back(time_slice(*ref, nb));
                r.a.push_back(time_slice(c, na));
            } else {
                r.a.push_back(time_slice(c, na));
                r.b.push_back(time_slice(*ref, nb));
            }
        }
        for (const Case *v : {&c, ref}) {
            if (v->after) {
                v->after();
            }
        }
        for (size_t i = 0; i < r.a.size(); i++) {
            r.q.push_back(r.a[i] / r.b[i]);
        }
        std::printf("paired: %-36s %-9s %6zu pairs  fastest %9.0f / %9.0f ns"
                    " = %.3f  median pair %.3f\n", c.name.c_str(),
                    ref->name.substr(prefix.size()).c_str(), r.q.size(),
                    quantile(r.a, 0), quantile(r.b, 0),
                    quantile(r.a, 0) / quantile(r.b, 0), quantile(r.q, 0.5));
        results.push_back(std::move(r));
    }
    if (results.empty()) {
        die("--paired: no case has a reference to pair with");
    }
    FILE *f = std::fopen(out_path.c_str(), "w");
    if (f == nullptr) {
        die("--paired-out=" + out_path + ": cannot write");
    }
    std::fprintf(f, "{\n  \"codec\": \"%s\",\n  \"huffman_isa\": \"%s\",\n"
                 "  \"cpu\": \"%s\",\n"
                 "  \"seconds_per_pair\": %g,\n  \"pairs\": [\n",
                 json_escape(codec_id).c_str(),
                 hpack::huffman_isa() == hpack::HuffmanIsa::bmi2 ? "bmi2"
                                                                 : "generic",
                 json_escape(cpu_description()).c_str(), seconds);
    for (size_t i = 0; i < results.size(); i++) {
        const PairedResult &r = results[i];
        std::fprintf(f, "    {\"ours\": \"%s\", \"other\": \"%s\", "
                     "\"slices\": %zu, \"ours_fastest_ns\": %.1f, "
                     "\"other_fastest_ns\": %.1f, \"ours_median_ns\": %.1f, "
                     "\"other_median_ns\": %.1f, \"pair_ratio_p10\": %.4f, "
                     "\"pair_ratio_median\": %.4f, \"pair_ratio_p90\": %.4f}%s\n",
                     json_escape(r.ours).c_str(), json_escape(r.other).c_str(),
                     r.q.size(), quantile(r.a, 0), quantile(r.b, 0),
                     quantile(r.a, 0.5), quantile(r.b, 0.5), quantile(r.q, 0.1),
                     quantile(r.q, 0.5), quantile(r.q, 0.9),
                     i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
        die("--paired-out=" + out_path + ": write failed");
    }
    return 0;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t end = s.find(sep, start);
        std::string part = s.substr(start, end - start);
        if (!part.empty()) {
            out.push_back(part);
        }
        if (end == std::string::npos) {
            return out;
        }
        start = end + 1;
    }
}

void usage()
{
    std::printf(
        "codec_bench [Google Benchmark flags] [--corpus=DIR]\n"
        "codec_bench --callgrind-driver=GROUP[,GROUP] [--callgrind-filter=TEXT]"
        " [--callgrind-iters=N]\n"
        "codec_bench --paired=GROUP[,GROUP] [--paired-seconds=S]"
        " --paired-out=FILE [--paired-codec=ID]\n"
        "      each case X/ours against X/nginx or X/nghttp2 in alternating"
        " slices\n"
        "codec_bench --list-cases\n"
        "  --huffman-isa=generic|bmi2  which build of the Huffman code runs\n"
        "      (default: BMI2 when the CPU has it, as in the library)\n"
        "  groups: request response corpus huffman\n"
        "  --corpus=DIR  hpack-test-case checkout (default "
        "$HPACK_TEST_CASE_DIR or ../shared/data/hpack-test-case)\n");
}

}  // namespace

int main(int argc, char **argv)
{
    std::string corpus;
    std::string driver;
    std::string driver_filter;
    bool driver_mode = false;
    std::string paired;
    std::string paired_out;
    std::string paired_codec = "unknown";
    double paired_seconds = 2;
    bool list = false;
    long iters = 20;
    std::vector<char *> rest = {argv[0]};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&a](const char *flag) -> const char * {
            size_t n = std::strlen(flag);
            return a.compare(0, n, flag) == 0 ? a.c_str() + n : nullptr;
        };
        if (const char *v = value("--corpus=")) {
            corpus = v;
        } else if (const char *v = value("--callgrind-driver=")) {
            driver = v;
            driver_mode = true;
        } else if (const char *v = value("--paired=")) {
            paired = v;
        } else if (const char *v = value("--paired-seconds=")) {
            paired_seconds = std::strtod(v, nullptr);
            if (!(paired_seconds > 0)) {
                die("--paired-seconds must be positive");
            }
        } else if (const char *v = value("--paired-out=")) {
            paired_out = v;
        } else if (const char *v = value("--paired-codec=")) {
            paired_codec = v;
        } else if (const char *v = value("--callgrind-filter=")) {
            driver_filter = v;
        } else if (const char *v = value("--callgrind-iters=")) {
            iters = std::strtol(v, nullptr, 10);
            if (iters <= 0) {
                die("--callgrind-iters must be positive");
            }
        } else if (const char *v = value("--huffman-isa=")) {
            const std::string isa = v;
            if (isa != "generic" && isa != "bmi2") {
                die("--huffman-isa: generic or bmi2");
            }
            if (!hpack::huffman_set_isa(isa == "bmi2" ? hpack::HuffmanIsa::bmi2
                                                      : hpack::HuffmanIsa::generic)) {
                die("--huffman-isa=" + isa + ": this CPU does not have it");
            }
        } else if (a == "--list-cases") {
            list = true;
        } else if (a == "--help" || a == "-h") {
            usage();
            rest.push_back(argv[i]);
        } else {
            rest.push_back(argv[i]);
        }
    }

    if (driver_mode && !paired.empty()) {
        die("--callgrind-driver and --paired: one at a time");
    }
    if (!paired.empty() && paired_out.empty()) {
        die("--paired needs --paired-out=FILE");
    }
    build_cases(driver_mode ? split(driver, ',')
                : !paired.empty() ? split(paired, ',')
                : std::vector<std::string>(),
                corpus);

    if (list) {
        for (const Case &c : g_cases) {
            std::printf("%s\n", c.name.c_str());
        }
        return 0;
    }
    if (driver_mode) {
        return run_callgrind_driver(driver_filter, iters);
    }
    if (!paired.empty()) {
        return run_paired_driver(paired_seconds, paired_out, paired_codec);
    }

    for (const Case &c : g_cases) {
        benchmark::RegisterBenchmark(c.name.c_str(),
                                     [&c](benchmark::State &st) {
                                         run_benchmark(st, c);
                                     })
            ->Unit(benchmark::kNanosecond)
            // Noise on a shared machine only adds time: the fastest
            // repetition is reported beside the median.
            ->ComputeStatistics("min", [](const std::vector<double> &v) {
                return *std::min_element(v.begin(), v.end());
            });
    }
    int bargc = static_cast<int>(rest.size());
    benchmark::Initialize(&bargc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) {
        return 1;
    }
    benchmark::AddCustomContext("codec_bench.verified",
                                "every timed input checked before timing");
    benchmark::AddCustomContext("codec_bench.corpus", g_corpus_note);
    benchmark::AddCustomContext("codec_bench.cpu", cpu_description());
    benchmark::AddCustomContext("codec_bench.huffman_isa",
                                hpack::huffman_isa() == hpack::HuffmanIsa::bmi2
                                    ? "bmi2" : "generic");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
