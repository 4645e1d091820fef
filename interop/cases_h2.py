"""Cases 2, 3 and 4 (and trailers): python3-h2 and raw-frame clients that
check, header by header, what nginx saw and what the client decoded.
"""

import email.utils
import os
import random
import string
import time

from h2.settings import SettingCodes
from hpack import Encoder, NeverIndexedHeaderTuple

from interop.harness import (Failure, H2Client, RawH2, check,
                             dynamic_references,
                             all_size_updates, info, leading_size_updates,
                             octets_but_date, request_headers)
from interop.harness.responses import REQUEST_ID, expect

SLOTS = ["x-h%02d" % i for i in range(16)]
TOKEN = string.ascii_letters + string.digits
TEXT = TOKEN + "-_.,:;=/+*()[]{}<>?!@#$%&|~ "
COOKIE_CHARS = TOKEN + "-_.!~*'()/:?@[]"


def text(rng, n):
    s = "".join(rng.choice(TEXT) for _ in range(n))
    return "v" + s.strip() + "e"            # no surrounding whitespace


def as_str(headers):
    return [(n.decode(), v.decode()) for n, v in headers]


# ------------------------------------------------------------------ case 2

def make_request(rng, i, server, pools):
    """One request of the 1000: its header list and what /echo must say."""
    junk = "".join(rng.choice(TOKEN) for _ in range(rng.randint(0, 12)))
    # one in four after an internal redirect: what the module knows of
    # the request (values sent never-indexed) must survive it
    path = "/echo%s?i=%d&r=%s" % ("-redirected" if i % 4 == 3 else "", i,
                                  junk)
    headers = request_headers(server, path)
    echo = {"x-echo-method": "GET", "x-echo-uri": path}
    never = set()

    ua = rng.choice(pools["ua"])
    headers.append(("user-agent", ua))
    echo["x-echo-ua"] = ua
    if rng.random() < 0.8:
        accept = rng.choice(pools["accept"])
        headers.append(("accept", accept))
        echo["x-echo-accept"] = accept

    # a name no request used before (never echoed, but it goes through the
    # table and shifts every index behind it)
    headers.append(("x-new-%d-%s" % (i, rng.choice(TOKEN).lower()),
                    "fresh-%d" % i))

    for name in rng.sample(SLOTS, rng.randint(0, 9)):
        kind = rng.random()
        if kind < 0.5:
            value = rng.choice(pools[name])             # repeated
        elif kind < 0.85:
            value = text(rng, rng.randint(1, 60))       # new
        else:
            value = text(rng, rng.randint(200, 1500))   # evicts
        if rng.random() < 0.2:
            headers.append(NeverIndexedHeaderTuple(name, value))
            never.add("x-echo-" + name[2:])
        else:
            headers.append((name, value))
        echo["x-echo-" + name[2:]] = value

    if i % 25 == 7:
        # an 8 KB cookie, in crumbs: nginx joins them with "; "
        crumbs = ["c%d=%s" % (k, "".join(rng.choice(COOKIE_CHARS)
                                         for _ in range(1020)))
                  for k in range(8)]
    elif rng.random() < 0.7:
        crumbs = ["sid=%s" % rng.choice(pools["sid"]), "theme=dark"]
        if rng.random() < 0.5:
            crumbs.append("n=%d" % i)
    else:
        crumbs = []
    for crumb in crumbs:
        headers.append(("cookie", crumb))
    if crumbs:
        echo["x-echo-cookie"] = "; ".join(crumbs)

    if rng.random() < 0.1:
        # python3-h2 sends authorization never-indexed by itself
        auth = "Bearer " + "".join(rng.choice(TOKEN) for _ in range(40))
        headers.append(("authorization", auth))
        echo["x-echo-auth"] = auth
        never.add("x-echo-auth")
    return headers, echo, never


