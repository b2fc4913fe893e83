"""The example site's home page (deploy/examples/www/index.html) and relative docroots,
which resolve against the config file's directory."""
import os

from harness import SOURCE_DIR, Scalwsd, curl, parse_responses
from static_site import settle, write_tree

EXAMPLES = os.path.join(os.path.abspath(SOURCE_DIR), "deploy", "examples")


def test_example_site_serves_its_home_page():
    with open(os.path.join(EXAMPLES, "site.toml")) as f:
        template = f.read().replace("127.0.0.1:8080", "127.0.0.1:$port")
    s = Scalwsd(template, start=False)
    # The copy of the config sits in a temp dir; its relative root "www" must find the
    # example's pages there.
    os.symlink(os.path.join(EXAMPLES, "www"), os.path.join(s.dir, "www"))
    s.start()
    settle(s)
    with s:
        code, out, err = curl("-i", s.url("/"))
        assert code == 0, err
        r = parse_responses(out)[0]
        assert r.status == 200
        with open(os.path.join(EXAMPLES, "www", "index.html"), "rb") as f:
            assert r.body == f.read()
        assert r.header("content-type") == "text/html; charset=utf-8"
        assert r.header("cache-control") == "max-age=60"
        assert r.header("etag")
        code, out, _ = curl(s.url("/health"))
        assert out == b"ok\n"


def test_relative_root_is_resolved_against_the_config_directory():
    s = Scalwsd('[server]\nworkers = 1\n[[listen]]\naddress = "127.0.0.1:$port"\n'
                '[[route]]\nstatic = { root = "site/www" }\n', start=False)
    write_tree(os.path.join(s.dir, "site", "www"), {"index.html": "relative root"})
    # Started from another working directory, the root is still the config's.
    cwd = os.getcwd()
    os.chdir("/")
    try:
        s.start()
    finally:
        os.chdir(cwd)
    settle(s)
    with s:
        code, out, _ = curl(s.url("/"))
        assert out == b"relative root"
