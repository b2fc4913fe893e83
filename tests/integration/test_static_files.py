"""The static action over real sockets: every status it answers, with curl and raw
HTTP/1.1."""
import gzip
import re

from harness import curl, parse_responses, raw_request
from static_site import Client, one_response, request_bytes, static_server, worker_fds

FILES = {
    "index.html": "<h1>home</h1>\n",
    "style.css": "body { color: red }\n",
    "app.js": "console.log('plain');\n",
    "app.js.br": b"BROTLI-BYTES",
    "app.js.gz": gzip.compress(b"console.log('plain');\n"),
    "logo.svg": "<svg/>",
    "pic.PNG": b"\x89PNG\r\n\x1a\n",
    "data.xyz": b"\x00\x01",
    "custom.foo": "foo",
    "digits.txt": "0123456789",
    "docs/readme.txt": "read me\n",
    "noindex/file.txt": "x",
    ".env": "SECRET=1",
    ".git/config": "[core]",
    ".well-known/acme-challenge/token": "acme",
    "empty.txt": "",
}
OPTIONS = ('precompressed = ["br", "gzip"], max_age = "1h", '
           'types = { foo = "application/x-foo" }')


def server():
    return static_server(FILES, OPTIONS)


def head_of(resp_bytes):
    return parse_responses(resp_bytes)[0]


def test_get_file_headers_and_body_with_curl():
    with server() as s:
        code, out, err = curl("-i", s.url("/style.css"))
        assert code == 0, err
        r = head_of(out)
        assert r.status == 200
        assert r.body == b"body { color: red }\n"
        assert r.header("content-type") == "text/css; charset=utf-8"
        assert r.header("content-length") == "20"
        assert r.header("accept-ranges") == "bytes"
        assert r.header("cache-control") == "max-age=3600"
        assert r.header("vary") == "Accept-Encoding"
        assert re.fullmatch(r'"[0-9a-f]+-14-[0-9a-f]+"', r.header("etag"))
        assert r.header("last-modified").endswith(" GMT")


def test_mime_types_and_overrides():
    with server() as s, Client(s.port) as c:
        expect = {
            "/app.js": "text/javascript; charset=utf-8",
            "/logo.svg": "image/svg+xml; charset=utf-8",
            "/pic.PNG": "image/png",
            "/data.xyz": "application/octet-stream",
            "/custom.foo": "application/x-foo",
            "/index.html": "text/html; charset=utf-8",
        }
        for path, ctype in expect.items():
            r = c.get(path)
            assert r.status == 200, path
            assert r.header("content-type") == ctype, path


def test_directories_index_redirect_forbidden():
    with server() as s, Client(s.port) as c:
        r = c.get("/")
        assert r.status == 200 and r.body == b"<h1>home</h1>\n"
        r = c.get("/docs?x=1&y=%20")
        assert r.status == 301
        assert r.header("location") == "/docs/?x=1&y=%20"
        assert c.get("/docs/").status == 403  # no index.html: no listing either
        assert c.get("/noindex/").status == 403
        assert c.get("/missing/").status == 404
        assert c.get("/missing").status == 404
        assert c.get("/digits.txt/").status == 404
        assert c.get("/docs/readme.txt").body == b"read me\n"
        # curl follows the redirect to the index-less directory.
        code, out, _ = curl("-sL", "-o", "/dev/null", "-w", "%{http_code} %{url_effective}",
                            s.url("/docs"))
        assert out.decode().startswith("403 ") and out.decode().endswith("/docs/")


def test_redirect_location_is_reencoded():
    files = {"a b/x": "x", "caf\u00e9/x": "x"}
    with static_server(files) as s, Client(s.port) as c:
        r = c.get("/a%20b")
        assert r.status == 301 and r.header("location") == "/a%20b/"
        r = c.get("/caf%C3%A9")
        assert r.header("location") == "/caf%C3%A9/"


def test_dotfiles_are_404_unless_allowed():
    with server() as s, Client(s.port) as c:
        assert c.get("/.env").status == 404
        assert c.get("/.git/config").status == 404
        assert c.get("/%2egit/config").status == 404
        assert c.get("/.well-known/acme-challenge/token").body == b"acme"
    with static_server(FILES, "allow_dotfiles = true") as s, Client(s.port) as c:
        assert c.get("/.env").body == b"SECRET=1"


