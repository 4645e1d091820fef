// codec_bench's untimed QPACK measurements (codec_bench --qpack-out=FILE;
// make bench-qpack-octets, and a section of make bench-codec's report).
//
// Allocations: every operation of the QPACK cases (codec_bench_qpack.cc)
// again, its objects allocating through counting allocators (ours'
// hpack_allocator_t, nghttp3's nghttp3_mem), kAllocSections times after
// two runs: what a section costs each library in allocations, cold
// (creation included) and warm (the steady state, where ours' target is
// none).
//
// Octets: each QIF file's request lists and each hpack-test-case response
// story is one connection, encoded by our encoder and by nghttp3's, every
// peer at capacity 4096, at blocked streams 0 and 100, with
//   acked   the decoder's decoder stream fed back to the encoder after
//           every section, before the next is encoded;
//   no acks nothing fed back (the decoder's output is dropped).
// The encoder stream reaches the decoders before its section, so no
// section blocks.  Every section is decoded by a decoder of the encoder's
// library (the peer, whose decoder stream is the one fed back) and by one
// of the other library, and both must give its list; the decoder streams
// fed back are also read here to know the encoder's Known Received Count,
// and a section that refers to an entry above it (a blocking stream) is
// counted: more such streams at once than the blocked streams allowed
// ends the run, as a wrong output would.  Nothing is timed, and our
// encoders sit at a fixed address (Arena, codec_bench.h): the figures
// repeat exactly.

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codec_bench_qpack.h"
#include "json.h"

namespace codec_bench {

namespace {

namespace json = hpack_tools::json;

constexpr long kAllocSections = 200;
constexpr size_t kBlockedModes[] = {0, kQpackBlocked};

// ------------------------------------------------------------ allocations

struct AllocRecord {
    std::string  group, op;         // qpack-request, decode/warm/ours
    AllocCount   count;             // over kAllocSections sections
};

std::vector<AllocRecord> measure_allocations()
{
    std::vector<AllocRecord> out;
    for (const auto &[group, list] :
         {std::pair<std::string, const HeaderList *>{"qpack-request",
                                                     &kRequest},
          {"qpack-response", &kResponse}}) {
        AllocCount ours, ng3;
        hpack_allocator_t a;
        nghttp3_mem m;
        const hpack_allocator_t *counting = counting_allocator(&ours, &a);
        std::vector<QOp> ops = qpack_ops(*list, group, counting,
                                         counting_mem(&ng3, &m), counting);
        for (QOp &op : ops) {
            const bool is_ours = op.name.size() > 5
                                 && op.name.compare(op.name.size() - 5, 5,
                                                    "/ours") == 0;
            uint64_t sink = op.op() + op.op();
            ours.reset();
            ng3.reset();
            for (long i = 0; i < kAllocSections; i++) {
                sink += op.op();
            }
            out.push_back({group, op.name, is_ours ? ours : ng3});
            if (op.after) {
                op.after();
            }
            if (sink == 0) {
                die(group + "/" + op.name + ": nothing decoded or encoded");
            }
        }
    }
    return out;
}

// ----------------------------------------------------------------- octets

// The Known Received Count an encoder has from the decoder stream fed to
// it (RFC 9204 2.1.4, 4.4), and its streams that are blocking: with a
// section whose Required Insert Count is above it.
class Tracker {
public:
    explicit Tracker(size_t capacity) : max_entries_(capacity / 32) {}

    // A section of stream, encoded after total inserts: its Required
    // Insert Count (4.5.1.1) from its prefix.
    uint64_t section(uint64_t stream, const Bytes &s, uint64_t total,
                     const std::string &what)
    {
        size_t at = 0;
        const uint64_t enc = integer(s, &at, 8, what + ": section prefix");
        uint64_t ric = 0;
        if (enc != 0) {
            const uint64_t full = 2 * max_entries_;
            const uint64_t max_value = total + max_entries_;
            ric = max_value / full * full + enc - 1;
            if (ric > max_value) {
                ric -= full;
            }
        }
        if (ric != 0) {
            ric_[stream] = ric;
            if (ric > known_) {
                blocking_.push_back(stream);
                blocking_sections++;
                max_blocking = std::max(max_blocking, blocking_.size());
            }
        }
        return ric;
    }

