"""Processes and signals of the real scalwsd: multi mode (worker processes, replaced when
killed) and single mode (one process, loop threads); SIGHUP with a valid and an invalid
config; SIGTERM/SIGINT draining the requests in flight within shutdown_timeout."""
import os
import re
import signal
import time

import pytest

from harness import (Client, Scalwsd, children_of, exchange, get, pid_alive, route, site,
                     thread_count, wait_until)

MODES = ["multi", "single"]


def versioned(body, mode, **server):
    return site([route(body, headers={"content-type": "text/plain"})], mode=mode, workers=2,
                **server)


def served_body(s):
    return get(s.port, "/").body


def test_multi_mode_has_two_worker_processes():
    with Scalwsd(versioned("v1", "multi")) as s:
        kids = wait_until(lambda: len(children_of(s.pid)) == 2 and children_of(s.pid),
                          what="two worker processes")
        assert len(set(kids)) == 2 and s.pid not in kids
        for _ in range(10):
            assert served_body(s) == b"v1"
        s.assert_no_fd_leak()


def test_single_mode_is_one_process_with_two_loop_threads():
    with Scalwsd(versioned("v1", "single")) as s:
        time.sleep(0.2)
        assert children_of(s.pid) == []
        assert thread_count(s.pid) >= 2
        for _ in range(10):
            assert served_body(s) == b"v1"
        s.assert_no_fd_leak()


def test_killed_worker_is_replaced_and_serving_resumes():
    with Scalwsd(versioned("v1", "multi")) as s:
        kids = wait_until(lambda: len(children_of(s.pid)) == 2 and children_of(s.pid))
        victim = kids[0]
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        new = wait_until(lambda: len(children_of(s.pid)) == 2 and victim not in children_of(s.pid)
                         and children_of(s.pid), timeout=2, what="a replacement worker")
        assert kids[1] in new, "the other worker must be left alone"
        assert not pid_alive(victim), "the killed worker was not reaped"
        # Every connection is served again (those hashed to the dead worker's queue too).
        for _ in range(20):
            assert served_body(s) == b"v1"
        assert time.monotonic() - killed_at < 2.5
        # Both at once, twice in a row: still replaced without a crash-loop pause.
        for _ in range(2):
            kids = children_of(s.pid)
            for pid in kids:
                os.kill(pid, signal.SIGKILL)
            wait_until(lambda: len(children_of(s.pid)) == 2 and
                       not set(kids) & set(children_of(s.pid)), timeout=2,
                       what="two replacement workers")
            for _ in range(5):
                assert served_body(s) == b"v1"
        s.assert_no_fd_leak()


@pytest.mark.parametrize("mode", MODES)
def test_sighup_with_a_valid_config_applies_to_new_connections(mode):
    with Scalwsd(versioned("v1", mode)) as s:
        old_workers = sorted(s.workers())
        assert served_body(s) == b"v1"
        # A request in flight across the reload: half its head is sent before it.
        inflight = Client(s.port, timeout=5)
        inflight.send(b"GET /inflight HTTP/1.1\r\nHost: localhost\r\n")
        time.sleep(0.1)
        s.write_config(versioned("v2", mode))
        s.signal(signal.SIGHUP)
        wait_until(lambda: served_body(s) == b"v2", timeout=5, what="the new config to serve")
        for _ in range(10):
            assert served_body(s) == b"v2"
        inflight.send(b"\r\n")
        resp = inflight.read_response()
        assert resp.status == 200
        assert resp.body == b"v1", "the request in flight must finish on the old config"
        inflight.close()
        if mode == "multi":
            new_workers = wait_until(lambda: len(children_of(s.pid)) == 2 and
                                     not set(old_workers) & set(children_of(s.pid)) and
                                     children_of(s.pid), timeout=3, what="a new generation")
            # The old generation drains and goes away once its connection is done.
            wait_until(lambda: not any(pid_alive(p) for p in old_workers), timeout=3,
                       what="the old workers to exit")
            assert len(new_workers) == 2
            s.baseline = s.settled_fd_snapshot()
        else:
            assert children_of(s.pid) == []
        assert "reloaded" in s.read_log()
        s.assert_no_fd_leak()


