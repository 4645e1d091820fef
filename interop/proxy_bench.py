"""The reverse-proxy benchmark: stock nginx against the module (hpack on),
both running conf/proxy.conf in front of the same origin
(interop/upstream.py), loaded by h2load over TLS with a browser's request
headers and an API mix of 1,000 origin responses (8 to 40+ header lines:
cookies, etags, cache headers, duplicates).

    /usr/bin/python3 -m interop.proxy_bench                (make bench-proxy)
    /usr/bin/python3 -m interop.proxy_bench --quick        (a smoke run)
    /usr/bin/python3 -m interop.proxy_bench --callgrind    (+ instructions)
    /usr/bin/python3 -m interop.proxy_bench --json build/bench/proxy.json

For each of --pairs pairs (default 5) it runs h2load for --duration seconds
against stock and against the module, in alternating order (stock first in
even pairs), and reports medians: requests per second (end to end: on a
2-core machine h2load, nginx and the origin share the cores, so this is
mostly the client's limit), the nginx worker's CPU time per request (utime
+ stime from /proc, the server's own cost), and the response header bytes
per response (h2load's header traffic / responses).  --callgrind runs each
build once more under valgrind (single process) and counts instructions per
request: all of nginx, and inclusive of ngx_http_v2_header_filter (where
the response header block is encoded), and, with callgrind's simulation of
this machine's caches (as make bench's), L1 misses per request and the
code a request runs (bench/nginx_callgrind.py's code_lines()).

Access logs are off in both proxies (the module's $hpack_ variables would
otherwise cost it more log bytes than stock).  Prints PASS/FAIL lines for
what must hold whatever the speed (no failed request, fewer header bytes
with the module), the report, and "N passed, N failed".
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import nginx_callgrind
from interop import nginx_runner, upstream
from interop.harness import (PORT_SHIFT, Failure, Results, check, info,
                             stop_on_sigterm)
from interop.harness import proxy as pc

ORIGIN_PORT = 19602 + PORT_SHIFT
PORTS = {k: p + PORT_SHIFT for k, p in
         {"stock": 19663, "on": 19664, "big": 19665}.items()}
WORK = pc.PROXY_WORK / "bench"


def uri_file(server, n=1000, seed=5):
    """n origin responses with a 2xx status (h2load counts 4xx as failed),
    each requested as often as the others."""
    import random
    rng = random.Random(seed)
    paths = []
    while len(paths) < n:
        p = "/r/%d" % rng.randrange(10 ** 6)
        if upstream.response_for(p).status < 400:
            paths.append(p)
    path = server.prefix / "uris.txt"
    path.write_text("".join(server.url(p) + "\n" for p in paths))
    return path


def h2load_args(uris, clients, streams):
    args = ["h2load", "-c", str(clients), "-m", str(streams), "-i",
            str(uris)]
    for name, value in pc.BROWSER_HEADERS:
        args += ["-H", "%s: %s" % (name, value)]
    return args


def run_h2load(args, timeout=600):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    out = p.stdout
    req = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, "
                    r"(\d+) succeeded, (\d+) failed, (\d+) errored, "
                    r"(\d+) timeout", out)
    rps = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", out)
    hdr = re.search(r"traffic: .*? \((\d+)\) total, .*? \((\d+)\) headers "
                    r"\(space savings ([-\d.]+)%\)", out)
    if not (req and rps and hdr):
        raise Failure("h2load exited %d without its summary: %s"
                      % (p.returncode, out[-1000:]))
    total, started, done, ok, failed, errored, tmo = map(int, req.groups())
    if failed or errored or tmo or done == 0 or p.returncode:
        raise Failure("h2load: %d done, %d failed, %d errored, %d timeout "
                      "(exit %d)" % (done, failed, errored, tmo,
                                     p.returncode))
    return {"done": done, "rps": float(rps.group(3)),
            "header_bytes": int(hdr.group(2)),
            "space_savings": float(hdr.group(3))}


def cpu_seconds(pid):
    fields = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(server, uris, args):
    pid = server.worker_pid()
    c0 = cpu_seconds(pid)
    r = run_h2load(h2load_args(uris, args.clients, args.streams)
                   + ["-D", str(args.duration)])
    r["cpu_us_per_request"] = 1e6 * (cpu_seconds(pid) - c0) / r["done"]
    r["header_bytes_per_response"] = r["header_bytes"] / r["done"]
    return r


# ------------------------------------------------------------- callgrind

def callgrind(server, uris, requests, out_dir):
    """Instructions per request of one nginx process (master_process off)
    under callgrind, after a warm-up; inclusive of the header filter; L1
    misses (I1mr + D1mr + D1mw) per request; and the code a request runs,
    in 64-octet lines, in all and in the module's object."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in out_dir.glob("callgrind.out.*"):
        f.unlink()
    server.wrapper = ["valgrind", "--tool=callgrind", "--cache-sim=yes",
                      "--dump-instr=yes", "--compress-pos=no",
                      "--callgrind-out-file=%s/callgrind.out.%%p" % out_dir]
    server.single_process = True
    server.start_timeout = server.stop_timeout = 60
    server.start()
    try:
        base = h2load_args(uris, 1, 8)
        run_h2load(base + ["-n", "200"])                    # warm-up
        subprocess.run(["callgrind_control", "--zero",
                        str(server.master_pid)],
                       check=True, capture_output=True)
        r = run_h2load(base + ["-n", str(requests)])
        subprocess.run(["callgrind_control", "--dump",
                        str(server.master_pid)],
                       check=True, capture_output=True)
    finally:
        server.stop()
    dumps = sorted(glob.glob(str(out_dir / "callgrind.out.*.1")))
    if not dumps:
        raise Failure("no callgrind dump in %s" % out_dir)
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes",
                           "--show=Ir", "--threshold=100", dumps[0]],
                          capture_output=True, text=True).stdout
    total = re.search(r"^([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
    filt = re.search(r"^\s*([\d,]+) \([\d. ]+%\)\s+\S*:ngx_http_v2_header_"
                     r"filter\b", text, re.M)
    if not total:
        raise Failure("callgrind_annotate: no PROGRAM TOTALS in %s"
                      % dumps[0])

    def num(m):
        return int(m.group(1).replace(",", "")) if m else None
    profile = nginx_callgrind.Profile(dumps[0])
    misses = nginx_callgrind.cache_misses(profile, r["done"])
    if not misses:
        raise Failure("%s: no cache simulation totals" % dumps[0])
    code = nginx_callgrind.code_lines(profile, r["done"])
    return {"requests": r["done"],
            "code_kib_per_request": code["kib"] if code else None,
            "module_code_kib_per_request":
                code["kib_by_object"].get(nginx_runner.MODULE_SO, 0.0)
                if code else None,
            "l1_misses_per_request": misses["l1"],
            "ir_per_request": num(total) / r["done"],
            "header_filter_ir_per_request":
                (num(filt) / r["done"]) if filt else None,
            "header_bytes_per_response": r["header_bytes"] / r["done"],
            "dump": dumps[0]}


# ------------------------------------------------------------------ main

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=4,
                    help="seconds per h2load run")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--streams", type=int, default=8,
                    help="concurrent streams per connection")
    ap.add_argument("--kind", choices=("on", "big"), default="on",
                    help="the module's table: on = conf/proxy.conf as is "
                         "(4096), big = 65536")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--cg-requests", type=int, default=2000)
    ap.add_argument("--quick", action="store_true",
                    help="one pair of 1 s runs, 300 callgrind requests")
    ap.add_argument("--json", help="write the numbers there as JSON")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs, args.duration, args.cg_requests = 1, 1, 300
    return args


