// Shared by the fuzz targets: failing loudly, exact-size copies for ASan,
// the control-stream reader, the decoder script format, and writing seed
// corpora from the hpack-test-case stories.

#ifndef HPACK_FUZZ_COMMON_H
#define HPACK_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "hex.h"
#include "hpack.h"
#include "story.h"

namespace hpack_fuzz {

// A broken invariant: says which, and aborts so libFuzzer keeps the input.
[[noreturn]] inline void fail(const char* file, int line, const char* what,
                              const std::string& detail) {
    fprintf(stderr, "\n%s:%d: invariant broken: %s\n", file, line, what);
    if (!detail.empty()) fprintf(stderr, "  %s\n", detail.c_str());
    abort();
}

#define FUZZ_CHECK(cond, detail)                                      \
    do {                                                              \
        if (!(cond)) ::hpack_fuzz::fail(__FILE__, __LINE__, #cond, (detail)); \
    } while (0)

inline std::string hex(const uint8_t* p, size_t n) { return hpack_tools::hex::encode(p, n); }
inline std::string hex(const std::vector<uint8_t>& v) { return hpack_tools::hex::encode(v); }
inline std::vector<uint8_t> unhex(const char* s) {
    std::vector<uint8_t> out;
    if (!hpack_tools::hex::decode(s, &out)) out.clear();
    return out;
}
inline std::string str(const uint8_t* p, size_t n) {
    return std::string(reinterpret_cast<const char*>(p), n);
}

// A heap copy of exactly n octets: ASan reports any read past its end, and
// a use after it is released.
struct Exact {
    std::unique_ptr<uint8_t[]> p;
    size_t n;
    Exact(const uint8_t* src, size_t len) : p(new uint8_t[len]), n(len) {
        if (len) memcpy(p.get(), src, len);
    }
    const uint8_t* begin() const { return p.get(); }
    const uint8_t* end() const { return p.get() + n; }
};

// An allocator that counts live blocks (a leak check for the targets) and
// fails one allocation when armed: countdown allocations succeed, the next
// returns NULL (decoder_fuzz's kOpFailAlloc, qpack_decoder_fuzz's).
struct FaultyAllocator {
    size_t live = 0;
    long countdown = -1;   // allocations until the one that fails
    bool failed = false;
    hpack_allocator_t a{alloc, release, this};

    static void* alloc(void* ctx, size_t n) {
        auto* self = static_cast<FaultyAllocator*>(ctx);
        if (self->countdown >= 0 && self->countdown-- == 0) {
            self->failed = true;
            return nullptr;
        }
        void* p = malloc(n);
        if (p) ++self->live;
        return p;
    }
    static void release(void* ctx, void* p) {
        --static_cast<FaultyAllocator*>(ctx)->live;
        free(p);
    }
};

// Control bytes, read front to back; zeros once exhausted, so a short
// control stream means "defaults from here on".
class Control {
public:
    Control(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    bool empty() const { return i_ >= n_; }
    uint8_t u8() { return i_ < n_ ? p_[i_++] : 0; }
    uint16_t u16() {
        const uint16_t hi = u8();
        return static_cast<uint16_t>(hi << 8 | u8());
    }
    // n octets (fewer at the end).
    std::string bytes(size_t n) {
        const size_t at = i_ < n_ ? i_ : n_;
        if (n > n_ - at) n = n_ - at;
        i_ = at + n;
        return std::string(reinterpret_cast<const char*>(p_ + at), n);
    }

private:
    const uint8_t* p_;
    size_t n_;
    size_t i_ = 0;
};

// An HPACK integer (RFC 7541 5.1) as libnghttp2 1.52 reads it: at most
// five continuation octets, the value within 32 bits; ok is false past
// that or when the input ends first.  overlong: longer than four octets
// (which our decoder rejects, as nginx does).
struct Integer {
    uint32_t value;
    size_t len;
    bool ok, overlong;
};

inline Integer read_integer(const uint8_t* p, size_t n, int prefix) {
    const uint32_t max = (1u << prefix) - 1;
    Integer r{static_cast<uint32_t>(p[0] & max), 1, true, false};
    if (r.value < max) return r;
    uint64_t acc = max;
    for (size_t i = 1;; ++i) {
        if (i > 5 || i >= n) return {0, 0, false, false};
        acc += uint64_t{p[i] & 0x7fu} << (7 * (i - 1));
        if (acc > UINT32_MAX) return {0, 0, false, false};
        if (!(p[i] & 0x80)) return {static_cast<uint32_t>(acc), i + 1, true, i + 1 > 4};
    }
}

// Appends v as a prefixed integer (RFC 7541 5.1, RFC 9204 4.1.1) in its
// shortest form, `high` above its prefix bits.
inline void put_integer(std::vector<uint8_t>* out, uint8_t high, int prefix, uint64_t v) {
    const uint64_t max = (1u << prefix) - 1;
    if (v < max) {
        out->push_back(static_cast<uint8_t>(high | v));
        return;
    }
    out->push_back(static_cast<uint8_t>(high | max));
    v -= max;
    while (v >= 0x80) {
        out->push_back(static_cast<uint8_t>(0x80 | (v & 0x7f)));
        v >>= 7;
    }
    out->push_back(static_cast<uint8_t>(v));
}

// A table size from two control octets: 0..32767 exactly, or steps of 32
// up to just under HPACK_MAX_TABLE_SIZE.
inline size_t table_size_of(uint16_t v) {
    return v & 0x8000 ? size_t{v & 0x7fffu} << 5 : v;
}

// A limit from one control octet: 0 (unbounded), else 1..31 << 0..14.
inline size_t limit_of(uint8_t b) {
    return b == 0 ? 0 : size_t{b & 31u} << ((b >> 5) * 2);
}


// ------------------------------------------------------ decoder scripts
//
// The input of decoder_fuzz and nghttp2_diff_fuzz:
//
//   C (u16, big-endian)  control[C]  wire...
//
// The control stream is a list of operations, each an opcode octet (low
// three bits) and its arguments; the blocks are cut from the wire in order.
// When the control stream is exhausted the rest of the wire is one last
// block.

enum Op : uint8_t {
    kOpBlock      = 0,  // u16 length: the next block
    kOpBlockShort = 1,  // u8 length: the next block
    kOpSettings   = 2,  // u16: SETTINGS_HEADER_TABLE_SIZE (table_size_of);
                        // opcode bit 7: HPACK_MAX_TABLE_SIZE + the u16
                        // instead (only 0 is valid)
    kOpLimits     = 3,  // u8 x3: max_field, max_list, string limit (limit_of)
    kOpPieces     = 4,  // u8 n: n % 8 + 1 piece lengths follow (0 = an empty
                        // piece), used in turn; opcode bit 7: each block
                        // ends with an empty last piece; bits 3-6: fields
                        // per hpack_decode_fields call (0: 1)
    kOpFailAlloc  = 5,  // u8 k: the piece decoder's allocator fails once, after
                        // k more allocations succeed (decoder_fuzz)
    kOpCanonical  = 6,  // opcode bit 7: later blocks have their overlong
                        // integers rewritten canonically (nghttp2_diff_fuzz)
    kOpNop        = 7,
};

struct Script {
    Control control;
    const uint8_t* wire;
    size_t wire_len;
    size_t wire_pos = 0;

    Script(const uint8_t* data, size_t size) : control(nullptr, 0), wire(data), wire_len(0) {
        size_t c = size >= 2 ? (size_t{data[0]} << 8 | data[1]) : 0;
        const size_t head = size >= 2 ? 2 : size;
        if (c > size - head) c = size - head;
        control = Control(data + head, c);
        wire = data + head + c;
        wire_len = size - head - c;
    }

    // The next n octets of the wire (fewer at its end).
    std::vector<uint8_t> take(size_t n) {
        if (n > wire_len - wire_pos) n = wire_len - wire_pos;
        std::vector<uint8_t> b(wire + wire_pos, wire + wire_pos + n);
        wire_pos += n;
        return b;
    }
    bool wire_left() const { return wire_pos < wire_len; }

    // The next step: true with *block set to the next header block
    // (kOpBlock, kOpBlockShort, or the rest of the wire once the control
    // stream is spent), true with *op set to any other opcode for the
    // target to act on (*block empty), false at the end of the script.
    bool next(std::vector<uint8_t>* block, uint8_t* op) {
        block->clear();
        *op = kOpBlock;
        if (control.empty()) {
            if (!wire_left()) return false;
            *block = take(SIZE_MAX);
            return true;
        }
        *op = control.u8();
        switch (*op & 7) {
        case kOpBlock:
            *block = take(control.u16());
            *op = kOpBlock;
            break;
        case kOpBlockShort:
            *block = take(control.u8());
            *op = kOpBlock;
            break;
        }
        return true;
    }

    // The operand of a kOpSettings: the table size it asks for.
    size_t settings_size(uint8_t op) {
        const uint16_t v = control.u16();
        return op & 0x80 ? HPACK_MAX_TABLE_SIZE + size_t{v} : table_size_of(v);
    }
};

// Builds a script: the control operations and the wire, in that order.
struct ScriptWriter {
    std::vector<uint8_t> control, wire;

    void block(const std::vector<uint8_t>& b) {
        control.push_back(kOpBlock);
        control.push_back(static_cast<uint8_t>(b.size() >> 8));
        control.push_back(static_cast<uint8_t>(b.size()));
        wire.insert(wire.end(), b.begin(), b.end());
    }
    // Exact only for sizes table_size_of() can express; others round down.
    void settings(size_t size) {
        uint16_t v = size < 0x8000 ? static_cast<uint16_t>(size)
                                   : static_cast<uint16_t>(0x8000 | ((size >> 5) & 0x7fff));
        control.push_back(kOpSettings);
        control.push_back(static_cast<uint8_t>(v >> 8));
        control.push_back(static_cast<uint8_t>(v));
    }
    size_t size() const { return 2 + control.size() + wire.size(); }
    std::vector<uint8_t> bytes() const {
        std::vector<uint8_t> out;
        out.push_back(static_cast<uint8_t>(control.size() >> 8));
        out.push_back(static_cast<uint8_t>(control.size()));
        out.insert(out.end(), control.begin(), control.end());
        out.insert(out.end(), wire.begin(), wire.end());
        return out;
    }
};


// ------------------------------------------------------------- seeds
//
// Every target has a seed mode, run by `make fuzz-seeds`:
//
//   build/fuzz/<target> --write-seeds=DIR
//
// writes its seed corpus (built from the hpack-test-case stories, read in
// place) into DIR and exits.  libFuzzer ignores flags that start with "--".

inline bool write_seed(const std::string& dir, size_t n, const std::vector<uint8_t>& bytes) {
    char name[32];
    snprintf(name, sizeof name, "seed-%06zu", n);
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

// The stories of every directory of the corpus with "wire" (the encoders'
// output), or of raw-data only.  Empty (with a note on stderr) when the
// corpus is absent.
inline std::vector<hpack_tools::story::Story> load_stories(bool raw_data) {
    namespace story = hpack_tools::story;
    std::vector<story::Story> out;
    std::string tried;
    const std::string dir = story::corpus_dir(&tried);
    if (dir.empty()) {
        fprintf(stderr, "seeds: no hpack-test-case corpus at %s (set HPACK_TEST_CASE_DIR); "
                        "writing the built-in seeds only\n", tried.c_str());
        return out;
    }
    for (const std::string& sub : story::subdirectories(dir)) {
        if ((sub == "raw-data") != raw_data) continue;
        for (const std::string& f : story::story_files(dir + "/" + sub)) {
            story::Story s;
            std::string err;
            if (!story::load(f, &s, &err)) {
                fprintf(stderr, "seeds: skipping %s\n", err.c_str());
                continue;
            }
            out.push_back(std::move(s));
        }
    }
    return out;
}

// Handles --write-seeds=DIR: calls write(dir), which returns the number of
// seeds written, and exits.  Returns when the flag is absent.
template <class Writer>
void seed_mode(int argc, char** argv, Writer write) {
    static const char kFlag[] = "--write-seeds=";
    for (int i = 1; i < argc; ++i) {
        if (strncmp(argv[i], kFlag, sizeof kFlag - 1) != 0) continue;
        const std::string dir = argv[i] + sizeof kFlag - 1;
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) {
            fprintf(stderr, "seeds: cannot create %s\n", dir.c_str());
            exit(1);
        }
        const size_t n = write(dir);
        fprintf(stderr, "seeds: %zu written to %s\n", n, dir.c_str());
        exit(n ? 0 : 1);
    }
}

// The script seeds of decoder_fuzz and nghttp2_diff_fuzz: each story as
// one connection, cut after the case that reaches max_bytes.
inline size_t write_script_seeds(const std::string& dir, size_t max_bytes) {
    size_t n = 0;
    for (const auto& s : load_stories(false)) {
        ScriptWriter w;
        for (const auto& c : s.cases) {
            if (!c.has_wire) continue;
            if (c.has_table_size) w.settings(c.table_size);
            w.block(c.wire);
            if (w.size() >= max_bytes) break;
        }
        if (w.wire.empty()) continue;
        if (!write_seed(dir, n, w.bytes())) return 0;
        ++n;
    }
    // Built in: RFC 7541 C.3.1 and C.4.1, and a table-size dance.
    ScriptWriter w;
    w.block(unhex("828684410f7777772e6578616d706c652e636f6d"));
    w.block(unhex("828684418cf1e3c2e5f23a6ba0ab90f4ff"));
    w.settings(0);
    w.settings(100);
    w.block(unhex("203f45"));
    if (!write_seed(dir, n, w.bytes())) return 0;
    return n + 1;
}

// The encoders' input for a list of fields (name, value, flags, and
// literal: the value goes pre-encoded as value_literal, whose octets
// *literals keeps); *octets gets the sum of name_len + value_len +
// value_literal_len, the bounds' measure.
template <class Field>
std::vector<hpack_header_t> headers_of(const std::vector<Field>& list,
                                       std::vector<std::string>* literals, size_t* octets) {
    literals->assign(list.size(), std::string());
    std::vector<hpack_header_t> hs(list.size());
    *octets = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        const Field& f = list[i];
        hpack_header_t& h = hs[i];
        h = hpack_header_t{};
        h.name = reinterpret_cast<const uint8_t*>(f.name.data());
        h.name_len = f.name.size();
        h.value = reinterpret_cast<const uint8_t*>(f.value.data());
        h.value_len = f.value.size();
        h.flags = f.flags;
        if (f.literal) {
            const size_t n = hpack_string_encoded_len(h.value, h.value_len);
            (*literals)[i].resize(n);
            uint8_t* dst = reinterpret_cast<uint8_t*>(&(*literals)[i][0]);
            FUZZ_CHECK(hpack_string_encode(h.value, h.value_len, dst) == n,
                       "hpack_string_encode != hpack_string_encoded_len");
            h.value_literal = dst;
            h.value_literal_len = n;
        }
        *octets += h.name_len + h.value_len + h.value_literal_len;
    }
    return hs;
}

}  // namespace hpack_fuzz

#endif
