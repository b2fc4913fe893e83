"""WebSockets through the proxy with Debian's python3-websockets on both ends: an HTTP/1.1
Upgrade tunnelled byte for byte after the 101, and HTTP/2's extended CONNECT (RFC 8441,
SETTINGS_ENABLE_CONNECT_PROTOCOL) turned into an HTTP/1.1 upgrade upstream. Echoes of text
and binary messages, a message larger than any buffer, both halves closed when either side
ends, and the tunnel's idle timeout."""
import asyncio
import base64
import os
import socket
import struct
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest
import websockets

from harness import Client, Scalwsd, free_port, wait_until

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[route]]
match = { prefix = "/ws/idle" }
proxy = { upstream = "ws", timeout = "2s" }
[[route]]
match = { prefix = "/ws" }
proxy = { upstream = "ws", timeout = "30s" }
[[route]]
match = { prefix = "/nows" }
proxy = { upstream = "ws", websocket = false }
[upstream.ws]
servers = ["127.0.0.1:@PORT@"]
"""


class EchoServer:
    """A python3-websockets echo server on its own thread and event loop. It records the
    path and headers of each handshake."""

    def __init__(self):
        self.port = free_port()
        self.handshakes = []
        self.closed = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    async def handler(self, ws, path=None):
        self.handshakes.append(
            (ws.path, {k.lower(): v for k, v in ws.request_headers.raw_items()}))
        try:
            async for message in ws:
                await ws.send(message)
        except websockets.ConnectionClosed:
            pass
        self.closed += 1

    def run(self):
        asyncio.set_event_loop(self.loop)

        async def main():
            self.stop_future = self.loop.create_future()
            async with websockets.serve(self.handler, "127.0.0.1", self.port,
                                        max_size=16 * 1024 * 1024):
                self.ready.set()
                await self.stop_future
        self.loop.run_until_complete(main())

    def stop(self):
        self.loop.call_soon_threadsafe(self.stop_future.set_result, None)
        self.thread.join(10)


@pytest.fixture(scope="module")
def echo():
    e = EchoServer()
    yield e
    e.stop()


@pytest.fixture(scope="module")
def server(echo):
    with Scalwsd(SITE.replace("@PORT@", str(echo.port))) as s:
        yield s


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_http1_upgrade_echo(server, echo):
    async def talk():
        async with websockets.connect("ws://127.0.0.1:%d/ws/chat?room=1" % server.port,
                                      max_size=16 * 1024 * 1024) as ws:
            await ws.send("hello")
            assert await ws.recv() == "hello"
            blob = os.urandom(100000)
            await ws.send(blob)
            assert await ws.recv() == blob
            # Larger than every buffer on the way. python3-websockets masks it in pure Python
            # (Debian has no speedups module), seconds under load with no byte moving: the
            # /ws route's idle timeout is long for that reason, /ws/idle tests the timeout.
            big = os.urandom(8 * 1024 * 1024)
            await ws.send(big)
            assert await ws.recv() == big
            for i in range(50):
                await ws.send("m%d" % i)
            for i in range(50):
                assert await ws.recv() == "m%d" % i
    run(talk())
    path, headers = echo.handshakes[-1]
    assert path == "/ws/chat?room=1"
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["upgrade"].lower() == "websocket"
    wait_until(lambda: echo.closed >= 1, what="the upstream's side to close")


def test_client_close_closes_both_halves(server, echo):
    before = echo.closed
    with Client(server.port) as c:
        key = base64.b64encode(os.urandom(16))
        c.send(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += c.sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 101 "), head
        assert b"Date:" in head and b"Sec-WebSocket-Accept:" in head
        c.sock.shutdown(socket.SHUT_WR)  # the client stops sending: the upstream hears EOF
        wait_until(lambda: echo.closed > before, what="the upstream to see the end")
        c.sock.settimeout(5)
        rest = b""
        while True:
            data = c.sock.recv(4096)
            if not data:
                break
            rest += data
        # Nothing but what the upstream sent (its close frame, if any) and then the end.


def test_idle_tunnel_times_out(server, echo):
    async def idle():
        async with websockets.connect("ws://127.0.0.1:%d/ws/idle" % server.port,
                                      ping_interval=None) as ws:
            await ws.send("x")
            assert await ws.recv() == "x"
            started = time.monotonic()
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return time.monotonic() - started
    took = run(idle())
    assert 1.5 < took < 8, took  # the /ws/idle route's timeout, 2 s


def test_upgrade_refused_where_websockets_are_off(server, echo):
    async def refused():
        with pytest.raises(websockets.InvalidStatusCode):
            async with websockets.connect("ws://127.0.0.1:%d/nows" % server.port):
                pass
    run(refused())


def ws_frame(payload, opcode=1):
    """A masked client frame (RFC 6455 §5.2)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return head + mask + masked


def ws_parse(buf):
    """(opcode, payload, rest) of the first whole server frame in `buf`, or None."""
    if len(buf) < 2:
        return None
    opcode = buf[0] & 0x0F
    n = buf[1] & 0x7F
    pos = 2
    if n == 126:
        if len(buf) < 4:
            return None
        n = struct.unpack("!H", buf[2:4])[0]
        pos = 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n = struct.unpack("!Q", buf[2:10])[0]
        pos = 10
    if len(buf) < pos + n:
        return None
    return opcode, bytes(buf[pos:pos + n]), buf[pos + n:]


def test_http2_extended_connect_echo(server, echo):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    # RFC 8441 §3: the server says it accepts extended CONNECT in its SETTINGS.
    enabled = None
    while enabled is None:
        for event in conn.receive_data(sock.recv(65536)):
            if isinstance(event, h2.events.RemoteSettingsChanged):
                setting = event.changed_settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL)
                enabled = setting.new_value if setting else 0
        sock.sendall(conn.data_to_send())
    assert enabled == 1
    conn.send_headers(1, [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"),
                          (":path", "/ws/h2"), (":authority", "127.0.0.1:%d" % server.port),
                          ("sec-websocket-version", "13")])
    sock.sendall(conn.data_to_send())
    status = None
    received = bytearray()
    messages = [b"over h2", os.urandom(40000)]  # within the initial window
    sent = False
    got = []
    deadline = time.monotonic() + 10
    while len(got) < len(messages) and time.monotonic() < deadline:
        for event in conn.receive_data(sock.recv(65536)):
            if isinstance(event, h2.events.ResponseReceived):
                status = dict(event.headers)[b":status"]
            elif isinstance(event, h2.events.DataReceived):
                received += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                raise AssertionError("stream reset: %r" % event)
        if status == b"200" and not sent:
            for m in messages:
                frame = ws_frame(m, opcode=2)
                for i in range(0, len(frame), 16384):  # SETTINGS_MAX_FRAME_SIZE
                    conn.send_data(1, frame[i:i + 16384])
            sent = True
        while True:
            frame = ws_parse(received)
            if frame is None:
                break
            opcode, payload, rest = frame
            received = bytearray(rest)
            got.append(payload)
        sock.sendall(conn.data_to_send())
    assert status == b"200"
    assert got == messages
    path, headers = echo.handshakes[-1]
    assert path == "/ws/h2"
    assert headers["upgrade"].lower() == "websocket"
    assert len(headers["sec-websocket-key"]) == 24  # made by the proxy: HTTP/2 has none
    # The client ends the stream: the tunnel closes both ways.
    conn.end_stream(1)
    sock.sendall(conn.data_to_send())
    sock.close()
