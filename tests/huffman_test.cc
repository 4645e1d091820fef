// Huffman code (RFC 7541 5.2, Appendix B): codec/src/huffman.{h,cc} and the
// Huffman functions of the public API.
//
// The reference encoder and decoder here work bit by bit from the Appendix B
// code list copied into this file, independently of the generator and of
// the tables it makes.

#include <stdio.h>
#include <string.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hpack.h"
#include "huffman.h"
#include "huffman_reference.h"

namespace {

using hpack_reference::Code;
using hpack_reference::kAppendixB;

using Bytes = std::vector<uint8_t>;

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes from_hex(const std::string& hex) {
    Bytes out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2),
                                                      nullptr, 16)));
    return out;
}

std::string to_hex(const Bytes& b) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (uint8_t c : b) {
        s += digits[c >> 4];
        s += digits[c & 15];
    }
    return s;
}

// Reference encoder: one bit at a time, padded with ones.
Bytes reference_encode(const Bytes& in) {
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

Decoded reference_decode(const Bytes& in) {
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

Bytes encode(const Bytes& in) {
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

Decoded decode(const Bytes& in) {
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

std::string describe(const Decoded& d) {
    if (d.rc < 0)
        return "error " + std::to_string(d.rc);
    return "ok " + to_hex(d.out);
}

// Header-like text, hex digits, random printable, any octet, a few
// symbols with long codes.
Bytes random_string(std::mt19937& rng, size_t n, int kind) {
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

}  // namespace

namespace hpack {
// For gtest's messages.
void PrintTo(HuffmanIsa isa, std::ostream* os) {
    *os << (isa == HuffmanIsa::bmi2 ? "BMI2" : "generic");
}
}  // namespace hpack

namespace {

// Every encode and decode test runs on each build of the Huffman code the
// CPU has (huffman.h): the generic one, and the BMI2 one on x86-64 CPUs
// with BMI2 (skipped, and said, elsewhere).
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

std::string isa_name(const testing::TestParamInfo<hpack::HuffmanIsa>& info) {
    return HuffmanIsaTest::name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Isa, HuffmanEncode,
                         testing::Values(hpack::HuffmanIsa::generic, hpack::HuffmanIsa::bmi2),
                         isa_name);
INSTANTIATE_TEST_SUITE_P(Isa, HuffmanDecode,
                         testing::Values(hpack::HuffmanIsa::generic, hpack::HuffmanIsa::bmi2),
                         isa_name);

// ------------------------------------------------------------ tables

TEST(HuffmanTables, AppendixBCodeListIsACompletePrefixCode) {
    // Kraft sum exactly 1: complete; and no code is a prefix of another.
    double kraft = 0;
    for (const Code& c : kAppendixB)
        kraft += 1.0 / static_cast<double>(uint64_t{1} << c.len);
    EXPECT_DOUBLE_EQ(kraft, 1.0);
    for (int a = 0; a < 257; ++a) {
        for (int b = 0; b < 257; ++b) {
            const Code& x = kAppendixB[a];
            const Code& y = kAppendixB[b];
            if (a != b && x.len <= y.len) {
                ASSERT_NE(y.bits >> (y.len - x.len), x.bits) << a << " " << b;
            }
        }
    }
    EXPECT_EQ(kAppendixB[256].len, 30);
    EXPECT_EQ(kAppendixB[256].bits, 0x3fffffffu);
}

TEST(HuffmanTables, EveryOctetEncodesToItsAppendixBCode) {
    for (int c = 0; c < 256; ++c) {
        const Bytes in{static_cast<uint8_t>(c)};
        EXPECT_EQ(to_hex(encode(in)), to_hex(reference_encode(in))) << c;
    }
}

TEST(HuffmanTables, CommittedTablesMatchGenerator) {
    // The Makefile runs the tests from the repository root.
    const char* gen = "codec/gen/gen_huffman.py";
    const char* inc = "codec/src/huffman_tables.inc";
    FILE* f = fopen(gen, "r");
    ASSERT_NE(f, nullptr) << gen << " not found: run the tests from the "
                          << "repository root";
    fclose(f);

    std::string committed;
    f = fopen(inc, "rb");
    ASSERT_NE(f, nullptr) << inc << " not found";
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        committed.append(chunk, got);
    fclose(f);

    std::string generated;
    FILE* p = popen("/usr/bin/python3 codec/gen/gen_huffman.py", "r");
    ASSERT_NE(p, nullptr) << "cannot run /usr/bin/python3";
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        generated.append(chunk, got);
    const int status = pclose(p);
    ASSERT_EQ(status, 0) << "the generator failed";
    ASSERT_FALSE(generated.empty());
    EXPECT_TRUE(generated == committed)
        << inc << " differs from the generator's output: regenerate it with "
        << "/usr/bin/python3 " << gen << " > " << inc;
}

// ------------------------------------------------------------ encode

TEST_P(HuffmanEncode, RfcAppendixCVectors) {
    for (const Vector& v : kRfcVectors)
        EXPECT_EQ(to_hex(encode(bytes(v.plain))), v.hex) << v.plain;
}

TEST_P(HuffmanEncode, EmptyInputIsEmpty) {
    uint8_t out[1] = {0x5a};
    EXPECT_EQ(hpack::huffman_encoded_length(nullptr, 0), 0u);
    EXPECT_EQ(hpack::huffman_encode(nullptr, 0, out), 0u);
    EXPECT_EQ(out[0], 0x5a);
}

TEST_P(HuffmanEncode, MatchesReferenceEncoder) {
    std::mt19937 rng(7);
    for (int kind = 0; kind < 5; ++kind) {
        for (size_t n : kLengths) {
            for (int rep = 0; rep < 3; ++rep) {
                const Bytes in = random_string(rng, n, kind);
                ASSERT_EQ(to_hex(encode(in)), to_hex(reference_encode(in)))
                    << "kind " << kind << " length " << n;
            }
        }
    }
}

TEST_P(HuffmanEncode, LengthIsExactAndNothingIsWrittenPastIt) {
    std::mt19937 rng(11);
    for (int kind = 0; kind < 5; ++kind) {
        for (size_t n = 0; n < 300; ++n) {
            const Bytes in = random_string(rng, n, kind);
            const size_t len = hpack::huffman_encoded_length(in.data(), n);
            Bytes out(len + kGuard, kGuardByte);
            ASSERT_EQ(hpack::huffman_encode(in.data(), n, out.data()), len);
            for (size_t i = len; i < out.size(); ++i)
                ASSERT_EQ(out[i], kGuardByte) << "kind " << kind << " n " << n;
            ASSERT_EQ(len, reference_encode(in).size());
        }
    }
}

// The in-block variant writes whole words and gives up at a limit: below
// the code's length it answers exactly the limit and writes nothing past
// limit + kHuffmanBoundedOverrun; above it, the whole code and its length.
// Every limit from 0 to past the code, for strings of every kind, and of
// octet 22 only (30-bit codes: the longest overrun).
TEST_P(HuffmanEncode, BoundedStopsAtTheLimitAndStaysInTheOverrun) {
    std::mt19937 rng(17);
    for (int kind = 0; kind < 6; ++kind) {
        for (size_t n : {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257}) {
            const Bytes in = kind < 5 ? random_string(rng, n, kind) : Bytes(n, 22);
            const Bytes want = reference_encode(in);
            for (size_t limit = 0; limit <= want.size() + 2; ++limit) {
                Bytes out(limit + hpack::kHuffmanBoundedOverrun + kGuard, kGuardByte);
                const size_t got =
                    hpack::huffman_encode_bounded(in.data(), n, out.data(), limit);
                const std::string at = "kind " + std::to_string(kind) + " n " +
                                       std::to_string(n) + " limit " + std::to_string(limit);
                for (size_t i = limit + hpack::kHuffmanBoundedOverrun; i < out.size(); ++i)
                    ASSERT_EQ(out[i], kGuardByte) << at;
                if (want.size() < limit) {
                    ASSERT_EQ(got, want.size()) << at;
                    ASSERT_EQ(to_hex(Bytes(out.begin(), out.begin() + got)), to_hex(want)) << at;
                } else {
                    ASSERT_EQ(got, limit) << at;
                }
            }
        }
    }
}

// The encoder takes eight symbols at a time, looked up by pairs: one store
// when their codes fit 56 bits, one per half when only the halves do, one
// per symbol for a half over 56 bits; the second group of eight of a turn
// goes out with the first up to 63 bits, and so does the first when it
// ends within 63 bits of its octet's start (61 and 62 bits, first of a
// turn after 0 or 2 ordinary groups, start at bit 0 or 2).  Each kind of
// group after 0-3 ordinary ones, then every tail length that the last
// four-symbol group and the octet loop handle, into an exact-size heap
// buffer and with the in-block overrun.
TEST_P(HuffmanEncode, EveryGroupKindWithEveryTail) {
    const Bytes ordinary = bytes("abcdefgh");                // 45 bits
    const std::pair<const char*, Bytes> kinds[] = {
        {"fits", bytes("0123-./:")},                         // 46 bits
        {"fits exactly", bytes("aeioXZ&#")},                 // 20 + 36 = 56
        {"one past", bytes("aeibXZ&#")},                     // 21 + 36 = 57
        {"halves", bytes("XZ&*;XZ&")},                       // 64: 32 + 32
        {"second of a turn", bytes("XZ&*;XZ:")},             // 63: 32 + 31
        {"61 bits, then 45", bytes("XZ&*;XZaabcdefgh")},     // 56 + 5, 45
        {"62 bits, then 45", bytes("XZ&*;XZ-abcdefgh")},     // 56 + 6, 45
        {"a word, to an octet", bytes("aaaaaaaaXZ&*;XZ&")},  // 40, then 64
        {"halves, one past a word", bytes("XZ&*;XZ!")},      // 66: 32 + 34
        {"long first half", Bytes{1, 2, 3, 'a', 'b', 'c', 'd', 'e'}},
        {"long second half", Bytes{'a', 'b', 'c', 'd', 0x80, 0xff, 22, 'e'}},
        {"long halves", Bytes{1, 2, 3, 4, 5, 6, 7, 8}},
        {"long pair, one store", bytes("$#aeiost")},         // 25 + 30 bits
        {"long pair, second half", bytes("aeio$#st")},       // 20 + 35
        {"long pair, halves", bytes("<`aeiost")},            // 40 + 20
        {"long pair, long half", Bytes{'<', '`', 1, 2, 'a', 'e', 'i', 'o'}},
    };
    const Bytes tail_pool = {'e', '<', 0x80, 'a', '\\', 'Z', 0x16, '0', '~',
                             'x', 1, ' ', 'q', 0xfe, '{', 'i', 'o', '`',
                             0x7f, 's', 't', '^', 'u', 'n'};
    for (const auto& kind : kinds) {
        for (int before = 0; before < 4; ++before) {
            for (size_t tail = 0; tail <= tail_pool.size(); ++tail) {
                Bytes in;
                for (int g = 0; g < before; ++g)
                    in.insert(in.end(), ordinary.begin(), ordinary.end());
                in.insert(in.end(), kind.second.begin(), kind.second.end());
                in.insert(in.end(), tail_pool.begin(), tail_pool.begin() + tail);
                const Bytes want = reference_encode(in);
                ASSERT_EQ(to_hex(encode(in)), to_hex(want))
                    << kind.first << " after " << before << " tail " << tail;
                Bytes out(want.size() + 1 + hpack::kHuffmanBoundedOverrun);
                ASSERT_EQ(hpack::huffman_encode_bounded(in.data(), in.size(), out.data(),
                                                        want.size() + 1),
                          want.size());
                out.resize(want.size());
                ASSERT_EQ(to_hex(out), to_hex(want))
                    << kind.first << " after " << before << " tail " << tail;
            }
        }
    }
}

// Text whose groups of eight keep missing put_two() is written eight
// symbols a turn in two stores, four and four, from the third miss on
// (when at least one group of sixteen in four missed).  Three groups of
// sixteen that miss, then each kind of four-symbol group at each place of
// the next groups of sixteen, then 24 ordinary symbols (the dense loop
// stops 36 octets before the end), then every tail; both encoders, the
// bounded one at each of the last 13 limits below the code's length and
// one above.  And text that misses less often than that: it keeps to
// groups of eight.
TEST_P(HuffmanEncode, DenseTextWithEveryGroupKindAndTail) {
    const Bytes miss = bytes("XZ&*;XZ&XZ&*;XZ&");             // 4 x 32 bits
    const Bytes ordinary4 = bytes("abcd");
    const std::pair<const char*, Bytes> kinds[] = {
        {"fits", bytes("0a-.")},
        {"fits exactly", bytes("\\{{:")},                    // 19 + 30 + 7 = 56
        {"one past", bytes("\\{{X")},                        // 19 + 30 + 8 = 57
        {"a word less one", bytes("\\{{^")},                 // 19 + 30 + 14 = 63
        {"a word", bytes("\\{{{")},                          // 19 + 30 + 15 = 64
        {"one past a word", bytes("\\\\{{")},                // 38 + 30 = 68
        {"long", Bytes{1, 2, 3, 4}},
        {"long pair", Bytes{'a', 'b', 0x80, 22}},
    };
    const Bytes tail_pool = {'e', '<', 0x80, 'a', '\\', 'Z', 0x16, '0', '~',
                             'x', 1, ' ', 'q', 0xfe, '{', 'i', 'o', '`', 0x7f, 's'};
    for (const bool dense : {true, false}) {
        for (const auto& kind : kinds) {
            for (int place = 0; place < 8; ++place) {
                Bytes head;
                for (int g = 0; g < 3; ++g) {
                    // Missing groups of sixteen, or (not dense) each after
                    // five that fit.
                    if (!dense)
                        for (int k = 0; k < 20; ++k)
                            head.insert(head.end(), ordinary4.begin(), ordinary4.end());
                    head.insert(head.end(), miss.begin(), miss.end());
                }
                for (int q = 0; q < 8 + 6; ++q) {
                    const Bytes& g = q == place ? kind.second : ordinary4;
                    head.insert(head.end(), g.begin(), g.end());
                }
                for (size_t tail = 0; tail <= tail_pool.size(); ++tail) {
                    Bytes in = head;
                    in.insert(in.end(), tail_pool.begin(), tail_pool.begin() + tail);
                    const std::string at = std::string(dense ? "dense " : "sparse ") +
                                           kind.first + " at " + std::to_string(place) +
                                           " tail " + std::to_string(tail);
                    const Bytes want = reference_encode(in);
                    ASSERT_EQ(to_hex(encode(in)), to_hex(want)) << at;
                    for (size_t limit = want.size() - 12; limit <= want.size() + 1; ++limit) {
                        Bytes out(limit + hpack::kHuffmanBoundedOverrun + kGuard, kGuardByte);
                        const size_t got =
                            hpack::huffman_encode_bounded(in.data(), in.size(), out.data(), limit);
                        for (size_t i = limit + hpack::kHuffmanBoundedOverrun; i < out.size(); ++i)
                            ASSERT_EQ(out[i], kGuardByte) << at << " limit " << limit;
                        if (want.size() < limit) {
                            ASSERT_EQ(got, want.size()) << at;
                            out.resize(got);
                            ASSERT_EQ(to_hex(out), to_hex(want)) << at;
                        } else {
                            ASSERT_EQ(got, limit) << at << " limit " << limit;
                        }
                    }
                }
            }
        }
    }
}

// The group loops write two 8-octet stores a turn, which reach 16 octets
// past the start of their groups: they must stop early enough that the
// code after them covers those octets.  Text ending in the shortest codes
// (5 bits) is the case where the least code follows: sparse text made of
// them alone, and dense text ending in them, at every length of the run;
// the output has guard octets after its exact length (and is exactly that
// long under AddressSanitizer).
TEST_P(HuffmanEncode, TextEndingInShortCodesStaysInTheOutput) {
    const Bytes miss = bytes("XZ&*;XZ&XZ&*;XZ&");  // 4 x 32 bits
    const Bytes shortest = bytes("012aceiost");     // 5 bits each
    for (int missing = 0; missing < 7; ++missing) {
        for (size_t run = 0; run <= 80; ++run) {
            Bytes in;
            for (int g = 0; g < missing; ++g)
                in.insert(in.end(), miss.begin(), miss.end());
            for (size_t k = 0; k < run; ++k)
                in.push_back(shortest[k % shortest.size()]);
            const Bytes want = reference_encode(in);
            ASSERT_EQ(to_hex(encode(in)), to_hex(want)) << missing << " " << run;
            Bytes out(want.size() + kGuard, kGuardByte);
            ASSERT_EQ(hpack::huffman_encode(in.data(), in.size(), out.data()), want.size());
            for (size_t i = want.size(); i < out.size(); ++i)
                ASSERT_EQ(out[i], kGuardByte)
                    << "wrote at length + " << (i - want.size()) << ": " << missing
                    << " missing groups of sixteen, " << run << " short codes";
        }
    }
}

// Every pair of octets the pair table holds, each at a pair's place in a
// group (even offsets), then ordinary text so that none is in the tail.
TEST_P(HuffmanEncode, EveryPairOfOctets) {
    for (int a = 0; a < 256; ++a) {
        Bytes in;
        for (int b = 0; b < 256; ++b) {
            in.push_back(static_cast<uint8_t>(a));
            in.push_back(static_cast<uint8_t>(b));
        }
        const Bytes text = bytes("abcdefghijklmnopqrstuvwx");
        in.insert(in.end(), text.begin(), text.end());
        ASSERT_EQ(to_hex(encode(in)), to_hex(reference_encode(in))) << "first octet " << a;
    }
}

TEST_P(HuffmanEncode, LongCodesOnly) {
    // Groups of codes over 56 bits take the one-code-at-a-time path.
    Bytes in;
    for (int rep = 0; rep < 40; ++rep)
        for (int c : {0, 10, 13, 22, 249, 127, 220})
            in.push_back(static_cast<uint8_t>(c));
    EXPECT_EQ(to_hex(encode(in)), to_hex(reference_encode(in)));
    const Decoded d = decode(encode(in));
    ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size()));
    EXPECT_EQ(d.out, in);
}

// ------------------------------------------------------------ decode

TEST_P(HuffmanDecode, RfcAppendixCVectors) {
    for (const Vector& v : kRfcVectors) {
        const Decoded d = decode(from_hex(v.hex));
        ASSERT_GE(d.rc, 0) << v.plain;
        EXPECT_EQ(std::string(d.out.begin(), d.out.end()), v.plain);
    }
}

TEST_P(HuffmanDecode, EmptyInputDecodesToEmpty) {
    uint8_t out[hpack::kHuffmanDecodeSlack];
    EXPECT_EQ(hpack::huffman_decode(nullptr, 0, out), 0);
    EXPECT_EQ(decode(Bytes{}).rc, 0);
}

TEST_P(HuffmanDecode, EveryOctetAloneRoundTrips) {
    for (int c = 0; c < 256; ++c) {
        const Bytes in{static_cast<uint8_t>(c)};
        const Decoded d = decode(encode(in));
        ASSERT_EQ(d.rc, 1) << c;
        EXPECT_EQ(d.out, in) << c;
    }
}

TEST_P(HuffmanDecode, AllOctetsInOneStringRoundTrip) {
    Bytes in;
    for (int c = 0; c < 256; ++c)
        in.push_back(static_cast<uint8_t>(c));
    for (int c = 255; c >= 0; --c)
        in.push_back(static_cast<uint8_t>(c));
    for (size_t n = 1; n <= in.size(); n += 37) {
        const Bytes part(in.begin(), in.begin() + n);
        const Decoded d = decode(encode(part));
        ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(n));
        EXPECT_EQ(d.out, part);
    }
}

TEST_P(HuffmanDecode, RandomStringsMatchReferenceDecoder) {
    std::mt19937 rng(3);
    for (int kind = 0; kind < 5; ++kind) {
        for (size_t n : kLengths) {
            for (int rep = 0; rep < 4; ++rep) {
                const Bytes in = random_string(rng, n, kind);
                const Bytes coded = reference_encode(in);
                const Decoded want = reference_decode(coded);
                ASSERT_EQ(want.rc, static_cast<ptrdiff_t>(n));
                ASSERT_EQ(want.out, in);
                const Decoded got = decode(coded);
                ASSERT_EQ(describe(got), describe(want))
                    << "kind " << kind << " length " << n;
            }
        }
    }
}

TEST_P(HuffmanDecode, RejectsEosInsideTheString) {
    // 30 one bits are EOS; anything may follow.
    EXPECT_EQ(decode(from_hex("ffffffff")).rc, HPACK_E_HUFFMAN_EOS);
    EXPECT_EQ(decode(from_hex("fffffffc")).rc, HPACK_E_HUFFMAN_EOS);
    EXPECT_EQ(decode(from_hex("fffffffc00")).rc, HPACK_E_HUFFMAN_EOS);
    EXPECT_EQ(decode(from_hex("fffffffff1e3c2e5")).rc, HPACK_E_HUFFMAN_EOS);
    // 'a' (00011), then EOS, then more symbols.
    EXPECT_EQ(decode(from_hex("1fffffffff00")).rc, HPACK_E_HUFFMAN_EOS);
    // "00" (two 5-bit codes), then EOS ending on the last bit: no padding.
    EXPECT_EQ(decode(from_hex("003fffffff")).rc, HPACK_E_HUFFMAN_EOS);
    // EOS in the middle of a long string, where both decoding positions
    // run.
    Bytes in = encode(Bytes(300, 'x'));
    Bytes coded = encode(Bytes(150, 'e'));  // 750 bits: 6 bits of padding
    coded.back() &= 0xfc;                   // 'e' ends on bit 750
    coded.back() |= 0x03;
    const Bytes eos = from_hex("fffffff0");
    coded.insert(coded.end(), eos.begin(), eos.end());
    coded.insert(coded.end(), in.begin(), in.end());
    EXPECT_EQ(decode(coded).rc, reference_decode(coded).rc);
    EXPECT_EQ(decode(coded).rc, HPACK_E_HUFFMAN_EOS);
}

TEST_P(HuffmanDecode, RejectsPaddingLongerThan7Bits) {
    // 'a' then 11 one bits.
    EXPECT_EQ(decode(from_hex("1fff")).rc, HPACK_E_HUFFMAN_PADDING);
    // A whole octet of ones after a symbol boundary, then more.
    EXPECT_EQ(decode(from_hex("ff")).rc, HPACK_E_HUFFMAN_PADDING);
    EXPECT_EQ(decode(from_hex("ffff")).rc, HPACK_E_HUFFMAN_PADDING);
    EXPECT_EQ(decode(from_hex("ffffff")).rc, HPACK_E_HUFFMAN_PADDING);
    // "www.example.com" with an extra octet of ones.
    EXPECT_EQ(decode(from_hex("f1e3c2e5f23a6ba0ab90f4ffff")).rc,
              HPACK_E_HUFFMAN_PADDING);
    // 29 ones: one short of EOS, still padding.
    EXPECT_EQ(decode(from_hex("fffffff8")).rc, HPACK_E_HUFFMAN_PADDING);
}

TEST_P(HuffmanDecode, RejectsPaddingThatIsNotAllOnes) {
    EXPECT_EQ(decode(from_hex("18")).rc, HPACK_E_HUFFMAN_PADDING);  // 'a' 000
    EXPECT_EQ(decode(from_hex("1e")).rc, HPACK_E_HUFFMAN_PADDING);  // 'a' 110
    EXPECT_EQ(decode(from_hex("00")).rc, HPACK_E_HUFFMAN_PADDING);  // '0' 000
    // A code cut short: the first 8 bits of '<' (15 bits).
    EXPECT_EQ(decode(from_hex("ff")).rc, HPACK_E_HUFFMAN_PADDING);
    EXPECT_EQ(decode(from_hex("fffe")).rc, HPACK_E_HUFFMAN_PADDING);
    // "www.example.com" with its last bit cleared.
    EXPECT_EQ(decode(from_hex("f1e3c2e5f23a6ba0ab90f4fe")).rc,
              HPACK_E_HUFFMAN_PADDING);
}

TEST_P(HuffmanDecode, AcceptsUpTo7BitsOfOnesPadding) {
    EXPECT_EQ(describe(decode(from_hex("1f"))), "ok 61");    // 'a' + 111
    EXPECT_EQ(describe(decode(from_hex("07"))), "ok 30");    // '0' + 111
    EXPECT_EQ(describe(decode(from_hex("00"))), "error -5");
    // No padding at all: 8 symbols of 5 bits.
    const Bytes five = encode(bytes("aaaaaaaa"));
    ASSERT_EQ(five.size(), 5u);
    EXPECT_EQ(describe(decode(five)), "ok 6161616161616161");
}

TEST_P(HuffmanDecode, GarbageAgreesWithReferenceDecoder) {
    // Mostly invalid input: every verdict, error or output, must be the
    // reference decoder's.
    std::mt19937 rng(5);
    for (size_t n : kLengths) {
        for (int rep = 0; rep < 20; ++rep) {
            Bytes in(n);
            for (uint8_t& c : in)
                c = static_cast<uint8_t>(rng());
            // Runs of ones make EOS and long codes likely.
            if (rep % 2)
                for (uint8_t& c : in)
                    c |= static_cast<uint8_t>(rng() & rng());
            ASSERT_EQ(describe(decode(in)), describe(reference_decode(in)))
                << to_hex(in);
        }
    }
    // Valid strings with one flipped bit.
    for (int kind = 0; kind < 5; ++kind) {
        for (size_t n : {5, 40, 300, 1000}) {
            const Bytes coded = reference_encode(random_string(rng, n, kind));
            for (int rep = 0; rep < 20 && !coded.empty(); ++rep) {
                Bytes bad = coded;
                bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
                ASSERT_EQ(describe(decode(bad)), describe(reference_decode(bad)))
                    << to_hex(bad);
            }
        }
    }
}

TEST_P(HuffmanDecode, EveryShortInputAgreesWithReferenceDecoder) {
    // Strings under 8 octets take a path of their own (one lane of the
    // lanes' table, the whole string in one window): every input of one
    // and two octets, and for 3 to 7 octets random ones (half of them
    // mostly ones, for EOS, long codes and padding) and valid strings
    // whose code fills them, with each of the eight values of their last
    // octet's three low bits.
    for (unsigned v = 0; v < 256; ++v)
        ASSERT_EQ(describe(decode(Bytes{static_cast<uint8_t>(v)})),
                  describe(reference_decode(Bytes{static_cast<uint8_t>(v)})))
            << v;
    for (unsigned v = 0; v < 65536; ++v) {
        const Bytes in{static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
        ASSERT_EQ(describe(decode(in)), describe(reference_decode(in))) << to_hex(in);
    }
    std::mt19937 rng(17);
    for (size_t n = 3; n < 8; ++n) {
        for (int rep = 0; rep < 4000; ++rep) {
            Bytes in(n);
            for (uint8_t& c : in)
                c = static_cast<uint8_t>(rep % 2 ? rng() | rng() : rng());
            ASSERT_EQ(describe(decode(in)), describe(reference_decode(in))) << to_hex(in);
        }
        for (int kind = 0; kind < 5; ++kind) {
            for (int rep = 0; rep < 200; ++rep) {
                Bytes coded;
                for (size_t len = 1; coded.size() < n; ++len)
                    coded = reference_encode(random_string(rng, len, kind));
                if (coded.size() != n)
                    continue;
                for (unsigned low = 0; low < 8; ++low) {
                    Bytes bad = coded;
                    bad.back() ^= static_cast<uint8_t>(low);
                    ASSERT_EQ(describe(decode(bad)), describe(reference_decode(bad)))
                        << to_hex(bad);
                }
            }
        }
    }
}

TEST_P(HuffmanDecode, TruncatedValidStringsAgreeWithReferenceDecoder) {
    std::mt19937 rng(9);
    for (int kind = 0; kind < 5; ++kind) {
        const Bytes coded = reference_encode(random_string(rng, 600, kind));
        for (size_t n = 0; n <= coded.size(); n += 1 + n / 16) {
            const Bytes part(coded.begin(), coded.begin() + n);
            ASSERT_EQ(describe(decode(part)), describe(reference_decode(part)))
                << "kind " << kind << " length " << n;
        }
    }
}

TEST_P(HuffmanDecode, HalvesThatNeverSynchroniseStillDecode) {
    // All '0' (00000): decoding from an octet that is not a multiple of 5
    // bits in finds symbol ends 3 bits off forever, so the second decoding
    // position never joins and the first decodes everything.
    for (size_t n : {180, 256, 400, 1001, 4096}) {
        const Bytes in(n, '0');
        const Bytes coded = encode(in);
        const Decoded d = decode(coded);
        ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(n));
        EXPECT_EQ(d.out, in);
    }
}

// `zeros` '0's (00000), '9' (011111) and octet 0x16 (29 ones and a zero),
// then `zeros - after` '0's: decoded from a later position started at an
// octet that is not a multiple of 5 bits into the run, the '0's never
// give a true symbol end, and '9' and 0x16 read from there are 30 ones,
// EOS.  The string is valid.
Bytes eos_lookalike(size_t zeros, size_t after) {
    Bytes in(zeros, '0');
    in.push_back('9');
    in.push_back(0x16);
    in.insert(in.end(), zeros - after, '0');
    return in;
}

TEST_P(HuffmanDecode, MisreadsFromTheSecondPositionAreNotErrors) {
    // The second position starts in the first run: the lookalike is once
    // inside its first 256 bits and once after them.
    for (size_t zeros : {550, 551, 552, 553, 554, 600, 601, 602, 603, 604}) {
        for (size_t after : {40, 200}) {
            const Bytes in = eos_lookalike(zeros, after);
            const Decoded d = decode(encode(in));
            ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size()))
                << zeros << " " << after;
            EXPECT_EQ(d.out, in);
        }
    }
    // The same in strings of 117 to 120 coded octets, near the shortest
    // that decode from two positions: 100 bits into the window.
    for (size_t zeros : {110, 111, 112, 113, 114}) {
        const Bytes in = eos_lookalike(zeros, 40);
        const Bytes coded = encode(in);
        ASSERT_GE(coded.size(), hpack::kHuffmanSplitMinOctets);
        const Decoded d = decode(coded);
        ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size())) << zeros;
        EXPECT_EQ(d.out, in);
    }
}