def pools_for(rng):
    pools = {name: [text(rng, rng.randint(3, 40)) for _ in range(3)]
             for name in SLOTS}
    pools["ua"] = [
        "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 "
        "Firefox/121.0",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "curl/8.5.0"]
    pools["accept"] = ["*/*", "text/html,application/xhtml+xml,application/"
                       "xml;q=0.9,*/*;q=0.8", "application/json"]
    pools["sid"] = ["".join(rng.choice(TOKEN) for _ in range(24))
                    for _ in range(2)]
    return pools


def check_echo(server, i, r, echo, never, ids, t0):
    where = "request %d" % i
    check(r.reset is None, "%s: stream reset (%s)" % (where, r.reset))
    check(r.headers is not None, "%s: no response headers" % where)
    hs = as_str(r.headers)
    got = dict(hs)
    check(got.get(":status") == "200", "%s: status %s" % (where,
                                                          got.get(":status")))
    check(r.body == b"echo\n", "%s: body %r" % (where, r.body))
    echoed = {n: v for n, v in hs if n.startswith("x-echo-")}
    for name, value in echo.items():
        check(name in echoed, "%s: nginx did not see %s (sent %r)"
              % (where, name, value[:80]))
        check(echoed[name] == value, "%s: nginx saw %s = %r, sent %r"
              % (where, name, echoed[name][:200], value[:200]))
    extra = set(echoed) - set(echo)
    check(not extra, "%s: nginx saw headers that were not sent: %s"
          % (where, {n: echoed[n][:80] for n in extra}))
    rid = got.get("x-request-id", "")
    check(REQUEST_ID.match(rid), "%s: x-request-id %r" % (where, rid))
    check(rid not in ids, "%s: x-request-id %s repeats an earlier one"
          % (where, rid))
    ids.add(rid)
    msec = float(got.get("x-msec", "0"))
    check(t0 - 2 <= msec <= time.time() + 2, "%s: x-msec %r is not now"
          % (where, got.get("x-msec")))
    check(got.get("x-secret-token") == "s3cr3t-constant",
          "%s: x-secret-token %r" % (where, got.get("x-secret-token")))
    if server.hpack_on:
        kinds = {n.decode(): isinstance(h, NeverIndexedHeaderTuple)
                 for h in r.headers for n in (h[0],)}
        check(kinds.get("x-secret-token"), "%s: x-secret-token "
              "(hpack_never_index) did not arrive never-indexed" % where)
        for name in never:
            check(kinds.get(name), "%s: %s was sent never-indexed, its "
                  "echo came back indexable" % (where, name))


def thousand_requests_one_connection(server):
    """1,000 requests on one connection, 10 in flight at a time: every
    request header nginx saw is echoed back and compared with what was
    sent, and every response block is decoded by h2's own decoder."""
    rng = random.Random(20240601)
    pools = pools_for(rng)
    c = H2Client(server.h2c_port)
    ids = set()
    t0 = time.time()
    n, never_count, big = 0, 0, 0
    try:
        for batch in range(100):
            pending = {}
            for k in range(10):
                i = batch * 10 + k
                headers, echo, never = make_request(rng, i, server, pools)
                sid = c.request(headers)
                pending[sid] = (i, echo, never)
                big += "x-echo-cookie" in echo and len(echo[
                    "x-echo-cookie"]) > 8000
            c.flush()
            for r in c.wait(list(pending)):
                i, echo, _ = pending[r.sid]
                # never-indexed as it went on the wire: hpack's encoder
                # sends a NeverIndexedHeaderTuple whose name and value are
                # already in its table as an indexed field (RFC 7541 7.1.3
                # leaves that to the encoder), and nginx cannot know
                never = {"x-echo-" + ("auth" if n == b"authorization"
                                      else n.decode()[2:])
                         for h in c.sent_headers.pop(r.sid) for n in (h[0],)
                         if isinstance(h, NeverIndexedHeaderTuple)
                         and (n.startswith(b"x-h") or n == b"authorization")}
                never_count += len(never)
                check_echo(server, i, r, echo, never, ids, t0)
                n += 1
        wire = sum(len(b) for _, b, _ in c.tap.blocks)
    finally:
        c.close()
    info("%d requests, %d echoed never-indexed fields, %d 8 KB cookies; "
         "response header blocks %d bytes" % (n, never_count, big, wire))


