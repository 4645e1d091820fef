#!/usr/bin/python3
"""Reads the sanitizer reports a run of the sanitizer build of nginx left
(ASAN_OPTIONS=log_path=DIR/san: one file DIR/san.<pid> per process that
reported), prints every one, and fails when any of them is an error of the
product.

    /usr/bin/python3 -m interop.sanitizer_reports DIR ERROR_LOG...

An AddressSanitizer or UndefinedBehaviorSanitizer report, wherever it
points, fails: with halt_on_error=1 the process that saw it has stopped.
(UBSan findings in stock nginx code are suppressed before they are
reported, by interop/ubsan.supp, each with its reason.)  So does
LeakSanitizer's own failure to run.

Leaks.  LeakSanitizer runs when a process exits, and nginx does not free
everything at exit: "nginx -t" returns from main() with its whole
configuration cycle unreferenced, the master leaves its cycle to the
exit.  A worker that exits gracefully destroys
the cycle's pool (with every pool cleanup, the module's among them) after
its connections were closed, so what it leaks nothing freed.  Leaks are
therefore judged in the workers' reports only (their pids are the
"start worker process N" lines of the ERROR_LOGs, which must also show
each worker's exit, else its leak check did not run), and a leak record
(direct or indirect) fails when its allocation stack has a frame of the
product: a function whose name has "hpack" in it (the module's
ngx_http_hpack_*, the codec's hpack_* and hpack::, the hook patch's
ngx_http_v2_*hpack*) or code in ngx_http_hpack_module.so or the codec's
sources, or code of an object no longer loaded: the sanitizer build links
the module -z nodelete so that it stays mapped (and its frames named)
after nginx dlclose()s it, and it is the only object nginx loads, so a
"<unknown module>" frame can only be the module's.  Every other leak
record is listed and counted, not failed.

Ends with the line "sanitizers: N reports (N ASan, N UBSan), N leaks of
the product, N other leaks, N workers checked" and exits 1 when any of the
first counts is not zero, when a worker's exit is missing or no worker
started, or when DIR is missing (the run did not set log_path there).
"""

import re
import sys
from pathlib import Path

PRODUCT_FRAME = re.compile(
    r"^\s*#\d+ 0x[0-9a-f]+ (in \S*hpack"
    r"|.*(ngx_http_hpack_module\.(so|c)|/codec/(src|include)/"
    r"|<unknown module>))", re.I)
LEAK_HEAD = re.compile(r"^(Direct|Indirect) leak of (\d+) byte")
ERROR_HEAD = re.compile(r"^==\d+==ERROR: (AddressSanitizer|LeakSanitizer)"
                        r"|runtime error:|LeakSanitizer has encountered")
FRAME = re.compile(r"^\s*#\d+ 0x")
WORKER_START = re.compile(r"start worker process (\d+)")
WORKER_EXIT = re.compile(r"worker process (\d+) exited with code (\d+)")


def records(text):
    """The report split at its headers: [(header line, [lines])]."""
    out = []
    for line in text.splitlines():
        if ERROR_HEAD.search(line) or LEAK_HEAD.match(line):
            out.append((line, [line]))
        elif out:
            out[-1][1].append(line)
    return out


def workers(logs):
    """{worker pid: exit code or None} from the master's error log lines."""
    found = {}
    for log in logs:
        try:
            text = Path(log).read_text(errors="replace")
        except OSError as e:
            print("sanitizers: %s" % e)
            continue
        for m in WORKER_START.finditer(text):
            found.setdefault(int(m.group(1)), None)
        for m in WORKER_EXIT.finditer(text):
            found[int(m.group(1))] = int(m.group(2))
    return found


def main(argv=None):
    """argv as sys.argv (a runner calls it in its own process)."""
    argv = sys.argv if argv is None else argv
    if len(argv) < 2:
        sys.exit("usage: sanitizer_reports.py DIR ERROR_LOG...")
    d = Path(argv[1])
    if not d.is_dir():
        print("sanitizers: %s does not exist: the run did not write its "
              "reports there" % d)
        return 1
    pids = workers(argv[2:])
    if not pids:
        print("sanitizers: no worker of the sanitizer build started "
              "(error logs: %s)" % " ".join(argv[2:]))
        return 1
    unseen = sorted(p for p, code in pids.items() if code is None)
    for pid in unseen:
        print("sanitizers: worker %d: no exit in the error logs, its leak "
              "check did not run" % pid)
    errors = {"ASan": 0, "UBSan": 0}
    leaks = {"product": 0, "other": 0, "unjudged": 0}
    seen = set()
    repeats = 0
    for path in sorted(p for p in d.iterdir() if p.is_file()):
        pid = int(path.suffix[1:]) if path.suffix[1:].isdigit() else None
        worker = pid in pids
        shown = []
        for head, lines in records(path.read_text(errors="replace")):
            if LEAK_HEAD.match(head):
                if not worker:
                    leaks["unjudged"] += 1
                    continue
                ours = any(PRODUCT_FRAME.match(l) for l in lines)
                leaks["product" if ours else "other"] += 1
                shown.append("%s [%s]" % (head, "A LEAK OF THE PRODUCT"
                                          if ours else
                                          "no frame of the product"))
                shown += ["    " + l.strip() for l in lines[1:] if l.strip()]
            elif ERROR_HEAD.search(head) and "LeakSanitizer:" not in head:
                errors["UBSan" if "runtime error:" in head else "ASan"] += 1
                # a respawned worker meets the same error again: each
                # error (kind and first frames) is shown once
                key = (re.sub(r"0x[0-9a-f]+|==\d+==", "", head),
                       tuple(re.sub(r"0x[0-9a-f]+", "", l)
                             for l in lines if FRAME.match(l))[:4])
                if key in seen:
                    repeats += 1
                    continue
                seen.add(key)
                shown += lines
        if shown:
            print("---- %s (%s)" % (path, "a worker" if worker else
                                    "not a worker: master or nginx -t"))
            print("\n".join(shown))
    if repeats:
        print("(%d more ASan/UBSan reports repeat one shown above)" % repeats)
    print("sanitizers: %d reports (%d ASan, %d UBSan), %d leaks of the "
          "product, %d other leaks, %d workers checked (%d leak records "
          "of other processes not judged)"
          % (sum(errors.values()), errors["ASan"], errors["UBSan"],
             leaks["product"], leaks["other"], len(pids) - len(unseen),
             leaks["unjudged"]))
    return 1 if sum(errors.values()) or leaks["product"] or unseen else 0


if __name__ == "__main__":
    sys.exit(main())
