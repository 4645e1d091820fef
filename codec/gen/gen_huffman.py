#!/usr/bin/python3
"""Generates codec/src/huffman_tables.inc from the RFC 7541 Appendix B code.

    /usr/bin/python3 codec/gen/gen_huffman.py > codec/src/huffman_tables.inc

The code list below is Appendix B as printed in the RFC (symbol, code bits
aligned to the MSB, code as hex, length in bits).  The generator checks that
every row agrees with itself and that the rows form the complete canonical
code the RFC describes, so a typing error cannot yield a plausible table.
The layout of the emitted tables is described in the .inc header.
"""

import re
import sys

# The root decode table is indexed by the next 12 input bits: 16 KiB, two
# symbols per lookup for much header text.  13 bits decode 4 KiB of text
# faster with the tables in L1, but in an nginx worker, whose own work
# evicts them between connections, 12 bits miss L1 less per cold request,
# and 11 bits cost more instructions than their misses save (docs/DESIGN.md,
# "Huffman decode": "A 12-bit root (16 KiB) and a 13-bit link window").
ROOT_BITS = 12
MAX_SYMBOLS = 2           # 3 codes need 15 bits
# A code longer than ROOT_BITS continues in a window of ROOT_BITS + 1 bits:
# the last LINK_TAIL bits of the root index and LINK_BITS new ones.  Its
# leading bit is always one, so the same lookup lands above the root, and
# every code up to LINK_CONSUMED + LINK_WINDOW = 21 bits (all of printable
# ASCII; the longest is '\\', 19 bits) costs one more lookup of the same
# kind.
LINK_TAIL = 4
LINK_BITS = 9
LINK_WINDOW = LINK_TAIL + LINK_BITS
# Longer codes (octets >= 0x80, controls, EOS) take a slow path through
# small subtables of at most this index width.
SUB_BITS = 5

MAX_CODE_LEN = 30
MIN_CODE_LEN = 5
EOS = 256

