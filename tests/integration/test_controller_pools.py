"""PHP pools under the controller, with the real controller, scalwsctl, php8.2-fpm and HTTP
clients: an external pool (a php-fpm the test starts) and a managed one (a php-fpm the
controller starts as www-data) serve an instance's php routes; a pool reassigned under
load loses no request; a managed php-fpm killed with SIGKILL comes back; php-fpm outlives
a controller that leaves the sites serving and the next one adopts it; refusals exit 1 and
usage errors exit 2, both leaving the state DB byte-identical."""
import grp
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile

from controller_harness import (Controller, Load, alive, file_digest, http_get, instance_user,
                                unique_name, wait_until, workers_of)
from harness import free_port
from php_fpm import PhpFpm

WHO = "<?php echo posix_geteuid(), ' ', $_SERVER['SCRIPT_NAME'];"
POOL_USER = "www-data"  # the managed pool's PHP user; each instance runs as its own


def uid_of(user):
    return pwd.getpwnam(user).pw_uid


def php_site(port, root, pool="main"):
    return ('[[listen]]\naddress = "127.0.0.1:%d"\n'
            '[[route]]\nmatch = { exact = "/health" }\nrespond = { status = 200, body = "ok\\n" }\n'
            '[[route]]\nphp = { pool = "%s", root = "%s" }\n' % (port, pool, root))


class PoolDir:
    """A --pool-dir the instances' user can traverse (the controller creates it 0711)."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="scalws-pools-")
        os.chmod(self.base, 0o711)
        self.path = os.path.join(self.base, "php")

    def args(self):
        return ["--pool-dir", self.path]

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


def fpm_pids():
    """PIDs of every php-fpm process (master or child) on the host."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    if f.read().startswith(b"php-fpm: ") and alive(int(entry)):
                        out.append(int(entry))
            except OSError:
                pass
    return set(out)


def master_pid(c, pool):
    return c.ctl_json("pool", "show", pool)["process"]["pid"]


def add_managed(c, name, processes=2):
    c.ctl("pool", "add", name, "--managed", "--user", POOL_USER, "--processes", str(processes))
    shown = c.ctl_json("pool", "show", name)
    assert shown["state"] == "running", shown
    return shown


def test_an_external_pool_serves_the_instance_php_routes():
    fpm = PhpFpm(children=4)
    fpm.write("who.php", WHO)
    port = free_port()
    site = unique_name("ext")
    try:
        with Controller() as c:
            c.ctl("pool", "add", "ext", "--address", fpm.address, "--max-conns", "4")
            c.add(site, php_site(port, fpm.www), "--cpus", "2", "--shared-cpus")
            # The route names "main" and nothing is assigned as "main" yet: refused.
            before = file_digest(c.db_files())
            p = c.ctl("instance", "start", site, check=False)
            assert p.returncode == 1
            assert "pool 'main'" in p.stderr and "--as main" in p.stderr, p.stderr
            assert file_digest(c.db_files()) == before
            assert c.show(site)["unbound_pools"] == ["main"]

            assigned = c.ctl_json("pool", "assign", "ext", site, "--as", "main")
            assert assigned["instance"] == site and assigned["as"] == "main"
            assert assigned["share"] == 2  # 4 connections over the instance's 2 loops
            c.ctl("instance", "start", site)
            assert http_get(port, "/hello.php") == (200, b"hello")
            status, body = http_get(port, "/who.php")
            assert status == 200 and body == b"%d /who.php" % uid_of("nobody")
            shown = c.show(site)
            assert shown["php_pools"] == [{"name": "main", "pool": "ext", "address": fpm.address,
                                           "max_conns": 4, "share": 2}]
            assert shown["unbound_pools"] == [] and shown["reload_pending"] is False
            pools = c.ctl_json("pool", "list")["pools"]
            assert [(p["name"], p["kind"], p["state"], p["instance"]) for p in pools] == [
                ("ext", "external", "external", site)]
            assert "ext" in c.ctl("pool", "list").stdout
    finally:
        fpm.stop()


