"""Upstream servers for the proxy's integration tests, all on free loopback ports and
stopped by PID (or by closing their sockets):

- NginxUpstream: a real nginx (Debian's) answering from a `location` block the test
  writes, with an access log that records nginx's connection number per request, so kept
  connections are counted at the upstream;
- RawUpstream: a Python server that reads requests byte for byte (recorded per
  connection) and answers through a script the test gives it, including answers no
  well-behaved server would send: slow bodies, a close in the middle, bad framing, huge
  heads, or nothing at all.
"""
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from harness import free_port, wait_for_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class NginxUpstream:
    """nginx on a free port; `locations` is the body of its server block. Responses can use
    nginx variables, e.g. `return 200 "$http_x_forwarded_for";`. `tls`: (cert, key) paths
    to serve HTTPS instead."""

    def __init__(self, locations, port=None, tls=None):
        self.dir = tempfile.mkdtemp(prefix="scalws-nginx-")
        os.chmod(self.dir, 0o755)
        self.port = port or free_port()
        self.access_log = os.path.join(self.dir, "access.log")
        user = "user nobody nogroup;" if os.geteuid() == 0 else ""
        conf = os.path.join(self.dir, "nginx.conf")
        ssl = ""
        if tls:
            ssl = " ssl;\n        ssl_certificate %s;\n        ssl_certificate_key %s;\n" \
                  "        ssl_session_cache shared:up:1m" % tls
        with open(conf, "w") as f:
            f.write("""
%s
worker_processes 1;
pid %s/nginx.pid;
error_log %s/error.log warn;
events { worker_connections 1024; }
http {
    log_format conns '$connection $connection_requests "$request" $status';
    access_log %s conns;
    client_body_temp_path %s/body;
    proxy_temp_path %s/proxy;
    fastcgi_temp_path %s/fastcgi;
    uwsgi_temp_path %s/uwsgi;
    scgi_temp_path %s/scgi;
    keepalive_timeout 75s;
    keepalive_requests 100000;
    client_max_body_size 0;
    server {
        listen 127.0.0.1:%d%s;
        default_type text/plain;
        %s
    }
}
""" % (user, self.dir, self.dir, self.access_log, self.dir, self.dir, self.dir, self.dir,
       self.dir, self.port, ssl, locations))
        self.out = open(os.path.join(self.dir, "nginx.out"), "wb")
        self.proc = subprocess.Popen([NGINX, "-p", self.dir, "-c", conf, "-g", "daemon off;"],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        wait_for_port(self.port, proc=self.proc)

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def log_lines(self):
        """The access log so far (nginx writes each line as the request ends)."""
        try:
            with open(self.access_log) as f:
                return [line.split(" ", 2) for line in f.read().splitlines() if line]
        except OSError:
            return []

    def requests(self):
        return len(self.log_lines())

    def connections(self):
        """Distinct connections the logged requests came on."""
        return len({parts[0] for parts in self.log_lines()})

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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class Request:
    """One request as RawUpstream read it: `raw` holds its bytes exactly as received."""

    def __init__(self, connection, raw, head, body):
        self.connection = connection
        self.raw = raw
        lines = head.decode("latin-1").split("\r\n")
        self.method, self.target, self.version = (lines[0].split(" ") + ["", ""])[:3]
        self.headers = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                self.headers.append((name.strip().lower(), value.strip()))
        self.body = body  # decoded (chunks joined)

    def header(self, name):
        for n, v in self.headers:
            if n == name.lower():
                return v
        return None

    def __repr__(self):
        return "<Request %s %s on #%d>" % (self.method, self.target, self.connection)


class Conn:
    """The upstream's side of one connection, as a script sees it: the socket's methods,
    plus `close_after` (set it to end the connection after the answer)."""

    def __init__(self, sock):
        self.sock = sock
        self.close_after = False

    def __getattr__(self, name):
        return getattr(self.sock, name)


class RawUpstream:
    """A scripted HTTP/1.1 upstream. `script(request, conn)` answers each request: it may
    return bytes to send, or do anything with `conn` (a socket.socket) itself and return
    None; `conn.close_after = True` ends the connection after the answer.

    Every request is recorded in `requests` (in arrival order) and every byte received on a
    connection is kept (received_bytes()); `connections` counts connections accepted."""

    def __init__(self, script, port=None):
        self.script = script
        self.port = port or free_port()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(128)
        self.lock = threading.Lock()
        self.requests = []
        self.received = {}
        self.connections = 0
        self.open = set()
        self.stopped = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                number = self.connections
                self.received[number] = []
                self.open.add(conn)
            threading.Thread(target=self._serve, args=(Conn(conn), number), daemon=True).start()

    def _read_more(self, conn, number, buf):
        data = conn.recv(262144)
        if not data:
            raise EOFError
        with self.lock:
            self.received[number].append(data)
        buf += data
        return buf

    def _read_request(self, conn, number, buf):
        while b"\r\n\r\n" not in buf:
            buf = self._read_more(conn, number, buf)
        end = buf.index(b"\r\n\r\n") + 4
        head, buf = bytes(buf[:end - 4]), buf[end:]
        raw = bytearray(head + b"\r\n\r\n")
        text = head.decode("latin-1").lower()
        body = bytearray()
        if re.search(r"\r\ntransfer-encoding:\s*chunked", text):
            while True:
                while b"\r\n" not in buf:
                    buf = self._read_more(conn, number, buf)
                line_end = buf.index(b"\r\n")
                size = int(buf[:line_end].split(b";")[0], 16)
                need = line_end + 2 + size + 2
                while len(buf) < need:
                    buf = self._read_more(conn, number, buf)
                raw += buf[:need] if size else b""
                if size == 0:
                    # The last chunk, then trailers up to an empty line.
                    while b"\r\n\r\n" not in buf:
                        buf = self._read_more(conn, number, buf)
                    end = buf.index(b"\r\n\r\n") + 4
                    raw += buf[:end]
                    buf = buf[end:]
                    break
                body += buf[line_end + 2:line_end + 2 + size]
                del buf[:need]
        else:
            m = re.search(r"\r\ncontent-length:\s*(\d+)", text)
            n = int(m.group(1)) if m else 0
            while len(buf) < n:
                buf = self._read_more(conn, number, buf)
            body, buf = buf[:n], buf[n:]
            raw += body
        return Request(number, bytes(raw), head, bytes(body)), buf

    def _serve(self, conn, number):
        buf = bytearray()
        try:
            while not self.stopped:
                request, buf = self._read_request(conn, number, buf)
                with self.lock:
                    self.requests.append(request)
                answer = self.script(request, conn)
                if answer:
                    conn.sendall(answer)
                if conn.close_after:
                    break
        except (EOFError, OSError):
            pass
        finally:
            with self.lock:
                self.open.discard(conn.sock)
            try:
                conn.close()
            except OSError:
                pass

    def received_bytes(self, connection):
        """Every byte connection number `connection` (1, 2, ...) received so far."""
        with self.lock:
            return b"".join(self.received.get(connection, []))

    def wait_requests(self, n, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= n:
                    return list(self.requests)
            time.sleep(0.01)
        raise AssertionError("%d requests arrived, %d expected" % (len(self.requests), n))

    def stop(self):
        self.stopped = True
        try:
            # A socket closed while another thread sits in accept() stays open (and
            # listening) until that accept returns: shutdown() wakes it first.
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            for conn in list(self.open):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def answer(status=200, body=b"", headers=(), reason="OK"):
    """An HTTP/1.1 answer with Content-Length."""
    if isinstance(body, str):
        body = body.encode()
    head = "HTTP/1.1 %d %s\r\n" % (status, reason)
    for name, value in headers:
        head += "%s: %s\r\n" % (name, value)
    head += "Content-Length: %d\r\n\r\n" % len(body)
    return head.encode() + body


def echo_script(request, conn):
    """Answers with what the request was: method, target and the body's sha256."""
    body = ("%s %s %d %s" % (request.method, request.target, len(request.body),
                             hashlib.sha256(request.body).hexdigest())).encode()
    return answer(200, body, [("X-Connection", str(request.connection))])
