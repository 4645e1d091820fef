// Huffman encode of one header value with the codec's tables out of the
// core's caches: what a string costs when the worker did other things
// since its last one.  Before each timed call the program writes a buffer
// larger than L2 (the tables then come from L3), or nothing (warm).
//
//   huffman_evicted [evict KiB] [trials]
//
// Prints, per string and eviction size, the median and quartiles of the
// time of hpack_huffman_encoded_len() + hpack_huffman_encode(), the calls
// the encoder makes for a literal.  x86-64 only (rdtscp).  Compare two
// builds of the library by building this against each (bench/README.md,
// "make bench-huffman-evicted"); the decision it bears on is in
// docs/DESIGN.md ("Huffman encode": "Codes looked up an octet at a time").

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <x86intrin.h>

#include "hpack.h"

namespace {

uint64_t ticks() {
    unsigned aux;
    return __rdtscp(&aux);
}

// Time-stamp counter ticks per nanosecond, over 50 ms.
double ticks_per_ns() {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = ticks();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
    }
    const uint64_t c1 = ticks();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(c1 - c0) / static_cast<double>(ns);
}

}  // namespace

int main(int argc, char** argv) {
    const size_t evict_kib = argc > 1 ? strtoul(argv[1], nullptr, 10) : 2048;
    const int trials = argc > 2 ? atoi(argv[2]) : 3000;
    const std::string csp =
        "default-src 'self'; script-src 'self' https://cdn.example.com; "
        "style-src 'self' 'unsafe-inline'; img-src * data:; "
        "frame-ancestors 'none'; upgrade-insecure";
    const std::string strings[] = {
        "Mon, 30 Nov 2026 15:20:00 GMT",  // date, last-modified
        csp,                              // content-security-policy
        csp + csp + csp + csp,
    };
    const double per_ns = ticks_per_ns();
    std::vector<uint8_t> big(evict_kib * 1024 + 64);
    std::vector<uint8_t> out(8192);
    std::vector<uint64_t> t(static_cast<size_t>(trials));
    size_t sink = 0;
    for (const std::string& s : strings) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
        for (int k = 0; k < trials; ++k) {
            for (size_t i = 0; i < evict_kib * 1024; i += 64)
                big[i] = static_cast<uint8_t>(k);
            _mm_mfence();
            const uint64_t t0 = ticks();
            if (hpack_huffman_encoded_len(p, s.size()) < s.size())
                sink += hpack_huffman_encode(p, s.size(), out.data());
            t[static_cast<size_t>(k)] = ticks() - t0;
        }
        std::sort(t.begin(), t.end());
        auto ns = [&](size_t i) { return static_cast<double>(t[i]) / per_ns; };
        printf("%4zu octets, evicted %5zu KiB: median %6.0f ns (quartiles %.0f-%.0f)\n",
               s.size(), evict_kib, ns(t.size() / 2), ns(t.size() / 4),
               ns(3 * t.size() / 4));
    }
    return sink == 0;
}
