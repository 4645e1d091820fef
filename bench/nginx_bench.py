"""make bench: the module build against the stock build, side by side.

Both nginx 1.26.3 builds (build/nginx-stock, build/nginx-hpack), or with
--version another line's (build/nginx-<version>-stock and -hpack), serve one
configuration template, bench/conf/bench.conf: the module build with
load_module and "hpack on", the stock build without either, one worker each,
on 127.0.0.1 only (stock: 19080 h2c, 19443 TLS; module: 19081, 19444;
under callgrind 19082-19083 and 19445-19446; INTEROP_PORT_SHIFT=N moves them
by N).  Then, in this order:

0. snapshot: both builds' binaries (and the module) are copied under
   build/bench/nginx/bin/, so that a rebuild elsewhere changes nothing;
1. throughput: every workload (transport x request headers x location x
   warm/cold connections) as interleaved pairs of h2load runs, stock then
   module, round-robin over the workloads so that a burst of noise from the
   shared machine hits many workloads a little rather than one a lot; the
   worker's CPU time around each run (/proc/<pid>/schedstat and stat);
2. header bytes per response against requests per connection (h2load
   -n K -c 1 on /headers, K = 1 ... 100);
3. the wire: one warm response block of /headers taken apart field by field;
4. instructions: each build under valgrind --tool=callgrind
   (--cache-sim=yes) with "master_process off; daemon off;", the same fixed
   h2load sequence with N_lo and N_hi requests, the difference per request
   (bench/nginx_callgrind.py says which functions count as header
   compression);
5. weight: the worker's resident memory per connection held open, idle
   and after two requests, at three table sizes (bench/nginx_memory.py;
   its servers on 19084-19085 and 19447-19448 plus INTEROP_PORT_SHIFT);
6. the reverse-proxy workload: interop/proxy_bench.py (make bench-proxy),
   stock and the module running conf/proxy.conf in front of one origin;
7. HTTP/3 (bench/nginx_h3.py, make bench-h3): octets, instructions, worker
   CPU and memory per connection over QUIC, driven by build/h3client;
8. the report (bench/nginx_report.py): REPORT.md, results.json, PNG plots.

Every process started here is stopped on the way out, also on failure,
Ctrl-C or SIGTERM; servers also get SIGTERM from the kernel if this script
dies (PR_SET_PDEATHSIG), and a server left by a run killed with SIGKILL is
found by its pid file and stopped at the next start (interop/nginx_runner.py
runs every server).

From the repository's root, by /usr/bin/python3:

    python3 -m bench.nginx_bench            the full run (make bench)
    python3 -m bench.nginx_bench --quick    a smoke run (make bench QUICK=1)
    python3 -m bench.nginx_bench --only callgrind
    python3 -m bench.nginx_bench --only memory   make bench-memory
    python3 -m bench.nginx_bench --only h3       make bench-h3
    python3 -m bench.nginx_bench --report DIR    redo REPORT.md and plots
                                                 from DIR
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import shlex
import signal
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path

# no __pycache__ in the tree for the modules imported below (python3 -m
# has imported bench/__init__.py by now; .gitignore leaves out the rest)
sys.dont_write_bytecode = True
# run as python3 -m bench.nginx_bench, this module is __main__: the HTTP/3
# phase (bench/nginx_h3.py) imports it by name and must get this copy
sys.modules.setdefault("bench.nginx_bench", sys.modules[__name__])
from bench import (nginx_callgrind, nginx_memory,  # noqa: E402
                   nginx_report, nginx_wire)
from interop import harness, nginx_runner, proxy_bench  # noqa: E402

REPO = nginx_runner.REPO
BUILD = nginx_runner.BUILD
WORK = BUILD / "bench" / "nginx"
TEMPLATE = REPO / "bench" / "conf" / "bench.conf"

BUILDS = ("stock", "module")
INSTALL = {"stock": BUILD / "nginx-stock", "module": BUILD / "nginx-hpack"}
# the line the builds are of (--version); the reverse-proxy workload
# (interop/proxy_bench.py) runs 1.26.3's builds only
VERSION = "1.26.3"
# The binaries actually run: copies taken at the start (snapshot()), so that
# a `make nginx-1.26` elsewhere during the run changes nothing measured.
SNAPSHOT = WORK / "bin"
MODULE_SO = nginx_runner.MODULE_SO
# INTEROP_PORT_SHIFT=N moves every port by N (interop/harness/)
PORTS = {b: (h + harness.PORT_SHIFT, t + harness.PORT_SHIFT) for b, (h, t) in
         {"stock": (19080, 19443), "module": (19081, 19444)}.items()}
CG_PORTS = {b: (h + harness.PORT_SHIFT, t + harness.PORT_SHIFT) for b, (h, t)
            in {"stock": (19082, 19445), "module": (19083, 19446)}.items()}
# the weight phase's servers
WEIGHT_PORTS = {b: (h + harness.PORT_SHIFT, t + harness.PORT_SHIFT) for b, (h, t)
                in {"stock": (19084, 19447), "module": (19085, 19448)}.items()}

# An 11-field Chrome 124 navigation: the 4 pseudo-headers h2load makes from
# the URL and these 7 (the request of bench/codec_bench.cc, same values).
BROWSER_HEADERS = [
    ("user-agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) "
                   "AppleWebKit/537.36 (KHTML, like Gecko) "
                   "Chrome/124.0.0.0 Safari/537.36"),
    ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,"
               "*/*;q=0.8"),
    ("accept-language", "en-US,en;q=0.9"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("cookie", "_ga=GA1.2.1402749313.1700000000; "
               "_gid=GA1.2.803402375.1701234567; "
               "sessionid=6f1c2a9e8b7d4c3f9a1e2b3c4d5e6f70a1b2c3d4; "
               "csrftoken=Qm9vbGVhbk1hc2tlZFRva2VuMTIzNDU2Nzg5MA; "
               "theme=dark; lang=en-US"),
    ("referer", "https://www.example.com/"),
    ("sec-ch-ua", "\"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", "
                  "\"Not-A.Brand\";v=\"99\""),
]
HEADER_SETS = {
    "browser": BROWSER_HEADERS,
    "minimal": [],          # h2load's own: pseudo-headers + its user-agent
}
LOCATIONS = {
    "tiny": "/tiny",
    "static": "/static/1k.html",
    "headers": "/headers",
}

# defaults, then what --quick changes
FULL = {
    "pairs": 9,
    "transports": ["h2c", "tls"],
    "header_sets": ["browser", "minimal"],
    "locations": ["tiny", "static", "headers"],
    "warm_n": 12000,            # h2load -n 12000 -c 1 -m 10
    "warm_m": 10,
    "cold_n": {"h2c": 1000, "tls": 250},   # -n N -c N: one request each
    "curve": [1, 2, 5, 10, 20, 50, 100],
    "curve_runs": 3,
    "cg_warm": (100, 2100),     # requests on one connection (-m 1)
    "cg_cold": (10, 110),       # connections of one request, one at a time
    "cg_header_sets_cold": ["browser"],
    "cg_locations_cold": ["tiny", "static", "headers"],
    "weight_repeats": 3,        # servers per point of the weight phase
    "weight_connections": nginx_memory.CONNECTIONS,  # held open per point
}
QUICK = dict(FULL, **{
    "pairs": 2,
    "transports": ["h2c"],
    "header_sets": ["browser"],
    "warm_n": 2000,
    "cold_n": {"h2c": 200, "tls": 50},
    "curve": [1, 10, 100],
    "curve_runs": 1,
    "cg_warm": (10, 110),
    "cg_cold": (2, 12),
    "locations": ["tiny", "headers"],
    "cg_locations_cold": ["headers"],
    "weight_repeats": 1,
    "weight_connections": 200,
})

H2LOAD_TIMEOUT = 180


_T0 = time.monotonic()


def log(text):
    print("bench: [%4.0fs] %s" % (time.monotonic() - _T0, text), flush=True)


class BenchError(Exception):
    pass


# ------------------------------------------------------------ processes

LIVE = []           # servers started and not yet stopped


def stop_all():
    for server in list(LIVE):
        try:
            server.stop()
        except Exception as e:                      # keep stopping the rest
            print("bench: stopping %s: %s" % (server.label, e),
                  file=sys.stderr)


def _on_signal(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def snapshot(install=None, dest=SNAPSHOT, version=None):
    """Copies both builds' nginx (and the module), from install (INSTALL)
    to dest/<build>/ (build/bench/nginx/bin/): every server of the run
    starts from these files."""
    for b in BUILDS:
        src = (install or INSTALL)[b]
        need = [src / "sbin" / "nginx"]
        if b == "module":
            need.append(src / "modules" / MODULE_SO)
        for f in need:
            if not f.exists():
                raise BenchError("%s not built (make nginx-%s)"
                                 % (f, version or VERSION))
        dst = dest / b
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        for f in need:
            shutil.copy2(f, dst / f.name)


class Server(nginx_runner.Nginx):
    """One nginx: a build, its prefix under build/bench/nginx/, its ports;
    optionally under callgrind as a single process."""

    error = BenchError

    def __init__(self, build, callgrind_out=None, weight_size=None):
        cg = callgrind_out is not None
        h2c_port, tls_port = (CG_PORTS if cg else WEIGHT_PORTS if weight_size
                              else PORTS)[build]
        super().__init__(SNAPSHOT / build / "nginx",
                         WORK / (build + ("-callgrind" if cg else "-weight"
                                          if weight_size else "")),
                         build + (" (callgrind)" if cg else " (weight)"
                                  if weight_size else ""),
                         h2c_port=h2c_port, tls_port=tls_port)
        self.build = build
        self.callgrind_out = callgrind_out
        # the table size of the weight phase (nginx_memory.py)
        self.weight_size = weight_size
        self.module = SNAPSHOT / build / MODULE_SO
        if cg:
            # the profile is written when nginx exits
            self.wrapper = ["valgrind", "--tool=callgrind",
                            "--callgrind-out-file=%s" % callgrind_out,
                            "--compress-strings=no", "--compress-pos=no",
                            "--cache-sim=yes", "--dump-instr=yes"]
            self.single_process = True
            self.start_timeout = self.stop_timeout = 60

    def missing(self):
        if not self.binary.exists():
            return "%s missing (snapshot() copies it)" % self.binary
        if self.build == "module" and not self.module.exists():
            return "%s missing (snapshot() copies it)" % self.module
        return None

    def customize(self, subst):
        """Changes to the template's placeholders (bench/nginx_h3.py's
        servers: @QUIC@, the server block's HTTP/3 lines)."""
        subst["QUIC"] = ""

    def render(self):
        module = self.build == "module"
        subst = self.base_subst(self.module if module else None)
        subst["HPACK"] = "    hpack  on;" if module else ""
        if module and self.weight_size:
            subst["HPACK"] += "\n" + nginx_memory.directives(self.weight_size)
        self.customize(subst)
        self.write_conf(nginx_runner.render(TEMPLATE, subst),
                        ("conf", "logs", "html/static"))
        page = self.prefix / "html" / "static" / "1k.html"
        body = b"<!doctype html>\n<title>1 KiB</title>\n" + \
            b"<p>lorem ipsum dolor sit amet, consectetur adipiscing</p>\n" * 20
        page.write_bytes(body[:1023] + b"\n")

    def start(self):
        why = self.missing()
        if why:
            raise BenchError(why)
        super().start()
        LIVE.append(self)

    def stop(self):
        """True when nginx exited on SIGTERM (under callgrind: with its
        profile written)."""
        clean = super().stop()
        if not clean:
            log("%s did not stop on SIGTERM: SIGKILL" % self.label)
        if self in LIVE:
            LIVE.remove(self)
        return clean

    def worker_cpu(self):
        """(pid, {"cpu": ns on a CPU, "wait": ns waiting for one, "user",
        "sys": seconds}) of the worker, from /proc/<pid>/schedstat and the
        utime and stime ticks of /proc/<pid>/stat."""
        pid = self.worker_pid()
        try:
            sched = Path("/proc/%d/schedstat" % pid).read_text().split()
            stat = Path("/proc/%d/stat" % pid).read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            tick = os.sysconf("SC_CLK_TCK")
            return pid, {"cpu": int(sched[0]), "wait": int(sched[1]),
                         "user": int(fields[11]) / tick,
                         "sys": int(fields[12]) / tick,
                         "minflt": int(fields[7])}
        except (OSError, IndexError, ValueError):
            return pid, None

    def worker_memory(self):
        """The worker's VmRSS and VmHWM in KiB."""
        out = {}
        try:
            for line in Path("/proc/%d/status" % self.worker_pid()) \
                    .read_text().splitlines():
                key = line.split(":")[0]
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return out


