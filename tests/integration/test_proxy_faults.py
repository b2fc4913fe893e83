"""The proxy against an upstream that misbehaves on purpose: every bad-framing case gets
the client a 502 and the connection to the upstream dropped (never reused); huge heads,
no answer at all (504), a slow body (streamed, not buffered), a close in the middle of a
body (the client's response is cut, not completed), interim answers (a 103 passed on), and
kept connections the upstream closes while idle. Each error leaves a line in the error log."""
import socket
import threading
import time

import h2.events
import pytest

from harness import Client, Scalwsd, exchange, parse_one, wait_until
from tls_support import H2Client
from upstreams import RawUpstream, answer

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[route]]
proxy = { upstream = "odd" }
[upstream.odd]
servers = ["127.0.0.1:@PORT@"]
read_timeout = "1s"
max_fails = 0
retries = 0
"""

BAD_FRAMING = {
    "cl-and-te": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "te-and-cl": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello",
    "differing-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "cl-list": b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!",
    "bad-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello",
    "te-gzip": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "te-obfuscated": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
    "te-space-colon": b"HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
    "bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\nhello\r\n0\r\n\r\n",
    "chunk-no-crlf": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhelloo\r\n0\r\n\r\n",
    "chunk-overflow": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n",
    "cr-in-field": b"HTTP/1.1 200 OK\r\nX-A: a\rInjected: 1\r\nContent-Length: 0\r\n\r\n",
    "lf-in-field": b"HTTP/1.1 200 OK\r\nX-A: a\nInjected: 1\r\nContent-Length: 0\r\n\r\n",
    "nul-in-field": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "obs-fold": b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n",
    "body-on-204": b"HTTP/1.1 204 No Content\r\n\r\nsmuggled",
    "body-on-304": b"HTTP/1.1 304 Not Modified\r\n\r\nsmuggled",
    "te-on-204": b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "cl-on-204": b"HTTP/1.1 204 No Content\r\nContent-Length: 8\r\n\r\nsmuggled",
    "bad-status-line": b"HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n",
    "http-0.9": b"hello world\r\n\r\n",
    "te-http10": b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
}


def scripted(answers):
    """An upstream answering /<name> with answers[name]."""
    def script(request, conn):
        name = request.target.lstrip("/").split("?")[0]
        if name in answers:
            value = answers[name]
            if callable(value):
                return value(request, conn)
            return value
        fine = answer(200, "fine\n")
        return fine[:fine.index(b"\r\n\r\n") + 4] if request.method == "HEAD" else fine
    return RawUpstream(script)


@pytest.fixture(scope="module")
def odd():
    answers = dict(BAD_FRAMING)
    answers["head-on-head"] = None  # set below (needs the method)

    def head_with_body(request, conn):
        return b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    def huge_head(request, conn):
        return b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (80 * 1024) + b"\r\nContent-Length: 2\r\n\r\nok"

    def never(request, conn):
        time.sleep(3)  # longer than read_timeout
        conn.close_after = True
        return None

    def slow_body(request, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n")
        for i in range(3):
            time.sleep(0.3)
            conn.sendall(b"0123456789")
        return None

    def cut_body(request, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        time.sleep(0.1)
        conn.close_after = True
        return None

    def cut_chunked(request, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + b"y" * 100 + b"\r\n")
        time.sleep(0.1)
        conn.close_after = True
        return None

    def interim(request, conn):
        return (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
                + answer(200, "after interim\n"))

    def until_close(request, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nread until the close")
        conn.close_after = True
        return None

    def trailers(request, conn):
        return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
                b"5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n")

    answers.update({"head-on-head": head_with_body, "huge-head": huge_head, "never": never,
                    "slow-body": slow_body, "cut-body": cut_body, "cut-chunked": cut_chunked,
                    "interim": interim, "until-close": until_close, "trailers": trailers})
    with scripted(answers) as u:
        yield u


@pytest.fixture(scope="module")
def server(odd):
    with Scalwsd(SITE.replace("@PORT@", str(odd.port))) as s:
        yield s


def request(server, path, method="GET"):
    with Client(server.port, timeout=10) as c:
        c.send(b"%s /%s HTTP/1.1\r\nHost: x\r\n\r\n" % (method.encode(), path.encode()))
        return c.read_response(head=method == "HEAD")


@pytest.mark.parametrize("case", sorted(BAD_FRAMING))
def test_bad_framing_is_502_and_the_connection_is_dropped(server, odd, case):
    before = odd.connections
    r = request(server, case)
    assert r.status == 502, r
    assert b"smuggled" not in r.body and b"hello" not in r.body
    # The next request must come on a fresh upstream connection: the bad one was dropped.
    ok = request(server, "fine")
    assert ok.status == 200 and ok.body == b"fine\n"
    assert odd.requests[-1].connection > before
    assert "upstream odd: request" in server.read_log()


def test_body_on_an_answer_to_head_is_502(server):
    assert request(server, "head-on-head", "HEAD").status == 502
    assert request(server, "fine", "HEAD").status == 200


def test_huge_head_is_502(server):
    assert request(server, "huge-head").status == 502
    assert "response head too large" in server.read_log()


def test_no_answer_is_504(server):
    started = time.monotonic()
    r = request(server, "never")
    assert r.status == 504
    assert time.monotonic() - started < 2.5  # read_timeout is 1s
    assert "read timed out" in server.read_log()


def test_slow_body_streams_as_it_comes(server):
    with Client(server.port, timeout=10) as c:
        c.send(b"GET /slow-body HTTP/1.1\r\nHost: x\r\n\r\n")
        # The head and the first piece arrive long before the whole body exists.
        started = time.monotonic()
        wait_until(lambda: c._fill(time.monotonic() + 0.05) or b"\r\n\r\n0123456789" in c.buf,
                   timeout=5, what="the first piece")
        first = time.monotonic() - started
        r = c.read_response()
        assert r.body == b"0123456789" * 3
        assert first < 0.8


@pytest.mark.parametrize("path", ["cut-body", "cut-chunked"])
def test_close_mid_body_cuts_the_clients_response(server, path):
    data, how = exchange(server.port, b"GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode(), 5)
    assert data.startswith(b"HTTP/1.1 200 OK")
    # Not a complete response: the length is not met / no last chunk, and the connection ends.
    assert parse_one(data, 0, eof=False) is None
    assert how in ("eof", "reset")
    assert "in the middle of a body" in server.read_log()


def test_an_upstreams_103_reaches_the_client_where_its_protocol_allows(server):
    # HTTP/1.1: the 103 goes before the final answer; the upstream's 100 does not (the
    # worker answers Expect itself).
    data, _ = exchange(server.port, b"GET /interim HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\n"), data
    assert b"100 Continue" not in data and data.endswith(b"after interim\n")
    # HTTP/1.0 clients never get a 1xx (RFC 9110 §15.2).
    data, _ = exchange(server.port, b"GET /interim HTTP/1.0\r\nHost: x\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 200 OK\r\n") and data.endswith(b"after interim\n"), data
    # HTTP/2: a HEADERS frame with :status 103 ahead of the final one.
    client = H2Client(server.port)
    try:
        sid = client.request("/interim")
        events = client.read(until=lambda ev: any(isinstance(e, h2.events.StreamEnded) for e in ev))
        informational = [e for e in events if isinstance(e, h2.events.InformationalResponseReceived)]
        assert len(informational) == 1 and informational[0].stream_id == sid
        fields = dict(informational[0].headers)
        assert fields[":status"] == "103" and fields["link"] == "</a.css>"
        final = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
        assert dict(final[0].headers)[":status"] == "200"
    finally:
        client.close()


def test_body_until_close_and_trailers(server):
    r = request(server, "until-close")
    assert r.status == 200 and r.body == b"read until the close"
    r = request(server, "trailers")
    assert r.status == 200 and r.body == b"hello"
    assert r.header("x-sum") is None


def test_idle_kept_connection_closed_by_the_upstream(server, odd):
    # The upstream closes every kept connection after its answer, without saying so.
    assert request(server, "fine").status == 200
    with odd.lock:
        for conn in list(odd.open):
            conn.shutdown(socket.SHUT_RDWR)
    time.sleep(0.1)
    for _ in range(3):
        assert request(server, "fine").status == 200


def test_unreachable_upstream_is_502():
    gone = RawUpstream(lambda r, c: answer(200, "x"))
    port = gone.port
    gone.stop()
    with Scalwsd(SITE.replace("@PORT@", str(port))) as s:
        r = request(s, "fine")
        assert r.status == 502
        assert "Connection refused" in s.read_log()
