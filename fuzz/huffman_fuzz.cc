// The Huffman code (RFC 7541 5.2, Appendix B) against a reference written
// here from the RFC's code list, one bit at a time:
//
//   - hpack_huffman_decode of arbitrary octets gives what the reference
//     gives: the same octets, or the same error (EOS inside the string;
//     padding over 7 bits or not all ones), never writing past
//     hpack_huffman_decode_capacity() (the output is an exact-size heap
//     block, so ASan sees any store beyond it);
//   - hpack_huffman_encode of the same octets as plain text writes exactly
//     hpack_huffman_encoded_len() octets, equal to the reference encoding,
//     and decodes back to the text;
//   - hpack_string_encode picks Huffman only when strictly shorter, and
//     its length is hpack_string_encoded_len().
//
// The 257 (code, length) pairs below are copied from the RFC 7541
// Appendix B rows in codec/gen/gen_huffman.py (the generator is ours, the
// list is the RFC's); nothing else of the codec's tables is used.

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "fuzz_common.h"

using namespace hpack_fuzz;

namespace {

struct Code {
    uint32_t code;   // aligned to the LSB
    int len;         // bits
};

// RFC 7541 Appendix B, symbols 0..255 and EOS (256).
const Code kCodes[257] = {
    {0x1ff8, 13}, {0x7fffd8, 23}, {0xfffffe2, 28}, {0xfffffe3, 28},
    {0xfffffe4, 28}, {0xfffffe5, 28}, {0xfffffe6, 28}, {0xfffffe7, 28},
    {0xfffffe8, 28}, {0xffffea, 24}, {0x3ffffffc, 30}, {0xfffffe9, 28},
    {0xfffffea, 28}, {0x3ffffffd, 30}, {0xfffffeb, 28}, {0xfffffec, 28},
    {0xfffffed, 28}, {0xfffffee, 28}, {0xfffffef, 28}, {0xffffff0, 28},
    {0xffffff1, 28}, {0xffffff2, 28}, {0x3ffffffe, 30}, {0xffffff3, 28},
    {0xffffff4, 28}, {0xffffff5, 28}, {0xffffff6, 28}, {0xffffff7, 28},
    {0xffffff8, 28}, {0xffffff9, 28}, {0xffffffa, 28}, {0xffffffb, 28},
    {0x14, 6}, {0x3f8, 10}, {0x3f9, 10}, {0xffa, 12},
    {0x1ff9, 13}, {0x15, 6}, {0xf8, 8}, {0x7fa, 11},
    {0x3fa, 10}, {0x3fb, 10}, {0xf9, 8}, {0x7fb, 11},
    {0xfa, 8}, {0x16, 6}, {0x17, 6}, {0x18, 6},
    {0x0, 5}, {0x1, 5}, {0x2, 5}, {0x19, 6},
    {0x1a, 6}, {0x1b, 6}, {0x1c, 6}, {0x1d, 6},
    {0x1e, 6}, {0x1f, 6}, {0x5c, 7}, {0xfb, 8},
    {0x7ffc, 15}, {0x20, 6}, {0xffb, 12}, {0x3fc, 10},
    {0x1ffa, 13}, {0x21, 6}, {0x5d, 7}, {0x5e, 7},
    {0x5f, 7}, {0x60, 7}, {0x61, 7}, {0x62, 7},
    {0x63, 7}, {0x64, 7}, {0x65, 7}, {0x66, 7},
    {0x67, 7}, {0x68, 7}, {0x69, 7}, {0x6a, 7},
    {0x6b, 7}, {0x6c, 7}, {0x6d, 7}, {0x6e, 7},
    {0x6f, 7}, {0x70, 7}, {0x71, 7}, {0x72, 7},
    {0xfc, 8}, {0x73, 7}, {0xfd, 8}, {0x1ffb, 13},
    {0x7fff0, 19}, {0x1ffc, 13}, {0x3ffc, 14}, {0x22, 6},
    {0x7ffd, 15}, {0x3, 5}, {0x23, 6}, {0x4, 5},
    {0x24, 6}, {0x5, 5}, {0x25, 6}, {0x26, 6},
    {0x27, 6}, {0x6, 5}, {0x74, 7}, {0x75, 7},
    {0x28, 6}, {0x29, 6}, {0x2a, 6}, {0x7, 5},
    {0x2b, 6}, {0x76, 7}, {0x2c, 6}, {0x8, 5},
    {0x9, 5}, {0x2d, 6}, {0x77, 7}, {0x78, 7},
    {0x79, 7}, {0x7a, 7}, {0x7b, 7}, {0x7ffe, 15},
    {0x7fc, 11}, {0x3ffd, 14}, {0x1ffd, 13}, {0xffffffc, 28},
    {0xfffe6, 20}, {0x3fffd2, 22}, {0xfffe7, 20}, {0xfffe8, 20},
    {0x3fffd3, 22}, {0x3fffd4, 22}, {0x3fffd5, 22}, {0x7fffd9, 23},
    {0x3fffd6, 22}, {0x7fffda, 23}, {0x7fffdb, 23}, {0x7fffdc, 23},
    {0x7fffdd, 23}, {0x7fffde, 23}, {0xffffeb, 24}, {0x7fffdf, 23},
    {0xffffec, 24}, {0xffffed, 24}, {0x3fffd7, 22}, {0x7fffe0, 23},
    {0xffffee, 24}, {0x7fffe1, 23}, {0x7fffe2, 23}, {0x7fffe3, 23},
    {0x7fffe4, 23}, {0x1fffdc, 21}, {0x3fffd8, 22}, {0x7fffe5, 23},
    {0x3fffd9, 22}, {0x7fffe6, 23}, {0x7fffe7, 23}, {0xffffef, 24},
    {0x3fffda, 22}, {0x1fffdd, 21}, {0xfffe9, 20}, {0x3fffdb, 22},
    {0x3fffdc, 22}, {0x7fffe8, 23}, {0x7fffe9, 23}, {0x1fffde, 21},
    {0x7fffea, 23}, {0x3fffdd, 22}, {0x3fffde, 22}, {0xfffff0, 24},
    {0x1fffdf, 21}, {0x3fffdf, 22}, {0x7fffeb, 23}, {0x7fffec, 23},
    {0x1fffe0, 21}, {0x1fffe1, 21}, {0x3fffe0, 22}, {0x1fffe2, 21},
    {0x7fffed, 23}, {0x3fffe1, 22}, {0x7fffee, 23}, {0x7fffef, 23},
    {0xfffea, 20}, {0x3fffe2, 22}, {0x3fffe3, 22}, {0x3fffe4, 22},
    {0x7ffff0, 23}, {0x3fffe5, 22}, {0x3fffe6, 22}, {0x7ffff1, 23},
    {0x3ffffe0, 26}, {0x3ffffe1, 26}, {0xfffeb, 20}, {0x7fff1, 19},
    {0x3fffe7, 22}, {0x7ffff2, 23}, {0x3fffe8, 22}, {0x1ffffec, 25},
    {0x3ffffe2, 26}, {0x3ffffe3, 26}, {0x3ffffe4, 26}, {0x7ffffde, 27},
    {0x7ffffdf, 27}, {0x3ffffe5, 26}, {0xfffff1, 24}, {0x1ffffed, 25},
    {0x7fff2, 19}, {0x1fffe3, 21}, {0x3ffffe6, 26}, {0x7ffffe0, 27},
    {0x7ffffe1, 27}, {0x3ffffe7, 26}, {0x7ffffe2, 27}, {0xfffff2, 24},
    {0x1fffe4, 21}, {0x1fffe5, 21}, {0x3ffffe8, 26}, {0x3ffffe9, 26},
    {0xffffffd, 28}, {0x7ffffe3, 27}, {0x7ffffe4, 27}, {0x7ffffe5, 27},
    {0xfffec, 20}, {0xfffff3, 24}, {0xfffed, 20}, {0x1fffe6, 21},
    {0x3fffe9, 22}, {0x1fffe7, 21}, {0x1fffe8, 21}, {0x7ffff3, 23},
    {0x3fffea, 22}, {0x3fffeb, 22}, {0x1ffffee, 25}, {0x1ffffef, 25},
    {0xfffff4, 24}, {0xfffff5, 24}, {0x3ffffea, 26}, {0x7ffff4, 23},
    {0x3ffffeb, 26}, {0x7ffffe6, 27}, {0x3ffffec, 26}, {0x3ffffed, 26},
    {0x7ffffe7, 27}, {0x7ffffe8, 27}, {0x7ffffe9, 27}, {0x7ffffea, 27},
    {0x7ffffeb, 27}, {0xffffffe, 28}, {0x7ffffec, 27}, {0x7ffffed, 27},
    {0x7ffffee, 27}, {0x7ffffef, 27}, {0x7fffff0, 27}, {0x3ffffee, 26},
    {0x3fffffff, 30},
};
constexpr int kEos = 256;

// The code as a binary tree: node 0 is the root; a node's children are
// child[node][bit], a leaf's symbol is -child - 1.
struct Tree {
    std::vector<std::array<int, 2>> child{{0, 0}};
    Tree() {
        for (int s = 0; s < 257; ++s) {
            int node = 0;
            for (int b = kCodes[s].len - 1; b >= 0; --b) {
                const int bit = (kCodes[s].code >> b) & 1;
                if (b == 0) {
                    child[node][bit] = -s - 1;
                } else {
                    if (child[node][bit] == 0) {
                        child[node][bit] = static_cast<int>(child.size());
                        child.push_back({0, 0});
                    }
                    node = child[node][bit];
                }
            }
        }
    }
};

struct Decoded {
    int rc;   // 0, HPACK_E_HUFFMAN_EOS or HPACK_E_HUFFMAN_PADDING
    std::string text;
};

// One bit at a time, as RFC 7541 5.2 reads: a complete code is a symbol,
// EOS is an error wherever it appears, and the bits after the last symbol
// must be fewer than 8 and all ones.
Decoded reference_decode(const uint8_t* p, size_t n) {
    static const Tree tree;
    Decoded d{0, {}};
    uint32_t code = 0;   // the bits since the last symbol
    int len = 0;
    int node = 0;
    for (size_t i = 0; i < n * 8; ++i) {
        const int bit = (p[i / 8] >> (7 - i % 8)) & 1;
        code = code << 1 | bit;
        ++len;
        node = tree.child[node][bit];
        if (node > 0) continue;
        const int sym = -node - 1;
        if (sym == kEos) return {HPACK_E_HUFFMAN_EOS, {}};
        d.text.push_back(static_cast<char>(sym));
        code = 0;
        len = 0;
        node = 0;
    }
    if (len > 7 || code != (1u << len) - 1) return {HPACK_E_HUFFMAN_PADDING, {}};
    return d;
}

// The codes one after another, the last octet filled with the start of
// EOS (ones).
std::vector<uint8_t> reference_encode(const uint8_t* p, size_t n) {
    std::vector<uint8_t> out;
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; ++i) {
        acc = acc << kCodes[p[i]].len | kCodes[p[i]].code;
        bits += kCodes[p[i]].len;
        while (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<uint8_t>(acc >> bits));
        }
        acc &= (uint64_t{1} << bits) - 1;
    }
    if (bits) out.push_back(static_cast<uint8_t>(acc << (8 - bits) | (0xff >> bits)));
    return out;
}

