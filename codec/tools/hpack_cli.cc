/*
 * hpack: decode and encode HPACK header blocks and QPACK field sections by
 * hand, for people debugging captures.  `hpack --help` says how.
 */

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "hpack.h"
#include "block.h"
#include "hex.h"
#include "json.h"
#include "qif.h"
#include "story.h"

namespace {

using hpack_tools::story::Case;
using hpack_tools::story::Header;
using hpack_tools::story::HeaderList;
using hpack_tools::story::Story;
namespace hex = hpack_tools::hex;
namespace story = hpack_tools::story;

const char kUsage[] =
"usage: hpack decode [-v] [--table-size N] [FILE...]\n"
"       hpack encode [-v] [--table-size N] [--max-table-size N] [FILE...]\n"
"       hpack decode-json [-v] [--table-size N] STORY.json\n"
"       hpack encode-json [-v] [--table-size N] [--max-table-size N] "
"STORY.json\n"
"       hpack qpack-decode [--table-capacity N] [--blocked-streams N] "
"FILE\n"
"       hpack qpack-encode [--table-capacity N] [--blocked-streams N]\n"
"           [--max-table-capacity N] [--ack-immediate|--no-ack] IN.qif OUT\n"
"       hpack --help\n";

const char kHelp[] =
"\n"
"HPACK (RFC 7541) header blocks by hand.  FILE \"-\" or no FILE reads\n"
"standard input; all blocks of a run share one compression context, as\n"
"the blocks of one HTTP/2 connection direction do.\n"
"\n"
"decode       Reads header blocks in hex, one block per line (spaces, tabs\n"
"             and ':' between digits are ignored; '#' starts a comment),\n"
"             and prints each block as \"name: value\" lines, with a blank\n"
"             line between blocks.  On a malformed block prints the error\n"
"             and the HTTP/2 error code a connection would be closed with,\n"
"             and exits with status 1.\n"
"encode       Reads header lists as \"name: value\" lines (a blank line ends\n"
"             a list; names are lowercased, as HTTP/2 requires) and prints\n"
"             each encoded block in hex, one per line.\n"
"decode-json  Decodes every case of an hpack-test-case story (cases share\n"
"             one context; a case's header_table_size is applied before\n"
"             it) and prints the story with the decoded headers.  A case\n"
"             that carries headers is checked against them: a mismatch is\n"
"             reported and the exit status is 1.\n"
"encode-json  Encodes the headers of a story (e.g. raw-data/story_00.json)\n"
"             with one encoder and prints the story with \"wire\" filled in.\n"
"qpack-decode Decodes a QPACK (RFC 9204) offline-interop file (qpackers/\n"
"             qifs: records of an 8-octet big-endian stream id, a 4-octet\n"
"             big-endian length and the data; stream 0 is the encoder\n"
"             stream, any other record one field section of its stream)\n"
"             with one decoder, and prints the sections as QIF (\"name<TAB>\n"
"             value\" lines, a blank line after each section) in stream-id\n"
"             order.  A blocked section is decoded when the encoder-stream\n"
"             record that unblocks it is read.  On a QPACK error, or a\n"
"             truncated record, or a section still blocked at the end,\n"
"             prints the sections decoded so far, then the error and the\n"
"             HTTP/3 error code, and exits with status 1.\n"
"qpack-encode Encodes the field sections of a QIF file (IN.qif, \"-\" for\n"
"             standard input) with one QPACK encoder into an offline-\n"
"             interop file OUT (\"-\" for standard output): the n-th\n"
"             section on stream n, after a stream-0 record of the\n"
"             encoder-stream octets it needs (none when it needs none).\n"
"             Our QPACK decoder, with the peer's settings, decodes each\n"
"             section as soon as it is encoded, and must give back its\n"
"             fields.  With --ack-immediate (the default) the decoder\n"
"             stream it then owes is read by the encoder before the next\n"
"             section; with --no-ack nothing is, as if the peer never\n"
"             acknowledged.  On an error prints it with the section and\n"
"             its stream, writes no OUT, and exits with status 1.\n"
"\n"
"Values are printed and read with '\\' written \"\\\\\" and octets outside\n"
"0x20-0x7e written \"\\xNN\", so decode's output (without -v) is\n"
"encode's input.  qpack-decode's QIF is written as the format has it,\n"
"unescaped.\n"
"\n"
"options\n"
"  -v, --verbose         decode: each field's representation and table\n"
"                        index, and the dynamic table after each block;\n"
"                        encode: sizes and the table after each block;\n"
"                        *-json: a summary on standard error\n"
"  --table-size N        SETTINGS_HEADER_TABLE_SIZE of the decoding side\n"
"                        (default 4096, at most 1048576): for decode, ours;\n"
"                        for encode, the peer's\n"
"  --max-table-size N    encode: our own cap on the table (default: 4096,\n"
"                        or --table-size when larger)\n"
"  --table-capacity N    SETTINGS_QPACK_MAX_TABLE_CAPACITY of the decoding\n"
"                        side (default 4096, at most 1048576): for\n"
"                        qpack-decode, ours; for qpack-encode, the peer's\n"
"  --blocked-streams N   SETTINGS_QPACK_BLOCKED_STREAMS of the decoding\n"
"                        side (default 100): for qpack-decode, ours; for\n"
"                        qpack-encode, the peer's\n"
"  --max-table-capacity N\n"
"                        qpack-encode: our own cap on the table (default:\n"
"                        --table-capacity); the table used is the smaller\n"
"  --ack-immediate       qpack-encode: the peer acknowledges each section\n"
"                        as soon as it is encoded (the default)\n"
"  --no-ack              qpack-encode: the peer acknowledges nothing\n"
"  -h, --help            this text\n"
"\n"
"exit status: 0 success, 1 bad input or a decoding error or mismatch,\n"
"2 usage error\n"
"\n"
"example (RFC 7541 C.4.1, Huffman-coded, then C.3.2):\n"
"  echo 828684418cf1e3c2e5f23a6ba0ab90f4ff >  blocks.txt\n"
"  echo 828684be58086e6f2d6361636865     >> blocks.txt\n"
"  hpack decode -v blocks.txt\n"
"\n"
"example (QPACK, an encoder's output for the qifs request lists):\n"
"  hpack qpack-decode --table-capacity 4096 --blocked-streams 100 \\\n"
"      fb-req.out.4096.100.0 > fb-req.decoded.qif\n"
"\n"
"example (QPACK, a qifs request list encoded and decoded back):\n"
"  hpack qpack-encode --table-capacity 4096 --blocked-streams 100 \\\n"
"      --ack-immediate fb-req.qif fb-req.out.4096.100.1\n"
"  hpack qpack-decode --table-capacity 4096 --blocked-streams 100 \\\n"
"      fb-req.out.4096.100.1 | cmp - fb-req.qif\n";

struct Options {
    bool                      verbose = false;
    size_t                    table_size = HPACK_DEFAULT_TABLE_SIZE;
    bool                      max_table_size_set = false;
    size_t                    max_table_size = 0;
    std::vector<std::string>  files;
};

int usage_error(const std::string &msg)
{
    std::cerr << "hpack: " << msg << "\n" << kUsage
              << "Try 'hpack --help' for more.\n";
    return 2;
}

bool parse_size(const std::string &s, size_t *out)
{
    if (s.empty() || s.size() > 8) {
        return false;
    }
    size_t n = 0;
    for (char c : s) {
        if (c < '0' || c > '9') {
            return false;
        }
        n = n * 10 + size_t(c - '0');
    }
    if (n > HPACK_MAX_TABLE_SIZE) {
        return false;
    }
    *out = n;
    return true;
}

/* A size option of a subcommand: --NAME N or --NAME=N into *target, and
 * *set (when not NULL) says it was given. */
struct SizeOption {
    const char *name;
    size_t     *target;
    bool       *set;
};

/* A flag of a subcommand: --NAME sets *target to value (flags that share a
 * target are alternatives: the last one given wins). */
struct FlagOption {
    const char *name;
    bool       *target;
    bool        value;
};

/* Parses the arguments after the subcommand: FILEs ("-" and everything
 * after "--" included), -h, -v when verbose is not NULL, the flags, and
 * the size options, each a `what` from 0 to HPACK_MAX_TABLE_SIZE.  0, or
 * an exit status. */
int parse_args(const std::string &cmd, int argc, char **argv,
               const std::vector<SizeOption> &sizes, const char *what,
               bool *verbose, std::vector<std::string> *files,
               const std::vector<FlagOption> &flags = {})
{
    bool only_files = false;
    for (int i = 0; i < argc; i++) {
        std::string a = argv[i];
        if (only_files || a == "-" || a.empty() || a[0] != '-') {
            files->push_back(a);
            continue;
        }
        if (a == "--") {
            only_files = true;
            continue;
        }
        if (a == "-h" || a == "--help") {
            std::cout << kUsage << kHelp;
            return -1;
        }
        if (verbose && (a == "-v" || a == "--verbose")) {
            *verbose = true;
            continue;
        }
        const FlagOption *flag = nullptr;
        for (const FlagOption &f : flags) {
            if (a == f.name) {
                flag = &f;
            }
        }
        if (flag) {
            *flag->target = flag->value;
            continue;
        }
        std::string name = a, value;
        size_t eq = a.find('=');
        bool inline_value = a.compare(0, 2, "--") == 0 && eq != std::string::npos;
        if (inline_value) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
        }
        const SizeOption *opt = nullptr;
        for (const SizeOption &s : sizes) {
            if (name == s.name) {
                opt = &s;
            }
        }
        if (!opt) {
            return usage_error(cmd + ": unknown option '" + a + "'");
        }
        if (!inline_value) {
            if (i + 1 == argc) {
                return usage_error(cmd + ": " + a + " needs a value");
            }
            value = argv[++i];
        }
        if (opt->set) {
            *opt->set = true;
        }
        if (!parse_size(value, opt->target)) {
            return usage_error(cmd + ": " + name + ": '" + value
                               + "' is not a " + what + " from 0 to "
                               + std::to_string(HPACK_MAX_TABLE_SIZE));
        }
    }
    return 0;
}

