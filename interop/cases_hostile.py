"""Hostile peers (issue 5): HPACK bombs at scale, floods of size updates
and CONTINUATION frames, header blocks that never end, 10,000 unique
response fields through the encoder, and never-indexed fields in both
directions.

Each case runs against "hpack on" and, where a comparison means something,
against stock nginx (and "hpack off"): the module must give stock's answer
(the HTTP/2 error code, the status, the timeout), keep the worker's memory
flat, and keep serving on a new connection from the same worker.

The cases that wait for timeouts, and the ones that need many locations,
talk to a second server block of every nginx under test (server_block()
below, added to the configuration before nginx starts): its own port
(h2c + 100), client_header_timeout 2s and keepalive_timeout 3s, and 64
locations with header names no other location uses.
"""

import random
import re
import threading
import time

from hpack import Decoder
from hyperframe.frame import ContinuationFrame, HeadersFrame
from h2.settings import SettingCodes

from interop import harness
from interop.harness import (Failure, H2Client, RawH2, all_size_updates,
                             check, encode_int, h2_error_name, info,
                             leading_size_updates, representations,
                             request_headers, rss_kib)
from interop.harness.blocks import echo_base, idx, inc, lit
from interop.harness.sequences import answer, run_sequence, still_serves
from interop.harness.tools import h2load

HOSTILE_PORT_OFFSET = 100
HEADER_TIMEOUT = 2              # client_header_timeout of the hostile server
KEEPALIVE_TIMEOUT = 3           # keepalive_timeout of the hostile server
NAME_LOCATIONS = 64             # /names/<i>: 4 names of their own each

# /unique: 8 response fields whose values change on every request
UNIQUE = [
    ("x-u-id", "$request_id"),
    ("x-u-msec", "$msec-$connection_requests"),
    ("x-u-n", "$connection_requests"),
    ("x-u-a", "a-$request_id"),
    ("x-u-b", "$connection-$connection_requests"),
    ("x-u-c", "$msec/$request_id"),
    ("x-u-d", "d$connection_requests$request_id"),
    ("x-u-e", "$request_id$msec"),
]

# /secrets: response fields RFC 7541 7.1.3 says must not be indexed
SECRETS = [
    ("authorization", "Bearer hostile-0123456789abcdef0123456789"),
    ("set-cookie", "sid=a1b2c3"),
    ("set-cookie", "t=0"),
    ("x-secret-token", "s3cr3t-constant"),
]


def hostile_port(server):
    return server.h2c_port + HOSTILE_PORT_OFFSET


def server_block(server):
    """The hostile server block for server (text for its http{} block)."""
    old_syntax = server.version.startswith("1.22.")
    out = ["",
           "    # interop/cases_hostile.py: short timeouts (header blocks "
           "that never",
           "    # end), unique header names and values, secrets",
           "    server {",
           "        listen  127.0.0.1:%d%s;" % (hostile_port(server),
                                               " http2" if old_syntax
                                               else ""),
           "" if old_syntax else "        http2   on;",
           "        server_name  hostile.test;",
           "        client_header_timeout  %ds;" % HEADER_TIMEOUT,
           "        keepalive_timeout      %ds;" % KEEPALIVE_TIMEOUT,
           "        location = /tiny { return 200 \"ok\\n\"; }",
           "        location = /echo {",
           "            add_header  x-echo-h00  $http_x_h00 always;",
           "            return  200 \"echo\\n\";", "        }",
           "        location = /unique {"]
    out += ["            add_header  %s  \"%s\" always;" % nv
            for nv in UNIQUE]
    out += ["            return  200 \"unique\\n\";", "        }",
            "        location = /secrets {"]
    out += ["            add_header  %s  \"%s\" always;" % nv
            for nv in SECRETS]
    out += ["            add_header  x-echo-auth  $http_authorization "
            "always;",
            "            return  200 \"secrets\\n\";", "        }"]
    for i in range(NAME_LOCATIONS):
        out.append("        location = /names/%d {" % i)
        for k in range(4):
            out.append("            add_header  x-n%d-%d  \"%s\" always;"
                       % (i, k, UNIQUE[k][1]))
        out += ["            add_header  %s  \"%s\" always;" % nv
                for nv in UNIQUE[4:]]
        out += ["            return  200 \"names\\n\";", "        }"]
    out.append("    }")
    return "\n".join(out) + "\n"


# large_client_header_buffers 8 16k (interop.conf): the decoded size of one
# header block (name + value of every field) stock nginx accepts
HEADER_LIMIT = 8 * 16384
# the 4 KB entry of the bombs
BOMB_NAME, BOMB_VALUE = b"x-h00", b"A" * 4000
RSS_TOLERANCE = 512                     # KiB


def pseudo(server, path=b"/tiny", port=None):
    """:method GET, :scheme http, :path, :authority, and their decoded size
    (name + value, as nginx counts it)."""
    auth = ("127.0.0.1:%d" % (port or server.h2c_port)).encode()
    block = b"\x82\x86\x04" + lit(path) + b"\x01" + lit(auth)
    size = (7 + 3) + (7 + 4) + (5 + len(path)) + (10 + len(auth))
    return block, size


def echo(*fields):
    """A block builder: GET /echo, then fields (encoded)."""
    tail = b"".join(fields)
    return lambda s: echo_base(s) + tail


def compare(server, name, got, answers, what):
    """got must be stock's answer (recorded first, stock runs first)."""
    if server.kind == "stock":
        answers[name] = got
        info("stock: %s" % got)
        return
    ref = answers.get(name)
    check(ref is not None, "no stock answer to compare with")
    check(got == ref, "%s:\n  got   %s\n  stock %s" % (what, got, ref))


