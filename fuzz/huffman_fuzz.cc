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
//     its length is hpack_string_encoded_len();
//
// the encoding for every build of the Huffman encoder the CPU has
// (generic, BMI2: huffman.h).
//
// The 257 (code, length) pairs below are copied from the RFC 7541
// Appendix B rows in codec/gen/gen_huffman.py (the generator is ours, the
// list is the RFC's); nothing else of the codec's tables is used.

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "huffman.h"
#include "huffman_reference.h"

using namespace hpack_fuzz;

namespace {

using hpack_reference::Code;
const auto& kCodes = hpack_reference::kAppendixB;

constexpr int kEos = 256;

// The code as a binary tree: node 0 is the root; a node's children are
// child[node][bit], a leaf's symbol is -child - 1.
struct Tree {
    std::vector<std::array<int, 2>> child{{0, 0}};
    Tree() {
        for (int s = 0; s < 257; ++s) {
            int node = 0;
            for (int b = kCodes[s].len - 1; b >= 0; --b) {
                const int bit = (kCodes[s].bits >> b) & 1;
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
        acc = acc << kCodes[p[i]].len | kCodes[p[i]].bits;
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
    // Each build of the Huffman code this CPU has (huffman.h).
    for (hpack::HuffmanIsa isa : {hpack::HuffmanIsa::generic, hpack::HuffmanIsa::bmi2}) {
        if (!hpack::huffman_set_isa(isa)) continue;
        check_decode(data, size);
        check_encode(data, size);
    }
    return 0;
}