/* Parses the options of decode, encode and the -json subcommands.  0, or
 * an exit status. */
int parse_options(const std::string &cmd, int argc, char **argv,
                  bool encoder, Options *o)
{
    std::vector<SizeOption> sizes = {{"--table-size", &o->table_size, nullptr}};
    if (encoder) {
        sizes.push_back({"--max-table-size", &o->max_table_size,
                         &o->max_table_size_set});
    }
    return parse_args(cmd, argc, argv, sizes, "size", &o->verbose,
                      &o->files);
}

/* The encoder's own cap: --max-table-size, else the larger of 4096 and
 * the peer's size. */
size_t encoder_cap(const Options &o, size_t largest_peer_size)
{
    if (o.max_table_size_set) {
        return o.max_table_size;
    }
    return std::max<size_t>(HPACK_DEFAULT_TABLE_SIZE, largest_peer_size);
}

/* "1 octet", "2 octets" */
std::string count(uint64_t n, const char *one, const char *many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string h2_error_name(unsigned code)
{
    switch (code) {
    case HPACK_H2_NO_ERROR:          return "NO_ERROR";
    case HPACK_H2_INTERNAL_ERROR:    return "INTERNAL_ERROR";
    case HPACK_H2_COMPRESSION_ERROR: return "COMPRESSION_ERROR";
    case HPACK_H2_ENHANCE_YOUR_CALM: return "ENHANCE_YOUR_CALM";
    default:                         return "error";
    }
}

/* "Huffman ... (error -5); HTTP/2 COMPRESSION_ERROR (0x9)" */
std::string describe_error(int rc)
{
    unsigned code = hpack_h2_error(rc);
    char hexcode[16];
    std::snprintf(hexcode, sizeof(hexcode), "0x%x", code);
    return std::string(hpack_strerror(rc)) + " (error " + std::to_string(rc)
           + "); HTTP/2 " + h2_error_name(code) + " (" + hexcode + ")";
}


/* ------------------------------------------------------ escaped text */

void append_escaped(std::string *out, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\\') {
            out->append("\\\\");
        } else if (c >= 0x20 && c <= 0x7e) {
            out->push_back(char(c));
        } else {
            out->append("\\x");
            out->push_back(digits[c >> 4]);
            out->push_back(digits[c & 0xf]);
        }
    }
}

