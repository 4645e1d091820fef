// The QPACK encoder round trip (RFC 9204): field sections built by the
// fuzzer go through our encoder on several streams and come back through
// two decoders of the peer, ours and libnghttp3's, on one connection whose
// delivery the fuzzer schedules: the encoder stream in pieces, early or
// late (sections block until their inserts arrive), sections of different
// streams in any order (in order within a stream), the decoder stream fed
// back to the encoder late and in pieces, streams cancelled, and sections
// withdrawn when their stream is reset before they go out.
//
// Checked:
//   - every section decodes, on both decoders, to exactly the fields
//     encoded, in order; a field flagged HPACK_FIELD_NEVER_INDEX, a name
//     the policy never indexes and a short cookie arrive never-indexed
//     (both decoders agree on the bit for every field);
//   - neither decoder ever reports an error: not on the encoder stream,
//     not on a section, not one stream blocked too many (nghttp3's QPACK
//     decoder leaves that count to its caller: the target counts for it);
//     and our encoder never finds an error on the decoder stream it is fed;
//   - the encoder-stream octets of a section never exceed its budget (0,
//     small, or large); a section whose fields are all NEVER_INDEX or
//     NO_INDEX inserts nothing; before the peer's settings nothing is
//     inserted and no section refers to the dynamic table;
//   - qpack_encoder_blocked_streams() never exceeds the peer's
//     SETTINGS_QPACK_BLOCKED_STREAMS (0 before the settings), and the
//     sections waiting on the decoders never exceed it either;
//   - whenever the decoders have the whole encoder stream, their tables
//     are the encoder's (insert count, size, entries, capacity), and the
//     Known Received Count never exceeds the inserts;
//   - a field with an empty name is refused (HPACK_E_ARGUMENT), an out_cap
//     one octet below QPACK_ENCODE_BOUND() too (HPACK_E_BUFFER), and an
//     allocation failure (FaultyAllocator, the
//     encoder's allocator failing once) is HPACK_E_NOMEM or a section that
//     still round-trips; either way the encoder is unchanged (its counts,
//     table and outstanding sections) and encodes the same section next;
//   - at the end, with everything delivered and fed back, no stream is
//     blocking, no section is outstanding, and every insert is known.
//
// Input: a control stream (fuzz_common.h's Control), zeros once spent.
//   octet 0   our maximum capacity (kCaps)
//   octet 1   bits 0-3 the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY
//             (kPeerCaps); bits 4-5 its settings 0: at once, 1: at the
//             first "settings" operation, 2 or 3: never; bit 6: the
//             encoder is fed nghttp3's decoder stream instead of ours;
//             bit 7: a custom policy
//   octet 2   the peer's SETTINGS_QPACK_BLOCKED_STREAMS (% 101)
//   octet 3   the custom policy: bit i marks kPolicyNames[i]
//   then operations, an opcode octet whose low three bits select:
//     0, 1  a field: bits 3-4 its HPACK_FIELD_* flags, bit 5 its value
//           pre-encoded (value_literal), bits 6-7 where it comes from:
//           0 u8: a pair of kPairs; 1 u8 + value: a name of kNames;
//           2 u8 n + n octets + value: a literal name of n % 25 octets
//           (an empty one makes the section HPACK_E_ARGUMENT, and it goes
//           again without that field); 3 u8: a field used before
//     2     end of section: u8 s, the stream slot (s & 7) and the budget
//           (s >> 3: 0 none, with stream_out NULL when the opcode's bit 3
//           is set; 1-15 that many octets; 16-30 (n - 15) * 32; 31
//           64 KiB); opcode bit 4: first try an out_cap one octet short;
//           bit 5: the stream is reset before the section goes out, which
//           is withdrawn (qpack_encoder_withdraw()) and never delivered,
//           and the stream cancelled as by operation 6
//     3     deliver u8 n octets of the encoder stream (0: all of it) to
//           both decoders
//     4     deliver the next section of slot u8 & 7 to both decoders
//     5     feed back u8 n octets of the decoder stream (0: all of it)
//     6     cancel the stream of slot u8 & 7: its undelivered sections
//           are dropped, both decoders cancel it, the slot takes a new id
//     7     u8 b: bit 7, the peer's settings arrive (when delayed); else
//           the next qpack_encode()'s allocator fails after b more
//           allocations
// A value is u8 n: n < 0xf0 gives n octets, else (n - 0xef) * 256 octets
// cycling over the next 8.  When the control stream is spent, a pending
// section is encoded on slot 0 and everything is delivered.

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <nghttp3/nghttp3.h>

#include "fuzz_common.h"
#include "qpack.h"

using namespace hpack_fuzz;