TEST_P(HuffmanDecode, MisreadsFromTheThreePositionsAreNotErrors) {
    // Header text, the lookalike after 600 '0's (3000 bits), 40 more and
    // header text again, whose length moves the string's thirds: every
    // tail that puts the second position's start (a third of the coded
    // string in) or the third's (two thirds) in the run of '0's, at every
    // offset into it, the lookalike inside that position's first 256 bits
    // or after them.
    std::mt19937 rng(19);
    const auto bits_of = [](const Bytes& b) {
        size_t n = 0;
        for (uint8_t c : b) n += kAppendixB[c].len;
        return n;
    };
    const Bytes tail = random_string(rng, 3000, 0);
    int tried = 0;
    for (int where = 1; where <= 2; ++where) {
        Bytes in = random_string(rng, where == 1 ? 600 : 2000, 0);
        const size_t run = bits_of(in);
        const Bytes mid = eos_lookalike(600, 560);
        in.insert(in.end(), mid.begin(), mid.end());
        const size_t body = bits_of(in);
        size_t tail_bits = 0;
        for (size_t t = 0; t < tail.size(); tail_bits += kAppendixB[tail[t++]].len) {
            const size_t at = (body + tail_bits) * where / 3;  // about
            if (at < run || at > run + 3000 + 50)
                continue;
            Bytes s = in;
            s.insert(s.end(), tail.begin(), tail.begin() + static_cast<ptrdiff_t>(t));
            const Bytes coded = encode(s);
            ASSERT_GE(coded.size(), hpack::kHuffmanSplit3MinOctets);
            const Decoded d = decode(coded);
            ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(s.size())) << where << " " << t;
            ASSERT_EQ(d.out, s) << where << " " << t;
            ++tried;
        }
    }
    EXPECT_GT(tried, 1000);
}

