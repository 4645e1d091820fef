"""What the reverse-proxy tests, the browser test and the proxy benchmark
share: the origin (interop/upstream.py as a process), nginx proxies made
from conf/proxy.conf, what a client must see of an origin response after
nginx, and a parse of HPACK representations off the wire.

The servers reuse the harness's Server (nginx_runner.py: start in
the foreground, stop on exit, stale masters, ports, logs); only the
configuration differs: it is conf/proxy.conf itself with ports, paths and
table size substituted.
"""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from interop import harness, nginx_runner
from interop.harness import Failure, Results, Server


PROXY_CONF = harness.REPO / "conf" / "proxy.conf"
PROXY_WORK = harness.BUILD / "proxy-interop"

# the names conf/proxy.conf lists in hpack_never_index
CONF_NEVER_INDEX = ("x-api-key", "x-secret-token")


# ------------------------------------------------------------ the origin

class Origin:
    """interop/upstream.py in its own process; args: more of its options
    (--stories DIR)."""

    def __init__(self, port, log_dir, args=()):
        self.port = port
        self.args = list(args)
        self.log_path = Path(log_dir) / ("upstream-%d.log" % port)
        self.proc = None

    def _stop_stale(self):
        """An origin left by a run that was killed hard: same script, same
        port, its pid in our pid file."""
        nginx_runner.stop_stale(self.pid_path, "\0interop.upstream\0",
                                "\0%d\0" % self.port)

    def start(self):
        self.pid_path = self.log_path.with_suffix(".pid")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._stop_stale()
        if not nginx_runner.port_free(self.port):
            raise Failure("127.0.0.1:%d is taken: another run of the proxy "
                          "tests, or something else, listens there"
                          % self.port)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "interop.upstream", "--port",
             str(self.port)] + self.args, cwd=harness.REPO, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True)
        self.pid_path.write_text(str(self.proc.pid))
        if not nginx_runner.wait_port(self.port, self.proc):
            raise Failure("the origin (interop/upstream.py) did not start: "
                          + self.log_path.read_text()[-1000:])

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc = None
        self.log.close()

    def summary(self):
        try:
            return self.log_path.read_text().strip().splitlines()[-1]
        except (OSError, IndexError):
            return ""


# ------------------------------------------------------------ the proxies

def _sub(text, pattern, repl, count=1, flags=re.M):
    """re.subn that insists the pattern is there: when conf/proxy.conf
    changes shape, the tests say so instead of testing something else."""
    new, n = re.subn(pattern, repl, text, flags=flags)
    if (count and n != count) or (not count and n == 0):
        raise RuntimeError("conf/proxy.conf: %r matched %d times, expected %s"
                           % (pattern, n, count or "some"))
    return new


