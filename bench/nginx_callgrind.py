"""Instruction counts of an nginx process from callgrind output, and the part
of them spent on header compression.

`make bench` runs each nginx build under callgrind twice per workload, with
N_lo and N_hi requests, and works on the difference: start-up, shutdown and
the connection set-up cancel out, and what is left, divided by
N_hi - N_lo, is the cost of one request in the steady state.

Which instructions are "header compression" (the region) is decided per
source line, not per function, because gcc inlines across the nginx state
machine: in 1.26.3 at -O2 ngx_http_v2_run_request() (the whole request) is
inlined into ngx_http_v2_state_header_complete(), ngx_http_v2_pseudo_header()
into ngx_http_v2_state_process_header(), and state functions into one
another.  Every instruction callgrind reports carries the file and line it
came from; for nginx's and the module's C files the line is mapped back to
the function whose body holds it (nginx style puts a function's name at
column 0 and its braces alone on their lines).  Then

    region = self cost of every line owned by a region function
           + self cost of the lines of any other function inlined into a
             region function, when the region's source calls that function
             (directly or not) other than through the excluded callees
           + inclusive cost of every call made from those lines to a
             function outside the region and outside the excluded callees

so a function counts the same whether gcc inlined it (stock's static
ngx_http_v2_pseudo_header) or called it (the module calls the exported one).

A Region says which functions and lines count: H2 (HPACK, below) and H3
(QPACK, its comment).  H2's region functions (REGION_FUNCTIONS,
REGION_PREFIXES, REGION_DIRS):

- stock nginx's HPACK code: the request-block states, the decoder table,
  Huffman, the header validation, the response-side string encoder, and the
  encoding part of ngx_http_v2_header_filter() (the lines from the point where
  the patch hooks the module in to the frame builder, Region.line_range());
- the module and the codec: every function compiled from module/ or codec/,
  and everything named ngx_http_hpack_*, hpack_* or hpack::*.

Callees counted through those calls: ngx_hash_key(), ngx_hash_find() of
headers_in, the headers_in handlers (ngx_http_process_host,
ngx_http_process_user_agent, ...), ngx_http_v2_pseudo_header(),
ngx_http_v2_cookie(), ngx_list_push(), the pool allocator, libc's memcpy:
whatever the header-block code calls, in both builds alike.  Never counted:
EXCLUDED_CALLEES (running the request after its last header, and the frame
state machine around the block).
"""

import os
import re
import sys
from collections import defaultdict

REGION_FUNCTIONS = {
    # request header block (ngx_http_v2.c)
    "ngx_http_v2_state_header_block",
    "ngx_http_v2_state_field_len",
    "ngx_http_v2_state_field_huff",
    "ngx_http_v2_state_field_raw",
    "ngx_http_v2_state_field_skip",
    "ngx_http_v2_state_process_header",
    "ngx_http_v2_state_header_complete",
    "ngx_http_v2_state_hpack_block",        # the patch's state for the module
    "ngx_http_v2_validate_header",
    # decoder table (ngx_http_v2_table.c)
    "ngx_http_v2_get_indexed_header",
    "ngx_http_v2_add_header",
    "ngx_http_v2_table_account",
    "ngx_http_v2_table_size",
    # Huffman (src/http/ngx_http_huff_*.c)
    "ngx_http_huff_decode",
    "ngx_http_huff_encode",
    # response side (ngx_http_v2_encode.c)
    "ngx_http_v2_string_encode",
    "ngx_http_v2_write_int",
}
REGION_PREFIXES = ("ngx_http_hpack_", "hpack_", "hpack::")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGION_DIRS = (os.path.join(REPO, "module") + "/",
               os.path.join(REPO, "codec") + "/")

# Only its encoding lines belong to the region (Region.line_range()).
HEADER_FILTER = "ngx_http_v2_header_filter"
FILTER_FILE = "src/http/v2/ngx_http_v2_filter_module.c"

