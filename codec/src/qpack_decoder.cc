// The QPACK decoder (RFC 9204): the peer's encoder stream in any split,
// field sections decoded whole, blocked streams, and the decoder stream
// owed to the peer.
//
// It shares HPACK's pieces rather than copying them: the table
// (DecoderTable, with the caller's memo per entry), the integers, the
// Huffman decoder and the scratch buffer.  A section is one HEADERS frame's
// payload, whose length is known before it arrives and which a blocked
// stream has to keep whole anyway, so a section is parsed in place, with no
// buffer for a representation split across reads; only the encoder stream,
// which never ends, is read in pieces (docs/DESIGN.md, "QPACK decoder").

#include <string.h>

#include "qpack.h"

#include "common.h"
#include "buffer.h"
#include "dynamic_table.h"
#include "huffman.h"
#include "integer.h"
#include "qpack_static_table.h"

namespace hpack {
namespace {

// Internal parse results besides QPACK_OK and the errors.
constexpr int kIncomplete = 1;   // the encoder stream ends inside an instruction
constexpr int kBatchFull = 2;    // the field's Huffman output would move the
                                 // scratch that earlier fields point into

// The scratch a decoder comes with (in its own allocation), and the least
// it grows to, as the HPACK decoder's.
constexpr size_t kScratch = 1024;
// The decoder stream's queue and the blocked streams' list come with it
// too: a connection's first sections and a few blocked streams allocate
// nothing (64 octets: seven acknowledgments of 2-octet stream ids between
// drains, four blocked streams).
constexpr size_t kOutFirst = 64;
constexpr size_t kBlockedFirst = 64;

// Where a string literal lies in the input, before decoding.
struct QString {
    const uint8_t* data;
    uint64_t       len;      // coded length
    bool           huffman;

    // The fewest octets it can decode to (the longest code is 30 bits;
    // len * 8 / 30 without the product, which a 62-bit length overflows),
    // and the room its decoding needs.
    uint64_t min_decoded() const { return huffman ? len / 30 * 8 + len % 30 * 8 / 30 : len; }
    size_t max_decoded() const { return huffman ? huffman_decode_capacity(len) : 0; }
};

// Reads a string literal's header at p: the H bit just above an N-bit
// length prefix (RFC 9204 4.1.2).  Octets read, kIntegerIncomplete or
// HPACK_E_INTEGER; the string's body may be incomplete (the caller checks).
inline int read_string(const uint8_t* p, const uint8_t* end, int prefix, QString* s) {
    uint64_t len;
    const int r = decode_integer62(p, end, prefix, &len);
    if (r <= 0) return r;
    s->data = p + r;
    s->len = len;
    s->huffman = (p[0] & (1u << prefix)) != 0;
    return r;
}

// Decodes s into dst (Huffman) or points at it (raw).
inline int materialize(const QString& s, uint8_t* dst, const uint8_t** out, size_t* out_len) {
    if (!s.huffman) {
        *out = s.data;
        *out_len = static_cast<size_t>(s.len);
        return HPACK_OK;
    }
    const ptrdiff_t n = huffman_decode(s.data, static_cast<size_t>(s.len), dst);
    if (n < 0) return static_cast<int>(n);
    *out = dst;
    *out_len = static_cast<size_t>(n);
    return HPACK_OK;
}

// The Huffman and integer errors of the shared code, as the stream they
// were found on names them.
inline int section_error(int rc) {
    switch (rc) {
    case HPACK_E_INTEGER: return QPACK_E_INTEGER;
    case HPACK_E_HUFFMAN_EOS: return QPACK_E_HUFFMAN_EOS;
    case HPACK_E_HUFFMAN_PADDING: return QPACK_E_HUFFMAN_PADDING;
    default: return rc;
    }
}

inline int encoder_stream_error(int rc) {
    switch (rc) {
    case HPACK_E_INTEGER: return QPACK_E_ENC_INTEGER;
    case HPACK_E_HUFFMAN_EOS: return QPACK_E_ENC_HUFFMAN_EOS;
    case HPACK_E_HUFFMAN_PADDING: return QPACK_E_ENC_HUFFMAN_PADDING;
    default: return rc;
    }
}

inline bool is_limit_error(int rc) {
    return rc <= QPACK_E_FIELD_TOO_LARGE && rc >= QPACK_E_STRING_TOO_LARGE;
}

// A stream waiting for inserts: its section's Required Insert Count.
struct BlockedStream {
    uint64_t stream_id;
    uint64_t ric;
};

// Set in ric once qpack_decoder_unblocked() named the stream: it no longer
// counts as blocked, and keeps until its section is begun again the
// Required Insert Count reconstructed when the section arrived (RFC 9204
// 4.5.1.1; the count reconstructed later could wrap past it).  A
// reconstructed count stays below 2^63.
constexpr uint64_t kNamed = uint64_t{1} << 63;

}  // namespace
}  // namespace hpack

