"""Every configured limit of the HTTP/1.1 engine, on the real scalwsd: its status, its
`Connection: close` and a clean close; timeouts with short values and generous margins."""
import select
import time

import pytest

from harness import (Client, Scalwsd, check_error_close, exchange, expect_error, get, route,
                     site, split_responses, wait_until)

LIMITS = site([
    route("small-route\n", exact="/small", policy={"max_body": 10}),
    route("big-route\n", exact="/big", policy={"max_body": "1k"}),
    route("ok\n"),
], max_request_line="1k", max_header_size="2k", max_headers=10, max_body=100)


@pytest.fixture(scope="module")
def limits():
    with Scalwsd(LIMITS) as s:
        yield s


@pytest.fixture
def checked(limits):
    before = sorted(limits.workers())
    yield limits
    assert sorted(limits.workers()) == before, "a worker was replaced (crash?)"
    assert get(limits.port, "/").status == 200
    limits.assert_no_fd_leak()


def head(path="/", extra=b"", method=b"GET"):
    return method + b" " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\n" + extra + b"\r\n"


def test_request_target_over_max_request_line_is_414(checked):
    expect_error(checked.port, head("/" + "a" * 2000), 414)
    expect_error(checked.port, head("/" + "a" * 1030), 414)
    assert get(checked.port, "/" + "a" * 900).status == 200


def test_header_section_over_max_header_size_is_431(checked):
    three = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"v" * 900) for i in range(3))
    expect_error(checked.port, head(extra=three), 431)
    expect_error(checked.port, head(extra=b"X-Big: " + b"v" * 3000 + b"\r\n"), 431)
    expect_error(checked.port, head(extra=b"X-" + b"n" * 3000 + b": v\r\n"), 431)
    one = b"X-Pad: " + b"v" * 1200 + b"\r\n"
    assert get(checked.port, "/", extra=one).status == 200


def test_header_section_far_over_the_limit_is_431_with_a_clean_close(checked):
    # Much more than the server reads before answering: it must drain, not reset.
    many = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"v" * 1000) for i in range(200))
    expect_error(checked.port, head(extra=many), 431)


def test_more_than_max_headers_is_431(checked):
    nine = b"".join(b"X-H%d: v\r\n" % i for i in range(8)) + b"Connection: close\r\n"
    assert get(checked.port, "/", extra=b"".join(b"X-H%d: v\r\n" % i for i in range(8))).status == 200
    data, how = exchange(checked.port, head(extra=nine))  # Host + 9 = 10 headers: allowed
    assert split_responses(data)[0].status == 200
    expect_error(checked.port, head(extra=nine + b"X-Eleventh: v\r\n"), 431)


def test_declared_content_length_over_max_body_is_413_at_once(checked):
    # Only the head is sent: the 413 must not wait for a body.
    with Client(checked.port) as c:
        c.send(head(extra=b"Content-Length: 101\r\n", method=b"POST"))
        data, how = c.read_until_close(timeout=3)
        check_error_close(data, how, 413)
    body = b"b" * 100
    with Client(checked.port) as c:
        c.send(head(extra=b"Content-Length: 100\r\n", method=b"POST") + body + head("/"))
        first, second = c.read_responses(2)
        assert (first.status, second.status) == (200, 200)


def test_route_policy_max_body_overrides_the_server_limit(checked):
    with Client(checked.port) as c:
        c.send(head("/small", b"Content-Length: 11\r\n", b"POST"))
        data, how = c.read_until_close(timeout=3)
        check_error_close(data, how, 413)
    with Client(checked.port) as c:
        c.send(head("/small", b"Content-Length: 10\r\n", b"POST") + b"0123456789" + head("/small"))
        assert [r.body for r in c.read_responses(2)] == [b"small-route\n"] * 2
    with Client(checked.port) as c:  # larger than the server's 100, within the route's 1k
        c.send(head("/big", b"Content-Length: 1000\r\n", b"POST") + b"x" * 1000 + head("/big"))
        assert [r.body for r in c.read_responses(2)] == [b"big-route\n"] * 2
    with Client(checked.port) as c:
        c.send(head("/big", b"Content-Length: 1025\r\n", b"POST"))
        data, how = c.read_until_close(timeout=3)
        check_error_close(data, how, 413)


def chunked(*sizes):
    return b"".join(b"%x\r\n%s\r\n" % (n, b"c" * n) for n in sizes) + b"0\r\n\r\n"


def test_chunked_body_growing_past_max_body_is_413(checked):
    te = b"Transfer-Encoding: chunked\r\n"
    expect_error(checked.port, head("/", te, b"POST") + chunked(60, 60), 413)
    expect_error(checked.port, head("/small", te, b"POST") + chunked(5, 6), 413)
    expect_error(checked.port, head("/", te, b"POST") + chunked(101), 413)
    with Client(checked.port) as c:  # exactly at the limit: fine
        c.send(head("/", te, b"POST") + chunked(50, 50) + head("/"))
        assert [r.status for r in c.read_responses(2)] == [200, 200]


def test_chunked_body_growing_past_max_body_later_is_cut(checked):
    # The response is out before the body passes the limit: the connection must then
    # end, with no second response for the bytes after it.
    with Client(checked.port) as c:
        c.send(head("/", b"Transfer-Encoding: chunked\r\n", b"POST") + b"3c\r\n" + b"c" * 60 + b"\r\n")
        assert c.read_response().status == 200
        c.send(b"3c\r\n" + b"c" * 60 + b"\r\n0\r\n\r\n" + head("/"))
        data, how = c.read_until_close(timeout=2)
        assert (data, how) == (b"", "eof")


