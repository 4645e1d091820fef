/*
 * qpack.h: QPACK (RFC 9204) field compression for HTTP/3, beside HPACK.
 *
 * The same library and the same conventions as hpack.h, which this header
 * includes: the caller's hpack_allocator_t, the status and error style
 * (0 or a positive status on success, a negative error on failure), and
 * fields returned as hpack_field_t with their per-entry hpack_memo_t, so
 * that a host handles HTTP/2 and HTTP/3 fields with one piece of code.
 *
 * Objects
 *   qpack_decoder_t  one per connection: reads the peer's encoder stream,
 *                    decodes its field sections and writes the decoder
 *                    stream it owes.
 *   qpack_encoder_t  one per connection: encodes our field sections with
 *                    the dynamic table, writes the encoder stream they
 *                    need and reads the peer's decoder stream.
 *
 * Errors
 *   qpack_h3_error() maps a result to the HTTP/3 error code to close the
 *   connection (or, for a limit, reset the stream) with;
 *   qpack_strerror() gives a short text for logs.  Every QPACK error is a
 *   connection error (RFC 9204 2.2.3, 4.5.1.1, 6): the decoder is no longer
 *   usable.  Limit errors are the exception: they end the section they were
 *   found in, and the decoder goes on.
 */

#ifndef QPACK_H
#define QPACK_H

#include <stddef.h>
#include <stdint.h>

#include "hpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of entries of the static table (RFC 9204 Appendix A), indexed
 * from 0. */
#define QPACK_STATIC_ENTRIES  99


/* ---------------------------------------------------------------- status */

enum qpack_status {
    QPACK_OK           = 0,   /* fields were decoded / the call succeeded */
    QPACK_SECTION_END  = 1,   /* the field section is complete */
    QPACK_BLOCKED      = 3    /* the section needs inserts not yet received */
};

enum qpack_error {
    /* a field section is malformed: QPACK_DECOMPRESSION_FAILED */
    QPACK_E_INTEGER            = -101, /* integer above 62 bits or of over ten octets */
    QPACK_E_TRUNCATED          = -102, /* section ends inside a line */
    QPACK_E_STATIC_INDEX       = -103, /* static index above 98 */
    QPACK_E_DYNAMIC_INDEX      = -104, /* a dynamic entry that was evicted,
                                          or at or above the Required
                                          Insert Count (2.2.3) */
    QPACK_E_HUFFMAN_EOS        = -105, /* EOS symbol inside a string */
    QPACK_E_HUFFMAN_PADDING    = -106, /* padding > 7 bits or not all ones */
    QPACK_E_INSERT_COUNT       = -107, /* Encoded Required Insert Count no
                                          conformant encoder sends
                                          (4.5.1.1) */
    QPACK_E_BASE               = -108, /* negative Base (4.5.1.2) */
    QPACK_E_BLOCKED_STREAMS    = -109, /* more blocked streams than our
                                          SETTINGS_QPACK_BLOCKED_STREAMS */

    /* the encoder stream is malformed: QPACK_ENCODER_STREAM_ERROR */
    QPACK_E_ENC_INTEGER        = -121, /* integer above 62 bits or of over ten octets */
    QPACK_E_ENC_CAPACITY       = -122, /* capacity above our maximum */
    QPACK_E_ENC_STATIC_INDEX   = -123, /* static name index above 98 */
    QPACK_E_ENC_DYNAMIC_INDEX  = -124, /* an evicted or nonexistent entry */
    QPACK_E_ENC_ENTRY_SIZE     = -125, /* entry larger than the capacity */
    QPACK_E_ENC_HUFFMAN_EOS    = -126, /* EOS symbol inside a string */
    QPACK_E_ENC_HUFFMAN_PADDING = -127, /* padding > 7 bits or not all
                                           ones */

    /* the decoder stream is malformed: QPACK_DECODER_STREAM_ERROR */
    QPACK_E_DEC_INTEGER        = -141, /* integer above 62 bits or of over ten octets */
    QPACK_E_DEC_ACK            = -142, /* Section Acknowledgment for a
                                          stream with no unacknowledged
                                          section (4.4.1) */
    QPACK_E_DEC_INCREMENT      = -143, /* Insert Count Increment of 0, or
                                          beyond the inserts sent (4.4.3) */

