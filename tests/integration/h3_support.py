"""Helpers for the HTTP/3 integration tests: Debian's ngtcp2 client (gtlsclient) run
against a scalwsd, its output parsed into responses, and a UDP relay in front of the
server that can record the client's datagrams, inject others and change its own source
port mid-connection (what a NAT rebinding looks like to the server)."""
import os
import re
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time

GTLSCLIENT = shutil.which("gtlsclient") or "/usr/bin/gtlsclient"
H3LOAD = os.path.join(os.environ.get("SCALWS_BIN_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin"), "scalws-h3load")

_HEADER = re.compile(r"^http: stream (0x[0-9a-f]+) \[([^:\]]*|:[a-z]+): (.*)\]$")
_BODY = re.compile(r"^http: stream (0x[0-9a-f]+) body (\d+) bytes$")


class H3Response:
    def __init__(self, stream):
        self.stream = stream
        self.headers = []  # (name, value), as received (lower-case names)
        self.body_bytes = 0

    @property
    def status(self):
        for n, v in self.headers:
            if n == ":status":
                return int(v)
        return None

    def header(self, name):
        for n, v in self.headers:
            if n == name:
                return v
        return None

    def __repr__(self):
        return "<H3Response %s %r>" % (self.stream, self.headers)


class H3Run:
    def __init__(self, proc, output, elapsed):
        self.returncode = proc.returncode
        self.output = output
        self.elapsed = elapsed
        self.responses = {}
        for line in output.splitlines():
            m = _HEADER.match(line)
            if m:
                r = self.responses.setdefault(m.group(1), H3Response(m.group(1)))
                r.headers.append((m.group(2), m.group(3)))
                continue
            m = _BODY.match(line)
            if m:
                r = self.responses.setdefault(m.group(1), H3Response(m.group(1)))
                r.body_bytes += int(m.group(2))

    def statuses(self):
        return sorted((r.status for r in self.responses.values() if r.status), key=int)

    def only(self):
        assert len(self.responses) == 1, self.output[-3000:]
        return next(iter(self.responses.values()))


def h3(port, *paths, args=(), timeout=30, exit_when_done=True, download=None, host="127.0.0.1",
       sni=None):
    """Runs gtlsclient against 127.0.0.1:port for https://host:port<path> each; returns an
    H3Run (responses by stream, the whole output, the time it took). With `sni`, the
    client connects to that name instead, resolved to 127.0.0.1 (see with_name)."""
    cmd = [GTLSCLIENT, "--no-quic-dump", "--no-http-dump"]
    if exit_when_done:
        cmd.append("--exit-on-all-streams-close")
    if download:
        cmd.append("--download=" + download)
    cmd += list(args) + [sni or "127.0.0.1", str(port)]
    cmd += ["https://%s:%d%s" % (host, port, p) for p in paths]
    if sni:
        cmd = with_name(sni, cmd)
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return H3Run(proc, proc.stdout.decode("utf-8", "replace"), time.monotonic() - start)


def with_name(name, cmd):
    """`cmd` run where `name` resolves to 127.0.0.1: Debian's gtlsclient (0.12) sends SNI
    only for a host name it resolved, and ignores --sni, so it runs in a mount namespace of
    its own with an /etc/hosts that names 127.0.0.1 (root only, as the suite runs)."""
    hosts = tempfile.NamedTemporaryFile("w", prefix="scalws-hosts-", delete=False)
    hosts.write("127.0.0.1 localhost %s\n" % name)
    hosts.close()
    os.chmod(hosts.name, 0o644)
    script = 'mount --bind "$0" /etc/hosts && rm -f "$0" && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
            hosts.name] + cmd


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def status_json(port):
    """The status route's figures over HTTP/1.1 + TLS (curl); {} when the server cannot
    answer (every connection slot taken)."""
    import json
    p = subprocess.run(["curl", "-sk", "--http1.1", "https://127.0.0.1:%d/status" % port],
                       stdout=subprocess.PIPE, timeout=10)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {}


class UdpRelay:
    """Forwards datagrams between a client on 127.0.0.1:self.port and the server on
    127.0.0.1:server_port. Keeps the first `record` datagrams the client sent; rebind()
    moves the server side to a new source port."""

    def __init__(self, server_port, record=64):
        self.server = ("127.0.0.1", server_port)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.port = self.front.getsockname()[1]
        self.back = self._new_back()
        self.client = None
        self.recorded = []
        self.record = record
        self.from_server = 0
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @staticmethod
    def _new_back():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        return s

    def rebind(self):
        with self._lock:
            old, self.back = self.back, self._new_back()
        old.close()
        return self.back.getsockname()[1]

    def _run(self):
        while not self._stop:
            with self._lock:
                back = self.back
            try:
                ready, _, _ = select.select([self.front, back], [], [], 0.05)
            except (OSError, ValueError):
                continue
            for s in ready:
                try:
                    data, addr = s.recvfrom(65536)
                except OSError:
                    continue
                if s is self.front:
                    self.client = addr
                    if len(self.recorded) < self.record:
                        self.recorded.append(data)
                    try:
                        back.sendto(data, self.server)
                    except OSError:
                        pass
                elif self.client is not None:
                    self.from_server += 1
                    self.front.sendto(data, self.client)

    def close(self):
        self._stop = True
        self._thread.join(2)
        self.front.close()
        self.back.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def h3load(port, *args, timeout=120):
    """Runs the bench's HTTP/3 load tool; returns (exit code, output text)."""
    p = subprocess.run([H3LOAD] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")
