"""What the apps' integration tests share: the users they run as, small Node.js, WSGI and
ASGI apps, their directories, and helpers to add them and to reach them."""
import os
import pwd
import shutil
import subprocess
import tempfile

NODE_USER = "nobody"
PY_USER = "www-data"

NODE_SERVER = r"""
const http = require('http');
const { WebSocketServer } = require('ws');
const kept = [];
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/eat/')) {  // /eat/MB: holds MB mebibytes, pages touched
    for (let i = 0; i < Number(req.url.slice(5)); i++) kept.push(Buffer.alloc(1 << 20, 1));
    return res.end('holding ' + kept.length + ' MiB\n');
  }
  if (req.url.startsWith('/log/')) {  // /log/N: N numbered lines on stdout
    for (let i = 0; i < Number(req.url.slice(5)); i++) {
      console.log('line ' + i + ' ' + 'x'.repeat(50));
    }
    return res.end('logged\n');
  }
  if (req.url.endsWith('/pid')) return res.end(String(process.pid));
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

KEPT = []


def application(environ, start_response):
    path = environ["PATH_INFO"]
    if path.startswith("/eat/"):  # /eat/MB: this worker holds MB mebibytes more
        KEPT.append(b"\x01" * (int(path[5:]) << 20))
        body = b"worker %d holding %d MiB" % (os.getpid(), len(KEPT) * int(path[5:]))
    elif "/probe/" in path:
        what, _, arg = path.split("/probe/", 1)[1].partition("/")
        body = probe(what, "/" + arg if what in ("read", "write") else arg).encode()
    else:
        body = b"wsgi %d %s" % (os.getuid(), path.encode())
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body + b"\n"]
"""


ASGI_APP = r"""
async def app(scope, receive, send):
    assert scope['type'] == 'http'
    await send({'type': 'http.response.start', 'status': 200,
                'headers': [(b'content-type', b'text/plain')]})
    await send({'type': 'http.response.body', 'body': b'asgi ok ' + scope['path'].encode() + b'\n'})
"""


class AppDirs:
    """The --app-dir (its parent traversable, as /run is) and the apps' own code."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="scalws-apps-")
        os.chmod(self.base, 0o711)
        self.sockets = os.path.join(self.base, "run")
        self.node = self.code_dir("node", {"server.js": NODE_SERVER, "crash.js": NODE_CRASHER})
        self.py = self.code_dir("py", {"app.py": WSGI_APP, "asgi.py": ASGI_APP,
                                       "secret.txt": "py-secret\n"})
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


def add_node(c, dirs, name="web", processes=2, entry="server.js", extra=()):
    c.ctl("app", "add", name, "--runtime", "node", "--entry", os.path.join(dirs.node, entry),
          "--processes", str(processes), "--user", NODE_USER,
          "--env", "NODE_PATH=/usr/share/nodejs", *extra)
    return c.ctl_json("app", "show", name)


def add_wsgi(c, dirs, name="py", extra=()):
    c.ctl("app", "add", name, "--runtime", "python", "--wsgi", "app:application", "--dir",
          dirs.py, "--processes", "2", "--user", PY_USER, "--writable", dirs.data, *extra)
    return c.ctl_json("app", "show", name)


def add_asgi(c, dirs, name="aio"):
    c.ctl("app", "add", name, "--runtime", "python", "--asgi", "asgi:app", "--dir", dirs.py,
          "--processes", "1", "--user", PY_USER)
    return c.ctl_json("app", "show", name)


def app_site(port, *routes):
    """An instance config on `port` (h2c too) with an app route per (prefix, app name)."""
    text = '[[listen]]\naddress = "127.0.0.1:%d"\nhttp2 = true\n' % port
    for prefix, name in routes:
        match = 'match = { prefix = "%s" }\n' % prefix if prefix else ""
        text += '[[route]]\n%sapp = { name = "%s", timeout = "30s" }\n' % (match, name)
    return text


def upstream_list(app):
    """An app's sockets as an [upstream]'s servers (what `app show` prints)."""
    return ", ".join('"%s"' % s for s in app["upstream"])


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


def socket_get(socket_path, path):
    """The body an app answers on its own socket (no instance in between)."""
    return subprocess.run(["curl", "-sS", "--max-time", "10", "--unix-socket", socket_path,
                           "http://x" + path], stdout=subprocess.PIPE).stdout


def uid(user):
    return pwd.getpwnam(user).pw_uid
