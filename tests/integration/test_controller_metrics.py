"""Per-instance metrics with the real controller, scalwsctl and workers: requests
of known kinds are counted exactly and split by class and action once the next snapshot
arrived; latency percentiles land within one bucket of a known delay (a FastCGI pool that
answers after a fixed sleep); a worker killed with SIGKILL never makes totals go
backwards; 10 s rows reach the DB and answer `--since 1h` across a controller restart.

Every wait polls `instance metrics --json` (workers report once a second); nothing sleeps
blindly."""
import os
import shutil
import signal
import socket
import sqlite3
import struct
import tempfile
import threading
import time

from controller_harness import Controller, http_get, unique_name, wait_until, workers_of
from harness import free_port

SITE = """\
[[listen]]
address = "127.0.0.1:{port}"
[[route]]
match = {{ exact = "/missing" }}
respond = {{ status = 404, body = "no\\n" }}
[[route]]
match = {{ prefix = "/static/" }}
static = {{ root = "{root}", open_file_cache = "check" }}
[[route]]
match = {{ suffix = ".php" }}
php = {{ pool = "slow", root = "{root}" }}
[[route]]
respond = {{ body = "hello\\n" }}
"""


def latency_bounds():
    """Upper bounds (µs) of the worker's half-octave buckets (common/metrics)."""
    return [round(2 ** (i / 2)) for i in range(53)] + [2 ** 64 - 1]


def bucket_of(us):
    return next(i for i, b in enumerate(latency_bounds()) if b >= us)


