"""A request names its host twice — HTTP/2's :authority and a Host field, HTTP/1.1's
absolute-form target and Host — and the two disagree. The router matches one while a
handler (PHP's HTTP_HOST) would see the other, so such a request is refused with 400
(RFC 9113 §8.3.1; RFC 9112 §3.2.2 lets the target win, refusing is allowed and safest).
Over HTTP/1.1, h2c and HTTP/2 over TLS."""
import pytest

from harness import exchange, parse_responses
from tls_support import H2Client, tls_server

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
match = { host = "victim.example" }
respond = { body = "victim\\n" }
[[route]]
match = { host = "tenant.example" }
respond = { body = "tenant\\n" }
[[route]]
respond = { body = "other\\n" }
"""


@pytest.fixture(scope="module")
def server():
    with tls_server(SITE) as s:
        yield s


def h1(server, target, host):
    data = ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (target, host)).encode()
    responses = parse_responses(exchange(server.port2, data)[0])
    assert len(responses) == 1
    return responses[0]


def test_http1_absolute_form_with_another_host_is_400(server):
    r = h1(server, "http://victim.example/x", "tenant.example")
    assert r.status == 400
    assert b"victim" not in r.body and b"tenant" not in r.body


def test_http1_absolute_form_with_the_same_host_is_served(server):
    r = h1(server, "http://Victim.Example:80/x", "victim.example")
    assert (r.status, r.body) == (200, b"victim\n")


def test_http1_origin_form_routes_on_host(server):
    assert h1(server, "/x", "tenant.example").body == b"tenant\n"


def h2_request(server, tls, authority, host=None):
    c = H2Client(server.port if tls else server.port2, tls=tls)
    # python-h2 refuses to send what this test is about; the server must judge it.
    c.conn.config.validate_outbound_headers = False
    sid = c.conn.get_next_available_stream_id()
    headers = [(":method", "GET"), (":scheme", "https" if tls else "http"),
               (":authority", authority), (":path", "/x")]
    if host is not None:
        headers.append(("host", host))
    c.conn.send_headers(sid, headers, end_stream=True)
    c.flush()
    status, _, body = c.response(sid)
    c.close()
    return status, body


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_http2_host_differing_from_authority_is_400(server, tls):
    status, body = h2_request(server, tls, "victim.example", "tenant.example")
    assert status == 400
    assert b"victim" not in body and b"tenant" not in body


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_http2_matching_host_and_authority_are_served(server, tls):
    assert h2_request(server, tls, "victim.example", "VICTIM.example") == (200, b"victim\n")
    assert h2_request(server, tls, "tenant.example") == (200, b"tenant\n")
