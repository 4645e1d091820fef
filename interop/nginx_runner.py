"""Running nginx for the tests and the benchmarks: the interop suite
(interop/harness/), the reverse-proxy tests and benchmark
(interop/harness/proxy.py) and make bench (bench/nginx_bench.py) start
their servers through Nginx here.

An Nginx is one nginx in the foreground (-g 'daemon off;') under a prefix
of its own, so that the runner owns the master's pid: the configuration is
rendered from a template, a master left by a run killed hard is found by
its pid file and stopped, the ports are probed before the start and the
server is ready when each of them accepts; stop() ends it, and the kernel
sends it SIGTERM when the runner dies (PR_SET_PDEATHSIG).  Everything
listens on 127.0.0.1 only.

    python3 -m interop.nginx_runner certificate
                        makes the certificate, prints its directory
                        (scripts/run-nginx.sh)
    python3 -m interop.nginx_runner free-port
                        prints a port nothing listens on
"""

import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
# the one certificate of every server here and of scripts/run-nginx.sh
# (conf/*.conf name it ../build/tls/, from conf/)
TLS_DIR = BUILD / "tls"
MODULE_SO = "ngx_http_hpack_module.so"
# the nginx lines the module supports (module/nginx.mk NGINX_LINES)
LINES = ("1.22.1", "1.26.3", "1.28.3", "1.30.4", "1.31.4")
# those whose source comes from ../shared/nginx (scripts/nginx-source.sh),
# absent from a checkout without it; the others come from Debian
SHARED_LINES = ("1.28.3", "1.30.4", "1.31.4")


def install_dir(version, variant):
    """Where make installs the variant ("stock", "hpack", "hpack-asan"...)
    of the line version: build/nginx-<variant> on 1.26.3,
    build/nginx-<version>-<variant> on the others (module/nginx.mk's
    nginx_prefix)."""
    if version == "1.26.3":
        return BUILD / ("nginx-" + variant)
    return BUILD / ("nginx-%s-%s" % (version, variant))


class NginxError(RuntimeError):
    """A server could not be started, found or stopped."""


# ------------------------------------------------------------ certificate

def certificate(tls_dir=TLS_DIR):
    """A self-signed ECDSA P-256 certificate for localhost and 127.0.0.1 in
    tls_dir (cert.pem, key.pem), made when missing or of another key type.
    P-256: its handshake is cheap, so that a cold TLS connection of the
    benchmark measures more than the signature; every client here speaks
    it."""
    cert, key = tls_dir / "cert.pem", tls_dir / "key.pem"
    if cert.exists() and key.exists() and _is_ec(cert):
        return tls_dir
    tls_dir.mkdir(parents=True, exist_ok=True)
    new_cert, new_key = cert.with_suffix(".new"), key.with_suffix(".new")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-days", "3650",
         "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(new_key), "-out", str(new_cert)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for f in (new_cert, new_key):
        f.chmod(0o644)          # read by workers that run as nobody
    os.replace(new_key, key)
    os.replace(new_cert, cert)
    return tls_dir


def source_absent(version):
    """scripts/nginx-source.sh's exit 77: the line's source is absent (no
    ../shared/nginx/nginx-VERSION.tar.gz).  Debian's lines never are."""
    if version not in SHARED_LINES:
        return False
    rc = subprocess.run([str(REPO / "scripts" / "nginx-source.sh"), version],
                        stdout=subprocess.DEVNULL).returncode
    return rc == 77


def _is_ec(cert):
    p = subprocess.run(["openssl", "x509", "-in", str(cert), "-noout",
                        "-text"], capture_output=True, text=True)
    return p.returncode == 0 and "id-ecPublicKey" in p.stdout


# ------------------------------------------------------------------ ports

def port_free(port):
    """True when nothing listens on 127.0.0.1:port (TIME_WAIT of an earlier
    run does not count: SO_REUSEADDR)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ports_accept(ports):
    """True when a TCP connection to each of 127.0.0.1's ports succeeds."""
    for port in ports:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
        except OSError:
            return False
    return True


