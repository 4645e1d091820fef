// Encode, then decode: header lists built by the fuzzer go through our
// encoder and back through our decoder and libnghttp2's inflater, with the
// peer's table size changing between blocks (set_peer_table_size on the
// encoder, set_settings_table_size on the decoder, in step), per-field
// flags, pre-encoded values and a policy of the fuzzer's choosing.
//
// Every block must decode to exactly the list encoded; sensitive fields
// must arrive never-indexed; the three dynamic tables must agree after every
// block; a too-small output buffer must be refused without touching the
// encoder.
//
// Input:
//   octet 0   the encoder's own maximum table size (kCaps)
//   octet 1   the policy: bit 0 a custom policy, bits 1-7 which of kNames
//             it marks (kPolicyNames)
//   then operations, each an opcode octet (low 3 bits) and its arguments:
//     0-2  a field with a name from kNames: u8 name, value
//     3    a field with a literal name: u8 length (% 48 + 1), octets, value
//     4    a field seen before: u8 which
//     5    end of block: encode and decode the fields so far
//     6    settings: u16 SETTINGS_HEADER_TABLE_SIZE (table_size_of)
//     7    end of block, decoded in pieces of (opcode >> 3) + 1 octets
//   Field opcodes: bits 3-4 the HPACK_FIELD_* flags, bit 5 the value goes
//   pre-encoded (value_literal).  A value is u8 n: n < 0xf8 gives n octets,
//   else (n - 0xf7) * 512 octets cycling over the next 8.

#include <string>
#include <vector>

#include <nghttp2/nghttp2.h>

#include "encoder.h"
#include "fuzz_common.h"

using namespace hpack_fuzz;

namespace {

const size_t kCaps[] = {0,    1,     32,    64,    100,   256,   1024, 4096,
                        4097, 8192,  16384, 65536, 100000, HPACK_MAX_TABLE_SIZE};

// The static table's names, the built-in policy's names, a few others.
const char* const kNames[] = {
    ":authority", ":method", ":path", ":scheme", ":status", "accept-charset",
    "accept-encoding", "accept-language", "accept-ranges", "accept", "access-control-allow-origin",
    "age", "allow", "authorization", "cache-control", "content-disposition",
    "content-encoding", "content-language", "content-length", "content-location",
    "content-range", "content-type", "cookie", "date", "etag", "expect", "expires", "from",
    "host", "if-match", "if-modified-since", "if-none-match", "if-range",
    "if-unmodified-since", "last-modified", "link", "location", "max-forwards",
    "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh",
    "retry-after", "server", "set-cookie", "strict-transport-security",
    "transfer-encoding", "user-agent", "vary", "via", "www-authenticate",
    "x-request-id", "x-correlation-id", "request-id", "traceparent", "x-amzn-trace-id",
    "x-forwarded-for", "x-custom", "te", "upgrade-insecure-requests", "dnt",
};
constexpr size_t kNameCount = sizeof kNames / sizeof kNames[0];

// Octets of fields (RFC 7541 4.1 measure) one input may encode in all.
constexpr size_t kPlainBudget = 64 * 1024;

// Names a custom policy may mark, by bit of octet 1.
const char* const kPolicyNames[] = {"x-custom", "x-forwarded-for", "user-agent",
                                    "cookie",   ":path",           "etag", "x-request-id"};

struct Field {
    std::string name, value;
    unsigned flags;
    bool literal;   // value goes as value_literal
};

struct Connection {
    hpack_policy_t* policy = nullptr;
    hpack_encoder_t* enc = nullptr;
    hpack_decoder_t* dec = nullptr;
    nghttp2_hd_inflater* inf = nullptr;

    ~Connection() {
        hpack_encoder_destroy(enc);
        hpack_decoder_destroy(dec);
        hpack_policy_destroy(policy);
        nghttp2_hd_inflate_del(inf);
    }
};

std::string show(const std::vector<Field>& list) {
    std::string s;
    for (const Field& f : list)
        s += "\n    " + hex(reinterpret_cast<const uint8_t*>(f.name.data()), f.name.size()) +
             ": " + std::to_string(f.value.size()) + " octets, flags " + std::to_string(f.flags);
    return s;
}

std::string value_of(Control& in) {
    const uint8_t n = in.u8();
    if (n < 0xf8) return in.bytes(n);
    std::string pattern = in.bytes(8);
    if (pattern.empty()) pattern = "v";
    std::string v((n - 0xf7) * 512, '\0');
    for (size_t i = 0; i < v.size(); ++i) v[i] = pattern[i % pattern.size()];
    return v;
}

// Decodes the block with our decoder, whole or in pieces of piece octets.
int decode_ours(hpack_decoder_t* dec, const std::vector<uint8_t>& wire, size_t piece,
                std::vector<Field>* out, std::vector<int>* reps) {
    hpack_decode_begin(dec);
    size_t off = 0;
    for (;;) {
        const size_t len = piece < wire.size() - off ? piece : wire.size() - off;
        const Exact p(wire.data() + off, len);
        const uint8_t* pos = p.begin();
        const int last = off + len == wire.size();
        const int rc = hpack_tools::decode_piece(dec, &pos, p.end(), last,
                                                 [&](const hpack_field_t& f) {
            out->push_back({str(f.name, f.name_len), str(f.value, f.value_len), 0, false});
            reps->push_back(f.representation);
        });
        if (rc == HPACK_BLOCK_END) return HPACK_OK;
        if (rc != HPACK_NEED_MORE) return rc;
        off += len;
    }
}

// The same block through libnghttp2: "" or what went wrong.
std::string decode_nghttp2(nghttp2_hd_inflater* inf, const std::vector<uint8_t>& wire,
                           std::vector<Field>* out) {
    const Exact in(wire.data(), wire.size());
    const uint8_t* p = in.begin();
    size_t left = in.n;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        const ssize_t rv =
            nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, left, 1);
        if (rv < 0) return std::string("nghttp2: ") + nghttp2_strerror(static_cast<int>(rv));
        p += rv;
        left -= static_cast<size_t>(rv);
        if (flags & NGHTTP2_HD_INFLATE_EMIT)
            out->push_back({str(nv.name, nv.namelen), str(nv.value, nv.valuelen),
                            (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) ? 1u : 0u, false});
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return left == 0 ? "" : "nghttp2 left octets unread";
        }
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && left == 0) return "nghttp2 wants more";
    }
}

