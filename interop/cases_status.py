"""hpack_status: every counter against what the clients sent and received.

A server of its own (the module, "hpack on", reuseport) with one worker,
then with two, and a second server block on another port that answers
the page over HTTP/1.1 (its scrapes are no HTTP/2 traffic).  Known
traffic goes to it: h2load through a relay that keeps every header block
of both directions, python3-h2 connections with chosen fields (cookies,
an 18 KB value echoed back, so that blocks take CONTINUATION frames both
ways, trailers), and two connections that each send one malformed block
(index 0, Huffman padding of zeros).  The expected counters are computed
from those blocks alone: octets, fields (hpack's Decoder), indexed
representations, RFC 7541 sizes; h2load's own "headers" figure must equal
the relay's response octets.  The page in text (with its # HELP and
# TYPE lines), ?format=json and "hpack_status json" must agree and be
exactly that, under protocol="h2"; protocol="h3" (no HTTP/3 here) stays
all zero; with two workers both must have served.

Then what docs/DIRECTIVES.md says of worker exit and reload: a worker
that exits gracefully (SIGQUIT), one that is terminated (SIGTERM) with a
connection open, and a reload (SIGHUP) keep every sum; the gauges count
the connections open now (none after the SIGTERM); traffic after the
reload adds to the same counters.  Under --asan the reload is left out
(ASan stops nginx's master there, see survives()).
"""

import json
import os
import re
import signal
import socket
import threading
import time
import urllib.error
import urllib.request

from hpack import Decoder

from interop import harness, nginx_runner
from interop.harness import (PREFACE, FrameTap, H2Client, RawH2, check, info,
                             representations)
from interop.harness.origins import HintsOrigin, early_hints_supported
from interop.harness.tools import h2load

PORT_OFFSET = 400           # h2c + 400 (+ 2 with two workers), page + 1
ECHO = "~" * 18000          # raw (Huffman is longer): past one frame
METRICS = ("hpack_connections", "hpack_table_bytes",
           "hpack_in_wire_bytes_total", "hpack_in_plain_bytes_total",
           "hpack_out_wire_bytes_total", "hpack_out_plain_bytes_total",
           "hpack_in_fields_total", "hpack_in_indexed_total",
           "hpack_out_fields_total", "hpack_out_indexed_total",
           "hpack_in_stream_bytes_total", "hpack_out_stream_bytes_total")
# the kinds of hpack_errors_total by protocol label, in the page's order
KINDS = {"h2": ("huffman", "integer", "index", "truncated", "size_update",
                "limits", "empty_name", "internal"),
         "h3": ("huffman", "integer", "index", "truncated", "limits",
                "internal", "encoder_stream", "decoder_stream",
                "blocked_streams", "insert_count", "empty_section")}
PROTOCOLS = tuple(KINDS)
# a block of each kind of error, and the connection error it gets
MALFORMED = {
    # index 0 (RFC 7541 6.1)
    "index": (b"\x80", "GOAWAY COMPRESSION_ERROR"),
    # RFC 7541 5.2: a Huffman name of one octet, "0" then 000 as padding
    "huffman": (b"\x00\x81\x00\x01a", "GOAWAY COMPRESSION_ERROR"),
    # an index of 11 octets: past 2^32
    "integer": (b"\xff" + b"\xff" * 10 + b"\x01", "GOAWAY COMPRESSION_ERROR"),
    # a name of 5 octets, 2 sent
    "truncated": (b"\x00\x05ab", "GOAWAY COMPRESSION_ERROR"),
    # a size update after a field (RFC 7541 4.2)
    "size_update": (b"\x82\x20", "GOAWAY COMPRESSION_ERROR"),
    # a literal of empty name, as stock nginx refuses it
    "empty_name": (b"\x82\x86\x84\x00\x00\x01a", "GOAWAY PROTOCOL_ERROR"),
    # a value of 40,000 octets announced, over large_client_header_buffers'
    # 32k, as stock nginx refuses it
    "limits": (b"\x82\x86\x84\x00\x01x\x7f\xc1\xb7\x02",
               "GOAWAY ENHANCE_YOUR_CALM"),
}