/* base: the column of in[0] in its line, for messages. */
bool unescape(const std::string &in, size_t base, std::string *out,
              std::string *error)
{
    out->clear();
    for (size_t i = 0; i < in.size(); i++) {
        if (in[i] != '\\') {
            out->push_back(in[i]);
            continue;
        }
        if (i + 1 < in.size() && in[i + 1] == '\\') {
            out->push_back('\\');
            i++;
            continue;
        }
        if (i + 3 < in.size() && in[i + 1] == 'x'
            && hex::digit_value(in[i + 2]) >= 0
            && hex::digit_value(in[i + 3]) >= 0)
        {
            out->push_back(char(hex::digit_value(in[i + 2]) << 4
                                | hex::digit_value(in[i + 3])));
            i += 3;
            continue;
        }
        *error = "invalid escape at column " + std::to_string(base + i + 1)
                 + " (write a backslash as \\\\, an octet as \\xNN)";
        return false;
    }
    return true;
}


/* ------------------------------------------------------------ input */

/* Calls fn(line, where) for every line of the files (stdin for none or
 * "-"), without the line end.  fn returns 0 to go on, else an exit status,
 * which is returned.  A file that cannot be opened: 1. */
template <typename Fn>
int for_each_line(const std::vector<std::string> &files, Fn fn)
{
    std::vector<std::string> names = files;
    if (names.empty()) {
        names.push_back("-");
    }
    for (const std::string &name : names) {
        std::ifstream file;
        std::istream *in = &std::cin;
        std::string label = name == "-" ? "<stdin>" : name;
        if (name != "-") {
            file.open(name, std::ios::binary);
            if (!file) {
                std::cerr << "hpack: cannot open " << name << ": "
                          << std::strerror(errno) << "\n";
                return 1;
            }
            in = &file;
        }
        std::string line;
        size_t lineno = 0;
        while (std::getline(*in, line)) {
            lineno++;
            if (!line.empty() && line.back() == '\r') {
                line.pop_back();
            }
            int rc = fn(line, label + ":" + std::to_string(lineno));
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}


/* ------------------------------------------------------------ decode */

std::string representation_of(const hpack_field_t &f)
{
    std::string ref;
    if (f.static_index != 0) {
        ref = "static " + std::to_string(f.static_index);
    } else if (f.index != 0) {
        ref = "dynamic " + std::to_string(f.index - 61) + " (index "
              + std::to_string(f.index) + ")";
    }
    switch (f.representation) {
    case HPACK_REP_INDEXED:
        return "[indexed " + ref + "]";
    case HPACK_REP_INCREMENTAL:
        return "[literal+index, name "
               + (ref.empty() ? std::string("literal") : ref) + "]";
    case HPACK_REP_WITHOUT_INDEXING:
        return "[literal, name "
               + (ref.empty() ? std::string("literal") : ref) + "]";
    case HPACK_REP_NEVER_INDEXED:
        return "[never-indexed, name "
               + (ref.empty() ? std::string("literal") : ref) + "]";
    }
    return "[?]";
}

std::string table_state(size_t entries, size_t size,
                        const hpack_stats_t &before,
                        const hpack_stats_t &after)
{
    std::string s = "# table: " + count(entries, "entry", "entries") + ", "
                    + count(size, "octet", "octets") + " ("
                    + std::to_string(after.insertions - before.insertions)
                    + " inserted, "
                    + std::to_string(after.evictions - before.evictions)
                    + " evicted";
    uint64_t updates = after.size_updates - before.size_updates;
    if (updates != 0) {
        s += ", " + std::to_string(updates) + " size update"
             + (updates > 1 ? "s" : "");
    }
    return s + ")";
}

int cmd_decode(const Options &o)
{
    hpack_decoder_t *dec = hpack_decoder_create(nullptr, o.table_size);
    if (dec == nullptr) {
        std::cerr << "hpack: cannot create a decoder\n";
        return 1;
    }
    uint64_t blocks = 0;
    int status = for_each_line(o.files, [&](const std::string &raw,
                                            const std::string &where) {
        std::string digits;
        for (char c : raw) {
            if (c == '#') {
                break;
            }
            if (c != ' ' && c != '\t' && c != ':') {
                digits.push_back(c);
            }
        }
        if (digits.empty()) {
            return 0;
        }
        std::vector<uint8_t> block;
        std::string err;
        if (!hex::decode(digits, &block, &err)) {
            std::cerr << "hpack: " << where << ": not a hex block: " << err
                      << "\n";
            return 1;
        }
        if (blocks++ != 0) {
            std::cout << "\n";
        }
        hpack_stats_t before, after;
        hpack_decoder_stats(dec, &before);
        if (o.verbose) {
            std::cout << "# block " << blocks << ": "
                      << count(block.size(), "octet", "octets") << "\n";
        }
        hpack_decode_begin(dec);
        const uint8_t *p = block.data();
        int rc = hpack_tools::decode_piece(dec, &p, p + block.size(), 1,
                              [&o](const hpack_field_t &f) {
            std::string line;
            if (o.verbose) {
                line = representation_of(f) + " ";
            }
            append_escaped(&line, f.name, f.name_len);
            line += ": ";
            append_escaped(&line, f.value, f.value_len);
            std::cout << line << "\n";
        });
        if (rc != HPACK_BLOCK_END) {
            // A failed block in one piece leaves p at the representation.
            std::cout.flush();
            std::cerr << "hpack: " << where << ": block " << blocks
                      << ", representation at octet " << (p - block.data())
                      << ": " << describe_error(rc) << "\n";
            return 1;
        }
        if (o.verbose) {
            hpack_decoder_stats(dec, &after);
            std::cout << table_state(hpack_decoder_table_entries(dec),
                                     hpack_decoder_table_size(dec), before,
                                     after)
                      << "\n";
        }
        return 0;
    });
    hpack_decoder_destroy(dec);
    return status;
}


/* ------------------------------------------------------------ encode */

int cmd_encode(const Options &o)
{
    hpack_encoder_t *enc = hpack_encoder_create(
        nullptr, encoder_cap(o, o.table_size), nullptr);
    if (enc == nullptr) {
        std::cerr << "hpack: cannot create an encoder (table size "
                  << encoder_cap(o, o.table_size) << ")\n";
        return 1;
    }
    if (o.table_size != HPACK_DEFAULT_TABLE_SIZE) {
        int rc = hpack_encoder_set_peer_table_size(enc, o.table_size);
        if (rc != HPACK_OK) {
            std::cerr << "hpack: --table-size " << o.table_size << ": "
                      << describe_error(rc) << "\n";
            hpack_encoder_destroy(enc);
            return 1;
        }
    }
    HeaderList list;
    std::string first_line;
    auto flush = [&]() -> int {
        if (list.empty()) {
            return 0;
        }
        hpack_stats_t before, after;
        hpack_encoder_stats(enc, &before);
        std::vector<uint8_t> wire;
        int rc = story::encode_block(enc, list, &wire);
        if (rc != HPACK_OK) {
            std::cerr << "hpack: " << first_line << ": cannot encode: "
                      << describe_error(rc) << "\n";
            return 1;
        }
        std::cout << hex::encode(wire) << "\n";
        if (o.verbose) {
            hpack_encoder_stats(enc, &after);
            std::cout << "# " << count(wire.size(), "octet", "octets")
                      << " for " << count(list.size(), "field", "fields")
                      << " of "
                      << count(story::plain_size(list), "octet", "octets")
                      << "\n"
                      << table_state(hpack_encoder_table_entries(enc),
                                     hpack_encoder_table_size(enc), before,
                                     after)
                      << "\n";
        }
        list.clear();
        return 0;
    };
    int status = for_each_line(o.files, [&](const std::string &line,
                                            const std::string &where) {
        if (line.empty()) {
            return flush();
        }
        /* A pseudo-header's name starts with ':'; the separator is the
         * first ':' after it. */
        size_t colon = line.find(':', line[0] == ':' ? 1 : 0);
        if (colon == std::string::npos || colon == 0) {
            std::cerr << "hpack: " << where
                      << ": expected \"name: value\", got \"" << line
                      << "\"\n";
            return 1;
        }
        size_t v = colon + 1;
        if (v < line.size() && line[v] == ' ') {
            v++;
        }
        Header h;
        std::string err;
        if (!unescape(line.substr(0, colon), 0, &h.name, &err)
            || !unescape(line.substr(v), v, &h.value, &err))
        {
            std::cerr << "hpack: " << where << ": " << err << "\n";
            return 1;
        }
        for (char &c : h.name) {
            c = char(std::tolower((unsigned char) c));
        }
        if (list.empty()) {
            first_line = where;
        }
        list.push_back(std::move(h));
        return 0;
    });
    if (status == 0) {
        status = flush();
    }
    hpack_encoder_destroy(enc);
    return status;
}


/* ------------------------------------------------------- story files */

int load_one_story(const std::string &cmd, const Options &o, Story *s)
{
    if (o.files.size() != 1) {
        return usage_error(cmd + " takes exactly one STORY.json");
    }
    std::string err;
    std::string path = o.files[0];
    std::string text;
    if (path == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin),
                    std::istreambuf_iterator<char>());
        path = "<stdin>";
        if (!story::parse(text, s, &err)) {
            std::cerr << "hpack: " << path << ": " << err << "\n";
            return 1;
        }
        return 0;
    }
    if (!story::load(path, s, &err)) {
        std::cerr << "hpack: " << err << "\n";
        return 1;
    }
    return 0;
}

