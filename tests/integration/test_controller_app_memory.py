"""--memory, with the real controller, scalwsctl, Debian's nodejs and gunicorn and the
host's memory cgroups (cgroup v2 when the controller's cgroup is delegated, else the v1
memory hierarchy, as on CI): each app process runs in a cgroup of its own, made before it
starts, with the limit; a node process that allocates past its 64 MiB is killed by the
OOM killer, restarted with backoff and serves again, and `app show` says it was killed
for memory and shows the cgroup's figures; a gunicorn master and its workers share one
cgroup, whose figures count them all; a controller that leaves the apps serving is
followed by one that adopts them in their cgroups; `app remove` removes the cgroups; a
controller that can write no memory cgroup refuses --memory, saying what each hierarchy
lacks."""
import os
import signal
import subprocess
import tempfile

from app_support import AppDirs, add_node, add_wsgi, socket_get, uid, NODE_USER
from controller_harness import Controller, alive, file_digest, wait_until

MiB = 1 << 20


def last_lines(path, size=2000):
    try:
        with open(path, "rb") as f:
            return f.read()[-size:].decode("utf-8", "replace")
    except OSError as e:
        return str(e)


def cgroup_of(pid):
    """The memory cgroup path of `pid`: v1's memory line, else v2's."""
    with open("/proc/%d/cgroup" % pid) as f:
        lines = f.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return path
    return [ln for ln in lines if ln.startswith("0::")][0][3:]