def security_headers_intact(server):
    """The 8 security and cache headers, 200 times on one connection."""
    c = H2Client(server.h2c_port)
    ids = set()
    try:
        for batch in range(10):
            sids = [c.request(request_headers(server, "/headers"))
                    for _ in range(20)]
            c.flush()
            for r in c.wait(sids):
                check(r.body == b"headers\n", "body %r" % r.body)
                hs = as_str(r.headers)
                expect("/headers", 200, hs)
                rid = dict(hs)["x-request-id"]
                check(rid not in ids, "x-request-id %s repeats" % rid)
                ids.add(rid)
        blocks = [b for _, b, _ in c.tap.blocks]
    finally:
        c.close()
    info("200 responses, header blocks: first %d bytes, last %d bytes"
         % (len(blocks[0]), len(blocks[-1])))


def big_response_blocks(server):
    """Responses whose header block is larger than a frame (16 KiB): nginx
    sends HEADERS + CONTINUATION, h2 joins and decodes them."""
    rng = random.Random(99)
    c = H2Client(server.h2c_port)
    try:
        for n in range(3):
            crumbs = ["k%d=%s" % (k, "".join(rng.choice(COOKIE_CHARS)
                                             for _ in range(1000)))
                      for k in range(10)]
            slots = {"x-h%02d" % k: text(rng, 3000) for k in range(4)}
            headers = request_headers(server, "/echo", list(slots.items())
                                      + [("cookie", x) for x in crumbs])
            start = len(c.tap.blocks)
            r = c.get(headers)
            hs = dict(as_str(r.headers))
            check(hs.get("x-echo-cookie") == "; ".join(crumbs),
                  "request %d: the 10 KB cookie came back different" % n)
            for name, value in slots.items():
                check(hs.get("x-echo-" + name[2:]) == value,
                      "request %d: %s came back different" % (n, name))
            size = len(c.tap.blocks[start][1])
            check(size > 16384, "request %d: the response block is only %d "
                  "bytes" % (n, size))
    finally:
        c.close()
    info("response header blocks of %d bytes" % size)


def refused_streams_keep_table(server):
    """300 requests in one write: nginx accepts 256 streams from one read
    (2 x http2_max_concurrent_streams) and refuses the rest with
    RST_STREAM REFUSED_STREAM, yet must decode their header blocks, whose
    fields enter the table.  Requests that then refer to those entries must
    be seen exactly as sent."""
    c = RawH2(server.h2c_port, timeout=20)
    tag = "%x" % random.Random(5).getrandbits(32)
    try:
        sent, frames = {}, []
        for k in range(300):
            sid = c.new_stream()
            extra = [("x-h00", "r-%d-%s" % (k, tag))]
            frames += c.header_frames(sid, c.encode(request_headers(
                server, "/echo-stable", extra)))
            sent[sid] = dict(extra)
        c.send(*frames)
        refused = 0
        for r in c.wait(list(sent)):
            if r.reset is not None:
                check(r.reset == 0x7, "stream %d reset with %s" % (r.sid,
                                                                   r.reset))
                refused += 1
                continue
            hs = dict(as_str(r.headers))
            check(hs.get("x-echo-h00") == sent[r.sid]["x-h00"],
                  "stream %d: x-echo-h00 %r, sent %r" % (
                      r.sid, hs.get("x-echo-h00"), sent[r.sid]["x-h00"]))
        # indexed references to what refused and accepted blocks inserted
        for k in list(range(299, 240, -4)) + [0, 1]:
            want = "r-%d-%s" % (k, tag)
            block = c.encode(request_headers(server, "/echo-stable",
                                             [("x-h00", want)]))
            r = c.wait([c.request_block(block)])[0]
            hs = dict(as_str(r.headers))
            check(hs.get(":status") == "200" and hs.get("x-echo-h00") ==
                  want, "after %d refused streams: x-echo-h00 %r, sent %r "
                  "(block %s)" % (refused, hs.get("x-echo-h00"), want,
                                  block.hex()))
    finally:
        c.close()
    # every line that runs this has the limit (nginx 1.25.3 and later)
    check(refused > 0, "nginx refused none of the 300 streams of one "
          "write: the case did not test what it names")
    info("%d of 300 streams refused" % refused)


