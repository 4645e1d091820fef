// What the encoder's tests read of it: the room hpack_encode() checks
// out_cap against.

#ifndef HPACK_ENCODER_H
#define HPACK_ENCODER_H

#include <stddef.h>

#include "hpack.h"

namespace hpack {

// The bound hpack_encode() refuses a block below (HPACK_E_BUFFER): two
// size updates and the overrun of whole-word Huffman stores, then per
// field a representation octet with its index, the name and value with
// their length prefixes, or the pre-encoded value when it is longer.  At
// most HPACK_ENCODE_BOUND() of the same headers.
size_t encode_bound(const hpack_header_t* headers, size_t n);

}  // namespace hpack

#endif
