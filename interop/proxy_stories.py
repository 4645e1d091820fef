"""The hpack-test-case response stories through nginx: header octets on
the wire of stock nginx and of the module, both running conf/proxy.conf in
front of the same origin (interop/upstream.py serving the stories).

    /usr/bin/python3 -m interop.proxy_stories        (make bench-proxy-stories)
    /usr/bin/python3 -m interop.proxy_stories --sizes 4096 --json FILE
    /usr/bin/python3 -m interop.proxy_stories --stories DIR

The 11 response stories of ../shared/data/hpack-test-case/raw-data (those
whose first case has a :status), 3,035 responses of real sites.  For each
table size (default 4096, 16384 and 65536) and each story, one TLS
connection to stock and one to the module (hpack_table_size at that size),
the client (python3-h2) announcing SETTINGS_HEADER_TABLE_SIZE of that size;
the story's cases are fetched in order, one stream at a time
(/story/<story>/<i>), so the wire order is the story's.  The header block
of each response (its HEADERS and CONTINUATION payloads) is counted off the
wire.

Checks (PASS/FAIL): every response arrives, not reset, with the story's
status and body; every header list the module sends decodes to stock's
(nginx's date aside).

Report per size and story: the octets of stock's and the module's blocks,
module/stock, a bound computed from stock's lists (per connection, with no
table limit: the first sighting of a (name, value) pair a literal with
incremental indexing, the name a static index when the static table has
it, each string raw or Huffman, the shorter; every later sighting one
octet; a pair of the static table its index: bench/codec_bench_octets.cc's
bound), module/bound, and octets per response; then the targets, PASS or
MISS (reported, not failures): module <= 0.22 x stock at 4096, module <=
1.05 x bound at 65536.  What stock makes of the stories' fields (dropped,
replaced, changed) is listed once.  Without the stories the run says so and
exits 0.  Ports: origin 19603, proxies 19673-19676, moved by
INTEROP_PORT_SHIFT.
"""

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from interop import nginx_runner, upstream
from interop.harness import PORT_SHIFT, Results, info, stop_on_sigterm
from interop.harness import proxy as pc
from interop.harness import stories as hs

ORIGIN_PORT = 19603 + PORT_SHIFT
PORTS = {k: p + PORT_SHIFT for k, p in
         {"stock": 19673, "on": 19674, "mid": 19675, "big": 19676}.items()}
# the module's proxy for each table size (pc.ProxyServer.TABLE)
KINDS = {4096: "on", 16384: "mid", 65536: "big"}
WORK = pc.PROXY_WORK / "stories"

# the targets: module/stock at 4096, module/bound at 65536
TARGETS = ((4096, "stock", 0.22), (65536, "bound", 1.05))


def replay_all(server, size, stories, stories_dir, runs):
    runs.update(hs.replay_all(server, size, stories, stories_dir))


def same_as_stock(module, stock):
    """Every list the module sent decodes to stock's, nginx's date aside."""
    n, kinds = hs.same_lists(module, stock)
    info("the same %d header lists (date aside); the module's "
         "representations: %s" % (n, ", ".join(
             "%s %d" % kv for kv in sorted(kinds.items()))))


# ------------------------------------------------------------ the report

def story_octets(stock, module):
    """Per story: responses, stock's octets, the module's, the bound of
    stock's lists, and each response's octets."""
    rows = {}
    for story in stock:
        rows[story] = {"responses": len(stock[story].octets),
                       "stock": sum(stock[story].octets),
                       "module": sum(module[story].octets),
                       "bound": hs.connection_bound(stock[story].headers),
                       "stock_octets": stock[story].octets,
                       "module_octets": module[story].octets}
    return rows


def totals(rows):
    return {k: sum(r[k] for r in rows.values())
            for k in ("responses", "stock", "module", "bound")}


def what_stock_changes(stock, stories_dir):
    """The stories' fields stock did not pass on as they were, and the
    fields it sent that the story did not have: name -> count."""
    gone, new = collections.Counter(), collections.Counter()
    for story, run in stock.items():
        cases = upstream.load_story(story, stories_dir)
        for case, got in zip(cases, run.headers):
            want = collections.Counter((n, v) for n, v in case)
            got = collections.Counter(pc.as_text(got))
            for (n, _), c in (want - got).items():
                gone[n] += c
            for (n, _), c in (got - want).items():
                new[n] += c
    return gone, new


def ratio(a, b):
    return a / b if b else float("nan")


