"""Case 5: malformed request header blocks, and request headers nginx
must judge exactly as stock does.

Each block is a complete GET /tiny with one defect.  With "hpack on" the
answer must be GOAWAY with COMPRESSION_ERROR (0x9); with "hpack off" and
with the patched binary without the module, the same answer as stock nginx.
Stock's own answers are recorded: it accepts some blocks RFC 7541 forbids
(a size update after a field, Huffman padding over 7 bits), known
conformance failures the module fixes.  After every case nginx must serve a
normal request on a new connection, from the same worker process.

The second family sends request headers that are valid HPACK but that
nginx refuses, ignores or classifies (invalid names and values, pseudo-
header order, underscores per server, the user-agent, the size limits of
large_client_header_buffers), first as literals that enter the table and
then as references to those entries: the module remembers what it learnt
about an entry, and every build must answer exactly as stock does.
"""


from interop.harness import RawH2, check, encode_int, info
from interop.harness.blocks import echo_base, huffman, idx, inc, lit
from interop.harness.sequences import run_sequence, still_serves


def base(server):
    """:method GET, :scheme http, :path /tiny, :authority: a valid block."""
    return (b"\x82\x86" + b"\x04" + lit(b"/tiny")
            + b"\x01" + lit(server.authority.encode()))


def field(value_bytes, name=b"x-bad"):
    """A literal without indexing with a new name and value_bytes as the
    value's length byte(s) and content."""
    return b"\x00" + lit(name) + value_bytes


CASES = [
    # name, what it is, block builder
    ("indexed_field_index_0", "indexed field with index 0 (0x80)",
     lambda s: base(s) + b"\x80"),
    ("indexed_field_past_the_table", "index 62 on an empty dynamic table",
     lambda s: base(s) + b"\xbe"),
    ("indexed_field_far_past_the_table", "index 5000",
     lambda s: base(s) + encode_int(5000, 7, 0x80)),
    ("literal_name_index_past_the_table",
     "literal with incremental indexing, name index 62 on an empty table",
     lambda s: base(s) + b"\x7e" + lit(b"v")),
    ("size_update_after_a_field",
     "a size update to 0 after :method (RFC 7541 4.2)",
     lambda s: b"\x82\x20" + base(s)[1:]),
    ("size_update_above_4096",
     "a size update to 4097, above SETTINGS_HEADER_TABLE_SIZE",
     lambda s: encode_int(4097, 5, 0x20) + base(s)),
    ("eos_inside_huffman_string",
     "Huffman value 0xffffffff (contains the 30-bit EOS code)",
     lambda s: base(s) + field(b"\x84\xff\xff\xff\xff")),
    ("huffman_padding_longer_than_7_bits",
     "Huffman value 0x1f 0xff: 'a' and 11 bits of padding",
     lambda s: base(s) + field(b"\x82\x1f\xff")),
    ("huffman_padding_not_all_ones",
     "Huffman value 0x18: 'a' padded with 000",
     lambda s: base(s) + field(b"\x81\x18")),
    ("overlong_integer",
     "indexed field 0xff 0x80 0x00 (127 with a redundant zero byte)",
     lambda s: base(s) + b"\xff\x80\x00"),
    ("integer_overflow",
     "string length 0x7f followed by nine 0xff continuation bytes",
     lambda s: base(s) + b"\x00" + lit(b"x-bad") + b"\x7f" + b"\xff" * 9
     + b"\x01"),
    ("literal_longer_than_the_block",
     "value length 100 with 3 bytes left in the block (END_HEADERS)",
     lambda s: base(s) + field(b"\x64abc")),
]

# what stock nginx 1.26.3 answers and RFC 7541 does not allow
KNOWN_STOCK = {
    "size_update_after_a_field": "hpack/4.2/1",
    "huffman_padding_longer_than_7_bits": "hpack/5.2/1",
}


def send_malformed(server, build):
    c = RawH2(server.h2c_port, timeout=5)
    try:
        return c.outcome(c.request_block(build(server)))
    finally:
        c.close()


