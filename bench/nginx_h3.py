"""make bench's HTTP/3 phase (make bench-h3 alone): stock nginx against the
module with "hpack_http3 on", the same locations of bench/conf/bench.conf
served over QUIC.

The line: the one being benched (--version) when its builds have the
HTTP/3 hooks (the patched binary exports ngx_http_v3_qpack_hooks, as
`config` finds it in the tree, and both binaries have
--with-http_v3_module, as interop/harness/h3.py checks), else 1.31.4's
(make nginx-1.31.4); without either, the phase is skipped with its reason.

The client: build/h3client (interop/h3client/h3client.c: ngtcp2 for QUIC,
nghttp3's QPACK encoder with a dynamic table of 4096 octets for the
requests, its own HTTP/3 framing), sending the browser request fields of
the HTTP/2 bench (nginx_bench.BROWSER_HEADERS) on every request; h2load
has no HTTP/3 on Debian 12.  Servers (h2c, and TLS over TCP and QUIC
over UDP): stock 19086 and 19449, module 19087 and 19450; under callgrind
19088-19089 and 19451-19452; the memory phase's 19090-19091 and
19453-19454; plus INTEROP_PORT_SHIFT.  Four parts:

1. octets: one connection of K requests, each sent once the previous one
   is answered; per response the field section (the HEADERS frame's
   payload) and the server's encoder-stream octets received since the
   previous response; the first response and the mean of the rest (warm);
2. instructions: each build under callgrind with N_lo and N_hi such
   requests on one connection, the difference per request; header
   compression by nginx_callgrind.H3;
3. worker CPU: pairs of h3client runs, stock then module, each one
   connection of R requests sent as fast as the server's stream limit
   lets them; the worker's CPU time around each run (/proc schedstat);
4. memory: a fresh server, one connection of two requests closed, the
   worker's VmRSS; then C connections held open (one h3client process
   each, two requests then a sleep) and VmRSS again: the difference over C;
   stock, the module, and the module with hpack_http3_table_size 0 (no
   encoder table, no encoder stream).
"""

import json
import os
import shlex
import statistics
import subprocess
import time

from bench import nginx_bench as nb
from bench import nginx_callgrind, nginx_memory
from interop import harness, nginx_runner
from interop.harness.h3 import frames

H3CLIENT = os.environ.get("H3CLIENT") or str(nginx_runner.BUILD / "h3client")
FALLBACK = "1.31.4"
SNAPSHOT = nb.WORK / "bin-h3"
# (h2c, TLS) ports per kind of server and build; QUIC on the TLS one's
# number over UDP
PORTS = {kind: {b: (h2c + i + harness.PORT_SHIFT, tls + i + harness.PORT_SHIFT)
                for i, b in enumerate(("stock", "module"))}
         for kind, h2c, tls in (("load", 19086, 19449),
                                ("callgrind", 19088, 19451),
                                ("memory", 19090, 19453))}

FULL = {
    "locations": ["headers", "tiny", "static"],
    "octet_requests": 20,
    "cg_warm": (100, 2100),
    "cg_locations": ["headers", "tiny"],
    "pairs": 9,
    "cpu_requests": 2000,
    "cpu_locations": ["headers", "tiny"],
    "memory_connections": 200,
    "memory_repeats": 3,
}
QUICK = dict(FULL, **{
    "locations": ["headers", "tiny"],
    "octet_requests": 5,
    "cg_warm": (5, 25),
    "cg_locations": ["headers"],
    "pairs": 1,
    "cpu_requests": 300,
    "cpu_locations": ["headers"],
    "memory_connections": 20,
    "memory_repeats": 1,
})


def hooked(version):
    """None when both builds of version run HTTP/3 and the patched one
    has the QPACK hooks, else why not."""
    patch = nginx_runner.REPO / "module" / "patches" / (
        "nginx-%s-hpack-hooks.patch" % version)
    if "ngx_http_v3_qpack_hooks" not in (
            patch.read_text() if patch.exists() else ""):
        return "%s has no HTTP/3 hooks" % patch.relative_to(
            nginx_runner.REPO)
    for variant in ("stock", "hpack"):
        binary = nginx_runner.install_dir(version, variant) / "sbin" / "nginx"
        if not binary.exists():
            return "%s not built (make nginx-%s)" % (binary, version)
        out = subprocess.run([str(binary), "-V"], capture_output=True,
                             text=True).stderr
        if "--with-http_v3_module" not in out:
            return "%s built without --with-http_v3_module" % binary
    binary = nginx_runner.install_dir(version, "hpack") / "sbin" / "nginx"
    syms = subprocess.run(["nm", "-D", "--defined-only", str(binary)],
                          capture_output=True, text=True).stdout
    if "ngx_http_v3_qpack_hooks" not in syms:
        return "%s has no HTTP/3 hooks (ngx_http_v3_qpack_hooks)" % binary
    return None