namespace {

const size_t kCaps[] = {0, 256, 4096, 65536, 32, 100, 220, 1024, 16384, 65535,
                        HPACK_MAX_TABLE_SIZE};
const size_t kPeerCaps[] = {0,    31,   32,    64,    220,   256,  1000, 4096,
                            4097, 16384, 65536, 100,  512,   2048, 8192, HPACK_MAX_TABLE_SIZE};
constexpr size_t kNoSettings = SIZE_MAX;

struct Pair {
    const char* name;
    const char* value;
};

// Response fields a server repeats, so that the table gets used.
const Pair kPairs[] = {
    {":status", "200"},
    {":status", "404"},
    {":status", "304"},
    {":status", "301"},
    {"content-type", "text/html; charset=utf-8"},
    {"content-type", "application/json"},
    {"content-type", "image/png"},
    {"content-length", "1234"},
    {"content-length", "0"},
    {"date", "Sun, 06 Dec 2026 11:06:19 GMT"},
    {"date", "Sun, 06 Dec 2026 11:06:20 GMT"},
    {"server", "nginx"},
    {"server", "nginx/1.25.3"},
    {"cache-control", "max-age=3600"},
    {"cache-control", "no-cache"},
    {"cache-control", "private, max-age=0"},
    {"etag", "\"5f3e-1a2b\""},
    {"last-modified", "Sat, 05 Dec 2026 10:00:00 GMT"},
    {"vary", "accept-encoding"},
    {"vary", "Accept-Encoding, Origin"},
    {"set-cookie", "session=0123456789abcdef0123; Path=/; HttpOnly"},
    {"set-cookie", "id=1"},
    {"strict-transport-security", "max-age=63072000; includeSubDomains"},
    {"x-frame-options", "SAMEORIGIN"},
    {"x-content-type-options", "nosniff"},
    {"access-control-allow-origin", "*"},
    {"access-control-allow-origin", "https://example.com"},
    {"content-encoding", "gzip"},
    {"content-encoding", "br"},
    {"location", "https://example.com/next"},
    {"x-request-id", "7f9c2ba4e88f827d"},
    {"age", "0"},
    {"age", "120"},
    {"expires", "Thu, 01 Jan 1970 00:00:00 GMT"},
    {"alt-svc", "h3=\":443\"; ma=86400"},
    {"link", "</style.css>; rel=preload; as=style"},
    {"accept-ranges", "bytes"},
    {"x-powered-by", "PHP/8.2"},
    {"authorization", "Bearer abc"},
    {"proxy-authorization", "Basic Zm9vOmJhcg=="},
    {"cookie", "a=b"},
    {"via", "1.1 varnish"},
    {"x-cache", "HIT"},
    {"content-security-policy", "default-src 'self'"},
    {"referrer-policy", "no-referrer"},
    {"server-timing", "total;dur=12"},
    {"x-custom", "1"},
    {"x-custom", ""},
};
constexpr size_t kPairCount = sizeof kPairs / sizeof kPairs[0];

const char* const kNames[] = {
    ":status", "content-type", "content-length", "date", "server", "cache-control", "etag",
    "last-modified", "vary", "set-cookie", "cookie", "location", "x-request-id", "age",
    "expires", "authorization", "proxy-authorization", "x-custom", "x-forwarded-for",
    "user-agent", ":path", "content-range", "traceparent", "link", "via", "x-cache",
    "access-control-allow-origin", "content-encoding", "accept-ranges", "www-authenticate",
    "retry-after", "x-trace",
};
constexpr size_t kNameCount = sizeof kNames / sizeof kNames[0];

const char* const kPolicyNames[] = {"x-custom", "x-forwarded-for", "server", "cookie",
                                    "etag",     "x-request-id",    "vary",   "x-cache"};

// Octets of fields (name + value + 32) one input may encode in all.
constexpr size_t kPlainBudget = 256 * 1024;
constexpr size_t kMaxFields = 64;
constexpr size_t kSlots = 8;

struct Field {
    std::string name, value;
    unsigned flags;
    bool literal;   // the value goes as value_literal
};

struct Got {
    std::string name, value;
    bool never;
};

std::string show(const std::vector<Field>& list) {
    std::string s;
    for (const Field& f : list)
        s += "\n    " + hex(reinterpret_cast<const uint8_t*>(f.name.data()), f.name.size()) +
             ": " + std::to_string(f.value.size()) + " octets, flags " + std::to_string(f.flags) +
             (f.literal ? " literal" : "");
    return s;
}

std::string value_of(Control& in) {
    const uint8_t n = in.u8();
    if (n < 0xf0) return in.bytes(n);
    std::string pattern = in.bytes(8);
    if (pattern.empty()) pattern = "v";
    std::string v(size_t{n - 0xefu} * 256, '\0');
    for (size_t i = 0; i < v.size(); ++i) v[i] = pattern[i % pattern.size()];
    return v;
}

// A section on its way to the decoders.
struct Section {
    uint64_t stream;
    std::vector<Field> fields;
    std::vector<uint8_t> wire;
    bool blocked = false;            // begun on both decoders, waiting
    nghttp3_qpack_stream_context* sctx = nullptr;
    size_t their_used = 0;           // octets nghttp3 read before it blocked
};

// What the encoder shows of itself: unchanged by a refused encode.
struct Snapshot {
    uint64_t inserts, known;
    size_t size, entries, capacity, blocked, outstanding;
    hpack_stats_t stats;
    uint64_t stream_bytes;

