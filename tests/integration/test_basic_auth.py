"""A route's `auth`: HTTP Basic against htpasswd files made by `htpasswd -B` (bcrypt) and
`openssl passwd` (SHA-crypt), over HTTP/1.1, h2c, HTTP/1.1 + TLS and HTTP/2 + TLS, with a
real PHP-FPM behind it; the hash runs off the event loop, and a reload in single mode
(inside the sandbox) reads the file anew."""
import hashlib
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from harness import Scalwsd, curl, wait_until
from php_fpm import PhpFpm
from protocol_clients import PROTOCOLS, ProtocolClient
from tls_support import make_cert

SITE = """
[server]
workers = 1
mode = "single"
max_body = "4m"
access_log = "$dir/access.log"
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[route]]
match = { exact = "/health" }
respond = { status = 200, body = "ok\\n" }
[[route]]
match = { prefix = "/secret" }
auth = { realm = "staff", users = "$dir/users" }
respond = { status = 200, body = "secret\\n" }
[[route]]
match = { prefix = "/framed" }
auth = { realm = "staff", users = "$dir/users" }
headers = { set = { "x-frame-options" = "DENY" } }
errors = { root = "@WWW@", 401 = "/401.html" }
respond = { status = 200, body = "framed\\n" }
[[route]]
match = { prefix = "/staff/" }
auth = { realm = "staff", users = "$dir/users" }
php = { pool = "main", root = "@WWW@" }
[php_pool.main]
address = "@ADDRESS@"
max_conns = 2
"""

WHOAMI = r"""<?php
$body = file_get_contents('php://input');
echo ($_SERVER['REMOTE_USER'] ?? '-'), ' ', ($_SERVER['AUTH_TYPE'] ?? '-'), ' ',
     strlen($body), ' ', hash('sha256', $body);
"""

CHALLENGE = 'Basic realm="staff", charset="UTF-8"'


def htpasswd_line(user, password, cost=5):
    out = subprocess.run(["htpasswd", "-nbB", "-C", str(cost), user, password], check=True,
                         capture_output=True, text=True).stdout
    return out.strip() + "\n"


def sha_crypt_line(user, password, variant):
    out = subprocess.run(["openssl", "passwd", "-" + variant, password], check=True,
                         capture_output=True, text=True).stdout
    return "%s:%s\n" % (user, out.strip())


def write_users(path, lines):
    with open(path + ".new", "w") as f:
        f.write("# staff\n" + "".join(lines))
    os.chmod(path + ".new", 0o644)
    os.rename(path + ".new", path)  # as an operator's tools replace it


BASE_USERS = [htpasswd_line("ann", "s3cret"), sha_crypt_line("bob", "pa55word", "6"),
              sha_crypt_line("cid", "hunter2", "5"), htpasswd_line("slow", "slowpw", cost=13)]
UPLOADERS = [htpasswd_line("up-" + p, "pw-" + p) for p in PROTOCOLS]