CONF = """
{load_module}
{user}
worker_processes  {workers};
error_log  logs/error.log  info;
pid        logs/nginx.pid;

events {{
    worker_connections  512;
}}

http {{
    log_format  status  '$pid $request_uri $status';
    access_log  logs/access.log  status;
    keepalive_requests  1000000;
    large_client_header_buffers  4 32k;
    hpack  on;

    server {{
        listen  127.0.0.1:{h2c} reuseport{listen_http2};
{http2_on}
        location /headers {{
            add_header  cache-control  "public, max-age=3600" always;
            add_header  x-frame-options  DENY always;
            add_header  x-request-id  $request_id always;
            return  200 "headers\\n";
        }}
        location /echo {{
            add_header  x-echo  $http_x_echo;
            return  200 "echo\\n";
        }}
        location /trailers {{
            add_trailer  x-checksum  $request_id;
            return  200 "trailers\\n";
        }}
{early_hints}
    }}

    server {{
        listen  127.0.0.1:{page};
        access_log  off;
        location = /status {{
            hpack_status;
        }}
        location = /status.json {{
            hpack_status  json;
        }}
    }}
}}
"""

# nginx 1.29 and later: 103 blocks from the Early Hints origin (HintsOrigin)
EARLY_HINTS = """
        location /eh/ {
            early_hints         $http2;
            proxy_pass          http://127.0.0.1:%d;
            proxy_http_version  1.1;
            proxy_set_header    Connection "";
        }"""


class StatusServer(nginx_runner.Nginx):
    """The binary and module of the interop's "hpack on" server, with the
    configuration above."""

    def __init__(self, on, workers):
        h2c = on.h2c_port + PORT_OFFSET + 2 * (workers - 1)
        super().__init__(on.binary, str(on.prefix) + "-status-%d" % workers,
                         "%s status, %d worker%s" % (
                             on.label, workers, "s" if workers > 1 else ""),
                         h2c_port=h2c, version=on.version)
        self.error = on.error
        self.module = on.module
        self.workers = workers
        self.page_port = h2c + 1
        self.stop_signal = on.stop_signal
        self.stop_timeout = on.stop_timeout

    def ports(self):
        return [self.h2c_port, self.page_port]

    def render(self):
        subst = self.base_subst(self.module)
        self.write_conf(CONF.format(
            load_module=subst["LOAD_MODULE"], user=subst["USER"],
            workers=self.workers, h2c=self.h2c_port, page=self.page_port,
            listen_http2=subst["LISTEN_HTTP2"], http2_on=subst["HTTP2_ON"],
            early_hints=EARLY_HINTS % HintsOrigin.shared().port
            if early_hints_supported(self.version) else ""))

    def page(self, path):
        """The page over HTTP/1.1: (content type, text)."""
        url = "http://127.0.0.1:%d%s" % (self.page_port, path)
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.headers["Content-Type"], r.read().decode()

    def refused(self, path, method="GET"):
        """The status of a request the page refuses."""
        url = "http://127.0.0.1:%d%s" % (self.page_port, path)
        req = urllib.request.Request(url, data=b"x" if method == "POST"
                                     else None, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def served_by(self):
        """Worker pid -> requests it logged."""
        pids = {}
        for line in self.access_log_lines():
            pid = int(line.split()[0])
            pids[pid] = pids.get(pid, 0) + 1
        return pids


# ----------------------------------------------------------- what was sent

class Expected:
    """The counters as the clients' blocks make them."""

    def __init__(self):
        self.values = dict.fromkeys(METRICS, 0)
        self.errors = dict.fromkeys(KINDS["h2"], 0)

    def page(self):
        """The whole page as scrape() returns it: these counters for h2,
        h3's all zero."""
        return {"h2": (self.values, self.errors),
                "h3": (dict.fromkeys(METRICS, 0),
                       dict.fromkeys(KINDS["h3"], 0))}

    def connection(self, requests, responses):
        """One connection's header blocks in wire order, each direction
        decoded as nginx's decoder and the client's did."""
        for side, blocks in (("in", requests), ("out", responses)):
            dec = Decoder()
            dec.max_header_list_size = 1 << 20
            for block in blocks:
                fields = dec.decode(block, raw=True)
                self.values["hpack_%s_wire_bytes_total" % side] += len(block)
                self.values["hpack_%s_plain_bytes_total" % side] += sum(
                    len(n) + len(v) + 32 for n, v in fields)
                self.values["hpack_%s_fields_total" % side] += len(fields)
                self.values["hpack_%s_indexed_total" % side] += sum(
                    1 for kind, _ in representations(block)
                    if kind == "indexed")

    def client(self, c):
        """An H2Client's blocks: what its encoder wrote, what it read."""
        self.connection([b for _, b, _ in c.sent.blocks],
                        [b for _, b, _ in c.tap.blocks])


class Relay:
    """127.0.0.1:<any> to nginx, keeping the header blocks of every
    connection (client's, server's) in wire order."""

    def __init__(self, port):
        self.upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.taps = []
        self.threads = []
        self.stopping = False
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while not self.stopping:
            try:
                down, _ = self.listener.accept()
            except socket.timeout:
                continue
            up = socket.create_connection(("127.0.0.1", self.upstream))
            taps = (FrameTap(), FrameTap())
            self.taps.append(taps)
            for src, dst, tap, skip in ((down, up, taps[0], len(PREFACE)),
                                        (up, down, taps[1], 0)):
                t = threading.Thread(target=self._pump,
                                     args=(src, dst, tap, skip), daemon=True)
                t.start()
                self.threads.append(t)

    @staticmethod
    def _pump(src, dst, tap, skip):
        src.settimeout(60)
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
                cut = min(skip, len(data))
                skip -= cut
                tap.feed(data[cut:])
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self, expected):
        """Waits for every connection to end; adds their blocks to
        expected; the response octets."""
        self.stopping = True
        self.acceptor.join()
        self.listener.close()
        for t in self.threads:
            t.join(30)
        check(not any(t.is_alive() for t in self.threads),
              "relay: a connection did not end")
        octets = 0
        for up, down in self.taps:
            expected.connection([b for _, b, _ in up.blocks],
                                [b for _, b, _ in down.blocks])
            octets += sum(len(b) for _, b, _ in down.blocks)
        return octets