@pytest.mark.parametrize("mode", MODES)
def test_sighup_with_an_invalid_config_keeps_the_old_one(mode):
    with Scalwsd(versioned("v1", mode)) as s:
        workers = sorted(s.workers())
        broken = versioned("v2", mode).replace("[server]\n", "[server]\nno_such_key = 1\n")
        broken = broken.replace('body = "v2"', 'body = 42')
        s.write_config(broken)
        lines = open(s.config_path).read().splitlines()
        key_line = next(i for i, l in enumerate(lines, 1) if l.startswith("no_such_key"))
        body_line = next(i for i, l in enumerate(lines, 1) if "body = 42" in l)
        s.signal(signal.SIGHUP)
        log = wait_until(lambda: "no_such_key" in s.read_log() and s.read_log(), timeout=5,
                         what="the reload errors in the log")
        name = re.escape(os.path.basename(s.config_path))
        assert re.search(r"%s:%d:\d+: .*no_such_key" % (name, key_line), log), log
        wait_until(lambda: re.search(r"%s:%d:\d+: .*body" % (name, body_line), s.read_log()),
                   timeout=2, what="the second error (every error, not only the first)")
        for _ in range(10):
            assert served_body(s) == b"v1"
        assert sorted(s.workers()) == workers, "the running workers must stay"
        # A valid config afterwards still reloads.
        s.write_config(versioned("v3", mode))
        s.signal(signal.SIGHUP)
        wait_until(lambda: served_body(s) == b"v3", timeout=5, what="v3 to serve")
        if mode == "multi":
            wait_until(lambda: not any(pid_alive(p) for p in workers), timeout=3)
            s.baseline = s.settled_fd_snapshot()
        s.assert_no_fd_leak()


def test_sighup_can_change_the_worker_count_in_multi_mode():
    with Scalwsd(versioned("v1", "multi")) as s:
        wait_until(lambda: len(children_of(s.pid)) == 2)
        s.write_config(versioned("v2", "multi").replace("workers = 2", "workers = 3"))
        s.signal(signal.SIGHUP)
        wait_until(lambda: served_body(s) == b"v2", timeout=5, what="v2 to serve")
        wait_until(lambda: len(children_of(s.pid)) == 3, timeout=3, what="three workers")
        for _ in range(20):
            assert served_body(s) == b"v2"