def markdown(report):
    out = []
    for size, at in report["sizes"].items():
        rows, t = at["stories"], at["totals"]
        out += ["", "Table size %s (the client's SETTINGS_HEADER_TABLE_SIZE "
                "and the module's hpack_table_size): header block octets"
                % size, "",
                "| story | responses | stock | module | module/stock | "
                "bound | module/bound |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for story, r in list(rows.items()) + [("**all**", t)]:
            out.append("| %s | %d | %d | %d | %.3f | %d | %.3f |" % (
                story, r["responses"], r["stock"], r["module"],
                ratio(r["module"], r["stock"]), r["bound"],
                ratio(r["module"], r["bound"])))
        out.append("")
        out.append("Octets per response: stock %.1f, module %.1f, bound %.1f"
                   % tuple(ratio(t[k], t["responses"])
                           for k in ("stock", "module", "bound")))
    if report["targets"]:
        out += ["", "Targets (reported, not checked):", ""]
        for t in report["targets"]:
            out.append("- table %d: module/%s %.3f, target at most %.2f: "
                       "**%s**" % (t["size"], t["against"], t["ratio"],
                                   t["limit"], t["verdict"]))
    return out


# ------------------------------------------------------------------ main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4096,16384,65536",
                    help="table sizes, comma-separated, of %s"
                    % ", ".join(map(str, KINDS)))
    ap.add_argument("--stories", default=str(upstream.STORIES),
                    metavar="DIR", help="hpack-test-case raw-data (default "
                    "../shared/data/hpack-test-case/raw-data)")
    ap.add_argument("--json", help="write the figures there as JSON")
    args = ap.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    for s in args.sizes:
        if s not in KINDS:
            ap.error("--sizes: %d is not one of %s" % (s, list(KINDS)))
    return args


def run(args, results):
    stories = upstream.response_stories(args.stories)
    report = {"stories_dir": args.stories, "stories": stories, "sizes": {},
              "targets": [], "stock_changes": {}}
    nginx_runner.certificate()
    origin = pc.Origin(ORIGIN_PORT, WORK, ["--stories", args.stories])
    servers = {"stock": pc.ProxyServer("stock", PORTS["stock"], ORIGIN_PORT,
                                       work=WORK, access_log=False)}
    for size in args.sizes:
        k = KINDS[size]
        servers[k] = pc.ProxyServer(k, PORTS[k], ORIGIN_PORT, work=WORK,
                                    access_log=False)
    running = {}
    print("proxy-stories: %d response stories (%d responses) from %s; "
          "stock vs the module at table sizes %s, conf/proxy.conf, one TLS "
          "connection per story, servers in %s"
          % (len(stories), sum(len(upstream.load_story(s, args.stories))
                               for s in stories), args.stories,
             ", ".join(map(str, args.sizes)), WORK), flush=True)
    try:
        pc.start_all(results, origin, servers, running)
        if "stock" not in running:
            return report
        for size in args.sizes:
            module = servers[KINDS[size]]
            if module.kind not in running:
                continue
            runs = {"stock": {}, "module": {}}
            ok = all(results.run(
                s.label, "story_responses_at_table_%d_arrive_with_their_"
                "status_and_body" % size, replay_all, s, size, stories,
                args.stories, runs[key])
                for key, s in (("stock", servers["stock"]),
                               ("module", module)))
            if not ok:
                continue
            results.run(module.label, "story_header_lists_at_table_%d_"
                        "same_as_stock" % size, same_as_stock,
                        runs["module"], runs["stock"])
            rows = story_octets(runs["stock"], runs["module"])
            report["sizes"][size] = {"stories": rows, "totals": totals(rows)}
            if not report["stock_changes"]:
                gone, new = what_stock_changes(runs["stock"], args.stories)
                report["stock_changes"] = {"not_passed_as_sent": gone,
                                           "not_in_the_story": new}
                info("stock's lists against the stories: not passed as the "
                     "story has them: %s; not in the story: %s" % (
                         ", ".join("%s %d" % kv for kv in gone.most_common()),
                         ", ".join("%s %d" % kv for kv in new.most_common())))
        for size, against, limit in TARGETS:
            if size in report["sizes"]:
                t = report["sizes"][size]["totals"]
                r = ratio(t["module"], t[against])
                report["targets"].append({
                    "size": size, "against": against, "limit": limit,
                    "ratio": r, "verdict": "PASS" if r <= limit else "MISS"})
    finally:
        for s in running.values():
            s.stop()
        origin.stop()
    return report


def main():
    args = parse_args()

    stop_on_sigterm("proxy-stories")
    start = time.monotonic()
    results = Results()
    if not Path(args.stories).is_dir() or not upstream.response_stories(
            args.stories):
        results.skipped += 1
        print("SKIP  [proxy-stories] the response stories: %s not found "
              "(hpack-test-case's raw-data, from ../shared)" % args.stories)
        print(results.summary(), flush=True)
        return 0
    report = run(args, results)
    print("\n".join(markdown(report)))
    report["seconds"] = time.monotonic() - start
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print("\nproxy-stories: figures in %s" % args.json)
    print("proxy-stories: %.0fs" % report["seconds"])
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
