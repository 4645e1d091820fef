"""The reverse-proxy cases: nginx (conf/proxy.conf) in front of the origin
(interop/upstream.py), clients on HTTP/2 over TLS.

Every response of the origin is a pure function of its path, so each test
knows the header list an HTTP/2 client must decode (harness.proxy.
expected_headers: the origin's lines, names lowercased, order and
duplicates kept, minus what nginx drops or replaces).  Thousands of
responses go over one connection, so the encoder's table fills, evicts and
resizes many times while the client checks every field.
"""

import random
import re
import time

import h2.settings
from hpack import Decoder
from hpack.struct import NeverIndexedHeaderTuple

from interop import harness, upstream
from interop.harness import Failure, check, info, run_tool
from interop.harness import proxy as pc
from interop.harness import stories as hs
from interop.harness.tools import h2load, parse_nghttp

REQUESTS = 3000            # responses per connection
IN_FLIGHT = 20             # streams open at once (python3-h2)
SEEDS = 1000               # distinct origin responses (each ~3 times)


def plan(n=REQUESTS, seed=1):
    """The request paths: seeds repeat (cached pages, API polling), the
    n= parameter makes every x-request-id new."""
    rng = random.Random(seed)
    return ["/r/%d?n=%d" % (rng.randrange(SEEDS), k) for k in range(n)]


def request_headers(server, path):
    return [(":method", "GET"), (":scheme", "https"),
            (":authority", server.authority), (":path", path)] \
        + pc.BROWSER_HEADERS


def server_value(server):
    """nginx's own server header (server_tokens on, the default)."""
    return "nginx/" + server.version


def error_lines(server, since):
    text = server.error_log_text(since)
    return [line for line in text.splitlines()
            if re.search(r"\[(alert|crit|emerg|error)\]|exited on signal",
                         line)]


def with_log(server, since, message):
    lines = error_lines(server, since)
    if lines:
        message += "\n  error log: " + "\n  error log: ".join(lines[:5])
    return message


class Run:
    """One connection's worth of responses: per request, the path, the
    decoded headers (h2's own decoder), the body, and the raw block."""

    def __init__(self):
        self.paths = []
        self.headers = []
        self.bodies = []
        self.blocks = []          # the HEADERS(+CONTINUATION) payload
        self.wire = []            # (stream id, block) in wire order


RUNS = {}                         # server kind -> Run of the h2 test


def h2_run(server, paths, table_size=None):
    since = server.error_log_size()
    client = harness.H2Client(server.tls_port, tls=True, timeout=30)
    run = Run()
    try:
        if table_size:
            # a browser's table (Chrome announces 65536)
            client.update_settings(
                {h2.settings.SettingCodes.HEADER_TABLE_SIZE: table_size})
        for i in range(0, len(paths), IN_FLIGHT):
            batch = paths[i:i + IN_FLIGHT]
            sids = [client.request(request_headers(server, p))
                    for p in batch]
            try:
                resps = client.wait(sids)
            except Failure as e:
                raise Failure(with_log(server, since, "after %d responses on "
                                       "one connection: %s" % (i, e)))
            for p, r in zip(batch, resps):
                if r.reset is not None:
                    raise Failure(with_log(
                        server, since, "%s: RST_STREAM %s"
                        % (p, harness.h2_error_name(r.reset))))
                run.paths.append(p)
                run.headers.append(r.headers)
                run.bodies.append(r.body)
        blocks = {}
        for sid, block, _ in client.tap.blocks:
            check(sid not in blocks, "stream %d: two header blocks" % sid)
            blocks[sid] = block
        sids = sorted(blocks)
        check(len(sids) == len(paths), "%d header blocks for %d requests"
              % (len(sids), len(paths)))
        run.blocks = [blocks[s] for s in sids]
        # the blocks in wire order, for an independent decoder
        run.wire = [(sid, block) for sid, block, _ in client.tap.blocks]
    finally:
        client.close()
    return run


def check_run(server, run):
    """Every response equals what the origin sent, as nginx passes it."""
    for i, (path, headers, body) in enumerate(zip(run.paths, run.headers,
                                                  run.bodies)):
        origin = upstream.response_for(path)
        want = pc.expected_headers(origin, server_value(server))
        pc.compare_headers(headers, want, "response %d (%s)" % (i, path))
        check(body == origin.body, "response %d (%s): body of %d bytes, "
              "expected %d" % (i, path, len(body), len(origin.body)))


