"""103 Early Hints (nginx 1.29 and later): a third producer of header
blocks, beside responses and trailers.

An HTTP/1.1 origin on 127.0.0.1 answers every request with a 103 (Link
fields: two the same on every response, one of 8 that depends on the
path, and on every fifth response one never seen before) and then a 200;
nginx proxies it with "early_hints $http2;".  One python3-h2 connection
sends 1,000 requests, 10 in flight, and changes SETTINGS_HEADER_TABLE_SIZE
to 4096, 0, 1024 and 65536 on the way (each once the requests before it
are answered); then nghttp fetches 250 each with the same four decoder
table sizes (-c).  Every block must decode (h2's decoder, nghttp's), every
field of every 103 and 200 be exactly the origin's, and with "hpack on"
the 103 blocks must get shorter after the first (the table works for them
as for the other blocks).  "hpack off" and the patched binary without the
module must put stock's 103 blocks on the wire.
"""

import re

import h2.events
from h2.settings import SettingCodes
from hpack import Decoder

from interop.harness import Failure, H2Client, Skip, check, info, run_tool
from interop.harness.origins import (HintsOrigin, early_hints_supported,
                                     final, hints)

PORT_OFFSET = 300                   # the early hints server: h2c + 300
REQUESTS = 1000
IN_FLIGHT = 10
# SETTINGS_HEADER_TABLE_SIZE before each quarter of the requests
TABLE_SIZES = (4096, 0, 1024, 65536)


def hints_port(server):
    return server.h2c_port + PORT_OFFSET


def server_block(server):
    return "\n".join([
        "", "    # interop/cases_early_hints.py: 103 then 200 from the origin",
        "    upstream hints_origin {",
        "        server     127.0.0.1:%d;" % HintsOrigin.shared().port,
        "        keepalive  8;", "    }",
        "    server {",
        "        listen  127.0.0.1:%d;" % hints_port(server),
        "        http2   on;",
        "        server_name  hints.test;",
        "        location /eh/ {",
        "            early_hints         $http2;",
        "            proxy_pass          http://hints_origin;",
        "            proxy_http_version  1.1;",
        "            proxy_set_header    Connection \"\";",
        "        }", "    }", ""])


def configure(servers):
    """Adds the early hints server where nginx has early_hints."""
    for s in servers:
        if early_hints_supported(s.version):
            s.extra += server_block(s)


# ------------------------------------------------------------ h2's side

class HintsClient(H2Client):
    """H2Client that keeps every 103 of each stream."""

    def __init__(self, port):
        self.informational = {}
        super().__init__(port)

    def _event(self, ev):
        if isinstance(ev, h2.events.InformationalResponseReceived):
            self.informational.setdefault(ev.stream_id, []).append(
                ev.headers)
        else:
            super()._event(ev)


def request_headers(server, i):
    return [(b":method", b"GET"), (b":scheme", b"http"),
            (b":authority", b"hints.test"), (b":path", b"/eh/%d" % i)]


def expect_exact(i, early, response):
    """Failure unless stream /eh/<i> got exactly the origin's fields."""
    want = [(b":status", b"103")] + hints(i)
    check(len(early) == 1 and early[0] == want,
          "/eh/%d: 103 blocks %r, want one: %r" % (i, early, want))
    fields, body = final(i)
    got = [(n, v) for n, v in response.headers
           if n not in (b"server", b"date", b"content-length")]
    check(got == [(b":status", b"200")] + fields and response.body == body,
          "/eh/%d: 200 %r body %r, want %r %r" % (i, got, response.body,
                                                  fields, body))


def run_h2(server):
    """1,000 requests on one connection; every 103 and 200 checked; the
    raw blocks of the 103s per table size, in wire order."""
    c = HintsClient(hints_port(server))
    per_epoch = len(TABLE_SIZES)
    try:
        for epoch, size in enumerate(TABLE_SIZES):
            acks = c.settings_acks
            c.update_settings({SettingCodes.HEADER_TABLE_SIZE: size})
            c.flush()
            c.wait_settings_acks(acks + 1)
            first = epoch * REQUESTS // per_epoch
            last = (epoch + 1) * REQUESTS // per_epoch
            for start in range(first, last, IN_FLIGHT):
                sids = {c.request(request_headers(server, i)): i
                        for i in range(start, min(start + IN_FLIGHT, last))}
                for sid, r in zip(sids, c.wait(list(sids))):
                    expect_exact(sids[sid], c.informational.pop(sid, []), r)
            c.tap.events.append(("epoch", size))
    finally:
        c.close()
    check(c.terminated is None, "nginx ended the connection: %s"
          % c.terminated)
    return epochs_of_103(c.tap)


def epochs_of_103(tap):
    """[(table size, [(stream id, 103 block)])], replaying every block in
    wire order with a second decoder."""
    dec = Decoder()
    dec.max_allowed_table_size = max(TABLE_SIZES)
    out, current = [], []
    for ev in tap.events:
        if ev[0] == "epoch":
            out.append((ev[1], current))
            current = []
        elif ev[0] == "block":
            sid, block, _ = tap.blocks[ev[1]]
            if dict(dec.decode(block, raw=True)).get(b":status") == b"103":
                current.append((sid, block))
    return out