using namespace hpack;

struct qpack_decoder {
    explicit qpack_decoder(const Allocator& a)
        : alloc(a), table(a), pending(a), scratch(a), out(a), blocked(a) {}

    Allocator    alloc;
    DecoderTable table;
    Buffer       pending;        // a partial encoder-stream instruction
    Buffer       scratch;        // Huffman output, copied names
    size_t       scratch_used = 0;
    Buffer       out;            // decoder-stream octets not yet drained
    Buffer       blocked;        // BlockedStream[], in the order they blocked

    size_t   max_capacity = 0;   // our SETTINGS_QPACK_MAX_TABLE_CAPACITY
    size_t   max_blocked = 0;    // our SETTINGS_QPACK_BLOCKED_STREAMS
    uint64_t known_received = 0; // the Known Received Count our output gives
    size_t   max_field = SIZE_MAX;
    size_t   max_section = SIZE_MAX;
    size_t   max_string = SIZE_MAX;
    int      error = 0;          // sticky

    // The section in progress.
    bool           in_section = false;
    uint64_t       stream_id = 0;
    const uint8_t* pos = nullptr;
    const uint8_t* end = nullptr;
    uint64_t       ric = 0;      // its Required Insert Count
    uint64_t       base = 0;
    size_t         section_room = SIZE_MAX;
    size_t         field_limit = SIZE_MAX;   // max_field as the section began

    int fail(int rc) {
        error = rc;
        in_section = false;
        return rc;
    }

    // Blocked and named streams; the blocked ones.
    size_t n_listed() const { return blocked.size() / sizeof(BlockedStream); }
    const BlockedStream* blocked_at(size_t i) const {
        return reinterpret_cast<const BlockedStream*>(blocked.data()) + i;
    }
    BlockedStream* blocked_at(size_t i) {
        return reinterpret_cast<BlockedStream*>(blocked.data()) + i;
    }
    size_t n_blocked() const {
        size_t n = 0;
        for (size_t i = 0; i < n_listed(); ++i) n += !(blocked_at(i)->ric & kNamed);
        return n;
    }
    void unblock(size_t i) {
        BlockedStream* b = blocked_at(0);
        memmove(b + i, b + i + 1, (n_listed() - i - 1) * sizeof(BlockedStream));
        blocked.truncate(blocked.size() - sizeof(BlockedStream));
    }
    size_t find_blocked(uint64_t id) {
        for (size_t i = 0; i < n_listed(); ++i)
            if (blocked_at(i)->stream_id == id) return i;
        return SIZE_MAX;
    }

    // Queues a decoder instruction: a 62-bit integer behind its pattern.
    bool emit(uint8_t pattern, int prefix, uint64_t v) {
        uint8_t b[kInteger62MaxBytes];
        return out.append(b, encode_integer62(b, pattern, prefix, v));
    }

    // Ends the section in progress unfinished: abandoned with its
    // references, a Stream Cancellation is owed when it had any (RFC 9204
    // 2.2.2.2).  False when the instruction could not be queued.
    bool abandon_section() {
        in_section = false;
        return ric == 0 || emit(0x40, 6, stream_id);
    }

