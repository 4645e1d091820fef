"""Same answer as stock: one generated corpus of request header blocks,
sent to the stock build and to the module with "hpack on" of one nginx
line, and every answer compared.

Every request goes twice on the same connection: once with every field a
literal with incremental indexing, then with every field an indexed
reference to the entry the first block made (a literal again when the
entry is gone), so that what the module memoizes about an entry is what
answers the second time.  A request that ends the connection is followed
by a new one (its second sending is then recorded as not sent).

The answer of a request is what the client and the application see: the
HTTP/2 outcome (the status, RST_STREAM's or GOAWAY's error code, and a
GOAWAY that follows a response, found with a PING), the request head the
HTTP/1.1 origin behind nginx received (the request line and every header
line proxy_pass sent), and nginx's variables as response headers
($request_method, $request_uri, $args, $host, $http_host, $http_cookie,
$request_port and $is_request_port from 1.29, and the hop-by-hop headers
proxy_pass does not pass).

The requests go to name-based servers of their own port (h2c + 200):
the defaults, underscores_in_headers on, ignore_invalid_headers off, both,
and (1.29 and later) max_headers 40.  The only differences allowed are the
HPACK conformance bugs of stock nginx the module fixes (README: "What
stock nginx does that is recorded"): the module must answer GOAWAY
COMPRESSION_ERROR there.
"""

import functools
import random
import time

from hpack.table import HeaderTable
from hyperframe.frame import PingFrame

from interop.harness import (Failure, RawH2, Skip, encode_int,
                             h2_error_name, info, version_at_least, walk)
from interop.harness.blocks import string
from interop.harness.origins import Origin

PORT_OFFSET = 200               # the differential servers' port: h2c + 200
TABLE_SIZE = 4096               # the client's encoder, nginx's default
FRAME = 16384                   # SETTINGS_MAX_FRAME_SIZE: block pieces
HEADER_LIMIT = 8 * 16384        # large_client_header_buffers 8 16k
FIELD_LIMIT = 16384             # one string of large_client_header_buffers
MAX_HEADERS = 40                # max_headers of m.diff.test (1.29+)
SEED = 20240601
TIMEOUT = 5

# server_name: directives (the first is the port's default server)
VARIANTS = [
    ("diff.test", ""),
    ("u.diff.test", "underscores_in_headers  on;"),
    ("i.diff.test", "ignore_invalid_headers  off;"),
    ("ui.diff.test", "underscores_in_headers  on;\n"
                     "        ignore_invalid_headers  off;"),
]
MAX_HEADERS_VARIANT = ("m.diff.test", "max_headers  %d;" % MAX_HEADERS)

# nginx's variables, as response headers (an empty one adds nothing)
ECHO_VARIABLES = [
    ("x-v-method", "$request_method"), ("x-v-uri", "$request_uri"),
    ("x-v-args", "$args"), ("x-v-host", "$host"),
    ("x-v-http-host", "$http_host"), ("x-v-cookie", "$http_cookie"),
    ("x-v-ua", "$http_user_agent"), ("x-v-msie", "$msie"),
    ("x-v-connection", "$http_connection"),
    ("x-v-keep-alive", "$http_keep_alive"),
    ("x-v-proxy-connection", "$http_proxy_connection"),
    ("x-v-te", "$http_te"), ("x-v-upgrade", "$http_upgrade"),
    ("x-v-transfer-encoding", "$http_transfer_encoding"),
    ("x-v-content-length", "$http_content_length"),
    ("x-v-d00", "$http_x_d00"),
]
# the port of the request's host (1.29 and later)
ECHO_PORT_VARIABLES = [
    ("x-v-request-port", "$request_port"),
    ("x-v-is-request-port", "$is_request_port"),
]

# Where stock nginx breaks RFC 7541 and the module does not: the module's
# answer to the literal sending must be GOAWAY COMPRESSION_ERROR.
ALLOWED = {
    "huffman_padding": "stock accepts Huffman padding longer than 7 bits "
                       "(RFC 7541 5.2, h2spec hpack/5.2/1)",
    "size_update_after_field": "stock accepts a dynamic table size update "
                               "after a field (RFC 7541 4.2, h2spec "
                               "hpack/4.2/1)",
}


