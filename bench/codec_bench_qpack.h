// codec_bench's QPACK parts: our qpack_encoder_t / qpack_decoder_t
// (codec/include/qpack.h) and libnghttp3's nghttp3_qpack_encoder /
// nghttp3_qpack_decoder, driven alike: the timed calls (inline, as in
// codec_bench.h), the untimed forms that verify, and the counting
// allocators of both libraries.
//
// A connection here is one direction: an encoder, the encoder stream it
// writes, the field sections of streams 0, 4, 8, ... (client-initiated
// bidirectional), and the decoder stream the peer's decoder writes back.
// Every encoder's peer announced SETTINGS_QPACK_MAX_TABLE_CAPACITY
// kQpackCapacity; the blocked streams are the case's (kQpackBlocked for
// the timed cases).

#ifndef CODEC_BENCH_QPACK_H
#define CODEC_BENCH_QPACK_H

#include <nghttp3/nghttp3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codec_bench.h"
#include "qpack.h"

namespace codec_bench {

constexpr size_t kQpackCapacity = 4096;
// Where our encoders are pinned (Arena): those of the timed cases, and
// those of the octet measurement.
constexpr uintptr_t kQpackTimedArenaBase = 0x210000000000;
constexpr uintptr_t kQpackOctetsArenaBase = 0x220000000000;
constexpr size_t kQpackBlocked = 100;
// Room for one section's encoder-stream octets, and the budget our encoder
// is given: more than any section of the corpora inserts.
constexpr size_t kQpackStreamRoom = 64 * 1024;
// Room for one section's decoder-stream octets.
constexpr size_t kQpackDecoderRoom = 4096;

// A section's fields in nghttp3's input form (pointing into the block's
// headers), flags NONE as for nghttp2: each encoder applies its own policy.
std::vector<nghttp3_nv> ng3_fields(const Block &b);

// The room qpack_encode() is always given enough by.
size_t qpack_section_room(const Block &b);

// ------------------------------------------------------------ allocators

// Counts the calls of our hpack_allocator_t (over malloc) and of nghttp3's
// nghttp3_mem (over malloc): what a library allocates per section.
struct AllocCount {
    uint64_t  allocations = 0;     // malloc, calloc, and realloc of a block
    uint64_t  frees = 0;
    uint64_t  bytes = 0;           // every allocation's size, summed

    void reset() { *this = AllocCount(); }
};

const hpack_allocator_t *counting_allocator(AllocCount *count,
                                            hpack_allocator_t *storage);
const nghttp3_mem *counting_mem(AllocCount *count, nghttp3_mem *storage);

// ------------------------------------------------------------------ ours

inline qpack_encoder_t *ours_qencoder(size_t blocked,
                                      const hpack_allocator_t *a = nullptr)
{
    qpack_encoder_t *e = qpack_encoder_create(a, kQpackCapacity, nullptr);
    if (e == nullptr) {
        die("qpack_encoder_create failed");
    }
    if (qpack_encoder_set_peer_settings(e, kQpackCapacity, blocked)
        != QPACK_OK) {
        die("qpack_encoder_set_peer_settings failed");
    }
    return e;
}

inline qpack_decoder_t *ours_qdecoder(size_t blocked,
                                      const hpack_allocator_t *a = nullptr)
{
    qpack_decoder_t *d = qpack_decoder_create(a, kQpackCapacity, blocked);
    if (d == nullptr) {
        die("qpack_decoder_create failed");
    }
    return d;
}

// One section through qpack_encode(): the section's octets plus the
// encoder stream's.
inline size_t ours_qencode(qpack_encoder_t *e, uint64_t stream,
                           const Block &b, uint8_t *out, size_t cap,
                           uint8_t *es, size_t es_cap, size_t *es_len)
{
    size_t len = 0;
    const int rc = qpack_encode(e, stream, b.ours.data(), b.ours.size(), out,
                                cap, &len, es, es_cap, es_len);
    if (rc != QPACK_OK) {
        die(std::string("our QPACK encoder failed: ") + qpack_strerror(rc));
    }
    return len + *es_len;
}

inline void ours_qread_decoder(qpack_encoder_t *e, const uint8_t *p, size_t n)
{
    const int rc = qpack_encoder_read_decoder(e, p, n);
    if (rc != QPACK_OK) {
        die(std::string("our QPACK encoder refused a decoder stream: ")
            + qpack_strerror(rc));
    }
}

inline void ours_qread_encoder(qpack_decoder_t *d, const uint8_t *p, size_t n)
{
    const int rc = qpack_decoder_read_encoder(d, p, n);
    if (rc != QPACK_OK) {
        die(std::string("our QPACK decoder refused an encoder stream: ")
            + qpack_strerror(rc));
    }
}

// A section that does not block (its inserts were read), decoded with
// qpack_decode_fields() 16 fields a call as the HPACK cases, each field
// touched once; then the decoder stream it owes, drained into ds.
inline uint64_t ours_qdecode(qpack_decoder_t *d, uint64_t stream,
                             const uint8_t *in, size_t n, uint8_t *ds,
                             size_t ds_cap)
{
    int rc = qpack_decode_begin(d, stream, in, n);
    if (rc != QPACK_OK) {
        die(std::string("our QPACK decoder failed in a timed run: ")
            + (rc == QPACK_BLOCKED ? "blocked" : qpack_strerror(rc)));
    }
    uint64_t sink = 0;
    do {
        qpack_field_t f[16];
        size_t got = 0;
        rc = qpack_decode_fields(d, f, 16, &got);
        for (size_t i = 0; i < got; i++) {
            sink += f[i].name_len + f[i].value_len + f[i].name[0]
                    + (f[i].value_len ? f[i].value[0] : 0);
        }
    } while (rc == QPACK_OK);
    if (rc != QPACK_SECTION_END) {
        die(std::string("our QPACK decoder failed in a timed run: ")
            + qpack_strerror(rc));
    }
    return sink + qpack_decoder_drain(d, ds, ds_cap);
}

// -------------------------------------------------------------- nghttp3

// nghttp3's output buffers, allocated once (by malloc, nghttp3's default
// allocator, which nghttp3_qpack_encoder_encode() may free and replace
// with its own mem's when one is too small: never, at these sizes).
struct Ng3Bufs {
    Ng3Bufs();
    ~Ng3Bufs();
    Ng3Bufs(const Ng3Bufs &) = delete;