def choose_line(version):
    """(the line whose builds run, None), (FALLBACK, why not version's) or
    (None, why none can)."""
    why = hooked(version)
    if why is None:
        return version, None
    fallback = hooked(FALLBACK) if version != FALLBACK else why
    if fallback is None:
        return FALLBACK, why
    return None, "%s: %s; %s: %s" % (version, why, FALLBACK, fallback)


def snapshot(line):
    nb.snapshot({b: nginx_runner.install_dir(line, v) for b, v in
                 (("stock", "stock"), ("module", "hpack"))}, SNAPSHOT, line)


class H3Server(nb.Server):
    """One build with a quic listener: kind "load", "callgrind" (under
    valgrind, callgrind_out its profile) or "memory"."""

    def __init__(self, build, line, kind="load", callgrind_out=None,
                 table=None):
        super().__init__(build, callgrind_out=callgrind_out)
        self.table = table
        self.h2c_port, self.tls_port = PORTS[kind][build]
        self.binary = SNAPSHOT / build / "nginx"
        self.module = SNAPSHOT / build / nginx_runner.MODULE_SO
        self.prefix = nb.WORK / ("h3-%s-%s" % (kind, build))
        self.label = "%s (HTTP/3, %s)" % (build, kind)
        self.version = line
        self.kind = kind
        # instructions only: no cache simulation, half the time
        self.wrapper = [a for a in self.wrapper
                        if a not in ("--cache-sim=yes", "--dump-instr=yes")]

    def customize(self, subst):
        subst["QUIC"] = "        listen       127.0.0.1:%d quic;" % self.tls_port
        if self.kind == "memory":
            # nginx closes an HTTP/3 connection without requests after
            # keepalive_timeout: the held ones must outlast their start-up
            subst["QUIC"] += "\n        keepalive_timeout  600s;"
        if self.build == "module":
            subst["HPACK"] += "\n    hpack_http3  on;"
            if self.table is not None:
                subst["HPACK"] += "\n    hpack_http3_table_size  %d;" % (
                    self.table)


# --------------------------------------------------------------- h3client

def request_line(location):
    return "request %s %s" % (nb.LOCATIONS[location], " ".join(
        "%s: %s" % kv for kv in nb.BROWSER_HEADERS))


def sequential(location, n):
    """n requests on one connection, each once the previous is answered."""
    return (request_line(location) + "\nwait\n") * n


def command(server, timeout):
    return [H3CLIENT, "-t", str(timeout), "127.0.0.1", str(server.tls_port)]


def h3client(server, script, expect, timeout=30):
    """One h3client run of script; its response events, each checked to be
    a 200 with no QPACK error, and exactly expect of them."""
    cmd = command(server, timeout)
    try:
        p = subprocess.run(cmd, input=script.encode(), capture_output=True,
                           timeout=timeout * 4 + 60,
                           preexec_fn=nginx_runner.die_with_parent)
    except subprocess.TimeoutExpired:
        raise nb.BenchError("h3client did not finish: %s" % shlex.join(cmd))
    out = p.stdout.decode("utf-8", "replace")
    events = [json.loads(line) for line in out.splitlines()
              if line.startswith("{")]
    responses = [e for e in events if e["event"] == "response"]
    bad = [e for e in events if e["event"] not in ("response", "close")]
    close = [e for e in events if e["event"] == "close"]
    if (p.returncode != 0 or bad or len(responses) != expect
            or any(r["status"] != 200 for r in responses)
            or len(close) != 1 or close[0]["by"] != "client"):
        raise nb.BenchError("h3client on %s: exit %d, %d responses of %d, "
                            "%s\n%s" % (server.label, p.returncode,
                                        len(responses), expect,
                                        (bad + close)[:3],
                                        p.stderr.decode()[-800:]))
    return responses


def section_octets(response):
    """The payload octets of the response's HEADERS frame (its field
    section; the frame's type and length octets not counted)."""
    return len(frames(bytes.fromhex(response["sections"][0]["octets"]))[0][1])


# ----------------------------------------------------------------- octets

