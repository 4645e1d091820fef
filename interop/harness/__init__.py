"""The interop suite's machinery: the nginx servers under test, the result
lines, and two HTTP/2 clients (h2's own connection with a tap on the raw
frames, and a raw frame client for what h2 refuses to send).

Everything here talks to 127.0.0.1 only.  Servers are real nginx processes
run by nginx_runner.py (in the foreground, so that the harness owns the
master's pid and stops it at the end, also on failure or Ctrl-C).

What more than one test file uses lives in the modules of this package,
and the test files import helpers from nowhere else:

    blocks      request header blocks written by hand (raw and Huffman
                string literals, indexed fields, GET /echo)
    sequences   such blocks sent in order on one connection, each
                outcome as text; the worker still serves afterwards
    origins     the HTTP/1.1 origins of the differential, Early Hints,
                hpack_status and allocation failure tests
    responses   what interop/conf/interop.conf's locations answer
    tools       nghttp's and h2load's output read back
    proxy       the reverse-proxy tests' and benchmark's origin process,
                proxies and expected headers
    stories     hpack-test-case's response stories through a proxy, one
                connection each: header lists, block octets, the bound
    h3          the HTTP/3 servers of run_h3.py and run_h3_hostile.py,
                and what their /security answers
"""

import os
import re
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.settings
from hpack import Decoder, Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame,
                              GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame,
                              WindowUpdateFrame)

from interop import nginx_runner

REPO = nginx_runner.REPO
BUILD = nginx_runner.BUILD
WORK = BUILD / "interop"
TEMPLATE = REPO / "interop" / "conf" / "interop.conf"

# The installation each variant runs from: build/nginx-<this> on 1.26.3,
# build/nginx-<version>-<this> on the other lines (as module/nginx.mk's
# nginx_prefix); run_interop.py --asan puts the sanitizer build in place of
# the patched one.
INSTALLS = {"stock": "stock", "hpack": "hpack"}
# True under --asan: the patched servers run the sanitizer build, whose RSS
# is mostly the allocator's quarantine, and which runs several times slower
SANITIZED = False

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

H2_ERRORS = {
    0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR",
    0x3: "FLOW_CONTROL_ERROR", 0x4: "SETTINGS_TIMEOUT",
    0x5: "STREAM_CLOSED", 0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM",
    0x8: "CANCEL", 0x9: "COMPRESSION_ERROR", 0xa: "CONNECT_ERROR",
    0xb: "ENHANCE_YOUR_CALM", 0xc: "INADEQUATE_SECURITY",
    0xd: "HTTP_1_1_REQUIRED",
}

SETTINGS_HEADER_TABLE_SIZE = 0x1
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_HEADER_LIST_SIZE = 0x6


def h2_error_name(code):
    return H2_ERRORS.get(code, "0x%x" % code)


def version_at_least(version, *want):
    """Whether the nginx line version ("1.26.3") is want (1, 29) or later."""
    return tuple(int(x) for x in version.split(".")) >= want


# ------------------------------------------------------------------ results

class Failure(Exception):
    """A test's expectation did not hold: the message says what broke."""


class Skip(Exception):
    """A test cannot run here: the message says why."""


