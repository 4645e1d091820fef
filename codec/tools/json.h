/*
 * json.h: a small, strict JSON reader (RFC 8259) and a string writer, for
 * the hpack tool and the tests (the hpack-test-case story format).
 *
 * Header-only C++17, no exceptions.  Strict means: exactly one value with
 * optional surrounding whitespace, no trailing commas, no comments, no
 * leading zeros, no control characters or invalid UTF-8 inside strings,
 * no lone surrogates.  Object members keep their order and duplicates (a
 * story's header objects are read in order).  Nesting is limited to
 * kMaxDepth so hostile input cannot exhaust the stack.
 */

#ifndef HPACK_TOOLS_JSON_H
#define HPACK_TOOLS_JSON_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpack_tools {
namespace json {

class Value;

struct Member;

class Value {
public:
    enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

    Value() = default;

    static Value null() { return Value(); }
    static Value boolean(bool b)
    {
        Value v;
        v.type_ = Type::kBool;
        v.bool_ = b;
        return v;
    }
    static Value string(std::string s)
    {
        Value v;
        v.type_ = Type::kString;
        v.text_ = std::move(s);
        return v;
    }
    static Value array() { Value v; v.type_ = Type::kArray; return v; }
    static Value object() { Value v; v.type_ = Type::kObject; return v; }
    /* text is the number exactly as written (kept for exact integers). */
    static Value number(std::string text)
    {
        Value v;
        v.type_ = Type::kNumber;
        v.number_ = std::strtod(text.c_str(), nullptr);
        v.text_ = std::move(text);
        return v;
    }

    Type type() const { return type_; }
    bool is_null() const { return type_ == Type::kNull; }
    bool is_bool() const { return type_ == Type::kBool; }
    bool is_number() const { return type_ == Type::kNumber; }
    bool is_string() const { return type_ == Type::kString; }
    bool is_array() const { return type_ == Type::kArray; }
    bool is_object() const { return type_ == Type::kObject; }

    bool as_bool() const { return bool_; }
    double as_number() const { return number_; }
    /* The decoded string (UTF-8), or the number's text. */
    const std::string &as_string() const { return text_; }
    const std::vector<Value> &as_array() const { return items_; }
    std::vector<Value> &as_array() { return items_; }
    inline const std::vector<Member> &as_object() const;
    inline std::vector<Member> &as_object();

    /* A number written as a plain non-negative integer ("0", "4096") that
     * fits in 64 bits: true and *out set.  False for 1.0, 1e3, -1, ... */
    bool as_uint64(uint64_t *out) const
    {
        if (type_ != Type::kNumber || text_.empty()) {
            return false;
        }
        uint64_t n = 0;
        for (char c : text_) {
            if (c < '0' || c > '9') {
                return false;
            }
            unsigned d = unsigned(c - '0');
            if (n > (UINT64_MAX - d) / 10) {
                return false;
            }
            n = n * 10 + d;
        }
        *out = n;
        return true;
    }

    /* The first member named key of an object, or nullptr. */
    inline const Value *find(std::string_view key) const;

private:
    Type                 type_ = Type::kNull;
    bool                 bool_ = false;
    double               number_ = 0;
    std::string          text_;
    std::vector<Value>   items_;
    std::vector<Member>  members_;
};

struct Member {
    std::string  key;
    Value        value;
};

inline const std::vector<Member> &Value::as_object() const { return members_; }
inline std::vector<Member> &Value::as_object() { return members_; }

inline const Value *Value::find(std::string_view key) const
{
    for (const Member &m : members_) {
        if (m.key == key) {
            return &m.value;
        }
    }
    return nullptr;
}


/* ---------------------------------------------------------------- UTF-8 */

inline void append_utf8(std::string *out, uint32_t cp)
{
    if (cp < 0x80) {
        out->push_back(char(cp));
    } else if (cp < 0x800) {
        out->push_back(char(0xc0 | (cp >> 6)));
        out->push_back(char(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out->push_back(char(0xe0 | (cp >> 12)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3f)));
        out->push_back(char(0x80 | (cp & 0x3f)));
    } else {
        out->push_back(char(0xf0 | (cp >> 18)));
        out->push_back(char(0x80 | ((cp >> 12) & 0x3f)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3f)));
        out->push_back(char(0x80 | (cp & 0x3f)));
    }
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
inline size_t utf8_sequence_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp, min;

    if (c < 0x80) {
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2; cp = c & 0x1f; min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3; cp = c & 0x0f; min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4; cp = c & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        return 0;
    }
    return len;
}


/* --------------------------------------------------------------- reader */

class Parser {
public:
    static constexpr int kMaxDepth = 256;

    explicit Parser(std::string_view text) : s_(text) {}