void round_trip(Connection& c, const std::vector<Field>& list, size_t piece) {
    std::vector<std::string> literals;
    size_t octets;
    const std::vector<hpack_header_t> hs = headers_of(list, &literals, &octets);

    // Too small by one: refused, and the encoder is unchanged.
    const size_t bound = hpack::encode_bound(hs.data(), hs.size());
    hpack_stats_t before, after;
    hpack_encoder_stats(c.enc, &before);
    const size_t size_before = hpack_encoder_table_size(c.enc);
    std::vector<uint8_t> small(bound - 1);
    size_t len = 0;
    FUZZ_CHECK(hpack_encode(c.enc, hs.data(), hs.size(), small.data(), small.size(), &len) ==
                   HPACK_E_BUFFER, "a buffer below the bound was accepted");
    hpack_encoder_stats(c.enc, &after);
    FUZZ_CHECK(memcmp(&before, &after, sizeof before) == 0 &&
                   size_before == hpack_encoder_table_size(c.enc),
               "a refused encode changed the encoder");

    std::unique_ptr<uint8_t[]> out(new uint8_t[bound]);
    FUZZ_CHECK(hpack_encode(c.enc, hs.data(), hs.size(), out.get(), bound, &len) == HPACK_OK,
               "encode failed" + show(list));
    FUZZ_CHECK(len <= bound, "the block exceeds the bound");
    const std::vector<uint8_t> wire(out.get(), out.get() + len);

    std::vector<Field> got;
    std::vector<int> reps;
    const int rc = decode_ours(c.dec, wire, piece, &got, &reps);
    FUZZ_CHECK(rc == HPACK_OK, std::string("our decoder: ") + hpack_strerror(rc) + "; block " +
                                   hex(wire) + show(list));
    FUZZ_CHECK(got.size() == list.size(), "field count; block " + hex(wire) + show(list));
    for (size_t i = 0; i < list.size(); ++i) {
        const Field& f = list[i];
        FUZZ_CHECK(got[i].name == f.name && got[i].value == f.value,
                   "field " + std::to_string(i) + " decoded differently; block " + hex(wire) +
                       show(list));
        const unsigned pflags =
            hpack_policy_lookup(c.policy, f.name.data(), f.name.size());
        // RFC 7541 7.1.3; hpack.h: short cookie values are guessable.
        const bool short_cookie = (f.name == "cookie" || f.name == "set-cookie") &&
                                  f.value.size() < 20;
        if ((f.flags & HPACK_FIELD_NEVER_INDEX) || (pflags & HPACK_POLICY_NEVER_INDEX) ||
            short_cookie)
            FUZZ_CHECK(reps[i] == HPACK_REP_NEVER_INDEXED,
                       "a sensitive field lost never-indexed: field " + std::to_string(i) +
                           show(list));
        if (f.flags & HPACK_FIELD_NO_INDEX)
            FUZZ_CHECK(reps[i] != HPACK_REP_INCREMENTAL,
                       "a NO_INDEX field was indexed: field " + std::to_string(i));
    }

    std::vector<Field> theirs;
    const std::string err = decode_nghttp2(c.inf, wire, &theirs);
    FUZZ_CHECK(err.empty(), err + "; block " + hex(wire));
    FUZZ_CHECK(theirs.size() == list.size(), "nghttp2 field count; block " + hex(wire));
    for (size_t i = 0; i < list.size(); ++i) {
        FUZZ_CHECK(theirs[i].name == list[i].name && theirs[i].value == list[i].value,
                   "nghttp2 decoded field " + std::to_string(i) + " differently");
        FUZZ_CHECK(theirs[i].flags == (reps[i] == HPACK_REP_NEVER_INDEXED),
                   "nghttp2 disagrees on never-indexed: field " + std::to_string(i));
    }

    const size_t es = hpack_encoder_table_size(c.enc), ds = hpack_decoder_table_size(c.dec);
    const size_t ee = hpack_encoder_table_entries(c.enc), de = hpack_decoder_table_entries(c.dec);
    FUZZ_CHECK(es == ds && ee == de, "tables: encoder " + std::to_string(es) + "/" +
                                         std::to_string(ee) + ", decoder " + std::to_string(ds) +
                                         "/" + std::to_string(de));
    FUZZ_CHECK(nghttp2_hd_inflate_get_dynamic_table_size(c.inf) == ds &&
                   nghttp2_hd_inflate_get_num_table_entries(c.inf) == de + 61,
               "nghttp2's table differs");
}