def odd_status_codes(server):
    """:status outside the static table and content-length of 0 and two
    digits, twice each (a new field, then one the table may hold).  The
    four-digit status of error_page's "=1234" only with hpack on: nginx's
    own filter writes "%03ui" into a literal it sized for three octets."""
    cases = [("/status-099", "099", "0"), ("/status-418", "418", "26"),
             ("/status-999", "999", "0")]
    if server.kind in ("on", "small"):
        cases.append(("/status-1234", "1234", "3"))
    c = RawH2(server.h2c_port)
    try:
        for path, status, length in cases * 2:
            r = c.get(request_headers(server, path))
            hs = dict(as_str(r.headers))
            check(hs.get(":status") == status and
                  hs.get("content-length") == length,
                  "GET %s: :status %r, content-length %r; expected %s, %s"
                  % (path, hs.get(":status"), hs.get("content-length"),
                     status, length))
    finally:
        c.close()
    info("%d responses" % (2 * len(cases)))


# Times for last_modified_of_static_files(), the first asked for first:
# the epoch (time 0, which an empty slot of the module's per-worker cache
# of Last-Modified texts also holds), three 32 s apart (ngx_uint_t t % 32:
# the epoch's slot too), one past 2038, and one a second after another.
FILE_TIMES = [0, 1700000000, 1700000032, 1700000064, 2200000000, 1700000001]


def last_modified_of_static_files(server):
    """Last-Modified of static files with the times above, on one
    connection, in three orders: each the HTTP date of its file's time,
    whichever file the response before it came from."""
    root = server.prefix / "html" / "times"
    root.mkdir(parents=True, exist_ok=True)
    want = {}
    for i, t in enumerate(FILE_TIMES):
        f = root / ("f%d" % i)
        f.write_bytes(b"%d\n" % i)
        os.utime(f, (t, t))
        t = int(f.stat().st_mtime)          # what the file system kept
        want["/times/f%d" % i] = email.utils.formatdate(t, usegmt=True)
    paths = sorted(want)
    rng = random.Random(7)
    orders = [paths, paths[::-1], rng.sample(paths * 2, 2 * len(paths))]
    c = RawH2(server.h2c_port)
    try:
        for path in (p for order in orders for p in order):
            r = c.get(request_headers(server, path))
            hs = dict(as_str(r.headers))
            check(hs.get(":status") == "200"
                  and hs.get("last-modified") == want[path],
                  "GET %s: :status %r, last-modified %r; expected 200, %r"
                  % (path, hs.get(":status"), hs.get("last-modified"),
                     want[path]))
    finally:
        c.close()
    info("%d responses, %d files" % (sum(map(len, orders)), len(paths)))


