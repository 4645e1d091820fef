"""Same answer as stock over HTTP/3: the generated corpus of the HTTP/2
differential (interop/cases_differential.py), sent by build/h3client as
raw QPACK to the stock build and to "hpack_http3 on" of one line, and
every answer compared.

Every request goes twice on one connection, as over HTTP/2: first every
field is inserted into the client's dynamic table on the QPACK encoder
stream and sent in the section as a literal (a static name by
reference), then the section refers to each field's entry (Required
Insert Count and Base the inserts give; a literal again when the entry
was evicted), so that the decoder's table answers the second time.  The
client's table is nginx's http3_max_table_capacity (4096) and its
entries are evicted oldest first.  A request that ends the connection is
followed by a new connection (its second sending is then not sent).

The answer of a request is what the client and the application see: the
status, a stream reset's or the connection close's HTTP/3 error code, the
request head the HTTP/1.1 origin behind nginx received (the response's
body) and nginx's variables (the x-v-* response fields), as the HTTP/2
differential has them.  The requests go to the name-based servers of
cases_differential.server_block() on a QUIC port of their own.  The
corpus's raw HTTP/2 blocks (HPACK's padding and size-update cases) have no
HTTP/3 form and are left out, and so are the requests whose section
would be longer than SECTION_MAX (beyond the request stream's initial flow
control window: the size requests made for the HTTP/2 differential's
larger header buffers); run_h3_hostile.py sends the QPACK ones.
One difference is allowed (allowed()): a request with an empty field
name, which stock answers by closing the connection and RFC 9114 calls
malformed (the module resets the stream with H3_MESSAGE_ERROR).
"""

import json
import re
import subprocess
import time

from interop import nginx_runner
from interop.cases_differential import (NOT_SENT, corpus, report,
                                        server_block, short, summary)
from interop.harness import Failure, Skip, encode_int, info
from interop.harness.blocks import _HUFFMAN

PORT_OFFSET = 60                # the differential port: the server's + 60
CAPACITY = 4096                 # nginx's http3_max_table_capacity
MAX_ENTRIES = CAPACITY // 32
TIMEOUT = 5
BATCH = 200                     # requests per client run
SECTION_MAX = 60000             # longer sections are left out

# RFC 9204 Appendix A, as the codec writes it (QpackStaticTable tests it)
STATIC_HEADER = nginx_runner.REPO / "codec" / "src" / "qpack_static_table.h"
STATIC_NAMES = {}
for _i, _m in enumerate(re.finditer(r'^\s*E\("([^"]*)", "[^"]*"\),$',
                                    STATIC_HEADER.read_text(), re.M)):
    STATIC_NAMES.setdefault(_m.group(1).encode(), _i)

H3_ERRORS = {0x100: "H3_NO_ERROR", 0x101: "H3_GENERAL_PROTOCOL_ERROR",
             0x102: "H3_INTERNAL_ERROR", 0x104: "H3_CLOSED_CRITICAL_STREAM",
             0x105: "H3_FRAME_UNEXPECTED", 0x106: "H3_FRAME_ERROR",
             0x107: "H3_EXCESSIVE_LOAD", 0x108: "H3_ID_ERROR",
             0x109: "H3_SETTINGS_ERROR", 0x10a: "H3_MISSING_SETTINGS",
             0x10b: "H3_REQUEST_REJECTED", 0x10c: "H3_REQUEST_CANCELLED",
             0x10d: "H3_REQUEST_INCOMPLETE", 0x10e: "H3_MESSAGE_ERROR",
             0x200: "QPACK_DECOMPRESSION_FAILED",
             0x201: "QPACK_ENCODER_STREAM_ERROR",
             0x202: "QPACK_DECODER_STREAM_ERROR"}


def diff_port(server):
    return server.tls_port + PORT_OFFSET


def configure(server):
    """The differential servers, QUIC only, in server's http{} block (the
    default large_client_header_buffers, 4 8k)."""
    tls = nginx_runner.TLS_DIR
    listen = ["        listen  127.0.0.1:%d quic;" % diff_port(server),
              "        ssl_certificate      %s/cert.pem;" % tls,
              "        ssl_certificate_key  %s/key.pem;" % tls]
    server.extra += server_block(server, listen)