    int read_instruction(const uint8_t* p, const uint8_t* e, size_t* used);
    int insert(const uint8_t* name, size_t name_len, const uint8_t* value, size_t value_len);
    int decode_prefix(const uint8_t* p, const uint8_t* e, uint64_t known, size_t* used);
    int read_field(const uint8_t* p, const uint8_t* e, hpack_field_t* f, bool first,
                   size_t* used);
    int dynamic_entry(uint64_t id, DecoderTable::Entry** entry);
    int reference(bool is_static, bool post_base, uint64_t index, hpack_field_t* f,
                  DecoderTable::Entry** entry);
    int check_limits(size_t name_len, size_t value_len) const {
        const size_t n = name_len + value_len;
        if (n > field_limit) return QPACK_E_FIELD_TOO_LARGE;
        if (n + HPACK_ENTRY_OVERHEAD > section_room) return QPACK_E_SECTION_TOO_LARGE;
        return HPACK_OK;
    }
};

// ------------------------------------------------------- encoder stream

// Inserts an entry (RFC 9204 3.2.2): an entry larger than the capacity is
// the encoder's error, not an emptied table as in HPACK.  name and value
// must not point into the table (its arena may move).
int qpack_decoder::insert(const uint8_t* name, size_t name_len, const uint8_t* value,
                          size_t value_len) {
    const size_t bytes = name_len + value_len;
    if (bytes + HPACK_ENTRY_OVERHEAD > table.max_size()) return QPACK_E_ENC_ENTRY_SIZE;
    if (table.needs_room(bytes) && !table.make_room(bytes)) return HPACK_E_NOMEM;
    uint32_t evicted;
    DecoderTable::Entry* e = table.insert(name, name_len, value, value_len, &evicted);
    memset(&e->extra, 0, sizeof(e->extra));
    return HPACK_OK;
}

