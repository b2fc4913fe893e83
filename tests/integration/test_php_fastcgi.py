"""PHP over FastCGI against a real php8.2-fpm: params in, headers and bodies out,
streaming both ways, the script checks, and the pool's failure modes."""
import hashlib
import json
import os
import re
import socket
import threading
import time

import pytest

from harness import Scalwsd, curl, parse_responses, raw_request
from php_fpm import CountingRelay, GarbagePool, PhpFpm, big_expected

SITE = """
[server]
workers = 1
$server_extra
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { prefix = "/fc/" }
php = { pool = "main", root = "$www", front_controller = "/index.php" }
[[route]]
match = { prefix = "/" }
php = { pool = "main", root = "$www" }
[php_pool.main]
address = "$address"
$pool_extra
"""


def site(fpm, address=None, pool_extra="", server_extra=""):
    return (SITE.replace("$www", fpm.www).replace("$address", address or fpm.address)
            .replace("$pool_extra", pool_extra).replace("$server_extra", server_extra))


@pytest.fixture(scope="module")
def fpm():
    f = PhpFpm(children=4)
    yield f
    f.stop()


def get(s, path, *args):
    code, out, err = curl("-i", "--raw", *args, s.url(path))
    assert code == 0, err
    return parse_responses(out)[0]


def test_get_params_headers_query_and_path_info(fpm):
    with Scalwsd(site(fpm, pool_extra="max_conns = 4")) as s:
        r = get(s, "/info.php/extra/p%20q?a=1&b=two", "-H", "X-Custom: v1",
                "-H", "Proxy: http://evil:3128", "-H", "X_Custom: forged")
        assert r.status == 200
        assert r.header("x-from-php") == "yes"
        assert r.header("content-type") == "application/json"
        env = json.loads(r.body)
        assert env["SCRIPT_NAME"] == "/info.php"
        assert env["SCRIPT_FILENAME"] == os.path.join(fpm.www, "info.php")
        assert env["PATH_INFO"] == "/extra/p q"
        assert env["QUERY_STRING"] == "a=1&b=two"
        assert env["GET"] == {"a": "1", "b": "two"}
        assert env["REQUEST_URI"] == "/info.php/extra/p%20q?a=1&b=two"
        assert env["REQUEST_METHOD"] == "GET"
        assert env["DOCUMENT_ROOT"] == fpm.www
        assert env["SERVER_PORT"] == str(s.port)
        assert env["REMOTE_ADDR"] == "127.0.0.1"
        assert env["GATEWAY_INTERFACE"] == "CGI/1.1"
        assert env["HTTP_X_CUSTOM"] == "v1"  # the underscore twin was dropped
        assert "HTTP_PROXY" not in env  # httpoxy
        assert env["HTTPS"] is None
        # Kept pool connections stay open by design; nothing else may pile up.
        fds = s.settled_fd_snapshot()  # once the first client connection has closed
        for _ in range(20):
            assert get(s, "/hello.php").status == 200
        assert get(s, "/missing.php").status == 404
        time.sleep(0.2)
        assert s.fd_snapshot() == fds


def test_post_one_mib_streams_to_php(fpm):
    body = os.urandom(1 << 20)
    path = os.path.join(fpm.dir, "body.bin")
    with open(path, "wb") as f:
        f.write(body)
    with Scalwsd(site(fpm, pool_extra="max_conns = 4")) as s:
        for _ in range(2):  # the second on a kept connection
            r = get(s, "/post.php", "--data-binary", "@" + path,
                    "-H", "Content-Type: application/octet-stream")
            assert r.status == 200
            assert r.body.decode() == "%d %s %d application/octet-stream" % (
                len(body), hashlib.sha256(body).hexdigest(), len(body))
        r = get(s, "/form.php", "-d", "a=1&b=x+y")
        assert r.body == b"1/x y"


def test_status_and_location_from_php(fpm):
    with Scalwsd(site(fpm)) as s:
        r = get(s, "/notfound.php")
        assert r.status == 404
        assert r.body == b"php says no"
        r = get(s, "/redirect.php")
        assert r.status == 302
        assert r.header("location") == "/elsewhere"


