"""The response cache under the controller: the memory tier is made by the controller and
handed to every worker of the instance, so an entry one worker filled is a hit in the
others (multi and single mode), outlives a worker that dies and a controller that restarts,
and is never seen by another instance; `scalwsctl instance cache purge` drops entries in
every worker (one URL, a prefix, everything, the disk tier too) and answers once all did;
`instance cache show` and `instance metrics` count what the cache did."""
import os
import signal
import subprocess

import pytest

from cache_upstream import CacheUpstream
from controller_harness import (Controller, Load, site_config, unique_name, wait_until,
                                workers_of)
from harness import free_port

CONFIG = """[[listen]]
address = "127.0.0.1:%(port)d"
[[route]]
match = { prefix = "/" }
proxy = { upstream = "app", cache = "pages" }
[upstream.app]
servers = ["%(upstream)s"]
[cache.pages]
memory = "8m"
%(extra)s
"""


def config(port, upstream, extra=""):
    return CONFIG % dict(port=port, upstream=upstream.address, extra=extra)


def get(port, path):
    """(status, {field: value}, body) of one curl request on a new connection."""
    out = subprocess.run(["curl", "-s", "-i", "--max-time", "10",
                          "http://127.0.0.1:%d%s" % (port, path)],
                         capture_output=True, timeout=20).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), fields, body.decode("latin-1")


def url(port, path):
    return "http://127.0.0.1:%d%s" % (port, path)


@pytest.fixture
def upstream():
    with CacheUpstream() as u:
        yield u


@pytest.mark.parametrize("mode", ["multi", "single"])
def test_an_entry_filled_by_one_worker_is_a_hit_in_every_other(upstream, mode):
    port = free_port()
    name = unique_name("cache")
    upstream.set("/shared", headers=[("Cache-Control", "max-age=60")])
    with Controller() as c:
        c.add(name, config(port, upstream), "--cpus", "2", "--mode", mode)
        c.ctl("instance", "start", name)
        # Twenty new connections over two workers (or two loops): all on one is 2^-19.
        for _ in range(20):
            status, fields, body = get(port, "/shared")
            assert (status, body) == (200, "body of /shared #1\n")
        assert upstream.count("/shared") == 1
        assert "hit" in fields["cache-status"]
        # The figures the workers report reach show and metrics.
        shown = wait_until(lambda: (lambda s: s if s["caches"][0]["entries"] == 1 else None)(
            c.ctl_json("instance", "cache", "show", name)), 10, what="the entry counted")
        [pages] = shown["caches"]
        assert pages["name"] == "pages" and pages["memory"] == 8 << 20
        assert 0 < pages["memory_bytes"] < 8 << 20
        text = c.ctl("instance", "cache", "show", name).stdout
        assert "pages" in text and "hit rate" in text, text
        metrics = wait_until(lambda: (lambda m: m if m["window"]["proxy_cache"]["hits"] >= 19
                                      else None)(c.ctl_json("instance", "metrics", name)),
                             10, what="the hits in instance metrics")
        assert metrics["window"]["proxy_cache"]["misses"] == 1
        assert c.show(name)["caches"][0]["entries"] == 1


def test_the_cache_outlives_a_worker_and_a_controller_restart(upstream):
    port = free_port()
    name = unique_name("keep")
    upstream.set("/kept", headers=[("Cache-Control", "max-age=60")])
    first = Controller()
    first.start()
    try:
        first.add(name, config(port, upstream), "--cpus", "2")
        first.ctl("instance", "start", name)
        assert get(port, "/kept")[2] == "body of /kept #1\n"
        # A worker killed: its replacement maps the same area.
        pids = first.ready_pids(name)
        os.kill(pids[0], signal.SIGKILL)
        wait_until(lambda: (lambda r: len(r) == 2 and pids[0] not in r)(first.ready_pids(name)),
                   5, what="a replacement")
        for _ in range(10):
            assert get(port, "/kept")[2] == "body of /kept #1\n"
        # The controller dies; the next one takes the area back from the workers it
        # re-attaches, and a worker it starts later still shares it.
        first.kill9()
        with Controller(first.dir) as second:
            second.instances.add(name)
            pids = workers_of(name)
            wait_until(lambda: second.ready_pids(name) == pids, 5, what="re-attach")
            show = second.show(name)
            assert all(p["attached"] for p in show["processes"]), show["processes"]
            os.kill(pids[1], signal.SIGKILL)
            wait_until(lambda: (lambda r: len(r) == 2 and pids[1] not in r)(
                second.ready_pids(name)), 5, what="a replacement")
            for _ in range(10):
                assert get(port, "/kept")[2] == "body of /kept #1\n"
            assert upstream.count("/kept") == 1
            # A restart of the instance starts with an empty cache.
            second.ctl("instance", "restart", name)
            assert get(port, "/kept")[2] == "body of /kept #2\n"
    finally:
        if first.proc.poll() is None:
            first.kill9()
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)


