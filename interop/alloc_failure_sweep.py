"""The allocation failure sweep: every allocation the module and the codec
make for a connection's first requests fails once, and each time the
server answers cleanly, logs it, does not crash, leaks nothing and serves
the next connection.

    BUILD=build /usr/bin/python3 -m interop.alloc_failure_sweep
        [--version V] [--plain] [--status] [--h3] [--at N,N]

Runs build/nginx-hpack-asan-fail-alloc (make nginx-asan-fail-alloc: the
sanitizer build with NGX_HTTP_HPACK_FAIL_ALLOC, where the worker counts
the module's allocation calls, the codec allocator's among them, logs
each with its function and fails the one numbered by the environment's
NGX_HTTP_HPACK_FAIL_ALLOC; module/ngx_http_hpack_module.h), nginx 1.26.3,
or with --version that line's build/nginx-V-hpack-asan-fail-alloc (make
nginx-asan-fail-alloc NGINX_VERSION=V), with
interop/conf/alloc-failure.conf.  A line whose source is absent
(scripts/nginx-source.sh exits 77) is reported skipped.  Two sweeps, each alone with its option:
plain, and with an hpack_status location (the codec then allocates
through the page's counting allocator, and the workload ends with a
request for the page); on the lines with the module's HTTP/3 and 103
Early Hints (1.30.4, 1.31.4) a third, --h3, over HTTP/3 (below).  --at sweeps only the
allocations numbered.

First a run that fails nothing lists the allocations of the workload:
one connection, four requests with a browser's fields (x-secret-token
never indexed).  The second repeats the first (references to the dynamic
tables); the third changes two fields and adds 12, and its response (a
file) has 36 add_header fields, an uppercase name, a variable of the
module, a charset and a trailer, so that both tables outgrow their first
storage; the fourth adds a field of 30,000 octets, which h2 splits
between HEADERS and CONTINUATION.  From nginx 1.29 on (early_hints,
max_headers) three requests go to a location that proxies an HTTP/1.1
origin on 127.0.0.1 which answers with a 103 Early Hints (Link fields
as in the Early Hints tests, spelt "Link") and then a 200, passed
on with "early_hints $http2;": two before the workload (the first's 103
of 40 Link fields is the connection's first block: the module makes its
encoder and grows its table for a 103; the second repeats 2 of its
links), one after it; and before that last one a request of more fields
than max_headers (24), which nginx answers with a 400 while the decoder
reads the rest of the block.  Then
for each N a server of its own fails allocation N, and the workload
(begun where the wall clock's second leaves it time to end:
same_second()) must give:

  - a clean answer to each request: a response whose fields, body and
    trailers are the expected ones (200: a failure the module or the
    codec absorbs, as an encoder table that cannot grow leaves fields
    unindexed; with the origin's exact 103 before it), a 500 (after the
    103 or without it: stock nginx answers 500 when its early hints
    filter fails), the 400 of the request over max_headers, a
    RST_STREAM INTERNAL_ERROR, or a GOAWAY
    INTERNAL_ERROR (the requests after it are then not answered); or,
    for an allocation of the connection's setup, the connection closed
    before nginx sent anything, as stock nginx closes it when its own
    setup allocations fail (ngx_http_v2_init()); nothing else, no hang
    (10 s timeout);
  - a second connection served as in the run that failed nothing;
  - with hpack_status, its gauges (connections, table bytes) back to 0
    once both connections have closed, read over HTTP/1.1;
  - at a graceful stop: no worker exited on a signal, no ASan or UBSan
    report, no leak of the product (interop/sanitizer_reports.py);
  - the error log's "hpack: allocation N in F() failed" line (the
    wrapper's, standing in for the "malloc() failed" line of
    ngx_alloc()).

The HTTP/3 sweep adds a QUIC listener with "hpack_http3 on" to the
server (TLS on 18252 + INTEROP_PORT_SHIFT, UDP and TCP) and sends
gtlsclient's requests (interop/run_h3.py reads what it prints) at once
on one connection: /eh/10 (the origin's 103 of 40 links, then its 200),
/headers, /many (38 fields and a trailer), /headers again.  It fails only
the allocations of the HTTP/3 code (swept_site(): the functions of
ngx_http_hpack_v3.c, the QPACK codec's through its allocator callback);
the others are those of the response fields' gathering, which the HTTP/2
sweeps fail.  A clean answer is then a 200 with every field and trailer
as in the run without a failure (the date's value aside) and the body,
after the origin's exact 103 for /eh/10; a 500; a RESET_STREAM
H3_INTERNAL_ERROR (what stock nginx sends for a request it ends on an
error of its own: ngx_http_v3_reset_stream()); or the connection closed
with H3_INTERNAL_ERROR, the requests then unanswered left out; a second
connection's /headers must then be a 200 as in that run.  The streams
log under connection numbers of their own: an allocation is the first
connection's when its line comes before the error log's size at that
connection's end.

Prints the allocations by function, one line per N ("N=12
ngx_http_hpack_copy_field: goaway"), the count line of each sweep
("alloc-failure (nginx 1.26.3, plain): 143 allocations swept, answers:
200 252, ..., crashes 0, sanitizer reports or leaks 0, failures 0, 95 s")
and "N passed, N failed" over all; exits 1 on any failure.  Listens on
127.0.0.1:18250, 18251 and 18252 (+ INTEROP_PORT_SHIFT); the origin on a
port the kernel picks.  Without a sweep's option the line's sweeps run
at once, two at a time (concurrently()), each in a process of its own
with its ports 10 further on than the one before it (18260..18262, then
18270..18272) and its own directory (work()); each one's output is
printed whole as it ends.
"""

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import h2.events
import h2.exceptions
from hpack import NeverIndexedHeaderTuple

