/*
 * hex.h: hex encoding of octet strings, for the hpack tool and the tests
 * (header blocks are written as hex in captures and in hpack-test-case).
 */

#ifndef HPACK_TOOLS_HEX_H
#define HPACK_TOOLS_HEX_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hpack_tools {
namespace hex {

/* Lowercase hex, two digits per octet, no separators. */
inline std::string encode(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(n * 2);
    for (size_t i = 0; i < n; i++) {
        out.push_back(digits[p[i] >> 4]);
        out.push_back(digits[p[i] & 0xf]);
    }
    return out;
}

inline std::string encode(const std::vector<uint8_t> &v)
{
    return encode(v.data(), v.size());
}

inline int digit_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Strict: an even number of hex digits (either case) and nothing else.
 * On failure returns false, leaves *out unspecified and, if error is not
 * NULL, says what and where. */
inline bool decode(std::string_view text, std::vector<uint8_t> *out,
                   std::string *error = nullptr)
{
    out->clear();
    if (text.size() % 2 != 0) {
        if (error != nullptr) {
            *error = "odd number of hex digits ("
                     + std::to_string(text.size()) + ")";
        }
        return false;
    }
    out->reserve(text.size() / 2);
    for (size_t i = 0; i < text.size(); i += 2) {
        int hi = digit_value(text[i]);
        int lo = digit_value(text[i + 1]);
        if (hi < 0 || lo < 0) {
            if (error != nullptr) {
                size_t bad = hi < 0 ? i : i + 1;
                *error = "not a hex digit at position "
                         + std::to_string(bad) + ": '"
                         + std::string(1, text[bad]) + "'";
            }
            return false;
        }
        out->push_back(uint8_t(hi << 4 | lo));
    }
    return true;
}

}  // namespace hex
}  // namespace hpack_tools

#endif /* HPACK_TOOLS_HEX_H */
