"""The HTTP/1.1 origins nginx proxies to in the differential, Early Hints,
hpack_status and allocation failure tests: threads of this process on
127.0.0.1, one of each class, on a port of their own."""

import re
import socket
import threading

from interop.harness import version_at_least


class Origin:
    """An HTTP/1.1 origin on 127.0.0.1 (a thread per connection, keep-alive)
    that answers every request with its own head: the request line and
    header lines exactly as nginx sent them."""

    _running = {}                   # class -> its one instance

    @classmethod
    def shared(cls):
        """The one origin of this class, started at the first call."""
        if cls not in Origin._running:
            Origin._running[cls] = cls()
        return Origin._running[cls]

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,),
                             daemon=True).start()

    def _serve(self, conn):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                buf = self._skip_body(conn, head, buf)
                conn.sendall(self.respond(head))
        except OSError:
            pass
        finally:
            conn.close()

    def respond(self, head):
        """The bytes that answer a request whose head (without the blank
        line) is head."""
        return (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(head), head))

    @staticmethod
    def _skip_body(conn, head, buf):
        """Reads the request body (Content-Length or chunked) off buf and
        the socket, returns what follows it."""
        lines = [line.lower() for line in head.split(b"\r\n")[1:]]
        length = 0
        for line in lines:
            if line.startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        if b"transfer-encoding: chunked" in lines:
            while b"\r\n0\r\n\r\n" not in b"\r\n" + buf:
                buf += conn.recv(65536)
            return (b"\r\n" + buf).split(b"\r\n0\r\n\r\n", 1)[1]
        while len(buf) < length:
            buf += conn.recv(65536)
        return buf[length:]


# ------------------------------------------------------ 103 Early Hints

def hints(i):
    """The Link fields of the 103 for /eh/<i>."""
    links = [b"</static/app.css>; rel=preload; as=style",
             b"</static/app.js>; rel=preload; as=script",
             b"</img/hero-%d.webp>; rel=preload; as=image" % (i % 8)]
    if i % 5 == 0:
        links.append(b"<https://cdn-%d.example.com>; rel=preconnect" % i)
    return [(b"link", v) for v in links]


def final(i):
    """The origin's fields of the 200 for /eh/<i> (nginx adds server, date,
    content-length), and its body."""
    return ([(b"content-type", b"text/plain"), (b"x-eh-n", b"%d" % i),
             (b"cache-control", b"max-age=%d" % (i % 3))],
            b"eh %d\n" % i)


class HintsOrigin(Origin):
    """/eh/<i>: a 103 with the Link fields of links(i), then the 200 of
    final(i); 404 for anything else."""

    LINK = b"link"              # the Link fields' name as the origin spells it

    def links(self, i):
        """The values of the 103's Link fields for /eh/<i>."""
        return [v for _, v in hints(i)]

    def respond(self, head):
        m = re.match(rb"GET /eh/(\d+) ", head)
        if not m:
            return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        i = int(m.group(1))
        early = b"".join(b"%s: %s\r\n" % (self.LINK, v)
                         for v in self.links(i))
        fields, body = final(i)
        return (b"HTTP/1.1 103 Early Hints\r\n" + early + b"\r\n"
                + b"HTTP/1.1 200 OK\r\n"
                + b"".join(b"%s: %s\r\n" % f for f in fields)
                + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def early_hints_supported(version):
    """Whether nginx of this line has early_hints (1.29 and later)."""
    return version_at_least(version, 1, 29)
