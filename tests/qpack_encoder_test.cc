// The QPACK encoder: its wire format on small cases, the decoder stream it
// reads and the errors it finds there, and whole connections decoded by
// two independent decoders, ours and libnghttp3's, with the decoder
// stream fed back at once, late, in random pieces, or never, streams
// cancelled at random, and the encoder-stream budget small or none.  What
// would break for a user: a browser or client (nghttp3 is curl's) that
// cannot decode our responses, or a connection whose table the peer's
// decoder and our encoder see differently.

#include <gtest/gtest.h>

#include <nghttp3/nghttp3.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "corpus.h"
#include "qpack.h"
#include "qpack_lists.h"
#include "qpack_static_table.h"
#include "test_util.h"

using namespace hpack_test;

namespace {

struct Field {
    std::string name, value;
    bool never;
    bool operator==(const Field& o) const {
        return name == o.name && value == o.value && never == o.never;
    }
};
using Fields = std::vector<Field>;

// The fields a decoder must give back: never-indexed as the test marks
// them (sensitive()) or as the encoder's built-in policy does (short
// cookie values, proxy-authorization: hpack.h).
Fields fields_of(const HeaderList& l) {
    static const std::unique_ptr<hpack_policy_t, void (*)(hpack_policy_t*)> policy(
        hpack_policy_create(nullptr), hpack_policy_destroy);
    Fields f;
    for (const auto& h : l) {
        const unsigned flags = hpack_policy_lookup(policy.get(), h.first.data(), h.first.size());
        const bool short_secret =
            (h.first == "cookie" || h.first == "set-cookie") && h.second.size() < 20;
        f.push_back({h.first, h.second,
                     sensitive(h.first) || (flags & HPACK_POLICY_NEVER_INDEX) || short_secret});
    }
    return f;
}

std::vector<hpack_header_t> headers_of(const HeaderList& l) {
    std::vector<hpack_header_t> v;
    for (const auto& h : l) {
        hpack_header_t x{};
        x.name = reinterpret_cast<const uint8_t*>(h.first.data());
        x.name_len = h.first.size();
        x.value = reinterpret_cast<const uint8_t*>(h.second.data());
        x.value_len = h.second.size();
        x.flags = sensitive(h.first) ? HPACK_FIELD_NEVER_INDEX : 0;
        v.push_back(x);
    }
    return v;
}

// A peer's decoder.  decode(): 1 with the fields, 0 blocked (resume()
// once unblocked() names the stream), -1 on an error (*err says which).
class Peer {
public:
    virtual ~Peer() = default;
    virtual bool read_encoder(const uint8_t* p, size_t n, std::string* err) = 0;
    virtual int decode(uint64_t stream, const std::vector<uint8_t>& section, Fields* got,
                       std::string* err) = 0;
    virtual std::vector<uint64_t> unblocked() = 0;
    // Decodes a stream unblocked() named; section is all of it again.
    virtual int resume(uint64_t stream, const std::vector<uint8_t>& section, Fields* got,
                       std::string* err) = 0;
    virtual void cancel(uint64_t stream) = 0;
    virtual std::vector<uint8_t> drain() = 0;
    virtual const char* name() const = 0;
};

class OurPeer : public Peer {
public:
    OurPeer(size_t capacity, size_t blocked)
        : dec_(qpack_decoder_create(nullptr, capacity, blocked)) {}
    ~OurPeer() override { qpack_decoder_destroy(dec_); }
    const char* name() const override { return "our decoder"; }

    bool read_encoder(const uint8_t* p, size_t n, std::string* err) override {
        const int rc = qpack_decoder_read_encoder(dec_, p, n);
        if (rc != QPACK_OK) *err = std::string("encoder stream: ") + qpack_strerror(rc);
        return rc == QPACK_OK;
    }
    int decode(uint64_t stream, const std::vector<uint8_t>& section, Fields* got,
               std::string* err) override {
        int rc = qpack_decode_begin(dec_, stream, section.data(), section.size());
        if (rc == QPACK_BLOCKED) return 0;
        if (rc != QPACK_OK) {
            *err = std::string("begin: ") + qpack_strerror(rc);
            return -1;
        }
        for (;;) {
            qpack_field_t f[16];
            size_t n = 0;
            rc = qpack_decode_fields(dec_, f, 16, &n);
            for (size_t i = 0; i < n; ++i) {
                const Header h = header_of(f[i]);
                got->push_back(
                    {h.first, h.second, f[i].representation == HPACK_REP_NEVER_INDEXED});
            }
            if (rc == QPACK_SECTION_END) return 1;
            if (rc != QPACK_OK) {
                *err = std::string("fields: ") + qpack_strerror(rc);
                return -1;
            }
        }
    }
    std::vector<uint64_t> unblocked() override {
        std::vector<uint64_t> v(64);
        v.resize(qpack_decoder_unblocked(dec_, v.data(), v.size()));
        return v;
    }
    // Our decoder keeps nothing of a blocked section: it begins again.
    int resume(uint64_t stream, const std::vector<uint8_t>& section, Fields* got,
               std::string* err) override {
        return decode(stream, section, got, err);
    }
    void cancel(uint64_t stream) override { qpack_decoder_cancel_stream(dec_, stream); }
    std::vector<uint8_t> drain() override {
        std::vector<uint8_t> out;
        uint8_t b[256];
        for (size_t n; (n = qpack_decoder_drain(dec_, b, sizeof b)) != 0;)
            out.insert(out.end(), b, b + n);
        return out;
    }

private:
    qpack_decoder_t* dec_;
};

class Nghttp3Peer : public Peer {
public:
    Nghttp3Peer(size_t capacity, size_t blocked) {
        nghttp3_qpack_decoder_new(&dec_, capacity, blocked, nghttp3_mem_default());
    }
    ~Nghttp3Peer() override {
        for (auto& s : streams_) nghttp3_qpack_stream_context_del(s.second.sctx);
        nghttp3_qpack_decoder_del(dec_);
    }
    const char* name() const override { return "nghttp3's decoder"; }

