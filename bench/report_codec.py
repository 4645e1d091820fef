#!/usr/bin/python3
"""Ratio report of codec_bench (make bench-codec, make bench-codec-callgrind).

Usage:
  report_codec.py RESULTS.json            Google Benchmark JSON
                                          (--benchmark_out_format=json)
  report_codec.py --callgrind DIR [--annotate] [--codec=ID]
                                          callgrind dumps of
                                          codec_bench --callgrind-driver
  report_codec.py --paired FILE...        codec_bench --paired's JSON, one
                                          file per process
  report_codec.py --corpus FILE           codec_bench --corpus-out's JSON:
                                          octets on the wire, deterministic
  report_codec.py --qpack FILE [--gbench=RESULTS.json] [--paired FILE...]
                                          codec_bench --qpack-out's JSON:
                                          QPACK against libnghttp3, its
                                          times from the other two when
                                          given

Prints Markdown: every case per operation, then the ratios ours/nghttp2 and
ours/nginx against the aims of the benchmark issue with PASS or MISS.  Wall
clock uses the median over repetitions (the run itself when there was one)
of CPU time, and shows beside it the ratio of the fastest repetitions (noise
on a shared machine only adds time).  The aims are judged on the paired run
(--paired): each of our cases alternates with its reference in ~100 us
slices for seconds, in a few processes, and the median over the processes
of the ratio of the two fastest slices is the verdict, with the median of
the per-pair ratios beside it; Google Benchmark's medians move by up to 20%
between runs on this machine, those ratios by 1-5%, but for the odd process
that comes out apart from the others.
The corpus octets compare ours with nghttp2 and with a bound, judge the
octet target on the response stories, and set our octets against the memory
our encoder holds at each table size.
The QPACK section compares ours with libnghttp3: time per section (from
the Google Benchmark and paired runs), allocations per section (the target:
none in the steady state), and the octets on the wire of the corpora
(sections and encoder stream) at blocked streams 0 and 100, with and
without acknowledgments.
Callgrind uses instructions (Ir) per operation, which do not depend on the
machine's load.  --annotate adds, for every aim the instruction counts miss,
callgrind_annotate's function list of our case and its hottest source lines
in codec/src (inlined code included).

Exit status 0 whatever the results (the report is the product); 1 when the
input cannot be read.
"""

import glob
import json
import os
import re
import statistics
import subprocess
import sys

# The aims: (kind, a, b, largest ratio ours/other that passes, text)
#   kind "block": ours / nghttp2 on case a ("group/op/mode"), b unused
#   kind "huff":  ours / nginx (-O2) on huffman/a/b (operation, input)
AIMS = [
    ("huff", "decode", "values", 1 / 4,
     "Huffman decode, header values: >= 4x faster than nginx"),
    ("huff", "decode", "printable", 1 / 4,
     "Huffman decode, random printable: >= 4x faster than nginx"),
    ("huff", "encode", "values", 1 / 2.5,
     "Huffman encode, header values: >= 2.5x faster than nginx"),
    ("huff", "encode", "hex", 1 / 2.5,
     "Huffman encode, hex digits: >= 2.5x faster than nginx"),
    ("huff", "encode", "printable", 1 / 2.5,
     "Huffman encode, random printable: >= 2.5x faster than nginx"),
    ("block", "request/decode/cold", None, 0.30,
     "Request block decode, cold: <= 0.3x nghttp2's time"),
    ("block", "request/decode/warm", None, 0.20,
     "Request block decode, warm: <= 0.2x nghttp2's time"),
    ("block", "request/encode/cold", None, 0.33,
     "Request block encode, cold: <= 0.33x nghttp2's time"),
    ("block", "request/encode/warm", None, 0.50,
     "Request block encode, warm: <= 0.5x nghttp2's time"),
]

GROUP_TEXT = {
    "request": "request (11 fields)",
    "response": "response (12 fields)",
    "corpus": "corpus stream",
}

MODE_TEXT = {
    "decode/cold": "decode, cold",
    "decode/warm": "decode, warm",
    "decode-ngwire/warm": "decode, warm, nghttp2's wire (info)",
    "encode/cold": "encode, cold",
    "encode/warm": "encode, warm",
}


class Result:
    def __init__(self, value, blocks, wire, plain):
        self.value = value          # ns (wall) or Ir (callgrind) per op
        self.blocks = blocks
        self.wire = wire
        self.plain = plain