def run_case(server, name, what, build, stock_answers, table):
    worker = server.worker_pid()
    mark = server.error_log_size()
    outcome = send_malformed(server, build)
    table.setdefault(name, {})[server.name] = outcome
    logged = [line.split("] ", 1)[-1] for line in
              server.error_log_text(mark).splitlines() if "[info]" in line]
    still_serves(server, worker)
    if server.hpack_on:
        check(outcome == "GOAWAY COMPRESSION_ERROR",
              "sent %s (%s): got %s, expected GOAWAY COMPRESSION_ERROR; "
              "error log: %s" % (what, build(server).hex(), outcome,
                                 logged[-2:]))
    elif server.kind == "stock":
        stock_answers[name] = outcome
        if outcome != "GOAWAY COMPRESSION_ERROR":
            info("stock answers %s with %s%s" % (
                what, outcome, " (known: h2spec %s)" % KNOWN_STOCK[name]
                if name in KNOWN_STOCK else ""))
    else:
        ref = stock_answers.get(name)
        check(ref is not None, "no stock answer to compare with")
        check(outcome == ref, "sent %s: got %s, stock nginx answers %s"
              % (what, outcome, ref))


# --------------------------------------------- headers judged like stock

def auth_first(server):
    """GET /tiny with :method and :scheme last (two one-byte fields)."""
    return (b"\x01" + lit(server.authority.encode()) + b"\x04"
            + lit(b"/tiny") + b"\x82\x86")


MSIE6 = b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
FIREFOX = b"Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101"
U = "underscores.test"

# One of each class ngx_http_process_user_agent() makes (MSIE 6 without
# and with SV1, MSIE 5.5 and 8, Opera posing as MSIE, Chrome, Safari,
# Firefox, Konqueror, none), for /ua.
USER_AGENTS = [
    MSIE6,
    b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
    b"Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)",
    b"Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0)",
    b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 8.50",
    b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
    b"(KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    b"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 "
    b"(KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    FIREFOX,
    b"Mozilla/5.0 (compatible; Konqueror/4.5; Linux) KHTML/4.5.5",
    b"curl/8.5.0",
]


def ua_block(server, user_agent=None):
    """GET /ua accepting gzip, then the user-agent as a new entry (or, with
    none, index 62: the entry the block before made)."""
    return (b"\x82\x86" + b"\x04" + lit(b"/ua") + b"\x01"
            + lit(server.authority.encode()) + b"\x00"
            + lit(b"accept-encoding") + lit(b"gzip")
            + (inc(b"user-agent", user_agent) if user_agent else idx(62)))


def ua_sequence():
    """Each user-agent entered, indexed, and entered again (a new entry,
    whose class the connection has not seen but the worker has)."""
    out = []
    for ua in USER_AGENTS:
        out += [lambda s, ua=ua: ua_block(s, ua), lambda s: ua_block(s),
                lambda s, ua=ua: ua_block(s, ua)]
    return out

