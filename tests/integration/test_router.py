"""Routing on the real scalwsd: exact, prefix, suffix, host (with *. wildcards), method,
config order, absolute-form targets, the 404 error page, and the Server and Date headers."""
import email.utils
import re
import time

import pytest

from harness import Client, Scalwsd, exchange, get, parse_one, route, site

ROUTES = [
    route("exact-health", exact="/health"),
    route("prefix-api", prefix="/api/"),
    route("prefix-api-v2", prefix="/api/v2/"),     # shadowed by /api/ (earlier)
    route("exact-api-special", exact="/api/special"),  # shadowed too
    route("exact-order", exact="/order/exact"),
    route("prefix-order", prefix="/order/"),
    route("prefix-long", prefix="/p/long/"),
    route("prefix-short", prefix="/p/"),
    route("prefix-q", prefix="/q/"),
    route("prefix-q-long", prefix="/q/long/"),     # shadowed by /q/
    route("suffix-php", suffix=".php"),
    route("host-exact", host="example.com", prefix="/h/"),
    route("host-wild", host="*.example.com", prefix="/h/"),
    route("host-list", host=["a.test", "b.test"], prefix="/h/"),
    route("get-only", exact="/m", method="GET"),
    route("post-put", exact="/m", method=["POST", "PUT"]),
    route("any-method", exact="/m"),
    route("absolute", host="other.example", exact="/x"),
    route("teapot", status=418, exact="/teapot", headers={"x-tea": "earl grey"}),
    route("", status=204, exact="/empty"),
    route("suffix-and-prefix", prefix="/sp/", suffix=".txt"),
]


@pytest.fixture(scope="module")
def server():
    with Scalwsd(site(ROUTES)) as s:
        yield s


@pytest.fixture(autouse=True)
def no_leak(server):
    yield
    server.assert_no_fd_leak()


def body(server, path, host="localhost", method="GET"):
    data, _ = exchange(server.port, method.encode() + b" " + path.encode() + b" HTTP/1.1\r\nHost: " +
                       host.encode() + b"\r\nConnection: close\r\n\r\n")
    resp = parse_one(data, head_request=method == "HEAD", eof=True)[0]
    return resp.status, resp.body.decode()


def test_exact_matches_only_the_exact_path(server):
    assert body(server, "/health") == (200, "exact-health")
    assert body(server, "/health?q=1") == (200, "exact-health")
    assert body(server, "/health/")[0] == 404
    assert body(server, "/healthz")[0] == 404
    assert body(server, "/HEALTH")[0] == 404


def test_prefix_and_config_order(server):
    assert body(server, "/api/x") == (200, "prefix-api")
    assert body(server, "/api/") == (200, "prefix-api")
    assert body(server, "/api")[0] == 404
    assert body(server, "/api/v2/x") == (200, "prefix-api")  # first in config order wins
    assert body(server, "/api/special") == (200, "prefix-api")
    assert body(server, "/order/exact") == (200, "exact-order")
    assert body(server, "/order/other") == (200, "prefix-order")
    assert body(server, "/p/long/x") == (200, "prefix-long")
    assert body(server, "/p/x") == (200, "prefix-short")
    assert body(server, "/q/long/x") == (200, "prefix-q")


def test_suffix(server):
    assert body(server, "/index.php") == (200, "suffix-php")
    assert body(server, "/a/b/c.php?x=.txt") == (200, "suffix-php")
    assert body(server, "/x.phps")[0] == 404
    assert body(server, "/api/x.php") == (200, "prefix-api")  # an earlier route
    assert body(server, "/sp/a.txt") == (200, "suffix-and-prefix")
    assert body(server, "/sp/a.txt2")[0] == 404
    assert body(server, "/other/a.txt")[0] == 404


def test_host_exact_and_wildcard(server):
    assert body(server, "/h/1", "example.com") == (200, "host-exact")
    assert body(server, "/h/1", "EXAMPLE.com:8080") == (200, "host-exact")
    assert body(server, "/h/1", "sub.example.com") == (200, "host-wild")
    assert body(server, "/h/1", "a.b.example.com") == (200, "host-wild")
    assert body(server, "/h/1", "Sub.Example.COM") == (200, "host-wild")
    assert body(server, "/h/1", "notexample.com")[0] == 404
    assert body(server, "/h/1", "example.com.evil")[0] == 404
    assert body(server, "/h/1", "b.test") == (200, "host-list")
    assert body(server, "/h/1", "c.test")[0] == 404
    assert body(server, "/h/1", "localhost")[0] == 404


def test_host_from_http10_without_host_matches_no_host_route(server):
    data, _ = exchange(server.port, b"GET /h/1 HTTP/1.0\r\n\r\n")
    assert parse_one(data, eof=True)[0].status == 404
    data, _ = exchange(server.port, b"GET /h/1 HTTP/1.0\r\nHost: x.example.com\r\n\r\n")
    assert parse_one(data, eof=True)[0].body == b"host-wild"


