"""The HTTP/3 servers of interop/conf/h3.conf, one per kind, as run_h3.py
and run_h3_hostile.py start them, what their /security answers, and the
frames of a stream."""

import argparse
import signal
import ssl
import subprocess
import urllib.request

from interop import harness, nginx_runner
from interop.harness import (PORT_SHIFT, WORK, Failure, Filtered, Results,
                             check, no_crash_or_alert, stop_on_sigterm,
                             version_at_least)
from interop.harness.origins import HintsOrigin, early_hints_supported
from interop.harness.responses import SECURITY

TEMPLATE = nginx_runner.REPO / "interop" / "conf" / "h3.conf"
# every line with HTTP/3 (1.25 and later)
LINES = tuple(v for v in nginx_runner.LINES if version_at_least(v, 1, 25))
KINDS = ("on", "small", "off", "nomod", "stock")
LABELS = {"on": "h3-on", "small": "h3-on-table-512", "off": "h3-off",
          "nomod": "no-module", "stock": "stock"}
# UDP and TCP, one port per server, beside the suite's 18080+/18443+
BASE_PORT = 18560
# the servers with an hpack_status location (run_h3.py reads them)
STATUS_KINDS = ("small", "off")
STATUS = """
        location = /status {
            hpack_status;
        }
        location = /status.json {
            hpack_status  json;
        }
"""


class H3Server(nginx_runner.Nginx):
    error = Failure

    def __init__(self, version, kind):
        variant = "stock" if kind == "stock" else "hpack"
        install = nginx_runner.install_dir(version,
                                           harness.INSTALLS[variant])
        work = "h3-%s-%s" % (version, kind)
        port = BASE_PORT + PORT_SHIFT + KINDS.index(kind)
        if harness.SANITIZED:
            # the sanitizer build: ports and directories of its own, a
            # graceful stop so that LeakSanitizer runs
            work = "h3-%s-asan-%s" % (version, kind)
            port += len(KINDS)
            self.stop_signal = signal.SIGQUIT
            self.stop_timeout = 60
        super().__init__(install / "sbin" / "nginx", WORK / work,
                         "%s %s" % (version, LABELS[kind]), tls_port=port,
                         version=version)
        self.kind = kind
        self.variant = variant
        self.module = install / "modules" / nginx_runner.MODULE_SO
        self.extra = ""             # more of the http{} block
        self.status = kind in STATUS_KINDS   # hpack_status locations
        self.runs = []              # [(paths, streams)] of every gtlsclient

    has_module = property(lambda self: self.kind in ("on", "small", "off"))
    qpack_on = property(lambda self: self.kind in ("on", "small"))

    def missing(self):
        if not self.binary.exists():
            return "%s not built (make %s NGINX_VERSION=%s)" % (
                self.binary, "nginx" if self.variant == "stock"
                or not harness.SANITIZED else "nginx-asan", self.version)
        out = subprocess.run([str(self.binary), "-V"], capture_output=True,
                             text=True).stderr
        if "--with-http_v3_module" not in out:
            return "%s built without --with-http_v3_module" % self.binary
        return None

    def render(self):
        subst = self.base_subst(self.module if self.has_module else None)
        subst["HINTS_ORIGIN"] = str(HintsOrigin.shared().port)
        subst["EARLY_HINTS"] = ("            early_hints         $http3;"
                                if early_hints_supported(self.version)
                                else "")
        subst["HPACK_DIRECTIVES"] = {
            "on": "    hpack_http3  on;\n",
            "small": "    hpack_http3  on;\n"
                     "    hpack_http3_table_size  512;\n",
            "off": "    hpack_http3  off;\n",
        }.get(self.kind, "") + self.extra
        subst["STATUS"] = STATUS if self.status else ""
        self.write_conf(nginx_runner.render(TEMPLATE, subst))

    def page(self, path):
        """The page over HTTPS/1.1: (content type, text)."""
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        url = "https://127.0.0.1:%d%s" % (self.tls_port, path)
        with urllib.request.urlopen(url, timeout=10, context=ctx) as r:
            return r.headers["Content-Type"], r.read().decode()


def varint(data, pos):
    n = 1 << (data[pos] >> 6)
    v = data[pos] & 0x3f
    for i in range(1, n):
        v = (v << 8) | data[pos + i]
    return v, pos + n


def frames(data):
    """(type, payload) of an HTTP/3 request stream's frames."""
    pos, out = 0, []
    while pos < len(data):
        t, pos = varint(data, pos)
        n, pos = varint(data, pos)
        out.append((t, bytes(data[pos:pos + n])))
        pos += n
    return out


def security_fields(fields):
    """What GET /security answers, field for field, given the response's
    own fields for the two that vary (server, date)."""
    date = [v for n, v in fields if n == "date"]
    check(len(date) == 1, "no single date field: %s" % fields)
    check(len(fields) > 1 and fields[1][1].startswith("nginx"),
          "no nginx server field second: %s" % fields[:2])
    return [(":status", "200"), ("server", fields[1][1]),
            ("date", date[0]), ("content-type", "application/octet-stream"),
            ("content-length", "9")] + SECURITY


def suite(doc, prog):
    """An HTTP/3 suite's command line (--version, --only) read, SIGTERM
    made to stop it as Ctrl-C does, the test certificate made: (the
    arguments, the suite's results)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--version", default="1.31.4", choices=LINES)
    ap.add_argument("--only", help="run the tests whose names match")
    args = ap.parse_args()
    stop_on_sigterm(prog)
    nginx_runner.certificate()
    return args, Filtered(args.only)


def start_servers(results, version, kinds, running, needs=None,
                  configure=None):
    """Starts the servers of kinds into running (kind: server), each as the
    test nginx_starts_with_http3, configure(server) first; one that cannot
    run (its build missing, or the reason needs() gives) fails (a runner
    has checked harness.line_absent() first).  The caller stops what
    running holds, also when this raises."""
    for kind in kinds:
        server = H3Server(version, kind)
        if configure:
            configure(server)

        def start_server(server=server):
            why = server.missing() or (needs and needs())
            if why:
                raise Failure(why)
            server.start()
        if Results.run(results, server.label, "nginx_starts_with_http3",
                       start_server):
            running[kind] = server


def check_logs(results, running):
    for s in running.values():
        Results.run(results, s.label, "error_log_has_no_crash_or_alert",
                    no_crash_or_alert, s, 0)
