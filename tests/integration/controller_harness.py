"""Helpers for the controller's integration tests: a real scalws-controller on a temp state
dir and socket, the real scalwsctl, instance configs on free ports, a load generator, and
the after-test checks (the workers left are the ones expected, no fd leaked in the
controller, no alert or sanitizer line in the logs).

Each instance runs as a system user of its own (scalws-NAME, made by the controller), so
the tests run as root, as CI does; the users a test's controllers made and left are
removed after the test (conftest.py), whatever it did to its controllers.
"""
import json
import os
import pwd
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import http.client

from harness import BAD_LOG, BIN_DIR, fd_count, free_port, wait_for_port

CONTROLLER = os.path.join(BIN_DIR, "scalws-controller")
SCALWSCTL = os.path.join(BIN_DIR, "scalwsctl")
# A stand-in scalwsd that speaks the worker's protocol and serves nothing; SCALWS_STAND_IN
# in its environment makes it misbehave (tests/tools/stand_in_worker.cpp).
STAND_IN = os.path.join(BIN_DIR, "stand-in", "scalwsd")


def site_config(port, body="hello\n", extra_ports=()):
    """An instance config (no [server]): /health and a catch-all answering `body`."""
    listens = "".join('[[listen]]\naddress = "127.0.0.1:%d"\n' % p for p in (port,) + tuple(extra_ports))
    return (listens +
            '[[route]]\nmatch = { exact = "/health" }\nrespond = { status = 200, body = "ok\\n" }\n'
            '[[route]]\nrespond = { body = %s }\n' % json.dumps(body))


# Every instance name this test process made up: conftest removes only these instances'
# users after a test, never a user another test running beside it has just been given.
NAMES_MADE = set()


def unique_name(prefix="t"):
    name = "%s%s" % (prefix, uuid.uuid4().hex[:8])
    NAMES_MADE.add(name)
    return name


def instance_user(name):
    """The system user the controller makes for instance `name` (short names only)."""
    return "scalws-" + name


def instance_users():
    """The users the controller made for instances, as the host has them now."""
    return {p.pw_name for p in pwd.getpwall() if p.pw_name.startswith("scalws-")}


def proc_state(pid):
    """The state letter of /proc/PID/stat, or None when the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def alive(pid):
    state = proc_state(pid)
    return state is not None and state != "Z"


def _running(matches):
    """PIDs of live processes whose argv (bytes, from /proc) `matches` says yes to."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if matches(argv) and alive(int(entry)):
            out.append(int(entry))
    return sorted(out)


def workers_of(instance):
    """PIDs of live `scalwsd --instance NAME` processes, from /proc."""
    def matches(argv):
        if b"--instance" not in argv:
            return False
        i = argv.index(b"--instance")
        return i + 1 < len(argv) and argv[i + 1] == instance.encode()
    return _running(matches)


def fronts_running(port):
    """PIDs of live `scalws-front --address 127.0.0.1:PORT`, from /proc."""
    want = b"127.0.0.1:%d" % port
    return _running(lambda argv: argv[0].endswith(b"scalws-front") and want in argv)


