#!/usr/bin/python3
"""A small HTTP/1.1 origin server for the reverse-proxy tests: nginx
proxy_passes to it, and what it answers is a pure function of the request
path, so a client on the other side of nginx knows exactly which headers
to expect.

    /usr/bin/python3 -m interop.upstream --port 8090     (conf/proxy.conf)
    /usr/bin/python3 -m interop.upstream --show /story/story_21/0

Paths:

  /r/<seed>[?n=<k>]   an API-like response: status, 8 to 40+ header lines,
                      body, all drawn from random.Random(seed): set-cookie
                      (short and long), etag, last-modified, cache-control,
                      vary, content-type with charsets, duplicates of one
                      name, secrets (authorization, x-api-key), hop-by-hop
                      headers nginx drops, chunked bodies.  x-request-id
                      is derived from the seed and k: one id per response.
  /app/               the browser test's page: 200 subresources
  /app/js/<i>.js, /app/css/<i>.css, /app/img/<i>.png, /app/api/<i>.json
                      its subresources, static-asset and API headers; the
                      x-request-id of these counts responses (not a pure
                      function of the path, the browser test needs none)
  /hop                connection-specific lines (upgrade, te, ...)
  /story/<story>/<i>  case i of an hpack-test-case response story
                      (<story>.json in --stories): its :status as the
                      status line, its fields as header lines, in order
                      (story_response() says what is left out)
  anything else       404

Real sockets, asyncio, persistent HTTP/1.1 connections (nginx's upstream
keepalive), one process.  Serialized responses are cached per path, so the
server keeps up with nginx in the benchmark.
"""

import argparse
import asyncio
import functools
import hashlib
import json
import random
import signal
import sys
import zlib
from pathlib import Path

# -------------------------------------------------------------- responses


class Response:
    def __init__(self, status, headers, body, chunked=False):
        self.status = status
        self.headers = headers          # [(name, value)], as sent, in order
        self.body = body                # bytes
        self.chunked = chunked          # Transfer-Encoding: chunked


REASONS = {200: "OK", 201: "Created", 204: "No Content",
           301: "Moved Permanently", 302: "Found", 303: "See Other",
           304: "Not Modified", 401: "Unauthorized",
           404: "Not Found", 410: "Gone", 503: "Service Unavailable"}

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
          "Oct", "Nov", "Dec")


def http_date(rng):
    """A plausible IMF-fixdate, from the generator (never the clock)."""
    year = rng.randrange(2015, 2025)
    month = rng.randrange(12)
    day = rng.randrange(1, 29)
    weekday = rng.randrange(7)
    return "%s, %02d %s %d %02d:%02d:%02d GMT" % (
        DAYS[weekday], day, MONTHS[month], year, rng.randrange(24),
        rng.randrange(60), rng.randrange(60))


def token(rng, n, alphabet="0123456789abcdef"):
    return "".join(rng.choice(alphabet) for _ in range(n))


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

CONTENT_TYPES = (
    "application/json; charset=utf-8",
    "application/json",
    "text/html; charset=UTF-8",
    "text/plain;charset=iso-8859-1",
    'text/css; charset="utf-8"',
    "application/javascript; charset=utf-8",
    "image/png",
    "application/problem+json",
    "text/csv; charset=utf-8; header=present",
)

CACHE_CONTROLS = (
    "private, no-cache, no-store, must-revalidate",
    "public, max-age=3600",
    "public, max-age=31536000, immutable",
    "max-age=0",
    "no-cache",
    "s-maxage=600, stale-while-revalidate=30",
)

VARYS = ("Accept-Encoding", "Origin", "Accept-Encoding, Cookie",
         "Accept, Accept-Language", "Authorization")

CSP = ("default-src 'self'; script-src 'self' https://cdn.example.com "
       "'nonce-%s'; style-src 'self' 'unsafe-inline'; img-src 'self' data: "
       "https://img.example.com; connect-src 'self' https://api.example.com; "
       "frame-ancestors 'none'; report-uri /csp-report")

# Names that carry secrets: the client checks these are never indexed.
SECRET_NAMES = ("authorization", "proxy-authorization", "x-api-key",
                "x-secret-token")


def request_id(seed, k):
    return hashlib.sha1(("%s:%s" % (seed, k)).encode()).hexdigest()[:24]


