// The Huffman encoder (codec/src/huffman_encode.cc): the RFC's vectors, the
// reference encoder's output, exact lengths, the bounded form's limit, and
// every group kind and tail of the word-at-a-time loops.

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "huffman_test_util.h"

using namespace hpack_huffman_test;

namespace {

INSTANTIATE_TEST_SUITE_P(Isa, HuffmanEncode,
                         testing::Values(hpack::HuffmanIsa::generic, hpack::HuffmanIsa::bmi2),
                         isa_name);

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

// Every pair of octets, each at a pair's place in a group (even offsets,
// joined by join2()), then ordinary text so that none is in the tail.
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

}  // namespace