def grows(worker, before, what):
    after = rss_kib(worker)
    if harness.SANITIZED:
        # ASan's quarantine of freed blocks grows by design; the sanitizer
        # judges memory there (leaks, use after free), not the RSS
        info("RSS %d -> %d KiB over %s: not judged under ASan"
             % (before, after, what))
        return after
    check(after - before <= RSS_TOLERANCE, "the worker grew %d KiB (%d -> "
          "%d) over %s (tolerance %d)" % (after - before, before, after,
                                           what, RSS_TOLERANCE))
    return after


# ------------------------------------------------------------ 1: bombs

def bomb_boundary(server, answers):
    """A 4000-byte entry, then blocks referring to it 32 times plus a
    literal that brings the decoded size to exactly the limit (accepted)
    or one byte over (refused); then 50,000 references in one block
    (HEADERS + 3 CONTINUATION frames)."""
    worker = server.worker_pid()
    head, head_size = pseudo(server)
    field = len(BOMB_NAME) + len(BOMB_VALUE)
    refs = (HEADER_LIMIT - head_size) // field
    got = []
    for extra in (0, 1):
        # x-f: f...f brings the block to HEADER_LIMIT + extra octets
        filler = HEADER_LIMIT + extra - head_size - refs * field - 3
        c = RawH2(server.h2c_port)
        try:
            sid = c.request_block(head + inc(BOMB_NAME, BOMB_VALUE))
            first = c.outcome(sid)
            check(first == "response 200", "inserting the entry: %s" % first)
            block = (head + idx(62) * refs + b"\x00" + lit(b"x-f")
                     + lit(b"f" * filler))
            got.append(c.outcome(c.request_block(block)))
        finally:
            c.close()
    c = RawH2(server.h2c_port, timeout=10)
    try:
        c.outcome(c.request_block(head + inc(BOMB_NAME, BOMB_VALUE)))
        block = head + idx(62) * 50000
        start = time.monotonic()
        sid = c.request_block(block, range(16384, len(block), 16384))
        got.append(c.outcome(sid, timeout=10))
        took = time.monotonic() - start
    finally:
        c.close()
    still_serves(server, worker)
    check(took < 5, "50,000 references took %.1fs to answer" % took)
    compare(server, "bomb_boundary", "; ".join(got), answers,
            "%d references to a %d-octet field plus a literal to exactly "
            "%d decoded octets, the same plus one, then 50,000 references"
            % (refs, field, HEADER_LIMIT))
    check(got[0] == "response 200" and got[1] == got[2]
          == "GOAWAY ENHANCE_YOUR_CALM", "answers %s" % got)


NAME = b"x-" + b"n" * 3998             # a 4000-octet name


def by_name(n):
    """n literals without indexing whose name is entry 62, empty values."""
    return (encode_int(62, 4) + lit(b"")) * n


def crumbs(extra):
    """A block builder: GET /echo and as many references to the entry
    cookie: a=1 (9 octets each) as fit in the limit, plus extra; nginx
    joins the crumbs into one cookie header.  In 16 KB frames."""
    def build(s):
        n = (HEADER_LIMIT - pseudo(s, b"/echo")[1]) // 9 + extra
        block = echo_base(s) + idx(62) * n
        return block, range(16384, len(block), 16384)
    return build


# bombs of name references (each literal refers to a 4000-octet name) and
# of cookie crumbs
BOMB_SEQUENCES = {
    "hpack_bomb_of_32_name_references_under_the_limit": (
        "a 4000-octet name entered, then 32 literals with that name",
        [echo(inc(NAME, b"")), echo(by_name(32))]),
    "hpack_bomb_of_33_name_references_over_the_limit": (
        "a 4000-octet name entered, then 33 literals with that name",
        [echo(inc(NAME, b"")), echo(by_name(33))]),
    "hpack_bomb_of_cookie_crumbs_up_to_the_limit": (
        "cookie: a=1 entered, then as many references to it as the limit "
        "allows (14,557), then one more",
        [echo(inc(b"cookie", b"a=1")), crumbs(0), crumbs(1)]),
}


def bomb_many_blocks(server, answers):
    """1,000 blocks of 32 references each (128 KB decoded, under the limit)
    on one connection, 10 at a time; then 200 connections that each send
    a 10,000-reference bomb.  The worker's RSS after the first 100 blocks
    and after the rest must be the same (within the tolerance)."""
    worker = server.worker_pid()
    head, _ = pseudo(server)
    c = RawH2(server.h2c_port)
    try:
        c.outcome(c.request_block(head + inc(BOMB_NAME, BOMB_VALUE)))
        block = head + idx(62) * 32
        start = time.monotonic()
        for batch in range(100):
            sids = [c.request_block(block) for _ in range(10)]
            for r in c.wait(sids):
                check(r.status == 200, "block %d: status %s"
                      % (batch * 10, r.status))
            if batch == 9:
                warm = rss_kib(worker)
        took = time.monotonic() - start
        after = grows(worker, warm, "900 blocks of 128 KB decoded each")
    finally:
        c.close()
    outcomes = set()
    bomb = head + idx(62) * 10000
    start2 = time.monotonic()
    for i in range(200):
        c = RawH2(server.h2c_port)
        try:
            c.outcome(c.request_block(head + inc(BOMB_NAME, BOMB_VALUE)))
            outcomes.add(c.outcome(c.request_block(bomb)))
        finally:
            c.close()
        if i == 19:
            warm2 = rss_kib(worker)
    took2 = time.monotonic() - start2
    after2 = grows(worker, warm2, "180 connections with a bomb each")
    still_serves(server, worker)
    info("1,000 blocks x 32 references: %.2fs, RSS %d -> %d KiB; 200 "
         "bombs of 10,000 references: %.2fs, RSS %d -> %d KiB"
         % (took, warm, after, took2, warm2, after2))
    compare(server, "bomb_many_blocks", " ".join(sorted(outcomes)), answers,
            "200 connections with a 10,000-reference bomb each")


