"""The reverse proxy in front of a real nginx, over every protocol a client may speak
(HTTP/1.1, h2c, HTTP/1.1 over TLS, HTTP/2 over TLS): what the upstream sees (forwarding
fields, Host, the path), what the client gets back (headers rewritten, bodies whole),
kept upstream connections counted at nginx, uploads both framings, and the sandboxed
worker connecting only where its config says."""
import hashlib
import json
import os
import tempfile

import pytest

from harness import Client, Scalwsd, curl, wait_until
from tls_support import make_cert
from upstreams import NginxUpstream, RawUpstream, answer, echo_script

LOCATIONS = r"""
location /echo {
    return 200 "uri=$request_uri host=$host xff=$http_x_forwarded_for proto=$http_x_forwarded_proto xhost=$http_x_forwarded_host fwd=$http_forwarded conn=$http_connection te=$http_te site=$http_x_site via=$http_via\n";
}
location /headers {
    add_header X-Powered-By "nginx-test";
    add_header X-Upstream "yes";
    add_header Cache-Control "max-age=60";
    return 200 "headers\n";
}
location /big {
    alias %(www)s/big.bin;
}
location = /status404 {
    return 404 "missing\n";
}
location / {
    return 200 "root $request_uri\n";
}
"""

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[route]]
match = { prefix = "/api/" }
proxy = { upstream = "web", strip_prefix = "/api", host = "upstream", via = true, set_request_headers = { "x-site" = "shop" }, set_response_headers = { "cache-control" = "no-store" }, remove_response_headers = ["x-powered-by"] }
[[route]]
match = { exact = "/upload" }
proxy = { upstream = "echo" }
policy = { max_body = "64m" }
[[route]]
match = { prefix = "/" }
proxy = { upstream = "web" }
[upstream.web]
servers = ["127.0.0.1:@NGINX@"]
keepalive = 8
[upstream.echo]
servers = ["127.0.0.1:@ECHO@"]
"""

PROTOCOLS = {
    "http1": ((), "plain"),
    "h2c": (("--http2-prior-knowledge",), "plain"),
    "http1-tls": (("-k", "--http1.1"), "tls"),
    "h2-tls": (("-k", "--http2"), "tls"),
}
BIG = os.urandom(3 * 1024 * 1024 + 5)


@pytest.fixture(scope="module")
def echo():
    with RawUpstream(echo_script) as e:
        yield e


@pytest.fixture(scope="module")
def nginx(echo):
    www = tempfile.mkdtemp(prefix="scalws-nginx-www-")
    os.chmod(www, 0o755)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        f.write(BIG)
    os.chmod(os.path.join(www, "big.bin"), 0o644)
    n = NginxUpstream(LOCATIONS % {"www": www})
    yield n
    n.stop()
    os.remove(os.path.join(www, "big.bin"))
    os.rmdir(www)


@pytest.fixture(scope="module")
def server(nginx, echo):
    s = Scalwsd(SITE.replace("@NGINX@", str(nginx.port)).replace("@ECHO@", str(echo.port)),
                start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    for f in os.listdir(s.dir):
        os.chmod(os.path.join(s.dir, f), 0o644 if f.endswith(".crt") else 0o600)
    os.chmod(s.dir, 0o755)
    s.start()
    yield s
    s.__exit__(None, None, None)


def fetch(server, protocol, path, *args):
    opts, base = PROTOCOLS[protocol]
    url = ("http://127.0.0.1:%d" % server.port if base == "plain"
           else "https://127.0.0.1:%d" % server.port2) + path
    code, out, err = curl("-i", "--raw", *opts, *args, url)
    assert code == 0, err
    while out.startswith(b"HTTP/1.1 1"):  # interim 100 Continue
        out = out.partition(b"\r\n\r\n")[2]
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return status, headers, body


def dechunk(body, headers):
    if headers.get("transfer-encoding") != ["chunked"]:
        return body
    out = b""
    while True:
        line, _, rest = body.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return out
        out += rest[:size]
        body = rest[size + 2:]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_forwarding_fields(server, protocol):
    status, headers, body = fetch(server, protocol, "/echo?a=1", "-H", "TE: trailers",
                                  "-H", "X-Forwarded-For: 203.0.113.5")
    assert status == 200
    text = body.decode()
    tls = PROTOCOLS[protocol][1] == "tls"
    port = server.port2 if tls else server.port
    assert "uri=/echo?a=1 " in text
    assert "host=127.0.0.1 " in text
    assert "xff=203.0.113.5, 127.0.0.1 " in text
    assert "proto=%s " % ("https" if tls else "http") in text
    assert "xhost=127.0.0.1:%d " % port in text
    assert 'fwd=for=127.0.0.1;host="127.0.0.1:%d";proto=%s ' % (port, "https" if tls else "http") in text
    assert "conn= " in text  # hop-by-hop: nothing of the client's Connection
    assert "te= " in text
    assert headers["server"] == ["scalws"]
    assert len(headers["date"]) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_route_rewrites(server, nginx, protocol):
    status, headers, body = fetch(server, protocol, "/api/echo/x", "-H", "X-Site: forged")
    assert status == 200
    text = body.decode()
    assert "uri=/echo/x " in text
    assert "host=127.0.0.1 " in text and "site=shop " in text
    assert "via=1.1 scalws" in text or "via=2 scalws" in text
    status, headers, body = fetch(server, protocol, "/api/headers")
    assert status == 200
    assert "x-powered-by" not in headers
    assert headers["x-upstream"] == ["yes"]
    assert headers["cache-control"] == ["no-store"]
    assert headers["via"][-1].endswith("scalws")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_large_body_and_status(server, protocol):
    status, headers, body = fetch(server, protocol, "/big")
    assert status == 200
    assert hashlib.sha256(dechunk(body, headers)).digest() == hashlib.sha256(BIG).digest()
    assert headers["content-length"] == [str(len(BIG))]
    status, _, body = fetch(server, protocol, "/status404")
    assert status == 404 and b"missing" in body


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_uploads_stream_upstream(server, echo, protocol, tmp_path):
    data = os.urandom(5 * 1024 * 1024 + 3)
    path = tmp_path / "upload.bin"
    path.write_bytes(data)
    expect = ("POST /upload %d %s" % (len(data), hashlib.sha256(data).hexdigest())).encode()
    status, _, body = fetch(server, protocol, "/upload", "--data-binary", "@%s" % path)
    assert status == 200 and body.strip() == expect
    # Without a length (chunked over HTTP/1.1, no content-length over HTTP/2).
    status, _, body = fetch(server, protocol, "/upload", "--data-binary", "@%s" % path,
                            "-H", "Transfer-Encoding: chunked")
    assert status == 200 and body.strip() == expect


def test_kept_connections_counted_at_nginx(server, nginx):
    before_requests = nginx.requests()
    before_connections = {line[0] for line in nginx.log_lines()}
    with Client(server.port) as c:
        for i in range(50):
            c.send(b"GET /count/%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
            assert c.read_response().status == 200
    wait_until(lambda: nginx.requests() >= before_requests + 50, what="nginx's log")
    new = [line for line in nginx.log_lines()[before_requests:] if line[2].startswith('"GET /count/')]
    assert len(new) == 50
    # One worker loop, requests one at a time: one upstream connection for all of them.
    used = {line[0] for line in new}
    assert len(used) == 1, used
    assert int(new[-1][1]) >= 50  # nginx's request count on that connection


def test_every_client_connection_shares_the_kept_ones(server, nginx):
    before = len(nginx.log_lines())
    for i in range(20):
        code, out, err = curl("-s", "http://127.0.0.1:%d/churn/%d" % (server.port, i))
        assert code == 0 and out.startswith(b"root /churn/")
    wait_until(lambda: len(nginx.log_lines()) >= before + 20, what="nginx's log")
    used = {line[0] for line in nginx.log_lines()[before:]}
    assert len(used) <= 2, used  # a new client connection each time, not a new upstream one


def test_sandboxed_worker_connects_only_to_its_upstreams(server, nginx, echo):
    # The server runs sandboxed (Landlock TCP rules where the kernel has them): the proxy
    # works, and the report lists exactly the upstream's port as connectable.
    from harness import SCALWSD
    import subprocess
    p = subprocess.run([SCALWSD, "--sandbox-report", "--json", "--config", server.config_path],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    landlock = report["landlock"]
    if landlock.get("abi", 0) >= 4:
        assert landlock["tcp_connect_ports"] == sorted([nginx.port, echo.port])
    status, _, _ = fetch(server, "http1", "/echo")
    assert status == 200


@pytest.mark.parametrize("fmt", ["json", "combined"])
def test_access_log_names_the_upstream_and_its_time(echo, fmt):
    site = """
[server]
workers = 1
access_log = "$dir/access.log"
access_log_format = "%s"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
proxy = { upstream = "echo" }
[upstream.echo]
servers = ["127.0.0.1:%d"]
""" % (fmt, echo.port)
    with Scalwsd(site) as s:
        code, out, err = curl("http://127.0.0.1:%d/logged" % s.port)
        assert code == 0 and out.startswith(b"GET /logged")
        s.stop()
        with open(os.path.join(s.dir, "access.log")) as f:
            line = f.read().strip().splitlines()[-1]
    if fmt == "json":
        entry = json.loads(line)
        assert entry["upstream"] == "127.0.0.1:%d" % echo.port
        assert isinstance(entry["upstream_time_us"], int) and entry["upstream_time_us"] >= 0
        assert entry["action"] == "proxy"
    else:
        assert line.endswith('"') is False
        assert " upstream=127.0.0.1:%d upstream_time=" % echo.port in line
        assert line.split("upstream_time=")[1].count(".") == 1
