/*
 * block.h: a header block through the codec for the hpack tool, the tests,
 * the fuzz targets and the benchmark: decoded with hpack_decode_fields(),
 * field by field, and the room hpack_encode() is given.
 */

#ifndef HPACK_TOOLS_BLOCK_H
#define HPACK_TOOLS_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "hpack.h"

namespace hpack_tools {

/* Fields per hpack_decode_fields() call, as the nginx module asks for, and
 * the most a call here asks for (the fields live on the stack: no
 * allocation). */
constexpr size_t kDecodeBatch = 16;
constexpr size_t kMaxDecodeBatch = 16;

/* Decodes the piece [*pos, end) of the current block (last: the block's
 * final piece) with hpack_decode_fields(), batch fields per call (1: a call
 * per field), and hands every field to on_field(const hpack_field_t &)
 * before the next call.  Returns HPACK_NEED_MORE, HPACK_BLOCK_END or an
 * hpack error; *pos is where hpack_decode_fields() left it (after an error
 * of the peer's block in one piece, the failing representation). */
template <typename OnField>
int decode_piece(hpack_decoder_t *dec, const uint8_t **pos, const uint8_t *end,
                 int last, OnField &&on_field, size_t batch = kDecodeBatch)
{
    hpack_field_t f[kMaxDecodeBatch];
    if (batch > kMaxDecodeBatch) {
        batch = kMaxDecodeBatch;
    }
    for (;;) {
        size_t n = 0;
        const int rc = hpack_decode_fields(dec, pos, end, last, f, batch, &n);
        for (size_t i = 0; i < n; i++) {
            on_field(static_cast<const hpack_field_t &>(f[i]));
        }
        if (rc != HPACK_OK) {
            return rc;
        }
    }
}

/* A whole block in one piece, from hpack_decode_begin() on: HPACK_OK or an
 * hpack error. */
template <typename OnField>
int decode_block(hpack_decoder_t *dec, const uint8_t *in, size_t len,
                 OnField &&on_field, size_t batch = kDecodeBatch)
{
    hpack_decode_begin(dec);
    const uint8_t *pos = in;
    const int rc = decode_piece(dec, &pos, in + len, 1, on_field, batch);
    return rc == HPACK_BLOCK_END ? int(HPACK_OK) : rc;
}

/* HPACK_ENCODE_BOUND() of headers[0..n): the room hpack_encode() is
 * given. */
inline size_t encode_room(const hpack_header_t *headers, size_t n)
{
    size_t octets = 0;
    for (size_t i = 0; i < n; i++) {
        octets += headers[i].name_len + headers[i].value_len
                  + headers[i].value_literal_len;
    }
    return HPACK_ENCODE_BOUND(n, octets);
}

}  // namespace hpack_tools

#endif
