"""The sandbox: every worker runs under seccomp and Landlock as an unprivileged
user, and the kernel refuses what our own checks would have refused.

CI runs as root: workers drop to "nobody". Files the tests create are world-readable (and
writable where it matters) so that only the sandbox, not file permissions, can refuse.
"""
import os
import socket
import stat
import subprocess
import tempfile

from harness import BIN_DIR, Scalwsd, children_of, curl

NOBODY = 65534


def proc_status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return fields


def world_dir(path):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o777)
    return path


def world_file(path, data=b"x"):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o666)
    return path


def assert_sandboxed(pid):
    st = proc_status(pid)
    assert st["Seccomp"] == ["2"], st["Seccomp"]
    assert st["NoNewPrivs"] == ["1"]
    assert st["Uid"] == [str(NOBODY)] * 4
    assert st["Gid"] == [str(NOBODY)] * 4
    assert st["CapEff"] == ["0000000000000000"]


def test_every_worker_process_is_sandboxed_as_nobody_multi():
    with Scalwsd("""
[server]
workers = 2
[[listen]]
address = "127.0.0.1:$port"
[[route]]
respond = { body = "ok" }
""") as s:
        workers = children_of(s.pid)
        assert len(workers) == 2
        for pid in workers:
            assert_sandboxed(pid)
        # The supervising parent keeps root (it rebinds and respawns), like nginx's master.
        assert proc_status(s.pid)["Uid"][0] == "0"


def test_every_loop_thread_is_sandboxed_single():
    with Scalwsd("""
[server]
workers = 2
mode = "single"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
respond = { body = "ok" }
""") as s:
        tasks = os.listdir("/proc/%d/task" % s.pid)
        assert len(tasks) >= 2
        for tid in tasks:
            st = proc_status(int(tid))  # /proc/<tid>/status describes that thread
            assert st["Seccomp"] == ["2"], tid
            assert st["NoNewPrivs"] == ["1"], tid
            assert st["Uid"] == [str(NOBODY)] * 4, tid


def test_kernel_refuses_escapes_when_our_path_checks_are_compiled_out():
    """scalwsd-test-unchecked hands request paths to openat2 as sent."""
    unchecked = os.path.join(BIN_DIR, "scalwsd-test-unchecked")
    top = world_dir(tempfile.mkdtemp(prefix="scalws-kernel-"))
    root = world_dir(os.path.join(top, "www"))
    world_file(os.path.join(root, "ok.txt"), b"inside\n")
    world_file(os.path.join(top, "outside.txt"), b"secret\n")
    os.symlink("/etc/passwd", os.path.join(root, "passwd"))
    os.symlink(os.path.join(top, "outside.txt"), os.path.join(root, "out"))
    config = os.path.join(top, "site.toml")
    port = Scalwsd.__new__(Scalwsd)  # only for a free port helper below
    from harness import free_port, wait_for_port
    port = free_port()
    with open(config, "w") as f:
        f.write('[server]\nworkers = 1\n[[listen]]\naddress = "127.0.0.1:%d"\n'
                '[[route]]\nstatic = { root = "%s" }\n' % (port, root))
    proc = subprocess.Popen([unchecked, "--config", config], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc=proc)
        base = "http://127.0.0.1:%d" % port
        code, body, _ = curl("--path-as-is", base + "/ok.txt")
        assert body == b"inside\n"
        for path in ("/../outside.txt", "/../../etc/passwd", "/passwd", "/out",
                     "/./../www/../outside.txt"):
            code, body, err = curl("--path-as-is", "-o", "/dev/null", "-w", "%{http_code}",
                                   base + path)
            assert body == b"403", (path, body, err)
    finally:
        proc.terminate()
        proc.wait(10)


class Site:
    """A site config with a docroot, a log file and (optionally) a PHP pool on a TCP port,
    everything world-accessible."""

    def __init__(self, top, name, pool_port=None):
        self.root = world_dir(os.path.join(top, name))
        self.file = world_file(os.path.join(self.root, "index.html"), b"hello\n")
        self.log = world_file(os.path.join(top, name + ".access.log"), b"")
        self.config = os.path.join(top, name + ".toml")
        pool = ""
        php = ""
        if pool_port is not None:
            pool = '[php_pool.main]\naddress = "tcp:127.0.0.1:%d"\n' % pool_port
            php = '[[route]]\nmatch = { suffix = ".php" }\nphp = { pool = "main", root = "%s" }\n' % self.root
        with open(self.config, "w") as f:
            f.write('[server]\naccess_log = "%s"\n[[listen]]\naddress = "127.0.0.1:1"\n'
                    '%s[[route]]\nstatic = { root = "%s" }\n%s' % (self.log, php, self.root, pool))