# RFC 7541 Appendix B.
RFC_CODE_LIST = r"""
    (  0)  |11111111|11000                             1ff8  [13]
    (  1)  |11111111|11111111|1011000                7fffd8  [23]
    (  2)  |11111111|11111111|11111110|0010         fffffe2  [28]
    (  3)  |11111111|11111111|11111110|0011         fffffe3  [28]
    (  4)  |11111111|11111111|11111110|0100         fffffe4  [28]
    (  5)  |11111111|11111111|11111110|0101         fffffe5  [28]
    (  6)  |11111111|11111111|11111110|0110         fffffe6  [28]
    (  7)  |11111111|11111111|11111110|0111         fffffe7  [28]
    (  8)  |11111111|11111111|11111110|1000         fffffe8  [28]
    (  9)  |11111111|11111111|11101010               ffffea  [24]
    ( 10)  |11111111|11111111|11111111|111100      3ffffffc  [30]
    ( 11)  |11111111|11111111|11111110|1001         fffffe9  [28]
    ( 12)  |11111111|11111111|11111110|1010         fffffea  [28]
    ( 13)  |11111111|11111111|11111111|111101      3ffffffd  [30]
    ( 14)  |11111111|11111111|11111110|1011         fffffeb  [28]
    ( 15)  |11111111|11111111|11111110|1100         fffffec  [28]
    ( 16)  |11111111|11111111|11111110|1101         fffffed  [28]
    ( 17)  |11111111|11111111|11111110|1110         fffffee  [28]
    ( 18)  |11111111|11111111|11111110|1111         fffffef  [28]
    ( 19)  |11111111|11111111|11111111|0000         ffffff0  [28]
    ( 20)  |11111111|11111111|11111111|0001         ffffff1  [28]
    ( 21)  |11111111|11111111|11111111|0010         ffffff2  [28]
    ( 22)  |11111111|11111111|11111111|111110      3ffffffe  [30]
    ( 23)  |11111111|11111111|11111111|0011         ffffff3  [28]
    ( 24)  |11111111|11111111|11111111|0100         ffffff4  [28]
    ( 25)  |11111111|11111111|11111111|0101         ffffff5  [28]
    ( 26)  |11111111|11111111|11111111|0110         ffffff6  [28]
    ( 27)  |11111111|11111111|11111111|0111         ffffff7  [28]
    ( 28)  |11111111|11111111|11111111|1000         ffffff8  [28]
    ( 29)  |11111111|11111111|11111111|1001         ffffff9  [28]
    ( 30)  |11111111|11111111|11111111|1010         ffffffa  [28]
    ( 31)  |11111111|11111111|11111111|1011         ffffffb  [28]
' ' ( 32)  |010100                                       14  [ 6]
'!' ( 33)  |11111110|00                                 3f8  [10]
'"' ( 34)  |11111110|01                                 3f9  [10]
'#' ( 35)  |11111111|1010                               ffa  [12]
'$' ( 36)  |11111111|11001                             1ff9  [13]
'%' ( 37)  |010101                                       15  [ 6]
'&' ( 38)  |11111000                                     f8  [ 8]
''' ( 39)  |11111111|010                                7fa  [11]
'(' ( 40)  |11111110|10                                 3fa  [10]
')' ( 41)  |11111110|11                                 3fb  [10]
'*' ( 42)  |11111001                                     f9  [ 8]
'+' ( 43)  |11111111|011                                7fb  [11]
',' ( 44)  |11111010                                     fa  [ 8]
'-' ( 45)  |010110                                       16  [ 6]
'.' ( 46)  |010111                                       17  [ 6]
'/' ( 47)  |011000                                       18  [ 6]
'0' ( 48)  |00000                                         0  [ 5]
'1' ( 49)  |00001                                         1  [ 5]
'2' ( 50)  |00010                                         2  [ 5]
'3' ( 51)  |011001                                       19  [ 6]
'4' ( 52)  |011010                                       1a  [ 6]
'5' ( 53)  |011011                                       1b  [ 6]
'6' ( 54)  |011100                                       1c  [ 6]
'7' ( 55)  |011101                                       1d  [ 6]
'8' ( 56)  |011110                                       1e  [ 6]
'9' ( 57)  |011111                                       1f  [ 6]
':' ( 58)  |1011100                                      5c  [ 7]
';' ( 59)  |11111011                                     fb  [ 8]
'<' ( 60)  |11111111|1111100                           7ffc  [15]
'=' ( 61)  |100000                                       20  [ 6]
'>' ( 62)  |11111111|1011                               ffb  [12]
'?' ( 63)  |11111111|00                                 3fc  [10]
'@' ( 64)  |11111111|11010                             1ffa  [13]
'A' ( 65)  |100001                                       21  [ 6]
'B' ( 66)  |1011101                                      5d  [ 7]
'C' ( 67)  |1011110                                      5e  [ 7]
'D' ( 68)  |1011111                                      5f  [ 7]
'E' ( 69)  |1100000                                      60  [ 7]
'F' ( 70)  |1100001                                      61  [ 7]
'G' ( 71)  |1100010                                      62  [ 7]
'H' ( 72)  |1100011                                      63  [ 7]
'I' ( 73)  |1100100                                      64  [ 7]
'J' ( 74)  |1100101                                      65  [ 7]
'K' ( 75)  |1100110                                      66  [ 7]
'L' ( 76)  |1100111                                      67  [ 7]
'M' ( 77)  |1101000                                      68  [ 7]
'N' ( 78)  |1101001                                      69  [ 7]
'O' ( 79)  |1101010                                      6a  [ 7]
'P' ( 80)  |1101011                                      6b  [ 7]
'Q' ( 81)  |1101100                                      6c  [ 7]
'R' ( 82)  |1101101                                      6d  [ 7]
'S' ( 83)  |1101110                                      6e  [ 7]
'T' ( 84)  |1101111                                      6f  [ 7]
'U' ( 85)  |1110000                                      70  [ 7]
'V' ( 86)  |1110001                                      71  [ 7]
'W' ( 87)  |1110010                                      72  [ 7]
'X' ( 88)  |11111100                                     fc  [ 8]
'Y' ( 89)  |1110011                                      73  [ 7]
'Z' ( 90)  |11111101                                     fd  [ 8]
'[' ( 91)  |11111111|11011                             1ffb  [13]
'\' ( 92)  |11111111|11111110|000                     7fff0  [19]
']' ( 93)  |11111111|11100                             1ffc  [13]
'^' ( 94)  |11111111|111100                            3ffc  [14]
'_' ( 95)  |100010                                       22  [ 6]
'`' ( 96)  |11111111|1111101                           7ffd  [15]
'a' ( 97)  |00011                                         3  [ 5]
'b' ( 98)  |100011                                       23  [ 6]
'c' ( 99)  |00100                                         4  [ 5]
'd' (100)  |100100                                       24  [ 6]
'e' (101)  |00101                                         5  [ 5]
'f' (102)  |100101                                       25  [ 6]
'g' (103)  |100110                                       26  [ 6]
'h' (104)  |100111                                       27  [ 6]
'i' (105)  |00110                                         6  [ 5]
'j' (106)  |1110100                                      74  [ 7]
'k' (107)  |1110101                                      75  [ 7]
'l' (108)  |101000                                       28  [ 6]
'm' (109)  |101001                                       29  [ 6]
'n' (110)  |101010                                       2a  [ 6]
'o' (111)  |00111                                         7  [ 5]
'p' (112)  |101011                                       2b  [ 6]
'q' (113)  |1110110                                      76  [ 7]
'r' (114)  |101100                                       2c  [ 6]
's' (115)  |01000                                         8  [ 5]
't' (116)  |01001                                         9  [ 5]
'u' (117)  |101101                                       2d  [ 6]
'v' (118)  |1110111                                      77  [ 7]
'w' (119)  |1111000                                      78  [ 7]
'x' (120)  |1111001                                      79  [ 7]
'y' (121)  |1111010                                      7a  [ 7]
'z' (122)  |1111011                                      7b  [ 7]
'{' (123)  |11111111|1111110                           7ffe  [15]
'|' (124)  |11111111|100                                7fc  [11]
'}' (125)  |11111111|111101                            3ffd  [14]
'~' (126)  |11111111|11101                             1ffd  [13]
    (127)  |11111111|11111111|11111111|1100         ffffffc  [28]
    (128)  |11111111|11111110|0110                    fffe6  [20]
    (129)  |11111111|11111111|010010                 3fffd2  [22]
    (130)  |11111111|11111110|0111                    fffe7  [20]
    (131)  |11111111|11111110|1000                    fffe8  [20]
    (132)  |11111111|11111111|010011                 3fffd3  [22]
    (133)  |11111111|11111111|010100                 3fffd4  [22]
    (134)  |11111111|11111111|010101                 3fffd5  [22]
    (135)  |11111111|11111111|1011001                7fffd9  [23]
    (136)  |11111111|11111111|010110                 3fffd6  [22]
    (137)  |11111111|11111111|1011010                7fffda  [23]
    (138)  |11111111|11111111|1011011                7fffdb  [23]
    (139)  |11111111|11111111|1011100                7fffdc  [23]
    (140)  |11111111|11111111|1011101                7fffdd  [23]
    (141)  |11111111|11111111|1011110                7fffde  [23]
    (142)  |11111111|11111111|11101011               ffffeb  [24]
    (143)  |11111111|11111111|1011111                7fffdf  [23]
    (144)  |11111111|11111111|11101100               ffffec  [24]
    (145)  |11111111|11111111|11101101               ffffed  [24]
    (146)  |11111111|11111111|010111                 3fffd7  [22]
    (147)  |11111111|11111111|1100000                7fffe0  [23]
    (148)  |11111111|11111111|11101110               ffffee  [24]
    (149)  |11111111|11111111|1100001                7fffe1  [23]
    (150)  |11111111|11111111|1100010                7fffe2  [23]
    (151)  |11111111|11111111|1100011                7fffe3  [23]
    (152)  |11111111|11111111|1100100                7fffe4  [23]
    (153)  |11111111|11111110|11100                  1fffdc  [21]
    (154)  |11111111|11111111|011000                 3fffd8  [22]
    (155)  |11111111|11111111|1100101                7fffe5  [23]
    (156)  |11111111|11111111|011001                 3fffd9  [22]
    (157)  |11111111|11111111|1100110                7fffe6  [23]
    (158)  |11111111|11111111|1100111                7fffe7  [23]
    (159)  |11111111|11111111|11101111               ffffef  [24]
    (160)  |11111111|11111111|011010                 3fffda  [22]
    (161)  |11111111|11111110|11101                  1fffdd  [21]
    (162)  |11111111|11111110|1001                    fffe9  [20]
    (163)  |11111111|11111111|011011                 3fffdb  [22]
    (164)  |11111111|11111111|011100                 3fffdc  [22]
    (165)  |11111111|11111111|1101000                7fffe8  [23]
    (166)  |11111111|11111111|1101001                7fffe9  [23]
    (167)  |11111111|11111110|11110                  1fffde  [21]
    (168)  |11111111|11111111|1101010                7fffea  [23]
    (169)  |11111111|11111111|011101                 3fffdd  [22]
    (170)  |11111111|11111111|011110                 3fffde  [22]
    (171)  |11111111|11111111|11110000               fffff0  [24]
    (172)  |11111111|11111110|11111                  1fffdf  [21]
    (173)  |11111111|11111111|011111                 3fffdf  [22]
    (174)  |11111111|11111111|1101011                7fffeb  [23]
    (175)  |11111111|11111111|1101100                7fffec  [23]
    (176)  |11111111|11111111|00000                  1fffe0  [21]
    (177)  |11111111|11111111|00001                  1fffe1  [21]
    (178)  |11111111|11111111|100000                 3fffe0  [22]
    (179)  |11111111|11111111|00010                  1fffe2  [21]
    (180)  |11111111|11111111|1101101                7fffed  [23]
    (181)  |11111111|11111111|100001                 3fffe1  [22]
    (182)  |11111111|11111111|1101110                7fffee  [23]
    (183)  |11111111|11111111|1101111                7fffef  [23]
    (184)  |11111111|11111110|1010                    fffea  [20]
    (185)  |11111111|11111111|100010                 3fffe2  [22]
    (186)  |11111111|11111111|100011                 3fffe3  [22]
    (187)  |11111111|11111111|100100                 3fffe4  [22]
    (188)  |11111111|11111111|1110000                7ffff0  [23]
    (189)  |11111111|11111111|100101                 3fffe5  [22]
    (190)  |11111111|11111111|100110                 3fffe6  [22]
    (191)  |11111111|11111111|1110001                7ffff1  [23]
    (192)  |11111111|11111111|11111000|00           3ffffe0  [26]
    (193)  |11111111|11111111|11111000|01           3ffffe1  [26]
    (194)  |11111111|11111110|1011                    fffeb  [20]
    (195)  |11111111|11111110|001                     7fff1  [19]
    (196)  |11111111|11111111|100111                 3fffe7  [22]
    (197)  |11111111|11111111|1110010                7ffff2  [23]
    (198)  |11111111|11111111|101000                 3fffe8  [22]
    (199)  |11111111|11111111|11110110|0            1ffffec  [25]
    (200)  |11111111|11111111|11111000|10           3ffffe2  [26]
    (201)  |11111111|11111111|11111000|11           3ffffe3  [26]
    (202)  |11111111|11111111|11111001|00           3ffffe4  [26]
    (203)  |11111111|11111111|11111011|110          7ffffde  [27]
    (204)  |11111111|11111111|11111011|111          7ffffdf  [27]
    (205)  |11111111|11111111|11111001|01           3ffffe5  [26]
    (206)  |11111111|11111111|11110001               fffff1  [24]
    (207)  |11111111|11111111|11110110|1            1ffffed  [25]
    (208)  |11111111|11111110|010                     7fff2  [19]
    (209)  |11111111|11111111|00011                  1fffe3  [21]
    (210)  |11111111|11111111|11111001|10           3ffffe6  [26]
    (211)  |11111111|11111111|11111100|000          7ffffe0  [27]
    (212)  |11111111|11111111|11111100|001          7ffffe1  [27]
    (213)  |11111111|11111111|11111001|11           3ffffe7  [26]
    (214)  |11111111|11111111|11111100|010          7ffffe2  [27]
    (215)  |11111111|11111111|11110010               fffff2  [24]
    (216)  |11111111|11111111|00100                  1fffe4  [21]
    (217)  |11111111|11111111|00101                  1fffe5  [21]
    (218)  |11111111|11111111|11111010|00           3ffffe8  [26]
    (219)  |11111111|11111111|11111010|01           3ffffe9  [26]
    (220)  |11111111|11111111|11111111|1101         ffffffd  [28]
    (221)  |11111111|11111111|11111100|011          7ffffe3  [27]
    (222)  |11111111|11111111|11111100|100          7ffffe4  [27]
    (223)  |11111111|11111111|11111100|101          7ffffe5  [27]
    (224)  |11111111|11111110|1100                    fffec  [20]
    (225)  |11111111|11111111|11110011               fffff3  [24]
    (226)  |11111111|11111110|1101                    fffed  [20]
    (227)  |11111111|11111111|00110                  1fffe6  [21]
    (228)  |11111111|11111111|101001                 3fffe9  [22]
    (229)  |11111111|11111111|00111                  1fffe7  [21]
    (230)  |11111111|11111111|01000                  1fffe8  [21]
    (231)  |11111111|11111111|1110011                7ffff3  [23]
    (232)  |11111111|11111111|101010                 3fffea  [22]
    (233)  |11111111|11111111|101011                 3fffeb  [22]
    (234)  |11111111|11111111|11110111|0            1ffffee  [25]
    (235)  |11111111|11111111|11110111|1            1ffffef  [25]
    (236)  |11111111|11111111|11110100               fffff4  [24]
    (237)  |11111111|11111111|11110101               fffff5  [24]
    (238)  |11111111|11111111|11111010|10           3ffffea  [26]
    (239)  |11111111|11111111|1110100                7ffff4  [23]
    (240)  |11111111|11111111|11111010|11           3ffffeb  [26]
    (241)  |11111111|11111111|11111100|110          7ffffe6  [27]
    (242)  |11111111|11111111|11111011|00           3ffffec  [26]
    (243)  |11111111|11111111|11111011|01           3ffffed  [26]
    (244)  |11111111|11111111|11111100|111          7ffffe7  [27]
    (245)  |11111111|11111111|11111101|000          7ffffe8  [27]
    (246)  |11111111|11111111|11111101|001          7ffffe9  [27]
    (247)  |11111111|11111111|11111101|010          7ffffea  [27]
    (248)  |11111111|11111111|11111101|011          7ffffeb  [27]
    (249)  |11111111|11111111|11111111|1110         ffffffe  [28]
    (250)  |11111111|11111111|11111101|100          7ffffec  [27]
    (251)  |11111111|11111111|11111101|101          7ffffed  [27]
    (252)  |11111111|11111111|11111101|110          7ffffee  [27]
    (253)  |11111111|11111111|11111101|111          7ffffef  [27]
    (254)  |11111111|11111111|11111110|000          7fffff0  [27]
    (255)  |11111111|11111111|11111011|10           3ffffee  [26]
EOS (256)  |11111111|11111111|11111111|111111      3fffffff  [30]
"""