// Reads one instruction at p (RFC 9204 4.3) and applies it.  Nothing is
// changed unless the whole instruction is there and valid; an error is
// reported as soon as the octets that show it are there, not when the
// instruction is complete.
int qpack_decoder::read_instruction(const uint8_t* p, const uint8_t* e, size_t* used) {
    const uint8_t b = p[0];
    uint64_t v;
    int r;

    if ((b & 0xe0) == 0x20) {                          // Set Dynamic Table Capacity
        r = decode_integer62(p, e, 5, &v);
        if (r <= 0) return r == 0 ? kIncomplete : QPACK_E_ENC_INTEGER;
        if (v > max_capacity) return QPACK_E_ENC_CAPACITY;
        table.set_max_size(static_cast<size_t>(v));
        *used = static_cast<size_t>(r);
        return HPACK_OK;
    }

    if ((b & 0xe0) == 0x00) {                          // Duplicate
        const int len = decode_integer62(p, e, 5, &v);
        if (len <= 0) return len == 0 ? kIncomplete : QPACK_E_ENC_INTEGER;
        if (v >= table.count()) return QPACK_E_ENC_DYNAMIC_INDEX;
        const DecoderTable::Entry& src = table.entry(table.next_id() - 1 - v);
        // The insertion may evict the entry it copies.
        const size_t n = src.name_len + src.value_len;
        if (!scratch.reserve(n, false)) return HPACK_E_NOMEM;
        if (n) memcpy(scratch.data(), src.name, n);
        const size_t name_len = src.name_len;
        r = insert(scratch.data(), name_len, scratch.data() + name_len, n - name_len);
        if (r != HPACK_OK) return r;
        *used = static_cast<size_t>(len);
        return HPACK_OK;
    }

    // Insert With Name Reference, Insert With Literal Name.
    const uint8_t* q;
    QString name{nullptr, 0, false};
    const uint8_t* ref_name = nullptr;   // a name taken from a table
    size_t ref_len = 0;
    bool ref_dynamic = false;
    if (b & 0x80) {
        r = decode_integer62(p, e, 6, &v);
        if (r <= 0) return r == 0 ? kIncomplete : QPACK_E_ENC_INTEGER;
        if (b & 0x40) {
            if (v >= kQpackStaticEntries) return QPACK_E_ENC_STATIC_INDEX;
            const StaticEntry& s = kQpackStaticTable[v];
            ref_name = reinterpret_cast<const uint8_t*>(s.name);
            ref_len = s.name_len;
        } else {
            if (v >= table.count()) return QPACK_E_ENC_DYNAMIC_INDEX;
            const DecoderTable::Entry& src = table.entry(table.next_id() - 1 - v);
            ref_name = src.name;
            ref_len = src.name_len;
            ref_dynamic = true;
        }
        q = p + r;
    } else {
        r = read_string(p, e, 5, &name);
        if (r <= 0) return r == 0 ? kIncomplete : QPACK_E_ENC_INTEGER;
        // The capacity bounds what is buffered: an entry is no larger.
        if (name.min_decoded() + HPACK_ENTRY_OVERHEAD > table.max_size())
            return QPACK_E_ENC_ENTRY_SIZE;
        q = p + r;
        if (name.len > static_cast<uint64_t>(e - q)) return kIncomplete;
        q += name.len;
    }

    if (q == e) return kIncomplete;
    QString value;
    r = read_string(q, e, 7, &value);
    if (r <= 0) return r == 0 ? kIncomplete : QPACK_E_ENC_INTEGER;
    q += r;
    const uint64_t name_min = ref_name ? ref_len : name.min_decoded();
    if (name_min + value.min_decoded() + HPACK_ENTRY_OVERHEAD > table.max_size())
        return QPACK_E_ENC_ENTRY_SIZE;
    if (value.len > static_cast<uint64_t>(e - q)) return kIncomplete;
    q += value.len;

    // The scratch holds a dynamic name (the insertion may evict its
    // entry) or a decoded one, then a decoded value.
    const size_t name_room = ref_dynamic ? ref_len : ref_name ? 0 : name.max_decoded();
    if (!scratch.reserve(name_room + value.max_decoded(), false)) return HPACK_E_NOMEM;
    uint8_t* w = scratch.data();
    const uint8_t* n_at = nullptr;
    size_t n_len = 0;
    if (ref_dynamic) {
        if (ref_len) memcpy(w, ref_name, ref_len);
        n_at = w;
        n_len = ref_len;
        w += ref_len;
    } else if (ref_name) {
        n_at = ref_name;
        n_len = ref_len;
    } else {
        r = materialize(name, w, &n_at, &n_len);
        if (r != HPACK_OK) return encoder_stream_error(r);
        if (name.huffman) w += n_len;
    }
    const uint8_t* v_at = nullptr;
    size_t v_len = 0;
    r = materialize(value, w, &v_at, &v_len);
    if (r != HPACK_OK) return encoder_stream_error(r);
    r = insert(n_at, n_len, v_at, v_len);
    if (r != HPACK_OK) return r;
    *used = static_cast<size_t>(q - p);
    return HPACK_OK;
}

// ------------------------------------------------------- field sections

// The entry of absolute index id, which a field line references: live, and
// below the Required Insert Count (RFC 9204 2.2.3).
int qpack_decoder::dynamic_entry(uint64_t id, DecoderTable::Entry** entry) {
    if (id >= ric || !table.live(id)) return QPACK_E_DYNAMIC_INDEX;
    *entry = &table.entry(id);
    return HPACK_OK;
}