def probe(site, *args):
    out = subprocess.run([os.path.join(BIN_DIR, "scalws-sandbox-probe"), "--config", site.config]
                         + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().split("\n")
    assert lines[0] == "uid %d" % NOBODY, lines
    return [int(line.split()[1]) for line in lines[1:] if line]


def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


def test_a_workers_policy_refuses_everything_outside_its_config():
    import errno as E
    top = world_dir(tempfile.mkdtemp(prefix="scalws-probe-"))
    pool = listener()
    other = listener()
    try:
        a = Site(top, "a", pool_port=pool.getsockname()[1])
        b = Site(top, "b")
        outside = world_file(os.path.join(top, "outside.txt"))
        results = probe(
            a,
            "--read", a.file,                     # its own docroot: allowed
            "--read", b.file,                     # another site's docroot
            "--read", outside,                    # beside the roots
            "--read", "/etc/hostname",
            "--write", os.path.join(a.root, "new.html"),  # docroots are read-only
            "--write", outside,
            "--truncate", a.file,                 # O_TRUNC in its own root
            "--write", a.log,                     # its log: append allowed
            "--truncate", a.log,                  # ... but never truncated
            "--connect", str(pool.getsockname()[1]),   # its PHP pool's port: allowed
            "--connect", str(other.getsockname()[1]),  # any other port
            "--bind", "0",
            "--exec", "/bin/true",
            "--fork")
        assert results == [0, E.EACCES, E.EACCES, E.EACCES, E.EACCES, E.EACCES, E.EACCES, 0,
                           E.EACCES, 0, E.EACCES, E.EPERM, E.EPERM, E.EPERM], results
        # And the other way round: b cannot read a.
        assert probe(b, "--read", a.file, "--read", b.file) == [E.EACCES, 0]
    finally:
        pool.close()
        other.close()


def accepted_within(listener, seconds):
    """How many connections reached `listener` within `seconds`."""
    listener.settimeout(seconds)
    n = 0
    try:
        while True:
            conn, _ = listener.accept()
            conn.close()
            n += 1
    except socket.timeout:
        return n


def test_landlock_tcp_rules_cannot_be_bypassed_with_mptcp_or_fast_open():
    """Landlock's TCP port rules see neither an IPPROTO_MPTCP socket (kernels 6.14+) nor a
    connect made by sendto(MSG_FASTOPEN): seccomp refuses both, while plain TCP to the
    site's own PHP pool port still connects."""
    import errno as E
    top = world_dir(tempfile.mkdtemp(prefix="scalws-probe-"))
    pool = listener()
    other = listener()
    try:
        a = Site(top, "a", pool_port=pool.getsockname()[1])
        pool_port, other_port = str(pool.getsockname()[1]), str(other.getsockname()[1])
        results = probe(
            a,
            "--connect", pool_port,            # ordinary TCP to the pool: allowed
            "--connect-tcp", pool_port,        # IPPROTO_TCP by name: the same
            "--connect", other_port,           # Landlock refuses other ports
            "--connect-mptcp", other_port,     # MPTCP would pass Landlock: seccomp refuses
            "--connect-mptcp", pool_port,      # ... whatever the port
            "--fastopen", other_port,          # sendto(MSG_FASTOPEN) skips the connect hook
            "--fastopen", pool_port)
        assert results == [0, 0, E.EACCES, E.EPERM, E.EPERM, E.EPERM, E.EPERM], results
        # Nothing of the refused attempts reached the other listener.
        assert accepted_within(other, 0.5) == 0
        assert accepted_within(pool, 0.5) == 2
    finally:
        pool.close()
        other.close()


def test_fcntl_allows_flag_commands_and_refuses_signal_ownership():
    """F_SETOWN/F_SETSIG (and O_ASYNC) would let a worker signal other processes of its uid
    where Landlock does not scope signals (kernels before 6.12); the loop only ever needs
    the status and descriptor flags."""
    import errno as E
    top = world_dir(tempfile.mkdtemp(prefix="scalws-probe-"))
    a = Site(top, "a")
    results = probe(a, "--fcntl", "getfl", "--fcntl", "setfl", "--fcntl", "setown",
                    "--fcntl", "setown_ex", "--fcntl", "setsig", "--fcntl", "setfl_async")
    assert results == [0, 0, E.EPERM, E.EPERM, E.EPERM, E.EPERM], results


TEST_USER = "scalwstest"


def ensure_test_user():
    """A second unprivileged user for the two-tenant test (CI runs as root)."""
    import pwd
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", TEST_USER], check=True)
        return pwd.getpwnam(TEST_USER)


def test_two_instances_with_their_own_users_and_roots():
    from controller_harness import Controller, unique_name, workers_of, http_get
    from harness import free_port
    other = ensure_test_user()
    top = tempfile.mkdtemp(prefix="scalws-tenants-")
    os.chmod(top, 0o755)
    sites = {}
    for name, user, uid, gid in (("a", "nobody", NOBODY, NOBODY),
                                 ("b", TEST_USER, other.pw_uid, other.pw_gid)):
        root = os.path.join(top, name)
        os.mkdir(root)
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write("site %s\n" % name)
        for p in (root, os.path.join(root, "index.html")):
            os.chown(p, uid, gid)
        os.chmod(root, 0o700)  # only its own user may enter
        sites[name] = (root, user, uid, free_port())
    with Controller() as c:
        names = {}
        for name, (root, user, uid, port) in sites.items():
            names[name] = unique_name(name)
            config = ('[[listen]]\naddress = "127.0.0.1:%d"\n[[route]]\n'
                      'static = { root = "%s" }\n' % (port, root))
            c.add(names[name], config, "--cpus", "1", "--shared-cpus", "--user", user)
            c.ctl("instance", "start", names[name])
        for name, (root, user, uid, port) in sites.items():
            assert http_get(port, "/") == (200, ("site %s\n" % name).encode())
            for pid in workers_of(names[name]):
                st = proc_status(pid)
                assert st["Uid"] == [str(uid)] * 4
                assert st["Seccomp"] == ["2"] and st["NoNewPrivs"] == ["1"]
            show = c.show(names[name])
            report = show["processes"][0]["sandbox"]
            assert report["landlock"]["enforced"] and report["seccomp"]["enforced"]
            assert [p["path"] for p in report["landlock"]["paths"]] == [root]
            human = c.ctl("instance", "show", names[name]).stdout
            assert "landlock ABI" in human and "enforced" in human and root in human
        # Each site's policy, entered by the probe, cannot read the other's root even where
        # file permissions would let it (the probe runs as the site's user; root-owned
        # copies readable by all show that Landlock, not the mode bits, refuses).
        import errno as E
        shared = world_dir(os.path.join(top, "shared"))
        mine = world_file(os.path.join(shared, "a.html"))
        theirs = world_file(os.path.join(top, "b-readable.html"))
        cfg = os.path.join(top, "probe-a.toml")
        with open(cfg, "w") as f:
            f.write('[server]\nuser = "nobody"\n[[listen]]\naddress = "127.0.0.1:1"\n'
                    '[[route]]\nstatic = { root = "%s" }\n' % shared)
        out = subprocess.run([os.path.join(BIN_DIR, "scalws-sandbox-probe"), "--config", cfg,
                              "--read", mine, "--read", theirs, "--read", sites["b"][0] + "/index.html"],
                             stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
        assert [int(l.split()[1]) for l in out[1:] if l] == [0, E.EACCES, E.EACCES]


def test_cost_tool_runs_every_per_request_call_inside_the_sandbox():
    """bench/sandbox_cost.sh's helper: the calls a worker makes per request (socket I/O,
    epoll_wait, statx, openat2 beneath the docroot) all succeed under seccomp and Landlock;
    the tool exits 1 when one is refused, and the table has a row per operation."""
    top = world_dir(tempfile.mkdtemp(prefix="scalws-cost-"))
    site = Site(top, "www")
    out = subprocess.run([os.path.join(BIN_DIR, "scalws-sandbox-cost"), "--config", site.config,
                          "--file", site.file, "--rounds", "2", "--calls", "200"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    import re
    # drop only, then allow-all filter, our filter, whole sandbox: "ns (ratio)" each.
    cell = r"\s+\d+\.\d \(\d+\.\d{3}\)"
    row = re.compile(r"^(\S+) \(.*\)\s+\d+\.\d(?:" + cell + "){3}$")
    rows = [row.match(l) for l in out.stdout.decode().split("\n")]
    assert [m.group(1) for m in rows if m] == [
        "write+read", "writev+read", "epoll_wait", "statx", "openat2+close"], out.stdout


def test_cost_tool_fails_when_the_sandbox_refuses_the_file():
    """A file outside every docroot: Landlock refuses the open inside the sandbox, and the
    tool says so instead of printing a timing."""
    top = world_dir(tempfile.mkdtemp(prefix="scalws-cost-"))
    site = Site(top, "www")
    outside = world_file(os.path.join(top, "outside.html"))
    out = subprocess.run([os.path.join(BIN_DIR, "scalws-sandbox-cost"), "--config", site.config,
                          "--file", outside, "--rounds", "1", "--calls", "10"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert out.returncode == 1
    assert b"failed" in out.stderr, out.stderr.decode()