    nghttp3_buf  prefix, rest, stream, decoder;
};

inline nghttp3_qpack_encoder *ng3_encoder(size_t blocked,
                                          const nghttp3_mem *mem)
{
    nghttp3_qpack_encoder *e = nullptr;
    if (nghttp3_qpack_encoder_new(&e, kQpackCapacity, mem) != 0) {
        die("nghttp3_qpack_encoder_new failed");
    }
    nghttp3_qpack_encoder_set_max_dtable_capacity(e, kQpackCapacity);
    nghttp3_qpack_encoder_set_max_blocked_streams(e, blocked);
    return e;
}

inline nghttp3_qpack_decoder *ng3_decoder(size_t blocked,
                                          const nghttp3_mem *mem)
{
    nghttp3_qpack_decoder *d = nullptr;
    if (nghttp3_qpack_decoder_new(&d, kQpackCapacity, blocked, mem) != 0) {
        die("nghttp3_qpack_decoder_new failed");
    }
    return d;
}

// One section: the prefix, the field lines and the encoder stream into
// bufs (reset first); the octets of the three.
inline size_t ng3_encode(nghttp3_qpack_encoder *e, int64_t stream,
                         const nghttp3_nv *nva, size_t n, Ng3Bufs *bufs)
{
    nghttp3_buf_reset(&bufs->prefix);
    nghttp3_buf_reset(&bufs->rest);
    nghttp3_buf_reset(&bufs->stream);
    const int rv = nghttp3_qpack_encoder_encode(e, &bufs->prefix, &bufs->rest,
                                                &bufs->stream, stream, nva, n);
    if (rv != 0) {
        die(std::string("nghttp3 QPACK encoder failed: ")
            + nghttp3_strerror(rv));
    }
    return nghttp3_buf_len(&bufs->prefix) + nghttp3_buf_len(&bufs->rest)
           + nghttp3_buf_len(&bufs->stream);
}

inline void ng3_read_decoder(nghttp3_qpack_encoder *e, const uint8_t *p,
                             size_t n)
{
    const nghttp3_ssize rv = nghttp3_qpack_encoder_read_decoder(e, p, n);
    if (rv != static_cast<nghttp3_ssize>(n)) {
        die(std::string("nghttp3 QPACK encoder refused a decoder stream: ")
            + (rv < 0 ? nghttp3_strerror(static_cast<int>(rv))
                      : "short read"));
    }
}

inline void ng3_read_encoder(nghttp3_qpack_decoder *d, const uint8_t *p,
                             size_t n)
{
    const nghttp3_ssize rv = nghttp3_qpack_decoder_read_encoder(d, p, n);
    if (rv != static_cast<nghttp3_ssize>(n)) {
        die(std::string("nghttp3 QPACK decoder refused an encoder stream: ")
            + (rv < 0 ? nghttp3_strerror(static_cast<int>(rv))
                      : "short read"));
    }
}

// A section that does not block, decoded as nghttp3's connection decodes
// a request stream's HEADERS: a stream context for the stream,
// nghttp3_qpack_decoder_read_request() a field a call, each field touched
// once and its reference-counted name and value released; then the
// decoder stream it owes, written into dbuf (reset first).
inline uint64_t ng3_decode(nghttp3_qpack_decoder *d, const nghttp3_mem *mem,
                           int64_t stream, const uint8_t *in, size_t n,
                           nghttp3_buf *dbuf)
{
    nghttp3_qpack_stream_context *sctx = nullptr;
    if (nghttp3_qpack_stream_context_new(&sctx, stream, mem) != 0) {
        die("nghttp3_qpack_stream_context_new failed");
    }
    uint64_t sink = 0;
    for (;;) {
        nghttp3_qpack_nv nv;
        uint8_t flags = 0;
        const nghttp3_ssize rv = nghttp3_qpack_decoder_read_request(
            d, sctx, &nv, &flags, in, n, 1);
        if (rv < 0) {
            die(std::string("nghttp3 QPACK decoder failed in a timed run: ")
                + nghttp3_strerror(static_cast<int>(rv)));
        }
        in += rv;
        n -= static_cast<size_t>(rv);
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
            const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name);
            const nghttp3_vec value = nghttp3_rcbuf_get_buf(nv.value);
            sink += name.len + value.len + name.base[0]
                    + (value.len ? value.base[0] : 0);
            nghttp3_rcbuf_decref(nv.name);
            nghttp3_rcbuf_decref(nv.value);
        }
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) {
            break;
        }
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
            die("nghttp3 QPACK decoder blocked in a timed run");
        }
        if (!(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) && rv == 0) {
            die("nghttp3 QPACK decoder: the section ended without FINAL");
        }
    }
    nghttp3_qpack_stream_context_del(sctx);
    const size_t ds = nghttp3_qpack_decoder_get_decoder_streamlen(d);
    nghttp3_buf_reset(dbuf);
    if (ds > nghttp3_buf_left(dbuf)) {
        die("nghttp3 QPACK decoder: decoder stream longer than its buffer");
    }
    nghttp3_qpack_decoder_write_decoder(d, dbuf);
    return sink + ds;
}