class SlowFastCgi:
    """A FastCGI responder on 127.0.0.1 that answers every request `delay` seconds after
    its empty STDIN record, keeping connections when the worker asks (FCGI_KEEP_CONN)."""

    def __init__(self, delay):
        self.delay = delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self._stop = True
        self.sock.close()

    def _accept(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    @staticmethod
    def _record(kind, request_id, content):
        return struct.pack(">BBHHBx", 1, kind, request_id, len(content), 0) + content

    def _serve(self, conn):
        keep = {}
        try:
            while True:
                _, kind, rid, length, padding = struct.unpack(">BBHHBx", self._read(conn, 8))
                body = self._read(conn, length + padding)[:length]
                if kind == 1:  # BEGIN_REQUEST: role, flags
                    keep[rid] = bool(body[2] & 1)
                elif kind == 5 and length == 0:  # the end of STDIN: answer
                    time.sleep(self.delay)
                    out = b"Content-Type: text/plain\r\n\r\nslow\n"
                    conn.sendall(self._record(6, rid, out) + self._record(6, rid, b"") +
                                 self._record(3, rid, struct.pack(">IBxxx", 0, 0)))
                    if not keep.pop(rid, False):
                        return
        except (EOFError, OSError):
            pass
        finally:
            conn.close()


class Site:
    """A docroot (readable by the workers' user) and the instance config around it."""

    def __init__(self, fcgi_port=1, max_conns=4):
        self.port = free_port()
        self.root = tempfile.mkdtemp(prefix="scalws-metrics-")
        os.chmod(self.root, 0o755)
        os.mkdir(os.path.join(self.root, "static"))
        os.chmod(os.path.join(self.root, "static"), 0o755)
        for path, text in (("static/a.txt", "static file\n"), ("slow.php", "<?php\n")):
            with open(os.path.join(self.root, path), "w") as f:
                f.write(text)
            os.chmod(os.path.join(self.root, path), 0o644)
        self.config = SITE.format(port=self.port, root=self.root)
        self.fcgi_port = fcgi_port
        self.max_conns = max_conns

    def add_to(self, c, name, *args):
        """The instance, and the FastCGI pool its php route calls "slow" (pools are the
        controller's: registered and assigned with scalwsctl)."""
        c.add(name, self.config, *args)
        pool = name + "-pool"
        c.ctl("pool", "add", pool, "--address", "tcp:127.0.0.1:%d" % self.fcgi_port,
              "--max-conns", str(self.max_conns))
        c.ctl("pool", "assign", pool, name, "--as", "slow")

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def metrics(c, name, *args):
    return c.ctl_json("instance", "metrics", name, *args)


def wait_for_requests(c, name, n, *args, timeout=10):
    """Polls until the window counts at least n requests; returns that answer."""
    got = {}

    def enough():
        got["m"] = metrics(c, name, *args)
        return got["m"]["window"]["requests"] >= n
    wait_until(enough, timeout, interval=0.1, what="%d requests in the metrics" % n)
    return got["m"]


def get(port, path):
    return http_get(port, path)[0]


def test_known_requests_are_counted_exactly_and_split_by_class_and_action():
    name = unique_name("count")
    site = Site()
    try:
        with Controller() as c:
            site.add_to(c, name)
            c.ctl("instance", "start", name)
            assert [get(site.port, "/") for _ in range(30)] == [200] * 30
            assert [get(site.port, "/missing") for _ in range(10)] == [404] * 10
            assert [get(site.port, "/static/a.txt") for _ in range(5)] == [200] * 5
            m = wait_for_requests(c, name, 45)
            w = m["window"]
            assert w["requests"] == 45, w
            assert w["by_class"] == {"1xx": 0, "2xx": 35, "3xx": 0, "4xx": 10, "5xx": 0}
            assert w["by_action"]["respond"] == 40
            assert w["by_action"]["static"] == 5
            assert sum(w["by_action"].values()) == 45
            assert w["error_rate"] == {"4xx": round(10 / 45, 4), "5xx": 0.0}
            assert w["connections"]["accepted"] == 45
            cache = w["open_file_cache"]
            assert cache["hits"] + cache["misses"] == 5 and cache["misses"] >= 1, cache
            assert w["bytes_in"] > 45 * 20 and w["bytes_out"] > 45 * 40
            assert 0 < w["latency_us"]["p50"] <= w["latency_us"]["p90"] <= w["latency_us"]["p99"]
            # Fast answers: the median well under 50 ms even on a loaded machine.
            assert w["latency_us"]["p50"] <= 50_000
            assert w["rss_bytes"] > 0 and w["cpu_percent"] >= 0
            assert m["status"] == "running" and m["reporting"] == 1 and m["processes"] == 1
            assert 0 < m["now"]["requests"] <= 45
            # Nothing more arrives on its own: a later answer says the same.
            time.sleep(1.2)
            assert metrics(c, name)["window"]["requests"] == 45
            # The human views.
            text = c.ctl("instance", "metrics", name, "--since", "1h").stdout
            assert "LAST 1h" in text and "2xx 35, 4xx 10" in text, text
            assert "respond 40, static 5" in text, text
            assert "upper bounds" in text
            status = c.ctl_json("status")
            [line] = [l for l in status["instance_metrics"] if l["name"] == name]
            assert line["status"] == "running"
            assert name in c.ctl("status").stdout.split("INSTANCE", 1)[1]
            bad = c.ctl("instance", "metrics", name, "--since", "1y", check=False)
            assert bad.returncode == 2
            missing = c.ctl("instance", "metrics", "nosuch", check=False)
            assert missing.returncode == 1 and "nosuch" in missing.stderr
    finally:
        site.cleanup()


def test_latency_percentiles_land_within_one_bucket_of_a_known_delay():
    delay_us = 60_000
    pool = SlowFastCgi(delay_us / 1e6)
    name = unique_name("slow")
    site = Site(fcgi_port=pool.port, max_conns=1)
    try:
        with Controller() as c:
            site.add_to(c, name)
            c.ctl("instance", "start", name)
            for _ in range(10):
                status, body = http_get(site.port, "/slow.php")
                assert (status, body) == (200, b"slow\n")
            w = wait_for_requests(c, name, 10)["window"]
            assert w["requests"] == 10 and w["by_action"]["php"] == 10
            b = bucket_of(delay_us)
            allowed = latency_bounds()[b:b + 2]  # its bucket, or the next one
            for p in ("p50", "p90", "p99"):
                assert w["latency_us"][p] in allowed, (p, w["latency_us"], allowed)
            assert delay_us <= w["latency_us"]["mean"] < delay_us * 1.5
            # One pool connection (max_conns = 1), kept: 1 connect, 9 reuses, no wait.
            php = w["php"]
            assert php["connects"] + php["reuses"] == 10, php
            assert php["connects"] == pool.connections == 1, php
            assert php["waits"] == 0
            # Three at once on one connection: two queue, for one and two delays.
            threads = [threading.Thread(target=get, args=(site.port, "/slow.php"))
                       for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            php = wait_for_requests(c, name, 13)["window"]["php"]
            assert php["waits"] == 2, php
            assert delay_us <= php["wait_mean_us"] < 2 * delay_us * 1.5, php
    finally:
        pool.close()
        site.cleanup()


def test_killing_a_worker_never_makes_totals_go_backwards():
    name = unique_name("kill")
    site = Site()
    mport = free_port()
    try:
        with Controller(extra_args=["--metrics-listen", "127.0.0.1:%d" % mport]) as c:
            site.add_to(c, name, "--cpus", "2")
            c.ctl("instance", "start", name)
            for _ in range(40):
                assert get(site.port, "/") == 200
            assert wait_for_requests(c, name, 40)["window"]["requests"] == 40
            assert metrics(c, name)["reporting"] == 2
            victim = c.ready_pids(name)[0]
            os.kill(victim, signal.SIGKILL)
            seen = []
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                seen.append(metrics(c, name)["window"]["requests"])
            assert seen and min(seen) == 40, seen
            wait_until(lambda: len(c.ready_pids(name)) == 2 and victim not in c.ready_pids(name),
                       5, what="the replacement")
            for _ in range(20):
                assert get(site.port, "/") == 200
            m = wait_for_requests(c, name, 60)
            assert m["window"]["requests"] == 60
            assert m["window"]["by_class"]["2xx"] == 60
            wait_until(lambda: metrics(c, name)["reporting"] == 2, 5, what="both reporting")
            assert victim not in workers_of(name)
    finally:
        site.cleanup()


def test_rollups_reach_the_db_and_answer_a_long_window_after_a_controller_restart():
    name = unique_name("roll")
    site = Site()
    first = Controller()
    first.start()
    try:
        site.add_to(first, name)
        first.ctl("instance", "start", name)
        for _ in range(12):
            assert get(site.port, "/") == 200
        for _ in range(3):
            assert get(site.port, "/missing") == 404
        wait_for_requests(first, name, 15)
        db = os.path.join(first.state_dir, "state.db")

        def rows():
            with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as conn:
                return conn.execute(
                    "SELECT COALESCE(SUM(req_2xx), 0), COALESCE(SUM(req_4xx), 0), COUNT(*) "
                    "FROM metrics_10s WHERE instance = ?", (name,)).fetchone()
        # A 10 s row holds them once the boundary after them passed.
        wait_until(lambda: rows()[:2] == (12, 3), 15, interval=0.2, what="the 10 s rows")
        # The controller leaves (the worker keeps serving); a new one re-attaches it.
        assert first.signal_and_wait(signal.SIGUSR2) == 0
        with Controller(first.dir) as second:
            second.instances.add(name)
            wait_until(lambda: len(second.ready_pids(name)) == 1, 5, what="the re-attach")
            wait_until(lambda: metrics(second, name)["reporting"] == 1, 5,
                       what="the worker's figures")
            # History from the DB rows, not counted twice from the worker's own totals.
            w = metrics(second, name, "--since", "1h")["window"]
            assert w["requests"] == 15 and w["by_class"]["4xx"] == 3, w
            assert get(site.port, "/") == 200
            w = wait_for_requests(second, name, 16, "--since", "1h")["window"]
            assert w["requests"] == 16, w
            assert metrics(second, name, "--since", "7d")["window"]["requests"] == 16
    finally:
        if first.proc.poll() is None:
            first.kill9()
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)
        site.cleanup()
