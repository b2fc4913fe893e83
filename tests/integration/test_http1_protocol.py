"""HTTP/1.1 behaviour of the real scalwsd over raw sockets: keep-alive, pipelining, HTTP/1.0,
HEAD, OPTIONS *, request bodies on respond routes, Expect: 100-continue."""
import socket
import time

import pytest

from harness import Client, Scalwsd, curl, exchange, get, parse_one, route, site

PIPELINED = 100
BIG_BODY = "x" * (300 * 1024)

ROUTES = [route("resp-%d\n" % i, exact="/r%d" % i) for i in range(PIPELINED)] + [
    route("big", exact="/big-marker"),  # keeps /big below distinct from a prefix match
    route(BIG_BODY, exact="/big", headers={"content-type": "text/plain"}),
    route("created\n", status=201, exact="/created", headers={"x-kind": "created"}),
    route("hello\n", headers={"content-type": "text/plain", "x-site": "it"}),
]


@pytest.fixture(scope="module")
def server():
    with Scalwsd(site(ROUTES, workers=2)) as s:
        yield s


@pytest.fixture(autouse=True)
def no_leak_and_same_workers(server):
    before = sorted(server.workers())
    yield
    assert sorted(server.workers()) == before, "a worker was replaced (crash?)"
    server.assert_no_fd_leak()


def req(path, method="GET", extra=b"", version=b"HTTP/1.1", host=b"localhost"):
    return (method.encode() + b" " + path.encode() + b" " + version + b"\r\nHost: " + host +
            b"\r\n" + extra + b"\r\n")


def test_keep_alive_serves_several_requests_on_one_connection(server):
    with Client(server.port) as c:
        for i in range(5):
            c.send(req("/r%d" % i))
            resp = c.read_response()
            assert resp.status == 200
            assert resp.body == b"resp-%d\n" % i
            assert resp.header("connection") is None or resp.header("connection").lower() != "close"
            assert resp.version == "HTTP/1.1"
        c.send(req("/r7", extra=b"Connection: close\r\n"))
        resp = c.read_response()
        assert resp.body == b"resp-7\n"
        assert resp.header("connection").lower() == "close"
        rest, how = c.read_until_close()
        assert (rest, how) == (b"", "eof")


def test_one_hundred_pipelined_requests_answered_in_order(server):
    heads = {i for i in range(PIPELINED) if i % 10 == 3}
    data = b"".join(req("/r%d" % i, method="HEAD" if i in heads else "GET")
                    for i in range(PIPELINED))
    with Client(server.port) as c:
        c.send(data + req("/r0", extra=b"Connection: close\r\n"))
        resps = c.read_responses(PIPELINED + 1, head_requests=heads)
        for i, resp in enumerate(resps[:PIPELINED]):
            assert resp.status == 200, i
            assert int(resp.header("content-length")) == len(b"resp-%d\n" % i), i
            assert resp.body == (b"" if i in heads else b"resp-%d\n" % i), i
        assert resps[-1].body == b"resp-0\n"
        rest, how = c.read_until_close()
        assert (rest, how) == (b"", "eof")


def test_pipelined_requests_split_at_every_byte(server):
    data = req("/r1") + req("/r2", method="HEAD") + req("/r3", extra=b"Connection: close\r\n")
    with Client(server.port) as c:
        for i in range(len(data)):
            c.send(data[i:i + 1])
            if i % 16 == 0:
                time.sleep(0.001)  # let some bytes arrive alone
        resps = c.read_responses(3, head_requests=(1,))
        assert [r.body for r in resps] == [b"resp-1\n", b"", b"resp-3\n"]
        assert c.read_until_close() == (b"", "eof")


def test_large_response_to_a_slow_reader_arrives_whole(server):
    with Client(server.port, timeout=10, rcvbuf=8192) as c:
        # 6 MB: more than the kernel buffers (tcp_wmem max 4 MB), so writes block.
        c.send(req("/big") * 20 + req("/r5", extra=b"Connection: close\r\n"))
        time.sleep(0.3)
        resps = c.read_responses(21, timeout=10)
        for r in resps[:20]:
            assert r.status == 200
            assert r.body == BIG_BODY.encode()
        assert resps[20].body == b"resp-5\n"


def test_http10_without_keep_alive_closes_after_the_response(server):
    data, how = exchange(server.port, b"GET /r1 HTTP/1.0\r\n\r\n")
    assert how == "eof"
    resp, end = parse_one(data, eof=True)
    assert resp.status == 200
    assert resp.body == b"resp-1\n"
    assert end == len(data), "bytes after the response: %r" % data[end:]
    assert (resp.header("connection") or "close").lower() == "close"