def api_response(seed, k=None):
    """The response to /r/<seed>?n=<k>: the same for the same seed and k."""
    rng = random.Random(seed)
    h = []
    status = rng.choice((200,) * 16 + (201, 404, 410, 401, 304, 204))
    chunked = rng.random() < 0.2

    # what an origin says first; nginx replaces or drops all of these
    h.append(("Server", rng.choice(("gunicorn", "Apache/2.4.57 (Debian)",
                                    "upstream/1.0"))))
    h.append(("Date", http_date(rng)))
    h.append(("Connection", "keep-alive"))
    if rng.random() < 0.5:
        h.append(("Keep-Alive", "timeout=5, max=%d" % rng.randrange(1, 1000)))
    if rng.random() < 0.1:
        h.append(("X-Pad", "avoid browser bug"))
    if rng.random() < 0.1:
        h.append(("X-Accel-Buffering", rng.choice(("yes", "no"))))

    if rng.random() < 0.95:
        h.append(("Content-Type", rng.choice(CONTENT_TYPES)))
    ncc = rng.choice((0, 1, 1, 1, 2))
    for _ in range(ncc):
        h.append(("Cache-Control", rng.choice(CACHE_CONTROLS)))
    if rng.random() < 0.7:
        h.append(("ETag", rng.choice(('W/"%s"' % token(rng, 16),
                                      '"%s-%x"' % (token(rng, 8),
                                                   rng.randrange(1 << 20))))))
    if rng.random() < 0.6:
        h.append(("Last-Modified", http_date(rng)))
    for _ in range(rng.choice((0, 1, 1, 2))):
        h.append(("Vary", rng.choice(VARYS)))

    # cookies: short ones (< 20 bytes, never indexed), long sessions
    for _ in range(rng.choice((0, 0, 1, 2, 3, 4))):
        kind = rng.randrange(4)
        if kind == 0:
            v = "sid=%s" % token(rng, rng.randrange(1, 15))
        elif kind == 1:
            v = "%s=%d" % (rng.choice(("a", "lang", "ab", "theme")),
                           rng.randrange(100))
        elif kind == 2:
            v = ("session=%s; Path=/; Secure; HttpOnly; SameSite=Lax; "
                 "Max-Age=86400" % token(rng, 64, B64URL))
        else:
            v = ("_ga=GA1.1.%d.%d; Domain=example.com; Path=/; "
                 "Expires=%s" % (rng.randrange(10**9), rng.randrange(10**9),
                                 http_date(rng)))
        h.append(("Set-Cookie", v))

    h.append(("X-Request-ID", request_id(seed, k)))

    # the security and cache headers a front-end sets on everything
    if rng.random() < 0.8:
        h.append(("Strict-Transport-Security",
                  "max-age=63072000; includeSubDomains; preload"))
        h.append(("X-Content-Type-Options", "nosniff"))
        h.append(("X-Frame-Options", rng.choice(("DENY", "SAMEORIGIN"))))
        h.append(("Referrer-Policy", "strict-origin-when-cross-origin"))
    if rng.random() < 0.3:
        h.append(("Content-Security-Policy", CSP % token(rng, 22, B64)))
    if rng.random() < 0.5:
        h.append(("Access-Control-Allow-Origin",
                  rng.choice(("*", "https://app.example.com"))))
        h.append(("Access-Control-Allow-Credentials", "true"))
        h.append(("Access-Control-Expose-Headers",
                  "X-Request-ID, X-RateLimit-Remaining"))
    if rng.random() < 0.5:
        h.append(("X-RateLimit-Limit", "5000"))
        h.append(("X-RateLimit-Remaining", str(rng.randrange(5000))))
        h.append(("X-RateLimit-Reset", str(1700000000 + rng.randrange(10**6))))
    if rng.random() < 0.4:
        h.append(("Server-Timing", "db;dur=%.1f, app;dur=%.1f"
                  % (rng.random() * 50, rng.random() * 200)))
    if rng.random() < 0.3:
        h.append(("Age", str(rng.randrange(86400))))
        h.append(("Via", "1.1 varnish (Varnish/7.1)"))
        h.append(("X-Cache", rng.choice(("HIT", "MISS", "HIT, HIT"))))
        h.append(("X-Served-By", "cache-fra-etou82%05d-FRA"
                  % rng.randrange(100000)))
    if rng.random() < 0.2:
        h.append(("Expires", http_date(rng)))
    if rng.random() < 0.2:
        h.append(("Accept-Ranges", "bytes"))
    if rng.random() < 0.15:
        h.append(("Content-Language", rng.choice(("en-US", "de", "fr-CA"))))
    if rng.random() < 0.1:
        h.append(("Content-Disposition",
                  'attachment; filename="report-%d.csv"' % rng.randrange(999)))
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        h.append(("Link", "</static/%s.%s>; rel=preload; as=%s"
                  % (token(rng, 8), *rng.choice((("css", "style"),
                                                  ("js", "script"))))))
    if status == 401 or rng.random() < 0.05:
        h.append(("WWW-Authenticate", 'Bearer realm="api"'))
        h.append(("WWW-Authenticate",
                  'Basic realm="api", charset="UTF-8"'))

    # secrets an origin should not send but some do
    if rng.random() < 0.15:
        h.append(("Authorization", "Bearer " + token(rng, 40, B64URL)))
    if rng.random() < 0.05:
        h.append(("Proxy-Authorization", "Basic " + token(rng, 24, B64)))
    if rng.random() < 0.15:
        h.append(("X-Api-Key", token(rng, rng.choice((8, 32)))))
    if rng.random() < 0.05:
        h.append(("X-Secret-Token", "s3cr3t-" + token(rng, 6)))

    # duplicates of one name, an empty value
    if rng.random() < 0.2:
        for i in range(rng.randrange(2, 5)):
            h.append(("X-Dup", "v%d-%s" % (i, token(rng, 4))))
    if rng.random() < 0.05:
        h.append(("X-Empty", ""))

    # sometimes many more: 30+ header lines
    if rng.random() < 0.15:
        for i in range(rng.randrange(20, 36)):
            h.append(("X-Meta-%02d" % i, token(rng, rng.randrange(4, 40))))

    # now and then a block over 16 KiB (HEADERS + CONTINUATION), with
    # fields too large for a 4096 table but not for Chrome's 65536
    if rng.random() < 0.02:
        for i in range(3):
            h.append(("X-Blob-%d" % i, token(rng, rng.randrange(7000, 9000),
                                             B64)))

    # the order of the non-hop-by-hop lines varies too
    head, tail = h[:3], h[3:]
    rng.shuffle(tail)
    h = head + tail

    n = rng.choice((0, 2, 40, 300, 1500, 4000))
    body = ('{"seed": %d, "pad": "%s"}\n' % (seed, "x" * n)).encode()
    if status in (401, 204, 304):
        body = b""
    if status in (204, 304):
        # no body, and nothing that announces one (RFC 9110 8.6, 15.4.5)
        return Response(status, h, body)
    if not chunked:
        h.append(("Content-Length", str(len(body))))
    else:
        h.append(("Transfer-Encoding", "chunked"))
    return Response(status, h, body, chunked)