// Reads the prefix (RFC 9204 4.5.1): Required Insert Count and Base.
// known: the count reconstructed when the stream's section first arrived
// (it blocked), else 0; taken again when the prefix encodes it.
int qpack_decoder::decode_prefix(const uint8_t* p, const uint8_t* e, uint64_t known,
                                 size_t* used) {
    if (p == e) return QPACK_E_TRUNCATED;
    uint64_t encoded;
    int r = decode_integer62(p, e, 8, &encoded);
    if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
    const uint8_t* q = p + r;
    if (q == e) return QPACK_E_TRUNCATED;
    const bool sign = (q[0] & 0x80) != 0;
    uint64_t delta;
    r = decode_integer62(q, e, 7, &delta);
    if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
    q += r;

    // 4.5.1.1, the decoder's algorithm as the RFC gives it.
    uint64_t required = 0;
    if (encoded != 0) {
        const uint64_t max_entries = max_capacity / HPACK_ENTRY_OVERHEAD;
        const uint64_t full_range = 2 * max_entries;
        if (encoded > full_range) return QPACK_E_INSERT_COUNT;
        if (known != 0 && encoded == known % full_range + 1) {
            required = known;
        } else {
            const uint64_t max_value = table.next_id() + max_entries;
            const uint64_t max_wrapped = max_value / full_range * full_range;
            required = max_wrapped + encoded - 1;
            if (required > max_value) {
                if (required <= full_range) return QPACK_E_INSERT_COUNT;
                required -= full_range;
            }
            if (required == 0) return QPACK_E_INSERT_COUNT;
        }
    }
    // 4.5.1.2: a Base below 0 is invalid.
    if (sign) {
        if (required <= delta) return QPACK_E_BASE;
        base = required - delta - 1;
    } else {
        base = required + delta;
    }
    ric = required;
    *used = static_cast<size_t>(q - p);
    return HPACK_OK;
}

// The entry a field line's index names, static (index from 0), relative
// to the section's Base (base - 1 - index) or post-base (base + index):
// its name, index, static index and name memo into f, and *entry, the
// dynamic one (its value and memo are the indexed line's to take).
int qpack_decoder::reference(bool is_static, bool post_base, uint64_t index, hpack_field_t* f,
                             DecoderTable::Entry** entry) {
    if (is_static) {
        if (index >= kQpackStaticEntries) return QPACK_E_STATIC_INDEX;
        const StaticEntry& s = kQpackStaticTable[index];
        f->name = reinterpret_cast<const uint8_t*>(s.name);
        f->name_len = s.name_len;
        f->index = static_cast<uint32_t>(index);
        f->static_index = static_cast<uint32_t>(index) + 1;
        f->name_memo = nullptr;
        return HPACK_OK;
    }
    if (!post_base && index >= base) return QPACK_E_DYNAMIC_INDEX;
    const uint64_t id = post_base ? base + index : base - 1 - index;
    const int rc = dynamic_entry(id, entry);
    if (rc != HPACK_OK) return rc;
    f->name = (*entry)->name;
    f->name_len = (*entry)->name_len;
    f->index = static_cast<uint32_t>(id);
    f->static_index = 0;
    f->name_memo = &(*entry)->extra;
    return HPACK_OK;
}