// The seeds: the raw-data stories' header lists, each story a connection.
size_t write_seeds(const std::string& dir) {
    size_t n = 0;
    for (const auto& s : load_stories(true)) {
        std::vector<uint8_t> in{7, 0};   // 4096, the built-in policy
        for (const auto& c : s.cases) {
            for (const auto& h : c.headers) {
                size_t k = 0;
                while (k < kNameCount && h.name != kNames[k]) ++k;
                if (k < kNameCount) {
                    in.push_back(0);
                    in.push_back(static_cast<uint8_t>(k));
                } else {
                    const size_t l = h.name.size() < 48 ? h.name.size() : 48;
                    in.push_back(3);
                    in.push_back(static_cast<uint8_t>(l - 1));
                    in.insert(in.end(), h.name.begin(), h.name.begin() + l);
                }
                const size_t v = h.value.size() < 0xf8 ? h.value.size() : 0xf7;
                in.push_back(static_cast<uint8_t>(v));
                in.insert(in.end(), h.value.begin(), h.value.begin() + v);
            }
            in.push_back(5);
            if (in.size() >= 3000) break;
        }
        if (!write_seed(dir, n++, in)) return 0;
    }
    // Built in: ":path: /a" twice, a settings change, again.
    const std::vector<uint8_t> in{7, 0, 0, 2, 2, '/', 'a', 5, 0, 2, 2, '/', 'a', 5,
                                  6, 0, 100, 4, 0, 5};
    return write_seed(dir, n, in) ? n + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Control in(data, size);
    Connection c;
    const size_t cap = kCaps[in.u8() % (sizeof kCaps / sizeof kCaps[0])];
    const uint8_t pol = in.u8();
    c.policy = hpack_policy_create(nullptr);
    FUZZ_CHECK(c.policy, "policy");
    if (pol & 1) {
        for (size_t i = 0; i < 7; ++i) {
            if (!(pol & (2u << i))) continue;
            const unsigned flags = i & 1 ? HPACK_POLICY_VOLATILE : HPACK_POLICY_NEVER_INDEX;
            FUZZ_CHECK(hpack_policy_add(c.policy, kPolicyNames[i], strlen(kPolicyNames[i]),
                                        flags) == HPACK_OK, "policy add");
        }
    }
    c.enc = hpack_encoder_create(nullptr, cap, c.policy);
    c.dec = hpack_decoder_create(nullptr, HPACK_DEFAULT_TABLE_SIZE);
    FUZZ_CHECK(c.enc && c.dec && nghttp2_hd_inflate_new(&c.inf) == 0, "create");

    // Repeated long values would otherwise turn a few input octets into
    // megabytes of blocks (decoded octet by octet in pieces).
    std::vector<Field> list, seen;
    size_t plain = 0;
    while (!in.empty() && plain < kPlainBudget) {
        const uint8_t op = in.u8();
        Field f{};
        switch (op & 7) {
        case 0: case 1: case 2:
            f.name = kNames[in.u8() % kNameCount];
            f.value = value_of(in);
            break;
        case 3:
            f.name = in.bytes(in.u8() % 48 + 1);
            if (f.name.empty()) f.name = "x";
            f.value = value_of(in);
            break;
        case 4:
            if (seen.empty()) continue;
            f = seen[in.u8() % seen.size()];
            break;
        case 5:
        case 7:
            round_trip(c, list, (op & 7) == 7 ? (op >> 3) + 1 : SIZE_MAX);
            list.clear();
            continue;
        case 6: {
            const size_t s = table_size_of(in.u16());
            FUZZ_CHECK(hpack_encoder_set_peer_table_size(c.enc, s) == HPACK_OK &&
                           hpack_decoder_set_settings_table_size(c.dec, s) == HPACK_OK &&
                           nghttp2_hd_inflate_change_table_size(c.inf, s) == 0,
                       "settings " + std::to_string(s));
            continue;
        }
        }
        f.flags = (op >> 3) & 3;
        f.literal = (op >> 5) & 1;
        list.push_back(f);
        if (seen.size() < 256) seen.push_back(f);
        plain += f.name.size() + f.value.size() + HPACK_ENTRY_OVERHEAD;
    }
    if (!list.empty()) round_trip(c, list, SIZE_MAX);
    return 0;
}
