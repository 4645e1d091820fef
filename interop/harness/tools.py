"""The output of the real clients the tests run (nghttp -nv, h2load), read
back into numbers and header lists."""

import re

from interop.harness import Failure, run_tool


def parse_nghttp(out):
    """nghttp -nv output: {stream id: {"path", "headers", "sensitive"}}."""
    streams = {}
    current = None
    for line in out.splitlines():
        m = re.search(r"send HEADERS frame <.*stream_id=(\d+)>", line)
        if m:
            current = int(m.group(1))
            streams[current] = {"path": None, "headers": [],
                                "sensitive": set()}
            continue
        m = re.match(r"^\s+:path: (.*)$", line)
        if m and current is not None and streams[current]["path"] is None:
            streams[current]["path"] = m.group(1)
            continue
        m = re.search(r"recv \(stream_id=(\d+)(, sensitive)?\) ([^:]+|:\w+): "
                      r"(.*)$", line)
        if m:
            s = streams.setdefault(int(m.group(1)),
                                   {"path": None, "headers": [],
                                    "sensitive": set()})
            s["headers"].append((m.group(3), m.group(4)))
            if m.group(2):
                s["sensitive"].add(m.group(3))
            continue
        if line.startswith("["):
            current = None
    return streams


H2LOAD_REQUESTS = re.compile(
    r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
    r"(\d+) failed, (\d+) errored, (\d+) timeout")


def h2load(args):
    """h2load args: its exit status, its output and its request counts
    (total, started, done, succeeded, failed, errored, timeout)."""
    rc, out = run_tool(["h2load"] + args, timeout=300)
    m = H2LOAD_REQUESTS.search(out)
    if not m:
        raise Failure("h2load exited %d without a summary: %s"
                      % (rc, out[-800:]))
    return rc, out, [int(x) for x in m.groups()]