TIMEOUTS = site([route("ok\n")], header_timeout="1s", keepalive_timeout="1s", body_timeout="1s")


@pytest.fixture(scope="module")
def timeouts():
    with Scalwsd(TIMEOUTS) as s:
        yield s


def test_half_a_head_then_silence_is_408_then_close(timeouts):
    with Client(timeouts.port, timeout=6) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: local")
        start = time.monotonic()
        data, how = c.read_until_close()
        took = time.monotonic() - start
    check_error_close(data, how, 408)
    assert 0.8 <= took <= 3.5, took
    timeouts.assert_no_fd_leak()


def test_head_trickled_byte_by_byte_still_times_out(timeouts):
    # header_timeout bounds the whole head, not the gap between bytes (slowloris).
    with Client(timeouts.port, timeout=6) as c:
        start = time.monotonic()
        for b in b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100:
            if select.select([c.sock], [], [], 0.1)[0] or time.monotonic() - start > 5:
                break  # the server answered (or gave up)
            try:
                c.send(bytes([b]))
            except (BrokenPipeError, ConnectionResetError):
                break
        data, how = c.read_until_close(timeout=3)
        took = time.monotonic() - start
    check_error_close(data, how, 408)
    assert took <= 3.5, took
    timeouts.assert_no_fd_leak()


def test_connection_without_any_bytes_is_closed_quietly(timeouts):
    with Client(timeouts.port, timeout=6) as c:
        start = time.monotonic()
        data, how = c.read_until_close()
        took = time.monotonic() - start
    assert (data, how) == (b"", "eof")
    assert 0.8 <= took <= 3.5, took
    timeouts.assert_no_fd_leak()


def test_idle_keep_alive_connection_is_closed_quietly(timeouts):
    with Client(timeouts.port, timeout=6) as c:
        c.send(head())
        assert c.read_response().status == 200
        start = time.monotonic()
        data, how = c.read_until_close()
        took = time.monotonic() - start
    assert (data, how) == (b"", "eof"), "the idle close must send nothing"
    assert 0.8 <= took <= 3.5, took
    timeouts.assert_no_fd_leak()


def test_keep_alive_connection_in_use_stays_open(timeouts):
    # Requests every 0.5 s for 2.5 s: each restarts the 1 s idle timer.
    with Client(timeouts.port, timeout=6) as c:
        for _ in range(5):
            c.send(head())
            assert c.read_response().status == 200
            time.sleep(0.5)
        c.send(head())
        assert c.read_response().status == 200
    timeouts.assert_no_fd_leak()


def test_second_request_head_left_half_is_408(timeouts):
    with Client(timeouts.port, timeout=6) as c:
        c.send(head() + b"GET / HTTP/1.1\r\nHo")
        assert c.read_response().status == 200
        data, how = c.read_until_close()
    check_error_close(data, how, 408)
    timeouts.assert_no_fd_leak()


def test_stalled_body_ends_the_connection(timeouts):
    with Client(timeouts.port, timeout=6) as c:
        c.send(head(extra=b"Content-Length: 10\r\n", method=b"POST") + b"01234")
        start = time.monotonic()
        data, how = c.read_until_close()
        took = time.monotonic() - start
    resps = split_responses(data)
    assert how == "eof"
    # One answer: the respond route's 200 given at once, or a 408 if it waited for the body.
    assert [r.status for r in resps] in ([200], [408]), resps
    assert 0.8 <= took <= 3.5, took
    timeouts.assert_no_fd_leak()


def test_max_requests_per_connection_closes_after_the_last():
    with Scalwsd(site([route("ok\n")], max_requests_per_connection=3)) as s:
        with Client(s.port) as c:
            for i in range(3):
                c.send(head())
                resp = c.read_response()
                assert resp.status == 200
                if i < 2:
                    assert (resp.header("connection") or "").lower() != "close", i
                else:
                    assert resp.header("connection").lower() == "close"
            assert c.read_until_close() == (b"", "eof")
        with Client(s.port) as c:  # pipelined: the fourth and fifth are not answered
            c.send(head() * 5)
            data, how = c.read_until_close()
            resps = split_responses(data)
            assert [r.status for r in resps] == [200, 200, 200]
            assert resps[2].header("connection").lower() == "close"
            assert how == "eof"
        s.assert_no_fd_leak()


def test_max_connections_per_worker_answers_503_beyond_it():
    with Scalwsd(site([route("ok\n")], max_connections=2)) as s:
        with Client(s.port) as a, Client(s.port) as b:
            for c in (a, b):
                c.send(head())
                assert c.read_response().status == 200
            got, how = exchange(s.port, head(), timeout=2)
            assert split_responses(got)[0].status == 503
            got, how = exchange(s.port, b"", timeout=2)  # even without a request
            check_error_close(got, how, 503)
            # A request the server never reads (64 KiB of body): the 503 must still end
            # in a clean close, not a reset (lingering close, as for every error).
            got, how = exchange(s.port, head(extra=b"Content-Length: 65536\r\n", method=b"POST") +
                                b"p" * 65536, timeout=2)
            check_error_close(got, how, 503)
            a.send(head())
            assert a.read_response().status == 200  # the two admitted ones still work

        def served():  # both closed: new connections are served again
            data, how = exchange(s.port, head(extra=b"Connection: close\r\n"))
            return data.startswith(b"HTTP/1.1 200")
        wait_until(served, timeout=3, what="a connection slot to free up")
        s.assert_no_fd_leak()
