// codec_bench's corpus octets (codec_bench --corpus-out=FILE; make
// bench-corpus, and a section of make bench-codec's report): the octets on
// the wire of real header lists, for ours, libnghttp2's deflater and a
// bound, at table sizes 4096, 16384 and 65536, and our encoder's octets
// against its memory at five table sizes.  Nothing is timed, and our
// encoders sit at fixed addresses (Arena, codec_bench.h): the figures are
// the same on every machine and in every run.
//
// Inputs, each file ONE connection (one encoder context, one decoder):
//   hpack-test-case raw-data/story_*.json   request or response stories
//   qifs/*.qif                              request lists (QIF: a field a
//                                           line, name TAB value, a blank
//                                           line ends a list, # comments)
//
// At each size both encoders are capped at it and told that the peer's
// SETTINGS_HEADER_TABLE_SIZE is it (4096 is HTTP/2's initial value, which
// a peer does not send).  Every block is decoded by the other library
// (ours by nghttp2's inflater, nghttp2's by our decoder, each with its
// SETTINGS_HEADER_TABLE_SIZE at the size) and compared with the input
// list, so only correct blocks are counted.  Each connection is then
// encoded a second time on the same encoders ("replay"): a list that
// recurs should cost about one octet a field.
//
// The bound charges, with no table limit, a literal with incremental
// indexing for the first sighting of a (name, value) pair in the
// connection (the name as a static index when the static table has it),
// one octet for every later sighting, and its index for a pair the static
// table holds.
//
// The table-size measurement runs our encoder once over each connection at
// 4096, 8192, 16384, 32768 and 65536 (cap and SETTINGS both the size, as
// above) and counts, besides the octets, the memory it holds: the bytes it
// has allocated through its hpack_allocator_t and not freed, at their peak
// and at the connection's end.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "codec_bench.h"
#include "integer.h"
#include "json.h"
#include "static_table.h"

namespace codec_bench {

namespace {

namespace json = hpack_tools::json;

constexpr size_t kTableSizes[] = {4096, 16384, 65536};
// The table-size measurement's sizes: octets against memory.
constexpr size_t kMemorySizes[] = {4096, 8192, 16384, 32768, 65536};

const char kDataDir[] = "../shared/data";
const char kQifDir[] = "../shared/data/qifs";
const char kStoryDir[] = "../shared/data/hpack-test-case";

// What one side of a pass put on the wire (the blocks' lengths), and what
// it did to the table (ours from its encoder's counters, nghttp2's from
// those of our decoder that read its blocks).
struct Side {
    uint64_t  octets = 0;
    uint64_t  insertions = 0;
    uint64_t  evictions = 0;
    uint64_t  indexed = 0;      // fields sent as one index
};

// A connection encoded twice on the same encoder.
struct Pass {
    Side  first, replay;
};

struct AtSize {
    size_t                 table_size = 0;
    Pass                   ours, ng;
    std::vector<uint64_t>  ours_placements;         // octets, first pass
    std::vector<uint64_t>  ours_replay_placements;
};

// Our encoder once over a connection at one size: its octets and the
// memory it held (octets of blocks allocated through its
// hpack_allocator_t and not yet freed).
struct Held {
    size_t    table_size = 0;
    uint64_t  octets = 0;
    size_t    peak = 0;           // the most it held at once
    size_t    at_end = 0;         // what it held after the last list
    size_t    allocated = 0;      // every allocation's size, summed
    uint64_t  allocations = 0;
    uint64_t  frees = 0;          // before its destruction
};

// ------------------------------------------------------------------ input

// The QIF lists of one file; dies on a line without a TAB.
std::vector<HeaderList> load_qif(const std::string &path)
{
    std::string text, err;
    if (!story::read_file(path, &text, &err)) {
        die("corpus octets: " + err);
    }
    std::vector<HeaderList> lists;
    HeaderList cur;
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) {
            end = text.size();
        }
        const std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        line_no++;
        if (line.empty()) {
            if (!cur.empty()) {
                lists.push_back(std::move(cur));
                cur.clear();
            }
            continue;
        }
        if (line[0] == '#') {
            continue;
        }
        const size_t tab = line.find('\t');
        if (tab == std::string::npos) {
            die("corpus octets: " + path + ":" + std::to_string(line_no)
                + ": no TAB between name and value");
        }
        cur.push_back({line.substr(0, tab), line.substr(tab + 1)});
    }
    if (!cur.empty()) {
        lists.push_back(std::move(cur));
    }
    return lists;
}