    explicit Snapshot(const qpack_encoder_t* e)
        : inserts(qpack_encoder_insert_count(e)), known(qpack_encoder_known_received_count(e)),
          size(qpack_encoder_table_size(e)), entries(qpack_encoder_table_entries(e)),
          capacity(qpack_encoder_table_capacity(e)), blocked(qpack_encoder_blocked_streams(e)),
          outstanding(qpack_encoder_outstanding_sections(e)) {
        qpack_encoder_stats(e, &stats, &stream_bytes);
    }
    bool operator==(const Snapshot& o) const {
        return inserts == o.inserts && known == o.known && size == o.size &&
               entries == o.entries && capacity == o.capacity && blocked == o.blocked &&
               outstanding == o.outstanding && stream_bytes == o.stream_bytes &&
               memcmp(&stats, &o.stats, sizeof stats) == 0;
    }
};

struct Conn {
    FaultyAllocator enc_alloc, dec_alloc;
    hpack_policy_t* policy = nullptr;
    qpack_encoder_t* enc = nullptr;
    qpack_decoder_t* ours = nullptr;
    nghttp3_qpack_decoder* theirs = nullptr;

    size_t peer_capacity = 0, peer_blocked = 0;
    bool settings = false;            // the encoder has the peer's settings
    bool feed_theirs = false;         // the encoder reads nghttp3's decoder stream
    long fail_next = -1;              // the next encode's allocator countdown

    std::vector<uint8_t> es;          // encoder stream not yet delivered
    std::vector<uint8_t> fb;          // decoder stream not yet fed back
    std::deque<Section> slots[kSlots];
    uint64_t ids[kSlots];
    uint64_t next_gen = 1;
    std::vector<uint64_t> blocked;    // streams waiting on the decoders, in order

    Conn() {
        for (size_t i = 0; i < kSlots; ++i) ids[i] = 4 * i;
    }
    ~Conn() {
        for (auto& q : slots)
            for (Section& s : q) nghttp3_qpack_stream_context_del(s.sctx);
        qpack_encoder_destroy(enc);
        qpack_decoder_destroy(ours);
        nghttp3_qpack_decoder_del(theirs);
        hpack_policy_destroy(policy);
        FUZZ_CHECK(enc_alloc.live == 0, std::to_string(enc_alloc.live) + " encoder blocks leaked");
        FUZZ_CHECK(dec_alloc.live == 0, std::to_string(dec_alloc.live) + " decoder blocks leaked");
    }

    void give_settings() {
        if (settings || peer_capacity == kNoSettings) return;
        settings = true;
        FUZZ_CHECK(qpack_encoder_set_peer_settings(enc, peer_capacity, peer_blocked) == QPACK_OK,
                   "set_peer_settings");
        FUZZ_CHECK(qpack_encoder_set_peer_settings(enc, peer_capacity, peer_blocked) == HPACK_E_STATE,
                   "set_peer_settings twice");
    }

    size_t max_blocked() const { return settings ? peer_blocked : 0; }

    // ------------------------------------------------------- encoding

