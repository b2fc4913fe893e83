"""The real client address: a PROXY protocol header (v1 and v2) on listeners with
proxy_protocol = true, read before HTTP/1.1, h2c and TLS (HTTP/1.1 and HTTP/2 over it),
and [real_ip] taking the client from a trusted peer's X-Forwarded-For. The address found is
what `allow`, PHP's REMOTE_ADDR, the proxy's X-Forwarded-For and the access log see."""
import json
import os
import socket
import ssl
import struct
import time

import h2.config
import h2.connection
import h2.events
import pytest

from harness import Scalwsd, parse_responses, wait_until
from php_fpm import PhpFpm
from protocol_clients import PROTOCOLS, ProtocolClient
from tls_support import make_cert
from upstreams import RawUpstream, echo_script

ROUTES = """
[[route]]
match = { exact = "/inside" }
respond = { status = 200, body = "inside\\n" }
policy = { allow = ["203.0.113.0/24"] }
[[route]]
match = { prefix = "/up/" }
proxy = { upstream = "echo" }
[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }
[upstream.echo]
servers = ["@UPSTREAM@"]
[php_pool.main]
address = "@ADDRESS@"
max_conns = 2
"""

PROXIED_SITE = """
[server]
workers = 1
header_timeout = "2s"
access_log = "$dir/access.log"
[real_ip]
from = ["10.0.0.0/8"]
[[listen]]
address = "127.0.0.1:$port"
http2 = true
proxy_protocol = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
proxy_protocol = true
""" + ROUTES

HEADER_SITE = """
[server]
workers = 1
[real_ip]
from = ["127.0.0.1"]
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
""" + ROUTES


