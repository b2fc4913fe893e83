"""scalwsctl against the real controller: usage errors exit 2 and refused operations exit 1,
both leaving the state DB byte-identical; --json on every read command; 20 parallel adds
give a consistent DB with 20 rows."""
import json
import os
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor

from controller_harness import (SCALWSCTL, Controller, file_digest, site_config, unique_name,
                                workers_of)
from harness import free_port

USAGE_ERRORS = [
    [],
    ["bogus"],
    ["instance"],
    ["instance", "frobnicate", "x"],
    ["cpu"],
    ["status", "extra"],
    ["instance", "show"],
    ["instance", "start"],
    ["instance", "stop", "a", "b"],
    ["instance", "add", "{name}"],
    ["instance", "add", "{name}", "--config"],
    ["instance", "add", "{name}", "--config", "{config}", "--mode", "both"],
    ["instance", "add", "{name}", "--config", "{config}", "--cpus", "0"],
    ["instance", "add", "{name}", "--config", "{config}", "--cpus", "many"],
    ["instance", "add", "{name}", "--config", "{config}", "--config", "{config}"],
    ["instance", "add", "{name}", "--config", "{config}", "--bogus"],
    ["instance", "set", "{name}"],
    ["instance", "set", "{name}", "--config", "{config}", "--cpus", "2"],
    ["instance", "start", "{name}", "--mode", "multi"],
    ["instance", "show", "{name}", "--events", "-1"],
    ["instance", "list", "--limit", "3"],
    ["--socket"],
    ["-q", "status"],
]


def refused_operations(name, config, bad_config, other_port_config):
    """(args, expected stderr fragment): well-formed commands the controller refuses."""
    return [
        (["instance", "add", name, "--config", config], "already exists"),
        (["instance", "add", "bad/name", "--config", config], "instance name"),
        (["instance", "add", "x" + name, "--config", config, "--user", "no-such-user-xyz"],
         "no user"),
        (["instance", "add", "y" + name, "--config", bad_config], "bad.toml:"),
        (["instance", "add", "z" + name, "--config", "/nonexistent/site.toml"], "cannot read"),
        (["instance", "add", "c" + name, "--config", other_port_config, "--cpus", "3"], "CPU"),
        (["instance", "set", name, "--config", bad_config], "bad.toml:"),
        (["instance", "set", "ghost", "--config", config], "no instance"),
        (["instance", "start", "ghost"], "no instance"),
        (["instance", "stop", "ghost"], "no instance"),
        (["instance", "reload", name], "not running"),
        (["instance", "remove", "ghost"], "no instance"),
        (["instance", "show", "ghost"], "no instance"),
    ]


def test_usage_errors_exit_2_and_refusals_exit_1_leaving_the_db_byte_identical():
    port = free_port()
    name = unique_name("ctl")
    with Controller() as c:
        c.add(name, site_config(port))
        config = os.path.join(c.dir, name + ".toml")
        bad = os.path.join(c.dir, "bad.toml")
        with open(bad, "w") as f:
            f.write('[[listen]]\naddress = "127.0.0.1:%d"\n[[route]]\nrespond = 5\n' % port)
        other = os.path.join(c.dir, "other.toml")
        with open(other, "w") as f:
            f.write(site_config(free_port()))
        c.ctl("status")  # settle: nothing is pending in the WAL from the add's connection
        before = file_digest(c.db_files())

        for args in USAGE_ERRORS:
            args = [a.format(name=name, config=config) for a in args]
            p = c.ctl(*args, check=False)
            assert p.returncode == 2, (args, p.returncode, p.stderr)
            assert "usage:" in p.stderr, args
            assert p.stdout == ""
            assert file_digest(c.db_files()) == before, args

        for args, fragment in refused_operations(name, config, bad, other):
            p = c.ctl(*args, check=False)
            assert p.returncode == 1, (args, p.returncode, p.stdout, p.stderr)
            assert fragment in p.stderr, (args, p.stderr)
            assert file_digest(c.db_files()) == before, args

        # Read commands change nothing either.
        for args in (["status"], ["cpu", "list"], ["instance", "list"],
                     ["instance", "show", name], ["instance", "logs", name]):
            c.ctl(*args)
            assert file_digest(c.db_files()) == before, args
        assert workers_of(name) == []