struct OursQEncoderDel {
    void operator()(qpack_encoder_t *p) const { qpack_encoder_destroy(p); }
};
struct OursQDecoderDel {
    void operator()(qpack_decoder_t *p) const { qpack_decoder_destroy(p); }
};
struct Ng3EncoderDel {
    void operator()(nghttp3_qpack_encoder *p) const
    {
        nghttp3_qpack_encoder_del(p);
    }
};
struct Ng3DecoderDel {
    void operator()(nghttp3_qpack_decoder *p) const
    {
        nghttp3_qpack_decoder_del(p);
    }
};
using OursQEncoder = std::unique_ptr<qpack_encoder_t, OursQEncoderDel>;
using OursQDecoder = std::unique_ptr<qpack_decoder_t, OursQDecoderDel>;
using Ng3Encoder = std::unique_ptr<nghttp3_qpack_encoder, Ng3EncoderDel>;
using Ng3Decoder = std::unique_ptr<nghttp3_qpack_decoder, Ng3DecoderDel>;

// ------------------------------------------------- untimed, verifying forms

// What a decoder made of one section, for verification and counting.
struct QDecoded {
    HeaderList  fields;
    size_t      dynamic_indexed = 0;   // fields that are a dynamic entry
    size_t      dynamic_name = 0;      // literals with a dynamic name
};

// One side of a QPACK connection: an encoder of either library.
class QEncoderSide {
public:
    virtual ~QEncoderSide() = default;
    // The section and the encoder-stream octets of stream's fields.
    virtual void encode(uint64_t stream, const Block &b, Bytes *section,
                        Bytes *encoder_stream) = 0;
    virtual void read_decoder(const Bytes &decoder_stream) = 0;
};

// The other side: a decoder of either library, fed the encoder stream
// before each section (no section blocks).
class QDecoderSide {
public:
    virtual ~QDecoderSide() = default;
    virtual void read_encoder(const Bytes &encoder_stream,
                              const std::string &what) = 0;
    // Dies with what when the section does not decode.
    virtual QDecoded decode(uint64_t stream, const Bytes &section,
                            const std::string &what) = 0;
    // The decoder stream owed now.
    virtual Bytes drain() = 0;
    virtual uint64_t insert_count() const = 0;
};

// a: our allocator (nullptr: malloc); mem: nghttp3's (nullptr: its
// default).
class OursQEncoderSide : public QEncoderSide {
public:
    OursQEncoderSide(size_t blocked, const hpack_allocator_t *a = nullptr)
        : e_(ours_qencoder(blocked, a)) {}
    void encode(uint64_t stream, const Block &b, Bytes *section,
                Bytes *encoder_stream) override;
    void read_decoder(const Bytes &d) override
    {
        ours_qread_decoder(e_.get(), d.data(), d.size());
    }
    qpack_encoder_t *get() const { return e_.get(); }

private:
    OursQEncoder e_;
};