int cmd_decode_json(const Options &o)
{
    Story in;
    int status = load_one_story("decode-json", o, &in);
    if (status != 0) {
        return status;
    }
    const std::string path = o.files[0] == "-" ? "<stdin>" : o.files[0];
    hpack_decoder_t *dec = hpack_decoder_create(nullptr, o.table_size);
    if (dec == nullptr) {
        std::cerr << "hpack: cannot create a decoder\n";
        return 1;
    }
    Story out;
    out.description = in.description;
    out.context = in.context;
    size_t checked = 0, mismatched = 0;
    for (const Case &c : in.cases) {
        std::string where = path + ": seqno " + std::to_string(c.seqno);
        if (!c.has_wire) {
            std::cerr << "hpack: " << where << ": no \"wire\" to decode "
                      << "(encode-json encodes a raw-data story)\n";
            status = 1;
            break;
        }
        if (c.has_table_size) {
            int rc = hpack_decoder_set_settings_table_size(dec, c.table_size);
            if (rc != HPACK_OK) {
                std::cerr << "hpack: " << where << ": header_table_size "
                          << c.table_size << ": " << describe_error(rc)
                          << "\n";
                status = 1;
                break;
            }
        }
        Case d = c;
        int rc = story::decode_block(dec, c.wire, &d.headers);
        if (rc != HPACK_OK) {
            std::cerr << "hpack: " << where << ": " << describe_error(rc)
                      << " after " << d.headers.size() << " fields\n";
            status = 1;
            break;
        }
        d.has_headers = true;
        if (c.has_headers) {
            checked++;
            std::string diff = story::diff(c.headers, d.headers);
            if (!diff.empty()) {
                std::cerr << "hpack: " << where << ": mismatch: " << diff
                          << "\n";
                mismatched++;
                status = 1;
            }
        }
        out.cases.push_back(std::move(d));
    }
    std::cout << story::to_json(out);
    if (o.verbose) {
        hpack_stats_t st;
        hpack_decoder_stats(dec, &st);
        std::cerr << "hpack: " << path << ": " << out.cases.size() << " of "
                  << in.cases.size() << " cases decoded, " << checked
                  << " checked, " << mismatched << " mismatched; "
                  << st.wire_bytes << " wire octets for " << st.plain_bytes
                  << " octets of headers\n";
    }
    hpack_decoder_destroy(dec);
    return status;
}

