"""Uploads without a declared length reach PHP with their CONTENT_LENGTH: a chunked
HTTP/1.1 body (curl -T -) and an HTTP/2 body without content-length (curl, and python-h2
frame by frame), over plain and TLS listeners, small (memory) and large (an unnamed file in
temp_dir), against a real PHP-FPM that reports the length and a hash of what it read."""
import hashlib
import os
import subprocess

import pytest

from harness import Scalwsd
from php_fpm import PhpFpm
from protocol_clients import PROTOCOLS, ProtocolClient
from tls_support import H2Client, make_cert

SITE = """
[server]
workers = 1
max_body = "8m"
temp_dir = "$dir/tmp"
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[route]]
match = { prefix = "/small/" }
php = { pool = "main", root = "@WWW@" }
policy = { max_body = "1m" }
[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "@WWW@" }
[php_pool.main]
address = "@ADDRESS@"
max_conns = 2
"""

SIZES = (0, 1000, 200 * 1024, 5 * 1024 * 1024 + 7)


@pytest.fixture(scope="module")
def server():
    fpm = PhpFpm(children=2)
    os.mkdir(os.path.join(fpm.www, "small"))
    os.chmod(os.path.join(fpm.www, "small"), 0o755)
    with open(os.path.join(fpm.www, "post.php")) as f:
        fpm.write("small/post.php", f.read())
    s = Scalwsd(SITE.replace("@WWW@", fpm.www).replace("@ADDRESS@", fpm.address), start=False)
    make_cert(s.dir, "site", "site.test", ("site.test",))
    os.chmod(s.dir, 0o755)
    tmp = os.path.join(s.dir, "tmp")
    os.mkdir(tmp)
    os.chmod(tmp, 0o1777)  # the sandboxed worker (nobody when run as root) writes there
    s.start()
    yield s
    assert os.listdir(tmp) == []  # O_TMPFILE: nothing left, nothing named
    s.__exit__(None, None, None)
    fpm.stop()


@pytest.fixture(params=list(PROTOCOLS))
def client(request, server):
    return ProtocolClient(server, request.param)


def upload(client, path, body, tmp_path):
    """curl -T - : the body from a pipe, so curl cannot know its length."""
    data = tmp_path / "body"
    data.write_bytes(body)
    args = list(client.options) + ["-sS", "-D", "-", "-w", "\n%{http_version}", "-T", "-",
                                   "-H", "Content-Type: application/x-test",
                                   client.base + path]
    with open(data, "rb") as stdin:
        p = subprocess.run(["curl", "--max-time", "60"] + args, stdin=stdin,
                           capture_output=True, timeout=90)
    assert p.returncode == 0, p.stderr
    out, _, version = p.stdout.rpartition(b"\n")
    assert version.decode() == client.version
    head, _, answer = out.partition(b"\r\n\r\n")
    while head.split(b" ", 2)[1].startswith(b"1"):
        head, _, answer = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), answer


def test_php_gets_the_length_of_a_body_that_did_not_say_it(client, tmp_path):
    for size in SIZES:
        body = os.urandom(size)
        status, answer = upload(client, "/post.php", body, tmp_path)
        assert status == 200, answer
        length, digest, content_length, content_type = answer.decode().split(" ")
        assert int(length) == size == int(content_length), size
        assert digest == hashlib.sha256(body).hexdigest()
        assert content_type == "application/x-test"


def test_past_max_body_is_413(client, tmp_path):
    status, _ = upload(client, "/small/post.php", os.urandom(2 * 1024 * 1024), tmp_path)
    assert status == 413
    status, answer = upload(client, "/small/post.php", b"fits", tmp_path)
    assert status == 200 and answer.startswith(b"4 ")


def test_curl_sends_no_length_over_http2(server, tmp_path):
    """What the tests above rely on: curl -T - over HTTP/2 sends no content-length."""
    data = tmp_path / "body"
    data.write_bytes(b"x" * 100)
    with open(data, "rb") as stdin:
        p = subprocess.run(["curl", "-v", "--http2-prior-knowledge", "-T", "-", "-o", "/dev/null",
                            "http://127.0.0.1:%d/post.php" % server.port], stdin=stdin,
                           capture_output=True, timeout=30)
    assert p.returncode == 0
    sent = [line for line in p.stderr.decode().splitlines() if line.startswith("> ")]
    assert not any(line.lower().startswith("> content-length") for line in sent), sent


@pytest.mark.parametrize("tls", [False, True])
def test_h2_data_frames_without_content_length(server, tls):
    body = os.urandom(300 * 1024)
    c = H2Client(server.port2 if tls else server.port, tls=tls)
    try:
        sid = c.request("/post.php", method="POST", end_stream=False)
        for at in range(0, len(body), 16384):
            # Within the windows the server opens as PHP reads.
            c.read(until=lambda events: c.conn.local_flow_control_window(sid) >= 16384,
                   timeout=10)
            c.conn.send_data(sid, body[at:at + 16384])
            c.flush()
        c.conn.end_stream(sid)
        c.flush()
        status, _, answer = c.response(sid, timeout=20)
    finally:
        c.close()
    assert status == 200, answer
    length, digest, content_length, _ = answer.decode().split(" ")
    assert int(length) == len(body) == int(content_length)
    assert digest == hashlib.sha256(body).hexdigest()
