"""A real php8.2-fpm for the PHP integration tests, and small socket helpers around it.

PhpFpm writes its config and scripts into a temp dir (mode 0755: a sandboxed scalwsd runs
as nobody and must reach the socket and stat the scripts), starts `php-fpm8.2 -F` with
pm = static, and stops it by PID.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

PHP_FPM = shutil.which("php-fpm8.2") or "/usr/sbin/php-fpm8.2"

SCRIPTS = {
    "info.php": r"""<?php
header('X-From-Php: yes');
header('Content-Type: application/json');
$keys = ['SCRIPT_NAME', 'SCRIPT_FILENAME', 'PATH_INFO', 'QUERY_STRING', 'REQUEST_URI',
         'REQUEST_METHOD', 'DOCUMENT_ROOT', 'SERVER_PROTOCOL', 'SERVER_PORT', 'REMOTE_ADDR',
         'GATEWAY_INTERFACE', 'SERVER_SOFTWARE', 'CONTENT_TYPE', 'CONTENT_LENGTH', 'HTTPS'];
$out = [];
foreach ($keys as $k) { $out[$k] = $_SERVER[$k] ?? null; }
foreach ($_SERVER as $k => $v) { if (strncmp($k, 'HTTP_', 5) === 0) { $out[$k] = $v; } }
$out['GET'] = $_GET;
echo json_encode($out);
""",
    "post.php": r"""<?php
$body = file_get_contents('php://input');
header('Content-Type: text/plain');
echo strlen($body), ' ', hash('sha256', $body), ' ', $_SERVER['CONTENT_LENGTH'], ' ',
     $_SERVER['CONTENT_TYPE'];
""",
    "form.php": r"""<?php
echo $_POST['a'] ?? '-', '/', $_POST['b'] ?? '-';
""",
    "notfound.php": r"""<?php
header('Status: 404 Not Found');
echo 'php says no';
""",
    "redirect.php": r"""<?php
header('Location: /elsewhere');
""",
    "stderr.php": r"""<?php
error_log('marker-' . ($_GET['m'] ?? 'none'));
echo 'logged';
""",
    "big.php": r"""<?php
header('Content-Type: application/octet-stream');
$block = '';
for ($i = 0; $i < 4096; $i++) { $block .= chr(($i * 7 + 3) % 251); }
$n = intval($_GET['mib'] ?? '10') * 256;
for ($i = 0; $i < $n; $i++) { echo $block; }
""",
    "sleep.php": r"""<?php
usleep(intval(floatval($_GET['s'] ?? '1') * 1000000));
echo 'slept';
""",
    "hello.php": r"""<?php
echo 'hello';
""",
    "index.php": r"""<?php
echo 'front ', $_SERVER['REQUEST_URI'], ' ', $_SERVER['SCRIPT_NAME'], ' ', $_SERVER['PATH_INFO'] ?? '-';
""",
}


def big_expected(mib):
    block = bytes((i * 7 + 3) % 251 for i in range(4096))
    return block * (mib * 256)


class PhpFpm:
    """php-fpm on a unix socket (default) or a 127.0.0.1 port, pm = static."""

    def __init__(self, children=4, tcp_port=None):
        self.dir = tempfile.mkdtemp(prefix="scalws-php-")
        os.chmod(self.dir, 0o755)
        self.www = os.path.join(self.dir, "www")
        os.mkdir(self.www)
        os.chmod(self.www, 0o755)
        for name, text in SCRIPTS.items():
            self.write(name, text)
        os.mkdir(os.path.join(self.www, "uploads"))
        os.chmod(os.path.join(self.www, "uploads"), 0o755)
        self.write("uploads/evil.jpg", "<?php echo 'EXECUTED';")
        self.write("uploads/.php", "<?php echo 'EXECUTED';")
        outside = os.path.join(self.dir, "outside.php")
        with open(outside, "w") as f:
            f.write("<?php echo 'EXECUTED';")
        os.symlink(outside, os.path.join(self.www, "escape.php"))
        self.socket_path = os.path.join(self.dir, "fpm.sock")
        self.tcp_port = tcp_port
        self.listen = "127.0.0.1:%d" % tcp_port if tcp_port else self.socket_path
        self.address = "tcp:127.0.0.1:%d" % tcp_port if tcp_port else "unix:" + self.socket_path
        self.log_path = os.path.join(self.dir, "fpm.log")
        conf = os.path.join(self.dir, "fpm.conf")
        root = os.geteuid() == 0
        with open(conf, "w") as f:
            f.write("[global]\nerror_log = %s\ndaemonize = no\n" % self.log_path)
            f.write("[www]\n")
            if root:
                f.write("user = nobody\ngroup = nogroup\n")
            f.write("listen = %s\nlisten.mode = 0666\n" % self.listen)
            f.write("pm = static\npm.max_children = %d\n" % children)
            f.write("pm.status_path = /fpm-status\n")
        cmd = [PHP_FPM, "-F", "-y", conf, "-p", self.dir] + (["-R"] if root else [])
        self.out = open(os.path.join(self.dir, "fpm.out"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT)
        self.wait_ready()

    def write(self, name, text):
        path = os.path.join(self.www, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)

    def wait_ready(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("php-fpm exited: %s" % open(self.log_path).read())
            try:
                if self.tcp_port:
                    socket.create_connection(("127.0.0.1", self.tcp_port), timeout=0.2).close()
                else:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(self.socket_path)
                    s.close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("php-fpm not ready")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class CountingRelay:
    """A TCP relay in front of a unix socket that counts the connections it accepted: what
    the pool side sees, so keep-conn reuse can be proven."""

    def __init__(self, unix_path):
        self.unix_path = unix_path
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.lock = threading.Lock()
        self.stopping = False
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def _accept_loop(self):
        while not self.stopping:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.unix_path)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.stopping = True
        self.sock.close()


class GarbagePool:
    """A 'FastCGI server' that answers every connection with bytes that are not records."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                c.settimeout(2)
                c.recv(65536)
                c.sendall(self.reply)
                time.sleep(0.2)
            except OSError:
                pass
            c.close()

    def stop(self):
        self.sock.close()