def parse_code_list():
    row = re.compile(r"^(?:'.'|EOS)? *\( *(\d+)\) +\|([01|]+) +([0-9a-f]+)"
                     r" +\[ *(\d+)\]$")
    codes = []
    for line in RFC_CODE_LIST.strip("\n").split("\n"):
        m = row.match(line.strip())
        if not m:
            sys.exit("gen_huffman: unparsable row: %r" % line)
        sym, bits, hexcode, length = (int(m.group(1)),
                                      m.group(2).replace("|", ""),
                                      int(m.group(3), 16), int(m.group(4)))
        if sym != len(codes):
            sys.exit("gen_huffman: row %d out of order" % sym)
        if len(bits) != length or int(bits, 2) != hexcode:
            sys.exit("gen_huffman: row %d: bits, hex and length disagree" % sym)
        codes.append((hexcode, length))
    if len(codes) != 257:
        sys.exit("gen_huffman: %d rows, expected 257" % len(codes))
    return codes


def check_canonical(codes):
    # Sorted by (length, symbol), each code is the previous one plus one,
    # shifted to the new length; the last is the all-ones EOS.  That makes
    # the code prefix-free and complete (Kraft sum 1).
    order = sorted(range(len(codes)), key=lambda s: (codes[s][1], s))
    expect, prev_len = -1, codes[order[0]][1]
    for sym in order:
        code, length = codes[sym]
        expect = (expect + 1) << (length - prev_len)
        prev_len = length
        if code != expect:
            sys.exit("gen_huffman: symbol %d breaks the canonical order" % sym)
    if order[-1] != EOS or codes[EOS] != ((1 << MAX_CODE_LEN) - 1,
                                          MAX_CODE_LEN):
        sys.exit("gen_huffman: EOS is not the last, all-ones code")


