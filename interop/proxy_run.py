"""The reverse-proxy tests: nginx with conf/proxy.conf (TLS, HTTP/2, the
module with hpack on) in front of an HTTP/1.1 origin, against nghttp,
h2load and python3-h2.

    /usr/bin/python3 -m interop.proxy_run              (make interop-proxy)
    /usr/bin/python3 -m interop.proxy_run --only nghttp
    interop/run.sh --asan --proxy                       (make interop-proxy-asan)

Starts the origin (interop/upstream.py, 127.0.0.1:19600) and four proxies
made from conf/proxy.conf: the module with its table of 4096 (the file as it
is), 512 and 65536, and the stock build (TLS ports 19643-19646; every port
moved by INTEROP_PORT_SHIFT); runs every case (interop/proxy_cases.py);
stops them, also on failure, Ctrl-C or SIGTERM; ends with "N passed, N
failed[, N skipped]" and exits 1 when anything failed.  --asan runs the
module's three proxies from the sanitizer build (build/nginx-hpack-asan, or
build/nginx-<version>-hpack-asan), in build/proxy-interop/<version>-asan;
interop/run.sh --asan --proxy sets the sanitizers' options and judges their
reports afterwards.

The cases, each against every proxy where it means something:

  h2_3000_responses_...      python3-h2, one TLS connection, 3,000 requests
                             (20 in flight) over 1,000 origin responses:
                             every header list and body exactly as the
                             origin sent it, as nginx passes it on
                             (harness.proxy.expected_headers); the 64k
                             server with the client's table at 65536
  secrets_and_short_cookies_ the raw representation of each field off the
  are_never_indexed_...      wire: authorization, proxy-authorization,
                             set-cookie under 20 bytes, x-api-key and
                             x-secret-token (hpack_never_index) only ever
                             as "literal never indexed"; a second decoder
                             agrees with h2's
  decoded_headers_same_as_   the same 3,000 lists as the stock proxy
  stock_proxy                (nginx's date aside)
  connection_specific_...    upgrade, te, ... from the origin: as stock
  response_stories_...       the 11 hpack-test-case response stories (3,035
                             responses of real sites), each on one
                             connection, one stream at a time: the same
                             lists as stock (SKIP without ../shared)
  access_log_out_wire_...    $hpack_out_wire = each block on the wire, one
                             $connection for the 3,000
  nghttp_3000_responses_...  libnghttp2's decoder (and its "sensitive"
                             flag for never-indexed fields)
  h2load_20000_requests_...  4 connections x 16 streams, no failed stream
  error_log_has_no_crash_... no alert, crit or emerg
"""

import argparse
import shutil
import sys
import time

from interop import harness, nginx_runner, proxy_cases
from interop.harness import (PORT_SHIFT, Filtered, Results, no_crash_or_alert,
                             stop_on_sigterm)
from interop.harness import proxy as pc

ORIGIN_PORT = 19600 + PORT_SHIFT
PORTS = {k: p + PORT_SHIFT for k, p in
         {"on": 19643, "small": 19644, "big": 19645, "stock": 19646}.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run the tests whose names match")
    ap.add_argument("--version", default="1.26.3",
                    choices=nginx_runner.LINES,
                    help="the nginx line whose builds run conf/proxy.conf")
    ap.add_argument("--asan", action="store_true",
                    help="the module's proxies from the line's sanitizer "
                    "build (make nginx-asan)")
    args = ap.parse_args()
    if args.asan:
        harness.use_sanitizer_build()

    stop_on_sigterm("proxy")

    results = Filtered(args.only)
    start = time.monotonic()
    if harness.line_absent(results, args.version, "every reverse-proxy case"):
        return results.finish()
    missing = [t for t in ("nghttp", "h2load", "openssl")
               if not shutil.which(t)]
    if missing:
        print("FAIL  [proxy] tools: missing %s (make deps installs them)"
              % " ".join(missing))
        print("0 passed, 1 failed", flush=True)
        return 1
    nginx_runner.certificate()
    work = pc.PROXY_WORK / (args.version + ("-asan" if args.asan else ""))
    origin = pc.Origin(ORIGIN_PORT, work)
    servers = {k: pc.ProxyServer(k, port, ORIGIN_PORT, work=work,
                                 version=args.version)
               for k, port in PORTS.items()}
    running = {}
    print("proxy: nginx %s, conf/proxy.conf, servers in %s"
          % (args.version, work),
          flush=True)
    try:
        pc.start_all(results, origin, servers, running)
        for k, s in servers.items():
            if k not in running:
                results.skipped += 1
                print("SKIP  [%s] all cases: the server did not start"
                      % s.label, flush=True)
        proxy_cases.register(results, running)
        for s in running.values():
            Results.run(results, s.label, "error_log_has_no_crash_or_alert",
                        no_crash_or_alert, s)
    finally:
        for s in running.values():
            s.stop()
        origin.stop()
    print("proxy: origin: %s" % origin.summary())
    print("proxy: %.0fs" % (time.monotonic() - start))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