    bool parse(Value *out, std::string *error)
    {
        skip_ws();
        if (!parse_value(out, 0)) {
            return fail_out(error);
        }
        skip_ws();
        if (pos_ != s_.size()) {
            fail("unexpected data after the JSON value");
            return fail_out(error);
        }
        return true;
    }

private:
    bool fail(const char *msg)
    {
        if (msg_.empty()) {
            msg_ = msg;
            err_pos_ = pos_;
        }
        return false;
    }

    bool fail_out(std::string *error)
    {
        if (error != nullptr) {
            size_t line = 1, col = 1;
            for (size_t i = 0; i < err_pos_ && i < s_.size(); i++) {
                if (s_[i] == '\n') {
                    line++;
                    col = 1;
                } else {
                    col++;
                }
            }
            *error = "line " + std::to_string(line) + " column "
                     + std::to_string(col) + ": " + msg_;
        }
        return false;
    }

    bool at_end() const { return pos_ >= s_.size(); }
    char peek() const { return s_[pos_]; }

    void skip_ws()
    {
        while (!at_end()) {
            char c = peek();
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                break;
            }
            pos_++;
        }
    }

    bool literal(std::string_view word)
    {
        if (s_.substr(pos_, word.size()) != word) {
            return fail("invalid literal");
        }
        pos_ += word.size();
        return true;
    }

