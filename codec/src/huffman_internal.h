// What the Huffman encoder (huffman_encode.cc) and decoder
// (huffman_decode.cc) share: the code tables generated from RFC 7541
// Appendix B; and the instruction set they run in.

#ifndef HPACK_HUFFMAN_INTERNAL_H
#define HPACK_HUFFMAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "huffman.h"
#include "memory.h"

// With BMI2 (shlx/shrx) every variable shift takes its count from any
// register; without it x86 takes counts only in cl, which costs moves and
// a register in every loop.  The encoder's and the decoder's bodies are
// compiled twice, once for BMI2 (which also stores with MOVBE instead of a
// byte swap and a store), chosen when the library is loaded
// (huffman_isa.cc).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HPACK_HUFFMAN_BMI2 1
#define HPACK_TARGET_BMI2 __attribute__((target("bmi2,movbe")))
#else
#define HPACK_HUFFMAN_BMI2 0
#endif

namespace hpack {
namespace {

#include "huffman_tables.inc"

}  // namespace

// Whether the BMI2 build runs: set once when the library is loaded (false
// before that), and by huffman_set_isa().
#if HPACK_HUFFMAN_BMI2
extern HPACK_HIDDEN bool g_huffman_bmi2;
#else
constexpr bool g_huffman_bmi2 = false;
#endif

}  // namespace hpack

#endif