class ProxyServer(Server):
    """nginx running conf/proxy.conf.

    kind: "on" (build/nginx-hpack, the file as it is: hpack on, table 4096),
    "small" (the same, hpack_table_size 512), "mid" (16384), "big"
    (hpack_table_size 65536: a browser's whole table), "stock"
    (build/nginx-stock, no module, no hpack directives).  quic: the same
    port listens for QUIC too (HTTP/3, nginx 1.30.4 and later), and the
    module's servers encode HTTP/3 with it ("hpack_http3 on", the table
    hpack_http3_table_size's default).
    """

    TABLE = {"on": 4096, "small": 512, "mid": 16384, "big": 65536}
    LABELS = {"on": "proxy hpack-on", "small": "proxy hpack-on-table-512",
              "mid": "proxy hpack-on-table-16k",
              "big": "proxy hpack-on-table-64k", "stock": "proxy stock"}

    def __init__(self, kind, tls_port, origin_port, h2c_port=None,
                 work=PROXY_WORK, workers=1, access_log=True,
                 version="1.26.3", quic=False):
        super().__init__(version, "stock" if kind == "stock" else "on", 0)
        self.kind = kind
        self.tls_port = tls_port
        self.h2c_port = h2c_port
        self.origin_port = origin_port
        self.workers = workers
        self.log_requests = access_log
        self.quic = quic
        self.name = "proxy-" + kind
        self.label = self.LABELS[kind]
        if version != "1.26.3":
            self.label = "%s %s" % (version, self.label)
        if quic:
            self.label += " http3"
        self.prefix = Path(work) / kind

    @property
    def has_module(self):
        return self.kind != "stock"

    @property
    def hpack_on(self):
        return self.kind != "stock"

    @property
    def table_size(self):
        return self.TABLE.get(self.kind)

    @property
    def authority(self):
        return "localhost:%d" % self.tls_port

    def url(self, path, tls=True):
        return "https://127.0.0.1:%d%s" % (self.tls_port, path)

    def render(self):
        text = PROXY_CONF.read_text()
        text = _sub(text, r"^load_module\s+modules/ngx_http_hpack_module\.so;",
                    "load_module  %s;" % self.module if self.has_module
                    else "# (stock: no module)")
        text = _sub(text, r"^worker_processes\s+\d+;",
                    "worker_processes  %d;\n%s" % (
                        self.workers, nginx_runner.user_directive()))
        # the harness's names for the logs and the pid file
        text = _sub(text, r"^error_log\s+logs/proxy-error\.log\s+notice;",
                    "error_log  logs/error.log  info;")
        text = _sub(text, r"^pid\s+logs/proxy\.pid;", "pid  logs/nginx.pid;")
        text = _sub(text, r"access_log\s+logs/proxy-access\.log\s+proxy;",
                    "access_log  logs/access.log  proxy;" if self.log_requests
                    else "access_log  off;")
        listen = "listen       127.0.0.1:%d ssl;" % self.tls_port
        if self.quic:
            listen += ("\n        listen       127.0.0.1:%d quic;"
                       % self.tls_port)
        if self.h2c_port:
            listen += "\n        listen       127.0.0.1:%d;" % self.h2c_port
        text = _sub(text, r"listen\s+127\.0\.0\.1:8445 ssl;", listen)
        text = _sub(text, r"server\s+127\.0\.0\.1:8090;",
                    "server     127.0.0.1:%d;" % self.origin_port)
        text = _sub(text, r"\.\./build/tls/", str(nginx_runner.TLS_DIR) + "/",
                    count=2)
        if self.has_module:
            text = _sub(text, r"^(\s*)hpack_table_size\s+\d+;",
                        r"\g<1>hpack_table_size   %d;" % self.table_size
                        + ("\n\\g<1>hpack_http3        on;" if self.quic
                           else ""))
        else:
            text = _sub(text, r"^\s*hpack(_\w+)?\s[^;]*;\n", "", count=0)
            text = _sub(text, r"\$hpack_\w+", "-", count=0)
        self.write_conf(text)

    def access_records(self):
        """The access log as dicts: connection, requests, request, status,
        out_wire, out_plain (ints, None for "-")."""
        out = []
        pat = re.compile(r'^\S+ (\d+):(\d+) "([^"]*)" (\d+) (\S+) '
                         r'out=(\S+)/(\S+) in=(\S+)/(\S+) hits=(\S+)/(\S+) '
                         r'table=(\S+)$')

        def num(v):
            return None if v == "-" else int(v)
        for line in self.access_log_lines():
            m = pat.match(line)
            if not m:
                raise Failure("access log line not in the proxy format: %r"
                              % line)
            g = m.groups()
            out.append({"connection": int(g[0]), "requests": int(g[1]),
                        "request": g[2], "status": int(g[3]),
                        "upstream_status": g[4],
                        "out_wire": num(g[5]), "out_plain": num(g[6]),
                        "in_wire": num(g[7]), "in_plain": num(g[8]),
                        "out_hits": num(g[10]), "table": num(g[11])})
        return out


# -------------------------------------------- what nginx makes of a response

# Lines of an origin response that never reach an HTTP/2 client of
# proxy_pass (nginx 1.26 ngx_http_upstream.c, ngx_http_proxy_module.c):
#   hop-by-hop, dropped:    connection, keep-alive, transfer-encoding
#   replaced by nginx's:    server, date (proxy_hide_headers by default,
#                           unless proxy_pass_header)
#   hidden by default:      x-pad, x-accel-* (x-accel-* also act)
#   moved to the front:     content-type, content-length (nginx writes its
#                           own from the parsed values; none when the
#                           origin sent none, as with chunked bodies)
#   204 No Content:         content-type and content-length dropped
#                           (ngx_http_v2_header_filter)
DROPPED = {"connection", "keep-alive", "transfer-encoding", "server", "date",
           "x-pad", "x-accel-expires", "x-accel-redirect",
           "x-accel-limit-rate", "x-accel-buffering", "x-accel-charset",
           "content-type", "content-length"}

DATE_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|"
                     r"May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d "
                     r"GMT$")


