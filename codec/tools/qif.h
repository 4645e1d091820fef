/*
 * qif.h: the QPACK offline-interop formats (github.com/qpackers/qifs) and
 * the glue that runs an encoded file through the QPACK decoder, for the
 * hpack tool (`hpack qpack-decode`) and the tests.
 *
 * QIF, the plain text: one field a line, name TAB value; a blank line ends
 * a field section; a line that begins with '#' is a comment.
 *
 * The encoded file: records, each an 8-octet big-endian stream id, a
 * 4-octet big-endian length and that many octets.  Stream 0's records are
 * encoder-stream data; any other stream's record is one field section (a
 * HEADERS frame payload) of that stream.  An encoder numbers the sections
 * of a QIF file 1, 2, 3... in the file's order, so the decoded QIF lists
 * the sections in stream-id order, however blocking reordered them.
 */

#ifndef HPACK_TOOLS_QIF_H
#define HPACK_TOOLS_QIF_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qpack.h"
#include "story.h"

namespace hpack_tools {
namespace qif {

using story::Header;
using story::HeaderList;

/* ------------------------------------------------------------------ QIF */

/* The sections of a QIF text, in order (empty sections are not kept: a
 * run of blank lines ends one section).  A line without a TAB is a name
 * with an empty value. */
inline std::vector<HeaderList> parse(std::string_view text)
{
    std::vector<HeaderList> out;
    HeaderList cur;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view()
                                            : text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (!line.empty() && line[0] == '#') {
            continue;
        }
        if (line.empty()) {
            if (!cur.empty()) {
                out.push_back(std::move(cur));
                cur.clear();
            }
            continue;
        }
        size_t tab = line.find('\t');
        if (tab == std::string_view::npos) {
            cur.push_back({std::string(line), ""});
        } else {
            cur.push_back({std::string(line.substr(0, tab)),
                           std::string(line.substr(tab + 1))});
        }
    }
    if (!cur.empty()) {
        out.push_back(std::move(cur));
    }
    return out;
}

/* One section as QIF: its lines, then the blank line that ends it. */
inline void append(std::string *out, const HeaderList &section)
{
    for (const Header &h : section) {
        *out += h.name;
        *out += '\t';
        *out += h.value;
        *out += '\n';
    }
    *out += '\n';
}


/* ------------------------------------------------------ the encoded file */

constexpr size_t kRecordHeader = 12;    /* stream id (8), length (4) */

inline void append_record(std::vector<uint8_t> *out, uint64_t stream,
                          const uint8_t *data, size_t len)
{
    for (int shift = 56; shift >= 0; shift -= 8) {
        out->push_back(uint8_t(stream >> shift));
    }
    for (int shift = 24; shift >= 0; shift -= 8) {
        out->push_back(uint8_t(uint32_t(len) >> shift));
    }
    out->insert(out->end(), data, data + len);
}

/* "QPACK_DECOMPRESSION_FAILED" for an HTTP/3 code of qpack_h3_error(). */
inline const char *h3_error_name(unsigned code)
{
    switch (code) {
    case QPACK_H3_NO_ERROR:               return "H3_NO_ERROR";
    case QPACK_H3_INTERNAL_ERROR:         return "H3_INTERNAL_ERROR";
    case QPACK_H3_EXCESSIVE_LOAD:         return "H3_EXCESSIVE_LOAD";
    case QPACK_H3_DECOMPRESSION_FAILED:   return "QPACK_DECOMPRESSION_FAILED";
    case QPACK_H3_ENCODER_STREAM_ERROR:   return "QPACK_ENCODER_STREAM_ERROR";
    case QPACK_H3_DECODER_STREAM_ERROR:   return "QPACK_DECODER_STREAM_ERROR";
    default:                              return "error";
    }
}

/* "static index above 98 (error -103); HTTP/3 QPACK_DECOMPRESSION_FAILED
 * (0x200)" */
inline std::string describe_error(int rc)
{
    unsigned code = qpack_h3_error(rc);
    char hexcode[16];
    std::snprintf(hexcode, sizeof(hexcode), "0x%x", code);
    return std::string(qpack_strerror(rc)) + " (error " + std::to_string(rc)
           + "); HTTP/3 " + h3_error_name(code) + " (" + hexcode + ")";
}

struct DecodeResult {
    /* The decoded sections by stream id. */
    std::map<uint64_t, HeaderList>  sections;
    /* "" on success, else what went wrong and where. */
    std::string                     error;
    /* The codec's error, or 0 when the error (if any) is the file's. */
    int                             rc = 0;
    size_t                          records = 0;
    size_t                          blocked = 0;    /* sections that blocked */
    size_t                          decoder_stream = 0; /* octets we owe */
};

/* Decodes stream's section, which must not be blocked, into *out (kept
 * only when the whole section decodes). */
inline int decode_section(qpack_decoder_t *dec, uint64_t stream,
                          const uint8_t *data, size_t len,
                          std::map<uint64_t, HeaderList> *out)
{
    HeaderList fields;
    int rc = qpack_decode_begin(dec, stream, data, len);
    if (rc != QPACK_OK) {
        return rc == QPACK_BLOCKED ? int(HPACK_E_STATE) : rc;
    }
    for (;;) {
        qpack_field_t f[kMaxDecodeBatch];
        size_t n = 0;
        rc = qpack_decode_fields(dec, f, kDecodeBatch, &n);
        for (size_t i = 0; i < n; i++) {
            story::CollectField{&fields}(f[i]);
        }
        if (rc == QPACK_SECTION_END) {
            (*out)[stream] = std::move(fields);
            return QPACK_OK;
        }
        if (rc != QPACK_OK) {
            return rc;
        }
    }
}

/* Decodes an encoded file's octets with one decoder of our
 * SETTINGS_QPACK_MAX_TABLE_CAPACITY capacity and SETTINGS_QPACK_BLOCKED_
 * STREAMS blocked.  A blocked section is decoded when the encoder-stream
 * record that unblocks it has been read; one still blocked at the end of
 * the file is an error, as are a truncated record and a second section
 * for a stream.  false on an error (r->error says it). */
inline bool decode(const uint8_t *data, size_t len, size_t capacity,
                   size_t blocked, DecodeResult *r)
{
    *r = DecodeResult();
    qpack_decoder_t *dec = qpack_decoder_create(nullptr, capacity, blocked);
    if (dec == nullptr) {
        r->error = "cannot create a QPACK decoder (table capacity "
                   + std::to_string(capacity) + ")";
        return false;
    }
    /* The blocked sections' octets, kept until they are decoded. */
    std::map<uint64_t, std::pair<const uint8_t *, size_t>> waiting;
    auto fail = [&](std::string where, int rc, std::string what) {
        r->rc = rc;
        r->error = std::move(where) + ": "
                   + (rc != 0 ? describe_error(rc) : std::move(what));
        qpack_decoder_destroy(dec);
        return false;
    };
    size_t off = 0;
    while (off < len) {
        std::string where = "record " + std::to_string(r->records + 1)
                            + " at offset " + std::to_string(off);
        if (len - off < kRecordHeader) {
            return fail(where, 0, "truncated record header ("
                                  + std::to_string(len - off) + " of "
                                  + std::to_string(kRecordHeader)
                                  + " octets)");
        }
        uint64_t stream = 0;
        size_t n = 0;
        for (size_t i = 0; i < 8; i++) {
            stream = stream << 8 | data[off + i];
        }
        for (size_t i = 8; i < kRecordHeader; i++) {
            n = n << 8 | data[off + i];
        }
        off += kRecordHeader;
        where += " (stream " + std::to_string(stream) + ")";
        if (len - off < n) {
            return fail(where, 0, "truncated record: "
                                  + std::to_string(len - off) + " of "
                                  + std::to_string(n) + " octets");
        }
        const uint8_t *p = data + off;
        off += n;
        r->records++;
        if (stream != 0) {
            if (r->sections.count(stream) || waiting.count(stream)) {
                return fail(where, 0, "a second field section for the "
                                      "stream");
            }
            int rc = qpack_decode_begin(dec, stream, p, n);
            if (rc == QPACK_BLOCKED) {
                r->blocked++;
                waiting[stream] = {p, n};
            } else if (rc != QPACK_OK
                       || (rc = decode_section(dec, stream, p, n,
                                               &r->sections))
                          != QPACK_OK)
            {
                return fail(where, rc, "");
            }
        } else {
            int rc = qpack_decoder_read_encoder(dec, p, n);
            if (rc != QPACK_OK) {
                return fail(where + ", encoder stream", rc, "");
            }
            uint64_t ids[16];
            size_t k;
            do {
                k = qpack_decoder_unblocked(dec, ids, 16);
                for (size_t i = 0; i < k; i++) {
                    auto w = waiting.find(ids[i]);
                    if (w == waiting.end()) {
                        return fail(where, HPACK_E_STATE, "");
                    }
                    rc = decode_section(dec, ids[i], w->second.first,
                                        w->second.second,
                                        &r->sections);
                    if (rc != QPACK_OK) {
                        return fail(where + ", blocked stream "
                                        + std::to_string(ids[i]),
                                    rc, "");
                    }
                    waiting.erase(w);
                }
            } while (k == 16);
        }
        /* The decoder stream has no reader offline: drained, counted. */
        uint8_t owed[256];
        for (size_t m; (m = qpack_decoder_drain(dec, owed, sizeof owed));) {
            r->decoder_stream += m;
        }
    }
    if (!waiting.empty()) {
        return fail("end of file", 0,
                    std::to_string(waiting.size()) + " section"
                    + (waiting.size() > 1 ? "s" : "")
                    + " still blocked, the first on stream "
                    + std::to_string(waiting.begin()->first)
                    + " (Required Insert Count above the "
                    + std::to_string(qpack_decoder_insert_count(dec))
                    + " inserts read)");
    }
    qpack_decoder_destroy(dec);
    return true;
}

/* The decoded sections as QIF, in stream-id order. */
inline std::string to_qif(const DecodeResult &r)
{
    std::string out;
    for (const auto &s : r.sections) {
        append(&out, s.second);
    }
    return out;
}

/* `hpack qpack-decode`: decodes the file at path (already read into
 * octets) and writes the QIF to out.  On an error, the sections decoded
 * before it are written, then "hpack: PATH: ERROR" to err.  The exit
 * status: 0, or 1 for an error. */
inline int run_decode(const std::string &label, const std::string &octets,
                      size_t capacity, size_t blocked, std::ostream &out,
                      std::ostream &err)
{
    DecodeResult r;
    bool ok = decode(reinterpret_cast<const uint8_t *>(octets.data()),
                     octets.size(), capacity, blocked, &r);
    out << to_qif(r);
    out.flush();
    if (!ok) {
        err << "hpack: " << label << ": " << r.error << "\n";
        return 1;
    }
    return 0;
}

}  // namespace qif
}  // namespace hpack_tools

#endif /* HPACK_TOOLS_QIF_H */