# ------------------------------------------------------- 2: size updates

def updates(n, last):
    """n dynamic table size updates, alternating 4096 and 0, the last one
    to last (RFC 7541 6.3: each one <= SETTINGS_HEADER_TABLE_SIZE is
    legal; 4.2 asks encoders for at most two, decoders are not told to
    refuse more)."""
    sizes = [4096 if (n - 1 - i) % 2 else 0 for i in range(n)]
    sizes[-1] = last
    return b"".join(encode_int(s, 5, 0x20) for s in sizes)


N_UPDATES = 5000


def updated(last, value, n=N_UPDATES, cut=False):
    """A block builder: n size updates ending at last, GET /echo, and
    x-h00: value with incremental indexing; cut: each octet of the
    updates in its own frame."""
    head = updates(n, last)
    tail = inc(b"x-h00", value)
    if cut:
        return lambda s: (head + echo_base(s) + tail,
                          range(1, len(head) + 1))
    return lambda s: head + echo_base(s) + tail


# name: (what, [block builders, one request each, on one connection])
UPDATE_SEQUENCES = {
    "size_updates_5000_on_a_warm_table_last_4096": (
        "an entry, then a block opening with 5,000 size updates (4096/0, "
        "the last 4096) and a new entry, then both entries referenced",
        [echo(inc(b"x-h00", b"a")), updated(4096, b"b"), echo(idx(62)),
         echo(idx(63))]),
    "size_updates_5000_on_a_warm_table_last_0": (
        "an entry, then 5,000 size updates ending at 0 and a literal with "
        "incremental indexing (not entered: the table holds 0 octets)",
        [echo(inc(b"x-h00", b"a")), updated(0, b"c"), echo(idx(62))]),
    "size_updates_500_split_into_1_byte_continuations": (
        "500 size updates in 1-octet CONTINUATION frames, an entry, then "
        "a reference to it",
        [updated(4096, b"e", 500, cut=True), echo(idx(62))]),
}

# stock nginx ignores a size update that comes before its table exists
# (the first insertion allocates the table at 4096 octets); RFC 7541 6.3
# makes the update bind the entry that follows: the module must refuse the
# reference to an entry that could not be entered
UPDATE_COLD = (
    "size_updates_5000_on_a_cold_table_last_0",
    "5,000 size updates ending at 0 before any entry, a literal with "
    "incremental indexing, then a reference to it",
    [updated(0, b"d"), echo(idx(62))],
    ["response 200 [method=GET uri=/echo h00=d]",
     "GOAWAY COMPRESSION_ERROR"])


def judged_sequence(server, name, what, builders, answers, module=None):
    worker = server.worker_pid()
    got = "; ".join(run_sequence(server, builders))
    still_serves(server, worker)
    if module and server.hpack_on:
        want = "; ".join(module)
        info("stock: %s" % answers.get(name))
        check(got == want, "%s:\n  got   %s\n  want  %s" % (what, got, want))
        return
    compare(server, name, got, answers, what)


def update_flood(server, answers):
    """1,000,000 size updates (1 MB, in 16 KB CONTINUATION frames) before
    one request, twice, then 100 blocks of 10,000 updates each, on one
    connection: every request answered in bounded time; RSS taken after
    the first megabyte (nginx's read buffer is then in use) and at the
    end."""
    worker = server.worker_pid()
    head, _ = pseudo(server)
    big = updates(1000000, 4096) + head
    c = RawH2(server.h2c_port, timeout=20)
    try:
        first = c.outcome(c.request_block(big, range(16384, len(big),
                                                     16384)), timeout=20)
        warm = rss_kib(worker)
        start = time.monotonic()
        again = c.outcome(c.request_block(big, range(16384, len(big),
                                                     16384)), timeout=20)
        took = time.monotonic() - start
        block = updates(10000, 4096) + head
        start = time.monotonic()
        for batch in range(10):
            for r in c.wait([c.request_block(block) for _ in range(10)]):
                check(r.status == 200, "status %s" % r.status)
        took2 = time.monotonic() - start
        after = grows(worker, warm, "2,000,000 size updates")
    finally:
        c.close()
    still_serves(server, worker)
    info("1,000,000 updates in one block: %s, then %s in %.2fs; 100 blocks "
         "of 10,000: %.2fs; RSS %d -> %d KiB" % (first, again, took, took2,
                                                 warm, after))
    check(took < 5 and took2 < 5, "size updates took %.1fs and %.1fs"
          % (took, took2))
    compare(server, "update_flood", "%s; %s" % (first, again), answers,
            "1,000,000 size updates before one request, twice")


def settings_flood(server, answers):
    """10,000 SETTINGS frames, each changing SETTINGS_HEADER_TABLE_SIZE
    (0, 1, 100, 512, 1024, 4096, 65536 or 2^32-1), 50 before each of 200
    requests to /headers: every response decodes under the sizes the
    client acknowledged, and every block opens with at most two size
    updates (RFC 7541 4.2) and has none after a field.  RSS is taken
    after the first 100 requests and at the end."""
    rng = random.Random(7541)
    sizes = (0, 1, 100, 512, 1024, 4096, 65536, 2 ** 32 - 1)
    worker = server.worker_pid()
    c = RawH2(server.h2c_port, timeout=20)
    try:
        for burst in range(20):
            sids = []
            for i in range(10):
                c.send(*[c.settings(header_table_size=rng.choice(sizes))
                         for _ in range(50)])
                sids.append(c.request(request_headers(server, "/headers")))
            for r in c.wait(sids):
                check(r.status == 200, "status %s" % r.status)
            if burst == 9:
                warm = rss_kib(worker)
        c.wait_acks()
        blocks = [b for _, b, _ in c.tap.blocks]
        after = grows(worker, warm, "5,000 SETTINGS frames")
    finally:
        c.close()
    leading = [leading_size_updates(b) for b in blocks]
    for b, first in zip(blocks, leading):
        check(len(first) <= 2, "a block opens with %d size updates: %s"
              % (len(first), first))
        late = [size for pos, size in all_size_updates(b) if pos]
        check(not late, "size updates %s after a field" % late)
    still_serves(server, worker)
    info("200 responses; size updates opening the last blocks: %s; RSS %d "
         "-> %d KiB" % (" ".join(map(str, leading[-3:])), warm, after))
    compare(server, "settings_flood", "200 x response 200", answers,
            "10,000 SETTINGS_HEADER_TABLE_SIZE changes")