def test_a_managed_pool_runs_php_as_its_user_and_comes_back_after_sigkill():
    pool_dir = PoolDir()
    fpm = PhpFpm(children=1)  # only for its scripts
    fpm.write("who.php", WHO)
    port = free_port()
    site = unique_name("mgd")
    try:
        with Controller(extra_args=pool_dir.args()) as c:
            shown = add_managed(c, "shop", processes=3)
            assert shown["kind"] == "managed" and shown["max_conns"] == 3
            assert shown["address"] == "unix:%s/shop.sock" % pool_dir.path
            sock = os.path.join(pool_dir.path, "shop.sock")
            st = os.stat(sock)
            assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o660
            assert st.st_uid == uid_of(POOL_USER)
            assert stat.S_IMODE(os.stat(pool_dir.path).st_mode) == 0o711
            master = shown["process"]["pid"]
            with open("/proc/%d/status" % master) as f:
                assert "Uid:\t0\t" in f.read()  # the master stays root, as the distro's
            conf = open(shown["process"]["config_path"]).read()
            assert "pm.max_children = 3" in conf and 'user = "%s"' % POOL_USER in conf

            c.add(site, php_site(port, fpm.www))
            c.ctl("pool", "assign", "shop", site, "--as", "main")
            # The socket now lets the instance's own user in by its group, and no one else.
            site_gid = pwd.getpwnam(instance_user(site)).pw_gid
            assert os.stat(sock).st_gid == site_gid
            assert 'listen.group = "%s"' % grp.getgrgid(site_gid).gr_name in open(
                shown["process"]["config_path"]).read()
            c.ctl("instance", "start", site)
            assert http_get(port, "/who.php") == (200, b"%d /who.php" % uid_of(POOL_USER))

            # kill -9 the master: its children go with it, a new master serves.
            children = {p for p in fpm_pids() if p != master and
                        open("/proc/%d/stat" % p).read().split()[4] == str(master)}
            assert len(children) == 3, children
            os.kill(master, signal.SIGKILL)
            # One snapshot per check: state and pid read by two calls could straddle the
            # exit (still "running", then pid 0 while restarting).
            def restarted():
                shown = c.ctl_json("pool", "show", "shop")
                if shown["state"] == "running" and shown["process"]["pid"] not in (0, master):
                    return shown
                return None
            after = wait_until(restarted, 10, what="php-fpm restarted")
            assert after["process"]["restarts"] == 1
            assert "SIGKILL" in after["process"]["last_exit"]
            wait_until(lambda: not (children & fpm_pids()), 5, what="the old children gone")
            wait_until(lambda: http_get(port, "/who.php")[0] == 200, 5, what="PHP again")
            assert http_get(port, "/who.php") == (200, b"%d /who.php" % uid_of(POOL_USER))
            events = c.ctl_json("instance", "logs", site)["events"]
            assert any(e["kind"] == "pool.exited" and "SIGKILL" in e["message"] for e in events)
            new_master = master_pid(c, "shop")
        # The controller stopped the sites, then the pool.
        assert not alive(new_master)
        assert not os.path.exists(sock)
    finally:
        fpm.stop()
        pool_dir.remove()


def test_a_pool_reassigned_under_load_loses_no_request():
    pool_dir = PoolDir()
    fpm = PhpFpm(children=4)  # pool "ext": PHP as nobody
    fpm.write("who.php", WHO)
    port = free_port()
    site = unique_name("move")
    nobody, www = (b"%d /who.php" % uid_of(u) for u in ("nobody", POOL_USER))
    try:
        with Controller(extra_args=pool_dir.args()) as c:
            c.ctl("pool", "add", "ext", "--address", fpm.address, "--max-conns", "4")
            add_managed(c, "shop", processes=4)
            shop_sock = os.path.join(pool_dir.path, "shop.sock")
            c.add(site, php_site(port, fpm.www), "--cpus", "2", "--shared-cpus")
            site_gid = pwd.getpwnam(instance_user(site)).pw_gid
            c.ctl("pool", "assign", "ext", site, "--as", "main")
            c.ctl("instance", "start", site)
            pids = workers_of(site)
            with Load(port, threads=6, path="/who.php") as load:
                load.wait_for(100)
                for pool, want in (("shop", www), ("ext", nobody), ("shop", www)):
                    out = c.ctl("pool", "assign", pool, site, "--as", "main").stdout
                    assert "replacing pool" in out and "instance reload" in out, out
                    assert c.show(site)["reload_pending"] is True
                    if pool == "ext":
                        # Replaced but still in use until the reload: its socket stays
                        # reachable and it cannot be removed.
                        assert os.stat(shop_sock).st_gid == site_gid
                        p = c.ctl("pool", "remove", "shop", check=False)
                        assert p.returncode == 1 and "still used by the running workers" in p.stderr
                    c.ctl("instance", "reload", site)
                    assert c.show(site)["reload_pending"] is False
                    # Answered once every loop took it: new connections see it at once.
                    for _ in range(5):
                        assert http_get(port, "/who.php") == (200, want)
                    load.wait_for(300)
                load.stop()
            assert load.failures == [], load.failures[:10]
            assert load.ok > 1000
            assert load.bodies == {nobody, www}
            assert workers_of(site) == pids  # in place
            assert c.ctl_json("pool", "show", "ext")["instance"] is None
            c.ctl("pool", "remove", "ext")  # released and no longer used
    finally:
        fpm.stop()
        pool_dir.remove()


