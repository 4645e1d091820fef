"""One warm response header block taken apart, representation by
representation: what the bytes per response of `make bench` are made of.

A plain HTTP/2 client over h2c (prior knowledge): python3-hpack encodes the
requests and decodes every response block in order (so its table follows
the server's), and each representation of the last block is parsed here for
its kind (RFC 7541 section 6) and its size on the wire.
"""

import socket
import time

from hpack import Decoder, Encoder

from interop import harness

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS, SETTINGS, CONTINUATION, DATA = 0x1, 0x4, 0x9, 0x0
END_STREAM, END_HEADERS, PADDED, PRIORITY, ACK = 0x1, 0x4, 0x8, 0x20, 0x1
HEADER_TABLE_SIZE = 0x1                 # the SETTINGS parameter


def frame(kind, flags, stream, payload=b""):
    return (len(payload).to_bytes(3, "big") + bytes([kind, flags])
            + stream.to_bytes(4, "big") + payload)


LABELS = {"indexed": "indexed", "size-update": "size update",
          "incremental": "literal, incremental indexing",
          "never-indexed": "literal, never indexed",
          "without-indexing": "literal, without indexing"}


def representations(block):
    """(kind, index, octets, huffman?) for each representation of a block."""
    out = []
    for kind, number, start, end, strings in harness.walk(block):
        coding = ["%s %s" % (part, "huffman" if huffman else "raw")
                  for part, (huffman, _) in zip(
                      ("name", "value") if len(strings) == 2 else ("value",),
                      strings)]
        out.append((LABELS[kind], number, end - start, ", ".join(coding)))
    return out


class Client:
    """table_size: the SETTINGS_HEADER_TABLE_SIZE to send (None: none, the
    protocol's 4096)."""

    def __init__(self, port, timeout=10, table_size=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout)
        self.port = port
        self.buf = b""
        self.enc = Encoder()
        self.dec = Decoder()
        settings = b""
        if table_size is not None:
            self.dec.max_allowed_table_size = table_size
            settings = HEADER_TABLE_SIZE.to_bytes(2, "big") + \
                table_size.to_bytes(4, "big")
        self.deadline = time.monotonic() + timeout
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))

    def _read(self):
        while len(self.buf) < 9 or len(self.buf) < 9 + int.from_bytes(
                self.buf[:3], "big"):
            if time.monotonic() > self.deadline:
                raise TimeoutError("no complete frame from 127.0.0.1:%d"
                                   % self.port)
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed")
            self.buf += data
        n = int.from_bytes(self.buf[:3], "big")
        kind, flags = self.buf[3], self.buf[4]
        stream = int.from_bytes(self.buf[5:9], "big") & 0x7fffffff
        payload = self.buf[9:9 + n]
        self.buf = self.buf[9 + n:]
        return kind, flags, stream, payload

    def get(self, stream, path, extra):
        headers = [(":method", "GET"), (":scheme", "http"),
                   (":authority", "127.0.0.1:%d" % self.port),
                   (":path", path)] + list(extra)
        self.sock.sendall(frame(HEADERS, END_HEADERS | END_STREAM, stream,
                                self.enc.encode(headers)))
        block = b""
        done = False
        while not done:
            kind, flags, sid, payload = self._read()
            if kind == SETTINGS and not flags & ACK:
                self.sock.sendall(frame(SETTINGS, ACK, 0))
            if sid != stream:
                continue
            if kind == HEADERS:
                if flags & PADDED:
                    payload = payload[1:len(payload) - payload[0]]
                if flags & PRIORITY:
                    payload = payload[5:]
                block += payload
            elif kind == CONTINUATION:
                block += payload
            if kind in (HEADERS, DATA) and flags & END_STREAM:
                done = True
        return block, self.dec.decode(block, raw=True)

    def settled(self):
        """Waits for the server's acknowledgement of our SETTINGS (it has
        read them), acknowledging its own."""
        while True:
            kind, flags, _, _ = self._read()
            if kind == SETTINGS and flags & ACK:
                return
            if kind == SETTINGS:
                self.sock.sendall(frame(SETTINGS, ACK, 0))

    def close(self):
        self.sock.close()


def block_sizes(port, path, extra, requests):
    """The octets of the response blocks of `requests` GETs on a new
    connection, in order."""
    c = Client(port)
    try:
        return [len(c.get(2 * i + 1, path, extra)[0])
                for i in range(requests)]
    finally:
        c.close()


def warm_block(port, path, extra, requests=10):
    """The block of the last of `requests` GETs on one connection, field by
    field, and the block sizes of all of them."""
    c = Client(port)
    try:
        sizes = []
        for i in range(requests):
            block, fields = c.get(2 * i + 1, path, extra)
            sizes.append(len(block))
    finally:
        c.close()
    reps = representations(block)
    rows = []
    it = iter(fields)
    for kind, index, octets, coding in reps:
        if kind == "size update":
            rows.append({"name": "(size update %d)" % index, "value": "",
                         "kind": kind, "index": None, "octets": octets,
                         "coding": ""})
            continue
        name, value = next(it)
        where = ""
        if index:
            where = "static %d" % index if index <= 61 else \
                "dynamic %d" % index
        rows.append({"name": name.decode("latin-1"),
                     "value": value.decode("latin-1"), "kind": kind,
                     "index": where, "octets": octets, "coding": coding})
    return {"request": requests, "block": len(block),
            "plain": sum(len(n) + len(v) for n, v in fields),
            "sizes": sizes, "fields": rows}
