// codec_bench: our HPACK codec against libnghttp2 and nginx's stock Huffman
// functions, and our QPACK codec against libnghttp3, side by side in one
// process (make bench-codec).
//
// Cases (every name is group/operation/mode/implementation):
//   request, response   one typical header block, decoded and encoded
//   corpus              hpack-test-case raw-data stories as one stream
//   huffman             4 KiB of header values, hex digits, random printable
//   qpack               the request and the response as QPACK sections
//                       (groups qpack-request, qpack-response), against
//                       libnghttp3 (codec_bench_qpack.cc)
//
// COLD: a fresh context per block (create, code it, destroy).  WARM: one
// long-lived context; decode then takes the steady-state wire the warmed
// encoder produced, which leaves the decoder's table as it found it (see
// warm_wire()), so the same bytes stay valid for every iteration.
//
// Nothing is timed before it was verified: every wire decodes, with our
// decoder and with nghttp2's, to exactly its header list; every Huffman
// output equals the input and nginx's output equals ours.  Warm decoders
// are verified again after timing.  A mismatch ends the run with a message.
//
// Without Google Benchmark: --callgrind-driver=GROUP[,GROUP] runs each case
// of those groups (whose name contains --callgrind-filter's text, if given)
// --callgrind-iters times between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT(case), for instruction counts per operation
// (make bench-codec-callgrind).
//
// --paired=GROUP[,GROUP] times each case X/ours against X/nginx,
// X/nghttp2 or X/nghttp3 in alternating slices and writes the fastest
// slices and the per-pair ratios to --paired-out's JSON (make bench-codec;
// see "paired slices" below).
//
// --corpus-out=FILE measures, untimed, the octets on the wire of whole
// connections (hpack-test-case stories and QIF request lists) for ours,
// nghttp2 and a bound, and the memory our encoder holds at each table size,
// and writes them to FILE as JSON (codec_bench_octets.cc; make
// bench-corpus).
//
// --qpack-out=FILE measures, untimed, the allocations per QPACK section of
// ours and nghttp3, and the octets on the wire (sections and encoder
// stream) of the QIF request lists and the response stories through both
// QPACK encoders (codec_bench_qpack_octets.cc; make bench-qpack-octets).
//
// This file holds the case list, the drivers and main(); the cases are
// made in codec_bench_blocks.cc, codec_bench_huffman.cc and
// codec_bench_qpack.cc, and the adapters to the libraries are in
// codec_bench.h, codec_bench_codecs.cc and codec_bench_qpack.h.

#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "codec_bench.h"
#include "codec_bench_qpack.h"
#include "huffman.h"

namespace codec_bench {

std::vector<Case> g_cases;

void add_case(const std::string &name, double blocks, double wire,
              double plain, std::function<uint64_t()> op,
              std::function<void()> after)
{
    Case c;
    c.name = name;
    c.op = std::move(op);
    c.after = std::move(after);
    c.blocks = blocks;
    c.wire_bytes = wire;
    c.plain_bytes = plain;
    g_cases.push_back(std::move(c));
}

// The processor the figures come from: the aims' verdicts differ between
// processors (their L1 data cache above all: the Huffman encoder's pair
// table and the decoder's 32 KiB table), so every result names its own.
// "model name, family F model M, L1d N KiB" from /proc/cpuinfo and
// sysconf(); what cannot be read is left out.
std::string cpu_description()
{
    std::string name, family, model;
    if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
        char line[512];
        while (std::fgets(line, sizeof(line), f) != nullptr) {
            const char *colon = std::strchr(line, ':');
            if (colon == nullptr) {
                if (!name.empty()) {
                    break;      // the first processor's block ended
                }
                continue;
            }
            std::string key(line, static_cast<size_t>(colon - line));
            key.erase(key.find_last_not_of(" \t") + 1);
            std::string value(colon + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            value.erase(value.find_last_not_of(" \t\n") + 1);
            if (key == "model name" && name.empty()) {
                name = value;
            } else if (key == "cpu family" && family.empty()) {
                family = value;
            } else if (key == "model" && model.empty()) {
                model = value;
            }
        }
        std::fclose(f);
    }
    std::string d = name.empty() ? "unknown processor" : name;
    if (!family.empty() && !model.empty()) {
        d += ", family " + family + " model " + model;
    }
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (l1d > 0) {
        d += ", L1d " + std::to_string(l1d / 1024) + " KiB";
    }
#endif
    return d;
}

}  // namespace codec_bench

