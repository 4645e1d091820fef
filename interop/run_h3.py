"""HTTP/3: the module's QPACK encoder ("hpack_http3 on") against gtlsclient
(Debian's ngtcp2-client: nghttp3's QPACK decoder, dynamic table 4096,
100 blocked streams), and the builds that must behave as stock.

    /usr/bin/python3 -m interop.run_h3 [--version 1.31.4] [--only REGEX]

Servers of one line, from interop/conf/h3.conf: the module with
"hpack_http3 on" ("h3-on"), the same with "hpack_http3_table_size 512"
("h3-small"), the module loaded with "hpack_http3 off", the patched binary
without the module, and the stock binary.  Each case runs gtlsclient on
one QUIC connection and reads what it prints: every response field
(nghttp3 decoded it), and the raw octets of every stream.

- many requests on one connection to /security (8 add_header fields),
  /trailers (trailers) and /eh/<i> (103 Early Hints from an origin, then
  the 200): every field exactly as the configuration and the origin say,
  in nginx's order, and the same fields as stock's;
- with the module on, the sections after the first get shorter (the
  dynamic table works) and the encoder stream carries the inserts; the
  sizes are printed;
- with the module off or not loaded, every octet of every HEADERS frame is
  stock's (the Date field's value aside);
- hpack_status on "h3-small" and "h3-off" (a /status location, read over
  HTTPS/1.1, which counts nothing): on h3-small, after the cases above and
  a scrape over HTTP/3 itself (which sees its own connection open),
  protocol="h3" is exactly what gtlsclient received (HEADERS payloads and
  encoder-stream octets, fields, indexed field lines, RFC 7541 sizes) and
  the request fields it sent, the gauges back to 0 once the connections
  have closed; protocol="h2" stays all zero, and on h3-off everything
  does.
"""

import re
import subprocess
import sys
import time

from interop import cases_status, harness
from interop.harness import Failure, Skip, check, info
from interop.harness.h3 import (KINDS, LABELS, H3Server, check_logs, frames,
                                security_fields, start_servers, suite)
from interop.harness.origins import early_hints_supported, final, hints

GTLSCLIENT = "/usr/bin/gtlsclient"

REQUESTS = 100
HINTS = 40
# what gtlsclient sends in every request, :path and :authority aside
USER_AGENT = "nghttp3/ngtcp2 client"


# ------------------------------------------------------------- gtlsclient

class Stream:
    def __init__(self, sid):
        self.sid = sid
        self.blocks = []        # [[(name, value)...], ...] as decoded
        self.data = bytearray()  # the stream's octets from the server


def gtlsclient(server, paths, timeout=60):
    """One connection, one request per path; the streams by id (the
    request streams and the server's unidirectional ones)."""
    args = [GTLSCLIENT, "--exit-on-all-streams-close", "--no-http-dump",
            "--timeout=10s", "127.0.0.1", str(server.tls_port)]
    args += ["https://127.0.0.1:%d%s" % (server.tls_port, p) for p in paths]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    out = p.stdout.decode("utf-8", "replace")
    streams = parse(out)
    if isinstance(server, H3Server):
        server.runs.append((paths, streams))
    return p.returncode, out, streams


HEADER = re.compile(r"http: stream 0x([0-9a-f]+) \[(.*?): (.*)\]$")
BEGIN = re.compile(r"http: stream 0x([0-9a-f]+) (?:response headers|trailers)"
                   r" started")
DATA = re.compile(r"Ordered STREAM data stream_id=0x([0-9a-f]+)")
HEX = re.compile(r"^[0-9a-f]{8}  ((?:[0-9a-f]{2} {1,2})+)")


