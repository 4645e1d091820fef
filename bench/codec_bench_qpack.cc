// codec_bench's QPACK cases: one section, the request and the response of
// the HPACK cases (kRequest, kResponse), decoded and encoded, cold and
// warm, by ours (qpack.h) and by libnghttp3; and the adapters to both
// libraries (codec_bench_qpack.h).
//
// Both encoders' peer announced capacity 4096 and 100 blocked streams.
//   COLD  a new encoder or decoder per section: create, code, destroy.
//         The encoder inserts what its policy inserts and may refer to it
//         at once (blocking is allowed); the decoder reads that encoder
//         stream, then the section.
//   WARM  one long-lived encoder and decoder that have seen the section
//         with its acknowledgments fed back (warm_up()): the encoder's
//         section of a field list it has sent, with no encoder-stream
//         octets; encode is qpack_encode() plus reading the Section
//         Acknowledgment the decoder wrote for it, decode is the section
//         plus draining that acknowledgment.
// The decode cases time both decoders on nghttp3's wire (decode) and on
// ours (decode-ourwire); every wire was decoded by both decoders and
// compared with its list before it is timed, and again after.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codec_bench_qpack.h"

namespace codec_bench {

std::vector<nghttp3_nv> ng3_fields(const Block &b)
{
    std::vector<nghttp3_nv> v;
    for (const story::Header &x : b.headers) {
        nghttp3_nv nv;
        // nghttp3 0.8's nghttp3_nv takes non-const pointers; it reads only.
        nv.name = reinterpret_cast<uint8_t *>(
            const_cast<char *>(x.name.data()));
        nv.namelen = x.name.size();
        nv.value = reinterpret_cast<uint8_t *>(
            const_cast<char *>(x.value.data()));
        nv.valuelen = x.value.size();
        nv.flags = NGHTTP3_NV_FLAG_NONE;
        v.push_back(nv);
    }
    return v;
}

size_t qpack_section_room(const Block &b)
{
    size_t octets = 0;
    for (const hpack_header_t &h : b.ours) {
        octets += h.name_len + h.value_len + h.value_literal_len;
    }
    return QPACK_ENCODE_BOUND(b.ours.size(), octets);
}

// ------------------------------------------------------------ allocators

namespace {

void *ours_alloc(void *ctx, size_t size)
{
    AllocCount *c = static_cast<AllocCount *>(ctx);
    c->allocations++;
    c->bytes += size;
    return std::malloc(size);
}

void ours_free(void *ctx, void *p)
{
    static_cast<AllocCount *>(ctx)->frees++;
    std::free(p);
}

void *ng3_malloc(size_t size, void *ctx)
{
    return ours_alloc(ctx, size);
}

void ng3_free(void *p, void *ctx)
{
    if (p != nullptr) {
        ours_free(ctx, p);
    }
}

void *ng3_calloc(size_t n, size_t size, void *ctx)
{
    AllocCount *c = static_cast<AllocCount *>(ctx);
    c->allocations++;
    c->bytes += n * size;
    return std::calloc(n, size);
}

void *ng3_realloc(void *p, size_t size, void *ctx)
{
    AllocCount *c = static_cast<AllocCount *>(ctx);
    if (size == 0) {
        if (p != nullptr) {
            c->frees++;
        }
    } else {
        c->allocations++;
        c->bytes += size;
        if (p != nullptr) {
            c->frees++;
        }
    }
    return std::realloc(p, size);
}

}  // namespace

const hpack_allocator_t *counting_allocator(AllocCount *count,
                                            hpack_allocator_t *storage)
{
    *storage = {ours_alloc, ours_free, count};
    return storage;
}

const nghttp3_mem *counting_mem(AllocCount *count, nghttp3_mem *storage)
{
    *storage = {count, ng3_malloc, ng3_free, ng3_calloc, ng3_realloc};
    return storage;
}

// ---------------------------------------------------------------- sides

namespace {

// An nghttp3_buf over p[0..cap), empty.
void ng3_buf_over(nghttp3_buf *b, uint8_t *p, size_t cap)
{
    b->begin = b->pos = b->last = p;
    b->end = p + cap;
}

}  // namespace

Ng3Bufs::Ng3Bufs()
{
    for (nghttp3_buf *b : {&prefix, &rest, &stream, &decoder}) {
        const size_t cap = b == &prefix ? 64 : kQpackStreamRoom;
        uint8_t *p = static_cast<uint8_t *>(std::malloc(cap));
        if (p == nullptr) {
            die("out of memory");
        }
        ng3_buf_over(b, p, cap);
    }
}

Ng3Bufs::~Ng3Bufs()
{
    for (nghttp3_buf *b : {&prefix, &rest, &stream, &decoder}) {
        std::free(b->begin);
    }
}

void OursQEncoderSide::encode(uint64_t stream, const Block &b, Bytes *section,
                              Bytes *encoder_stream)
{
    section->resize(qpack_section_room(b));
    encoder_stream->resize(kQpackStreamRoom);
    size_t es = 0;
    const size_t n = ours_qencode(e_.get(), stream, b, section->data(),
                                  section->size(), encoder_stream->data(),
                                  encoder_stream->size(), &es);
    section->resize(n - es);
    encoder_stream->resize(es);
}

void Ng3QEncoderSide::encode(uint64_t stream, const Block &b, Bytes *section,
                             Bytes *encoder_stream)
{
    const std::vector<nghttp3_nv> nva = ng3_fields(b);
    ng3_encode(e_.get(), static_cast<int64_t>(stream), nva.data(),
               nva.size(), &bufs_);
    section->assign(bufs_.prefix.pos, bufs_.prefix.last);
    section->insert(section->end(), bufs_.rest.pos, bufs_.rest.last);
    encoder_stream->assign(bufs_.stream.pos, bufs_.stream.last);
}

void OursQDecoderSide::read_encoder(const Bytes &es, const std::string &what)
{
    const int rc = qpack_decoder_read_encoder(d_.get(), es.data(), es.size());
    if (rc != QPACK_OK) {
        die("verification failed: " + what + ": our decoder refused the "
            "encoder stream: " + qpack_strerror(rc));
    }
}

QDecoded OursQDecoderSide::decode(uint64_t stream, const Bytes &section,
                                  const std::string &what)
{
    QDecoded out;
    int rc = qpack_decode_begin(d_.get(), stream, section.data(),
                                section.size());
    while (rc == QPACK_OK) {
        qpack_field_t f[16];
        size_t n = 0;
        rc = qpack_decode_fields(d_.get(), f, 16, &n);
        for (size_t i = 0; i < n; i++) {
            out.fields.push_back(
                {std::string(reinterpret_cast<const char *>(f[i].name),
                             f[i].name_len),
                 std::string(reinterpret_cast<const char *>(f[i].value),
                             f[i].value_len)});
            if (f[i].memo != nullptr) {
                out.dynamic_indexed++;
            } else if (f[i].name_memo != nullptr) {
                out.dynamic_name++;
            }
        }
    }
    if (rc != QPACK_SECTION_END) {
        die("verification failed: " + what + ": our decoder: "
            + (rc == QPACK_BLOCKED ? std::string("blocked")
                                   : qpack_strerror(rc))
            + " on " + hex_prefix(section.data(), section.size()));
    }
    return out;
}

Bytes OursQDecoderSide::drain()
{
    Bytes out;
    uint8_t b[512];
    for (size_t n; (n = qpack_decoder_drain(d_.get(), b, sizeof b)) != 0;) {
        out.insert(out.end(), b, b + n);
    }
    return out;
}

void Ng3QDecoderSide::read_encoder(const Bytes &es, const std::string &what)
{
    const nghttp3_ssize rv = nghttp3_qpack_decoder_read_encoder(
        d_.get(), es.data(), es.size());
    if (rv != static_cast<nghttp3_ssize>(es.size())) {
        die("verification failed: " + what + ": nghttp3's decoder refused "
            "the encoder stream: "
            + (rv < 0 ? nghttp3_strerror(static_cast<int>(rv))
                      : "short read"));
    }
}

QDecoded Ng3QDecoderSide::decode(uint64_t stream, const Bytes &section,
                                 const std::string &what)
{
    QDecoded out;
    nghttp3_qpack_stream_context *sctx = nullptr;
    if (nghttp3_qpack_stream_context_new(&sctx, static_cast<int64_t>(stream),
                                         mem_) != 0) {
        die("nghttp3_qpack_stream_context_new failed");
    }
    const uint8_t *p = section.data();
    size_t n = section.size();
    std::string failure;
    for (;;) {
        nghttp3_qpack_nv nv;
        uint8_t flags = 0;
        const nghttp3_ssize rv = nghttp3_qpack_decoder_read_request(
            d_.get(), sctx, &nv, &flags, p, n, 1);
        if (rv < 0) {
            failure = nghttp3_strerror(static_cast<int>(rv));
            break;
        }
        p += rv;
        n -= static_cast<size_t>(rv);
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
            const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name);
            const nghttp3_vec value = nghttp3_rcbuf_get_buf(nv.value);
            out.fields.push_back(
                {std::string(reinterpret_cast<const char *>(name.base),
                             name.len),
                 std::string(reinterpret_cast<const char *>(value.base),
                             value.len)});
            nghttp3_rcbuf_decref(nv.name);
            nghttp3_rcbuf_decref(nv.value);
        }
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) {
            break;
        }
        if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
            failure = "blocked";
            break;
        }
        if (!(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) && rv == 0) {
            failure = "the section ended without FINAL";
            break;
        }
    }
    nghttp3_qpack_stream_context_del(sctx);
    if (!failure.empty()) {
        die("verification failed: " + what + ": nghttp3's decoder: "
            + failure + " on " + hex_prefix(section.data(), section.size()));
    }
    return out;
}