def test_method_match_and_get_answers_head(server):
    assert body(server, "/m") == (200, "get-only")
    assert body(server, "/m", method="POST") == (200, "post-put")
    assert body(server, "/m", method="PUT") == (200, "post-put")
    assert body(server, "/m", method="DELETE") == (200, "any-method")
    assert body(server, "/m", method="PATCH") == (200, "any-method")
    with Client(server.port) as c:
        c.send(b"HEAD /m HTTP/1.1\r\nHost: x\r\n\r\nGET /m HTTP/1.1\r\nHost: x\r\n\r\n")
        head, got = c.read_responses(2, head_requests=(0,))
        assert head.status == 200 and head.body == b""
        assert head.header("content-length") == str(len("get-only"))  # the GET route's
        assert got.body == b"get-only"


def test_absolute_form_routes_by_the_target_host(server):
    def absolute(target, host):
        data, _ = exchange(server.port, b"GET " + target + b" HTTP/1.1\r\nHost: " + host +
                           b"\r\nConnection: close\r\n\r\n")
        resp = parse_one(data, eof=True)[0]
        return resp.status, resp.body
    assert absolute(b"http://other.example/x", b"other.example") == (200, b"absolute")
    assert absolute(b"http://OTHER.example:8080/x?y=1", b"other.example:8080") == (200, b"absolute")
    assert absolute(b"https://other.example/x", b"other.example") == (200, b"absolute")
    # RFC 9112 3.2.2 lets the target's authority win over a differing Host; a request naming
    # two hosts is refused instead, so no handler sees the host the route did not match.
    assert absolute(b"http://other.example/x", b"localhost")[0] == 400
    assert absolute(b"http://localhost/x", b"other.example")[0] == 400
    assert absolute(b"http://sub.example.com/h/z", b"sub.example.com") == (200, b"host-wild")
    assert absolute(b"http://localhost/health", b"localhost") == (200, b"exact-health")
    assert body(server, "/x", "other.example") == (200, "absolute")


def test_route_status_and_headers(server):
    resp = get(server.port, "/teapot")
    assert resp.status == 418
    assert resp.body == b"teapot"
    assert resp.header("x-tea") == "earl grey"


def test_204_has_no_body_and_no_content_length(server):
    with Client(server.port) as c:
        c.send(b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        empty, after = c.read_responses(2)
        assert empty.status == 204
        assert empty.header("content-length") is None
        assert empty.header("transfer-encoding") is None
        assert after.body == b"exact-health"  # framing held: nothing between the two


def test_no_match_is_404_html_from_the_error_path(server):
    with Client(server.port) as c:
        c.send(b"GET /nothing/here HTTP/1.1\r\nHost: x\r\n\r\n")
        resp = c.read_response()
        assert resp.status == 404
        assert resp.header("content-type").startswith("text/html")
        assert resp.header("content-length") == str(len(resp.body))
        assert b"404" in resp.body and b"<html" in resp.body.lower()
        assert resp.header("server") == "scalws"
        assert resp.header("date") is not None
        # A 404 is an ordinary answer: the connection is still usable (as with nginx).
        c.send(b"HEAD /nothing HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        head, after = c.read_responses(2, head_requests=(0,))
        assert head.status == 404 and head.body == b""
        assert head.header("content-length") == resp.header("content-length")
        assert after.body == b"exact-health"


IMF_FIXDATE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|"
                         r"Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$")


def test_date_header_is_valid_and_current(server):
    first = get(server.port, "/health").header("date")
    assert IMF_FIXDATE.match(first), first
    when = email.utils.parsedate_to_datetime(first).timestamp()
    assert abs(when - time.time()) < 3, (first, time.time())
    time.sleep(1.1)
    second = get(server.port, "/health").header("date")
    assert IMF_FIXDATE.match(second), second
    assert email.utils.parsedate_to_datetime(second).timestamp() > when


def test_default_server_header(server):
    assert get(server.port, "/health").header("server") == "scalws"


@pytest.mark.parametrize("value", ["", False])
def test_server_header_off(value):
    with Scalwsd(site([route("ok")], server_header=value)) as s:
        for path in ("/", ):
            resp = get(s.port, path)
            assert resp.status == 200
            assert resp.header("server") is None, resp
        s.assert_no_fd_leak()


def test_server_header_custom_and_on_error_pages():
    with Scalwsd(site([route("ok", exact="/")], server_header="custom/1.0")) as s:
        assert get(s.port, "/").header("server") == "custom/1.0"
        assert get(s.port, "/missing").header("server") == "custom/1.0"
        s.assert_no_fd_leak()