    bool parse_value(Value *out, int depth)
    {
        if (at_end()) {
            return fail("unexpected end of input, a value was expected");
        }
        switch (peek()) {
        case '{':
            return parse_object(out, depth + 1);
        case '[':
            return parse_array(out, depth + 1);
        case '"': {
            std::string str;
            if (!parse_string(&str)) {
                return false;
            }
            *out = Value::string(std::move(str));
            return true;
        }
        case 't':
            *out = Value::boolean(true);
            return literal("true");
        case 'f':
            *out = Value::boolean(false);
            return literal("false");
        case 'n':
            *out = Value::null();
            return literal("null");
        default:
            if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
                return parse_number(out);
            }
            return fail("unexpected character, a value was expected");
        }
    }

    bool parse_object(Value *out, int depth)
    {
        if (depth > kMaxDepth) {
            return fail("nesting too deep");
        }
        *out = Value::object();
        pos_++;                                     /* '{' */
        skip_ws();
        if (!at_end() && peek() == '}') {
            pos_++;
            return true;
        }
        for (;;) {
            skip_ws();
            if (at_end() || peek() != '"') {
                return fail("a member name (string) was expected");
            }
            Member m;
            if (!parse_string(&m.key)) {
                return false;
            }
            skip_ws();
            if (at_end() || peek() != ':') {
                return fail("':' was expected after a member name");
            }
            pos_++;
            skip_ws();
            if (!parse_value(&m.value, depth)) {
                return false;
            }
            out->as_object().push_back(std::move(m));
            skip_ws();
            if (at_end()) {
                return fail("unexpected end of input inside an object");
            }
            if (peek() == '}') {
                pos_++;
                return true;
            }
            if (peek() != ',') {
                return fail("',' or '}' was expected in an object");
            }
            pos_++;
        }
    }

    bool parse_array(Value *out, int depth)
    {
        if (depth > kMaxDepth) {
            return fail("nesting too deep");
        }
        *out = Value::array();
        pos_++;                                     /* '[' */
        skip_ws();
        if (!at_end() && peek() == ']') {
            pos_++;
            return true;
        }
        for (;;) {
            skip_ws();
            Value v;
            if (!parse_value(&v, depth)) {
                return false;
            }
            out->as_array().push_back(std::move(v));
            skip_ws();
            if (at_end()) {
                return fail("unexpected end of input inside an array");
            }
            if (peek() == ']') {
                pos_++;
                return true;
            }
            if (peek() != ',') {
                return fail("',' or ']' was expected in an array");
            }
            pos_++;
        }
    }

    bool digits()
    {
        size_t start = pos_;
        while (!at_end() && peek() >= '0' && peek() <= '9') {
            pos_++;
        }
        return pos_ > start;
    }

    bool parse_number(Value *out)
    {
        size_t start = pos_;
        if (peek() == '-') {
            pos_++;
        }
        if (at_end()) {
            return fail("digits were expected in a number");
        }
        if (peek() == '0') {
            pos_++;
            if (!at_end() && peek() >= '0' && peek() <= '9') {
                return fail("leading zeros are not allowed in a number");
            }
        } else if (!digits()) {
            return fail("digits were expected in a number");
        }
        if (!at_end() && peek() == '.') {
            pos_++;
            if (!digits()) {
                return fail("digits were expected after '.'");
            }
        }
        if (!at_end() && (peek() == 'e' || peek() == 'E')) {
            pos_++;
            if (!at_end() && (peek() == '+' || peek() == '-')) {
                pos_++;
            }
            if (!digits()) {
                return fail("digits were expected in an exponent");
            }
        }
        *out = Value::number(std::string(s_.substr(start, pos_ - start)));
        return true;
    }

    bool hex4(uint32_t *out)
    {
        if (s_.size() - pos_ < 4) {
            return fail("four hex digits were expected after \\u");
        }
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) {
            char c = s_[pos_ + i];
            v <<= 4;
            if (c >= '0' && c <= '9') {
                v |= uint32_t(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v |= uint32_t(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                v |= uint32_t(c - 'A' + 10);
            } else {
                return fail("four hex digits were expected after \\u");
            }
        }
        pos_ += 4;
        *out = v;
        return true;
    }

    bool parse_string(std::string *out)
    {
        pos_++;                                     /* '"' */
        for (;;) {
            if (at_end()) {
                return fail("unterminated string");
            }
            unsigned char c = (unsigned char) peek();
            if (c == '"') {
                pos_++;
                return true;
            }
            if (c < 0x20) {
                return fail("control character inside a string");
            }
            if (c == '\\') {
                pos_++;
                if (at_end()) {
                    return fail("unterminated string");
                }
                char e = peek();
                pos_++;
                switch (e) {
                case '"':  out->push_back('"'); break;
                case '\\': out->push_back('\\'); break;
                case '/':  out->push_back('/'); break;
                case 'b':  out->push_back('\b'); break;
                case 'f':  out->push_back('\f'); break;
                case 'n':  out->push_back('\n'); break;
                case 'r':  out->push_back('\r'); break;
                case 't':  out->push_back('\t'); break;
                case 'u': {
                    uint32_t cp;
                    if (!hex4(&cp)) {
                        return false;
                    }
                    if (cp >= 0xdc00 && cp <= 0xdfff) {
                        return fail("lone low surrogate in \\u escape");
                    }
                    if (cp >= 0xd800 && cp <= 0xdbff) {
                        uint32_t lo;
                        if (s_.substr(pos_, 2) != "\\u") {
                            return fail("high surrogate not followed by "
                                        "a low surrogate");
                        }
                        pos_ += 2;
                        if (!hex4(&lo)) {
                            return false;
                        }
                        if (lo < 0xdc00 || lo > 0xdfff) {
                            return fail("high surrogate not followed by "
                                        "a low surrogate");
                        }
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    pos_--;
                    return fail("invalid escape in a string");
                }
                continue;
            }
            size_t len = utf8_sequence_len(
                reinterpret_cast<const unsigned char *>(s_.data()) + pos_,
                s_.size() - pos_);
            if (len == 0) {
                return fail("invalid UTF-8 inside a string");
            }
            out->append(s_.data() + pos_, len);
            pos_ += len;
        }
    }

    std::string_view  s_;
    size_t            pos_ = 0;
    std::string       msg_;
    size_t            err_pos_ = 0;
};

/* Parses text as exactly one JSON value.  On failure returns false and
 * sets *error (if not NULL) to "line L column C: what was wrong". */
inline bool parse(std::string_view text, Value *out, std::string *error)
{
    return Parser(text).parse(out, error);
}


/* --------------------------------------------------------------- writer */

/* Appends s as a quoted JSON string.  Well-formed UTF-8 is copied as is;
 * '"', '\\' and control characters are escaped.  A byte that is not part
 * of well-formed UTF-8 is written as \u00XX (its Latin-1 reading): the
 * output stays valid JSON, but reading it back gives that character's
 * UTF-8 form, not the original byte. */
inline void append_string(std::string *out, std::string_view s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = reinterpret_cast<const unsigned char *>(s.data());
    size_t n = s.size();

    out->push_back('"');
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        switch (c) {
        case '"':  out->append("\\\""); i++; continue;
        case '\\': out->append("\\\\"); i++; continue;
        case '\b': out->append("\\b"); i++; continue;
        case '\f': out->append("\\f"); i++; continue;
        case '\n': out->append("\\n"); i++; continue;
        case '\r': out->append("\\r"); i++; continue;
        case '\t': out->append("\\t"); i++; continue;
        default:
            break;
        }
        if (c < 0x20) {
            out->append("\\u00");
            out->push_back(hex[c >> 4]);
            out->push_back(hex[c & 0xf]);
            i++;
            continue;
        }
        size_t len = utf8_sequence_len(p + i, n - i);
        if (len == 0) {
            out->append("\\u00");
            out->push_back(hex[c >> 4]);
            out->push_back(hex[c & 0xf]);
            i++;
            continue;
        }
        out->append(reinterpret_cast<const char *>(p + i), len);
        i += len;
    }
    out->push_back('"');
}

inline std::string quote(std::string_view s)
{
    std::string out;
    append_string(&out, s);
    return out;
}

}  // namespace json
}  // namespace hpack_tools

#endif /* HPACK_TOOLS_JSON_H */