Bytes Ng3QDecoderSide::drain()
{
    const size_t n = nghttp3_qpack_decoder_get_decoder_streamlen(d_.get());
    Bytes out(n);
    if (n != 0) {
        nghttp3_buf b;
        ng3_buf_over(&b, out.data(), n);
        nghttp3_qpack_decoder_write_decoder(d_.get(), &b);
        out.resize(nghttp3_buf_len(&b));
    }
    return out;
}

QSteady warm_up(QEncoderSide *enc, QDecoderSide *primary, QDecoderSide *other,
                const Block &b, const std::string &what)
{
    QSteady s;
    Bytes prev;
    int same = 0;
    for (size_t pass = 0; pass < 32; pass++) {
        Bytes section, es;
        enc->encode(0, b, &section, &es);
        const std::string where = what + ", warm pass " + std::to_string(pass);
        for (QDecoderSide *d : {primary, other}) {
            d->read_encoder(es, where);
            expect_headers(b.headers, d->decode(0, section, where).fields,
                           where + (d == primary ? ", the encoder's peer"
                                                 : ", the other decoder"));
        }
        s.ack_primary = primary->drain();
        s.ack_other = other->drain();
        enc->read_decoder(s.ack_primary);
        same = es.empty() && section == prev ? same + 1 : 0;
        prev = std::move(section);
        if (same == 2) {
            s.section = std::move(prev);
            s.passes = pass + 1;
            return s;
        }
    }
    die(what + ": the warm encoder never repeated its section without "
        "encoder-stream octets");
}

