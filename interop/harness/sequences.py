"""Request blocks sent in order on one raw connection, each request's
outcome as a line of text (with what /echo says nginx saw), and the check
that the worker still serves a normal request afterwards."""

from interop.harness import Failure, RawH2, check, request_headers


def answer(c, sid):
    """The outcome of one request, with what /echo says nginx saw."""
    o = c.outcome(sid, timeout=1.5)
    r = c.responses[sid]
    if o.startswith("response") and r.headers:
        seen = []
        for n, v in r.headers:
            if n.startswith(b"x-echo-"):
                v = v.decode("latin-1")
                seen.append("%s=%s" % (n.decode()[7:], v if len(v) < 24
                                       else "%s..(%d)" % (v[:8], len(v))))
        o += " [%s]" % " ".join(seen)
        if r.status == 404:
            # nginx's own error page: its padding and gzip follow the
            # user-agent's class
            o += " %d octets%s" % (len(r.body), " gzip" if r.header(
                "content-encoding") == "gzip" else "")
    return o


def run_sequence(server, builders):
    c = RawH2(server.h2c_port, timeout=5)
    out = []
    try:
        for build in builders:
            block = build(server)
            cuts, pad = (), 0
            if isinstance(block, tuple):            # (block, cuts[, pad])
                block, cuts, pad = (block + (0,))[:3]
            sid = c.request_block(block, cuts, pad=pad)
            out.append(answer(c, sid))
            if not out[-1].startswith(("response", "RST_STREAM")):
                break
    finally:
        c.close()
    return out


def still_serves(server, worker):
    c = RawH2(server.h2c_port, timeout=5)
    try:
        r = c.get(request_headers(server, "/tiny"))
    except Failure as e:
        raise Failure("a normal request on a new connection failed "
                      "afterwards: %s" % e)
    finally:
        c.close()
    check(r.status == 200 and r.body == b"ok\n", "a normal request "
          "afterwards got %s %r" % (r.status, r.body))
    now = server.worker_pid()
    check(now == worker, "the worker changed from %d to %d (a crash?); "
          "error log: %s" % (worker, now, server.error_log_text()[-600:]))