def wait_port(port, proc=None, timeout=10):
    """Waits until 127.0.0.1:port accepts; False on timeout or when proc
    exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        if ports_accept((port,)):
            return True
        time.sleep(0.05)
    return False


# -------------------------------------------------------------- processes

_PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the child (preexec_fn): SIGTERM when the runner dies, whatever
    the way."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(
            _PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def stop_stale(pidfile, *marks):
    """SIGTERM the process whose pid is in pidfile when its command line
    holds every one of marks (a server of ours left by a run that was
    killed hard), and wait up to 10 s for it to go."""
    try:
        pid = int(Path(pidfile).read_text().strip())
        cmdline = Path("/proc/%d/cmdline" % pid).read_bytes()
    except (OSError, ValueError):
        return
    if all(str(m).encode() in cmdline for m in marks):
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if not Path("/proc/%d" % pid).exists():
                break
            time.sleep(0.1)


def render(template, subst):
    """The text of template with each @KEY@ of subst replaced; every
    placeholder must be."""
    text = Path(template).read_text()
    for key, value in subst.items():
        text = text.replace("@%s@" % key, value)
    left = re.findall(r"@[A-Z0-9_]+@", text)
    if left:
        raise NginxError("unrendered placeholders %s in %s"
                         % (sorted(set(left)), template))
    return text


def listen_syntax(version):
    """The placeholders that spell HTTP/2 on a listening socket: nginx
    1.22 has "listen ... http2", 1.25.1 and later "http2 on;"."""
    old = version.startswith("1.22.")
    return {"LISTEN_HTTP2": " http2" if old else "",
            "HTTP2_ON": "" if old else "        http2        on;"}


def user_directive():
    """Workers of a root master run as root, so that they read the prefix
    (a checkout under /root, say)."""
    return "user  root root;" if os.geteuid() == 0 else ""


class Nginx:
    """One nginx under prefix, on h2c_port and tls_port (either may be
    None).  Subclasses write prefix/conf/nginx.conf in render().

    wrapper runs before the binary (valgrind ...); single_process adds
    "master_process off;" (the server is then ready without a worker).
    error is the exception class of this runner's failures."""

    error = NginxError
    start_timeout = 15          # seconds
    stop_signal = signal.SIGTERM    # fast shutdown; SIGQUIT: graceful
    stop_timeout = 15           # seconds, then SIGKILL

    def __init__(self, binary, prefix, label, h2c_port=None, tls_port=None,
                 version="1.26.3"):
        self.binary = Path(binary)
        self.prefix = Path(prefix)
        self.label = label
        self.h2c_port = h2c_port
        self.tls_port = tls_port
        self.version = version
        self.wrapper = []
        self.single_process = False
        self.proc = None
        self.output = None

    # where the configuration, the logs and nginx's own stdout and stderr
    # (and the wrapper's) are
    conf = property(lambda self: self.prefix / "conf" / "nginx.conf")
    error_log = property(lambda self: self.prefix / "logs" / "error.log")
    access_log = property(lambda self: self.prefix / "logs" / "access.log")
    output_log = property(lambda self: self.prefix / "logs" / "stderr.log")
    master_pid = property(lambda self: self.proc.pid if self.proc else None)

    def ports(self):
        return [p for p in (self.h2c_port, self.tls_port) if p]

    def render(self):
        raise NotImplementedError

    def base_subst(self, module=None):
        """The placeholders every template here shares; module: the .so
        to load, None for none."""
        subst = {"USER": user_directive(),
                 "LOAD_MODULE": "load_module  %s;" % module if module else "",
                 "TLS_DIR": str(TLS_DIR)}
        for key in ("h2c_port", "tls_port"):
            if getattr(self, key):
                subst[key.upper()] = str(getattr(self, key))
        subst.update(listen_syntax(self.version))
        return subst

    def write_conf(self, text, dirs=("conf", "logs")):
        for d in dirs:
            (self.prefix / d).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(text)

    def command(self):
        directives = "daemon off;"
        if self.single_process:
            directives += " master_process off;"
        return self.wrapper + [str(self.binary), "-p", str(self.prefix) + "/",
                               "-c", str(self.conf), "-g", directives]

    def start(self):
        self.render()
        stop_stale(self.prefix / "logs" / "nginx.pid", self.binary,
                   self.prefix)
        for port in self.ports():
            if not port_free(port):
                raise self.error("%s: 127.0.0.1:%d is taken by another "
                                 "process (ss -ltnp 'sport = :%d')"
                                 % (self.label, port, port))
        for log in (self.error_log, self.access_log):
            if log.exists():
                log.unlink()
        test = subprocess.run([str(self.binary), "-p", str(self.prefix) + "/",
                               "-c", str(self.conf), "-t"],
                              capture_output=True, text=True)
        if test.returncode != 0:
            raise self.error("nginx -t failed for %s:\n%s"
                             % (self.label, test.stderr))
        self.output = open(self.output_log, "w")
        self.proc = subprocess.Popen(self.command(), stdout=self.output,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True,
                                     preexec_fn=die_with_parent)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self):
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.error("%s exited at start (status %s):\n%s"
                                 % (self.label, self.proc.returncode,
                                    self.log_tail()))
            if self.ready():
                return
            time.sleep(0.05)
        raise self.error("%s did not start listening:\n%s"
                         % (self.label, self.log_tail()))

    def ready(self):
        return (ports_accept(self.ports())
                and (self.single_process or bool(self.worker_pids())))

    def stop(self):
        """stop_signal once a second until nginx exits, SIGKILL of the whole
        process group after stop_timeout.  True when the signal did it.

        Once a second: nginx looks at its terminate and quit flags after an
        event loop pass, so a signal that lands while it is busy (a long
        window under valgrind) is seen only at the next event, which an
        idle nginx without timers never gets; the next signal interrupts
        its epoll_wait()."""
        if self.proc is None:
            return True
        clean = True
        try:
            deadline = time.monotonic() + self.stop_timeout
            while self.proc.poll() is None:
                if time.monotonic() > deadline:
                    clean = False
                    break
                self.proc.send_signal(self.stop_signal)
                try:
                    self.proc.wait(1)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)    # workers too
            except OSError:
                pass
            self.proc.wait(10)
        finally:
            self.proc = None
            if self.output:
                self.output.close()
                self.output = None
        return clean

    def worker_pids(self):
        out = subprocess.run(
            ["ps", "--ppid", str(self.master_pid), "-o", "pid=,args="],
            capture_output=True, text=True).stdout
        return [int(line.split()[0]) for line in out.splitlines()
                if "worker process" in line]

    def worker_pid(self):
        """The worker's pid (found again each time: a crashed worker is
        replaced by the master)."""
        pids = self.worker_pids()
        if len(pids) != 1:
            raise self.error("%s: expected one worker, found %s"
                             % (self.label, pids))
        return pids[0]

    def error_log_text(self, since=0):
        try:
            with open(self.error_log, "rb") as f:
                f.seek(since)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def error_log_size(self):
        try:
            return self.error_log.stat().st_size
        except OSError:
            return 0

    def access_log_lines(self):
        try:
            return self.access_log.read_text().splitlines()
        except OSError:
            return []

    def log_tail(self, size=3000):
        """The ends of the error log and of nginx's own output."""
        text = ""
        for path in (self.error_log, self.output_log):
            try:
                text += path.read_text(errors="replace")[-size:]
            except OSError:
                pass
        return text

    def log_problems(self, since=0):
        """[alert], [crit] and [emerg] lines of the error log from offset
        since, and workers that exited on a signal."""
        return [line for line in self.error_log_text(since).splitlines()
                if re.search(r"\[(alert|crit|emerg)\]|exited on signal",
                             line)]

    def url(self, path, tls=False):
        if tls:
            return "https://127.0.0.1:%d%s" % (self.tls_port, path)
        return "http://127.0.0.1:%d%s" % (self.h2c_port, path)


def main(argv):
    if argv[1:] == ["certificate"]:
        print(certificate())
    elif argv[1:] == ["free-port"]:
        print(free_port())
    else:
        sys.stderr.write("usage: python3 -m interop.nginx_runner "
                         "certificate|free-port\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
