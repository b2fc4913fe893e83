"""Shared helpers for ScalWS integration tests: real scalwsd processes on free ports,
raw-socket and curl clients, and the after-test checks (no fd leak, clean logs).

Servers are started on 127.0.0.1 with a free port and stopped by PID; nothing here talks
to anything but loopback.
"""
import os
import re
import signal
import socket
import string
import subprocess
import tempfile
import time

BIN_DIR = os.environ.get("SCALWS_BIN_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin")
SOURCE_DIR = os.environ.get("SCALWS_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
SCALWSD = os.path.join(BIN_DIR, "scalwsd")

# Log lines that fail a test wherever they appear.
BAD_LOG = re.compile(r"\[alert\]|AddressSanitizer|LeakSanitizer|runtime error:|Assertion .* failed")


def free_port():
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout=10.0, proc=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("server exited with %s before listening" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("nothing listens on port %d after %.1fs" % (port, timeout))


def children_of(pid):
    """Direct children PIDs of `pid` (from /proc)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def fd_count(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


class Scalwsd:
    """A real scalwsd on a free port, started from a config template.

    The template may use $port, $port2, $dir (a temp dir for the test) and $src (the
    source tree); TOML's own braces stay as they are (string.Template). Use as a context manager; on exit it stops the server with SIGTERM,
    checks the exit code and the log.
    """

    def __init__(self, config_template, server_block=None, extra_ports=1, start=True):
        self.dir = tempfile.mkdtemp(prefix="scalws-it-")
        self.port = free_port()
        self.port2 = free_port()
        self.log_path = os.path.join(self.dir, "error.log")
        self.config_path = os.path.join(self.dir, "site.toml")
        self.template = config_template
        self.proc = None
        self.write_config(config_template)
        if start:
            self.start()

    def render(self, template):
        return string.Template(template).safe_substitute(
            port=self.port, port2=self.port2, dir=self.dir, src=os.path.abspath(SOURCE_DIR))

    def write_config(self, template):
        with open(self.config_path, "w") as f:
            f.write(self.render(template))

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([SCALWSD, "--config", self.config_path],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        wait_for_port(self.port, proc=self.proc)
        self.settle()

    def settle(self, timeout=10.0):
        """Waits until the serving processes exist and their fd counts stopped changing
        (the parent's listener answers before its workers have built their loops), then
        takes the fd baseline that assert_no_fd_leak() compares against."""
        deadline = time.monotonic() + timeout
        stable = 0
        last = None
        while time.monotonic() < deadline and stable < 4:
            now = self.fd_snapshot()
            stable = stable + 1 if now == last else 0
            last = now
            time.sleep(0.05)
        self.baseline = last

    @property
    def pid(self):
        return self.proc.pid

    def workers(self):
        """The processes that serve: the children in multi mode, else the process itself."""
        kids = children_of(self.proc.pid)
        return kids if kids else [self.proc.pid]

    def fd_snapshot(self):
        return {pid: fd_count(pid) for pid in [self.proc.pid] + self.workers()}

    def url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def signal(self, signum):
        os.kill(self.proc.pid, signum)

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def assert_no_fd_leak(self, timeout=3.0):
        """Every serving process is back to its fd count after start (connections closed)."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.fd_snapshot()
            leaked = {pid: (self.baseline.get(pid), n) for pid, n in now.items()
                      if pid in self.baseline and n > self.baseline[pid]}
            if not leaked:
                return
            if time.monotonic() > deadline:
                raise AssertionError("fd leak (pid: (baseline, now)): %r" % leaked)
            time.sleep(0.05)

    def stop(self, timeout=15.0):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("scalwsd did not stop within %.0fs of SIGTERM" % timeout)
        return self.proc.returncode

    def check_log(self):
        bad = [line for line in self.read_log().splitlines() if BAD_LOG.search(line)]
        assert not bad, "bad lines in the log:\n" + "\n".join(bad)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        code = self.stop()
        self.log.close()
        if exc_type is None:
            assert code == 0, "scalwsd exited with %r; log:\n%s" % (code, self.read_log())
            self.check_log()
        return False


def raw_request(port, data, timeout=3.0, read_until_close=True, shutdown_write=False):
    """Sends `data` on a fresh connection and returns every byte read until the server
    closes (or `timeout` passes without data)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        if shutdown_write:
            s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
            if not read_until_close:
                break
        return b"".join(chunks)


class Response:
    def __init__(self, status, reason, headers, body, version):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (lower-case name, value)
        self.body = body
        self.version = version

    def header(self, name):
        for n, v in self.headers:
            if n == name.lower():
                return v
        return None

    def __repr__(self):
        return "<Response %d %r %r>" % (self.status, self.headers, self.body[:80])


def parse_responses(data, head_requests=()):
    """Splits a byte stream into HTTP/1.1 responses (Content-Length or chunked framed).
    `head_requests`: indexes of responses that answer HEAD (no body)."""
    out = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            raise ValueError("incomplete head at %d: %r" % (pos, data[pos:pos + 200]))
        head = data[pos:end].decode("latin-1").split("\r\n")
        version, status, reason = (head[0].split(" ", 2) + [""])[:3]
        headers = []
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        pos = end + 4
        resp = Response(int(status), reason, headers, b"", version)
        if len(out) in head_requests or resp.status in (204, 304) or 100 <= resp.status < 200:
            pass
        elif resp.header("transfer-encoding") == "chunked":
            body = b""
            while True:
                line_end = data.index(b"\r\n", pos)
                size = int(data[pos:line_end].split(b";")[0], 16)
                pos = line_end + 2
                if size == 0:
                    pos = data.index(b"\r\n", pos) + 2
                    break
                body += data[pos:pos + size]
                pos += size + 2
            resp.body = body
        elif resp.header("content-length") is not None:
            n = int(resp.header("content-length"))
            resp.body = data[pos:pos + n]
            pos += n
        else:
            resp.body = data[pos:]
            pos = len(data)
        out.append(resp)
    return out


def curl(*args, timeout=20):
    """Runs curl; returns (exit code, stdout bytes, stderr text)."""
    p = subprocess.run(["curl", "-sS", "--max-time", str(timeout)] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout + 5)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
