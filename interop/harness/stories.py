"""The hpack-test-case response stories through a reverse proxy: each
story's cases fetched in order on one connection, one stream at a time, so
that the wire order is the story's; each response's decoded header list
and the octets of its header block on the wire; and the bound those lists
allow (bench/codec_bench_octets.cc's).

The origin (interop/upstream.py) serves case i of a story at
/story/<story>/<i>; upstream.response_stories() names the stories.
"""

import collections
import time

import h2.settings
from hpack.huffman_constants import REQUEST_CODES_LENGTH
from hpack.table import HeaderTable

from interop import harness, upstream
from interop.harness import Failure, check, info
from interop.harness import proxy as pc


# ------------------------------------------------------------- the bound

STATIC = {}                     # (name, value) -> its static index
STATIC_NAMES = {}               # name -> its first static index
for _i, (_n, _v) in enumerate(HeaderTable.STATIC_TABLE, 1):
    STATIC.setdefault((_n, _v), _i)
    STATIC_NAMES.setdefault(_n, _i)


def int_octets(value, prefix_bits):
    return len(harness.encode_int(value, prefix_bits))


def string_octets(s):
    """A string literal (RFC 7541 5.2), raw or Huffman, the shorter, with
    its length prefix."""
    huffman = (sum(REQUEST_CODES_LENGTH[c] for c in s) + 7) // 8
    n = min(len(s), huffman)
    return int_octets(n, 7) + n


def bound_octets(headers, seen):
    """The bound's octets for one header list ((bytes, bytes) pairs), with
    no table limit: a pair of the static table its index; the first
    sighting of a pair in the connection a literal with incremental
    indexing (RFC 7541 6.2.1: the name a static index when the static
    table has it, else a literal); every later sighting one octet.  seen:
    the pairs the connection has sent so far (updated)."""
    n = 0
    for name, value in headers:
        index = STATIC.get((name, value))
        if index:
            n += int_octets(index, 7)
        elif (name, value) in seen:
            n += 1
        else:
            seen.add((name, value))
            name_index = STATIC_NAMES.get(name)
            n += (int_octets(name_index, 6) if name_index
                  else 1 + string_octets(name))
            n += string_octets(value)
    return n


def connection_bound(lists):
    """The bound of one connection's header lists, in order."""
    seen = set()
    return sum(bound_octets(h, seen) for h in lists)


# ------------------------------------------------------------ the replay

class Replay:
    """One story on one connection: per response, the decoded header list
    and its header block (HEADERS and CONTINUATION payloads) as on the
    wire."""

    def __init__(self):
        self.headers = []
        self.blocks = []

    @property
    def octets(self):
        return [len(b) for b in self.blocks]


def request_headers(server, path):
    return [(":method", "GET"), (":scheme", "https"),
            (":authority", server.authority), (":path", path)] \
        + pc.BROWSER_HEADERS


def replay(server, story, table_size, stories_dir=None):
    """The story's cases in order on one TLS connection to server, the
    client announcing SETTINGS_HEADER_TABLE_SIZE table_size; each response
    must come whole, with the story's status and the origin's body."""
    cases = upstream.load_story(story, stories_dir)
    client = harness.H2Client(server.tls_port, tls=True, timeout=30)
    run = Replay()
    try:
        client.update_settings(
            {h2.settings.SettingCodes.HEADER_TABLE_SIZE: table_size})
        for i in range(len(cases)):
            path = "/story/%s/%d" % (story, i)
            r = client.get(request_headers(server, path))
            want = upstream.story_response(story, i, stories_dir)
            check(r.reset is None, "%s: RST_STREAM %s"
                  % (path, harness.h2_error_name(r.reset or 0)))
            check(r.status == want.status, "%s: status %d, the story's %d"
                  % (path, r.status, want.status))
            check(len(r.body) == len(want.body), "%s: a body of %d octets, "
                  "the origin's %d" % (path, len(r.body), len(want.body)))
            run.headers.append(r.headers)
        check(len(client.tap.blocks) == len(cases), "%s: %d header blocks "
              "for %d responses" % (story, len(client.tap.blocks),
                                    len(cases)))
        run.blocks = [block for _, block, _ in client.tap.blocks]
    finally:
        client.close()
    return run


def replay_all(server, table_size, stories, stories_dir=None):
    """Every story on a connection of its own: {story: Replay}; prints
    the octets; a failure names the story and nginx's errors."""
    since = server.error_log_size()
    start = time.monotonic()
    runs = {}
    for story in stories:
        try:
            runs[story] = replay(server, story, table_size, stories_dir)
        except Failure as e:
            errors = [line for line in server.error_log_text(since)
                      .splitlines() if "[error]" in line or "[crit]" in line]
            raise Failure("%s (table %d): %s%s" % (
                story, table_size, e, "".join("\n  error log: " + line
                                              for line in errors[:3])))
    n = sum(len(r.blocks) for r in runs.values())
    octets = sum(sum(r.octets) for r in runs.values())
    info("%d stories, %d responses, one connection each, %.1fs: %d octets "
         "of header blocks, %.1f per response"
         % (len(runs), n, time.monotonic() - start, octets, octets / n))
    return runs


def same_lists(runs, stock):
    """Every list of runs ({story: Replay}) decodes to stock's, nginx's
    date aside; the number of lists and the representations of runs'
    blocks (pc.representations())."""
    n = 0
    for story, run in runs.items():
        theirs = stock[story]
        check(len(run.headers) == len(theirs.headers), "%s: %d responses, "
              "stock %d" % (story, len(run.headers), len(theirs.headers)))
        for i, (a, b) in enumerate(zip(run.headers, theirs.headers)):
            a, b = pc.without_date(a), pc.without_date(b)
            check(a == b, "%s case %d: %r\n  stock %r"
                  % (story, i, pc.short(a), pc.short(b)))
            n += 1
    kinds = collections.Counter(kind for run in runs.values()
                                for block in run.blocks
                                for kind in pc.representations(block))
    return n, kinds


def totals(runs, stock):
    """(stock's octets, runs' octets, the bound of stock's lists) of every
    story together."""
    return (sum(sum(r.octets) for r in stock.values()),
            sum(sum(r.octets) for r in runs.values()),
            sum(connection_bound(r.headers) for r in stock.values()))
