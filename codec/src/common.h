// What every translation unit of the codec shares: its compiler attributes
// (symbol visibility for the C ABI, branch hints, inlining decisions) and the
// allocator every byte of state comes from.

#ifndef HPACK_COMMON_H
#define HPACK_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <new>

#include "hpack.h"

// The library is built with -fvisibility=hidden: only the C ABI is exported.
#define HPACK_API extern "C" __attribute__((visibility("default")))

#define HPACK_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HPACK_UNLIKELY(x) __builtin_expect(!!(x), 0)

// Inlining is decided, not left to the compiler's estimate: a hot path's
// helpers are always inlined into it (HPACK_INLINE; HPACK_ALWAYS_INLINE
// where `inline` cannot be written, on a lambda), and what it reaches
// rarely stays out of line (HPACK_NOINLINE), so that the hot path keeps its
// registers and its frame.
#define HPACK_ALWAYS_INLINE __attribute__((always_inline))
#define HPACK_INLINE        inline HPACK_ALWAYS_INLINE
#define HPACK_NOINLINE      __attribute__((noinline))

// A symbol that crosses the codec's files and no further: -fvisibility=hidden
// covers definitions only, and a declaration marked hidden is referred to
// directly, as a symbol of the same file is, not through the GOT or PLT.
#define HPACK_HIDDEN        __attribute__((visibility("hidden")))

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

}  // namespace hpack

#endif