int cmd_encode_json(const Options &o)
{
    Story in;
    int status = load_one_story("encode-json", o, &in);
    if (status != 0) {
        return status;
    }
    const std::string path = o.files[0] == "-" ? "<stdin>" : o.files[0];
    size_t largest = o.table_size;
    for (const Case &c : in.cases) {
        if (c.has_table_size) {
            largest = std::max<size_t>(largest, c.table_size);
        }
    }
    size_t cap = encoder_cap(o, largest);
    hpack_encoder_t *enc = hpack_encoder_create(nullptr, cap, nullptr);
    if (enc == nullptr) {
        std::cerr << "hpack: cannot create an encoder (table size " << cap
                  << ")\n";
        return 1;
    }
    Story out;
    out.description = "Encoded by hpack (RFC 7541 codec for nginx): one "
                      "encoder per story, table cap "
                      + std::to_string(cap) + " octets.";
    out.context = in.context;
    uint64_t wire = 0, plain = 0;
    for (size_t i = 0; i < in.cases.size(); i++) {
        Case c = in.cases[i];
        std::string where = path + ": seqno " + std::to_string(c.seqno);
        if (!c.has_headers) {
            std::cerr << "hpack: " << where << ": no \"headers\" to encode\n";
            status = 1;
            break;
        }
        /* A start size other than the default is recorded on the first
         * case, so decoders of the output apply it. */
        if (i == 0 && !c.has_table_size
            && o.table_size != HPACK_DEFAULT_TABLE_SIZE)
        {
            c.has_table_size = true;
            c.table_size = o.table_size;
        }
        if (c.has_table_size) {
            int rc = hpack_encoder_set_peer_table_size(enc, c.table_size);
            if (rc != HPACK_OK) {
                std::cerr << "hpack: " << where << ": header_table_size "
                          << c.table_size << ": " << describe_error(rc)
                          << "\n";
                status = 1;
                break;
            }
        }
        int rc = story::encode_block(enc, c.headers, &c.wire);
        if (rc != HPACK_OK) {
            std::cerr << "hpack: " << where << ": cannot encode: "
                      << describe_error(rc) << "\n";
            status = 1;
            break;
        }
        c.has_wire = true;
        wire += c.wire.size();
        plain += story::plain_size(c.headers);
        out.cases.push_back(std::move(c));
    }
    std::cout << story::to_json(out);
    if (o.verbose) {
        std::cerr << "hpack: " << path << ": " << out.cases.size()
                  << " cases, " << wire << " wire octets for " << plain
                  << " octets of headers";
        if (plain != 0) {
            std::cerr << " (" << double(wire) / double(plain) << ")";
        }
        std::cerr << "\n";
    }
    hpack_encoder_destroy(enc);
    return status;
}