# ------------------------------------------------------- the browser page

ASSETS = (("js", 50), ("css", 20), ("img", 70), ("api", 40), ("xhr", 20))
ASSET_COUNT = sum(n for _, n in ASSETS)            # 200
BIG_ASSET = ("xhr", 19)             # its response header block is ~17 KB

def _png_1x1():
    """A valid 1x1 RGBA PNG (an image the browser decodes: onload fires)."""
    def chunk(kind, data):
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))
    ihdr = (1).to_bytes(4, "big") * 2 + bytes((8, 6, 0, 0, 0))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00\x80"))
            + chunk(b"IEND", b""))


PNG_1X1 = _png_1x1()


def page():
    """The page: 200 subresources of five kinds; it counts in window.__ok
    and window.__bad what loaded and what did not."""
    out = ["<!doctype html><html><head><meta charset='utf-8'>",
           "<title>proxy test</title><script>",
           "window.__ok = 0; window.__bad = 0; window.__js = 0;",
           "window.__total = %d; window.__failed = [];" % ASSET_COUNT,
           "function ok() { window.__ok++; }",
           "function bad(u) { window.__bad++; window.__failed.push(u); }",
           "</script>"]
    for i in range(20):
        u = "/app/css/%d.css" % i
        out.append("<link rel='stylesheet' href='%s' onload='ok()' "
                   "onerror='bad(\"%s\")'>" % (u, u))
    out.append("</head><body><h1>proxy test</h1>")
    for i in range(50):
        u = "/app/js/%d.js" % i
        out.append("<script async src='%s' onload='ok()' "
                   "onerror='bad(\"%s\")'></script>" % (u, u))
    for i in range(70):
        u = "/app/img/%d.png" % i
        out.append("<img src='%s' width=1 height=1 onload='ok()' "
                   "onerror='bad(\"%s\")'>" % (u, u))
    out.append("<script>")
    out.append("for (let i = 0; i < 40; i++) { const u = '/app/api/' + i + "
               "'.json'; fetch(u).then(r => r.ok ? r.json() : "
               "Promise.reject(r.status)).then(j => j.i === i ? ok() : "
               "bad(u), () => bad(u)); }")
    out.append("for (let i = 0; i < 20; i++) { const u = '/app/xhr/' + i + "
               "'.json'; const x = new XMLHttpRequest(); x.open('GET', u); "
               "x.onload = () => x.status === 200 ? ok() : bad(u); "
               "x.onerror = () => bad(u); x.send(); }")
    out.append("</script></body></html>\n")
    return "\n".join(out).encode()


