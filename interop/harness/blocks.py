"""Request header blocks written by hand, representation by representation
(RFC 7541 section 6), for what h2's encoder will not send: string
literals raw or Huffman-coded, literals with incremental indexing,
indexed fields, the pseudo-headers of GET /echo."""

from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

from interop.harness import encode_int

_HUFFMAN = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)


def lit(s):
    """A raw (not Huffman) string literal."""
    return encode_int(len(s), 7) + s


def huffman(s):
    """A Huffman-coded string literal."""
    data = _HUFFMAN.encode(s)
    return encode_int(len(data), 7, 0x80) + data


def string(s, huffman_coded):
    """A string literal, Huffman-coded or raw."""
    return huffman(s) if huffman_coded else lit(s)


def inc(name, value):
    """A literal with incremental indexing and a new (literal) name."""
    return b"\x40" + lit(name) + lit(value)


def idx(i):
    return encode_int(i, 7, 0x80)


def echo_base(server, authority=None):
    """GET /echo with a literal (not indexed) :authority."""
    return (b"\x82\x86" + b"\x04" + lit(b"/echo") + b"\x01"
            + lit((authority or server.authority).encode()))
