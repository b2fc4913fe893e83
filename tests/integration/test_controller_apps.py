"""Apps under the controller, with the real controller, scalwsctl, scalwsd, Debian's nodejs
(with node-ws), gunicorn and uvicorn, curl and python3-websockets: a Node.js app (two
processes, a socket each) and a Python WSGI app (gunicorn, two workers) are added, run as
their own users in their sandbox and serve an instance's app routes (`app = { name }`,
under the names they are assigned as) over HTTP/1.1 and h2c, a streamed response and a
WebSocket included, and a proxy route to their sockets too; only the assigned instance's
user can reach their sockets; `app show` states what /proc says of each process; `app
restart` starts new processes that serve; app.log rotates without losing a line; a killed
process is restarted and serves again, a crash loop ends `failed` with the reason, a
controller that leaves them serving is followed by one that adopts them; the sandbox
refuses a read of another tenant's directory, a write outside --writable, a connect to an
undeclared port and ptrace; refusals exit 1, usage errors 2."""
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading

import websockets

from app_support import (NODE_USER, PY_USER, AppDirs, add_asgi, add_node, add_wsgi, app_site,
                         can_connect_as, curl, pids, socket_get, uid, upstream_list)
from controller_harness import Controller, alive, file_digest, unique_name, wait_until
from harness import free_port

def test_node_and_wsgi_apps_serve_an_instance_through_app_routes():
    dirs = AppDirs()
    port = free_port()
    name = unique_name("apps")
    try:
        with Controller(extra_args=dirs.args()) as c:
            web = add_node(c, dirs)
            py = add_wsgi(c, dirs)
            assert web["state"] == "running" and py["state"] == "running"
            assert len(web["upstream"]) == 2 and len(py["upstream"]) == 1
            for p in web["status"]["processes"] + py["status"]["processes"]:
                with open("/proc/%d/status" % p["pid"]) as f:
                    status = f.read()
                assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status, status
            # The routes name the apps as assigned ("front", "shop"), not as added; a proxy
            # route to the node app's sockets reaches the same processes.
            c.add(name, app_site(port, ("/py/", "shop")) +
                  '[[route]]\nmatch = { prefix = "/via-proxy/" }\nproxy = { upstream = "web" }\n'
                  '[[route]]\napp = { name = "front" }\n'
                  "[upstream.web]\nservers = [%s]\n" % upstream_list(web))
            # Not assigned yet: the instance's user cannot reach the sockets, and the
            # instance does not start, naming the command that fixes it.
            user = c.show(name)["user"]
            assert not can_connect_as(user, web["sockets"][0])
            p = c.ctl("instance", "start", name, check=False)
            assert p.returncode == 1 and "scalwsctl app assign APP %s --as front" % name in \
                p.stderr, p.stderr
            assert sorted(c.show(name)["unbound_apps"]) == ["front", "shop"]
            c.ctl("app", "assign", "web", name, "--as", "front")
            c.ctl("app", "assign", "py", name, "--as", "shop")
            assert can_connect_as(user, web["sockets"][0])
            assert can_connect_as(user, py["sockets"][0])
            assert not can_connect_as(PY_USER, web["sockets"][0])  # another tenant
            # instance show (and with it the dashboard) lists the apps assigned to it.
            assert sorted((a["name"], a["as"], a["state"]) for a in c.show(name)["apps"]) == \
                [("py", "shop", "running"), ("web", "front", "running")]
            assert c.show(name)["unbound_apps"] == []
            c.ctl("instance", "start", name)

            assert curl(port, "/hello") == "node %d /hello\n" % uid(NODE_USER)
            assert curl(port, "/via-proxy/x") == "node %d /via-proxy/x\n" % uid(NODE_USER)
            # Both node processes serve the route: its upstream has a server per socket.
            served = {int(curl(port, "/pid")) for _ in range(6)}
            assert served == set(pids(c, "web")), served
            assert curl(port, "/hello", "--http2-prior-knowledge") == \
                "node %d /hello\n" % uid(NODE_USER)
            assert curl(port, "/py/x") == "wsgi %d /py/x\n" % uid(PY_USER)
            assert curl(port, "/py/x", "--http2-prior-knowledge") == "wsgi %d /py/x\n" % uid(PY_USER)
            assert curl(port, "/stream", "-N") == "".join("chunk %d\n" % i for i in range(5))
            assert curl(port, "/stream", "-N", "--http2-prior-knowledge") == \
                "".join("chunk %d\n" % i for i in range(5))

            async def echo():
                async with websockets.connect("ws://127.0.0.1:%d/ws" % port) as ws:
                    await ws.send("hi")
                    text = await ws.recv()
                    await ws.send(b"\x00\x01")
                    return text, await ws.recv()
            assert asyncio.run(echo()) == ("echo hi", b"\x00\x01")

            listed = c.ctl("app", "list").stdout
            assert "web" in listed and "python-wsgi" in listed
            logs = c.ctl_json("app", "logs", "py")
            assert any("GET /py/x" in line for line in logs["lines"]), logs
            # Assigned: not removable.
            p = c.ctl("app", "remove", "web", check=False)
            assert p.returncode == 1 and "release it first" in p.stderr
            c.ctl("instance", "stop", name)
            c.ctl("app", "release", "web")
            old = pids(c, "web")
            c.ctl("app", "remove", "web")
            wait_until(lambda: not any(alive(p) for p in old), 10, what="node to stop")
            assert not os.path.exists(web["sockets"][0])
    finally:
        dirs.remove()


