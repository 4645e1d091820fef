// The decoder (RFC 7541 3, 6): a batch of fields per call
// (hpack_decode_fields()), a block in any number of pieces.
//
// The common case is a whole block in one piece: fields are parsed in place,
// raw strings point into the input, indexed fields into the table, and only
// Huffman strings are decoded, into one scratch buffer sized once per field
// from the coded lengths.  When a piece ends inside a representation, the
// rest of the piece is kept in a side buffer and parsing continues there
// once the next piece is appended: the same parser serves both paths.

#include <string.h>

#include "common.h"
#include "memory.h"
#include "buffer.h"
#include "dynamic_table.h"
#include "huffman.h"
#include "integer.h"
#include "static_table.h"

namespace hpack {
namespace {

// Internal parse results besides HPACK_OK and the errors.
constexpr int kIncomplete = 1;   // the input ends inside the representation
constexpr int kSizeUpdate = 2;   // a size update was applied, no field
// What a split representation first takes of the next piece into the side
// buffer (decode_any()): most representations end within it.
constexpr size_t kPendingChunk = 512;
// The scratch a decoder comes with (in its own allocation), and the least
// it grows to: enough that a batch of fields (hpack_decode_fields) rarely
// ends for the lack of it (a typical request's Huffman strings).  Apart,
// it would be a second allocation and release for every new connection
// (DESIGN.md, "Decoder": "The decoder's first 1 KiB of scratch in its own
// allocation").
constexpr size_t kBatchScratch = 1024;

constexpr int kBatchFull = 3;    // the field would move bytes that earlier
                                 // fields of the same batch point at

// Where a string literal lies in the input, before decoding.
struct StringRef {
    const uint8_t* data;
    uint32_t       len;      // coded length
    bool           huffman;

    // The fewest octets it can decode to: the longest code is 30 bits.
    size_t min_decoded() const { return huffman ? (size_t{len} * 8) / 30 : len; }
    size_t max_decoded() const { return huffman ? huffman_decode_capacity(len) : 0; }
};

// Reads a string literal header (H bit, 7-bit prefix length) at p.
// Returns octets of the header, kIntegerIncomplete or an error; the string
// body may still be incomplete (the caller checks).
inline int read_string(const uint8_t* p, const uint8_t* end, StringRef* s) {
    uint32_t len;
    int r = decode_integer(p, end, 7, &len);
    if (r <= 0) return r;
    s->data = p + r;
    s->len = len;
    s->huffman = (p[0] & 0x80) != 0;
    return r;
}

}  // namespace
}  // namespace hpack

struct hpack_decoder {
    explicit hpack_decoder(const hpack::Allocator& a)
        : alloc(a), table(a), pending(a), scratch(a) {
        hpack::zero_words(&stats, sizeof(stats));  // not rep stos, as the encoder's
    }

    hpack::Allocator                        alloc;
    hpack::DecoderTable                     table;
    hpack::Buffer                           pending;   // partial representation
    size_t                                  pending_pos = 0;
    hpack::Buffer                           scratch;   // Huffman output, names
    size_t                                  scratch_used = 0;  // by this call's fields
    // The call in progress has returned fields already (hpack_decode_fields):
    // nothing they point at may move, and no descriptor they were given a
    // memo of (live ids from batch_first_id on) may be moved or reused.
    bool                                    batch_more = false;
    uint64_t                                batch_first_id = 0;
    size_t   settings_size = 0;     // our SETTINGS_HEADER_TABLE_SIZE
    size_t   max_field = SIZE_MAX;
    size_t   max_list = SIZE_MAX;
    size_t   max_string = SIZE_MAX; // coded length of one string literal
    size_t   list_room = SIZE_MAX;  // max_list minus the block's list size
    bool     field_seen = false;    // in the current block
    bool     update_required = false;
    size_t   update_limit = 0;      // the first update must be <= this
    bool     ready = false;         // in a block and not failed
    bool     fast = false;          // ready, no update due, nothing buffered
    int      error = 0;             // sticky

    hpack_stats_t stats;  // cleared by the constructor

