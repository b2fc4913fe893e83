"""Helpers for the static action's integration tests: a scalwsd serving a docroot built
in the test's temp dir, and small HTTP/1.1 clients over raw sockets."""
import os
import socket
import time

from harness import Scalwsd, children_of, parse_responses

TEMPLATE = """
[server]
workers = 1
$server_extra

[[listen]]
address = "127.0.0.1:$$port"

$routes
[[route]]
match = { prefix = "/" }
static = { root = "$$dir/www"$options }
"""


def write_tree(root, files):
    """files: {relative path: bytes | str | ("symlink", target) | ("dir",)}"""
    os.makedirs(root, exist_ok=True)
    for rel, content in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, tuple) and content[0] == "symlink":
            os.symlink(content[1], path)
        elif isinstance(content, tuple) and content[0] == "dir":
            os.makedirs(path, exist_ok=True)
        else:
            with open(path, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)


def static_server(files, options="", server_extra="", routes=""):
    """A started scalwsd whose catch-all route serves $dir/www built from `files`.
    `options` are extra keys of the static table, e.g. 'open_file_cache = "off"'."""
    template = (TEMPLATE.replace("$server_extra", server_extra).replace("$routes", routes)
                .replace("$options", (", " + options) if options else "")
                .replace("$$", "$"))
    s = Scalwsd(template, start=False)
    write_tree(os.path.join(s.dir, "www"), files)
    s.start()
    settle(s)
    return s


def settle(s, timeout=10.0):
    """Waits until the worker process answers, then takes the fd baseline again (the
    harness takes it when the parent's listener accepts, possibly before the worker ran)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if children_of(s.pid):
            try:
                with socket.create_connection(("127.0.0.1", s.port), timeout=2) as c:
                    c.sendall(b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    ok = c.recv(100).startswith(b"HTTP/1.1 200")
                if ok:
                    s.baseline = stable_fd_snapshot(s)
                    return
            except OSError:
                pass
        time.sleep(0.02)
    raise AssertionError("the worker did not answer")


def stable_fd_snapshot(s, quiet=0.15, timeout=3.0):
    """fd counts once they stopped changing for `quiet` seconds (a connection the client
    closed may take the server a moment to close)."""
    deadline = time.monotonic() + timeout
    last, since = s.fd_snapshot(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        now = s.fd_snapshot()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last


def worker_fds(s):
    """fd count of the (single) worker process."""
    return stable_fd_snapshot(s)[s.workers()[0]]


def request_bytes(method, path, headers=(), close=False):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: test"]
    lines += ["%s: %s" % h for h in headers]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def one_response(port, data, timeout=5.0):
    """Sends raw bytes on a fresh connection and returns the first response, read by its
    Content-Length (not by waiting for the server to close)."""
    with Client(port, timeout) as c:
        c.sock.sendall(data)
        return c.read_response()


class Client:
    """One keep-alive connection; send() a request, read the response it gets."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _fill(self):
        b = self.sock.recv(1 << 20)
        if not b:
            raise EOFError("connection closed; have %r" % self.buf[:200])
        self.buf += b

    def read_response(self, head_request=False):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n\r\n") + 4
        probe = parse_responses(self.buf[:end], head_requests=(0,))[0]
        length = 0
        if not head_request and probe.status not in (204, 304):
            length = int(probe.header("content-length"))
        while len(self.buf) < end + length:
            self._fill()
        probe.body = self.buf[end:end + length]
        self.buf = self.buf[end + length:]
        return probe

    def get(self, path, headers=(), method="GET"):
        self.sock.sendall(request_bytes(method, path, headers))
        return self.read_response(head_request=(method == "HEAD"))