std::string what(const char* check, const uint8_t* p, size_t n) {
    return std::string(check) + ": input " + hex(p, n);
}

void check_decode(const uint8_t* data, size_t size) {
    const Decoded want = reference_decode(data, size);
    const Exact in(data, size);
    const size_t cap = hpack_huffman_decode_capacity(size);
    FUZZ_CHECK(cap >= size * 8 / 5, what("capacity below len * 8 / 5", data, size));
    std::unique_ptr<uint8_t[]> out(new uint8_t[cap ? cap : 1]);
    const ptrdiff_t rc = hpack_huffman_decode(in.begin(), in.n, out.get());
    if (want.rc != 0) {
        FUZZ_CHECK(rc == want.rc, what(("decode gave " + std::to_string(rc) + ", the reference " +
                                        std::to_string(want.rc)).c_str(), data, size));
        return;
    }
    FUZZ_CHECK(rc >= 0, what(("decode failed with " + std::to_string(rc) +
                              " where the reference decodes").c_str(), data, size));
    FUZZ_CHECK(static_cast<size_t>(rc) <= size * 8 / 5, what("decoded too long", data, size));
    FUZZ_CHECK(str(out.get(), static_cast<size_t>(rc)) == want.text,
               what(("decoded " + hex(out.get(), static_cast<size_t>(rc)) + ", the reference " +
                     hex(reinterpret_cast<const uint8_t*>(want.text.data()), want.text.size()))
                        .c_str(), data, size));
}