# ------------------------------------------------------------- the page

def parse_text(text):
    """{protocol: ({name: value}, {kind: errors})}, every line checked:
    each sample has its protocol label, the errors their kind too."""
    page = {p: ({}, {}) for p in PROTOCOLS}
    helped, typed = set(), set()
    for line in text.splitlines():
        m = re.match(r"# (HELP|TYPE) (\w+) (.+)$", line)
        if m:
            (helped if m.group(1) == "HELP" else typed).add(m.group(2))
            if m.group(1) == "TYPE":
                want = "gauge" if m.group(2) in METRICS[:2] else "counter"
                check(m.group(3) == want, "%s: TYPE %s, expected %s"
                      % (m.group(2), m.group(3), want))
            continue
        m = re.match(r'(\w+)\{protocol="(h2|h3)"(?:,kind="(\w+)")?\} '
                     r'(\d+)$', line)
        check(m, "not a Prometheus text line of a protocol: %r" % line)
        values, errors = page[m.group(2)]
        if m.group(3):
            check(m.group(1) == "hpack_errors_total", "label on %s" % line)
            errors[m.group(3)] = int(m.group(4))
        else:
            values[m.group(1)] = int(m.group(4))
    names = set(METRICS) | {"hpack_errors_total"}
    check(helped == names and typed == names,
          "# HELP for %s, # TYPE for %s" % (sorted(helped), sorted(typed)))
    for p, (values, errors) in page.items():
        check(list(values) == list(METRICS)
              and list(errors) == list(KINDS[p]),
              "%s: the page has %s and kinds %s"
              % (p, list(values), list(errors)))
    return page


def from_json(body):
    """The JSON page as parse_text() gives the text one: an object per
    protocol, each with every metric and hpack_errors_total by kind."""
    doc = json.loads(body)
    check(list(doc) == list(PROTOCOLS), "JSON page: objects %s" % list(doc))
    page = {}
    for p, obj in doc.items():
        errors = obj.pop("hpack_errors_total")
        check(list(obj) == list(METRICS) and list(errors) == list(KINDS[p]),
              "JSON page: %s has %s and kinds %s" % (p, list(obj),
                                                     list(errors)))
        page[p] = (obj, errors)
    return page