// Reads one field line at p (RFC 9204 4.5.2-4.5.6) into f.  first: the
// batch's first field, which may grow the scratch.
int qpack_decoder::read_field(const uint8_t* p, const uint8_t* e, hpack_field_t* f,
                              bool first, size_t* used) {
    const uint8_t b = p[0];
    uint64_t index;
    int r;
    DecoderTable::Entry* entry;

    if ((b & 0x80) || (b & 0xf0) == 0x10) {            // indexed
        const bool post_base = !(b & 0x80);
        r = decode_integer62(p, e, post_base ? 4 : 6, &index);
        if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
        const bool is_static = !post_base && (b & 0x40);
        int rc = reference(is_static, post_base, index, f, &entry);
        if (rc != HPACK_OK) return rc;
        if (is_static) {
            const StaticEntry& s = kQpackStaticTable[index];
            f->value = reinterpret_cast<const uint8_t*>(s.value);
            f->value_len = s.value_len;
            f->memo = nullptr;
        } else {
            f->value = entry->value();
            f->value_len = entry->value_len;
            f->memo = &entry->extra;
        }
        rc = check_limits(f->name_len, f->value_len);
        if (rc != HPACK_OK) return rc;
        f->representation = HPACK_REP_INDEXED;
        *used = static_cast<size_t>(r);
        return HPACK_OK;
    }

    // Literals: with a name reference (static, dynamic or post-base), or
    // with a literal name.
    bool never;
    const uint8_t* q;
    QString name{nullptr, 0, false};
    size_t name_min;
    if ((b & 0xe0) == 0x20) {                          // literal name
        never = (b & 0x10) != 0;
        r = read_string(p, e, 3, &name);
        if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
        q = p + r;
        if (name.len > max_string) return QPACK_E_STRING_TOO_LARGE;
        if (name.min_decoded() > field_limit) return QPACK_E_FIELD_TOO_LARGE;
        if (name.len > static_cast<uint64_t>(e - q)) return QPACK_E_TRUNCATED;
        q += name.len;
        name_min = static_cast<size_t>(name.min_decoded());
        f->index = 0;
        f->static_index = 0;
        f->name_memo = nullptr;
    } else {
        const bool post_base = (b & 0xc0) == 0;
        never = post_base ? (b & 0x08) != 0 : (b & 0x20) != 0;
        r = decode_integer62(p, e, post_base ? 3 : 4, &index);
        if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
        const int rc = reference(!post_base && (b & 0x10), post_base, index, f, &entry);
        if (rc != HPACK_OK) return rc;
        q = p + r;
        name_min = f->name_len;
    }

    if (q == e) return QPACK_E_TRUNCATED;
    QString value;
    r = read_string(q, e, 7, &value);
    if (r <= 0) return r == 0 ? QPACK_E_TRUNCATED : QPACK_E_INTEGER;
    q += r;
    // Limits before any octet is decoded.
    if (value.len > max_string) return QPACK_E_STRING_TOO_LARGE;
    if (value.min_decoded() > field_limit) return QPACK_E_FIELD_TOO_LARGE;
    int rc = check_limits(name_min, static_cast<size_t>(value.min_decoded()));
    if (rc != HPACK_OK) return rc;
    if (value.len > static_cast<uint64_t>(e - q)) return QPACK_E_TRUNCATED;
    q += value.len;

    // All fields of a batch stay valid together: a later field whose
    // Huffman output does not fit the scratch left waits for the next call.
    const size_t need = name.max_decoded() + value.max_decoded();
    if (!first) {
        if (need > scratch.capacity() - scratch_used) return kBatchFull;
    } else if (!scratch.reserve(need < kScratch ? kScratch : need, false)) {
        return HPACK_E_NOMEM;
    }
    uint8_t* w = scratch.data() + scratch_used;
    if ((b & 0xe0) == 0x20) {
        rc = materialize(name, w, &f->name, &f->name_len);
        if (rc != HPACK_OK) return section_error(rc);
        if (name.huffman) w += f->name_len;
    }
    rc = materialize(value, w, &f->value, &f->value_len);
    if (rc != HPACK_OK) return section_error(rc);
    if (value.huffman) w += f->value_len;
    rc = check_limits(f->name_len, f->value_len);
    if (rc != HPACK_OK) return rc;
    scratch_used = static_cast<size_t>(w - scratch.data());

    f->representation = never ? HPACK_REP_NEVER_INDEXED : HPACK_REP_WITHOUT_INDEXING;
    f->memo = nullptr;
    *used = static_cast<size_t>(q - p);
    return HPACK_OK;
}

// ----------------------------------------------------------------- C ABI

HPACK_API qpack_decoder_t* qpack_decoder_create(const hpack_allocator_t* allocator,
                                                size_t max_table_capacity,
                                                size_t blocked_streams) {
    if (max_table_capacity > HPACK_MAX_TABLE_SIZE) return nullptr;
    Allocator a(allocator);
    // One allocation: the decoder, its scratch, queue, blocked list and its
    // table's first block, as the HPACK decoder's.
    const size_t first = DecoderTable::first_storage_size(max_table_capacity, 0);
    const size_t lent = kScratch + kOutFirst + kBlockedFirst;
    qpack_decoder_t* d = a.make_with_tail<qpack_decoder>(lent + first, a);
    if (!d) return nullptr;
    uint8_t* tail = Allocator::tail_of(d);
    d->scratch.lend(tail, kScratch);
    d->out.lend(tail + kScratch, kOutFirst);
    d->blocked.lend(tail + kScratch + kOutFirst, kBlockedFirst);
    d->table.lend(tail + lent, first, max_table_capacity);
    d->max_capacity = max_table_capacity;
    d->max_blocked = blocked_streams;
    return d;
}

