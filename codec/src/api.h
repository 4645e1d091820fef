// Internal helpers shared by every translation unit of the codec: symbol
// visibility for the C ABI, and the allocator every byte of state comes from.

#ifndef HPACK_API_H
#define HPACK_API_H

#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include <new>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hpack.h"

// The library is built with -fvisibility=hidden: only the C ABI is exported.
#define HPACK_API extern "C" __attribute__((visibility("default")))

#define HPACK_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HPACK_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace hpack {

// A copy of the caller's hpack_allocator_t (or malloc/free when none is
// given).  Every allocation of an object goes through it.
class Allocator {
public:
    explicit Allocator(const hpack_allocator_t* a);

    void* alloc(size_t size) const { return alloc_(ctx_, size); }
    void free(void* p) const { if (p) free_(ctx_, p); }

    // Allocates and constructs a T; nullptr on failure.
    template <class T, class... Args>
    T* make(Args&&... args) const {
        void* p = alloc(sizeof(T));
        return p ? new (p) T(static_cast<Args&&>(args)...) : nullptr;
    }

    // Allocates a T with tail more octets behind it (at tail_of(p), 16-octet
    // aligned) in the same block; nullptr on failure.  destroy() frees both.
    template <class T, class... Args>
    T* make_with_tail(size_t tail, Args&&... args) const {
        void* p = alloc(tail_offset<T>() + tail);
        return p ? new (p) T(static_cast<Args&&>(args)...) : nullptr;
    }
    template <class T>
    static uint8_t* tail_of(T* p) { return reinterpret_cast<uint8_t*>(p) + tail_offset<T>(); }
    template <class T>
    static constexpr size_t tail_offset() { return (sizeof(T) + 15) & ~size_t{15}; }

    template <class T>
    void destroy(T* p) const {
        if (p) {
            Allocator copy = *this;  // p may own the allocator it was made by
            p->~T();
            copy.free(p);
        }
    }

private:
    void* (*alloc_)(void*, size_t);
    void  (*free_)(void*, void*);
    void* ctx_;
};

// Zeroes n octets (a multiple of 8) at p with plain stores.  GCC compiles
// a memset of a constant size, or a loop of stores, into rep stos, which
// runs from microcode and holds up the instructions after it: a new
// encoder cleared its counters that way, and creating one and encoding a
// request took 516 ns instead of 507.  The empty asm hides the loop from
// that rewrite.
inline void zero_words(void* p, size_t n) {
    uint8_t* q = static_cast<uint8_t*>(p);
    uint8_t* const end = q + n;
#ifdef __SSE2__
    for (; end - q >= 16; q += 16) {
        asm("" : "+r"(q));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm_setzero_si128());
    }
#endif
    for (; q < end; q += 8) {
        asm("" : "+r"(q));
        memset(q, 0, 8);
    }
}

// The first and the last sizeof(T) octets of n, sizeof(T) <= n <=
// 2 sizeof(T): all n, by two loads and two stores.
template <class T>
inline void copy_ends(uint8_t* d, const uint8_t* s, size_t n) {
    T a, b;
    memcpy(&a, s, sizeof a);
    memcpy(&b, s + n - sizeof b, sizeof b);
    memcpy(d, &a, sizeof a);
    memcpy(d + n - sizeof b, &b, sizeof b);
}

// Copies n octets from s to d (which do not overlap) inline: 16 at a time
// and the last 16 again, or two overlapping words below that, never
// touching an octet outside either span.  A table insertion copies a name
// and a value of any length; through memcpy, the library call, cold
// request decode took 0.311-0.336 of nghttp2's time over six code layouts
// on a first-generation EPYC, inline 0.304-0.310 (cold request encode
// 0.301-0.315 -> 0.291-0.310).
inline void copy_octets(uint8_t* d, const uint8_t* s, size_t n) {
    if (n >= 16) {
#ifdef __SSE2__
        for (size_t i = 0; i + 16 < n; i += 16)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + n - 16),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + n - 16)));
#else
        memcpy(d, s, n);
#endif
    } else if (n >= 8) {
        copy_ends<uint64_t>(d, s, n);
    } else if (n >= 4) {
        copy_ends<uint32_t>(d, s, n);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

}  // namespace hpack

#endif
