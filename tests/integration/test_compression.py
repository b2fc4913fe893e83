"""Compression on the fly (`compress` on a route): gzip, brotli and zstd chosen by
Accept-Encoding with q-values, for static files without a precompressed sibling, fixed
responses, PHP (real php-fpm, large streamed answers) and the proxy (real nginx
upstream) and its cache hits; never for ranges, already-encoded answers, no-transform,
small bodies or other types; Vary, a weak ETag, no Content-Length. Decoded by curl
--compressed and by Python's gzip, brotli and zstandard, over HTTP/1.1, h2c, and HTTP/1.1
and HTTP/2 over TLS; back-pressure holds through the compressor (a client that does not
read costs the worker no more memory than when nothing is compressed)."""
import gzip
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
import zlib

import pytest

from harness import Client
from php_fpm import PhpFpm
from response_support import LISTENERS, PROTOCOLS, decode, fetch, server
from tls_support import H2Client
from upstreams import NginxUpstream

SITE = """
[server]
workers = 1
""" + LISTENERS + """
[[route]]
match = { prefix = "/static/" }
static = { root = "$dir/www" }
compress = true

[[route]]
match = { prefix = "/pre/" }
static = { root = "$dir/www", precompressed = ["gzip"] }
compress = true

[[route]]
match = { exact = "/respond" }
respond = { body = @RESPOND@, headers = { content-type = "text/plain" } }
compress = { encodings = ["gzip"] }

[[route]]
match = { prefix = "/plain/" }
static = { root = "$dir/www" }

[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }
compress = { level = { gzip = 1, br = 1, zstd = 1 } }

[[route]]
match = { prefix = "/proxy/" }
proxy = { upstream = "up" }
compress = true

[[route]]
match = { prefix = "/cached/" }
proxy = { upstream = "up", cache = "pages" }
compress = true

[upstream.up]
servers = ["@UPSTREAM@"]

[cache.pages]
memory = "16m"
max_entry = "2m"

[php_pool.main]
address = "@FPM@"
max_conns = 2
"""

ENCODINGS = ("gzip", "br", "zstd")


def text(n):
    """`n` bytes of HTML that compresses well but not to nothing."""
    out = []
    size = 0
    i = 0
    while size < n:
        line = "<p>line %d of a page %s</p>\n" % (i, hashlib.md5(str(i % 97).encode()).hexdigest())
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)[:n].encode()


def hex_lines(count):
    """What hex.php prints: md5 of 0..count-1, one a line (compresses about 2:1)."""
    return b"".join(hashlib.md5(str(i).encode()).hexdigest().encode() + b"\n"
                    for i in range(count))


BIG = text(200_000)
RESPOND = text(5_000).decode()
FILES = {
    "www/static/page.html": BIG,
    "www/static/small.html": b"<p>tiny</p>\n",
    "www/static/image.png": BIG,
    "www/pre/app.js": BIG,
    "www/pre/app.js.gz": gzip.compress(BIG, 9),
    "www/plain/page.html": BIG,
}


@pytest.fixture(scope="module")
def fpm():
    f = PhpFpm(children=2)
    f.write("hex.php", "<?php $n = intval($_GET['n'] ?? '1000');\n"
                       "for ($i = 0; $i < $n; $i++) { echo md5((string)$i), \"\\n\"; }\n")
    f.write("json.php", "<?php header('Content-Type: application/json');\n"
                        "echo json_encode(array_fill(0, 2000, 'value'));\n")
    yield f
    f.stop()


@pytest.fixture(scope="module")
def upstream():
    root = tempfile.mkdtemp(prefix="scalws-up-")
    os.chmod(root, 0o755)
    for name in ("page.html", "encoded.html", "raw.html", "cache.html", "small-cache.html"):
        with open(os.path.join(root, name), "wb") as f:
            f.write(BIG if name != "small-cache.html" else text(30_000))
        os.chmod(os.path.join(root, name), 0o644)
    u = NginxUpstream("""
        root %s;
        location = /proxy/page.html { try_files /page.html =404; }
        location = /proxy/encoded.html {
            gzip on; gzip_min_length 1; gzip_types text/html;
            try_files /encoded.html =404;
        }
        location = /proxy/raw.html {
            add_header Cache-Control "no-transform";
            try_files /raw.html =404;
        }
        location ~ ^/cached/(.*)$ {
            add_header Cache-Control "max-age=60";
            try_files /$1 =404;
        }""" % root)
    yield u
    u.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def site(fpm, upstream):
    template = (SITE.replace("@WWW@", fpm.www).replace("@FPM@", fpm.address)
                .replace("@UPSTREAM@", upstream.address).replace("@RESPOND@", json.dumps(RESPOND)))
    with server(template, FILES) as s:
        yield s


