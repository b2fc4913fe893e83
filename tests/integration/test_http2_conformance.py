"""HTTP/2 stream-state conformance (RFC 9113 §5.1, §5.1.1, §5.1.2, §5.3.1, §6.3) from the
wire, over h2c and TLS: the cases the h2spec suite checks, written as raw frames with
hyperframe and hpack (CI cannot fetch h2spec). Frames on closed or reset streams get
STREAM_CLOSED, a stream id going back or a bad PRIORITY gets PROTOCOL_ERROR, the
concurrent-stream limit holds, and what a half-closed stream may still receive is
accepted."""
import socket
import time

import pytest
from hpack import Encoder
from hyperframe.frame import (DataFrame, Frame, GoAwayFrame, HeadersFrame, PriorityFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

from tls_support import tls_server, tls_socket

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[listen]]
address = "127.0.0.1:$port2"
http2 = true
[[route]]
respond = { body = "hello from scalws\\n" }
"""

PROTOCOL_ERROR = 0x1
STREAM_CLOSED = 0x5
REFUSED_STREAM = 0x7
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class RawH2:
    """An HTTP/2 client that sends whatever frames it is told, in order, and collects the
    frames the server sends back."""

    def __init__(self, port, tls):
        self.sock = (tls_socket(port) if tls
                     else socket.create_connection(("127.0.0.1", port), timeout=5))
        self.hpack = Encoder()
        self.buf = b""
        self.frames = []
        self.closed = False
        self.send(PREFACE, SettingsFrame(0))
        # The server's SETTINGS, acknowledged, so its limits are in force.
        self.wait(lambda f: isinstance(f, SettingsFrame) and "ACK" not in f.flags)
        self.send(SettingsFrame(0, flags=["ACK"]))

    def send(self, *items):
        self.sock.sendall(b"".join(i if isinstance(i, bytes) else i.serialize() for i in items))

    def headers(self, sid, end_stream=True, path="/"):
        block = self.hpack.encode([(":method", "GET"), (":scheme", "https"),
                                   (":authority", "localhost"), (":path", path)])
        flags = ["END_HEADERS"] + (["END_STREAM"] if end_stream else [])
        return HeadersFrame(sid, block, flags=flags)

    def _read_frames(self, deadline):
        self.sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, TimeoutError):
            return
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return
        self.buf += data
        while len(self.buf) >= 9:
            f, length = Frame.parse_frame_header(memoryview(self.buf[:9]))
            if len(self.buf) < 9 + length:
                break
            f.parse_body(memoryview(self.buf[9:9 + length]))
            self.buf = self.buf[9 + length:]
            self.frames.append(f)

    def wait(self, pred, timeout=3.0):
        """The first frame received so far or within `timeout` that satisfies `pred`."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for f in self.frames[seen:]:
                if pred(f):
                    return f
            seen = len(self.frames)
            if self.closed or time.monotonic() >= deadline:
                return None
            self._read_frames(deadline)

    def response_end(self, sid, timeout=3.0):
        return self.wait(lambda f: f.stream_id == sid and "END_STREAM" in f.flags, timeout)

    def goaway(self, timeout=3.0):
        return self.wait(lambda f: isinstance(f, GoAwayFrame), timeout)

    def rst(self, sid, timeout=3.0):
        return self.wait(lambda f: isinstance(f, RstStreamFrame) and f.stream_id == sid, timeout)

    def stream_error(self, sid, code):
        """RFC 9113 §5.4: a stream error may be treated as a connection error."""
        f = self.wait(lambda f: (isinstance(f, RstStreamFrame) and f.stream_id == sid)
                      or isinstance(f, GoAwayFrame))
        return f is not None and f.error_code == code

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def server():
    with tls_server(SITE) as s:
        yield s


def client(s, tls):
    return RawH2(s.port if tls else s.port2, tls)


def still_serving(s, tls):
    c = client(s, tls)
    c.send(c.headers(1))
    assert c.response_end(1) is not None
    c.close()


TLS = pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])


@TLS
def test_window_update_and_priority_on_a_half_closed_stream_are_accepted(server, tls):
    c = client(server, tls)
    c.send(c.headers(1), WindowUpdateFrame(1, window_increment=1000),
           PriorityFrame(1, depends_on=0, stream_weight=16))
    assert c.response_end(1) is not None
    assert c.goaway(timeout=0.3) is None
    assert c.rst(1, timeout=0.1) is None
    c.close()


