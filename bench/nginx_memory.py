"""The weight of a connection: the nginx worker's resident memory per
connection held open, stock against the module (make bench-memory, and
make bench's weight phase).

For each build, table size and state, a fresh server (one worker, h2c) is
started; one connection makes two requests and closes (what the worker
allocates once is then in the baseline); the worker's VmRSS is read; then
CONNECTIONS connections are opened one after the other and held, and VmRSS
is read again: the difference over CONNECTIONS is the weight.

- table size S: the client's SETTINGS_HEADER_TABLE_SIZE S (none for 4096,
  the protocol's default) and, on the module, "hpack_table_size S" (the
  encoder's cap); stock has no encoder table, the setting only makes it
  signal a size update of 0;
- idle: the connection sent its preface and SETTINGS and got them
  acknowledged, and no HEADERS;
- warm: two GETs of `path` with the browser's request fields, one after
  the other, both answered.

Resident memory is counted in pages, so the figures move by a few
hundredths of a KiB between runs; each point is the median of `repeats`
servers.
"""

import resource
import statistics
import time

from bench import nginx_wire

SIZES = (4096, 16384, 65536)
STATES = ("idle", "warm")
CONNECTIONS = 1000


def directives(size):
    """The module's table-size line for size."""
    return "    hpack_table_size  %d;" % size


def open_connections(port, state, size, count, path, headers):
    """count connections to 127.0.0.1:port in state, left open."""
    table = None if size == 4096 else size
    held = []
    for _ in range(count):
        c = nginx_wire.Client(port, timeout=30, table_size=table)
        held.append(c)
        if state == "idle":
            c.settled()
            continue
        for stream in (1, 3):
            c.get(stream, path, headers)
    return held


def worker_rss(server):
    """The worker's VmRSS in KiB, read when it has been idle a moment."""
    time.sleep(0.2)
    return server.worker_memory()["VmRSS"]


def measure(server, state, size, count, path, headers):
    """KiB of the worker's VmRSS per connection held in state."""
    for c in open_connections(server.h2c_port, "warm", size, 1, path,
                              headers):
        c.close()
    before = worker_rss(server)
    held = open_connections(server.h2c_port, state, size, count, path,
                            headers)
    try:
        after = worker_rss(server)
    finally:
        for c in held:
            c.close()
    return (after - before) / count


def raise_fd_limit(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 64
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            raise OSError("%d connections need %d file descriptors, the "
                          "limit is %d" % (count, want, hard))
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def weights(make_server, builds, path, headers, repeats=3,
            count=CONNECTIONS, log=print):
    """Rows {"build", "size", "state", "kib", "runs"}: the weight of each
    build, table size and state.  make_server(build, size) returns a server
    not yet started, configured for that table size."""
    raise_fd_limit(count)
    rows = []
    for size in SIZES:
        for state in STATES:
            for build in builds:
                runs = []
                for _ in range(repeats):
                    server = make_server(build, size)
                    server.start()
                    try:
                        runs.append(measure(server, state, size, count,
                                            path, headers))
                        problems = server.log_problems()
                    finally:
                        server.stop()
                    if problems:
                        raise RuntimeError("%s: %s" % (build, problems[0]))
                rows.append({"build": build, "size": size, "state": state,
                             "kib": statistics.median(runs), "runs": runs,
                             "connections": count})
                log("weight: %-6s table %5d, %s: %.2f KiB per connection "
                    "(%s)" % (build, size, state, rows[-1]["kib"],
                              ", ".join("%.2f" % r for r in runs)))
    return rows


def method():
    """How the weight is measured, for the report: this file's opening."""
    return __doc__.split("\n\n", 1)[1].strip()


def find(rows, build, size, state):
    for r in rows:
        if (r["build"], r["size"], r["state"]) == (build, size, state):
            return r["kib"]
    return None


def table(rows):
    """The markdown table: KiB per connection, stock and module, and the
    module's excess; a note above it when fewer connections than
    CONNECTIONS were held (make bench QUICK=1)."""
    out = []
    count = rows[0].get("connections", CONNECTIONS) if rows else CONNECTIONS
    if count != CONNECTIONS:
        out += ["%d connections held open, not %d: a smoke run's figures."
                % (count, CONNECTIONS), ""]
    out += ["| table size | state | stock KiB | module KiB | module - stock |",
            "|---:|---|---:|---:|---:|"]
    for size in SIZES:
        for state in STATES:
            s = find(rows, "stock", size, state)
            m = find(rows, "module", size, state)
            if s is None or m is None:
                continue
            out.append("| %d | %s | %.2f | %.2f | %+.2f |"
                       % (size, state, s, m, m - s))
    return out


def plot(plt, colors, rows, out_dir):
    """weight.png: KiB per connection, stock and module side by side, per
    table size and state."""
    groups = [(size, state) for size in SIZES for state in STATES
              if find(rows, "stock", size, state) is not None]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for j, b in enumerate(("stock", "module")):
        xs = [i + (j - 0.5) * 0.38 for i in range(len(groups))]
        ys = [find(rows, b, size, state) or 0 for size, state in groups]
        ax.bar(xs, ys, 0.38, color=colors[b], label=b)
        for x, y in zip(xs, ys):
            ax.text(x, y * 1.01, "%.1f" % y, ha="center", va="bottom",
                    fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["%d\n%s" % g for g in groups], fontsize=8)
    ax.set_xlabel("table size (client setting and hpack_table_size), state")
    ax.set_ylabel("worker VmRSS KiB per connection held")
    ax.set_title("the weight of a connection: %d held open, h2c, /headers, "
                 "browser request fields" % CONNECTIONS, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "weight.png", dpi=100)
    plt.close(fig)