def never_indexed_echo_in_location(server):
    """A value sent never-indexed that nginx echoes in a field it makes
    itself (location, from "return 302 $http_x_h00"), directly and after
    an internal redirect, comes back never-indexed, twice (the second time
    the table would hold it, had the first inserted it)."""
    c = H2Client(server.h2c_port)
    try:
        for path in ("/echo-location", "/echo-location-redirected") * 2:
            target = "https://secret.example/%s" % path.strip("/")
            sid = c.request(request_headers(server, path) + [
                NeverIndexedHeaderTuple("x-h00", target)])
            c.flush()
            r = c.wait([sid])[0]
            got = {h[0]: h for h in r.headers}
            check(got.get(b":status", (0, b""))[1] == b"302"
                  and got.get(b"location", (0, b""))[1] == target.encode(),
                  "%s: %s" % (path, as_str(r.headers)))
            if server.hpack_on:
                check(isinstance(got[b"location"], NeverIndexedHeaderTuple),
                      "%s: location %s was sent never-indexed, it came "
                      "back indexable" % (path, target))
    finally:
        c.close()


def register_h2(results, server):
    L = server.label
    results.run(L, "h2_1000_requests_one_connection_nginx_sees_exact_"
                "headers_and_client_table_stays_in_sync",
                thousand_requests_one_connection, server)
    results.run(L, "h2_security_and_cache_headers_arrive_intact",
                security_headers_intact, server)
    results.run(L, "response_header_blocks_over_16k_arrive_intact",
                big_response_blocks, server)
    results.run(L, "status_codes_outside_the_static_table_and_content_"
                "lengths_are_written_whole", odd_status_codes, server)
    results.run(L, "last_modified_of_static_files_is_each_file_s_own_time",
                last_modified_of_static_files, server)
    results.run(L, "a_value_sent_never_indexed_comes_back_so_in_location",
                never_indexed_echo_in_location, server)
    if not server.version.startswith("1.22."):
        # nginx refuses streams beyond 2 x 128 per read since 1.25.3
        results.run(L, "refused_streams_still_feed_the_request_table",
                    refused_streams_keep_table, server)


# ------------------------------------------------------------------ case 3

