// The Huffman decoder (codec/src/huffman_decode.cc): the RFC's vectors,
// the reference decoder's verdict on valid, cut and damaged strings of
// every length and kind, and the output capacity.

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "huffman_test_util.h"

using namespace hpack_huffman_test;

namespace {

INSTANTIATE_TEST_SUITE_P(Isa, HuffmanDecode,
                         testing::Values(hpack::HuffmanIsa::generic, hpack::HuffmanIsa::bmi2),
                         isa_name);

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
    // EOS in the middle of a long string.
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
    // Strings under 8 octets are read through load_tail() alone (the
    // whole string in one window): every input of one and two octets, and
    // for 3 to 7 octets random ones (half of them mostly ones, for EOS,
    // long codes and padding) and valid strings
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

// `zeros` '0's (00000), '9' (011111) and octet 0x16 (29 ones and a zero),
// then `zeros - after` '0's: read from an octet that is not a multiple of
// 5 bits into the run, '9' and 0x16 look like 30 ones, EOS.  The string is
// valid.
Bytes eos_lookalike(size_t zeros, size_t after) {
    Bytes in(zeros, '0');
    in.push_back('9');
    in.push_back(0x16);
    in.insert(in.end(), zeros - after, '0');
    return in;
}

TEST_P(HuffmanDecode, EosLookalikesInsideValidStringsDecode) {
    for (size_t zeros : {110, 111, 112, 113, 114, 550, 551, 552, 553, 554, 600}) {
        for (size_t after : {40, 100}) {
            const Bytes in = eos_lookalike(zeros, after);
            const Decoded d = decode(encode(in));
            ASSERT_EQ(d.rc, static_cast<ptrdiff_t>(in.size())) << zeros << " " << after;
            EXPECT_EQ(d.out, in);
        }
    }
}

// Strings dense in codes of 11 to 19 bits (most of them links) and with
// some over 22 bits (the slow path): groups end inside a long code, and
// any lookup of a group may meet a slow entry.  Whole, they decode; cut
// short, they fail (or not) as the reference does.
TEST_P(HuffmanDecode, LongCodesAtEveryPlaceAgreeWithReference) {
    static const std::string plain = "aeio0123/-=;.:";
    static const std::string longs = "<`{^}\\|~[]$@#";
    static const std::string slows = "\x80\xfe\x01\x16";
    std::mt19937 rng(11);
    for (int rep = 0; rep < 600; ++rep) {
        const size_t n = rep % 3 == 1 ? 1 + rng() % 120 : 120 + rng() % (rep % 7 ? 900 : 4000);
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
        const Decoded got = decode(coded);
        ASSERT_EQ(got.rc, static_cast<ptrdiff_t>(n)) << "rep " << rep;
        ASSERT_EQ(got.out, in) << "rep " << rep;
        const Bytes cut(coded.begin(), coded.end() - 1 - rng() % (coded.size() / 3 + 1));
        ASSERT_EQ(describe(decode(cut)), describe(reference_decode(cut))) << "rep " << rep;
    }
}

// Every coded length from 1 to 300 octets, of each kind: whole, cut short
// by one octet and with one bit flipped, each the reference's verdict.
TEST_P(HuffmanDecode, EveryLengthAgreesWithReference) {
    constexpr size_t kMaxCoded = 300;
    std::mt19937 rng(13);
    for (int kind = 0; kind < 5; ++kind) {
        const Bytes text = random_string(rng, kMaxCoded * 8 / 5, kind);
        size_t last = 0;  // prefixes that add a coded octet
        for (size_t n = 1; n <= text.size(); ++n) {
            const Bytes in(text.begin(), text.begin() + n);
            const Bytes coded = reference_encode(in);
            if (coded.size() == last)
                continue;
            if (coded.size() >= kMaxCoded)
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
        ASSERT_GE(last, kMaxCoded - 4) << "kind " << kind << ": the text is too short";
    }
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
