"""instance reload under load: the stored config reaches every worker in place, with zero
failed requests; a config that cannot apply is refused before it reaches them."""
from controller_harness import Controller, Load, http_get, site_config, unique_name, workers_of
from harness import free_port


def reload_under_load(mode):
    port = free_port()
    name = unique_name("reload")
    with Controller() as c:
        c.add(name, site_config(port, "v0\n"), "--cpus", "2", "--mode", mode)
        c.ctl("instance", "start", name)
        pids = workers_of(name)
        with Load(port, threads=6) as load:
            load.wait_for(200)
            for version in range(1, 6):
                body = "v%d\n" % version
                c.set_config(name, site_config(port, body))
                assert c.show(name)["reload_pending"] is True
                c.ctl("instance", "reload", name)
                assert c.show(name)["reload_pending"] is False
                # Answered once every loop took it: new connections see it at once.
                for _ in range(10):
                    assert http_get(port) == (200, body.encode())
                load.wait_for(100)
            load.stop()
        assert load.failures == [], load.failures[:10]
        assert workers_of(name) == pids  # in place: the same processes
        assert {b"v0\n", b"v5\n"} <= load.bodies
        assert load.ok > 700
        c.assert_no_fd_leak(extra=((2 * 4) if mode == "multi" else (3 + 2)) + 2)  # + its logs


def test_reload_under_load_multi():
    reload_under_load("multi")


def test_reload_under_load_single():
    reload_under_load("single")


def test_a_reload_that_cannot_apply_is_refused_and_the_site_keeps_serving():
    port = free_port()
    name = unique_name("refuse")
    with Controller() as c:
        c.add(name, site_config(port, "kept\n"))
        c.ctl("instance", "start", name)
        # A new listen address needs a restart, not a reload.
        c.set_config(name, site_config(free_port(), "moved\n"))
        p = c.ctl("instance", "reload", name, check=False)
        assert p.returncode == 1
        assert "restart" in p.stderr
        assert http_get(port) == (200, b"kept\n")
        assert c.show(name)["reload_pending"] is True
        # An invalid config never gets stored, so it can never reach a worker.
        with open(c.dir + "/broken.toml", "w") as f:
            f.write("[[listen]]\naddress = \"127.0.0.1:%d\"\n[[route]]\nbogus = 1\n" % port)
        p = c.ctl("instance", "set", name, "--config", c.dir + "/broken.toml", check=False)
        assert p.returncode == 1 and "broken.toml:" in p.stderr
        # The restart applies the new address.
        c.ctl("instance", "restart", name)
        new_port = c.show(name)["config"]["listen"][0].rsplit(":", 1)[1]
        assert http_get(int(new_port)) == (200, b"moved\n")