    void encode(size_t slot, const std::vector<Field>& list, size_t budget, bool null_stream,
                bool short_first) {
        std::vector<std::string> literals;
        size_t octets;
        const std::vector<hpack_header_t> hs = headers_of(list, &literals, &octets);
        bool inserts_allowed = false;
        for (const Field& f : list)
            inserts_allowed |= !(f.flags & (HPACK_FIELD_NEVER_INDEX | HPACK_FIELD_NO_INDEX));
        const uint64_t id = ids[slot];
        const size_t bound = QPACK_ENCODE_BOUND(hs.size(), octets);
        auto what = [&] {
            return "stream " + std::to_string(id) + ", budget " + std::to_string(budget) + show(list);
        };
        std::unique_ptr<Exact> stream_out;
        if (!null_stream || budget) {
            const std::vector<uint8_t> zero(budget);
            stream_out.reset(new Exact(zero.data(), zero.size()));
        }
        uint8_t* sp = stream_out ? stream_out->p.get() : nullptr;

        const Snapshot before(enc);
        size_t out_len = 99, stream_len = 99;
        bool empty_name = false;
        for (const Field& f : list) empty_name |= f.name.empty();
        if (empty_name) {
            std::unique_ptr<uint8_t[]> o(new uint8_t[bound]);
            FUZZ_CHECK(qpack_encode(enc, id, hs.data(), hs.size(), o.get(), bound, &out_len, sp, budget,
                                    &stream_len) == HPACK_E_ARGUMENT,
                       "a field with an empty name was accepted: " + what());
            FUZZ_CHECK(out_len == 0 && stream_len == 0 && Snapshot(enc) == before,
                       "a refused encode changed the encoder: " + what());
            std::vector<Field> rest;
            for (const Field& f : list)
                if (!f.name.empty()) rest.push_back(f);
            encode(slot, rest, budget, null_stream, short_first);
            return;
        }
        if (short_first) {
            std::unique_ptr<uint8_t[]> small(new uint8_t[bound - 1]);
            FUZZ_CHECK(qpack_encode(enc, id, hs.data(), hs.size(), small.get(), bound - 1, &out_len,
                                    sp, budget, &stream_len) == HPACK_E_BUFFER,
                       "an out_cap below the bound was accepted: " + what());
            FUZZ_CHECK(out_len == 0 && stream_len == 0 && Snapshot(enc) == before,
                       "a refused encode changed the encoder: " + what());
        }
        std::unique_ptr<uint8_t[]> out(new uint8_t[bound]);
        enc_alloc.countdown = fail_next;
        enc_alloc.failed = false;
        fail_next = -1;
        int rc = qpack_encode(enc, id, hs.data(), hs.size(), out.get(), bound, &out_len, sp, budget,
                              &stream_len);
        const bool failed = enc_alloc.failed;
        enc_alloc.countdown = -1;
        if (rc == HPACK_E_NOMEM) {
            FUZZ_CHECK(failed, "out of memory without an injected failure: " + what());
            FUZZ_CHECK(out_len == 0 && stream_len == 0 && Snapshot(enc) == before,
                       "a failed encode changed the encoder: " + what());
            rc = qpack_encode(enc, id, hs.data(), hs.size(), out.get(), bound, &out_len, sp, budget,
                              &stream_len);
        }
        FUZZ_CHECK(rc == QPACK_OK, "qpack_encode: " + std::to_string(rc) + ": " + what());
        FUZZ_CHECK(out_len <= bound, "the section exceeds the bound: " + what());
        FUZZ_CHECK(stream_len <= budget, "encoder stream " + std::to_string(stream_len) +
                                             " octets over the budget: " + what());
        const std::vector<uint8_t> wire(out.get(), out.get() + out_len);
        FUZZ_CHECK(out_len >= 2, "a section without its prefix: " + what());
        if (!settings || !inserts_allowed) {
            FUZZ_CHECK(stream_len == 0 && qpack_encoder_insert_count(enc) == before.inserts,
                       "an insert " + std::string(settings ? "for fields that may not be indexed"
                                                           : "before the peer's settings") +
                           ": " + what());
        }
        if (!settings) FUZZ_CHECK(wire[0] == 0, "a dynamic reference before the settings: " + what());
        FUZZ_CHECK(qpack_encoder_blocked_streams(enc) <= max_blocked(),
                   std::to_string(qpack_encoder_blocked_streams(enc)) +
                       " blocking streams, the peer allows " + std::to_string(max_blocked()) +
                       ": " + what());
        FUZZ_CHECK(qpack_encoder_outstanding_sections(enc) <= QPACK_MAX_OUTSTANDING,
                   "outstanding sections above QPACK_MAX_OUTSTANDING");
        FUZZ_CHECK(qpack_encoder_table_size(enc) <= qpack_encoder_table_capacity(enc),
                   "the table above its capacity");
        if (sp) es.insert(es.end(), sp, sp + stream_len);
        Section s;
        s.stream = id;
        s.fields = list;
        s.wire = wire;
        slots[slot].push_back(std::move(s));
    }

    // ------------------------------------------------------- decoding

    void deliver_encoder(size_t n) {
        if (n == 0 || n > es.size()) n = es.size();
        if (n == 0) return;
        const Exact in(es.data(), n);
        const int rc = qpack_decoder_read_encoder(ours, in.begin(), in.n);
        FUZZ_CHECK(rc == QPACK_OK, "our decoder refused the encoder stream: " + std::to_string(rc) +
                                       " on " + hex(es.data(), n));
        const nghttp3_ssize r = nghttp3_qpack_decoder_read_encoder(theirs, in.begin(), in.n);
        FUZZ_CHECK(r == static_cast<nghttp3_ssize>(n),
                   "nghttp3 refused the encoder stream: " +
                       std::string(r < 0 ? nghttp3_strerror(static_cast<int>(r)) : "short read") +
                       " on " + hex(es.data(), n));
        es.erase(es.begin(), es.begin() + static_cast<ptrdiff_t>(n));
        if (es.empty()) check_tables();
        resume_unblocked();
    }

