"""The controller may die, the sites may not: kill -9 of the controller under load loses no
request, and a new controller re-attaches to the workers (and still supervises them)."""
import os
import signal
import time

from controller_harness import (STAND_IN, Controller, Load, alive, http_get, site_config,
                                unique_name, wait_until, workers_of)
from harness import fd_count, free_port


def test_kill9_of_the_controller_under_load_answers_every_request_and_reattaches():
    port = free_port()
    name = unique_name("survive")
    first = Controller()
    first.start()
    try:
        first.add(name, site_config(port, "still here\n"), "--cpus", "2")
        first.ctl("instance", "start", name)
        pids = workers_of(name)
        assert len(pids) == 2
        with Load(port, threads=6) as load:
            load.wait_for(200)
            first.kill9()
            load.wait_for(300)  # nobody supervises now; the site answers all the same
            assert workers_of(name) == pids
            with Controller(first.dir) as second:
                second.instances.add(name)
                wait_until(lambda: second.ready_pids(name) == pids, 5,
                           what="the new controller to list the same workers")
                load.wait_for(200)
                show = second.show(name)
                assert show["status"] == "running"
                assert all(p["attached"] for p in show["processes"]), show["processes"]
                # Taken at start() it may have caught a re-attach half-way (a worker's new
                # log pipe not yet made): the baseline is the count with both attached.
                second.take_fd_baseline()
                assert sum(e["kind"] == "worker.attached" for e in show["events"]) == 2
                # Re-attached for real: it still reloads them ...
                second.set_config(name, site_config(port, "reloaded\n"))
                second.ctl("instance", "reload", name)
                wait_until(lambda: b"reloaded\n" in load.bodies, 5, what="the new body")
                # ... and replaces one that dies, from the same listeners (copied from the
                # worker through its pidfd), so the site keeps answering.
                os.kill(pids[0], signal.SIGKILL)
                wait_until(lambda: (lambda r: len(r) == 2 and pids[0] not in r)(
                    second.ready_pids(name)), 3, what="a replacement")
                load.wait_for(100)
                load.stop()
                # Its baseline was taken with both workers attached: same count now.
                second.assert_no_fd_leak()
        assert load.ok > 500
        # The worker killed on purpose above may have taken requests in flight with it;
        # before that, while the controller was dead and came back, nothing failed.
        assert not [f for f in load.failures if "Refused" in f], load.failures
    finally:
        if first.proc.poll() is None:
            first.kill9()
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)


def test_no_request_fails_while_the_controller_is_killed_and_replaced():
    port = free_port()
    name = unique_name("strict")
    first = Controller()
    first.start()
    try:
        first.add(name, site_config(port), "--cpus", "2", "--mode", "single")
        first.ctl("instance", "start", name)
        with Load(port, threads=6) as load:
            load.wait_for(200)
            for round_ in range(3):  # three generations of controllers, each killed
                first.kill9()
                load.wait_for(100)
                nxt = Controller(first.dir)
                nxt.start()
                nxt.instances.add(name)
                wait_until(lambda: nxt.show(name)["status"] == "running", 5, what="attached")
                load.wait_for(100)
                first = nxt
            load.stop()
        assert load.failures == [], load.failures[:10]
        assert load.ok > 800
    finally:
        first.signal_and_wait(signal.SIGINT)
        assert workers_of(name) == []


def test_sigusr2_leaves_the_sites_serving_and_sigterm_outside_systemd_stops_them():
    port = free_port()
    name = unique_name("leave")
    first = Controller()
    first.start()
    first.add(name, site_config(port))
    first.ctl("instance", "start", name)
    pids = workers_of(name)
    assert first.signal_and_wait(signal.SIGUSR2) == 0
    assert workers_of(name) == pids
    assert http_get(port) == (200, b"hello\n")
    assert not os.path.exists(first.socket)  # the socket went with it
    second = Controller(first.dir)
    second.start()
    second.instances.add(name)
    wait_until(lambda: second.ready_pids(name) == pids, 5, what="re-attach")
    assert second.signal_and_wait(signal.SIGTERM) == 0
    wait_until(lambda: workers_of(name) == [], 5, what="the workers to stop")
    assert "stop the instances" in second.read_log()


def test_a_stale_worker_row_is_forgotten_and_the_instance_started_afresh():
    port = free_port()
    name = unique_name("stale")
    first = Controller()
    first.start()
    first.add(name, site_config(port))
    first.ctl("instance", "start", name)
    [pid] = workers_of(name)
    first.kill9()
    os.kill(pid, signal.SIGKILL)  # the worker dies too while nobody watches
    wait_until(lambda: not alive(pid), 5, what="the worker to die")
    with Controller(first.dir) as second:
        second.instances.add(name)
        wait_until(lambda: (lambda s: s["status"] == "running" and
                   any(p["state"] == "ready" for p in s["processes"]))(second.show(name)), 5,
                   what="a fresh start")
        assert pid not in second.ready_pids(name)
        assert http_get(port) == (200, b"hello\n")


def test_a_worker_that_reports_another_config_on_reattach_is_replaced_from_the_state_db():
    """A hostile worker answers the re-attaching controller with a config whose static root
    is / (and a pool of its choosing). The controller takes config and pools from its DB
    only: the liar is killed, and the worker that replaces it serves the stored config."""
    port = free_port()
    name = unique_name("liar")
    first = Controller(extra_args=["--scalwsd", STAND_IN], env={"SCALWS_STAND_IN": "lie-on-attach"})
    first.start()
    try:
        first.add(name, site_config(port, "the stored config\n"))
        first.ctl("instance", "start", name)
        liars = workers_of(name)
        assert len(liars) == 1
        first.kill9()
        with Controller(first.dir) as second:  # the real scalwsd from now on
            second.instances.add(name)
            wait_until(lambda: not alive(liars[0]), 10, what="the lying worker to be killed")
            wait_until(lambda: second.ready_pids(name) and second.ready_pids(name) != liars, 10,
                       what="a worker started from the state DB")
            show = second.show(name)
            assert show["config"]["listen"] == ["127.0.0.1:%d" % port], show["config"]
            assert [p["name"] for p in show["php_pools"]] == []
            assert not any(p["attached"] for p in show["processes"]), show["processes"]
            assert any(e["kind"] == "worker.refused" for e in show["events"]), show["events"]
            assert http_get(port, "/") == (200, b"the stored config\n")
            assert http_get(port, "/etc/passwd")[1] == b"the stored config\n"
    finally:
        if first.proc.poll() is None:
            first.kill9()
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)