def test_two_instances_never_see_each_others_entries(upstream):
    a_port, b_port = free_port(), free_port()
    a, b = unique_name("ca"), unique_name("cb")
    upstream.set("/own", headers=[("Cache-Control", "max-age=60")])
    with Controller() as c:
        c.add(a, config(a_port, upstream), "--cpus", "1", "--shared-cpus")
        c.add(b, config(b_port, upstream), "--cpus", "1", "--shared-cpus")
        c.ctl("instance", "start", a)
        c.ctl("instance", "start", b)
        assert get(a_port, "/own")[2] == "body of /own #1\n"
        assert get(b_port, "/own")[2] == "body of /own #2\n"
        assert get(a_port, "/own")[2] == "body of /own #1\n"
        assert get(b_port, "/own")[2] == "body of /own #2\n"
        # A purge of one instance leaves the other's entries alone.
        c.ctl("instance", "cache", "purge", a, "--all")
        assert get(b_port, "/own")[2] == "body of /own #2\n"
        assert get(a_port, "/own")[2] == "body of /own #3\n"


def test_purge_by_url_prefix_and_all_in_every_worker_under_load(upstream, tmp_path):
    port = free_port()
    name = unique_name("purge")
    disk = str(tmp_path / "disk")
    for path in ("/a", "/blog/1", "/blog/2", "/other"):
        upstream.set(path, headers=[("Cache-Control", "max-age=60")])
    upstream.set("/", headers=[("Cache-Control", "max-age=60")])
    with Controller() as c:
        c.add(name, config(port, upstream, 'disk = "%s"\n' % disk), "--cpus", "2")
        c.ctl("instance", "start", name)
        for path in ("/a", "/blog/1", "/blog/2", "/other"):
            assert get(port, path)[2] == "body of %s #1\n" % path
        with Load(port, threads=4, path="/") as load:
            load.wait_for(100)
            # One URL, as the cache keys it: memory and disk both.
            done = c.ctl_json("instance", "cache", "purge", name, "--url", url(port, "/a"))
            assert done["memory_entries"] == 1 and done["disk_files"] == 1, done
            assert get(port, "/a")[2] == "body of /a #2\n"
            assert get(port, "/blog/1")[2] == "body of /blog/1 #1\n"
            # A prefix.
            done = c.ctl_json("instance", "cache", "purge", name, "--prefix", url(port, "/blog/"))
            assert done["memory_entries"] == 2 and done["disk_files"] == 2, done
            assert get(port, "/blog/1")[2] == "body of /blog/1 #2\n"
            assert get(port, "/blog/2")[2] == "body of /blog/2 #2\n"
            assert get(port, "/other")[2] == "body of /other #1\n"
            # Everything (the load's "/" included), in each worker and on disk.
            text = c.ctl("instance", "cache", "purge", name, "--all").stdout
            assert text.startswith("purged "), text
            assert get(port, "/other")[2] == "body of /other #2\n"
            load.wait_for(100)
        assert not load.failures, load.failures[:5]
        assert load.ok > 200


def test_purge_and_show_refuse_what_is_not_there(upstream):
    port, plain = free_port(), free_port()
    name, bare = unique_name("cref"), unique_name("bare")
    with Controller() as c:
        c.add(name, config(port, upstream))
        c.add(bare, site_config(plain), "--shared-cpus")
        # Not running: refused, nothing changes.
        p = c.ctl("instance", "cache", "purge", name, "--all", check=False)
        assert p.returncode == 1 and "not running" in p.stderr, p.stderr
        c.ctl("instance", "start", name)
        c.ctl("instance", "start", bare)
        for args, code, what in [
                (("instance", "cache", "purge", name), 2, "one of --url"),
                (("instance", "cache", "purge", name, "--all", "--url", url(port, "/")), 2,
                 "one of --url"),
                (("instance", "cache", "purge", name, "--url", "/relative"), 2,
                 "absolute http"),
                (("instance", "cache", "purge", name, "--all", "--cache", "nope"), 1,
                 "no [cache.nope]"),
                (("instance", "cache", "purge", bare, "--all"), 1, "has no [cache]"),
                (("instance", "cache", "show", "missing"), 1, "missing")]:
            p = c.ctl(*args, check=False)
            assert p.returncode == code and what in p.stderr, (args, p.returncode, p.stderr)
        assert c.ctl_json("instance", "cache", "show", bare)["caches"] == []


def test_a_reload_that_changes_a_caches_storage_needs_a_restart(upstream):
    port = free_port()
    name = unique_name("cstore")
    upstream.set("/r", headers=[("Cache-Control", "max-age=60")])
    with Controller() as c:
        c.add(name, config(port, upstream))
        c.ctl("instance", "start", name)
        assert get(port, "/r")[2] == "body of /r #1\n"
        # A setting per request reloads in place and keeps the entries ...
        c.set_config(name, config(port, upstream, 'lock_timeout = "1s"\n'))
        c.ctl("instance", "reload", name)
        assert get(port, "/r")[2] == "body of /r #1\n"
        # ... a new memory size does not.
        c.set_config(name, config(port, upstream).replace('"8m"', '"16m"'))
        p = c.ctl("instance", "reload", name, check=False)
        assert p.returncode == 1 and "instance restart" in p.stderr, p.stderr
        assert get(port, "/r")[2] == "body of /r #1\n"
        c.ctl("instance", "restart", name)
        assert get(port, "/r")[2] == "body of /r #2\n"