def stopped_within(s, seconds):
    """Waits for the server to exit; returns (exit code, seconds it took)."""
    start = time.monotonic()
    try:
        code = s.proc.wait(seconds)
    except Exception:
        raise AssertionError("scalwsd still running %.1fs after the signal" % seconds)
    return code, time.monotonic() - start


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_lets_a_request_in_flight_finish(mode):
    with Scalwsd(versioned("v1", mode, shutdown_timeout="10s")) as s:
        workers = s.workers()
        with Client(s.port) as c:
            c.send(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            time.sleep(0.1)
            s.signal(signal.SIGTERM)
            time.sleep(0.5)
            assert s.proc.poll() is None, "exited with a request in flight"
            c.send(b"yes\r\n\r\n")
            resp = c.read_response()
            assert (resp.status, resp.body) == (200, b"v1")
            assert resp.header("connection").lower() == "close"
            assert c.read_until_close() == (b"", "eof")
        code, took = stopped_within(s, 3)
        assert code == 0
        assert not any(pid_alive(p) for p in workers if p != s.pid), "workers left behind"


@pytest.mark.parametrize("mode", MODES)
def test_a_connection_opened_before_sigterm_still_gets_its_first_request_served(mode):
    # A client that connected just before the drain began is about to send its request;
    # closing it then would lose (or reset) a request the client expects to be answered.
    with Scalwsd(versioned("v1", mode, shutdown_timeout="10s")) as s:
        with Client(s.port) as c:
            time.sleep(0.3)  # accepted by a worker, nothing sent yet
            s.signal(signal.SIGTERM)
            time.sleep(0.5)
            c.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            resp = c.read_response()
            assert (resp.status, resp.body) == (200, b"v1")
            assert resp.header("connection").lower() == "close"
            assert c.read_until_close() == (b"", "eof")
        code, took = stopped_within(s, 3)
        assert code == 0


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_waits_for_a_slow_request_body(mode):
    with Scalwsd(versioned("v1", mode, shutdown_timeout="10s")) as s:
        with Client(s.port) as c:
            c.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n01234")
            resp = c.read_response()
            assert resp.status == 200
            s.signal(signal.SIGTERM)
            time.sleep(0.5)
            assert s.proc.poll() is None, "exited while a request body was still arriving"
            c.send(b"56789")
            data, how = c.read_until_close()
            assert (data, how) == (b"", "eof")
        code, took = stopped_within(s, 3)
        assert code == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_closes_idle_connections_and_exits_at_once(mode, signum):
    with Scalwsd(versioned("v1", mode, shutdown_timeout="10s")) as s:
        workers = s.workers()
        clients = [Client(s.port) for _ in range(4)]
        for c in clients:
            c.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert c.read_response().body == b"v1"
        s.signal(signum)
        for c in clients:
            assert c.read_until_close(timeout=3) == (b"", "eof")
            c.close()
        code, took = stopped_within(s, 3)
        assert code == 0
        assert took < 2, "idle keep-alive connections must not hold the shutdown"
        assert not any(pid_alive(p) for p in workers if p != s.pid), "workers left behind"


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_gives_up_on_a_stuck_request_after_shutdown_timeout(mode):
    with Scalwsd(versioned("v1", mode, shutdown_timeout="1s")) as s:
        with Client(s.port, timeout=8) as c:
            c.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n")  # never finished
            time.sleep(0.1)
            start = time.monotonic()
            s.signal(signal.SIGTERM)
            code, took = stopped_within(s, 6)
            assert code == 0
            assert 0.7 <= took <= 3.5, "exit %.2fs after SIGTERM with shutdown_timeout 1s" % took
            data, how = c.read_until_close(timeout=2)
            assert how in ("eof", "reset"), how


def cpus_allowed(pid, tid=None):
    """Cpus_allowed_list of a process, or of one of its threads."""
    path = "/proc/%d/status" % pid if tid is None else "/proc/%d/task/%s/status" % (pid, tid)
    with open(path) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return None


def two_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    return cpus[:2]


@pytest.mark.parametrize("seccomp_action", ["errno", "kill"])
def test_multi_mode_binds_each_sandboxed_worker_to_its_cpu(seccomp_action):
    # The sandbox refuses sched_setaffinity (a worker must not move itself to CPUs it was
    # not given), so the binding happens before it; "kill" would kill a worker that tried
    # afterwards.
    a, b = two_cpus()
    with Scalwsd(versioned("v1", "multi", cpus=[a, b], seccomp_action=seccomp_action)) as s:
        kids = wait_until(lambda: len(children_of(s.pid)) == 2 and children_of(s.pid),
                          what="two worker processes")
        for _ in range(10):
            assert served_body(s) == b"v1"
        assert sorted(cpus_allowed(k) for k in kids) == sorted([str(a), str(b)])
        assert sorted(children_of(s.pid)) == sorted(kids), "a worker died"
        assert "cannot" not in s.read_log() and "runs on any CPU" not in s.read_log()


def test_single_mode_binds_the_sandboxed_process_and_its_loop_threads():
    _, b = two_cpus()
    with Scalwsd(versioned("v1", "single", cpus=[b], seccomp_action="kill")) as s:
        wait_until(lambda: thread_count(s.pid) >= 2, what="two loop threads")
        for _ in range(10):
            assert served_body(s) == b"v1"
        tasks = os.listdir("/proc/%d/task" % s.pid)
        assert tasks and all(cpus_allowed(s.pid, t) == str(b) for t in tasks)


def test_single_mode_without_the_sandbox_pins_each_loop_thread():
    a, b = two_cpus()
    with Scalwsd(versioned("v1", "single", cpus=[a, b], sandbox=False)) as s:
        wait_until(lambda: thread_count(s.pid) >= 2, what="two loop threads")
        for _ in range(4):
            assert served_body(s) == b"v1"
        tasks = os.listdir("/proc/%d/task" % s.pid)
        pinned = sorted(cpus_allowed(s.pid, t) for t in tasks)
        assert str(a) in pinned and str(b) in pinned, pinned
