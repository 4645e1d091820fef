"""Cases 6, 7 and 8: bytes saved (h2load), memory over 125,000 requests on
one connection, and the module's access-log variables.
"""

import re
import subprocess
import time

from interop.harness import (RawH2, check, info, octets_but_date,
                             request_headers, rss_kib)
from interop.harness.tools import h2load

ORDER = ("on", "small", "off", "nomod", "stock")


# ------------------------------------------------------------------ case 6

def space_savings(server):
    rc, out, counts = h2load(["-n", "1000", "-c", "1", "-m", "1",
                              server.url("/headers")])
    check(counts[3] == 1000, "h2load: %d of 1000 succeeded" % counts[3])
    m = re.search(r"traffic: .*?, (\S+) \((\d+)\) headers \(space savings "
                  r"([\d.]+)%\)", out)
    check(m, "no space savings in the h2load output: %s" % out[-400:])
    return float(m.group(3)), int(m.group(2))


def savings_side_by_side(servers):
    got = {}
    for kind in ORDER:
        if kind in servers:
            got[kind] = space_savings(servers[kind])
    info("h2load -n 1000 -c 1 -m 1 /headers (8 security/cache headers + "
         "x-request-id), response header space savings:")
    for kind in ORDER:
        if kind in got:
            info("  %-22s %6.2f%%  (%d header bytes)"
                 % (servers[kind].label, got[kind][0], got[kind][1]))
    if "on" in got:
        check(got["on"][0] >= 90.0, "hpack on saves %.2f%%, expected at "
              "least 90%%" % got["on"][0])
    for kind in ("off", "nomod"):
        if kind in got and "stock" in got:
            check(abs(got[kind][0] - got["stock"][0]) < 1.0,
                  "%s saves %.2f%%, stock %.2f%%: not the stock encoder"
                  % (kind, got[kind][0], got["stock"][0]))


def register_savings(results, servers):
    if "on" not in servers:
        return
    results.run(servers["on"].label.split()[0] + " all",
                "response_header_space_savings_at_least_90pct_with_hpack_on",
                savings_side_by_side, servers)


# ------------------------------------------------------------------ case 7

TOTAL = 125000          # 10% = 12,500 (warm-up), 90% = 112,500


def rss_over_one_connection(server):
    """h2load -n 125000 -c 1 -m 50 on /tiny: RSS of the worker at 10% of
    the run (12,500 requests, the warm-up) and at 90% (100,000 requests
    later, same connection)."""
    worker = server.worker_pid()
    before = rss_kib(worker)
    p = subprocess.Popen(["h2load", "-n", str(TOTAL), "-c", "1", "-m", "50",
                          server.url("/tiny")], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1)
    samples = {}
    lines = []
    try:
        for line in p.stdout:
            lines.append(line)
            m = re.match(r"progress: (\d+)% done", line)
            if m and int(m.group(1)) in (10, 90):
                samples[int(m.group(1))] = rss_kib(worker)
        p.wait(300)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    out = "".join(lines)
    m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) "
                  r"succeeded, (\d+) failed, (\d+) errored", out)
    check(m and int(m.group(1)) == TOTAL, "h2load: %s"
          % (m.group(0) if m else out[-400:]))
    check(10 in samples and 90 in samples, "no h2load progress lines")
    after = rss_kib(worker)
    check(server.worker_pid() == worker, "the worker changed")
    growth = samples[90] - samples[10]
    return before, samples[10], samples[90], after, growth


def memory_flat(servers, tolerance=512):
    rows = {}
    for kind in ("on", "off", "stock"):
        if kind in servers:
            rows[kind] = rss_over_one_connection(servers[kind])
    info("worker RSS (KiB), h2load -n %d -c 1 -m 50 /tiny, one connection:"
         % TOTAL)
    info("  %-22s %8s %10s %10s %8s %8s" % ("server", "idle", "at 12.5k",
                                            "at 112.5k", "growth",
                                            "closed"))
    for kind, (b, s10, s90, a, g) in rows.items():
        info("  %-22s %8d %10d %10d %+8d %8d"
             % (servers[kind].label, b, s10, s90, g, a))
    for kind in ("on", "off"):
        if kind in rows:
            check(rows[kind][4] <= tolerance, "%s: the worker grew %d KiB "
                  "over 100,000 requests on one connection (tolerance %d)"
                  % (servers[kind].label, rows[kind][4], tolerance))


def register_memory(results, servers):
    if "on" not in servers:
        return
    results.run(servers["on"].label.split()[0] + " all",
                "worker_memory_flat_over_100000_requests_on_one_connection",
                memory_flat, servers)


