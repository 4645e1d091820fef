// The parts of the C ABI shared by every object: the default allocator and
// the error vocabulary.

#include <stdlib.h>

#include "common.h"

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
    case HPACK_E_INTEGER: return "integer overflows 32 bits or is overlong";
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
