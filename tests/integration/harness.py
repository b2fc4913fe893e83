"""Shared helpers for ScalWS integration tests: real scalwsd processes on free ports,
raw-socket and curl clients, and the after-test checks (no fd leak, clean logs).

Servers are started on 127.0.0.1 with a free port and stopped by PID; nothing here talks
to anything but loopback.
"""
import json
import os
import re
import shutil
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


# Ports this test process handed out. The kernel may give the same free port to two
# bind(0) calls in a row, and a server given one port twice fails to start.
_handed_out = set()


def free_port():
    """A TCP port (also free for UDP) that was free a moment ago on 127.0.0.1 and that
    this process has not handed out before."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port in _handed_out:
            continue
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind(("127.0.0.1", port))
        except OSError:
            continue
        _handed_out.add(port)
        return port


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
        try:
            wait_for_port(self.port, proc=self.proc)
        except RuntimeError as e:
            self.log.flush()
            raise RuntimeError("%s; its log:\n%s" % (e, self.read_log()[-4000:])) from None
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

    def settled_fd_snapshot(self, timeout=10.0):
        """The fd counts once they stopped changing (see settle())."""
        self.settle(timeout)
        return self.baseline

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
            shutil.rmtree(self.dir, ignore_errors=True)  # kept when the test failed
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


# ---------------------------------------------------------------------------------------
# Config building: small TOML sites written from Python values.

def toml_value(v):
    """A Python value as TOML: str, bool, int, list, dict (inline table)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (toml_key(k), toml_value(x)) for k, x in v.items()) + " }"
    raise TypeError("no TOML for %r" % (v,))


def toml_key(k):
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def route(body="", status=200, headers=None, policy=None, **match):
    """One [[route]] with a respond action; `match` keys: exact, prefix, suffix, host, method."""
    lines = ["[[route]]"]
    if match:
        lines.append("match = " + toml_value(match))
    respond = {"status": status, "body": body}
    if headers:
        respond["headers"] = headers
    lines.append("respond = " + toml_value(respond))
    if policy:
        lines.append("policy = " + toml_value(policy))
    return "\n".join(lines) + "\n"


def site(routes=(), **server):
    """A standalone site template on 127.0.0.1:$port: [server] from keyword arguments
    (defaults: one worker in multi mode, error log to the test's log), then the routes."""
    settings = {"workers": 1, "mode": "multi"}
    settings.update(server)
    lines = ["[server]"] + ["%s = %s" % (k, toml_value(v)) for k, v in settings.items()]
    lines += ["", "[[listen]]", 'address = "127.0.0.1:$port"', ""]
    return "\n".join(lines) + "\n" + "\n".join(routes)


# ---------------------------------------------------------------------------------------
# Waiting and clients that can tell how a connection ended.