std::string stem(const std::string &path)
{
    return std::filesystem::path(path).stem().string();
}

bool has_name(const story::Story &st, const char *name)
{
    for (const story::Case &c : st.cases) {
        for (const story::Header &h : c.headers) {
            if (h.name == name) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

Connection story_connection(const std::string &path)
{
    story::Story st;
    std::string err;
    if (!story::load(path, &st, &err)) {
        die("corpus octets: " + err);
    }
    Connection c;
    c.name = stem(path);
    c.source = path;
    // A story without "context" (raw-data has one) is classed by its
    // pseudo-header fields.
    if (st.context == "request" || st.context == "response") {
        c.group = st.context;
        c.classed_by = "context";
    } else if (has_name(st, ":status") && !has_name(st, ":method")) {
        c.group = "response";
        c.classed_by = ":status";
    } else if (has_name(st, ":method") && !has_name(st, ":status")) {
        c.group = "request";
        c.classed_by = ":method";
    } else {
        die("corpus octets: " + path + ": neither \"context\" nor "
            "pseudo-header fields tell requests from responses");
    }
    for (const story::Case &k : st.cases) {
        if (!k.has_headers) {
            die("corpus octets: " + path + ": case "
                + std::to_string(k.seqno) + " has no \"headers\"");
        }
        c.lists.push_back(std::make_unique<Block>(k.headers));
    }
    return c;
}

Connection qif_connection(const std::string &path)
{
    Connection c;
    c.name = stem(path);
    c.source = path;
    c.group = "qif";
    c.classed_by = "qif";
    for (const HeaderList &h : load_qif(path)) {
        c.lists.push_back(std::make_unique<Block>(h));
    }
    if (c.lists.empty()) {
        die("corpus octets: " + path + ": no header list");
    }
    return c;
}

std::vector<std::string> qif_files(const std::string &dir)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    {
        if (it->path().extension() == ".qif") {
            files.push_back(it->path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

Corpus load_corpus(const std::string &story_flag, const std::string &qif_flag,
                   const char *what)
{
    // Where the data is: --corpus (an hpack-test-case checkout, else
    // $HPACK_TEST_CASE_DIR or ../shared/data/hpack-test-case) and --qifs.
    std::string story_dir = story_flag;
    if (story_dir.empty()) {
        std::string tried;
        story_dir = story::corpus_dir(&tried);
        if (story_dir.empty()) {
            story_dir = tried;
        }
    }
    const std::string qif_dir = qif_flag.empty() ? kQifDir : qif_flag;
    const std::vector<std::string> stories =
        story::story_files(story_dir + "/raw-data");
    const std::vector<std::string> qifs = qif_files(qif_dir);

    Corpus c;
    if (stories.empty() && qifs.empty()) {
        const bool defaults = story_dir == kStoryDir && qif_dir == kQifDir;
        c.skipped = (defaults ? std::string(kDataDir)
                              : story_dir + "/raw-data and " + qif_dir)
                    + " not found: " + what + " skipped";
    } else if (stories.empty()) {
        c.notes.push_back("no raw-data/story_*.json under " + story_dir
                          + ": stories skipped");
    } else if (qifs.empty()) {
        c.notes.push_back("no *.qif in " + qif_dir + ": QIF lists skipped");
    }
    for (const std::string &f : stories) {
        c.conns.push_back(story_connection(f));
    }
    for (const std::string &f : qifs) {
        c.conns.push_back(qif_connection(f));
    }
    return c;
}

namespace {

// ------------------------------------------------------------------ bound

// The pairs a connection has sent so far, for the bound.
using Seen = std::set<std::pair<std::string, std::string>>;

// The bound's octets for one list (see the top of the file).  A literal
// with incremental indexing is RFC 7541 6.2.1: a 6-bit index of the name,
// or 0 and the name as a string, then the value as a string; each string
// is its length prefix and its raw or Huffman octets, whichever is shorter
// (5.2, hpack_string_encoded_len()).
uint64_t bound_octets(const HeaderList &list, Seen *seen)
{
    uint64_t n = 0;
    for (const story::Header &h : list) {
        const auto *name = reinterpret_cast<const uint8_t *>(h.name.data());
        const auto *value = reinterpret_cast<const uint8_t *>(h.value.data());
        const hpack::StaticName sn = hpack::static_name_lookup(name,
                                                               h.name.size());
        if (sn.first != 0) {
            if (uint32_t i = hpack::static_value_lookup(sn, value,
                                                        h.value.size())) {
                n += hpack::integer_length(7, i);
                continue;
            }
        }
        if (!seen->insert({h.name, h.value}).second) {
            n += 1;
            continue;
        }
        n += sn.first != 0 ? hpack::integer_length(6, sn.first)
                           : 1 + hpack_string_encoded_len(name, h.name.size());
        n += hpack_string_encoded_len(value, h.value.size());
    }
    return n;
}

// ---------------------------------------------------------------- encoders

// Our encoders live in an arena mapped at a fixed address (Arena,
// codec_bench.h), so that the figures repeat; placement 0 is the one
// reported, and kPlacements of them (the same arena, offset by 64-octet
// steps) give the spread the report shows.
constexpr uintptr_t kArenaBase = 0x200000000000;
constexpr size_t kArenaSize = 256u << 20;
constexpr size_t kPlacements = 8;

// Counts what an encoder holds: a layer over the arena's allocator (or
// malloc's, when the arena is not pinned) that passes every block on
// unchanged, so the encoder gets the addresses, hence the octets, of an
// uncounted one.  The free callback gets no size: a side map keeps each
// block's.
class Counting {
public:
    explicit Counting(const hpack_allocator_t *inner) : inner_(inner) {}

    Counting(const Counting &) = delete;

    const hpack_allocator_t *allocator() { return &allocator_; }

    size_t    live = 0;
    size_t    peak = 0;
    size_t    allocated = 0;
    uint64_t  allocations = 0;
    uint64_t  frees = 0;

private:
    static void *alloc(void *ctx, size_t size)
    {
        Counting *c = static_cast<Counting *>(ctx);
        void *p = c->inner_ != nullptr ? c->inner_->alloc(c->inner_->ctx, size)
                                       : std::malloc(size);
        if (p == nullptr) {
            return nullptr;
        }
        c->sizes_[p] = size;
        c->live += size;
        c->peak = std::max(c->peak, c->live);
        c->allocated += size;
        c->allocations++;
        return p;
    }

    static void release(void *ctx, void *p)
    {
        Counting *c = static_cast<Counting *>(ctx);
        const auto it = c->sizes_.find(p);
        if (it == c->sizes_.end()) {
            die("corpus octets: the encoder freed a block it was not given");
        }
        c->live -= it->second;
        c->frees++;
        c->sizes_.erase(it);
        if (c->inner_ != nullptr) {
            c->inner_->free(c->inner_->ctx, p);
        } else {
            std::free(p);
        }
    }

    const hpack_allocator_t                  *inner_;
    std::unordered_map<void *, size_t>        sizes_;
    hpack_allocator_t                         allocator_ = {alloc, release,
                                                            this};
};

// One side of a pass: its blocks' octets, and how much its table counters
// grew.
Side side(uint64_t octets, const hpack_stats_t &now,
          const hpack_stats_t &before)
{
    Side s;
    s.octets = octets;
    s.insertions = now.insertions - before.insertions;
    s.evictions = now.evictions - before.evictions;
    s.indexed = now.indexed_static + now.indexed_dynamic
                - before.indexed_static - before.indexed_dynamic;
    return s;
}

std::string where(const Connection &c, size_t size, int pass, size_t list)
{
    return c.source + " at " + std::to_string(size)
           + (pass ? ", replay" : "") + ", list " + std::to_string(list);
}

// Our encoder capped at size and told the peer's SETTINGS_HEADER_TABLE_SIZE
// is size (4096, HTTP/2's initial value, is not sent), and nghttp2's
// inflater to check its blocks, whose setting is size too.
std::pair<OursEncoder, NgInflater> ours_at(size_t size,
                                           const hpack_allocator_t *alloc)
{
    OursEncoder e(hpack_encoder_create(alloc, size, nullptr));
    nghttp2_hd_inflater *i = nullptr;
    if (!e || nghttp2_hd_inflate_new(&i) != 0) {
        die("corpus octets: creating our encoder or nghttp2's inflater at "
            + std::to_string(size) + " failed");
    }
    NgInflater inf(i);
    if (size != HPACK_DEFAULT_TABLE_SIZE
        && (hpack_encoder_set_peer_table_size(e.get(), size) != HPACK_OK
            || nghttp2_hd_inflate_change_table_size(inf.get(), size) != 0)) {
        die("corpus octets: setting the table size " + std::to_string(size)
            + " failed");
    }
    return {std::move(e), std::move(inf)};
}

// One pass of our encoder over the connection, every block decoded by
// nghttp2's inflater and compared with its list; the octets.
uint64_t ours_pass(const Connection &c, size_t size, int pass,
                   hpack_encoder_t *e, nghttp2_hd_inflater *inf)
{
    uint64_t octets = 0;
    for (size_t k = 0; k < c.lists.size(); k++) {
        const Block &b = *c.lists[k];
        const std::string what = where(c, size, pass, k);
        const Bytes w = ours_encode_bytes(e, b);
        expect_headers(b.headers, ng_decode_list(inf, w, what + ", ours"),
                       what + ": our block decoded by nghttp2");
        octets += w.size();
    }
    return octets;
}

// Our encoder over the connection, twice.
Pass ours_passes(const Connection &c, size_t size,
                 const hpack_allocator_t *alloc)
{
    auto [e, inf] = ours_at(size, alloc);
    Pass r;
    hpack_stats_t before = {};
    for (int pass = 0; pass < 2; pass++) {
        const uint64_t octets = ours_pass(c, size, pass, e.get(), inf.get());
        hpack_stats_t now;
        hpack_encoder_stats(e.get(), &now);
        (pass ? r.replay : r.first) = side(octets, now, before);
        before = now;
    }
    return r;
}

// Our encoder once over the connection at the reported placement, its
// allocations counted.
Held ours_held(const Connection &c, size_t size, Arena *arena)
{
    Counting count(arena->allocator(0));
    Held h;
    h.table_size = size;
    {
        auto [e, inf] = ours_at(size, count.allocator());
        h.octets = ours_pass(c, size, 0, e.get(), inf.get());
        h.at_end = count.live;
        h.frees = count.frees;
    }
    h.peak = count.peak;
    h.allocated = count.allocated;
    h.allocations = count.allocations;
    if (count.live != 0) {
        die("corpus octets: " + c.source + " at " + std::to_string(size)
            + ": the encoder left " + std::to_string(count.live)
            + " octets allocated after its destruction");
    }
    return h;
}

// The same for nghttp2's deflater (deflate_hd_table_bufsize_max = size),
// its blocks decoded by ours, whose counters say what they did.
Pass ng_passes(const Connection &c, size_t size)
{
    nghttp2_hd_deflater *d = nullptr;
    OursDecoder dec(hpack_decoder_create(nullptr, size));
    if (!dec || nghttp2_hd_deflate_new(&d, size) != 0) {
        die("corpus octets: creating nghttp2's deflater or our decoder at "
            + std::to_string(size) + " failed");
    }
    NgDeflater def(d);
    if (size != HPACK_DEFAULT_TABLE_SIZE
        && nghttp2_hd_deflate_change_table_size(def.get(), size) != 0) {
        die("corpus octets: setting the table size " + std::to_string(size)
            + " failed");
    }
    Pass r;
    hpack_stats_t before = {};
    for (int pass = 0; pass < 2; pass++) {
        uint64_t octets = 0;
        for (size_t k = 0; k < c.lists.size(); k++) {
            const Block &b = *c.lists[k];
            const std::string what = where(c, size, pass, k);
            const Bytes w = ng_encode_bytes(def.get(), b);
            expect_headers(b.headers,
                           ours_decode_list(dec.get(), w, what + ", nghttp2's"),
                           what + ": nghttp2's block decoded by ours");
            octets += w.size();
        }
        hpack_stats_t now;
        hpack_decoder_stats(dec.get(), &now);
        (pass ? r.replay : r.first) = side(octets, now, before);
        before = now;
    }
    return r;
}

// Both sides at one size, ours at every placement.
AtSize measure(const Connection &c, size_t size, Arena *arena)
{
    AtSize r;
    r.table_size = size;
    r.ng = ng_passes(c, size);
    for (size_t p = 0; p < (arena->pinned() ? kPlacements : 1); p++) {
        const Pass o = ours_passes(c, size, arena->allocator(p));
        if (p == 0) {
            r.ours = o;
        }
        r.ours_placements.push_back(o.first.octets);
        r.ours_replay_placements.push_back(o.replay.octets);
    }
    return r;
}

// ------------------------------------------------------------------ output

std::string side_json(const Side &s)
{
    return "{\"octets\": " + std::to_string(s.octets) + ", \"insertions\": "
           + std::to_string(s.insertions) + ", \"evictions\": "
           + std::to_string(s.evictions) + ", \"indexed\": "
           + std::to_string(s.indexed) + "}";
}

std::string list_json(const std::vector<uint64_t> &v)
{
    std::string s = "[";
    for (size_t k = 0; k < v.size(); k++) {
        s += (k ? ", " : "") + std::to_string(v[k]);
    }
    return s + "]";
}

std::string held_json(const Held &h)
{
    return "{\"table_size\": " + std::to_string(h.table_size)
           + ", \"octets\": " + std::to_string(h.octets)
           + ", \"peak_bytes\": " + std::to_string(h.peak)
           + ", \"end_bytes\": " + std::to_string(h.at_end)
           + ", \"allocated_bytes\": " + std::to_string(h.allocated)
           + ", \"allocations\": " + std::to_string(h.allocations)
           + ", \"frees\": " + std::to_string(h.frees) + "}";
}

void write_json(const std::string &path, const std::string &codec_id,
                const std::string &skipped,
                const std::vector<std::string> &notes,
                const std::vector<Connection> &conns,
                const std::vector<std::vector<AtSize>> &results,
                const std::vector<std::vector<Held>> &memory,
                const std::vector<std::pair<uint64_t, uint64_t>> &bounds)
{
    FILE *f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        die("--corpus-out=" + path + ": cannot write");
    }
    std::string out = "{\n  \"codec\": " + json::quote(codec_id)
                      + ",\n  \"nghttp2\": " + json::quote(NGHTTP2_VERSION)
                      + ",\n  \"table_sizes\": "
                      + list_json(std::vector<uint64_t>(
                            std::begin(kTableSizes), std::end(kTableSizes)))
                      + ",\n  \"memory_sizes\": "
                      + list_json(std::vector<uint64_t>(
                            std::begin(kMemorySizes), std::end(kMemorySizes)))
                      + ",\n";
    if (!skipped.empty()) {
        out += "  \"skipped\": " + json::quote(skipped) + ",\n";
    }
    out += "  \"notes\": [";
    for (size_t k = 0; k < notes.size(); k++) {
        out += (k ? ", " : "") + json::quote(notes[k]);
    }
    out += "],\n  \"connections\": [";
    for (size_t k = 0; k < conns.size(); k++) {
        const Connection &c = conns[k];
        uint64_t fields = 0, plain = 0;
        for (const auto &b : c.lists) {
            fields += b->headers.size();
            plain += b->plain;
        }
        out += k ? ",\n    {" : "\n    {";
        out += "\"name\": " + json::quote(c.name) + ", \"group\": "
               + json::quote(c.group) + ", \"classed_by\": "
               + json::quote(c.classed_by) + ", \"source\": "
               + json::quote(c.source) + ",\n     \"lists\": "
               + std::to_string(c.lists.size()) + ", \"fields\": "
               + std::to_string(fields) + ", \"plain\": "
               + std::to_string(plain) + ", \"bound\": "
               + std::to_string(bounds[k].first) + ", \"bound_replay\": "
               + std::to_string(bounds[k].second) + ",\n     \"sizes\": [";
        for (size_t j = 0; j < results[k].size(); j++) {
            const AtSize &a = results[k][j];
            out += j ? ",\n       " : "\n       ";
            out += "{\"table_size\": " + std::to_string(a.table_size)
                   + ",\n        \"ours\": " + side_json(a.ours.first)
                   + ",\n        \"nghttp2\": " + side_json(a.ng.first)
                   + ",\n        \"ours_replay\": "
                   + side_json(a.ours.replay)
                   + ",\n        \"nghttp2_replay\": "
                   + side_json(a.ng.replay)
                   + ",\n        \"ours_placements\": "
                   + list_json(a.ours_placements)
                   + ", \"ours_replay_placements\": "
                   + list_json(a.ours_replay_placements) + "}";
        }
        out += "],\n     \"memory\": [";
        for (size_t j = 0; j < memory[k].size(); j++) {
            out += (j ? ",\n       " : "\n       ") + held_json(memory[k][j]);
        }
        out += "]}";
    }
    out += conns.empty() ? "]\n}\n" : "\n  ]\n}\n";
    if (std::fwrite(out.data(), 1, out.size(), f) != out.size()
        || std::fclose(f) != 0) {
        die("--corpus-out=" + path + ": write failed");
    }
}

}  // namespace

Arena::Arena(uintptr_t base, size_t size) : size_(size)
{
    void *p = mmap(reinterpret_cast<void *>(base), size,
                   PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
                       | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && p != reinterpret_cast<void *>(base)) {
        munmap(p, size);     // a kernel that took it as a hint
        p = MAP_FAILED;
    }
    base_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
}

Arena::~Arena()
{
    if (base_ != nullptr) {
        munmap(base_, size_);
    }
}

const hpack_allocator_t *Arena::allocator(size_t placement)
{
    if (base_ == nullptr) {
        return nullptr;
    }
    used_ = placement * 64;
    return &allocator_;
}

void *Arena::alloc(void *ctx, size_t size)
{
    Arena *a = static_cast<Arena *>(ctx);
    const size_t at = (a->used_ + 63) & ~size_t(63);
    if (at + size > a->size_) {
        die("the encoders' arena is exhausted");
    }
    a->used_ = at + size;
    return a->base_ + at;
}

int run_corpus_octets(const std::string &story_flag,
                      const std::string &qif_flag, const std::string &out,
                      const std::string &codec_id)
{
    Corpus corpus = load_corpus(story_flag, qif_flag, "corpus octets");
    const std::string &skipped = corpus.skipped;
    std::vector<std::string> &notes = corpus.notes;
    const std::vector<Connection> &conns = corpus.conns;
    if (!skipped.empty()) {
        std::printf("codec_bench: %s\n", skipped.c_str());
    }

    Arena arena(kArenaBase, kArenaSize);
    if (!conns.empty() && !arena.pinned()) {
        notes.push_back("the encoders' arena could not be mapped at a fixed "
                        "address: ours' octets follow where malloc put each "
                        "encoder and vary from run to run, one placement");
    }
    std::vector<std::vector<AtSize>> results;
    std::vector<std::vector<Held>> memory;
    std::vector<std::pair<uint64_t, uint64_t>> bounds;
    size_t blocks = 0;
    for (const Connection &c : conns) {
        Seen seen;
        uint64_t first = 0, replay = 0;
        for (const auto &b : c.lists) {
            first += bound_octets(b->headers, &seen);
        }
        for (const auto &b : c.lists) {
            replay += bound_octets(b->headers, &seen);
        }
        bounds.emplace_back(first, replay);
        std::vector<AtSize> at;
        for (size_t size : kTableSizes) {
            at.push_back(measure(c, size, &arena));
        }
        std::vector<Held> held;
        for (size_t size : kMemorySizes) {
            held.push_back(ours_held(c, size, &arena));
            // At a fixed address the counted encoder is the reported one.
            for (const AtSize &a : at) {
                if (arena.pinned() && a.table_size == size
                    && a.ours.first.octets != held.back().octets) {
                    die("corpus octets: " + c.source + " at "
                        + std::to_string(size) + ": the counted encoder "
                        "put " + std::to_string(held.back().octets)
                        + " octets on the wire, the reported one "
                        + std::to_string(a.ours.first.octets));
                }
            }
        }
        results.push_back(std::move(at));
        memory.push_back(std::move(held));
        blocks += c.lists.size();
    }
    for (const std::string &n : notes) {
        std::printf("codec_bench: corpus octets: %s\n", n.c_str());
    }
    if (!conns.empty()) {
        std::printf("codec_bench: corpus octets: %zu connections, %zu "
                    "lists, each encoded twice by both encoders at %zu "
                    "table sizes, and once by ours, its memory counted, at "
                    "%zu; every block verified\n", conns.size(), blocks,
                    std::size(kTableSizes), std::size(kMemorySizes));
    }
    write_json(out, codec_id, skipped, notes, conns, results, memory,
               bounds);
    return 0;
}

}  // namespace codec_bench