def parse(out):
    streams = {}

    def get(sid):
        return streams.setdefault(sid, Stream(sid))

    current = None
    for line in out.splitlines():
        line = line.rstrip()
        m = re.search(BEGIN, line)
        if m:
            get(int(m.group(1), 16)).blocks.append([])
            current = None
            continue
        m = re.search(HEADER, line)
        if m:
            s = get(int(m.group(1), 16))
            if not s.blocks:
                s.blocks.append([])
            s.blocks[-1].append((m.group(2), m.group(3)))
            current = None
            continue
        m = re.search(DATA, line)
        if m:
            current = get(int(m.group(1), 16))
            continue
        m = HEX.match(line)
        if m and current is not None:
            current.data += bytes.fromhex(m.group(1).replace(" ", ""))
            continue
        if current is not None and not line.startswith(" "):
            current = None
    return streams


def headers_frames(stream):
    return [p for t, p in frames(stream.data) if t == 0x01]


def server_uni(streams, kind):
    """The server's unidirectional stream of the type kind (2: encoder)."""
    for sid, s in streams.items():
        if sid & 3 == 3 and s.data and s.data[0] == kind:
            return s
    return None


def request_streams(streams):
    return [streams[sid] for sid in sorted(streams) if sid & 3 == 0]


# ------------------------------------------------------------------ cases

def expect_fields(what, got, want):
    check(got == want, "%s: fields differ:\n  got  %s\n  want %s"
          % (what, got, want))


def run_security(server):
    paths = ["/security"] * REQUESTS
    rc, out, streams = gtlsclient(server, paths)
    reqs = request_streams(streams)
    check(rc == 0 and len(reqs) == REQUESTS,
          "gtlsclient exited %d with %d streams: %s"
          % (rc, len(reqs), out[-1500:]))
    for s in reqs:
        check(len(s.blocks) == 1, "stream %d: %d field sections"
              % (s.sid, len(s.blocks)))
        expect_fields("GET /security (stream %d)" % s.sid, s.blocks[0],
                      security_fields(s.blocks[0]))
    return streams


def run_trailers(server):
    rc, out, streams = gtlsclient(server, ["/trailers"] * 20)
    reqs = request_streams(streams)
    check(rc == 0 and len(reqs) == 20, "gtlsclient exited %d with %d "
          "streams: %s" % (rc, len(reqs), out[-1500:]))
    for s in reqs:
        check(len(s.blocks) == 2, "stream %d: %d field sections, "
              "expected headers and trailers" % (s.sid, len(s.blocks)))
        h = s.blocks[0]
        want = [(":status", "200"), ("server", h[1][1]),
                ("date", h[2][1]),
                ("content-type", "application/octet-stream"),
                ("content-length", "19"),
                ("x-frame-options", "DENY"),
                ("cache-control",
                 "public, max-age=3600, stale-while-revalidate=60")]
        expect_fields("GET /trailers (stream %d)" % s.sid, h, want)
        expect_fields("GET /trailers trailers (stream %d)" % s.sid,
                      s.blocks[1], [("x-checksum", "0123456789abcdef"),
                                    ("x-trailer-id", "trailer-/trailers")])
    return streams


def run_hints(server):
    if not early_hints_supported(server.version):
        raise Skip("nginx %s has no early_hints (nginx 1.29 and later send "
                   "103 Early Hints)" % server.version)
    paths = ["/eh/%d" % i for i in range(HINTS)]
    rc, out, streams = gtlsclient(server, paths)
    reqs = request_streams(streams)
    check(rc == 0 and len(reqs) == HINTS, "gtlsclient exited %d with %d "
          "streams: %s" % (rc, len(reqs), out[-1500:]))
    for i, s in enumerate(reqs):
        check(len(s.blocks) == 2, "stream %d: %d field sections, expected "
              "103 and 200" % (s.sid, len(s.blocks)))
        want = [(":status", "103")] + [(n.decode(), v.decode())
                                       for n, v in hints(i)]
        expect_fields("GET /eh/%d 103" % i, s.blocks[0], want)
        fields, body = final(i)
        f = s.blocks[1]
        want = [(":status", "200"), ("server", f[1][1]), ("date", f[2][1]),
                ("content-type", "text/plain"),
                ("content-length", str(len(body)))]
        want += [(n.decode(), v.decode()) for n, v in fields
                 if n != b"content-type"]
        expect_fields("GET /eh/%d 200" % i, f, want)
    return streams


