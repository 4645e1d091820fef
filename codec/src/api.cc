// The parts of the C ABI shared by every object: the default allocator and
// the error vocabulary.

#include <stdlib.h>

#include "common.h"
#include "qpack.h"

namespace hpack {
namespace {

void* default_alloc(void*, size_t size) { return malloc(size); }
void default_free(void*, void* p) { free(p); }

}  // namespace

Allocator::Allocator(const hpack_allocator_t* a)
    : alloc_(a ? a->alloc : default_alloc),
      free_(a ? a->free : default_free),
      ctx_(a ? a->ctx : nullptr) {}

}  // namespace hpack

HPACK_API unsigned hpack_h2_error(int rc) {
    if (rc >= 0) return HPACK_H2_NO_ERROR;
    if (rc > -20) return HPACK_H2_COMPRESSION_ERROR;
    if (rc > -30) return HPACK_H2_ENHANCE_YOUR_CALM;
    return HPACK_H2_INTERNAL_ERROR;
}

HPACK_API const char* hpack_strerror(int rc) {
    switch (rc) {
    case HPACK_OK: return "success";
    case HPACK_BLOCK_END: return "end of header block";
    case HPACK_NEED_MORE: return "header block continues in the next piece";
    case HPACK_E_INTEGER: return "integer longer than four octets";
    case HPACK_E_TRUNCATED: return "header block ends inside a representation";
    case HPACK_E_INDEX: return "index 0 or past the end of the table";
    case HPACK_E_HUFFMAN_EOS: return "EOS symbol inside a Huffman string";
    case HPACK_E_HUFFMAN_PADDING:
        return "Huffman padding longer than 7 bits or not all ones";
    case HPACK_E_UPDATE_POSITION:
        return "dynamic table size update after a header field";
    case HPACK_E_UPDATE_SIZE:
        return "dynamic table size update above SETTINGS_HEADER_TABLE_SIZE";
    case HPACK_E_UPDATE_MISSING:
        return "header block lacks the dynamic table size update required "
               "after SETTINGS_HEADER_TABLE_SIZE shrank";
    case HPACK_E_FIELD_TOO_LARGE: return "header field exceeds the size limit";
    case HPACK_E_LIST_TOO_LARGE: return "header list exceeds the size limit";
    case HPACK_E_STRING_TOO_LARGE:
        return "string literal longer than the limit as sent";
    case HPACK_E_NOMEM: return "out of memory";
    case HPACK_E_BUFFER: return "output buffer smaller than the encode bound";
    case HPACK_E_ARGUMENT: return "invalid argument";
    case HPACK_E_STATE: return "call out of order or on a failed object";
    default: return "unknown error";
    }
}

// QPACK's errors come in ranges, one per HTTP/3 code, below HPACK's; our
// side's are HPACK's own (qpack.h).
HPACK_API unsigned qpack_h3_error(int rc) {
    if (rc >= 0) return QPACK_H3_NO_ERROR;
    if (rc <= -101 && rc > -120) return QPACK_H3_DECOMPRESSION_FAILED;
    if (rc <= -121 && rc > -140) return QPACK_H3_ENCODER_STREAM_ERROR;
    if (rc <= -141 && rc > -160) return QPACK_H3_DECODER_STREAM_ERROR;
    if (rc <= -161 && rc > -180) return QPACK_H3_EXCESSIVE_LOAD;
    return QPACK_H3_INTERNAL_ERROR;
}

HPACK_API const char* qpack_strerror(int rc) {
    switch (rc) {
    case QPACK_OK: return "success";
    case QPACK_SECTION_END: return "end of field section";
    case QPACK_BLOCKED: return "field section blocked until its inserts arrive";
    case QPACK_E_INTEGER: return "field section integer above 62 bits or longer than ten octets";
    case QPACK_E_TRUNCATED: return "field section ends inside a field line";
    case QPACK_E_STATIC_INDEX: return "field line static index past the table";
    case QPACK_E_DYNAMIC_INDEX:
        return "field line references an evicted entry or one at or above "
               "the Required Insert Count";
    case QPACK_E_HUFFMAN_EOS: return "EOS symbol inside a field section's Huffman string";
    case QPACK_E_HUFFMAN_PADDING:
        return "field section Huffman padding longer than 7 bits or not all ones";
    case QPACK_E_INSERT_COUNT: return "invalid encoded Required Insert Count";
    case QPACK_E_BASE: return "field section Base below 0";
    case QPACK_E_BLOCKED_STREAMS:
        return "more blocked streams than SETTINGS_QPACK_BLOCKED_STREAMS";
    case QPACK_E_ENC_INTEGER: return "encoder stream integer above 62 bits or longer than ten octets";
    case QPACK_E_ENC_CAPACITY:
        return "dynamic table capacity above SETTINGS_QPACK_MAX_TABLE_CAPACITY";
    case QPACK_E_ENC_STATIC_INDEX: return "encoder stream static index past the table";
    case QPACK_E_ENC_DYNAMIC_INDEX:
        return "encoder stream references an evicted or nonexistent entry";
    case QPACK_E_ENC_ENTRY_SIZE: return "inserted entry larger than the table capacity";
    case QPACK_E_ENC_HUFFMAN_EOS: return "EOS symbol inside an encoder stream Huffman string";
    case QPACK_E_ENC_HUFFMAN_PADDING:
        return "encoder stream Huffman padding longer than 7 bits or not all ones";
    case QPACK_E_DEC_INTEGER: return "decoder stream integer above 62 bits or longer than ten octets";
    case QPACK_E_DEC_ACK:
        return "Section Acknowledgment for a stream with no unacknowledged section";
    case QPACK_E_DEC_INCREMENT:
        return "Insert Count Increment of 0 or beyond the inserts sent";
    case QPACK_E_FIELD_TOO_LARGE: return "field exceeds the size limit";
    case QPACK_E_SECTION_TOO_LARGE: return "field section exceeds the size limit";
    case QPACK_E_STRING_TOO_LARGE: return "string literal longer than the limit as sent";
    case HPACK_E_NOMEM:
    case HPACK_E_BUFFER:
    case HPACK_E_ARGUMENT:
    case HPACK_E_STATE:
        return hpack_strerror(rc);
    default: return "unknown error";
    }
}