from interop import harness, nginx_runner, run_h3, sanitizer_reports
from interop.harness import h3
from interop.harness.origins import (HintsOrigin, early_hints_supported,
                                     final, hints)

DEFAULT_VERSION = "1.26.3"
PORT = 18250 + harness.PORT_SHIFT
PAGE_PORT = PORT + 1            # hpack_status over HTTP/1.1
H3_PORT = PORT + 2              # QUIC (UDP) and TLS (TCP)
INTERNAL_ERROR = 2
H3_INTERNAL_ERROR = 0x102
QUIC_INTERNAL_ERROR = 0x1

# the sweeps by name, as the count lines name them: without hpack_status,
# with it (the codec then allocates through the page's counting
# allocator), HTTP/3 (on the lines with the module's HTTP/3 and 103s)
MODES = {"plain": "plain", "status": "hpack_status", "h3": "http3"}

TEMPLATE = nginx_runner.REPO / "interop" / "conf" / "alloc-failure.conf"

STATUS = """
        location = /hpack-status {
            hpack_status;
        }
"""

# nginx 1.29 and later: the early hints location, and max_headers
HINTS_UPSTREAM = """
    upstream hints_origin {
        server     127.0.0.1:%d;
        keepalive  8;
    }
"""

HINTS = """
        max_headers  %d;

        location /eh/ {
            early_hints         $http2$http3;
            proxy_pass          http://hints_origin;
            proxy_http_version  1.1;
            proxy_set_header    Connection "";
        }
"""
MAX_HEADERS = 24

STATUS_SERVER = """
    server {
        listen       127.0.0.1:%d;
        location = /status.json {
            hpack_status  json;
        }
    }
"""

# the HTTP/3 sweep: QUIC, and TLS over TCP on the same port (the runner's
# readiness probe), in the server of the workload's locations
HTTP3 = """        listen       127.0.0.1:%(port)d ssl;
        listen       127.0.0.1:%(port)d quic;
        ssl_certificate      %(tls)s/cert.pem;
        ssl_certificate_key  %(tls)s/key.pem;
        hpack_http3  on;
"""


def browser_fields(path, agent, cookie, extra=()):
    """A browser's navigation fields; x-secret-token never indexed (the
    module keeps such values for the response)."""
    return [(b":method", b"GET"), (b":scheme", b"http"),
            (b":authority", b"localhost"), (b":path", path.encode()),
            (b"user-agent", agent.encode()),
            (b"accept", b"text/html,application/xhtml+xml,application/xml;"
                        b"q=0.9,image/avif,image/webp,*/*;q=0.8"),
            (b"accept-language", b"en-US,en;q=0.9"),
            (b"accept-encoding", b"gzip, deflate, br"),
            (b"cookie", cookie.encode()),
            (b"sec-fetch-dest", b"document"),
            (b"sec-fetch-mode", b"navigate"),
            (b"sec-fetch-site", b"none"),
            (b"upgrade-insecure-requests", b"1"),
            NeverIndexedHeaderTuple(b"x-secret-token",
                                    b"s3cr3t-" + cookie[-4:].encode())
            ] + list(extra)


AGENT = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like "
         "Gecko) Chrome/126.0.0.0 Safari/537.36")
COOKIE = "session=4f2a9c1e7b3d5a60; theme=dark; lang=en; id=0001"
AGENT2 = AGENT.replace("126", "127")
COOKIE2 = COOKIE.replace("0001", "0002")
# fields that take both tables past their first storage (16 entries,
# 1024 octets): 12 more entries of 80 octets in the request, 30 of 60 in
# the response of /many
EXTRA = [(b"x-extra-%02d" % i, b"%02d-" % i + b"e" * 37) for i in range(12)]


class Request:
    """A request of the workload and what its 200 must hold."""

    def __init__(self, path, fields, body, expect, trailers=None,
                 present=None, early=None, status=200):
        self.path, self.fields, self.body = path, fields, body
        self.expect, self.trailers = expect, trailers
        # the fields of the 103 before the response, or None for none
        self.early = early
        self.status = status
        # fields of any value, each with the function whose failed
        # allocation leaves it out, or None
        self.present = present or {}