def test_other_methods_are_405():
    with server() as s:
        for method in ("POST", "PUT", "DELETE", "OPTIONS"):
            data = raw_request(s.port, request_bytes(method, "/digits.txt", close=True)
                               if method != "POST" else
                               b"POST /digits.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                               b"Connection: close\r\n\r\nabc")
            r = head_of(data)
            assert r.status == 405, method
            assert r.header("allow") == "GET, HEAD"


def test_conditional_requests():
    with server() as s, Client(s.port) as c:
        first = c.get("/digits.txt")
        etag, modified = first.header("etag"), first.header("last-modified")
        r = c.get("/digits.txt", [("If-None-Match", etag)])
        assert r.status == 304 and r.body == b""
        assert r.header("etag") == etag and r.header("cache-control") == "max-age=3600"
        assert r.header("content-length") is None
        assert c.get("/digits.txt", [("If-None-Match", '"a", W/%s' % etag)]).status == 304
        assert c.get("/digits.txt", [("If-None-Match", "*")]).status == 304
        assert c.get("/digits.txt", [("If-Modified-Since", modified)]).status == 304
        assert c.get("/digits.txt",
                     [("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")]).status == 200
        # If-None-Match wins over If-Modified-Since.
        r = c.get("/digits.txt", [("If-None-Match", '"other"'), ("If-Modified-Since", modified)])
        assert r.status == 200 and r.body == b"0123456789"
        assert c.get("/digits.txt", [("If-Match", '"other"')]).status == 412
        assert c.get("/digits.txt", [("If-Match", etag)]).status == 200
        assert c.get("/digits.txt", [("If-Unmodified-Since",
                                      "Thu, 01 Jan 1970 00:00:00 GMT")]).status == 412
        assert c.get("/digits.txt", [("If-Unmodified-Since", modified)]).status == 200
        # And curl's own conditional GET.
        code, out, _ = curl("-s", "-o", "/dev/null", "-w", "%{http_code}",
                            "-H", "If-None-Match: " + etag, s.url("/digits.txt"))
        assert out == b"304"


def test_ranges():
    with server() as s, Client(s.port) as c:
        r = c.get("/digits.txt", [("Range", "bytes=2-5")])
        assert r.status == 206 and r.body == b"2345"
        assert r.header("content-range") == "bytes 2-5/10"
        assert r.header("content-length") == "4"
        assert c.get("/digits.txt", [("Range", "bytes=-3")]).body == b"789"
        assert c.get("/digits.txt", [("Range", "bytes=6-")]).body == b"6789"
        assert c.get("/digits.txt", [("Range", "bytes=8-100")]).body == b"89"
        r = c.get("/digits.txt", [("Range", "bytes=10-")])
        assert r.status == 416 and r.header("content-range") == "bytes */10"
        r = c.get("/digits.txt", [("Range", "bytes=5-2")])  # invalid: ignored
        assert r.status == 200 and r.body == b"0123456789"
        r = c.get("/digits.txt", [("Range", "lines=1-2")])
        assert r.status == 200
        etag = r.header("etag")
        modified = r.header("last-modified")
        assert c.get("/digits.txt", [("Range", "bytes=0-0"), ("If-Range", etag)]).status == 206
        assert c.get("/digits.txt",
                     [("Range", "bytes=0-0"), ("If-Range", modified)]).status == 206
        r = c.get("/digits.txt", [("Range", "bytes=0-0"), ("If-Range", '"stale"')])
        assert r.status == 200 and r.body == b"0123456789"
        # An empty file has no ranges.
        assert c.get("/empty.txt", [("Range", "bytes=0-")]).status == 200
        # curl -r
        code, out, _ = curl("-s", "-r", "3-4", s.url("/digits.txt"))
        assert out == b"34"


def test_multipart_ranges():
    with server() as s, Client(s.port) as c:
        r = c.get("/digits.txt", [("Range", "bytes=0-1, 7-")])
        assert r.status == 206
        m = re.fullmatch(r"multipart/byteranges; boundary=(\S+)", r.header("content-type"))
        assert m
        b = m.group(1).encode()
        parts = r.body.split(b"--" + b)
        assert parts[-1] == b"--\r\n"
        bodies = []
        for p in parts[1:-1]:
            head, _, data = p.partition(b"\r\n\r\n")
            assert b"Content-Type: text/plain; charset=utf-8" in head
            bodies.append((re.search(rb"Content-Range: bytes (\S+)", head).group(1),
                           data[:-2] if data.endswith(b"\r\n") else data))
        assert bodies == [(b"0-1/10", b"01"), (b"7-9/10", b"789")]
        # Overlap worth more than the file, or more than 16 ranges: the whole file.
        assert c.get("/digits.txt", [("Range", "bytes=0-9,0-9")]).status == 200
        many = "bytes=" + ",".join("%d-%d" % (i % 10, i % 10) for i in range(17))
        assert c.get("/digits.txt", [("Range", many)]).status == 200


def test_head_has_get_headers_and_no_body():
    with server() as s:
        data = raw_request(s.port, request_bytes("HEAD", "/style.css") +
                           request_bytes("GET", "/digits.txt", close=True))
        head, get = parse_responses(data, head_requests=(0,))
        assert head.status == 200
        assert head.header("content-length") == "20"
        assert head.header("content-type") == "text/css; charset=utf-8"
        assert head.header("etag")
        assert get.body == b"0123456789"  # nothing of the HEAD's body in between
        code, out, _ = curl("-sI", s.url("/style.css"))
        assert head_of(out).header("content-length") == "20"


def test_precompressed_selection():
    with server() as s, Client(s.port) as c:
        r = c.get("/app.js", [("Accept-Encoding", "gzip, deflate, br")])
        assert r.body == b"BROTLI-BYTES"
        assert r.header("content-encoding") == "br"
        assert r.header("content-type") == "text/javascript; charset=utf-8"
        assert r.header("vary") == "Accept-Encoding"
        br_etag = r.header("etag")
        r = c.get("/app.js", [("Accept-Encoding", "br;q=0.1, gzip;q=0.9")])
        assert r.header("content-encoding") == "gzip"
        assert gzip.decompress(r.body) == b"console.log('plain');\n"
        assert r.header("etag") != br_etag
        r = c.get("/app.js", [("Accept-Encoding", "br;q=0, gzip;q=0")])
        assert r.header("content-encoding") is None and r.body == b"console.log('plain');\n"
        r = c.get("/app.js")
        assert r.header("content-encoding") is None and r.header("vary") == "Accept-Encoding"
        r = c.get("/style.css", [("Accept-Encoding", "br, gzip")])  # no variants on disk
        assert r.header("content-encoding") is None and r.body == b"body { color: red }\n"
        # Validators per variant.
        assert c.get("/app.js", [("Accept-Encoding", "br"),
                                 ("If-None-Match", br_etag)]).status == 304
        assert c.get("/app.js", [("If-None-Match", br_etag)]).status == 200
        # curl --compressed decodes the gzip variant to the original.
        code, out, _ = curl("-s", "--compressed", "-H", "Accept-Encoding: gzip",
                            s.url("/app.js"))
        assert out == b"console.log('plain');\n"


def test_hostile_paths_over_raw_sockets():
    files = dict(FILES, x="x-file")
    # Every refused target is answered and the connection closed at once; a short header
    # timeout keeps the test quick should one ever be left open.
    with static_server(files, server_extra='header_timeout = "1s"') as s:
        cases = [
            (b"/../etc/passwd", 400),
            (b"/%2e%2e/", 400),
            (b"/a/..%2f..%2f", 400),
            (b"/x%00.html", 400),
            (b"/.git/config", 404),
            (b"\\..\\", 400),
            (b"/%5c..%5cetc/passwd", 400),
            (b"//x", 200),
            (b"/./x", 200),
            (b"/docs/../x", 200),
        ]
        for path, status in cases:
            r = one_response(s.port, b"GET " + path + b" HTTP/1.1\r\nHost: t\r\n\r\n")
            assert r.status == status, (path, r)
            if status == 200:
                assert r.body == b"x-file"


def test_pipelined_requests_answer_in_order():
    with server() as s:
        data = raw_request(s.port, request_bytes("GET", "/digits.txt") +
                           request_bytes("GET", "/missing") +
                           request_bytes("GET", "/digits.txt", [("Range", "bytes=0-0")]) +
                           request_bytes("GET", "/style.css", close=True))
        rs = parse_responses(data)
        assert [r.status for r in rs] == [200, 404, 206, 200]
        assert rs[0].body == b"0123456789" and rs[2].body == b"0"
        # The connection is gone; what stays open is the cache's two files.
        assert worker_fds(s) == s.baseline[s.workers()[0]] + 2