def octets(cfg, servers):
    rows = []
    k = cfg["octet_requests"]
    for loc in cfg["locations"]:
        row = {"location": loc, "requests": k}
        for b, server in servers.items():
            rs = h3client(server, sequential(loc, k), k)
            sections = [section_octets(r) for r in rs]
            enc = [r["encoder_stream"] for r in rs]
            per_enc = [e - p for e, p in zip(enc, [0] + enc[:-1])]
            row[b] = {"sections": sections, "encoder": per_enc,
                      "first": {"section": sections[0],
                                "encoder": per_enc[0]},
                      "warm": {"section": statistics.mean(sections[1:]),
                               "encoder": statistics.mean(per_enc[1:])}}
            for kind in ("first", "warm"):
                row[b][kind]["sum"] = (row[b][kind]["section"]
                                       + row[b][kind]["encoder"])
        rows.append(row)
        nb.log("h3 octets %-8s stock first %d warm %.1f, module first %d "
               "(+%d encoder) warm %.1f (+%.1f)" % (
                   loc, row["stock"]["first"]["section"],
                   row["stock"]["warm"]["sum"],
                   row["module"]["first"]["section"],
                   row["module"]["first"]["encoder"],
                   row["module"]["warm"]["section"],
                   row["module"]["warm"]["encoder"]))
    return rows


# -------------------------------------------------------------- callgrind

def cg_load(w, server, n):
    h3client(server, sequential(w["location"], n), n, timeout=120)
    return ["%s < (%d x: %s; wait)" % (shlex.join(command(server, 120)), n,
                                        request_line(w["location"]))]


def callgrind(cfg, line, out_dir):
    workloads = [{"name": "h3-%s-browser-warm" % loc, "location": loc,
                  "headers": "browser", "conn": "warm",
                  "lo_hi": cfg["cg_warm"]} for loc in cfg["cg_locations"]]

    def run(w, b, n, path):
        return nb.cg_run(w, b, n, path, load=cg_load,
                         make_server=lambda b, out: H3Server(
                             b, line, "callgrind", callgrind_out=out))
    return nb.callgrind(cfg, out_dir, workloads, run, nginx_callgrind.H3,
                        "callgrind-h3")


# -------------------------------------------------------------------- cpu

def cpu(cfg, servers, out_dir):
    n = cfg["cpu_requests"]
    rows = {loc: {"location": loc, "requests": n,
                  "runs": {b: [] for b in servers}}
            for loc in cfg["cpu_locations"]}
    with open(out_dir / "h3-cpu.log", "w") as f:
        for loc in cfg["cpu_locations"]:          # warm-up, not recorded
            for b, server in servers.items():
                h3client(server, sequential(loc, 20), 20)
        for pair in range(cfg["pairs"]):
            nb.log("h3 worker CPU: pair %d of %d" % (pair + 1, cfg["pairs"]))
            for loc in cfg["cpu_locations"]:
                script = (request_line(loc) + "\n") * n + "wait\n"
                for b, server in servers.items():
                    pid, before = server.worker_cpu()
                    t0 = time.monotonic()
                    h3client(server, script, n, timeout=60)
                    seconds = time.monotonic() - t0
                    pid1, after = server.worker_cpu()
                    if pid1 != pid or not before or not after:
                        raise nb.BenchError("%s: the worker changed"
                                            % server.label)
                    run = {"seconds": seconds, "rps": n / seconds,
                           "cpu_us": (after["cpu"] - before["cpu"]) / n / 1e3,
                           "user_s": after["user"] - before["user"],
                           "sys_s": after["sys"] - before["sys"]}
                    rows[loc]["runs"][b].append(run)
                    f.write("pair %d, %s, %s: %s < (%d x %s; wait): %.3f s, "
                            "worker %.2f us CPU per request, user %.2f s, "
                            "system %.2f s\n" % (
                                pair + 1, loc, b,
                                shlex.join(command(server, 60)), n,
                                nb.LOCATIONS[loc], seconds, run["cpu_us"],
                                run["user_s"], run["sys_s"]))
    out = []
    for loc in cfg["cpu_locations"]:
        r = rows[loc]
        s, m = r["runs"]["stock"], r["runs"]["module"]
        ratios = [b["cpu_us"] / a["cpu_us"] for a, b in zip(s, m)]
        r.update({"stock_us": statistics.median(x["cpu_us"] for x in s),
                  "module_us": statistics.median(x["cpu_us"] for x in m),
                  "ratio": statistics.median(ratios),
                  "ratio_min": min(ratios), "ratio_max": max(ratios)})
        nb.log("h3 worker CPU %-8s stock %.2f us, module %.2f us per "
               "request (%.2fx)" % (loc, r["stock_us"], r["module_us"],
                                    r["ratio"]))
        out.append(r)
    return out


# ----------------------------------------------------------------- memory

