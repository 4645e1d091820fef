// Shared by the tests of the Huffman code (RFC 7541 5.2, Appendix B):
// huffman_tables_test.cc, huffman_encode_test.cc, huffman_decode_test.cc.
//
// The reference encoder and decoder here work bit by bit from the Appendix B
// code list (huffman_reference.h), independently of the generator and of
// the tables it makes.

#ifndef HPACK_HUFFMAN_TEST_UTIL_H
#define HPACK_HUFFMAN_TEST_UTIL_H

#include <string.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hpack.h"
#include "huffman.h"
#include "huffman_reference.h"

namespace hpack {
// For gtest's messages.
inline void PrintTo(HuffmanIsa isa, std::ostream* os) {
    *os << (isa == HuffmanIsa::bmi2 ? "BMI2" : "generic");
}
}  // namespace hpack

namespace hpack_huffman_test {

using hpack_reference::Code;
using hpack_reference::kAppendixB;

using Bytes = std::vector<uint8_t>;

inline Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

inline Bytes from_hex(const std::string& hex) {
    Bytes out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2),
                                                      nullptr, 16)));
    return out;
}

inline std::string to_hex(const Bytes& b) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (uint8_t c : b) {
        s += digits[c >> 4];
        s += digits[c & 15];
    }
    return s;
}

// Reference encoder: one bit at a time, padded with ones.
inline Bytes reference_encode(const Bytes& in) {
    Bytes out;
    int nbits = 0;
    uint8_t cur = 0;
    auto put = [&](int bit) {
        cur = static_cast<uint8_t>((cur << 1) | bit);
        if (++nbits == 8) {
            out.push_back(cur);
            nbits = 0;
            cur = 0;
        }
    };
    for (uint8_t c : in) {
        const Code& code = kAppendixB[c];
        for (int i = code.len - 1; i >= 0; --i)
            put((code.bits >> i) & 1);
    }
    while (nbits != 0)
        put(1);
    return out;
}

// Reference decoder: one bit at a time against the code list, with the
// RFC 7541 5.2 rules: EOS in the string, more than 7 bits of padding, or
// padding that is not all ones are errors.
struct Decoded {
    ptrdiff_t rc;  // length, or HPACK_E_*
    Bytes     out;
};

inline Decoded reference_decode(const Bytes& in) {
    Decoded r{0, {}};
    uint32_t acc = 0;
    int len = 0;
    for (uint8_t byte : in) {
        for (int i = 7; i >= 0; --i) {
            acc = (acc << 1) | ((byte >> i) & 1);
            ++len;
            for (int sym = 0; sym < 257; ++sym) {
                if (kAppendixB[sym].len == len && kAppendixB[sym].bits == acc) {
                    if (sym == 256) {
                        r.rc = HPACK_E_HUFFMAN_EOS;
                        return r;
                    }
                    r.out.push_back(static_cast<uint8_t>(sym));
                    acc = 0;
                    len = 0;
                    break;
                }
            }
        }
    }
    if (len > 7 || acc != (uint32_t{1} << len) - 1) {
        r.rc = HPACK_E_HUFFMAN_PADDING;
        return r;
    }
    r.rc = static_cast<ptrdiff_t>(r.out.size());
    return r;
}

inline Bytes encode(const Bytes& in) {
    Bytes out(hpack::huffman_encoded_length(in.data(), in.size()));
    const size_t n = hpack::huffman_encode(in.data(), in.size(), out.data());
    EXPECT_EQ(n, out.size());
    return out;
}

// Decodes twice: into exactly huffman_decode_capacity() octets on the heap
// (an overrun is an AddressSanitizer error), and into that many followed by
// a guard region that must stay untouched.
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xa5;

inline Decoded decode(const Bytes& in) {
    const size_t cap = hpack::huffman_decode_capacity(in.size());
    // Exactly the capacity on the heap, for AddressSanitizer...
    std::unique_ptr<uint8_t[]> exact(new uint8_t[cap]);
    const ptrdiff_t exact_rc =
        hpack::huffman_decode(in.data(), in.size(), exact.get());
    // ... and a guard region, for builds without it.
    Bytes buf(cap + kGuard, kGuardByte);
    Decoded r{hpack::huffman_decode(in.data(), in.size(), buf.data()), {}};
    for (size_t i = cap; i < buf.size(); ++i) {
        if (buf[i] != kGuardByte) {
            ADD_FAILURE() << "decode wrote at capacity + " << (i - cap)
                          << " for input " << to_hex(in);
            break;
        }
    }
    EXPECT_EQ(r.rc, exact_rc);
    if (r.rc >= 0) {
        EXPECT_LE(static_cast<size_t>(r.rc), cap - hpack::kHuffmanDecodeSlack);
        r.out.assign(buf.begin(), buf.begin() + r.rc);
        EXPECT_TRUE(r.out.empty()
                    || memcmp(exact.get(), r.out.data(), r.out.size()) == 0);
    }
    return r;
}