def run(args):
    """The whole workload: (Results, the report: config, runs, summary,
    callgrind).  Prints a PASS/FAIL line per step as it goes."""
    results = Results()
    report = {"config": vars(args).copy(), "runs": [], "callgrind": {},
              "label": pc.ProxyServer.LABELS[args.kind]}
    missing = [t for t in ("h2load",) + (("valgrind", "callgrind_control",
                                          "callgrind_annotate")
                                         if args.callgrind else ())
               if not shutil.which(t)]
    if missing:
        results.run("bench", "tools", check, False,
                    "missing %s (make deps)" % missing)
        return results, report

    nginx_runner.certificate()
    origin = pc.Origin(ORIGIN_PORT, WORK)
    servers = {k: pc.ProxyServer(k, PORTS[k], ORIGIN_PORT, work=WORK,
                                 access_log=False)
               for k in ("stock", args.kind)}
    running = []
    report["loadavg_before"] = os.getloadavg()
    print("bench-proxy: conf/proxy.conf, stock vs %s, %d pairs of %d s, "
          "h2load -c %d -m %d over TLS, servers in %s; load average %.1f "
          "(%d cores)" % (report["label"], args.pairs, args.duration,
                          args.clients, args.streams, WORK,
                          os.getloadavg()[0], os.cpu_count()), flush=True)
    try:
        ok = Results.run(results, "bench", "origin_and_both_proxies_start",
                         lambda: [origin.start()] + [
                             (s.start(), running.append(s))
                             for s in servers.values()])
        if ok:
            results.run("bench", "h2load_pairs_complete_with_no_failed_"
                        "request", pairs, args, servers, report)
    finally:
        for s in running:
            s.stop()
        origin.stop()

    if report["runs"]:
        report["summary"] = summarize(args, report["runs"])

        def fewer_bytes():
            a = report["summary"][args.kind]["header_bytes_per_response"]
            b = report["summary"]["stock"]["header_bytes_per_response"]
            check(a < b, "module %.1f header bytes per response, stock %.1f"
                  % (a, b))
        results.run("bench", "module_sends_fewer_header_bytes_per_response",
                    fewer_bytes)

    if args.callgrind and ok:
        results.run("bench", "callgrind_counts_instructions_per_request",
                    callgrind_both, args, report)
    return results, report


