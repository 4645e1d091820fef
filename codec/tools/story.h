/*
 * story.h: the hpack-test-case story format (github.com/http2jp/
 * hpack-test-case), and the glue that runs its header lists through the
 * codec, for the hpack tool and the tests.
 *
 *   {"description": "...", "cases": [
 *     {"seqno": 0, "header_table_size": 4096, "wire": "hex",
 *      "headers": [{"name": "value"}, ...]}, ...]}
 *
 * Cases of a story share one compression context.  header_table_size
 * (optional, may be null) is the SETTINGS_HEADER_TABLE_SIZE sent and ACKed
 * just before its case.  raw-data/ stories have no "wire".
 */

#ifndef HPACK_TOOLS_STORY_H
#define HPACK_TOOLS_STORY_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "hpack.h"
#include "block.h"
#include "hex.h"
#include "json.h"

namespace hpack_tools {
namespace story {

struct Header {
    std::string  name;
    std::string  value;

    bool operator==(const Header &o) const
    {
        return name == o.name && value == o.value;
    }
    bool operator!=(const Header &o) const { return !(*this == o); }
};

using HeaderList = std::vector<Header>;

struct Case {
    uint64_t              seqno = 0;
    bool                  has_table_size = false;
    uint64_t              table_size = 0;
    bool                  has_wire = false;
    std::vector<uint8_t>  wire;
    bool                  has_headers = false;
    HeaderList            headers;
};

struct Story {
    std::string        description;
    std::string        context;           /* "request" / "response" */
    std::vector<Case>  cases;
};


/* ---------------------------------------------------------------- reading */

inline bool parse_headers(const json::Value &v, HeaderList *out,
                          std::string *error)
{
    if (!v.is_array()) {
        *error = "\"headers\" is not an array";
        return false;
    }
    for (size_t i = 0; i < v.as_array().size(); i++) {
        const json::Value &h = v.as_array()[i];
        if (!h.is_object() || h.as_object().size() != 1
            || !h.as_object()[0].value.is_string())
        {
            *error = "header " + std::to_string(i)
                     + " is not an object with one string member";
            return false;
        }
        out->push_back({h.as_object()[0].key,
                        h.as_object()[0].value.as_string()});
    }
    return true;
}

inline bool parse(std::string_view text, Story *out, std::string *error)
{
    json::Value root;
    *out = Story();
    if (!json::parse(text, &root, error)) {
        return false;
    }
    if (!root.is_object()) {
        *error = "the story is not a JSON object";
        return false;
    }
    if (const json::Value *d = root.find("description"); d && d->is_string()) {
        out->description = d->as_string();
    }
    if (const json::Value *c = root.find("context"); c && c->is_string()) {
        out->context = c->as_string();
    }
    const json::Value *cases = root.find("cases");
    if (cases == nullptr || !cases->is_array()) {
        *error = "the story has no \"cases\" array";
        return false;
    }
    for (size_t i = 0; i < cases->as_array().size(); i++) {
        const json::Value &c = cases->as_array()[i];
        Case k;
        std::string where = "case " + std::to_string(i) + ": ";
        if (!c.is_object()) {
            *error = where + "not an object";
            return false;
        }
        k.seqno = i;
        if (const json::Value *s = c.find("seqno")) {
            if (!s->as_uint64(&k.seqno)) {
                *error = where + "\"seqno\" is not a non-negative integer";
                return false;
            }
        }
        if (const json::Value *t = c.find("header_table_size");
            t && !t->is_null())
        {
            if (!t->as_uint64(&k.table_size)) {
                *error = where + "\"header_table_size\" is not a "
                                 "non-negative integer";
                return false;
            }
            k.has_table_size = true;
        }
        if (const json::Value *w = c.find("wire")) {
            std::string herr;
            if (!w->is_string()) {
                *error = where + "\"wire\" is not a string";
                return false;
            }
            if (!hex::decode(w->as_string(), &k.wire, &herr)) {
                *error = where + "\"wire\": " + herr;
                return false;
            }
            k.has_wire = true;
        }
        if (const json::Value *h = c.find("headers")) {
            std::string herr;
            if (!parse_headers(*h, &k.headers, &herr)) {
                *error = where + herr;
                return false;
            }
            k.has_headers = true;
        }
        if (!k.has_wire && !k.has_headers) {
            *error = where + "neither \"wire\" nor \"headers\"";
            return false;
        }
        out->cases.push_back(std::move(k));
    }
    return true;
}

inline bool read_file(const std::string &path, std::string *out,
                      std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = "cannot open " + path;
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        *error = "cannot read " + path;
        return false;
    }
    *out = ss.str();
    return true;
}

inline bool load(const std::string &path, Story *out, std::string *error)
{
    std::string text;
    if (!read_file(path, &text, error)) {
        return false;
    }
    if (!parse(text, out, error)) {
        *error = path + ": " + *error;
        return false;
    }
    return true;
}


/* ---------------------------------------------------------------- writing */

inline std::string to_json(const Story &s)
{
    std::string out = "{\n";
    if (!s.description.empty()) {
        out += "  \"description\": " + json::quote(s.description) + ",\n";
    }
    if (!s.context.empty()) {
        out += "  \"context\": " + json::quote(s.context) + ",\n";
    }
    out += "  \"cases\": [";
    for (size_t i = 0; i < s.cases.size(); i++) {
        const Case &c = s.cases[i];
        out += i ? ",\n    {\n" : "\n    {\n";
        out += "      \"seqno\": " + std::to_string(c.seqno) + ",\n";
        if (c.has_table_size) {
            out += "      \"header_table_size\": "
                   + std::to_string(c.table_size) + ",\n";
        }
        if (c.has_wire) {
            out += "      \"wire\": \"" + hex::encode(c.wire) + "\",\n";
        }
        if (!c.has_headers) {
            out.resize(out.size() - 2);             /* the last ",\n" */
            out += "\n    }";
            continue;
        }
        out += "      \"headers\": [";
        for (size_t j = 0; j < c.headers.size(); j++) {
            out += j ? ",\n        { " : "\n        { ";
            out += json::quote(c.headers[j].name) + ": "
                   + json::quote(c.headers[j].value) + " }";
        }
        out += c.headers.empty() ? "]\n    }" : "\n      ]\n    }";
    }
    out += s.cases.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return out;
}


/* ---------------------------------------------------------------- compare */

/* The RFC 7541 measure of a list without the 32-octet overhead: the sum of
 * name and value lengths ("raw size" in the compression-ratio tables). */
inline uint64_t plain_size(const HeaderList &h)
{
    uint64_t n = 0;
    for (const Header &x : h) {
        n += x.name.size() + x.value.size();
    }
    return n;
}

inline std::string show(const Header &h)
{
    return json::quote(h.name) + ": " + json::quote(h.value);
}

/* "" when equal, else where the lists first differ. */
inline std::string diff(const HeaderList &want, const HeaderList &got)
{
    size_t n = std::min(want.size(), got.size());
    for (size_t i = 0; i < n; i++) {
        if (want[i] != got[i]) {
            return "header " + std::to_string(i) + ": expected " + show(want[i])
                   + ", got " + show(got[i]);
        }
    }
    if (want.size() != got.size()) {
        std::string s = "expected " + std::to_string(want.size())
                        + " headers, got " + std::to_string(got.size());
        if (want.size() > got.size()) {
            s += "; first missing: " + show(want[n]);
        } else {
            s += "; first extra: " + show(got[n]);
        }
        return s;
    }
    return "";
}


/* ------------------------------------------------------------ codec glue */

/* Appends a decoded field to a header list. */
struct CollectField {
    HeaderList *out;

