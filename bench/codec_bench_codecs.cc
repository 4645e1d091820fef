// codec_bench: failing the run, and the untimed forms of both libraries'
// calls that every timed input is verified with.

#include <cstdio>
#include <cstdlib>

#include "codec_bench.h"

namespace codec_bench {

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

// Untimed, collecting forms for verification.

HeaderList ours_decode_list(hpack_decoder_t *dec, const Bytes &in,
                            const std::string &what)
{
    HeaderList out;
    int rc = story::decode_block(dec, in, &out);
    if (rc != HPACK_OK) {
        die("verification failed: " + (what.empty() ? "" : what + ": ")
            + "our decoder: " + hpack_strerror(rc) + " on "
            + hex_prefix(in.data(), in.size()));
    }
    return out;
}

HeaderList ng_decode_list(nghttp2_hd_inflater *inf, const Bytes &in,
                          const std::string &what)
{
    const std::string where = what.empty() ? "" : what + ": ";
    HeaderList out;
    const uint8_t *p = in.data();
    size_t n = in.size();
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, n, 1);
        if (rv < 0) {
            die("verification failed: " + where + "nghttp2 decoder: "
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
            die("verification failed: " + where + "nghttp2 decoder: no FINAL");
        }
    }
}

Bytes ours_encode_bytes(hpack_encoder_t *enc, const Block &b)
{
    Bytes out(hpack_tools::encode_room(b.ours.data(), b.ours.size()));
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

}  // namespace codec_bench