using namespace codec_bench;

namespace {

// ---------------------------------------------------------------- drivers

void build_cases(const std::vector<std::string> &groups,
                 const std::string &corpus)
{
    auto want = [&groups](const char *g) {
        return groups.empty()
               || std::find(groups.begin(), groups.end(), g) != groups.end();
    };
    if (want("request")) {
        add_stream_cases("request", single(kRequest), true);
    }
    if (want("response")) {
        add_stream_cases("response", single(kResponse), false);
    }
    if (want("corpus")) {
        add_corpus_cases(corpus);
    }
    if (want("huffman")) {
        add_huffman_cases("values", header_values_text());
        add_huffman_cases("hex", hex_text());
        add_huffman_cases("printable", printable_text());
    }
    if (want("qpack")) {
        add_qpack_cases();
    }
}

void run_benchmark(benchmark::State &state, const Case &c)
{
    uint64_t sink = 0;
    for (auto _ : state) {
        sink += c.op();
    }
    benchmark::DoNotOptimize(sink);
    if (c.after) {
        c.after();
    }
    // Per operation, constant: the report divides times by them.
    state.counters["blocks"] = c.blocks;
    state.counters["wire_B"] = c.wire_bytes;
    state.counters["plain_B"] = c.plain_bytes;
    state.SetBytesProcessed(static_cast<int64_t>(
        static_cast<double>(state.iterations()) * c.plain_bytes));
}

volatile uint64_t g_sink;

int run_callgrind_driver(const std::string &filter, long iters)
{
    int ran = 0;
    for (const Case &c : g_cases) {
        if (c.name.find(filter) == std::string::npos) {
            continue;
        }
        // The report reads the count and the per-operation sizes from the
        // dump's name.
        char sizes[96];
        std::snprintf(sizes, sizeof(sizes), " x%ld blocks=%.0f wire=%.0f "
                      "plain=%.0f", iters, c.blocks, c.wire_bytes,
                      c.plain_bytes);
        const std::string dump = c.name + sizes;
        uint64_t sink = c.op() + c.op();    // warm caches and allocator
        CALLGRIND_ZERO_STATS;
        for (long i = 0; i < iters; i++) {
            sink += c.op();
        }
        CALLGRIND_DUMP_STATS_AT(dump.c_str());
        g_sink = sink;
        if (c.after) {
            c.after();
        }
        std::printf("callgrind-driver: %s x %ld\n", c.name.c_str(), iters);
        ran++;
    }
    if (ran == 0) {
        die("--callgrind-driver: no case matches");
    }
    if (!RUNNING_ON_VALGRIND) {
        std::fprintf(stderr, "codec_bench: not under valgrind: the driver "
                     "ran but counted nothing (make bench-codec-callgrind)\n");
    }
    return 0;
}

// ------------------------------------------------------------ paired slices
//
// The machine this runs on is shared: the same code takes 2,200 ns or
// 3,300 ns for 4 KiB in runs minutes apart, and the two sides of a ratio do
// not slow down alike, so the medians of Google Benchmark's repetitions
// (each side sampled over different seconds) move the aims' ratios by 20%
// from run to run.  Here each of our cases alternates with its reference
// (nginx -O2 for Huffman, nghttp2 for blocks) in slices of about 100 us,
// thousands of times, the order flipped every pair.  Noise only adds time,
// so each side's fastest slice is its speed on a quiet machine; the ratio
// of the two, over a few processes (make bench-codec runs three: one
// process can come out apart from the others), is the verdict, and the
// median of the per-pair ratios is shown beside it.

struct PairedResult {
    std::string         ours, other;
    std::vector<double> a, b;   // ns per operation, one per slice
    std::vector<double> q;      // a / b, one per pair
};

// Operations per slice of about target_ns, from a first timing.
long slice_ops(const Case &c, double target_ns)
{
    using clock = std::chrono::steady_clock;
    uint64_t sink = 0;
    long ops = 0;
    const auto t0 = clock::now();
    double elapsed = 0;
    while (elapsed < target_ns) {
        sink += c.op();
        ops++;
        elapsed = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    }
    g_sink = sink;
    return std::max(1L, ops);
}

double time_slice(const Case &c, long ops)
{
    using clock = std::chrono::steady_clock;
    uint64_t sink = 0;
    const auto t0 = clock::now();
    for (long i = 0; i < ops; i++) {
        sink += c.op();
    }
    const auto t1 = clock::now();
    g_sink = sink;
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / ops;
}

double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string json_escape(const std::string &s)
{
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
        }
        out += ch;
    }
    return out;
}