    /* the peer exceeded a caller-set limit: H3_EXCESSIVE_LOAD, a stream
     * error (the section is ended, the decoder goes on) */
    QPACK_E_FIELD_TOO_LARGE    = -161, /* one field above max_field_size */
    QPACK_E_SECTION_TOO_LARGE  = -162, /* section above max_section_size */
    QPACK_E_STRING_TOO_LARGE   = -163  /* a string literal's coded length
                                          above the string limit */

    /* our side, H3_INTERNAL_ERROR: HPACK_E_NOMEM, HPACK_E_ARGUMENT and
     * HPACK_E_STATE, as hpack.h defines them */
};

/* HTTP/3 error codes (RFC 9114 8.1, RFC 9204 6) returned by
 * qpack_h3_error(). */
#define QPACK_H3_NO_ERROR                    0x100
#define QPACK_H3_INTERNAL_ERROR              0x102
#define QPACK_H3_EXCESSIVE_LOAD              0x107
#define QPACK_H3_DECOMPRESSION_FAILED        0x200
#define QPACK_H3_ENCODER_STREAM_ERROR        0x201
#define QPACK_H3_DECODER_STREAM_ERROR        0x202

/* The HTTP/3 error code for a result: H3_NO_ERROR for rc >= 0,
 * QPACK_DECOMPRESSION_FAILED for a malformed field section,
 * QPACK_ENCODER_STREAM_ERROR for a malformed encoder stream,
 * QPACK_DECODER_STREAM_ERROR for a malformed decoder stream,
 * H3_EXCESSIVE_LOAD for a limit, H3_INTERNAL_ERROR for anything on our
 * side. */
unsigned qpack_h3_error(int rc);

/* A static, human-readable description of rc.  Never NULL. */
const char *qpack_strerror(int rc);


/* -------------------------------------------------------------- decoder */

typedef struct qpack_decoder qpack_decoder_t;

/* A decoded field line: hpack.h's field, read as follows.
 *   name, value     point into the section, the dynamic table, the static
 *                   table or the decoder's scratch.
 *   representation  HPACK_REP_INDEXED for an indexed field line (static,
 *                   dynamic or post-base), HPACK_REP_NEVER_INDEXED for a
 *                   literal with the 'N' bit (RFC 9204 4.5.4: forward it
 *                   as a literal), HPACK_REP_WITHOUT_INDEXING for any
 *                   other literal.  Never HPACK_REP_INCREMENTAL: a QPACK
 *                   section inserts nothing.
 *   index           the absolute index of the dynamic entry the field or
 *                   its name is (memo or name_memo set), the static index
 *                   (0..98) of the static one (static_index set), else 0.
 *   static_index    1 + the static index (1..99) when the field or its
 *                   name comes from the static table, else 0.
 *   memo            the memo of the dynamic entry an indexed field is,
 *                   else NULL.  Zeroed when the entry was inserted (on the
 *                   encoder stream), kept while it lives.
 *   name_memo       the memo of the dynamic entry the name was taken from
 *                   (equal to memo for an indexed field), else NULL. */
typedef hpack_field_t qpack_field_t;

/* Creates a decoder.
 *   max_table_capacity  our SETTINGS_QPACK_MAX_TABLE_CAPACITY (at most
 *                       HPACK_MAX_TABLE_SIZE): the peer's Set Dynamic Table
 *                       Capacity may not exceed it.  The table's capacity
 *                       starts at 0 (RFC 9204 3.2.2).
 *   blocked_streams     our SETTINGS_QPACK_BLOCKED_STREAMS: how many
 *                       streams may wait for inserts at once.
 * Limits start unbounded; set them with qpack_decoder_set_limits().  NULL
 * on allocation failure or a capacity above HPACK_MAX_TABLE_SIZE. */
qpack_decoder_t *qpack_decoder_create(const hpack_allocator_t *allocator,
    size_t max_table_capacity, size_t blocked_streams);

/* Releases the decoder and everything it allocated.  NULL is ignored. */
void qpack_decoder_destroy(qpack_decoder_t *dec);

/* Bounds per field section, checked before any octet of a field is decoded
 * (indexed references count in full):
 *   max_field_size    name_len + value_len of one field;
 *   max_section_size  sum over the section of name_len + value_len + 32
 *                     (the SETTINGS_MAX_FIELD_SECTION_SIZE measure).
 * 0 means unbounded.  Takes effect at the next section. */