def h2_many_responses(server, table_size=None):
    paths = plan()
    start = time.monotonic()
    run = h2_run(server, paths, table_size)
    elapsed = time.monotonic() - start
    check_run(server, run)
    RUNS[server.kind] = run
    fields = sum(len(h) for h in run.headers)
    wire = sum(len(b) for b in run.blocks)
    plain = sum(len(n) + len(v) for h in run.headers for n, v in h)
    big = sum(len(b) > 16384 for b in run.blocks)
    updates = sorted({size for _, b in run.wire
                      for size in harness.leading_size_updates(b)})
    statuses = sorted({int(dict(h)[b":status"]) for h in run.headers})
    info("%d responses (status %s), %d fields, one connection, %.1fs; "
         "header blocks %d bytes for %d plain (%.0f per response, %.1f%% of "
         "plain); %d blocks over 16 KiB (CONTINUATION); table size "
         "updates: %s" % (len(paths), ", ".join(map(str, statuses)), fields,
                          elapsed, wire, plain, wire / len(paths),
                          100.0 * wire / plain, big, updates or "none"))


def hexcut(block, n=1500):
    h = block.hex()
    return h if len(h) <= n else "%s...(%d bytes)" % (h[:n], len(block))


def secrets_never_indexed(server):
    """The raw representation of every field: secrets go out as literal
    never indexed (0001xxxx), never inserted (01xxxxxx) nor referenced."""
    run = RUNS.get(server.kind)
    if run is None:
        raise harness.Skip("the h2 run of this server did not complete")
    dec = Decoder()
    dec.max_header_list_size = 1 << 20
    dec.max_allowed_table_size = 65536
    kinds_seen = {"dynamic": 0, "indexed": 0, "incremental": 0,
                  "without": 0, "never": 0}
    secrets = 0
    never_flag = 0
    index = {sid: i for i, sid in enumerate(sorted(s for s, _ in run.wire))}
    for sid, block in run.wire:
        kinds = pc.representations(block)
        fields = dec.decode(block, raw=True)
        check(len(kinds) == len(fields), "stream %d: %d representations, "
              "%d decoded fields; block %s" % (sid, len(kinds), len(fields),
                                               hexcut(block)))
        check([tuple(f) for f in fields] == list(run.headers[index[sid]]),
              "stream %d: a second decoder (hpack, wire order) disagrees "
              "with h2's connection" % sid)
        for kind, field in zip(kinds, fields):
            kinds_seen[kind] += 1
            name = field[0].decode("latin-1")
            value = field[1].decode("latin-1")
            never_flag += isinstance(field, NeverIndexedHeaderTuple)
            if pc.must_never_index(name, value):
                secrets += 1
                check(kind == "never",
                      "stream %d: %s: %r (%d bytes) sent as %s, not "
                      "never-indexed; block %s"
                      % (sid, name, value, len(value), kind, hexcut(block)))
    check(secrets > 200, "only %d secret fields in the run: the test does "
          "not test much" % secrets)
    check(kinds_seen["dynamic"] > 0 and kinds_seen["incremental"] > 0,
          "no reference to the dynamic table: it is not being used (%s)"
          % kinds_seen)
    info("%d secret fields, all never-indexed; representations: %s "
         "(dynamic: references to the dynamic table, indexed: static); "
         "never-indexed flag on %d fields (h2's raw decoder)"
         % (secrets, ", ".join("%s %d" % kv for kv in kinds_seen.items()),
            never_flag))


def same_as_stock(server):
    run, stock = RUNS.get(server.kind), RUNS.get("stock")
    if run is None or stock is None:
        raise harness.Skip("the h2 run of this server or of stock did not "
                           "complete")
    check(run.paths == stock.paths, "different request sequences")
    for i, (a, b) in enumerate(zip(run.headers, stock.headers)):
        a, b = pc.without_date(a), pc.without_date(b)
        check(a == b, "response %d (%s): hpack %r\n  stock %r"
              % (i, run.paths[i], a, b))
    ours = sum(len(b) for b in run.blocks)
    theirs = sum(len(b) for b in stock.blocks)
    info("the same %d header lists (date aside); header blocks %d bytes, "
         "stock %d (%.1f%%)" % (len(run.paths), ours, theirs,
                                100.0 * ours / theirs))


