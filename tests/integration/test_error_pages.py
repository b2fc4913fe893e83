"""Custom error pages (`errors = { 404 = "/404.html", "5xx" = "/50x.html" }` on a route
and in [site]) for the errors the server makes — 404 without a route, the static
handler's 403 and 404, `allow`'s 403, 413, the proxy's 502 and PHP's 5xx — keeping the
status, falling back to the built-in page when the page is missing or would leave its
root, and leaving an upstream's or PHP's own error answer alone. Over HTTP/1.1, h2c, and
HTTP/1.1 and HTTP/2 over TLS, with the sandbox on (the error root outside any docroot is
readable under Landlock)."""
import os

import pytest

from harness import free_port
from php_fpm import PhpFpm
from response_support import LISTENERS, PROTOCOLS, fetch, server
from upstreams import NginxUpstream

SITE = """
[server]
workers = 1
sandbox = true

[site]
errors = { root = "$dir/errors", 404 = "/404.html", "5xx" = "/50x.html" }
""" + LISTENERS + """
[[route]]
match = { prefix = "/files/" }
static = { root = "$dir/www" }
errors = { 403 = "/files/403.html" }

[[route]]
match = { prefix = "/private/" }
respond = { body = "secret\\n" }
policy = { allow = ["10.0.0.0/8"] }
errors = { "4xx" = "/4xx.txt" }

[[route]]
match = { prefix = "/upload/" }
respond = { body = "ok\\n" }
policy = { max_body = "10" }
errors = { 413 = "/413.html" }

[[route]]
match = { prefix = "/down/" }
proxy = { upstream = "down" }

[[route]]
match = { prefix = "/up/" }
proxy = { upstream = "up" }

[[route]]
match = { prefix = "/nopool/" }
php = { pool = "gone", root = "@WWW@" }

[[route]]
match = { prefix = "/absent/" }
respond = { status = 200, body = "-" }
policy = { allow = ["10.0.0.0/8"] }
errors = { 403 = "/no-such-page.html" }

[[route]]
match = { prefix = "/escape/" }
respond = { body = "-" }
policy = { allow = ["10.0.0.0/8"] }
errors = { 403 = "/escape.html" }

[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }

[upstream.down]
servers = ["127.0.0.1:@DOWN@"]

[upstream.up]
servers = ["@UPSTREAM@"]

[php_pool.main]
address = "@FPM@"

[php_pool.gone]
address = "unix:$dir/no-such.sock"
"""

PAGES = {
    "errors/404.html": "<h1>site 404</h1>\n",
    "errors/50x.html": "<h1>site 5xx</h1>\n",
    "errors/4xx.txt": "route 4xx\n",
    "errors/413.html": "<h1>too large</h1>\n",
    "www/files/403.html": "<h1>files 403</h1>\n",
    "www/files/dir/placeholder": "",
    "outside/secret.html": "secret page\n",
}


@pytest.fixture(scope="module")
def fpm():
    f = PhpFpm(children=2)
    os.mkdir(os.path.join(f.www, "nopool"))
    os.chmod(os.path.join(f.www, "nopool"), 0o755)
    f.write("nopool/x.php", "<?php echo 'never runs';")  # its pool does not exist
    yield f
    f.stop()


@pytest.fixture(scope="module")
def upstream():
    u = NginxUpstream('location / { return 404 "upstream says not found\\n"; }')
    yield u
    u.stop()


@pytest.fixture(scope="module")
def site(fpm, upstream):
    template = (SITE.replace("@WWW@", fpm.www).replace("@FPM@", fpm.address)
                .replace("@UPSTREAM@", upstream.address).replace("@DOWN@", str(free_port())))
    s = server(template, PAGES, start=False)
    os.symlink(os.path.join(s.dir, "outside", "secret.html"),
               os.path.join(s.dir, "errors", "escape.html"))
    # The worker runs as nobody: the test's directory must be traversable.
    os.chmod(s.dir, 0o755)
    s.start()
    with s:
        yield s


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_route_gets_the_site_page(site, protocol):
    r = fetch(site, protocol, "/nowhere")
    assert r.status == 404
    assert r.body == b"<h1>site 404</h1>\n"
    assert r.header("content-type") == "text/html; charset=utf-8"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_static_errors(site, protocol):
    r = fetch(site, protocol, "/files/missing.html")
    assert (r.status, r.body) == (404, b"<h1>site 404</h1>\n")  # inherited from the site
    r = fetch(site, protocol, "/files/dir/")  # a directory without an index
    assert (r.status, r.body) == (403, b"<h1>files 403</h1>\n")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_policy_errors(site, protocol):
    r = fetch(site, protocol, "/private/x")
    assert (r.status, r.body) == (403, b"route 4xx\n")
    assert r.header("content-type") == "text/plain; charset=utf-8"
    r = fetch(site, protocol, "/upload/x", method="POST", data="x" * 100)
    assert (r.status, r.body) == (413, b"<h1>too large</h1>\n")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_backend_failures_get_the_5xx_page(site, protocol):
    r = fetch(site, protocol, "/down/x")
    # 502 while the server is tried, 503 once it is marked down.
    assert r.status in (502, 503)
    assert r.body == b"<h1>site 5xx</h1>\n"
    r = fetch(site, protocol, "/nopool/x.php")
    assert r.status in (502, 503)
    assert r.body == b"<h1>site 5xx</h1>\n"
    if r.status == 503:
        assert r.header("retry-after") == "1"  # the fields the error needs stay


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_upstream_and_php_errors_pass_as_they_are(site, protocol):
    r = fetch(site, protocol, "/up/x")
    assert (r.status, r.body) == (404, b"upstream says not found\n")
    r = fetch(site, protocol, "/notfound.php")
    assert (r.status, r.body) == (404, b"php says no")
    r = fetch(site, protocol, "/missing.php")  # the PHP handler's own 404: ours
    assert (r.status, r.body) == (404, b"<h1>site 404</h1>\n")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_missing_or_escaping_page_falls_back(site, protocol):
    for path in ("/absent/x", "/escape/x"):
        r = fetch(site, protocol, path)
        assert r.status == 403
        assert b"403 Forbidden" in r.body
        assert b"secret" not in r.body


def test_head_gets_the_page_length_without_the_page(site):
    r = fetch(site, "h1", "/nowhere", method="HEAD")
    assert r.status == 404
    assert r.header("content-length") == str(len("<h1>site 404</h1>\n"))
    assert r.body == b""


def test_a_page_changed_on_disk_is_served_fresh(site):
    with open(os.path.join(site.dir, "errors", "404.html"), "w") as f:
        f.write("<h1>new 404 page</h1>\n")
    r = fetch(site, "h1", "/nowhere")
    assert r.body == b"<h1>new 404 page</h1>\n"
    with open(os.path.join(site.dir, "errors", "404.html"), "w") as f:
        f.write(PAGES["errors/404.html"])