/* ------------------------------------------------------ QPACK decode */

/* The whole of the file *label names, or of standard input for "-" (then
 * *label becomes "<stdin>", for messages); false after saying why not. */
bool read_input(std::string *label, std::string *out)
{
    if (*label == "-") {
        out->assign(std::istreambuf_iterator<char>(std::cin),
                    std::istreambuf_iterator<char>());
        *label = "<stdin>";
        return true;
    }
    std::string err;
    if (!story::read_file(*label, out, &err)) {
        std::cerr << "hpack: " << err << ": " << std::strerror(errno) << "\n";
        return false;
    }
    return true;
}

/* hpack qpack-decode [--table-capacity N] [--blocked-streams N] FILE */
int cmd_qpack_decode(int argc, char **argv)
{
    const std::string cmd = "qpack-decode";
    size_t capacity = HPACK_DEFAULT_TABLE_SIZE;
    size_t blocked = 100;
    std::vector<std::string> files;
    int rc = parse_args(cmd, argc, argv,
                        {{"--table-capacity", &capacity, nullptr},
                         {"--blocked-streams", &blocked, nullptr}},
                        "number", nullptr, &files);
    if (rc != 0) {
        return rc;
    }
    if (files.size() != 1) {
        return usage_error(cmd + " takes exactly one FILE");
    }
    std::string octets, label = files[0];
    if (!read_input(&label, &octets)) {
        return 1;
    }
    return hpack_tools::qif::run_decode(label, octets, capacity, blocked,
                                        std::cout, std::cerr);
}