    bool read_encoder(const uint8_t* p, size_t n, std::string* err) override {
        const nghttp3_ssize r = nghttp3_qpack_decoder_read_encoder(dec_, p, n);
        if (r != static_cast<nghttp3_ssize>(n)) {
            *err = "encoder stream: " + std::string(nghttp3_strerror(static_cast<int>(r)));
            return false;
        }
        return true;
    }
    int decode(uint64_t stream, const std::vector<uint8_t>& section, Fields* got,
               std::string* err) override {
        Stream& s = streams_[stream];
        if (!s.sctx)
            nghttp3_qpack_stream_context_new(&s.sctx, static_cast<int64_t>(stream),
                                             nghttp3_mem_default());
        s.rest = section;
        return resume(stream, s, got, err);
    }
    std::vector<uint64_t> unblocked() override {
        std::vector<uint64_t> v;
        for (auto& s : streams_) {
            if (s.second.blocked && nghttp3_qpack_stream_context_get_ricnt(s.second.sctx) <=
                                        nghttp3_qpack_decoder_get_icnt(dec_))
                v.push_back(s.first);
        }
        return v;
    }
    void cancel(uint64_t stream) override {
        nghttp3_qpack_decoder_cancel_stream(dec_, static_cast<int64_t>(stream));
        auto it = streams_.find(stream);
        if (it != streams_.end()) {
            nghttp3_qpack_stream_context_del(it->second.sctx);
            streams_.erase(it);
        }
    }
    std::vector<uint8_t> drain() override {
        const size_t n = nghttp3_qpack_decoder_get_decoder_streamlen(dec_);
        std::vector<uint8_t> out(n);
        if (n) {
            nghttp3_buf b;
            b.begin = b.pos = b.last = out.data();
            b.end = out.data() + n;
            nghttp3_qpack_decoder_write_decoder(dec_, &b);
            out.resize(static_cast<size_t>(b.last - b.pos));
        }
        return out;
    }
    // nghttp3's keeps what it read of it: the rest goes on.
    int resume(uint64_t stream, const std::vector<uint8_t>&, Fields* got,
               std::string* err) override {
        return resume(stream, streams_[stream], got, err);
    }

private:
    struct Stream {
        nghttp3_qpack_stream_context* sctx = nullptr;
        std::vector<uint8_t> rest;
        bool blocked = false;
    };
    int resume(uint64_t stream, Stream& s, Fields* got, std::string* err) {
        s.blocked = false;
        size_t at = 0;
        for (;;) {
            nghttp3_qpack_nv nv;
            uint8_t flags = 0;
            const nghttp3_ssize r = nghttp3_qpack_decoder_read_request(
                dec_, s.sctx, &nv, &flags, s.rest.data() + at, s.rest.size() - at, 1);
            if (r < 0) {
                *err = "section: " + std::string(nghttp3_strerror(static_cast<int>(r)));
                return -1;
            }
            at += static_cast<size_t>(r);
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
                const nghttp3_vec n = nghttp3_rcbuf_get_buf(nv.name);
                const nghttp3_vec v = nghttp3_rcbuf_get_buf(nv.value);
                got->push_back({std::string(reinterpret_cast<char*>(n.base), n.len),
                                std::string(reinterpret_cast<char*>(v.base), v.len),
                                (nv.flags & NGHTTP3_NV_FLAG_NEVER_INDEX) != 0});
                nghttp3_rcbuf_decref(nv.name);
                nghttp3_rcbuf_decref(nv.value);
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) {
                nghttp3_qpack_stream_context_del(s.sctx);
                streams_.erase(stream);
                return 1;
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
                s.rest.erase(s.rest.begin(), s.rest.begin() + static_cast<ptrdiff_t>(at));
                s.blocked = true;
                return 0;
            }
            if (r == 0 && !(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT)) {
                *err = "section: nghttp3 made no progress";
                return -1;
            }
        }
    }

    nghttp3_qpack_decoder* dec_ = nullptr;
    std::map<uint64_t, Stream> streams_;
};

// How a connection's decoder stream and encoder stream travel.
enum class Feedback {
    kImmediate,  // every section decoded and acknowledged before the next
    kNone,       // the encoder never hears from the decoder
    kRandom,     // both streams late and in random pieces, sections out of
                 // order, streams cancelled, budgets small at times
};

struct Conn {
    size_t capacity;
    size_t blocked;
    Feedback feedback;
    bool nghttp3;
};

std::string conn_name(const Conn& c) {
    static const char* const fb[] = {"immediate acknowledgements", "no acknowledgement",
                                     "random delivery"};
    return std::string(c.nghttp3 ? "nghttp3" : "ours") + ", capacity " +
           std::to_string(c.capacity) + ", blocked " + std::to_string(c.blocked) + ", " +
           fb[static_cast<int>(c.feedback)];
}

struct Totals {
    uint64_t sections = 0;
    uint64_t section_octets = 0;
    uint64_t stream_octets = 0;
    uint64_t dynamic = 0;     // fields referred to the dynamic table
    uint64_t cancelled = 0;
};

