// The decoder on hostile input: one connection's blocks, settings changes,
// limits and allocation failures chosen by the fuzzer (the script format in
// fuzz_common.h).
//
// Two decoders see every block: A whole (hpack_tools::decode_block()), B in pieces
// cut at fuzzer-chosen points, each piece an exact-size heap copy released
// as soon as it is consumed.  They must agree on every field (name, value,
// representation, indexes, memos) and every error.  A is also checked
// against a model of the dynamic table built from the fields themselves
// (RFC 7541 2.3, 4): what an indexed reference returns, sizes, eviction,
// and that a host's memo stays with its entry.

#include <deque>
#include <string>
#include <vector>

#include "fuzz_common.h"

using namespace hpack_fuzz;

namespace {

constexpr uint64_t kMemoMagic = 0x6d656d6f6d656d6full;

struct Field {
    std::string name, value;
    int rep;
    uint32_t index, static_index;
    bool memo, name_memo;
    uint64_t memo_tag, name_memo_tag;

    bool operator==(const Field& o) const {
        return name == o.name && value == o.value && rep == o.rep && index == o.index &&
               static_index == o.static_index && memo == o.memo && name_memo == o.name_memo &&
               memo_tag == o.memo_tag && name_memo_tag == o.name_memo_tag;
    }
    std::string show() const {
        return "{" + hex(reinterpret_cast<const uint8_t*>(name.data()), name.size()) + ": " +
               hex(reinterpret_cast<const uint8_t*>(value.data()), value.size()) +
               " rep " + std::to_string(rep) + " index " + std::to_string(index) + " static " +
               std::to_string(static_index) + " memo " +
               (memo ? std::to_string(memo_tag) : "-") + " name_memo " +
               (name_memo ? std::to_string(name_memo_tag) : "-") + "}";
    }
};

// One decoder, its allocator, and the tags it stamps into new entries'
// memos (1, 2, ... in insertion order).
struct Side {
    FaultyAllocator alloc;
    hpack_decoder_t* dec = nullptr;
    uint64_t inserted = 0;

    Side() { dec = hpack_decoder_create(&alloc.a, HPACK_DEFAULT_TABLE_SIZE); }
    ~Side() {
        hpack_decoder_destroy(dec);
        FUZZ_CHECK(alloc.live == 0, std::to_string(alloc.live) + " blocks leaked");
    }

    Field capture(const hpack_field_t& f) {
        Field x{str(f.name, f.name_len), str(f.value, f.value_len), f.representation, f.index,
                f.static_index, f.memo != nullptr, f.name_memo != nullptr, 0, 0};
        if (f.memo && f.representation == HPACK_REP_INCREMENTAL) {
            for (uint8_t b : f.memo->bytes) FUZZ_CHECK(b == 0, "a new entry's memo is not zeroed");
            f.memo->words[0] = ++inserted;
            f.memo->words[1] = kMemoMagic;
            x.memo_tag = inserted;
        } else if (f.memo) {
            FUZZ_CHECK(f.memo->words[1] == kMemoMagic, "a memo lost what the host stored");
            x.memo_tag = f.memo->words[0];
        }
        if (f.name_memo) {
            FUZZ_CHECK(f.name_memo->words[1] == kMemoMagic, "a name memo lost its contents");
            x.name_memo_tag = f.name_memo->words[0];
        }
        if (f.representation == HPACK_REP_INDEXED)
            FUZZ_CHECK(f.name_memo == f.memo, "an indexed field's name_memo is not its memo");
        return x;
    }
};

// The dynamic table as RFC 7541 4 describes it, fed by A's fields.
struct Model {
    struct Entry {
        std::string name, value;
        uint64_t tag;
        size_t size() const { return name.size() + value.size() + HPACK_ENTRY_OVERHEAD; }
    };
    std::deque<Entry> entries;   // newest first (index 62)
    size_t size = 0;
    size_t max = HPACK_DEFAULT_TABLE_SIZE;
    uint64_t inserted = 0;

