"""HTTP/2 request bodies are flow-controlled by what the handler takes: a client that
opens many streams with large bodies to PHP requests queued behind a busy pool (max_conns
1, a slow script) is held at its flow-control windows, so the worker's memory stays
bounded instead of growing by every queued body (before, nghttp2 reopened the windows as
bytes arrived and the queued FastCGI requests buffered whole bodies)."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from harness import Scalwsd, wait_until
from php_fpm import PhpFpm

H2LOAD = shutil.which("h2load") or "/usr/bin/h2load"

SITE = """
[server]
workers = 1
body_timeout = "30s"
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[route]]
match = { suffix = ".php" }
php = { pool = "main", root = "%s" }
policy = { max_body = "100m" }
[php_pool.main]
address = "%s"
max_conns = 1
queue_timeout = "60s"
"""

STREAMS = 24
BODY_MIB = 8


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


@pytest.fixture(scope="module")
def fpm():
    f = PhpFpm(children=2)
    yield f
    f.stop()


def test_queued_request_bodies_do_not_grow_the_worker(fpm):
    body_dir = tempfile.mkdtemp(prefix="scalws-h2body-")
    body = os.path.join(body_dir, "body")
    with open(body, "wb") as f:
        f.write(b"b" * (BODY_MIB << 20))
    try:
        with Scalwsd(SITE % (fpm.www, fpm.address)) as s:
            (worker,) = s.workers()
            before = rss_kib(worker)
            # One stream runs the slow script on the pool's only connection; the others wait
            # in the queue with their bodies paused.
            load = subprocess.Popen(
                [H2LOAD, "-n", str(STREAMS), "-c", "1", "-m", str(STREAMS), "-d", body,
                 "http://127.0.0.1:%d/sleep.php?s=20" % s.port],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                # Give an unbounded worker time to take in every body (hundreds of MiB at
                # loopback speed), then look.
                time.sleep(4)
                grown_kib = rss_kib(worker) - before
                print("worker RSS grew by %d KiB" % grown_kib)
            finally:
                load.send_signal(signal.SIGKILL)
                load.wait()
            total_mib = STREAMS * BODY_MIB
            # Held back: at most the connection window (1 MiB) unconsumed, plus the FastCGI
            # send buffer of the running request and the loop's buffers.
            assert grown_kib < 24 * 1024, (
                "worker grew by %d KiB while %d MiB of bodies were offered" % (grown_kib,
                                                                             total_mib))
            # The worker still serves, and lets go of the aborted requests.
            wait_until(lambda: s.workers() == [worker], what="the worker to stay")
    finally:
        shutil.rmtree(body_dir, ignore_errors=True)