HPACK_API void qpack_decoder_destroy(qpack_decoder_t* dec) {
    if (dec) dec->alloc.destroy(dec);
}

HPACK_API void qpack_decoder_set_limits(qpack_decoder_t* dec, size_t max_field_size,
                                        size_t max_section_size) {
    dec->max_field = max_field_size ? max_field_size : SIZE_MAX;
    dec->max_section = max_section_size ? max_section_size : SIZE_MAX;
}

HPACK_API void qpack_decoder_set_string_limit(qpack_decoder_t* dec, size_t max_coded_len) {
    dec->max_string = max_coded_len ? max_coded_len : SIZE_MAX;
}

HPACK_API int qpack_decoder_read_encoder(qpack_decoder_t* dec, const uint8_t* data,
                                         size_t len) {
    if (dec->error) return HPACK_E_STATE;
    const uint8_t* p;
    const uint8_t* e;
    const bool buffered = dec->pending.size() != 0;
    if (buffered) {
        // An instruction is split: read on from the side buffer with the
        // new octets appended.
        if (!dec->pending.append(data, len)) return dec->fail(HPACK_E_NOMEM);
        p = dec->pending.data();
        e = p + dec->pending.size();
    } else {
        p = data;
        e = data + len;
    }
    while (p < e) {
        size_t used = 0;
        const int rc = dec->read_instruction(p, e, &used);
        if (rc == kIncomplete) break;
        if (rc != HPACK_OK) return dec->fail(rc);
        p += used;
    }
    if (buffered) {
        dec->pending.consume(static_cast<size_t>(p - dec->pending.data()));
    } else if (p < e && !dec->pending.append(p, static_cast<size_t>(e - p))) {
        return dec->fail(HPACK_E_NOMEM);
    }
    return QPACK_OK;
}

HPACK_API int qpack_decode_begin(qpack_decoder_t* dec, uint64_t stream_id,
                                 const uint8_t* section, size_t len) {
    if (dec->error) return HPACK_E_STATE;
    if (stream_id > kInteger62Max) return HPACK_E_ARGUMENT;
    // Another stream's section left unfinished is abandoned; one of this
    // stream's starts again.
    if (dec->in_section && dec->stream_id != stream_id && !dec->abandon_section())
        return dec->fail(HPACK_E_NOMEM);
    dec->in_section = false;
    const size_t at = dec->find_blocked(stream_id);
    const uint64_t listed = at != SIZE_MAX ? dec->blocked_at(at)->ric : 0;
    size_t used = 0;
    const int rc = dec->decode_prefix(section, section + len, listed & ~kNamed, &used);
    if (rc != HPACK_OK) return dec->fail(rc);
    if (dec->ric > dec->table.next_id()) {
        // RFC 9204 2.1.2: blocked; one stream more than we allow is a
        // connection error.
        if ((at == SIZE_MAX || (listed & kNamed)) && dec->n_blocked() >= dec->max_blocked)
            return dec->fail(QPACK_E_BLOCKED_STREAMS);
        if (at != SIZE_MAX) {
            dec->blocked_at(at)->ric = dec->ric;
            return QPACK_BLOCKED;
        }
        const BlockedStream b{stream_id, dec->ric};
        if (!dec->blocked.append(reinterpret_cast<const uint8_t*>(&b), sizeof b))
            return dec->fail(HPACK_E_NOMEM);
        return QPACK_BLOCKED;
    }
    if (at != SIZE_MAX) dec->unblock(at);
    dec->in_section = true;
    dec->stream_id = stream_id;
    dec->pos = section + used;
    dec->end = section + len;
    // Limits set during a section apply from the next (qpack.h).
    dec->section_room = dec->max_section;
    dec->field_limit = dec->max_field;
    return QPACK_OK;
}

