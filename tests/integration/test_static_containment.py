"""Files never leave a static route's root: symlinks and swaps are held beneath it by
openat2 in the kernel."""
import os
import tempfile

from static_site import Client, one_response, static_server


def outside_dir():
    d = tempfile.mkdtemp(prefix="scalws-outside-")
    with open(os.path.join(d, "secret.txt"), "w") as f:
        f.write("TOP SECRET")
    return d


def test_symlinks_leaving_the_root_are_refused():
    out = outside_dir()
    rel_out = os.path.relpath(out, "/tmp")  # the docroot is /tmp/scalws-it-*/www
    files = {
        "page.txt": "inside",
        "abs-link": ("symlink", os.path.join(out, "secret.txt")),
        "rel-link": ("symlink", "../../%s/secret.txt" % rel_out),
        "dir-link": ("symlink", out),
        "sub/in-link": ("symlink", "../page.txt"),
        "abs-in-link": ("symlink", "/proc/self/root/etc/passwd"),
    }
    with static_server(files) as s, Client(s.port) as c:
        for path in ("/abs-link", "/rel-link", "/dir-link/secret.txt", "/abs-in-link"):
            r = c.get(path)
            assert r.status == 403, (path, r)
            assert b"SECRET" not in r.body and b"root:" not in r.body
        r = c.get("/sub/in-link")
        assert r.status == 200 and r.body == b"inside"


def test_follow_symlinks_never_refuses_every_symlink():
    files = {"page.txt": "inside", "in-link": ("symlink", "page.txt"),
             "d/x.txt": "x", "dlink": ("symlink", "d")}
    with static_server(files, 'follow_symlinks = "never"') as s, Client(s.port) as c:
        assert c.get("/page.txt").body == b"inside"
        assert c.get("/in-link").status == 403
        assert c.get("/dlink/x.txt").status == 403
        assert c.get("/d/x.txt").status == 200


def test_a_cached_file_swapped_for_an_outside_symlink_is_not_served():
    out = outside_dir()
    with static_server({"page.txt": "inside"}) as s, Client(s.port) as c:
        assert c.get("/page.txt").body == b"inside"  # now cached (check mode)
        page = os.path.join(s.dir, "www", "page.txt")
        os.unlink(page)
        os.symlink(os.path.join(out, "secret.txt"), page)
        r = c.get("/page.txt")
        assert r.status == 403 and b"SECRET" not in r.body
        # A directory on the path swapped for a symlink to the outside.
        os.makedirs(os.path.join(s.dir, "www", "d"))
        with open(os.path.join(s.dir, "www", "d", "secret.txt"), "w") as f:
            f.write("inside d")
        assert c.get("/d/secret.txt").body == b"inside d"
        os.rename(os.path.join(s.dir, "www", "d"), os.path.join(s.dir, "www", "d.old"))
        os.symlink(out, os.path.join(s.dir, "www", "d"))
        r = c.get("/d/secret.txt")
        assert r.status == 403 and b"TOP" not in r.body


def test_traversal_never_reaches_outside_files():
    with static_server({"x": "x"}) as s:
        paths = [b"/../../../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd",
                 b"/x/../../etc/passwd", b"/..%2f..%2fetc%2fpasswd", b"/%2e%2e%5c%2e%2e%5cetc",
                 b"/.%2e/.%2e/etc/passwd", b"/etc/passwd", b"/proc/self/environ"]
        for p in paths:
            r = one_response(s.port, b"GET " + p + b" HTTP/1.1\r\nHost: t\r\n\r\n")
            assert r.status in (400, 404), (p, r.status)
            assert b"root:" not in r.body


def test_missing_root_is_a_config_error_naming_the_route():
    import subprocess
    from harness import SCALWSD
    d = tempfile.mkdtemp(prefix="scalws-badroot-")
    cfg = os.path.join(d, "site.toml")
    with open(cfg, "w") as f:
        f.write('[[listen]]\naddress = "127.0.0.1:1"\n\n[[route]]\n'
                'static = { root = "/nonexistent/scalws-www" }\n')
    p = subprocess.run([SCALWSD, "--config", cfg], capture_output=True, timeout=10)
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "site.toml:4:1" in err or "site.toml:5:" in err, err
    assert "/nonexistent/scalws-www" in err and "No such file" in err, err
