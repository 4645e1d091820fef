// codec_bench's huffman cases: 4 KiB of text, decoded and encoded alone
// (ours, nginx at -O2 and -O) and as the one-literal block that carries it
// (ours, nghttp2).

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "codec_bench.h"

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

namespace codec_bench {

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace codec_bench