    void evict_to(size_t target) {
        while (size > target) {
            size -= entries.back().size();
            entries.pop_back();
        }
    }
    void set_max(size_t m) {
        max = m;
        evict_to(m);
    }
    const Entry* at(uint32_t index) const {
        return index > 61 && index - 62 < entries.size() ? &entries[index - 62] : nullptr;
    }

    // Checks one field of a block that decoded so far, and applies it.
    void apply(const Field& f) {
        const std::string what = f.show();
        FUZZ_CHECK(f.rep >= HPACK_REP_INDEXED && f.rep <= HPACK_REP_NEVER_INDEXED, what);
        if (f.index >= 1 && f.index <= 61) {
            FUZZ_CHECK(f.static_index == f.index, what);
        } else {
            FUZZ_CHECK(f.static_index == 0, what);
        }
        const Entry* e = at(f.index);
        FUZZ_CHECK(f.index <= 61 || e, "a reference past the table was accepted: " + what);
        if (f.rep == HPACK_REP_INDEXED) {
            FUZZ_CHECK(f.index >= 1, what);
            if (e) {
                FUZZ_CHECK(f.name == e->name && f.value == e->value,
                           "an indexed field is not the entry it names: " + what);
                FUZZ_CHECK(f.memo && f.memo_tag == e->tag, "the memo of another entry: " + what);
            } else {
                FUZZ_CHECK(!f.memo && !f.name_memo, what);
            }
            return;
        }
        if (e) FUZZ_CHECK(f.name == e->name, "a name is not the entry's it names: " + what);
        const bool named = e != nullptr;   // e dangles once the model changes
        const uint64_t name_tag = named ? e->tag : 0;
        if (f.rep != HPACK_REP_INCREMENTAL) {
            FUZZ_CHECK(!f.memo, what);
            FUZZ_CHECK(f.name_memo == named && f.name_memo_tag == name_tag,
                       "the name memo is not the named entry's: " + what);
            return;
        }
        const Entry n{f.name, f.value, 0};
        const size_t need = n.size();
        if (need > max) {
            evict_to(0);   // RFC 7541 4.4: empties the table, not added
            FUZZ_CHECK(!f.memo, "an entry larger than the table has a memo: " + what);
        } else {
            evict_to(max - need);
            entries.push_front({f.name, f.value, ++inserted});
            size += need;
            FUZZ_CHECK(f.memo && f.memo_tag == inserted, "a new entry without its memo: " + what);
        }
        // The named entry may have just been evicted by this insertion.
        bool named_live = false;
        for (const Entry& x : entries) named_live |= named && x.tag == name_tag;
        FUZZ_CHECK(f.name_memo == named_live && (!named_live || f.name_memo_tag == name_tag),
                   "the name memo of an incremental field: " + what);
    }
};

// The dynamic table size updates that lead a block (RFC 7541 4.2, 6.3).
// One longer than four octets fails the block, so reading it as nghttp2
// does is enough.
std::vector<size_t> leading_updates(const std::vector<uint8_t>& b) {
    std::vector<size_t> out;
    size_t i = 0;
    while (i < b.size() && (b[i] & 0xe0) == 0x20) {
        const Integer r = read_integer(b.data() + i, b.size() - i, 5);
        if (!r.ok) break;
        out.push_back(r.value);
        i += r.len;
    }
    return out;
}

bool is_decode_error(int rc) {
    return (rc <= HPACK_E_INTEGER && rc >= HPACK_E_UPDATE_MISSING) ||
           (rc <= HPACK_E_FIELD_TOO_LARGE && rc >= HPACK_E_STRING_TOO_LARGE) ||
           rc == HPACK_E_NOMEM;
}

void check_error_vocabulary(int rc) {
    FUZZ_CHECK(is_decode_error(rc), "unexpected result " + std::to_string(rc));
    const unsigned h2 = hpack_h2_error(rc);
    const unsigned want = rc > HPACK_E_FIELD_TOO_LARGE ? HPACK_H2_COMPRESSION_ERROR
                          : rc > HPACK_E_NOMEM          ? HPACK_H2_ENHANCE_YOUR_CALM
                                                        : HPACK_H2_INTERNAL_ERROR;
    FUZZ_CHECK(h2 == want, std::to_string(rc) + " maps to " + std::to_string(h2));
    FUZZ_CHECK(strcmp(hpack_strerror(rc), "unknown error") != 0, std::to_string(rc));
}

struct Collect {
    Side* side;
    Model* model;
    std::vector<Field> fields;