def session_pids(leader):
    """Every live process whose session is `leader`'s (a gunicorn master and its workers)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == leader and fields[0] != "Z":
            out.append(int(entry))
    return sorted(out)


def process(c, name, index=0):
    return c.ctl_json("app", "show", name)["status"]["processes"][index]


def test_an_app_over_its_memory_is_killed_restarted_and_shown_killed_for_memory():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args()) as c:
            web = add_node(c, dirs, processes=1, extra=("--memory", "64m"))
            first = process(c, "web")
            memory = first["memory"]
            assert memory["limit_bytes"] == 64 * MiB, memory
            assert 0 < memory["current_bytes"] <= 64 * MiB and memory["in_cgroup"], memory
            assert memory["oom_kills"] == 0
            assert memory["cgroup"].endswith("/web/0"), memory
            assert memory["cgroup"].endswith(cgroup_of(first["pid"])), (memory, cgroup_of(
                first["pid"]))
            assert web["status"]["cgroups"].startswith("cgroup v"), web["status"]
            assert socket_get(web["sockets"][0], "/eat/8") == b"holding 8 MiB\n"

            # 200 MiB more: the OOM killer ends it before it answers.
            p = subprocess.run(["curl", "-sS", "--max-time", "20", "--unix-socket",
                                web["sockets"][0], "http://x/eat/200"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert b"holding" not in p.stdout, p.stdout
            # Quiet, this takes a second or two: the OOM killer. When node's code was first
            # read inside this cgroup (a cold page cache), the cgroup rereads it from disk
            # at its limit instead, and never reaches the OOM killer: the controller ends it
            # after 10 s of that thrashing (the restart then takes longer on a busy machine).
            try:
                wait_until(lambda: process(c, "web")["restarts"] == 1 and
                           process(c, "web")["state"] == "running", 60, what="node restarted")
            except AssertionError as e:
                raise AssertionError("%s: %s\napp.log: %s\ncontroller: %s" % (
                    e, process(c, "web"), last_lines(web["status"]["log_path"]),
                    c.read_log()[-3000:])) from None
            again = process(c, "web")
            assert again["pid"] not in (0, first["pid"]) and not alive(first["pid"])
            assert "killed for memory" in again["last_exit"] and "--memory 64 MiB" in \
                again["last_exit"], again
            assert again["memory"]["oom_kills"] + again["memory"]["thrash_kills"] >= 1, \
                again["memory"]
            assert again["memory"]["cgroup"] == memory["cgroup"]  # the same cgroup, kept
            assert socket_get(web["sockets"][0], "/back") == b"node %d /back\n" % uid(NODE_USER)
            shown = c.ctl("app", "show", "web").stdout
            assert "killed for memory" in shown and " OOM kill(s), " in shown, shown
            assert "of 64.0 MiB" in shown, shown

            cgroup = memory["cgroup"]
            c.ctl("app", "remove", "web")
            wait_until(lambda: not os.path.exists(cgroup), 10, what="the cgroup to go")
            assert not os.path.exists(os.path.dirname(cgroup))
            # The controller's subtree went with its last app.
            assert not os.path.exists(os.path.dirname(os.path.dirname(cgroup)))
    finally:
        dirs.remove()


def test_gunicorns_workers_share_the_masters_cgroup_and_adoption_keeps_it():
    dirs = AppDirs()
    directory = tempfile.mkdtemp(prefix="scalws-ctl-it-")
    first = None
    try:
        first = Controller(directory, extra_args=dirs.args()).start()
        py = add_wsgi(first, dirs, extra=("--memory", "256m"))
        master = process(first, "py")
        cgroup = master["memory"]["cgroup"]
        # The master and its two workers (it accepts before it has forked them all).
        members = wait_until(lambda: len(session_pids(master["pid"])) == 3 and
                             session_pids(master["pid"]), 10, what="gunicorn's workers")
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            in_cgroup = sorted(int(p) for p in f.read().split())
        assert in_cgroup == members, (in_cgroup, members)
        # The cgroup's figure counts the workers too: 48 MiB held by a worker show there,
        # not in the master's RSS (the figure `app show` had before cgroups).
        before = master["memory"]["current_bytes"]
        assert socket_get(py["sockets"][0], "/eat/48").startswith(b"worker ")
        grown = process(first, "py")
        assert grown["memory"]["current_bytes"] >= before + 48 * MiB, (before, grown["memory"])
        assert grown["rss_bytes"] < master["rss_bytes"] + 8 * MiB, (master, grown)
        assert first.signal_and_wait(signal.SIGUSR2) == 0
        first.log.close()
        assert all(alive(p) for p in members)

        with Controller(directory, extra_args=dirs.args()) as second:
            adopted = process(second, "py")
            assert adopted["pid"] == master["pid"] and adopted["adopted"], adopted
            assert adopted["memory"]["cgroup"] == cgroup and adopted["memory"]["in_cgroup"]
            assert adopted["memory"]["limit_bytes"] == 256 * MiB
            assert socket_get(py["sockets"][0], "/still") == b"wsgi %d /still\n" % uid("www-data")
            assert all(cgroup.endswith(cgroup_of(p)) for p in members)
        # A controller that stops stops the apps and removes their cgroups.
        wait_until(lambda: not os.path.exists(cgroup), 15, what="the cgroup to go")
        assert not os.path.exists(os.path.dirname(os.path.dirname(cgroup)))
    finally:
        if first is not None and first.proc.poll() is None:  # failed before it left
            first.signal_and_wait(signal.SIGINT)
        dirs.remove()
        subprocess.run(["rm", "-rf", directory])


# Runs the controller in a mount namespace of its own where every cgroup hierarchy is
# read-only (the pid stays the controller's: each step execs the next).
READ_ONLY_CGROUPS = [
    "unshare", "--mount", "--propagation", "private", "sh", "-c",
    'for m in $(awk \'$3 == "cgroup" || $3 == "cgroup2" {print $2}\' /proc/self/mounts); do '
    'mount -o remount,bind,ro "$m" || exit 1; done; exec "$@"', "sh"]


def test_memory_is_refused_with_what_is_missing_when_no_cgroup_can_be_written():
    dirs = AppDirs()
    try:
        with Controller(extra_args=dirs.args(), wrapper=READ_ONLY_CGROUPS) as c:
            before = file_digest(c.db_files())
            p = c.ctl("app", "add", "web", "--runtime", "node", "--entry",
                      os.path.join(dirs.node, "server.js"), "--processes", "1", "--user",
                      NODE_USER, "--memory", "64m", check=False)
            assert p.returncode == 1, (p.returncode, p.stderr)
            assert "--memory cannot be enforced here: no memory cgroup the controller can " \
                "use: cgroup v2: " in p.stderr, p.stderr
            assert "cgroup v1: " in p.stderr and "Read-only file system" in p.stderr, p.stderr
            assert file_digest(c.db_files()) == before
            assert c.ctl_json("app", "list")["apps"] == []
            add_node(c, dirs, processes=1)  # without --memory: runs
    finally:
        dirs.remove()