    // The decoder-stream octets the encoder read.
    void read(const Bytes &d, const std::string &what)
    {
        size_t at = 0;
        while (at < d.size()) {
            const uint8_t b = d[at];
            if (b & 0x80) {                 // Section Acknowledgment
                const uint64_t id = integer(d, &at, 7, what);
                const auto it = ric_.find(id);
                if (it == ric_.end()) {
                    die(what + ": a Section Acknowledgment of stream "
                        + std::to_string(id) + ", which has no section "
                        "outstanding");
                }
                known_ = std::max(known_, it->second);
                ric_.erase(it);
            } else if (b & 0x40) {          // Stream Cancellation
                ric_.erase(integer(d, &at, 6, what));
            } else {                        // Insert Count Increment
                known_ += integer(d, &at, 6, what);
            }
        }
        blocking_.erase(std::remove_if(blocking_.begin(), blocking_.end(),
                                       [this](uint64_t id) {
                                           const auto it = ric_.find(id);
                                           return it == ric_.end()
                                                  || it->second <= known_;
                                       }),
                        blocking_.end());
    }

    size_t blocking() const { return blocking_.size(); }

    uint64_t  blocking_sections = 0;
    size_t    max_blocking = 0;

private:
    static uint64_t integer(const Bytes &d, size_t *at, int prefix,
                            const std::string &what)
    {
        if (*at >= d.size()) {
            die(what + ": truncated integer");
        }
        const uint64_t mask = (1u << prefix) - 1;
        uint64_t v = d[(*at)++] & mask;
        if (v < mask) {
            return v;
        }
        for (int shift = 0;; shift += 7) {
            if (*at >= d.size() || shift > 56) {
                die(what + ": truncated or overlong integer");
            }
            const uint8_t b = d[(*at)++];
            v += static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) {
                return v;
            }
        }
    }