# ---------------------------------------------------------------- h2load

H2LOAD_FINISHED = re.compile(r"finished in ([\d.]+)(ms|s|us), ([\d.]+) req/s")
H2LOAD_REQUESTS = re.compile(
    r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
    r"(\d+) failed, (\d+) errored, (\d+) timeout")
H2LOAD_CODES = re.compile(r"status codes: (\d+) 2xx")
H2LOAD_TRAFFIC = re.compile(
    r"traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers \(space savings "
    r"(-?[\d.]+)%\), \S+ \((\d+)\) data")


def header_args(name):
    args = []
    for key, value in HEADER_SETS[name]:
        args += ["-H", "%s: %s" % (key, value)]
    return args


def h2load(args, expect):
    """Runs h2load; the parsed summary, or BenchError when not every request
    succeeded with a 2xx."""
    cmd = ["h2load"] + [str(a) for a in args]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=H2LOAD_TIMEOUT,
                           preexec_fn=nginx_runner.die_with_parent)
    except subprocess.TimeoutExpired:
        raise BenchError("h2load did not finish in %ds: %s"
                         % (H2LOAD_TIMEOUT, shlex.join(cmd)))
    out = p.stdout.decode("utf-8", "replace")
    fin = H2LOAD_FINISHED.search(out)
    req = H2LOAD_REQUESTS.search(out)
    codes = H2LOAD_CODES.search(out)
    traffic = H2LOAD_TRAFFIC.search(out)
    ok = (p.returncode == 0 and fin and req and codes and traffic
          and int(req.group(4)) == expect and int(codes.group(1)) == expect)
    if not ok:
        raise BenchError("h2load: %s\n(exit %d) %s"
                         % (shlex.join(cmd), p.returncode, out[-1500:]))
    seconds = float(fin.group(1)) / {"s": 1, "ms": 1e3, "us": 1e6}[
        fin.group(2)]
    return {
        "cmd": cmd,
        "output": out,
        "seconds": seconds,
        "rps": float(fin.group(3)),
        "requests": expect,
        "header_bytes": int(traffic.group(2)),
        "savings": float(traffic.group(3)),
        "total_bytes": int(traffic.group(1)),
    }