def table_size_changes(server):
    """SETTINGS_HEADER_TABLE_SIZE 0, back to 4096, 1024, and 0+4096 before
    one block, then a change with 40 streams in flight: responses keep
    decoding (h2's decoder checks the updates against the setting) and the
    size update opens the next response header block."""
    c = H2Client(server.h2c_port)
    acks = [1]                                  # the initial SETTINGS
    # the encoder's own table (hpack_table_size, or the protocol's 4096):
    # a lower setting must shrink it, one at or above it need not
    own = 512 if server.kind == "small" else 4096

    def settings(*sizes):
        for size in sizes:
            c.update_settings({SettingCodes.HEADER_TABLE_SIZE: size})
            acks[0] += 1
        c.flush()

    def run(n):
        start = len(c.tap.blocks)
        for _ in range(n):
            r = c.get(request_headers(server, "/headers"))
            expect("/headers", 200, as_str(r.headers))
        c.wait_settings_acks(acks[0])
        return [b for _, b, _ in c.tap.blocks[start:]]

    def no_late_updates(blocks, what):
        for b in blocks:
            late = [s for pos, s in all_size_updates(b) if pos]
            check(not late, "%s: size update after a field in %s"
                  % (what, b.hex()))

    try:
        warm = run(5)
        settings(0)
        at0 = run(5)
        first = leading_size_updates(at0[0])
        check(first and first[0] == 0, "after SETTINGS_HEADER_TABLE_SIZE=0 "
              "the next block starts with %s, not a size update to 0: %s"
              % (first, at0[0][:8].hex()))
        for b in at0:
            check(dynamic_references(b) == 0, "table size 0, yet a block "
                  "refers to the dynamic table: %s" % b.hex())
            check(all(s == 0 for _, s in all_size_updates(b)),
                  "table size 0, yet a size update above 0: %s" % b.hex())
        no_late_updates(at0, "size 0")

        settings(4096)
        up = run(5)
        no_late_updates(up, "back to 4096")
        ups = [s for b in up for s in leading_size_updates(b)]
        check(all(s <= 4096 for s in ups), "size updates %s above 4096"
              % ups)
        if server.hpack_on:
            # compression comes back to where it was before the change
            # (dates aside: a second may begin between the two runs)
            check(octets_but_date(up[-1]) <= octets_but_date(warm[-1]) + 16,
                  "the table is not used again after SETTINGS_HEADER_TABLE_"
                  "SIZE went back to 4096: blocks of %d bytes, %d before the "
                  "change (%d and %d with a literal date as one octet)"
                  % (len(up[-1]), len(warm[-1]), octets_but_date(up[-1]),
                     octets_but_date(warm[-1])))

        settings(1024)
        k = run(5)
        first = leading_size_updates(k[0])
        check((first or own <= 1024) and all(x <= 1024 for x in first),
              "after SETTINGS_HEADER_TABLE_SIZE=1024 the next block starts "
              "with size updates %s: %s" % (first, k[0][:8].hex()))
        no_late_updates(k, "1024")

        settings(0, 4096)
        both = run(3)
        first = leading_size_updates(both[0])
        check(first and first[0] == 0, "SETTINGS 0 then 4096 before one "
              "block: it starts with size updates %s, the smallest (0) "
              "must come first (RFC 7541 4.2)" % first)
        no_late_updates(both, "0 then 4096")

        # a change while 40 streams are in flight
        sids = [c.request(request_headers(server, "/headers"))
                for _ in range(20)]
        settings(512)
        sids += [c.request(request_headers(server, "/headers"))
                 for _ in range(20)]
        c.flush()
        for r in c.wait(sids):
            expect("/headers", 200, as_str(r.headers))
        c.wait_settings_acks(acks[0])
        ack_at = max(i for i, e in enumerate(c.tap.events)
                     if e[0] == "settings-ack")
        after = [c.tap.blocks[e[1]][1] for e in c.tap.events[ack_at:]
                 if e[0] == "block"]
        check(after, "no response block after the SETTINGS ACK")
        first = leading_size_updates(after[0])
        check((first or own <= 512) and all(x <= 512 for x in first),
              "SETTINGS_HEADER_TABLE_SIZE=512 with streams in flight: the "
              "first block after the ACK starts with size updates %s"
              % first)
        sizes = [len(b) for b in (warm[-1], at0[-1], up[-1], k[-1])]
        info("block bytes: warm %d, size 0 %d, back to 4096 %d, 1024 %d"
             % tuple(sizes))
        info("size updates opening the next block: after 0 %s, 4096 %s, "
             "1024 %s, 0+4096 %s, 512 in flight %s" % tuple(
                 leading_size_updates(b[0]) for b in (at0, up, k, both,
                                                      after)))
    finally:
        c.close()


def register_settings(results, server):
    results.run(server.label, "client_table_size_changes_0_4096_1024_keep_"
                "responses_decoding_with_size_update_first",
                table_size_changes, server)


# ------------------------------------------------------------------ case 4

def sample_headers(server, path):
    return request_headers(server, path, [
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 "
                       "(KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"),
        ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9"),
        ("x-h00", "long-" + "0123456789abcdef" * 12),  # length over 127
        NeverIndexedHeaderTuple("x-h01", "never-indexed-secret"),
        ("cookie", "sid=0123456789abcdef0123456789"),
        ("cookie", "theme=dark"),
        ("x-h02", "~|^`{}\\-rare-symbols-with-long-huffman-codes"),
    ])


def sample_echo(headers):
    echo = {"x-echo-ua": None, "x-echo-accept": None, "x-echo-h00": None,
            "x-echo-h01": None, "x-echo-h02": None}
    cookies = []
    for n, v in headers:
        if n == "user-agent":
            echo["x-echo-ua"] = v
        elif n == "accept":
            echo["x-echo-accept"] = v
        elif n.startswith("x-h"):
            echo["x-echo-" + n[2:]] = v
        elif n == "cookie":
            cookies.append(v)
    echo["x-echo-cookie"] = "; ".join(cookies)
    return echo


