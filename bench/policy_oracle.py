"""What an indexing policy could reach on the hpack-test-case response
stories if it knew the future: a model of an HPACK encoder (RFC 7541: a
FIFO dynamic table, exact octets of every representation, strings raw or
Huffman, the shorter) whose only choices are the ones a policy makes:
which literal goes into the table, and whether a field the table holds
at an index of two octets is written again to bring it to the front.
The oracle makes both with the story's future in hand:

- a field goes in when it occurs again within the next W lists (W from
  1 to the whole story; the best W is reported);
- with --refresh, a field the table holds at a two-octet index is written
  again when its remaining occurrences save more octets than the literal
  costs (and the old copy is dropped, which HPACK cannot do: the figure is
  better than any encoder's).

    /usr/bin/python3 -m bench.policy_oracle [--refresh] [STORIES_DIR]

Prints, per table size, the oracle's octets next to the issue's limit for
the response stories (make bench-corpus's "Target" table:
max(0.85 x libnghttp2's octets, 1.05 x the bound)), given on the command
line or read from build/bench/codec-corpus.json when it exists.  The
model's octets for "every literal goes in" are printed too: they are
within a fraction of a percent of make bench-corpus's libnghttp2 figures,
which index nearly everything, so the model's costs can be trusted.
"""

import argparse
import bisect
import collections
import json
import os
import sys
from pathlib import Path

from interop.harness.stories import STATIC, STATIC_NAMES, int_octets, \
    string_octets

REPO = Path(__file__).resolve().parent.parent
SIZES = (4096, 16384, 65536)


def load_response_stories(directory):
    """Each response story as a list of header lists of (bytes, bytes)."""
    stories = []
    for path in sorted(Path(directory).glob("*.json")):
        doc = json.loads(path.read_text())
        cases = [[(n.encode(), v.encode()) for h in c["headers"]
                  for n, v in h.items()] for c in doc["cases"]]
        # story_31 has no "context"; its cases carry :status
        context = doc.get("context") or (
            "response" if cases and any(n == b":status" for n, _ in cases[0])
            else "request")
        if context == "response":
            stories.append(cases)
    return stories


class Model:
    """A FIFO table (newest first) and the octets written."""

    def __init__(self, size):
        self.size, self.used, self.entries = size, 0, collections.deque()
        self.octets = 0

    def position(self, field):
        for i, f in enumerate(self.entries):
            if f == field:
                return i
        return None

    def name_position(self, name):
        for i, (n, _) in enumerate(self.entries):
            if n == name:
                return i
        return None

    def insert(self, field):
        cost = len(field[0]) + len(field[1]) + 32
        while self.entries and self.used + cost > self.size:
            n, v = self.entries.pop()
            self.used -= len(n) + len(v) + 32
        if cost <= self.size:
            self.entries.appendleft(field)
            self.used += cost

    def literal(self, field, indexing):
        name, value = field
        index = STATIC_NAMES.get(name)
        if not index:
            at = self.name_position(name)
            index = 62 + at if at is not None else 0
        prefix = 6 if indexing else 4
        return (int_octets(index, prefix) if index
                else 1 + string_octets(name)) + string_octets(value)


def run(stories, size, window, refresh):
    total = 0
    for lists in stories:
        where = collections.defaultdict(list)    # field -> its list numbers
        for i, fields in enumerate(lists):
            for f in fields:
                where[f].append(i)
        m = Model(size)
        for i, fields in enumerate(lists):
            for f in fields:
                if f in STATIC:
                    m.octets += int_octets(STATIC[f], 7)
                    continue
                later = where[f][bisect.bisect_right(where[f], i):]
                at = m.position(f)
                if at is not None:
                    ref = int_octets(62 + at, 7)
                    if refresh and ref > 1:
                        again = m.literal(f, True)
                        if len(later) * (ref - 1) > again - ref:
                            m.entries.remove(f)
                            m.used -= len(f[0]) + len(f[1]) + 32
                            m.octets += again
                            m.insert(f)
                            continue
                    m.octets += ref
                    continue
                goes_in = (window is None or
                           (later and later[0] - i <= window))
                goes_in = goes_in and (len(f[0]) + len(f[1]) + 32
                                       <= size - size // 4)
                m.octets += m.literal(f, goes_in)
                if goes_in:
                    m.insert(f)
        total += m.octets
    return total


def corpus_limits():
    """The issue's limits per size from make bench-corpus's JSON, if any:
    max(0.85 x libnghttp2's octets, 1.05 x the bound) over the response
    stories."""
    path = REPO / "build" / "bench" / "codec-corpus.json"
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    nghttp2, bound = collections.Counter(), collections.Counter()
    for c in doc.get("connections", []):
        if c.get("group") != "response":
            continue
        for s in c["sizes"]:
            nghttp2[s["table_size"]] += s["nghttp2"]["octets"]
            bound[s["table_size"]] += c["bound"]
    return {size: max(0.85 * nghttp2[size], 1.05 * bound[size])
            for size in nghttp2}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stories", nargs="?",
                    default=str(REPO.parent / "shared" / "data" /
                                "hpack-test-case" / "raw-data"))
    ap.add_argument("--refresh", action="store_true")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.stories):
        print("policy_oracle: %s not found: nothing measured" % args.stories)
        return 0
    stories = load_response_stories(args.stories)
    limits = corpus_limits()
    print("%d response stories, %d lists; oracle%s" % (
        len(stories), sum(len(s) for s in stories),
        " with refresh" if args.refresh else ""))
    print("| table | every literal in | oracle, best window | window | limit |")
    print("|--:|--:|--:|--:|--:|")
    for size in SIZES:
        everything = run(stories, size, None, False)
        best = min((run(stories, size, w, args.refresh), w)
                   for w in (1, 2, 4, 8, 16, 32, 64, 128, 1 << 30))
        window = "all" if best[1] == 1 << 30 else str(best[1])
        limit = limits.get(size)
        print("| %d | %s | %s | %s | %s |" % (
            size, format(everything, ","), format(best[0], ","), window,
            format(round(limit), ",") if limit else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