def h2load_retry(args, expect):
    """One retry: on a shared machine a single run can fail for reasons
    that have nothing to do with either build."""
    try:
        return h2load(args, expect)
    except BenchError as e:
        log("retrying once after: %s" % str(e).splitlines()[0])
        time.sleep(1)
        return h2load(args, expect)


# ------------------------------------------------------------- workloads

def workloads(cfg):
    out = []
    for conn in ("warm", "cold"):
        for transport in cfg["transports"]:
            for loc in cfg["locations"]:
                for hs in cfg["header_sets"]:
                    out.append({"name": "%s-%s-%s-%s" % (loc, hs, transport,
                                                         conn),
                                "location": loc, "headers": hs,
                                "transport": transport, "conn": conn})
    return out


def load_args(cfg, w, server):
    url = server.url(LOCATIONS[w["location"]],
                     tls=w["transport"] == "tls")
    if w["conn"] == "warm":
        n = cfg["warm_n"]
        args = ["-n", n, "-c", 1, "-m", cfg["warm_m"]]
    else:
        n = cfg["cold_n"][w["transport"]]
        args = ["-n", n, "-c", n, "-m", 1]
    return args + header_args(w["headers"]) + [url], n


def throughput(cfg, servers, out_dir):
    ws = workloads(cfg)
    logs = out_dir / "h2load"
    logs.mkdir(parents=True, exist_ok=True)
    # warm-up: every location and transport once on each server (page
    # cache, TLS library state, lazily allocated pools); not recorded
    for w in ws:
        if w["conn"] == "warm" and w["headers"] == cfg["header_sets"][0]:
            for b in BUILDS:
                args, _ = load_args(dict(cfg, warm_n=200), w, servers[b])
                h2load_retry(args, 200)
    results = {w["name"]: dict(w, runs={b: [] for b in BUILDS}) for w in ws}
    files = {w["name"]: open(logs / (w["name"] + ".log"), "w") for w in ws}
    try:
        for pair in range(cfg["pairs"]):
            log("throughput: pair %d of %d over %d workloads"
                % (pair + 1, cfg["pairs"], len(ws)))
            for w in ws:
                for b in BUILDS:
                    args, n = load_args(cfg, w, servers[b])
                    pid, before = servers[b].worker_cpu()
                    r = h2load_retry(args, n)
                    pid1, after = servers[b].worker_cpu()
                    if pid1 != pid:
                        raise BenchError("%s: the worker changed (%d -> %d)"
                                         " during %s" % (b, pid, pid1,
                                                         w["name"]))
                    if before and after:
                        r["worker_cpu_ns"] = after["cpu"] - before["cpu"]
                        r["worker_wait_ns"] = after["wait"] - before["wait"]
                        r["worker_user_s"] = after["user"] - before["user"]
                        r["worker_sys_s"] = after["sys"] - before["sys"]
                        r["worker_minflt"] = after["minflt"] - before["minflt"]
                    f = files[w["name"]]
                    f.write("### pair %d, %s: %s\n%s"
                            % (pair + 1, b, shlex.join(r["cmd"]),
                               r["output"]))
                    if "worker_cpu_ns" in r:
                        f.write("worker %d: %.3f ms on a CPU, %.3f ms "
                                "waiting for one (schedstat); user %.2f s, "
                                "system %.2f s, %d minor page faults "
                                "(stat)\n"
                                % (pid, r["worker_cpu_ns"] / 1e6,
                                   r["worker_wait_ns"] / 1e6,
                                   r["worker_user_s"], r["worker_sys_s"],
                                   r["worker_minflt"]))
                    f.write("\n")
                    # the h2load log has every command and output
                    results[w["name"]].setdefault("commands", {})[b] = \
                        shlex.join(r.pop("cmd"))
                    del r["output"]
                    results[w["name"]]["runs"][b].append(r)
    finally:
        for f in files.values():
            f.close()
    return [results[w["name"]] for w in ws]