void qpack_decoder_set_limits(qpack_decoder_t *dec, size_t max_field_size,
    size_t max_section_size);

/* Bounds the coded length (as sent) of every string literal of a field
 * section, checked as soon as its length prefix is read:
 * QPACK_E_STRING_TOO_LARGE.  0 means unbounded (the default).  The encoder
 * stream's strings are bounded by the table's capacity instead (an entry
 * larger than it is QPACK_E_ENC_ENTRY_SIZE, found from the lengths before
 * the strings are read). */
void qpack_decoder_set_string_limit(qpack_decoder_t *dec, size_t max_coded_len);

/* Reads the next octets of the peer's encoder stream, in any split: every
 * complete instruction is applied, a partial one is kept for the next call.
 * QPACK_OK, a QPACK_E_ENC_* error, HPACK_E_NOMEM, or HPACK_E_STATE on a
 * failed decoder.  Fields returned before this call may point at entries
 * it moved or evicted: it ends their validity.  Then
 * qpack_decoder_unblocked() names the streams that can be decoded now, and
 * qpack_decoder_drain() gives the Insert Count Increment owed. */
int qpack_decoder_read_encoder(qpack_decoder_t *dec, const uint8_t *data,
    size_t len);

/* Starts decoding stream_id's field section section[0..len), the whole
 * payload of a HEADERS frame, which stays valid and unchanged until the
 * section ends (the fields may point into it).  A section in progress
 * ends: another stream's with a Stream Cancellation queued for it (its
 * references are abandoned, RFC 9204 2.2.2.2), this stream's to start
 * again.  stream_id is a QUIC stream id, below 2^62.
 *
 * Returns
 *   QPACK_OK        call qpack_decode_fields() for the fields.
 *   QPACK_BLOCKED   the section's Required Insert Count is above the
 *                   inserts received (RFC 9204 2.2.1): the stream is
 *                   blocked, and counts against SETTINGS_QPACK_BLOCKED_
 *                   STREAMS until qpack_decoder_unblocked() names it or it
 *                   is cancelled.  The decoder keeps nothing of the
 *                   section: keep its octets and call qpack_decode_begin()
 *                   again with all of them when the stream is named.
 *   < 0             an error: QPACK_E_BLOCKED_STREAMS when one more
 *                   stream would be blocked than allowed, a prefix error,
 *                   HPACK_E_NOMEM, HPACK_E_STATE on a failed decoder;
 *                   HPACK_E_ARGUMENT for a stream_id of 2^62 or more,
 *                   which changes nothing. */
int qpack_decode_begin(qpack_decoder_t *dec, uint64_t stream_id,
    const uint8_t *section, size_t len);

/* Decodes the next fields of the section begun into fields[0..max_fields);
 * *n_fields gets the number written, whatever the result.  The fields'
 * names and values stay valid until the next call on this decoder or the
 * release of the section's octets, whichever comes first; their memos stay
 * each entry's own.
 *
 * Returns
 *   QPACK_OK           *n_fields >= 1 fields; call again for more (a call
 *                      may return fewer than max_fields though the section
 *                      goes on).
 *   QPACK_SECTION_END  *n_fields fields (maybe none), then the section
 *                      ended; a Section Acknowledgment is queued if its
 *                      Required Insert Count is not 0.
 *   < 0                an error after *n_fields valid fields.  A limit
 *                      error ends the section and queues a Stream
 *                      Cancellation for it (its references are abandoned);
 *                      any other leaves the decoder unusable.
 *                      HPACK_E_STATE when no section was begun;
 *                      HPACK_E_ARGUMENT for max_fields == 0, which changes
 *                      nothing. */
int qpack_decode_fields(qpack_decoder_t *dec, qpack_field_t *fields,
    size_t max_fields, size_t *n_fields);

/* The stream was reset, or its reading abandoned, before all its sections
 * were decoded (RFC 9204 2.2.2.2): queues a Stream Cancellation (none when
 * our maximum capacity is 0, which RFC 9204 permits), forgets the stream
 * if it was blocked, and ends its section if one is in progress.
 * QPACK_OK, HPACK_E_NOMEM, HPACK_E_STATE, or HPACK_E_ARGUMENT for a
 * stream_id of 2^62 or more (no QUIC stream), which changes nothing. */