def variants(version):
    if version_at_least(version, 1, 29):
        return VARIANTS + [MAX_HEADERS_VARIANT]
    return VARIANTS


def diff_port(server):
    return server.h2c_port + PORT_OFFSET


def server_block(server, listen=None):
    """The differential servers of server (text for its http{} block):
    h2c on diff_port(), or the listen lines given."""
    if listen is None:
        old = server.version.startswith("1.22.")
        listen = ["        listen  127.0.0.1:%d%s;"
                  % (diff_port(server), " http2" if old else ""),
                  "" if old else "        http2   on;"]
    out = ["", "    # interop/cases_differential.py: the origin echoes the "
           "request head",
           "    upstream diff_origin {",
           "        server     127.0.0.1:%d;" % Origin.shared().port,
           "        keepalive  8;", "    }"]
    for name, directives in variants(server.version):
        out += ["    server {"] + listen + [
                "        server_name  %s;" % name,
                "        " + directives,
                "        location / {",
                "            proxy_pass          http://diff_origin;",
                "            proxy_http_version  1.1;",
                "            proxy_set_header    Connection \"\";",
                "            proxy_set_header    Host $host;"]
        echo = ECHO_VARIABLES
        if version_at_least(server.version, 1, 29):
            echo = echo + ECHO_PORT_VARIABLES
        out += ["            add_header  %s  \"%s\" always;" % nv
                for nv in echo]
        out += ["        }", "    }"]
    return "\n".join(out) + "\n"


def configure(servers):
    """Adds the differential servers to every server (before start)."""
    for s in servers:
        s.extra += server_block(s)


# ------------------------------------------------------------- the corpus

class Request:
    """One request of the corpus: its fields in order, or a raw block
    builder for what no list of fields can say (allowed names the
    ALLOWED reason)."""

    def __init__(self, name, fields, huffman=None, raw=None, allowed=None):
        self.name = name
        self.fields = fields                # [(bytes, bytes)]
        self.huffman = huffman              # indexes of Huffman fields
        # (None: drawn at random, as the corpus is made)
        self.raw = raw
        self.allowed = allowed


BROWSERS = [
    b"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 "
    b"Firefox/128.0",
    b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, "
    b"like Gecko) Chrome/126.0.0.0 Safari/537.36",
    b"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 "
    b"(KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
    b"curl/7.88.1",
]
ACCEPTS = [
    b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    b"image/avif,image/webp,*/*", b"application/json", b"*/*",
    b"text/css,*/*;q=0.1",
]
PATHS = [b"/", b"/index.html", b"/app/main.js?v=3", b"/api/v1/items?page=2"
         b"&sort=-date", b"/img/logo.png", b"/search?q=h%C3%A9llo+world",
         b"/a/b/../c", b"/static/app.css", b"/%7Euser/", b"/x?", b"/x?a"]


def pseudo(rng, host, method=b"GET", path=None):
    return [(b":method", method), (b":scheme", b"http"),
            (b":authority", host), (b":path", path or rng.choice(PATHS))]


def browser(rng, host):
    fields = pseudo(rng, host)
    fields += [(b"user-agent", rng.choice(BROWSERS)),
               (b"accept", rng.choice(ACCEPTS)),
               (b"accept-language", rng.choice([b"en-US,en;q=0.5",
                                                b"de-CH, fr;q=0.7"])),
               (b"accept-encoding", b"gzip, deflate, br, zstd")]
    if rng.random() < 0.6:
        fields += [(b"cookie", b"sid=%x" % rng.getrandbits(48)),
                   (b"cookie", b"theme=dark")]
    if rng.random() < 0.5:
        fields += [(b"referer", b"http://%s/" % host),
                   (b"sec-fetch-mode", b"navigate"),
                   (b"sec-fetch-site", b"same-origin"),
                   (b"upgrade-insecure-requests", b"1")]
    if rng.random() < 0.3:
        fields.append((b"if-none-match", b'"%x"' % rng.getrandbits(32)))
    return fields