class Results:
    """PASS/FAIL/SKIP lines, printed as they happen, and the final count."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []

    def run(self, label, name, fn, *args):
        title = "[%s] %s" % (label, name)
        start = time.monotonic()
        try:
            fn(*args)
        except Skip as e:
            self.skipped += 1
            print("SKIP  %s: %s" % (title, e), flush=True)
            return None
        except Failure as e:
            self.failed += 1
            self.failures.append(title)
            print("FAIL  %s: %s" % (title, e), flush=True)
            return False
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:              # a broken test is a failed test
            self.failed += 1
            self.failures.append(title)
            print("FAIL  %s: %s: %s" % (title, type(e).__name__, e),
                  flush=True)
            return False
        self.passed += 1
        print("PASS  %s (%.1fs)" % (title, time.monotonic() - start),
              flush=True)
        return True

    def summary(self):
        line = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            line += ", %d skipped" % self.skipped
        return line

    def finish(self):
        """Lists the failures, prints the closing line, returns the exit
        status of the runner."""
        if self.failures:
            print("failed:")
            for name in self.failures:
                print("  " + name)
        print(self.summary(), flush=True)
        return 1 if self.failed else 0


class Filtered(Results):
    """Results that only run the tests whose names match the regular
    expression only (all of them when it is empty); Results.run(self, ...)
    runs one whatever its name (start-up checks)."""

    def __init__(self, only):
        super().__init__()
        self.only = re.compile(only) if only else None

    def run(self, label, name, fn, *args):
        if self.only and not self.only.search(name):
            return None
        return super().run(label, name, fn, *args)


def line_absent(results, version, what):
    """True when nginx VERSION's source is absent (no ../shared/nginx/
    nginx-VERSION.tar.gz, a checkout without the shared folder): one SKIP
    says so for all of what, and the runner starts nothing on the line.
    Where the source is here, a build of it that is missing fails."""
    if not nginx_runner.source_absent(version):
        return False
    results.skipped += 1
    print("SKIP  [%s] %s: not run, no source of nginx %s (no ../shared/"
          "nginx/nginx-%s.tar.gz; NGINX_SRC=<tree> builds it from yours)"
          % (version, what, version, version), flush=True)
    return True


def stop_on_sigterm(prog):
    """SIGTERM ends the runner as Ctrl-C does: SystemExit unwinds through
    the finally blocks that stop its servers."""
    def terminate(signum, frame):
        raise SystemExit("%s: signal %d, stopping the servers" % (prog, signum))
    signal.signal(signal.SIGTERM, terminate)


def info(text):
    """A detail line under the test that printed it."""
    for line in str(text).splitlines():
        print("      " + line, flush=True)


def check(cond, message):
    if not cond:
        raise Failure(message)


# ------------------------------------------------------------------ servers

BIG_SIZE = 256 * 1024


def big_body():
    line = b"0123456789abcdef" * 4 + b"\n"
    return (line * (BIG_SIZE // len(line) + 1))[:BIG_SIZE]


LOG_FORMAT_HPACK = """\
    log_format  interop_hpack
        '$connection:$connection_requests "$request" $status '
        'in=$hpack_in_wire/$hpack_in_plain '
        'out=$hpack_out_wire/$hpack_out_plain '
        'conn_in=$hpack_conn_in_wire/$hpack_conn_in_plain '
        'conn_out=$hpack_conn_out_wire/$hpack_conn_out_plain '
        'hits=$hpack_in_hits/$hpack_out_hits table=$hpack_out_table';
