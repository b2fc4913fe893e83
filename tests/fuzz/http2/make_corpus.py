#!/usr/bin/python3
"""Writes the seed corpus for the HTTP/2 fuzz target with python3-h2 / hyperframe.

Each file is: one control byte (bits 0-5: chunk size - 1; 0xC0: feed whole) and then the
client's bytes after the connection preface (the target adds the preface itself)."""
import os

import h2.config
import h2.connection
from hyperframe.frame import (ContinuationFrame, DataFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def client():
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    c.initiate_connection()
    return c


def req(path, method="GET", extra=()):
    return [(":method", method), (":scheme", "https"), (":authority", "example.com"),
            (":path", path)] + list(extra)


def write(name, control, data):
    if data.startswith(PREFACE):
        data = data[len(PREFACE):]
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(bytes([control]) + data)


def main():
    os.makedirs(HERE, exist_ok=True)
    c = client()
    for i in range(5):
        c.send_headers(1 + 2 * i, req("/s%d?q=%d" % (i, i)), end_stream=True)
    write("five_streams_whole", 0xC0, c.data_to_send())

    c = client()
    c.send_headers(1, req("/a"), end_stream=True)
    write("get_in_small_chunks", 2, c.data_to_send())

    c = client()
    c.send_headers(9, req("/upload", "POST", [("content-length", "10")]))
    c.send_data(9, b"0123456789", end_stream=True)
    write("post_with_body", 0xC0, c.data_to_send())

    c = client()
    c.send_headers(1, req("/", extra=[("cookie", "a=1"), ("cookie", "b=2")]), end_stream=True)
    c.reset_stream(1)
    c.ping(b"12345678")
    c.increment_flow_control_window(1000)
    write("cookies_reset_ping_window", 0xC0, c.data_to_send())

    c = client()
    block = c.encoder.encode(req("/cont"))
    frames = HeadersFrame(1, block[:4], flags=["END_STREAM"]).serialize()
    frames += ContinuationFrame(1, block[4:], flags=["END_HEADERS"]).serialize()
    write("continuation", 0xC0, c.data_to_send() + frames)

    settings = SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 5}).serialize()
    c = client()
    c.send_headers(3, req("/window"), end_stream=True)
    data = c.data_to_send() + settings + WindowUpdateFrame(3, 100).serialize()
    write("small_window", 0xC0, data)

    # hyperframe refuses to build DATA on stream 0, so write its header by hand.
    bad = b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x" + PingFrame(0, b"12345678").serialize()
    write("data_on_stream_zero", 0xC0, SettingsFrame(0).serialize() + bad)

    c = client()
    c.send_headers(1, req("/big", extra=[("x-big", "v" * 3000)]), end_stream=True)
    write("large_header", 0xC0, c.data_to_send())

    rapid = SettingsFrame(0).serialize()
    enc = client().encoder
    for sid in range(1, 80, 2):
        rapid += HeadersFrame(sid, enc.encode(req("/r")), flags=["END_HEADERS"]).serialize()
        rapid += RstStreamFrame(sid, 8).serialize()
    write("rapid_reset", 0xC0, rapid)

    # Stream states the FrameChecker judges: frames after END_STREAM and after RST_STREAM,
    # a stream id going back, PRIORITY depending on itself; split into small pieces so
    # frames straddle reads.
    enc = client().encoder
    states = SettingsFrame(0).serialize()
    states += HeadersFrame(5, enc.encode(req("/a")), flags=["END_HEADERS"]).serialize()
    states += RstStreamFrame(5, 8).serialize() + DataFrame(5, b"late").serialize()
    states += HeadersFrame(7, enc.encode(req("/b")), flags=["END_HEADERS", "END_STREAM"]).serialize()
    states += WindowUpdateFrame(7, 10).serialize() + PriorityFrame(7, depends_on=0).serialize()
    states += DataFrame(3, b"implicitly closed").serialize()
    states += DataFrame(7, b"after end").serialize()
    write("closed_stream_frames", 4, states)
    back = SettingsFrame(0).serialize()
    back += HeadersFrame(9, enc.encode(req("/c")), flags=["END_HEADERS", "END_STREAM"]).serialize()
    back += HeadersFrame(3, enc.encode(req("/d")), flags=["END_HEADERS", "END_STREAM"]).serialize()
    write("stream_id_going_back", 0xC0, back)
    write("priority_on_itself", 1,
          SettingsFrame(0).serialize() + PriorityFrame(11, depends_on=11).serialize())


if __name__ == "__main__":
    main()