class Ng3QEncoderSide : public QEncoderSide {
public:
    Ng3QEncoderSide(size_t blocked, const nghttp3_mem *mem = nullptr)
        : e_(ng3_encoder(blocked, mem ? mem : nghttp3_mem_default())) {}
    void encode(uint64_t stream, const Block &b, Bytes *section,
                Bytes *encoder_stream) override;
    void read_decoder(const Bytes &d) override
    {
        ng3_read_decoder(e_.get(), d.data(), d.size());
    }
    nghttp3_qpack_encoder *get() const { return e_.get(); }

private:
    Ng3Encoder e_;
    Ng3Bufs    bufs_;
};

class OursQDecoderSide : public QDecoderSide {
public:
    OursQDecoderSide(size_t blocked, const hpack_allocator_t *a = nullptr)
        : d_(ours_qdecoder(blocked, a)) {}
    void read_encoder(const Bytes &es, const std::string &what) override;
    QDecoded decode(uint64_t stream, const Bytes &section,
                    const std::string &what) override;
    Bytes drain() override;
    uint64_t insert_count() const override
    {
        return qpack_decoder_insert_count(d_.get());
    }
    qpack_decoder_t *get() const { return d_.get(); }

private:
    OursQDecoder d_;
};

class Ng3QDecoderSide : public QDecoderSide {
public:
    Ng3QDecoderSide(size_t blocked, const nghttp3_mem *mem = nullptr)
        : mem_(mem ? mem : nghttp3_mem_default()),
          d_(ng3_decoder(blocked, mem_)) {}
    void read_encoder(const Bytes &es, const std::string &what) override;
    QDecoded decode(uint64_t stream, const Bytes &section,
                    const std::string &what) override;
    Bytes drain() override;
    uint64_t insert_count() const override
    {
        return nghttp3_qpack_decoder_get_icnt(d_.get());
    }
    nghttp3_qpack_decoder *get() const { return d_.get(); }
    const nghttp3_mem *mem() const { return mem_; }

private:
    const nghttp3_mem *mem_;
    Ng3Decoder         d_;
};

// A warmed connection: the encoder's section once it repeats with no
// encoder-stream octets, and the decoder stream each decoder owes for it.
struct QSteady {
    Bytes   section;
    Bytes   ack_primary, ack_other;
    size_t  passes = 0;
};

// Encodes b on stream 0 again and again: the encoder stream before each
// section to both decoders, both decode it (verified), the primary's
// decoder stream fed back to the encoder, the other's dropped; until the
// section repeats with no encoder-stream octets.  The decoders are left
// holding the table the section refers to.
QSteady warm_up(QEncoderSide *enc, QDecoderSide *primary, QDecoderSide *other,
                const Block &b, const std::string &what);

// One group's operations, each one section's worth: name is
// operation/mode/implementation (decode/cold/ours, encode/warm/nghttp3,
// decode-ourwire/warm/ours, ...), wire the octets it codes (section and
// encoder stream), after the verification after timing (or empty).
struct QOp {
    std::string                name;
    double                     wire;
    std::function<uint64_t()>  op;
    std::function<void()>      after;
};

// The operations on list, every object they create or use allocating
// through a (ours; nullptr: malloc) or mem (nghttp3's; nullptr: its
// default), but for our encoders made once (the warm one, and the one of
// the cold wire), which allocate through encoder_alloc; their wires
// verified by both decoders.
std::vector<QOp> qpack_ops(const HeaderList &list, const std::string &group,
                           const hpack_allocator_t *a, const nghttp3_mem *mem,
                           const hpack_allocator_t *encoder_alloc);

// The QPACK cases (codec_bench_qpack.cc): groups qpack-request and
// qpack-response, kRequest's and kResponse's operations.
void add_qpack_cases();

// The untimed QPACK measurements (codec_bench_qpack_octets.cc): our and
// nghttp3's allocations per section, and the octets on the wire of the
// corpora; JSON to out.
struct QpackRunOptions {
    std::string  story_dir;      // --corpus (hpack-test-case checkout)
    std::string  qif_dir;        // --qifs
    std::string  out;
    std::string  codec_id;
    std::string  command;        // what ran it, for the report
    bool         ours = true;    // --qpack-sides
    bool         nghttp3 = true;
    std::vector<std::string> conns;   // --qpack-conns: names containing one
};
int run_qpack(const QpackRunOptions &o);

}  // namespace codec_bench

#endif