class Code:
    def __init__(self, codes):
        self.codes = codes
        self.by_code = {(length, code): sym
                        for sym, (code, length) in enumerate(codes)}

    def match(self, value, nbits):
        """(symbol, length) of the code at the top of value, or None."""
        for length in range(MIN_CODE_LEN, min(nbits, MAX_CODE_LEN) + 1):
            sym = self.by_code.get((length, value >> (nbits - length)))
            if sym is not None:
                return sym, length
        return None

    def greedy(self, value, nbits):
        """The complete codes at the top of value (MAX_SYMBOLS at most) and
        the bits they take."""
        syms, used = [], 0
        while len(syms) < MAX_SYMBOLS:
            rest = nbits - used
            m = self.match(value & ((1 << rest) - 1), rest)
            if m is None:
                break
            syms.append(m[0])
            used += m[1]
        return syms, used

    def longest_under(self, prefix, plen):
        return max(length for code, length in self.codes
                   if length > plen and code >> (length - plen) == prefix)


# kDecode entries (32 bits), laid out so that the decoder extracts little:
#   bits 0-15   the symbols, first in bits 0-7 (stored as they are)
#   bits 16-21  bits consumed   } one octet, loaded on its own: the shift
#   bits 22-23  symbols (0..2)  } count (x86 masks it to 6 bits), and summed
#   bit 24      SLOW
#   bits 26-31  right shift of the 64-bit window giving the next index
# A SLOW entry consumes the link window (bits 16-21) and continues in
# kDecodeSub at the offset in bits 0-15, indexed by the next (bits 26-31)
# bits.
ROOT_SHIFT = 64 - ROOT_BITS
LINK_SHIFT = 64 - LINK_WINDOW
LINK_CONSUMED = ROOT_BITS - LINK_TAIL
SLOW = 1 << 24