@pytest.fixture(scope="module")
def server():
    fpm = PhpFpm(children=2)
    os.mkdir(os.path.join(fpm.www, "staff"))
    os.chmod(os.path.join(fpm.www, "staff"), 0o755)
    fpm.write("staff/whoami.php", WHOAMI)
    fpm.write("401.html", "<p>who are you?</p>\n")
    s = Scalwsd(SITE.replace("@WWW@", fpm.www).replace("@ADDRESS@", fpm.address), start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    # The sandboxed worker (nobody when run as root) reads the users file, and on a reload
    # in single mode the certificate and key again.
    os.chmod(s.dir, 0o755)
    os.chmod(os.path.join(s.dir, "site.key"), 0o644)
    write_users(os.path.join(s.dir, "users"), BASE_USERS + UPLOADERS)
    s.start()
    yield s
    s.__exit__(None, None, None)
    fpm.stop()


@pytest.fixture(params=list(PROTOCOLS))
def client(request, server):
    return ProtocolClient(server, request.param)


def test_challenge_then_bcrypt_and_sha_crypt_users(client):
    status, headers, _ = client.request("/secret")
    assert status == 401 and headers["www-authenticate"] == CHALLENGE
    for user, password in (("ann", "s3cret"), ("bob", "pa55word"), ("cid", "hunter2")):
        status, _, body = client.request("/secret", "-u", "%s:%s" % (user, password))
        assert (status, body) == (200, b"secret\n"), user
        # Again: from the loop's memory this time, the same answer.
        assert client.request("/secret", "-u", "%s:%s" % (user, password))[0] == 200
    for creds in ("ann:wrong", "ann:", "nobody:s3cret", "bob:hunter2"):
        status, headers, _ = client.request("/secret", "-u", creds)
        assert status == 401 and headers["www-authenticate"] == CHALLENGE, creds
    assert client.request("/secret", "-H", "Authorization: Bearer abc")[0] == 401


def test_the_routes_response_rules_apply_to_its_401(client):
    # The refusal goes through the route's header edits and its own error page, like any
    # other answer of the route.
    status, headers, body = client.request("/framed")
    assert status == 401 and headers["www-authenticate"] == CHALLENGE
    assert headers["x-frame-options"] == "DENY"
    assert body == b"<p>who are you?</p>\n"
    status, headers, body = client.request("/framed", "-u", "ann:s3cret")
    assert (status, body) == (200, b"framed\n") and headers["x-frame-options"] == "DENY"


def test_php_gets_the_user_and_the_whole_body(client, tmp_path):
    user = "up-%s:pw-%s" % (client.protocol, client.protocol)
    for size in (10 * 1024, 2 * 1024 * 1024 + 3):  # sent at once; sent after 100 Continue
        body = os.urandom(size)
        path = tmp_path / "body"
        path.write_bytes(body)
        status, _, answer = client.request("/staff/whoami.php", "-u", user,
                                           "--data-binary", "@%s" % path)
        assert status == 200, answer
        assert answer.decode().split(" ") == ["up-" + client.protocol, "Basic", str(size),
                                              hashlib.sha256(body).hexdigest()]
    status, _, answer = client.request("/staff/whoami.php", "-u", user)
    assert answer.decode().startswith("up-%s Basic 0 " % client.protocol)


def test_a_refused_body_is_not_read(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"POST /secret HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n" +
                  b"x" * 1000)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert data.startswith(b"HTTP/1.1 401 ")
    assert b"\r\nConnection: close\r\n" in data


def test_the_access_log_names_the_user(server):
    assert curl("-u", "ann:s3cret", "http://127.0.0.1:%d/secret?log" % server.port)[0] == 0
    log = os.path.join(server.dir, "access.log")
    wait_until(lambda: os.path.exists(log) and " - ann [" in open(log).read(), timeout=5,
               what="the access-log line")


def test_a_slow_hash_does_not_stall_the_loop(server):
    done = []
    url = "http://127.0.0.1:%d" % server.port

    def slow():
        code, out, _ = curl("-u", "slow:slowpw", url + "/secret")
        done.append(("slow", code, out))

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.05)  # the check is on the thread pool now (bcrypt cost 13)
    code, out, _ = curl(url + "/health")
    done.append(("health", code, out))
    t.join()
    assert [d[0] for d in done] == ["health", "slow"], done
    assert done[1][2] == b"secret\n"


def test_a_reload_reads_the_users_file_again(server):
    url = "http://127.0.0.1:%d/secret" % server.port
    assert curl("-u", "ann:s3cret", "-o", "/dev/null", "-w", "%{http_code}", url)[1] == b"200"
    write_users(os.path.join(server.dir, "users"),
                [htpasswd_line("ann", "n3w-secret")] + BASE_USERS[1:] + UPLOADERS)
    server.signal(signal.SIGHUP)

    def answers(password, want):
        return curl("-u", "ann:" + password, "-o", "/dev/null", "-w", "%{http_code}",
                    url)[1] == want
    wait_until(lambda: answers("n3w-secret", b"200"), timeout=10,
               what="the new password; log:\n" + server.read_log()[-2000:])
    assert answers("s3cret", b"401")  # remembered credentials went with the old file
    assert "error" not in server.read_log().split("reload")[-1].lower()