# ------------------------------------------------------------------ case 8

LOG_LINE = re.compile(
    r'^(\d+):(\d+) "GET (\S+) HTTP/2.0" (\d+) in=(\S+)/(\S+) '
    r'out=(\S+)/(\S+) conn_in=(\S+)/(\S+) conn_out=(\S+)/(\S+) '
    r'hits=(\S+)/(\S+) table=(\S+)$')


def plain(headers):
    return sum(len(n) + len(v) for n, v in headers)


def log_entries(server, paths, timeout=5):
    """The access-log fields of each path (one request each)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {}
        for line in server.access_log_lines():
            m = LOG_LINE.match(line)
            if m and m.group(3) in paths:
                found[m.group(3)] = m.groups()
        if len(found) == len(paths) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def access_log_variables(server):
    c = RawH2(server.h2c_port)
    sent, got, paths = [], [], []
    try:
        for i in range(20):
            # one in five after an internal redirect, which clears the
            # request's module contexts: the variables must survive it
            path = "/headers%s?log=%d-%d" % (
                "-redirected" if i % 5 == 4 else "", server.h2c_port, i)
            headers = request_headers(server, path, [
                ("user-agent", "interop-log/1.0"), ("accept", "*/*"),
                ("x-h00", "value-%d" % (i % 3))])
            block = c.encode(headers)
            start = len(c.tap.blocks)
            r = c.wait([c.request_block(block)])[0]
            check(r.status == 200, "%s: status %s" % (path, r.status))
            out_block = c.tap.blocks[start][1]
            last_block = out_block
            sent.append((len(block), plain(headers)))
            got.append((len(out_block), plain(r.headers)))
            paths.append(path)
    finally:
        c.close()
    logs = log_entries(server, paths)
    check(len(logs) == len(paths), "%d of %d requests in %s"
          % (len(logs), len(paths), server.access_log))
    if not server.hpack_on:
        # the module's variables are not found without its codec
        for p in paths:
            f = logs[p]
            check(all(x == "-" for x in f[4:]), "hpack off, yet %s logs "
                  "%s" % (p, " ".join(f[4:])))
        info("hpack off: the variables log \"-\"")
        return
    conn_out = conn_in = 0
    for i, p in enumerate(paths):
        f = logs[p]
        in_wire, in_plain, out_wire, out_plain = map(int, f[4:8])
        conn_in += sent[i][0]
        conn_out += got[i][0]
        check((in_wire, in_plain) == sent[i], "%s: logged in=%d/%d, the "
              "client sent a %d-byte block of %d decoded bytes"
              % (p, in_wire, in_plain, sent[i][0], sent[i][1]))
        check((out_wire, out_plain) == got[i], "%s: logged out=%d/%d, the "
              "client received a %d-byte block of %d decoded bytes"
              % (p, out_wire, out_plain, got[i][0], got[i][1]))
        check(int(f[8]) == conn_in and int(f[10]) == conn_out,
              "%s: logged conn_in=%s conn_out=%s, the connection carried "
              "%d and %d block bytes" % (p, f[8], f[10], conn_in, conn_out))
        check(int(f[9]) >= int(f[8]) and int(f[11]) >= int(f[10]),
              "%s: decoded connection bytes below wire bytes" % p)
        check(int(f[14]) <= 4096 + 0, "%s: table=%s above 4096" % (p, f[14]))
    last = logs[paths[-1]]
    wire, dec = int(last[6]), int(last[7])
    # dates aside: the 20th response may be the first of a second
    check(octets_but_date(last_block) * 10 < dec, "warm connection: "
          "response header block %d bytes (%d with a literal date as one "
          "octet) for %d decoded (%.1f%% saved, expected over 90%%)"
          % (wire, octets_but_date(last_block), dec,
             100.0 * (1 - wire / dec)))
    check(int(last[12]) > 0 and int(last[13]) > 0, "hits=%s/%s on a warm "
          "connection" % (last[12], last[13]))
    first = logs[paths[0]]
    info("first request: in=%s/%s out=%s/%s; 20th: in=%s/%s out=%s/%s "
         "(%.1f%% saved) hits=%s/%s table=%s"
         % (first[4], first[5], first[6], first[7], last[4], last[5],
            last[6], last[7], 100.0 * (1 - wire / dec), last[12], last[13],
            last[14]))


def register_logvars(results, servers):
    for kind in ("on", "off"):
        if kind in servers:
            results.run(servers[kind].label, "access_log_hpack_variables_"
                        "match_the_bytes_on_the_wire", access_log_variables,
                        servers[kind])