def compressed_with(r, encoding, original):
    assert r.status == 200, r
    assert r.header("content-encoding") == encoding
    assert r.header("content-length") is None
    assert "accept-encoding" in r.header("vary").lower()
    assert decode(encoding, r.body) == original
    assert len(r.body) < len(original)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_static_file_in_each_encoding(site, protocol, encoding):
    r = fetch(site, protocol, "/static/page.html", ["Accept-Encoding: " + encoding])
    compressed_with(r, encoding, BIG)
    assert r.header("etag").startswith('W/"')
    assert r.header("accept-ranges") is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_curl_compressed_decodes_every_action(site, protocol, fpm):
    for path, expected in (("/static/page.html", BIG), ("/respond", RESPOND.encode()),
                           ("/hex.php?n=20000", hex_lines(20_000)),
                           ("/proxy/page.html", BIG)):
        r = fetch(site, protocol, path, compressed=True)
        assert r.status == 200, path
        assert r.header("content-encoding") in ENCODINGS, path
        assert r.body == expected, path


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_q_values_choose(site, protocol):
    for accept, chosen in (("gzip, deflate, br, zstd", "br"), ("br;q=0.5, gzip", "gzip"),
                           ("gzip;q=0.2, zstd;q=0.9", "zstd"), ("*", "br"),
                           ("*;q=0.1, gzip;q=0.5", "gzip"), ("br;q=0, *", "zstd")):
        r = fetch(site, protocol, "/static/page.html", ["Accept-Encoding: " + accept])
        assert r.header("content-encoding") == chosen, accept
    for accept in ("identity", "gzip;q=0, br;q=0, zstd;q=0", "deflate", "identity, gzip;q=0.5"):
        r = fetch(site, protocol, "/static/page.html", ["Accept-Encoding: " + accept])
        assert r.header("content-encoding") is None, accept
        assert r.body == BIG
        assert r.header("vary") == "Accept-Encoding"  # it could have been compressed
        assert r.header("etag").startswith('"')  # strong: the bytes are the file's


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_never_compressed(site, protocol):
    gz = ["Accept-Encoding: gzip"]
    r = fetch(site, protocol, "/static/page.html", gz + ["Range: bytes=0-99"])
    assert r.status == 206
    assert r.header("content-encoding") is None
    assert r.body == BIG[:100]
    r = fetch(site, protocol, "/static/small.html", gz)  # under min_size
    assert r.header("content-encoding") is None
    assert r.header("vary") is None
    r = fetch(site, protocol, "/static/image.png", gz)  # not a listed type
    assert r.header("content-encoding") is None
    assert r.body == BIG
    r = fetch(site, protocol, "/plain/page.html", gz)  # a route without compress
    assert r.header("content-encoding") is None
    assert r.header("vary") is None
    assert r.header("content-length") == str(len(BIG))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_precompressed_sibling_is_served_not_recompressed(site, protocol):
    r = fetch(site, protocol, "/pre/app.js", ["Accept-Encoding: gzip, br"])
    assert r.header("content-encoding") == "gzip"
    assert r.body == FILES["www/pre/app.js.gz"]  # the file itself, byte for byte
    assert r.header("content-length") == str(len(r.body))
    assert r.header("vary") == "Accept-Encoding"  # once
    r = fetch(site, protocol, "/pre/app.js", ["Accept-Encoding: zstd"])  # no .zst sibling
    compressed_with(r, "zstd", BIG)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_head_and_not_modified(site, protocol):
    r = fetch(site, protocol, "/static/page.html", ["Accept-Encoding: gzip"], method="HEAD")
    assert r.status == 200
    assert r.header("content-encoding") == "gzip"
    assert r.header("content-length") is None
    assert r.body == b""
    etag = r.header("etag")
    assert etag.startswith('W/"')
    r = fetch(site, protocol, "/static/page.html",
              ["Accept-Encoding: gzip", "If-None-Match: " + etag])
    assert r.status == 304
    assert r.header("etag") == etag
    assert r.header("vary") == "Accept-Encoding"
    assert r.body == b""


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_proxy(site, protocol):
    r = fetch(site, protocol, "/proxy/page.html", ["Accept-Encoding: br"])
    compressed_with(r, "br", BIG)
    # Already encoded by the upstream: passed as it is.
    r = fetch(site, protocol, "/proxy/encoded.html", ["Accept-Encoding: gzip, br"])
    assert r.header("content-encoding") == "gzip"
    assert gzip.decompress(r.body) == BIG
    # The application said no-transform.
    r = fetch(site, protocol, "/proxy/raw.html", ["Accept-Encoding: gzip"])
    assert r.header("content-encoding") is None
    assert r.body == BIG


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cache_hits_are_compressed_per_client(site, protocol):
    for name, original in (("cache.html", BIG), ("small-cache.html", text(30_000))):
        path = "/cached/%s?%s" % (name, protocol)
        first = fetch(site, protocol, path, ["Accept-Encoding: gzip"])
        compressed_with(first, "gzip", original)
        hit = fetch(site, protocol, path, ["Accept-Encoding: zstd"])
        assert "hit" in hit.header("cache-status")
        compressed_with(hit, "zstd", original)
        plain = fetch(site, protocol, path)
        assert "hit" in plain.header("cache-status")
        assert plain.header("content-encoding") is None
        assert plain.body == original


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_php_large_streamed_answer(site, protocol):
    expected = hex_lines(250_000)  # 8 MiB
    for encoding in ENCODINGS:
        r = fetch(site, protocol, "/hex.php?n=250000", ["Accept-Encoding: " + encoding])
        compressed_with(r, encoding, expected)
    r = fetch(site, protocol, "/json.php", ["Accept-Encoding: gzip"])
    compressed_with(r, "gzip", r.decoded())
    assert r.decoded().startswith(b'["value"')