    HPACK_NOINLINE int decode_slow(const uint8_t** pos, const uint8_t* end,
                                   int last, hpack_field_t* field) {
        batch_more = false;
        scratch_used = 0;
        const int rc = decode_any(pos, end, last, field);
        fast = ready && !update_required && pending_pos >= pending.size();
        return rc;
    }
    int decode_any(const uint8_t** pos, const uint8_t* end, int last,
                   hpack_field_t* field);
    // Inlined into both callers: the batch loop of hpack_decode_fields()
    // and decode_any().  As a call, its frame and *used through memory lie
    // on the path from one field's position to the next (DESIGN.md,
    // "Decoder": "`parse()` inlined into the batch loop and `decode_any()`").
    HPACK_INLINE int parse(const uint8_t* p, const uint8_t* end, hpack_field_t* f, size_t* used);
    inline int resolve(uint32_t index, hpack_field_t* f);
    inline int check_limits(size_t name_len, size_t value_len) const;
    HPACK_INLINE size_t decode_indexed_run(
        const uint8_t** pos, const uint8_t* end, hpack_field_t* fields, size_t max_fields);
    int field_done(hpack_field_t* f) {
        const size_t n = f->name_len + f->value_len;
        field_seen = true;
        list_room -= n + HPACK_ENTRY_OVERHEAD;
        stats.plain_bytes += n;
        return HPACK_OK;
    }
    // The piece ends with nothing buffered, and no update due when it is
    // the block's last: decode_any()'s end, also taken by
    // hpack_decode_fields() without the call when fast (the end of a block
    // after its literals; DESIGN.md, "Decoder": "A batch that reaches the
    // end of its block after its literals ends it").
    int piece_ends(int last) {
        if (!last) return HPACK_NEED_MORE;
        ready = false;
        fast = false;
        ++stats.blocks;
        return HPACK_BLOCK_END;
    }
    int fail(int rc) {
        error = rc;
        ready = false;
        fast = false;
        return rc;
    }
};

namespace hpack {
namespace {

inline void count_string(hpack_stats_t& st, const StringRef& s) {
    if (s.huffman)
        ++st.huffman_strings;
    else
        ++st.raw_strings;
}

// Decodes s into dst (Huffman) or points at it (raw).
inline int materialize(const StringRef& s, uint8_t* dst, const uint8_t** out,
                       size_t* out_len) {
    if (!s.huffman) {
        *out = s.data;
        *out_len = s.len;
        return HPACK_OK;
    }
    ptrdiff_t n = huffman_decode(s.data, s.len, dst);
    if (n < 0) return static_cast<int>(n);
    *out = dst;
    *out_len = static_cast<size_t>(n);
    return HPACK_OK;
}

// A static entry as an indexed field, prepared once: the fast path copies
// it whole.  size is name_len + value_len, for the limits.
struct StaticField {
    hpack_field_t field;
    size_t        size;
};

struct StaticFields {
    StaticField f[kStaticEntries + 1];
    StaticFields() : f() {
        for (uint32_t i = 1; i <= kStaticEntries; ++i) {
            const StaticEntry& e = kStaticTable[i];
            hpack_field_t& x = f[i].field;
            x.name = reinterpret_cast<const uint8_t*>(e.name);
            x.name_len = e.name_len;
            x.value = reinterpret_cast<const uint8_t*>(e.value);
            x.value_len = e.value_len;
            x.representation = HPACK_REP_INDEXED;
            x.index = i;
            x.static_index = i;
            x.memo = nullptr;
            x.name_memo = nullptr;
            f[i].size = size_t{e.name_len} + e.value_len;
        }
    }
};

const StaticFields kStaticFields;

// The largest name + value of a static entry: 28 (accept-encoding).
constexpr size_t static_max_field() {
    size_t m = 0;
    for (uint32_t i = 1; i <= kStaticEntries; ++i) {
        const size_t n = size_t{kStaticTable[i].name_len} + kStaticTable[i].value_len;
        m = n > m ? n : m;
    }
    return m;
}
constexpr size_t kStaticMaxField = static_max_field();

// A dynamic entry's descriptor begins with the image of a field's name,
// name_len, value and value_len (DynamicTable's FieldImage), which the run
// of indexed fields copies as one block.
using DecoderEntry = DecoderTable::Entry;
static_assert(offsetof(DecoderEntry, name) == offsetof(hpack_field_t, name) &&
                  offsetof(DecoderEntry, name_len) == offsetof(hpack_field_t, name_len) &&
                  offsetof(DecoderEntry, value_at) == offsetof(hpack_field_t, value) &&
                  offsetof(DecoderEntry, value_len) == offsetof(hpack_field_t, value_len) &&
                  offsetof(DecoderEntry, extra) >= offsetof(hpack_field_t, representation) &&
                  offsetof(hpack_field_t, representation) == 4 * sizeof(size_t),
              "a descriptor starts with a field's image");
constexpr size_t kFieldImage = offsetof(hpack_field_t, representation);

// An indexed field's representation, index and static index (0) as two
// 8-octet stores instead of three of 4 (DESIGN.md, "Dynamic table layout":
// "A descriptor points at its name").
static_assert(offsetof(hpack_field_t, index) == offsetof(hpack_field_t, representation) + 4 &&
                  offsetof(hpack_field_t, static_index) ==
                      offsetof(hpack_field_t, representation) + 8 &&
                  offsetof(hpack_field_t, memo) >= offsetof(hpack_field_t, representation) + 16 &&
                  HPACK_REP_INDEXED == 0,
              "representation, index and static_index are neighbours");
inline void set_indexed(hpack_field_t* f, uint32_t index) {
    const uint64_t words[2] = {uint64_t{index} << 32, 0};
    memcpy(reinterpret_cast<char*>(f) + offsetof(hpack_field_t, representation), words,
           sizeof words);
}

}  // namespace
}  // namespace hpack