"""


# INTEROP_PORT_SHIFT=N moves every port by N, so that two checkouts can run
# the suite at the same time
PORT_SHIFT = int(os.environ.get("INTEROP_PORT_SHIFT", "0"))


class Server(nginx_runner.Nginx):
    """One nginx under test.

    kind is "on" (module loaded, hpack on), "small" (the same with
    hpack_table_size 512), "off" (module loaded, hpack off), "nomod"
    (patched binary, no load_module) or "stock" (unpatched binary).
    Under use_sanitizer_build() they stop gracefully (stop_signal SIGQUIT).
    """

    error = Failure
    LABELS = {"on": "hpack-on", "small": "hpack-on-table-512",
              "off": "hpack-off", "nomod": "no-module", "stock": "stock"}

    def __init__(self, version, kind, slot, extra_directives=""):
        variant = "stock" if kind == "stock" else "hpack"
        install = nginx_runner.install_dir(version, INSTALLS[variant])
        super().__init__(install / "sbin" / "nginx",
                         WORK / ("%s-%s" % (version, kind)),
                         "%s %s" % (version, self.LABELS[kind]),
                         h2c_port=18080 + PORT_SHIFT + slot,
                         tls_port=18443 + PORT_SHIFT + slot, version=version)
        self.kind = kind
        self.extra = extra_directives
        self.install = install
        self.module = install / "modules" / nginx_runner.MODULE_SO
        suffix = "" if version == "1.26.3" else "-" + version
        self.name = "%s%s" % (self.LABELS[kind], suffix)

    # the module is loaded and its variables exist
    @property
    def has_module(self):
        return self.kind in ("on", "small", "off")

    # the module's codec encodes and decodes this server's header blocks
    @property
    def hpack_on(self):
        return self.kind in ("on", "small")

    def missing(self):
        """Why this server cannot run, or None."""
        if not self.binary.exists():
            return "%s not built (make nginx)" % self.binary
        if self.has_module and not self.module.exists():
            return "%s not built (make nginx)" % self.module
        return None

    def render(self):
        subst = self.base_subst(self.module if self.has_module else None)
        subst.update({
            "LOG_FORMAT_HPACK": LOG_FORMAT_HPACK if self.has_module else "",
            "LOG_FORMAT": "interop_hpack" if self.has_module else "interop",
            "HPACK_DIRECTIVES": {
                "on": "    hpack              on;\n"
                      "    hpack_table_size   4096;\n"
                      "    hpack_never_index  x-secret-token;\n",
                "small": "    hpack              on;\n"
                         "    hpack_table_size   512;\n"
                         "    hpack_never_index  x-secret-token;\n",
                "off": "    hpack              off;\n",
            }.get(self.kind, "") + self.extra,
        })
        self.write_conf(nginx_runner.render(TEMPLATE, subst),
                        ("conf", "logs", "html"))
        big = self.prefix / "html" / "big"
        if not big.exists() or big.stat().st_size != BIG_SIZE:
            big.write_bytes(big_body())

    @property
    def authority(self):
        return "127.0.0.1:%d" % self.h2c_port


def use_sanitizer_build():
    """The patched servers from the line's sanitizer build (make nginx-asan)
    from now on (run_interop.py --asan, proxy_run.py --asan): stopped
    gracefully, so that each worker closes its connections and destroys its
    pools before LeakSanitizer runs at its exit; SANITIZED for the checks
    that read it."""
    global SANITIZED
    INSTALLS["hpack"] = "hpack-asan"
    SANITIZED = True
    Server.stop_signal = signal.SIGQUIT
    Server.stop_timeout = 60


def no_crash_or_alert(server, since=0):
    """The server's error log, from offset since, has no alert, crit or
    emerg line and no worker that exited on a signal."""
    bad = server.log_problems(since)
    check(not bad, "%d lines in %s, first: %s"
          % (len(bad), server.error_log, bad[:3]))


def rss_kib(pid):
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise Failure("no VmRSS for pid %d" % pid)


def run_tool(args, timeout=120):
    """A client tool; its output (stdout and stderr together) and status."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


# ------------------------------------------------------------------ frames

class FrameTap:
    """Splits a received byte stream into frames on its own, and keeps every
    header block (HEADERS + CONTINUATION payloads) exactly as it was on the
    wire, in wire order: what an h2 connection decodes, seen from outside.
    """

    def __init__(self):
        self.buf = bytearray()
        self.blocks = []                # (stream id, block, END_STREAM)
        self.events = []                # ("block", i) / ("settings-ack",)
        self._open = None

    def feed(self, data):
        self.buf += data
        frames = []
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[0:3], "big")
            if len(self.buf) < 9 + length:
                break
            frame, _ = Frame.parse_frame_header(memoryview(self.buf[:9]))
            frame.parse_body(memoryview(bytes(self.buf[9:9 + length])))
            del self.buf[:9 + length]
            self._track(frame)
            frames.append(frame)
        return frames

    def _track(self, frame):
        if isinstance(frame, HeadersFrame):
            self._open = [frame.stream_id, bytearray(frame.data),
                          "END_STREAM" in frame.flags]
        elif isinstance(frame, ContinuationFrame):
            self._open[1] += frame.data
        elif isinstance(frame, SettingsFrame) and "ACK" in frame.flags:
            self.events.append(("settings-ack",))
            return
        else:
            return
        if "END_HEADERS" in frame.flags:
            sid, block, end = self._open
            self.blocks.append((sid, bytes(block), end))
            frame.block = self.blocks[-1]
            self.events.append(("block", len(self.blocks) - 1))
            self._open = None