// One connection: every list encoded by our encoder and decoded by the
// peer; "" or the first failure.
std::string run_connection(const std::vector<HeaderList>& lists, const Conn& c, uint64_t seed,
                           Totals* t) {
    std::unique_ptr<Peer> peer;
    if (c.nghttp3)
        peer.reset(new Nghttp3Peer(c.capacity, c.blocked));
    else
        peer.reset(new OurPeer(c.capacity, c.blocked));
    qpack_encoder_t* enc = qpack_encoder_create(nullptr, 65536, nullptr);
    if (!enc) return "qpack_encoder_create failed";
    std::unique_ptr<qpack_encoder_t, void (*)(qpack_encoder_t*)> guard(enc,
                                                                       qpack_encoder_destroy);
    Random r{seed};
    const bool random = c.feedback == Feedback::kRandom;
    // The peer's SETTINGS come before the first section, or (random) after
    // a few.
    size_t settings_at = random ? r.next(3) : 0;

    struct InFlight {
        uint64_t stream;
        std::vector<uint8_t> section;
        Fields want;
    };
    std::vector<uint8_t> enc_pending, dec_pending;
    std::vector<InFlight> in_flight;          // sent, not yet read by the peer
    struct Blocked {
        std::vector<uint8_t> section;
        Fields want;
    };
    std::map<uint64_t, Blocked> blocked;      // read, blocked

    auto check = [&](uint64_t stream, const Fields& want, const Fields& got) -> std::string {
        if (got == want) return "";
        for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
            if (!(got[i] == want[i]))
                return "stream " + std::to_string(stream) + " field " + std::to_string(i) +
                       ": want " + want[i].name + ": " + want[i].value + ", got " +
                       got[i].name + ": " + got[i].value;
        }
        return "stream " + std::to_string(stream) + ": field counts differ";
    };
    auto deliver_encoder = [&](size_t n, std::string* err) -> bool {
        size_t at = 0;
        while (at < n) {
            const size_t k = random ? 1 + r.next(static_cast<uint32_t>(std::min<size_t>(n - at, 30)))
                                    : n - at;
            if (!peer->read_encoder(enc_pending.data() + at, k, err)) return false;
            at += k;
        }
        enc_pending.erase(enc_pending.begin(), enc_pending.begin() + static_cast<ptrdiff_t>(n));
        return true;
    };
    auto resume_unblocked = [&](std::string* err) -> bool {
        for (uint64_t s : peer->unblocked()) {
            Fields got;
            const Blocked& b = blocked[s];
            const int rc = peer->resume(s, b.section, &got, err);
            if (rc < 0) return false;
            if (rc == 0) {
                *err = "stream " + std::to_string(s) + " named unblocked, still blocked";
                return false;
            }
            *err = check(s, b.want, got);
            if (!err->empty()) return false;
            blocked.erase(s);
        }
        return true;
    };
    auto read_section = [&](InFlight& f, std::string* err) -> bool {
        Fields got;
        const int rc = peer->decode(f.stream, f.section, &got, err);
        if (rc < 0) return false;
        if (rc == 0) {
            blocked[f.stream] = Blocked{f.section, f.want};
            return true;
        }
        *err = check(f.stream, f.want, got);
        return err->empty();
    };
    auto feed_back = [&](bool all, std::string* err) -> bool {
        const std::vector<uint8_t> d = peer->drain();
        dec_pending.insert(dec_pending.end(), d.begin(), d.end());
        if (c.feedback == Feedback::kNone) return true;
        size_t n = all || !random ? dec_pending.size()
                                  : r.next(static_cast<uint32_t>(dec_pending.size() + 1));
        size_t at = 0;
        while (at < n) {
            const size_t k = random ? 1 + r.next(static_cast<uint32_t>(n - at)) : n - at;
            const int rc = qpack_encoder_read_decoder(enc, dec_pending.data() + at, k);
            if (rc != QPACK_OK) {
                *err = std::string("our encoder, reading the decoder stream: ") +
                       qpack_strerror(rc) + " in " + hex(dec_pending.data() + at, k);
                return false;
            }
            at += k;
        }
        dec_pending.erase(dec_pending.begin(), dec_pending.begin() + static_cast<ptrdiff_t>(n));
        return true;
    };

    std::string err;
    std::vector<uint8_t> section, stream_out;
    for (size_t i = 0; i < lists.size(); ++i) {
        if (i == settings_at && qpack_encoder_set_peer_settings(enc, c.capacity, c.blocked) != 0)
            return "qpack_encoder_set_peer_settings failed";
        const uint64_t stream = 4 * i;
        const std::vector<hpack_header_t> h = headers_of(lists[i]);
        size_t octets = 0;
        for (const auto& x : h) octets += x.name_len + x.value_len;
        section.resize(QPACK_ENCODE_BOUND(h.size(), octets));
        size_t budget = 1 << 16;
        if (random && r.next(4) == 0) budget = r.next(40);
        stream_out.resize(budget);
        size_t out_len, stream_len;
        const int rc = qpack_encode(enc, stream, h.data(), h.size(), section.data(),
                                    section.size(), &out_len, stream_out.data(), budget,
                                    &stream_len);
        if (rc != QPACK_OK) return std::string("qpack_encode: ") + qpack_strerror(rc);
        if (stream_len > budget) return "encoder stream above its budget";
        if (qpack_encoder_blocked_streams(enc) > c.blocked)
            return "more streams blocking than the peer allows";
        if (qpack_encoder_outstanding_sections(enc) > QPACK_MAX_OUTSTANDING)
            return "more outstanding sections than QPACK_MAX_OUTSTANDING";
        t->sections++;
        t->section_octets += out_len;
        t->stream_octets += stream_len;
        enc_pending.insert(enc_pending.end(), stream_out.begin(),
                           stream_out.begin() + static_cast<ptrdiff_t>(stream_len));
        in_flight.push_back(
            {stream, std::vector<uint8_t>(section.begin(), section.begin() + out_len),
             fields_of(lists[i])});

        if (!random) {
            if (!deliver_encoder(enc_pending.size(), &err)) return err;
            InFlight f = std::move(in_flight.back());
            in_flight.pop_back();
            if (!read_section(f, &err)) return err;
            if (!blocked.empty()) return "a section blocked with its inserts delivered";
            if (!feed_back(true, &err)) return err;
            continue;
        }
        // Random: some of the encoder stream, some sections in any order,
        // now and then a cancellation, some of the decoder stream.
        if (r.next(2)) {
            if (!deliver_encoder(r.next(static_cast<uint32_t>(enc_pending.size() + 1)), &err))
                return err;
            if (!resume_unblocked(&err)) return err;
        }
        while (!in_flight.empty() && r.next(3) != 0) {
            const size_t k = r.next(static_cast<uint32_t>(in_flight.size()));
            InFlight f = std::move(in_flight[k]);
            in_flight.erase(in_flight.begin() + static_cast<ptrdiff_t>(k));
            if (r.next(16) == 0) {  // the stream is reset before it is read
                peer->cancel(f.stream);
                ++t->cancelled;
                continue;
            }
            if (!read_section(f, &err)) return err;
        }
        if (!blocked.empty() && r.next(16) == 0) {  // a blocked stream is reset
            peer->cancel(blocked.begin()->first);
            blocked.erase(blocked.begin());
            ++t->cancelled;
        }
        if (!feed_back(false, &err)) return err;
    }
    // The rest arrives.
    if (!deliver_encoder(enc_pending.size(), &err)) return err;
    if (!resume_unblocked(&err)) return err;
    for (InFlight& f : in_flight)
        if (!read_section(f, &err)) return err;
    if (!resume_unblocked(&err)) return err;
    if (!blocked.empty())
        return "stream " + std::to_string(blocked.begin()->first) +
               " still blocked with every insert delivered";
    if (!feed_back(true, &err)) return err;
    hpack_stats_t st;
    qpack_encoder_stats(enc, &st, nullptr);
    t->dynamic += st.indexed_dynamic;
    return "";
}