def scrape(server, path="/status", json_path="/status.json"):
    """{protocol: (values, errors)}; the text and the two JSON forms must
    agree."""
    ctype, text = server.page(path)
    check(ctype.startswith("text/plain; version=0.0.4"),
          "text page: Content-Type %s" % ctype)
    page = parse_text(text)
    forms = [server.page(path + "?format=json"), server.page(json_path)]
    for ctype, body in forms:
        check(ctype == "application/json", "JSON page: Content-Type %s"
              % ctype)
        check(from_json(body) == page,
              "JSON and text differ:\n%s\n%s" % (body, text))
    _, again = server.page(json_path + "?format=text")
    check(parse_text(again) == page,
          "?format=text of the JSON location differs from the text page")
    return page


def check_counters(server, expected, when):
    """The page against expected, the gauges at zero: polled, since a
    closed connection's cleanup may run after its client saw the end."""
    deadline = time.monotonic() + 10
    want = expected.page()
    while True:
        page = scrape(server)
        if page == want or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check(page == want, "%s: %s" % (when, differences(page, want)))


def differences(page, want):
    """What differs between two pages, as text."""
    wrong = []
    for p, (values, errors) in want.items():
        got_values, got_errors = page[p]
        wrong += ["%s %s %d, expected %d" % (p, k, got_values[k], v)
                  for k, v in values.items() if got_values[k] != v]
        wrong += ["%s errors %s %d, expected %d" % (p, k, got_errors[k], v)
                  for k, v in errors.items() if got_errors[k] != v]
    return "; ".join(wrong)


# ----------------------------------------------------------- the traffic

def h2load_through(server, expected, n, connections):
    relay = Relay(server.h2c_port)
    try:
        rc, out, counts = h2load(["-n", str(n), "-c", str(connections),
                                  "-m", "4", "http://127.0.0.1:%d/headers"
                                  % relay.port])
    finally:
        octets = relay.close(expected)
    check(counts[3] == n, "h2load: %d of %d succeeded" % (counts[3], n))
    m = re.search(r"traffic: .*?, \S+ \((\d+)\) headers", out)
    check(m and int(m.group(1)) == octets, "h2load counts %s header octets, "
          "the relay saw %d" % (m and m.group(1), octets))
    return octets


def chosen_requests(server, c, path_tag):
    """Requests with chosen fields on one H2Client connection."""
    base = [(b":method", b"GET"), (b":scheme", b"http"),
            (b":authority", b"127.0.0.1:%d" % server.h2c_port)]
    sids = []
    for i in range(12):
        extra = [(b"user-agent", b"status-test/1.0"),
                 (b"cookie", b"session=%d" % (i % 3)), (b"cookie", b"a=b"),
                 (b"x-tenant", b"tenant-%d" % (i % 4))]
        sids.append(c.request(base + [(b":path", b"/headers?%s" % path_tag)]
                              + extra))
    sids.append(c.request(base + [(b":path", b"/trailers?%s" % path_tag)]))
    sids.append(c.request(base + [(b":path", b"/echo?%s" % path_tag),
                                  (b"x-echo", ECHO.encode())]))
    hints = early_hints_supported(server.version)
    if hints:
        sids += [c.request(base + [(b":path", b"/eh/%d" % i)])
                 for i in range(3)]
    for r in c.wait(sids):
        check(r.status == 200, "%s: status %d" % (path_tag, r.status))
    trailers = [b for _, b, end in c.tap.blocks if end]
    check(trailers, "no trailers block came")
    big = [b for _, b, _ in c.tap.blocks if len(b) > 16384]
    check(big, "no response block over 16,384 octets came")
    # a 103 block and the 200's on each /eh/ stream
    blocks = [sid for sid, _, _ in c.tap.blocks]
    check(not hints or all(blocks.count(sid) == 2 for sid in sids[-3:]),
          "/eh/ streams without their 103 block: %s" % blocks)


def python_h2(server, expected, tag):
    c = H2Client(server.h2c_port)
    try:
        chosen_requests(server, c, tag.encode())
    finally:
        c.close()
    expected.client(c)


def malformed(server, expected):
    for kind, (block, want) in MALFORMED.items():
        c = RawH2(server.h2c_port, timeout=5)
        try:
            sid = c.request_block(block)
            outcome = c.outcome(sid)
        finally:
            c.close()
        check(outcome == want, "%s: %s, not %s" % (kind, outcome, want))
        expected.errors[kind] += 1


