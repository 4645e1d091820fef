// Differential decoding: our decoder against libnghttp2's inflater
// (nghttp2_hd_inflate_hd2, the library nghttp, curl and h2load use) on the
// same connection: the blocks and settings changes of a script
// (fuzz_common.h).  Both must accept or both reject every block, accepted
// blocks must decode to the same fields (never-indexed included) and leave
// the same table, and a rejected block must fail after the same fields.
//
// The known differences are rules here, not silence (fuzz/README.md):
//
//   E1  Integers longer than four octets.  We reject them, as nginx
//       does (ngx_http_v2_parse_int()); nghttp2 1.52 accepts them while
//       the value has at most five continuation octets and fits 32 bits.
//       When we fail with HPACK_E_INTEGER exactly at the first
//       representation that holds such an integer (found by scan()
//       below), nghttp2 must have produced the same fields before it; the
//       connection ends there.  In canonical mode (kOpCanonical) we get
//       the block with every integer rewritten to its shortest form,
//       nghttp2 the original, and no exception applies: nghttp2 reads them
//       as the value they denote (a value whose shortest form is longer
//       than four octets is no valid index, length or size for either).
//
//   Configured to agree: our string limit is nghttp2's fixed 65536
//   (NGHTTP2_HD_MAX_NV); table sizes stay within HPACK_MAX_TABLE_SIZE.
//   Huffman padding over 7 bits and padding that is not all ones: both
//   reject (nghttp2 1.52's decoder accepts only at most 7 one bits), so no
//   exception is needed; a disagreement there fails.

#include <string>
#include <vector>

#include <nghttp2/nghttp2.h>

#include "fuzz_common.h"

using namespace hpack_fuzz;

namespace {

// NGHTTP2_HD_MAX_NV in nghttp2's lib/nghttp2_hd.h: the longest string
// literal (as sent) its inflater accepts.
constexpr size_t kNghttp2MaxString = 65536;

struct Field {
    std::string name, value;
    bool never;

    bool operator==(const Field& o) const {
        return name == o.name && value == o.value && never == o.never;
    }
    std::string show() const {
        return "{" + hex(reinterpret_cast<const uint8_t*>(name.data()), name.size()) + ": " +
               hex(reinterpret_cast<const uint8_t*>(value.data()), value.size()) +
               (never ? " never" : "") + "}";
    }
};

// ------------------------------------------------------------ scanning

// The block walked representation by representation (RFC 7541 6) without
// a table: where the first integer longer than four octets is, and the
// block with every integer in its shortest form.  The walk stops at the first
// integer nghttp2 rejects too, or at a truncation; the rest is copied as
// it is.
struct Scan {
    std::vector<uint8_t> canonical;
    bool overlong = false;
    size_t fields_before = 0;   // fields before the first overlong integer's
};

Scan scan(const std::vector<uint8_t>& b) {
    Scan s;
    size_t i = 0, fields = 0;
    // Copies an integer, canonically; false when the walk must stop.
    auto integer = [&](int prefix, uint32_t* value) {
        const Integer r = read_integer(b.data() + i, b.size() - i, prefix);
        if (!r.ok) return false;
        if (r.overlong && !s.overlong) {
            s.overlong = true;
            s.fields_before = fields;
        }
        put_integer(&s.canonical, static_cast<uint8_t>(b[i] & ~((1u << prefix) - 1)), prefix,
                    r.value);
        i += r.len;
        *value = r.value;
        return true;
    };
    auto string = [&]() {
        uint32_t len;
        if (i >= b.size() || !integer(7, &len)) return false;
        if (len > b.size() - i) return false;
        s.canonical.insert(s.canonical.end(), b.begin() + i, b.begin() + i + len);
        i += len;
        return true;
    };
    while (i < b.size()) {
        const uint8_t c = b[i];
        uint32_t v;
        bool ok;
        if (c & 0x80) {
            ok = integer(7, &v);
            ++fields;
        } else if ((c & 0xe0) == 0x20) {
            ok = integer(5, &v);
        } else {
            ok = integer(c & 0x40 ? 6 : 4, &v) && (v != 0 || string()) && string();
            ++fields;
        }
        if (!ok) break;
    }
    s.canonical.insert(s.canonical.end(), b.begin() + i, b.end());
    return s;
}

// ------------------------------------------------------------ decoding

int decode_ours(hpack_decoder_t* dec, const std::vector<uint8_t>& block,
                std::vector<Field>* out) {
    const Exact in(block.data(), block.size());
    return hpack_tools::decode_block(dec, in.begin(), in.n, [out](const hpack_field_t& f) {
        out->push_back({str(f.name, f.name_len), str(f.value, f.value_len),
                        f.representation == HPACK_REP_NEVER_INDEXED});
    });
}

// 0 or nghttp2's error.
int decode_nghttp2(nghttp2_hd_inflater* inf, const std::vector<uint8_t>& block,
                   std::vector<Field>* out) {
    const Exact in(block.data(), block.size());
    const uint8_t* p = in.begin();
    size_t left = in.n;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        const ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, p, left, 1);
        if (rv < 0) return static_cast<int>(rv);
        p += rv;
        left -= static_cast<size_t>(rv);
        if (flags & NGHTTP2_HD_INFLATE_EMIT)
            out->push_back({str(nv.name, nv.namelen), str(nv.value, nv.valuelen),
                            (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0});
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            FUZZ_CHECK(left == 0, "nghttp2 finished with octets left");
            return 0;
        }
        FUZZ_CHECK((flags & NGHTTP2_HD_INFLATE_EMIT) || left > 0, "nghttp2 wants more");
    }
}

