#!/usr/bin/env python3
"""The structs the hook patch adds a member to keep every stock member at
stock's offset and are at least stock's size.

A dynamic module built against the pristine headers of the same nginx
line (--with-compat) is loaded by the patched nginx as by stock: it must
find the HTTP/2 connection's and the HTTP/3 session's members where stock
has them, which a member inserted in the middle would move.  Each member
stock declares (bit-fields aside) has its offsetof() compiled against the
stock and the patched tree of one line, both configured, and compared.

    scripts/check-layout.py STOCK_TREE PATCHED_TREE

Exits 1, naming the members, when they differ.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

STRUCTS = [
    # header, struct tag, typedef
    ("src/http/v2/ngx_http_v2.h", "ngx_http_v2_connection_s",
     "ngx_http_v2_connection_t"),
    ("src/http/v3/ngx_http_v3.h", "ngx_http_v3_session_s",
     "ngx_http_v3_session_t"),
]
INCLUDES = ["objs", "src/core", "src/event", "src/event/modules",
            "src/event/quic", "src/os/unix", "src/http", "src/http/modules",
            "src/http/v2", "src/http/v3"]
MEMBER = re.compile(r"^\s+[A-Za-z_][A-Za-z_0-9 ]*?[\s*]+([A-Za-z_][A-Za-z_0-9]*)"
                    r"(\[[^\]]*\])?;\s*$")


def members(tree, header, tag):
    """The names of the struct's members, bit-fields aside."""
    lines = (tree / header).read_text().splitlines()
    start = lines.index("struct %s {" % tag)
    out = []
    for line in lines[start + 1:]:
        if line.startswith("};"):
            return out
        m = MEMBER.match(line)
        if m and ":" not in line:
            out.append(m.group(1))
    raise SystemExit("check-layout: struct %s in %s does not end" % (tag, header))


def layout(tree, structs, tmp):
    """{typedef: ({member: offset}, size)} compiled against tree."""
    body = []
    for _, _, typedef, names in structs:
        body.append('    printf("%s sizeof %%zu\\n", sizeof(%s));'
                    % (typedef, typedef))
        for n in names:
            body.append('    printf("%s %s %%zu\\n", offsetof(%s, %s));'
                        % (typedef, n, typedef, n))
    src = tmp / "layout.c"
    # ngx_config.h first: it sets the feature macros (_GNU_SOURCE) and
    # includes stddef.h and stdio.h
    src.write_text("#include <ngx_config.h>\n#include <ngx_core.h>\n"
                   "#include <ngx_http.h>\n\nint\nmain(void)\n{\n"
                   + "\n".join(body) + "\n    return 0;\n}\n")
    exe = tmp / ("layout-" + tree.name)
    incs = ["-I" + str(tree / d) for d in INCLUDES if (tree / d).is_dir()]
    subprocess.run(["cc", "-w", "-o", str(exe), str(src)] + incs, check=True)
    out = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        typedef, name, value = line.split()
        out.setdefault(typedef, {})[name] = int(value)
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().split("\n\n")[2])
    stock, patched = Path(sys.argv[1]), Path(sys.argv[2])
    config = (stock / "objs" / "ngx_auto_config.h").read_text()
    structs = []
    for header, tag, typedef in STRUCTS:
        if not (stock / header).exists():
            continue
        if "v3" in header and "NGX_HTTP_V3" not in config:
            continue
        structs.append((header, tag, typedef, members(stock, header, tag)))
    with tempfile.TemporaryDirectory() as tmp:
        want = layout(stock, structs, Path(tmp))
        got = layout(patched, structs, Path(tmp))
    wrong = []
    for typedef, offsets in want.items():
        for name, offset in offsets.items():
            if name == "sizeof":
                if got[typedef][name] < offset:
                    wrong.append("%s is %d octets, stock's %d"
                                 % (typedef, got[typedef][name], offset))
            elif got[typedef][name] != offset:
                wrong.append("%s.%s at %d, stock's at %d"
                             % (typedef, name, got[typedef][name], offset))
    if wrong:
        print("check-layout: the patched tree moves stock's members:\n  "
              + "\n  ".join(wrong), file=sys.stderr)
        return 1
    print("check-layout: %s" % "; ".join(
        "%s: %d members at stock's offsets" % (t, len(o) - 1)
        for t, o in want.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