def read_to_eof(sock):
    """Everything the server sends until it closes the connection."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def start_site(template, fpm, upstream):
    s = Scalwsd(template.replace("@WWW@", fpm.www).replace("@ADDRESS@", fpm.address)
                .replace("@UPSTREAM@", upstream.address), start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    s.start()
    return s


@pytest.fixture(scope="module")
def backends():
    fpm = PhpFpm(children=2)
    upstream = RawUpstream(echo_script)
    yield fpm, upstream
    upstream.stop()
    fpm.stop()


@pytest.fixture(scope="module")
def proxied(backends):
    s = start_site(PROXIED_SITE, *backends)
    yield s
    s.__exit__(None, None, None)


@pytest.fixture(scope="module")
def header_site(backends):
    s = start_site(HEADER_SITE, *backends)
    yield s
    s.__exit__(None, None, None)


def v1(source, port=4711):
    family = "TCP6" if ":" in source else "TCP4"
    dest = "::1" if family == "TCP6" else "127.0.0.1"
    return ("PROXY %s %s %s %d 443\r\n" % (family, source, dest, port)).encode()


def v2(source, port=4711, command=1):
    sig = b"\r\n\r\n\x00\r\nQUIT\n"
    addresses = (socket.inet_aton(source) + socket.inet_aton("127.0.0.1") +
                 struct.pack("!HH", port, 443))
    tlv = b"\x04\x00\x03abc"  # a NOOP TLV, skipped
    body = addresses + tlv
    return sig + bytes([0x20 | command, 0x11]) + struct.pack("!H", len(body)) + body


def connect(port, header, tls, alpn):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(header)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols([alpn])
        sock = ctx.wrap_socket(sock, server_hostname="site.test")
    return sock


def http1(sock, path):
    sock.sendall(("GET %s HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n" %
                  path).encode())
    data = read_to_eof(sock)
    r = parse_responses(data)[0]
    return r.status, r.body


def http2(sock, path):
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "GET"), (":scheme", "https"),
                            (":authority", "site.test"), (":path", path)], end_stream=True)
    sock.sendall(conn.data_to_send())
    status, body = None, b""
    while True:
        data = sock.recv(65536)
        if not data:
            raise AssertionError("the connection closed before the answer")
        for e in conn.receive_data(data):
            if isinstance(e, h2.events.ResponseReceived):
                status = int(dict(e.headers)[":status"])
            elif isinstance(e, h2.events.DataReceived):
                body += e.data
                conn.acknowledge_received_data(e.flow_controlled_length, sid)
            elif isinstance(e, h2.events.StreamEnded):
                sock.close()
                return status, body
        sock.sendall(conn.data_to_send())


@pytest.fixture(params=list(PROTOCOLS))
def via(request, proxied):
    """get(header, path) -> (status, body) over the protocol after the PROXY header."""
    tls = PROTOCOLS[request.param][1] == "tls"
    h2 = request.param.startswith("h2")
    port = proxied.port2 if tls else proxied.port

    def get(header, path):
        sock = connect(port, header, tls, "h2" if h2 else "http/1.1")
        return http2(sock, path) if h2 else http1(sock, path)
    return get


def test_the_proxy_header_names_the_client(via, backends):
    assert via(v1("203.0.113.9"), "/inside") == (200, b"inside\n")
    assert via(v2("203.0.113.10"), "/inside") == (200, b"inside\n")
    assert via(v2("198.51.100.4"), "/inside")[0] == 403
    status, body = via(v1("203.0.113.9", port=50123), "/info.php")
    assert status == 200
    assert json.loads(body)["REMOTE_ADDR"] == "203.0.113.9"
    status, body = via(v2("203.0.113.11"), "/up/x")
    assert status == 200
    upstream = backends[1]
    assert upstream.requests[-1].header("x-forwarded-for") == "203.0.113.11"


def test_local_and_unknown_keep_the_peer(via):
    assert via(v2("203.0.113.9", command=0), "/inside")[0] == 403  # LOCAL: the balancer itself
    status, body = via(b"PROXY UNKNOWN\r\n", "/info.php")
    assert status == 200 and json.loads(body)["REMOTE_ADDR"] == "127.0.0.1"


def closed_without_answer(port, data, wait=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except ConnectionResetError:
            pass
        return got == b""


def test_no_or_a_malformed_header_closes_the_connection(proxied):
    assert closed_without_answer(proxied.port, b"GET /inside HTTP/1.1\r\nHost: x\r\n\r\n")
    assert closed_without_answer(proxied.port, b"PROXY TCP4 203.0.113.9 1.2.3.4 99999 1\r\n")
    assert closed_without_answer(proxied.port, b"PROXY TCP4 203.0.113.9\nGET / HTTP/1.1\r\n")
    assert closed_without_answer(proxied.port2, b"\x16\x03\x01\x00\x05hello")  # TLS at once


def test_a_header_that_never_ends_times_out(proxied):
    start = time.monotonic()
    assert closed_without_answer(proxied.port, b"PROXY TCP4 203.0.113.9 ", wait=10)
    assert time.monotonic() - start < 8  # header_timeout is 2 s


def test_the_access_log_has_the_client(proxied, via):
    via(v1("203.0.113.77"), "/inside")
    log = os.path.join(proxied.dir, "access.log")
    wait_until(lambda: os.path.exists(log) and "203.0.113.77 - - [" in open(log).read(),
               timeout=5, what="the access-log line")


def test_real_ip_with_the_proxy_header(proxied):
    # A trusted balancer (10.x) forwarding a header: its rightmost untrusted address.
    sock = connect(proxied.port, v1("10.9.9.9"), False, None)
    sock.sendall(b"GET /info.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                 b"X-Forwarded-For: 198.51.100.1, 203.0.113.8\r\n\r\n")
    data = read_to_eof(sock)
    assert json.loads(parse_responses(data)[0].body)["REMOTE_ADDR"] == "203.0.113.8"
    # An untrusted one: its header is not believed.
    sock = connect(proxied.port, v1("198.51.100.9"), False, None)
    sock.sendall(b"GET /info.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                 b"X-Forwarded-For: 203.0.113.8\r\n\r\n")
    data = read_to_eof(sock)
    assert json.loads(parse_responses(data)[0].body)["REMOTE_ADDR"] == "198.51.100.9"


@pytest.fixture(params=list(PROTOCOLS))
def client(request, header_site):
    return ProtocolClient(header_site, request.param)


def test_real_ip_from_x_forwarded_for(client, backends):
    xff = ("-H", "X-Forwarded-For: 198.51.100.1, 203.0.113.7")
    assert client.request("/inside", *xff)[0] == 200
    assert client.request("/inside")[0] == 403
    assert client.request("/inside", "-H", "X-Forwarded-For: unknown")[0] == 403
    status, _, body = client.request("/info.php", *xff)
    assert json.loads(body)["REMOTE_ADDR"] == "203.0.113.7"
    status, _, _ = client.request("/up/y", *xff)
    assert status == 200
    forwarded = backends[1].requests[-1].header("x-forwarded-for")
    assert forwarded == "198.51.100.1, 203.0.113.7, 203.0.113.7"