using namespace hpack;

// Fills name, value, static_index and memos of f for a table index (a
// dynamic entry is the one whose memo is set).
inline int hpack_decoder::resolve(uint32_t index, hpack_field_t* f) {
    if (index == 0) return HPACK_E_INDEX;
    if (HPACK_LIKELY(index <= kStaticEntries)) {
        memcpy(f, &kStaticFields.f[index].field, kFieldImage);
        f->static_index = index;
        f->memo = nullptr;
        f->name_memo = nullptr;
        return HPACK_OK;
    }
    if (index - kStaticEntries > table.count()) return HPACK_E_INDEX;
    auto& e = table.entry(table.id_of_index(index));
    memcpy(f, &e, kFieldImage);
    f->static_index = 0;
    f->memo = &e.extra;
    f->name_memo = &e.extra;
    return HPACK_OK;
}

inline int hpack_decoder::check_limits(size_t name_len, size_t value_len) const {
    const size_t field = name_len + value_len;
    if (field > max_field) return HPACK_E_FIELD_TOO_LARGE;
    if (field + HPACK_ENTRY_OVERHEAD > list_room) return HPACK_E_LIST_TOO_LARGE;
    return HPACK_OK;
}

// Parses one representation at p.  Nothing is changed unless the whole
// representation is present and valid (a size update is applied and
// reported as kSizeUpdate).
int hpack_decoder::parse(const uint8_t* p, const uint8_t* end,
                         hpack_field_t* f, size_t* used) {
    const uint8_t b = p[0];
    uint32_t index;
    int r;

    if (b & 0x80) {                                    // 6.1 indexed
        r = decode_integer(p, end, 7, &index);
        if (r <= 0) return r == 0 ? kIncomplete : r;
        if (update_required) return HPACK_E_UPDATE_MISSING;
        int rc = resolve(index, f);
        if (rc != HPACK_OK) return rc;
        rc = check_limits(f->name_len, f->value_len);
        if (rc != HPACK_OK) return rc;
        f->representation = HPACK_REP_INDEXED;
        f->index = index;
        if (f->memo)
            ++stats.indexed_dynamic;
        else
            ++stats.indexed_static;
        *used = static_cast<size_t>(r);
        return HPACK_OK;
    }

    if ((b & 0xe0) == 0x20) {                          // 6.3 size update
        uint32_t size;
        r = decode_integer(p, end, 5, &size);
        if (r <= 0) return r == 0 ? kIncomplete : r;
        if (field_seen) return HPACK_E_UPDATE_POSITION;
        if (size > settings_size) return HPACK_E_UPDATE_SIZE;
        // RFC 7541 4.2: the smallest setting since the last block first.
        if (update_required && size > update_limit) return HPACK_E_UPDATE_MISSING;
        stats.evictions += table.set_max_size(size);
        update_required = false;
        ++stats.size_updates;
        *used = static_cast<size_t>(r);
        return kSizeUpdate;
    }

    // 6.2 literals.  The branches are laid out for the later fields of a
    // batch with incremental indexing and a static name, most of a new
    // connection's first request (DESIGN.md, "Decoder": "Branches laid out
    // for a literal").
    hpack_representation_t rep;
    int prefix;
    if (HPACK_LIKELY(b & 0x40)) {
        rep = HPACK_REP_INCREMENTAL;
        prefix = 6;
    } else {
        rep = (b & 0x10) ? HPACK_REP_NEVER_INDEXED : HPACK_REP_WITHOUT_INDEXING;
        prefix = 4;
    }
    r = decode_integer(p, end, prefix, &index);
    if (r <= 0) return r == 0 ? kIncomplete : r;
    if (update_required) return HPACK_E_UPDATE_MISSING;
    const uint8_t* q = p + r;

    StringRef name{nullptr, 0, false};
    uint64_t name_id = UINT64_MAX;
    size_t name_min;
    if (HPACK_UNLIKELY(index == 0)) {
        if (q == end) return kIncomplete;
        r = read_string(q, end, &name);
        if (r <= 0) return r == 0 ? kIncomplete : r;
        q += r;
        if (name.len > max_string) return HPACK_E_STRING_TOO_LARGE;
        name_min = name.min_decoded();
        if (name_min > max_field) return HPACK_E_FIELD_TOO_LARGE;
        if (name.len > static_cast<size_t>(end - q)) return kIncomplete;
        q += name.len;
        f->index = 0;
        f->static_index = 0;
        f->name_memo = nullptr;
    } else {
        int rc = resolve(index, f);
        if (rc != HPACK_OK) return rc;
        if (f->memo) name_id = table.id_of_index(index);
        name_min = f->name_len;
        f->index = index;
    }

    if (q == end) return kIncomplete;
    StringRef value;
    r = read_string(q, end, &value);
    if (r <= 0) return r == 0 ? kIncomplete : r;
    q += r;
    // Limits before any octet is buffered or decoded.
    if (value.len > max_string) return HPACK_E_STRING_TOO_LARGE;
    int rc = check_limits(name_min, value.min_decoded());
    if (rc != HPACK_OK) return rc;
    if (value.len > static_cast<size_t>(end - q)) return kIncomplete;
    q += value.len;

    // One scratch reservation for everything this field decodes or copies:
    // the Huffman outputs, and a dynamic name that the insertion may
    // evict.  Within a batch the field goes after
    // the earlier ones, and the batch ends when it would not fit: the
    // buffer only grows before the call has returned anything in it.
    const bool copy_name = rep == HPACK_REP_INCREMENTAL && name_id != UINT64_MAX;
    const size_t name_cap = index == 0 ? name.max_decoded() : copy_name ? f->name_len : 0;
    const size_t need = name_cap + value.max_decoded();
    if (HPACK_LIKELY(batch_more)) {
        if (need > scratch.capacity() - scratch_used) return kBatchFull;
        if (rep == HPACK_REP_INCREMENTAL) {
            // The entry's size bound: the raw lengths, or the decoded bounds.
            const size_t entry_max = (index == 0 ? (name.huffman ? name_cap : name.len)
                                                 : f->name_len) +
                                     (value.huffman ? value.max_decoded() : value.len);
            if (!table.insert_moves_nothing(entry_max, batch_first_id)) return kBatchFull;
        }
    } else if (!scratch.reserve(need < kBatchScratch ? kBatchScratch : need, false)) {
        return HPACK_E_NOMEM;
    }
    uint8_t* w = scratch.data() + scratch_used;

    if (index == 0) {
        rc = materialize(name, w, &f->name, &f->name_len);
        if (rc != HPACK_OK) return rc;
        if (name.huffman) w += f->name_len;
    } else if (copy_name) {
        // An empty name may leave the scratch unallocated: no memcpy to a
        // null pointer, even of nothing, and the field keeps a real one.
        if (f->name_len) {
            memcpy(w, f->name, f->name_len);
            f->name = w;
            w += f->name_len;
        }
    }
    rc = materialize(value, w, &f->value, &f->value_len);
    if (rc != HPACK_OK) return rc;
    if (value.huffman) w += f->value_len;
    rc = check_limits(f->name_len, f->value_len);
    if (rc != HPACK_OK) return rc;
    scratch_used = static_cast<size_t>(w - scratch.data());

    if (index == 0) {
        count_string(stats, name);
        ++stats.literal_names;
    } else {
        ++stats.name_indexed;
    }
    count_string(stats, value);

    f->representation = rep;
    f->memo = nullptr;
    if (rep == HPACK_REP_INCREMENTAL) {
        const size_t bytes = f->name_len + f->value_len;
        if (table.needs_room(bytes) && !table.make_room(bytes)) return HPACK_E_NOMEM;
        uint32_t evicted;
        auto* e = table.insert(f->name, f->name_len, f->value, f->value_len,
                               &evicted);
        stats.evictions += evicted;
        if (e) {
            ++stats.insertions;
            memset(&e->extra, 0, sizeof(e->extra));
            f->name = table.name(*e);
            f->value = table.value(*e);
            f->memo = &e->extra;
        }
        if (name_id != UINT64_MAX)
            f->name_memo = table.live(name_id) ? &table.entry(name_id).extra
                                               : nullptr;
    } else if (name_id == UINT64_MAX) {
        f->name_memo = nullptr;
    }
    *used = static_cast<size_t>(q - p);
    return HPACK_OK;
}