def test_a_killed_app_process_is_restarted_and_a_crash_loop_fails_with_the_reason():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args() + ["--crash-limit", "3"]) as c:
            web = add_node(c, dirs, processes=1)
            first = web["status"]["processes"][0]["pid"]
            os.kill(first, signal.SIGKILL)
            wait_until(lambda: pids(c, "web")[0] not in (0, first) and
                       c.ctl_json("app", "show", "web")["state"] == "running", 10,
                       what="node restarted")
            shown = c.ctl_json("app", "show", "web")["status"]["processes"][0]
            assert shown["restarts"] == 1 and "SIGKILL" in shown["last_exit"], shown
            out = subprocess.run(["curl", "-sS", "--unix-socket", web["sockets"][0], "http://x/a"],
                                 stdout=subprocess.PIPE).stdout
            assert out == b"node %d /a\n" % uid(NODE_USER)

            add_node(c, dirs, name="crashy", processes=1, entry="crash.js")
            wait_until(lambda: c.ctl_json("app", "show", "crashy")["state"] == "failed", 20,
                       what="the crash loop to be seen")
            shown = c.ctl_json("app", "show", "crashy")["status"]["processes"][0]
            assert "crash loop" in shown["last_exit"] and "exited with status 7" in \
                shown["last_exit"], shown
            assert shown["pid"] == 0
    finally:
        dirs.remove()


def test_apps_outlive_a_controller_that_leaves_and_the_next_one_adopts_them():
    dirs = AppDirs()
    directory = tempfile.mkdtemp(prefix="scalws-ctl-it-")
    try:
        first = Controller(directory, extra_args=dirs.args()).start()
        web = add_node(first, dirs)
        py = add_wsgi(first, dirs)
        before = {"web": pids(first, "web"), "py": pids(first, "py")}
        assert first.signal_and_wait(signal.SIGUSR2) == 0
        first.log.close()
        assert all(alive(p) for ps in before.values() for p in ps)

        with Controller(directory, extra_args=dirs.args()) as second:
            for name in ("web", "py"):
                shown = second.ctl_json("app", "show", name)
                assert shown["state"] == "running"
                assert [p["pid"] for p in shown["status"]["processes"]] == before[name]
                assert all(p["adopted"] and p["restarts"] == 0
                           for p in shown["status"]["processes"])
            out = subprocess.run(["curl", "-sS", "--unix-socket", py["sockets"][0], "http://x/q"],
                                 stdout=subprocess.PIPE).stdout
            assert out == b"wsgi %d /q\n" % uid(PY_USER)
            # Adopted processes are supervised like the others.
            os.kill(before["web"][0], signal.SIGKILL)
            wait_until(lambda: pids(second, "web")[0] not in (0, before["web"][0]), 10,
                       what="the adopted node restarted")
            last = pids(second, "web") + pids(second, "py")
        # A controller that stops (SIGINT) stops its apps.
        wait_until(lambda: not any(alive(p) for p in last), 15, what="the apps to stop")
        del web
    finally:
        dirs.remove()
        shutil.rmtree(directory, ignore_errors=True)