const size_t kCapacities[] = {0, 256, 4096, 65536};
const size_t kBlocked[] = {0, 100};
const Feedback kFeedbacks[] = {Feedback::kImmediate, Feedback::kNone, Feedback::kRandom};

// Every connection kind over each of the lists; the totals per kind are
// printed, one line each.
void run_everywhere(const std::vector<std::vector<HeaderList>>& conns, const std::string& what) {
    for (bool ng : {false, true}) {
        for (size_t cap : kCapacities) {
            for (size_t b : kBlocked) {
                for (Feedback fb : kFeedbacks) {
                    const Conn c{cap, b, fb, ng};
                    Totals t;
                    for (size_t i = 0; i < conns.size(); ++i) {
                        const std::string err = run_connection(conns[i], c, 7 + i, &t);
                        ASSERT_EQ(err, "") << what << " " << i << ", " << conn_name(c);
                    }
                    if (cap == 4096 && fb != Feedback::kRandom)
                        std::cout << "    " << what << ", " << conn_name(c) << ": "
                                  << t.sections << " sections, " << t.section_octets << " + "
                                  << t.stream_octets << " octets, " << t.dynamic
                                  << " dynamic references\n";
                }
            }
        }
    }
}

}  // namespace

TEST(QpackEncoderRoundTrip, BuiltInRequests) {
    run_everywhere({builtin_lists()}, "built-in requests");
}

TEST(QpackEncoderRoundTrip, QifRequestLists) {
    std::string dir;
    const std::vector<std::string> files = qif_files(&dir);
    if (files.empty())
        GTEST_SKIP() << "no .qif files at " << dir << " (set QIFS_DIR to a directory of them)";
    std::vector<std::vector<HeaderList>> conns;
    for (const std::string& f : files) conns.push_back(read_qif(f));
    run_everywhere(conns, std::to_string(files.size()) + " qif files");
}

TEST(QpackEncoderRoundTrip, HpackTestCaseResponses) {
    REQUIRE_CORPUS(corpus);
    const auto stories = story_lists(corpus + "/raw-data");
    ASSERT_FALSE(stories.empty()) << "no stories in " << corpus << "/raw-data";
    run_everywhere(stories, std::to_string(stories.size()) + " raw-data stories");
}

// ------------------------------------------------ wire format, by hand

namespace {

struct Encoded {
    int rc;
    std::string section;  // hex
    std::string stream;   // hex
};

Encoded encode(qpack_encoder_t* enc, uint64_t stream, const HeaderList& list,
               size_t budget = 4096) {
    const std::vector<hpack_header_t> h = headers_of(list);
    std::vector<uint8_t> out(QPACK_ENCODE_BOUND(h.size(), 4096)), so(budget + 1);
    size_t ol = 0, sl = 0;
    const int rc = qpack_encode(enc, stream, h.data(), h.size(), out.data(), out.size(), &ol,
                                so.data(), budget, &sl);
    return {rc, hex(out.data(), ol), hex(so.data(), sl)};
}

int read_decoder(qpack_encoder_t* enc, const std::string& hex_octets) {
    const std::vector<uint8_t> b = unhex(hex_octets);
    return qpack_encoder_read_decoder(enc, b.data(), b.size());
}

using EncoderPtr = std::unique_ptr<qpack_encoder_t, void (*)(qpack_encoder_t*)>;
EncoderPtr make_encoder(size_t cap = 4096) {
    return EncoderPtr(qpack_encoder_create(nullptr, cap, nullptr), qpack_encoder_destroy);
}

}  // namespace