def allowed(req, stock, on):
    """Why on's answer may differ from stock's, or None"""
    if any(not n for n, _ in req.fields) and on == "reset H3_MESSAGE_ERROR":
        return ("an empty field name: stock closes the connection "
                "(H3_GENERAL_PROTOCOL_ERROR, on the insert or the field "
                "line); RFC 9114 4.1.2 makes the request malformed, a "
                "stream error H3_MESSAGE_ERROR")
    return None


# ------------------------------------------------------------ QPACK out

def string(s, prefix, huffman, flags):
    """A string literal whose length has a prefix-bit integer, the H bit
    just above it."""
    if huffman:
        s = _HUFFMAN.encode(s)
        flags |= 1 << prefix
    return encode_int(len(s), prefix, flags) + s


class Encoder:
    """The client's QPACK encoder: its model of nginx's decoder table."""

    def __init__(self):
        self.entries = []           # (name, value), oldest first
        self.dropped = 0            # absolute index of entries[0]
        self.used = 0

    def insert(self, name, value, huffman):
        """The encoder-stream instruction inserting (name, value), or b""
        when it cannot fit."""
        size = len(name) + len(value) + 32
        if size > CAPACITY:
            return b""
        while self.used + size > CAPACITY:
            n, v = self.entries.pop(0)
            self.used -= len(n) + len(v) + 32
            self.dropped += 1
        self.entries.append((name, value))
        self.used += size
        if name in STATIC_NAMES:
            return (encode_int(STATIC_NAMES[name], 6, 0xc0)
                    + string(value, 7, huffman, 0))
        return (string(name, 5, huffman, 0x40)
                + string(value, 7, huffman, 0))

    def index(self, name, value):
        """The absolute index of the newest entry (name, value), or None."""
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i] == (name, value):
                return self.dropped + i
        return None


def literal(name, value, huffman):
    if name in STATIC_NAMES:
        return (encode_int(STATIC_NAMES[name], 4, 0x50)
                + string(value, 7, huffman, 0))
    return string(name, 3, huffman, 0x20) + string(value, 7, huffman, 0)


def literal_sending(req, enc):
    """(encoder-stream octets, section): every field inserted, and sent
    as a literal"""
    stream = b"".join(enc.insert(n, v, i in req.huffman)
                      for i, (n, v) in enumerate(req.fields))
    section = b"\x00\x00" + b"".join(literal(n, v, i in req.huffman)
                                     for i, (n, v) in enumerate(req.fields))
    return stream, section


def indexed_sending(req, enc):
    """The section: every field a reference to its entry (Base = the insert
    count, relative indexes), a literal when the entry is gone; and how
    many references"""
    base = enc.dropped + len(enc.entries)
    lines, ric = [], 0
    for i, (n, v) in enumerate(req.fields):
        index = enc.index(n, v)
        if index is None:
            lines.append(literal(n, v, i in req.huffman))
        else:
            lines.append(encode_int(base - 1 - index, 6, 0x80))
            ric = max(ric, index + 1)
    prefix = (encode_int(ric % (2 * MAX_ENTRIES) + 1 if ric else 0, 8)
              + encode_int(base - ric if ric else 0, 7))
    return prefix + b"".join(lines), sum(1 for x in lines if x[0] & 0x80)


# ------------------------------------------------------------ the client

def describe(r):
    """The status, nginx's variables and the origin's echo of a
    response."""
    fields = r["sections"][0]["fields"] if r["sections"] else []
    seen = ["%s=%r" % (n[4:], v) for n, v in fields if n.startswith("x-v-")]
    return "response %s [%s] %r" % (r["status"], " ".join(seen),
                                    r.get("text"))