def symbols_entry(syms, consumed, shift):
    assert 0 < consumed < 64 and len(syms) <= MAX_SYMBOLS <= 2
    e = ((consumed | (len(syms) << 6)) << 16) | (shift << 26)
    for i, sym in enumerate(syms):
        e |= sym << (8 * i)
    return e


def slow_entry(offset, width):
    assert 0 < width < 64 and offset < (1 << 16)
    return offset | (LINK_WINDOW << 16) | SLOW | (width << 26)


# kDecodeSub entries: bits 0-5 bits consumed; a leaf has count 1 (bits 6-7)
# and its symbol in bits 8-15; a link has count 0, its offset in bits 8-23
# and width in bits 24-28; EOS has count 0 and width 0.
def sub_leaf(consumed, sym):
    return consumed | (1 << 6) | (sym << 8)


def sub_link(consumed, offset, width):
    assert 0 < width < 32 and offset < (1 << 16)
    return consumed | (offset << 8) | (width << 24)


class Decoder:
    def __init__(self, code):
        self.code = code
        self.root = []
        self.links = {}   # link window index -> entry
        self.sub = []

    def build(self):
        for prefix in range(1 << ROOT_BITS):
            syms, used = self.code.greedy(prefix, ROOT_BITS)
            if syms:
                self.root.append(symbols_entry(syms, used, ROOT_SHIFT))
            else:
                self.root.append(symbols_entry([], LINK_CONSUMED,
                                               LINK_SHIFT))
                self.link_block(prefix)
        first = min(self.links)
        assert sorted(self.links) == list(range(first,
                                                first + len(self.links)))
        return first

    def link_block(self, prefix):
        # The window after the link starts with the tail of the prefix:
        # its leading one puts the index above the root, and the tails of
        # different links must differ.
        tail = prefix & ((1 << LINK_TAIL) - 1)
        assert tail >> (LINK_TAIL - 1) == 1
        for j in range(1 << LINK_BITS):
            index = (tail << LINK_BITS) | j
            assert index not in self.links
            full, nbits = (prefix << LINK_BITS) | j, ROOT_BITS + LINK_BITS
            syms, used = self.code.greedy(full, nbits)
            if syms:
                e = symbols_entry(syms, used - LINK_CONSUMED, ROOT_SHIFT)
            else:
                e = slow_entry(*self.subtable(full, nbits))
            self.links[index] = e

    def subtable(self, prefix, plen):
        width = min(self.code.longest_under(prefix, plen) - plen, SUB_BITS)
        offset = len(self.sub)
        self.sub.extend([None] * (1 << width))
        for j in range(1 << width):
            full, nbits = (prefix << width) | j, plen + width
            m = self.code.match(full, nbits)
            if m is None:
                e = sub_link(width, *self.subtable(full, nbits))
            elif m[0] == EOS:
                e = m[1] - plen
            else:
                e = sub_leaf(m[1] - plen, m[0])
            self.sub[offset + j] = e
        return offset, width


