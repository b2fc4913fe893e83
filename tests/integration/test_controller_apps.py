"""Apps under the controller, with the real controller, scalwsctl, scalwsd, Debian's nodejs
(with node-ws), gunicorn and uvicorn, curl and python3-websockets: a Node.js app (two
processes, a socket each) and a Python WSGI app (gunicorn, two workers) are added, run as
their own users in their sandbox and serve an instance's proxy routes over HTTP/1.1 and
h2c, a streamed response and a WebSocket included; only the assigned instance's user can
reach their sockets; a killed process is restarted and serves again, a crash loop ends
`failed` with the reason, a controller that leaves them serving is followed by one that
adopts them; the sandbox refuses a read of another tenant's directory, a write outside
--writable, a connect to an undeclared port and ptrace; refusals exit 1, usage errors 2."""
import asyncio
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading

import websockets

from controller_harness import (Controller, alive, file_digest, http_get, unique_name,
                                wait_until)
from harness import free_port

NODE_USER = "nobody"
PY_USER = "www-data"

NODE_SERVER = r"""
const http = require('http');
const { WebSocketServer } = require('ws');
const server = http.createServer((req, res) => {
  if (req.url.endsWith('/stream')) {
    res.writeHead(200, { 'content-type': 'text/plain' });
    let i = 0;
    const t = setInterval(() => {
      res.write('chunk ' + i + '\n');
      if (++i === 5) { clearInterval(t); res.end(); }
    }, 50);
    return;
  }
  res.end('node ' + process.getuid() + ' ' + req.url + '\n');
});
new WebSocketServer({ server }).on('connection', (ws) => {
  ws.on('message', (data, binary) => ws.send(binary ? data : 'echo ' + data.toString()));
});
server.listen(process.env.PORT);
"""

# Listens, answers once, then exits: a crash loop once the controller sees it up.
NODE_CRASHER = r"""
require('http').createServer((q, s) => s.end('x')).listen(process.env.PORT,
    () => setTimeout(() => process.exit(7), 300));
"""

WSGI_APP = r"""
import ctypes, errno, os, socket

def probe(what, arg):
    try:
        if what == "read":
            with open(arg) as f:
                return "ok " + f.read().strip()
        if what == "write":
            with open(arg, "w") as f:
                f.write("x")
            return "ok"
        if what == "connect":
            socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
            return "ok"
        if what == "ptrace":
            libc = ctypes.CDLL(None, use_errno=True)
            # PTRACE_TRACEME: allowed to any process but for the deny-list (an attach to
            # another user's process would fail on permissions alone).
            if libc.ptrace(0, 0, 0, 0) != 0:
                return errno.errorcode[ctypes.get_errno()]
            return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))
    return "?"

def application(environ, start_response):
    path = environ["PATH_INFO"]
    if "/probe/" in path:
        what, _, arg = path.split("/probe/", 1)[1].partition("/")
        body = probe(what, "/" + arg if what in ("read", "write") else arg).encode()
    else:
        body = b"wsgi %d %s" % (os.getuid(), path.encode())
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body + b"\n"]
"""


