"""HTTP/2 defences, each from the wire with python3-h2 / hyperframe: rapid reset,
CONTINUATION flood, HPACK bomb and oversized header lists, SETTINGS and PING floods, a
peer that never opens its window, invalid frames, the idle timeout. Over h2c and TLS."""
import time

import h2.errors
import h2.settings
import h2.events
import pytest
from hyperframe.frame import (ContinuationFrame, HeadersFrame, PingFrame, RstStreamFrame,
                              SettingsFrame)

from tls_support import H2Client, tls_server

SITE = """
[server]
workers = 1
send_timeout = "1s"
keepalive_timeout = "%s"
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[listen]]
address = "127.0.0.1:$port2"
http2 = true
[[route]]
match = { exact = "/big" }
respond = { body = "%s" }
[[route]]
respond = { body = "ok\\n" }
"""

ENHANCE_YOUR_CALM = 11
PROTOCOL_ERROR = 1


def server(keepalive="30s"):
    return tls_server(SITE % (keepalive, "b" * 200000))


def client(s, tls):
    return H2Client(s.port if tls else s.port2, tls=tls)


def request_block(c, path="/"):
    return c.conn.encoder.encode([(":method", "GET"), (":scheme", "https"),
                                  (":authority", "localhost"), (":path", path)])


def still_serving(s):
    for tls in (False, True):
        c = client(s, tls)
        sid = c.request("/")
        assert c.response(sid)[0] == 200
        c.close()


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_rapid_reset_gets_goaway(tls):
    with server() as s:
        c = client(s, tls)
        burst = b""
        for sid in range(1, 2 * 1000, 2):
            burst += HeadersFrame(sid, request_block(c), flags=["END_HEADERS", "END_STREAM"]).serialize()
            burst += RstStreamFrame(sid, 8).serialize()
        c.send_raw(burst)
        assert c.wait_closed()
        assert c.goaway() is not None and c.goaway().error_code == ENHANCE_YOUR_CALM
        still_serving(s)
        assert "GOAWAY ENHANCE_YOUR_CALM" in s.read_log()


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_continuation_flood_ends_the_connection(tls):
    with server() as s:
        c = client(s, tls)
        frames = HeadersFrame(1, request_block(c), flags=["END_STREAM"]).serialize()
        filler = c.conn.encoder.encode([("x-filler", "v" * 100)])
        for _ in range(200):
            frames += ContinuationFrame(1, filler).serialize()
        try:
            c.send_raw(frames)
        except OSError:
            pass  # closed while we were still sending: also a pass
        assert c.wait_closed()
        g = c.goaway()
        assert g is None or g.error_code != 0
        still_serving(s)


def test_hpack_bomb_and_oversized_header_lists():
    with server() as s:
        c = client(s, False)
        # Over max_header_size (32 KiB by default): 431 on that stream, the connection goes on.
        sid = c.request("/", headers=[("x-big-%d" % i, "v" * 4000) for i in range(10)])
        assert c.response(sid)[0] == 431
        sid = c.request("/")
        assert c.response(sid)[0] == 200
        c.close()

        # A 3000-byte field enters the HPACK table; then a block of one-byte references to
        # it decodes to far more than any limit.
        c = client(s, False)
        value = "b" * 3000
        sid = c.request("/", headers=[("x-bomb", value)])
        assert c.response(sid)[0] == 200
        block = request_block(c) + c.conn.encoder.encode([("x-bomb", value)] * 60)
        assert len(block) < 200
        c.send_raw(HeadersFrame(3, block, flags=["END_HEADERS", "END_STREAM"]).serialize())
        assert c.wait_closed()
        assert c.goaway() is not None and c.goaway().error_code == ENHANCE_YOUR_CALM


@pytest.mark.parametrize("kind", ["settings", "ping"])
def test_settings_and_ping_floods(kind):
    with server() as s:
        c = client(s, True)
        one = (SettingsFrame(0).serialize() if kind == "settings"
               else PingFrame(0, b"12345678").serialize())
        c.send_raw(one * 1000)
        assert c.wait_closed()
        assert c.goaway() is not None and c.goaway().error_code == ENHANCE_YOUR_CALM


def test_a_peer_that_never_opens_its_window_is_closed():
    with server() as s:
        c = H2Client(s.port, tls=True, settings={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        c.read(timeout=0.3)  # our SETTINGS are acknowledged
        start = time.monotonic()
        sid = c.request("/big")
        assert c.wait_closed(timeout=8)
        elapsed = time.monotonic() - start
        assert 0.8 < elapsed < 5, elapsed
        got = [e for e in c.events if isinstance(e, h2.events.ResponseReceived)]
        data = [e for e in c.events if isinstance(e, h2.events.DataReceived)]
        assert got and got[0].stream_id == sid
        assert not data
        still_serving(s)


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_invalid_frames_get_goaway_protocol_error(tls):
    with server() as s:
        c = client(s, tls)
        c.read(timeout=0.2)
        # DATA on stream 0 (RFC 9113 §6.1), written by hand: hyperframe will not.
        c.send_raw(b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x")
        assert c.wait_closed()
        assert c.goaway() is not None and c.goaway().error_code == PROTOCOL_ERROR
        c = client(s, tls)
        c.send_raw(HeadersFrame(2, request_block(c), flags=["END_HEADERS"]).serialize())
        assert c.wait_closed()
        assert c.goaway().error_code == PROTOCOL_ERROR


def test_idle_connections_get_goaway_after_keepalive_timeout():
    with server(keepalive="1s") as s:
        c = client(s, True)
        sid = c.request("/")
        assert c.response(sid)[0] == 200
        start = time.monotonic()
        assert c.wait_closed(timeout=5)
        assert 0.8 < time.monotonic() - start < 4
        assert c.goaway() is not None and c.goaway().error_code == 0
        s.assert_no_fd_leak()