HPACK_API int qpack_decode_fields(qpack_decoder_t* dec, qpack_field_t* fields,
                                  size_t max_fields, size_t* n_fields) {
    *n_fields = 0;
    if (max_fields == 0) return HPACK_E_ARGUMENT;
    if (dec->error || !dec->in_section) return HPACK_E_STATE;
    dec->scratch_used = 0;
    size_t n = 0;
    int rc = QPACK_OK;
    while (n < max_fields) {
        if (dec->pos == dec->end) {
            // RFC 9204 4.4.1: a section with a Required Insert Count is
            // acknowledged.
            dec->in_section = false;
            if (dec->ric != 0) {
                if (!dec->emit(0x80, 7, dec->stream_id)) {
                    rc = dec->fail(HPACK_E_NOMEM);
                    break;
                }
                if (dec->ric > dec->known_received) dec->known_received = dec->ric;
            }
            rc = QPACK_SECTION_END;
            break;
        }
        size_t used = 0;
        rc = dec->read_field(dec->pos, dec->end, fields + n, n == 0, &used);
        if (rc == kBatchFull) {
            rc = QPACK_OK;
            break;
        }
        if (rc != HPACK_OK) {
            if (is_limit_error(rc)) {
                // A stream error: the section is abandoned.
                if (!dec->abandon_section()) rc = HPACK_E_NOMEM;
                if (rc == HPACK_E_NOMEM) dec->fail(rc);
            } else {
                dec->fail(rc);
            }
            break;
        }
        const size_t size = fields[n].name_len + fields[n].value_len + HPACK_ENTRY_OVERHEAD;
        dec->section_room -= size;
        dec->pos += used;
        ++n;
    }
    *n_fields = n;
    return rc;
}

HPACK_API int qpack_decoder_cancel_stream(qpack_decoder_t* dec, uint64_t stream_id) {
    if (dec->error) return HPACK_E_STATE;
    if (stream_id > kInteger62Max) return HPACK_E_ARGUMENT;
    if (dec->in_section && dec->stream_id == stream_id) dec->in_section = false;
    const size_t at = dec->find_blocked(stream_id);
    if (at != SIZE_MAX) dec->unblock(at);
    // RFC 9204 2.2.2.2: with no dynamic table there is nothing to cancel.
    if (dec->max_capacity != 0 && !dec->emit(0x40, 6, stream_id))
        return dec->fail(HPACK_E_NOMEM);
    return QPACK_OK;
}

HPACK_API size_t qpack_decoder_unblocked(qpack_decoder_t* dec, uint64_t* stream_ids,
                                         size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < dec->n_listed() && n < max; ++i) {
        BlockedStream* b = dec->blocked_at(i);
        if (!(b->ric & kNamed) && b->ric <= dec->table.next_id()) {
            stream_ids[n++] = b->stream_id;
            b->ric |= kNamed;
        }
    }
    return n;
}

HPACK_API size_t qpack_decoder_drain(qpack_decoder_t* dec, uint8_t* out, size_t cap) {
    size_t n = dec->out.size() < cap ? dec->out.size() : cap;
    if (n) {
        memcpy(out, dec->out.data(), n);
        dec->out.consume(n);
    }
    // RFC 9204 4.4.3: one increment for every insert the encoder cannot
    // know we have, after what was queued before it.
    const uint64_t inserts = dec->table.next_id();
    if (dec->out.size() == 0 && inserts > dec->known_received) {
        uint8_t b[kInteger62MaxBytes];
        const size_t k = encode_integer62(b, 0x00, 6, inserts - dec->known_received);
        if (k <= cap - n) {
            memcpy(out + n, b, k);
            n += k;
            dec->known_received = inserts;
        }
    }
    return n;
}

HPACK_API size_t qpack_decoder_table_size(const qpack_decoder_t* dec) {
    return dec->table.size();
}

HPACK_API size_t qpack_decoder_table_capacity(const qpack_decoder_t* dec) {
    return dec->table.max_size();
}

HPACK_API size_t qpack_decoder_table_entries(const qpack_decoder_t* dec) {
    return dec->table.count();
}

HPACK_API uint64_t qpack_decoder_insert_count(const qpack_decoder_t* dec) {
    return dec->table.next_id();
}

HPACK_API size_t qpack_decoder_blocked_streams(const qpack_decoder_t* dec) {
    return dec->n_blocked();
}