// ----------------------------------------------------------------- C ABI

HPACK_API hpack_decoder_t* hpack_decoder_create(const hpack_allocator_t* allocator,
                                                size_t settings_table_size) {
    if (settings_table_size > HPACK_MAX_TABLE_SIZE) return nullptr;
    Allocator a(allocator);
    // One allocation: the decoder, its scratch (kBatchScratch) and its
    // table's first block (the decoder is made for a first header block).
    const size_t first = DecoderTable::first_storage_size(settings_table_size, 0);
    hpack_decoder_t* d = a.make_with_tail<hpack_decoder>(kBatchScratch + first, a);
    if (!d) return nullptr;
    d->scratch.lend(Allocator::tail_of(d), kBatchScratch);
    d->table.lend(Allocator::tail_of(d) + kBatchScratch, first, settings_table_size);
    d->settings_size = settings_table_size;
    // RFC 7541 4.2: the table starts at the protocol's initial 4096; a
    // larger setting only permits the peer to raise it with an update.
    d->table.set_max_size(settings_table_size < HPACK_DEFAULT_TABLE_SIZE
                              ? settings_table_size : HPACK_DEFAULT_TABLE_SIZE);
    return d;
}

HPACK_API void hpack_decoder_destroy(hpack_decoder_t* dec) {
    if (dec) dec->alloc.destroy(dec);
}