// ------------------------------------------------------------------ cases

namespace {

// The inputs and the objects of one group's operations, shared by them.
struct QGroup {
    QGroup(const HeaderList &h, const hpack_allocator_t *a,
           const nghttp3_mem *m)
        : block(h), nva(ng3_fields(block)), alloc(a),
          mem(m ? m : nghttp3_mem_default())
    {
        out.resize(qpack_section_room(block));
        es.resize(kQpackStreamRoom);
        ds.resize(kQpackDecoderRoom);
    }

    Block                    block;
    std::vector<nghttp3_nv>  nva;
    const hpack_allocator_t *alloc;           // ours' (nullptr: malloc)
    const nghttp3_mem       *mem;             // nghttp3's
    Bytes                    out, es, ds;     // our output buffers
    Ng3Bufs                  bufs;            // nghttp3's
    // a cold wire: a new encoder's encoder stream and section
    struct Wire {
        Bytes es, section;
    };
    Wire                     ng3_cold, ours_cold;
    // warm: the wire of each encoder, and decoders of both libraries
    // holding the table it refers to
    std::unique_ptr<Ng3QEncoderSide>  ng3_enc;
    std::unique_ptr<OursQEncoderSide> ours_enc;
    std::unique_ptr<Ng3QDecoderSide>  ng3_dec_ng3wire, ng3_dec_ourwire;
    std::unique_ptr<OursQDecoderSide> ours_dec_ng3wire, ours_dec_ourwire;
    QSteady                  ng3_steady, ours_steady;
};

QGroup::Wire cold_wire(QEncoderSide *enc, const Block &b,
                       const std::string &what)
{
    QGroup::Wire w;
    enc->encode(0, b, &w.section, &w.es);
    OursQDecoderSide od(kQpackBlocked);
    Ng3QDecoderSide nd(kQpackBlocked);
    for (QDecoderSide *d : {static_cast<QDecoderSide *>(&od),
                            static_cast<QDecoderSide *>(&nd)}) {
        const std::string where = what + (d == &od ? ", our decoder"
                                                   : ", nghttp3's decoder");
        d->read_encoder(w.es, where);
        expect_headers(b.headers, d->decode(0, w.section, where).fields,
                       where);
    }
    return w;
}

double wire_size(const QGroup::Wire &w)
{
    return static_cast<double>(w.es.size() + w.section.size());
}

// After timing: the warm decoders still decode the steady section.
void check_decoders(QGroup *g, QDecoderSide *a, QDecoderSide *b,
                    const Bytes &section, const std::string &what)
{
    for (QDecoderSide *d : {a, b}) {
        expect_headers(g->block.headers, d->decode(0, section, what).fields,
                       what + " after timing");
        d->drain();
    }
}

}  // namespace

