"""An instance's [server] settings and logs under the real controller: its access.log and
error.log in LOG_DIR/NAME/ (opened by the controller, handed to the workers), its own
timeouts and limits (applied on reload too), the controller's keys refused, a rotation
under load that loses no line, and a symlink planted as a log that is never followed."""
import os
import socket
import stat
import subprocess
import time

from controller_harness import (Controller, Load, file_digest, site_config, unique_name,
                                wait_until, workers_of)
from harness import curl, free_port


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", "replace")
    assert data == "" or data.endswith("\n"), "a partial line: %r" % data[-200:]
    return data.splitlines()


def with_server(config, server):
    return "[server]\n" + server + "\n" + config


def h2_site(port, server=""):
    text = ('[[listen]]\naddress = "127.0.0.1:%d"\nhttp2 = true\n' % port +
            '[[route]]\nrespond = { body = "hi\\n" }\n')
    return with_server(text, server) if server else text


def test_access_and_error_lines_go_to_the_instance_files_over_http1_and_http2():
    port = free_port()
    name = unique_name("logs")
    with Controller() as c:
        c.add(name, h2_site(port))
        c.ctl("instance", "start", name)
        log_dir = os.path.join(c.log_dir, name)
        assert stat.S_IMODE(os.stat(log_dir).st_mode) == 0o750
        assert os.stat(log_dir).st_uid == 0
        access = c.instance_log(name)
        assert stat.S_IMODE(os.stat(access).st_mode) == 0o640
        for i in range(3):
            code, body, err = curl("http://127.0.0.1:%d/h1-%d" % (port, i), "--http1.1")
            assert code == 0 and body == b"hi\n", err
        for i in range(2):
            code, body, err = curl("http://127.0.0.1:%d/h2-%d" % (port, i),
                                   "--http2-prior-knowledge")
            assert code == 0 and body == b"hi\n", err
        lines = wait_until(lambda: (lambda l: len(l) >= 5 and l)(read_lines(access)), 5,
                           what="five access lines")
        assert len(lines) == 5, lines
        assert sum('"GET /h1-' in l and "HTTP/1.1" in l for l in lines) == 3, lines
        assert sum('"GET /h2-' in l and "HTTP/2" in l for l in lines) == 2, lines
        # The workers' error log lines: in the instance's error.log and, as before, in the
        # controller's own log.
        error = c.instance_log(name, "error")
        wait_until(lambda: any("serving" in l for l in read_lines(error)), 5,
                   what="the worker's lines in error.log")
        assert "instance %s worker" % name in c.read_log()
        c.ctl("instance", "stop", name)
        c.assert_no_fd_leak()  # the files close with the instance
        c.ctl("instance", "remove", name)
        assert os.path.exists(access), "remove keeps the logs"


def test_access_log_false_and_json_format():
    port = free_port()
    off = unique_name("off")
    on = unique_name("json")
    with Controller() as c:
        c.add(off, h2_site(port, "access_log = false"))
        c.ctl("instance", "start", off)
        assert curl("http://127.0.0.1:%d/x" % port)[0] == 0
        port2 = free_port()
        c.add(on, h2_site(port2, 'access_log_format = "json"'))
        c.ctl("instance", "start", on)
        assert curl("http://127.0.0.1:%d/j" % port2)[0] == 0
        lines = wait_until(lambda: read_lines(c.instance_log(on)), 5, what="a json line")
        assert '"status":200' in lines[0].replace(" ", ""), lines
        assert not os.path.exists(c.instance_log(off))
        assert os.path.exists(c.instance_log(off, "error"))