def api(rng, host):
    method = rng.choice([b"GET", b"POST", b"PUT", b"DELETE", b"PATCH",
                         b"HEAD", b"OPTIONS"])
    fields = pseudo(rng, host, method, b"/api/v2/orders/%d?fields=id,total"
                    % rng.randrange(10000))
    fields += [(b"authorization", b"Bearer %x" % rng.getrandbits(128)),
               (b"content-type", b"application/json"),
               (b"accept", b"application/json"),
               (b"x-request-id", b"%x" % rng.getrandbits(64))]
    if method in (b"POST", b"PUT", b"PATCH") and rng.random() < 0.5:
        fields.append((b"content-length", b"0"))
    if rng.random() < 0.5:
        fields.append((b"x-d00", b"api-%d" % rng.randrange(100)))
    return fields


def insert(fields, rng, *new):
    """fields with new (name, value)s inserted at one random place among
    the regular fields."""
    at = rng.randrange(4, len(fields) + 1)
    return fields[:at] + list(new) + fields[at:]


def with_pseudo(fields, name, value):
    return [(n, value if n == name else v) for n, v in fields]


INVALID_NAME_OCTETS = (list(range(0x00, 0x21)) + [0x7f, 0x80, 0xc3, 0xff]
                       + list(b'"(),/;<=>?@[\\]{}:'))
NAMES = [b"X-D00", b"x-D00", b"Accept", b"USER-AGENT", b"Cookie", b"Host",
         b"x_d00", b"_x", b"x__d", b"user_agent", b"x-d_0", b"_", b"x-d00_",
         b"", b"x-d00", b"content_length", b"Content-Length", b"TE",
         b"Connection", b"cookie_"]
VALUES = [b"a\rb", b"a\nb", b"a\r\nb", b"\r\n", b"a\x00b", b"\x00", b"ab\x00",
          b" a", b"a ", b"\ta", b"a\t", b" a ", b"  ", b"\t", b"", b"a\x7fb",
          b"a\x01b", b"caf\xc3\xa9", b"\xff\xfe", b"a\x0bb", b"a\x0cb",
          b"x" * 200]