TEST_P(HuffmanDecode, ThirdsThatDoNotSynchroniseStillDecode) {
    // Header text with a run of '0' (5 bits each) over the first or the
    // second split point, or both: a position started inside a run at an
    // offset that is not a multiple of 5 bits never meets a true symbol
    // end, so the one before it decodes on.  Run starts at every offset
    // modulo 5 bits, so that some positions meet and some do not.
    std::mt19937 rng(23);
    for (size_t total : {1800, 4096}) {
        for (int runs = 1; runs <= 3; ++runs) {
            for (size_t shift = 0; shift < 10; ++shift) {
                Bytes in = random_string(rng, total, 0);
                for (int k = 1; k <= 2; ++k) {
                    if (!(runs & k))
                        continue;
                    // About where split point k falls in the text.
                    const size_t at = total * k / 3 - 150 + shift;
                    std::fill(in.begin() + static_cast<ptrdiff_t>(at),
                              in.begin() + static_cast<ptrdiff_t>(at + 400), '0');
                }
                const Bytes coded = encode(in);
                ASSERT_GE(coded.size(), hpack::kHuffmanSplit3MinOctets);
                const Decoded d = decode(coded);
                ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size()))
                    << total << " " << runs << " " << shift;
                EXPECT_EQ(d.out, in);
                // And cut short, and with a bit flipped after the runs.
                const Bytes cut(coded.begin(), coded.end() - 1 - rng() % 40);
                ASSERT_EQ(describe(decode(cut)), describe(reference_decode(cut)));
                Bytes bad = coded;
                bad[bad.size() - 1 - rng() % (bad.size() / 4)] ^= static_cast<uint8_t>(1 << (rng() % 8));
                ASSERT_EQ(describe(decode(bad)), describe(reference_decode(bad)));
            }
        }
    }
}