def asset_response(kind, i, count):
    """A subresource: the headers of a static file or an API answer."""
    rng = random.Random("%s/%d" % (kind, i))
    h = [("Server", "upstream/1.0"), ("Date", http_date(rng)),
         ("Connection", "keep-alive")]
    if kind in ("js", "css", "img"):
        body = {"js": b"window.__js++;\n/* %d */\n" % i + b"//" * i,
                "css": b".c%d { color: #%06x; }\n" % (i, i * 4099),
                "img": PNG_1X1}[kind]
        h += [("Content-Type", {"js": "application/javascript; charset=utf-8",
                                "css": "text/css; charset=utf-8",
                                "img": "image/png"}[kind]),
              ("Cache-Control", "public, max-age=31536000, immutable"),
              ("ETag", '"%s-%x"' % (token(rng, 12), len(body))),
              ("Last-Modified", http_date(rng)),
              ("Accept-Ranges", "bytes"),
              ("Vary", "Accept-Encoding"),
              ("Access-Control-Allow-Origin", "*"),
              ("Timing-Allow-Origin", "*"),
              ("X-Content-Type-Options", "nosniff"),
              ("Strict-Transport-Security",
               "max-age=63072000; includeSubDomains; preload"),
              ("X-Cache", rng.choice(("HIT", "MISS"))),
              ("X-Served-By", "cache-fra-etou82%05d-FRA"
               % rng.randrange(100000)),
              ("Age", str(rng.randrange(86400)))]
    else:
        body = b'{"i": %d, "items": [%s]}\n' % (
            i, b", ".join(b"%d" % rng.randrange(1000) for _ in range(i % 9)))
        h += [("Content-Type", "application/json; charset=utf-8"),
              ("Cache-Control",
               "private, no-cache, no-store, must-revalidate"),
              ("Vary", "Accept-Encoding, Cookie"),
              ("Set-Cookie", "sid=%s" % token(rng, 10)),
              ("Set-Cookie", "session=%s; Path=/; Secure; HttpOnly; "
               "SameSite=Lax" % token(rng, 48, B64URL)),
              ("X-RateLimit-Limit", "5000"),
              ("X-RateLimit-Remaining", str(5000 - count % 5000)),
              ("Server-Timing", "app;dur=%.1f" % (rng.random() * 80)),
              ("Strict-Transport-Security",
               "max-age=63072000; includeSubDomains; preload"),
              ("X-Content-Type-Options", "nosniff"),
              ("X-Frame-Options", "DENY")]
    if (kind, i) == BIG_ASSET:
        # one block over 16 KiB: HEADERS + CONTINUATION, and entries of
        # 7.5 KB in a 64 KiB table
        for j in range(3):
            h.append(("X-Blob-%d" % j, token(rng, 7500, B64)))
    h.append(("X-Request-ID", request_id(kind, count)))
    h.append(("Content-Length", str(len(body))))
    return Response(200, h, body)