def strip_size_updates(block):
    from interop.harness import decode_int
    pos = 0
    while pos < len(block) and block[pos] & 0xe0 == 0x20:
        _, pos = decode_int(block, pos, 5)
    return block[pos:]


# ---------------------------------------------------------- nghttp's side

def run_nghttp(server):
    """250 requests per decoder table size on one nghttp connection each;
    every 103 and 200 nghttp decoded checked."""
    per = REQUESTS // len(TABLE_SIZES)
    for k, size in enumerate(TABLE_SIZES):
        first = k * per
        urls = ["http://127.0.0.1:%d/eh/%d" % (hints_port(server), i)
                for i in range(first, first + per)]
        rc, out = run_tool(["nghttp", "-nv", "-c", str(size),
                            "-H", ":authority: hints.test"] + urls)
        check(rc == 0 and "recv GOAWAY" not in out
              and "COMPRESSION_ERROR" not in out,
              "nghttp -c %d exited %d: %s" % (size, rc, out[-800:]))
        blocks = nghttp_blocks(out)
        check(len(blocks) == per, "nghttp -c %d: %d of %d responses"
              % (size, len(blocks), per))
        for i in range(first, first + per):
            got = blocks.get("/eh/%d" % i, [])
            want_early = [(":status", "103")] + [
                (a.decode(), b.decode()) for a, b in hints(i)]
            fields, _ = final(i)
            want_final = [(":status", "200")] + [
                (a.decode(), b.decode()) for a, b in fields]
            check(len(got) == 2 and got[0] == want_early
                  and [f for f in got[1] if f[0] not in
                       ("server", "date", "content-length")] == want_final,
                  "nghttp -c %d, /eh/%d: got %r, want %r then %r"
                  % (size, i, got, want_early, want_final))


def nghttp_blocks(out):
    """:path -> [[(name, value)] of each HEADERS block received on its
    stream], from nghttp -v."""
    paths, blocks, pending, sending = {}, {}, {}, None
    for line in out.splitlines():
        m = re.search(r"send HEADERS frame <.*stream_id=(\d+)>", line)
        if m:
            sending = int(m.group(1))
            continue
        m = re.match(r"\s+:path: (.*)$", line)
        if m and sending is not None:
            paths[sending] = m.group(1)
            sending = None
            continue
        m = re.search(r"recv \(stream_id=(\d+)\) (:?[^:]+): (.*)$", line)
        if m:
            pending.setdefault(int(m.group(1)), []).append(
                (m.group(2), m.group(3)))
            continue
        m = re.search(r"recv HEADERS frame <.*stream_id=(\d+)>", line)
        if m:
            sid = int(m.group(1))
            blocks.setdefault(paths.get(sid), []).append(
                pending.pop(sid, []))
    return blocks


# ----------------------------------------------------------------- cases

def early_hints(server, stock_blocks):
    epochs = run_h2(server)
    run_nghttp(server)
    sizes = [[len(b) for _, b in blocks] for _, blocks in epochs]
    info("103 blocks per SETTINGS_HEADER_TABLE_SIZE: %s" % "; ".join(
        "%d: %d blocks, first %d octets, mean %.1f" % (
            size, len(s), s[0], sum(s) / len(s))
        for (size, _), s in zip(epochs, sizes)))
    if server.kind == "stock":
        stock_blocks[server.version] = epochs
        return
    if server.hpack_on:
        # with hpack_table_size 512 the 200s' fields evict the links too:
        # shorter, not half
        first = sizes[0][0]
        bound = first / 2 if server.kind == "on" else first
        for (size, _), s in zip(epochs, sizes):
            if size:
                median = sorted(s[1:])[len(s) // 2]
                check(median < bound,
                      "SETTINGS_HEADER_TABLE_SIZE %d: the median 103 block "
                      "is %d octets, the connection's first was %d: the "
                      "103s do not use the table" % (size, median, first))
        return
    ref = stock_blocks.get(server.version)
    check(ref is not None, "no stock blocks to compare with")
    for (size, mine), (_, theirs) in zip(epochs, ref):
        a = sorted((sid, strip_size_updates(b)) for sid, b in mine)
        b = sorted((sid, strip_size_updates(b)) for sid, b in theirs)
        if a != b:
            diff = next(x for x in zip(a, b) if x[0] != x[1])
            raise Failure("SETTINGS_HEADER_TABLE_SIZE %d: 103 blocks differ "
                          "from stock's, first: stream %d %s, stock %s"
                          % (size, diff[0][0], diff[0][1].hex(),
                             diff[1][1].hex()))


def register(results, servers):
    """servers: kind -> Server, started or not; stock first."""
    stock_blocks = {}
    name = "early_hints_1000_requests_103_blocks_decode_exactly_and_use_the_table"
    for kind in ("stock", "on", "small", "off", "nomod"):
        server = servers[kind]

        def run(server=server):
            if not early_hints_supported(server.version):
                raise Skip("nginx %s has no early_hints (nginx 1.29 and "
                           "later send 103 Early Hints)" % server.version)
            if server.proc is None:
                raise Skip("%s is not running: %s" % (
                    server.label, server.missing() or "it did not start"))
            early_hints(server, stock_blocks)
        results.run(server.label, name, run)