// Strings dense in codes of 11 to 19 bits (most of them links) and with
// some over 22 bits (the slow path), of n(rep) octets: groups and lanes
// of every position end inside a long code, later positions start inside
// one, and any of them stops at a slow entry.  Whole, they decode; cut
// short inside the later part, they fail as the reference does.  Whole,
// they also keep their later positions: a position that misreads long
// codes gives its part back to the first, which then decodes it right,
// so the result alone would not show it.  A later position that starts
// inside a slow code may misread before it is joined, which a few of
// these strings make it do (2 of 600 from two positions, 1 of 300 from
// three): at most one string in 50 may fall back.
template <typename Length>
void check_long_codes(int reps, unsigned seed, unsigned positions, Length n_of) {
    static const std::string plain = "aeio0123/-=;.:";
    static const std::string longs = "<`{^}\\|~[]$@#";
    static const std::string slows = "\x80\xfe\x01\x16";
    std::mt19937 rng(seed);
    int fell_back = 0;
    for (int rep = 0; rep < reps; ++rep) {
        const size_t n = n_of(rep, rng);
        const unsigned long_in_16 = 1 + rep % 10;
        const unsigned slow_in_256 = rep % 3 == 0 ? 0 : 1 + rep % 4;
        Bytes in(n);
        for (uint8_t& c : in) {
            if (rng() % 256 < slow_in_256)
                c = static_cast<uint8_t>(slows[rng() % slows.size()]);
            else if (rng() % 16 < long_in_16)
                c = static_cast<uint8_t>(longs[rng() % longs.size()]);
            else
                c = static_cast<uint8_t>(plain[rng() % plain.size()]);
        }
        const Bytes coded = reference_encode(in);
        const size_t before = hpack::huffman_split_fallbacks(positions);
        const Decoded got = decode(coded);
        fell_back += hpack::huffman_split_fallbacks(positions) != before;
        ASSERT_EQ(got.rc, static_cast<ptrdiff_t>(n)) << "rep " << rep;
        ASSERT_EQ(got.out, in) << "rep " << rep;
        const Bytes cut(coded.begin(), coded.end() - 1 - rng() % (coded.size() / 3));
        ASSERT_EQ(describe(decode(cut)), describe(reference_decode(cut))) << "rep " << rep;
    }
    EXPECT_LE(fell_back, reps / 50)
        << fell_back << " of " << reps << " valid strings went back to one position";
}