# --------------------------------------------------- 3: CONTINUATION

def continuation_frames(sid, pieces, last=False):
    """The serialized CONTINUATION frames carrying pieces; END_HEADERS on
    the last one when last is set."""
    out = []
    for i, piece in enumerate(pieces):
        flags = ["END_HEADERS"] if last and i == len(pieces) - 1 else []
        out.append(ContinuationFrame(sid, data=piece,
                                     flags=flags).serialize())
    return b"".join(out)


def tiny_continuations(server, answers):
    """A valid 2,400-octet block: 1 octet in HEADERS, then 2,399
    CONTINUATION frames of 1 octet, each after an empty one (4,798
    CONTINUATION frames)."""
    worker = server.worker_pid()
    head, _ = pseudo(server, b"/echo")
    block = head + b"\x00" + lit(b"x-h00") + lit(b"t" * 2300)
    block += b"\x00" + lit(b"x-h01") + lit(b"u" * (2400 - len(block) - 8))
    c = RawH2(server.h2c_port)
    try:
        sid = c.new_stream()
        # (not ending in an empty frame: stock would not answer that,
        # see request_header_empty_final_continuation_*)
        pieces = []
        for i in range(1, len(block)):
            pieces += [b"", block[i:i + 1]]
        c.send(HeadersFrame(sid, data=block[:1], flags=["END_STREAM"])
               .serialize() + continuation_frames(sid, pieces, last=True))
        got = c.outcome(sid, timeout=10)
        r = c.responses[sid]
        echoed = dict(r.headers or [])
    finally:
        c.close()
    still_serves(server, worker)
    check(got == "response 200" and echoed.get(b"x-echo-h00") == b"t" * 2300,
          "a %d-octet block in %d frames: %s, x-echo-h00 %r" % (
              len(block), len(pieces) + 1, got,
              echoed.get(b"x-echo-h00", b"")[:20]))
    compare(server, "tiny_continuations", got, answers,
            "a %d-octet block in %d frames" % (len(block), len(pieces) + 1))


def trickled_literal(server, answers):
    """A 16,384-octet value (the largest large_client_header_buffers
    allows) and a 16,385-octet one, one octet per CONTINUATION frame (the
    second one's first 2,000 octets only: it is refused at its length):
    the decoder keeps one partial string at a time, bounded by the limit.
    Twice: RSS is taken around the second round."""
    worker = server.worker_pid()
    head, _ = pseudo(server)
    for measured in (False, True):
        before = rss_kib(worker)
        got = []
        for n, trickled in ((16384, 16384), (16385, 2000)):
            block = head + b"\x00" + lit(b"x-h00") + lit(b"q" * n)
            start = len(block) - n
            c = RawH2(server.h2c_port, timeout=20)
            try:
                got.append(c.outcome(c.request_block(
                    block, range(start, start + trickled)), timeout=20))
            finally:
                c.close()
    after = grows(worker, before, "two 16 KB literals trickled")
    still_serves(server, worker)
    info("RSS %d -> %d KiB" % (before, after))
    compare(server, "trickled_literal", "; ".join(got), answers,
            "16,384 and 16,385-octet values one octet per CONTINUATION")


def ending(c):
    """How a RawH2 connection ended: "GOAWAY <error>", "closed" or
    "open"."""
    if c.goaway:
        return "GOAWAY %s" % h2_error_name(c.goaway[0])
    return "closed" if c.eof else "open"


def flood_until_closed(c, chunk, seconds):
    """Sends chunk (CONTINUATION frames) again and again until nginx
    answers with GOAWAY or closes, or seconds pass (nginx reads and drops
    what comes after its GOAWAY for a while: the sender must look);
    returns (chunks sent, elapsed seconds)."""
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < seconds and not (c.goaway or c.eof):
        try:
            c.send(chunk)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            break                   # closed, or no longer reading
        sent += 1
        try:
            c.pump(time.monotonic() + 0.001)
        except TimeoutError:
            pass
    deadline = time.monotonic() + (30 if harness.SANITIZED else 3)
    while not (c.goaway or c.eof) and time.monotonic() < deadline:
        try:
            c.pump(deadline)
        except TimeoutError:
            break
    return sent, time.monotonic() - start