def page_response(count):
    body = page()
    h = [("Server", "upstream/1.0"), ("Connection", "keep-alive"),
         ("Content-Type", "text/html; charset=utf-8"),
         ("Cache-Control", "no-cache"),
         ("Content-Security-Policy",
          "default-src 'self'; script-src 'self' 'unsafe-inline'; "
          "style-src 'self'; img-src 'self'; connect-src 'self'"),
         ("X-Request-ID", request_id("page", count)),
         ("Content-Length", str(len(body)))]
    return Response(200, h, body)


def hop_response():
    """Connection-specific lines an HTTP/1.1 origin may send.  nginx 1.26
    drops connection, keep-alive and transfer-encoding but passes upgrade,
    proxy-connection, te, trailer and the names listed in Connection on to
    HTTP/2 clients (stock and module alike; libnghttp2 then resets the
    stream for upgrade and proxy-connection)."""
    body = b"hop\n"
    h = [("Connection", "keep-alive, X-Hop"), ("Keep-Alive", "timeout=5"),
         ("X-Before", "1"), ("Upgrade", "h2c"),
         ("Proxy-Connection", "keep-alive"), ("TE", "trailers"),
         ("Trailer", "X-Sum"), ("X-Hop", "1"), ("X-After", "2"),
         ("Content-Length", str(len(body)))]
    return Response(200, h, body)


def not_found():
    body = b"not found\n"
    return Response(404, [("Content-Type", "text/plain"),
                          ("Content-Length", str(len(body)))], body)


# ------------------------------------------------------------ the stories

# hpack-test-case's raw-data: each story a list of cases, each case the
# header list of one HTTP/2 message as {name: value} objects
STORIES = (Path(__file__).resolve().parent.parent.parent / "shared" / "data"
           / "hpack-test-case" / "raw-data")

# Connection-specific lines (RFC 9113 8.2.2) are the HTTP/1.1 hop's own:
# the origin frames its answer itself and leaves the story's out.  nginx
# drops connection, keep-alive and transfer-encoding from an origin's
# answer anyway (and answers 502 to one with both transfer-encoding and
# content-length, as some cases list them); it would pass
# proxy-connection, upgrade and te on, which HTTP/2 clients reject
# (hop_response()), and no response story has them.
STORY_HOP = frozenset(("connection", "keep-alive", "transfer-encoding",
                       "proxy-connection", "upgrade", "te"))


@functools.lru_cache(maxsize=64)
def load_story(name, directory=None):
    """The cases of <directory>/<name>.json (default STORIES), each a list
    of (name, value) in the story's order; None when there is no such
    story."""
    path = Path(directory or STORIES) / (name + ".json")
    if "/" in name or not path.is_file():
        return None
    cases = json.loads(path.read_text())["cases"]
    return [[next(iter(f.items())) for f in case["headers"]]
            for case in cases]


def response_stories(directory=None):
    """The names of the response stories in directory (default STORIES),
    sorted: those whose first case has a :status (most say "context":
    "response"; story_31 says nothing)."""
    names = []
    for path in sorted(Path(directory or STORIES).glob("*.json")):
        cases = load_story(path.stem, directory)
        if cases and any(n == ":status" for n, _ in cases[0]):
            names.append(path.stem)
    return names


def story_response(name, i, directory=None):
    """Case i of the story: its :status as the status line (wherever the
    case lists it), the rest of its fields as header lines in its order,
    but for STORY_HOP and a second content-length (a few cases list two,
    which nginx refuses as an upstream error; the first frames the body).
    The body: as many octets as the content-length says, none for 1xx,
    204 and 304; with no content-length, a chunked body of none."""
    cases = load_story(name, directory)
    if cases is None or not 0 <= i < len(cases):
        return None
    status, h, length = None, [], None
    for n, v in cases[i]:
        if n == ":status":
            status = int(v)
        elif n == "content-length":
            if length is None:
                length = int(v)
                h.append((n, v))
        elif n not in STORY_HOP:
            h.append((n, v))
    if status is None:
        return None
    if status < 200 or status in (204, 304):
        return Response(status, h, b"")
    if length is None:
        return Response(status, h + [("transfer-encoding", "chunked")], b"",
                        chunked=True)
    return Response(status, h, b"x" * length)


def parse_story_path(path):
    """/story/<story>/<i> -> (story, i), or None."""
    parts = path.split("?")[0].split("/")
    if len(parts) != 4 or parts[1] != "story" or not parts[3].isdigit():
        return None
    return parts[2], int(parts[3])


