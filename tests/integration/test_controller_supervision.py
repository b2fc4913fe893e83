"""Supervision: a worker killed with SIGKILL is replaced (and its accept queue kept, so the
site answers again within 2 s); a crash loop marks the instance failed with the reason."""
import os
import signal
import time

from controller_harness import (Controller, Load, alive, http_get, site_config, unique_name,
                                wait_until, workers_of)
from harness import free_port


def serving_again_after_kill(c, name, port, victim):
    """Kills `victim`, returns the seconds until the instance lists a new ready worker in
    its place and answers."""
    before = set(c.ready_pids(name))
    t0 = time.monotonic()
    os.kill(victim, signal.SIGKILL)

    def replaced():
        pids = set(c.ready_pids(name))
        return victim not in pids and len(pids) == len(before)
    wait_until(replaced, 5, what="a replacement worker")
    assert http_get(port) == (200, b"hello\n")
    return time.monotonic() - t0


def test_a_killed_multi_worker_is_replaced_within_two_seconds():
    port = free_port()
    name = unique_name("kill")
    with Controller() as c:
        c.add(name, site_config(port), "--cpus", "2")
        c.ctl("instance", "start", name)
        first = c.ready_pids(name)
        elapsed = serving_again_after_kill(c, name, port, first[0])
        assert elapsed < 2.0, "took %.2fs" % elapsed
        show = c.show(name)
        assert show["status"] == "running"
        slot = [p for p in show["processes"] if p["pid"] not in first][0]
        assert slot["restarts"] == 1
        exits = [e for e in show["events"] if e["kind"] == "worker.exited"]
        assert exits and "killed by signal 9" in exits[0]["message"]
        assert "restarting in 100 ms" in exits[0]["message"]
        assert workers_of(name) == c.ready_pids(name)
        c.assert_no_fd_leak(extra=2 * 4 + 2)  # and the instance's two log files


def test_a_killed_single_worker_loses_no_queued_connection():
    """The only process dies; the controller still holds the listeners, so connections
    made while no worker runs wait in the queue and are answered by the replacement."""
    port = free_port()
    name = unique_name("single")
    with Controller() as c:
        c.add(name, site_config(port), "--cpus", "2", "--mode", "single")
        c.ctl("instance", "start", name)
        [victim] = c.ready_pids(name)
        with Load(port, threads=4) as load:
            load.wait_for(50)
            elapsed = serving_again_after_kill(c, name, port, victim)
            load.wait_for(50)
        assert elapsed < 2.0, "took %.2fs" % elapsed
        # Requests in flight on the killed process may fail (their connection died with it);
        # none may be refused: nothing was ever without a listening socket.
        refused = [f for f in load.failures if "ConnectionRefused" in f]
        assert not refused, refused
        assert load.ok > 100


def test_a_crash_loop_marks_the_instance_failed_with_the_reason():
    port = free_port()
    name = unique_name("loop")
    with Controller(extra_args=["--crash-limit", "3", "--crash-window", "60"]) as c:
        c.add(name, site_config(port))
        c.ctl("instance", "start", name)
        for _ in range(2):
            [victim] = c.ready_pids(name)
            os.kill(victim, signal.SIGKILL)
            wait_until(lambda: [p for p in c.ready_pids(name) if p != victim], 5,
                       what="the replacement")
        [victim] = c.ready_pids(name)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: c.show(name)["status"] == "failed", 5, what="failed")
        show = c.show(name)
        assert "3 crashes within 60 s" in show["reason"], show["reason"]
        assert "killed by signal 9" in show["reason"]
        assert show["processes"] == []
        assert workers_of(name) == []
        kinds = [e["kind"] for e in show["events"]]
        assert kinds.count("worker.exited") == 3
        assert any(e["kind"] == "instance.status" and e["message"].startswith("failed")
                   for e in show["events"])
        listing = c.ctl("instance", "list").stdout
        assert "failed" in listing and "crashes" in listing
        # An operator start brings it back with a fresh crash count.
        c.ctl("instance", "start", name)
        assert http_get(port) == (200, b"hello\n")
        assert c.show(name)["status"] == "running"


def test_stop_is_graceful_for_requests_in_flight():
    """A keep-alive client mid-conversation gets its answer; then the listener closes."""
    port = free_port()
    name = unique_name("grace")
    with Controller() as c:
        c.add(name, site_config(port))
        c.ctl("instance", "start", name)
        pids = workers_of(name)
        with Load(port, threads=4) as load:
            load.wait_for(100)
            c.ctl("instance", "stop", name)
            time.sleep(0.2)
        assert not any(alive(p) for p in pids)
        # Only connection-level failures after the stop, never a broken answer.
        broken = [f for f in load.failures if "IncompleteRead" in f or "BadStatusLine" in f]
        assert not broken, broken