def continuation_floods(server, answers):
    """HEADERS without END_HEADERS, then CONTINUATION frames that never
    end the block: 1-octet frames, each a reference to an entry of the
    block (the decoded size grows: refused at large_client_header_buffers),
    and empty frames as fast as the socket takes them (nginx's flood
    detector).  Twice: RSS is taken around the second round."""
    worker = server.worker_pid()
    head, _ = pseudo(server)
    floods = [("1-octet references", idx(62), 1000),
              ("empty frames", b"", 20000)]
    for measured in (False, True):
        before = rss_kib(worker)
        got = []
        for what, payload, batch in floods:
            c = RawH2(server.h2c_port)
            try:
                sid = c.new_stream()
                c.send(HeadersFrame(sid, data=head + inc(b"x-h00", b"v"),
                                    flags=["END_STREAM"]))
                chunk = continuation_frames(sid, [payload] * batch)
                chunks, took = flood_until_closed(c, chunk, 20)
                got.append(ending(c))
            finally:
                c.close()
            if measured:
                info("%s: %s after %d frames (%.1f MB) in %.2fs" % (
                    what, got[-1], chunks * batch,
                    chunks * len(chunk) / 1e6, took))
    after = grows(worker, before, "the CONTINUATION floods")
    still_serves(server, worker)
    info("RSS %d -> %d KiB" % (before, after))
    compare(server, "continuation_floods", "; ".join(got), answers,
            "1-octet references, then empty frames, in CONTINUATION frames "
            "that never end the block")


def opening(server, sid, extra=b""):
    """HEADERS without END_HEADERS to the hostile server: a complete GET
    /tiny so far, then extra."""
    block = pseudo(server, port=hostile_port(server))[0] + extra
    return HeadersFrame(sid, data=block, flags=["END_STREAM"])


GAP = "empty_continuation_in_the_same_write_then_silence"

# name: (what, the first write, then empty CONTINUATION frames every 20 ms,
# the GOAWAY codes allowed keepalive_timeout after the reset).  nginx
# answers PROTOCOL_ERROR when a read left it inside a frame, NO_ERROR when
# the connection was idle between frames.  GAP is stock's: client_header_
# timeout is armed only when a read ends inside the block, so a block whose
# first read ends with a whole CONTINUATION frame gets no timer at all;
# the module's block state arms it.
OPEN_BLOCKS = {
    "silence": (
        "HEADERS without END_HEADERS, then silence",
        lambda s, sid: [opening(s, sid)], False,
        ("GOAWAY PROTOCOL_ERROR",)),
    "partial_literal_then_silence": (
        "HEADERS ending 100 octets into a 10,000-octet literal, then "
        "silence",
        lambda s, sid: [opening(s, sid, b"\x00" + lit(b"x-h00")
                                + encode_int(10000, 7) + b"p" * 100)],
        False, ("GOAWAY PROTOCOL_ERROR",)),
    "empty_continuations_every_20ms": (
        "HEADERS without END_HEADERS, 0.3 s, then 100 empty CONTINUATION "
        "frames every 20 ms",
        lambda s, sid: [opening(s, sid)], True,
        ("GOAWAY PROTOCOL_ERROR", "GOAWAY NO_ERROR")),
    GAP: (
        "HEADERS without END_HEADERS and an empty CONTINUATION in one "
        "write, then silence",
        lambda s, sid: [opening(s, sid), ContinuationFrame(sid, data=b"")],
        False, None),
}
SILENT = HEADER_TIMEOUT + KEEPALIVE_TIMEOUT + 1.5