def served_by(port, fpm):
    """Whether a request to /pid.php ran in a child of `fpm`'s master."""
    status, body = http_get(port, "/pid.php")
    assert status == 200, (status, body)
    with open("/proc/%d/stat" % int(body)) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1]) == fpm.proc.pid


def test_a_pool_outside_the_workers_sandbox_needs_a_restart():
    unix_fpm = PhpFpm(children=2)
    tcp_fpm = PhpFpm(children=2, tcp_port=free_port())
    unix_fpm.write("pid.php", "<?php echo getmypid();")
    port = free_port()
    site = unique_name("sbx")
    try:
        with Controller() as c:
            c.ctl("pool", "add", "unix", "--address", unix_fpm.address, "--max-conns", "2")
            c.ctl("pool", "add", "tcp", "--address", tcp_fpm.address, "--max-conns", "2")
            c.add(site, php_site(port, unix_fpm.www))
            c.ctl("pool", "assign", "unix", site, "--as", "main")
            c.ctl("instance", "start", site)
            assert served_by(port, unix_fpm)
            c.ctl("pool", "assign", "tcp", site, "--as", "main")
            p = c.ctl("instance", "reload", site, check=False)
            if p.returncode != 0:
                # Landlock's TCP rules (ABI >= 4) were fixed at start: the worker refuses
                # rather than answering 502s, and keeps serving on what it has.
                assert p.returncode == 1 and "outside the sandbox" in p.stderr, p.stderr
                assert "restart the instance" in p.stderr
                assert served_by(port, unix_fpm)
                assert c.show(site)["reload_pending"] is True
                c.ctl("instance", "restart", site)
            assert served_by(port, tcp_fpm)
            assert c.show(site)["reload_pending"] is False
    finally:
        unix_fpm.stop()
        tcp_fpm.stop()


def test_remove_is_refused_while_assigned_and_stops_a_managed_pool():
    pool_dir = PoolDir()
    site = unique_name("rm")
    try:
        with Controller(extra_args=pool_dir.args()) as c:
            c.add(site, php_site(free_port(), "/tmp"))
            base_fds = c.baseline_fds
            shown = add_managed(c, "gone", processes=2)
            master = shown["process"]["pid"]
            pool_files = os.path.dirname(shown["process"]["config_path"])
            c.ctl("pool", "assign", "gone", site)
            before = file_digest(c.db_files())
            p = c.ctl("pool", "remove", "gone", check=False)
            assert p.returncode == 1
            assert "assigned to instance '%s'" % site in p.stderr
            assert "pool release gone" in p.stderr
            assert file_digest(c.db_files()) == before
            assert alive(master)

            c.ctl("pool", "release", "gone")
            assert c.ctl_json("pool", "show", "gone")["instance"] is None
            assert c.ctl("pool", "remove", "gone").stdout == "removed\n"
            assert not alive(master)
            assert not os.path.exists(os.path.join(pool_dir.path, "gone.sock"))
            assert not os.path.exists(pool_files)
            p = c.ctl("pool", "show", "gone", check=False)
            assert p.returncode == 1 and "no PHP pool named 'gone'" in p.stderr
            c.assert_no_fd_leak()  # the pool's pidfd went with it
            assert c.baseline_fds == base_fds
    finally:
        pool_dir.remove()


POOL_USAGE_ERRORS = [
    ["pool"],
    ["pool", "add", "x"],
    ["pool", "add", "x", "--address", "127.0.0.1:9000"],
    ["pool", "add", "x", "--address", "tcp:php.example:9000"],
    ["pool", "add", "x", "--address", "unix:relative.sock"],
    ["pool", "add", "x", "--address", "unix:/a.sock", "--max-conns", "0"],
    ["pool", "add", "x", "--managed", "--user", "nobody"],
    ["pool", "add", "x", "--managed", "--user", "nobody", "--processes", "0"],
    ["pool", "add", "x", "--managed", "--user", "nobody", "--processes", "2", "--address",
     "unix:/a.sock"],
    ["pool", "add", "x", "--address", "unix:/a.sock", "--user", "nobody"],
    ["pool", "show"],
    ["pool", "assign", "x"],
    ["pool", "assign", "x", "y", "z"],
    ["pool", "remove"],
    ["pool", "release", "x", "--as", "y"],
]