def page(path, agent, cookie, extra=()):
    """/headers, or /many (more fields, an uppercase name, a charset, a
    trailer), with the echoes of agent and cookie."""
    expect = {"x-echo-agent": agent, "x-echo-cookie": cookie,
              "x-frame-options": "DENY",
              "cache-control": "public, max-age=3600"}
    trailers, present = None, None
    if path == "/many":
        expect.update({"x-upper-name": "upper", "content-length": "5",
                       "content-type": "text/plain; charset=utf-8",
                       "x-field-29": "29-" + "f" * 17})
        trailers = {"x-checksum": "0123456789abcdef"}
        # a variable whose handler fails is "not found" to nginx, and
        # add_header leaves out a field whose value is empty
        present = {"last-modified": None,
                   "x-in-wire": "ngx_http_hpack_variable_value"}
    return Request(path, browser_fields(path, agent, cookie, extra),
                   path[1:].encode() + b"\n", expect, trailers, present)


# one connection's requests: the second repeats the first (references to
# the dynamic tables), the third changes some fields and adds more
WORKLOAD = [
    page("/headers", AGENT, COOKIE),
    page("/headers", AGENT, COOKIE),
    page("/many", AGENT2, COOKIE2, EXTRA),
    # a field split between HEADERS and CONTINUATION (its Huffman code is
    # longer than a frame): the decoder keeps the first part aside
    page("/headers", AGENT2, COOKIE2, [(b"x-big", b"b" * 30000)]),
]


def early(i):
    """The Link fields of the origin's 103 for /eh/<i>: those of the
    Early Hints tests (hints()), and for /eh/10 36 more (more than the
    module's encoder keeps on the stack, and more than the encoder's table
    holds at first)."""
    links = hints(i)
    if i == 10:
        links += [(b"link", b"</js/chunk-%02d.js>; rel=modulepreload" % k)
                  for k in range(36)]
    return links


class EarlyHintsOrigin(HintsOrigin):
    """The origin of the Early Hints tests with the 103s of early()
    and their names spelt "Link", as origins send them (the module lowers
    such a name into an allocation of its own)."""

    LINK = b"Link"

    def links(self, i):
        return [v for _, v in early(i)]


def hinted(i):
    """/eh/<i>: the origin's 103 (early(i)), then its 200 (final(i))."""
    fields, body = final(i)
    path = "/eh/%d" % i
    return Request(path, browser_fields(path, AGENT2, COOKIE2), body,
                   {n.decode(): v.decode() for n, v in fields},
                   early=[(b":status", b"103")] + early(i))


# nginx 1.29 and later: the 103s of the module's encoder, the first of
# the connection's blocks (the encoder made and its table grown for a
# 103), the second repeating 2 of its links; then the workload; then a
# request over max_headers (21 fields of headers_in in the workload's
# others, cookie aside), answered 400 after its block is decoded to the
# end, and a last 103 after it
OVER_MAX_HEADERS = Request(
    "/headers", browser_fields("/headers", AGENT2, COOKIE2, [
        (b"x-many-%02d" % i, b"%02d-" % i + b"m" * 20) for i in range(20)]),
    None, {}, status=400)
HINTS_FIRST = [hinted(10), hinted(9)]
HINTS_LAST = [OVER_MAX_HEADERS, hinted(1)]
# with --status, then the page of hpack_status
STATUS_REQUEST = Request("/hpack-status",
                         browser_fields("/hpack-status", AGENT, COOKIE),
                         None, {})

# gtlsclient's requests carry its own fields: the pseudo-fields and this
# user-agent (nghttp3's encoder enters them in the server's table), no
# cookie
GTLS_AGENT = "nghttp3/ngtcp2 client"


def h3_page(path):
    """page() for gtlsclient: the echo of its user-agent, none of a cookie
    (add_header leaves out the empty value); every field of the response
    is also judged against the run without a failure's (h3_reference)."""
    req = page(path, GTLS_AGENT, "")
    del req.expect["x-echo-cookie"]
    req.present = {}
    return req


# the HTTP/3 sweep's connection: gtlsclient sends the requests at once; a
# 103 of 40 links before its 200, /headers's 9 fields, /many's 38 (some of
# them /headers's: references to the dynamic table) and its trailer
H3_WORKLOAD = [hinted(10), h3_page("/headers"), h3_page("/many")]


def install(version):
    """Where the fail-alloc build of the line is (module/nginx.mk)."""
    if version == DEFAULT_VERSION:
        return nginx_runner.BUILD / "nginx-hpack-asan-fail-alloc"
    return nginx_runner.BUILD / ("nginx-%s-hpack-asan-fail-alloc" % version)