def sizes(streams):
    """The HEADERS payload octets per request stream, in order, and the
    encoder stream's octets."""
    per = [sum(len(p) for p in headers_frames(s))
           for s in request_streams(streams)]
    enc = server_uni(streams, 0x02)
    return per, len(enc.data) if enc else 0


# ------------------------------------------------------------ hpack_status

def indexed_lines(section):
    """The indexed field lines of a QPACK section (RFC 9204 4.5.2, 4.5.3:
    static, dynamic or post-base)."""
    _, pos = prefix_int(section, 0, 8)          # Required Insert Count
    _, pos = prefix_int(section, pos, 7)        # Delta Base
    n = 0
    while pos < len(section):
        b = section[pos]
        if b & 0x80 or b & 0xf0 == 0x10:        # indexed, post-base indexed
            _, pos = prefix_int(section, pos, 6 if b & 0x80 else 4)
            n += 1
            continue
        if b & 0x40:                            # literal, name reference
            _, pos = prefix_int(section, pos, 4)
        elif b & 0x20:                          # literal, literal name
            length, pos = prefix_int(section, pos, 3)
            pos += length
        else:                                   # literal, post-base name
            _, pos = prefix_int(section, pos, 3)
        length, pos = prefix_int(section, pos, 7)
        pos += length
    return n


def rfc_size(fields):
    return sum(len(n.encode()) + len(v.encode()) + 32 for n, v in fields)


def h3_expected(server):
    """protocol="h3"'s counters as every gtlsclient run on server makes
    them: what it received exactly; of what it sent, the fields and their
    size (its sections are not shown: their octets and indexed lines are
    bounded in status_h3()).  The gauges at 0."""
    want = dict.fromkeys(cases_status.METRICS, 0)
    for paths, streams in server.runs:
        for s in request_streams(streams):
            sections = headers_frames(s)
            check(len(sections) == len(s.blocks), "stream %d: %d HEADERS, "
                  "%d sections decoded" % (s.sid, len(sections),
                                           len(s.blocks)))
            want["hpack_out_wire_bytes_total"] += sum(map(len, sections))
            want["hpack_out_indexed_total"] += sum(map(indexed_lines,
                                                       sections))
            want["hpack_out_fields_total"] += sum(map(len, s.blocks))
            want["hpack_out_plain_bytes_total"] += sum(map(rfc_size,
                                                           s.blocks))
        enc = server_uni(streams, 0x02)
        if enc:                                 # past the stream type
            want["hpack_out_wire_bytes_total"] += len(enc.data) - 1
            want["hpack_out_stream_bytes_total"] += len(enc.data) - 1
        for path in paths:
            sent = [(":method", "GET"), (":scheme", "https"),
                    (":authority", "127.0.0.1:%d" % server.tls_port),
                    (":path", path), ("user-agent", USER_AGENT)]
            want["hpack_in_fields_total"] += len(sent)
            want["hpack_in_plain_bytes_total"] += rfc_size(sent)
    return want


def poll_status(server, want):
    """The page until it is want (a closed connection's pool is freed
    once QUIC's draining ends), at most 10 s; what differs.  While a
    connection drains, its gauges may fall between the text and the JSON
    forms that scrape() compares: that is tried again too."""
    deadline = time.monotonic() + 10
    while True:
        try:
            page = cases_status.scrape(server)
        except Failure:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
            continue
        got = want(page) if callable(want) else want
        if page == got or time.monotonic() > deadline:
            return cases_status.differences(page, got)
        time.sleep(0.1)


def zero_page():
    return {p: (dict.fromkeys(cases_status.METRICS, 0),
                dict.fromkeys(kinds, 0))
            for p, kinds in cases_status.KINDS.items()}


