"""Bodies stream through the proxy with back-pressure: a 1 GiB answer from nginx to a client
that reads slowly, then fast, with the worker's resident memory sampled all along (it must
stay within a few MiB of where it started, whatever the body size); the same over h2c; and
an upload larger than any buffer, whose bytes reach the upstream whole."""
import hashlib
import os
import subprocess
import tempfile
import threading
import time

import pytest

from harness import Client, Scalwsd, curl
from upstreams import NginxUpstream, RawUpstream, answer

GIB = 1 << 30
RSS_SLACK = 24 * 1024 * 1024  # per-request buffers are bounded well below this

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[route]]
match = { exact = "/upload" }
proxy = { upstream = "sink" }
policy = { max_body = "2g" }
[[route]]
proxy = { upstream = "files" }
[upstream.files]
servers = ["127.0.0.1:@NGINX@"]
[upstream.sink]
servers = ["127.0.0.1:@SINK@"]
"""


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class RssSampler:
    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop:
            self.peak = max(self.peak, rss(self.pid))
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()
        return False


@pytest.fixture(scope="module")
def files():
    www = tempfile.mkdtemp(prefix="scalws-big-")
    os.chmod(www, 0o755)
    path = os.path.join(www, "1g.bin")
    with open(path, "wb") as f:
        f.truncate(GIB)  # sparse: zeros from the page cache, no disk written
    os.chmod(path, 0o644)
    n = NginxUpstream("location /1g.bin { root %s; }" % www)
    yield n
    n.stop()
    os.remove(path)
    os.rmdir(www)


@pytest.fixture(scope="module")
def sink():
    def script(request, conn):
        return answer(200, "%d %s" % (len(request.body), hashlib.sha256(request.body).hexdigest()))
    with RawUpstream(script) as u:
        yield u


@pytest.fixture(scope="module")
def server(files, sink):
    with Scalwsd(SITE.replace("@NGINX@", str(files.port)).replace("@SINK@", str(sink.port))) as s:
        yield s


def test_1gib_to_a_slow_then_fast_client_with_rss_bounded(server):
    worker = server.workers()[0]
    with Client(server.port, timeout=30, rcvbuf=64 * 1024) as c:
        baseline = rss(worker)
        c.send(b"GET /1g.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while b"\r\n\r\n" not in first:
            first += c.sock.recv(64 * 1024)
        head, _, body = first.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"Content-Length: %d" % GIB in head, head
        got = len(body)
        with RssSampler(worker) as sampler:
            # Slowly: 64 KiB every 10 ms for 3 s (about 20 MiB); the upstream waits meanwhile.
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                data = c.sock.recv(64 * 1024)
                assert data
                got += len(data)
                time.sleep(0.01)
            slow_peak = sampler.peak
            assert got < GIB // 4  # the client set the pace, not the upstream
            # Then as fast as it comes.
            while got < GIB:
                data = c.sock.recv(1 << 20)
                assert data, "the connection ended after %d of %d bytes" % (got, GIB)
                got += len(data)
        assert got == GIB
        assert slow_peak - baseline < RSS_SLACK, (baseline, slow_peak)
        assert sampler.peak - baseline < RSS_SLACK, (baseline, sampler.peak)


def test_1gib_over_h2c_with_rss_bounded(server):
    worker = server.workers()[0]
    baseline = rss(worker)
    with RssSampler(worker) as sampler:
        code, out, err = curl("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{size_download} %{http_code}",
                              "http://127.0.0.1:%d/1g.bin" % server.port, timeout=120)
    assert code == 0, err
    assert out == b"%d 200" % GIB
    assert sampler.peak - baseline < RSS_SLACK, (baseline, sampler.peak)


@pytest.mark.parametrize("http2", [False, True])
def test_large_upload_reaches_the_upstream_whole(server, http2, tmp_path):
    data = os.urandom(64 * 1024 * 1024 + 11)
    path = tmp_path / "up.bin"
    path.write_bytes(data)
    worker = server.workers()[0]
    baseline = rss(worker)
    opts = ["--http2-prior-knowledge"] if http2 else []
    with RssSampler(worker) as sampler:
        code, out, err = curl(*opts, "--data-binary", "@%s" % path, "-H", "Expect:",
                              "http://127.0.0.1:%d/upload" % server.port, timeout=120)
    assert code == 0, err
    assert out.decode() == "%d %s" % (len(data), hashlib.sha256(data).hexdigest())
    # The client is paused while the upstream is behind: HTTP/1.1 stops reading, HTTP/2
    # stops reopening the stream's window.
    assert sampler.peak - baseline < RSS_SLACK, (baseline, sampler.peak)
