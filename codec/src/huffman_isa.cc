// The choice between the generic and the BMI2 build of the Huffman code.

#include "huffman_internal.h"

#if HPACK_HUFFMAN_BMI2
#include <cpuid.h>
#endif

namespace hpack {

#if HPACK_HUFFMAN_BMI2
namespace {

// The build named for BMI2 also writes code with MOVBE (a byte-swapping
// store), so the CPU must have both.
bool cpu_has_bmi2() {
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_BMI2) != 0 &&
           __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_MOVBE) != 0;
}

}  // namespace

bool g_huffman_bmi2 = cpu_has_bmi2();
#endif

bool huffman_has_isa(HuffmanIsa isa) {
#if HPACK_HUFFMAN_BMI2
    return isa == HuffmanIsa::generic || cpu_has_bmi2();
#else
    return isa == HuffmanIsa::generic;
#endif
}

HuffmanIsa huffman_isa() { return g_huffman_bmi2 ? HuffmanIsa::bmi2 : HuffmanIsa::generic; }

bool huffman_set_isa(HuffmanIsa isa) {
    if (!huffman_has_isa(isa)) return false;
#if HPACK_HUFFMAN_BMI2
    g_huffman_bmi2 = isa == HuffmanIsa::bmi2;
#endif
    return true;
}

}  // namespace hpack