def header_curve(cfg, servers, out_dir):
    """Header bytes per response against requests per connection."""
    rows = []
    with open(out_dir / "h2load" / "curve-headers.log", "w") as f:
        for k in cfg["curve"]:
            row = {"k": k}
            for b in BUILDS:
                per = []
                for _ in range(cfg["curve_runs"]):
                    args = (["-n", k, "-c", 1, "-m", 1]
                            + header_args("browser")
                            + [servers[b].url(LOCATIONS["headers"])])
                    r = h2load_retry(args, k)
                    f.write("### K=%d, %s: %s\n%s\n" % (
                        k, b, shlex.join(r["cmd"]), r["output"]))
                    per.append(r["header_bytes"] / k)
                row[b] = statistics.median(per)
            rows.append(row)
    return rows


# ------------------------------------------------------------- callgrind

def cg_workloads(cfg):
    out = []
    for loc in cfg["locations"]:
        for hs in cfg["header_sets"]:
            out.append({"name": "%s-%s-warm" % (loc, hs), "location": loc,
                        "headers": hs, "conn": "warm",
                        "lo_hi": cfg["cg_warm"]})
    for loc in cfg["cg_locations_cold"]:
        for hs in cfg["cg_header_sets_cold"]:
            if hs in cfg["header_sets"]:
                out.append({"name": "%s-%s-cold" % (loc, hs),
                            "location": loc, "headers": hs, "conn": "cold",
                            "lo_hi": cfg["cg_cold"]})
    return out