    void check_tables() const {
        const uint64_t ins = qpack_encoder_insert_count(enc);
        FUZZ_CHECK(qpack_decoder_insert_count(ours) == ins &&
                       nghttp3_qpack_decoder_get_icnt(theirs) == ins &&
                       qpack_decoder_table_size(ours) == qpack_encoder_table_size(enc) &&
                       qpack_decoder_table_entries(ours) == qpack_encoder_table_entries(enc) &&
                       qpack_decoder_table_capacity(ours) == qpack_encoder_table_capacity(enc),
                   "tables: encoder " + std::to_string(ins) + " inserts, " +
                       std::to_string(qpack_encoder_table_size(enc)) + "/" +
                       std::to_string(qpack_encoder_table_capacity(enc)) + " octets, " +
                       std::to_string(qpack_encoder_table_entries(enc)) + " entries; ours " +
                       std::to_string(qpack_decoder_insert_count(ours)) + ", " +
                       std::to_string(qpack_decoder_table_size(ours)) + "/" +
                       std::to_string(qpack_decoder_table_capacity(ours)) + ", " +
                       std::to_string(qpack_decoder_table_entries(ours)) + "; nghttp3 " +
                       std::to_string(nghttp3_qpack_decoder_get_icnt(theirs)));
        FUZZ_CHECK(qpack_encoder_known_received_count(enc) <= ins, "known received above inserts");
    }

    // 1 decoded into *got, 0 blocked.
    int decode_ours(const Section& s, std::vector<Got>* got) {
        const Exact in(s.wire.data(), s.wire.size());
        int rc = qpack_decode_begin(ours, s.stream, in.begin(), in.n);
        if (rc == QPACK_BLOCKED) return 0;
        FUZZ_CHECK(rc == QPACK_OK, "our decoder: begin " + std::to_string(rc) + " on " + hex(s.wire) +
                                       show(s.fields));
        for (;;) {
            qpack_field_t f[16];
            size_t n = 0;
            rc = qpack_decode_fields(ours, f, 16, &n);
            for (size_t i = 0; i < n; ++i) {
                FUZZ_CHECK(f[i].representation != HPACK_REP_INCREMENTAL, "an incremental field");
                got->push_back({str(f[i].name, f[i].name_len), str(f[i].value, f[i].value_len),
                                f[i].representation == HPACK_REP_NEVER_INDEXED});
            }
            if (rc == QPACK_SECTION_END) return 1;
            FUZZ_CHECK(rc == QPACK_OK, "our decoder: " + std::to_string(rc) + " on " + hex(s.wire) +
                                           show(s.fields));
        }
    }