    void operator()(const hpack_field_t &f) const
    {
        out->push_back({std::string(reinterpret_cast<const char *>(f.name),
                                    f.name_len),
                        std::string(reinterpret_cast<const char *>(f.value),
                                    f.value_len)});
    }
};

/* One whole block: HPACK_OK or an error. */
inline int decode_block(hpack_decoder_t *dec, const std::vector<uint8_t> &in,
                        HeaderList *out)
{
    out->clear();
    return hpack_tools::decode_block(dec, in.data(), in.size(),
                                     CollectField{out});
}

/* One block through hpack_decode_fields(), handed over in pieces of
 * piece_len octets (the last piece may be shorter), as a block split over
 * reads and CONTINUATION frames arrives.  Every piece must be consumed
 * before the next is given (the NEED_MORE contract).  HPACK_OK, an hpack
 * error, or HPACK_E_STATE if the decoder broke the piece contract (NEED_MORE
 * with octets left, or with last set). */
inline int decode_block_in_pieces(hpack_decoder_t *dec, const uint8_t *data,
                                  size_t len, size_t piece_len,
                                  HeaderList *out)
{
    out->clear();
    hpack_decode_begin(dec);
    size_t off = 0;
    for (;;) {
        size_t n = std::min(piece_len, len - off);
        const uint8_t *p = data + off;
        const uint8_t *end = p + n;
        int last = off + n == len;
        int rc = decode_piece(dec, &p, end, last, CollectField{out});
        if (rc == HPACK_BLOCK_END) {
            return last && p == end ? int(HPACK_OK) : int(HPACK_E_STATE);
        }
        if (rc != HPACK_NEED_MORE) {
            return rc;
        }
        if (last || p != end) {
            return HPACK_E_STATE;
        }
        off += n;
    }
}

inline std::vector<hpack_header_t> to_hpack(const HeaderList &h)
{
    std::vector<hpack_header_t> v(h.size());
    for (size_t i = 0; i < h.size(); i++) {
        v[i] = hpack_header_t();
        v[i].name = reinterpret_cast<const uint8_t *>(h[i].name.data());
        v[i].name_len = h[i].name.size();
        v[i].value = reinterpret_cast<const uint8_t *>(h[i].value.data());
        v[i].value_len = h[i].value.size();
    }
    return v;
}

/* One block through hpack_encode(), out sized by HPACK_ENCODE_BOUND(). */
inline int encode_block(hpack_encoder_t *enc, const HeaderList &h,
                        std::vector<uint8_t> *out)
{
    std::vector<hpack_header_t> v = to_hpack(h);
    size_t bound = encode_room(v.data(), v.size());
    size_t len = 0;
    out->assign(bound, 0);
    int rc = hpack_encode(enc, v.data(), v.size(), out->data(), out->size(),
                          &len);
    if (rc < 0) {
        out->clear();
        return rc;
    }
    if (len > bound) {
        return HPACK_E_BUFFER;
    }
    out->resize(len);
    return rc;
}


/* ----------------------------------------------------------------- corpus */

/* The hpack-test-case checkout: $HPACK_TEST_CASE_DIR if set, else
 * ../shared/data/hpack-test-case relative to the working directory (the
 * repository root).  "" if it is not there; *tried names where we looked. */
inline std::string corpus_dir(std::string *tried)
{
    const char *env = std::getenv("HPACK_TEST_CASE_DIR");
    std::string dir = env && *env ? env : "../shared/data/hpack-test-case";
    *tried = dir;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir + "/raw-data", ec)) {
        return "";
    }
    return dir;
}

/* The story_*.json files of a directory, sorted; empty if none. */
inline std::vector<std::string> story_files(const std::string &dir)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    {
        std::string name = it->path().filename().string();
        if (name.rfind("story_", 0) == 0 && name.size() > 5
            && name.compare(name.size() - 5, 5, ".json") == 0)
        {
            files.push_back(it->path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

/* The names of the subdirectories of dir, sorted. */
inline std::vector<std::string> subdirectories(const std::string &dir)
{
    std::vector<std::string> names;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    {
        if (it->is_directory(ec)) {
            names.push_back(it->path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace story
}  // namespace hpack_tools

#endif /* HPACK_TOOLS_STORY_H */
