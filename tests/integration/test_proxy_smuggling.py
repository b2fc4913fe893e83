"""Request smuggling attempts through the proxy, with what the upstream receives checked
byte for byte: CL.TE, TE.CL, TE.TE obfuscations and duplicate Content-Lengths are refused
before a byte reaches the upstream; what is accepted is re-framed (exactly one framing,
chunk extensions and trailers gone), so the upstream and the proxy can never disagree on
where a request ends."""
import time

import pytest

from harness import Client, Scalwsd, exchange, expect_error, split_responses
from upstreams import RawUpstream, answer

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
[[route]]
proxy = { upstream = "app" }
[upstream.app]
servers = ["127.0.0.1:@PORT@"]
"""

FORWARDED = (b"X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: x\r\n"
             b"Forwarded: for=127.0.0.1;host=x;proto=http\r\n")


@pytest.fixture(scope="module")
def upstream():
    with RawUpstream(lambda request, conn: answer(200, "len=%d\n" % len(request.body))) as u:
        yield u


@pytest.fixture(scope="module")
def server(upstream):
    with Scalwsd(SITE.replace("@PORT@", str(upstream.port))) as s:
        yield s


ATTEMPTS = {
    "cl.te": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"0\r\n\r\nSMUGGLED",
    "te.cl": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
             b"8\r\nSMUGGLED\r\n0\r\n\r\n",
    "te.te-second-value": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                          b"Transfer-Encoding: x\r\n\r\n0\r\n\r\n",
    "te.te-chunked-not-last": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n"
                              b"0\r\n\r\n",
    "te.te-xchunked": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
    "te.te-space-before-colon": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n"
                                b"0\r\n\r\n",
    "te.te-leading-space": b"POST / HTTP/1.1\r\nHost: x\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te.te-bare-cr": b"POST / HTTP/1.1\r\nHost: x\r\nX: y\rTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te.te-bare-lf": b"POST / HTTP/1.1\r\nHost: x\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "duplicate-cl": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
                    b"hello!",
    "cl-list": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\nhello!",
    "cl-plus": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello",
    "te-http10": b"POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_attempts_are_refused_before_the_upstream(server, upstream, name):
    before_connections = upstream.connections
    before_requests = len(upstream.requests)
    data, how = exchange(server.port, ATTEMPTS[name], timeout=3)
    responses = split_responses(data)
    assert len(responses) == 1, responses
    assert responses[0].status in (400, 413, 501), responses[0]
    assert b"SMUGGLED" not in data and b"len=" not in data
    assert how in ("eof", "reset")
    assert upstream.connections == before_connections
    assert len(upstream.requests) == before_requests


def test_chunk_size_overflow_is_refused_and_the_upstream_gets_no_request():
    """Chunk-size trouble is found once the head went upstream, so a connection to the
    upstream may be made (and is counted whenever the upstream accepts it, maybe after the
    client's answer): its own upstream, so the other attempts' counts stay exact."""
    with RawUpstream(lambda request, conn: answer(200, "len=%d\n" % len(request.body))) as up, \
            Scalwsd(SITE.replace("@PORT@", str(up.port))) as s:
        data, how = exchange(s.port, b"POST / HTTP/1.1\r\nHost: x\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n"
                             b"FFFFFFFFFFFFFFFFF1\r\nx\r\n0\r\n\r\n", timeout=3)
        responses = split_responses(data)
        assert len(responses) == 1, responses
        assert responses[0].status in (400, 413), responses[0]
        assert b"len=" not in data and how in ("eof", "reset")
        # Whatever reached the upstream, it never got a whole request out of it (a moment
        # for bytes in flight to arrive: an absence is being checked).
        time.sleep(0.2)
        assert not up.requests


def test_chunked_body_is_reframed_byte_for_byte(server, upstream):
    with Client(server.port) as c:
        c.send(b"POST /post HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5;ext=\"evil\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: smuggle\r\n\r\n")
        r = c.read_response()
        assert r.status == 200 and r.body == b"len=11\n"
    request = upstream.requests[-1]
    assert request.raw == (b"POST /post HTTP/1.1\r\nHost: x\r\n" + FORWARDED +
                           b"Transfer-Encoding: chunked\r\n\r\n"
                           b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")


def test_content_length_body_is_sent_with_its_length(server, upstream):
    with Client(server.port) as c:
        c.send(b"PUT /put HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        cont = c.read_response()
        assert cont.status == 100
        c.send(b"hello")
        r = c.read_response()
        assert r.status == 200 and r.body == b"len=5\n"
    assert upstream.requests[-1].raw == (b"PUT /put HTTP/1.1\r\nHost: x\r\n" + FORWARDED +
                                         b"Content-Length: 5\r\n\r\nhello")


def test_pipelined_requests_stay_separate(server, upstream):
    # What a smuggler hides behind a body, the proxy parses as the next request of its own:
    # the upstream gets two requests, each framed by the proxy.
    before = len(upstream.requests)
    with Client(server.port) as c:
        c.send(b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbodyGET /admin HTTP/1.1\r\n"
               b"Host: x\r\n\r\n")
        first, second = c.read_responses(2)
    assert first.status == 200 and second.status == 200
    got = upstream.requests[before:]
    assert [r.target for r in got] == ["/a", "/admin"]
    assert got[0].raw == b"POST /a HTTP/1.1\r\nHost: x\r\n" + FORWARDED + b"Content-Length: 4\r\n\r\nbody"
    assert got[1].raw == b"GET /admin HTTP/1.1\r\nHost: x\r\n" + FORWARDED + b"\r\n"


def test_connection_header_cannot_strip_forwarding_fields(server, upstream):
    # "Connection: X-Forwarded-For" would have a naive proxy drop the field it adds.
    with Client(server.port) as c:
        c.send(b"GET /c HTTP/1.1\r\nHost: x\r\nConnection: X-Forwarded-For, Forwarded\r\n\r\n")
        assert c.read_response().status == 200
    raw = upstream.requests[-1].raw
    assert b"X-Forwarded-For: 127.0.0.1\r\n" in raw and b"Forwarded: for=127.0.0.1" in raw
    assert b"Connection" not in raw