// Before the peer's SETTINGS: static references and literals, no encoder
// stream (RFC 9204 3.2.3).
TEST(QpackEncoderWire, BeforeSettingsStaticAndLiteralsOnly) {
    EncoderPtr enc = make_encoder();
    const Encoded e = encode(enc.get(), 0, {{":status", "200"}, {"x-a", "b"}});
    ASSERT_EQ(e.rc, QPACK_OK);
    // prefix 0000; :status 200 is static 25 (0xd9); x-a: b a literal name
    // (0x23 'x-a', raw: Huffman is not shorter) and a raw value.
    EXPECT_EQ(e.section, "0000d923782d610162");
    EXPECT_EQ(e.stream, "");
    EXPECT_EQ(qpack_encoder_insert_count(enc.get()), 0u);
}

// Every static entry is found as itself, and a name of the table with
// another value is referred to by its lowest index (RFC 9204 Appendix A).
TEST(QpackEncoderWire, EveryStaticEntryIsFound) {
    EncoderPtr enc = make_encoder();
    for (uint32_t i = 0; i < hpack::kQpackStaticEntries; ++i) {
        const hpack::StaticEntry& e = hpack::kQpackStaticTable[i];
        const std::string name(e.name, e.name_len), value(e.value, e.value_len);
        if (name == "authorization" || name == "cookie" || name == "set-cookie")
            continue;  // never indexed by the policy, as literals
        const Encoded got = encode(enc.get(), 0, {{name, value}});
        std::vector<uint8_t> want = {0, 0};
        if (i < 63) {
            want.push_back(uint8_t(0xc0 | i));
        } else {
            want.push_back(0xff);
            want.push_back(uint8_t(i - 63));
        }
        EXPECT_EQ(got.section, hex(want)) << name << ": " << value;
        uint32_t lowest = i;
        for (uint32_t j = 0; j < i; ++j)
            if (std::string(hpack::kQpackStaticTable[j].name) == name) {
                lowest = j;
                break;
            }
        const Encoded other = encode(enc.get(), 0, {{name, value + "-other-value"}});
        // a literal with a static name reference, 4-bit prefix
        const std::vector<uint8_t> o = unhex(other.section);
        ASSERT_GE(o.size(), 3u);
        EXPECT_EQ(o[2] & 0xd0, 0x50) << name;
        const uint32_t idx = (o[2] & 0x0f) < 15 ? (o[2] & 0x0f) : 15 + o[3];
        EXPECT_EQ(idx, lowest) << name;
    }
}

// A capacity of 0 on either side: never an encoder-stream octet.
TEST(QpackEncoderWire, CapacityZeroWritesNoEncoderStream) {
    for (size_t ours : {size_t{0}, size_t{4096}}) {
        EncoderPtr enc = make_encoder(ours);
        ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), ours ? 0 : 4096, 100), QPACK_OK);
        for (int i = 0; i < 3; ++i) {
            const Encoded e = encode(enc.get(), 4 * i, {{"custom-key", "custom-value"}});
            ASSERT_EQ(e.rc, QPACK_OK);
            EXPECT_EQ(e.stream, "");
            EXPECT_EQ(e.section.substr(0, 4), "0000");
        }
        EXPECT_EQ(qpack_encoder_table_capacity(enc.get()), 0u);
    }
}

// Blocking allowed: Set Dynamic Table Capacity, the insertion, and a
// post-Base reference to it in the same section; then, once acknowledged,
// a relative one.
TEST(QpackEncoderWire, InsertAndReferPostBaseThenRelative) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
    Encoded e = encode(enc.get(), 0, {{"custom-key", "custom-value"}});
    ASSERT_EQ(e.rc, QPACK_OK);
    // 3fe11f: capacity 4096; 68 + Huffman name, 89 + Huffman value
    EXPECT_EQ(e.stream, "3fe11f6825a849e95ba97d7f8925a849e95bb8e8b4bf");
    // Required Insert Count 1 (encoded 2), Base 0 (sign 1, delta 0), then
    // post-Base index 0.
    EXPECT_EQ(e.section, "028010");
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 1u);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 1u);
    ASSERT_EQ(read_decoder(enc.get(), "80"), QPACK_OK);  // Section Acknowledgment, stream 0
    EXPECT_EQ(qpack_encoder_known_received_count(enc.get()), 1u);
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 0u);
    e = encode(enc.get(), 4, {{"custom-key", "custom-value"}});
    EXPECT_EQ(e.stream, "");
    EXPECT_EQ(e.section, "020080");  // Base 1, relative index 0
}

// No blocking allowed: a new field goes in only when it recurs, the
// section that inserts it carries it as a literal, and the entry is
// referred to once the decoder has acknowledged it.
TEST(QpackEncoderWire, BlockedZeroRefersOnlyToAcknowledgedEntries) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 0), QPACK_OK);
    Encoded e = encode(enc.get(), 0, {{"custom-key", "custom-value"}});
    EXPECT_EQ(e.stream, "");  // seen once
    EXPECT_EQ(e.section.substr(0, 4), "0000");
    e = encode(enc.get(), 4, {{"custom-key", "custom-value"}});
    EXPECT_NE(e.stream, "");  // it recurs: inserted
    EXPECT_EQ(e.section.substr(0, 4), "0000");  // but not referred to
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 0u);
    e = encode(enc.get(), 8, {{"custom-key", "custom-value"}});
    EXPECT_EQ(e.section.substr(0, 4), "0000");  // not acknowledged yet
    ASSERT_EQ(read_decoder(enc.get(), "01"), QPACK_OK);  // Insert Count Increment 1
    e = encode(enc.get(), 12, {{"custom-key", "custom-value"}});
    EXPECT_EQ(e.section, "020080");
}