def run_batch(server, requests, h3client):
    """Sends requests (from the first) on one connection until it ends:
    [(literal answer, indexed answer)] of those it reached, the references
    made, and whether the connection ended."""
    enc = Encoder()
    lines = ["encoder " + encode_int(CAPACITY, 5, 0x20).hex()]
    refs = 0
    for req in requests:
        stream, section = literal_sending(req, enc)
        if stream:
            lines.append("encoder " + stream.hex())
        lines += ["raw-request " + section.hex(), "wait"]
        section, n = indexed_sending(req, enc)
        refs += n
        lines += ["raw-request " + section.hex(), "wait"]
    p = subprocess.run([h3client, "-b", "-t", str(TIMEOUT), "127.0.0.1",
                        str(diff_port(server))],
                       input=("\n".join(lines) + "\n").encode(),
                       capture_output=True,
                       timeout=TIMEOUT * (2 * len(requests) + 4) + 30)
    events = [json.loads(x) for x in p.stdout.decode("utf-8",
                                                     "replace").splitlines()
              if x.startswith("{")]
    if p.returncode or not events or events[-1]["event"] != "close":
        raise Failure("h3client failed (exit %d): %s" % (
            p.returncode, short(p.stderr.decode("utf-8", "replace"))))
    close = events[-1]
    answer = {}
    for e in events:
        if e["event"] == "response":
            answer[e["stream"]] = describe(e)
        elif e["event"] == "reset":
            answer.setdefault(e["stream"], "reset %s" % h3_error(e["code"]))
    ended = close["by"] == "peer"
    end = ("connection closed %s" % h3_error(close.get("code"))
           if ended else "no answer")
    answers = []
    for i in range(len(requests)):
        a = [answer.get(8 * i + 4 * k) for k in (0, 1)]
        if a[0] is None:
            answers.append((end, NOT_SENT))
            break
        if a[1] is None:
            answers.append((a[0], NOT_SENT if ended else end))
            break
        answers.append(tuple(a))
    return answers, refs, ended


def h3_error(code):
    return H3_ERRORS.get(code, "0x%x" % code) if code is not None else "-"


def run_corpus(server, requests, h3client):
    answers, conns, refs = [], 0, 0
    while len(answers) < len(requests):
        rest = requests[len(answers):len(answers) + BATCH]
        got, n, ended = run_batch(server, rest, h3client)
        conns += 1
        refs += n
        answers += got
        if len(got) < len(rest) and not ended:
            raise Failure("%s: no answer to %s" % (server.label,
                                                   rest[len(got) - 1].name))
    return answers, conns, refs


def differential(running, h3client):
    """The answers of running["on"] to the corpus against running["stock"]'s;
    the servers must have been configured by configure()."""
    stock, on = running.get("stock"), running.get("on")
    if stock is None or on is None:
        raise Skip("needs both the stock and the h3-on server running")
    requests = [r for r in corpus(on.version)
                if not r.raw and len(literal_sending(r, Encoder())[1])
                < SECTION_MAX]
    times, got = {}, {}
    for s in (stock, on):
        start = time.monotonic()
        got[s.kind] = run_corpus(s, requests, h3client)
        times[s.kind] = time.monotonic() - start
    same, differ, bad = 0, [], []
    for req, a, b in zip(requests, got["stock"][0], got["on"][0]):
        for how, x, y in (("literal", a[0], b[0]), ("indexed", a[1], b[1])):
            if x == y:
                same += 1
                continue
            line = "%s (%s): stock %s; h3-on %s" % (req.name, how, short(x),
                                                     short(y))
            why = allowed(req, x, y)
            if why:
                differ.append("%s: %s" % (line, why))
            else:
                bad.append(line)
    for kind in ("stock", "on"):
        answers, conns, refs = got[kind]
        info("%s: %d requests on %d connections, %d references in the "
             "indexed sendings (%.1fs); the literal sendings answered %s"
             % (kind, len(requests), conns, refs, times[kind],
                summary(answers)))
    info("of %d answers %d identical to stock's, %d allowed differences, "
         "%d other differences" % (2 * len(requests), same, len(differ),
                                   len(bad)))
    report(differ, bad)
    if got["on"][2] == 0:
        raise Failure("the indexed sendings made no reference")
