"""The proxy's three upstream timers besides read_timeout: a connect that hangs is given up
after connect_timeout (504), an upstream that stops reading a request body after
send_timeout (504, the connection dropped), and a kept connection left idle is closed
after keepalive_timeout. Each is set short here and checked against a long one."""
import socket
import threading
import time

from harness import Client, Scalwsd, wait_until
from upstreams import RawUpstream, answer

SITE = """
[server]
workers = 1
max_body = "64m"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
proxy = { upstream = "u" }
[upstream.u]
servers = ["127.0.0.1:@PORT@"]
connect_timeout = "300ms"
send_timeout = "300ms"
read_timeout = "5s"
keepalive_timeout = "@KEEPALIVE@"
max_fails = 0
retries = 0
"""


def site(port, keepalive="60s"):
    return SITE.replace("@PORT@", str(port)).replace("@KEEPALIVE@", keepalive)


def get(server, path="/"):
    with Client(server.port, timeout=10) as c:
        c.send(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode())
        return c.read_response()


def test_a_connect_that_hangs_is_504_after_connect_timeout():
    # A listener whose accept queue is full drops further SYNs: connects to it hang.
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(0)
    port = blocker.getsockname()[1]
    fillers = []
    try:
        for _ in range(3):
            f = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            f.setblocking(False)
            f.connect_ex(("127.0.0.1", port))
            fillers.append(f)
        time.sleep(0.2)
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.settimeout(0.5)
        try:
            probe.connect(("127.0.0.1", port))
            hangs = False
        except (socket.timeout, TimeoutError):
            hangs = True
        finally:
            probe.close()
        assert hangs, "the setup must make connects hang"
        with Scalwsd(site(port)) as s:
            started = time.monotonic()
            r = get(s)
            took = time.monotonic() - started
            assert r.status == 504
            assert took < 2.0  # connect_timeout is 300ms; the kernel alone would wait longer
            assert "connect timed out" in s.read_log()
    finally:
        for f in fillers:
            f.close()
        blocker.close()


def test_an_upstream_that_stops_reading_the_body_is_504_after_send_timeout():
    # An upstream that reads the head, then nothing: the proxy's writes stall once the
    # socket buffers are full.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    accepted = []

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.recv(1024)  # part of the head
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    body = b"x" * (32 * 1024 * 1024)
    try:
        with Scalwsd(site(port)) as s:
            with Client(s.port, timeout=15) as c:
                c.send(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
                sender = threading.Thread(target=lambda: _send_quietly(c, body), daemon=True)
                sender.start()
                started = time.monotonic()
                r = c.read_response()
                took = time.monotonic() - started
            assert r.status == 504
            assert took < 5.0  # read_timeout is 5s: the send timer fired, not the read one
            assert "send timed out" in s.read_log()
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def _send_quietly(client, data):
    try:
        client.sock.sendall(data)
    except OSError:
        pass  # the server answered and closed before the whole body went


def test_an_idle_kept_connection_is_closed_after_keepalive_timeout():
    with RawUpstream(lambda r, c: answer(200, "ok\n")) as u:
        with Scalwsd(site(u.port, keepalive="300ms")) as s:
            assert get(s).status == 200
            wait_until(lambda: len(u.open) == 0, timeout=3, what="the kept connection closed")
            assert get(s).status == 200  # a fresh connection for the next request
            assert u.connections == 2
        with Scalwsd(site(u.port, keepalive="60s")) as s:
            assert get(s).status == 200
            time.sleep(1.0)
            assert len(u.open) == 1  # still kept
            assert get(s).status == 200
            assert u.connections == 3  # and reused


def test_bytes_sent_while_the_upstream_works_get_a_lingering_close():
    # A Connection: close request read whole leaves the socket empty, and the server then
    # closes without reading it again; but bytes the client sends while the proxy waits on
    # the upstream are seen by the poller, so they are drained (a lingering close, no reset
    # that could destroy the response).
    go_on = threading.Event()

    def slow(request, conn):
        go_on.wait(10)
        return answer(200, "late\n")

    upstream = RawUpstream(slow)
    try:
        with Scalwsd(site(upstream.port)) as s, Client(s.port, timeout=10) as c:
            c.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            wait_until(lambda: len(upstream.requests) == 1, what="the proxied request")
            c.send(b"x" * 100)
            time.sleep(0.2)  # the poller's wait sees them before the answer
            go_on.set()
            data, how = c.read_until_close()
            assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"late\n"), data
            assert how == "eof"
    finally:
        go_on.set()
        upstream.stop()
