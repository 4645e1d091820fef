"""REPORT.md and the plots of a `make bench` run, from its results.json.

    /usr/bin/python3 -m bench.nginx_bench --report bench/results/<date>
"""

import json
import statistics
from pathlib import Path

from bench import nginx_callgrind, nginx_memory
from interop.nginx_runner import MODULE_SO

# Targets of the issue, and stock's figures measured before this harness.
TARGETS = {
    "hc_headers": 1 / 8,        # header-compression instructions, /headers
    "hc_tiny": 1 / 6,           # ... on /tiny
    "total_headers": 0.5,       # all instructions per request, /headers
    "bytes_headers": 40,        # response header bytes per response, warm
    "savings_headers": 90.0,    # h2load's space savings, warm
    "rps_headers": 1.3,         # req/s, /headers, warm, h2c
    "cold": 1.0,                # req/s of cold connections, every workload
    "cold_l1": 1.5,             # L1 misses per cold request (callgrind)
    # HTTP/3 (bench/nginx_h3.py), warm connections
    "h3_octets_headers": 0.12,  # section + encoder-stream octets, /headers
    "h3_hc_headers": 0.4,       # header-compression instructions, /headers
    "h3_hc_tiny": 0.4,          # ... on /tiny
    "h3_memory_kib": 3.0,       # worker KiB per connection over stock's
}
STOCK_EARLIER = {
    "headers": (22200, 39745), "tiny": (11088, 20803), "bytes": 496,
}
LOCATION_PATH = {"tiny": "/tiny", "static": "/static/1k.html",
                 "headers": "/headers"}
README_BEGIN = "<!-- nginx-bench:latest:begin -->"
README_END = "<!-- nginx-bench:latest:end -->"


def fmt(v, digits=0):
    if v is None:
        return "-"
    if abs(v) < 0.5 * 10 ** -digits:
        v = 0.0                         # no "-0.0"
    if digits == 0:
        return "{:,.0f}".format(v)
    return "{:,.{}f}".format(v, digits)


# ------------------------------------------------------------- statistics