def status_h3(server):
    # a scrape over HTTP/3: its own connection is open while it is made
    rc, out, streams = gtlsclient(server, ["/status"])
    reqs = request_streams(streams)
    check(rc == 0 and len(reqs) == 1, "gtlsclient exited %d with %d "
          "streams: %s" % (rc, len(reqs), out[-1500:]))
    body = b"".join(p for t, p in frames(reqs[0].data) if t == 0x00)
    during, _ = cases_status.parse_text(body.decode())["h3"]
    check(during["hpack_connections"] >= 1
          and during["hpack_table_bytes"] > 0,
          "the page over HTTP/3: hpack_connections %d, hpack_table_bytes %d"
          % (during["hpack_connections"], during["hpack_table_bytes"]))

    exact = h3_expected(server)

    def want(page):
        """exact, and of the client's sections what is only bounded
        (gtlsclient's encoder is nghttp3's; run_h3_hostile checks these
        counters exactly against octets it writes itself)"""
        values = dict(exact)
        got = page["h3"][0]
        sections = got["hpack_in_wire_bytes_total"] \
            - got["hpack_in_stream_bytes_total"]
        if 0 < sections < exact["hpack_in_plain_bytes_total"] \
                and got["hpack_in_indexed_total"] \
                <= exact["hpack_in_fields_total"]:
            for k in ("hpack_in_wire_bytes_total", "hpack_in_indexed_total",
                      "hpack_in_stream_bytes_total"):
                values[k] = got[k]
        page = zero_page()
        page["h3"] = (values, page["h3"][1])
        return page

    wrong = poll_status(server, want)
    check(not wrong, "after %d connections: %s" % (len(server.runs), wrong))
    h3 = cases_status.scrape(server)["h3"][0]
    info("h3: %d connections; out %d octets (encoder stream %d), %d fields, "
         "%d indexed; in %d octets (encoder stream %d), %d fields, "
         "%d indexed"
         % (len(server.runs), h3["hpack_out_wire_bytes_total"],
            h3["hpack_out_stream_bytes_total"],
            h3["hpack_out_fields_total"], h3["hpack_out_indexed_total"],
            h3["hpack_in_wire_bytes_total"], h3["hpack_in_stream_bytes_total"],
            h3["hpack_in_fields_total"], h3["hpack_in_indexed_total"]))


def status_off(server):
    wrong = poll_status(server, zero_page())
    check(not wrong, "hpack_http3 off, after %d connections: %s"
          % (len(server.runs), wrong))


STATUS_CASES = {"small": ("hpack_status_h3_counters_are_what_gtlsclient_saw",
                          status_h3),
                "off": ("hpack_status_counts_nothing_with_hpack_http3_off",
                        status_off)}


CASES = [("security", "gtlsclient_%d_requests_one_connection_8_headers_exact"
          % REQUESTS, run_security),
         ("trailers", "gtlsclient_20_requests_trailers_exact", run_trailers),
         ("hints", "gtlsclient_%d_requests_103_early_hints_exact" % HINTS,
          run_hints)]


def main():
    args, results = suite(__doc__, "run_h3")
    start = time.monotonic()
    if harness.line_absent(results, args.version, "every HTTP/3 case"):
        return results.finish()
    run(results, args.version)
    print("run_h3: nginx %s, %.0fs" % (args.version, time.monotonic() - start))
    return results.finish()