def decode_int(data, pos, prefix_bits):
    """An HPACK integer at data[pos]: (value, next position)."""
    mask = (1 << prefix_bits) - 1
    value = data[pos] & mask
    pos += 1
    if value < mask:
        return value, pos
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        value += (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def encode_int(value, prefix_bits, first=0):
    mask = (1 << prefix_bits) - 1
    if value < mask:
        return bytes([first | value])
    out = [first | mask]
    value -= mask
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def leading_size_updates(block):
    """The dynamic table size updates (001xxxxx) at the start of a block."""
    sizes, pos = [], 0
    while pos < len(block) and block[pos] & 0xe0 == 0x20:
        size, pos = decode_int(block, pos, 5)
        sizes.append(size)
    return sizes


REP_KINDS = {0x80: "indexed", 0x40: "incremental", 0x10: "never-indexed",
             0x00: "without-indexing"}


def walk(block):
    """Every representation of a header block (RFC 7541 section 6), in
    order, as (kind, number, start, end, strings): kind "size-update"
    (number: the size) or one of REP_KINDS' values (number: the table index
    of the field or of its name, 0 for a literal name); [start, end) its
    octets; strings the (huffman, length) of a literal's name (when sent)
    and value.  end may pass the block when a length does."""
    pos = 0
    while pos < len(block):
        b, start = block[pos], pos
        if b & 0x80:
            index, pos = decode_int(block, pos, 7)
            yield "indexed", index, start, pos, ()
        elif b & 0xe0 == 0x20:
            size, pos = decode_int(block, pos, 5)
            yield "size-update", size, start, pos, ()
        else:
            kind = 0x40 if b & 0x40 else b & 0x10
            index, pos = decode_int(block, pos, 6 if kind == 0x40 else 4)
            strings = []
            for _ in range(1 if index else 2):
                huffman = bool(block[pos] & 0x80)
                length, pos = decode_int(block, pos, 7)
                strings.append((huffman, length))
                pos += length
            yield REP_KINDS[kind], index, start, pos, tuple(strings)


def all_size_updates(block):
    """Every size update in a block, with the number of fields before it
    (a complete parse of the representations, so that one after a field is
    found too)."""
    found, n = [], 0
    for kind, number, _, _, _ in walk(block):
        if kind == "size-update":
            found.append((n, number))
        else:
            n += 1
    return found


DATE_NAME_INDEX = 33                    # RFC 7541 Appendix A: date


def octets_but_date(block):
    """A block's length with each literal date (name index 33) counted as
    one octet, what a reference to it costs: the date changes every second
    and the first response of a second sends it as a literal, which says
    nothing about whether the table is in use."""
    n = len(block)
    for kind, number, start, end, _ in walk(block):
        if kind not in ("indexed", "size-update") \
                and number == DATE_NAME_INDEX:
            n -= end - start - 1
    return n


def dynamic_references(block):
    """How many representations refer to the dynamic table (index > 61)."""
    return sum(1 for kind, number, _, _, _ in walk(block)
               if kind != "size-update" and number > 61)


# ------------------------------------------------------- the h2 client

def connect(port, tls=False, timeout=10, rcvbuf=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        # a small window: the server's writes block early
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        sock = ctx.wrap_socket(sock, server_hostname="localhost")
        if sock.selected_alpn_protocol() != "h2":
            raise Failure("TLS: ALPN chose %r, not h2"
                          % sock.selected_alpn_protocol())
    return sock


class Response:
    def __init__(self, sid):
        self.sid = sid
        self.headers = None             # list of (bytes, bytes) tuples
        self.trailers = None
        self.body = b""
        self.ended = False
        self.reset = None

    def header(self, name):
        """The value of a response header (str), or None."""
        name = name.encode()
        values = [v for n, v in self.headers if n == name]
        if len(values) > 1:
            raise Failure("response header %s appears %d times"
                          % (name.decode(), len(values)))
        return values[0].decode() if values else None

    @property
    def status(self):
        return int(self.header(":status"))


class H2Client:
    """python3-h2's own connection (its own HPACK encoder and decoder), with
    a FrameTap on the received bytes."""

    def __init__(self, port, tls=False, timeout=10):
        self.sock = connect(port, tls, timeout)
        config = h2.config.H2Configuration(client_side=True,
                                           header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.local_settings.max_header_list_size = 1 << 20
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(1 << 30)
        self.tap = FrameTap()
        self.sent = FrameTap()          # what h2 put on the wire
        self.sent_decoder = Decoder()
        self.sent_decoder.max_header_list_size = 1 << 20
        self.sent_headers = {}          # stream id -> decoded request
        self.responses = {}
        self.terminated = None
        self.settings_acks = 0
        data = self.conn.data_to_send()
        self.sock.sendall(data)
        self.sent.feed(data[len(PREFACE):])

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)
            start = len(self.sent.blocks)
            self.sent.feed(data)
            for sid, block, _ in self.sent.blocks[start:]:
                # the request as nginx decodes it: each field with the
                # representation h2 chose (NeverIndexedHeaderTuple or not)
                self.sent_headers[sid] = self.sent_decoder.decode(block,
                                                                  raw=True)

    def request(self, headers, end_stream=True):
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, headers, end_stream=end_stream)
        self.responses[sid] = Response(sid)
        return sid

    def update_settings(self, settings):
        self.conn.update_settings(settings)

    def pump_once(self):
        data = self.sock.recv(65536)
        if not data:
            raise Failure("nginx closed the connection"
                          + (" (GOAWAY %s)" % self.terminated
                             if self.terminated else ""))
        self.tap.feed(data)
        for ev in self.conn.receive_data(data):
            self._event(ev)
        self.flush()

    def _event(self, ev):
        if isinstance(ev, h2.events.ResponseReceived):
            self.responses[ev.stream_id].headers = ev.headers
        elif isinstance(ev, h2.events.TrailersReceived):
            self.responses[ev.stream_id].trailers = ev.headers
        elif isinstance(ev, h2.events.DataReceived):
            self.responses[ev.stream_id].body += ev.data
            self.conn.acknowledge_received_data(ev.flow_controlled_length,
                                                ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded):
            self.responses[ev.stream_id].ended = True
        elif isinstance(ev, h2.events.StreamReset):
            self.responses[ev.stream_id].reset = ev.error_code
            self.responses[ev.stream_id].ended = True
        elif isinstance(ev, h2.events.SettingsAcknowledged):
            self.settings_acks += 1
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.terminated = "%s %r" % (h2_error_name(ev.error_code),
                                         ev.additional_data)

    def wait(self, sids):
        self.flush()
        while not all(self.responses[s].ended for s in sids):
            self.pump_once()
        return [self.responses.pop(s) for s in sids]

    def wait_settings_acks(self, n):
        while self.settings_acks < n:
            self.pump_once()

    def get(self, headers):
        return self.wait([self.request(headers)])[0]

    def close(self):
        try:
            self.conn.close_connection()
            self.flush()
        except Exception:
            pass
        self.sock.close()


# ------------------------------------------------------- the raw client

class RawH2:
    """HTTP/2 by hand: header blocks are bytes the test builds (split at any
    point, malformed on purpose), responses are decoded with hpack's
    Decoder in wire order."""

    def __init__(self, port, tls=False, timeout=10, settings=None,
                 rcvbuf=None):
        self.sock = connect(port, tls, timeout, rcvbuf)
        self.timeout = timeout
        self.tap = FrameTap()
        self.enc = Encoder()
        self.dec = Decoder()
        self.dec.max_header_list_size = 1 << 20
        self.next_sid = 1
        self.responses = {}
        self.goaway = None
        self.eof = False
        self.decode_error = None
        self.pending_table_sizes = []
        self.server_settings_seen = False
        s = {SETTINGS_INITIAL_WINDOW_SIZE: (1 << 31) - 1,
             SETTINGS_MAX_HEADER_LIST_SIZE: 1 << 20}
        s.update(settings or {})
        self.send(PREFACE, SettingsFrame(0, settings=s),
                  WindowUpdateFrame(0, window_increment=1 << 30))
        if SETTINGS_HEADER_TABLE_SIZE in s:
            self.pending_table_sizes.append(s[SETTINGS_HEADER_TABLE_SIZE])
        else:
            self.pending_table_sizes.append(None)
        # the handshake: nginx's SETTINGS read and acknowledged, ours
        # acknowledged, before any request; so that no later bytes of
        # ours (an ACK) wake a connection up by accident
        deadline = time.monotonic() + timeout
        while self.pending_table_sizes or not self.server_settings_seen:
            if self.eof or self.goaway:
                raise Failure("handshake failed: %s" % self.describe_end())
            self.pump(deadline)

    def send(self, *parts):
        # the connection's own timeout: a read leaves the socket with what
        # was left of its deadline (a millisecond, say), and a write that
        # waited on nginx that long would stop in the middle of a frame
        self.sock.settimeout(self.timeout)
        self.sock.sendall(b"".join(p if isinstance(p, bytes)
                                   else p.serialize() for p in parts))

    def settings(self, **kw):
        """A SETTINGS frame (not sent)."""
        s = {}
        if "header_table_size" in kw:
            s[SETTINGS_HEADER_TABLE_SIZE] = kw["header_table_size"]
            self.pending_table_sizes.append(kw["header_table_size"])
        else:
            self.pending_table_sizes.append(None)
        return SettingsFrame(0, settings=s)

    def new_stream(self):
        sid = self.next_sid
        self.next_sid += 2
        self.responses[sid] = Response(sid)
        return sid

    def encode(self, headers):
        return self.enc.encode(headers)

    def header_frames(self, sid, block, cuts=(), end_stream=True, pad=0):
        """HEADERS + CONTINUATION frames carrying block, cut at the given
        offsets (empty pieces allowed); pad octets of padding in the
        HEADERS frame (PADDED)."""
        bounds = [0] + sorted(cuts) + [len(block)]
        pieces = [block[a:b] for a, b in zip(bounds, bounds[1:])]
        frames = []
        for i, piece in enumerate(pieces):
            flags = set()
            if i == len(pieces) - 1:
                flags.add("END_HEADERS")
            if i == 0:
                if end_stream:
                    flags.add("END_STREAM")
                if pad:
                    flags.add("PADDED")
                frames.append(HeadersFrame(sid, data=piece, flags=flags,
                                           pad_length=pad))
            else:
                frames.append(ContinuationFrame(sid, data=piece, flags=flags))
        return frames

    def request_block(self, block, cuts=(), end_stream=True, pad=0):
        sid = self.new_stream()
        self.send(*self.header_frames(sid, block, cuts, end_stream, pad))
        return sid

    def request(self, headers, cuts=()):
        return self.request_block(self.encode(headers), cuts)

    def _read_frames(self, deadline):
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            except socket.timeout:
                raise TimeoutError
            if not data:
                self.eof = True
                return []
            frames = self.tap.feed(data)
            if frames:
                return frames

    def _handle(self, frame):
        if isinstance(frame, SettingsFrame):
            if "ACK" in frame.flags:
                size = self.pending_table_sizes.pop(0)
                if size is not None:
                    self.dec.max_allowed_table_size = size
            else:
                self.server_settings_seen = True
                self.send(SettingsFrame(0, flags=["ACK"]))
        elif isinstance(frame, PingFrame):
            if "ACK" not in frame.flags:
                self.send(PingFrame(0, opaque_data=frame.opaque_data,
                                    flags=["ACK"]))
        elif isinstance(frame, GoAwayFrame):
            self.goaway = (frame.error_code, frame.last_stream_id,
                           frame.additional_data)
        elif isinstance(frame, RstStreamFrame):
            r = self.responses.get(frame.stream_id)
            if r:
                r.reset = frame.error_code
                r.ended = True
        elif isinstance(frame, DataFrame):
            r = self.responses.get(frame.stream_id)
            if r:
                r.body += frame.data
                if "END_STREAM" in frame.flags:
                    r.ended = True
        elif (isinstance(frame, (HeadersFrame, ContinuationFrame))
              and "END_HEADERS" in frame.flags):
            sid, block, end = frame.block
            r = self.responses.get(sid)
            try:
                headers = self.dec.decode(block, raw=True)
            except Exception as e:
                self.decode_error = "stream %d: %s: %s" % (
                    sid, type(e).__name__, e)
                raise Failure("response header block does not decode "
                              "(table drift?): %s; block %s"
                              % (self.decode_error, block.hex()))
            if r:
                if r.headers is None:
                    r.headers = headers
                else:
                    r.trailers = headers
                if end:
                    r.ended = True

    def pump(self, deadline):
        frames = self._read_frames(deadline)
        for f in frames:
            self._handle(f)
        return bool(frames)

    def wait(self, sids, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while not all(self.responses[s].ended for s in sids):
            if self.goaway or self.eof:
                raise Failure("connection ended before the responses: %s"
                              % self.describe_end())
            try:
                self.pump(deadline)
            except TimeoutError:
                raise Failure("no response within %ss" % (timeout
                                                          or self.timeout))
        return [self.responses.pop(s) for s in sids]

    def get(self, headers, cuts=()):
        return self.wait([self.request(headers, cuts)])[0]

    def wait_acks(self):
        deadline = time.monotonic() + self.timeout
        while self.pending_table_sizes:
            self.pump(deadline)

    def outcome(self, sid, timeout=3):
        """What nginx did with a stream: "GOAWAY <error>", "RST_STREAM
        <error>", "response <status>", "closed" or "no answer"."""
        deadline = time.monotonic() + timeout
        r = self.responses[sid]
        while True:
            if self.goaway:
                return "GOAWAY %s" % h2_error_name(self.goaway[0])
            if r.reset is not None:
                return "RST_STREAM %s" % h2_error_name(r.reset)
            if r.ended and r.headers is not None:
                return "response %s" % r.status
            if self.eof:
                return "closed"
            try:
                self.pump(deadline)
            except TimeoutError:
                return "no answer"

    def describe_end(self):
        if self.goaway:
            return "GOAWAY %s %r" % (h2_error_name(self.goaway[0]),
                                     self.goaway[2])
        return "connection closed" if self.eof else "open"

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def request_headers(server, path, extra=(), method="GET"):
    """The pseudo-headers of a GET to server, then extra (name, value)s."""
    return [(":method", method), (":scheme", "http"),
            (":authority", server.authority), (":path", path)] + list(extra)


# ------------------------------------------------- representations

def representations(block):
    """The representation of every field of a block, in order, as
    (kind, index): kind one of REP_KINDS' values, index the table index
    of an indexed field or of a literal's name (0: a literal name).  Size
    updates are skipped; zip the result with the decoded header list."""
    return [(kind, number) for kind, number, _, _, _ in walk(block)
            if kind != "size-update"]