def check_split_response(r, echo, what):
    hs = dict(as_str(r.headers))
    check(hs.get(":status") == "200", "%s: status %s" % (what,
                                                         hs.get(":status")))
    for name, value in echo.items():
        check(hs.get(name) == value, "%s: nginx saw %s = %r, sent %r"
              % (what, name, hs.get(name), value))


def continuation_splits(server):
    """The sample block cut at every offset (HEADERS + CONTINUATION), each
    on a new connection; then a second request on that connection that
    refers to the entries the split block inserted."""
    headers = sample_headers(server, "/echo")
    echo = sample_echo(headers)
    block = Encoder().encode(headers)
    bad = []
    # from 1: an empty HEADERS frame is refused (FRAME_SIZE_ERROR) by every
    # build, stock included, before any header decoding runs; to len - 1:
    # an empty final CONTINUATION is a case of its own (cases_malformed)
    for cut in range(1, len(block)):
        c = RawH2(server.h2c_port)
        try:
            assert c.encode(headers) == block
            sid = c.request_block(block, cuts=[cut])
            try:
                r = c.wait([sid])[0]
                check_split_response(r, echo, "cut at %d" % cut)
                # fully indexed now: the table must match the encoder's
                second = c.encode(headers)
                r = c.wait([c.request_block(second)])[0]
                check_split_response(r, echo, "after cut at %d" % cut)
            except Failure as e:
                bad.append(str(e))
        finally:
            c.close()
    check(not bad, "%d of %d cuts fail; first: %s"
          % (len(bad), len(block) - 1, bad[:3]))
    info("a %d-byte block, cut at each of offsets 1..%d"
         % (len(block), len(block) - 1))


def continuation_one_byte_frames(server):
    headers = sample_headers(server, "/echo")
    echo = sample_echo(headers)
    c = RawH2(server.h2c_port)
    try:
        for n in range(3):
            block = c.encode(headers)
            sid = c.request_block(block, cuts=range(1, len(block)))
            check_split_response(c.wait([sid])[0], echo,
                                 "%d one-byte frames (request %d)"
                                 % (len(block), n))
    finally:
        c.close()


def continuation_padded_priority(server):
    """HEADERS with padding and a priority, its block split in three."""
    headers = sample_headers(server, "/echo")
    echo = sample_echo(headers)
    c = RawH2(server.h2c_port)
    try:
        for n, at in enumerate(([0.1], [0.01, 0.5], [0.3, 0.31, 0.9])):
            sid = c.new_stream()
            block = c.encode(headers)
            cuts = [max(1, int(x * len(block))) for x in at]
            frames = c.header_frames(sid, block, cuts)
            first = frames[0]
            first.flags.add("PADDED")
            first.flags.add("PRIORITY")
            first.pad_length = 17 + n
            first.depends_on = 0
            first.stream_weight = 200
            c.send(*frames)
            check_split_response(c.wait([sid])[0], echo,
                                 "padded HEADERS with priority, cut at %s"
                                 % cuts)
    finally:
        c.close()


def register_continuation(results, server):
    L = server.label
    results.run(L, "padded_prioritised_headers_with_continuation_are_"
                "decoded", continuation_padded_priority, server)
    results.run(L, "request_header_block_split_across_continuation_at_"
                "every_byte_is_decoded", continuation_splits, server)
    results.run(L, "request_header_block_in_one_byte_continuation_frames_"
                "is_decoded", continuation_one_byte_frames, server)


# ------------------------------------------------------------ trailers

