// The Huffman tables: the Appendix B code list, the encoder's codes against
// it, and codec/src/huffman_tables.inc against its generator.

#include <stdio.h>

#include <string>

#include <gtest/gtest.h>

#include "huffman_test_util.h"

using namespace hpack_huffman_test;

namespace {

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

}  // namespace