def summarize(w):
    s, m = w["runs"]["stock"], w["runs"]["module"]
    ratios = [b["rps"] / a["rps"] for a, b in zip(s, m)]
    med = statistics.median
    cpu = None
    if all("worker_cpu_ns" in r for r in s + m):
        per = [(a["worker_cpu_ns"] / a["requests"] / 1e3,
                b["worker_cpu_ns"] / b["requests"] / 1e3)
               for a, b in zip(s, m)]
        speed = [a / b for a, b in per if b > 0]
        cpu = {
            "stock_us": med([a for a, _ in per]),
            "module_us": med([b for _, b in per]),
            "ratio": med(speed),
            "ratio_min": min(speed),
            "ratio_max": max(speed),
        }
    return {
        "cpu": cpu,
        "stock_rps": med([r["rps"] for r in s]),
        "module_rps": med([r["rps"] for r in m]),
        "ratio": med(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "pairs": len(ratios),
        "stock_bytes": med([r["header_bytes"] / r["requests"] for r in s]),
        "module_bytes": med([r["header_bytes"] / r["requests"] for r in m]),
        "stock_savings": med([r["savings"] for r in s]),
        "module_savings": med([r["savings"] for r in m]),
    }


def find(rows, **keys):
    for r in rows:
        if all(r.get(k) == v for k, v in keys.items()):
            return r
    return None


def label(w):
    return "%s %s" % (LOCATION_PATH[w["location"]], w["headers"])


# ---------------------------------------------------------------- targets

def verdict(ok, near=False):
    if ok:
        return "met"
    return "within noise" if near else "**missed**"


def targets(data):
    rows = []
    cg = data["callgrind"]
    tp = data["throughput"]
    for loc, key, goal_text in (("headers", "hc_headers", "1/8"),
                                ("tiny", "hc_tiny", "1/6")):
        c = find(cg, location=loc, headers="browser", conn="warm")
        if not c:
            continue
        s, m = c["builds"]["stock"]["region"], c["builds"]["module"]["region"]
        goal = TARGETS[key] * s
        ratio = m / s if s else 0
        miss = "" if m <= goal else " (%.1fx the goal: %s instructions " \
            "too many)" % (m / goal, fmt(m - goal))
        rows.append(("header-compression instructions/request, %s, warm"
                     % LOCATION_PATH[loc],
                     "<= %s of stock (<= %s)" % (goal_text, fmt(goal)),
                     "%s vs stock %s: %.3fx%s" % (fmt(m), fmt(s), ratio, miss),
                     verdict(m <= goal)))
    c = find(cg, location="headers", headers="browser", conn="warm")
    if c:
        s = c["builds"]["stock"]["per_request"]
        m = c["builds"]["module"]["per_request"]
        goal = TARGETS["total_headers"] * s
        miss = "" if m <= goal else " (%s instructions too many)" % fmt(
            m - goal)
        rows.append(("total instructions/request, /headers, warm",
                     "<= 0.5x stock (<= %s)" % fmt(goal),
                     "%s vs stock %s: %.3fx%s" % (fmt(m), fmt(s), m / s, miss),
                     verdict(m <= goal)))
    w = find(tp, location="headers", headers="browser", transport="h2c",
             conn="warm")
    if w:
        st = summarize(w)
        b = st["module_bytes"]
        rows.append(("response header bytes/response, /headers, warm h2c",
                     "<= %d (stock: %s)" % (TARGETS["bytes_headers"],
                                            fmt(st["stock_bytes"], 1)),
                     "%s%s" % (fmt(b, 1), "" if b <= TARGETS["bytes_headers"]
                               else " (%s over)" % fmt(
                                   b - TARGETS["bytes_headers"], 1)),
                     verdict(b <= TARGETS["bytes_headers"])))
        sv = st["module_savings"]
        rows.append(("h2load header space savings, /headers, warm h2c",
                     ">= 90%% (stock: %.2f%%)" % st["stock_savings"],
                     "%.2f%%" % sv, verdict(sv >= TARGETS["savings_headers"])))
    for hs in ("browser", "minimal"):
        w = find(tp, location="headers", headers=hs, transport="h2c",
                 conn="warm")
        if not w:
            continue
        st = summarize(w)
        rows.append(("req/s, /headers, warm, h2c, %s request headers" % hs,
                     ">= 1.3x stock",
                     "%.3fx (pairs %.3f-%.3f; %s vs %s req/s)%s"
                     % (st["ratio"], st["ratio_min"], st["ratio_max"],
                        fmt(st["module_rps"]), fmt(st["stock_rps"]),
                        cpu_note(st)),
                     verdict(st["ratio"] >= TARGETS["rps_headers"])))
    colds = [(w, summarize(w)) for w in tp if w["conn"] == "cold"]
    if colds:
        worst_w, worst = min(colds, key=lambda ws: ws[1]["ratio"])
        slower = [w for w, st in colds if st["ratio"] < 1.0]
        beyond = [w for w, st in colds if st["ratio_max"] < 1.0]
        rows.append(("req/s, cold connections (one request each), every "
                     "workload", ">= 1.0x stock",
                     "lowest median %.3fx (%s %s, pairs %.3f-%.3f); %d of %d "
                     "below 1.0, %d with every pair below 1.0%s"
                     % (worst["ratio"], label(worst_w), worst_w["transport"],
                        worst["ratio_min"], worst["ratio_max"], len(slower),
                        len(colds), len(beyond), cold_cpu_note(colds))
                     + cold_instructions_note(cg),
                     cold_verdict(slower, beyond, cg)))
    rows += cold_miss_rows(cg) + first_block_rows(data.get("first_blocks"))
    return rows


def cold_miss_rows(cg):
    """L1 misses per cold request (callgrind's cache simulation) against
    1.5x stock's, the worst workload."""
    ratios = []
    for c in cg:
        s, m = (c["builds"][b].get("misses") for b in ("stock", "module"))
        if c["conn"] == "cold" and s and m and s["l1"] > 0:
            ratios.append((m["l1"] / s["l1"], c, s["l1"], m["l1"]))
    if not ratios:
        return []
    r, c, s, m = max(ratios, key=lambda x: x[0])
    return [("L1 misses/request, cold, every callgrind workload",
             "<= 1.5x stock",
             "highest %.2fx (`%s` %s: %s vs stock %s)"
             % (r, LOCATION_PATH[c["location"]], c["headers"], fmt(m),
                fmt(s)), verdict(r <= TARGETS["cold_l1"]))]


def first_block_rows(blocks):
    """Every response block of a new connection no longer than stock's."""
    if not blocks:
        return []
    over = [(r, i) for r in blocks for i, (s, m) in
            enumerate(zip(r["stock"], r["module"])) if m > s]
    first = ", ".join("`%s` %s %d/%d" % (LOCATION_PATH[r["location"]],
                                         r["headers"], r["module"][0],
                                         r["stock"][0]) for r in blocks)
    return [("response block octets, blocks 1-%d of a connection, every "
             "workload" % len(blocks[0]["stock"]), "<= stock's",
             "first blocks module/stock: %s; %d longer than stock's"
             % (first, len(over)), verdict(not over))]


def first_block_table(blocks):
    out = ["| location | request headers | stock, blocks 1-%d | module |"
           % len(blocks[0]["stock"]), "|---|---|---|---|"]
    for r in blocks:
        out.append("| `%s` | %s | %s | %s |" % (
            LOCATION_PATH[r["location"]], r["headers"],
            ", ".join(map(str, r["stock"])),
            ", ".join(map(str, r["module"]))))
    return out


def cpu_note(st):
    c = st["cpu"]
    if not c:
        return ""
    return ("; worker CPU per request %.2f -> %.2f us, stock/module "
            "%.3fx (pairs %.3f-%.3f)" % (c["stock_us"], c["module_us"],
                                         c["ratio"], c["ratio_min"],
                                         c["ratio_max"]))


def cold_instructions(cg):
    """module/stock instructions per cold request, total and header
    compression, for each cold callgrind workload."""
    out = []
    for c in cg:
        if c["conn"] == "cold":
            s, m = c["builds"]["stock"], c["builds"]["module"]
            out.append((m["per_request"] / s["per_request"],
                        m["region"] / s["region"] if s["region"] else 1.0))
    return out


def cold_instructions_note(cg):
    ratios = cold_instructions(cg)
    if not ratios:
        return ""
    tot = [t for t, _ in ratios]
    reg = [r for _, r in ratios]
    return ("; callgrind, cold: the module executes %+.1f%% to %+.1f%% "
            "instructions per request (header compression %+.1f%% to "
            "%+.1f%%)" % (100 * (min(tot) - 1), 100 * (max(tot) - 1),
                          100 * (min(reg) - 1), 100 * (max(reg) - 1)))


def cold_verdict(slower, beyond, cg):
    more = any(t > 1.0 for t, _ in cold_instructions(cg))
    if not slower and not more:
        return "met"
    if beyond:
        return "**missed**"
    if more:
        return "**missed** in instructions; req/s within noise"
    return "within noise"


def cold_cpu_note(colds):
    cs = [(w, st["cpu"]) for w, st in colds if st["cpu"]]
    if not cs:
        return ""
    w, c = min(cs, key=lambda wc: wc[1]["ratio"])
    return ("; worker CPU per request: lowest stock/module %.3fx (%s %s, "
            "pairs %.3f-%.3f), %d of %d below 1.0"
            % (c["ratio"], label(w), w["transport"], c["ratio_min"],
               c["ratio_max"], sum(1 for _, x in cs if x["ratio"] < 1.0),
               len(cs)))


# ------------------------------------------------------------------ tables

def targets_table(data):
    out = ["| target | goal | measured | |", "|---|---|---|---|"]
    for t in targets(data):
        out.append("| %s | %s | %s | %s |" % t)
    return out


def throughput_table(data, conn):
    rows = [w for w in data["throughput"] if w["conn"] == conn]
    if not rows:
        return []
    out = ["| location | request headers | transport | stock req/s | "
           "module req/s | module/stock (median of pairs) | pair min-max | "
           "worker CPU us/request stock -> module | stock/module (pairs) | "
           "header B/response stock -> module | space savings stock -> "
           "module |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for w in rows:
        s = summarize(w)
        c = s["cpu"]
        cpu = ("%.2f -> %.2f | %.3f (%.3f-%.3f)"
               % (c["stock_us"], c["module_us"], c["ratio"], c["ratio_min"],
                  c["ratio_max"])) if c else "- | -"
        out.append("| `%s` | %s | %s | %s | %s | **%.3f** | %.3f-%.3f | "
                   "%s | %s -> %s | %.1f%% -> %.1f%% |"
                   % (LOCATION_PATH[w["location"]], w["headers"],
                      w["transport"], fmt(s["stock_rps"]),
                      fmt(s["module_rps"]), s["ratio"], s["ratio_min"],
                      s["ratio_max"], cpu, fmt(s["stock_bytes"], 1),
                      fmt(s["module_bytes"], 1), s["stock_savings"],
                      s["module_savings"]))
    return out


def split_table(data):
    """User space and kernel in the worker's CPU time, all runs of a
    workload together (clock ticks: coarse per run, fine summed)."""
    rows = [w for w in data["throughput"]
            if all("worker_user_s" in r for b in w["runs"]
                   for r in w["runs"][b])]
    if not rows:
        return []
    out = ["| workload | stock user us/request | stock kernel | module user | "
           "module kernel | user share stock -> module | minor page faults "
           "per 1000 requests stock -> module |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for w in rows:
        cells = []
        shares = []
        faults = []
        for b in ("stock", "module"):
            n = sum(r["requests"] for r in w["runs"][b])
            u = sum(r["worker_user_s"] for r in w["runs"][b])
            k = sum(r["worker_sys_s"] for r in w["runs"][b])
            cells += [fmt(u / n * 1e6, 2), fmt(k / n * 1e6, 2)]
            shares.append(100.0 * u / (u + k) if u + k else 0)
            faults.append(sum(r.get("worker_minflt", 0)
                              for r in w["runs"][b]) * 1000.0 / n)
        out.append("| `%s` %s, %s, %s | %s | %.0f%% -> %.0f%% | %s -> %s |"
                   % (LOCATION_PATH[w["location"]], w["headers"],
                      w["transport"], w["conn"], " | ".join(cells),
                      shares[0], shares[1], fmt(faults[0], 1),
                      fmt(faults[1], 1)))
    return out


def callgrind_table(data):
    if not data["callgrind"]:
        return []
    sim = all(c["builds"][b].get("misses") for c in data["callgrind"]
              for b in c["builds"])
    code = all(c["builds"][b].get("code") for c in data["callgrind"]
               for b in c["builds"])
    out = ["| workload (h2c) | stock instr/request | module | module/stock | "
           "stock header compression | module | module/stock |"
           + (" L1 misses/request stock -> module | last-level misses |"
              if sim else "")
           + (" code run/request, KiB, stock -> module (the module's "
              "own) |" if code else ""),
           "|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if sim
                                                   else "")
           + ("---:|" if code else "")]
    for c in data["callgrind"]:
        s, m = c["builds"]["stock"], c["builds"]["module"]
        line = ("| `%s` %s, %s | %s | %s | %.3f | %s | %s | **%.3f** |"
                % (LOCATION_PATH[c["location"]], c["headers"], c["conn"],
                   fmt(s["per_request"]), fmt(m["per_request"]),
                   m["per_request"] / s["per_request"], fmt(s["region"]),
                   fmt(m["region"]),
                   m["region"] / s["region"] if s["region"] else 0))
        if sim:
            # a difference of two runs: noise can make a tiny count negative
            line += " %s -> %s | %s -> %s |" % tuple(
                fmt(max(0.0, x[k]), d) for k, d in (("l1", 0), ("ll", 1))
                for x in (s["misses"], m["misses"]))
        if code:
            line += " %.1f -> %.1f (%.1f) |" % (
                s["code"]["kib"], m["code"]["kib"],
                m["code"]["kib_by_object"].get(MODULE_SO, 0.0))
        out.append(line)
    return out


def curve_table(data):
    if not data["curve"]:
        return []
    out = ["| requests per connection | " + " | ".join(
        str(r["k"]) for r in data["curve"]) + " |",
        "|---|" + "---:|" * len(data["curve"])]
    for b in ("stock", "module"):
        out.append("| %s | " % b + " | ".join(
            fmt(r[b], 1) for r in data["curve"]) + " |")
    return out


def wire_table(wire):
    out = ["| field | representation | table index | coding | octets |",
           "|---|---|---|---|---:|"]
    for f in wire["fields"]:
        value = f["value"] if len(f["value"]) <= 24 else \
            f["value"][:21] + "..."
        out.append("| `%s: %s` | %s | %s | %s | %d |"
                   % (f["name"], value.replace("|", "\\|"), f["kind"],
                      f["index"] or "-", f["coding"] or "-", f["octets"]))
    out.append("| **block** | | | | **%d** (%d decoded) |"
               % (wire["block"], wire["plain"]))
    return out


# ------------------------------------------------------------------- plots

def plots(data, out_dir):
    """The PNGs; a list of (file, caption), empty without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    colors = {"stock": "#8c8c8c", "module": "#1f77b4"}
    made = []

    tp = data["throughput"]
    panels = [(c, t) for c in ("warm", "cold") for t in ("h2c", "tls")
              if any(w["conn"] == c and w["transport"] == t for w in tp)]

    def per_workload(fname, value, ylabel, title, ratio_key):
        cols = 2 if len(panels) > 1 else 1
        rows = (len(panels) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 4 * rows),
                                 squeeze=False)
        for ax, (conn, tr) in zip(axes.flat, panels):
            ws = [w for w in tp if w["conn"] == conn and w["transport"] == tr]
            xs = range(len(ws))
            for j, b in enumerate(("stock", "module")):
                meds, lo, hi = [], [], []
                for w in ws:
                    v = [value(r) for r in w["runs"][b]]
                    m = statistics.median(v)
                    meds.append(m)
                    lo.append(m - min(v))
                    hi.append(max(v) - m)
                ax.bar([x + (j - 0.5) * 0.38 for x in xs], meds, 0.38,
                       yerr=[lo, hi], capsize=3, color=colors[b], label=b)
            for x, w in zip(xs, ws):
                ratio = ratio_key(summarize(w))
                top = max(max(value(r) for r in w["runs"][b])
                          for b in ("stock", "module"))
                ax.text(x, top * 1.02, "%.2fx" % ratio, ha="center",
                        va="bottom", fontsize=8)
            ax.set_xticks(list(xs))
            ax.set_xticklabels(["%s\n%s" % (LOCATION_PATH[w["location"]],
                                            w["headers"]) for w in ws],
                               fontsize=8)
            ax.set_title("%s connections, %s" % (conn, tr))
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
            ax.legend(fontsize=8, loc="lower right")
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        fig.savefig(out_dir / fname, dpi=100)
        plt.close(fig)

    if panels:
        per_workload("throughput.png", lambda r: r["rps"],
                     "requests/s (median, min-max)",
                     "h2load requests/s, stock vs module (ratio = median of "
                     "pair ratios module/stock)", lambda st: st["ratio"])
        made.append(("throughput.png", "requests/s per workload"))
    if panels and all("worker_cpu_ns" in r for w in tp for b in w["runs"]
                      for r in w["runs"][b]):
        per_workload("worker_cpu.png",
                     lambda r: r["worker_cpu_ns"] / r["requests"] / 1e3,
                     "worker CPU us per request (median, min-max)",
                     "nginx worker CPU time per request (schedstat), stock "
                     "vs module (ratio = median of pair ratios stock/module)",
                     lambda st: st["cpu"]["ratio"])
        made.append(("worker_cpu.png", "worker CPU time per request per "
                     "workload"))

    cg = data["callgrind"]
    if cg:
        fig, ax = plt.subplots(figsize=(max(7, 1.4 * len(cg)), 4.5))
        for j, b in enumerate(("stock", "module")):
            xs = [i + (j - 0.5) * 0.38 for i in range(len(cg))]
            region = [c["builds"][b]["region"] for c in cg]
            rest = [c["builds"][b]["per_request"] - c["builds"][b]["region"]
                    for c in cg]
            ax.bar(xs, region, 0.38, color=colors[b],
                   label="%s: header compression" % b)
            ax.bar(xs, rest, 0.38, bottom=region, color=colors[b], alpha=0.35,
                   label="%s: the rest" % b)
            for x, c in zip(xs, cg):
                ax.text(x, c["builds"][b]["per_request"] * 1.01,
                        fmt(c["builds"][b]["per_request"] / 1000, 1) + "k",
                        ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(cg)))
        ax.set_xticklabels(["%s\n%s, %s" % (LOCATION_PATH[c["location"]],
                                            c["headers"], c["conn"])
                            for c in cg], fontsize=8)
        ax.set_ylabel("instructions per request (callgrind)")
        ax.set_title("instructions per request, h2c, stock (left) vs module "
                     "(right)", fontsize=10)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(out_dir / "instructions.png", dpi=100)
        plt.close(fig)
        made.append(("instructions.png", "instructions per request per "
                     "workload"))

    curve = data["curve"]
    if curve:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ks = [r["k"] for r in curve]
        for b in ("stock", "module"):
            ax.plot(ks, [r[b] for r in curve], marker="o", color=colors[b],
                    label=b)
            for k, r in zip(ks, curve):
                ax.annotate(fmt(r[b]), (k, r[b]), textcoords="offset points",
                            xytext=(0, 5), ha="center", fontsize=7)
        ax.axhline(TARGETS["bytes_headers"], color="#d62728", ls="--", lw=1,
                   label="target (%d)" % TARGETS["bytes_headers"])
        ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_ylim(0, max(r["stock"] for r in curve) * 1.15)
        ax.set_xlabel("requests per connection (h2load -n K -c 1)")
        ax.set_ylabel("response header bytes per response")
        ax.set_title("/headers (8 headers + request id), browser request "
                     "headers, h2c", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / "header_bytes.png", dpi=100)
        plt.close(fig)
        made.append(("header_bytes.png", "response header bytes per "
                     "response against requests per connection"))
    if data.get("weight"):
        nginx_memory.plot(plt, colors, data["weight"], out_dir)
        made.append(("weight.png", "worker memory per connection held "
                     "open"))
    if data.get("proxy", {}).get("summary"):
        proxy_plot(plt, colors, data["proxy"], out_dir)
        made.append(("proxy.png", "the reverse-proxy workload"))
    return made


def proxy_plot(plt, colors, proxy, out_dir):
    """proxy.png: header bytes and worker CPU per response (each pair a
    dot, the bar the median), instructions per request under callgrind
    (the darker part in ngx_http_v2_header_filter)."""
    builds = ("stock", proxy["config"]["kind"])
    names = ("stock", "module")
    cg = proxy.get("callgrind") or {}
    panels = [("header_bytes_per_response", "response header bytes per "
               "response"), ("cpu_us_per_request", "worker CPU us per "
                             "request")]
    fig, axes = plt.subplots(1, len(panels) + bool(cg),
                             figsize=(4.2 * (len(panels) + bool(cg)), 4))
    for ax, (key, ylabel) in zip(axes, panels):
        for x, (b, name) in enumerate(zip(builds, names)):
            ax.bar(x, proxy["summary"][b][key], 0.6, color=colors[name])
            ax.plot([x] * len(proxy["runs"]),
                    [p[b][key] for p in proxy["runs"]], "k.", ms=4)
            ax.text(x, proxy["summary"][b][key] * 1.01,
                    fmt(proxy["summary"][b][key], 1), ha="center",
                    va="bottom", fontsize=8)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_ylabel(ylabel)
    if cg:
        ax = axes[-1]
        for x, (b, name) in enumerate(zip(builds, names)):
            if b not in cg:
                continue
            total = cg[b]["ir_per_request"]
            filt = cg[b]["header_filter_ir_per_request"] or 0
            ax.bar(x, filt, 0.6, color=colors[name])
            ax.bar(x, total - filt, 0.6, bottom=filt, color=colors[name],
                   alpha=0.35)
            ax.text(x, total * 1.01, fmt(total / 1000, 1) + "k",
                    ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_ylabel("instructions per request (callgrind)")
        ax.set_title("dark: in ngx_http_v2_header_filter", fontsize=9)
    fig.suptitle("reverse proxy (conf/proxy.conf, TLS, %d pairs of h2load "
                 "-c %d -m %d)" % (len(proxy["runs"]),
                                   proxy["config"]["clients"],
                                   proxy["config"]["streams"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(out_dir / "proxy.png", dpi=100)
    plt.close(fig)


def proxy_section(data, level="##"):
    """The reverse-proxy workload's tables, as make bench-proxy prints
    them."""
    proxy = data.get("proxy")
    if not proxy:
        return []
    from interop import proxy_bench
    cfg = proxy["config"]
    return [level + " The reverse-proxy workload (conf/proxy.conf, TLS)", "",
            "Stock and the module (%s) in front of one origin "
            "(interop/upstream.py: 1,000 API responses of 8 to 40+ header "
            "lines), h2load -c %d -m %d with a browser's request headers, "
            "%d interleaved pairs of %d s; callgrind: %d requests on one "
            "process (`make bench-proxy`, interop/proxy_bench.py)."
            % (proxy["label"], cfg["clients"], cfg["streams"], cfg["pairs"],
               cfg["duration"], cfg["cg_requests"]), ""] + \
        proxy_bench.markdown(proxy) + [""]


# ------------------------------------------------------------------ report

def method_section(data):
    cfg = data["environment"]["config"]
    lo_w, hi_w = cfg["cg_warm"]
    lo_c, hi_c = cfg["cg_cold"]
    line = data["environment"].get("nginx_line", "1.26.3")
    stock, hpack = (("nginx-stock", "nginx-hpack") if line == "1.26.3" else
                    ("nginx-%s-stock" % line, "nginx-%s-hpack" % line))
    return """\
## How it was measured

- Both nginx {line} builds (`build/{stock}`, `build/{hpack}`; same
  configure flags, `-O2 -g`) serve `bench/conf/bench.conf`, rendered per
  build under `build/bench/nginx/`: the module build adds `load_module` and
  `hpack on`, nothing else differs. One worker each, 127.0.0.1 only, access
  log off, ECDSA P-256 certificate, TLS 1.3.
- Request headers: **browser** = the 4 pseudo-headers plus 7 fields of a
  Chrome 124 navigation via `h2load -H` (user-agent, accept,
  accept-language, accept-encoding, a 200-byte cookie, referer, sec-ch-ua:
  11 fields; 490 bytes in the 7 values, 520 with those of the
  pseudo-headers of a `/headers` request); **minimal** = h2load's own
  (4 pseudo-headers and `user-agent: h2load nghttp2/1.52.0`).
- Locations: `/tiny` (`return 200 "ok\\n"`), `/static/1k.html` (a 1 KiB
  file), `/headers` (8 security/cache headers and `x-request-id
  $request_id`, `return 200`).
- Warm: `h2load -n {warm_n} -c 1 -m {warm_m}` (one connection). Cold:
  `h2load -n N -c N` (N connections of one request each; N = {cold_h2c}
  on h2c, {cold_tls} on TLS). {pairs} pairs per workload, stock then module,
  round-robin over all workloads after one untimed warm-up run per location;
  req/s is h2load's figure, the ratio is taken pair by pair (module/stock),
  and its median and min-max are shown.
- Worker CPU: `/proc/<worker pid>/schedstat` read before and after each
  h2load run, the nanoseconds the worker spent on a CPU divided by the
  requests; its pair ratio is stock/module (above 1 the module needs less
  CPU per request). It leaves out the time the worker waits for a CPU
  inside the guest, not the time the host takes from the virtual CPU
  (steal) or what other tenants do to the caches, so on a shared machine
  it is hardly steadier than req/s; the callgrind counts are the
  deterministic figures. The user/kernel split comes from the utime and
  stime ticks of `/proc/<pid>/stat`, summed over all runs of a workload.
- Header bytes per response: h2load's `traffic: ... headers` bytes divided
  by the requests of the run (HEADERS payloads as received); space savings
  is h2load's own.
- Instructions: each build under `valgrind --tool=callgrind` with
  `master_process off; daemon off;` serves a fixed sequence twice: warm =
  `h2load -n N -c 1 -m 1` with N = {lo_w} and {hi_w}, cold = N connections
  of one request each, one after another, with N = {lo_c} and {hi_c}. The
  figures are (run with the larger N - run with the smaller N) / (difference
  of N): start-up, shutdown and the first connection's set-up cancel out.
- Header compression = everything executed on the source lines of:
  stock's request-block state machine
  (`ngx_http_v2_state_header_block`, `_field_len`, `_field_huff`,
  `_field_raw`, `_field_skip`, `_process_header`, `_header_complete`),
  `ngx_http_v2_validate_header`, `ngx_http_v2_get_indexed_header`,
  `ngx_http_v2_add_header`, `ngx_http_v2_table_account`,
  `ngx_http_v2_table_size`, `ngx_http_huff_decode`, `ngx_http_huff_encode`,
  `ngx_http_v2_string_encode`, `ngx_http_v2_write_int`, the encoding lines
  of `ngx_http_v2_header_filter` (from the patch's hook, or stock's
  `tmp = ngx_palloc(r->pool, tmp_len)`, to the line before
  `fin = r->header_only`), the patch's `ngx_http_v2_state_hpack_block`, and
  every function of `module/` and `codec/` (`ngx_http_hpack_*`, `hpack_*`,
  `hpack::*`); plus the inclusive cost of every call those lines make to
  anything else (`ngx_hash_key`, `ngx_hash_find`, the `headers_in` handlers
  such as `ngx_http_process_user_agent`, `ngx_http_v2_pseudo_header`,
  `ngx_http_v2_cookie`, `ngx_list_push`, `ngx_strlow`, the pool allocator,
  libc), except `ngx_http_v2_run_request` (inlined into
  `_header_complete`: its lines are excluded too),
  `ngx_http_v2_state_complete`, `ngx_http_v2_state_skip_padded` and
  `ngx_destroy_pool`. Lines, not
  functions, because gcc inlines across the state machine: a function
  inlined into a region function counts when the region's source calls it
  (stock's static `ngx_http_v2_pseudo_header` counts as the module's call
  to the exported one does), so inlining changes nothing
  (`bench/nginx_callgrind.py`). Not counted in either build: the length
  pass of `ngx_http_v2_header_filter` before the hook (the same code in
  both) and the HEADERS frame around the block.
""".format(warm_n=cfg["warm_n"], warm_m=cfg["warm_m"],
           cold_h2c=cfg["cold_n"]["h2c"], cold_tls=cfg["cold_n"]["tls"],
           pairs=cfg["pairs"], lo_w=lo_w, hi_w=hi_w, lo_c=lo_c, hi_c=hi_c,
           line=line, stock=stock, hpack=hpack)


def parts_table(data):
    """The module's header compression by part (nginx_callgrind.parts()),
    per callgrind workload; nothing for results that predate the split."""
    rows = [c for c in data["callgrind"] if "parts" in c["builds"]["module"]]
    if not rows or len(rows) != len(data["callgrind"]):
        return []
    names = [nginx_callgrind.PART_NAMES[k] for k in nginx_callgrind.PARTS]
    out = ["The module's build's header compression by part, instructions "
           "per request: the module's own C (`ngx_http_hpack_*`), the codec "
           "(`hpack_*`, `hpack::*`), nginx's functions (its hook points and "
           "what the glue calls in nginx: the pseudo-header parser, the "
           "cookie and `headers_in` handlers, the pool) and the C library.",
           "",
           "| workload (h2c) | stock | module | " + " | ".join(names) + " |",
           "|---|---:|---:|" + "---:|" * len(names)]
    for c in rows:
        p = c["builds"]["module"]["parts"]
        out.append("| `%s` %s, %s | %s | %s | %s |" % (
            LOCATION_PATH[c["location"]], c["headers"], c["conn"],
            fmt(c["builds"]["stock"]["region"]),
            fmt(c["builds"]["module"]["region"]),
            " | ".join(fmt(p[k]) for k in nginx_callgrind.PARTS)))
    return out + [""]


def breakdown_section(data):
    out = []
    for loc, conn in (("headers", "warm"), ("tiny", "warm"),
                      ("headers", "cold")):
        c = find(data["callgrind"], location=loc, headers="browser",
                 conn=conn)
        if not c:
            continue
        out.append("### `%s`, browser request headers, %s: header "
                   "compression per request\n" % (LOCATION_PATH[loc], conn))
        for b in ("module", "stock"):
            d = c["builds"][b]
            out.append("%s: %s instructions (`callgrind/%s-%s.txt` has the "
                       "whole list and the hottest functions of the process)"
                       "\n" % (b, fmt(d["region"]), c["name"], b))
            out.append("```")
            out += d["breakdown"][:18]
            out.append("```\n")
    return out


# ----------------------------------------------------------------- HTTP/3

def h3_section(h3, env):
    """The HTTP/3 phase (bench/nginx_h3.py): its targets and figures."""

    def ratio(m, s):
        return m / s if s else 0.0

    def verdict(ok):
        return "met" if ok else "**missed**"

    md = ["## HTTP/3", ""]
    if h3.get("skipped"):
        return md + ["Not run: %s." % h3["skipped"], ""]
    cfg = h3["config"]
    md += ["nginx %s over QUIC (%s), driven by %s; not h2load, which has "
           "no HTTP/3 on Debian 12. `%s`, %s. %.0f s. The module has "
           "`hpack_http3 on`; the browser's request fields of the HTTP/2 "
           "workloads on every request." % (
               h3["line"], "the benched line" if h3["line"] == h3["benched"]
               else "not the benched %s: %s" % (h3["benched"],
                                                h3["not_benched"]),
               h3["client"], env["command"], env["cpu"], h3["seconds"]), ""]
    octs = {r["location"]: r for r in h3["octets"]}
    cg = {c["location"]: c["builds"] for c in h3["callgrind"]}
    mem = {r["build"]: r["kib"] for r in h3["memory"]
           if r.get("table") is None}
    rows = []
    o = octs.get("headers")
    if o:
        s, m = o["stock"]["warm"]["sum"], o["module"]["warm"]["sum"]
        r = ratio(m, s)
        rows.append("| `/headers` warm: section + encoder-stream octets per "
                    "response | %.1f | %.1f | %.3fx | <= %.2fx | %s |" % (
                        s, m, r, TARGETS["h3_octets_headers"],
                        verdict(r <= TARGETS["h3_octets_headers"])))
    for loc in ("headers", "tiny"):
        if loc in cg:
            s, m = cg[loc]["stock"]["region"], cg[loc]["module"]["region"]
            r = ratio(m, s)
            rows.append("| `/%s` warm: header-compression instructions per "
                        "request | %.0f | %.0f | %.3fx | <= %.1fx | %s |" % (
                            loc, s, m, r, TARGETS["h3_hc_" + loc],
                            verdict(r <= TARGETS["h3_hc_" + loc])))
    if len(mem) == 2:
        d = mem["module"] - mem["stock"]
        rows.append("| worker memory per warm connection held open, KiB | "
                    "%.2f | %.2f | %+.2f | <= %+.0f | %s |" % (
                        mem["stock"], mem["module"], d, TARGETS["h3_memory_kib"],
                        verdict(d <= TARGETS["h3_memory_kib"])))
    md += ["### Targets", "", "| | stock | module | module / stock | target "
           "| |", "|---|---:|---:|---:|---:|---|"] + rows + [""]

    md += ["### Response octets (one connection of %d requests, one at a "
           "time)" % cfg["octet_requests"], "",
           "Section: the HEADERS frame's payload. Encoder stream: the "
           "server's QPACK encoder-stream octets received since the previous "
           "response (stock's encoder stream carries nothing). Warm: the mean "
           "of responses 2-%d." % cfg["octet_requests"], "",
           "| location | response | stock section | module section | module "
           "encoder stream | module section + encoder | module / stock |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for r in h3["octets"]:
        for kind in ("first", "warm"):
            s, m = r["stock"][kind], r["module"][kind]
            md.append("| `%s` | %s | %.1f | %.1f | %.1f | %.1f | %.3fx |" % (
                LOCATION_PATH[r["location"]], kind, s["sum"], m["section"],
                m["encoder"], m["sum"], ratio(m["sum"], s["sum"])))
    md.append("")

    md += ["### Instructions per request (callgrind, warm connection)", "",
           "N_lo and N_hi requests on one connection, one at a time, the "
           "difference per request (%d - %d). Header compression: "
           "nginx_callgrind.H3 (QPACK request parsing, the dynamic table, "
           "the encoder- and decoder-stream parsers and senders, Huffman, the "
           "response encoding lines; the module's and codec's functions and "
           "what they call); `ngx_http_v3_process_header()`, which takes each decoded "
           "field in both builds, is out of it in both." % (
               cfg["cg_warm"][1], cfg["cg_warm"][0]), "",
           "| location | stock compression | module compression | ratio | "
           "stock total | module total | ratio |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for c in h3["callgrind"]:
        s, m = c["builds"]["stock"], c["builds"]["module"]
        md.append("| `%s` | %.0f | %.0f | %.3fx | %.0f | %.0f | %.3fx |" % (
            LOCATION_PATH[c["location"]], s["region"], m["region"],
            ratio(m["region"], s["region"]), s["per_request"],
            m["per_request"], ratio(m["per_request"], s["per_request"])))
    md.append("")
    for c in h3["callgrind"]:
        md.append("The module's header compression on `%s` by part: %s." % (
            LOCATION_PATH[c["location"]], ", ".join(
                "%s %.0f" % (nginx_callgrind.PART_NAMES[k],
                             c["builds"]["module"]["parts"][k])
                for k in nginx_callgrind.PARTS)))
        md.append("")
    for c in h3["callgrind"]:
        for b in ("stock", "module"):
            md += ["`%s`, %s: header compression per request, by line "
                   "owner (self) and callee (`->`, inclusive):" % (
                       LOCATION_PATH[c["location"]], b), "", "```"]
            md += c["builds"][b]["breakdown"][:20] + ["```", ""]

    md += ["### Worker CPU per request (%d pair%s, stock then module)"
           % (cfg["pairs"], "s" if cfg["pairs"] > 1 else ""), "",
           "One h3client connection of %d requests, sent as fast as the "
           "server's stream limit lets them (h3client's own CPU shares the "
           "machine); the worker's CPU time from /proc/<pid>/schedstat. "
           "Median of the pairs." % cfg["cpu_requests"], "",
           "| location | stock us | module us | module / stock (pairs) |",
           "|---|---:|---:|---:|"]
    for r in h3["cpu"]:
        md.append("| `%s` | %.2f | %.2f | %.3fx (%.2f-%.2f) |" % (
            LOCATION_PATH[r["location"]], r["stock_us"], r["module_us"],
            r["ratio"], r["ratio_min"], r["ratio_max"]))
    md.append("")

    md += ["### Worker memory per warm connection held open", "",
           "A fresh server each time; one connection of two requests closed, "
           "the worker's VmRSS; %d h3client processes each holding one "
           "connection after two `/headers` requests, VmRSS again; the "
           "difference over %d, median of %d servers. The module at "
           "`hpack_http3_table_size 0` has no encoder table and opens no "
           "encoder stream: the difference between the module's two rows "
           "is what the table and its stream cost, of which nginx's part "
           "is the stream (`ngx_quic_open_stream()` gives each stream a "
           "pool of `NGX_DEFAULT_POOL_SIZE`, and its data a QUIC buffer "
           "the connection keeps)." % (
               cfg["memory_connections"], cfg["memory_connections"],
               cfg["memory_repeats"]), "",
           "| build | KiB per connection | - stock | runs |",
           "|---|---:|---:|---|"]
    stock = mem.get("stock")
    for r in h3["memory"]:
        md.append("| %s%s | %.2f | %s | %s |" % (
            r["build"], "" if r.get("table") is None else
            ", `hpack_http3_table_size %d`" % r["table"], r["kib"],
            "%+.2f" % (r["kib"] - stock) if stock is not None else "",
            ", ".join("%.2f" % k for k in r["runs"])))
    md.append("")
    if h3.get("problems"):
        md += ["nginx error-log alerts:", ""]
        md += ["    " + p for p in h3["problems"][:20]] + [""]
    md += ["Files: `h3-cpu.log` (every CPU run), `callgrind/h3-*.txt` (the "
           "callgrind summaries).", ""]
    return md


def write(out_dir, readme=None):
    out_dir = Path(out_dir)
    data = json.loads((out_dir / "results.json").read_text())
    env = data["environment"]
    made = plots(data, out_dir)
    t = targets(data)
    missed = [row for row in t if "missed" in row[3]]

    md = ["# nginx with the hpack module against stock nginx", ""]
    md.append("`%s` on %s, commit %s%s (codec+module sources %s), %s. "
              "Took %s s. %s" % (
                  env["command"], env["date"], env["commit"],
                  " with uncommitted changes" if env["dirty"] else "",
                  env["sources"], env["cpu"], env.get("seconds", "?"),
                  "QUICK run: few requests, figures not meant to be judged."
                  if env["quick"] else ""))
    md.append("")
    md.append("Load average %.2f at the start, %.2f at the end (a shared "
              "machine: read the pair spreads)." % (
                  env["loadavg_start"][0],
                  env.get("loadavg_end", [0])[0]))
    md.append("")
    if t:
        md += ["## Targets", ""] + targets_table(data) + [""]
        md.append("Stock measured before this harness: header compression "
                  "22,200 of 39,745 instructions per request on /headers, "
                  "11,088 of 20,803 on /tiny, 496 response header bytes per "
                  "response.")
        md.append("")
    for f, caption in made:
        md.append("![%s](%s)" % (caption, f))
    if made:
        md.append("")
    if data["throughput"]:
        md += ["## Requests per second, warm connections", ""]
        md += throughput_table(data, "warm") + [""]
        md += ["## Requests per second, cold connections (one request "
               "each)", ""]
        md += throughput_table(data, "cold") + [""]
    split = split_table(data)
    if split:
        md += ["## The worker's CPU time: user space and kernel", "",
               "Header compression runs in user space; on loopback the "
               "kernel's TCP share bounds what fewer instructions can buy in "
               "requests per second.", ""]
        md += split + [""]
        mem = data.get("memory") or {}
        if all(mem.get(b) for b in ("stock", "module")):
            md.append("Worker memory after the throughput phase: stock "
                      "%.1f MiB resident (peak %.1f), module %.1f MiB "
                      "(peak %.1f)." % (
                          mem["stock"].get("VmRSS", 0) / 1024,
                          mem["stock"].get("VmHWM", 0) / 1024,
                          mem["module"].get("VmRSS", 0) / 1024,
                          mem["module"].get("VmHWM", 0) / 1024))
            md.append("")
    if data["callgrind"]:
        md += ["## Instructions per request (callgrind, h2c)", ""]
        md += callgrind_table(data) + [""]
        warnings = sorted({w for c in data["callgrind"] for b in c["builds"]
                           for w in c["builds"][b]["warnings"]})
        for w in warnings:
            md.append("- warning: %s" % w)
        if warnings:
            md.append("")
    if data.get("weight"):
        md += ["## The weight of a connection (worker VmRSS per connection "
               "held open)", ""]
        md += nginx_memory.table(data["weight"]) + [""]
        md += [nginx_memory.method(), ""]
    if data["curve"]:
        md += ["## Response header bytes per response against requests per "
               "connection (`/headers`, h2c)", ""]
        md += curve_table(data) + [""]
    if data.get("first_blocks"):
        md += ["## Response block octets of a new connection (h2c)", ""]
        md += first_block_table(data["first_blocks"]) + [""]
    if data.get("wire"):
        md += ["## One warm `/headers` response block, field by field", ""]
        for b in ("module", "stock"):
            w = data["wire"].get(b)
            if not w:
                continue
            md.append("%s, request %d on the connection (blocks of requests "
                      "1-%d: %s octets):" % (
                          b, w["request"], w["request"],
                          ", ".join(str(s) for s in w["sizes"])))
            md.append("")
            md += wire_table(w) + [""]
    md += proxy_section(data)
    if data.get("h3"):
        md += h3_section(data["h3"], env)
    if data["callgrind"]:
        md += ["## Where the header-compression instructions go", ""]
        if missed:
            md.append("Missed: %s. The lines below are instructions per "
                      "request: `name` is work on that function's own lines "
                      "(inlined code included), `-> name` a call from them, "
                      "inclusive." % "; ".join(r[0] for r in missed))
            md.append("")
        md += parts_table(data)
        md += breakdown_section(data)
    if data.get("problems"):
        md += ["## nginx error-log alerts during the run", ""]
        md += ["    " + p for p in data["problems"][:20]] + [""]
    if not any(data.get(k) for k in ("throughput", "callgrind", "weight",
                                     "curve", "wire", "proxy")):
        # the HTTP/3 phase alone (make bench-h3): its section says it all
        (out_dir / "REPORT.md").write_text("\n".join(md))
        return
    md.append(method_section(data))
    md += ["## Files", "",
           "- `h2load/<workload>.log`: every h2load run of the workload, "
           "stock and module, with its command line",
           "- `h2load/curve-headers.log`: the bytes-per-response curve",
           "- `callgrind/<workload>-<build>.txt`: instructions per request, "
           "header compression line by line, hottest functions (from the "
           "difference of two runs)",
           "- `callgrind/<workload>-<build>.annotate.txt`: "
           "`callgrind_annotate --inclusive=yes` of the larger run "
           "(start-up included); the callgrind.out files stay in "
           "`build/bench/nginx/callgrind/`",
           "- the reverse-proxy servers' prefixes and logs are in "
           "`build/proxy-interop/bench/`",
           "- `results.json`: everything above, for `bench/nginx_bench.py "
           "--report DIR`", ""]
    (out_dir / "REPORT.md").write_text("\n".join(md))

    if readme is not None:
        update_readme(Path(readme), out_dir, data, made)


def headline(data, rel):
    """README.md's headline figures of a run: /headers with a browser's
    request headers on a warm connection, stock against the module."""
    env = data["environment"]
    out = ["Latest `%s` ([the report](%s/REPORT.md), %s, nginx %s, %s): "
           "`/headers` (8 security/cache headers and a request id) with a "
           "browser's request headers on a warm connection." % (
               env["command"], rel, env["date"],
               env.get("nginx_line", "?"), env["cpu"]), "",
           "| | stock | module |", "|---|---:|---:|"]
    w = find(data["throughput"], location="headers", headers="browser",
             transport="h2c", conn="warm")
    if w:
        st = summarize(w)
        out.append("| response header octets per response (h2load space "
                   "savings) | %s (%.1f%%) | %s (%.1f%%) |" % (
                       fmt(st["stock_bytes"], 1), st["stock_savings"],
                       fmt(st["module_bytes"], 1), st["module_savings"]))
    c = find(data["callgrind"], location="headers", headers="browser",
             conn="warm")
    if c:
        s = c["builds"]["stock"]["region"]
        m = c["builds"]["module"]["region"]
        out.append("| header-compression instructions per request "
                   "(callgrind) | %s | %s (%.2fx) |" % (
                       fmt(s), fmt(m), m / s if s else 0))
    if w:
        out.append("| req/s over h2c, median of %d pairs | %s | %s (%.2fx, "
                   "pairs %.2f-%.2f) |" % (
                       st["pairs"], fmt(st["stock_rps"]),
                       fmt(st["module_rps"]), st["ratio"], st["ratio_min"],
                       st["ratio_max"]))
    rows = data.get("weight") or []
    s = nginx_memory.find(rows, "stock", 4096, "warm")
    m = nginx_memory.find(rows, "module", 4096, "warm")
    if s is not None and m is not None:
        out.append("| worker memory per warm connection held open, KiB | "
                   "%.2f | %.2f (%+.2f) |" % (s, m, m - s))
    return out


def update_readme(readme, out_dir, data, made):
    """The latest full run's headline figures between the markers of the
    repository's README.md (readme), linking to its REPORT.md: the one
    document besides the reports that gives figures."""
    readme = Path(readme).resolve()
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        return
    rel = out_dir.resolve().relative_to(readme.parent)
    block = [README_BEGIN, ""] + headline(data, rel) + ["", README_END]
    head = text[:text.index(README_BEGIN)]
    tail = text[text.index(README_END) + len(README_END):]
    readme.write_text(head + "\n".join(block) + tail)