def test_pool_usage_errors_exit_2_and_refusals_exit_1_changing_nothing():
    pool_dir = PoolDir()
    site = unique_name("ref")
    broken = os.path.join(pool_dir.base, "fake-php-fpm")  # allowed, but it cannot start
    try:
        with Controller(extra_args=pool_dir.args() + ["--allow-php-fpm", broken]) as c:
            c.add(site, php_site(free_port(), "/tmp"))
            c.ctl("pool", "add", "taken", "--address", "unix:/run/x.sock")
            before = file_digest(c.db_files())
            for args in POOL_USAGE_ERRORS:
                p = c.ctl(*args, check=False)
                assert p.returncode == 2, (args, p.returncode, p.stderr)
                assert "usage:" in p.stderr
            refusals = [
                (["pool", "add", "taken", "--address", "unix:/run/y.sock"], "already exists"),
                (["pool", "add", "bad!name", "--address", "unix:/run/y.sock"], "bad pool name"),
                (["pool", "add", "m", "--managed", "--user", "root", "--processes", "2"],
                 "never runs PHP as root"),
                (["pool", "add", "m", "--managed", "--user", "no-such-user-x", "--processes", "2"],
                 "no user"),
                (["pool", "add", "m", "--managed", "--user", "nobody", "--processes", "2",
                  "--php-fpm", "/no/such/php-fpm"], "not among the binaries"),
                (["pool", "show", "nope"], "no PHP pool"),
                (["pool", "remove", "nope"], "no PHP pool"),
                (["pool", "assign", "nope", site], "no PHP pool"),
                (["pool", "assign", "taken", "ghost"], "no instance"),
                (["pool", "assign", "taken", site, "--as", "../x"], "bad pool name"),
                (["pool", "release", "nope"], "no PHP pool"),
            ]
            for args, why in refusals:
                p = c.ctl(*args, check=False)
                assert p.returncode == 1, (args, p.returncode, p.stderr)
                assert why in p.stderr, (args, p.stderr)
            assert file_digest(c.db_files()) == before
            assert not os.path.exists(os.path.join(pool_dir.path, "m.sock"))
            # A managed pool whose php-fpm cannot start is never stored.
            with open(broken, "w") as f:
                f.write("#!/bin/sh\necho 'ERROR: FPM initialization failed' >&2\nexit 78\n")
            os.chmod(broken, 0o755)
            p = c.ctl("pool", "add", "m", "--managed", "--user", "nobody", "--processes", "2",
                      "--php-fpm", broken, check=False)
            assert p.returncode == 1 and "status 78" in p.stderr, p.stderr
            assert "FPM initialization failed" in p.stderr
            assert file_digest(c.db_files()) == before
            # --json on the read commands.
            assert c.ctl_json("pool", "list")["pools"][0]["name"] == "taken"
            assert c.ctl_json("pool", "show", "taken")["address"] == "unix:/run/x.sock"
    finally:
        pool_dir.remove()


def test_php_fpm_outlives_a_controller_that_leaves_and_the_next_one_adopts_it():
    pool_dir = PoolDir()
    fpm = PhpFpm(children=1)
    fpm.write("who.php", WHO)
    port = free_port()
    site = unique_name("adopt")
    directory = tempfile.mkdtemp(prefix="scalws-ctl-it-")
    try:
        first = Controller(directory, extra_args=pool_dir.args()).start()
        add_managed(first, "keep")
        first.add(site, php_site(port, fpm.www))
        first.ctl("pool", "assign", "keep", site, "--as", "main")
        first.ctl("instance", "start", site)
        master = master_pid(first, "keep")
        assert first.signal_and_wait(signal.SIGUSR2) == 0  # leave the sites serving
        first.log.close()
        assert alive(master)
        assert http_get(port, "/who.php") == (200, b"%d /who.php" % uid_of(POOL_USER))

        with Controller(directory, extra_args=pool_dir.args()) as second:
            second.instances.add(site)
            shown = second.ctl_json("pool", "show", "keep")
            assert shown["process"]["pid"] == master and shown["process"]["adopted"] is True
            assert shown["state"] == "running"
            assert http_get(port, "/who.php") == (200, b"%d /who.php" % uid_of(POOL_USER))
            # Adopted masters are supervised like the others.
            os.kill(master, signal.SIGKILL)
            wait_until(lambda: master_pid(second, "keep") not in (0, master), 10,
                       what="the adopted php-fpm restarted")
            wait_until(lambda: http_get(port, "/who.php")[0] == 200, 5, what="PHP again")
            last = master_pid(second, "keep")
        assert not alive(last)
    finally:
        fpm.stop()
        pool_dir.remove()
        shutil.rmtree(directory, ignore_errors=True)