def cg_load(w, server, n):
    """The fixed request sequence: n requests on one connection, one at a
    time (warm), or n connections of one request each, one after the other
    (cold).  Returns the h2load commands run."""
    url = server.url(LOCATIONS[w["location"]])
    hdrs = header_args(w["headers"])
    if w["conn"] == "warm":
        r = h2load_retry(["-n", n, "-c", 1, "-m", 1] + hdrs + [url], n)
        return [shlex.join(r["cmd"])]
    cmds = []
    for _ in range(n):
        r = h2load_retry(["-n", 1, "-c", 1, "-m", 1] + hdrs + [url], 1)
        cmds.append(shlex.join(r["cmd"]))
    return cmds[:1] + (["... (%d times)" % n] if n > 1 else [])


def cg_run(w, build, n, path, make_server=None, load=cg_load):
    """One server under callgrind (make_server(build, path), by default
    Server), one load (load(w, server, n): the commands run), its complete
    profile; one retry when the server hangs on shutdown or the profile is
    cut short."""
    make_server = make_server or (
        lambda b, out: Server(b, callgrind_out=out))
    for attempt in (1, 2):
        if path.exists():
            path.unlink()
        server = make_server(build, path)
        server.start()
        try:
            cmds = load(w, server, n)
        finally:
            clean = server.stop()
        profile = None
        if path.exists() and path.stat().st_size:
            profile = nginx_callgrind.Profile(str(path))
        if clean and profile and profile.complete:
            return profile, cmds
        why = "no complete profile in %s:\n%s" % (path, server.log_tail())
        if attempt == 1:
            log("callgrind %s %s N=%d failed, once more: %s"
                % (w["name"], build, n, why.splitlines()[0]))
    raise BenchError("callgrind %s %s: %s" % (w["name"], build, why))


