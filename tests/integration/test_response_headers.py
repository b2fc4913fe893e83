"""Response headers (`headers = { set, add, remove }` on a route and in [site]) on every
action — respond, status, static, PHP (real php-fpm), the proxy (real nginx upstream) and
its cache hits — and on the errors the server makes itself, over HTTP/1.1, h2c, and
HTTP/1.1 and HTTP/2 over TLS."""
import pytest

from php_fpm import PhpFpm
from response_support import LISTENERS, PROTOCOLS, fetch, server
from upstreams import NginxUpstream

SITE = """
[server]
workers = 1

[site]
headers = { set = { strict-transport-security = "max-age=63072000" }, remove = ["x-powered-by"] }
""" + LISTENERS + """
[[route]]
match = { exact = "/respond" }
respond = { body = "hi\\n", headers = { x-powered-by = "respond", x-keep = "k" } }
headers = { add = { link = ["</a.css>; rel=preload", "</b.js>; rel=preload"] } }

[[route]]
match = { exact = "/status" }
status = {}

[[route]]
match = { exact = "/bare" }
respond = { body = "bare\\n", headers = { x-powered-by = "respond" } }
headers = { remove = ["strict-transport-security"] }

[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }
headers = { set = { x-frame-options = "DENY", strict-transport-security = "max-age=1" } }

[[route]]
match = { prefix = "/proxy/" }
proxy = { upstream = "up" }

[[route]]
match = { prefix = "/cached/" }
proxy = { upstream = "up", cache = "pages" }

[[route]]
match = { prefix = "/files/" }
static = { root = "$dir/www" }

[upstream.up]
servers = ["@UPSTREAM@"]

[cache.pages]
memory = "4m"

[php_pool.main]
address = "@FPM@"
"""

HSTS = "max-age=63072000"


@pytest.fixture(scope="module")
def fpm():
    f = PhpFpm(children=2)
    f.write("powered.php", "<?php header('X-Powered-By: PHP/test'); header('X-Frame-Options: "
                           "SAMEORIGIN'); echo 'php';")
    yield f
    f.stop()


@pytest.fixture(scope="module")
def upstream():
    u = NginxUpstream("""
        location / {
            add_header X-Powered-By upstream;
            add_header Cache-Control "max-age=60";
            return 200 "from upstream\\n";
        }""")
    yield u
    u.stop()


@pytest.fixture(scope="module")
def site(fpm, upstream):
    template = (SITE.replace("@WWW@", fpm.www).replace("@FPM@", fpm.address)
                .replace("@UPSTREAM@", upstream.address))
    with server(template, {"www/files/a.txt": "static file\n"}) as s:
        yield s


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_respond_edits_and_adds(site, protocol):
    r = fetch(site, protocol, "/respond")
    assert r.status == 200
    assert r.body == b"hi\n"
    assert r.header("strict-transport-security") == HSTS
    assert r.header("x-powered-by") is None  # the site removes it, whoever set it
    assert r.header("x-keep") == "k"
    assert r.all("link") == ["</a.css>; rel=preload", "</b.js>; rel=preload"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_route_overrides_the_site(site, protocol):
    r = fetch(site, protocol, "/bare")
    assert r.body == b"bare\n"
    assert r.header("strict-transport-security") is None  # the route removes the site's set
    assert r.header("x-powered-by") is None  # the site's remove still applies
    r = fetch(site, protocol, "/powered.php")
    assert r.header("strict-transport-security") == "max-age=1"  # the route's set wins


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_status_and_static(site, protocol):
    r = fetch(site, protocol, "/status")
    assert r.status == 200
    assert r.header("strict-transport-security") == HSTS
    r = fetch(site, protocol, "/files/a.txt")
    assert r.body == b"static file\n"
    assert r.header("strict-transport-security") == HSTS
    assert r.header("etag") is not None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_php(site, protocol):
    r = fetch(site, protocol, "/powered.php")
    assert r.status == 200
    assert r.body == b"php"
    assert r.header("x-powered-by") is None
    assert r.header("x-frame-options") == "DENY"  # set replaces the script's own


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_proxy_and_cache_hits(site, protocol):
    r = fetch(site, protocol, "/proxy/x")
    assert r.body == b"from upstream\n"
    assert r.header("x-powered-by") is None
    assert r.header("strict-transport-security") == HSTS
    path = "/cached/" + protocol
    first = fetch(site, protocol, path)
    second = fetch(site, protocol, path)
    assert "stored" in first.header("cache-status")
    assert "hit" in second.header("cache-status")
    for r in (first, second):
        assert r.body == b"from upstream\n"
        assert r.header("x-powered-by") is None
        assert r.header("strict-transport-security") == HSTS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_errors_carry_them_too(site, protocol):
    r = fetch(site, protocol, "/nowhere")  # no route: the site's rules
    assert r.status == 404
    assert r.header("strict-transport-security") == HSTS
    r = fetch(site, protocol, "/files/missing.txt")  # the static handler's own 404
    assert r.status == 404
    assert r.header("strict-transport-security") == HSTS
    r = fetch(site, protocol, "/missing.php")
    assert r.status == 404
    assert r.header("x-frame-options") == "DENY"


def test_head_gets_the_same_fields(site):
    r = fetch(site, "h1", "/respond", method="HEAD")
    assert r.status == 200
    assert r.body == b""
    assert r.header("strict-transport-security") == HSTS
    assert len(r.all("link")) == 2