    void operator()(const hpack_field_t& f) {
        fields.push_back(side->capture(f));
        model->apply(fields.back());
    }
};

// How B's blocks are cut.
struct Pieces {
    std::vector<uint8_t> lengths{1, 5, 2, 64};
    bool empty_last = false;
    size_t batch = 1;  // fields per hpack_decode_fields call
};

int decode_in_pieces(Side& s, const std::vector<uint8_t>& block, const Pieces& plan,
                     std::vector<Field>* out) {
    hpack_decode_begin(s.dec);
    size_t off = 0, k = 0;
    bool was_empty = false;
    for (;;) {
        size_t len = plan.lengths[k++ % plan.lengths.size()];
        if (len == 0 && was_empty) len = 1;   // progress
        if (len > block.size() - off) len = block.size() - off;
        was_empty = len == 0;
        const bool last = off + len == block.size() && (!plan.empty_last || len == 0);
        const Exact piece(block.data() + off, len);
        const uint8_t* p = piece.begin();
        for (;;) {
            // A batch's fields are captured after the call: they must all
            // still be valid then, and memos are written in wire order.
            hpack_field_t f[15];
            size_t n = 0;
            const int rc = hpack_decode_fields(s.dec, &p, piece.end(), last, f, plan.batch, &n);
            FUZZ_CHECK(p >= piece.begin() && p <= piece.end(), "*pos left the piece");
            FUZZ_CHECK(n <= plan.batch, "more fields than asked for");
            for (size_t i = 0; i < n; ++i) out->push_back(s.capture(f[i]));
            if (rc == HPACK_OK) {
                FUZZ_CHECK(n >= 1, "HPACK_OK without a field");
                continue;
            }
            if (rc == HPACK_BLOCK_END) {
                FUZZ_CHECK(last && p == piece.end(), "BLOCK_END before the last piece ended");
                return HPACK_OK;
            }
            if (rc == HPACK_NEED_MORE) {
                FUZZ_CHECK(!last && p == piece.end(), "NEED_MORE with octets left or on the last piece");
                break;
            }
            return rc;
        }
        off += len;
    }
}

void check_table(const Side& a, const Side& b, const Model& m) {
    const size_t size = hpack_decoder_table_size(a.dec);
    const size_t entries = hpack_decoder_table_entries(a.dec);
    FUZZ_CHECK(size == m.size && entries == m.entries.size(),
               "table " + std::to_string(size) + "/" + std::to_string(entries) + ", model " +
                   std::to_string(m.size) + "/" + std::to_string(m.entries.size()));
    FUZZ_CHECK(size <= m.max, "table above its maximum");
    FUZZ_CHECK(size == hpack_decoder_table_size(b.dec) &&
                   entries == hpack_decoder_table_entries(b.dec),
               "whole and piecewise decoders' tables differ");
    hpack_stats_t st;
    hpack_decoder_stats(a.dec, &st);
    FUZZ_CHECK(st.insertions - st.evictions == entries, "insertions - evictions != entries");
}

// The decoder must stay failed after an error (RFC 7540 4.3).
void check_sticky(hpack_decoder_t* d) {
    hpack_decode_begin(d);
    static const uint8_t kIndexed = 0x82;
    const uint8_t* p = &kIndexed;
    hpack_field_t f;
    size_t n = 0;
    FUZZ_CHECK(hpack_decode_fields(d, &p, p + 1, 1, &f, 1, &n) == HPACK_E_STATE && n == 0,
               "a failed decoder decoded again");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    seed_mode(*argc, *argv, [](const std::string& dir) { return write_script_seeds(dir, 4096); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Script script(data, size);
    Side a, b;
    FUZZ_CHECK(a.dec && b.dec, "create failed");
    Model model;
    Pieces plan;
    size_t settings = HPACK_DEFAULT_TABLE_SIZE, max_field = 0, max_list = 0;

    std::vector<uint8_t> block;
    uint8_t op;
    for (int ops = 0; ops < 4096 && script.next(&block, &op); ++ops) {
        if (op != kOpBlock) {
            switch (op & 7) {
            case kOpSettings: {
                const size_t s = script.settings_size(op);
                const int ra = hpack_decoder_set_settings_table_size(a.dec, s);
                const int rb = hpack_decoder_set_settings_table_size(b.dec, s);
                if (rb == HPACK_E_NOMEM && b.alloc.failed) return 0;
                FUZZ_CHECK(ra == rb, "settings " + std::to_string(s));
                FUZZ_CHECK(ra == (s <= HPACK_MAX_TABLE_SIZE ? HPACK_OK : HPACK_E_ARGUMENT),
                           "settings " + std::to_string(s) + ": " + std::to_string(ra));
                if (ra == HPACK_OK) settings = s;
                continue;
            }
            case kOpLimits: {
                max_field = limit_of(script.control.u8());
                max_list = limit_of(script.control.u8());
                const size_t strings = limit_of(script.control.u8());
                for (Side* s : {&a, &b}) {
                    hpack_decoder_set_limits(s->dec, max_field, max_list);
                    hpack_decoder_set_string_limit(s->dec, strings);
                }
                continue;
            }
            case kOpPieces: {
                const size_t n = script.control.u8() % 8 + 1;
                plan.lengths.assign(n, 0);
                for (uint8_t& l : plan.lengths) l = script.control.u8();
                plan.empty_last = op & 0x80;
                plan.batch = (op >> 3) & 15 ? (op >> 3) & 15 : 1;
                continue;
            }
            case kOpFailAlloc:
                b.alloc.countdown = script.control.u8();
                continue;
            default:
                continue;
            }
        }

        // The updates are applied before the first field; a block that
        // fails is the connection's last, so the model need not be exact
        // for it.
        for (size_t u : leading_updates(block)) {
            if (u <= settings) model.set_max(u);
        }

        const Exact whole(block.data(), block.size());
        Collect ca{&a, &model, {}};
        const int ra = hpack_tools::decode_block(a.dec, whole.begin(), whole.n, ca);
        std::vector<Field> fb;
        const int rb = decode_in_pieces(b, block, plan, &fb);

        if (rb == HPACK_E_NOMEM && b.alloc.failed) {
            check_sticky(b.dec);
            return 0;
        }
        FUZZ_CHECK(ra == rb, "whole " + std::to_string(ra) + ", in pieces " +
                                 std::to_string(rb) + "; block " + hex(block));
        FUZZ_CHECK(ca.fields.size() == fb.size(),
                   std::to_string(ca.fields.size()) + " vs " + std::to_string(fb.size()) +
                       " fields; block " + hex(block));
        for (size_t i = 0; i < fb.size(); ++i) {
            FUZZ_CHECK(ca.fields[i] == fb[i], "field " + std::to_string(i) + ": whole " +
                                                  ca.fields[i].show() + ", in pieces " +
                                                  fb[i].show());
        }
        if (ra != HPACK_OK) {
            check_error_vocabulary(ra);
            FUZZ_CHECK(ra != HPACK_E_NOMEM, "out of memory without an injected failure");
            check_sticky(a.dec);
            check_sticky(b.dec);
            return 0;
        }

        size_t list = 0;
        for (const Field& f : ca.fields) {
            const size_t n = f.name.size() + f.value.size();
            FUZZ_CHECK(!max_field || n <= max_field, "a field above max_field_size");
            list += n + HPACK_ENTRY_OVERHEAD;
        }
        FUZZ_CHECK(!max_list || list <= max_list, "a list above max_list_size");
        check_table(a, b, model);
    }
    return 0;
}