std::string show(const std::vector<Field>& v) {
    std::string s;
    for (const Field& f : v) s += "\n    " + f.show();
    return s;
}

// Fields [0, n) of both lists are equal.
void check_prefix(const std::vector<Field>& ours, const std::vector<Field>& theirs, size_t n,
                  const std::string& where) {
    FUZZ_CHECK(ours.size() >= n && theirs.size() >= n,
               where + ": ours " + std::to_string(ours.size()) + " fields, nghttp2 " +
                   std::to_string(theirs.size()) + ", expected " + std::to_string(n) +
                   "\n  ours:" + show(ours) + "\n  nghttp2:" + show(theirs));
    for (size_t i = 0; i < n; ++i)
        FUZZ_CHECK(ours[i] == theirs[i], where + ": field " + std::to_string(i) + ": ours " +
                                             ours[i].show() + ", nghttp2 " + theirs[i].show());
}

struct Connection {
    hpack_decoder_t* dec = nullptr;
    nghttp2_hd_inflater* inf = nullptr;
    ~Connection() {
        hpack_decoder_destroy(dec);
        nghttp2_hd_inflate_del(inf);
    }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, [](const std::string& dir) { return write_script_seeds(dir, 4096); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Script script(data, size);
    Connection c;
    c.dec = hpack_decoder_create(nullptr, HPACK_DEFAULT_TABLE_SIZE);
    FUZZ_CHECK(c.dec && nghttp2_hd_inflate_new(&c.inf) == 0, "create");
    hpack_decoder_set_string_limit(c.dec, kNghttp2MaxString);
    // Half the inputs start in canonical mode, so both modes are common
    // without the fuzzer having to find the opcode first.
    bool canonical = size & 1;

    std::vector<uint8_t> block;
    uint8_t op;
    for (int ops = 0; ops < 4096 && script.next(&block, &op); ++ops) {
        if (op != kOpBlock) {
            switch (op & 7) {
            case kOpSettings: {
                const size_t s = script.settings_size(op);
                if (s > HPACK_MAX_TABLE_SIZE) continue;
                FUZZ_CHECK(hpack_decoder_set_settings_table_size(c.dec, s) == HPACK_OK &&
                               nghttp2_hd_inflate_change_table_size(c.inf, s) == 0,
                           "settings " + std::to_string(s));
                continue;
            }
            case kOpCanonical:
                canonical = op & 0x80;
                continue;
            default:
                continue;
            }
        }

        const Scan s = scan(block);
        std::vector<Field> ours, theirs;
        const int ro = decode_ours(c.dec, canonical ? s.canonical : block, &ours);
        const int rn = decode_nghttp2(c.inf, block, &theirs);
        const std::string where = std::string(canonical ? "canonical " : "") + "block " +
                                  hex(block) + " (ours: " + hpack_strerror(ro) +
                                  ", nghttp2: " + nghttp2_strerror(rn) + ")";

        if (s.overlong && !canonical) {
            // E1: an overlong integer must be rejected where it stands.
            FUZZ_CHECK(ro != HPACK_OK, "we accepted an overlong integer: " + where);
            if (ro == HPACK_E_INTEGER && ours.size() == s.fields_before) {
                check_prefix(ours, theirs, ours.size(), where);
                return 0;
            }
        }
        FUZZ_CHECK((ro == HPACK_OK) == (rn == 0), "accept/reject differs: " + where);
        FUZZ_CHECK(ours.size() == theirs.size(), "field counts differ: " + where);
        check_prefix(ours, theirs, ours.size(), where);
        if (ro != HPACK_OK) return 0;

        const size_t size = hpack_decoder_table_size(c.dec);
        const size_t entries = hpack_decoder_table_entries(c.dec);
        FUZZ_CHECK(size == nghttp2_hd_inflate_get_dynamic_table_size(c.inf) &&
                       entries + 61 == nghttp2_hd_inflate_get_num_table_entries(c.inf),
                   "tables differ after " + where);
    }
    return 0;
}