def raw(port, data, timeout=5.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def test_the_instance_server_settings_apply_and_a_reload_changes_them():
    port = free_port()
    name = unique_name("limits")
    with Controller() as c:
        c.add(name, with_server(site_config(port), 'max_body = 10\nheader_timeout = "1s"'))
        c.ctl("instance", "start", name)
        post = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\nConnection: close\r\n\r\n" +
                b"x" * 50)
        assert raw(port, post).startswith(b"HTTP/1.1 413"), "max_body = 10"
        start = time.monotonic()
        answer = raw(port, b"GET / HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert time.monotonic() - start < 4, "header_timeout = 1s"
        c.set_config(name, with_server(site_config(port), 'max_body = 100\nheader_timeout = "1s"'))
        pids = workers_of(name)
        c.ctl("instance", "reload", name)
        assert raw(port, post).startswith(b"HTTP/1.1 200"), "max_body = 100 after the reload"
        assert workers_of(name) == pids  # in place
        # Turning the access log off is a restart, said so.
        c.set_config(name, with_server(site_config(port), "access_log = false"))
        p = c.ctl("instance", "reload", name, check=False)
        assert p.returncode == 1 and "instance restart" in p.stderr, p.stderr


def test_the_controllers_keys_are_refused_and_nothing_is_stored():
    port = free_port()
    name = unique_name("owned")
    with Controller() as c:
        c.ctl("status")
        before = file_digest(c.db_files())
        for key, where in [("workers = 2", "--cpus"), ('mode = "single"', "--mode"),
                           ('user = "nobody"', "--user"), ("sandbox = false", "sandboxed"),
                           ('access_log = "/tmp/x.log"', "--log-dir"),
                           ('error_log = "/tmp/x.log"', "--log-dir"),
                           ('temp_dir = "/tmp"', "the controller")]:
            path = os.path.join(c.dir, name + ".toml")
            with open(path, "w") as f:
                f.write(with_server(site_config(port), key))
            p = c.ctl("instance", "add", name, "--config", path, check=False)
            assert p.returncode == 1, (key, p.returncode, p.stderr)
            field = key.split(" ")[0]
            assert "%s.toml:2:" % name in p.stderr, p.stderr
            assert "server.%s: set by the controller" % field in p.stderr, p.stderr
            assert where in p.stderr, p.stderr
            assert file_digest(c.db_files()) == before, key
        assert name not in [i["name"] for i in c.ctl_json("instance", "list")["instances"]]


def test_rotation_under_load_loses_no_line():
    port = free_port()
    name = unique_name("rot")
    with Controller() as c:
        c.add(name, site_config(port), "--cpus", "2", "--shared-cpus")
        c.ctl("instance", "start", name)
        access = c.instance_log(name)
        with Load(port, threads=4) as load:
            load.wait_for(300)
            time.sleep(1.5)  # see below
            os.rename(access, access + ".1")
            load.wait_for(100)  # still written to the renamed file
            c.ctl("instance", "reopen-logs", name)
            load.wait_for(300)
            # Lines wait in a loop's buffer up to a second; those written out before the
            # next rename are in the middle file, and none is lost either way.
            time.sleep(1.5)
            # A second rotation, through --all.
            os.rename(access, access + ".2")
            p = c.ctl("instance", "reopen-logs", "--all")
            assert name in p.stdout, p.stdout
            load.wait_for(200)
            load.stop()
        assert not load.failures, load.failures[:5]
        c.ctl("instance", "stop", name)  # the workers flush what they buffered
        old = read_lines(access + ".1")
        middle = read_lines(access + ".2")
        new = read_lines(access)
        assert old and middle and new, (len(old), len(middle), len(new))
        assert len(old) + len(middle) + len(new) == load.ok, (len(old), len(middle), len(new),
                                                               load.ok)


def test_reopen_logs_refusals_change_nothing():
    name = unique_name("stopped")
    with Controller() as c:
        c.add(name, site_config(free_port()))
        p = c.ctl("instance", "reopen-logs", name, check=False)
        assert p.returncode == 1 and "not running" in p.stderr, p.stderr
        p = c.ctl("instance", "reopen-logs", "ghost", check=False)
        assert p.returncode == 1 and "no instance" in p.stderr, p.stderr
        for args in (["instance", "reopen-logs", name, "--all"],
                     ["instance", "reopen-logs", "a", "b"]):
            p = c.ctl(*args, check=False)
            assert p.returncode == 2 and "usage:" in p.stderr, (args, p.stderr)
        p = c.ctl("instance", "reopen-logs")  # none running: nothing to do, not an error
        assert "no instance is running" in p.stdout
        assert c.show(name)["status"] == "stopped"
        assert not os.path.exists(os.path.join(c.log_dir, name))


def test_a_symlink_planted_as_the_access_log_is_not_followed(tmp_path):
    port = free_port()
    name = unique_name("sym")
    target = tmp_path / "target"
    target.write_text("untouched\n")
    with Controller() as c:
        c.add(name, site_config(port))
        os.makedirs(os.path.join(c.log_dir, name), mode=0o750)
        os.chmod(c.log_dir, 0o755)
        os.symlink(str(target), c.instance_log(name))
        p = c.ctl("instance", "start", name, check=False)
        assert p.returncode == 1 and "symlink" in p.stderr, p.stderr
        assert target.read_text() == "untouched\n"
        assert workers_of(name) == []
        # Once the link is gone the instance starts and makes a file of its own.
        os.unlink(c.instance_log(name))
        c.ctl("instance", "start", name)
        assert os.path.isfile(c.instance_log(name)) and not os.path.islink(c.instance_log(name))
        assert target.read_text() == "untouched\n"
