"""HTTP/2 with real clients: curl (--http2 over TLS, --http2-prior-knowledge on h2c),
nghttp -nv, h2load; the same routes and errors as HTTP/1.1; one access-log line per
stream; a plain listener with http2 = true still speaks HTTP/1.1."""
import os
import re
import signal
import subprocess
import time

from harness import curl, parse_responses, raw_request
from tls_support import H2Client, tls_server

BIG = "0123456789abcdef" * 16384  # 256 KiB: past the default 64 KiB stream window

SITE = """
[server]
workers = 1
access_log = "$dir/access.log"
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[listen]]
address = "127.0.0.1:$port2"
http2 = true
[[route]]
match = { exact = "/hello" }
respond = { body = "hello h2\\n", headers = { "content-type" = "text/plain", "X-Custom" = "yes" } }
[[route]]
match = { exact = "/big" }
respond = { body = "%s" }
[[route]]
match = { prefix = "/private/" }
respond = { body = "secret" }
policy = { allow = ["10.0.0.0/8"] }
""" % BIG


def tls_url(s, path):
    return "https://127.0.0.1:%d%s" % (s.port, path)


def h2c_url(s, path):
    return "http://127.0.0.1:%d%s" % (s.port2, path)


def test_curl_http2_over_tls_and_prior_knowledge():
    with tls_server(SITE) as s:
        for args, url in ((["-k", "--http2"], tls_url(s, "/hello")),
                          (["--http2-prior-knowledge"], h2c_url(s, "/hello"))):
            code, out, err = curl(*args, "-i", url)
            assert code == 0, err
            assert out.startswith(b"HTTP/2 200"), out
            head, _, body = out.partition(b"\r\n\r\n")
            assert body == b"hello h2\n"
            head = head.decode().lower()
            assert "content-type: text/plain" in head
            assert "x-custom: yes" in head  # names lower-cased for HTTP/2
            assert "content-length: 9" in head
            assert "server: scalws" in head
            assert "connection:" not in head
        code, out, err = curl("-k", "--http2", "-v", tls_url(s, "/hello"), tls_url(s, "/hello"))
        assert out == b"hello h2\n" * 2
        assert "ALPN: server accepted h2" in err
        assert "Re-using existing connection" in err
        s.assert_no_fd_leak()


def test_head_errors_and_large_bodies_over_http2():
    with tls_server(SITE) as s:
        code, out, err = curl("-k", "--http2", "-I", tls_url(s, "/hello"))
        assert out.startswith(b"HTTP/2 200") and b"content-length: 9" in out
        for path, status in (("/nothing", 404), ("/private/x", 403)):
            code, out, err = curl("-k", "--http2", "-i", tls_url(s, path))
            assert out.startswith(b"HTTP/2 %d" % status), out
            assert b"<h1>%d" % status in out
        code, out, err = curl("--http2-prior-knowledge", "-i", "--path-as-is",
                              h2c_url(s, "/../etc/passwd"))
        assert out.startswith(b"HTTP/2 400"), out
        for url, args in ((tls_url(s, "/big"), ["-k", "--http2"]),
                          (h2c_url(s, "/big"), ["--http2-prior-knowledge"])):
            code, out, err = curl(*args, url)
            assert code == 0, err
            assert out == BIG.encode()


def test_nghttp_sees_our_settings_and_frames():
    with tls_server(SITE) as s:
        p = subprocess.run(["nghttp", "-nv", tls_url(s, "/hello")], capture_output=True,
                           text=True, timeout=20)
        assert p.returncode == 0, p.stdout + p.stderr
        out = p.stdout
        assert "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):128]" in out
        assert "[SETTINGS_INITIAL_WINDOW_SIZE(0x04):262144]" in out
        assert "[SETTINGS_MAX_HEADER_LIST_SIZE(0x06):32768]" in out
        assert "recv (stream_id=13) :status: 200" in out
        assert re.search(r"recv DATA frame <length=9, flags=0x01, stream_id=13>", out), out
        p = subprocess.run(["nghttp", "-nv", h2c_url(s, "/hello")], capture_output=True,
                           text=True, timeout=20)
        assert p.returncode == 0 and ":status: 200" in p.stdout


def h2load(url, *extra):
    p = subprocess.run(["h2load", "-n", "10000", "-c", "10", "-m", "10"] + list(extra) + [url],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", p.stdout)
    assert m, p.stdout
    return [int(x) for x in m.groups()], p.stdout


def test_h2load_ten_thousand_requests_without_errors():
    with tls_server(SITE) as s:
        for url in (tls_url(s, "/hello"), h2c_url(s, "/hello")):
            counts, out = h2load(url)
            assert counts == [10000, 10000, 10000, 10000, 0, 0, 0], out
            assert "status codes: 10000 2xx" in out
        s.assert_no_fd_leak()


def test_one_access_log_line_per_stream():
    with tls_server(SITE) as s:
        client = H2Client(s.port, tls=True)
        sids = [client.request("/hello") for _ in range(5)] + [client.request("/nothing")]
        statuses = [client.response(sid)[0] for sid in sids]
        client.close()
        assert statuses == [200] * 5 + [404]
        lines = []
        deadline = time.monotonic() + 5  # the log is written at least once a second
        while len(lines) < 6 and time.monotonic() < deadline:
            time.sleep(0.1)
            with open(os.path.join(s.dir, "access.log")) as f:
                lines = f.read().splitlines()
    assert len(lines) == 6, lines
    assert sum('"GET /hello HTTP/2.0" 200 9' in l for l in lines) == 5, lines
    assert sum('"GET /nothing HTTP/2.0" 404' in l for l in lines) == 1, lines


def test_h2c_listener_still_serves_http1():
    with tls_server(SITE) as s:
        data = raw_request(s.port2, b"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        r = parse_responses(data)[0]
        assert r.status == 200 and r.body == b"hello h2\n"
        # A preface cut in two packets is still recognised.
        client_sock = __import__("socket").create_connection(("127.0.0.1", s.port2))
        client_sock.sendall(b"PRI * HTTP/2.0\r\n")
        time.sleep(0.05)
        client_sock.sendall(b"\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        client_sock.settimeout(3)
        first = client_sock.recv(9)
        client_sock.close()
        assert len(first) == 9 and first[3] == 4  # the server's SETTINGS frame


def test_graceful_stop_with_an_open_http2_connection():
    s = tls_server(SITE)
    with s:
        client = H2Client(s.port, tls=True)
        sid = client.request("/hello")
        assert client.response(sid)[0] == 200
        start = time.monotonic()
        s.signal(signal.SIGTERM)
        assert client.wait_closed(timeout=10)
        assert client.goaway() is not None and client.goaway().error_code == 0
        s.proc.wait(10)
        assert time.monotonic() - start < 5
