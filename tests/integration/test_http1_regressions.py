"""Regression tests named after the bugs they pin."""
import socket
import time

from harness import Scalwsd, parse_responses

CONFIG = """
[server]
workers = 1
header_timeout = "10s"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
respond = { body = "ok" }
"""


def read_until_eof(sock, timeout):
    sock.settimeout(timeout)
    data = b""
    while True:
        b = sock.recv(65536)
        if not b:
            return data
        data += b


def test_codec_error_400_closes_at_once_not_after_header_timeout():
    # The connection used to answer 400 and then sit open until header_timeout.
    with Scalwsd(CONFIG) as s:
        for bad in (b"GET /x HTTP/1.1\r\n\r\n", b"GET /a\\..\\ HTTP/1.1\r\nHost: a\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", s.port)) as c:
                start = time.monotonic()
                c.sendall(bad)
                data = read_until_eof(c, 5)
                assert time.monotonic() - start < 3, "EOF came only after the header timeout"
            assert parse_responses(data)[0].status == 400
        s.assert_no_fd_leak()


def test_half_closed_client_still_gets_pipelined_answers():
    # A client that shuts its write side after pipelining used to lose the answers that
    # were still queued.
    with Scalwsd(CONFIG) as s:
        with socket.create_connection(("127.0.0.1", s.port)) as c:
            c.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" * 50)
            c.shutdown(socket.SHUT_WR)
            data = read_until_eof(c, 5)
        assert len(parse_responses(data)) == 50
        s.assert_no_fd_leak()