// The encoder-stream budget: nothing inserted without room for the whole
// instruction (and the capacity before it); the fields go as literals.
TEST(QpackEncoderWire, BudgetBoundsTheEncoderStream) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
    Encoded e = encode(enc.get(), 0, {{"custom-key", "custom-value"}}, 0);
    EXPECT_EQ(e.stream, "");
    EXPECT_EQ(e.section.substr(0, 4), "0000");
    e = encode(enc.get(), 4, {{"custom-key", "custom-value"}}, 21);
    EXPECT_EQ(e.stream, "");  // 22 octets needed
    e = encode(enc.get(), 8, {{"custom-key", "custom-value"}}, 22);
    EXPECT_EQ(e.stream.size(), 44u);
    EXPECT_EQ(e.section, "028010");
}

// Entries the decoder has not acknowledged, or that an outstanding section
// refers to, are never evicted: the table fills, then the fields go as
// literals; acknowledgements let it evict again.
TEST(QpackEncoderWire, NeverEvictsWhatThePeerMayNeed) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 256, 100), QPACK_OK);
    for (int i = 0; i < 20; ++i) {
        const Encoded e =
            encode(enc.get(), 4 * i, {{"x-field-" + std::to_string(i), std::string(40, 'v')}});
        ASSERT_EQ(e.rc, QPACK_OK);
        EXPECT_LE(qpack_encoder_table_size(enc.get()), 256u);
    }
    hpack_stats_t st;
    qpack_encoder_stats(enc.get(), &st, nullptr);
    EXPECT_EQ(st.evictions, 0u);
    const uint64_t inserted = qpack_encoder_insert_count(enc.get());
    EXPECT_EQ(inserted, 3u);  // 81 octets each in 256
    // Every section that referred to an entry acknowledged.
    for (uint64_t i = 0; i < 3; ++i)
        ASSERT_EQ(read_decoder(enc.get(), hex(std::vector<uint8_t>{uint8_t(0x80 | (4 * i))})),
                  QPACK_OK);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 0u);
    const Encoded e = encode(enc.get(), 400, {{"x-new", std::string(40, 'w')}});
    qpack_encoder_stats(enc.get(), &st, nullptr);
    EXPECT_EQ(st.evictions, 1u);
    EXPECT_EQ(qpack_encoder_insert_count(enc.get()), inserted + 1);
}

// A field referred to when its entry is in the oldest eighth of the table
// is duplicated, and the copy referred to: one octet on the encoder
// stream instead of the whole field inserted again once evicted.
TEST(QpackEncoderWire, EntryAboutToBeEvictedIsDuplicated) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 256, 100), QPACK_OK);
    const HeaderList lists[] = {{{"custom-key", "custom-value"}},      // 54 octets
                                {{"x-b", std::string(40, 'b')}},       // 75
                                {{"x-c", std::string(40, 'c')}},       // 75
                                {{"x-d", "dd"}}};                      // 37
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(encode(enc.get(), 4 * i, lists[i]).rc, QPACK_OK);
        ASSERT_EQ(read_decoder(enc.get(), hex(std::vector<uint8_t>{uint8_t(0x80 | 4 * i)})),
                  QPACK_OK);  // each section acknowledged
    }
    // 241 octets in: custom-key is within 32 of eviction.
    const Encoded e = encode(enc.get(), 16, {{"custom-key", "custom-value"}});
    EXPECT_EQ(e.stream, "03");  // Duplicate, relative index 3
    // Required Insert Count 5 (encoded 5 % 16 + 1), Base 4, post-Base 0
    EXPECT_EQ(e.section, "068010");
    EXPECT_EQ(qpack_encoder_table_entries(enc.get()), 4u);  // the original evicted
}

// A field the caller marks HPACK_FIELD_NO_INDEX is referred to where it
// is, never duplicated (found by qpack_roundtrip_fuzz).
TEST(QpackEncoderWire, NoIndexFieldIsNotDuplicated) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 256, 100), QPACK_OK);
    const HeaderList lists[] = {{{"custom-key", "custom-value"}},
                                {{"x-b", std::string(40, 'b')}},
                                {{"x-c", std::string(40, 'c')}},
                                {{"x-d", "dd"}}};
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(encode(enc.get(), 4 * i, lists[i]).rc, QPACK_OK);
        ASSERT_EQ(read_decoder(enc.get(), hex(std::vector<uint8_t>{uint8_t(0x80 | 4 * i)})),
                  QPACK_OK);
    }
    const HeaderList field = {{"custom-key", "custom-value"}};
    std::vector<hpack_header_t> h = headers_of(field);
    h[0].flags = HPACK_FIELD_NO_INDEX;
    uint8_t out[64], so[64];
    size_t ol, sl;
    ASSERT_EQ(qpack_encode(enc.get(), 16, h.data(), 1, out, sizeof out, &ol, so, sizeof so, &sl),
              QPACK_OK);
    EXPECT_EQ(sl, 0u);
    // Required Insert Count 1 (encoded 2), Base 4 (delta 3), relative 3
    EXPECT_EQ(hex(out, ol), "020383");
}

// A peer that never acknowledges holds at most QPACK_MAX_OUTSTANDING
// sections of ours; past them, sections refer to nothing.
TEST(QpackEncoderWire, OutstandingSectionsAreBounded) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 1000), QPACK_OK);
    for (int i = 0; i < QPACK_MAX_OUTSTANDING + 10; ++i) {
        const Encoded e = encode(enc.get(), 4 * i, {{"custom-key", "custom-value"}});
        ASSERT_EQ(e.rc, QPACK_OK);
        if (i >= QPACK_MAX_OUTSTANDING) {
            EXPECT_EQ(e.section.substr(0, 4), "0000");
        }
    }
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), size_t{QPACK_MAX_OUTSTANDING});
}