def callgrind(cfg, out_dir, workloads=None, run=cg_run,
              region=nginx_callgrind.H2, raw_name="callgrind"):
    """Each workload (cg_workloads(cfg) by default) on each build, N_lo and
    N_hi requests (run(w, build, n, path): the profile and the commands),
    the difference per request; the profiles in build/bench/nginx/<raw_name>/,
    the summaries in out_dir/callgrind/."""
    raw = WORK / raw_name
    if raw.exists():
        shutil.rmtree(raw)
    raw.mkdir(parents=True)
    summaries = out_dir / "callgrind"
    summaries.mkdir(parents=True, exist_ok=True)
    sources = nginx_callgrind.SourceMap()
    rows = []
    for w in workloads if workloads is not None else cg_workloads(cfg):
        row = dict(w, builds={})
        for b in BUILDS:
            analyses = []
            for n in w["lo_hi"]:
                path = raw / ("%s-%s-%d.out" % (w["name"], b, n))
                profile, cmds = run(w, b, n, path)
                analyses.append(nginx_callgrind.Analysis(profile, sources,
                                                         region))
            lo, hi = w["lo_hi"]
            per = hi - lo
            delta = analyses[1].minus(analyses[0])
            title = "%s, %s: %s" % (w["name"], b, LOCATIONS[w["location"]])
            text = nginx_callgrind.summary_text(title, delta, per, w["lo_hi"])
            text += "\nload (N_hi run): %s\n" % "\n  ".join(cmds)
            (summaries / ("%s-%s.txt" % (w["name"], b))).write_text(text)
            annotate = subprocess.run(
                ["callgrind_annotate", "--inclusive=yes", "--threshold=98",
                 str(raw / ("%s-%s-%d.out" % (w["name"], b, hi)))],
                capture_output=True, text=True)
            lines = annotate.stdout.splitlines()
            (summaries / ("%s-%s.annotate.txt" % (w["name"], b))).write_text(
                "callgrind_annotate --inclusive=yes of the N_hi run "
                "(%d requests; start-up and shutdown included), the first "
                "%d lines of %d\n\n%s\n"
                % (hi, min(len(lines), 140), len(lines),
                   "\n".join(lines[:140])))
            row["builds"][b] = {
                "misses": nginx_callgrind.cache_misses(delta, per),
                "code": nginx_callgrind.code_lines(delta, per),
                "per_request": delta.total / per,
                "region": delta.region / per,
                "parts": nginx_callgrind.parts(delta, per),
                "breakdown": nginx_callgrind.breakdown(delta, per, limit=40),
                "hot_self": nginx_callgrind.hot_functions(delta, per),
                "warnings": sorted(delta.warnings),
                "filter_ranges": {k: v for k, v in
                                  delta.filter_ranges.items() if v},
            }
            log("callgrind %-22s %-6s %8.0f instructions/request, header "
                "compression %7.0f" % (w["name"], b, delta.total / per,
                                       delta.region / per))
        rows.append(row)
    return rows


# ---------------------------------------------------------------- phases