def test_http10_with_keep_alive_keeps_the_connection(server):
    with Client(server.port) as c:
        c.send(b"GET /r1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        resp = c.read_response()
        assert resp.body == b"resp-1\n"
        assert resp.header("connection").lower() == "keep-alive"
        assert resp.header("content-length") == "7"
        c.send(b"GET /r2 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
        resp = c.read_response()
        assert resp.body == b"resp-2\n"
        assert resp.header("connection").lower() == "keep-alive"
        c.send(b"GET /r3 HTTP/1.0\r\n\r\n")
        resp = c.read_response()
        assert resp.body == b"resp-3\n"
        assert c.read_until_close() == (b"", "eof")


def test_head_has_the_get_headers_and_no_body(server):
    with Client(server.port) as c:
        c.send(req("/created") + req("/created", method="HEAD") + req("/r4"))
        got, head, after = c.read_responses(3, head_requests=(1,))
        assert head.status == got.status == 201
        assert head.body == b""
        skip = {"date"}
        assert [h for h in head.headers if h[0] not in skip] == \
            [h for h in got.headers if h[0] not in skip]
        assert head.header("content-length") == str(len(b"created\n"))
        assert after.body == b"resp-4\n"  # nothing of a HEAD body got in the way


def test_options_asterisk_answers_allow(server):
    with Client(server.port) as c:
        c.send(b"OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n")
        resp = c.read_response()
        assert resp.status == 200
        allow = [m.strip() for m in resp.header("allow").split(",")]
        assert "GET" in allow and "HEAD" in allow and "OPTIONS" in allow
        c.send(req("/r1"))
        assert c.read_response().body == b"resp-1\n"


def test_content_length_body_is_discarded_and_connection_reused(server):
    with Client(server.port) as c:
        body = b"a=1&b=2" * 10
        c.send(req("/r1", "POST", b"Content-Length: %d\r\n" % len(body)) + body + req("/r2"))
        first, second = c.read_responses(2)
        assert (first.status, first.body) == (200, b"resp-1\n")
        assert (second.status, second.body) == (200, b"resp-2\n")
        # The body arriving later, in pieces, after the response.
        c.send(req("/r3", "PUT", b"Content-Length: 10\r\n"))
        assert c.read_response().body == b"resp-3\n"
        c.send(b"01234")
        time.sleep(0.05)
        c.send(b"56789" + req("/r4"))
        assert c.read_response().body == b"resp-4\n"


def test_large_content_length_body_is_discarded(server):
    body = b"z" * (200 * 1024)
    with Client(server.port) as c:
        c.send(req("/r1", "POST", b"Content-Length: %d\r\n" % len(body)) + body + req("/r2"))
        first, second = c.read_responses(2)
        assert first.body == b"resp-1\n" and second.body == b"resp-2\n"


def test_chunked_body_is_discarded_and_connection_reused(server):
    body = (b"5\r\nhello\r\n" + b"6;name=value\r\n world\r\n" + b"0\r\n" +
            b"X-Trailer: yes\r\n\r\n")
    with Client(server.port) as c:
        c.send(req("/r1", "POST", b"Transfer-Encoding: chunked\r\n") + body + req("/r2"))
        first, second = c.read_responses(2)
        assert (first.status, first.body) == (200, b"resp-1\n")
        assert (second.status, second.body) == (200, b"resp-2\n")
        # Chunks arriving one by one after the response.
        c.send(req("/r3", "POST", b"Transfer-Encoding: chunked\r\n"))
        assert c.read_response().body == b"resp-3\n"
        for piece in (b"3\r\nabc\r\n", b"A\r\n0123456789\r\n", b"0\r\n\r\n"):
            time.sleep(0.02)
            c.send(piece)
        c.send(req("/r4"))
        assert c.read_response().body == b"resp-4\n"


def test_large_chunked_body_is_discarded(server):
    chunk = b"y" * 4000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(50)) + b"0\r\n\r\n"
    with Client(server.port) as c:
        c.send(req("/r1", "POST", b"Transfer-Encoding: chunked\r\n") + body + req("/r2"))
        first, second = c.read_responses(2)
        assert first.body == b"resp-1\n" and second.body == b"resp-2\n"


def test_expect_100_continue_on_respond_route_answers_final_and_closes(server):
    with Client(server.port) as c:
        c.send(req("/r1", "POST", b"Content-Length: 5\r\nExpect: 100-continue\r\n"))
        resp = c.read_response()
        assert resp.status == 200, "a 1xx came first: %r" % resp
        assert resp.body == b"resp-1\n"
        assert resp.header("connection").lower() == "close"
        rest, how = c.read_until_close()
        assert (rest, how) == (b"", "eof")


def test_expect_100_continue_without_body_is_plain(server):
    with Client(server.port) as c:
        c.send(req("/r1", extra=b"Expect: 100-continue\r\n") + req("/r2"))
        first, second = c.read_responses(2)
        assert (first.status, second.status) == (200, 200)
        assert second.body == b"resp-2\n"


def test_half_closed_client_still_gets_its_response(server):
    with Client(server.port) as c:
        c.send(req("/r1") + req("/r2"))
        c.sock.shutdown(socket.SHUT_WR)
        resps = c.read_responses(2)
        assert [r.body for r in resps] == [b"resp-1\n", b"resp-2\n"]
        assert c.read_until_close() == (b"", "eof")


def test_query_string_is_not_part_of_the_matched_path(server):
    assert get(server.port, "/r9?x=1&y=/r8").body == b"resp-9\n"


def test_dot_segments_are_resolved_before_routing(server):
    assert get(server.port, "/a/b/../../r6").body == b"resp-6\n"
    assert get(server.port, "/./r6").body == b"resp-6\n"
    assert get(server.port, "/%72%36").body == b"resp-6\n"  # percent-encoded "r6"


def test_header_names_are_case_insensitive(server):
    data, how = exchange(server.port, b"GET /r2 HTTP/1.1\r\nhOsT: localhost\r\n"
                                      b"CONNECTION: close\r\n\r\n")
    resp = parse_one(data)[0]
    assert resp.status == 200 and resp.body == b"resp-2\n"
    assert how == "eof"


def test_an_empty_line_before_the_request_line_is_ignored(server):
    data, how = exchange(server.port, b"\r\n" + req("/r2", extra=b"Connection: close\r\n"))
    assert parse_one(data)[0].body == b"resp-2\n"


def test_response_headers_from_the_route_and_framing(server):
    resp = get(server.port, "/anything")
    assert resp.status == 200
    assert resp.body == b"hello\n"
    assert resp.header("content-type") == "text/plain"
    assert resp.header("x-site") == "it"
    assert resp.header("content-length") == "6"
    assert resp.header("transfer-encoding") is None


def test_curl_keep_alive_reuses_one_connection(server):
    code, out, err = curl("-v", server.url("/r1"), server.url("/r2"), server.url("/r3"))
    assert code == 0, err
    assert out == b"resp-1\nresp-2\nresp-3\n"
    assert err.count("Connected to") == 1, err
    assert "Re-using existing connection" in err


def test_requests_after_connection_close_are_not_answered(server):
    with Client(server.port) as c:
        c.send(req("/r1", extra=b"Connection: close\r\n") + req("/r2") + req("/r3"))
        data, how = c.read_until_close()
    resp, end = parse_one(data)
    assert resp.body == b"resp-1\n"
    assert data[end:] == b"" and how == "eof"


def test_a_close_with_nothing_more_from_the_client_is_immediate(server):
    # The request was read whole and nothing followed it: the server closes outright after
    # the response (nginx's rule) instead of lingering, so what the client sends afterwards
    # meets a reset. Bytes behind a Connection: close request (the test above) still get a
    # lingering close.
    with Client(server.port) as c:
        c.send(req("/r1", extra=b"Connection: close\r\n"))
        data, how = c.read_until_close()
        resp, end = parse_one(data)
        assert resp.body == b"resp-1\n" and data[end:] == b"" and how == "eof"
        with pytest.raises((ConnectionResetError, BrokenPipeError)):
            for _ in range(50):  # 1 s, well inside the 2 s a lingering close would drain
                c.send(b"x")
                time.sleep(0.02)


def test_a_body_left_unread_gets_a_lingering_close(server):
    # A respond route does not read the body; the client is still sending it when the
    # answer comes, so the server drains instead of resetting (no error while it sends).
    with Client(server.port) as c:
        c.send(req("/r1", method="POST",
                   extra=b"Connection: close\r\nContent-Length: 100000\r\n") + b"y" * 1000)
        data, how = c.read_until_close()
        resp, _ = parse_one(data)
        assert resp.body == b"resp-1\n" and how == "eof"
        for _ in range(20):
            c.send(b"y" * 1000)
            time.sleep(0.02)


def test_many_concurrent_connections(server):
    clients = [Client(server.port) for _ in range(200)]
    try:
        for round_ in range(3):
            for i, c in enumerate(clients):
                c.send(req("/r%d" % ((i + round_) % PIPELINED)))
            for i, c in enumerate(clients):
                assert c.read_response().body == b"resp-%d\n" % ((i + round_) % PIPELINED)
    finally:
        for c in clients:
            c.close()