def can_connect_as(user, path):
    """Whether a process with `user`'s uid and primary group (and no other group), as that
    user's worker runs, may connect to the unix socket at `path`."""
    account = pwd.getpwnam(user)
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    sys.exit(13)\n")
    p = subprocess.run(["setpriv", "--reuid=%d" % account.pw_uid, "--regid=%d" % account.pw_gid,
                        "--clear-groups", "/usr/bin/python3", "-c", code, path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode in (0, 13), p.stdout
    return p.returncode == 0


def test_each_instance_runs_as_its_own_user_and_cannot_reach_anothers_managed_pool():
    """Every tenant's worker used to run as nobody and every managed pool socket was the
    group nogroup's: any tenant could connect to any other tenant's pool and run PHP as it.
    Now each instance has a user and a group of its own, and its pool's socket lets in that
    group only."""
    pools = PoolDir()
    root = tempfile.mkdtemp(prefix="scalws-iso-")
    os.chmod(root, 0o755)
    with open(os.path.join(root, "who.php"), "w") as f:
        f.write(WHO)
    names = [unique_name("iso"), unique_name("iso")]
    ports = [free_port(), free_port()]
    try:
        with Controller(extra_args=pools.args()) as c:
            for name, port in zip(names, ports):
                c.add(name, php_site(port, root))
                add_managed(c, name + "p", processes=1)
                c.ctl("pool", "assign", name + "p", name, "--as", "main")
                c.ctl("instance", "start", name)
                assert http_get(port, "/who.php") == (200, b"%d /who.php" % uid_of(POOL_USER))
            users = [c.show(n)["user"] for n in names]
            assert users == ["scalws-" + n for n in names]
            for name, user in zip(names, users):
                (pid,) = workers_of(name)
                with open("/proc/%d/status" % pid) as f:
                    ids = dict(l.split(":", 1) for l in f.read().splitlines())
                assert ids["Uid"].split()[0] == str(uid_of(user)), ids["Uid"]
                assert ids["Gid"].split()[0] == str(pwd.getpwnam(user).pw_gid), ids["Gid"]
            socks = [c.ctl_json("pool", "show", n + "p")["address"][len("unix:"):] for n in names]
            for i in (0, 1):
                assert can_connect_as(users[i], socks[i])
                assert not can_connect_as(users[i], socks[1 - i]), (users[i], socks[1 - i])
            # A second instance as the same user: refused unless asked for.
            p = c.ctl("instance", "add", unique_name("iso"), "--config",
                      os.path.join(c.dir, names[0] + ".toml"), "--user", users[0], check=False)
            assert p.returncode == 1 and "--share-user" in p.stderr, p.stderr
            # Removing an instance removes the user made for it.
            c.ctl("instance", "remove", names[1])
            c.instances.discard(names[1])
            c.ctl("pool", "remove", names[1] + "p")
            try:
                pwd.getpwnam(users[1])
                assert False, "user %s left behind" % users[1]
            except KeyError:
                pass
    finally:
        pools.remove()
        shutil.rmtree(root, ignore_errors=True)


def test_only_the_php_fpm_binaries_the_controller_was_started_with_ever_run():
    """`pool add --managed --php-fpm ANY` ran ANY as root for any member of group scalws.
    Now only the controller's --php-fpm and its --allow-php-fpm binaries run."""
    pool_dir = PoolDir()
    marker = os.path.join(pool_dir.base, "ran-as-root")
    evil = os.path.join(pool_dir.base, "evil")
    with open(evil, "w") as f:
        f.write("#!/bin/sh\nid -u > %s\nexit 1\n" % marker)
    os.chmod(evil, 0o755)
    try:
        with Controller(extra_args=pool_dir.args()) as c:
            before = file_digest(c.db_files())
            p = c.ctl("pool", "add", "m", "--managed", "--user", POOL_USER, "--processes", "1",
                      "--php-fpm", evil, check=False)
            assert p.returncode == 1, (p.returncode, p.stderr)
            assert "not among the binaries" in p.stderr and "--allow-php-fpm" in p.stderr
            assert not os.path.exists(marker), "the binary ran"
            assert file_digest(c.db_files()) == before
    finally:
        pool_dir.remove()