std::vector<QOp> qpack_ops(const HeaderList &list, const std::string &group,
                           const hpack_allocator_t *alloc,
                           const nghttp3_mem *mem,
                           const hpack_allocator_t *encoder_alloc)
{
    auto g = std::make_shared<QGroup>(list, alloc, mem);
    const Block &b = g->block;
    std::vector<QOp> ops;

    {
        Ng3QEncoderSide ne(kQpackBlocked);
        g->ng3_cold = cold_wire(&ne, b, group + " cold, nghttp3's encoder");
        OursQEncoderSide oe(kQpackBlocked, encoder_alloc);
        g->ours_cold = cold_wire(&oe, b, group + " cold, our encoder");
    }
    g->ng3_enc = std::make_unique<Ng3QEncoderSide>(kQpackBlocked, g->mem);
    g->ours_enc = std::make_unique<OursQEncoderSide>(kQpackBlocked,
                                                     encoder_alloc);
    g->ng3_dec_ng3wire = std::make_unique<Ng3QDecoderSide>(kQpackBlocked,
                                                           g->mem);
    g->ours_dec_ng3wire = std::make_unique<OursQDecoderSide>(kQpackBlocked,
                                                             alloc);
    g->ng3_dec_ourwire = std::make_unique<Ng3QDecoderSide>(kQpackBlocked,
                                                           g->mem);
    g->ours_dec_ourwire = std::make_unique<OursQDecoderSide>(kQpackBlocked,
                                                             alloc);
    g->ng3_steady = warm_up(g->ng3_enc.get(), g->ng3_dec_ng3wire.get(),
                            g->ours_dec_ng3wire.get(), b,
                            group + ", nghttp3's encoder");
    g->ours_steady = warm_up(g->ours_enc.get(), g->ours_dec_ourwire.get(),
                             g->ng3_dec_ourwire.get(), b,
                             group + ", our encoder");

    // Decode, cold, on each encoder's cold wire.
    for (const bool ourwire : {false, true}) {
        const std::string name = ourwire ? "decode-ourwire" : "decode";
        const QGroup::Wire *w = ourwire ? &g->ours_cold : &g->ng3_cold;
        ops.push_back({name + "/cold/ours", wire_size(*w), [g, w] {
            qpack_decoder_t *d = ours_qdecoder(kQpackBlocked, g->alloc);
            ours_qread_encoder(d, w->es.data(), w->es.size());
            const uint64_t sink = ours_qdecode(d, 0, w->section.data(),
                                               w->section.size(), g->ds.data(),
                                               g->ds.size());
            qpack_decoder_destroy(d);
            return sink;
        }, nullptr});
        ops.push_back({name + "/cold/nghttp3", wire_size(*w), [g, w] {
            nghttp3_qpack_decoder *d = ng3_decoder(kQpackBlocked, g->mem);
            ng3_read_encoder(d, w->es.data(), w->es.size());
            const uint64_t sink = ng3_decode(d, g->mem, 0, w->section.data(),
                                             w->section.size(),
                                             &g->bufs.decoder);
            nghttp3_qpack_decoder_del(d);
            return sink;
        }, nullptr});
    }

    // Decode, warm: the steady section on the decoders that saw it.
    for (const bool ourwire : {false, true}) {
        const std::string name = ourwire ? "decode-ourwire" : "decode";
        const QSteady *s = ourwire ? &g->ours_steady : &g->ng3_steady;
        OursQDecoderSide *od = ourwire ? g->ours_dec_ourwire.get()
                                       : g->ours_dec_ng3wire.get();
        Ng3QDecoderSide *nd = ourwire ? g->ng3_dec_ourwire.get()
                                      : g->ng3_dec_ng3wire.get();
        auto after = [g, od, nd, s, what = group + "/" + name + "/warm"] {
            check_decoders(g.get(), od, nd, s->section, what);
        };
        const double wire = static_cast<double>(s->section.size());
        ops.push_back({name + "/warm/ours", wire, [g, od, s] {
            return ours_qdecode(od->get(), 0, s->section.data(),
                                s->section.size(), g->ds.data(), g->ds.size());
        }, after});
        ops.push_back({name + "/warm/nghttp3", wire, [g, nd, s] {
            return ng3_decode(nd->get(), nd->mem(), 0, s->section.data(),
                              s->section.size(), &g->bufs.decoder);
        }, after});
    }

    // Encode, cold: create, set the peer's settings, encode, destroy.
    ops.push_back({"encode/cold/ours", wire_size(g->ours_cold), [g] {
        qpack_encoder_t *e = ours_qencoder(kQpackBlocked, g->alloc);
        size_t es = 0;
        const uint64_t sink = ours_qencode(e, 0, g->block, g->out.data(),
                                           g->out.size(), g->es.data(),
                                           g->es.size(), &es);
        qpack_encoder_destroy(e);
        return sink;
    }, nullptr});
    ops.push_back({"encode/cold/nghttp3", wire_size(g->ng3_cold), [g] {
        nghttp3_qpack_encoder *e = ng3_encoder(kQpackBlocked, g->mem);
        const uint64_t sink = ng3_encode(e, 0, g->nva.data(), g->nva.size(),
                                         &g->bufs);
        nghttp3_qpack_encoder_del(e);
        return sink;
    }, nullptr});

    // Encode, warm: the section again, and the acknowledgment its peer
    // wrote for it read back.  After timing, the encoder's output is still
    // the steady section and decodes.
    ops.push_back({"encode/warm/ours",
                   static_cast<double>(g->ours_steady.section.size()), [g] {
        size_t es = 0;
        const uint64_t sink = ours_qencode(g->ours_enc->get(), 0, g->block,
                                           g->out.data(), g->out.size(),
                                           g->es.data(), g->es.size(), &es);
        ours_qread_decoder(g->ours_enc->get(),
                           g->ours_steady.ack_primary.data(),
                           g->ours_steady.ack_primary.size());
        return sink;
    }, [g, what = group + "/encode/warm/ours"] {
        Bytes section, es;
        g->ours_enc->encode(0, g->block, &section, &es);
        expect(es.empty() && section == g->ours_steady.section,
               what + ": the section changed while timed");
        check_decoders(g.get(), g->ours_dec_ourwire.get(),
                       g->ng3_dec_ourwire.get(), section, what);
        g->ours_enc->read_decoder(g->ours_steady.ack_primary);
    }});
    ops.push_back({"encode/warm/nghttp3",
                   static_cast<double>(g->ng3_steady.section.size()), [g] {
        const uint64_t sink = ng3_encode(g->ng3_enc->get(), 0, g->nva.data(),
                                         g->nva.size(), &g->bufs);
        ng3_read_decoder(g->ng3_enc->get(), g->ng3_steady.ack_primary.data(),
                         g->ng3_steady.ack_primary.size());
        return sink;
    }, [g, what = group + "/encode/warm/nghttp3"] {
        Bytes section, es;
        g->ng3_enc->encode(0, g->block, &section, &es);
        expect(es.empty() && section == g->ng3_steady.section,
               what + ": the section changed while timed");
        check_decoders(g.get(), g->ours_dec_ng3wire.get(),
                       g->ng3_dec_ng3wire.get(), section, what);
        g->ng3_enc->read_decoder(g->ng3_steady.ack_primary);
    }});
    return ops;
}

void add_qpack_cases()
{
    // Our long-lived encoders at a fixed address, so that their wire, and
    // with it the instruction counts, repeats from run to run; the
    // allocator is taken once: both groups' encoders live in it at once.
    // Never unmapped: the encoders are destroyed with g_cases, at exit.
    static Arena *arena = new Arena(kQpackTimedArenaBase, 16u << 20);
    const hpack_allocator_t *pinned = arena->allocator(0);
    for (const auto &[group, list] :
         {std::pair<std::string, const HeaderList *>{"qpack-request",
                                                     &kRequest},
          {"qpack-response", &kResponse}}) {
        const double plain = static_cast<double>(story::plain_size(*list));
        for (QOp &op : qpack_ops(*list, group, nullptr, nullptr, pinned)) {
            add_case(group + "/" + op.name, 1, op.wire, plain,
                     std::move(op.op), std::move(op.after));
        }
    }
}

}  // namespace codec_bench