# Calls from region lines to these are not header compression: running the
# request once its last header is processed, and the frame state machine.
EXCLUDED_CALLEES = {
    "ngx_http_v2_run_request",
    "ngx_http_v2_state_complete",
    "ngx_http_v2_state_skip_padded",
    "ngx_destroy_pool",
}


class Region:
    """Which functions and lines are header compression for one protocol.

    functions, prefixes: by name; dirs: every function compiled from a file
    under them; files: every function of a file whose path ends so;
    partial: {function: (file suffix, start lines, end line, what)}, a
    function of which only some lines count ("what" lines): from the first
    line (stripped) equal to one of start lines to the line before the next
    one starting with end line (None: to the function's end); excluded: calls from region lines
    to these are not counted."""

    def __init__(self, name, functions, prefixes=REGION_PREFIXES,
                 dirs=REGION_DIRS, files=(), partial=None,
                 excluded=frozenset()):
        self.name = name
        self.functions = frozenset(functions)
        self.prefixes = tuple(prefixes)
        self.dirs = tuple(dirs)
        self.files = tuple(files)
        self.partial = dict(partial or {})
        self.excluded = frozenset(excluded)

    def member(self, fn, files=()):
        base = base_name(fn)
        if base in self.functions or base.startswith(self.prefixes):
            return True
        return any(f and (f.startswith(self.dirs) or f.endswith(self.files))
                   for f in files)

    def line_range(self, fn, path):
        """The counted lines (first, last) of the partial function fn in
        the source file path, or None."""
        suffix, starts, end, _ = self.partial[fn]
        if not path or not path.endswith(suffix) or not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        inside = False
        start = None
        for i, text in enumerate(lines, 1):
            if text.startswith(fn + "("):
                inside = True
            elif not inside:
                continue
            elif start is None and text.strip() in starts:
                start = i
            elif (start is not None and end is not None
                  and text.strip().startswith(end)):
                return (start, i - 1)
            elif text == "}":
                return (start, i) if start is not None and end is None \
                    else None
        return None


# HTTP/2 (HPACK): the module's hook, or stock's first encoding allocation,
# up to "fin = r->header_only" of the header filter
H2 = Region("HTTP/2", REGION_FUNCTIONS, partial={
    HEADER_FILTER: (FILTER_FILE, ("if (h2c->hpack_ctx) {",
                                  "tmp = ngx_palloc(r->pool, tmp_len);"),
                    "fin = r->header_only", "encoding")},
    excluded=EXCLUDED_CALLEES)