int run_paired_driver(double seconds, const std::string &out_path,
                      const std::string &codec_id)
{
    std::vector<PairedResult> results;
    for (const Case &c : g_cases) {
        const std::string suffix = "/ours";
        if (c.name.size() < suffix.size()
            || c.name.compare(c.name.size() - suffix.size(), suffix.size(),
                              suffix) != 0) {
            continue;
        }
        const std::string prefix = c.name.substr(0, c.name.size() - 4);
        const Case *ref = nullptr;
        for (const Case &r : g_cases) {
            if (r.name == prefix + "nginx" || r.name == prefix + "nghttp2"
                || r.name == prefix + "nghttp3") {
                ref = &r;
            }
        }
        if (ref == nullptr) {
            continue;
        }
        const long na = slice_ops(c, 100e3), nb = slice_ops(*ref, 100e3);
        PairedResult r{c.name, ref->name, {}, {}, {}};
        using clock = std::chrono::steady_clock;
        const auto end = clock::now() + std::chrono::duration<double>(seconds);
        for (bool flip = false; clock::now() < end || r.a.size() < 2; flip = !flip) {
            if (flip) {
                r.b.push_back(time_slice(*ref, nb));
                r.a.push_back(time_slice(c, na));
            } else {
                r.a.push_back(time_slice(c, na));
                r.b.push_back(time_slice(*ref, nb));
            }
        }
        for (const Case *v : {&c, ref}) {
            if (v->after) {
                v->after();
            }
        }
        for (size_t i = 0; i < r.a.size(); i++) {
            r.q.push_back(r.a[i] / r.b[i]);
        }
        std::printf("paired: %-36s %-9s %6zu pairs  fastest %9.0f / %9.0f ns"
                    " = %.3f  median pair %.3f\n", c.name.c_str(),
                    ref->name.substr(prefix.size()).c_str(), r.q.size(),
                    quantile(r.a, 0), quantile(r.b, 0),
                    quantile(r.a, 0) / quantile(r.b, 0), quantile(r.q, 0.5));
        results.push_back(std::move(r));
    }
    if (results.empty()) {
        die("--paired: no case has a reference to pair with");
    }
    FILE *f = std::fopen(out_path.c_str(), "w");
    if (f == nullptr) {
        die("--paired-out=" + out_path + ": cannot write");
    }
    std::fprintf(f, "{\n  \"codec\": \"%s\",\n  \"huffman_isa\": \"%s\",\n"
                 "  \"cpu\": \"%s\",\n"
                 "  \"seconds_per_pair\": %g,\n  \"pairs\": [\n",
                 json_escape(codec_id).c_str(),
                 hpack::huffman_isa() == hpack::HuffmanIsa::bmi2 ? "bmi2"
                                                                 : "generic",
                 json_escape(cpu_description()).c_str(), seconds);
    for (size_t i = 0; i < results.size(); i++) {
        const PairedResult &r = results[i];
        std::fprintf(f, "    {\"ours\": \"%s\", \"other\": \"%s\", "
                     "\"slices\": %zu, \"ours_fastest_ns\": %.1f, "
                     "\"other_fastest_ns\": %.1f, \"ours_median_ns\": %.1f, "
                     "\"other_median_ns\": %.1f, \"pair_ratio_p10\": %.4f, "
                     "\"pair_ratio_median\": %.4f, \"pair_ratio_p90\": %.4f}%s\n",
                     json_escape(r.ours).c_str(), json_escape(r.other).c_str(),
                     r.q.size(), quantile(r.a, 0), quantile(r.b, 0),
                     quantile(r.a, 0.5), quantile(r.b, 0.5), quantile(r.q, 0.1),
                     quantile(r.q, 0.5), quantile(r.q, 0.9),
                     i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
        die("--paired-out=" + out_path + ": write failed");
    }
    return 0;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t end = s.find(sep, start);
        std::string part = s.substr(start, end - start);
        if (!part.empty()) {
            out.push_back(part);
        }
        if (end == std::string::npos) {
            return out;
        }
        start = end + 1;
    }
}