def emit_array(out, decl, values, fmt, per_line):
    out.append("%s = {" % decl)
    for i in range(0, len(values), per_line):
        out.append("    " + ", ".join(fmt % v for v in values[i:i + per_line])
                   + ",")
    out.append("};")
    out.append("")


def main():
    codes = parse_code_list()
    check_canonical(codes)
    dec = Decoder(Code(codes))
    link_base = dec.build()
    links = [dec.links[i] for i in sorted(dec.links)]
    max_consumed = max((e >> 16) & 63 for e in dec.root + links
                       if not e & SLOW)

    out = [
        "// generated by codec/gen/gen_huffman.py, do not edit.",
        "//",
        "// RFC 7541 Appendix B.  Decoding looks up entries (32 bits):",
        "//   bits 0-15   the symbols, first in bits 0-7",
        "//   bits 16-21  bits consumed",
        "//   bits 22-23  symbols in the entry (0..%d)" % MAX_SYMBOLS,
        "//   bit 24      slow: consume, continue in kDecodeSub at the offset",
        "//               in bits 0-15, indexed by the next (bits 26-31) bits",
        "//   bits 26-31  right shift of the 64-bit window for the next index",
        "// The decode table is kDecodeRoot, indexed by the next %d bits, and"
        % ROOT_BITS,
        "// kDecodeLink from index kDecodeLinkBase on, where a link (a root",
        "// prefix of longer codes) continues with a %d-bit window: the last"
        % LINK_WINDOW,
        "// %d bits of the prefix and %d new ones.  Nothing leads to the"
        % (LINK_TAIL, LINK_BITS),
        "// indexes in between.",
        "// kDecodeSub entries: bits 0-5 bits consumed; a leaf has count 1",
        "// (bits 6-7) and its symbol in bits 8-15; a link has count 0, its",
        "// offset in bits 8-23 and width in bits 24-28; EOS has count 0 and",
        "// width 0.",
        "",
        "constexpr unsigned kDecodeRootShift = %d;" % ROOT_SHIFT,
        "constexpr unsigned kDecodeLinkShift = %d;" % LINK_SHIFT,
        "constexpr unsigned kDecodeLinkConsumed = %d;" % LINK_CONSUMED,
        "constexpr unsigned kDecodeMaxConsumed = %d;" % max_consumed,
        "constexpr size_t kDecodeLinkBase = %d;" % link_base,
        "constexpr uint32_t kDecodeSlow = 0x%08x;" % SLOW,
        "",
    ]
    emit_array(out, "alignas(64) constexpr uint32_t kEncodeCode[256]",
               [codes[s][0] for s in range(256)], "0x%08x", 6)
    emit_array(out, "alignas(64) constexpr uint8_t kEncodeBits[256]",
               [codes[s][1] for s in range(256)], "%2d", 16)
    emit_array(out, "constexpr uint32_t kDecodeRoot[%d]" % len(dec.root),
               dec.root, "0x%08x", 6)
    emit_array(out, "constexpr uint32_t kDecodeLink[%d]" % len(links),
               links, "0x%08x", 6)
    emit_array(out, "alignas(64) constexpr uint32_t kDecodeSub[%d]"
               % len(dec.sub), dec.sub, "0x%08x", 6)
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
