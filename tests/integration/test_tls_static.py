"""Static files over every protocol: HTTP/1.1 over TLS (files read and encrypted chunk by
chunk), HTTP/2 over TLS and h2c (files read per DATA frame, through flow control). Small
files come from the open-file cache's memory, large ones from its fd."""
import hashlib
import os

import json

from harness import Scalwsd, curl
from static_site import write_tree
from tls_support import H2Client, make_cert

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
match = { exact = "/status" }
status = {}
[[route]]
match = { prefix = "/" }
static = { root = "$dir/www" }
"""

SMALL = b"small file\n" * 90
LARGE = os.urandom(3 * 1024 * 1024 + 123)


def server():
    s = Scalwsd(SITE, start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    write_tree(os.path.join(s.dir, "www"), {"small.txt": SMALL, "large.bin": LARGE})
    os.chmod(s.dir, 0o755)  # the sandboxed worker (nobody when run as root) reads the docroot
    for root, dirs, files in os.walk(os.path.join(s.dir, "www")):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    s.start()
    return s


def test_files_over_tls_http1_http2_and_h2c():
    with server() as s:
        cases = (("-k", "--http1.1", "https://127.0.0.1:%d" % s.port),
                 ("-k", "--http2", "https://127.0.0.1:%d" % s.port),
                 ("--http2-prior-knowledge", "-s", "http://127.0.0.1:%d" % s.port2))
        # The open-file cache keeps the files' descriptors: count from after the first fetch.
        for name in ("small.txt", "large.bin"):
            assert curl("-k", "https://127.0.0.1:%d/%s" % (s.port, name))[0] == 0
        s.baseline = s.fd_snapshot()
        for a, b, base in cases:
            for name, content in (("small.txt", SMALL), ("large.bin", LARGE)):
                code, out, err = curl(a, b, base + "/" + name)
                assert code == 0, err
                assert hashlib.sha256(out).digest() == hashlib.sha256(content).digest(), (a, b, name)
        # A range over HTTP/2.
        code, out, err = curl("-k", "--http2", "-r", "1000-1999", "https://127.0.0.1:%d/large.bin" % s.port)
        assert out == LARGE[1000:2000]
        s.assert_no_fd_leak()


def test_many_streams_share_a_connection_while_a_large_file_flows():
    with server() as s:
        c = H2Client(s.port, tls=True)
        big = c.request("/large.bin")
        small = [c.request("/small.txt") for _ in range(20)]
        for sid in small:
            status, _, body = c.response(sid, timeout=10)
            assert status == 200 and body == SMALL
        status, headers, body = c.response(big, timeout=30)
        assert status == 200 and int(headers["content-length"]) == len(LARGE)
        assert body == LARGE
        c.close()


def test_status_counts_requests_connections_and_handshakes_of_every_protocol():
    with server() as s:
        def status():
            code, out, err = curl("-s", "http://127.0.0.1:%d/status" % s.port2)
            assert code == 0, err
            return json.loads(out)
        before = status()
        for args in (("-k", "--http1.1", "https://127.0.0.1:%d/small.txt" % s.port),
                     ("-k", "--http2", "https://127.0.0.1:%d/small.txt" % s.port),
                     ("--http2-prior-knowledge", "-s", "http://127.0.0.1:%d/small.txt" % s.port2),
                     ("-k", "--http2", "https://127.0.0.1:%d/missing" % s.port)):
            assert curl(*args)[0] == 0
        after = status()
        assert after["requests"] - before["requests"] == 5  # four and the first /status
        assert after["requests_by_class"]["2xx"] - before["requests_by_class"]["2xx"] == 4
        assert after["requests_by_class"]["4xx"] - before["requests_by_class"]["4xx"] == 1
        assert after["requests_by_action"]["static"] - before["requests_by_action"]["static"] == 4
        assert after["tls_handshakes"] - before["tls_handshakes"] == 3
        assert after["conn_accepted"] - before["conn_accepted"] == 5
        # Every connection but the one asking now has closed, each counted once.
        assert after["conn_closed"] == after["conn_accepted"] - 1
        assert after["conn_active"] == 1
        assert after["bytes_out"] - before["bytes_out"] > 3 * len(SMALL)