@TLS
def test_data_on_a_half_closed_stream_is_stream_closed(server, tls):
    c = client(server, tls)
    c.send(c.headers(1), DataFrame(1, b"late"))
    assert c.stream_error(1, STREAM_CLOSED)
    c.close()
    still_serving(server, tls)


@TLS
@pytest.mark.parametrize("after", ["data", "headers"])
def test_frames_after_the_clients_rst_stream_are_stream_closed(server, tls, after):
    c = client(server, tls)
    opening = c.headers(1, end_stream=False)
    late = DataFrame(1, b"late") if after == "data" else c.headers(1)
    c.send(opening, RstStreamFrame(1, error_code=0x8), late)
    assert c.stream_error(1, STREAM_CLOSED)
    c.close()


@TLS
@pytest.mark.parametrize("after", ["data", "headers"])
def test_frames_on_a_closed_stream_are_stream_closed(server, tls, after):
    c = client(server, tls)
    c.send(c.headers(1))
    assert c.response_end(1) is not None  # both sides ended: the stream is closed
    c.send(DataFrame(1, b"late") if after == "data" else c.headers(1))
    if after == "headers":  # RFC 9113 §5.1: a connection error
        g = c.goaway()
        assert g is not None and g.error_code == STREAM_CLOSED
    else:
        assert c.stream_error(1, STREAM_CLOSED)
    c.close()


@TLS
def test_a_stream_id_lower_than_the_previous_one_is_a_protocol_error(server, tls):
    c = client(server, tls)
    c.send(c.headers(5))
    assert c.response_end(5) is not None
    c.send(c.headers(3))
    g = c.goaway()
    assert g is not None and g.error_code == PROTOCOL_ERROR
    assert c.wait(lambda f: f.stream_id == 3 and isinstance(f, HeadersFrame), 0.2) is None
    c.close()
    still_serving(server, tls)


@TLS
def test_headers_beyond_the_concurrent_stream_limit_are_refused(server, tls):
    c = client(server, tls)
    limit = c.wait(lambda f: isinstance(f, SettingsFrame) and "ACK" not in f.flags).settings[
        SettingsFrame.MAX_CONCURRENT_STREAMS]
    # Streams whose request body never ends stay open (half-closed, local, once answered).
    c.send(*[c.headers(1 + 2 * i, end_stream=False) for i in range(limit + 1)])
    extra = 1 + 2 * limit
    f = c.wait(lambda f: (isinstance(f, RstStreamFrame) and f.stream_id == extra)
               or isinstance(f, GoAwayFrame))
    assert f is not None
    assert (f.error_code == REFUSED_STREAM if isinstance(f, RstStreamFrame)
            else f.error_code == PROTOCOL_ERROR), f
    c.close()


@TLS
@pytest.mark.parametrize("sid,depends_on", [(0, 1), (1, 1), (9, 9)],
                         ids=["stream-0", "self-idle", "self-after-another"])
def test_a_priority_on_stream_0_or_depending_on_itself_is_a_protocol_error(server, tls, sid,
                                                                           depends_on):
    c = client(server, tls)
    if sid == 9:
        c.send(c.headers(7))
    # hyperframe refuses to build PRIORITY on stream 0: the frame is written by hand.
    payload = depends_on.to_bytes(4, "big") + b"\x10"
    c.send(b"\x00\x00\x05\x02\x00" + sid.to_bytes(4, "big") + payload)
    g = c.goaway()
    assert g is not None and g.error_code == PROTOCOL_ERROR
    c.close()


@TLS
def test_frames_in_flight_after_a_reset_from_the_server_are_ignored(server, tls):
    c = client(server, tls)
    # An upper-case field name: the server resets stream 1 (PROTOCOL_ERROR); the client's
    # DATA and trailers were already on their way and must not cost the connection.
    block = c.hpack.encode([(":method", "POST"), (":scheme", "https"),
                            (":authority", "localhost"), (":path", "/"), ("X-Upper", "1")])
    c.send(HeadersFrame(1, block, flags=["END_HEADERS"]))
    rst = c.rst(1)
    assert rst is not None and rst.error_code == PROTOCOL_ERROR
    trailers = HeadersFrame(1, c.hpack.encode([("x-trailer", "1")]),
                            flags=["END_HEADERS", "END_STREAM"])
    c.send(DataFrame(1, b"in flight"), trailers, c.headers(3))
    assert c.response_end(3) is not None
    assert c.goaway(timeout=0.2) is None
    c.close()