def wait_until(predicate, timeout=5.0, interval=0.02, what="condition"):
    """Polls `predicate` until it returns a true value (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


def parse_one(data, pos=0, head_request=False, eof=False):
    """Parses one response at `pos`; returns (Response, end) or None while incomplete.
    A close-delimited body is complete only at `eof`."""
    end = data.find(b"\r\n\r\n", pos)
    if end < 0:
        return None
    lines = data[pos:end].decode("latin-1").split("\r\n")
    version, status, reason = (lines[0].split(" ", 2) + ["", ""])[:3]
    if not version.startswith("HTTP/") or not status.isdigit():
        raise ValueError("not a status line: %r" % lines[0])
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError("header line without a colon: %r" % line)
        headers.append((name.strip().lower(), value.strip()))
    resp = Response(int(status), reason, headers, b"", version)
    pos = end + 4
    if head_request or resp.status in (204, 304) or 100 <= resp.status < 200:
        return resp, pos
    te = resp.header("transfer-encoding")
    if te is not None and te.lower() == "chunked":
        body = b""
        while True:
            line_end = data.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size = int(data[pos:line_end].split(b";")[0], 16)
            pos = line_end + 2
            if size == 0:
                trailer_end = data.find(b"\r\n\r\n", pos - 2)
                if trailer_end < 0:
                    return None
                resp.body = bytes(body)
                return resp, trailer_end + 4
            if len(data) < pos + size + 2:
                return None
            body += data[pos:pos + size]
            pos += size + 2
    cl = resp.header("content-length")
    if cl is not None:
        n = int(cl)
        if len(data) < pos + n:
            return None
        resp.body = bytes(data[pos:pos + n])
        return resp, pos + n
    if not eof:
        return None
    resp.body = bytes(data[pos:])
    return resp, len(data)


class Client:
    """One raw TCP connection to a server: send bytes, read whole responses, and see how
    the server ended the connection ("eof", "reset" or "timeout")."""

    def __init__(self, port, timeout=5.0, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            # Before connect, so the window scale is chosen for it (shrinking it later
            # stalls loopback TCP in the kernel's persist timer).
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = bytearray()
        self.ended = None  # None while open, else "eof" / "reset"

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        """Reads once; returns False when nothing more can come before `deadline`."""
        if self.ended:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            b = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            self.ended = "reset"
            return False
        if not b:
            self.ended = "eof"
            return False
        self.buf += b
        return True

    def read_responses(self, n=1, head_requests=(), timeout=None):
        """Reads until `n` complete responses arrived; returns them and keeps any extra
        bytes. Raises AssertionError with what arrived when they do not."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        out = []
        pos = 0
        while len(out) < n:
            parsed = parse_one(self.buf, pos, head_request=len(out) in head_requests,
                               eof=self.ended is not None)
            if parsed is not None:
                resp, pos = parsed
                out.append(resp)
                continue
            if not self._fill(deadline):
                raise AssertionError("%d of %d responses, then %s; bytes: %r" % (
                    len(out), n, self.ended or "timeout", bytes(self.buf[pos:pos + 300])))
        del self.buf[:pos]
        return out

    def read_response(self, head=False, timeout=None):
        return self.read_responses(1, (0,) if head else (), timeout)[0]

    def read_until_close(self, timeout=None):
        """Everything until the server closes: (bytes not yet consumed, "eof"|"reset"|"timeout")."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while self._fill(deadline):
            pass
        data, self.buf = bytes(self.buf), bytearray()
        return data, self.ended or "timeout"

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def exchange(port, data, timeout=5.0):
    """Sends `data` on a fresh connection and reads until the server closes it:
    returns (bytes, "eof"|"reset"|"timeout")."""
    with Client(port, timeout) as c:
        c.send(data)
        return c.read_until_close()


def get(port, path="/", host="localhost", extra=b"", timeout=5.0):
    """One GET with Connection: close on a fresh connection; returns the Response."""
    data = b"GET " + path.encode() + b" HTTP/1.1\r\nHost: " + host.encode() + \
        b"\r\nConnection: close\r\n" + extra + b"\r\n"
    raw, how = exchange(port, data, timeout)
    parsed = parse_one(raw, 0, eof=True)
    assert parsed is not None, "no complete response (%s): %r" % (how, raw[:300])
    return parsed[0]


def pid_alive(pid):
    """True while `pid` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def thread_count(pid):
    try:
        return len(os.listdir("/proc/%d/task" % pid))
    except OSError:
        return 0


def split_responses(data, eof=True):
    """Every complete response in `data`; raises if bytes that are not one remain."""
    out = []
    pos = 0
    while pos < len(data):
        parsed = parse_one(data, pos, eof=eof)
        if parsed is None:
            raise AssertionError("an incomplete response at %d: %r" % (pos, data[pos:pos + 300]))
        resp, pos = parsed
        out.append(resp)
    return out


def check_error_close(data, how, status):
    """`data` is exactly one error response with `status`, `Connection: close` and a body
    of its Content-Length, and the server then closed the connection cleanly."""
    assert data, "no response at all (connection %s)" % how
    resps = split_responses(data)
    assert len(resps) == 1, "expected one response, got %d: %r" % (len(resps), resps)
    resp = resps[0]
    assert resp.status == status, "expected %d, got %r" % (status, resp)
    assert (resp.header("connection") or "").lower() == "close", resp
    assert resp.header("content-length") == str(len(resp.body)), resp
    assert how == "eof", "after the %d the connection ended by %s, not a clean close" % (status, how)
    return resp


def expect_error(port, data, status, timeout=2.0):
    """Sends `data` on a fresh connection; asserts one `status` response, Connection: close
    and a clean close (see check_error_close) within `timeout` (well under the default
    timeouts, so a connection left open fails). Returns the response."""
    got, how = exchange(port, data, timeout)
    return check_error_close(got, how, status)