int qpack_decoder_cancel_stream(qpack_decoder_t *dec, uint64_t stream_id);

/* Writes up to max ids of blocked streams whose sections can be decoded
 * now (their Required Insert Count has been reached) to stream_ids, in the
 * order they blocked, and stops counting them as blocked.  Each keeps the
 * Required Insert Count its section had when it arrived (RFC 9204
 * 4.5.1.1) until the section is begun again or the stream is cancelled.
 * Returns the number written; call again while it is max. */
size_t qpack_decoder_unblocked(qpack_decoder_t *dec, uint64_t *stream_ids,
    size_t max);

/* Copies up to cap octets of the decoder stream owed to the peer into out
 * and returns how many: the Section Acknowledgments and Stream
 * Cancellations in the order they arose, then an Insert Count Increment
 * for the inserts the peer's encoder cannot yet know we received (RFC 9204
 * 4.4.3), computed now, so that one increment covers every insert since
 * the last drain and none is sent for inserts a Section Acknowledgment
 * already covers.  What does not fit is kept for the next call (the
 * increment is written only whole, after everything queued before it).
 * Allocates nothing. */
size_t qpack_decoder_drain(qpack_decoder_t *dec, uint8_t *out, size_t cap);

/* The dynamic table: size in the RFC measure, capacity, live entries, and
 * the insert count (entries ever inserted, the next absolute index). */
size_t qpack_decoder_table_size(const qpack_decoder_t *dec);
size_t qpack_decoder_table_capacity(const qpack_decoder_t *dec);
size_t qpack_decoder_table_entries(const qpack_decoder_t *dec);
uint64_t qpack_decoder_insert_count(const qpack_decoder_t *dec);

/* Streams blocked now. */
size_t qpack_decoder_blocked_streams(const qpack_decoder_t *dec);


/* -------------------------------------------------------------- encoder */

typedef struct qpack_encoder qpack_encoder_t;

/* Creates an encoder.
 *   max_table_capacity  our cap on the dynamic table (at most
 *                       HPACK_MAX_TABLE_SIZE); the capacity used is the
 *                       smaller of it and the peer's
 *                       SETTINGS_QPACK_MAX_TABLE_CAPACITY.
 *   policy              may be NULL for the built-in policy (hpack.h's:
 *                       the same names are never indexed, or indexed only
 *                       when they recur); must outlive the encoder.
 * Until qpack_encoder_set_peer_settings() the encoder uses the static
 * table and literals only (RFC 9204 3.2.3).  NULL on allocation failure or
 * a capacity above HPACK_MAX_TABLE_SIZE. */
qpack_encoder_t *qpack_encoder_create(const hpack_allocator_t *allocator,
    size_t max_table_capacity, const hpack_policy_t *policy);

/* Releases the encoder and everything it allocated.  NULL is ignored. */
void qpack_encoder_destroy(qpack_encoder_t *enc);

/* The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and
 * SETTINGS_QPACK_BLOCKED_STREAMS, once per connection.  The next section
 * that inserts starts the encoder stream with Set Dynamic Table Capacity
 * (none when the capacity used is 0: the table stays empty).  A stream is
 * blocking while one of its sections refers to an entry the peer has not
 * acknowledged; never more than blocked_streams are (0: only acknowledged
 * entries are referred to).  QPACK_OK, or HPACK_E_STATE when called
 * twice. */
int qpack_encoder_set_peer_settings(qpack_encoder_t *enc,
    uint64_t max_table_capacity, uint64_t blocked_streams);

/* The room qpack_encode() is always given enough by: an upper bound of
 * the encoded size of a section of n headers whose name_len + value_len +
 * value_literal_len add up to octets.  The section's part covers its
 * prefix, each field's its representation's integer and two length
 * prefixes.  The encoder stream needs no bound: its budget is what the
 * caller gives. */
#define QPACK_SECTION_BOUND  20
#define QPACK_ENCODE_BOUND(n, octets)                                        \
    (QPACK_SECTION_BOUND + HPACK_FIELD_BOUND * (size_t) (n) + (size_t) (octets))