TEST(QpackEncoderWire, NeverIndexedFieldsCarryTheNBit) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
    // authorization: static name 84 with N (0x7f 0x45); a literal name
    // with N (0x3?) for a field the caller marks.
    Encoded e = encode(enc.get(), 0, {{"authorization", "secret-secret-secret"}});
    EXPECT_EQ(e.stream, "");
    EXPECT_EQ(e.section.substr(0, 8), "00007f45");
    const HeaderList token = {{"x-token", "abc"}};
    std::vector<hpack_header_t> h = headers_of(token);
    h[0].flags = HPACK_FIELD_NEVER_INDEX;
    uint8_t out[64], so[64];
    size_t ol, sl;
    ASSERT_EQ(qpack_encode(enc.get(), 4, h.data(), 1, out, sizeof out, &ol, so, sizeof so, &sl),
              QPACK_OK);
    EXPECT_EQ(sl, 0u);
    EXPECT_EQ(out[2] & 0xf0, 0x30);  // 001N: a literal name, never indexed
}

TEST(QpackEncoderWire, RefusesBadArgumentsAndShortBuffers) {
    EncoderPtr enc = make_encoder();
    hpack_header_t h{};
    h.name = reinterpret_cast<const uint8_t*>("");
    uint8_t out[64];
    size_t ol, sl;
    EXPECT_EQ(qpack_encode(enc.get(), 0, &h, 1, out, sizeof out, &ol, nullptr, 0, &sl),
              HPACK_E_ARGUMENT);
    const HeaderList list = {{"x-a", "b"}};
    const std::vector<hpack_header_t> ok = headers_of(list);
    EXPECT_EQ(qpack_encode(enc.get(), 0, ok.data(), 1, out, QPACK_SECTION_BOUND, &ol, nullptr,
                           0, &sl),
              HPACK_E_BUFFER);
    // no QUIC stream id is 2^62 or more: its acknowledgment could not name it
    EXPECT_EQ(qpack_encode(enc.get(), uint64_t{1} << 62, ok.data(), 1, out, sizeof out, &ol,
                           nullptr, 0, &sl),
              HPACK_E_ARGUMENT);
    EXPECT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 0), QPACK_OK);
    EXPECT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 0), HPACK_E_STATE);
}

// ----------------------------------------------------- the decoder stream

TEST(QpackEncoderDecoderStream, ErrorsAreDecoderStreamErrors) {
    struct Case {
        const char* what;
        const char* octets;
        int rc;
    } const cases[] = {
        {"acknowledgment with nothing outstanding", "80", QPACK_E_DEC_ACK},
        {"increment of zero", "00", QPACK_E_DEC_INCREMENT},
        {"increment beyond the inserts", "02", QPACK_E_DEC_INCREMENT},
        {"integer of eleven octets", "3f" "808080808080808080" "00", QPACK_E_DEC_INTEGER},
        {"increment of 63 in three octets, beyond the inserts", "3f8000",
         QPACK_E_DEC_INCREMENT},
        {"integer above 62 bits", "ffffffffffffffffffff01", QPACK_E_DEC_INTEGER},
    };
    for (const Case& c : cases) {
        EncoderPtr enc = make_encoder();
        ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
        ASSERT_EQ(encode(enc.get(), 8, {{"custom-key", "custom-value"}}).rc, QPACK_OK);
        EXPECT_EQ(read_decoder(enc.get(), c.octets), c.rc) << c.what;
        EXPECT_EQ(qpack_h3_error(c.rc), QPACK_H3_DECODER_STREAM_ERROR) << c.what;
        EXPECT_EQ(read_decoder(enc.get(), "01"), HPACK_E_STATE) << c.what;
    }
}

// Each instruction split at every octet boundary gives what it gives
// whole; a cancellation of an unknown stream is not an error.
TEST(QpackEncoderDecoderStream, AnySplit) {
    // Sections on streams 0 and 300 refer to the table; then: cancel
    // stream 7 (unknown), increment 1, acknowledge 300 (two octets of id).
    const std::vector<uint8_t> all = unhex("47" "01" "ffad01");
    for (size_t a = 0; a <= all.size(); ++a) {
        for (size_t b = a; b <= all.size(); ++b) {
            EncoderPtr enc = make_encoder();
            ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
            encode(enc.get(), 0, {{"custom-key", "custom-value"}});
            encode(enc.get(), 300, {{"custom-key2", "custom-value2"}});
            ASSERT_EQ(qpack_encoder_outstanding_sections(enc.get()), 2u);
            ASSERT_EQ(qpack_encoder_read_decoder(enc.get(), all.data(), a), QPACK_OK);
            ASSERT_EQ(qpack_encoder_read_decoder(enc.get(), all.data() + a, b - a), QPACK_OK);
            ASSERT_EQ(qpack_encoder_read_decoder(enc.get(), all.data() + b, all.size() - b),
                      QPACK_OK);
            EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 1u) << a << " " << b;
            EXPECT_EQ(qpack_encoder_known_received_count(enc.get()), 2u) << a << " " << b;
        }
    }
}

// A Stream Cancellation releases every section of the stream.
TEST(QpackEncoderDecoderStream, CancellationReleasesTheStream) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
    encode(enc.get(), 4, {{"custom-key", "custom-value"}});
    encode(enc.get(), 4, {{"custom-key", "custom-value"}, {"x-trailer", "1"}});
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 2u);
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 1u);  // one stream
    ASSERT_EQ(read_decoder(enc.get(), "44"), QPACK_OK);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 0u);
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 0u);
}

