"""Case 1: real clients (nghttp, curl, h2load) get correct responses; and
the builds that must behave like stock nginx put the same bytes on the wire.
"""

import re

from interop.harness import (Failure, RawH2, Skip, check, info,
                             request_headers, run_tool)
from interop.harness.responses import ECHO_VALUE, expect
from interop.harness.tools import h2load, parse_nghttp

# the paths each client asks for, on one connection, twice over so that the
# second round can use what the first put in the dynamic table
PATHS = [("/headers", 200), ("/security", 200), ("/echo", 200),
         ("/tiny", 200), ("/redirect", 302), ("/trailers", 200),
         ("/nope", 404)]
ROUNDS = PATHS + [(p + "?again", st) for p, st in PATHS[:3]]


def split_trailers(headers):
    """nghttp prints trailers as more recv lines: split them off."""
    for i, (name, _) in enumerate(headers):
        if i and name == ":status":
            raise Failure("two :status in one stream")
    names = [n for n, _ in headers]
    if "x-checksum" in names:
        i = names.index("x-checksum")
        return headers[:i], headers[i:]
    return headers, None


def nghttp_gets_correct_responses(server, tls):
    urls = [server.url(p, tls) for p, _ in ROUNDS]
    rc, out = run_tool(["nghttp", "-nv", "-H", "x-h00: " + ECHO_VALUE]
                       + urls, timeout=60)
    bad = [line for line in out.splitlines()
           if "[ERROR]" in line or "recv RST_STREAM" in line
           or ("GOAWAY" in line and "recv" in line)]
    check(rc == 0 and not bad, "nghttp exited %d: %s" % (rc, bad or
                                                        out[-800:]))
    streams = parse_nghttp(out)
    got = [s for s in streams.values() if s["path"]]
    check(len(got) == len(ROUNDS), "nghttp made %d requests, expected %d"
          % (len(got), len(ROUNDS)))
    status = dict(ROUNDS)
    for s in got:
        headers, trailers = split_trailers(s["headers"])
        check(headers, "GET %s: no response headers" % s["path"])
        path = s["path"].split("?")[0]
        expect(path, status[s["path"]], headers, trailers, ua="nghttp2/")
        if path == "/trailers":
            check(trailers, "GET /trailers: no trailers")
        if path == "/echo" and server.hpack_on:
            # hpack_never_index x-secret-token: the module sends it with
            # the never-indexed representation, and nghttp says so
            check("x-secret-token" in s["sensitive"],
                  "x-secret-token (hpack_never_index) did not arrive "
                  "never-indexed")


def parse_curl_dump(out):
    """curl -D - output: a list of header lists, one per response."""
    blocks, cur = [], None
    for line in out.splitlines():
        line = line.rstrip("\r")
        m = re.match(r"^HTTP/(\S+) (\d+)", line)
        if m:
            cur = [(":status", m.group(2)), (":version", m.group(1))]
            blocks.append(cur)
        elif line and cur is not None and ":" in line:
            name, value = line.split(":", 1)
            cur.append((name.strip().lower(), value.strip()))
        elif not line:
            cur = None
    return blocks


def curl_gets_correct_responses(server, tls):
    paths = [p for p, _ in ROUNDS if p != "/trailers"]
    status = {p.split("?")[0]: st for p, st in ROUNDS}
    base = ["curl", "-sS", "-D", "-", "-H", "x-h00: " + ECHO_VALUE,
            "-w", "%{stderr}%{http_version} %{num_connects}\\n"]
    if tls:
        # one connection for all of them
        args = base + ["--http2", "-k"]
        for p in paths:
            args += ["-o", "/dev/null", server.url(p, tls=True)]
        runs = [(paths, args)]
    else:
        # curl 7.88.1 cannot reuse an h2c prior-knowledge connection
        # (curl/curl#10634, fixed in 8.0 by #10643; stock nginx shows the
        # same error): one connection per request
        runs = [([p], base + ["--http2-prior-knowledge", "-o", "/dev/null",
                              server.url(p)]) for p in paths]
    for want, args in runs:
        rc, out = run_tool(args, timeout=60)
        check(rc == 0, "curl exited %d: %s" % (rc, out[-600:]))
        blocks = parse_curl_dump(out)
        check(len(blocks) == len(want), "curl printed %d responses, "
              "expected %d: %s" % (len(blocks), len(want), out[-600:]))
        for p, headers in zip(want, blocks):
            p = p.split("?")[0]
            check(dict(headers)[":version"] == "2",
                  "GET %s: HTTP/%s, not HTTP/2" % (p, dict(headers)
                                                   [":version"]))
            expect(p, status[p], headers[:1] + headers[2:], ua="curl/")
        conns = re.findall(r"^2 (\d+)$", out, re.M)
        if tls:
            check(conns.count("1") == 1, "curl used %d connections for %d "
                  "requests" % (conns.count("1"), len(want)))