# HTTP/3 (QPACK), nginx 1.30 and later.  Request side: the field-section
# states of ngx_http_v3_parse_headers() (from the patch's hook, or stock's
# "case sw_prefix:", to the end: the frame type and length before them are
# the frame layer), the field-line and literal parsers, the lookups, the
# dynamic table (every function of ngx_http_v3_table.c), the encoder- and
# decoder-stream parsers, the decoder-stream instructions nginx sends
# (ngx_http_v3_send_*), Huffman.  Response side: the encoding lines of
# the header filter (from the hook, or stock's allocation of the section
# buffer after the length pass, to "if (r->header_only) {") and of
# ngx_http_v3_create_trailers(), the QPACK encoders of ngx_http_v3_encode.c
# (not ngx_http_v3_encode_varlen_int(): frame headers).  The length pass
# before the hook runs in both builds (its ngx_http_v3_encode_field_*()
# calls count in both).  ngx_http_v3_process_header(), which takes each
# decoded field in both builds, is out of the region in both.
H3_PARSE = "src/http/v3/ngx_http_v3_parse.c"
H3_FILTER = "src/http/v3/ngx_http_v3_filter_module.c"
H3 = Region("HTTP/3", {
    "ngx_http_v3_parse_start_local",
    "ngx_http_v3_parse_end_local",
    "ngx_http_v3_parse_prefix_int",
    "ngx_http_v3_parse_field_section_prefix",
    "ngx_http_v3_parse_field_rep",
    "ngx_http_v3_parse_literal",
    "ngx_http_v3_parse_field_ri",
    "ngx_http_v3_parse_field_lri",
    "ngx_http_v3_parse_field_l",
    "ngx_http_v3_parse_field_pbi",
    "ngx_http_v3_parse_field_lpbi",
    "ngx_http_v3_parse_lookup",
    "ngx_http_v3_parse_encoder",
    "ngx_http_v3_parse_field_inr",
    "ngx_http_v3_parse_field_iln",
    "ngx_http_v3_parse_decoder",
    # the decoder-stream instructions nginx sends (ngx_http_v3_uni.c)
    "ngx_http_v3_send_ack_section",
    "ngx_http_v3_send_cancel_stream",
    "ngx_http_v3_send_inc_insert_count",
    "ngx_http_v3_encode_prefix_int",
    "ngx_http_v3_encode_field_section_prefix",
    "ngx_http_v3_encode_field_ri",
    "ngx_http_v3_encode_field_lri",
    "ngx_http_v3_encode_field_l",
    "ngx_http_v3_encode_field_pbi",
    "ngx_http_v3_encode_field_lpbi",
    "ngx_http_huff_decode",
    "ngx_http_huff_encode",
}, files=("src/http/v3/ngx_http_v3_table.c",), partial={
    "ngx_http_v3_parse_headers": (
        H3_PARSE, ("if (ngx_http_v3_get_session(c)->qpack_ctx) {",
                   "case sw_prefix:"), None, "field-section"),
    "ngx_http_v3_header_filter": (
        H3_FILTER, ("if (h3c->qpack_ctx) {",
                    "b = ngx_create_temp_buf(r->pool, len);"),
        "if (r->header_only) {", "encoding"),
    "ngx_http_v3_create_trailers": (
        H3_FILTER, ("if (h3c->qpack_ctx) {",
                    "len += ngx_http_v3_encode_field_section_prefix(NULL, "
                    "0, 0, 0);"),
        "n = b->last - b->pos;", "encoding"),
}, excluded={"ngx_http_v3_process_request", "ngx_http_v3_process_header",
             "ngx_destroy_pool"})

# The parts the region of the module's build splits into (parts()), and
# their names in the reports.
PARTS = ("glue", "codec", "nginx", "libc")
PART_NAMES = {"glue": "the module's glue", "codec": "the codec",
              "nginx": "nginx's functions", "libc": "the C library"}

CLONE_SUFFIX = re.compile(r"(\.(part|isra|constprop|cold|lto_priv)\.\d+)+$")
RECURSION_SUFFIX = re.compile(r"'\d+$")


def base_name(fn):
    """ngx_foo.part.0 -> ngx_foo; C++ names keep their signature."""
    return CLONE_SUFFIX.sub("", fn)


# ------------------------------------------------------------------ parsing