class Listener:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
                conn.close()
            except OSError:
                return


def test_the_sandbox_refuses_other_tenants_files_writes_undeclared_ports_and_ptrace():
    dirs = AppDirs()
    allowed, other = Listener(), Listener()
    secret_dir = os.path.join(dirs.base, "tenant-b")
    os.mkdir(secret_dir)
    os.chmod(secret_dir, 0o755)
    with open(os.path.join(secret_dir, "secret.txt"), "w") as f:
        f.write("b-secret\n")
    os.chmod(os.path.join(secret_dir, "secret.txt"), 0o644)
    try:
        with Controller(extra_args=dirs.args()) as c:
            py = add_wsgi(c, dirs, extra=("--connect", "127.0.0.1:%d" % allowed.port))
            sock = py["sockets"][0]

            def probe(path):
                return subprocess.run(["curl", "-sS", "--unix-socket", sock, "http://x" + path],
                                      stdout=subprocess.PIPE).stdout.decode().strip()
            assert probe("/probe/read" + dirs.py + "/secret.txt") == "ok py-secret"
            # World-readable, but another tenant's: Landlock refuses.
            assert probe("/probe/read" + secret_dir + "/secret.txt") == "EACCES"
            assert probe("/probe/write" + dirs.data + "/out.txt") == "ok"
            assert probe("/probe/write" + dirs.py + "/out.txt") == "EACCES"
            assert probe("/probe/write/tmp/scalws-app-escape.txt") == "EACCES"
            assert not os.path.exists("/tmp/scalws-app-escape.txt")
            assert probe("/probe/connect/%d" % allowed.port) == "ok"
            assert probe("/probe/connect/%d" % other.port) == "EACCES"
            assert probe("/probe/ptrace/0") == "EPERM"
            shown = c.ctl("app", "show", "py").stdout
            assert "deny-list" in shown and "connect allowed to ports %d" % allowed.port in shown
    finally:
        dirs.remove()


def test_app_usage_errors_exit_2_and_refusals_exit_1_changing_nothing():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args()) as c:
            add_node(c, dirs, processes=1)
            before = file_digest(c.db_files())
            for args, code, words in [
                (["app", "add", "x", "--runtime", "ruby", "--processes", "1", "--user", "nobody"],
                 2, "--runtime must be node or python"),
                (["app", "add", "x", "--runtime", "python", "--processes", "1", "--user",
                  "nobody"], 2, "--wsgi"),
                (["app", "add", "x", "--runtime", "node", "--entry", "/nonexistent.js",
                  "--processes", "1", "--user", "nobody"], 1, "does not exist"),
                (["app", "add", "x", "--runtime", "node", "--entry", dirs.node + "/server.js",
                  "--processes", "1", "--user", "root"], 1, "root"),
                (["app", "add", "x", "--runtime", "node", "--entry", dirs.node + "/server.js",
                  "--processes", "1", "--user", "nobody", "--memory", "1m"], 1, "at least 4m"),
                (["app", "add", "web", "--runtime", "node", "--entry", dirs.node + "/server.js",
                  "--processes", "1", "--user", "nobody"], 1, "already exists"),
                (["app", "show", "nope"], 1, "no app named"),
                (["app", "assign", "web", "no-such-instance"], 1, "no-such-instance"),
            ]:
                p = c.ctl(*args, check=False)
                assert p.returncode == code and words in p.stderr, (args, p.returncode, p.stderr)
            assert file_digest(c.db_files()) == before
            assert [a["name"] for a in c.ctl_json("app", "list")["apps"]] == ["web"]
    finally:
        dirs.remove()