def trailers_interleaved(server):
    """Trailers (a second producer of header blocks) and HEADERS of many
    streams at once while the client changes SETTINGS_HEADER_TABLE_SIZE:
    the client's table must stay in step with nginx's encoder, whatever
    order the blocks reach the wire in."""
    c = H2Client(server.h2c_port)
    acks = 1
    try:
        for rnd, size in enumerate([4096, 256, 4096, 0, 4096, 1024, 4096,
                                    None, None, None]):
            sids = []
            for k in range(30):
                path = "/trailers" if k % 3 else "/headers"
                sids.append((c.request(request_headers(server, path)), path))
                if k == 14 and size is not None:
                    c.update_settings({SettingCodes.HEADER_TABLE_SIZE: size})
                    acks += 1
            c.flush()
            got = c.wait([s for s, _ in sids])
            for r, (_, path) in zip(got, sids):
                hs = dict(as_str(r.headers))
                check(hs.get(":status") == "200", "round %d %s: status %s"
                      % (rnd, path, hs.get(":status")))
                if path == "/trailers":
                    check(r.trailers, "round %d: no trailers" % rnd)
                    t = dict(as_str(r.trailers))
                    check(t.get("x-checksum") == "0123456789abcdef"
                          and t.get("x-trailer-id") == hs.get("x-request-id"),
                          "round %d: trailers %r do not match the response "
                          "(x-request-id %s)" % (rnd, t,
                                                 hs.get("x-request-id")))
                else:
                    expect("/headers", 200, as_str(r.headers))
            c.wait_settings_acks(acks)
    finally:
        c.close()


def trailers_behind_full_socket(server):
    """40 streams at once, half of them 256 KiB bodies with trailers that
    carry a value from their request, the other half small responses that
    echo a new value, and a SETTINGS_HEADER_TABLE_SIZE change in the
    middle; the client does not read for half a second, so nginx's output
    queue fills and its frames of many streams wait together.  Every value
    must come back exactly (a block sent in another order than it was
    encoded shifts the client's table: wrong values or a decoding error)."""
    rng = random.Random(7)
    tag = "".join(rng.choice(TOKEN) for _ in range(6))
    c = RawH2(server.h2c_port, rcvbuf=32768, timeout=20)
    try:
        for rnd in range(3):
            sent = {}
            frames = []
            for k in range(40):
                big = k % 2 == 0
                h00 = "%s-%d-%d-%s" % ("b" if big else "e", rnd, k, tag)
                extra = [("x-h00", h00)]
                if big:
                    extra.append(("x-t", "t-%d-%d-%s" % (rnd, k, tag)))
                sid = c.new_stream()
                frames += c.header_frames(sid, c.encode(request_headers(
                    server, "/big" if big else "/echo", extra)))
                sent[sid] = dict(extra)
                if k == 20:
                    frames.append(c.settings(header_table_size=[1024, 4096,
                                                                 512][rnd]))
            c.send(*frames)
            time.sleep(0.5)
            for r in c.wait(list(sent), timeout=20):
                want = sent[r.sid]
                hs = dict(as_str(r.headers))
                where = "round %d stream %d" % (rnd, r.sid)
                check(hs.get(":status") == "200", "%s: status %s"
                      % (where, hs.get(":status")))
                check(hs.get("x-echo-h00") == want["x-h00"], "%s: x-echo-h00 "
                      "%r, sent %r" % (where, hs.get("x-echo-h00"),
                                       want["x-h00"]))
                if "x-t" in want:
                    check(len(r.body) == 256 * 1024, "%s: body %d bytes"
                          % (where, len(r.body)))
                    t = dict(as_str(r.trailers or []))
                    check(t.get("x-trailer-echo") == want["x-t"]
                          and t.get("x-checksum") == "0123456789abcdef",
                          "%s: trailers %r, sent x-t %r"
                          % (where, t, want["x-t"]))
            c.wait_acks()
    finally:
        c.close()


def register_trailers(results, server):
    results.run(server.label, "trailers_queued_behind_a_slow_reader_with_"
                "table_size_change_keep_client_table_in_sync",
                trailers_behind_full_socket, server)
    results.run(server.label, "trailers_and_headers_of_many_streams_with_"
                "table_size_changes_keep_client_table_in_sync",
                trailers_interleaved, server)