void usage()
{
    std::printf(
        "codec_bench [Google Benchmark flags] [--corpus=DIR]\n"
        "codec_bench --callgrind-driver=GROUP[,GROUP] [--callgrind-filter=TEXT]"
        " [--callgrind-iters=N]\n"
        "codec_bench --paired=GROUP[,GROUP] [--paired-seconds=S]"
        " --paired-out=FILE [--paired-codec=ID]\n"
        "      each case X/ours against X/nginx or X/nghttp2 in alternating"
        " slices\n"
        "codec_bench --corpus-out=FILE [--corpus=DIR] [--qifs=DIR]"
        " [--corpus-codec=ID]\n"
        "      octets on the wire of whole connections, ours, nghttp2 and"
        " the bound,\n"
        "      and our encoder's memory against its table size\n"
        "      (untimed; --qifs default ../shared/data/qifs)\n"
        "codec_bench --qpack-out=FILE [--corpus=DIR] [--qifs=DIR]"
        " [--corpus-codec=ID]\n"
        "            [--qpack-sides=ours|nghttp3|ours,nghttp3]"
        " [--qpack-conns=TEXT[,TEXT]]\n"
        "            [--qpack-command=TEXT]\n"
        "      QPACK, untimed: allocations per section of ours and nghttp3,\n"
        "      octets on the wire of the QIF lists and response stories\n"
        "      (--qpack-sides: which encoders; --qpack-conns: only the\n"
        "      connections whose name contains one TEXT)\n"
        "codec_bench --list-cases\n"
        "  --huffman-isa=generic|bmi2  which build of the Huffman code runs\n"
        "      (default: BMI2 when the CPU has it, as in the library)\n"
        "  groups: request response corpus huffman qpack\n"
        "  --corpus=DIR  hpack-test-case checkout (default "
        "$HPACK_TEST_CASE_DIR or ../shared/data/hpack-test-case)\n");
}

}  // namespace