def h2load_smoke(server, tls):
    n = 2000
    rc, out, (total, started, done, ok, failed, errored, timeout) = h2load(
        ["-n", str(n), "-c", "2", "-m", "10", server.url("/headers", tls)])
    codes = re.search(r"status codes: (\d+) 2xx", out)
    check(rc == 0 and ok == n and failed == 0 and errored == 0
          and timeout == 0 and codes and int(codes.group(1)) == n,
          "h2load: %d succeeded, %d failed, %d errored, %d timeout, "
          "2xx %s (exit %d)" % (ok, failed, errored, timeout,
                                codes and codes.group(1), rc))


# ------------------------------------------------------- wire comparisons

def wire_sequence(server):
    """A fixed request sequence on one connection (the same encoder bytes
    every time): the response header blocks exactly as they came, and the
    decoded header lists."""
    c = RawH2(server.h2c_port)
    try:
        seq = [("/security", ()),
               ("/echo-stable", (("user-agent", "interop/1.0"),
                                 ("x-h00", ECHO_VALUE),
                                 ("cookie", "a=b"), ("cookie", "c=d"))),
               ("/tiny", ()), ("/redirect", ()), ("/nope", ()),
               ("/trailers-stable", ()), ("/security", ()),
               ("/echo-stable", (("user-agent", "interop/1.0"),
                                 ("x-h01", "second"),))]
        for path, extra in seq[:6]:
            c.get(request_headers(server, path, extra))
        # the client shrinks its table: stock answers with a size update
        c.send(c.settings(header_table_size=1024))
        c.wait_acks()
        for path, extra in seq[6:]:
            c.get(request_headers(server, path, extra))
        blocks = [b for _, b, _ in c.tap.blocks]
    finally:
        c.close()
    return blocks


def decoded(blocks):
    from hpack import Decoder
    d = Decoder()
    out = []
    for b in blocks:
        out.append([(n, v) for n, v in d.decode(b, raw=True)])
    return out


def dates(blocks):
    return {v for hs in decoded(blocks) for n, v in hs if n == b"date"}


def header_bytes_identical_to_stock(server, stock):
    """hpack off, or the patched binary without the module: every response
    header block is byte for byte what stock nginx sends."""
    for attempt in range(5):
        ref = wire_sequence(stock)
        got = wire_sequence(server)
        if len(dates(ref) | dates(got)) == 1:     # same second: comparable
            break
    else:
        raise Skip("the clock second changed during every attempt")
    check(len(ref) == len(got), "%d header blocks, stock sent %d"
          % (len(got), len(ref)))
    for i, (a, b) in enumerate(zip(ref, got)):
        check(a == b, "header block %d differs from stock:\n  stock %s\n"
              "  this  %s" % (i, a.hex(), b.hex()))
    info("%d header blocks, %d bytes, identical to stock"
         % (len(got), sum(map(len, got))))


def decoded_headers_same_as_stock(server, stock):
    """hpack on: other bytes, the same header lists (dates aside)."""
    def norm(blocks):
        return [[(n, b"<date>" if n == b"date" else v) for n, v in hs]
                for hs in decoded(blocks)]
    ref, got = wire_sequence(stock), wire_sequence(server)
    a, b = norm(ref), norm(got)
    check(len(a) == len(b), "%d header blocks, stock sent %d"
          % (len(b), len(a)))
    for i, (x, y) in enumerate(zip(a, b)):
        check(x == y, "header list %d differs from stock:\n  stock %r\n"
              "  this  %r" % (i, x, y))
    info("%d header blocks: %d bytes on the wire, stock %d"
         % (len(got), sum(map(len, got)), sum(map(len, ref))))


def register(results, server, stock):
    L = server.label
    results.run(L, "nghttp_h2c_gets_correct_responses",
                nghttp_gets_correct_responses, server, False)
    results.run(L, "nghttp_tls_gets_correct_responses",
                nghttp_gets_correct_responses, server, True)
    results.run(L, "curl_h2c_prior_knowledge_gets_correct_responses",
                curl_gets_correct_responses, server, False)
    results.run(L, "curl_tls_http2_gets_correct_responses",
                curl_gets_correct_responses, server, True)
    results.run(L, "h2load_h2c_smoke_has_no_failed_requests",
                h2load_smoke, server, False)
    results.run(L, "h2load_tls_smoke_has_no_failed_requests",
                h2load_smoke, server, True)
    if server is stock:
        return
    if server.hpack_on:
        results.run(L, "response_headers_decode_to_the_same_lists_as_stock",
                    decoded_headers_same_as_stock, server, stock)
    else:
        results.run(L, "response_header_bytes_identical_to_stock",
                    header_bytes_identical_to_stock, server, stock)