def served(cfg, out_dir, data):
    """Throughput, the header-bytes curve, the wire and the workers' memory,
    with both servers up all along."""
    servers = {b: Server(b) for b in BUILDS}
    try:
        for s in servers.values():
            s.start()
        data["throughput"] = throughput(cfg, servers, out_dir)
        log("header bytes per response against requests per connection")
        data["curve"] = header_curve(cfg, servers, out_dir)
        wire(cfg, servers, data)
        for b in BUILDS:
            data["memory"][b] = servers[b].worker_memory()
            data["problems"] += ["%s: %s" % (b, line) for line in
                                 servers[b].log_problems()]
    finally:
        stop_all()


def wire(cfg, servers, data):
    """The blocks on the wire: one warm /headers block field by field, and
    the first blocks of a connection on every workload."""
    for b in BUILDS:
        data["wire"][b] = nginx_wire.warm_block(
            servers[b].h2c_port, LOCATIONS["headers"], BROWSER_HEADERS)
    data["first_blocks"] = first_blocks(cfg, servers)


def wire_only(cfg, data):
    """wire() alone (--only wire): no load, both servers up for it."""
    servers = {b: Server(b) for b in BUILDS}
    try:
        for s in servers.values():
            s.start()
        wire(cfg, servers, data)
    finally:
        stop_all()


def first_blocks(cfg, servers):
    """The octets of the first FIRST_BLOCKS response blocks of a new h2c
    connection, each build, for every location and set of request headers:
    a cold connection's response is its first block."""
    out = []
    for loc in cfg["locations"]:
        for hs in cfg["header_sets"]:
            row = {"location": loc, "headers": hs}
            for b in BUILDS:
                row[b] = nginx_wire.block_sizes(
                    servers[b].h2c_port, LOCATIONS[loc], HEADER_SETS[hs],
                    FIRST_BLOCKS)
            out.append(row)
    return out


FIRST_BLOCKS = 3


def weight(cfg):
    """KiB of worker memory per connection held open (nginx_memory.py)."""
    return nginx_memory.weights(
        lambda b, size: Server(b, weight_size=size), BUILDS,
        LOCATIONS["headers"], BROWSER_HEADERS, repeats=cfg["weight_repeats"],
        count=cfg["weight_connections"], log=log)


def proxy_workload(quick):
    """interop/proxy_bench.py's workload (conf/proxy.conf in front of its
    origin, over TLS) with its callgrind counts; its PASS/FAIL lines are
    printed as it goes, and any FAIL fails the bench."""
    results, report = proxy_bench.run(proxy_bench.parse_args(
        ["--callgrind"] + (["--quick"] if quick else [])))
    if results.failed:
        raise BenchError("the reverse-proxy workload: %s"
                         % results.summary())
    return report


# ---------------------------------------------------------------- driver

def environment(args, cfg):
    def cmd(c):
        try:
            p = subprocess.run(c, capture_output=True, text=True, timeout=30)
            return (p.stdout + p.stderr).strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    codec = subprocess.run(
        "cat codec/src/*.cc codec/src/*.h codec/src/*.inc "
        "codec/include/hpack.h module/*.c module/*.h module/patches/*.patch "
        "2>/dev/null | sha256sum | cut -c1-12", shell=True, cwd=REPO,
        capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "command": args.command,
        "quick": args.quick,
        "commit": cmd(["git", "-C", str(REPO), "rev-parse", "--short",
                       "HEAD"]),
        "dirty": bool(cmd(["git", "-C", str(REPO), "status", "--porcelain",
                           "--untracked-files=no", "--", "codec", "module"])),
        "sources": codec,
        "nginx_stock": cmd([str(SNAPSHOT / "stock" / "nginx"), "-v"]),
        "nginx_line": VERSION,
        "h2load": cmd(["h2load", "--version"]).splitlines()[0],
        "valgrind": cmd(["valgrind", "--version"]),
        "openssl": ssl.OPENSSL_VERSION,
        "kernel": platform.release(),
        "cpu": "%s, %d cores" % (cpu, os.cpu_count() or 0),
        "loadavg_start": os.getloadavg(),
        "config": {k: v for k, v in cfg.items()},
    }