class Profile:
    """One callgrind output file: its instructions (Ir), and what the
    cache simulation and the per-instruction dump add when they ran.

    self_cost[(fn, file, line)]            instructions executed in fn,
                                           attributed to that source line
    calls[(fn, file, line, callee)]        [count, inclusive instructions]
                                           of the calls made at that line
    fn_files[fn]                           the files fn was reported under
    object_cost[object]                    self instructions of each ELF
                                           object (callgrind's ob=), inlined
                                           code included
    self_misses[fn]                        L1 misses (--cache-sim=yes)
    executions[(object, address)]          times each instruction ran
                                           (--dump-instr=yes
                                           --compress-pos=no)
    """

    def __init__(self, path):
        self.path = path
        self.total = None
        self.cmd = ""
        self.self_cost = defaultdict(int)
        self.self_misses = defaultdict(int)     # fn -> L1 misses (cache sim)
        self.events = {}                        # event name -> process total
        self.calls = {}
        self.fn_files = defaultdict(set)
        self.object_cost = defaultdict(int)
        # (object, instruction address) -> executions, when callgrind
        # dumped per instruction with absolute positions (--dump-instr=yes
        # --compress-pos=no)
        self.executions = defaultdict(int)
        self._parse()

    def _parse(self):
        fl = fi = fn = ob = None
        callee = None
        pending = None                      # (callee, count) after calls=
        names = {"fl": {}, "fn": {}, "ob": {}}  # compressed "(id) name"s
        summary = None
        names_ev = ["Ir"]
        miss_idx = []
        # "positions: instr line": an address, then the line, then costs
        instr = False
        first = 1

        def name(kind, text):
            m = re.match(r"\((\d+)\)(?: (.*))?$", text)
            if not m:
                return text
            if m.group(2) is not None:
                names[kind][m.group(1)] = m.group(2)
                return m.group(2)
            return names[kind][m.group(1)]

        with open(self.path, encoding="utf-8", errors="replace") as f:
            for line in f:
                c = line[:1]
                if c.isdigit() or c in "+-*":
                    parts = line.split()
                    if len(parts) <= first:
                        continue
                    pos = int(parts[first - 1]) \
                        if parts[first - 1].isdigit() else 0
                    cost = int(parts[first])
                    if pending is None and miss_idx:
                        self.self_misses[fn] += sum(
                            int(parts[i + first]) for i in miss_idx
                            if i + first < len(parts))
                    if pending is None and instr and c == "0":
                        self.executions[(ob, int(parts[0], 16))] += cost
                    if pending is not None:
                        key = (fn, fi or fl, pos, pending[0])
                        slot = self.calls.setdefault(key, [0, 0])
                        slot[0] += pending[1]
                        slot[1] += cost
                        pending = None
                    else:
                        self.self_cost[(fn, fi or fl, pos)] += cost
                        self.object_cost[ob] += cost
                    continue
                key, _, value = line.rstrip("\n").partition("=")
                if key == "ob":
                    ob = name("ob", value)
                elif key == "cob":
                    name("ob", value)
                elif key == "fl":
                    fl = name("fl", value)
                    fi = None
                elif key in ("fi", "fe"):
                    fi = name("fl", value)
                elif key == "fn":
                    # callgrind names recursion levels fn'2, fn'3: one fn
                    fn = RECURSION_SUFFIX.sub("", name("fn", value))
                    fi = None
                    self.fn_files[fn].add(fl)
                elif key in ("cfi", "cfl"):
                    name("fl", value)
                elif key == "cfn":
                    callee = RECURSION_SUFFIX.sub("", name("fn", value))
                elif key == "calls":
                    pending = (callee, int(value.split()[0]))
                elif line.startswith("positions:"):
                    kinds = line.split(":", 1)[1].split()
                    instr = "instr" in kinds
                    first = len(kinds)
                elif line.startswith("events:"):
                    names_ev = line.split(":", 1)[1].split()
                    miss_idx = [i for i, e in enumerate(names_ev)
                                if e in ("I1mr", "D1mr", "D1mw")]
                elif line.startswith("summary:") or line.startswith("totals:"):
                    values = [int(v) for v in line.split(":", 1)[1].split()]
                    summary = values[0]
                    self.events = dict(zip(names_ev, values))
                elif line.startswith("cmd:"):
                    self.cmd = line[4:].strip()
        # no summary line: the process died before callgrind wrote it all
        self.complete = summary is not None
        self.total = summary if summary is not None else \
            sum(self.self_cost.values())


# ------------------------------------------------------------ source lines