def proc_status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def wait_until(predicate, timeout=10.0, interval=0.02, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


def http_get(port, path="/", timeout=3.0):
    """(status, body) over a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def file_digest(paths):
    """Bytes of every existing file in `paths`, for byte-identity checks."""
    out = {}
    for p in paths:
        try:
            with open(p, "rb") as f:
                out[p] = f.read()
        except FileNotFoundError:
            out[p] = None
    return out


class Controller:
    """A real scalws-controller on a temp state dir and socket.

    Use as a context manager: on exit it stops the controller with SIGINT (which stops the
    instances), checks that it exited 0, that no worker of the instances it ran is left,
    and that the log holds no alert or sanitizer line."""

    def __init__(self, directory=None, extra_args=(), env=None, wrapper=()):
        self.dir = directory or tempfile.mkdtemp(prefix="scalws-ctl-it-")
        self.state_dir = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "control.sock")
        self.log_path = os.path.join(self.dir, "controller.log")
        # The instances' access.log and error.log (--log-dir), in LOG_DIR/NAME/.
        self.log_dir = os.path.join(self.dir, "logs")
        self.extra_args = list(extra_args)
        self.env = env  # extra environment variables (the workers inherit them)
        # A command that execs the rest of its argv (so the pid stays the controller's),
        # e.g. nsenter into a network namespace.
        self.wrapper = list(wrapper)
        self.proc = None
        self.instances = set()  # names this test added, for the process-tree check
        self.log = None

    # --- the process -------------------------------------------------------------------

    def start(self, expect_ready=True):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.wrapper + [CONTROLLER, "--state-dir", self.state_dir, "--socket", self.socket,
                            "--log-dir", self.log_dir] + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT, env=dict(os.environ, **(self.env or {})))
        if expect_ready:
            wait_until(lambda: self.proc.poll() is not None or
                       self.ctl("status", check=False).returncode == 0,
                       what="the controller to answer")
            assert self.proc.poll() is None, "controller exited: %s" % self.read_log()
            self.take_fd_baseline()
        return self

    def take_fd_baseline(self, settled=10, timeout=5.0):
        """The controller's fd count once it holds still: the same over `settled` samples
        30 ms apart (the status call's connection may still be open on the controller's
        side for a moment). A test whose controller is still re-attaching workers when it
        starts takes it again once they are listed."""
        deadline = time.monotonic() + timeout
        samples = []
        while True:
            samples.append(fd_count(self.proc.pid))
            if len(samples) >= settled and len(set(samples[-settled:])) == 1:
                self.baseline_fds = samples[-1]
                return self.baseline_fds
            if time.monotonic() > deadline:
                raise AssertionError("the controller's fds never settled: %r" % samples[-20:])
            time.sleep(0.03)

    @property
    def pid(self):
        return self.proc.pid

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def signal_and_wait(self, signum, timeout=30):
        self.proc.send_signal(signum)
        return self.proc.wait(timeout)

    def db_files(self):
        base = os.path.join(self.state_dir, "state.db")
        return [base, base + "-wal"]

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def check_log(self):
        bad = [l for l in self.read_log().splitlines() if BAD_LOG.search(l)]
        assert not bad, "bad lines in the controller log:\n" + "\n".join(bad)

    def assert_no_fd_leak(self, extra=0, timeout=3.0):
        """The controller holds its baseline plus `extra` fds: per running worker, its
        channel, its pidfd, its log pipe and the controller's copy of each of its listeners."""
        want = self.baseline_fds + extra
        wait_until(lambda: fd_count(self.proc.pid) == want, timeout,
                   what="the controller's fds to be %d (now %d)" % (want, fd_count(self.proc.pid)))

    # --- scalwsctl -----------------------------------------------------------------------

    def ctl(self, *args, check=True, timeout=120):
        env = dict(os.environ, SCALWS_SOCKET=self.socket)
        p = subprocess.run([SCALWSCTL] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=timeout)
        p.stdout = p.stdout.decode("utf-8", "replace")
        p.stderr = p.stderr.decode("utf-8", "replace")
        if check:
            assert p.returncode == 0, "scalwsctl %s -> %d\n%s%s\nlog:\n%s" % (
                " ".join(args), p.returncode, p.stdout, p.stderr, self.read_log()[-3000:])
        return p

    def ctl_json(self, *args):
        return json.loads(self.ctl("--json", *args).stdout)

    def add(self, name, config_text, *options):
        path = os.path.join(self.dir, name + ".toml")
        with open(path, "w") as f:
            f.write(config_text)
        self.instances.add(name)
        return self.ctl("instance", "add", name, "--config", path, *options)

    def set_config(self, name, config_text):
        path = os.path.join(self.dir, name + ".toml")
        with open(path, "w") as f:
            f.write(config_text)
        return self.ctl("instance", "set", name, "--config", path)

    def instance_log(self, name, which="access"):
        """LOG_DIR/NAME/access.log or error.log."""
        return os.path.join(self.log_dir, name, which + ".log")

    def show(self, name):
        return self.ctl_json("instance", "show", name)

    def worker_pids(self, name):
        return sorted(p["pid"] for p in self.show(name)["processes"] if p["pid"])

    def ready_pids(self, name):
        return sorted(p["pid"] for p in self.show(name)["processes"] if p["state"] == "ready")

    # --- context manager -----------------------------------------------------------------

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        code = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                code = self.signal_and_wait(signal.SIGINT, 30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("the controller did not stop within 30s of SIGINT")
        if self.log:
            self.log.close()
        leftovers = {n: workers_of(n) for n in self.instances}
        for pids in leftovers.values():
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        if exc_type is None:
            if code is not None:
                assert code == 0, "controller exited %r; log:\n%s" % (code, self.read_log())
            assert not any(leftovers.values()), "workers left behind: %r" % leftovers
            self.check_log()
        return False


class Load:
    """Requests in background threads until stop(): half keep their connection alive, half
    open one per request. Counts answers that are not 200 and every error."""

    def __init__(self, port, threads=4, path="/"):
        self.port = port
        self.path = path
        self.ok = 0
        self.failures = []
        self.bodies = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i % 2 == 0,), daemon=True)
                         for i in range(threads)]

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(10)

    def _record(self, status, body, error=None):
        with self._lock:
            if error is None and status == 200:
                self.ok += 1
                self.bodies.add(body)
            else:
                self.failures.append(error or "status %d" % status)

    def _run(self, keep_alive):
        conn = None
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", self.path)
                resp = conn.getresponse()
                body = resp.read()
                self._record(resp.status, body)
                if not keep_alive or resp.will_close:
                    conn.close()
                    conn = None
            except Exception as e:  # noqa: BLE001 - every failure counts
                self._record(0, b"", "%s: %s" % (type(e).__name__, e))
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def wait_for(self, count, timeout=10):
        start = self.ok
        wait_until(lambda: self.ok >= start + count, timeout, what="%d more answers" % count)
