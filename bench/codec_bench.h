// codec_bench's shared parts: the header blocks in both libraries' forms,
// the timed calls (inline, so that each case's loop holds them as it would
// in a host), the verification forms and the case list.

#ifndef CODEC_BENCH_H
#define CODEC_BENCH_H

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "block.h"
#include "hpack.h"
#include "story.h"

namespace codec_bench {

namespace story = hpack_tools::story;
using story::HeaderList;
using Bytes = std::vector<uint8_t>;

[[noreturn]] void die(const std::string &what);
void expect(bool ok, const std::string &what);
std::string hex_prefix(const uint8_t *p, size_t n);


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
    uint64_t sink = 0;
    int rc = hpack_tools::decode_block(dec, in, n, [&sink](const hpack_field_t &f) {
        sink += f.name_len + f.value_len + f.name[0] + (f.value_len ? f.value[0] : 0);
    });
    if (rc != HPACK_OK) {
        die(std::string("our decoder failed in a timed run: ") + hpack_strerror(rc));
    }
    return sink;
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

inline hpack_decoder_t *ours_decoder()
{
    hpack_decoder_t *d = hpack_decoder_create(nullptr, 4096);
    if (d == nullptr) {
        die("hpack_decoder_create failed");
    }
    return d;
}

inline hpack_encoder_t *ours_encoder(const hpack_allocator_t *a = nullptr)
{
    hpack_encoder_t *e = hpack_encoder_create(a, 4096, nullptr);
    if (e == nullptr) {
        die("hpack_encoder_create failed");
    }
    return e;
}

inline nghttp2_hd_inflater *ng_inflater()
{
    nghttp2_hd_inflater *i = nullptr;
    if (nghttp2_hd_inflate_new(&i) != 0) {
        die("nghttp2_hd_inflate_new failed");
    }
    return i;
}

inline nghttp2_hd_deflater *ng_deflater()
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

// Untimed, collecting forms for verification (codec_bench_codecs.cc); what
// names the block in the message a failure dies with.
HeaderList ours_decode_list(hpack_decoder_t *dec, const Bytes &in,
                            const std::string &what = std::string());
HeaderList ng_decode_list(nghttp2_hd_inflater *inf, const Bytes &in,
                          const std::string &what = std::string());
Bytes ours_encode_bytes(hpack_encoder_t *enc, const Block &b);
Bytes ng_encode_bytes(nghttp2_hd_deflater *def, const Block &b);
void expect_headers(const HeaderList &want, const HeaderList &got,
                    const std::string &what);
uint64_t insertions(const hpack_decoder_t *dec);


// ------------------------------------------------------------------ cases

struct Case {
    std::string                name;
    std::function<uint64_t()>  op;
    std::function<void()>      after;     // verification after timing
    double                     blocks = 0;
    double                     wire_bytes = 0;
    double                     plain_bytes = 0;
};

extern std::vector<Case> g_cases;

void add_case(const std::string &name, double blocks, double wire,
              double plain, std::function<uint64_t()> op,
              std::function<void()> after = nullptr);

// The groups' cases: request, response and corpus
// (codec_bench_blocks.cc), huffman (codec_bench_huffman.cc).
extern const HeaderList kRequest;
extern const HeaderList kResponse;
extern std::string g_corpus_note;

std::shared_ptr<const Stream> single(const HeaderList &h);
void add_stream_cases(const std::string &group,
                      std::shared_ptr<const Stream> s, bool ng_wire_variant);
bool add_corpus_cases(const std::string &dir_flag);

// The corpora of the octet measurements (codec_bench_octets.cc), each
// file one connection: an hpack-test-case story or a QIF file's lists.
struct Connection {
    std::string  name;        // story_21, fb-req
    std::string  source;      // the file
    std::string  group;       // response, request, qif
    std::string  classed_by;  // what gave the group
    Stream       lists;
};

Connection story_connection(const std::string &path);
Connection qif_connection(const std::string &path);
std::vector<std::string> qif_files(const std::string &dir);

// The stories of story_dir/raw-data, then the QIF files of qif_dir ("":
// $HPACK_TEST_CASE_DIR or ../shared/data/hpack-test-case, and
// ../shared/data/qifs).  skipped says why there is none ("... not found:
// WHAT skipped"); notes, which of the two is missing.
struct Corpus {
    std::vector<Connection>   conns;
    std::string               skipped;
    std::vector<std::string>  notes;
};
Corpus load_corpus(const std::string &story_dir, const std::string &qif_dir,
                   const char *what);

// The corpus octets (codec_bench_octets.cc): untimed, writes JSON to out.
int run_corpus_octets(const std::string &story_dir, const std::string &qif_dir,
                      const std::string &out, const std::string &codec_id);

// Our encoders take their hash seed from their own address (encoder.cc,
// hpack_encoder_create(); qpack_encoder.cc likewise), and which volatile
// fields' hashes share a set of the history, so which recurring fields are
// indexed, follows the seed: our octets differ from one address to
// another.  An encoder allocated from an Arena, mapped at a fixed address,
// repeats its octets from run to run.
class Arena {
public:
    Arena(uintptr_t base, size_t size);
    ~Arena();
    Arena(const Arena &) = delete;

    // A bump allocator from placement * 64 octets on, what an encoder
    // frees coming back with the next call; NULL (malloc, wherever it puts
    // the encoder) when the arena could not be mapped at its address.
    const hpack_allocator_t *allocator(size_t placement);

    bool pinned() const { return base_ != nullptr; }

private:
    static void *alloc(void *ctx, size_t size);
    static void release(void *, void *) {}

    uint8_t           *base_ = nullptr;
    size_t             size_;
    size_t             used_ = 0;
    hpack_allocator_t  allocator_ = {alloc, release, this};
};

// Where the warm-decode cases' encoder lives (codec_bench_blocks.cc),
// beside the corpus' and the QPACK cases' arenas.
constexpr uintptr_t kWarmWireArenaBase = 0x230000000000;

// "model name, family F model M, L1d N KiB" of the processor that runs
// the benchmark (codec_bench.cc).
std::string cpu_description();

std::string header_values_text();
std::string hex_text();
std::string printable_text();
void add_huffman_cases(const std::string &label, const std::string &text);

}  // namespace codec_bench

#endif