HPACK_API void hpack_decoder_set_limits(hpack_decoder_t* dec, size_t max_field_size,
                                        size_t max_list_size) {
    const size_t used = dec->max_list - dec->list_room;
    dec->max_field = max_field_size ? max_field_size : SIZE_MAX;
    dec->max_list = max_list_size ? max_list_size : SIZE_MAX;
    dec->list_room = dec->max_list > used ? dec->max_list - used : 0;
}

HPACK_API void hpack_decoder_set_string_limit(hpack_decoder_t* dec, size_t max_coded_len) {
    dec->max_string = max_coded_len ? max_coded_len : SIZE_MAX;
}

HPACK_API int hpack_decoder_set_settings_table_size(hpack_decoder_t* dec, size_t size) {
    if (size > HPACK_MAX_TABLE_SIZE) return HPACK_E_ARGUMENT;
    dec->table.permit(size);
    dec->settings_size = size;
    // RFC 7541 4.2: a smaller limit must be acknowledged by the encoder
    // with a size update at the start of its next block, no larger than the
    // smallest limit set since its last block.
    if (size < dec->table.max_size() || dec->update_required) {
        dec->update_limit = dec->update_required && dec->update_limit < size
                                ? dec->update_limit : size;
        dec->update_required = true;
        dec->fast = false;
    }
    return HPACK_OK;
}

HPACK_API void hpack_decode_begin(hpack_decoder_t* dec) {
    dec->ready = dec->error == 0;
    dec->field_seen = false;
    dec->list_room = dec->max_list;
    dec->pending.clear();
    dec->pending_pos = 0;
    dec->fast = dec->ready && !dec->update_required;
}