void check_encode(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> want = reference_encode(data, size);
    const size_t len = hpack_huffman_encoded_len(data, size);
    FUZZ_CHECK(len == want.size(), what(("encoded_len " + std::to_string(len) + ", reference " +
                                         std::to_string(want.size())).c_str(), data, size));
    const Exact in(data, size);
    std::unique_ptr<uint8_t[]> out(new uint8_t[len ? len : 1]);
    const size_t n = hpack_huffman_encode(in.begin(), in.n, out.get());
    FUZZ_CHECK(n == len, what("encode's length is not encoded_len", data, size));
    FUZZ_CHECK(std::vector<uint8_t>(out.get(), out.get() + n) == want,
               what(("encoded " + hex(out.get(), n) + ", reference " + hex(want)).c_str(), data,
                    size));

    // And back, through ours.
    const Exact coded(out.get(), n);
    std::unique_ptr<uint8_t[]> back(new uint8_t[hpack_huffman_decode_capacity(n)]);
    const ptrdiff_t rc = hpack_huffman_decode(coded.begin(), coded.n, back.get());
    FUZZ_CHECK(rc == static_cast<ptrdiff_t>(size) && memcmp(back.get(), data, size) == 0,
               what("encode then decode is not the identity", data, size));

    // The literal string form: H bit and length prefix, then the shorter.
    const size_t slen = hpack_string_encoded_len(data, size);
    std::unique_ptr<uint8_t[]> lit(new uint8_t[slen]);
    FUZZ_CHECK(hpack_string_encode(in.begin(), in.n, lit.get()) == slen,
               what("string_encode's length is not string_encoded_len", data, size));
    const bool huffman = len < size;
    const size_t body = huffman ? len : size;
    FUZZ_CHECK(((lit[0] & 0x80) != 0) == huffman, what("string form: wrong H bit", data, size));
    FUZZ_CHECK(slen > body && memcmp(lit.get() + (slen - body),
                                     huffman ? out.get() : data, body) == 0,
               what("string form: wrong body", data, size));
}

// Seeds: header names and values of the raw-data stories, as text and
// Huffman-coded, and every case's fields joined (long strings).
size_t write_seeds(const std::string& dir) {
    std::vector<std::string> texts;
    for (const auto& s : load_stories(true)) {
        for (const auto& c : s.cases) {
            std::string all;
            for (const auto& h : c.headers) {
                texts.push_back(h.value);
                all += h.name + ": " + h.value + "\r\n";
            }
            texts.push_back(all);
        }
    }
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    if (texts.size() > 1500) texts.resize(1500);
    texts.push_back("www.example.com");   // RFC 7541 C.4.1
    size_t n = 0;
    for (const std::string& t : texts) {
        const auto* p = reinterpret_cast<const uint8_t*>(t.data());
        std::vector<uint8_t> coded(hpack_huffman_encoded_len(p, t.size()));
        hpack_huffman_encode(p, t.size(), coded.data());
        if (!write_seed(dir, n++, coded) || !write_seed(dir, n++, std::vector<uint8_t>(p, p + t.size())))
            return 0;
    }
    return n;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    check_decode(data, size);
    check_encode(data, size);
    return 0;
}