def hold(server, count, location, batch=16):
    """count h3client processes, each one connection of two requests then
    asleep, with PINGs every 5 s against the idle timeout; returned once
    every one has had both answers.  Started batch at a time."""
    script = "keep-alive 5000\n" + sequential(location, 2) + "sleep 300000\n"
    procs = []
    try:
        while len(procs) < count:
            started = []
            for _ in range(min(batch, count - len(procs))):
                p = subprocess.Popen(command(server, 30),
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL,
                                     preexec_fn=nginx_runner.die_with_parent)
                p.stdin.write(script.encode())
                p.stdin.close()
                started.append(p)
                procs.append(p)
            for p in started:
                answered = 0
                while answered < 2:
                    line = p.stdout.readline()
                    if not line:
                        raise nb.BenchError("an h3client of %d on %s: %d "
                                            "answers" % (count, server.label,
                                                         answered))
                    answered += b'"event":"response"' in line
    except BaseException:
        release(procs)
        raise
    return procs


def release(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()
        p.stdout.close()


# the builds measured for memory: (build, hpack_http3_table_size or None
# for its default); the module at 0 has no encoder table and opens no
# encoder stream, which sets the part of the difference they make apart
MEMORY_BUILDS = [("stock", None), ("module", None), ("module", 0)]


def memory(cfg, line):
    count = cfg["memory_connections"]
    nginx_memory.raise_fd_limit(2 * count)
    rows = []
    for b, table in MEMORY_BUILDS:
        runs = []
        for _ in range(cfg["memory_repeats"]):
            server = H3Server(b, line, "memory", table=table)
            server.start()
            try:
                h3client(server, sequential("headers", 2), 2)
                before = nginx_memory.worker_rss(server)
                procs = hold(server, count, "headers")
                try:
                    after = nginx_memory.worker_rss(server)
                    gone = sum(p.poll() is not None for p in procs)
                    if gone:
                        raise nb.BenchError("%s: %d of %d h3client processes"
                                            " ended early" % (server.label,
                                                              gone, count))
                finally:
                    release(procs)
                problems = server.log_problems()
            finally:
                server.stop()
            if problems:
                raise nb.BenchError("%s: %s" % (server.label, problems[0]))
            runs.append((after - before) / count)
        rows.append({"build": b, "table": table,
                     "kib": statistics.median(runs), "runs": runs,
                     "connections": count})
        nb.log("h3 memory %-6s%s %.2f KiB per warm connection (%s)" % (
            b, "" if table is None else " (table %d)" % table,
            rows[-1]["kib"], ", ".join("%.2f" % r for r in runs)))
    return rows


# ------------------------------------------------------------------ phase

def run(cfg, version, out_dir):
    """The phase: its results for results.json ("h3"), or {"skipped":
    why} when no line has HTTP/3 builds with the hooks."""
    line, why = choose_line(version)
    if line is None:
        nb.log("SKIP: the HTTP/3 phase: %s" % why)
        return {"skipped": why}
    snapshot(line)
    if not os.access(H3CLIENT, os.X_OK):
        nb.log("SKIP: the HTTP/3 phase: %s not built (make h3client)"
               % H3CLIENT)
        return {"skipped": "%s not built (make h3client)" % H3CLIENT}
    t0 = time.monotonic()
    nb.log("HTTP/3 on nginx %s, h3client" % line)
    data = {"line": line, "benched": version, "not_benched": why,
            "config": cfg, "client": "build/h3client (ngtcp2 "
            "%s, nghttp3's QPACK encoder, table 4096)" % client_versions(),
            "problems": []}
    servers = {b: H3Server(b, line) for b in nb.BUILDS}
    try:
        for s in servers.values():
            s.start()
        data["octets"] = octets(cfg, servers)
        data["cpu"] = cpu(cfg, servers, out_dir)
        for b in nb.BUILDS:
            data["problems"] += ["%s: %s" % (servers[b].label, p)
                                 for p in servers[b].log_problems()]
    finally:
        nb.stop_all()
    nb.log("h3 callgrind: each build, N_lo and N_hi requests")
    data["callgrind"] = callgrind(cfg, line, out_dir)
    nb.log("h3 memory: %d connections held open" % cfg["memory_connections"])
    data["memory"] = memory(cfg, line)
    data["seconds"] = round(time.monotonic() - t0, 1)
    nb.log("the HTTP/3 phase took %.0f s" % data["seconds"])
    return data


def client_versions():
    return " / nghttp3 ".join(
        subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                       capture_output=True, text=True).stdout or "?"
        for pkg in ("libngtcp2-dev", "libnghttp3-dev"))