TEST_P(HuffmanDecode, LongCodesAtEveryPlaceOfBothPositions) {
    // From 90 octets (over 112 coded: long codes are 11 bits and more).
    check_long_codes(600, 11, 2, [](int rep, std::mt19937& rng) -> size_t {
        return rep % 3 == 1 ? 90 + rng() % 120 : 320 + rng() % 900;
    });
}

TEST_P(HuffmanDecode, LongCodesAtEveryPlaceOfThreePositions) {
    // From 2,100 octets (over 1,280 coded: no code is under 5 bits) to
    // 4,100.
    check_long_codes(300, 29, 3, [](int, std::mt19937& rng) -> size_t {
        return 2100 + rng() % 2000;
    });
}

// Every coded length from lo to hi octets, of each kind: whole, cut
// short by one octet and with one bit flipped, each the reference's
// verdict.
void check_every_length(size_t lo, size_t hi, unsigned seed) {
    std::mt19937 rng(seed);
    for (int kind = 0; kind < 5; ++kind) {
        const Bytes text = random_string(rng, hi * 8 / 5, kind);
        size_t last = 0;  // prefixes that add a coded octet
        for (size_t n = 1; n <= text.size(); ++n) {
            const Bytes in(text.begin(), text.begin() + n);
            const Bytes coded = reference_encode(in);
            if (coded.size() < lo || coded.size() == last)
                continue;
            if (coded.size() >= hi)
                break;
            last = coded.size();
            const Decoded got = decode(coded);
            ASSERT_EQ(got.rc, static_cast<ptrdiff_t>(n))
                << "kind " << kind << " coded " << coded.size();
            ASSERT_EQ(got.out, in) << "kind " << kind << " coded " << coded.size();
            const Bytes cut(coded.begin(), coded.end() - 1);
            ASSERT_EQ(describe(decode(cut)), describe(reference_decode(cut))) << to_hex(cut);
            Bytes bad = coded;
            bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
            ASSERT_EQ(describe(decode(bad)), describe(reference_decode(bad))) << to_hex(bad);
        }
        ASSERT_GE(last, hi - 4) << "kind " << kind << ": the text is too short";
    }
}