class Server(nginx_runner.Nginx):
    error = harness.Failure
    stop_signal = nginx_runner.signal.SIGQUIT   # graceful: LSan runs

    def __init__(self, version, mode):
        self.install = install(version)
        super().__init__(self.install / "sbin" / "nginx", work(version, mode),
                         "alloc-failure", h2c_port=PORT,
                         tls_port=H3_PORT if mode == "h3" else None,
                         version=version)
        self.mode = mode

    def render(self):
        subst = self.base_subst(self.install / "modules" /
                                nginx_runner.MODULE_SO)
        status = self.mode == "status"
        subst["STATUS"] = STATUS if status else ""
        subst["STATUS_SERVER"] = STATUS_SERVER % PAGE_PORT if status else ""
        subst["HTTP3"] = (HTTP3 % {"port": H3_PORT,
                                   "tls": nginx_runner.TLS_DIR}
                          if self.mode == "h3" else "")
        hinting = early_hints_supported(self.version)
        subst["HINTS_UPSTREAM"] = (HINTS_UPSTREAM
                                   % EarlyHintsOrigin.shared().port
                                   if hinting else "")
        subst["HINTS"] = HINTS % MAX_HEADERS if hinting else ""
        self.write_conf(nginx_runner.render(TEMPLATE, subst),
                        dirs=("conf", "logs", "html"))
        # written once: its last-modified and etag are the same in every
        # run of a sweep
        many = self.prefix / "html" / "many"
        if not many.exists() or many.read_bytes() != b"many\n":
            many.write_bytes(b"many\n")


def work(version, mode):
    """The sweep's directory: the server's prefix and the sanitizers'
    reports, one per line and sweep, so that the sweeps may run at once."""
    name = "alloc-failure"
    if version != DEFAULT_VERSION:
        name += "-" + version
    return nginx_runner.BUILD / "interop" / name / mode


def check_early(resp, req, answered):
    """The 103s before the response: the origin's exact one before a 200;
    it or none before a 500 or a reset (a failure before the 103 went, or
    after); none where the origin sends none."""
    got = resp.informational
    if req.early is None:
        harness.check(not got, "stream %d: 103s %r" % (resp.sid, got))
    elif answered:
        harness.check(got == [req.early], "stream %d: 103s %r, want one: %r"
                      % (resp.sid, got, req.early))
    else:
        harness.check(got in ([], [req.early]), "stream %d: 103s %r, want "
                      "none or %r" % (resp.sid, got, req.early))


def answer(resp, req, missing, internal_error=INTERNAL_ERROR):
    """The kind of one response, or raises Failure for a wrong one; a
    field of req.present that the response lacks goes to missing, as
    (stream, name, the function whose failed allocation may leave it
    out), judged once the error log names the allocation that failed.
    A reset must carry internal_error (HTTP/3: H3_INTERNAL_ERROR)."""
    check_early(resp, req, resp.reset is None and resp.headers is not None
                and resp.status == req.status)
    if resp.reset is not None:
        harness.check(resp.reset == internal_error, "stream %d reset with %s"
                      % (resp.sid, harness.h2_error_name(resp.reset)
                         if internal_error == INTERNAL_ERROR
                         else "0x%x" % resp.reset))
        return "rst"
    harness.check(resp.headers is not None,
                  "stream %d ended without a response" % resp.sid)
    if resp.status == 500:
        return "500"
    harness.check(resp.status == req.status, "stream %d: status %d"
                  % (resp.sid, resp.status))
    if req.status != 200:
        return str(req.status)
    if req.body is None:
        harness.check(resp.body.startswith(b"# HELP hpack_"),
                      "stream %d: body %r" % (resp.sid, resp.body[:60]))
    else:
        harness.check(resp.body == req.body, "stream %d: body %r"
                      % (resp.sid, resp.body))
    for name, want in req.expect.items():
        got = resp.header(name)
        harness.check(got == want, "stream %d: %s %r, not %r"
                      % (resp.sid, name, got, want))
    missing.extend((resp.sid, name, site)
                   for name, site in req.present.items()
                   if not resp.header(name))
    if req.trailers:
        got = {n.decode(): v.decode() for n, v in resp.trailers or []}
        harness.check(got == req.trailers, "stream %d: trailers %r, not %r"
                      % (resp.sid, got, req.trailers))
    return "200"


class CountingTap(harness.FrameTap):
    """A FrameTap that counts the octets received."""

    received = 0

    def feed(self, data):
        self.received += len(data)
        return super().feed(data)


class Client(harness.H2Client):
    """H2Client that keeps the 103s of each response, and counts the
    octets received."""

    def __init__(self, port, timeout):
        super().__init__(port, timeout=timeout)
        self.tap = CountingTap()

    def request(self, headers, end_stream=True):
        sid = super().request(headers, end_stream)
        self.responses[sid].informational = []
        return sid

    def _event(self, ev):
        if isinstance(ev, h2.events.InformationalResponseReceived):
            self.responses[ev.stream_id].informational.append(
                list(ev.headers))
        else:
            super()._event(ev)


def closed_kind(client):
    """The kind of a connection nginx closed: "goaway" after GOAWAY
    INTERNAL_ERROR, "close" before it sent anything (what stock nginx does
    when an allocation of its own connection setup fails,
    ngx_http_v2_init()); raises Failure for any other end."""
    if client.terminated is None and client.tap.received == 0:
        return "close"
    harness.check(client.terminated is not None
                  and client.terminated.startswith("INTERNAL_ERROR"),
                  "connection closed without GOAWAY INTERNAL_ERROR (%s)"
                  % client.terminated)
    return "goaway"


