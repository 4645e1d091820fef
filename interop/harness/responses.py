"""What the locations of interop/conf/interop.conf answer: expect() checks
one response's headers against it (the security headers, the request id,
what /echo echoes of the request's x-h00)."""

import re

from interop.harness import check

SECURITY = [
    ("strict-transport-security",
     "max-age=63072000; includeSubDomains; preload"),
    ("content-security-policy",
     "default-src 'self'; script-src 'self' https://cdn.example.com; "
     "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
     "frame-ancestors 'none'"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "strict-origin-when-cross-origin"),
    ("permissions-policy", "geolocation=(), microphone=(), camera=()"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cache-control", "public, max-age=3600, stale-while-revalidate=60"),
]

REQUEST_ID = re.compile(r"^[0-9a-f]{32}$")
MSEC = re.compile(r"^\d{10}\.\d{3}$")

ECHO_VALUE = "interop-echo-value-1"


def expect(path, status, headers, trailers=None, ua=None):
    """Checks one response (headers as a list of (str, str)) against what
    the configuration says the path returns; the failure says what is
    wrong."""
    got = {}
    for name, value in headers:
        got.setdefault(name, []).append(value)
    where = "GET %s" % path

    def one(name):
        values = got.get(name, [])
        check(len(values) == 1, "%s: %s appears %d times (%r)"
              % (where, name, len(values), values))
        return values[0]

    check(one(":status") == str(status), "%s: status %s, expected %s"
          % (where, one(":status"), status))
    check(one("server").startswith("nginx"), "%s: server %r"
          % (where, one("server")))
    check(re.match(r"^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$",
                   one("date")), "%s: date %r" % (where, one("date")))
    if path in ("/security", "/headers"):
        for name, value in SECURITY:
            check(one(name) == value, "%s: %s is %r, expected %r"
                  % (where, name, one(name), value))
    if path in ("/headers", "/echo", "/trailers"):
        check(REQUEST_ID.match(one("x-request-id")), "%s: x-request-id %r"
              % (where, one("x-request-id")))
    if path == "/echo":
        check(one("x-echo-h00") == ECHO_VALUE, "%s: x-echo-h00 %r, sent %r"
              % (where, one("x-echo-h00"), ECHO_VALUE))
        check(one("x-echo-method") == "GET", "%s: x-echo-method %r"
              % (where, one("x-echo-method")))
        if ua:
            check(one("x-echo-ua").startswith(ua), "%s: x-echo-ua %r, "
                  "client is %r" % (where, one("x-echo-ua"), ua))
        check(one("x-secret-token") == "s3cr3t-constant",
              "%s: x-secret-token %r" % (where, one("x-secret-token")))
        check(MSEC.match(one("x-msec")), "%s: x-msec %r"
              % (where, one("x-msec")))
    if path == "/tiny":
        check(one("content-length") == "3", "%s: content-length %r"
              % (where, one("content-length")))
    if path == "/redirect":
        check(one("location").endswith("/tiny"), "%s: location %r"
              % (where, one("location")))
    if trailers is not None and path == "/trailers":
        t = dict(trailers)
        check(t.get("x-checksum") == "0123456789abcdef",
              "%s: trailers %r" % (where, trailers))