def access_log_matches_wire(server):
    """$hpack_out_wire of each request equals its block on the wire, and
    all 3,000 came on one $connection."""
    run = RUNS.get(server.kind)
    if run is None:
        raise harness.Skip("the h2 run of this server did not complete")
    records = [r for r in server.access_records()
               if r["request"].startswith("GET /r/")]
    by_path = {}
    for r in records:
        by_path[r["request"].split(" ")[1]] = r
    conns = set()
    for path, block in zip(run.paths, run.blocks):
        r = by_path.get(path)
        check(r is not None, "no access log line for %s" % path)
        conns.add(r["connection"])
        check(r["out_wire"] == len(block), "%s: $hpack_out_wire %s, block "
              "on the wire %d bytes" % (path, r["out_wire"], len(block)))
    check(len(conns) == 1, "the h2 run's requests were logged on %d "
          "connections: %s" % (len(conns), sorted(conns)[:5]))


def nghttp_many_responses(server, table_size=None):
    paths = plan(seed=2)
    urls = [server.url(p) for p in paths]
    args = ["nghttp", "-nv"]
    if table_size:
        args += ["-c", str(table_size)]
    for name, value in pc.BROWSER_HEADERS:
        args += ["-H", "%s: %s" % (name, value)]
    since = server.error_log_size()
    rc, out = run_tool(args + urls, timeout=300)
    streams = parse_nghttp(out)
    got = {s["path"]: s for s in streams.values() if s["path"]}
    check(rc == 0, with_log(server, since, "nghttp exited %d: %s"
                            % (rc, out[-1500:])))
    # nghttp's own GOAWAY(NO_ERROR) at the end is not an error
    errors = [line for line in out.splitlines()
              if re.search(r"recv (GOAWAY|RST_STREAM)|error_code=(?!NO_ERROR)"
                           r"|COMPRESSION|\[ERROR\]", line)]
    check(not errors, "nghttp saw: %s" % errors[:5])
    secrets = 0
    for i, path in enumerate(paths):
        s = got.get(path)
        check(s is not None, "no response for %s in nghttp's output" % path)
        origin = upstream.response_for(path)
        want = pc.expected_headers(origin, server_value(server))
        pc.compare_headers(s["headers"], want, "nghttp response %d (%s)"
                           % (i, path))
        if server.hpack_on:
            for name, value in s["headers"]:
                if pc.must_never_index(name, value):
                    secrets += 1
                    check(name in s["sensitive"],
                          "nghttp response %d (%s): %s: %r not marked "
                          "sensitive (never indexed) by libnghttp2"
                          % (i, path, name, value))
    info("%d responses on one connection (nghttp%s)%s"
         % (len(paths), " -c %d" % table_size if table_size else "",
            "; %d secret fields arrived never-indexed (nghttp: sensitive)"
            % secrets if server.hpack_on else ""))
    check(out.count("Connected") == 1, "nghttp connected %d times"
          % out.count("Connected"))


def h2load_through_proxy(server, table_size=None):
    """Many streams of four connections interleaved: no stream may fail
    (h2load decodes with libnghttp2: a drifting table fails streams)."""
    # h2load counts 4xx and 5xx as failed: only the origin's 2xx here
    paths = [p for p in plan(6000, seed=3)
             if upstream.response_for(p).status < 400][:4000]
    urifile = server.prefix / "h2load-uris.txt"
    urifile.write_text("".join(server.url(p) + "\n" for p in paths))
    n = 20000
    args = ["-n", str(n), "-c", "4", "-m", "16", "-i", str(urifile)]
    if table_size:
        args += ["--header-table-size", str(table_size)]
    for name, value in pc.BROWSER_HEADERS:
        args += ["-H", "%s: %s" % (name, value)]
    since = server.error_log_size()
    rc, out, (total, started, done, ok, failed, errored, timeout) = h2load(
        args)
    check(rc == 0 and done == n and failed == 0 and errored == 0
          and timeout == 0,
          with_log(server, since, "h2load: %d done, %d failed, %d errored, "
                   "%d timeout (exit %d)\n%s" % (done, failed, errored,
                                                 timeout, rc, out[-800:])))
    m = re.search(r"\((\d+)\) headers \(space savings ([-\d.]+)%\)", out)
    if m:
        # (no req/s here: the first server to run also fills the origin's
        # response cache; make bench-proxy measures speed)
        info("%d requests, 4 connections x 16 streams%s: %.0f header bytes "
             "per response, space savings %s%%"
             % (n, ", --header-table-size %d" % table_size if table_size
                else "", int(m.group(1)) / n, m.group(2)))


