"""App routes (`app = { name = "..." }`), with the real controller, scalwsctl, scalwsd and
Debian's nodejs: an instance routes to the app assigned to it under a name; assigning the
name to another app (after releasing the first) reaches the running workers on `instance
reload`, which `instance show` says is pending; an app still used by running workers
cannot be removed; a reload that would leave an app route unbound is refused and the
workers keep what they run; a controller that leaves the workers and apps serving is
followed by one that re-attaches to both, the app route serving throughout; a standalone
scalwsd refuses an app route, pointing at a proxy route to the app's sockets."""
import os
import signal
import subprocess
import tempfile

from app_support import AppDirs, add_node, app_site, curl, pids
from controller_harness import Controller, unique_name, wait_until, workers_of
from harness import BIN_DIR, free_port


def test_an_app_route_follows_assign_and_release_on_reload():
    dirs = AppDirs()
    port = free_port()
    name = unique_name("route")
    try:
        with Controller(extra_args=dirs.args()) as c:
            add_node(c, dirs, name="blue", processes=1)
            add_node(c, dirs, name="green", processes=1)
            c.add(name, app_site(port, ("/api/", "api")) +
                  '[[route]]\nrespond = { body = "site\\n" }\n')
            c.ctl("app", "assign", "blue", name, "--as", "api")
            c.ctl("instance", "start", name)
            assert curl(port, "/elsewhere") == "site\n"
            blue = pids(c, "blue")[0]
            green = pids(c, "green")[0]

            def served_by():
                return int(curl(port, "/api/pid"))
            assert served_by() == blue

            # The name moves to green: stored at once, the workers follow on reload.
            c.ctl("app", "release", "blue")
            c.ctl("app", "assign", "green", name, "--as", "api")
            assert c.show(name)["reload_pending"] is True
            p = c.ctl("app", "remove", "blue", check=False)
            assert p.returncode == 1 and "still used by the running workers of instance '%s'" \
                % name in p.stderr and "reload or stop" in p.stderr, p.stderr
            c.ctl("instance", "reload", name)
            assert not c.show(name)["reload_pending"]
            wait_until(lambda: served_by() == green, 10, what="the route to reach green")
            c.ctl("app", "remove", "blue")

            # Released with nothing in its place: the reload is refused, naming the fix, and
            # the workers go on with green.
            c.ctl("app", "release", "green")
            p = c.ctl("instance", "reload", name, check=False)
            assert p.returncode == 1 and \
                "scalwsctl app assign APP %s --as api" % name in p.stderr, p.stderr
            assert c.show(name)["unbound_apps"] == ["api"]
            c.ctl("app", "assign", "green", name, "--as", "api")
            assert served_by() == green
            c.ctl("instance", "stop", name)
    finally:
        dirs.remove()


def test_workers_with_an_app_route_are_reattached_by_the_next_controller():
    dirs = AppDirs()
    port = free_port()
    name = unique_name("reatt")
    first = None
    try:
        first = Controller(extra_args=dirs.args()).start()
        add_node(first, dirs, name="web", processes=1)
        first.add(name, app_site(port, ("", "front")))
        first.ctl("app", "assign", "web", name, "--as", "front")
        first.ctl("instance", "start", name)
        app_pid = pids(first, "web")[0]
        assert int(curl(port, "/pid")) == app_pid
        workers = workers_of(name)
        assert first.signal_and_wait(signal.SIGUSR2) == 0
        first.log.close()
        assert int(curl(port, "/pid")) == app_pid  # nobody in between: still served

        with Controller(first.dir, extra_args=dirs.args()) as second:
            second.instances.add(name)
            # What the workers were told (their apps included) is what the DB says: they
            # are taken over, not replaced.
            wait_until(lambda: second.ready_pids(name) == workers, 10, what="re-attach")
            assert pids(second, "web") == [app_pid]
            assert not second.show(name)["reload_pending"]
            assert int(curl(port, "/pid")) == app_pid
            second.ctl("instance", "reload", name)
            assert int(curl(port, "/pid")) == app_pid
            second.ctl("instance", "stop", name)
    finally:
        if first is not None and first.proc.poll() is None:
            first.signal_and_wait(signal.SIGINT)
        dirs.remove()


def test_standalone_scalwsd_refuses_an_app_route_and_points_at_a_proxy_route():
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write('[[listen]]\naddress = "127.0.0.1:%d"\n'
                '[[route]]\nmatch = { prefix = "/api/" }\napp = { name = "api" }\n' % free_port())
        path = f.name
    try:
        p = subprocess.run([os.path.join(BIN_DIR, "scalwsd"), "--check-config", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.returncode == 1, (p.stdout, p.stderr)
        out = p.stdout + p.stderr
        assert "%s:5:" % path in out and "route.app: apps are run by scalws-controller" in out, out
        assert 'proxy = { upstream = "NAME" }' in out and "unix:/run/scalws/apps/APP/0.sock" in \
            out, out
    finally:
        os.unlink(path)