def test_every_read_command_speaks_json():
    port = free_port()
    name = unique_name("json")
    with Controller() as c:
        c.add(name, site_config(port), "--cpus", "1")
        c.ctl("instance", "start", name)
        status = c.ctl_json("status")
        assert status["instances"]["total"] == 1 and status["pid"] == c.pid
        assert c.ctl_json("cpu", "list")["cpus"][0]["exclusive"] == name
        [row] = c.ctl_json("instance", "list")["instances"]
        assert row["name"] == name and row["process_count"] == 1
        show = c.ctl_json("instance", "show", name)
        assert show["processes"][0]["state"] == "ready"
        assert show["config"]["listen"] == ["127.0.0.1:%d" % port]
        logs = c.ctl_json("instance", "logs", name, "--limit", "3")
        assert len(logs["events"]) == 3
        # --json after the command, the socket from the flag instead of the environment.
        p = subprocess.run([SCALWSCTL, "instance", "list", "--socket", c.socket, "--json"],
                           stdout=subprocess.PIPE, env={"PATH": os.environ.get("PATH", "")})
        assert p.returncode == 0
        assert json.loads(p.stdout)["instances"][0]["name"] == name
        # Human tables: a header and one aligned row.
        table = c.ctl("instance", "list").stdout.splitlines()
        assert table[0].split()[:3] == ["NAME", "MODE", "CPUS"]
        assert table[1].split()[0] == name


def test_twenty_parallel_adds_give_a_consistent_db():
    names = [unique_name("par") for _ in range(20)]
    ports = set()
    while len(ports) < 20:  # two draws of a free port can give the same one
        ports.add(free_port())
    with Controller() as c:
        for n, p in zip(names, sorted(ports)):
            with open(os.path.join(c.dir, n + ".toml"), "w") as f:
                f.write(site_config(p))

        def add(i):
            return c.ctl("instance", "add", names[i], "--config",
                         os.path.join(c.dir, names[i] + ".toml"), "--shared-cpus", check=False)

        with ThreadPoolExecutor(max_workers=20) as pool:
            results = list(pool.map(add, range(20)))
        failed = [(names[i], r.returncode, r.stderr) for i, r in enumerate(results) if r.returncode]
        assert not failed, failed

        listed = c.ctl_json("instance", "list")["instances"]
        assert sorted(i["name"] for i in listed) == sorted(names)
        db = sqlite3.connect("file:%s?mode=ro" % c.db_files()[0], uri=True)
        try:
            assert db.execute("SELECT count(*) FROM instances").fetchone()[0] == 20
            assert db.execute("SELECT count(*) FROM cpu_assignments WHERE shared = 1").fetchone()[0] == 20
            per_cpu = dict(db.execute("SELECT cpu, count(*) FROM cpu_assignments GROUP BY cpu"))
            assert per_cpu == {0: 10, 1: 10}  # least-loaded first: spread evenly
            assert db.execute("SELECT count(*) FROM events WHERE kind = 'instance.added'"
                              ).fetchone()[0] == 20
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            db.close()
        # And one more exclusive add is refused: every CPU is shared by someone.
        extra = unique_name("excl")
        with open(os.path.join(c.dir, extra + ".toml"), "w") as f:
            f.write(site_config(free_port()))
        p = c.ctl("instance", "add", extra, "--config", os.path.join(c.dir, extra + ".toml"),
                  check=False)
        assert p.returncode == 1 and "CPU" in p.stderr
        c.assert_no_fd_leak()


def test_instances_run_as_root_only_under_a_controller_started_to_allow_it():
    """`instance add --user root` over the socket let any member of group scalws serve
    /etc/shadow. Refused now, unless the controller was started with
    --allow-root-instances."""
    name = unique_name("root")
    port = free_port()
    with Controller() as c:
        path = os.path.join(c.dir, name + ".toml")
        with open(path, "w") as f:
            f.write(site_config(port))
        before = file_digest(c.db_files())
        p = c.ctl("instance", "add", name, "--config", path, "--user", "root", check=False)
        assert p.returncode == 1, (p.returncode, p.stderr)
        assert "--allow-root-instances" in p.stderr, p.stderr
        assert file_digest(c.db_files()) == before
    with Controller(extra_args=["--allow-root-instances"]) as c:
        added = c.add(name, site_config(port), "--user", "root")
        assert c.show(name)["user"] == "root", added.stdout