def connection_specific_lines_as_stock(server, stock):
    """What nginx makes of an origin's upgrade, proxy-connection, te,
    trailer and Connection-listed lines: the module must send exactly what
    stock sends (a raw client: h2 and libnghttp2 refuse some of these)."""
    got = {}
    for s in (server, stock):
        client = harness.RawH2(s.tls_port, tls=True)
        try:
            r = client.get(request_headers(s, "/hop"))
        finally:
            client.close()
        got[s.kind] = pc.without_date(r.headers)
    check(got[server.kind] == got[stock.kind], "module %r\n  stock %r"
          % (got[server.kind], got[stock.kind]))
    passed = [n for n, _ in got[stock.kind]
              if n in ("upgrade", "proxy-connection", "te", "trailer",
                       "x-hop")]
    info("as stock: dropped connection, keep-alive; passed on %s"
         % ", ".join(passed))


def stories_as_stock(server, stock):
    """The hpack-test-case response stories (3,035 responses of real
    sites), each on one connection, one stream at a time: every response
    whole, every list the same as stock's (make bench-proxy-stories does
    it at three table sizes and reports the octets per story)."""
    stories = upstream.response_stories()
    if not stories:
        raise harness.Skip("%s not found (hpack-test-case's raw-data, from "
                           "../shared)" % upstream.STORIES)
    theirs = hs.replay_all(stock, 4096, stories)
    ours = hs.replay_all(server, server.table_size, stories)
    n, _ = hs.same_lists(ours, theirs)
    octets_stock, octets, bound = hs.totals(ours, theirs)
    info("the same %d lists as stock (date aside); header blocks %d octets, "
         "stock %d (module/stock %.3f), the bound of stock's lists %d "
         "(module/bound %.3f)" % (n, octets, octets_stock,
                                  octets / octets_stock, bound,
                                  octets / bound))


def register(results, servers):
    """servers: kind -> ProxyServer, the ones that started."""
    order = [servers[k] for k in ("on", "small", "big", "stock")
             if k in servers]
    for s in order:
        results.run(s.label, "h2_3000_responses_on_one_connection_carry_"
                    "exactly_the_origin_headers", h2_many_responses, s,
                    65536 if s.kind == "big" else None)
    for s in order:
        if s.hpack_on:
            results.run(s.label, "secrets_and_short_cookies_are_never_"
                        "indexed_on_the_wire", secrets_never_indexed, s)
            results.run(s.label, "decoded_headers_same_as_stock_proxy",
                        same_as_stock, s)
    if "on" in servers and "stock" in servers:
        results.run(servers["on"].label, "connection_specific_origin_lines_"
                    "reach_clients_as_with_stock",
                    connection_specific_lines_as_stock, servers["on"],
                    servers["stock"])
    if "on" in servers and "stock" in servers:
        results.run(servers["on"].label, "response_stories_one_connection_"
                    "each_decode_to_the_same_lists_as_stock",
                    stories_as_stock, servers["on"], servers["stock"])
    if "on" in servers:
        results.run(servers["on"].label, "access_log_out_wire_equals_"
                    "each_block_on_the_wire", access_log_matches_wire,
                    servers["on"])
    for s in order:
        results.run(s.label, "nghttp_3000_responses_on_one_connection_"
                    "carry_exactly_the_origin_headers", nghttp_many_responses,
                    s, 65536 if s.kind == "big" else None)
    for s in order:
        results.run(s.label, "h2load_20000_requests_4_connections_"
                    "no_failed_stream", h2load_through_proxy, s,
                    65536 if s.kind == "big" else None)