def held_connection(server, expected, tag):
    """An H2Client connection left open after its requests, the gauges
    while it is: one connection, table bytes held."""
    c = H2Client(server.h2c_port)
    chosen_requests(server, c, tag.encode())
    values, _ = scrape(server)["h2"]
    check(values["hpack_connections"] == 1 and values["hpack_table_bytes"] > 0,
          "one connection open: hpack_connections %d, hpack_table_bytes %d"
          % (values["hpack_connections"], values["hpack_table_bytes"]))
    expected.client(c)
    return c


def worker_of(server, tag):
    pids = {int(line.split()[0]) for line in server.access_log_lines()
            if tag in line}
    check(len(pids) == 1, "%s was served by %s" % (tag, pids))
    return pids.pop()


def wait_workers(server, gone, timeout=15):
    """Until the master has its workers again, none of them in gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = server.worker_pids()
        if len(pids) == server.workers and not set(pids) & set(gone):
            return pids
        time.sleep(0.1)
    raise server.error("%s: workers %s, expected %d new ones"
                       % (server.label, server.worker_pids(), server.workers))


def wait_exit(server, pid, why, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not os.path.exists("/proc/%d" % pid):
            return
        time.sleep(0.1)
    raise server.error("%s: worker %d did not exit; %s"
                       % (why, pid, server.log_tail(600)))


def counters_case(server):
    expected = Expected()
    check_counters(server, expected, "before any traffic")
    for path, method, want in (("/status?format=xml", "GET", 400),
                               ("/status", "POST", 405)):
        got = server.refused(path, method)
        check(got == want, "%s %s: %d, expected %d"
              % (method, path, got, want))

    octets = h2load_through(server, expected, 400, 8)
    for attempt in range(5):
        if len(server.served_by()) >= server.workers:
            break
        octets += h2load_through(server, expected, 40, 8)
    check(len(server.served_by()) == server.workers,
          "requests by worker: %s" % server.served_by())
    python_h2(server, expected, "chosen")
    malformed(server, expected)
    check_counters(server, expected, "after the traffic")
    info("%s: h2load's %d header octets; by worker %s; %s"
         % (server.label, octets, server.served_by(),
            ", ".join("%s %d" % (k[6:], v)
                      for k, v in expected.values.items() if v)))
    return expected


def survives(server, expected):
    # a graceful exit of one worker
    pid = server.worker_pids()[0]
    os.kill(pid, signal.SIGQUIT)
    wait_exit(server, pid, "SIGQUIT")
    wait_workers(server, [pid])
    check_counters(server, expected, "after SIGQUIT to worker %d" % pid)

    # a fast exit with a connection open: its gauges go with the worker
    c = held_connection(server, expected, "held")
    try:
        pid = worker_of(server, "held")
        os.kill(pid, signal.SIGTERM)
        wait_exit(server, pid, "SIGTERM")
    finally:
        c.sock.close()
    wait_workers(server, [pid])
    check_counters(server, expected, "after SIGTERM to worker %d with a "
                   "connection open" % pid)

    # a reload: new workers, the same zone.  Not under ASan: the master's
    # reload copies nginx's ngx_modules[], and ASan, which took the
    # module's own 16-octet ngx_modules[] (same name, bound to nginx's)
    # for that array, stops it for a global-buffer-overflow
    if harness.SANITIZED:
        info("%s: reload left out under ASan" % server.label)
        return
    old = server.worker_pids()
    os.kill(server.master_pid, signal.SIGHUP)
    for pid in old:
        wait_exit(server, pid, "reload")
    wait_workers(server, old)
    check_counters(server, expected, "after a reload")
    python_h2(server, expected, "reloaded")
    check_counters(server, expected, "after traffic to the reloaded workers")


def status_case(server):
    expected = counters_case(server)
    survives(server, expected)


def register(results, running):
    on = running.get("on")
    if on is None:
        return
    for workers in (1, 2):
        server = StatusServer(on, workers)

        def case(server=server):
            server.start()
            try:
                status_case(server)
            finally:
                server.stop()
            bad = server.log_problems()
            check(not bad, "%d lines in %s, first: %s"
                  % (len(bad), server.error_log, bad[:3]))
        results.run(server.label, "status_counters_%d_worker%s_exact"
                    % (workers, "s" if workers > 1 else ""), case)