    int decode_theirs(Section& s, std::vector<Got>* got) {
        if (!s.sctx)
            FUZZ_CHECK(nghttp3_qpack_stream_context_new(&s.sctx, static_cast<int64_t>(s.stream),
                                                        nghttp3_mem_default()) == 0,
                       "stream context");
        const Exact in(s.wire.data() + s.their_used, s.wire.size() - s.their_used);
        size_t at = 0;
        for (;;) {
            nghttp3_qpack_nv nv;
            uint8_t flags = 0;
            const nghttp3_ssize r = nghttp3_qpack_decoder_read_request(
                theirs, s.sctx, &nv, &flags, in.begin() + at, in.n - at, 1);
            FUZZ_CHECK(r >= 0, std::string("nghttp3: ") + nghttp3_strerror(static_cast<int>(r)) +
                                   " on " + hex(s.wire) + show(s.fields));
            at += static_cast<size_t>(r);
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) {
                const nghttp3_vec name = nghttp3_rcbuf_get_buf(nv.name);
                const nghttp3_vec value = nghttp3_rcbuf_get_buf(nv.value);
                got->push_back({str(name.base, name.len), str(value.base, value.len),
                                (nv.flags & NGHTTP3_NV_FLAG_NEVER_INDEX) != 0});
                nghttp3_rcbuf_decref(nv.name);
                nghttp3_rcbuf_decref(nv.value);
            }
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) break;
            if (flags & NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) {
                s.their_used += at;
                return 0;
            }
            FUZZ_CHECK(flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT, "nghttp3 made no progress");
        }
        nghttp3_qpack_stream_context_del(s.sctx);
        s.sctx = nullptr;
        return 1;
    }

    // The fields a decoder gave back are the ones encoded.
    void check_fields(const Section& s, const std::vector<Got>& got, const char* who) const {
        auto what = [&] {
            return std::string(who) + ", stream " + std::to_string(s.stream) + ", section " +
                   hex(s.wire) + show(s.fields);
        };
        FUZZ_CHECK(got.size() == s.fields.size(), "field count: " + what());
        for (size_t i = 0; i < got.size(); ++i) {
            const Field& f = s.fields[i];
            FUZZ_CHECK(got[i].name == f.name && got[i].value == f.value,
                       "field " + std::to_string(i) + " decoded differently: " + what());
            const unsigned pflags = hpack_policy_lookup(policy, f.name.data(), f.name.size());
            // RFC 9204 4.5.4 (7.1.3 of RFC 7541); hpack.h: short cookie
            // values are guessable.
            const bool short_cookie =
                (f.name == "cookie" || f.name == "set-cookie") && f.value.size() < 20;
            if ((f.flags & HPACK_FIELD_NEVER_INDEX) || (pflags & HPACK_POLICY_NEVER_INDEX) ||
                short_cookie)
                FUZZ_CHECK(got[i].never, "a sensitive field lost never-indexed: field " +
                                             std::to_string(i) + ": " + what());
        }
    }

    // Decodes the slot's next section on both decoders, unless one waits.
    void deliver_section(size_t slot) {
        if (slots[slot].empty() || slots[slot].front().blocked) return;
        Section& s = slots[slot].front();
        std::vector<Got> mine, their;
        const int ro = decode_ours(s, &mine);
        const int rn = decode_theirs(s, &their);
        FUZZ_CHECK(ro == rn, std::string(ro ? "only nghttp3" : "only ours") + " blocked on stream " +
                                 std::to_string(s.stream) + ": " + hex(s.wire));
        if (ro == 0) {
            s.blocked = true;
            blocked.push_back(s.stream);
            FUZZ_CHECK(blocked.size() <= max_blocked(),
                       std::to_string(blocked.size()) + " streams wait on the decoder, the peer allows " +
                           std::to_string(max_blocked()));
            FUZZ_CHECK(qpack_decoder_blocked_streams(ours) == blocked.size(), "our blocked count");
            return;
        }
        done(slot, mine, their);
    }

    void done(size_t slot, const std::vector<Got>& mine, const std::vector<Got>& their) {
        const Section& s = slots[slot].front();
        check_fields(s, mine, "ours");
        check_fields(s, their, "nghttp3");
        for (size_t i = 0; i < mine.size(); ++i)
            FUZZ_CHECK(mine[i].never == their[i].never,
                       "the decoders disagree on never-indexed: field " + std::to_string(i));
        slots[slot].pop_front();
    }

    size_t slot_of(uint64_t id) const {
        for (size_t i = 0; i < kSlots; ++i)
            if (ids[i] == id) return i;
        FUZZ_CHECK(false, "a stream of no slot");
        return 0;
    }

    // The streams the new inserts unblocked, decoded again by both.
    void resume_unblocked() {
        std::vector<uint64_t> named;
        uint64_t got[8];
        for (size_t k; (k = qpack_decoder_unblocked(ours, got, 8)) != 0;)
            named.insert(named.end(), got, got + k);
        std::vector<uint64_t> want;
        for (size_t i = 0; i < blocked.size();) {
            const Section& s = slots[slot_of(blocked[i])].front();
            if (nghttp3_qpack_stream_context_get_ricnt(s.sctx) <= nghttp3_qpack_decoder_get_icnt(theirs)) {
                want.push_back(blocked[i]);
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        FUZZ_CHECK(named == want, "our decoder unblocked " + std::to_string(named.size()) +
                                      " streams, nghttp3 " + std::to_string(want.size()));
        for (uint64_t id : want) {
            const size_t slot = slot_of(id);
            Section& s = slots[slot].front();
            s.blocked = false;
            std::vector<Got> mine, their;
            FUZZ_CHECK(decode_ours(s, &mine) == 1, "our decoder blocked again on stream " + std::to_string(id));
            FUZZ_CHECK(decode_theirs(s, &their) == 1, "nghttp3 blocked again on stream " + std::to_string(id));
            done(slot, mine, their);
        }
    }

    void cancel(size_t slot) {
        const uint64_t id = ids[slot];
        for (Section& s : slots[slot]) nghttp3_qpack_stream_context_del(s.sctx);
        slots[slot].clear();
        for (size_t i = 0; i < blocked.size(); ++i) {
            if (blocked[i] == id) {
                blocked.erase(blocked.begin() + static_cast<ptrdiff_t>(i));
                break;
            }
        }
        FUZZ_CHECK(qpack_decoder_cancel_stream(ours, id) == QPACK_OK, "our cancel");
        FUZZ_CHECK(nghttp3_qpack_decoder_cancel_stream(theirs, static_cast<int64_t>(id)) == 0,
                   "nghttp3's cancel");
        FUZZ_CHECK(qpack_decoder_blocked_streams(ours) == blocked.size(), "our blocked count");
        // A cancelled stream's id is not used again.
        ids[slot] = 4 * (slot + kSlots * next_gen++);
    }

    // The stream of slot is reset as soon as its last section is encoded:
    // the encoder withdraws that section, which never goes out, and the
    // peer cancels the stream.
    void withdraw(size_t slot) {
        FUZZ_CHECK(!slots[slot].empty(), "no section to withdraw");
        const bool refers = slots[slot].back().wire[0] != 0;  // Required Insert Count > 0
        const size_t before = qpack_encoder_outstanding_sections(enc);
        FUZZ_CHECK(qpack_encoder_withdraw(enc) == QPACK_OK, "withdraw");
        FUZZ_CHECK(qpack_encoder_outstanding_sections(enc) == before - refers,
                   "withdraw left " + std::to_string(qpack_encoder_outstanding_sections(enc)) +
                       " of " + std::to_string(before) + " sections outstanding");
        FUZZ_CHECK(qpack_encoder_blocked_streams(enc) <= max_blocked(), "blocking after withdraw");
        nghttp3_qpack_stream_context_del(slots[slot].back().sctx);
        slots[slot].pop_back();
        cancel(slot);
    }

    // ---------------------------------------------------- decoder stream

    void feed_back(size_t n) {
        std::vector<uint8_t> mine;
        uint8_t b[256];
        for (size_t k; (k = qpack_decoder_drain(ours, b, sizeof b)) != 0;) mine.insert(mine.end(), b, b + k);
        std::vector<uint8_t> their(nghttp3_qpack_decoder_get_decoder_streamlen(theirs));
        nghttp3_buf buf;
        buf.begin = buf.pos = buf.last = their.data();
        buf.end = their.data() + their.size();
        nghttp3_qpack_decoder_write_decoder(theirs, &buf);
        their.resize(static_cast<size_t>(buf.last - buf.pos));
        const std::vector<uint8_t>& from = feed_theirs ? their : mine;
        fb.insert(fb.end(), from.begin(), from.end());
        if (n == 0 || n > fb.size()) n = fb.size();
        if (n == 0) return;
        const Exact in(fb.data(), n);
        const int rc = qpack_encoder_read_decoder(enc, in.begin(), in.n);
        FUZZ_CHECK(rc == QPACK_OK, "the encoder refused the decoder stream: " + std::to_string(rc) +
                                       " on " + hex(fb.data(), n));
        fb.erase(fb.begin(), fb.begin() + static_cast<ptrdiff_t>(n));
        FUZZ_CHECK(qpack_encoder_known_received_count(enc) <= qpack_encoder_insert_count(enc),
                   "known received above inserts");
        FUZZ_CHECK(qpack_encoder_blocked_streams(enc) <= max_blocked(), "blocking streams");
    }

    // Everything delivered and fed back.
    void finish() {
        deliver_encoder(0);
        for (bool more = true; more;) {
            more = false;
            for (size_t i = 0; i < kSlots; ++i) {
                while (!slots[i].empty() && !slots[i].front().blocked) {
                    deliver_section(i);
                    more = true;
                }
            }
        }
        for (size_t i = 0; i < kSlots; ++i)
            FUZZ_CHECK(slots[i].empty(), "a section still blocked with every insert delivered");
        feed_back(0);
        feed_back(0);
        FUZZ_CHECK(qpack_encoder_outstanding_sections(enc) == 0,
                   std::to_string(qpack_encoder_outstanding_sections(enc)) +
                       " sections outstanding after every acknowledgment");
        FUZZ_CHECK(qpack_encoder_blocked_streams(enc) == 0, "blocking after every acknowledgment");
        FUZZ_CHECK(qpack_encoder_known_received_count(enc) == qpack_encoder_insert_count(enc),
                   "known received " + std::to_string(qpack_encoder_known_received_count(enc)) +
                       " of " + std::to_string(qpack_encoder_insert_count(enc)) + " inserts");
    }
};

size_t budget_of(uint8_t code) {
    if (code == 0) return 0;
    if (code < 16) return code;
    if (code < 31) return size_t{code - 15u} * 32;
    return 64 * 1024;
}

// ------------------------------------------------------------- seeds

// Response lists of the raw-data stories (the ones with a :status), each
// story a connection: sections on slots in turn, the encoder stream
// delivered before each (or after it, blocking), the decoder stream fed
// back every few sections.
size_t write_seeds(const std::string& dir) {
    size_t n = 0;
    int variant = 0;
    for (const auto& s : load_stories(true)) {
        const int v = variant++ % 4;
        // 4096 ours; the peer's 4096 (index 7), at once; 100 blocked.
        std::vector<uint8_t> in{2, 7, static_cast<uint8_t>(v & 1 ? 100 : 0), 0};
        size_t k = 0;
        for (const auto& c : s.cases) {
            for (const auto& h : c.headers) {
                size_t p = 0;
                while (p < kPairCount && (h.name != kPairs[p].name || h.value != kPairs[p].value)) ++p;
                if (p < kPairCount) {
                    in.insert(in.end(), {0, static_cast<uint8_t>(p)});
                    continue;
                }
                const size_t l = h.name.size() < 24 ? h.name.size() : 24;
                in.insert(in.end(), {0x80, static_cast<uint8_t>(l - 1)});
                in.insert(in.end(), h.name.begin(), h.name.begin() + static_cast<ptrdiff_t>(l));
                const size_t vl = h.value.size() < 0xf0 ? h.value.size() : 0xef;
                in.push_back(static_cast<uint8_t>(vl));
                in.insert(in.end(), h.value.begin(), h.value.begin() + static_cast<ptrdiff_t>(vl));
            }
            const uint8_t slot = static_cast<uint8_t>(k % 3);
            const uint8_t budget = v & 2 ? 31 : 20;
            if (v & 1) {   // the section first: it blocks until the inserts arrive
                in.insert(in.end(), {2, static_cast<uint8_t>(slot | budget << 3), 4, slot, 3, 0});
            } else {
                in.insert(in.end(), {2, static_cast<uint8_t>(slot | budget << 3), 3, 0, 4, slot});
            }
            if (++k % 3 == 0) in.insert(in.end(), {5, 0});
            if (in.size() >= 3000) break;
        }
        if (!write_seed(dir, n++, in)) return 0;
    }
    // Built in: a small table, settings late, a cancelled stream, a tight
    // budget, an allocation failure.
    const std::vector<uint8_t> in{
        1, 0x14, 2, 0,                       // 256 ours, peer 220 late, 2 blocked
        0, 11, 0, 13, 2, 0,                  // server, cache-control on slot 0, no settings yet
        7, 0x80,                             // settings
        0, 11, 0, 13, 0, 4, 2, 1 | 4 << 3,   // slot 1, budget 4
        4, 1, 0, 11, 2, 2 | 31 << 3, 6, 2,   // deliver 1; slot 2 cancelled
        7, 1, 0, 20, 2, 3 | 31 << 3,         // an allocation failure
        3, 0, 4, 3, 5, 0};
    return write_seed(dir, n, in) ? n + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Control in(data, size);
    Conn c;
    const size_t cap = kCaps[in.u8() % (sizeof kCaps / sizeof kCaps[0])];
    const uint8_t peer = in.u8();
    const size_t peer_blocked = in.u8() % 101;
    const uint8_t pol = in.u8();
    c.policy = hpack_policy_create(nullptr);
    FUZZ_CHECK(c.policy, "policy");
    if (peer & 0x80) {
        for (size_t i = 0; i < 8; ++i) {
            if (!(pol & (1u << i))) continue;
            const unsigned flags = i & 1 ? HPACK_POLICY_VOLATILE : HPACK_POLICY_NEVER_INDEX;
            FUZZ_CHECK(hpack_policy_add(c.policy, kPolicyNames[i], strlen(kPolicyNames[i]), flags) ==
                           HPACK_OK,
                       "policy add");
        }
    }
    const size_t peer_capacity = kPeerCaps[peer & 15];
    const int when = (peer >> 4) & 3;
    c.peer_capacity = when >= 2 ? kNoSettings : peer_capacity;
    c.peer_blocked = peer_blocked;
    c.feed_theirs = peer & 0x40;
    c.enc = qpack_encoder_create(&c.enc_alloc.a, cap, c.policy);
    c.ours = qpack_decoder_create(&c.dec_alloc.a, peer_capacity, peer_blocked);
    FUZZ_CHECK(c.enc && c.ours &&
                   nghttp3_qpack_decoder_new(&c.theirs, peer_capacity, peer_blocked,
                                             nghttp3_mem_default()) == 0,
               "create");
    nghttp3_qpack_decoder_set_max_concurrent_streams(c.theirs, 1u << 20);
    if (when == 0) c.give_settings();

    std::vector<Field> list, seen;
    size_t plain = 0;
    while (!in.empty() && plain < kPlainBudget) {
        const uint8_t op = in.u8();
        Field f{};
        switch (op & 7) {
        case 0:
        case 1:
            switch (op >> 6) {
            case 0: {
                const Pair& p = kPairs[in.u8() % kPairCount];
                f.name = p.name;
                f.value = p.value;
                break;
            }
            case 1:
                f.name = kNames[in.u8() % kNameCount];
                f.value = value_of(in);
                break;
            case 2:
                f.name = in.bytes(in.u8() % 25);
                f.value = value_of(in);
                break;
            case 3:
                if (seen.empty()) continue;
                f = seen[in.u8() % seen.size()];
                break;
            }
            if ((op >> 6) != 3) {
                f.flags = (op >> 3) & 3;
                f.literal = (op >> 5) & 1;
            }
            if (list.size() < kMaxFields) list.push_back(f);
            if (seen.size() < 256) seen.push_back(f);
            plain += f.name.size() + f.value.size() + HPACK_ENTRY_OVERHEAD;
            break;
        case 2: {
            const uint8_t s = in.u8();
            c.encode(s & 7, list, budget_of(s >> 3), op & 0x08, op & 0x10);
            if (op & 0x20) c.withdraw(s & 7);
            list.clear();
            break;
        }
        case 3:
            c.deliver_encoder(in.u8());
            break;
        case 4:
            c.deliver_section(in.u8() & 7);
            break;
        case 5:
            c.feed_back(in.u8());
            break;
        case 6:
            c.cancel(in.u8() & 7);
            break;
        case 7: {
            const uint8_t b = in.u8();
            if (b & 0x80) c.give_settings();
            else c.fail_next = b;
            break;
        }
        }
    }
    if (!list.empty()) c.encode(0, list, budget_of(31), false, false);
    c.finish();
    return 0;
}