class AppDirs:
    """The --app-dir (its parent traversable, as /run is) and the apps' own code."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="scalws-apps-")
        os.chmod(self.base, 0o711)
        self.sockets = os.path.join(self.base, "run")
        self.node = self.code_dir("node", {"server.js": NODE_SERVER, "crash.js": NODE_CRASHER})
        self.py = self.code_dir("py", {"app.py": WSGI_APP, "secret.txt": "py-secret\n"})
        self.data = os.path.join(self.base, "data")  # the Python app's --writable
        os.mkdir(self.data)
        os.chown(self.data, pwd.getpwnam(PY_USER).pw_uid, -1)

    def code_dir(self, name, files):
        path = os.path.join(self.base, name)
        os.mkdir(path)
        os.chmod(path, 0o755)
        for file, text in files.items():
            with open(os.path.join(path, file), "w") as f:
                f.write(text)
            os.chmod(os.path.join(path, file), 0o644)  # readable by everyone: Landlock decides
        return path

    def args(self):
        return ["--app-dir", self.sockets]

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


def add_node(c, dirs, name="web", processes=2, entry="server.js"):
    c.ctl("app", "add", name, "--runtime", "node", "--entry", os.path.join(dirs.node, entry),
          "--processes", str(processes), "--user", NODE_USER,
          "--env", "NODE_PATH=/usr/share/nodejs")
    return c.ctl_json("app", "show", name)


def add_wsgi(c, dirs, name="py", extra=()):
    c.ctl("app", "add", name, "--runtime", "python", "--wsgi", "app:application", "--dir",
          dirs.py, "--processes", "2", "--user", PY_USER, "--writable", dirs.data, *extra)
    return c.ctl_json("app", "show", name)


def site(port, web, py):
    def upstream(app):
        return ", ".join('"%s"' % s for s in app["upstream"])
    return ('[[listen]]\naddress = "127.0.0.1:%d"\nhttp2 = true\n'
            '[[route]]\nmatch = { prefix = "/py/" }\nproxy = { upstream = "py" }\n'
            '[[route]]\nproxy = { upstream = "web" }\n'
            '[upstream.web]\nservers = [%s]\n[upstream.py]\nservers = [%s]\n'
            % (port, upstream(web), upstream(py)))


def curl(port, path, *extra):
    p = subprocess.run(["curl", "-sS", "--max-time", "10", *extra,
                        "http://127.0.0.1:%d%s" % (port, path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode()


def can_connect_as(user, path):
    account = pwd.getpwnam(user)
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    sys.exit(13)\n")
    p = subprocess.run(["setpriv", "--reuid=%d" % account.pw_uid, "--regid=%d" % account.pw_gid,
                        "--clear-groups", "/usr/bin/python3", "-c", code, path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode in (0, 13), p.stdout
    return p.returncode == 0


def pids(c, name):
    return [p["pid"] for p in c.ctl_json("app", "show", name)["status"]["processes"]]


def uid(user):
    return pwd.getpwnam(user).pw_uid


def test_node_and_wsgi_apps_serve_an_instance_through_proxy_routes():
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
            c.add(name, site(port, web, py))
            # Not assigned yet: the instance's user cannot reach the sockets.
            user = c.show(name)["user"]
            assert not can_connect_as(user, web["sockets"][0])
            c.ctl("app", "assign", "web", name)
            c.ctl("app", "assign", "py", name)
            assert can_connect_as(user, web["sockets"][0])
            assert can_connect_as(user, py["sockets"][0])
            assert not can_connect_as(PY_USER, web["sockets"][0])  # another tenant
            # instance show (and with it the dashboard) lists the apps assigned to it.
            assert sorted((a["name"], a["state"]) for a in c.show(name)["apps"]) == \
                [("py", "running"), ("web", "running")]
            c.ctl("instance", "start", name)

            assert curl(port, "/hello") == "node %d /hello\n" % uid(NODE_USER)
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
                  "--processes", "1", "--user", "nobody", "--memory", "64m"], 1, "cgroup"),
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


def test_an_asgi_app_runs_under_uvicorn():
    dirs = AppDirs()
    with open(os.path.join(dirs.py, "asgi.py"), "w") as f:
        f.write("async def app(scope, receive, send):\n"
                "    assert scope['type'] == 'http'\n"
                "    await send({'type': 'http.response.start', 'status': 200,\n"
                "                'headers': [(b'content-type', b'text/plain')]})\n"
                "    await send({'type': 'http.response.body', 'body': b'asgi ok\\n'})\n")
    os.chmod(os.path.join(dirs.py, "asgi.py"), 0o644)
    try:
        with Controller(extra_args=dirs.args()) as c:
            c.ctl("app", "add", "aio", "--runtime", "python", "--asgi", "asgi:app", "--dir",
                  dirs.py, "--processes", "1", "--user", PY_USER)
            shown = c.ctl_json("app", "show", "aio")
            out = subprocess.run(["curl", "-sS", "--unix-socket", shown["sockets"][0],
                                  "http://x/"], stdout=subprocess.PIPE).stdout
            assert out == b"asgi ok\n"
            assert shown["spec"]["runtime"] == "python-asgi"
            json.dumps(shown)
    finally:
        dirs.remove()