/* ------------------------------------------------------ QPACK encode */

/* hpack qpack-encode [--table-capacity N] [--blocked-streams N]
 *     [--max-table-capacity N] [--ack-immediate|--no-ack] IN.qif OUT */
int cmd_qpack_encode(int argc, char **argv)
{
    const std::string cmd = "qpack-encode";
    hpack_tools::qif::EncodeSettings s;
    bool max_set = false;
    std::vector<std::string> files;
    int rc = parse_args(cmd, argc, argv,
                        {{"--table-capacity", &s.capacity, nullptr},
                         {"--blocked-streams", &s.blocked, nullptr},
                         {"--max-table-capacity", &s.max_capacity, &max_set}},
                        "number", nullptr, &files,
                        {{"--ack-immediate", &s.ack, true},
                         {"--no-ack", &s.ack, false}});
    if (rc != 0) {
        return rc;
    }
    if (files.size() != 2) {
        return usage_error(cmd + " takes IN.qif and OUT");
    }
    if (!max_set) {
        s.max_capacity = s.capacity;
    }
    std::string text, label = files[0];
    if (!read_input(&label, &text)) {
        return 1;
    }
    std::vector<uint8_t> octets;
    rc = hpack_tools::qif::run_encode(label, text, s, &octets, std::cerr);
    if (rc != 0) {
        return rc;
    }
    const char *data = reinterpret_cast<const char *>(octets.data());
    const std::streamsize len = std::streamsize(octets.size());
    if (files[1] == "-") {
        std::cout.write(data, len);
        std::cout.flush();
        if (!std::cout) {
            std::cerr << "hpack: cannot write to standard output\n";
            return 1;
        }
        return 0;
    }
    std::ofstream out(files[1], std::ios::binary | std::ios::trunc);
    if (out) {
        out.write(data, len);
        out.close();
    }
    if (!out) {
        std::cerr << "hpack: cannot write " << files[1] << ": "
                  << std::strerror(errno) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        return usage_error("a command is required");
    }
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        std::cout << kUsage << kHelp;
        return 0;
    }
    if (cmd == "qpack-decode") {
        int rc = cmd_qpack_decode(argc - 2, argv + 2);
        return rc < 0 ? 0 : rc;
    }
    if (cmd == "qpack-encode") {
        int rc = cmd_qpack_encode(argc - 2, argv + 2);
        return rc < 0 ? 0 : rc;
    }
    bool encoder = cmd == "encode" || cmd == "encode-json";
    if (!encoder && cmd != "decode" && cmd != "decode-json") {
        return usage_error("unknown command '" + cmd + "'");
    }
    Options o;
    int rc = parse_options(cmd, argc - 2, argv + 2, encoder, &o);
    if (rc != 0) {
        return rc < 0 ? 0 : rc;
    }
    if (cmd == "decode") {
        return cmd_decode(o);
    }
    if (cmd == "encode") {
        return cmd_encode(o);
    }
    if (cmd == "decode-json") {
        return cmd_decode_json(o);
    }
    return cmd_encode_json(o);
}