TEST_P(HuffmanDecode, EveryLengthNearTheSecondPositionAgreesWithReference) {
    // From just below the shortest string decoded from two positions to
    // 150 octets past it.
    check_every_length(hpack::kHuffmanSplitMinOctets - 3,
                       hpack::kHuffmanSplitMinOctets + 150, 13);
}

TEST_P(HuffmanDecode, EveryLengthNearTheThirdPositionAgreesWithReference) {
    check_every_length(hpack::kHuffmanSplit3MinOctets - 3,
                       hpack::kHuffmanSplit3MinOctets + 100, 31);
}

TEST_P(HuffmanDecode, NeverWritesPastCapacity) {
    // decode() checks the guard after every call above; here the inputs
    // that decode to the most symbols per octet, and some that fail late.
    for (size_t n : kLengths) {
        const Bytes in(n * 8 / 5, '0');    // 5-bit codes only
        const Bytes coded = encode(in);
        const Decoded d = decode(coded);
        ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size()));
        Bytes bad = coded;
        if (!bad.empty()) {
            bad.back() = 0x00;  // zero padding: rejected at the very end
            EXPECT_EQ(decode(bad).rc, reference_decode(bad).rc);
        }
    }
}

TEST_P(HuffmanDecode, ManyStringsAtOnceAgreeWithReference) {
    // huffman_decode_many(): batches of 1 to 16 strings of every kind
    // (valid, cut short, one bit flipped, garbage, empty, long codes at
    // the end), in the given order, reversed and longest first.  Each
    // output has exactly huffman_decode_capacity() octets on the heap
    // (an overrun is an AddressSanitizer error) and a guard after it.
    std::mt19937 rng(17);
    for (int batch = 0; batch < 400; ++batch) {
        const size_t count = 1 + rng() % 16;
        std::vector<Bytes> in(count);
        for (Bytes& s : in) {
            const size_t n = rng() % 4 == 0 ? rng() % 9 : rng() % (rng() % 2 ? 60 : 400);
            s = reference_encode(random_string(rng, n, static_cast<int>(rng() % 5)));
            switch (rng() % 6) {
            case 0:
                if (!s.empty()) s.pop_back();
                break;
            case 1:
                if (!s.empty()) s[rng() % s.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
                break;
            case 2:
                for (uint8_t& c : s) c = static_cast<uint8_t>(rng() | (rng() & rng()));
                break;
            case 3:
                s.push_back(0xff);  // EOS or padding too long
                break;
            default:
                break;
            }
        }
        std::vector<std::unique_ptr<uint8_t[]>> exact(count);
        std::vector<Bytes> guarded(count);
        std::vector<hpack::HuffmanJob> jobs(count), jobs_guarded(count);
        for (size_t k = 0; k < count; ++k) {
            const size_t cap = hpack::huffman_decode_capacity(in[k].size());
            exact[k].reset(new uint8_t[cap]);
            guarded[k].assign(cap + kGuard, kGuardByte);
            jobs[k] = {in[k].data(), in[k].size(), exact[k].get(), 1};
            jobs_guarded[k] = {in[k].data(), in[k].size(), guarded[k].data(), 1};
        }
        std::vector<uint8_t> order(count);
        for (size_t k = 0; k < count; ++k) order[k] = static_cast<uint8_t>(k);
        if (batch % 3 == 1) std::reverse(order.begin(), order.end());
        if (batch % 3 == 2)
            std::stable_sort(order.begin(), order.end(),
                             [&](uint8_t x, uint8_t y) { return in[x].size() > in[y].size(); });
        hpack::huffman_decode_many(jobs.data(), order.data(), count);
        hpack::huffman_decode_many(jobs_guarded.data(), order.data(), count);
        for (size_t k = 0; k < count; ++k) {
            const Decoded want = reference_decode(in[k]);
            Decoded got{jobs[k].result, {}};
            if (got.rc >= 0) got.out.assign(exact[k].get(), exact[k].get() + got.rc);
            ASSERT_EQ(describe(got), describe(want))
                << "batch " << batch << " string " << k << ": " << to_hex(in[k]);
            ASSERT_EQ(jobs_guarded[k].result, jobs[k].result);
            const size_t cap = hpack::huffman_decode_capacity(in[k].size());
            for (size_t i = cap; i < guarded[k].size(); ++i)
                ASSERT_EQ(guarded[k][i], kGuardByte)
                    << "wrote at capacity + " << (i - cap) << " for " << to_hex(in[k]);
        }
    }
}

TEST_P(HuffmanDecode, PublicApiMatchesInternal) {
    const Bytes in = bytes("custom-value");
    Bytes coded(hpack_huffman_encoded_len(in.data(), in.size()));
    ASSERT_EQ(hpack_huffman_encode(in.data(), in.size(), coded.data()),
              coded.size());
    EXPECT_EQ(to_hex(coded), "25a849e95bb8e8b4bf");
    EXPECT_EQ(hpack_huffman_decode_capacity(coded.size()),
              hpack::huffman_decode_capacity(coded.size()));
    Bytes out(hpack_huffman_decode_capacity(coded.size()));
    ASSERT_EQ(hpack_huffman_decode(coded.data(), coded.size(), out.data()),
              static_cast<ptrdiff_t>(in.size()));
    EXPECT_EQ(Bytes(out.begin(), out.begin() + in.size()), in);
    EXPECT_EQ(hpack_huffman_decode(from_hex("1fff").data(), 2, out.data()),
              HPACK_E_HUFFMAN_PADDING);
}

}  // namespace
