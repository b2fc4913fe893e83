"""Redirects (the redirect action with its template) and rewrites (regex routes whose
path, and query, become another before routing starts again), over HTTP/1.1, h2c,
HTTP/1.1 + TLS and HTTP/2 + TLS, with a real PHP-FPM behind the rewritten routes."""
import json
import os
import subprocess

import pytest

from h3_support import h3
from harness import SCALWSD, Scalwsd
from php_fpm import PhpFpm
from protocol_clients import PROTOCOLS, ProtocolClient
from tls_support import make_cert

SITE = r"""
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
http3 = true

# Canonical host: everything for www.site.test goes to site.test, path and query kept.
[[route]]
match = { host = "www.site.test" }
redirect = { to = "https://site.test{uri}", status = 301 }

# http -> https for a part of the site: only what came over plain HTTP.
[[route]]
match = { prefix = "/account/", scheme = "http" }
redirect = { to = "https://{host}{uri}", status = 308 }
[[route]]
match = { prefix = "/account/" }
respond = { status = 200, body = "account over TLS\n" }

[[route]]
match = { regex = "^/old/(.*)$" }
redirect = { to = "/new/$1" }

[[route]]
match = { regex = "^/blog/(\\d+)/?$" }
rewrite = "/info.php?p=$1"

[[route]]
match = { regex = "^/tag/([^/]+)$" }
rewrite = "/by-tag/$1"

[[route]]
match = { regex = "^/by-tag/(.+)$" }
rewrite = "/info.php?tag=$1"

[[route]]
match = { prefix = "/clean/" }
rewrite = "/info.php?"

[[route]]
match = { prefix = "/loop/" }
rewrite = "/loop/again"

[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }

[php_pool.main]
address = "@ADDRESS@"
max_conns = 2
"""


@pytest.fixture(scope="module")
def server():
    fpm = PhpFpm(children=2)
    s = Scalwsd(SITE.replace("@WWW@", fpm.www).replace("@ADDRESS@", fpm.address), start=False)
    make_cert(s.dir, "site", "site.test", ("site.test", "www.site.test"))
    os.chmod(s.dir, 0o755)
    s.start()
    yield s
    s.__exit__(None, None, None)
    fpm.stop()


@pytest.fixture(params=list(PROTOCOLS))
def client(request, server):
    return ProtocolClient(server, request.param)


def test_canonical_host_and_https_redirects(client):
    status, headers, body = client.request("/a/b?c=1&d", "-H", "Host: www.site.test")
    assert status == 301
    assert headers["location"] == "https://site.test/a/b?c=1&d"
    assert b"301 Moved Permanently" in body
    status, headers, body = client.request("/account/settings?tab=2", "-H", "Host: site.test")
    if client.tls:
        assert (status, body) == (200, b"account over TLS\n")
        return
    assert status == 308
    assert headers["location"] == "https://site.test/account/settings?tab=2"
    # HEAD gets the same answer without a body.
    status, headers, body = client.request("/account/x", "-I", "-H", "Host: site.test")
    assert status == 308 and headers["location"] == "https://site.test/account/x" and body == b""


def test_redirect_with_captures_defaults_to_302(client):
    status, headers, _ = client.request("/old/a%20b/c")
    assert status == 302
    assert headers["location"] == "/new/a%20b/c"


def test_rewrite_reaches_php_with_the_new_path_and_query(client):
    status, _, body = client.request("/blog/42?x=1")
    assert status == 200
    info = json.loads(body)
    assert info["SCRIPT_NAME"] == "/info.php"
    assert info["QUERY_STRING"] == "p=42&x=1"  # the client's query appended (nginx's rule)
    assert info["GET"] == {"p": "42", "x": "1"}
    assert info["REQUEST_URI"] == "/blog/42?x=1"  # as the client sent it


def test_rewrites_chain_and_captures_are_encoded(client):
    status, _, body = client.request("/tag/caf%C3%A9%20%26%20th%C3%A9")
    assert status == 200
    info = json.loads(body)
    assert info["GET"] == {"tag": "café & thé"}
    assert info["REQUEST_URI"] == "/tag/caf%C3%A9%20%26%20th%C3%A9"


def test_a_trailing_question_mark_drops_the_old_query(client):
    status, _, body = client.request("/clean/x?secret=1")
    assert status == 200
    info = json.loads(body)
    assert info["QUERY_STRING"] == "" and info["GET"] == []


def test_a_rewrite_loop_is_500_and_logged(client, server):
    status, _, _ = client.request("/loop/x")
    assert status == 500
    assert "more than 10 rewrites (a rewrite loop)" in server.read_log()


def test_over_http3_too(server):
    run = h3(server.port2, "/old/x%20y", "/blog/9", "/loop/z")
    assert run.returncode == 0, run.output[-2000:]
    by_status = {r.status: r for r in run.responses.values()}
    assert sorted(by_status) == [200, 302, 500], run.output[-2000:]
    assert by_status[302].header("location") == "/new/x%20y"
    # PHP's answer to the rewritten /info.php?p=9
    assert by_status[200].header("x-from-php") == "yes"


def test_a_bad_regex_is_refused_with_its_place(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[[listen]]\naddress = "127.0.0.1:1"\n[[route]]\n'
                      'match = { regex = "^/blog/(\\\\d+$" }\nrewrite = "/x?p=$1"\n')
    p = subprocess.run([SCALWSD, "--check-config", str(config)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "%s:4:19: route.match.regex: invalid regular expression: missing closing parenthesis" \
        % config in p.stderr + p.stdout
