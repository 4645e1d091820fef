"""The interop suite: real nginx builds against real HTTP/2 peers.

    /usr/bin/python3 -m interop.run_interop                 nginx 1.26.3
    /usr/bin/python3 -m interop.run_interop --version 1.22.1
    /usr/bin/python3 -m interop.run_interop --only malformed
    /usr/bin/python3 -m interop.run_interop --asan [--version V]
                                                         (interop/run.sh --asan)

Starts five servers of one nginx version from interop/conf/interop.conf
(the module with "hpack on", the same with hpack_table_size 512, with
"hpack off", the patched binary without the module, the stock binary),
runs every case against each where it means something, stops them (also
on failure, Ctrl-C or SIGTERM), and ends with the line
"N passed, N failed[, N skipped]"; the exit status is 1 when anything
failed.  --only REGEX runs the tests whose names match.  --asan runs the
patched servers from build/nginx-hpack-asan, or build/nginx-<version>-
hpack-asan (make nginx-asan [NGINX_VERSION=<version>]; stock stays the
reference) and stops them gracefully (see ASAN_SKIP for what it
leaves out, ASAN_H3 for what it adds); interop/run.sh --asan sets the
sanitizers' options and reads their reports afterwards.
"""

import argparse
import sys
import time

from interop import (cases_clients, cases_differential, cases_early_hints,
                     cases_h2, cases_hostile, cases_load, cases_malformed,
                     cases_status, harness, nginx_runner, run_h3)
from interop.harness import (Filtered, Results, Server, h3, no_crash_or_alert,
                             stop_on_sigterm)

KINDS = ("on", "small", "off", "nomod", "stock")

# what each version runs: 1.22.1 proves the hook patch ports (cases 1, 2, 5
# and the hostile peers)
SUITES = {
    "1.26.3": ("clients", "h2", "settings", "continuation", "trailers",
               "malformed", "hostile", "savings", "memory", "logvars",
               "differential", "early_hints", "status"),
    "1.22.1": ("clients", "h2", "malformed", "hostile", "savings",
               "differential", "early_hints", "status"),
}
# the current lines: 1.30 (stable) runs every case, 1.28 and 1.31 those
# of 1.22.1
SUITES["1.30.4"] = SUITES["1.26.3"]
SUITES["1.28.3"] = SUITES["1.31.4"] = SUITES["1.22.1"]

# Left out under --asan: case 7 measures the worker's RSS, which under ASan
# is the allocator's quarantine of freed blocks (it grows by design until
# it holds 256 MB), not the module's memory; it is also the longest case
# (125,000 requests on one connection).  The hostile cases run, but their
# RSS checks are not judged there (harness.SANITIZED).
ASAN_SKIP = ("memory",)
# Added under --asan on the lines with the module's HTTP/3 (run_h3.LINES):
# the HTTP/3 cases (interop/run_h3.py) against the same sanitizer build,
# whose reports run.sh --asan judges with the others; plain builds run them
# in make interop-h3
ASAN_H3 = ("h3",)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="1.26.3",
                    choices=sorted(SUITES))
    ap.add_argument("--only", help="run the tests whose names match")
    ap.add_argument("--asan", action="store_true",
                    help="the patched servers from the sanitizer build")
    args = ap.parse_args()

    stop_on_sigterm("interop")

    results = Filtered(args.only)
    suites = SUITES[args.version]
    if args.asan:
        harness.use_sanitizer_build()
        suites = tuple(s for s in suites if s not in ASAN_SKIP)
        print("interop: sanitizer build; left out: %s" % ", ".join(ASAN_SKIP))
        if args.version in h3.LINES:
            suites += ASAN_H3
    start = time.monotonic()
    if harness.line_absent(results, args.version, "every interop case"):
        return results.finish()
    nginx_runner.certificate()

    # ports: 1.26.3 from 18080/18443, 1.22.1 from 18090/18453, the
    # sanitizer build from 18100/18463 (it may run beside the others)
    base = 20 if args.asan else 10 if args.version != "1.26.3" else 0
    servers = {k: Server(args.version, k, base + slot)
               for slot, k in enumerate(KINDS)}
    if "hostile" in suites:
        cases_hostile.configure(servers.values())
    if "differential" in suites:
        cases_differential.configure(servers.values())
    if "early_hints" in suites:
        cases_early_hints.configure(servers.values())
    running = {}
    print("interop: nginx %s, servers in %s" % (args.version, harness.WORK),
          flush=True)
    try:
        for kind, server in servers.items():
            why = server.missing()

            def start_server(server=server, why=why):
                if why:
                    raise harness.Failure(why)
                server.start()
            # the test that everything else stands on
            ok = Results.run(results, server.label,
                             "nginx_starts_with_the_interop_configuration",
                             start_server)
            if ok:
                running[kind] = server

        stock = running.get("stock")
        order = [running[k] for k in KINDS if k in running]
        if len(order) < len(KINDS):
            for k in KINDS:
                if k not in running:
                    results.skipped += 1
                    print("SKIP  [%s] all cases: the server did not start"
                          % servers[k].label, flush=True)

        # each suite's cases, in the order SUITES lists them: once per
        # server that started, or once over all of them
        per_server = {
            "clients": lambda s: cases_clients.register(results, s, stock),
            "h2": lambda s: cases_h2.register_h2(results, s),
            "settings": lambda s: cases_h2.register_settings(results, s),
            "continuation":
                lambda s: cases_h2.register_continuation(results, s),
            "trailers": lambda s: cases_h2.register_trailers(results, s),
        }
        over_all = {
            "malformed":
                lambda: cases_malformed.register(results, order, stock),
            "hostile": lambda: cases_hostile.register(results, running),
            "savings": lambda: cases_load.register_savings(results, running),
            "memory": lambda: cases_load.register_memory(results, running),
            "logvars": lambda: cases_load.register_logvars(results, running),
            "differential":
                lambda: cases_differential.register(results, servers),
            "early_hints":
                lambda: cases_early_hints.register(results, servers),
            "status": lambda: cases_status.register(results, running),
            "h3": lambda: run_h3.run(results, args.version),
        }
        # with no server up (each failed to start) nothing runs
        for suite in suites if order else ():
            if suite in per_server:
                for s in order:
                    per_server[suite](s)
            else:
                over_all[suite]()

        for s in order:
            Results.run(results, s.label, "error_log_has_no_crash_or_alert",
                        no_crash_or_alert, s, 0)
    finally:
        for s in running.values():
            s.stop()

    print("interop: nginx %s, %.0fs" % (args.version,
                                        time.monotonic() - start))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
