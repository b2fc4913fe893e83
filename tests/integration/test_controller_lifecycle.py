"""The controller runs instances: add, start, serve, stop, remove, in both modes, with the
process tree, CPU pinning and user checked, and no fd leaked in the controller."""
import os
import pwd
import signal
import subprocess

from controller_harness import (CONTROLLER, Controller, alive, http_get, instance_user,
                                proc_status, site_config, unique_name, wait_until, workers_of)
from harness import curl, free_port


def threads_of(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def test_multi_instance_add_start_serve_stop_remove():
    port = free_port()
    name = unique_name("multi")
    with Controller() as c:
        added = c.add(name, site_config(port, "multi says hi\n"), "--cpus", "2")
        assert "stopped" in added.stdout
        assert workers_of(name) == []

        c.ctl("instance", "start", name)
        code, body, err = curl("-sS", "http://127.0.0.1:%d/anything" % port)
        assert code == 0, err
        assert body == b"multi says hi\n"
        assert http_get(port, "/health") == (200, b"ok\n")

        # multi: one process per assigned CPU, each pinned to its own, all as the
        # instance's own user.
        show = c.show(name)
        assert show["status"] == "running" and show["desired"] == "running"
        assert show["assigned_cpus"] == "0-1"
        pids = [p["pid"] for p in show["processes"]]
        assert sorted(pids) == workers_of(name)
        assert len(pids) == 2
        cpus = sorted(proc_status(pid)["Cpus_allowed_list"] for pid in pids)
        assert cpus == ["0", "1"]
        for pid in pids:
            status = proc_status(pid)
            assert status["Uid"].split()[0] == str(pwd.getpwnam(instance_user(name)).pw_uid)
            assert status["NoNewPrivs"] == "1"
            assert status["Seccomp"] == "2"
            assert threads_of(pid) == 1
            # A session of its own: Ctrl-C on the controller's terminal never reaches it.
            assert os.getsid(pid) == pid
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                assert f.read().split(b"\0")[1:3] == [b"--instance", name.encode()]

        cpu_list = c.ctl_json("cpu", "list")["cpus"]
        assert [x["exclusive"] for x in cpu_list] == [name, name]
        status = c.ctl_json("status")
        assert status["instances"]["running"] == 1 and status["processes"] == 2
        # channel, pidfd, log pipe, one listener each; the instance's two log files
        c.assert_no_fd_leak(extra=2 * 4 + 2)

        stopped = c.ctl("instance", "stop", name)
        assert "stopped" in stopped.stdout
        wait_until(lambda: not any(alive(p) for p in pids), 5, what="the workers to exit")
        assert workers_of(name) == []
        assert curl("-sS", "http://127.0.0.1:%d/" % port, timeout=2)[0] != 0  # nothing listens
        assert c.show(name)["desired"] == "stopped"

        c.ctl("instance", "remove", name)
        assert c.ctl_json("instance", "list")["instances"] == []
        assert [x["exclusive"] for x in c.ctl_json("cpu", "list")["cpus"]] == ["", ""]
        c.assert_no_fd_leak()


def test_single_instance_runs_one_process_with_a_loop_per_cpu():
    port = free_port()
    name = unique_name("single")
    with Controller() as c:
        c.add(name, site_config(port, "single\n"), "--cpus", "2", "--mode", "single")
        c.ctl("instance", "start", name)
        pids = workers_of(name)
        assert len(pids) == 1
        pid = pids[0]
        assert proc_status(pid)["Cpus_allowed_list"] == "0-1"
        assert threads_of(pid) == 2  # one loop per CPU
        assert proc_status(pid)["Uid"].split()[0] == str(pwd.getpwnam(instance_user(name)).pw_uid)
        for _ in range(20):
            assert http_get(port) == (200, b"single\n")
        # channel, pidfd, log pipe, a listener per loop; the instance's two log files
        c.assert_no_fd_leak(extra=3 + 2 + 2)
        show = c.show(name)
        assert show["mode"] == "single"
        assert [p["cpus"] for p in show["processes"]] == ["0-1"]

        c.ctl("instance", "restart", name)
        new_pids = workers_of(name)
        assert len(new_pids) == 1 and new_pids != pids
        assert http_get(port) == (200, b"single\n")

        c.ctl("instance", "remove", name)  # running: stopped first
        wait_until(lambda: not alive(new_pids[0]), 5, what="the worker to exit")
        c.assert_no_fd_leak()


def test_desired_state_survives_a_restart_of_the_controller():
    port = free_port()
    name = unique_name("persist")
    c = Controller()
    with c:
        c.add(name, site_config(port, "persisted\n"))
        c.ctl("instance", "start", name)
    # SIGINT stopped the instance with the controller, but it is still wanted running.
    assert workers_of(name) == []
    with Controller(c.dir) as again:
        again.instances.add(name)
        wait_until(lambda: again.show(name)["status"] == "running", 10, what="converged")
        assert http_get(port) == (200, b"persisted\n")
        again.ctl("instance", "stop", name)
    with Controller(c.dir) as third:  # desired stopped now: nothing starts
        third.instances.add(name)
        assert third.show(name)["status"] == "stopped"
        assert workers_of(name) == []


def test_a_second_controller_on_the_same_state_dir_refuses():
    with Controller() as c:
        other_socket = os.path.join(c.dir, "other.sock")
        p = subprocess.run([CONTROLLER, "--state-dir", c.state_dir, "--socket", other_socket],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        assert p.returncode == 1
        assert ("pid %d" % c.pid) in p.stderr.decode(), p.stderr
        assert not os.path.exists(other_socket)
        # And one on another state dir but the same socket: refused too, socket kept.
        p = subprocess.run([CONTROLLER, "--state-dir", os.path.join(c.dir, "s2"), "--socket",
                            c.socket], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        assert p.returncode == 1
        assert "another controller" in p.stderr.decode()
        assert c.ctl("status", check=False).returncode == 0


def test_control_socket_mode_and_start_refused_on_a_taken_port():
    port = free_port()
    name = unique_name("taken")
    with Controller() as c:
        assert oct(os.stat(c.socket).st_mode & 0o777) == "0o660"
        c.add(name, site_config(port))
        import socket as s
        squatter = s.socket()
        squatter.setsockopt(s.SOL_SOCKET, s.SO_REUSEPORT, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        before = c.show(name)
        p = c.ctl("instance", "start", name, check=False)
        assert p.returncode == 1
        assert "in use" in p.stderr
        after = c.show(name)
        assert after["desired"] == before["desired"] == "stopped"
        assert after["status"] == "stopped"
        assert workers_of(name) == []
        squatter.close()
        c.ctl("instance", "start", name)
        assert http_get(port) == (200, b"hello\n")


def test_a_worker_that_cannot_start_fails_the_start_with_its_reason(tmp_path):
    port = free_port()
    name = unique_name("broken")
    fake = tmp_path / "scalwsd"
    fake.write_text("#!/bin/sh\necho 'broken worker' >&2\nexit 3\n")
    fake.chmod(0o755)
    with Controller(extra_args=["--scalwsd", str(fake)]) as c:
        c.add(name, site_config(port))
        p = c.ctl("instance", "start", name, check=False)
        assert p.returncode == 1
        assert "exited with status 3" in p.stderr, p.stderr
        show = c.show(name)
        assert show["status"] == "failed"
        assert "exited with status 3" in show["reason"]
        assert any("failed" in e["message"] for e in show["events"])
        c.assert_no_fd_leak()