def pairs(args, servers, report):
    """Warm-up, then the interleaved pairs (stock first in even pairs)."""
    uris = {k: uri_file(s) for k, s in servers.items()}
    for s in servers.values():
        run_h2load(h2load_args(uris[s.kind], args.clients, args.streams)
                   + ["-n", "3000"])
    for i in range(args.pairs):
        order = ("stock", args.kind) if i % 2 == 0 else (args.kind, "stock")
        pair = {}
        for k in order:
            pair[k] = measure(servers[k], uris[k], args)
        report["runs"].append(pair)
        info("pair %d: stock %.0f req/s %.1f us/req, module %.0f req/s "
             "%.1f us/req" % (i + 1, pair["stock"]["rps"],
                              pair["stock"]["cpu_us_per_request"],
                              pair[args.kind]["rps"],
                              pair[args.kind]["cpu_us_per_request"]))


def summarize(args, runs):
    """Medians per build and the medians of the paired ratios."""
    summary = {}
    for k in ("stock", args.kind):
        rows = [p[k] for p in runs]
        summary[k] = {key: median([r[key] for r in rows]) for key in
                      ("rps", "cpu_us_per_request",
                       "header_bytes_per_response", "space_savings")}
    summary["paired_rps_ratio"] = median(
        [p[args.kind]["rps"] / p["stock"]["rps"] for p in runs])
    summary["paired_cpu_ratio"] = median(
        [p[args.kind]["cpu_us_per_request"]
         / p["stock"]["cpu_us_per_request"] for p in runs])
    return summary


def callgrind_both(args, report):
    for k in ("stock", args.kind):
        s = pc.ProxyServer(k, PORTS[k], ORIGIN_PORT,
                           work=WORK / "callgrind", access_log=False)
        origin = pc.Origin(ORIGIN_PORT, WORK)
        origin.start()
        try:
            s.prefix.mkdir(parents=True, exist_ok=True)
            report["callgrind"][k] = callgrind(s, uri_file(s),
                                               args.cg_requests,
                                               s.prefix / "cg")
        finally:
            origin.stop()


def markdown(report):
    """The report's tables (make bench-proxy prints them, make bench's
    REPORT.md holds them)."""
    cfg, summary = report["config"], report.get("summary", {})
    kind = cfg["kind"]
    out = ["| proxy (conf/proxy.conf) | req/s (median) | worker CPU "
           "us/request | header bytes/response | h2load space savings |",
           "|---|---:|---:|---:|---:|"]
    for k in ("stock", kind):
        if k in summary:
            s = summary[k]
            out.append("| %s | %.0f | %.1f | %.1f | %.1f%% |"
                       % ("stock" if k == "stock"
                          else report["label"] + " (module)",
                          s["rps"], s["cpu_us_per_request"],
                          s["header_bytes_per_response"], s["space_savings"]))
    if summary:
        out += ["", "module/stock, median of %d interleaved pairs: req/s "
                "%.3f, worker CPU per request %.3f"
                % (len(report["runs"]), summary["paired_rps_ratio"],
                   summary["paired_cpu_ratio"])]
    if report["callgrind"]:
        out += ["", "| callgrind, %d requests | instructions/request "
                "(nginx) | in ngx_http_v2_header_filter | L1 misses/request "
                "(cache simulation) | code run/request, KiB (the module's "
                "own) |"
                % cfg["cg_requests"], "|---|---:|---:|---:|---:|"]
        for k, c in report["callgrind"].items():
            out.append("| %s | %.0f | %s | %s | %s |" % (
                k, c["ir_per_request"],
                "%.0f" % c["header_filter_ir_per_request"]
                if c["header_filter_ir_per_request"] else "?",
                "%.0f" % c["l1_misses_per_request"]
                if c.get("l1_misses_per_request") else "?",
                "%.1f (%.1f)" % (c["code_kib_per_request"],
                                 c["module_code_kib_per_request"])
                if c.get("code_kib_per_request") else "?"))
    return out


def main():
    args = parse_args()

    stop_on_sigterm("bench-proxy")
    start = time.monotonic()
    results, report = run(args)
    print()
    print("\n".join(markdown(report)))
    print()
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1,
                                              default=str) + "\n")
        print("bench-proxy: numbers in %s" % args.json)
    print("bench-proxy: %.0fs" % (time.monotonic() - start))
    print(results.summary(), flush=True)
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