class SourceMap:
    """Which function's body holds a line of a C file (nginx style), and
    which functions each body calls by name."""

    DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(")
    CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")

    def __init__(self):
        self.files = {}
        self.calls = defaultdict(set)       # function -> names it calls
        self.defined = {}                   # function -> its file
        self._reachable = {}                # region name -> functions

    def ranges(self, path):
        if path in self.files:
            return self.files[path]
        out = []
        if path and path.endswith(".c") and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            i = 0
            while i < len(lines):
                m = self.DEF.match(lines[i])
                body = None
                if m:
                    # a definition: "{" alone before any line ending in ";"
                    for k in range(i, min(i + 20, len(lines))):
                        if lines[k] == "{":
                            body = k
                            break
                        if lines[k].rstrip().endswith(";"):
                            break
                if body is None:
                    i += 1
                    continue
                end = body + 1
                while end < len(lines) and lines[end] != "}":
                    end += 1
                out.append((i + 1, end + 1, m.group(1)))
                self.defined[m.group(1)] = path
                for text in lines[body:end]:
                    self.calls[m.group(1)].update(self.CALL.findall(text))
                i = end + 1
            self._reachable = {}
        self.files[path] = out
        return out

    def owner(self, fn, path, line):
        for start, end, name in self.ranges(path):
            if start <= line <= end:
                return name
        return base_name(fn)

    def reachable(self, region):
        """Functions the region's own source calls, directly or through
        others, without passing through its excluded callees: when gcc
        inlines one of them into a region function, its lines count."""
        if self._reachable.get(region.name) is None:
            todo = [f for f in self.calls if f not in region.partial
                    and region.member(f, [self.defined.get(f)])]
            seen = set(todo)
            while todo:
                for g in self.calls.get(todo.pop(), ()):
                    if g in seen or g in region.excluded \
                            or g not in self.calls:
                        continue
                    seen.add(g)
                    todo.append(g)
            self._reachable[region.name] = seen
        return self._reachable[region.name]


# ---------------------------------------------------------------- analysis

class Analysis:
    """The region of one profile, by owner and callee, plus per-function
    self and inclusive costs of the whole process.  Linear in the costs, so
    two analyses subtract (hi - lo)."""

    def __init__(self, profile, sources=None, region=H2):
        self.sources = sources or SourceMap()
        self.region_spec = region
        self.total = profile.total
        self.region_self = defaultdict(int)     # owner -> instructions
        self.region_calls = defaultdict(int)    # callee -> instructions
        self.fn_self = defaultdict(int)         # whole process
        self.fn_incl = defaultdict(int)
        self.fn_misses = defaultdict(int, profile.self_misses)
        self.events = dict(profile.events)
        self.executions = defaultdict(int, profile.executions)
        self.filter_ranges = {}
        self.warnings = set()
        self._run(profile)

    def member(self, fn, files=()):
        return self.region_spec.member(fn, files)

    def _owned(self, fn, path, line):
        """The function a line is counted under when it is in the region,
        or None.  A line belongs to the function whose source holds it; a
        line of another function inlined into a region function counts when
        the region's source calls that function (not when it is the request
        run after the last header, inlined into
        ngx_http_v2_state_header_complete)."""
        spec = self.region_spec
        owner = self.sources.owner(fn, path, line)
        if owner in spec.partial:
            key = "%s in %s" % (owner, path)
            if key not in self.filter_ranges:
                self.filter_ranges[key] = spec.line_range(owner, path)
            r = self.filter_ranges[key]
            if r and r[0] <= line <= r[1]:
                return owner + " (%s lines %d-%d)" % (spec.partial[owner][3],
                                                      r[0], r[1])
            return None
        if self.member(owner, [path]):
            return owner
        physical = base_name(fn)
        if (owner != physical and physical not in spec.partial
                and owner not in spec.excluded
                and self.member(physical, self.fn_files.get(fn, ()))
                and owner in self.sources.reachable(spec)):
            return owner + " (inlined)"
        return None

    def _run(self, p):
        self.fn_files = p.fn_files
        for path in {f for files in p.fn_files.values() for f in files}:
            self.sources.ranges(path)
        for (fn, path, line), cost in p.self_cost.items():
            self.fn_self[fn] += cost
            self.fn_incl[fn] += cost
            owner = self._owned(fn, path, line)
            if owner:
                self.region_self[owner] += cost
        graph = defaultdict(set)
        counted = set()
        for (fn, path, line, callee), (count, cost) in p.calls.items():
            graph[fn].add(callee)
            if callee != fn:
                self.fn_incl[fn] += cost
            if not self._owned(fn, path, line):
                continue
            if base_name(callee) in self.region_spec.excluded:
                continue
            if self.member(callee, p.fn_files.get(callee, ())):
                continue
            self.region_calls[callee] += cost
            counted.add(callee)
        # A counted callee that calls back into the region would be counted
        # twice (its inclusive cost and the region's own lines).
        for callee in counted:
            seen, todo = set(), [callee]
            while todo:
                f = todo.pop()
                for g in graph.get(f, ()):
                    if g in seen:
                        continue
                    seen.add(g)
                    if self.member(g, p.fn_files.get(g, ())):
                        self.warnings.add("%s (counted as a callee) calls "
                                          "back into the region: %s"
                                          % (callee, g))
                    else:
                        todo.append(g)

    @property
    def region(self):
        return sum(self.region_self.values()) + sum(self.region_calls.values())

    def minus(self, other):
        d = Analysis.__new__(Analysis)
        d.sources = self.sources
        d.region_spec = self.region_spec
        d.total = self.total - other.total
        d.filter_ranges = dict(self.filter_ranges)
        d.warnings = self.warnings | other.warnings
        d.fn_files = self.fn_files
        d.events = {k: v - other.events.get(k, 0)
                    for k, v in self.events.items()}
        for attr in ("region_self", "region_calls", "fn_self", "fn_incl",
                     "fn_misses", "executions"):
            a, b = getattr(self, attr), getattr(other, attr)
            out = defaultdict(int)
            for k in set(a) | set(b):
                v = a.get(k, 0) - b.get(k, 0)
                if v:
                    out[k] = v
            setattr(d, attr, out)
        return d


# ----------------------------------------------------------------- reports

def short(fn, width=72):
    """A C++ name without its parameter list."""
    if "::" in fn:
        fn = fn.replace("(anonymous namespace)", "{anon}")
        fn = re.sub(r"\([^()]*\)( const)?(?=( \[clone [^]]*\])*$)", "()", fn)
    return fn if len(fn) <= width else fn[:width - 3] + "..."


def breakdown(delta, per, limit=30):
    """The region, one line per owner (self) and per callee (inclusive),
    in instructions per request, largest first."""
    rows = [(v / per, "self", k) for k, v in delta.region_self.items()]
    rows += [(v / per, "call", k) for k, v in delta.region_calls.items()]
    rows.sort(key=lambda r: -r[0])
    out = []
    for v, kind, name in rows[:limit]:
        if abs(v) < 0.5:
            continue
        label = name if kind == "self" else "-> " + name
        out.append("%10.1f  %s" % (v, short(label)))
    rest = sum(r[0] for r in rows[limit:])
    if abs(rest) >= 0.5:
        out.append("%10.1f  (%d more lines)" % (rest, len(rows) - limit))
    return out


def part_of(name):
    """Which part of the module's build a region line or callee is (PARTS):
    the module's C glue (ngx_http_hpack_*), the codec (hpack_*, hpack::*,
    qpack_*, the C++ classes), nginx's own functions (its hook points, the patch's
    ngx_http_v2_hpack_* wrappers of stock's code, whatever the glue calls
    in nginx), or the C library."""
    base = base_name(name.split(" (", 1)[0])
    if base.startswith("ngx_http_hpack_"):
        return "glue"
    # a C++ template's name opens with its return type ("void hpack::...")
    if re.match(r"(?:[\w:<>*&]+ )?[hq]pack", base):
        return "codec"
    if base.startswith("ngx_"):
        return "nginx"
    return "libc"


def parts(delta, per):
    """The region's instructions per request by part (part_of())."""
    out = dict.fromkeys(PARTS, 0.0)
    for table in (delta.region_self, delta.region_calls):
        for name, cost in table.items():
            out[part_of(name)] += cost / per
    return out


def cache_misses(delta, per):
    """L1 (I1mr + D1mr + D1mw) and last-level (ILmr + DLmr + DLmw) misses
    per request, when callgrind simulated the caches."""
    e = delta.events
    if "D1mr" not in e:
        return None
    return {"l1": (e.get("I1mr", 0) + e.get("D1mr", 0) + e.get("D1mw", 0))
            / per,
            "ll": (e.get("ILmr", 0) + e.get("DLmr", 0) + e.get("DLmw", 0))
            / per}


def code_lines(delta, per, line=64):
    """The code a request runs, in cache lines: the 64-octet lines of
    instructions executed, on average, at least once per request (the
    difference of two runs under --dump-instr=yes), in all and per ELF
    object, as lines and as KiB; None without per-instruction counts.
    Where the request's code does not fit the simulated I1 (cold
    connections), each such line is about one I1 miss per request."""
    if not delta.executions:
        return None
    runs = defaultdict(int)                 # (object, line) -> executions
    for (obj, addr), n in delta.executions.items():
        key = (obj, addr // line)
        runs[key] = max(runs[key], n)
    lines = defaultdict(int)
    for (obj, _), n in runs.items():
        if n >= per:
            lines[os.path.basename(obj or "?")] += 1
    total = sum(lines.values())
    return {"lines": total, "by_object": dict(lines),
            "kib": total * line / 1024.0,
            "kib_by_object": {obj: n * line / 1024.0
                              for obj, n in lines.items()}}


def hot_functions(delta, per, limit=25, inclusive=False, misses=False):
    table = delta.fn_incl if inclusive else delta.fn_self
    if misses:
        table = delta.fn_misses
    rows = sorted(table.items(), key=lambda kv: -kv[1])[:limit]
    return ["%10.1f  %s%s" % (v / per, short(k),
                              "   [region]" if delta.member(k) else "")
            for k, v in rows]


def summary_text(title, delta, per, lo_hi):
    lines = [title, "=" * len(title), "",
             "requests (N_hi - N_lo):  %d  (%d - %d)" % (per, lo_hi[1],
                                                         lo_hi[0]),
             "instructions/request:    %.1f" % (delta.total / per),
             "header compression:      %.1f  (%.1f%%)"
             % (delta.region / per,
                100.0 * delta.region / max(delta.total, 1)),
             "  by part:              %s" % ", ".join(
                 "%s %.1f" % (PART_NAMES[k], v)
                 for k, v in parts(delta, per).items()),
             ""]
    for where, r in sorted(delta.filter_ranges.items()):
        if r:
            lines.append("counted lines of %s: %d-%d" % (where, r[0], r[1]))
    for w in sorted(delta.warnings):
        lines.append("WARNING: " + w)
    lines += ["", "header compression, instructions per request "
              "(self = lines of the function, -> = a call from them, "
              "inclusive):", ""]
    lines += breakdown(delta, per)
    lines += ["", "hottest functions of the whole process, self "
              "instructions per request:", ""]
    lines += hot_functions(delta, per)
    lines += ["", "hottest functions, inclusive instructions per request:",
              ""]
    lines += hot_functions(delta, per, inclusive=True)
    m = cache_misses(delta, per)
    if m:
        lines += ["", "simulated cache misses per request (callgrind "
                  "--cache-sim=yes): L1 %.1f, last level %.1f" % (m["l1"],
                                                                  m["ll"]),
                  "", "functions with the most L1 misses per request "
                  "(I1mr + D1mr + D1mw, self):", ""]
        lines += hot_functions(delta, per, limit=15, misses=True)
    c = code_lines(delta, per)
    if c:
        lines += ["", "code run per request (64-octet lines of instructions "
                  "executed at least once a request on average): %d, "
                  "%.1f KiB" % (c["lines"], c["kib"]), ""]
        lines += ["%10d  %s" % (n, obj) for obj, n in
                  sorted(c["by_object"].items(), key=lambda t: -t[1])]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- main

def main(argv):
    """python3 -m bench.nginx_callgrind --objects FILE: self instructions per ELF object,
    one "COUNT OBJECT" line each (bench/stock_cost.sh)."""
    if len(argv) != 3 or argv[1] != "--objects":
        sys.stderr.write("usage: python3 -m bench.nginx_callgrind --objects "
                         "CALLGRIND_OUT\n")
        return 2
    profile = Profile(argv[2])
    if not profile.complete:
        sys.stderr.write("nginx_callgrind: %s has no summary (the process "
                         "did not end)\n" % argv[2])
        return 1
    for obj, cost in sorted(profile.object_cost.items(),
                            key=lambda t: -t[1]):
        print(cost, obj)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
