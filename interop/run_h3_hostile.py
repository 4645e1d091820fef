"""HTTP/3 hostile QPACK: build/h3client (interop/h3client/h3client.c) sends
chosen octets on the QPACK encoder and decoder streams and in request
sections, and withholds or delays its acknowledgements, against "hpack_http3
on" ("h3-on") and stock nginx of one line.

    /usr/bin/python3 -m interop.run_h3_hostile [--version 1.31.4]
                                               [--only REGEX]

Each hostile case runs the client once (one connection) and asserts the
error RFC 9204 / RFC 9114 give the server to close the connection with;
then a fresh connection gets GET /security answered 200 with every field
exact.  Stock runs the same cases for reference: where stock departs from
the RFC, STOCK_DEVIATIONS says what it does instead and the case asserts
that (interop/README.md lists them); h3-on must give the RFC's outcome in
every case.  The acknowledgement cases check that every response decodes and
that the server never has more streams referring to unacknowledged
inserts than our SETTINGS_QPACK_BLOCKED_STREAMS.
"""

import json
import os
import subprocess
import sys
import time

from interop import cases_h3_differential, cases_status, harness, nginx_runner
from interop.harness import Failure, check, info
from interop.harness.h3 import (check_logs, security_fields, start_servers,
                                suite)

H3CLIENT = os.environ.get("H3CLIENT") or str(nginx_runner.BUILD / "h3client")

QPACK_DECOMPRESSION_FAILED = 0x200
QPACK_ENCODER_STREAM_ERROR = 0x201
QPACK_DECODER_STREAM_ERROR = 0x202
H3_CLOSED_CRITICAL_STREAM = 0x104
H3_FRAME_UNEXPECTED = 0x105
H3_NAMES = {0x200: "QPACK_DECOMPRESSION_FAILED",
            0x201: "QPACK_ENCODER_STREAM_ERROR",
            0x202: "QPACK_DECODER_STREAM_ERROR",
            0x104: "H3_CLOSED_CRITICAL_STREAM",
            0x105: "H3_FRAME_UNEXPECTED"}

# Request sections written by hand (RFC 9204 4.5): the static-only field
# lines of GET https://localhost/security, after a two-octet prefix
FIELDS = ("d1"                              # :method GET (static 17)
          "d7"                              # :scheme https (static 23)
          "50096c6f63616c686f7374"          # :authority localhost
          "51092f7365637572697479")         # :path /security
# user-agent (static 95) "a" in Huffman: 00011 and 3 bits of padding, and
# the same with one more octet of ones (11 bits of padding)
UA_HUFFMAN = "5f50811f"
UA_HUFFMAN_LONG_PADDING = "5f50821fff"
# encoder stream: Set Dynamic Table Capacity 4096 and 4097 (nginx's
# SETTINGS_QPACK_MAX_TABLE_CAPACITY is 4096), Insert With Literal Name
# "x-hostile: 1" and "x-hostile: 2"
CAPACITY_4096 = "3fe11f"
CAPACITY_4097 = "3fe21f"
INSERT_1 = "49782d686f7374696c650131"
INSERT_2 = "49782d686f7374696c650132"


def script(*lines):
    return "\n".join(lines) + "\n"