def test_an_asgi_app_runs_under_uvicorn_and_serves_an_app_route():
    dirs = AppDirs()
    port = free_port()
    name = unique_name("asgi")
    try:
        with Controller(extra_args=dirs.args()) as c:
            shown = add_asgi(c, dirs)
            assert socket_get(shown["sockets"][0], "/") == b"asgi ok /\n"
            assert shown["spec"]["runtime"] == "python-asgi"
            json.dumps(shown)
            c.add(name, app_site(port, ("", "aio")))
            c.ctl("app", "assign", "aio", name)
            c.ctl("instance", "start", name)
            assert curl(port, "/a/b") == "asgi ok /a/b\n"
            assert curl(port, "/a/b", "--http2-prior-knowledge") == "asgi ok /a/b\n"
            c.ctl("instance", "stop", name)
    finally:
        dirs.remove()


def test_app_restart_starts_new_processes_that_serve_and_show_states_the_sandbox_in_proc():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args()) as c:
            web = add_node(c, dirs)
            before = pids(c, "web")
            restarted = c.ctl_json("app", "restart", "web")
            after = [p["pid"] for p in restarted["status"]["processes"]]
            assert restarted["state"] == "running", restarted
            assert all(p > 0 for p in after) and not set(after) & set(before), (before, after)
            wait_until(lambda: not any(alive(p) for p in before), 15, what="the old processes")
            for sock in web["sockets"]:
                assert socket_get(sock, "/again") == b"node %d /again\n" % uid(NODE_USER)
            # What the controller reads in /proc/PID/status, beside each process.
            for p in restarted["status"]["processes"]:
                checked = p["checked"]
                assert checked["no_new_privs"] and checked["seccomp"] == "filter", checked
                assert checked["uid"] == [uid(NODE_USER)] * 4, checked
                assert checked["capabilities"] == "none", checked
            shown = c.ctl("app", "show", "web").stdout
            assert shown.count("  in /proc    user ") == 2, shown
            assert ("user %s uid %d gid" % (NODE_USER, uid(NODE_USER))) in shown, shown
            assert "no_new_privs yes, seccomp filter, capabilities none" in shown, shown
    finally:
        dirs.remove()


def test_app_log_rotates_by_rename_at_its_cap_and_loses_no_line():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args() + ["--app-log-size", "64K"]) as c:
            web = add_node(c, dirs, processes=1)
            log = web["status"]["log_path"]
            # 1500 lines of 61 bytes: about 1.4 times the cap, so exactly one rotation.
            assert socket_get(web["sockets"][0], "/log/1500") == b"logged\n"
            expected = ["line %d %s" % (i, "x" * 50) for i in range(1500)]

            def lines():
                out = []
                for path in (log + ".1", log):
                    if os.path.exists(path):
                        with open(path) as f:
                            out += [ln for ln in f.read().splitlines() if ln.startswith("line ")]
                return out
            wait_until(lambda: len(lines()) >= 1500, 10, what="the lines to reach the log")
            assert lines() == expected
            assert os.path.getsize(log + ".1") <= 64 * 1024
            assert os.path.getsize(log) <= 64 * 1024
            # The FIFO is the app's stdout; the controller alone writes the file.
            assert os.path.exists(os.path.join(os.path.dirname(log), "app.pipe"))
            tail = c.ctl_json("app", "logs", "web", "--limit", "3")["lines"]
            assert tail == expected[-3:], tail
    finally:
        dirs.remove()
