// A byte buffer that grows to the largest size it is asked for and then
// stays: the decoder's scratch and partial-representation buffers.  Growth
// happens while a connection warms up; steady state allocates nothing.

#ifndef HPACK_BUFFER_H
#define HPACK_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

namespace hpack {

class Buffer {
public:
    explicit Buffer(const Allocator& a) : alloc_(a) {}
    ~Buffer() {
        if (owned_) alloc_.free(data_);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    uint8_t* data() { return data_; }
    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    size_t capacity() const { return cap_; }

    // Starts the buffer empty on cap octets at p that its owner allocated
    // with it (and frees with it); growing leaves them for storage of its
    // own.
    void lend(uint8_t* p, size_t cap) {
        if (owned_) alloc_.free(data_);
        data_ = p;
        size_ = 0;
        cap_ = cap;
        owned_ = false;
    }

    // Ensures capacity >= n.  keep: the first size() octets survive.
    bool reserve(size_t n, bool keep) { return reserve_keeping(n, keep ? size_ : 0); }

    // Ensures capacity >= n; the first `kept` octets survive.
    bool reserve_keeping(size_t n, size_t kept) {
        if (n <= cap_) return true;
        size_t cap = cap_ ? cap_ : 256;
        while (cap < n) cap *= 2;
        uint8_t* p = static_cast<uint8_t*>(alloc_.alloc(cap));
        if (!p) return false;
        if (kept) memcpy(p, data_, kept);
        if (owned_) alloc_.free(data_);
        data_ = p;
        cap_ = cap;
        owned_ = true;
        return true;
    }

    bool append(const uint8_t* p, size_t n) {
        if (n == 0) return true;
        if (!reserve(size_ + n, true)) return false;
        memcpy(data_ + size_, p, n);
        size_ += n;
        return true;
    }

    // Drops the first n octets.
    void consume(size_t n) {
        memmove(data_, data_ + n, size_ - n);
        size_ -= n;
    }

    // Keeps the first n octets (n <= size()).
    void truncate(size_t n) { size_ = n; }

    void clear() { size_ = 0; }

private:
    Allocator alloc_;
    uint8_t*  data_ = nullptr;
    size_t    size_ = 0;
    size_t    cap_ = 0;
    bool      owned_ = true;  // data_ came from alloc_ (or is null)
};

}  // namespace hpack

#endif