# a NUL, LF or CR at the first, a middle and the last place of values
# around the module's 8 and 16 octets a test
LONG_VALUES = [(n, place, octet)
               for n in (8, 15, 16, 17, 40)
               for place in (0, n // 2, n - 1)
               for octet in (0x00, 0x0a, 0x0d)]
HOP = [(b"connection", b"close"), (b"connection", b"keep-alive"),
       (b"connection", b"te"), (b"keep-alive", b"timeout=5"),
       (b"proxy-connection", b"keep-alive"),
       (b"transfer-encoding", b"chunked"),
       (b"transfer-encoding", b"identity"), (b"upgrade", b"websocket"),
       (b"upgrade", b"h2c"), (b"te", b"trailers"), (b"te", b"gzip"),
       (b"te", b"trailers, deflate"), (b"te", b""), (b"te", b"Trailers"),
       (b"http2-settings", b"AAMAAABkAAQAoAAAAAIAAAAA")]
PSEUDO = [b":method", b":scheme", b":authority", b":path"]
ODD_PSEUDO_VALUES = [
    (b":path", b""), (b":path", b"*"), (b":path", b"noslash"),
    (b":path", b"//x"), (b":path", b"/%2e%2e/x"), (b":path", b"/a b"),
    (b":path", b"/x#frag"), (b":path", b"http://diff.test/abs"),
    (b":method", b"get"), (b":method", b""), (b":method", b"G ET"),
    (b":method", b"CONNECT"), (b":method", b"PROPFIND"),
    (b":scheme", b"https"), (b":scheme", b"ftp"), (b":scheme", b""),
    (b":authority", b""), (b":authority", b"a b"),
    (b":authority", b"diff.test:80"), (b":authority", b"[::1]:1"),
    (b":authority", b"x/y"), (b":authority", b".."),
    (b":authority", b"user@diff.test"), (b":authority", b"DIFF.TEST"),
]


def features(rng, host, others):
    """(name, fields transform) of every odd thing sent to every server;
    others: the other servers' names."""
    f = []
    for o in INVALID_NAME_OCTETS:
        for where, name in (("mid", b"x-d" + bytes([o]) + b"0"),
                            ("end", b"x-d00" + bytes([o]))):
            f.append(("name_octet_%02x_%s" % (o, where),
                      lambda r, n=name: insert(r, rng, (n, b"v"))))
    for name in NAMES:
        f.append(("name_%r" % name, lambda r, n=name: insert(r, rng,
                                                            (n, b"v"))))
    for i, value in enumerate(VALUES):
        f.append(("value_%d_%r" % (i, value[:12]),
                  lambda r, v=value: insert(r, rng, (b"x-d00", v))))
        f.append(("cookie_value_%d" % i,
                  lambda r, v=value: insert(r, rng, (b"cookie", v))))
    for n, place, octet in LONG_VALUES:
        value = bytearray(b"v" * n)
        value[place] = octet
        f.append(("value_%d_octets_%02x_at_%d" % (n, octet, place),
                  lambda r, v=bytes(value): insert(r, rng, (b"x-d00", v))))
    for n, v in HOP:
        f.append(("hop_%s_%s" % (n.decode(), v.decode()),
                  lambda r, n=n, v=v: insert(r, rng, (n, v))))
    for p in PSEUDO:
        f.append(("pseudo_%s_repeated" % p.decode(),
                  lambda r, p=p: r[:4] + [x for x in r[:4] if x[0] == p]
                  + r[4:]))
        f.append(("pseudo_%s_repeated_other_value" % p.decode(),
                  lambda r, p=p: r[:4] + [(p, b"/other" if p == b":path"
                                           else b"POST" if p == b":method"
                                           else b"https" if p ==
                                           b":scheme" else b"other.test")]
                  + r[4:]))
        f.append(("pseudo_%s_missing" % p.decode(),
                  lambda r, p=p: [x for x in r if x[0] != p]))
        f.append(("pseudo_%s_after_regular" % p.decode(),
                  lambda r, p=p: [x for x in r if x[0] != p]
                  + [x for x in r if x[0] == p]))
    for p in (b":foo", b":protocol", b":status", b":", b":Path"):
        f.append(("pseudo_unknown_%r" % p,
                  lambda r, p=p: r[:4] + [(p, b"v")] + r[4:]))
    for n, v in ODD_PSEUDO_VALUES:
        f.append(("pseudo_value_%s_%r" % (n.decode(), v),
                  lambda r, n=n, v=v: with_pseudo(r, n, v)))
    for other in others[:2]:
        f.append(("authority_vs_host_%s" % other.decode(),
                  lambda r, o=other: insert(r, rng, (b"host", o))))
    f += [("host_same_as_authority",
           lambda r: insert(r, rng, (b"host", host))),
          ("host_only", lambda r: [x for x in r if x[0] != b":authority"]
           + [(b"host", host)]),
          ("host_with_port", lambda r: insert(r, rng, (b"host",
                                                     host + b":80"))),
          ("host_twice", lambda r: insert(r, rng, (b"host", host),
                                          (b"host", host))),
          ("host_invalid", lambda r: insert(r, rng, (b"host", b"a/b"))),
          ("host_empty", lambda r: insert(r, rng, (b"host", b""))),
          ("host_only_invalid", lambda r: [x for x in r if x[0] !=
                                           b":authority"]
           + [(b"host", b"a b")]),
          ("no_authority_no_host",
           lambda r: [x for x in r if x[0] != b":authority"])]
    for k in (1, 2, 5, 20):
        f.append(("cookie_%d_crumbs" % k, lambda r, k=k: insert(
            [x for x in r if x[0] != b"cookie"], rng,
            *[(b"cookie", b"c%d=%d" % (i, i)) for i in range(k)])))
    f += [("cookie_crumbs_around_fields",
           lambda r: [(b"cookie", b"a=1")] + r[:4] + [(b"cookie", b"b=2")]
           + r[4:] + [(b"cookie", b"c=3")]),
          ("cookie_empty_crumbs", lambda r: insert(
              r, rng, (b"cookie", b""), (b"cookie", b"a=1"),
              (b"cookie", b""))),
          ("cookie_with_semicolons", lambda r: insert(
              r, rng, (b"cookie", b"a=1; b=2"), (b"cookie", b"c=3;")))]
    return f


def size_requests(host, version):
    """Requests at the limits: one string of large_client_header_buffers,
    the decoded size of a block, and max_headers (1.29+).  Raw strings:
    nginx counts encoded lengths against the string limit."""
    out = []
    limit = functools.partial(Request, huffman=())
    base = pseudo(random.Random(0), host, path=b"/limits")
    used = sum(len(n) + len(v) for n, v in base)
    for d in (-1, 0, 1):
        out.append(limit("value_at_field_limit%+d" % d, base + [
            (b"x-d00", b"v" * (FIELD_LIMIT + d))]))
        out.append(limit("name_at_field_limit%+d" % d, base + [
            (b"x-" + b"n" * (FIELD_LIMIT - 2 + d), b"v")]))
        # a 4000-octet entry, 32 times (references in the second sending),
        # and a filler: the block's decoded size at the limit
        big = [(b"x-d00", b"A" * 4000)] * 32
        rest = HEADER_LIMIT + d - used - 32 * 4005 - 5
        out.append(limit("block_at_header_limit%+d" % d,
                           base + big + [(b"x-d01", b"f" * rest)]))
        rest = HEADER_LIMIT + d - used - 6
        out.append(limit("cookie_at_header_limit%+d" % d, base + [
            (b"cookie", b"c" * 4000)] * (rest // 4006) + [
            (b"cookie", b"c" * (rest - rest // 4006 * 4006))]))
    if version_at_least(version, 1, 29):
        mhost = MAX_HEADERS_VARIANT[0].encode()
        for most, h in ((MAX_HEADERS, mhost), (1000, host)):
            for d in (-1, 0, 1):
                fields = pseudo(random.Random(0), h, path=b"/limits")
                fields += [(b"x-m%d" % i, b"%d" % i)
                           for i in range(most + d)]
                fields += [(b"cookie", b"a=1"), (b"cookie", b"b=2")]
                out.append(limit("max_headers_%d%+d_%s" % (
                    most, d, h.decode()), fields))
    return out


def corpus(version, count=2400):
    """The requests, in a seeded random order."""
    rng = random.Random(SEED)
    hosts = [name.encode() for name, _ in variants(version)]
    out = []
    for host in hosts:
        others = [h for h in hosts if h != host]
        for base_name, base in (("browser", browser), ("api", api)):
            for name, change in features(rng, host, others):
                out.append(Request("%s_%s_%s" % (host.decode(), base_name,
                                                 name),
                                   change(base(rng, host))))
    out += size_requests(hosts[0], version)
    for host in hosts:
        out += allowed_requests(host)
    i = 0
    while len(out) < count:
        host = hosts[i % len(hosts)]
        base = (browser, api)[i % 2]
        out.append(Request("%s_valid_%s_%d" % (host.decode(), base.__name__,
                                               i), base(rng, host)))
        i += 1
    rng.shuffle(out)
    for r in out:
        if r.huffman is None:
            r.huffman = {i for i in range(len(r.fields))
                         if rng.random() < 0.4}
    return out


# ------------------------------------------------------------ the blocks

STATIC_NAMES = {}
for _i, (_n, _v) in enumerate(HeaderTable.STATIC_TABLE, 1):
    STATIC_NAMES.setdefault(_n, _i)


class Table:
    """The client's model of nginx's decoding table (RFC 7541 4)."""

    def __init__(self, size=TABLE_SIZE):
        self.size = size
        self.entries = []               # newest first
        self.used = 0

    def add(self, name, value):
        n = len(name) + len(value) + 32
        while self.entries and self.used + n > self.size:
            old = self.entries.pop()
            self.used -= len(old[0]) + len(old[1]) + 32
        if n <= self.size:
            self.entries.insert(0, (name, value))
            self.used += n

    def index(self, name, value):
        try:
            return 62 + self.entries.index((name, value))
        except ValueError:
            return None


def incremental(table, name, value, huffman):
    """A literal with incremental indexing (a static name by index)."""
    table.add(name, value)
    if name in STATIC_NAMES:
        return encode_int(STATIC_NAMES[name], 6, 0x40) + string(value,
                                                                huffman)
    return b"\x40" + string(name, huffman) + string(value, huffman)


def literal_block(req, table):
    if req.raw:
        return req.raw(table, False)
    return b"".join(incremental(table, n, v, i in req.huffman)
                    for i, (n, v) in enumerate(req.fields))


def indexed_block(req, table):
    """Every field a reference to its entry; a literal again when the
    entry was evicted (and then entered again)."""
    if req.raw:
        return req.raw(table, True)
    out = []
    for i, (n, v) in enumerate(req.fields):
        index = table.index(n, v)
        out.append(encode_int(index, 7, 0x80) if index is not None
                   else incremental(table, n, v, i in req.huffman))
    return b"".join(out)


def allowed_requests(host):
    """The blocks stock accepts against RFC 7541: a Huffman value 'a' with
    11 bits of padding (0x1f 0xff), a size update after :method."""
    fields = pseudo(random.Random(1), host, path=b"/allowed")

    def padding(table, indexed):
        head = (indexed_block if indexed else literal_block)(
            Request("", fields, ()), table)
        table.add(b"x-d00", b"a")
        return head + b"\x40" + string(b"x-d00", False) + b"\x82\x1f\xff"

    def update(table, indexed):
        head = (indexed_block if indexed else literal_block)(
            Request("", fields[:1], ()), table)
        rest = (indexed_block if indexed else literal_block)(
            Request("", fields[1:], ()), table)
        return head + encode_int(TABLE_SIZE, 5, 0x20) + rest

    return [Request("%s_huffman_padding_11_bits" % host.decode(), fields,
                    raw=padding, allowed="huffman_padding"),
            Request("%s_size_update_after_field" % host.decode(), fields,
                    raw=update, allowed="size_update_after_field")]


# ------------------------------------------------------------ the client

class Connection(RawH2):
    """RawH2 that counts PING acknowledgements (the end of what nginx
    answered to what came before)."""

    def __init__(self, port):
        self.pings = 0
        super().__init__(port, timeout=TIMEOUT)

    def _handle(self, frame):
        if isinstance(frame, PingFrame) and "ACK" in frame.flags:
            self.pings += 1
        super()._handle(frame)

    def alive(self):
        """False when nginx ended the connection after the last answer:
        a GOAWAY or a close before the PING's acknowledgement."""
        if self.goaway or self.eof:
            return False
        want = self.pings + 1
        self.send(PingFrame(0, opaque_data=b"diffdiff"))
        deadline = time.monotonic() + TIMEOUT
        while self.pings < want and not (self.goaway or self.eof):
            try:
                self.pump(deadline)
            except TimeoutError:
                raise Failure("no PING acknowledgement within %ds" % TIMEOUT)
        return not (self.goaway or self.eof)


def describe(r):
    """The status, nginx's variables and the origin's echo of a
    response."""
    seen = ["%s=%r" % (n.decode()[4:], v) for n, v in r.headers
            if n.startswith(b"x-v-")]
    return "response %s [%s] %r" % (r.status, " ".join(seen), r.body)


def outcome(c, sid):
    """What nginx did with stream sid."""
    deadline = time.monotonic() + TIMEOUT
    r = c.responses[sid]
    while True:
        if r.reset is not None:
            return "RST_STREAM %s" % h2_error_name(r.reset)
        if r.ended and r.headers is not None:
            return describe(r)
        if c.goaway and c.goaway[1] < sid:
            return "GOAWAY %s" % h2_error_name(c.goaway[0])
        if c.eof:
            return ("GOAWAY %s" % h2_error_name(c.goaway[0]) if c.goaway
                    else "closed")
        try:
            c.pump(deadline)
        except TimeoutError:
            return "no answer"


def send(c, block):
    cuts = list(range(FRAME, len(block), FRAME))
    sid = c.request_block(block, cuts)
    got = outcome(c, sid)
    c.responses.pop(sid, None)
    if got.startswith(("response", "RST_STREAM")) and not c.alive():
        got += "; then GOAWAY %s" % (h2_error_name(c.goaway[0])
                                     if c.goaway else "-")
    return got


NOT_SENT = "not sent: the connection ended"


def run_corpus(server, requests):
    """[(literal answer, indexed answer)] of every request, the number of
    connections it took and of references the indexed sendings made."""
    port = diff_port(server)
    answers, c, table, conns, refs = [], None, None, 0, 0
    try:
        for req in requests:
            if c is None:
                c, table, conns = Connection(port), Table(), conns + 1
            first = send(c, literal_block(req, table))
            if c.goaway or c.eof:
                second = NOT_SENT
            else:
                block = indexed_block(req, table)
                refs += sum(1 for kind, *_ in walk(block)
                            if kind == "indexed")
                second = send(c, block)
            if c.goaway or c.eof:
                c.close()
                c = None
            answers.append((first, second))
    finally:
        if c:
            c.close()
    return answers, conns, refs


def short(text, n=300):
    return text if len(text) <= n else text[:n] + "...(%d)" % len(text)


def compare(requests, stock, other, hpack_on):
    """(identical, allowed differences, other differences): counts and
    lines."""
    same, allowed, bad = 0, [], []
    for req, s, m in zip(requests, stock, other):
        for how, a, b in (("literal", s[0], m[0]), ("indexed", s[1], m[1])):
            if a == b:
                same += 1
                continue
            line = "%s (%s): stock %s; this build %s" % (
                req.name, how, short(a), short(b))
            if hpack_on and req.allowed \
                    and m[0] == "GOAWAY COMPRESSION_ERROR" and s[0] != m[0]:
                allowed.append("%s: %s" % (line, ALLOWED[req.allowed]))
            else:
                bad.append(line)
    return same, allowed, bad


def summary(answers):
    """How many literal sendings got each kind of answer."""
    kinds = {}
    for first, _ in answers:
        k = first.split(" [")[0].split(";")[0]
        kinds[k] = kinds.get(k, 0) + 1
    return ", ".join("%s %d" % kv for kv in sorted(kinds.items()))


class StockAnswers:
    """Stock's answers to the corpus, found once per line."""

    def __init__(self, stock):
        self.stock = stock
        self.requests = None
        self.answers = None

    def get(self):
        if self.answers is None:
            self.requests = corpus(self.stock.version)
            start = time.monotonic()
            self.answers, conns, refs = run_corpus(self.stock,
                                                   self.requests)
            info("stock: %d requests, %d connections, %d references in "
                 "the indexed sendings, %.1fs; the literal sendings "
                 "answered %s" % (len(self.requests), conns, refs,
                                  time.monotonic() - start,
                                  summary(self.answers)))
        return self.answers


def report(allowed, bad):
    """Prints the allowed differences and the first others; fails on
    any other."""
    for line in allowed:
        info("allowed: " + line)
    for line in bad[:20]:
        info("DIFFERENT: " + line)
    if bad:
        raise Failure("%d answers differ from stock's (first: %s)"
                      % (len(bad), bad[0]))


def differential(server, stock):
    """server's answers to the corpus against stock's."""
    reference = stock.get()
    requests = stock.requests
    start = time.monotonic()
    answers, conns, refs = run_corpus(server, requests)
    same, allowed, bad = compare(requests, reference, answers,
                                 server.hpack_on)
    sent = sum(1 for a in answers for x in a if x != NOT_SENT)
    info("nginx %s %s: %d requests, %d sendings on %d connections, %d "
         "references (%.1fs); of %d answers %d identical to stock's, %d "
         "allowed differences, %d other differences" % (
             server.version, server.LABELS[server.kind], len(requests),
             sent, conns, refs, time.monotonic() - start,
             2 * len(requests), same, len(allowed), len(bad)))
    report(allowed, bad)
    if server.hpack_on and not allowed:
        raise Failure("no allowed difference: the requests stock "
                      "accepts against RFC 7541 were answered alike")


def register(results, servers):
    """servers: kind -> Server, started or not (a build that is absent is
    said and skipped)."""
    stock = servers["stock"]
    reference = StockAnswers(stock)
    for kind in ("on", "small", "off", "nomod"):
        server = servers[kind]

        def run(server=server):
            for s in (stock, server):
                if s.proc is None:
                    raise Skip("%s is not running: %s"
                               % (s.label, s.missing() or "it did not "
                                  "start"))
            differential(server, reference)
        results.run(server.label, "differential_corpus_answers_like_stock",
                    run)