/* Encodes one field section of stream_id (the payload of a HEADERS frame:
 * headers, trailers, or an interim response) into out, and the encoder-
 * stream instructions it needs into stream_out.
 *   out, out_cap        the section; qpack_encode() checks out_cap against
 *                       a bound of its own, never above
 *                       QPACK_ENCODE_BOUND(), before it writes anything
 *                       (HPACK_E_BUFFER, nothing changed).
 *   stream_out,         the budget of encoder-stream octets this section
 *   stream_cap          may write (what flow control lets the encoder
 *                       stream take now): inserts that do not fit are not
 *                       made, and the fields go as literals.  May be 0
 *                       (and stream_out NULL).
 *   *out_len,           the octets written to each.
 *   *stream_len
 * The caller sends the encoder-stream octets before, or with, the
 * section's HEADERS frame, and never drops them: the peer's decoder needs
 * every one.  Sections must be sent in the order they were encoded on each
 * stream.  hpack_header_t's flags apply: HPACK_FIELD_NEVER_INDEX fields
 * are literals with the 'N' bit, HPACK_FIELD_NO_INDEX fields are not
 * inserted.  QPACK_OK, HPACK_E_BUFFER, HPACK_E_ARGUMENT (an empty or too
 * long name or value, a stream_id of 2^62 or more), HPACK_E_NOMEM (the
 * encoder is unchanged). */
int qpack_encode(qpack_encoder_t *enc, uint64_t stream_id,
    const hpack_header_t *headers, size_t n, uint8_t *out, size_t out_cap,
    size_t *out_len, uint8_t *stream_out, size_t stream_cap,
    size_t *stream_len);

/* The section the last qpack_encode() call wrote will never be sent (its
 * stream was reset first): the encoder stops waiting for its
 * acknowledgment, which would never come, and no longer keeps the entries
 * it refers to for it.  Its encoder-stream octets are sent all the same.
 * Once the decoder stream has been read since, it changes nothing (the
 * section may have been acknowledged).  QPACK_OK or HPACK_E_STATE. */
int qpack_encoder_withdraw(qpack_encoder_t *enc);

/* Reads the next octets of the peer's decoder stream, in any split:
 * Section Acknowledgments, Stream Cancellations and Insert Count
 * Increments release the entries they cover.  QPACK_OK, a QPACK_E_DEC_*
 * error (the encoder is then unusable: close the connection with
 * QPACK_DECODER_STREAM_ERROR), HPACK_E_NOMEM or HPACK_E_STATE.  A
 * cancellation of a stream with no section outstanding is not an error
 * (RFC 9204 4.4.2: the decoder need not know). */
int qpack_encoder_read_decoder(qpack_encoder_t *enc, const uint8_t *data,
    size_t len);

/* The dynamic table: size in the RFC measure, capacity in use, live
 * entries, entries ever inserted, and the Known Received Count (RFC 9204
 * 2.1.4). */
size_t qpack_encoder_table_size(const qpack_encoder_t *enc);
size_t qpack_encoder_table_capacity(const qpack_encoder_t *enc);
size_t qpack_encoder_table_entries(const qpack_encoder_t *enc);
uint64_t qpack_encoder_insert_count(const qpack_encoder_t *enc);
uint64_t qpack_encoder_known_received_count(const qpack_encoder_t *enc);

/* Streams blocking now: with a section that refers to an entry above the
 * Known Received Count. */
size_t qpack_encoder_blocked_streams(const qpack_encoder_t *enc);

/* Sections not acknowledged or cancelled yet that refer to the dynamic
 * table: at most QPACK_MAX_OUTSTANDING; past it a section refers to none
 * (a peer that never acknowledges holds no more of our memory). */
#define QPACK_MAX_OUTSTANDING  256
size_t qpack_encoder_outstanding_sections(const qpack_encoder_t *enc);

/* hpack.h's counters for the encoder: blocks are sections, wire_bytes
 * their octets, insertions the inserts and duplicates on the encoder
 * stream, size_updates the Set Dynamic Table Capacity instructions.
 * stream_bytes gets the encoder-stream octets written (may be NULL). */
void qpack_encoder_stats(const qpack_encoder_t *enc, hpack_stats_t *stats,
    uint64_t *stream_bytes);

#ifdef __cplusplus
}
#endif

#endif /* QPACK_H */