// A section withdrawn (its stream was reset before it went out) is no
// longer waited for: its stream stops blocking, and an acknowledgment for
// it would be one for nothing.  Only the last section encoded goes, and
// only until the decoder stream is read.
TEST(QpackEncoderDecoderStream, AWithdrawnSectionIsNotWaitedFor) {
    EncoderPtr enc = make_encoder();
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc.get(), 4096, 100), QPACK_OK);
    encode(enc.get(), 4, {{"custom-key", "custom-value"}});
    encode(enc.get(), 8, {{"custom-key", "custom-value"}, {"x-trailer", "1"}});
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 2u);
    ASSERT_EQ(qpack_encoder_withdraw(enc.get()), QPACK_OK);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 1u);
    EXPECT_EQ(qpack_encoder_blocked_streams(enc.get()), 1u);
    ASSERT_EQ(qpack_encoder_withdraw(enc.get()), QPACK_OK);   // nothing more
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 1u);
    encode(enc.get(), 12, {{":status", "200"}});   // refers to nothing
    ASSERT_EQ(qpack_encoder_withdraw(enc.get()), QPACK_OK);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 1u);
    encode(enc.get(), 16, {{"custom-key", "custom-value"}});
    ASSERT_EQ(read_decoder(enc.get(), "02"), QPACK_OK);   // an increment
    ASSERT_EQ(qpack_encoder_withdraw(enc.get()), QPACK_OK);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc.get()), 2u);
    ASSERT_EQ(read_decoder(enc.get(), "84" "90"), QPACK_OK);
    EXPECT_EQ(read_decoder(enc.get(), "88"), QPACK_E_DEC_ACK);
}

// ---------------------------------------------------------- allocations

namespace {
struct CountingAllocator {
    size_t allocs = 0;
    bool fail = false;
    hpack_allocator_t a{
        [](void* ctx, size_t n) -> void* {
            auto* self = static_cast<CountingAllocator*>(ctx);
            if (self->fail) return nullptr;
            ++self->allocs;
            return malloc(n);
        },
        [](void*, void* p) { free(p); }, this};
};
}  // namespace

// A warm connection's sections allocate nothing: what an encoder holds
// grows with the table's contents, then stays.  The peer's decoder (ours)
// acknowledges each section.
TEST(QpackEncoderAlloc, SteadyStateAllocatesNothing) {
    CountingAllocator ca;
    qpack_encoder_t* enc = qpack_encoder_create(&ca.a, 4096, nullptr);
    EncoderPtr guard(enc, qpack_encoder_destroy);
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc, 4096, 100), QPACK_OK);
    OurPeer peer(4096, 100);
    const HeaderList response = {{":status", "200"}, {"server", "nginx"},
                                 {"content-type", "text/html"}, {"cache-control", "max-age=60"},
                                 {"x-frame-options", "SAMEORIGIN"}, {"vary", "accept-encoding"}};
    size_t after_warmup = 0;
    std::string err;
    for (int i = 0; i < 300; ++i) {
        HeaderList l = response;
        l.emplace_back("date", "Sun, 06 Dec 2026 12:00:" + std::to_string(10 + i % 50) + " GMT");
        const Encoded e = encode(enc, 4 * i, l);
        ASSERT_EQ(e.rc, QPACK_OK);
        const std::vector<uint8_t> es = unhex(e.stream);
        ASSERT_TRUE(peer.read_encoder(es.data(), es.size(), &err)) << err;
        Fields got;
        ASSERT_EQ(peer.decode(4 * i, unhex(e.section), &got, &err), 1) << err;
        EXPECT_EQ(got, fields_of(l));
        const std::vector<uint8_t> d = peer.drain();
        ASSERT_EQ(qpack_encoder_read_decoder(enc, d.data(), d.size()), QPACK_OK);
        // the table has been full and every date seen twice
        if (i == 120) after_warmup = ca.allocs;
    }
    EXPECT_EQ(ca.allocs, after_warmup);
}

// An allocation failure leaves the encoder as it was: HPACK_E_NOMEM, or
// the fields as literals when the table cannot grow.  The table's first
// block and the first 8 outstanding sections come with the encoder.
TEST(QpackEncoderAlloc, FailureChangesNothing) {
    CountingAllocator ca;
    qpack_encoder_t* enc = qpack_encoder_create(&ca.a, 4096, nullptr);
    EncoderPtr guard(enc, qpack_encoder_destroy);
    ASSERT_EQ(qpack_encoder_set_peer_settings(enc, 4096, 100), QPACK_OK);
    ca.fail = true;
    EXPECT_EQ(encode(enc, 0, {{"custom-key", "custom-value"}}).section, "028010");
    for (uint64_t i = 1; i < 8; ++i)
        EXPECT_EQ(encode(enc, 4 * i, {{"custom-key", "custom-value"}}).section, "020080");
    // the ninth outstanding section, and a field that would be inserted
    EXPECT_EQ(encode(enc, 32, {{"custom-key", "other-value"}}).rc, HPACK_E_NOMEM);
    EXPECT_EQ(qpack_encoder_insert_count(enc), 1u);
    EXPECT_EQ(qpack_encoder_outstanding_sections(enc), 8u);
    ca.fail = false;
    const Encoded e = encode(enc, 32, {{"custom-key", "other-value"}});
    EXPECT_EQ(e.section, "038010");
    EXPECT_EQ(ca.allocs, 2u);  // the encoder, then the sections' array
}
