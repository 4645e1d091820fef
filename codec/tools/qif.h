/*
 * qif.h: the QPACK offline-interop formats (github.com/qpackers/qifs) and
 * the glue that runs an encoded file through the QPACK decoder, and a QIF
 * file through the QPACK encoder, for the hpack tool (`hpack qpack-decode`,
 * `hpack qpack-encode`) and the tests.
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
 *
 * The offline-interop convention gives the encoder one of two assumptions
 * about the decoder stream it cannot read: immediate acknowledgement (each
 * section is acknowledged, and its inserts known received, as soon as it
 * is encoded) or none (nothing is ever acknowledged).
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


/* ------------------------------------------------------------- encoding */

/* What a file is encoded for: the peer decoder's settings, our own cap on
 * the table, and the acknowledgement mode. */
struct EncodeSettings {
    /* The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and SETTINGS_QPACK_
     * BLOCKED_STREAMS: the file decodes with these. */
    size_t  capacity = HPACK_DEFAULT_TABLE_SIZE;
    size_t  blocked = 100;
    /* Our cap (qpack_encoder_create()); the table used is the smaller. */
    size_t  max_capacity = HPACK_DEFAULT_TABLE_SIZE;
    /* Immediate acknowledgement: the decoder stream of a decoder that
     * decoded each section is read by the encoder before the next. */
    bool    ack = true;
};

struct EncodeResult {
    std::vector<uint8_t>  octets;          /* the encoded file */
    /* "" on success, else what went wrong and where. */
    std::string           error;
    /* The codec's error, or 0 when the error is the check's. */
    int                   rc = 0;
    size_t                sections = 0;        /* sections encoded */
    size_t                encoder_stream = 0;  /* octets on stream 0 */
    size_t                decoder_stream = 0;  /* octets the encoder read */
};

/* The encoder-stream budget of a section of n headers of octets octets
 * (name_len + value_len): offline there is no flow control to bound it, so
 * one no section uses up.  An insert costs at most what the field's
 * literal in the section does (its octets and length prefixes, which
 * QPACK_ENCODE_BOUND() counts), a duplicate less. */
inline size_t encoder_stream_budget(size_t n, size_t octets)
{
    return 2 * QPACK_ENCODE_BOUND(n, octets);
}

/* Encodes sections with one encoder of s.max_capacity that was told the
 * peer's settings, section i (from 0) on stream i + 1: a stream-0 record
 * of the encoder-stream octets it needs (none when it needs none), then
 * its record.  One decoder of the peer's settings reads each section's
 * records as soon as they are written, as the peer would, and must give
 * back the section's fields; with s.ack its decoder stream is read by the
 * encoder before the next section, else it is dropped.  false on an error
 * (r->error says it; r->octets holds the records before it). */
inline bool encode(const std::vector<HeaderList> &sections,
                   const EncodeSettings &s, EncodeResult *r)
{
    *r = EncodeResult();
    qpack_encoder_t *enc = qpack_encoder_create(nullptr, s.max_capacity,
                                                nullptr);
    qpack_decoder_t *dec = qpack_decoder_create(nullptr, s.capacity,
                                                s.blocked);
    auto fail = [&](std::string where, int rc, std::string what) {
        r->rc = rc;
        r->error = std::move(where) + ": "
                   + (rc != 0 ? describe_error(rc) : std::move(what));
        qpack_encoder_destroy(enc);
        qpack_decoder_destroy(dec);
        return false;
    };
    if (enc == nullptr) {
        return fail("settings", 0, "cannot create a QPACK encoder (table "
                                   "capacity " + std::to_string(s.max_capacity)
                                   + ")");
    }
    if (dec == nullptr) {
        return fail("settings", 0, "cannot create a QPACK decoder (table "
                                   "capacity " + std::to_string(s.capacity)
                                   + ")");
    }
    int rc = qpack_encoder_set_peer_settings(enc, s.capacity, s.blocked);
    if (rc != QPACK_OK) {
        return fail("settings", rc, "");
    }
    std::vector<uint8_t> section, stream_octets;
    for (size_t i = 0; i < sections.size(); i++) {
        const HeaderList &fields = sections[i];
        const uint64_t stream = i + 1;
        const std::string where = "section " + std::to_string(stream)
                                  + " (stream " + std::to_string(stream)
                                  + ")";
        std::vector<hpack_header_t> h = story::to_hpack(fields);
        size_t octets = 0;
        for (const Header &f : fields) {
            octets += f.name.size() + f.value.size();
        }
        section.assign(QPACK_ENCODE_BOUND(h.size(), octets), 0);
        stream_octets.assign(encoder_stream_budget(h.size(), octets), 0);
        size_t len = 0, stream_len = 0;
        rc = qpack_encode(enc, stream, h.data(), h.size(), section.data(),
                          section.size(), &len, stream_octets.data(),
                          stream_octets.size(), &stream_len);
        if (rc != QPACK_OK) {
            return fail(where + ", encoding", rc, "");
        }
        if (len > section.size() || stream_len > stream_octets.size()) {
            return fail(where, 0, "the encoder wrote past its buffers");
        }
        if (stream_len != 0) {
            append_record(&r->octets, 0, stream_octets.data(), stream_len);
            r->encoder_stream += stream_len;
        }
        append_record(&r->octets, stream, section.data(), len);
        r->sections++;

        /* The peer, who has every record so far. */
        rc = qpack_decoder_read_encoder(dec, stream_octets.data(),
                                        stream_len);
        if (rc != QPACK_OK) {
            return fail(where + ", our decoder reading the encoder stream",
                        rc, "");
        }
        std::map<uint64_t, HeaderList> decoded;
        rc = decode_section(dec, stream, section.data(), len, &decoded);
        if (rc != QPACK_OK && qpack_decoder_blocked_streams(dec) != 0) {
            return fail(where, 0, "our decoder blocked on the section, "
                                  "though it read the encoder stream "
                                  "before it");
        }
        if (rc != QPACK_OK) {
            return fail(where + ", our decoder reading the section", rc,
                        "");
        }
        const std::string diff = story::diff(fields, decoded[stream]);
        if (!diff.empty()) {
            return fail(where, 0, "our decoder reads back other fields: "
                                  + diff);
        }
        uint8_t owed[256];
        for (size_t m; (m = qpack_decoder_drain(dec, owed, sizeof owed));) {
            if (!s.ack) {
                continue;
            }
            rc = qpack_encoder_read_decoder(enc, owed, m);
            if (rc != QPACK_OK) {
                return fail(where + ", the encoder reading the decoder "
                                    "stream", rc, "");
            }
            r->decoder_stream += m;
        }
    }
    qpack_encoder_destroy(enc);
    qpack_decoder_destroy(dec);
    return true;
}

/* `hpack qpack-encode`: encodes the QIF text of the file at label into
 * *out.  On an error, "hpack: LABEL: ERROR" goes to err and *out is left
 * empty.  The exit status: 0, or 1 for an error. */
inline int run_encode(const std::string &label, const std::string &text,
                      const EncodeSettings &s, std::vector<uint8_t> *out,
                      std::ostream &err)
{
    EncodeResult r;
    out->clear();
    if (!encode(parse(text), s, &r)) {
        err << "hpack: " << label << ": " << r.error << "\n";
        return 1;
    }
    *out = std::move(r.octets);
    return 0;
}

}  // namespace qif
}  // namespace hpack_tools

#endif /* HPACK_TOOLS_QIF_H */