def expected_headers(resp, server_value):
    """The response header list an HTTP/2 client of nginx must decode for
    the origin's Response, in order; the date (nginx's clock) as None."""
    out = [(":status", str(resp.status)), ("server", server_value),
           ("date", None)]
    def last(name):
        values = [v for n, v in resp.headers if n.lower() == name]
        return values[-1] if values else None
    if resp.status != 204:
        if last("content-type") is not None:
            out.append(("content-type", last("content-type")))
        if last("content-length") is not None:
            out.append(("content-length", last("content-length")))
    for name, value in resp.headers:
        if name.lower() not in DROPPED:
            out.append((name.lower(), value))
    return out


def as_text(headers):
    return [(n.decode("latin-1") if isinstance(n, bytes) else n,
             v.decode("latin-1") if isinstance(v, bytes) else v)
            for n, v in headers]


def short(headers):
    """A header list for a message: long values cut."""
    return [(n, v if v is None or len(v) <= 120
             else "%s...(%d bytes)" % (v[:60], len(v))) for n, v in headers]


def compare_headers(got, want, what):
    """got: decoded (name, value) list; want: expected_headers(); raises
    Failure with the first difference."""
    got = as_text(got)
    for i, (g, w) in enumerate(zip(got, want)):
        if w[0] == "date" and w[1] is None:
            if g[0] != "date" or not DATE_RE.match(g[1]):
                raise Failure("%s: field %d is %r, expected nginx's date"
                              % (what, i, short([g])[0]))
            continue
        if g != w:
            raise Failure("%s: field %d is %r, expected %r\n  got:  %r\n"
                          "  want: %r" % (what, i, short([g])[0],
                                          short([w])[0], short(got),
                                          short(want)))
    if len(got) != len(want):
        raise Failure("%s: %d fields, expected %d\n  got:  %r\n  want: %r"
                      % (what, len(got), len(want), short(got), short(want)))


def without_date(headers):
    return [(n, v) for n, v in as_text(headers) if n != "date"]


# ------------------------------------------------ representations on the wire

def start_all(results, origin, servers, running):
    """Starts the origin (None: it runs already), then every server of
    servers ({kind: ProxyServer}) as a test of its own (run whatever --only
    says); running gets the kinds that started.  running is filled in place
    so that the caller's finally stops whatever started, also when a start
    raises.  False when the origin did not start."""
    if origin is not None and not Results.run(
            results, "origin", "upstream_py_serves_http_1_1_on_127_0_0_1_%d"
            % origin.port, origin.start):
        return False
    for kind, server in servers.items():
        def start_server(server=server):
            why = server.missing()
            if why:
                raise Failure(why)
            server.start()
        if Results.run(results, server.label,
                       "nginx_starts_with_conf_proxy_conf", start_server):
            running[kind] = server
    return True


def representations(block):
    """The kind of each field representation in a header block, in order:
    "indexed" (1xxxxxxx), "incremental" (01xxxxxx, inserted), "without"
    (0000xxxx) or "never" (0001xxxx, never indexed); size updates skipped.
    A reference to the dynamic table (index > 61) is "dynamic".
    """
    short = {"incremental": "incremental", "never-indexed": "never",
             "without-indexing": "without"}
    kinds = []
    for kind, index, _, end, _ in harness.walk(block):
        if kind == "size-update":
            continue
        if end > len(block):
            raise Failure("a representation runs past its block: %s"
                          % block.hex())
        if kind == "indexed":
            kinds.append("dynamic" if index > 61 else "indexed")
        else:
            kinds.append(short[kind])
    return kinds


def must_never_index(name, value, conf_names=CONF_NEVER_INDEX):
    """The module's policy (docs/DIRECTIVES.md): which response fields must
    go out as "literal never indexed"."""
    if name in ("authorization", "proxy-authorization"):
        return True
    if name in ("cookie", "set-cookie") and len(value) < 20:
        return True
    return name in conf_names


BROWSER_HEADERS = [
    ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 "
                   "(KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"),
    ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,"
               "image/avif,image/webp,*/*;q=0.8"),
    ("accept-language", "en-US,en;q=0.9,de;q=0.8"),
    ("accept-encoding", "gzip, deflate, br"),
    ("sec-fetch-dest", "empty"),
    ("sec-fetch-mode", "cors"),
    ("sec-fetch-site", "same-origin"),
    ("cookie", "session=Zm9vYmFyYmF6cXV4cXV1eA; "
               "_ga=GA1.1.123456789.1700000000; theme=dark"),
]