def read_gbench(path):
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    medians = {}
    mins = {}
    unit_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        t = b["cpu_time"] * unit_ns[b.get("time_unit", "ns")]
        r = Result(t, b.get("blocks", 0), b.get("wire_B", 0),
                   b.get("plain_B", 0))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = r
            elif b.get("aggregate_name") == "min":
                mins[name] = r
        else:
            runs.setdefault(name, []).append(r)
    out = dict(medians)
    lo = dict(mins)
    for name, rs in runs.items():
        rs.sort(key=lambda r: r.value)
        out.setdefault(name, rs[len(rs) // 2])
        lo.setdefault(name, rs[0])
    context = doc.get("context", {})
    return out, lo, context


DUMP_TRIGGER = re.compile(r"^desc: Trigger: Client Request: (\S+) x(\d+)"
                          r" blocks=(\d+) wire=(\d+) plain=(\d+)$")


def read_callgrind(directory):
    out = {}
    files = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.out.*"))):
        name = iters = total = None
        with open(path, errors="replace") as f:
            for line in f:
                m = DUMP_TRIGGER.match(line.rstrip("\n"))
                if m:
                    name, iters = m.group(1), int(m.group(2))
                    sizes = [float(m.group(i)) for i in (3, 4, 5)]
                elif line.startswith("summary:"):
                    # The events of this dump.  Not the trailing totals:,
                    # which can count more than the interval since the
                    # zero (with the corpus group driven too, 1.8 times
                    # the cold request decode's).
                    total = int(line.split()[1])
                elif line.startswith("totals:") and total is None:
                    total = int(line.split()[1])
        if name is None or total is None:
            continue
        out[name] = Result(total / iters, *sizes)
        files[name] = path
    return out, files


def fmt(v, digits=0):
    if v is None:
        return "-"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def ratio_text(r, digits=2):
    """Three digits for the paired ratios, which repeat to about 1%."""
    if r is None:
        return "-"
    if r < 1:
        return f"{r:.{digits}f} ({1 / r:.1f}x faster)"
    return f"{r:.{digits}f} ({r:.1f}x slower)"


def ratio(res, mine, other):
    o, t = res.get(mine), res.get(other)
    return o.value / t.value if o and t else None


def min_cell(lo, mine, other):
    """The ratio of the fastest repetitions, when there were several."""
    if lo is None:
        return ""
    r = ratio(lo, mine, other)
    return f" | {r:.2f}" if r is not None else " | -"


def verdict(ratio, aim):
    if ratio is None:
        return "n/a"
    return "PASS" if ratio <= aim else "MISS"


def block_table(res, unit, lines, lo=None):
    if not any(k.startswith(("request/", "response/", "corpus/"))
               for k in res):
        return
    extra = " | ours/nghttp2, fastest runs" if lo is not None else ""
    lines.append(f"| block | operation | ours {unit} | nghttp2 {unit} "
                 f"| ours/nghttp2{extra} |")
    lines.append("|---|---|--:|--:|---|" + ("---|" if lo is not None
                                             else ""))
    for group in ("request", "response", "corpus"):
        for mode, text in MODE_TEXT.items():
            o = res.get(f"{group}/{mode}/ours")
            n = res.get(f"{group}/{mode}/nghttp2")
            if o is None or n is None:
                continue
            per = o.blocks if (o.blocks and group == "corpus") else 1
            label = GROUP_TEXT[group]
            if group == "corpus" and o.blocks:
                label += f", per block ({o.blocks:,.0f} blocks)"
            lines.append(f"| {label} | {text} | {fmt(o.value / per)} "
                         f"| {fmt(n.value / per)} "
                         f"| {ratio_text(o.value / n.value)}"
                         + min_cell(lo, f"{group}/{mode}/ours",
                                    f"{group}/{mode}/nghttp2") + " |")


HUFF_IMPLS = [
    ("ours", "ours: hpack_huffman_*"),
    ("ours-string", "ours: hpack_string_encode (length + code)"),
    ("nginx", "nginx -O2: ngx_http_huff_*"),
    ("nginx-O1", "nginx -O (its default): ngx_http_huff_*"),
    ("ours-block", "ours: one-literal block"),
    ("nghttp2-block", "nghttp2: one-literal block (no public Huffman API)"),
]


def huffman_tables(res, unit, per_byte, lines, lo=None):
    if not any(k.startswith("huffman/") for k in res):
        return
    if per_byte:
        lines.append(f"| input | operation | implementation | {unit}/op "
                     f"| {unit}/coded B | {unit}/plain B |")
        lines.append("|---|---|---|--:|--:|--:|")
    else:
        lines.append(f"| input | operation | implementation | {unit}/op |")
        lines.append("|---|---|---|--:|")
    for op in ("decode", "encode"):
        for inp in ("values", "hex", "printable"):
            for impl, text in HUFF_IMPLS:
                r = res.get(f"huffman/{op}/{inp}/{impl}")
                if r is None:
                    continue
                if per_byte:
                    lines.append(
                        f"| {inp} | {op} | {text} | {fmt(r.value)} "
                        f"| {fmt(r.value / r.wire, 2)} "
                        f"| {fmt(r.value / r.plain, 2)} |")
                else:
                    lines.append(f"| {inp} | {op} | {text} "
                                 f"| {fmt(r.value)} |")
    lines.append("")
    extra = " | ours/nginx -O2, fastest runs" if lo is not None else ""
    lines.append("| input | operation | ours/nginx -O2 | ours/nginx -O "
                 f"| ours/nghttp2 (one-literal blocks){extra} |")
    lines.append("|---|---|---|---|---|" + ("---|" if lo is not None
                                             else ""))
    for op in ("decode", "encode"):
        for inp in ("values", "hex", "printable"):
            def get(impl):
                return res.get(f"huffman/{op}/{inp}/{impl}")
            o, ob = get("ours"), get("ours-block")
            cells = []
            for other, mine in (("nginx", o), ("nginx-O1", o),
                                ("nghttp2-block", ob)):
                t = get(other)
                cells.append(ratio_text(mine.value / t.value)
                             if mine and t else "-")
            if all(c == "-" for c in cells):
                continue
            lines.append(f"| {inp} | {op} | " + " | ".join(cells)
                         + min_cell(lo, f"huffman/{op}/{inp}/ours",
                                    f"huffman/{op}/{inp}/nginx") + " |")


def aims_table(res, lines, what, lo=None):
    if lo is not None:
        lines.append(f"| aim | ours/other ({what}, medians) "
                     "| fastest runs | result (medians) |")
        lines.append("|---|---|---|---|")
    else:
        lines.append(f"| aim | ours/other ({what}) | result |")
        lines.append("|---|---|---|")
    misses = []
    for kind, a, b, aim, text in AIMS:
        if kind == "huff":
            mine, other = f"huffman/{a}/{b}/ours", f"huffman/{a}/{b}/nginx"
        else:
            mine, other = f"{a}/ours", f"{a}/nghttp2"
        r = ratio(res, mine, other)
        v = verdict(r, aim)
        if v == "MISS":
            misses.append((kind, a, b, text))
        lines.append(f"| {text} | {ratio_text(r)}"
                     + min_cell(lo, mine, other) + f" | {v} |")
    return misses


def hot_lines(path, prefix, top):
    """Exclusive Ir per source line of files under prefix, inlined code
    included (the callgrind dump is written uncompressed)."""
    cost = {}
    fl = cur = None
    skip_next = False
    with open(path, errors="replace") as f:
        for line in f:
            c = line[0]
            if c.isdigit() or c == "+" or c == "-":
                if skip_next:             # inclusive cost of a call
                    skip_next = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and cur and prefix in cur:
                    key = (cur, int(parts[0]))
                    cost[key] = cost.get(key, 0) + int(parts[1])
            elif line.startswith("fl="):
                fl = cur = line[3:].strip()
            elif line.startswith(("fi=", "fe=")):
                cur = line[3:].strip()
            elif line.startswith("fn="):
                cur = fl
            elif line.startswith("calls="):
                skip_next = True
    rows = sorted(cost.items(), key=lambda kv: -kv[1])[:top]
    total = sum(cost.values())
    out = []
    sources = {}
    for (path_, no), ir in rows:
        if path_ not in sources:
            try:
                with open(path_, errors="replace") as f:
                    sources[path_] = f.read().splitlines()
            except OSError:
                sources[path_] = []
        src = sources[path_]
        text = src[no - 1].strip() if 0 < no <= len(src) else ""
        short = path_[path_.find(prefix):]
        out.append(f"{ir:>12,} {100.0 * ir / total:5.1f}%  {short}:{no}  "
                   f"{text[:70]}")
    return out, total


def annotate(files, misses, lines):
    """callgrind_annotate's hottest functions of our case for each miss."""
    for kind, a, b, text in misses:
        name = f"huffman/{a}/{b}/ours" if kind == "huff" else f"{a}/ours"
        path = files.get(name)
        if path is None:
            continue
        # --threshold=100 lists every function: with the default, the
        # call in progress when the dump was taken (ld.so -> main) hides
        # all else behind one 100% row.
        try:
            out = subprocess.run(
                ["callgrind_annotate", "--inclusive=no", "--threshold=100",
                 "--auto=no",
                 path], check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            lines.append(f"(callgrind_annotate failed: {e})")
            continue
        rows = []
        started = False
        for line in out.splitlines():
            if "file:function" in line:
                started = True
                continue
            if not started or not line.strip() or re.match(r"^-+$", line):
                continue
            if line.startswith("The following files"):
                break
            if re.search(r"libc_start|\(below main\)|\?\?\?:0x", line):
                continue
            line = re.sub(r" \[/[^]]*\]$", "", line.rstrip())
            rows.append(line[:150])
        lines.append("")
        lines.append(f"#### {text}: where {name} spends its "
                     f"instructions (callgrind_annotate --inclusive=no, "
                     f"all iterations)")
        lines.append("")
        lines.append("```")
        lines.extend(rows[:14])
        lines.append("```")
        hot, total = hot_lines(path, "codec/src/", 12)
        if hot:
            lines.append("")
            lines.append(f"Hottest lines of codec/src (exclusive Ir, inlined "
                         f"code at its own line; {total:,} Ir in codec/src):")
            lines.append("")
            lines.append("```")
            lines.extend(hot)
            lines.append("```")


def paired_report(paths):
    """The aims judged on codec_bench --paired's slices, one file per
    process: the median over processes of each pair's ratio of fastest
    slices (one process can come out apart from the others)."""
    docs = []
    for path in paths:
        with open(path) as f:
            docs.append(json.load(f))
    runs = {}        # ours case -> [pair per process]
    order = []
    for doc in docs:
        for p in doc["pairs"]:
            if p["ours"] not in runs:
                order.append(p["ours"])
            runs.setdefault(p["ours"], []).append(p)
    first = docs[0]
    lines = ["## Paired slices (the verdict on the aims)", "",
             f"Each of our cases against its reference in alternating slices "
             f"of about 100 us for {first['seconds_per_pair']:g} s, the order "
             f"flipped every pair, in {len(docs)} process(es).  A side's "
             f"fastest slice is its speed on a quiet machine; the ratio of "
             f"the two fastest decides, as the median over the processes "
             f"(one can come out apart from the others, for its memory "
             f"layout or the machine's state: their range is shown).  The "
             f"median of the per-pair ratios shows how the two sides fared "
             f"under the same load.", "",
             f"Codec measured: commit+sources {first['codec']}, Huffman build "
             f"{first['huffman_isa']}"
             + (f", on {first['cpu']}" if first.get('cpu') else "") + ".", "",
             "| case | against | slices | ours, fastest ns | theirs, "
             "fastest ns | ratio of fastest (median of processes) "
             "| range over processes | median pair ratio |",
             "|---|---|--:|--:|--:|---|---|---|"]
    verdicts = {}
    for name in order:
        ps = runs[name]
        ratios = [p["ours_fastest_ns"] / p["other_fastest_ns"] for p in ps]
        r = statistics.median(ratios)
        verdicts[name] = (r, statistics.median(p["pair_ratio_median"]
                                               for p in ps))
        lines.append(
            f"| {name[:-5]} | {ps[0]['other'].rsplit('/', 1)[1]} "
            f"| {sum(p['slices'] for p in ps):,} "
            f"| {fmt(min(p['ours_fastest_ns'] for p in ps))} "
            f"| {fmt(min(p['other_fastest_ns'] for p in ps))} "
            f"| {ratio_text(r, 3)} | {min(ratios):.3f}-{max(ratios):.3f} "
            f"| {verdicts[name][1]:.2f} |")
    lines += ["", "### Aims (wall clock, paired slices)", "",
              "| aim | ours/other, fastest slices | median pair ratio "
              "| result |", "|---|---|---|---|"]
    for kind, a, b, aim, text in AIMS:
        mine = f"huffman/{a}/{b}/ours" if kind == "huff" else f"{a}/ours"
        r, med = verdicts.get(mine, (None, None))
        lines.append(f"| {text} | {ratio_text(r, 3)} "
                     f"| {'-' if med is None else f'{med:.2f}'} "
                     f"| {verdict(r, aim)} |")
    return lines


# The octet target on the response stories, per table size: ours at most
# the larger of 0.85 x nghttp2's octets and 1.05 x the bound's.
OCTET_TARGET_NGHTTP2 = 0.85
OCTET_TARGET_BOUND = 1.05

CORPUS_GROUPS = [
    ("response", "response stories"),
    ("request", "request stories"),
    ("qif", "QIF request lists"),
]


def corpus_sums(conns, j):
    """Totals over connections at table size number j; ours' placements
    added placement by placement."""
    t = {"lists": 0, "fields": 0, "plain": 0, "bound": 0, "bound_replay": 0,
         "ours": 0, "nghttp2": 0, "ours_replay": 0, "nghttp2_replay": 0,
         "ours_placements": None, "ours_replay_placements": None}
    for c in conns:
        for k in ("lists", "fields", "plain", "bound", "bound_replay"):
            t[k] += c[k]
        at = c["sizes"][j]
        for k in ("ours", "nghttp2", "ours_replay", "nghttp2_replay"):
            t[k] += at[k]["octets"]
        for k in ("ours_placements", "ours_replay_placements"):
            t[k] = (list(at[k]) if t[k] is None
                    else [a + b for a, b in zip(t[k], at[k])])
    return t


def octet_range(v):
    return f"{fmt(min(v))}-{fmt(max(v))}" if v else "-"


def octet_ratio(a, b):
    return f"{a / b:.3f}" if b else "-"


def memory_table(doc, groups):
    """Our encoder's octets against the memory it holds, per group and
    table size (codec_bench's "memory" records); nothing when the JSON has
    none."""
    sizes = doc.get("memory_sizes")
    if not sizes or not groups:
        return []
    lines = [
        "", "### Table size: octets against memory", "",
        "Our encoder alone, once over each connection at each table size "
        "(its cap and the peer's SETTINGS_HEADER_TABLE_SIZE both the "
        "size), at the placement reported above.  The table size bounds "
        "the entries' contents (name, value and 32 octets each, RFC 7541 "
        "4.1); the memory is every octet the encoder has allocated through "
        "its `hpack_allocator_t` and not freed: the encoder with its "
        "table's first block, the table's larger blocks as it grows (the "
        "old one is freed after the entries move, so a growth holds both "
        "for a moment), the history of recurring fields and the per-name "
        "counts.  Peak is the most held at once during the connection; "
        "end, what it held after its last list.  Neither counts the "
        "decoder nor what the host's allocator adds.", "",
        "- **against the size above**: per connection of the group "
        "(mean), the octets this size saves and the KiB of peak memory it "
        "adds, and the octets saved per KiB added (the two summed over the "
        "connections, divided); `-` where it adds no memory.", "",
        "| group | table | octets | octets / 4096's | peak KiB, mean "
        "| peak KiB, max | end KiB, mean | against the size above: octets "
        "saved | KiB added | octets saved per KiB |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for g, text, cs in groups:
        prev = None
        base = None
        for j, size in enumerate(sizes):
            held = [c["memory"][j] for c in cs]
            octets = sum(h["octets"] for h in held)
            peak = sum(h["peak_bytes"] for h in held)
            if base is None:
                base = octets
            cells = "| - | - | -"
            if prev is not None:
                saved = prev[0] - octets
                more = (peak - prev[1]) / 1024
                # + 0.0: no "-0.0" for a few octets less.
                cells = (f"| {saved / len(cs) + 0.0:,.0f} "
                         f"| {round(more / len(cs), 1) + 0.0:,.1f} | "
                         + (f"{saved / more:,.0f}" if more > 0 else "-"))
            lines.append(
                f"| {text} ({len(cs)}) | {size} | {fmt(octets)} "
                f"| {octet_ratio(octets, base)} "
                f"| {peak / len(cs) / 1024:,.1f} "
                f"| {max(h['peak_bytes'] for h in held) / 1024:,.1f} "
                f"| {sum(h['end_bytes'] for h in held) / len(cs) / 1024:,.1f} "
                f"{cells} |")
            prev = (octets, peak)
    return lines


def corpus_report(path):
    """codec_bench --corpus-out's JSON as Markdown: the totals per group
    and table size, the target on the response stories, then every
    connection."""
    with open(path) as f:
        doc = json.load(f)
    lines = ["## Octets on the wire: the corpus (deterministic)", ""]
    if doc.get("skipped"):
        lines.append(doc["skipped"] + ".")
        return lines
    sizes = doc["table_sizes"]
    conns = doc["connections"]
    placements = max((len(c["sizes"][0]["ours_placements"]) for c in conns),
                     default=0)
    lines += [
        "Octets of header blocks, untimed and deterministic: they depend "
        "on the codec's code and the inputs only, not on the processor or "
        "the machine's load, and repeat exactly from run to run.  Each "
        "hpack-test-case story and each QIF file "
        "is one connection (one encoder); at each table size both encoders "
        "are capped at it and the peer's SETTINGS_HEADER_TABLE_SIZE is it.  "
        "Every block was decoded by the other library and equals its list.",
        "",
        "- **bound**: with no table limit, the first sighting of a (name, "
        "value) pair in the connection as a literal with incremental "
        "indexing (the name as a static index when the static table has "
        "it, each string raw or Huffman, the shorter), every later "
        "sighting one octet, a pair of the static table its index.  Not a "
        "floor: a literal can also take its name from the dynamic table.",
        "- **replay**: the same connection's lists encoded a second time on "
        "the same encoders; the bound then is one octet a field.",
        "- **placements**: our encoder seeds its hashes with its own "
        "address, and which recurring fields it indexes follows the seed.  "
        "Its figures are those of an encoder at a fixed address; the range "
        f"is over {placements} addresses (an encoder in an nginx worker "
        "gets any of them).",
        "",
        f"Codec measured: commit+sources {doc['codec']}; libnghttp2 "
        f"{doc['nghttp2']}'s deflater (`nghttp2_hd_deflate_hd`).", ""]
    for note in doc.get("notes", []):
        lines += [f"Note: {note}.", ""]
    for c in conns:
        if c["classed_by"] not in ("context", "qif"):
            lines += [f"Note: {c['name']} has no \"context\"; counted with "
                      f"the {c['group']} stories for its {c['classed_by']} "
                      f"fields.", ""]
    groups = [(g, text, [c for c in conns if c["group"] == g])
              for g, text in CORPUS_GROUPS]
    groups = [x for x in groups if x[2]]

    lines += ["| group | table | lists | bound | nghttp2 | ours "
              "| ours/nghttp2 | ours/bound | ours, placements "
              "| replay: bound | nghttp2 | ours | ours/nghttp2 "
              "| ours, placements |",
              "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for g, text, cs in groups:
        for j, size in enumerate(sizes):
            t = corpus_sums(cs, j)
            lines.append(
                f"| {text} ({len(cs)}) | {size} | {fmt(t['lists'])} "
                f"| {fmt(t['bound'])} | {fmt(t['nghttp2'])} "
                f"| {fmt(t['ours'])} | {octet_ratio(t['ours'], t['nghttp2'])} "
                f"| {octet_ratio(t['ours'], t['bound'])} "
                f"| {octet_range(t['ours_placements'])} "
                f"| {fmt(t['bound_replay'])} | {fmt(t['nghttp2_replay'])} "
                f"| {fmt(t['ours_replay'])} "
                f"| {octet_ratio(t['ours_replay'], t['nghttp2_replay'])} "
                f"| {octet_range(t['ours_replay_placements'])} |")

    responses = [c for c in conns if c["group"] == "response"]
    if responses:
        lines += ["", "### Target: response stories, ours <= max("
                  f"{OCTET_TARGET_NGHTTP2:g} x nghttp2, "
                  f"{OCTET_TARGET_BOUND:g} x bound)", "",
                  "| table | ours | 0.85 x nghttp2 | 1.05 x bound | limit "
                  "| ours/limit | result | ours/limit, placements |",
                  "|--:|--:|--:|--:|--:|--:|---|--:|"]
        for j, size in enumerate(sizes):
            t = corpus_sums(responses, j)
            a = OCTET_TARGET_NGHTTP2 * t["nghttp2"]
            b = OCTET_TARGET_BOUND * t["bound"]
            limit = max(a, b)
            spread = t["ours_placements"]
            lines.append(f"| {size} | {fmt(t['ours'])} | {fmt(a)} "
                         f"| {fmt(b)} | {fmt(limit)} "
                         f"| {t['ours'] / limit:.3f} "
                         f"| {'PASS' if t['ours'] <= limit else 'MISS'} "
                         + (f"| {min(spread) / limit:.3f}-"
                            f"{max(spread) / limit:.3f} |" if spread
                            else "| - |"))

    lines += memory_table(doc, groups)

    for j, size in enumerate(sizes):
        lines += ["", f"### Every connection, table size {size}", "",
                  "| connection | lists | bound | nghttp2 | ours "
                  "| ours/nghttp2 | ours/bound | replay: nghttp2 | ours |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for g, text, cs in groups:
            for c in cs + [None]:
                if c is None:
                    name, t = f"**{text}**", corpus_sums(cs, j)
                else:
                    name, t = f"{c['name']} ({g})", corpus_sums([c], j)
                lines.append(
                    f"| {name} | {fmt(t['lists'])} | {fmt(t['bound'])} "
                    f"| {fmt(t['nghttp2'])} | {fmt(t['ours'])} "
                    f"| {octet_ratio(t['ours'], t['nghttp2'])} "
                    f"| {octet_ratio(t['ours'], t['bound'])} "
                    f"| {fmt(t['nghttp2_replay'])} "
                    f"| {fmt(t['ours_replay'])} |")
    return lines

QPACK_GROUPS = [
    ("qpack-request", "request (11 fields)"),
    ("qpack-response", "response (12 fields)"),
]

QPACK_MODES = [
    ("decode/cold", "decode, cold, nghttp3's wire"),
    ("decode/warm", "decode, warm, nghttp3's wire"),
    ("decode-ourwire/cold", "decode, cold, our wire"),
    ("decode-ourwire/warm", "decode, warm, our wire"),
    ("encode/cold", "encode, cold"),
    ("encode/warm", "encode, warm"),
]


def qpack_time_table(res, unit, lines, paired=None):
    """Ours against nghttp3 per QPACK case: res from Google Benchmark or
    callgrind, paired {ours case: (ratio, median pair ratio)} when the
    paired run is there."""
    if not any(k.startswith("qpack-") for k in res):
        return False
    extra_head = extra_rule = ""
    if paired is not None:
        extra_head = (" | ours/nghttp3, paired fastest slices "
                      "| median pair ratio")
        extra_rule = "---|--:|"
    lines.append(f"| section | operation | ours {unit} | nghttp3 {unit} "
                 f"| ours/nghttp3{extra_head} | octets coded, ours "
                 f"| nghttp3 |")
    lines.append("|---|---|--:|--:|---|" + extra_rule + "--:|--:|")
    for group, text in QPACK_GROUPS:
        for mode, mtext in QPACK_MODES:
            o = res.get(f"{group}/{mode}/ours")
            n = res.get(f"{group}/{mode}/nghttp3")
            if o is None or n is None:
                continue
            cells = ""
            if paired is not None:
                r, med = paired.get(f"{group}/{mode}/ours", (None, None))
                cells = (f" | {ratio_text(r, 3)} "
                         f"| {'-' if med is None else f'{med:.2f}'}")
            lines.append(f"| {text} | {mtext} | {fmt(o.value)} "
                         f"| {fmt(n.value)} "
                         f"| {ratio_text(o.value / n.value)}{cells} "
                         f"| {fmt(o.wire)} | {fmt(n.wire)} |")
    return True


def paired_verdicts(paths):
    """{ours case: (median over processes of the ratio of fastest slices,
    median of the per-pair ratio medians)} of codec_bench --paired's
    JSON files."""
    runs = {}
    for path in paths:
        with open(path) as f:
            for p in json.load(f)["pairs"]:
                runs.setdefault(p["ours"], []).append(p)
    return {name: (statistics.median(p["ours_fastest_ns"]
                                     / p["other_fastest_ns"] for p in ps),
                   statistics.median(p["pair_ratio_median"] for p in ps))
            for name, ps in runs.items()}


QPACK_ALLOC_MODES = [
    ("decode/cold", "decode, cold (creation included), nghttp3's wire"),
    ("decode-ourwire/cold", "decode, cold (creation included), our wire"),
    ("decode/warm", "decode, warm, nghttp3's wire"),
    ("decode-ourwire/warm", "decode, warm, our wire"),
    ("encode/cold", "encode, cold (creation included)"),
    ("encode/warm", "encode, warm"),
]


def qpack_alloc_lines(doc):
    n = doc["alloc_sections"]
    rec = {(a["group"], a["op"]): a for a in doc["allocations"]}
    lines = ["### Allocations per section", "",
             f"Every operation of the QPACK cases run {n} times more, after "
             "two runs, its "
             "objects allocating through counting allocators (ours: the "
             "`hpack_allocator_t` it was created with; nghttp3: its "
             "`nghttp3_mem`, for the encoder or decoder and the stream "
             "contexts); allocations (malloc, calloc and realloc) and "
             "octets per section.  Cold counts the encoder's or decoder's "
             "creation; warm is the steady state, where the target for "
             "ours is 0.", "",
             "| section | operation | ours allocations | nghttp3 allocations "
             "| ours octets | nghttp3 octets |",
             "|---|---|--:|--:|--:|--:|"]
    verdicts = []
    for group, text in QPACK_GROUPS:
        for mode, mtext in QPACK_ALLOC_MODES:
            o = rec.get((group, f"{mode}/ours"))
            t = rec.get((group, f"{mode}/nghttp3"))
            if o is None or t is None:
                continue
            lines.append(f"| {text} | {mtext} "
                         f"| {o['allocations'] / n:g} "
                         f"| {t['allocations'] / n:g} "
                         f"| {fmt(o['bytes'] / n)} | {fmt(t['bytes'] / n)} |")
            if mode.endswith("/warm"):
                verdicts.append(o["allocations"])
    if verdicts:
        total = sum(verdicts)
        lines += ["", f"Target, ours allocates nothing per section in the "
                  f"steady state (the warm rows): "
                  f"{'PASS' if total == 0 else 'MISS'} "
                  f"({total / n:g} allocations per section over the "
                  f"{len(verdicts)} warm rows)."]
    return lines


QPACK_OCTET_GROUPS = [("qif", "QIF request lists"),
                      ("response", "response stories")]


def qpack_run(c, side, blocked, acked):
    for r in c["runs"]:
        if (r["side"] == side and r["blocked"] == blocked
                and r["acked"] == acked):
            return r
    return None


def qpack_sums(conns, side, blocked, acked):
    keys = ("sections", "encoder_stream", "decoder_stream", "inserts",
            "indexed", "dynamic_names", "blocking_sections")
    t = dict.fromkeys(keys, 0)
    t["max_blocking"] = 0
    for c in conns:
        r = qpack_run(c, side, blocked, acked)
        if r is None:
            return None
        for k in keys:
            t[k] += r[k]
        t["max_blocking"] = max(t["max_blocking"], r["max_blocking"])
    t["total"] = t["sections"] + t["encoder_stream"]
    return t


def qpack_octet_lines(doc):
    lines = ["### Octets on the wire (deterministic)", ""]
    if doc.get("skipped"):
        lines.append(doc["skipped"] + ": no octet rows.")
        return lines
    conns = doc["connections"]
    sel = doc.get("selection", {})
    lines += [
        "Each QIF file's request lists and each hpack-test-case response "
        "story is one connection, encoded by our encoder and by nghttp3's "
        f"(peer capacity {doc['capacity']}), at SETTINGS_QPACK_BLOCKED_STREAMS "
        "0 and 100, **acked**: the peer decoder's decoder stream (ours for "
        "ours, nghttp3's for nghttp3's) fed back to the encoder after every "
        "section, before the next is encoded, or **no acks**: nothing fed "
        "back.  The encoder stream reaches the decoders before its "
        "section.  Every section was decoded by both libraries' decoders "
        "and equals its list; a section referring to entries above the "
        "encoder's Known Received Count (read from the decoder stream fed "
        "back) is a blocking stream, and more of them at once than "
        "allowed would have ended the run.", "",
        "- **total** = field sections + encoder stream, the octets the "
        "encoder sends; ours/nghttp3 is of the totals;",
        "- **inserts**: entries inserted on the encoder stream; **refs**: "
        "fields sent as a dynamic entry (as our decoder counted them); "
        "**blocking**: sections that referred to unacknowledged entries.",
        ""]
    if sel and (not sel.get("ours", True) or not sel.get("nghttp3", True)
                or sel.get("conns")):
        lines += [f"Selection: encoders "
                  + ", ".join(k for k in ("ours", "nghttp3") if sel.get(k))
                  + (f"; connections whose name contains "
                     f"{sel['conns']}" if sel.get("conns") else "")
                  + ".", ""]
    for note in doc.get("notes", []):
        lines += [f"Note: {note}.", ""]
    modes = [(b, a) for b in (0, 100) for a in (True, False)]

    def mode_text(b, a):
        return f"blocked {b}, {'acked' if a else 'no acks'}"

    groups = [(g, t, [c for c in conns if c["group"] == g])
              for g, t in QPACK_OCTET_GROUPS]
    groups = [x for x in groups if x[2]]
    # the targets are on both corpora together
    rows = groups + ([("all", "both corpora", conns)] if len(groups) > 1 else [])
    lines += ["| corpus | mode | ours: sections | encoder stream | total "
              "| nghttp3: sections | encoder stream | total "
              "| ours/nghttp3 | sections ours/nghttp3 | inserts, ours "
              "| nghttp3 | refs, ours | nghttp3 | blocking, ours "
              "| nghttp3 |",
              "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:"
              "|--:|--:|"]
    empty = {"sections": None, "encoder_stream": None, "total": None,
             "inserts": None, "indexed": None, "blocking_sections": None}
    for g, text, cs in rows:
        lists = sum(c["lists"] for c in cs)
        for b, a in modes:
            o = qpack_sums(cs, "ours", b, a) or empty
            n = qpack_sums(cs, "nghttp3", b, a) or empty

            def ratio_of(k):
                return (octet_ratio(o[k], n[k])
                        if o[k] is not None and n[k] is not None else "-")
            lines.append(
                f"| {text} ({len(cs)}, {lists:,} lists) | {mode_text(b, a)} "
                f"| {fmt(o['sections'])} | {fmt(o['encoder_stream'])} "
                f"| {fmt(o['total'])} | {fmt(n['sections'])} "
                f"| {fmt(n['encoder_stream'])} | {fmt(n['total'])} "
                f"| {ratio_of('total')} | {ratio_of('sections')} "
                f"| {fmt(o['inserts'])} | {fmt(n['inserts'])} "
                f"| {fmt(o['indexed'])} | {fmt(n['indexed'])} "
                f"| {fmt(o['blocking_sections'])} "
                f"| {fmt(n['blocking_sections'])} |")

    lines += ["", "#### Every connection: total octets (sections + encoder "
              "stream), ours / nghttp3 = ratio", "",
              "| connection | lists | "
              + " | ".join(mode_text(b, a) for b, a in modes) + " |",
              "|---|--:|" + "---|" * len(modes)]
    for g, text, cs in groups:
        for c in cs:
            cells = []
            for b, a in modes:
                o = qpack_run(c, "ours", b, a)
                n = qpack_run(c, "nghttp3", b, a)
                ot = o["sections"] + o["encoder_stream"] if o else None
                nt = n["sections"] + n["encoder_stream"] if n else None
                cells.append(f"{fmt(ot)} / {fmt(nt)} = "
                             + (octet_ratio(ot, nt) if o and n else "-"))
            lines.append(f"| {c['name']} ({g}) | {c['lists']:,} | "
                         + " | ".join(cells) + " |")
    return lines


def qpack_report(path, gbench=None, paired_paths=None):
    """codec_bench --qpack-out's JSON as Markdown, with the QPACK times of
    the Google Benchmark and paired runs when given."""
    with open(path) as f:
        doc = json.load(f)
    lines = [f"## QPACK: ours against libnghttp3 {doc['nghttp3']}", "",
             f"Command: `{doc['command']}`.  Processor: {doc['cpu']}.  "
             f"Codec measured: commit+sources {doc['codec']}.", ""]
    if gbench is not None:
        res, _, _ = read_gbench(gbench)
        paired = paired_verdicts(paired_paths) if paired_paths else None
        body = []
        if qpack_time_table(res, "ns", body, paired):
            lines += [
                "### Time per section", "",
                "The request and the response of the HPACK cases as one "
                "QPACK field section each; every encoder's peer announced "
                f"capacity {doc['capacity']} and "
                f"{doc['timed_blocked_streams']} blocked streams.  **Cold**: a "
                "new encoder or decoder per section (create, code, "
                "destroy); the decoder reads the cold encoder's "
                "encoder stream, then its section.  **Warm**: the same "
                "section again on a connection that has seen it, its "
                "acknowledgment fed back: encode is the section (no "
                "encoder-stream octets left) plus reading the Section "
                "Acknowledgment, decode is the section plus draining that "
                "acknowledgment.  Decode rows time both decoders on the "
                "same wire, nghttp3's encoder's or ours.  ns: CPU time, "
                "Google Benchmark medians; the paired columns are the "
                "paired run's (see above), the steadier ratio.", ""] + body
            lines.append("")
    lines += qpack_alloc_lines(doc)
    lines.append("")
    lines += qpack_octet_lines(doc)
    return lines


def main(argv):
    if len(argv) == 3 and argv[1] == "--corpus":
        try:
            lines = corpus_report(argv[2])
        except (OSError, ValueError, KeyError, IndexError) as e:
            print(f"report_codec: cannot read {argv[2]}: {e}",
                  file=sys.stderr)
            return 1
        print("\n".join(lines))
        return 0
    if len(argv) >= 3 and argv[1] == "--qpack":
        gbench = None
        paired = []
        rest = argv[3:]
        while rest:
            a = rest.pop(0)
            if a.startswith("--gbench="):
                gbench = a[len("--gbench="):]
            elif a == "--paired":
                paired = rest
                rest = []
            else:
                print(__doc__, file=sys.stderr)
                return 1
        try:
            lines = qpack_report(argv[2], gbench, paired)
        except (OSError, ValueError, KeyError, IndexError,
                statistics.StatisticsError) as e:
            print(f"report_codec: cannot read the QPACK results: {e}",
                  file=sys.stderr)
            return 1
        print("\n".join(lines))
        return 0
    if len(argv) >= 3 and argv[1] == "--paired":
        try:
            lines = paired_report(argv[2:])
        except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
            print(f"report_codec: cannot read {' '.join(argv[2:])}: {e}",
                  file=sys.stderr)
            return 1
        print("\n".join(lines))
        return 0
    if len(argv) >= 3 and argv[1] == "--callgrind":
        res, files = read_callgrind(argv[2])
        if not res:
            print(f"report_codec: no codec_bench callgrind dumps in {argv[2]}",
                  file=sys.stderr)
            return 1
        lines = ["## Instructions per operation (callgrind, deterministic)",
                 ""]
        for a in argv:
            if a.startswith("--codec="):
                lines.append(f"Codec measured: commit+sources {a[8:]}.")
                lines.append("")
        block_table(res, "Ir", lines)
        lines.append("")
        huffman_tables(res, "Ir", True, lines)
        qpack = []
        if qpack_time_table(res, "Ir", qpack):
            lines += ["", "### QPACK: ours against libnghttp3 (Ir per "
                      "section; bench/README.md gives the modes)", ""] + qpack
        lines.append("")
        lines.append("### Aims, on instruction counts (the aims are about "
                     "time; this is the load-independent view)")
        lines.append("")
        misses = aims_table(res, lines, "instructions")
        if "--annotate" in argv and misses:
            lines.append("")
            lines.append("### Hot spots of our code for the misses")
            annotate(files, misses, lines)
        print("\n".join(lines))
        return 0

    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    try:
        res, lo, context = read_gbench(argv[1])
    except (OSError, ValueError, KeyError) as e:
        print(f"report_codec: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 1
    lines = ["## Wall clock (CPU time, ns; median of the repetitions of one "
             "run; \"fastest runs\" compares the fastest repetitions)", ""]
    if context:
        lines.append(f"Host: {context.get('host_name', '?')}, "
                     f"{context.get('num_cpus', '?')} CPUs at "
                     f"{context.get('mhz_per_cpu', '?')} MHz, "
                     f"load average {context.get('load_avg', '?')}, "
                     f"{context.get('date', '')}."
                     + (f"  Processor: {context['codec_bench.cpu']}."
                        if "codec_bench.cpu" in context else ""))
        if "codec_bench.codec" in context:
            lines.append("")
            lines.append("Codec measured: commit+sources "
                         f"{context['codec_bench.codec']}"
                         + (f", Huffman build {context['codec_bench.huffman_isa']}"
                            if "codec_bench.huffman_isa" in context else "")
                         + ".")
        if context.get("codec_bench.corpus", "").find("stories") >= 0:
            lines.append("")
            lines.append(f"Corpus: {context['codec_bench.corpus']}.")
        lines.append("")
    block_table(res, "ns", lines, lo)
    lines.append("")
    huffman_tables(res, "ns", True, lines, lo)
    lines.append("")
    lines.append("### Aims (wall clock, Google Benchmark medians: they move "
                 "with the machine's load; the verdict is the paired run's)")
    lines.append("")
    aims_table(res, lines, "time", lo)
    note = context.get("codec_bench.corpus", "")
    if note.startswith("skipped"):
        lines.append("")
        lines.append(f"corpus: {note}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