int main(int argc, char **argv)
{
    std::string corpus;
    std::string driver;
    std::string driver_filter;
    bool driver_mode = false;
    std::string paired;
    std::string paired_out;
    std::string paired_codec = "unknown";
    double paired_seconds = 2;
    std::string corpus_out;
    std::string corpus_codec = "unknown";
    std::string qifs;
    std::string qpack_out;
    QpackRunOptions qpack;
    bool list = false;
    long iters = 20;
    std::vector<char *> rest = {argv[0]};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&a](const char *flag) -> const char * {
            size_t n = std::strlen(flag);
            return a.compare(0, n, flag) == 0 ? a.c_str() + n : nullptr;
        };
        if (const char *v = value("--corpus=")) {
            corpus = v;
        } else if (const char *v = value("--callgrind-driver=")) {
            driver = v;
            driver_mode = true;
        } else if (const char *v = value("--paired=")) {
            paired = v;
        } else if (const char *v = value("--paired-seconds=")) {
            paired_seconds = std::strtod(v, nullptr);
            if (!(paired_seconds > 0)) {
                die("--paired-seconds must be positive");
            }
        } else if (const char *v = value("--paired-out=")) {
            paired_out = v;
        } else if (const char *v = value("--paired-codec=")) {
            paired_codec = v;
        } else if (const char *v = value("--corpus-out=")) {
            corpus_out = v;
        } else if (const char *v = value("--corpus-codec=")) {
            corpus_codec = v;
        } else if (const char *v = value("--qifs=")) {
            qifs = v;
        } else if (const char *v = value("--qpack-out=")) {
            qpack_out = v;
        } else if (const char *v = value("--qpack-command=")) {
            qpack.command = v;
        } else if (const char *v = value("--qpack-sides=")) {
            const std::vector<std::string> sides = split(v, ',');
            qpack.ours = qpack.nghttp3 = false;
            for (const std::string &side : sides) {
                if (side == "ours") {
                    qpack.ours = true;
                } else if (side == "nghttp3") {
                    qpack.nghttp3 = true;
                } else {
                    die("--qpack-sides: ours, nghttp3 or both");
                }
            }
            if (sides.empty()) {
                die("--qpack-sides: ours, nghttp3 or both");
            }
        } else if (const char *v = value("--qpack-conns=")) {
            qpack.conns = split(v, ',');
        } else if (const char *v = value("--callgrind-filter=")) {
            driver_filter = v;
        } else if (const char *v = value("--callgrind-iters=")) {
            iters = std::strtol(v, nullptr, 10);
            if (iters <= 0) {
                die("--callgrind-iters must be positive");
            }
        } else if (const char *v = value("--huffman-isa=")) {
            const std::string isa = v;
            if (isa != "generic" && isa != "bmi2") {
                die("--huffman-isa: generic or bmi2");
            }
            if (!hpack::huffman_set_isa(isa == "bmi2" ? hpack::HuffmanIsa::bmi2
                                                      : hpack::HuffmanIsa::generic)) {
                die("--huffman-isa=" + isa + ": this CPU does not have it");
            }
        } else if (a == "--list-cases") {
            list = true;
        } else if (a == "--help" || a == "-h") {
            usage();
            rest.push_back(argv[i]);
        } else {
            rest.push_back(argv[i]);
        }
    }

    if (driver_mode && !paired.empty()) {
        die("--callgrind-driver and --paired: one at a time");
    }
    if (!paired.empty() && paired_out.empty()) {
        die("--paired needs --paired-out=FILE");
    }
    if (!qpack_out.empty()) {
        if (driver_mode || !paired.empty() || list || !corpus_out.empty()) {
            die("--qpack-out and --callgrind-driver, --paired, --corpus-out "
                "or --list-cases: one at a time");
        }
        qpack.story_dir = corpus;
        qpack.qif_dir = qifs;
        qpack.out = qpack_out;
        qpack.codec_id = corpus_codec;
        if (qpack.command.empty()) {
            for (int i = 0; i < argc; i++) {
                qpack.command += (i ? " " : "") + std::string(argv[i]);
            }
        }
        return run_qpack(qpack);
    }
    if (!corpus_out.empty()) {
        if (driver_mode || !paired.empty() || list) {
            die("--corpus-out and --callgrind-driver, --paired or "
                "--list-cases: one at a time");
        }
        return run_corpus_octets(corpus, qifs, corpus_out, corpus_codec);
    }
    build_cases(driver_mode ? split(driver, ',')
                : !paired.empty() ? split(paired, ',')
                : std::vector<std::string>(),
                corpus);

    if (list) {
        for (const Case &c : g_cases) {
            std::printf("%s\n", c.name.c_str());
        }
        return 0;
    }
    if (driver_mode) {
        return run_callgrind_driver(driver_filter, iters);
    }
    if (!paired.empty()) {
        return run_paired_driver(paired_seconds, paired_out, paired_codec);
    }

    for (const Case &c : g_cases) {
        benchmark::RegisterBenchmark(c.name.c_str(),
                                     [&c](benchmark::State &st) {
                                         run_benchmark(st, c);
                                     })
            ->Unit(benchmark::kNanosecond)
            // Noise on a shared machine only adds time: the fastest
            // repetition is reported beside the median.
            ->ComputeStatistics("min", [](const std::vector<double> &v) {
                return *std::min_element(v.begin(), v.end());
            });
    }
    int bargc = static_cast<int>(rest.size());
    benchmark::Initialize(&bargc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) {
        return 1;
    }
    benchmark::AddCustomContext("codec_bench.verified",
                                "every timed input checked before timing");
    benchmark::AddCustomContext("codec_bench.corpus", g_corpus_note);
    benchmark::AddCustomContext("codec_bench.cpu", cpu_description());
    benchmark::AddCustomContext("codec_bench.huffman_isa",
                                hpack::huffman_isa() == hpack::HuffmanIsa::bmi2
                                    ? "bmi2" : "generic");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