    uint64_t                      max_entries_;
    uint64_t                      known_ = 0;
    std::map<uint64_t, uint64_t>  ric_;        // stream -> its section's
    std::vector<uint64_t>         blocking_;
};

// One encoder over one connection in one mode.
struct Run {
    std::string  side;              // ours, nghttp3
    size_t       blocked = 0;
    bool         acked = false;
    uint64_t     sections = 0;      // octets of the field sections
    uint64_t     encoder_stream = 0;
    uint64_t     decoder_stream = 0;     // written by the peer's decoder
    uint64_t     inserts = 0;
    uint64_t     indexed = 0;       // fields that are a dynamic entry
    uint64_t     dynamic_names = 0; // literals with a dynamic name
    uint64_t     blocking_sections = 0;
    size_t       max_blocking = 0;
};

Run run_connection(const Connection &c, bool ours, size_t blocked, bool acked,
                   Arena *arena)
{
    Run r;
    r.side = ours ? "ours" : "nghttp3";
    r.blocked = blocked;
    r.acked = acked;
    std::unique_ptr<QEncoderSide> enc;
    std::unique_ptr<QDecoderSide> peer, other;
    OursQDecoderSide *our_decoder;
    if (ours) {
        enc = std::make_unique<OursQEncoderSide>(blocked, arena->allocator(0));
        auto d = std::make_unique<OursQDecoderSide>(blocked);
        our_decoder = d.get();
        peer = std::move(d);
        other = std::make_unique<Ng3QDecoderSide>(blocked);
    } else {
        enc = std::make_unique<Ng3QEncoderSide>(blocked);
        peer = std::make_unique<Ng3QDecoderSide>(blocked);
        auto d = std::make_unique<OursQDecoderSide>(blocked);
        our_decoder = d.get();
        other = std::move(d);
    }
    Tracker tracker(kQpackCapacity);
    const std::string mode = ", blocked " + std::to_string(blocked)
                             + (acked ? ", acked" : ", no acks")
                             + (ours ? ", our encoder" : ", nghttp3's encoder")
                             + ", list ";
    for (size_t k = 0; k < c.lists.size(); k++) {
        const Block &b = *c.lists[k];
        const uint64_t stream = 4 * k;
        const std::string what = c.source + mode + std::to_string(k);
        Bytes section, es;
        enc->encode(stream, b, &section, &es);
        QDecoded ours_view;
        for (QDecoderSide *d : {peer.get(), other.get()}) {
            d->read_encoder(es, what);
            QDecoded got = d->decode(stream, section, what);
            expect_headers(b.headers, got.fields,
                           what + (d == peer.get() ? ", the peer's decoder"
                                                   : ", the other decoder"));
            if (d == our_decoder) {
                ours_view = std::move(got);
            }
        }
        tracker.section(stream, section, peer->insert_count(), what);
        if (tracker.blocking() > blocked) {
            die("verification failed: " + what + ": "
                + std::to_string(tracker.blocking()) + " streams blocking, "
                "above the peer's SETTINGS_QPACK_BLOCKED_STREAMS "
                + std::to_string(blocked));
        }
        const Bytes ds = peer->drain();
        other->drain();
        if (acked) {
            enc->read_decoder(ds);
            tracker.read(ds, what + ", decoder stream");
        }
        r.sections += section.size();
        r.encoder_stream += es.size();
        r.decoder_stream += ds.size();
        r.indexed += ours_view.dynamic_indexed;
        r.dynamic_names += ours_view.dynamic_name;
    }
    if (peer->insert_count() != other->insert_count()) {
        die("verification failed: " + c.source + mode
            + ": the two decoders disagree on the inserts");
    }
    r.inserts = peer->insert_count();
    r.blocking_sections = tracker.blocking_sections;
    r.max_blocking = tracker.max_blocking;
    return r;
}

// ------------------------------------------------------------------ output

std::string run_json(const Run &r)
{
    return "{\"side\": " + json::quote(r.side) + ", \"blocked\": "
           + std::to_string(r.blocked) + ", \"acked\": "
           + (r.acked ? "true" : "false") + ", \"sections\": "
           + std::to_string(r.sections) + ", \"encoder_stream\": "
           + std::to_string(r.encoder_stream) + ", \"decoder_stream\": "
           + std::to_string(r.decoder_stream) + ", \"inserts\": "
           + std::to_string(r.inserts) + ", \"indexed\": "
           + std::to_string(r.indexed) + ", \"dynamic_names\": "
           + std::to_string(r.dynamic_names) + ", \"blocking_sections\": "
           + std::to_string(r.blocking_sections) + ", \"max_blocking\": "
           + std::to_string(r.max_blocking) + "}";
}

bool selected(const Connection &c, const std::vector<std::string> &want)
{
    if (want.empty()) {
        return true;
    }
    for (const std::string &w : want) {
        if (c.name.find(w) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

int run_qpack(const QpackRunOptions &o)
{
    const std::vector<AllocRecord> allocs = measure_allocations();

    Corpus corpus = load_corpus(o.story_dir, o.qif_dir, "QPACK octets");
    if (!corpus.skipped.empty()) {
        std::printf("codec_bench: %s\n", corpus.skipped.c_str());
    }
    std::vector<const Connection *> conns;
    for (const Connection &c : corpus.conns) {
        // the QIF request lists and the response stories
        if ((c.group == "qif" || c.group == "response")
            && selected(c, o.conns)) {
            conns.push_back(&c);
        }
    }
    std::vector<std::vector<Run>> runs;
    size_t lists = 0;
    Arena arena(kQpackOctetsArenaBase, 256u << 20);
    if (!conns.empty() && !arena.pinned()) {
        corpus.notes.push_back("our encoders' arena could not be mapped at a "
                               "fixed address: ours' octets follow where "
                               "malloc put each encoder and vary from run to "
                               "run");
    }
    for (const Connection *c : conns) {
        std::vector<Run> rs;
        for (const size_t blocked : kBlockedModes) {
            for (const bool acked : {true, false}) {
                if (o.ours) {
                    rs.push_back(run_connection(*c, true, blocked, acked,
                                                &arena));
                }
                if (o.nghttp3) {
                    rs.push_back(run_connection(*c, false, blocked, acked,
                                                &arena));
                }
            }
        }
        runs.push_back(std::move(rs));
        lists += c->lists.size();
    }
    for (const std::string &n : corpus.notes) {
        std::printf("codec_bench: QPACK octets: %s\n", n.c_str());
    }
    if (!conns.empty()) {
        std::printf("codec_bench: QPACK octets: %zu connections, %zu "
                    "sections, each encoded in 4 modes by %s; every "
                    "section decoded by both decoders\n", conns.size(), lists,
                    o.ours && o.nghttp3 ? "both encoders"
                    : o.ours ? "ours" : "nghttp3's");
    }

    std::string out = "{\n  \"codec\": " + json::quote(o.codec_id)
                      + ",\n  \"nghttp3\": " + json::quote(NGHTTP3_VERSION)
                      + ",\n  \"cpu\": " + json::quote(cpu_description())
                      + ",\n  \"command\": " + json::quote(o.command)
                      + ",\n  \"capacity\": " + std::to_string(kQpackCapacity)
                      + ",\n  \"timed_blocked_streams\": "
                      + std::to_string(kQpackBlocked)
                      + ",\n  \"alloc_sections\": "
                      + std::to_string(kAllocSections) + ",\n";
    if (!corpus.skipped.empty()) {
        out += "  \"skipped\": " + json::quote(corpus.skipped) + ",\n";
    }
    std::string filter;
    for (const std::string &w : o.conns) {
        filter += (filter.empty() ? "" : ",") + w;
    }
    out += "  \"selection\": {\"ours\": "
           + std::string(o.ours ? "true" : "false") + ", \"nghttp3\": "
           + (o.nghttp3 ? "true" : "false")
           + ", \"conns\": " + json::quote(filter) + "},\n";
    out += "  \"notes\": [";
    for (size_t k = 0; k < corpus.notes.size(); k++) {
        out += (k ? ", " : "") + json::quote(corpus.notes[k]);
    }
    out += "],\n  \"allocations\": [";
    for (size_t k = 0; k < allocs.size(); k++) {
        const AllocRecord &a = allocs[k];
        out += (k ? ",\n    " : "\n    ");
        out += "{\"group\": " + json::quote(a.group) + ", \"op\": "
               + json::quote(a.op) + ", \"allocations\": "
               + std::to_string(a.count.allocations) + ", \"frees\": "
               + std::to_string(a.count.frees) + ", \"bytes\": "
               + std::to_string(a.count.bytes) + "}";
    }
    out += "\n  ],\n  \"connections\": [";
    for (size_t k = 0; k < conns.size(); k++) {
        const Connection &c = *conns[k];
        uint64_t fields = 0, plain = 0;
        for (const auto &b : c.lists) {
            fields += b->headers.size();
            plain += b->plain;
        }
        out += k ? ",\n    {" : "\n    {";
        out += "\"name\": " + json::quote(c.name) + ", \"group\": "
               + json::quote(c.group) + ", \"source\": "
               + json::quote(c.source) + ", \"lists\": "
               + std::to_string(c.lists.size()) + ", \"fields\": "
               + std::to_string(fields) + ", \"plain\": "
               + std::to_string(plain) + ",\n     \"runs\": [";
        for (size_t j = 0; j < runs[k].size(); j++) {
            out += (j ? ",\n       " : "\n       ") + run_json(runs[k][j]);
        }
        out += "]}";
    }
    out += conns.empty() ? "]\n}\n" : "\n  ]\n}\n";
    FILE *f = std::fopen(o.out.c_str(), "w");
    if (f == nullptr || std::fwrite(out.data(), 1, out.size(), f) != out.size()
        || std::fclose(f) != 0) {
        die("--qpack-out=" + o.out + ": cannot write");
    }
    return 0;
}

}  // namespace codec_bench