def run(results, version):
    """Every case against the five servers of the line, into results (also
    run_interop.py --asan's HTTP/3 suite, under the sanitizer build); the
    servers are stopped at the end."""
    running = {}
    seen = {}                   # (case, kind) -> streams
    try:
        start_servers(results, version, KINDS, running)

        for case, name, fn in CASES:
            for kind, server in running.items():
                def one(server=server, fn=fn, case=case, kind=kind):
                    seen[(case, kind)] = fn(server)
                results.run(server.label, name, one)

        for case, _, _ in CASES:
            if (case, "stock") not in seen:
                continue
            st = seen[(case, "stock")]
            stock_sizes = sizes(st)
            info("stock %s: HEADERS payload octets first %d, then %s"
                 % (case, stock_sizes[0][0], sorted(set(stock_sizes[0][1:]))))
            for kind in ("on", "small"):
                if (case, kind) not in seen:
                    continue

                def smaller(kind=kind, case=case):
                    per, enc = sizes(seen[(case, kind)])
                    info("%s %s: section octets first %d, warm mean %.1f "
                         "(stock %.1f), encoder stream %d octets; "
                         "section+stream per response %.1f (stock %.1f)"
                         % (LABELS[kind], case, per[0],
                            sum(per[1:]) / max(1, len(per) - 1),
                            sum(stock_sizes[0][1:])
                            / max(1, len(stock_sizes[0]) - 1), enc,
                            (sum(per) + enc) / len(per),
                            sum(stock_sizes[0]) / len(stock_sizes[0])))
                    check(sum(per) + enc < sum(stock_sizes[0]),
                          "no smaller than stock")
                results.run(running[kind].label,
                            "%s_sections_with_the_table_are_smaller" % case,
                            smaller)
            for kind in ("off", "nomod"):
                if (case, kind) not in seen:
                    continue

                def identical(kind=kind, case=case):
                    mine = request_streams(seen[(case, kind)])
                    ref = request_streams(st)
                    check(len(mine) == len(ref), "stream counts differ")
                    for a, b in zip(mine, ref):
                        fa, fb = headers_frames(a), headers_frames(b)
                        check(len(fa) == len(fb), "stream %d: %d HEADERS "
                              "frames, stock %d" % (a.sid, len(fa), len(fb)))
                        for x, y in zip(fa, fb):
                            check(same_but_date(x, y),
                                  "stream %d: HEADERS differ from stock's:"
                                  "\n  %s\n  %s" % (a.sid, x.hex(), y.hex()))
                    check(server_uni(seen[(case, kind)], 0x02) is None,
                          "an encoder stream was opened")
                results.run(running[kind].label,
                            "%s_headers_frames_are_stocks_octets" % case,
                            identical)

        for kind, (name, fn) in STATUS_CASES.items():
            if kind in running:
                results.run(running[kind].label, name, fn, running[kind])

        check_logs(results, running)
    finally:
        for s in running.values():
            s.stop()


def prefix_int(data, pos, bits):
    v = data[pos] & ((1 << bits) - 1)
    pos += 1
    if v < (1 << bits) - 1:
        return v, pos
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        v += (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def lines(section):
    """The field lines of a static-only section, each as (static index of
    its name or None, its octets), after the two-octet prefix."""
    pos, out = 2, []
    while pos < len(section):
        start, b = pos, section[pos]
        if b & 0x80:                    # indexed field line
            index, pos = prefix_int(section, pos, 6)
        elif b & 0x40:                  # literal with name reference
            index, pos = prefix_int(section, pos, 4)
            n, pos = prefix_int(section, pos, 7)
            pos += n
        elif b & 0x20:                  # literal with literal name
            index = None
            n, pos = prefix_int(section, pos, 3)
            pos += n
            n, pos = prefix_int(section, pos, 7)
            pos += n
        else:
            raise Failure("not a static-only section: %s" % section.hex())
        out.append((index, section[start:pos]))
    return out


DATE_INDEX = 6


def same_but_date(x, y):
    """Two static-only sections equal octet for octet but for the Date
    field's value (the one field that differs between two servers)."""
    if x[:2] != y[:2]:
        return False
    lx = [(i, o if i != DATE_INDEX or o[0] & 0x80 else None)
          for i, o in lines(x)]
    ly = [(i, o if i != DATE_INDEX or o[0] & 0x80 else None)
          for i, o in lines(y)]
    return lx == ly


if __name__ == "__main__":
    sys.exit(main())