def test_php_stderr_goes_to_our_log_with_the_request_id(fpm):
    with Scalwsd(site(fpm)) as s:
        r = get(s, "/stderr.php?m=abc123")
        assert r.body == b"logged"
        deadline = time.monotonic() + 3
        while "marker-abc123" not in s.read_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        line = [l for l in s.read_log().splitlines() if "marker-abc123" in l]
        assert line, s.read_log()
        assert re.search(r"php_pool\.main: request [0-9a-f]+: stderr: .*marker-abc123", line[0])


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_ten_mib_response_is_byte_exact_and_never_whole_in_memory(fpm):
    expected = hashlib.sha256(big_expected(10)).hexdigest()
    with Scalwsd(site(fpm, pool_extra="max_conns = 2")) as s:
        out = os.path.join(fpm.dir, "big.out")
        code, _, err = curl("-o", out, s.url("/big.php?mib=10"))
        assert code == 0, err
        with open(out, "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == expected
        # A slow client: PHP has long written everything, the worker must hold back.
        worker = s.workers()[0]
        before = rss_kib(worker)
        c = socket.create_connection(("127.0.0.1", s.port))
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        c.sendall(b"GET /big.php?mib=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        first = c.recv(65536)
        time.sleep(1.5)
        grown = rss_kib(worker) - before
        assert grown < 3 * 1024, "worker grew by %d KiB while the client did not read" % grown
        data = [first]
        while True:
            b = c.recv(1 << 20)
            if not b:
                break
            data.append(b)
        c.close()
        resp = parse_responses(b"".join(data))[0]
        assert hashlib.sha256(resp.body).hexdigest() == expected


def test_front_controller_gets_the_original_request_uri(fpm):
    with Scalwsd(site(fpm)) as s:
        r = get(s, "/fc/posts/42?x=1")
        assert r.status == 200
        assert r.body == b"front /fc/posts/42?x=1 /index.php -"
        r = get(s, "/fc/missing.php/x")
        assert r.body == b"front /fc/missing.php/x /index.php -"


def test_php_tricks_are_refused(fpm):
    with Scalwsd(site(fpm)) as s:
        for path in ["/uploads/evil.jpg/.php", "/uploads/evil.jpg/x.php", "/uploads/.php",
                     "/uploads/evil.jpg", "/escape.php", "/missing.php", "/%2e%2e/outside.php"]:
            data = raw_request(s.port, b"GET " + path.encode() +
                               b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            r = parse_responses(data)[0]
            assert r.status in (400, 404), (path, r)
            assert b"EXECUTED" not in r.body
        # The same tricks under a front controller run the front controller, never the file.
        r = get(s, "/fc/../uploads/evil.jpg/.php")
        assert b"EXECUTED" not in r.body


def test_pool_down_is_502(fpm):
    with Scalwsd(site(fpm, address="unix:" + fpm.dir + "/nothing.sock")) as s:
        r = get(s, "/hello.php")
        assert r.status == 502
    with Scalwsd(site(fpm, address="tcp:127.0.0.1:1", pool_extra="max_conns = 2")) as s:
        r = get(s, "/hello.php")
        assert r.status == 502


def test_malformed_records_are_502_and_the_worker_survives(fpm):
    pool = GarbagePool(b"\x02\x06\x00\x01\x00\x05\x00\x00hello" * 4)
    try:
        with Scalwsd(site(fpm, address="tcp:127.0.0.1:%d" % pool.port)) as s:
            for _ in range(3):
                assert get(s, "/hello.php").status == 502
            assert s.proc.poll() is None
            assert "malformed record" in s.read_log()
    finally:
        pool.stop()


def test_saturated_pool_queues_then_503_after_the_queue_timeout(fpm):
    extra = 'max_conns = 1\nqueue_timeout = "1s"'
    with Scalwsd(site(fpm, pool_extra=extra)) as s:
        results = {}

        def slow():
            results["slow"] = get(s, "/sleep.php?s=2.5")

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.3)
        start = time.monotonic()
        r = get(s, "/hello.php")
        waited = time.monotonic() - start
        t.join()
        assert r.status == 503
        assert r.header("retry-after") == "1"
        assert 0.8 < waited < 2.0, waited  # it waited in the queue, then gave up
        assert results["slow"].status == 200
        assert results["slow"].body == b"slept"


def test_queued_request_is_served_when_the_connection_frees(fpm):
    extra = 'max_conns = 1\nqueue_timeout = "5s"'
    with Scalwsd(site(fpm, pool_extra=extra)) as s:
        results = {}

        def slow():
            results["slow"] = get(s, "/sleep.php?s=1")

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.3)
        start = time.monotonic()
        r = get(s, "/hello.php")
        waited = time.monotonic() - start
        t.join()
        assert r.status == 200 and r.body == b"hello"
        assert waited > 0.5, waited
        assert results["slow"].status == 200


def test_no_answer_within_timeout_is_504(fpm):
    with Scalwsd(site(fpm, pool_extra='timeout = "1s"')) as s:
        start = time.monotonic()
        r = get(s, "/sleep.php?s=3")
        assert r.status == 504
        assert time.monotonic() - start < 2.5


def test_kept_connections_are_reused(fpm):
    relay = CountingRelay(fpm.socket_path)
    try:
        address = "tcp:127.0.0.1:%d" % relay.port
        with Scalwsd(site(fpm, address=address, pool_extra="max_conns = 2")) as s:
            for _ in range(20):
                assert get(s, "/hello.php").body == b"hello"
            assert relay.accepted == 1, relay.accepted
        before = relay.accepted
        with Scalwsd(site(fpm, address=address)) as s:  # no max_conns: one per request
            for _ in range(5):
                assert get(s, "/hello.php").body == b"hello"
        assert relay.accepted - before == 5
    finally:
        relay.stop()


def test_share_is_divided_across_workers(fpm):
    relay = CountingRelay(fpm.socket_path)
    try:
        address = "tcp:127.0.0.1:%d" % relay.port
        cfg = site(fpm, address=address, pool_extra="max_conns = 2",
                   server_extra='mode = "single"').replace("workers = 1", "workers = 2")
        with Scalwsd(cfg) as s:
            errors = []

            def burst():
                for _ in range(10):
                    r = get(s, "/sleep.php?s=0.05")
                    if r.status != 200:
                        errors.append(r.status)

            threads = [threading.Thread(target=burst) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors
            assert relay.accepted <= 2, relay.accepted  # 2 loops × share 1
    finally:
        relay.stop()


def test_head_pipelining_and_http10(fpm):
    with Scalwsd(site(fpm, pool_extra="max_conns = 2")) as s:
        data = raw_request(s.port, b"HEAD /hello.php HTTP/1.1\r\nHost: x\r\n\r\n"
                           b"GET /hello.php?a HTTP/1.1\r\nHost: x\r\n\r\n"
                           b"GET /notfound.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        rs = parse_responses(data, head_requests=(0,))
        assert [r.status for r in rs] == [200, 200, 404]
        assert rs[0].body == b"" and rs[1].body == b"hello" and rs[2].body == b"php says no"
        data = raw_request(s.port, b"GET /big.php?mib=1 HTTP/1.0\r\n\r\n")
        r = parse_responses(data)[0]
        assert r.body == big_expected(1)  # close-delimited, whole


def test_client_gone_mid_response_closes_the_pool_connection(fpm):
    with Scalwsd(site(fpm, pool_extra="max_conns = 1")) as s:
        for _ in range(3):
            c = socket.create_connection(("127.0.0.1", s.port))
            c.sendall(b"GET /big.php?mib=10 HTTP/1.1\r\nHost: x\r\n\r\n")
            c.recv(1000)
            c.close()  # mid-body: the worker must drop that pool connection, not reuse it
            time.sleep(0.2)
        # The one connection the share allows is free again: the next request is served.
        r = get(s, "/hello.php")
        assert r.status == 200 and r.body == b"hello"
        r = get(s, "/big.php?mib=2")
        assert r.body == big_expected(2)


def test_oversized_and_chunked_bodies(fpm):
    cfg = site(fpm).replace('php = { pool = "main", root = "%s" }' % fpm.www,
                            'php = { pool = "main", root = "%s" }\npolicy = { max_body = "100k" }'
                            % fpm.www)
    with Scalwsd(cfg) as s:
        data = raw_request(s.port, b"POST /post.php HTTP/1.1\r\nHost: x\r\nContent-Length: 200000"
                           b"\r\n\r\n" + b"x" * 1000)
        assert parse_responses(data)[0].status == 413
        data = raw_request(s.port, b"POST /post.php HTTP/1.1\r\nHost: x\r\n"
                           b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        # Collected first, so PHP gets CONTENT_LENGTH (no longer a 411).
        r = parse_responses(data)[0]
        assert r.status == 200 and r.body.startswith(b"3 ") and r.body.split(b" ")[2] == b"3"
        chunk = b"x" * 60000
        data = raw_request(s.port, b"POST /post.php HTTP/1.1\r\nHost: x\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n" +
                           (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 2 + b"0\r\n\r\n")
        assert parse_responses(data)[0].status == 413
        r = get(s, "/post.php", "--data-binary", "x" * 50000)
        assert r.body.startswith(b"50000 ")


def fcgi_record(rtype, content):
    return bytes([1, rtype, 0, 1, len(content) >> 8, len(content) & 0xff, 0, 0]) + content


def test_pool_breaking_mid_body_cuts_the_response(fpm):
    # A head and part of a body, then the pool closes without END_REQUEST.
    pool = GarbagePool(fcgi_record(6, b"Content-Type: text/plain\r\n\r\npartial") +
                       fcgi_record(6, b" more"))
    try:
        with Scalwsd(site(fpm, address="tcp:127.0.0.1:%d" % pool.port)) as s:
            code, out, err = curl("-sS", s.url("/hello.php"))
            assert code == 18, (code, out, err)  # curl: transfer closed with data outstanding
            assert out == b"partial more"
            assert s.proc.poll() is None
    finally:
        pool.stop()


def test_body_waits_paused_while_queued(fpm):
    extra = 'max_conns = 1\nqueue_timeout = "10s"'
    # Larger than what loopback socket buffers absorb (tcp_rmem's autotuning maximum).
    body = os.urandom(16 << 20)
    cfg = site(fpm, pool_extra=extra).replace(
        'php = { pool = "main", root = "%s" }' % fpm.www,
        'php = { pool = "main", root = "%s" }\npolicy = { max_body = "20m" }' % fpm.www)
    with Scalwsd(cfg) as s:
        worker = s.workers()[0]
        results = {}

        def slow():
            results["slow"] = get(s, "/sleep.php?s=2")

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.3)
        before = rss_kib(worker)
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        c.connect(("127.0.0.1", s.port))
        c.sendall(b"POST /post.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        c.settimeout(5)
        sent = 0
        c.setblocking(False)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and sent < len(body):
            try:
                sent += c.send(body[sent:sent + 65536])
            except BlockingIOError:
                time.sleep(0.01)
        # Queued: the worker stopped reading the body; the kernel buffers hold what was sent.
        assert sent < 8 << 20, "%d bytes of the body were taken while queued" % sent
        assert rss_kib(worker) - before < 2 * 1024
        c.setblocking(True)
        c.sendall(body[sent:])
        data = b""
        while True:
            b = c.recv(65536)
            if not b:
                break
            data += b
        c.close()
        t.join()
        r = parse_responses(data)[0]
        assert r.status == 200
        assert r.body.split()[:2] == [str(len(body)).encode(),
                                      hashlib.sha256(body).hexdigest().encode()]
        assert results["slow"].status == 200


def test_reload_moves_the_pool(fpm):
    import signal as sig
    for mode in ("multi", "single"):
        good = site(fpm, pool_extra="max_conns = 2", server_extra='mode = "%s"' % mode)
        bad = site(fpm, address="unix:" + fpm.dir + "/gone.sock", pool_extra="max_conns = 2",
                   server_extra='mode = "%s"' % mode)
        with Scalwsd(good) as s:
            # "single" re-reads the config inside the sandbox, as nobody.
            os.chmod(s.dir, 0o755)
            assert get(s, "/hello.php").status == 200  # leaves a kept connection behind
            for config, status in ((bad, 502), (good, 200)):
                s.write_config(config)
                s.signal(sig.SIGHUP)
                deadline = time.monotonic() + 5
                while True:
                    r = get(s, "/hello.php")
                    if r.status == status or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                assert r.status == status, (mode, config)