# name: (what the script does, the script, the RFC's outcome)
# outcome: ("close", code): the server closes the connection with code;
# ("served", n): n responses 200 with every field exact, no error
CASES = {
    "encoder_stream_duplicate_of_no_entry": (
        "Duplicate of an entry that does not exist (RFC 9204 4.3.4)",
        script("encoder 00", "wait-close"),
        ("close", QPACK_ENCODER_STREAM_ERROR)),
    "encoder_stream_static_name_index_99": (
        "Insert With Name Reference to static entry 99 (RFC 9204 3.1)",
        script("encoder ff240131", "wait-close"),
        ("close", QPACK_ENCODER_STREAM_ERROR)),
    "encoder_stream_capacity_above_settings": (
        "Set Dynamic Table Capacity 4097 > SETTINGS 4096 (RFC 9204 4.3.1)",
        script("encoder " + CAPACITY_4097, "wait-close"),
        ("close", QPACK_ENCODER_STREAM_ERROR)),
    "encoder_stream_closed": (
        "our encoder stream ends (RFC 9204 4.2)",
        script("fin encoder", "wait-close"),
        ("close", H3_CLOSED_CRITICAL_STREAM)),
    "second_settings_frame": (
        "a second SETTINGS on the control stream (RFC 9114 7.2.4)",
        script("control 0400", "wait-close"),
        ("close", H3_FRAME_UNEXPECTED)),
    "required_insert_count_too_large": (
        "encoded Required Insert Count 300 > 2 * MaxEntries 256 "
        "(RFC 9204 4.5.1.1)",
        script("raw-request ff2d00" + FIELDS, "wait", "sleep 200"),
        ("close", QPACK_DECOMPRESSION_FAILED)),
    "reference_at_required_insert_count": (
        "two inserts, Required Insert Count 1, Base 2, relative index 0: "
        "absolute 1 >= RIC (RFC 9204 2.2.3)",
        script("encoder " + CAPACITY_4096 + INSERT_1 + INSERT_2,
               "raw-request 0201" + FIELDS + "80", "wait", "sleep 200"),
        ("close", QPACK_DECOMPRESSION_FAILED)),
    "huffman_padding_longer_than_7_bits": (
        "a Huffman value with 11 bits of padding (RFC 9204 4.1.2, RFC 7541 "
        "5.2)",
        script("raw-request 0000" + FIELDS + UA_HUFFMAN_LONG_PADDING, "wait",
               "sleep 200"),
        ("close", QPACK_DECOMPRESSION_FAILED)),
    "huffman_padding_of_3_bits_is_served": (
        "the same section with 3 bits of padding",
        script("raw-request 0000" + FIELDS + UA_HUFFMAN, "wait"),
        ("served", 1)),
    "section_ack_before_any_section": (
        "Section Acknowledgment of stream 4 before any response "
        "(RFC 9204 4.4.1)",
        script("decoder 84", "wait-close"),
        ("close", QPACK_DECODER_STREAM_ERROR)),
    "section_ack_of_an_acknowledged_stream": (
        "a second Section Acknowledgment of stream 0 after its response "
        "(RFC 9204 4.4.1)",
        script("request /security", "wait", "decoder 80", "wait-close"),
        ("close", QPACK_DECODER_STREAM_ERROR)),
    "insert_count_increment_0": (
        "Insert Count Increment 0 (RFC 9204 4.4.3)",
        script("request /security", "wait", "decoder 00", "wait-close"),
        ("close", QPACK_DECODER_STREAM_ERROR)),
    "insert_count_increment_beyond_inserts": (
        "Insert Count Increment 4128 after one response (RFC 9204 4.4.3)",
        script("request /security", "wait", "decoder 3fe11f", "wait-close"),
        ("close", QPACK_DECODER_STREAM_ERROR)),
    "integers_in_longer_encodings_are_served": (
        "Set Dynamic Table Capacity 4096 as 3f e1 9f 00 and user-agent's "
        "static index 95 as 5f d0 00, longer than the shortest encodings "
        "(RFC 9204 4.1.1 takes RFC 7541 5.1's integers, which allow them)",
        script("encoder 3fe19f00", "raw-request 0000" + FIELDS + "5fd0000161",
               "wait"),
        ("served", 1)),
    "stream_cancellation_of_unknown_stream_is_no_error": (
        "Stream Cancellation of stream 400, never opened (RFC 9204 4.4.2)",
        script("decoder 7fd102", "request /security", "wait",
               "request /security", "wait"),
        ("served", 2)),
}

# The request sections of both servers are nginx's decoder's: what it does
# where RFC 9204 says otherwise (interop/README.md, "Deviations of stock")
STOCK_DEVIATIONS = {
    "required_insert_count_too_large": (
        "reset", QPACK_DECOMPRESSION_FAILED,
        "resets the stream, the connection goes on"),
    "reference_at_required_insert_count": (
        "served", 1, "decodes the reference, answers 200"),
    "huffman_padding_longer_than_7_bits": (
        "served", 1, "accepts the padding, answers 200"),
}

# --------------------------------------------------------------- h3client

class Run:
    """What one h3client run printed: the events by kind."""

    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err
        self.events = [json.loads(line) for line in out.splitlines()
                       if line.startswith("{")]
        self.responses = self.of("response")
        self.resets = self.of("reset")
        self.qpack_errors = self.of("qpack_error")
        closes = self.of("close")
        check(rc == 0 and len(closes) == 1, "h3client exited %d: %s %s"
              % (rc, err[-500:], out[-500:]))
        self.close = closes[0]

    def of(self, kind):
        return [e for e in self.events if e["event"] == kind]

    def decoder_errors(self):
        return [e for e in self.qpack_errors if e["where"] != "decoder stream"]

    def rics(self):
        return [s["ric"] for r in self.responses for s in r["sections"]]