# name: (what, [block builders, one request each, on one connection])
SEQUENCES = {
    "uppercase_name": ("X-H00 as a literal, then indexed", [
        lambda s: echo_base(s) + inc(b"X-H00", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "underscore_name": ("x_h00 (ignored: underscores_in_headers off)", [
        lambda s: echo_base(s) + inc(b"x_h00", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "underscore_name_across_servers": (
        "x_h00 to underscores.test (kept), then the same entry to the "
        "default server (ignored), then to underscores.test again", [
            lambda s: echo_base(s, U) + inc(b"x_h00", b"v"),
            lambda s: echo_base(s) + idx(62),
            lambda s: echo_base(s, U) + idx(62),
            lambda s: echo_base(s) + inc(b"x_h00", b"w"),
            lambda s: echo_base(s, U) + idx(62)]),
    "nul_in_value": ("a NUL in a value", [
        lambda s: echo_base(s) + inc(b"x-h00", b"a\x00b"),
        lambda s: echo_base(s) + idx(62)]),
    "control_character_in_value": ("0x01 in a value (allowed)", [
        lambda s: echo_base(s) + inc(b"x-h00", b"a\x01b"),
        lambda s: echo_base(s) + idx(62)]),
    "colon_in_name": ("x:h00", [
        lambda s: echo_base(s) + inc(b"x:h00", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "space_in_name": ("x h00", [
        lambda s: echo_base(s) + inc(b"x h00", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "high_byte_in_name": ("x-h\xff0 (ignored)", [
        lambda s: echo_base(s) + inc(b"x-h\xff0", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "unknown_pseudo_header": (":foo", [
        lambda s: echo_base(s) + inc(b":foo", b"v"),
        lambda s: echo_base(s) + idx(62)]),
    "pseudo_header_after_regular": (":path after x-h00", [
        lambda s: b"\x82\x86" + inc(b"x-h00", b"v") + b"\x04"
        + lit(b"/echo") + b"\x01" + lit(s.authority.encode())]),
    "user_agent_classification": (
        "MSIE 6 and Firefox user-agents, literal then indexed ($msie)", [
            lambda s: echo_base(s) + inc(b"user-agent", MSIE6),
            lambda s: echo_base(s) + idx(62),
            lambda s: echo_base(s) + inc(b"user-agent", FIREFOX),
            lambda s: echo_base(s) + idx(62),
            lambda s: echo_base(s) + idx(63)]),
    # twice, the second time on a new connection: every class the worker
    # has met before
    "user_agent_classes": (
        "10 user-agents (MSIE, Opera, Chrome, Safari, Firefox, Konqueror, "
        "curl) to /ua, each entered, indexed and entered again ($msie, "
        "the 404 page's padding, gzip_disable msie6)", ua_sequence()),
    "user_agent_classes_again": (
        "the same on a new connection", ua_sequence()),
    "cookie_crumbs_indexed": ("two cookie crumbs, then both indexed", [
        lambda s: echo_base(s) + inc(b"cookie", b"a=1") + inc(b"cookie",
                                                               b"b=2"),
        lambda s: echo_base(s) + idx(63) + idx(62)]),
    # RFC 9113 allows an empty CONTINUATION.  Stock nginx 1.26.3 does not
    # answer such a request until more bytes arrive when the block's last
    # field ends 4 or more bytes into the frame (its read loop does not run
    # a state for zero bytes); when fewer are left it pulls the next frame
    # in early and answers.  The first request is a normal one: the second
    # is the one judged (a SETTINGS ACK could wake the first up).
    "empty_final_continuation_after_indexed_fields": (
        "a block ending in two indexed fields, whole in HEADERS, then an "
        "empty CONTINUATION with END_HEADERS", [
            lambda s: auth_first(s),
            lambda s: (auth_first(s), [len(auth_first(s))])]),
    "empty_final_continuation_after_a_literal": (
        "a block ending in a literal, whole in HEADERS, then an empty "
        "CONTINUATION with END_HEADERS", [
            lambda s: base(s),
            lambda s: (base(s), [len(base(s))])]),
    "hpack_bomb": ("a 4000-byte entry, then 200 one-byte references to it", [
        lambda s: echo_base(s) + inc(b"x-h00", b"A" * 4000),
        lambda s: echo_base(s) + idx(62) * 200]),
    "raw_field_over_large_client_header_buffers": (
        "a raw 17000-byte value (large_client_header_buffers 8 16k)", [
            lambda s: echo_base(s) + b"\x00" + lit(b"x-h00")
            + lit(b"a" * 17000)]),
    "huffman_field_under_large_client_header_buffers": (
        "17000 'a' Huffman-coded to 10625 bytes", [
            lambda s: echo_base(s) + b"\x00" + lit(b"x-h00")
            + huffman(b"a" * 17000)]),
    "huffman_field_over_large_client_header_buffers": (
        "9000 '{' Huffman-coded to 16875 bytes", [
            lambda s: echo_base(s) + b"\x00" + lit(b"x-h00")
            + huffman(b"{" * 9000)]),
    "empty_block_after_padding": (
        "a HEADERS frame whose padding is all of its payload after the pad "
        "length (RFC 9113 6.2 allows it: an empty field block)", [
            lambda s: (b"", (), 5)]),
    # RFC 7541 5.1 allows an integer longer than its shortest encoding;
    # nginx reads up to four octets (ngx_http_v2_parse_int())
    "integers_in_longer_encodings": (
        "a leading size update to 4096, a static name index (15) and a "
        "value length (127) in longer encodings than the shortest, of "
        "three and four octets", [
            lambda s: b"\x3f\xe1\x9f\x00" + echo_base(s) + b"\x0f\x80\x00"
            + lit(b"utf-8") + b"\x00" + lit(b"x-h00") + b"\x7f\x80\x80\x00"
            + b"v" * 127,
            lambda s: echo_base(s) + b"\x0f\x80\x80\x00" + lit(b"utf-8")
            + b"\x00" + lit(b"x-h00") + b"\x7f\x80\x00" + b"w" * 127]),
    "integer_of_five_octets": (
        "a value length of 127 in five octets", [
            lambda s: echo_base(s) + b"\x00" + lit(b"x-h00")
            + b"\x7f\x80\x80\x80\x00" + b"v" * 127]),
    "value_length_of_five_octets": (
        "a value length of 2,097,279 (five octets at the shortest)", [
            lambda s: echo_base(s) + b"\x00" + lit(b"x-h00")
            + b"\x7f\x80\x80\x80\x01" + b"v" * 127]),
}


# Sequences where stock nginx is wrong and the module is not: the module
# must give these answers; stock's are recorded.  Stock never answers the
# second request of the first (a read loop that runs no state for zero
# bytes); the module's block state finishes an empty final CONTINUATION at
# once.  An empty field block decodes to no field (RFC 9113 4.3): the
# request lacks its pseudo-header fields, which nginx answers 400, where
# stock ends the connection (FRAME_SIZE_ERROR, "header block with
# incorrect length").
MODULE_ANSWERS = {
    "empty_final_continuation_after_a_literal":
        ["response 200 []", "response 200 []"],
    "empty_block_after_padding": ["response 400 []"],
}


def run_judged(server, name, what, builders, stock_answers):
    worker = server.worker_pid()
    got = run_sequence(server, builders)
    still_serves(server, worker)
    if server.kind == "stock":
        stock_answers[name] = got
        info("stock: %s" % "; ".join(got))
        return
    if server.hpack_on and name in MODULE_ANSWERS:
        want = MODULE_ANSWERS[name]
        check(got == want, "sent %s:\n  got   %s\n  want  %s\n  stock %s"
              % (what, "; ".join(got), "; ".join(want),
                 "; ".join(stock_answers.get(name, []))))
        return
    ref = stock_answers.get(name)
    check(ref is not None, "no stock answer to compare with")
    check(got == ref, "sent %s:\n  got   %s\n  stock %s"
          % (what, "; ".join(got), "; ".join(ref)))


def register(results, servers, stock):
    stock_answers = {}
    table = {}
    ordered = sorted(servers, key=lambda s: s.kind != "stock")
    for name, what, build in CASES:
        for s in ordered:
            if s.hpack_on:
                title = "malformed_%s_closes_with_compression_error" % name
            elif s.kind == "stock":
                title = "malformed_%s_stock_answer_recorded" % name
            else:
                title = "malformed_%s_same_answer_as_stock" % name
            results.run(s.label, title + "_and_nginx_keeps_serving",
                        run_case, s, name, what, build, stock_answers, table)
    judged = {}
    for name, (what, builders) in SEQUENCES.items():
        for s in ordered:
            title = "request_header_%s_%s" % (
                name, "stock_answer_recorded" if s.kind == "stock"
                else "answered_where_stock_is_not" if s.hpack_on
                and name in MODULE_ANSWERS else "same_answer_as_stock")
            results.run(s.label, title, run_judged, s, name, what, builders,
                        judged)
    if table:
        names = [s.name for s in servers]
        width = max(len(n) for n, _, _ in CASES)
        print("      %-*s  %s" % (width, "malformed block",
                                  "  ".join("%-26s" % n for n in names)))
        for name, _, _ in CASES:
            row = table.get(name, {})
            print("      %-*s  %s" % (width, name, "  ".join(
                "%-26s" % row.get(n, "-") for n in names)), flush=True)
