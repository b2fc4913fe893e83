"""Response rules in an instance under the controller: [site] headers, error pages read
beneath a root outside any docroot (the instance's own user, Landlock on), and
compression, in one and two worker processes."""
import gzip
import json
import os
import shutil
import tempfile

import pytest

from controller_harness import Controller, unique_name
from harness import curl, free_port

BIG = "".join("<p>row %d of an instance page</p>\n" % i for i in range(3000))


def config(port, errors_root):
    return """
[[listen]]
address = "127.0.0.1:%d"

[site]
headers = { set = { strict-transport-security = "max-age=63072000" } }
errors = { root = "%s", 404 = "/404.html" }
compress = { encodings = ["gzip"] }

[[route]]
match = { exact = "/page" }
respond = { body = %s, headers = { content-type = "text/html" } }
""" % (port, errors_root, json.dumps(BIG))


@pytest.fixture
def errors_root():
    d = tempfile.mkdtemp(prefix="scalws-errors-")
    os.chmod(d, 0o755)
    with open(os.path.join(d, "404.html"), "w") as f:
        f.write("<h1>instance 404</h1>\n")
    os.chmod(os.path.join(d, "404.html"), 0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fetch(port, path, *headers):
    args = ["-D", "-", "-o", "/dev/stdout"]
    for h in headers:
        args += ["-H", h]
    code, out, err = curl(*(args + ["http://127.0.0.1:%d%s" % (port, path)]))
    assert code == 0, err
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), fields, body


@pytest.mark.parametrize("cpus", ["1", "2"])
def test_site_rules_in_an_instance(errors_root, cpus):
    port = free_port()
    name = unique_name("resp")
    with Controller() as c:
        c.add(name, config(port, errors_root), "--cpus", cpus)
        c.ctl("instance", "start", name)
        for _ in range(4):  # more than one worker answers with two
            status, fields, body = fetch(port, "/page", "Accept-Encoding: gzip")
            assert status == 200
            assert fields["strict-transport-security"] == "max-age=63072000"
            assert fields["content-encoding"] == "gzip"
            assert gzip.decompress(body).decode() == BIG
            status, fields, body = fetch(port, "/nowhere")
            assert (status, body) == (404, b"<h1>instance 404</h1>\n")
            assert fields["strict-transport-security"] == "max-age=63072000"
