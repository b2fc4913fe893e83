"""HTTP/1.1 over TLS: what the plain connection does (keep-alive, pipelining, HEAD,
errors, bodies, close) through the TLS transport."""
import socket
import ssl
import time

from harness import curl, parse_responses
from tls_support import tls_server, tls_socket

SITE = """
[server]
workers = 1
header_timeout = "2s"
max_body = "64k"
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[route]]
match = { exact = "/hello" }
respond = { body = "hello over tls\\n", headers = { "content-type" = "text/plain" } }
[[route]]
match = { exact = "/big" }
respond = { body = "%s" }
""" % ("0123456789abcdef" * 8192)  # 128 KiB: many records, several writes


def https(s, path):
    return "https://127.0.0.1:%d%s" % (s.port, path)


def read_all(sock, timeout=3.0):
    sock.settimeout(timeout)
    chunks = []
    while True:
        try:
            b = sock.recv(65536)
        except (socket.timeout, ssl.SSLError, ConnectionResetError):
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def test_get_keepalive_head_and_errors():
    with tls_server(SITE) as s:
        code, out, err = curl("-k", "--http1.1", "-i", https(s, "/hello"))
        assert code == 0, err
        r = parse_responses(out)[0]
        assert r.status == 200 and r.body == b"hello over tls\n"
        assert r.version == "HTTP/1.1"

        code, out, err = curl("-k", "--http1.1", "-v", https(s, "/hello"), https(s, "/hello"))
        assert code == 0
        assert out == b"hello over tls\nhello over tls\n"
        assert "Re-using existing connection" in err

        code, out, err = curl("-k", "--http1.1", "-I", https(s, "/hello"))
        head = parse_responses(out, head_requests=(0,))[0]
        assert head.status == 200 and head.header("content-length") == "15"

        code, out, _ = curl("-k", "--http1.1", "-i", https(s, "/nothing-here"))
        assert parse_responses(out)[0].status == 404
        code, out, _ = curl("-k", "--http1.1", "-i", "--path-as-is", https(s, "/../etc/passwd"))
        assert parse_responses(out)[0].status == 400
        s.assert_no_fd_leak()


def test_pipelined_requests_in_one_record():
    with tls_server(SITE) as s:
        with tls_socket(s.port, alpn=("http/1.1",)) as t:
            assert t.selected_alpn_protocol() == "http/1.1"
            t.sendall(b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n" * 3 +
                      b"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            responses = parse_responses(read_all(t))
        assert [r.status for r in responses] == [200] * 4
        assert all(r.body == b"hello over tls\n" for r in responses)
        assert responses[-1].header("connection") == "close"


def test_records_read_ahead_are_not_forgotten():
    # Record 1 fills the connection's 16 KiB read buffer exactly; record 2 arrives in the
    # same segment, so OpenSSL reads it ahead and the kernel has nothing left to signal.
    # Only the transport knows it is there (Transport::hasBufferedInput).
    one = b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n"
    assert len(one) == 32
    last = b"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    with tls_server(SITE) as s:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["http/1.1"])
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ctx.wrap_bio(incoming, outgoing)
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as raw:
            while True:
                try:
                    tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    raw.sendall(outgoing.read())
                    incoming.write(raw.recv(65536))
            raw.sendall(outgoing.read())
            tls.write(one * 512)  # one record of 16384 bytes
            tls.write(last)       # a second record
            raw.sendall(outgoing.read())
            raw.settimeout(5)
            plain = b""
            while True:
                try:
                    data = raw.recv(65536)
                except socket.timeout:
                    break
                if not data:
                    break
                incoming.write(data)
                try:
                    while True:
                        chunk = tls.read(65536)
                        if not chunk:
                            break
                        plain += chunk
                except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                    pass
        responses = parse_responses(plain)
        assert len(responses) == 513
        assert responses[-1].header("connection") == "close"


def test_large_response_and_request_body():
    with tls_server(SITE) as s:
        code, out, err = curl("-k", "--http1.1", https(s, "/big"))
        assert code == 0, err
        assert out == b"0123456789abcdef" * 8192
        # A request body (several records) is read and dropped by `respond`.
        code, out, err = curl("-k", "--http1.1", "-i", "--data-binary", "x" * 60000,
                              https(s, "/hello"))
        assert parse_responses(out)[0].status == 200, err


def test_close_sends_close_notify():
    with tls_server(SITE) as s:
        with tls_socket(s.port, alpn=("http/1.1",)) as t:
            t.sendall(b"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            data = b""
            t.settimeout(3)
            while True:
                b = t.recv(65536)  # ssl raises on a truncated stream; b"" on close_notify
                if not b:
                    break
                data += b
        assert parse_responses(data)[0].status == 200


def test_a_silent_client_is_dropped_after_header_timeout():
    with tls_server(SITE) as s:
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", s.port)) as raw:
            raw.settimeout(10)
            assert raw.recv(100) == b""  # closed without a word
        assert 1.5 < time.monotonic() - start < 6
        s.assert_no_fd_leak()