def open_block_timeline(server, name, out):
    """Runs one OPEN_BLOCKS scenario on a new connection to the hostile
    server for SILENT seconds: out[(server.kind, name)] gets the stream
    reset, the GOAWAY and the close, as [(seconds, event)] in order."""
    what, first, paced, _ = OPEN_BLOCKS[name]
    events = []
    try:
        c = RawH2(hostile_port(server))
        try:
            sid = c.new_stream()
            r = c.responses[sid]
            start = time.monotonic()
            c.send(*first(server, sid))
            if paced:
                time.sleep(0.3)         # HEADERS read alone: timer armed
                chunk = continuation_frames(sid, [b""] * 100)
            while not c.eof and time.monotonic() - start < SILENT:
                if paced:
                    try:
                        c.send(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                try:
                    c.pump(time.monotonic() + (0.02 if paced else 0.2))
                except TimeoutError:
                    pass
                now = round(time.monotonic() - start, 1)
                for ev in (r.reset is not None and "RST_STREAM %s"
                           % h2_error_name(r.reset),
                           c.goaway and "GOAWAY %s"
                           % h2_error_name(c.goaway[0]),
                           c.eof and "closed"):
                    if ev and ev not in [e for _, e in events]:
                        events.append((now, ev))
        finally:
            c.close()
    except Exception as e:                  # reported by the test
        events.append((None, "%s: %s" % (type(e).__name__, e)))
    out[(server.kind, name)] = events


def describe(events):
    return ", ".join("%s at %.1fs" % (ev, t) if t is not None else ev
                     for t, ev in events) or "nothing"


def reset_then_closed(events, goaways):
    """RST_STREAM PROTOCOL_ERROR at client_header_timeout, then one of the
    goaways and the close keepalive_timeout later (2 s of slack for a
    busy machine)."""
    kinds = [ev for _, ev in events]
    times = [t for t, _ in events]
    return (len(events) == 3 and kinds[0] == "RST_STREAM PROTOCOL_ERROR"
            and kinds[1] in goaways and kinds[2] == "closed"
            and HEADER_TIMEOUT - 0.3 <= times[0] <= HEADER_TIMEOUT + 2
            and HEADER_TIMEOUT + KEEPALIVE_TIMEOUT - 0.3 <= times[1]
            <= HEADER_TIMEOUT + KEEPALIVE_TIMEOUT + 2)


def all_at_once(servers, jobs, what):
    """Runs the jobs (callables) in threads at once; then every server must
    serve from the same worker, its RSS flat.  Returns the problems."""
    workers = {k: s.worker_pid() for k, s in servers.items()}
    before = {k: rss_kib(w) for k, w in workers.items()}
    threads = [threading.Thread(target=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    problems = []
    for kind, s in servers.items():
        try:
            still_serves(s, workers[kind])
            grows(workers[kind], before[kind], what)
        except Failure as e:
            problems.append("%s: %s" % (s.label, e))
    return problems


def open_blocks_all_servers(servers):
    """Every OPEN_BLOCKS scenario against every server at once (each waits
    for timeouts; together they take one wait).  Stock is judged too: the
    expectations must be what nginx does.  In the GAP scenario, where stock
    arms no timer, hpack on must reset the stream at client_header_timeout
    (its block state arms the timer) and the other builds must answer as
    stock does."""
    out = {}
    problems = all_at_once(servers, [
        lambda s=s, name=name: open_block_timeline(s, name, out)
        for s in servers.values() for name in OPEN_BLOCKS],
        "the open header blocks")
    for name, (what, _, _, goaways) in OPEN_BLOCKS.items():
        info("%s (%s):" % (name, what))
        stock = out.get(("stock", name), [])
        for kind, s in servers.items():
            events = out[(kind, name)]
            info("  %-26s %s" % (s.name, describe(events)))
            if goaways:
                ok = reset_then_closed(events, goaways)
            elif s.hpack_on:
                # the hook patch arms the timer here (stock does not)
                ok = reset_then_closed(events, ("GOAWAY PROTOCOL_ERROR",
                                                "GOAWAY NO_ERROR"))
            elif kind == "stock":
                # no timer: neither reset nor GOAWAY nor close in SILENT
                ok = not events
            else:
                ok = [e for _, e in events] == [e for _, e in stock]
            if not ok:
                problems.append("%s, %s: got %s; stock %s" % (
                    s.label, name, describe(events), describe(stock)))
    check(not problems, "expected RST_STREAM PROTOCOL_ERROR at %ds "
          "(client_header_timeout), GOAWAY and close at %ds (+ keepalive_"
          "timeout):\n  %s" % (HEADER_TIMEOUT, HEADER_TIMEOUT
                                + KEEPALIVE_TIMEOUT, "\n  ".join(problems)))


def late_block(server, out):
    """HEADERS without END_HEADERS to /echo, client_header_timeout passes
    (the stream is reset), then the block is finished with an entry, and
    a new request refers to it: out[server.kind] gets the answers."""
    got = []
    try:
        c = RawH2(hostile_port(server))
        try:
            sid = c.new_stream()
            head = pseudo(server, b"/echo", hostile_port(server))[0]
            c.send(HeadersFrame(sid, data=head, flags=["END_STREAM"]))
            got.append(c.outcome(sid, timeout=HEADER_TIMEOUT + 2))
            c.send(ContinuationFrame(sid, data=inc(b"x-h00", b"late"),
                                     flags=["END_HEADERS"]))
            got.append(answer(c, c.request_block(head + idx(62))))
        finally:
            c.close()
    except Exception as e:                  # reported by the test
        got.append("%s: %s" % (type(e).__name__, e))
    out[server.kind] = "; ".join(got)


def late_blocks_all_servers(servers):
    """late_block() against every server at once: the block whose stream
    timed out is still decoded, and its entry is in the table for the next
    request, as in stock nginx."""
    out = {}
    problems = all_at_once(servers, [lambda s=s: late_block(s, out)
                                     for s in servers.values()],
                           "the late blocks")
    want = "RST_STREAM PROTOCOL_ERROR; response 200 [h00=late]"
    for kind, s in servers.items():
        info("%-26s %s" % (s.name, out[kind]))
        if out[kind] != want:
            problems.append("%s: %s" % (s.label, out[kind]))
    check(not problems, "expected %s:\n  %s" % (want, "\n  ".join(problems)))


# ------------------------------------------ 4: 10,000 unique fields out

VARIABLES = {"request_id": "[0-9a-f]{32}", "msec": r"\d+\.\d{3}",
             "connection_requests": r"\d+", "connection": r"\d+"}


def template_regex(template):
    """A regex for what nginx makes of an add_header value with
    variables: one named group per variable occurrence."""
    parts = re.split(r"\$(\w+)", template)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append("(?P<%s_%d>%s)" % (part, i, VARIABLES[part]))
        else:
            out.append(re.escape(part))
    return re.compile("".join(out) + r"\Z")


def expected_fields(path):
    if path == "/unique":
        return UNIQUE
    i = int(path.rsplit("/", 1)[1])
    return ([("x-n%d-%d" % (i, k), UNIQUE[k][1]) for k in range(4)]
            + UNIQUE[4:])


def check_unique_response(path, headers, seen):
    """The fields of one response against their templates: every variable
    has one value within the response, request ids and request numbers
    never repeat on the connection, $connection never changes."""
    got = {n.decode(): v.decode() for n, v in headers
           if n.startswith((b"x-u-", b"x-n"))}
    want = expected_fields(path)
    check(sorted(got) == sorted(n for n, _ in want), "GET %s: fields %s, "
          "expected %s" % (path, sorted(got), sorted(n for n, _ in want)))
    values = {}
    for name, template in want:
        m = template_regex(template).match(got[name])
        check(m, "GET %s: %s is %r, not %s" % (path, name, got[name],
                                               template))
        for key, value in m.groupdict().items():
            var = key.rsplit("_", 1)[0]
            check(values.setdefault(var, value) == value,
                  "GET %s: $%s is %s in one field and %s in another (a "
                  "stale table entry?): %s" % (path, var, values[var],
                                               value, got))
    for var in ("request_id", "connection_requests"):
        check(values[var] not in seen[var], "GET %s: $%s %s repeats"
              % (path, var, values[var]))
        seen[var].add(values[var])
    check(seen.setdefault("connection", values["connection"])
          == values["connection"], "$connection changed")
    return set(got.items())


REQUESTS = 1250


def unique_fields_one_connection(server, client_table):
    """1,250 requests on one python3-h2 connection to /unique and
    /names/<i> (8 fields each, every value new: 10,000 unique fields, 256
    names no other location uses), 10 in flight.  h2 decodes every block;
    a second decoder replays them in wire order and the dynamic table
    must never hold more than the smaller of hpack_table_size and the
    client's SETTINGS_HEADER_TABLE_SIZE."""
    own = 512 if server.kind == "small" else 4096
    cap = min(own, client_table or 4096)
    worker = server.worker_pid()
    c = H2Client(hostile_port(server))
    try:
        if client_table is not None:
            c.update_settings({SettingCodes.HEADER_TABLE_SIZE: client_table})
            c.flush()
            c.wait_settings_acks(1)
        seen = {"request_id": set(), "connection_requests": set()}
        fields = set()
        start = time.monotonic()
        for batch in range(REQUESTS // 10):
            paths = {}
            for k in range(10):
                i = batch * 10 + k
                path = ("/unique" if i % 2 == 0
                        else "/names/%d" % (i // 2 % NAME_LOCATIONS))
                headers = [(":method", "GET"), (":scheme", "http"),
                           (":authority", "127.0.0.1:%d"
                            % hostile_port(server)), (":path", path)]
                paths[c.request(headers)] = path
            c.flush()
            for r in c.wait(list(paths)):
                check(r.headers and dict(r.headers)[b":status"] == b"200",
                      "GET %s: %s" % (paths[r.sid], r.headers))
                fields |= check_unique_response(paths[r.sid], r.headers,
                                                seen)
        took = time.monotonic() - start
        blocks = [b for _, b, _ in c.tap.blocks]
    finally:
        c.close()
    still_serves(server, worker)
    replay = Decoder()
    replay.max_header_list_size = 1 << 20
    largest, refs = 0, 0
    for n, block in enumerate(blocks):
        replay.decode(block, raw=True)
        size = replay.header_table._current_size
        largest = max(largest, size)
        check(size <= cap, "block %d: the client's dynamic table holds %d "
              "octets, above %d (hpack_table_size %d, the client's "
              "SETTINGS_HEADER_TABLE_SIZE %s)" % (n, size, cap, own,
                                                  client_table))
        refs += sum(1 for kind, index in representations(block)
                    if kind == "indexed" and index > 61)
    check(len(fields) >= 10000, "only %d unique fields" % len(fields))
    check(largest > cap // 2, "the encoder hardly used its table: at most "
          "%d octets" % largest)
    info("cap %d (hpack_table_size %d, client %s): %d requests in %.1fs, "
         "%d unique fields, table at most %d octets, %d dynamic references"
         % (cap, own, client_table, REQUESTS, took, len(fields), largest,
            refs))


RATE = re.compile(r"finished in [\d.]+m?s, ([\d.]+) req/s")


def h2load_rate(url, n):
    rc, out, counts = h2load(["-n", str(n), "-c", "1", "-m", "10", url])
    check(counts[3] == n, "h2load %s: %d of %d succeeded" % (url, counts[3],
                                                             n))
    m = RATE.search(out)
    check(m, "no req/s in the h2load output: %s" % out[-300:])
    return float(m.group(1))


def unique_vs_stable_rate(servers, n=20000):
    """h2load -n 20000 -c 1 -m 10 on /unique (8 new fields per response,
    all through one connection's encoder) and on /security (8 stable
    fields), alternately, best of two each: /unique must keep at least
    half the rate with hpack on (an encoder whose lookups grow with the
    fields it has seen falls far behind).  Stock is shown for reference.
    One retry: the machine is shared."""
    workers = {k: s.worker_pid() for k, s in servers.items()}
    rows = {}
    for attempt in range(2):
        for kind in ("on", "stock"):
            s = servers.get(kind)
            if s is None:
                continue
            stable, unique = [], []
            for _ in range(2):
                stable.append(h2load_rate(s.url("/security"), n))
                unique.append(h2load_rate("http://127.0.0.1:%d/unique"
                                          % hostile_port(s), n))
            rows[kind] = (max(stable), max(unique))
        on = rows.get("on")
        if on is None or on[0] <= 2 * on[1]:
            break
        info("attempt 1: /security %.0f req/s, /unique %.0f: retrying"
             % on)
    info("h2load -n %d -c 1 -m 10, best of 2 (req/s):" % n)
    info("  %-22s %12s %12s %8s" % ("server", "/security", "/unique",
                                     "ratio"))
    for kind, (stable, unique) in rows.items():
        info("  %-22s %12.0f %12.0f %8.2f" % (servers[kind].label, stable,
                                              unique, stable / unique))
    for kind in rows:
        still_serves(servers[kind], workers[kind])
    if "on" in rows:
        stable, unique = rows["on"]
        check(stable <= 2 * unique, "hpack on: /unique %.0f req/s, under "
              "half of /security's %.0f" % (unique, stable))


# --------------------------------------------- 5: never-indexed fields

def never(name, value, name_index=0):
    """A literal never indexed (RFC 7541 6.2.3)."""
    if name_index:
        return encode_int(name_index, 4, 0x10) + lit(value)
    return b"\x10" + lit(name) + lit(value)


NEVER_SEQUENCES = {
    "never_indexed_field_with_a_new_name_is_not_entered": (
        "an entry, a never-indexed x-h01, then index 62 (must still be the "
        "entry) and 63 (must not exist)",
        [echo(inc(b"x-h00", b"kept")), echo(never(b"x-h01", b"secret-1")),
         echo(idx(62)), echo(idx(63))]),
    "never_indexed_field_with_an_indexed_name_is_not_entered": (
        "an entry, a never-indexed value under the entry's name (name "
        "index 62), then index 62 and 63",
        [echo(inc(b"x-h00", b"kept")), echo(never(b"", b"secret-2", 62)),
         echo(idx(62)), echo(idx(63))]),
    "never_indexed_4000_octets_evict_nothing": (
        "an entry, a never-indexed 4000-octet x-h01 (entered, it would "
        "evict the entry), then index 62",
        [echo(inc(b"x-h00", b"kept")), echo(never(b"x-h01", b"s" * 4000)),
         echo(idx(62))]),
}

SECRET_NAMES = ("authorization", "set-cookie", "x-secret-token",
                "x-echo-auth")


def secrets_never_indexed(server):
    """/secrets three times on one connection, the request's authorization
    sent never-indexed: with hpack on, the response's authorization, both
    short set-cookie values, x-secret-token (hpack_never_index) and the
    echoed authorization must be never-indexed literals (0x10) every
    time, not an incremental literal (0x40) nor a reference.  Every build:
    never entered in the table."""
    worker = server.worker_pid()
    head, _ = pseudo(server, b"/secrets", hostile_port(server))
    c = RawH2(hostile_port(server))
    kinds = {}
    try:
        for i in range(3):
            auth = b"Bearer client-secret-%d" % (i % 2)
            start = len(c.tap.blocks)
            r = c.wait([c.request_block(head + never(b"", auth, 23))])[0]
            check(r.status == 200, "GET /secrets: %s" % r.status)
            block = c.tap.blocks[start][1]
            reps = representations(block)
            check(len(reps) == len(r.headers), "%d representations, %d "
                  "fields decoded" % (len(reps), len(r.headers)))
            for (kind, index), (n, v) in zip(reps, r.headers):
                name = n.decode()
                if name not in SECRET_NAMES:
                    continue
                kinds.setdefault(name, set()).add(kind)
                check(kind not in ("incremental", "indexed"),
                      "response %d: %s: %s sent as %s (index %d): a secret "
                      "in the table" % (i + 1, name, v.decode(), kind, index))
                if server.hpack_on:
                    check(kind == "never-indexed", "response %d: %s: %s "
                          "sent as %s, not never-indexed" % (
                              i + 1, name, v.decode(), kind))
            got = {}
            for n, v in r.headers:
                got.setdefault(n.decode(), []).append(v.decode())
            check(got.get("x-echo-auth") == [auth.decode()],
                  "x-echo-auth %s, sent %s" % (got.get("x-echo-auth"), auth))
            check(got.get("set-cookie") == [v for n, v in SECRETS
                                            if n == "set-cookie"],
                  "set-cookie %s" % got.get("set-cookie"))
    finally:
        c.close()
    still_serves(server, worker)
    info(", ".join("%s %s" % (n, "/".join(sorted(k)))
                   for n, k in sorted(kinds.items())))


# ------------------------------------------------------------ register

def configure(servers):
    """Adds the hostile server block to every server (before start)."""
    for s in servers:
        s.extra += server_block(s)


def register(results, running):
    """running: kind -> started Server.  Stock runs first: the others are
    compared with its answers."""
    order = sorted(running.values(), key=lambda s: s.kind != "stock")
    everyone = order[0].version + " all"
    answers = {}

    def each(title, fn, *args, kinds=None):
        """title: a name, or a function of the server that returns one."""
        for s in order:
            if not kinds or s.kind in kinds:
                results.run(s.label, "hostile_" + (title(s) if callable(title)
                                                   else title),
                            fn, s, *args)

    def vs_stock(name, hpack_on="same_answer_as_stock"):
        return lambda s: "%s_%s" % (name, "stock_answer_recorded"
                                    if s.kind == "stock" else hpack_on
                                    if s.hpack_on else
                                    "same_answer_as_stock")

    def sequences(table):
        for name, (what, builders) in table.items():
            each(vs_stock(name), judged_sequence, name, what, builders,
                 answers)

    each(vs_stock("hpack_bomb_of_4k_entry_refused_at_large_client_"
                  "header_buffers"), bomb_boundary, answers)
    sequences(BOMB_SEQUENCES)
    each(vs_stock("hpack_bomb_1000_blocks_and_200_connections_rss_flat"),
         bomb_many_blocks, answers)
    sequences(UPDATE_SEQUENCES)
    name, what, builders, module = UPDATE_COLD
    each(vs_stock(name, "binds_the_next_entry"), judged_sequence, name,
         what, builders, answers, module)
    each(vs_stock("size_updates_1000000_in_one_block_bounded_rss_flat"),
         update_flood, answers)
    each(vs_stock("settings_header_table_size_10000_changes_responses_"
                  "decode"), settings_flood, answers)
    each(vs_stock("continuation_4798_tiny_frames_one_block"),
         tiny_continuations, answers)
    each(vs_stock("continuation_16384_octet_value_one_octet_per_frame"),
         trickled_literal, answers)
    each(vs_stock("continuation_flood_never_ending_block_closed_rss_flat"),
         continuation_floods, answers)
    if "stock" in running:
        results.run(everyone, "hostile_header_block_that_never_ends_reset_"
                    "at_client_header_timeout_like_stock",
                    open_blocks_all_servers, running)
    if "stock" in running:
        results.run(everyone, "hostile_block_finished_after_its_stream_"
                    "timed_out_still_feeds_the_table_like_stock",
                    late_blocks_all_servers, running)
    sequences(NEVER_SEQUENCES)
    each("response_secrets_never_indexed_authorization_set_cookie",
         secrets_never_indexed)
    for kind, table in (("on", None), ("on", 1024), ("small", None)):
        each("encoder_10000_unique_fields_table_within_%d_octets"
             % min(512 if kind == "small" else 4096, table or 4096),
             unique_fields_one_connection, table, kinds=(kind,))
    if "on" in running:
        results.run(everyone, "hostile_h2load_unique_fields_at_least_half_"
                    "the_rate_of_stable_ones", unique_vs_stable_rate,
                    running)