// The fast path: one-octet indexed fields in an unsplit block, the bulk of
// a warm connection's traffic, with the decoder's state in locals (no
// member is reloaded after each field's stores).  The table is one pointer,
// its newest descriptor (the window's layout, DynamicTable::slot()).  A
// static entry is one copy of a field prepared at load time; a dynamic one
// reads its descriptor.  Stops at anything else (a longer index, a limit
// reached): the full path parses that octet again and reports it.  Returns
// the number of fields; *pos is advanced over them.
//
// The field size limit is judged once per call: every entry of the dynamic
// table takes at most its maximum size, so when the limit admits that (and
// every static entry) no field of the run can exceed it.  A smaller limit
// leaves the run to the full path, which reports the field that does.
inline size_t hpack_decoder::decode_indexed_run(const uint8_t** pos, const uint8_t* end,
                                         hpack_field_t* fields, size_t max_fields) {
    const size_t table_max = table.max_size();
    if (HPACK_UNLIKELY(max_field < kStaticMaxField
                       || (table_max > HPACK_ENTRY_OVERHEAD
                           && max_field < table_max - HPACK_ENTRY_OVERHEAD)))
        return 0;
    const uint8_t* const start = *pos;
    const uint8_t* p = start;
    const auto t = table.view();
    // Dynamic indexes 62 .. 61 + count, below 127 (a longer integer).
    const uint32_t n_dynamic = t.count < 127 - 62 ? t.count : 127 - 62;
    size_t room = list_room;
    uint64_t n_static = 0;
    const uint8_t* const stop =
        static_cast<size_t>(end - p) > max_fields ? p + max_fields : end;
    hpack_field_t* field = fields;
    for (; p < stop; ++p, ++field) {
        const uint32_t index = static_cast<uint32_t>(*p) - 0x80;   // 0..127 if indexed
        size_t n;
        // Dynamic references first: on a warm connection they are most of
        // a block's fields, and the test that takes them also rules out
        // the static range; a static field pays three instructions more
        // (DESIGN.md, "Decoder": "The run tests for a dynamic reference
        // first").  The age it tests is also the descriptor's distance from
        // the newest.
        const uint32_t age = index - (kStaticEntries + 1);
        if (age < n_dynamic) {
            auto& e = t.by_age(age);
            n = DecoderTable::entry_size(e);
            if (HPACK_UNLIKELY(room < n))
                break;
            memcpy(field, &e, kFieldImage);
            set_indexed(field, index);
            // Two plain stores: GCC joins equal neighbouring stores into
            // a vector build and store (four instructions), unless the
            // second value is opaque to it (DESIGN.md, "Dynamic table
            // layout": "A descriptor points at its name").
            hpack_memo_t* memo = &e.extra;
            field->memo = memo;
            __asm__("" : "+r"(memo));
            field->name_memo = memo;
        } else if (index - 1 < kStaticEntries) {
            const StaticField& s = kStaticFields.f[index];
            n = s.size + HPACK_ENTRY_OVERHEAD;
            if (HPACK_UNLIKELY(room < n))
                break;
            *field = s.field;
            ++n_static;
        } else {
            break;
        }
        room -= n;
    }
    const size_t k = static_cast<size_t>(p - start);
    if (k) {
        *pos = p;
        field_seen = true;
        stats.indexed_static += n_static;
        stats.indexed_dynamic += k - n_static;
        stats.plain_bytes += (list_room - room) - k * HPACK_ENTRY_OVERHEAD;
        stats.wire_bytes += k;
        list_room = room;
    }
    return k;
}

HPACK_API int hpack_decode_fields(hpack_decoder_t* dec, const uint8_t** pos,
                                  const uint8_t* end, int last, hpack_field_t* fields,
                                  size_t max_fields, size_t* n_fields) {
    size_t n = 0;
    int rc = HPACK_E_ARGUMENT;
    dec->scratch_used = 0;
    dec->batch_first_id = dec->table.first_id();
    if (max_fields != 0) {
        for (;;) {
            if (HPACK_LIKELY(dec->fast && *pos < end && (**pos & 0x80))) {
                n += dec->decode_indexed_run(pos, end, fields + n, max_fields - n);
                if (n == max_fields) {
                    rc = HPACK_OK;
                    break;
                }
                if (*pos == end) {
                    rc = dec->piece_ends(last);
                    break;
                }
            }
            if (n == 0) {
                rc = dec->decode_slow(pos, end, last, fields);
            } else {
                // Later fields of the batch: nothing the earlier ones point
                // at may move (the scratch, the arena, the descriptors).
                // A field parsed in place changes nothing fast depends on.
                dec->batch_more = true;
                // In place, nothing buffered: parse() directly, what
                // decode_any() would do after its checks.  A later field
                // cannot be a size update, and parse() changes nothing
                // when the field is cut short or wrong: decode_any()
                // parses it again and reports it.
                if (HPACK_LIKELY(dec->fast && *pos < end)) {
                    size_t used;
                    rc = dec->parse(*pos, end, fields + n, &used);
                    if (HPACK_LIKELY(rc == HPACK_OK)) {
                        *pos += used;
                        dec->stats.wire_bytes += used;
                        dec->field_done(fields + n);
                        ++n;
                        if (n == max_fields) break;
                        continue;
                    }
                    if (rc == kBatchFull) {
                        rc = HPACK_OK;
                        break;
                    }
                }
                if (dec->fast && *pos == end) {
                    rc = dec->piece_ends(last);
                    break;
                }
                rc = dec->decode_any(pos, end, last, fields + n);
                if (rc != HPACK_OK || dec->pending.size() != 0)
                    dec->fast = dec->ready && !dec->update_required &&
                                dec->pending_pos >= dec->pending.size();
                if (rc == kBatchFull) {
                    rc = HPACK_OK;
                    break;
                }
            }
            if (rc != HPACK_OK) break;
            ++n;
            // A field parsed from the side buffer points into it, and the
            // next parse moves it.
            if (n == max_fields || dec->pending.size() != 0) break;
        }
    }
    *n_fields = n;
    return rc;
}