def h3client(server, text, timeout=3):
    p = subprocess.run([H3CLIENT, "-t", str(timeout), "127.0.0.1",
                        str(server.tls_port)], input=text.encode(),
                       capture_output=True, timeout=timeout * 4 + 30)
    return Run(p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"))


def code_name(code):
    return "%s (0x%x)" % (H3_NAMES.get(code, "?"), code)


def expect_close(run, code):
    c = run.close
    check(c["by"] == "peer" and c.get("type") == "application",
          "no connection close from the server: closed by %s, resets %s, "
          "%d responses" % (c["by"], run.resets, len(run.responses)))
    check(c["code"] == code, "closed with %s, expected %s (reason %r)"
          % (code_name(c["code"]), code_name(code), c.get("reason")))
    info("closed with %s" % code_name(code))


def expect_served(run, n):
    check(run.close["by"] == "client", "the server closed the connection: "
          "%s" % run.close)
    check(not run.resets, "streams reset: %s" % run.resets)
    check(not run.decoder_errors(), "QPACK decoding errors: %s"
          % run.decoder_errors())
    check(len(run.responses) == n, "%d responses, expected %d"
          % (len(run.responses), n))
    for r in run.responses:
        fields = [tuple(f) for f in r["sections"][0]["fields"]]
        check(r["status"] == 200 and len(r["sections"]) == 1,
              "stream %d: status %s, %d sections" % (r["stream"], r["status"],
                                                    len(r["sections"])))
        want = security_fields(fields)
        check(fields == want, "stream %d: fields differ:\n  got  %s\n  "
              "want %s" % (r["stream"], fields, want))
        check(r["body"] == 9, "stream %d: body of %d octets"
              % (r["stream"], r["body"]))


def expect_reset(run, code):
    check(run.close["by"] == "client", "the server closed the connection: "
          "%s" % run.close)
    check([e["code"] for e in run.resets] == [code], "resets %s, expected "
          "one with %s" % (run.resets, code_name(code)))


def expect(run, outcome):
    kind, arg = outcome[:2]
    {"close": expect_close, "served": expect_served,
     "reset": expect_reset}[kind](run, arg)


def next_connection_served(server):
    expect_served(h3client(server, script("request /security", "wait")), 1)


# ------------------------------------------------------------ ack cases

def withheld(server, blocked, requests=100):
    """acks off: our decoder sends no Section Acknowledgment and no Insert
    Count Increment, so every insert stays unacknowledged"""
    run = h3client(server, script("settings 4096 %d" % blocked, "acks off")
                   + "request /security\n" * requests + "wait\n")
    expect_served(run, requests)
    c = run.close
    risky = sum(1 for ric in run.rics() if ric)
    info("%d of %d sections refer to the dynamic table; streams at risk at "
         "once %d, blocked at once %d (SETTINGS_QPACK_BLOCKED_STREAMS %d)"
         % (risky, requests, c["max_risked"], c["max_blocked"], blocked))
    check(c["max_risked"] <= blocked and c["max_blocked"] <= blocked,
          "streams referring to unacknowledged inserts at once: %d, blocked "
          "%d, above %d" % (c["max_risked"], c["max_blocked"], blocked))
    check(c["known_received_count"] == 0 and c["acks_held"] == 0,
          "acknowledgements went out: %s" % c)
    return run


def acks_withheld_4(server):
    withheld(server, 4)


def acks_withheld_0(server):
    run = withheld(server, 0)
    check(not any(run.rics()), "a section refers to the dynamic table with "
          "SETTINGS_QPACK_BLOCKED_STREAMS 0 and nothing acknowledged")


def acks_delayed(server):
    """acks hold: the acknowledgements of 30 responses go out together
    after all of them, then 30 more requests"""
    run = h3client(server, script("acks hold")
                   + "request /security\n" * 30
                   + script("wait", "sleep 50", "flush-acks", "acks on")
                   + "request /security\n" * 30 + "wait\n")
    expect_served(run, 60)
    c = run.close
    info("Known Received Count %d after the flush; at risk at once %d"
         % (c["known_received_count"], c["max_risked"]))
    check(c["max_risked"] <= 100 and c["max_blocked"] <= 100,
          "more than 100 streams at risk: %s" % c)


def normal_traffic(server):
    run = h3client(server, "request /security\n" * 50 + "wait\n")
    expect_served(run, 50)
    check(not run.qpack_errors, "QPACK errors: %s" % run.qpack_errors)
    dynamic = sum(1 for ric in run.rics() if ric)
    info("%d of 50 sections refer to the dynamic table, encoder stream %d "
         "octets" % (dynamic, len(run.close["encoder_stream"]) // 2))
    if server.qpack_on:
        check(dynamic, "no section refers to the dynamic table: the "
              "acknowledgement cases would prove nothing")


def blocked_at_the_limit(server):
    """as many request sections as the server's
    SETTINGS_QPACK_BLOCKED_STREAMS, each referring to an entry not yet
    inserted; then the insert: every stream is served"""
    probe = h3client(server, "")
    limit = probe.close["peer_settings"].get("7", 0)
    streams = probe.close["peer_max_streams_bidi"]
    info("SETTINGS_QPACK_BLOCKED_STREAMS %d, initial bidirectional stream "
         "limit %d" % (limit, streams))
    # more blocked streams than allowed need more open request streams
    # than the stream limit lets a client open
    check(0 < limit and streams <= limit, "the server allows %d blocked "
          "streams and %d streams: a case with more blocked streams is "
          "needed" % (limit, streams))
    section = "0200" + FIELDS + "80"        # RIC 1, Base 1, relative 0
    run = h3client(server, script("encoder " + CAPACITY_4096)
                   + ("raw-request %s\n" % section) * limit
                   + script("sleep 300", "encoder " + INSERT_1, "wait"))
    expect_served(run, limit)


def quiet_counters(server):
    """The h3 counters once no connection is open and the page's forms
    agree (a connection that just closed may still be counted open)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            page = cases_status.scrape(server)["h3"][0]
            if page["hpack_connections"] == 0:
                return page
        except Failure:
            if time.monotonic() > deadline:
                raise
        check(time.monotonic() < deadline, "an HTTP/3 connection stays "
              "counted open")
        time.sleep(0.1)


def status_counts_the_client_octets(server):
    """hpack_status's h3 request counters grow by exactly what the client
    sent (the page read over HTTPS/1.1): the encoder stream's octets
    (capacity and one insert), two sections' octets, their field lines,
    RFC 7541 sizes (32 a field over name and value) and indexed lines."""
    enc = CAPACITY_4096 + INSERT_1
    sections = ["0000" + FIELDS,                # 4 lines, 2 static indexed
                "0200" + FIELDS + "80"]         # and the insert, indexed
    plain = 7 + 3 + 7 + 5 + 10 + 9 + 5 + 9      # the four lines of FIELDS
    before = quiet_counters(server)
    run = h3client(server, script("encoder " + enc, "sleep 100",
                                  *["raw-request " + x for x in sections],
                                  "wait"))
    expect_served(run, 2)
    want = {"hpack_in_stream_bytes_total": len(enc) // 2,
            "hpack_in_wire_bytes_total":
                (len(enc) + sum(len(x) for x in sections)) // 2,
            "hpack_in_fields_total": 4 + 5,
            "hpack_in_plain_bytes_total":
                plain + 4 * 32 + plain + len("x-hostile1") + 5 * 32,
            "hpack_in_indexed_total": 2 + 3}
    after = quiet_counters(server)
    got = {k: after[k] - before[k] for k in want}
    check(got == want, "the counters grew by %s, the client sent %s"
          % (got, want))


ACK_CASES = [
    ("normal_traffic_50_requests_no_error", normal_traffic),
    ("acks_withheld_100_requests_blocked_streams_4", acks_withheld_4),
    ("acks_withheld_100_requests_blocked_streams_0_never_blocks",
     acks_withheld_0),
    ("acks_delayed_30_responses_then_30_more", acks_delayed),
    ("blocked_streams_at_the_limit_all_served", blocked_at_the_limit),
]


# ------------------------------------------------------------------ main

def hostile(server, name):
    what, text, outcome = CASES[name]
    if server.kind == "stock" and name in STOCK_DEVIATIONS:
        outcome = STOCK_DEVIATIONS[name]
        info("stock deviation: %s" % outcome[2])
    info(what)
    expect(h3client(server, text), outcome)
    next_connection_served(server)


def configure(server):
    """The differential servers, and hpack_status on h3-on's."""
    cases_h3_differential.configure(server)
    if server.kind == "on":
        server.status = True


def main():
    args, results = suite(__doc__, "run_h3_hostile")
    running = {}
    start = time.monotonic()
    if harness.line_absent(results, args.version,
                           "every hostile HTTP/3 case"):
        return results.finish()
    try:
        start_servers(results, args.version, ("on", "stock"), running,
                      lambda: None if os.access(H3CLIENT, os.X_OK)
                      else "%s not built (make h3client)" % H3CLIENT,
                      configure=configure)

        for name in CASES:
            for server in running.values():
                results.run(server.label, name, hostile, server, name)
        for name, fn in ACK_CASES:
            for server in running.values():
                results.run(server.label, name, fn, server)
        if "on" in running:
            results.run(running["on"].label,
                        "hpack_status_counts_the_octets_the_client_sent",
                        status_counts_the_client_octets, running["on"])
        results.run("%s h3-on" % args.version,
                    "differential_corpus_answers_like_stock",
                    cases_h3_differential.differential, running, H3CLIENT)

        check_logs(results, running)
    finally:
        for s in running.values():
            s.stop()
    print("run_h3_hostile: nginx %s, %.0fs"
          % (args.version, time.monotonic() - start))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