def parse_api_path(path):
    """/r/<seed>[?n=<k>] -> (seed, k), or None."""
    if not path.startswith("/r/"):
        return None
    rest, _, query = path[3:].partition("?")
    if not rest.isdigit():
        return None
    k = None
    for part in query.split("&"):
        if part.startswith("n="):
            k = part[2:]
    return int(rest), k


def response_for(path, count=0):
    """The Response for a request path (count: requests served so far)."""
    api = parse_api_path(path)
    if api:
        return api_response(*api)
    if path.split("?")[0] in ("/app/", "/app/index.html"):
        return page_response(count)
    if path == "/hop":
        return hop_response()
    story = parse_story_path(path)
    if story:
        return story_response(*story) or not_found()
    parts = path.split("?")[0].split("/")
    if len(parts) == 4 and parts[1] == "app":
        kind, name = parts[2], parts[3]
        stem, _, ext = name.partition(".")
        limit = dict(ASSETS).get(kind)
        if limit and stem.isdigit() and int(stem) < limit:
            return asset_response(kind, int(stem), count)
    return not_found()


def serialize(resp, head_only=False):
    lines = ["HTTP/1.1 %d %s" % (resp.status, REASONS.get(resp.status, "X"))]
    lines += ["%s: %s" % nv for nv in resp.headers]
    out = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if head_only:
        return out
    if resp.chunked:
        body = resp.body
        pieces = [body[i:i + 1000] for i in range(0, len(body), 1000)]
        for p in pieces:
            out += b"%x\r\n%s\r\n" % (len(p), p)
        return out + b"0\r\n\r\n"
    return out + resp.body


# the paths whose answer is a pure function of the path (/r/, /story/)
@functools.lru_cache(maxsize=20000)
def cached_bytes(path, head_only):
    return serialize(response_for(path), head_only)


# ------------------------------------------------------------------ server

class Stats:
    requests = 0
    connections = 0


class Http11(asyncio.Protocol):
    """HTTP/1.1 with keep-alive; request bodies (Content-Length) skipped."""

    def connection_made(self, transport):
        self.transport = transport
        self.buf = b""
        self.skip = 0
        Stats.connections += 1

    def data_received(self, data):
        self.buf += data
        while True:
            if self.skip:
                n = min(self.skip, len(self.buf))
                self.buf = self.buf[n:]
                self.skip -= n
                if self.skip:
                    return
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > 65536:
                    self.transport.close()
                return
            head = self.buf[:end].decode("latin-1")
            self.buf = self.buf[end + 4:]
            lines = head.split("\r\n")
            try:
                method, path, version = lines[0].split(" ")
            except ValueError:
                self.transport.write(b"HTTP/1.1 400 Bad Request\r\n"
                                     b"Content-Length: 0\r\n"
                                     b"Connection: close\r\n\r\n")
                self.transport.close()
                return
            close = version != "HTTP/1.1"
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    self.skip = int(value.strip() or 0)
                elif name == "connection" and "close" in value.lower():
                    close = True
            Stats.requests += 1
            head_only = method == "HEAD"
            if path.startswith(("/r/", "/story/")):
                data = cached_bytes(path, head_only)
            else:
                data = serialize(response_for(path, Stats.requests),
                                 head_only)
            self.transport.write(data)
            if close:
                self.transport.close()
                return


async def serve(host, port, ready_fd=None):
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Http11, host, port, backlog=1024,
                                      reuse_address=True)
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set_result, None)
    print("upstream: listening on %s:%d" % (host, port), flush=True)
    async with server:
        await stop
    print("upstream: %d requests on %d connections"
          % (Stats.requests, Stats.connections), flush=True)


def main():
    global STORIES
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--stories", metavar="DIR", default=str(STORIES),
                    help="hpack-test-case raw-data, for /story/ (default "
                    "../shared/data/hpack-test-case/raw-data from the "
                    "repository)")
    ap.add_argument("--show", metavar="PATH",
                    help="print the response to PATH and exit")
    args = ap.parse_args()
    STORIES = Path(args.stories)
    if args.show:
        sys.stdout.write(serialize(response_for(args.show), True)
                         .decode("latin-1"))
        return 0
    asyncio.run(serve(args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