def main():
    global VERSION
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 2 pairs, h2c only, few requests")
    ap.add_argument("--only", choices=("throughput", "callgrind", "memory",
                                       "proxy", "wire", "h3"),
                    help="one phase (the report shows what was measured)")
    ap.add_argument("--pairs", type=int, help="A/B pairs per workload")
    ap.add_argument("--out", help="results directory (default "
                    "bench/results/<date>/, with --quick "
                    "build/bench/nginx/quick/)")
    ap.add_argument("--report", metavar="DIR",
                    help="only rebuild REPORT.md and the plots of DIR")
    ap.add_argument("--command", default="python3 -m bench.nginx_bench",
                    help="the command to show in the report")
    ap.add_argument("--version", default=VERSION,
                    help="the nginx line whose builds run (make nginx-VERSION)")
    ap.add_argument("--update-readme", action="store_true",
                    help="write the headline figures into README.md (make bench)")
    args = ap.parse_args()
    from bench import nginx_h3      # it imports this module: not above

    if args.report:
        nginx_report.write(Path(args.report), readme=(
            REPO / "README.md" if args.update_readme else None))
        return 0

    if args.version != VERSION:
        VERSION = args.version
        for b, variant in (("stock", "stock"), ("module", "hpack")):
            INSTALL[b] = BUILD / ("nginx-%s-%s" % (VERSION, variant))
        # README.md's headline is 1.26.3's
        args.update_readme = False

    cfg = dict(QUICK if args.quick else FULL)
    if args.pairs:
        cfg["pairs"] = args.pairs
    today = datetime.date.today().isoformat()
    if args.out:
        final = Path(args.out)
    elif args.quick:
        final = WORK / "quick"
    elif args.only == "h3":
        line, _ = nginx_h3.choose_line(VERSION)
        final = REPO / "bench" / "results" / (
            "%s-http3-nginx-%s" % (today, line or VERSION))
    elif args.only:
        final = WORK / args.only
    else:
        final = REPO / "bench" / "results" / (
            today if VERSION == "1.26.3" else today + "-nginx-" + VERSION)
    staging = WORK / "results-staging"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    start = time.monotonic()
    try:
        if args.only != "h3":
            snapshot()
    except BenchError as e:
        log("FAILED: %s" % e)
        return 1
    env = environment(args, cfg)
    data = {"environment": env, "throughput": [], "curve": [],
            "wire": {}, "first_blocks": [], "callgrind": [],
            "problems": [], "memory": {}, "weight": []}
    try:
        nginx_runner.certificate()
        if args.only in (None, "throughput"):
            served(cfg, staging, data)
        elif args.only == "wire":
            wire_only(cfg, data)
        if args.only in (None, "callgrind"):
            log("callgrind: each build, N_lo and N_hi requests per workload")
            data["callgrind"] = callgrind(cfg, staging)
        if args.only in (None, "memory"):
            log("weight: worker memory per connection, %d held open"
                % cfg["weight_connections"])
            data["weight"] = weight(cfg)
        if args.only in (None, "proxy") and VERSION != "1.26.3":
            log("the reverse-proxy workload runs on 1.26.3 only: left out")
        elif args.only in (None, "proxy"):
            log("the reverse-proxy workload (interop/proxy_bench.py)")
            data["proxy"] = proxy_workload(args.quick)
        if args.only in (None, "h3"):
            data["h3"] = nginx_h3.run(
                nginx_h3.QUICK if args.quick else nginx_h3.FULL, VERSION,
                staging)
    except KeyboardInterrupt as e:
        stop_all()
        log("interrupted (%s); partial output in %s" % (e, staging))
        return 130
    except BenchError as e:
        stop_all()
        log("FAILED: %s" % e)
        log("partial output in %s" % staging)
        return 1
    finally:
        stop_all()

    env["loadavg_end"] = os.getloadavg()
    env["seconds"] = round(time.monotonic() - start, 1)
    (staging / "results.json").write_text(json.dumps(data, indent=1) + "\n")
    if final.exists():
        shutil.rmtree(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(staging), str(final))
    readme = None
    if args.update_readme and not args.quick and not args.only:
        readme = REPO / "README.md"
    nginx_report.write(final, readme=readme)
    if data["weight"]:
        print("\n".join(nginx_memory.table(data["weight"])))
    log("done in %.0f s: %s" % (env["seconds"], final / "REPORT.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