def rss_kib(pids):
    total = 0
    for pid in pids:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


N_HEX = 1_000_000  # 32 MiB of text, about 16 MiB compressed


def test_back_pressure_over_http1(site):
    """A client that stops reading: php-fpm is held back through the compressor, so the
    worker's memory stays flat while 32 MiB wait to be made."""
    before = rss_kib(site.workers())
    c = Client(site.port, timeout=30, rcvbuf=64 * 1024)
    c.sock.sendall(b"GET /hex.php?n=%d HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"
                   % N_HEX)
    time.sleep(2.0)  # nothing read: the socket, then the stream, then the exchange fill
    stalled = rss_kib(site.workers())
    assert stalled - before < 8 * 1024, (before, stalled)
    data = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not data.endswith(b"\r\n0\r\n\r\n"):
        chunk = c.sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    c.sock.close()
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    assert b"content-encoding: gzip" in head.lower()
    assert b"transfer-encoding: chunked" in head.lower()
    out = bytearray()
    pos = 0
    while True:
        eol = body.index(b"\r\n", pos)
        size = int(body[pos:eol], 16)
        if size == 0:
            break
        out += body[eol + 2:eol + 2 + size]
        pos = eol + 2 + size + 2
    assert zlib.decompress(bytes(out), 16 + zlib.MAX_WBITS) == hex_lines(N_HEX)


def test_back_pressure_over_http2(site):
    before = rss_kib(site.workers())
    c = H2Client(site.port, timeout=60)
    sid = c.request("/hex.php?n=%d" % N_HEX, headers=[("accept-encoding", "zstd")])
    time.sleep(2.0)  # no WINDOW_UPDATE: the stream window closes after 64 KiB
    stalled = rss_kib(site.workers())
    assert stalled - before < 8 * 1024, (before, stalled)
    status, headers, body = c.response(sid, timeout=120)
    c.close()
    assert status == 200
    assert headers["content-encoding"] == "zstd"
    assert decode("zstd", body) == hex_lines(N_HEX)


def test_a_client_that_goes_away_mid_body(site):
    """The compressor is dropped with the response; the server goes on serving, and
    holds no more descriptors than before (kept PHP and upstream connections, cached
    files: counted once warm)."""
    fetch(site, "h1", "/hex.php?n=10", ["Accept-Encoding: br"])
    fetch(site, "h1", "/static/page.html", ["Accept-Encoding: br"])
    warm = site.settled_fd_snapshot()
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", site.port))
        s.sendall(b"GET /hex.php?n=%d HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n" % N_HEX)
        s.recv(4096)
        s.close()
    r = fetch(site, "h1", "/static/page.html", ["Accept-Encoding: br"])
    compressed_with(r, "br", BIG)
    deadline = time.monotonic() + 10
    while any(n > warm.get(pid, n) for pid, n in site.fd_snapshot().items()):
        assert time.monotonic() < deadline, (warm, site.fd_snapshot())
        time.sleep(0.05)
