"""The same requests over every protocol a listener speaks: HTTP/1.1, h2c (prior knowledge
on a plain listener with http2 = true), HTTP/1.1 over TLS and HTTP/2 over TLS. Every action
(respond, static, PHP) and the router, policies and errors sit behind the protocol-neutral
Request/ResponseWriter, so each case must answer the same whichever protocol carried it;
only what a protocol itself changes (SERVER_PROTOCOL, HTTPS) may differ."""
import hashlib
import json
import os

import pytest

from harness import Scalwsd
from php_fpm import PhpFpm
from protocol_clients import PROTOCOLS, ProtocolClient
from static_site import write_tree
from tls_support import make_cert

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
match = { exact = "/hello" }
respond = { status = 200, body = "hello\\n", headers = { "x-test" = "yes" } }
[[route]]
match = { exact = "/post-only", method = "POST" }
respond = { status = 201, body = "created\\n" }
[[route]]
match = { exact = "/small-body", method = "POST" }
respond = { status = 200, body = "fits\\n" }
policy = { max_body = "1k" }
[[route]]
match = { exact = "/local-only" }
respond = { status = 200, body = "local\\n" }
policy = { allow = ["10.0.0.0/8"] }
[[route]]
match = { prefix = "/static/" }
static = { root = "$dir/www", max_age = "1h" }
[[route]]
match = { prefix = "/" }             # PATH_INFO needs more than a suffix match
php = { pool = "main", root = "@WWW@" }
[php_pool.main]
address = "@ADDRESS@"
max_conns = 2
"""

FILE = b"0123456789abcdef" * 256  # 4 KiB
BODY = os.urandom(1000 * 1000 + 17)  # under the default max_body (1m)

# name -> what SERVER_PROTOCOL and HTTPS PHP sees over it
PHP_SEES = {
    "http1": ("HTTP/1.1", None),
    "h2c": ("HTTP/2.0", None),
    "http1-tls": ("HTTP/1.1", "on"),
    "h2-tls": ("HTTP/2.0", "on"),
}


@pytest.fixture(scope="module")
def server():
    fpm = PhpFpm(children=4)
    s = Scalwsd(SITE.replace("@WWW@", fpm.www).replace("@ADDRESS@", fpm.address), start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    write_tree(os.path.join(s.dir, "www"), {"static/a.txt": FILE, "static/.env": b"secret"})
    # The sandboxed worker (nobody when run as root) reads the docroot.
    for root, dirs, files in os.walk(s.dir):
        os.chmod(root, 0o755)
        for f in files:
            if f.endswith(".key"):
                continue
            os.chmod(os.path.join(root, f), 0o644)
    s.start()
    yield s
    s.__exit__(None, None, None)
    fpm.stop()


class Client(ProtocolClient):
    def __init__(self, server, protocol):
        super().__init__(server, protocol)
        self.server_protocol, self.https = PHP_SEES[protocol]


@pytest.fixture(params=list(PROTOCOLS))
def client(request, server):
    return Client(server, request.param)


def test_respond_router_and_policies(client):
    status, headers, body = client.request("/hello")
    assert (status, body, headers.get("x-test")) == (200, b"hello\n", "yes")
    assert client.request("/post-only", "-X", "POST", "-d", "x")[0] == 201
    assert client.request("/post-only")[0] == 404  # the method does not match: no route
    assert client.request("/nowhere")[0] == 404
    assert client.request("/small-body", "-X", "POST", "-d", "x" * 100)[0] == 200
    assert client.request("/small-body", "-X", "POST", "-d", "x" * 5000)[0] == 413
    assert client.request("/local-only")[0] == 403
    status, headers, body = client.request("/hello", "-I")
    assert status == 200 and body == b"" and headers["content-length"] == "6"


def test_static_validators_ranges_and_containment(client):
    status, headers, body = client.request("/static/a.txt")
    assert status == 200 and body == FILE
    assert headers["cache-control"] == "max-age=3600"
    assert headers["accept-ranges"] == "bytes"
    etag = headers["etag"]
    assert client.request("/static/a.txt", "-H", "If-None-Match: " + etag)[0] == 304
    assert client.request("/static/a.txt", "-H", "If-Match: \"other\"")[0] == 412
    status, headers, body = client.request("/static/a.txt", "-r", "16-31")
    assert status == 206 and body == FILE[16:32]
    assert headers["content-range"] == "bytes 16-31/%d" % len(FILE)
    status, headers, _ = client.request("/static/a.txt", "-r", "99999-")
    assert status == 416 and headers["content-range"] == "bytes */%d" % len(FILE)
    assert client.request("/static/missing.txt")[0] == 404
    assert client.request("/static/.env")[0] == 404
    assert client.request("/static/../site.key", "--path-as-is")[0] in (400, 404)
    assert client.request("/static/%2e%2e/site.key", "--path-as-is")[0] in (400, 404)


def test_php_get_post_and_status(client):
    status, headers, body = client.request("/info.php/extra?x=1&y=%20")
    assert status == 200 and headers["x-from-php"] == "yes"
    info = json.loads(body)
    assert info["SCRIPT_NAME"] == "/info.php" and info["PATH_INFO"] == "/extra"
    assert info["QUERY_STRING"] == "x=1&y=%20" and info["GET"] == {"x": "1", "y": " "}
    assert info["REQUEST_URI"] == "/info.php/extra?x=1&y=%20"
    assert info["SERVER_PROTOCOL"] == client.server_protocol
    assert info["HTTPS"] == client.https
    assert info["HTTP_HOST"].startswith("127.0.0.1:")
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "scalws-protocols-body-%d" % os.getpid())
    with open(path, "wb") as f:
        f.write(BODY)
    try:
        status, _, body = client.request("/post.php", "--data-binary", "@" + path,
                                         "-H", "Content-Type: application/octet-stream")
    finally:
        os.unlink(path)
    assert status == 200 and body.count(b" ") == 3, body[:300]
    length, digest, content_length, content_type = body.decode().split(" ")
    assert status == 200 and int(length) == len(BODY) == int(content_length)
    assert digest == hashlib.sha256(BODY).hexdigest()
    assert content_type == "application/octet-stream"
    status, _, body = client.request("/notfound.php")
    assert (status, body) == (404, b"php says no")
    assert client.request("/missing.php")[0] == 404