inline std::string describe(const Decoded& d) {
    if (d.rc < 0)
        return "error " + std::to_string(d.rc);
    return "ok " + to_hex(d.out);
}

// Header-like text, hex digits, random printable, any octet, a few
// symbols with long codes.
inline Bytes random_string(std::mt19937& rng, size_t n, int kind) {
    static const std::string header =
        "abcdefghijklmnopqrstuvwxyz0123456789-_.:/=;, ?&%ABCDEFGHJKLMNOPQRSTUVWXYZ\"'()";
    static const std::string hex = "0123456789abcdef";
    static const std::string rare = "\\<>{}^`[]~$@|#\x01\x7f\x80\xfe\xff";
    Bytes s(n);
    for (uint8_t& c : s) {
        switch (kind) {
        case 0: c = static_cast<uint8_t>(header[rng() % header.size()]); break;
        case 1: c = static_cast<uint8_t>(hex[rng() % hex.size()]); break;
        case 2: c = static_cast<uint8_t>(32 + rng() % 95); break;
        case 3: c = static_cast<uint8_t>(rng()); break;
        default:
            c = rng() % 4 ? static_cast<uint8_t>(32 + rng() % 95)
                          : static_cast<uint8_t>(rare[rng() % rare.size()]);
        }
    }
    return s;
}

const size_t kLengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20,
                           31, 32, 33, 63, 64, 100, 255, 256, 257, 300, 511,
                           700, 1024, 4096, 5000};

// RFC 7541 C.4 and C.6 Huffman-coded strings.
struct Vector {
    const char* plain;
    const char* hex;
};

const Vector kRfcVectors[] = {
    {"www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"},        // C.4.1
    {"no-cache", "a8eb10649cbf"},                            // C.4.2
    {"custom-key", "25a849e95ba97d7f"},                      // C.4.3
    {"custom-value", "25a849e95bb8e8b4bf"},                  // C.4.3
    {"302", "6402"},                                         // C.6.1
    {"private", "aec3771a4b"},                               // C.6.1
    {"Mon, 21 Oct 2013 20:13:21 GMT",
     "d07abe941054d444a8200595040b8166e082a62d1bff"},        // C.6.1
    {"https://www.example.com",
     "9d29ad171863c78f0b97c8e9ae82ae43d3"},                  // C.6.1
    {"307", "640eff"},                                       // C.6.2
    {"Mon, 21 Oct 2013 20:13:22 GMT",
     "d07abe941054d444a8200595040b8166e084a62d1bff"},        // C.6.2
    {"gzip", "9bd9ab"},                                      // C.6.3
    {"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
     "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587"
     "316065c003ed4ee5b1063d5007"},                          // C.6.3
};


// Every encode test runs on each build of the Huffman encoder the CPU has
// (huffman.h): the generic one, and the BMI2 one on x86-64 CPUs with BMI2
// (skipped, and said, elsewhere).
class HuffmanIsaTest : public testing::TestWithParam<hpack::HuffmanIsa> {
protected:
    void SetUp() override {
        saved_ = hpack::huffman_isa();
        if (!hpack::huffman_set_isa(GetParam()))
            GTEST_SKIP() << "this CPU cannot run the " << name(GetParam())
                         << " build of the Huffman code (huffman.h): not tested here";
    }
    void TearDown() override { hpack::huffman_set_isa(saved_); }

public:
    static const char* name(hpack::HuffmanIsa isa) {
        return isa == hpack::HuffmanIsa::bmi2 ? "BMI2" : "generic";
    }

private:
    hpack::HuffmanIsa saved_ = hpack::HuffmanIsa::generic;
};

class HuffmanEncode : public HuffmanIsaTest {};
class HuffmanDecode : public HuffmanIsaTest {};

inline std::string isa_name(const testing::TestParamInfo<hpack::HuffmanIsa>& info) {
    return HuffmanIsaTest::name(info.param);
}

}  // namespace hpack_huffman_test

#endif