def connection(requests, missing):
    """The kinds of the answers to the requests, on one connection:
    "200", "500", "rst", then "goaway" or "close" (closed_kind()) for the
    first request the connection left unanswered; the fields answer()
    found missing go to missing."""
    kinds = []
    try:
        client = Client(PORT, timeout=10)
    except ConnectionError:
        return ["close"]            # closed while the preface was sent
    try:
        for req in requests:
            try:
                resp = client.get(req.fields)
            except socket.timeout:
                raise harness.Failure("no answer in 10 s")
            except (harness.Failure, ConnectionError):
                # nginx closed the connection (a reset when it closed
                # with the request unread)
                kinds.append(closed_kind(client))
                break
            except h2.exceptions.H2Error as e:
                raise harness.Failure("h2: %r" % e)
            kinds.append(answer(resp, req, missing))
            if client.terminated:
                harness.check(client.terminated.startswith("INTERNAL_ERROR"),
                              "GOAWAY %s" % client.terminated)
                kinds.append("goaway")
                break
    finally:
        client.close()
    return kinds


def workload(version, status):
    requests = list(WORKLOAD)
    if early_hints_supported(version):
        requests = HINTS_FIRST + requests + HINTS_LAST
    return requests + [STATUS_REQUEST] if status else requests


def sanitizers(server, reports):
    """sanitizer_reports.py's judgement of the run, in this process (a
    python3 of its own took a fifth of a second a run)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = sanitizer_reports.main([None, str(reports),
                                     str(server.error_log)])
    harness.check(rc == 0, "sanitizers:\n" + out.getvalue()[-3000:])


def start(version, mode, fail_at, reports):
    for f in reports.glob("san.*"):
        f.unlink()
    os.environ["NGX_HTTP_HPACK_FAIL_ALLOC"] = str(fail_at)
    server = Server(version, mode)
    server.start()
    return server


def gauges_back_to_zero():
    """hpack_status's gauges once the connections have closed (polled: a
    connection's cleanup may run after its client saw the end), read over
    HTTP/1.1, which the module leaves alone."""
    url = "http://127.0.0.1:%d/status.json" % PAGE_PORT
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                doc = json.loads(r.read())
        except OSError as e:
            raise harness.Failure("the status page: %s" % e)
        gauges = {"%s %s" % (p, k): doc[p][k] for p in doc
                  for k in ("hpack_connections", "hpack_table_bytes")}
        if not any(gauges.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    harness.check(not any(gauges.values()),
                  "gauges after the connections closed: %s" % gauges)


def h2_traffic(server, version, mode, missing, marks, second=True):
    """The workload on one connection (then, with hpack_status, the
    gauges back to 0), and unless second is False a second connection that
    must be served; the first connection's kinds (connection()), and the
    kinds it has without a failure."""
    requests = workload(version, mode == "status")
    kinds = connection(requests, missing)
    if second:
        again = connection(WORKLOAD[:1], missing)
        harness.check(again == ["200"], "next connection: %s" % again)
    if mode == "status":
        gauges_back_to_zero()
    return kinds, [str(r.status) for r in requests]


# the run without a failure's HTTP/3 responses: {path: (fields, trailers)},
# the date's value left out
h3_reference = {}


class H3Response(harness.Response):
    """A request stream as gtlsclient printed it (run_h3.parse()), read as
    answer() reads an HTTP/2 one: its 103s, fields, body (the DATA frames),
    trailers, and the code of the RESET_STREAM that ended it."""

    def __init__(self, stream, reset):
        super().__init__(stream.sid)
        blocks = [[(n.encode(), v.encode()) for n, v in b]
                  for b in stream.blocks]
        self.informational = [b for b in blocks
                              if b[:1] == [(b":status", b"103")]]
        final = [b for b in blocks if b[:1] != [(b":status", b"103")]]
        self.headers = final[0] if final else None
        self.trailers = final[1] if len(final) > 1 else None
        self.reset = reset
        try:
            self.body = b"".join(p for t, p in h3.frames(stream.data)
                                 if t == 0x00)
        except IndexError:              # a frame cut short
            self.body = None


def without_date(fields):
    return [(n, None if n == b"date" else v) for n, v in fields or []]


# gtlsclient's (ngtcp2's) log of the frames it received: a RESET_STREAM
# and its code, a stream's last octets, nginx's CONNECTION_CLOSE
RESET_STREAM = re.compile(r"frm rx \d+ \S+ RESET_STREAM\(0x04\) "
                          r"id=0x([0-9a-f]+) app_error_code=\S*\(0x([0-9a-f]+)\)")
FIN = re.compile(r"frm rx \d+ \S+ STREAM\(0x0[89a-f]\) id=0x([0-9a-f]+) "
                 r"fin=1")
CLOSE = re.compile(r"frm rx \d+ \S+ CONNECTION_CLOSE\(0x(1[cd])\) "
                   r"error_code=\S*\(0x([0-9a-f]+)\)")
# the ends of a connection nginx closed, by the frame's type and code:
# H3_INTERNAL_ERROR, or QUIC's INTERNAL_ERROR for a connection whose
# HTTP/3 session was not set up (ngx_http_v3_init() closes it so when
# ngx_http_v3_init_session() fails, as when its own allocation does)
CLOSES = {("1d", H3_INTERNAL_ERROR): "close",
          ("1c", QUIC_INTERNAL_ERROR): "close-setup"}


def h3_connection(server, requests, missing):
    """The kinds of the answers to the requests, sent at once on one
    gtlsclient connection, in their order: "200" (every field as in the
    run without a failure, h3_reference, beside answer()'s checks), "500",
    "rst" (RESET_STREAM H3_INTERNAL_ERROR); then "close" or "close-setup"
    when nginx closed the connection (CLOSES), the requests it left
    unanswered then not counted; a request neither answered nor cut short
    so fails."""
    rc, out, streams = run_h3.gtlsclient(server, [r.path for r in requests],
                                         timeout=30)
    resets = {int(sid, 16): int(code, 16)
              for sid, code in RESET_STREAM.findall(out)}
    ended = {int(sid, 16) for sid in FIN.findall(out)}
    closed = [(t, int(code, 16)) for t, code in CLOSE.findall(out)]
    kinds = []
    for i, req in enumerate(requests):
        sid = 4 * i
        resp = H3Response(streams.get(sid, run_h3.Stream(sid)),
                          resets.get(sid))
        if resp.reset is None and sid not in ended:
            harness.check(closed, "stream %d: no answer, the connection "
                          "open (gtlsclient exited %d):\n%s"
                          % (sid, rc, out[-1500:]))
            continue
        kind = answer(resp, req, missing, H3_INTERNAL_ERROR)
        if kind == "200":
            got = (without_date(resp.headers), resp.trailers)
            want = h3_reference.setdefault(req.path, got)
            harness.check(got == want, "stream %d: fields\n  %s\nnot those "
                          "of the run without a failure\n  %s"
                          % (sid, got, want))
        kinds.append(kind)
    if closed:
        harness.check(closed[0] in CLOSES, "connection closed with frame "
                      "0x%s, code 0x%x" % closed[0])
        kinds.append(CLOSES[closed[0]])
    return kinds


def h3_traffic(server, version, mode, missing, marks, second=True):
    """h2_traffic() over HTTP/3: H3_WORKLOAD on one connection, then
    unless second is False a second connection that must be served.  The
    first connection's streams log under connection numbers of their own:
    marks["end"] is the error log's size when it has ended, where the
    second connection's allocations begin."""
    kinds = h3_connection(server, H3_WORKLOAD, missing)
    marks["end"] = server.error_log_size()
    if second:
        again = h3_connection(server, H3_WORKLOAD[1:2], missing)
        harness.check(again == ["200"], "next connection: %s" % again)
    return kinds, ["200"] * len(H3_WORKLOAD)


TRAFFIC = {"plain": h2_traffic, "status": h2_traffic, "h3": h3_traffic}


class Elsewhere(Exception):
    """The failed allocation was not the first connection's in this run."""


def allocation_lines(log):
    """(connection, N, function, failed, offset) of each "*C hpack:
    allocation N in F()" line of an error log, in order."""
    return [(m.group(1), int(m.group(2)), m.group(3), bool(m.group(4)),
             m.start()) for m in
            re.finditer(r"\*(\d+) hpack: allocation (\d+) in (\w+)\(\)"
                        r"( failed)?", log)]


def failed_allocation(lines, fail_at, end=None):
    """(whether the allocation fail_at that failed was the first
    connection's, its function), or None without a failed line.  The first
    connection's: that of the worker's first numbered allocation, or with
    end (HTTP/3) before that offset of the log."""
    for c, n, site, failed, offset in lines:
        if failed and n == fail_at:
            first = c == lines[0][0] if end is None else offset < end
            return first, site
    return None


# how long the first connection's workload took in the run without a
# failure, in seconds (same_second())
workload_seconds = 1.0


def same_second(seconds):
    """Waits for the next second of the wall clock when less than seconds
    of this one is left.  The workload's responses then carry one Date,
    and the first connection makes as many allocations as in the run
    without a failure: a date that changes on the way is one more volatile
    value for the encoder's history, which grows after 8 (with
    hpack_status on nginx 1.30.4, 308 allocations in about one run of 15
    instead of 307), and every later N would fail another function's."""
    left = 1 - time.time() % 1
    if left < seconds:
        time.sleep(left + 0.005)


def run_one(version, mode, fail_at, reports):
    """One server failing allocation fail_at: the workload, then a second
    connection; returns the first connection's kinds and the function
    whose allocation failed, or raises Failure (a crash and a sanitizer's
    report before a wrong answer, which they cause).  Raises Elsewhere
    when allocation fail_at was the second connection's, as it can be when
    the workload ran over a second's end all the same (a slow machine:
    same_second())."""
    server = start(version, mode, fail_at, reports)
    wrong, missing, marks = None, [], {}
    try:
        same_second(workload_seconds)
        kinds, _ = TRAFFIC[mode](server, version, mode, missing, marks)
    except harness.Failure as e:
        wrong = e
    finally:
        server.stop()
    log = server.error_log_text()
    harness.check("exited on signal" not in log, "a worker crashed")
    sanitizers(server, reports)
    # HTTP/3: a first connection that failed ended where the log does
    end = marks.get("end", len(log)) if mode == "h3" else None
    failed = failed_allocation(allocation_lines(log), fail_at, end)
    if failed and not failed[0]:
        raise Elsewhere("allocation %d was the next connection's" % fail_at)
    if wrong:
        raise wrong
    harness.check(failed is not None,
                  "no \"allocation %d ... failed\" line" % fail_at)
    for sid, name, site in missing:
        harness.check(site == failed[1], "stream %d: no %s (allocation %d "
                      "failed in %s())" % (sid, name, fail_at, failed[1]))
    return kinds, failed[1]


def first_connection_allocations(version, mode, reports):
    """The functions of the allocations the first connection makes, in
    order: the run that fails nothing.  Sets workload_seconds."""
    global workload_seconds
    server = start(version, mode, 0, reports)
    missing, marks = [], {}
    h3_reference.clear()
    try:
        same_second(1.0)
        began = time.monotonic()
        kinds, want = TRAFFIC[mode](server, version, mode, missing, marks,
                                    second=False)
        # a margin for the runs' spread
        workload_seconds = min(1.0, 1.5 * (time.monotonic() - began) + 0.05)
        harness.check(kinds == want, "without a failure: %s" % kinds)
        harness.check(not missing, "without a failure: %s missing" %
                      ", ".join(name for _, name, _ in missing))
    finally:
        server.stop()
    sanitizers(server, reports)
    log = server.error_log_text()
    harness.check(mode == "h3" or not early_hints_supported(version)
                  or "client sent too many header lines" in log,
                  "the 400 is not max_headers's")
    # those of the first connection: the status page's own are not swept
    lines = [line for line in allocation_lines(log[:marks.get("end")])
             if not line[3]]
    sites = [(n, site) for c, n, site, _, _ in lines
             if mode == "h3" or c == lines[0][0]]
    harness.check([n for n, _ in sites] == list(range(1, len(sites) + 1)),
                  "allocations not numbered 1, 2, ...")
    return [site for _, site in sites]


def failure_kind(message):
    if message.startswith("a worker crashed"):
        return "crash"
    if message.startswith("sanitizers:"):
        return "sanitizer"
    return "answer"


# runs of one N whose failed allocation fell past the first connection
ELSEWHERE_TRIES = 3


def swept_site(mode, site):
    """Whether the sweep fails the allocations of this function: every one
    over HTTP/2; over HTTP/3 those of the HTTP/3 code, the functions of
    ngx_http_hpack_v3.c and the QPACK codec's allocator callback
    (ngx_http_hpack_v3_alloc()); the others, the response fields'
    gathering that HTTP/2 shares, are the HTTP/2 sweeps'."""
    return mode != "h3" or site.startswith("ngx_http_hpack_v3_")


def sweep(version, mode, at, reports):
    """Every allocation of the workload failed in turn (those of at only,
    when given; swept_site()); prints a line per N and the count line,
    returns the numbers passed and failed (the run without a failure
    counts as one when it fails, or finds no allocation to sweep)."""
    began = time.monotonic()
    label = "nginx %s, %s" % (version, MODES[mode])
    try:
        sites = first_connection_allocations(version, mode, reports)
    except harness.Failure as e:
        print("alloc-failure (%s): the run without a failure: FAIL %s"
              % (label, e), flush=True)
        return 0, 1
    print("alloc-failure (%s): %d allocations on the first connection: %s"
          % (label, len(sites),
             ", ".join("%s %d" % kv for kv in sorted(Counter(sites).items()))),
          flush=True)
    answers, failed, kinds_failed = Counter(), [], Counter()
    swept = 0
    for n, site in enumerate(sites, 1):
        if at and n not in at or not swept_site(mode, site):
            continue
        swept += 1
        try:
            for attempt in range(1, ELSEWHERE_TRIES + 1):
                try:
                    kinds, failed_site = run_one(version, mode, n, reports)
                    break
                except Elsewhere as e:
                    if attempt == ELSEWHERE_TRIES:
                        raise harness.Failure("%s in %d runs"
                                              % (e, ELSEWHERE_TRIES))
                    print("  N=%d %s: %s, once more" % (n, site, e),
                          flush=True)
        except harness.Failure as e:
            failed.append(n)
            kinds_failed[failure_kind(str(e))] += 1
            print("  N=%d %s: FAIL %s" % (n, site, e), flush=True)
            continue
        answers.update(kinds)
        # the function the run without a failure gave N, and the one
        # whose allocation failed when they differ
        print("  N=%d %s: %s%s" % (n, site, " ".join(kinds),
                                   "" if failed_site == site else
                                   " (failed in %s())" % failed_site),
              flush=True)
    print("alloc-failure (%s): %d allocations swept, answers: %s, crashes %d, "
          "sanitizer reports or leaks %d, failures %d%s, %.0f s"
          % (label, swept,
             ", ".join("%s %d" % kv for kv in sorted(answers.items())),
             kinds_failed["crash"], kinds_failed["sanitizer"], len(failed),
             " (N=%s)" % failed if failed else "",
             time.monotonic() - began), flush=True)
    if not swept:
        # the hooks took no effect, or the functions swept were renamed
        print("alloc-failure (%s): FAIL no allocation of the module's to "
              "sweep" % label, flush=True)
    return swept - len(failed), len(failed) + (0 if swept else 1)


def option(args, name):
    """The value after --name, or None."""
    if name in args[:-1]:
        return args[args.index(name) + 1]
    return None


# sweeps run at once when more than one is asked for: CI's two cores (a
# sweep is mostly waiting for its server's start and stop)
JOBS = 2
# ports apart per concurrent sweep (each uses PORT .. PORT + 2)
SWEEP_PORTS = 10


def concurrently(argv, modes):
    """Each mode's sweep in a process of its own, JOBS at a time, with its
    own ports; their output in the order of modes as each ends, then the
    total.  Returns the exit status."""
    pending = list(enumerate(modes))
    running, done = [], {}
    rest = [a for a in argv[1:] if a not in ("--plain", "--status", "--h3")]
    while pending or running:
        while pending and len(running) < JOBS:
            i, mode = pending.pop(0)
            env = dict(os.environ, INTEROP_PORT_SHIFT=str(
                harness.PORT_SHIFT + SWEEP_PORTS * i))
            proc = subprocess.Popen(
                [sys.executable, "-m", "interop.alloc_failure_sweep",
                 "--" + mode] + rest, env=env, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True)
            print("alloc-failure: the %s sweep started (ports %d..%d)"
                  % (MODES[mode], PORT + SWEEP_PORTS * i,
                     PORT + SWEEP_PORTS * i + 2), flush=True)
            running.append((mode, proc))
        time.sleep(0.2)
        for entry in list(running):
            mode, proc = entry
            if proc.poll() is None:
                continue
            running.remove(entry)
            out = proc.stdout.read()
            proc.stdout.close()
            sys.stdout.write(out)
            sys.stdout.flush()
            m = re.findall(r"^(\d+) passed, (\d+) failed", out, re.M)
            passed, failed = (int(m[-1][0]), int(m[-1][1])) if m else (0, 0)
            if not m or proc.returncode and not failed:
                # no count, or an exit status its count does not explain
                print("alloc-failure: the %s sweep exited with %d%s"
                      % (MODES[mode], proc.returncode,
                         "" if m else " and no count"), flush=True)
                failed = max(failed, 1)
            done[mode] = (passed, failed)
    passed = sum(p for p, _ in done.values())
    failed = sum(f for _, f in done.values())
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main(argv):
    args = argv[1:]
    modes = [m[2:] for m in args if m in ("--plain", "--status", "--h3")]
    at = option(args, "--at")
    at = {int(n) for n in at.split(",")} if at else None
    version = option(args, "--version") or DEFAULT_VERSION
    binary = install(version) / "sbin" / "nginx"
    if not binary.exists():
        if (version != DEFAULT_VERSION
                and nginx_runner.source_absent(version)):
            print("alloc-failure (nginx %s): SKIP no source of nginx %s"
                  % (version, version))
            print("0 passed, 0 failed, 1 skipped")
            return 0
        print("alloc-failure: %s not built (make nginx-asan-fail-alloc%s)"
              % (binary, "" if version == DEFAULT_VERSION
                 else " NGINX_VERSION=" + version), file=sys.stderr)
        return 1
    if not modes:
        modes = ["plain", "status"]
        # its workload has a 103: the lines with both (1.30.4, 1.31.4)
        if version in h3.LINES and early_hints_supported(version):
            modes.append("h3")
    if len(modes) > 1:
        return concurrently(argv, modes)
    os.environ["UBSAN_OPTIONS"] = ("halt_on_error=1:print_stacktrace=1:"
                                   "suppressions=%s" % (nginx_runner.REPO /
                                                        "interop" /
                                                        "ubsan.supp"))
    passed, failed = 0, 0
    for mode in modes:
        reports = work(version, mode) / "sanitizer"
        reports.mkdir(parents=True, exist_ok=True)
        os.environ["ASAN_OPTIONS"] = ("log_path=%s/san:halt_on_error=1:"
                                      "detect_leaks=1:exitcode=0" % reports)
        p, f = sweep(version, mode, at, reports)
        passed += p
        failed += f
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