int hpack_decoder::decode_any(const uint8_t** pos, const uint8_t* end, int last,
                              hpack_field_t* field) {
    hpack_decoder* dec = this;
    if (!ready) return HPACK_E_STATE;

    // Octets of the piece a split representation takes into the side
    // buffer at first; doubled while it stays incomplete.
    size_t chunk = kPendingChunk;
    for (;;) {
        const uint8_t* p;
        const uint8_t* e;
        const bool buffered = dec->pending_pos < dec->pending.size();
        if (buffered) {
            // A representation is split: parse it from the side buffer,
            // which takes of the new piece only what it needs (below);
            // once the side buffer is used up the piece is parsed in place.
            p = dec->pending.data() + dec->pending_pos;
            e = dec->pending.data() + dec->pending.size();
        } else {
            dec->pending.clear();
            dec->pending_pos = 0;
            p = *pos;
            e = end;
        }

        if (p == e) {
            if (last && dec->update_required) return dec->fail(HPACK_E_UPDATE_MISSING);
            return dec->piece_ends(last);
        }

        size_t used = 0;
        int rc = dec->parse(p, e, field, &used);
        if (rc == kIncomplete && buffered && *pos < end) {
            // More of the piece, at most what has been buffered again or
            // `chunk`: the side buffer holds about the longest
            // representation (bounded by the string limit), not the piece.
            if (dec->pending_pos) {
                dec->pending.consume(dec->pending_pos);
                dec->pending_pos = 0;
            }
            const size_t want = chunk > dec->pending.size() ? chunk : dec->pending.size();
            const size_t n = static_cast<size_t>(end - *pos) < want
                                 ? static_cast<size_t>(end - *pos) : want;
            if (!dec->pending.append(*pos, n)) return dec->fail(HPACK_E_NOMEM);
            dec->stats.wire_bytes += n;
            *pos += n;
            chunk *= 2;
            continue;
        }
        if (rc == kIncomplete) {
            if (last) return dec->fail(HPACK_E_TRUNCATED);
            if (!buffered) {
                if (!dec->pending.append(p, static_cast<size_t>(e - p)))
                    return dec->fail(HPACK_E_NOMEM);
                dec->stats.wire_bytes += static_cast<size_t>(e - p);
                *pos = end;
            }
            return HPACK_NEED_MORE;
        }
        if (rc < 0) return dec->fail(rc);
        if (rc == kBatchFull) return rc;
        if (buffered) {
            dec->pending_pos += used;
        } else {
            *pos += used;
            dec->stats.wire_bytes += used;
        }
        if (rc == kSizeUpdate) continue;
        return field_done(field);
    }
}

HPACK_API size_t hpack_decoder_table_size(const hpack_decoder_t* dec) {
    return dec->table.size();
}

HPACK_API size_t hpack_decoder_table_entries(const hpack_decoder_t* dec) {
    return dec->table.count();
}

HPACK_API void hpack_decoder_stats(const hpack_decoder_t* dec, hpack_stats_t* stats) {
    *stats = dec->stats;
    // Every field is exactly one of four kinds: the total is not kept apart.
    stats->fields = stats->indexed_static + stats->indexed_dynamic +
                    stats->name_indexed + stats->literal_names;
}
