"""The reverse proxy behind an HTTP/3 listener (Debian's gtlsclient): the upstream gets an
HTTP/1.1 request whose forwarding fields say HTTPS and whose Via names HTTP/3, and a request
body crosses QUIC flow control to the upstream whole; the answer comes back over HTTP/3."""
import hashlib
import os

from h3_support import h3
from tls_support import tls_server
from upstreams import RawUpstream, echo_script

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
http3 = true
[[route]]
match = { prefix = "/up/" }
proxy = { upstream = "echo", via = true }
policy = { max_body = "4m" }
[upstream.echo]
servers = ["127.0.0.1:@ECHO@"]
"""


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_proxy_over_http3(tmp_path):
    with RawUpstream(echo_script) as echo:
        with tls_server(SITE.replace("@ECHO@", str(echo.port)), start=False) as s:
            os.chmod(s.dir, 0o755)
            s.start()
            get_dir = tmp_path / "get"
            get_dir.mkdir()
            run = h3(s.port, "/up/x", download=str(get_dir))
            assert run.returncode == 0, run.output[-3000:]
            assert run.only().status == 200
            empty = hashlib.sha256(b"").hexdigest()
            assert read(get_dir / "x").strip() == ("GET /up/x 0 %s" % empty).encode()
            request = echo.requests[-1]
            assert request.version == "HTTP/1.1"
            assert request.header("via") == "3 scalws"
            assert request.header("x-forwarded-proto") == "https"
            assert request.header("host") == "127.0.0.1:%d" % s.port

            # A body through QUIC flow control and on to the upstream, exactly once framed.
            data = os.urandom(1024 * 1024 + 7)
            body = tmp_path / "upload.bin"
            body.write_bytes(data)
            post_dir = tmp_path / "post"
            post_dir.mkdir()
            run = h3(s.port, "/up/post", args=["-m", "POST", "-d", str(body)],
                     download=str(post_dir))
            assert run.returncode == 0, run.output[-3000:]
            assert run.only().status == 200
            expect = "POST /up/post %d %s" % (len(data), hashlib.sha256(data).hexdigest())
            assert read(post_dir / "post").strip() == expect.encode()
            request = echo.requests[-1]
            assert (request.header("content-length") == str(len(data))
                    or request.header("transfer-encoding") == "chunked"), request.headers
