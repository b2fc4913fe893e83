"""The scalwsd command line: --check-config (0 valid; 1 with every error as file:line:col),
--version, --help, usage errors (exit 2), and a refused config at start (exit 1)."""
import os
import re
import socket
import subprocess
import tempfile

import pytest

from harness import SCALWSD, SOURCE_DIR, free_port, route, site


def run(*args, timeout=10):
    p = subprocess.run([SCALWSD] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory(prefix="scalws-cli-") as d:
        yield d


def write(d, text, name="site.toml"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_check_config_valid(tmp):
    path = write(tmp, site([route("ok")]).replace("$port", "8080"))
    code, out, err = run("--check-config", path)
    assert code == 0, err
    example = os.path.join(SOURCE_DIR, "deploy/examples/site.toml")
    code, out, err = run("--check-config", example)
    assert code == 0, err


BAD = """[server]
workers = "two"
no_such_key = 1
header_timeout = "5x"

[[listen]]
address = "127.0.0.1:99999"

[[route]]
match = { exact = "nope" }
respond = { status = 999 }
"""


def test_check_config_reports_every_error_with_its_position(tmp):
    path = write(tmp, BAD)
    code, out, err = run("--check-config", path)
    assert code == 1
    text = out + err
    expected = [(2, "workers"), (3, "no_such_key"), (4, "header_timeout"), (7, "address"),
                (10, "exact"), (11, "status")]
    for line, what in expected:
        assert re.search(r"%s:%d:\d+: [^\n]*%s" % (re.escape(path), line, what), text), \
            "no error for line %d (%s) in:\n%s" % (line, what, text)


def test_check_config_toml_syntax_error_has_a_position(tmp):
    path = write(tmp, "[server]\nworkers = \n")
    code, out, err = run("--check-config", path)
    assert code == 1
    assert re.search(re.escape(path) + r":2:\d+", out + err), out + err


def test_check_config_missing_file(tmp):
    code, out, err = run("--check-config", os.path.join(tmp, "absent.toml"))
    assert code == 1
    assert "absent.toml" in out + err


def test_version_and_help_exit_0():
    code, out, err = run("--version")
    assert code == 0
    assert re.search(r"^scalwsd \d+\.\d+\.\d+$", out, re.M), out
    # The commit it was built from and how: what tells two builds apart in a benchmark.
    assert re.search(r"^commit ([0-9a-f]{12}(-dirty)?|unknown)$", out, re.M), out
    # A commit of this tree's history (HEAD, or an earlier one when commits came after the
    # build): never a made-up or stale-elsewhere value.
    commit = re.search(r"^commit ([0-9a-f]{12})", out, re.M)
    inside = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--git-dir"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if commit and inside.returncode == 0:
        ancestor = subprocess.run(["git", "-C", SOURCE_DIR, "merge-base", "--is-ancestor",
                                   commit.group(1), "HEAD"], stderr=subprocess.DEVNULL)
        assert ancestor.returncode == 0, ("not a commit of this tree's history", out)
    assert re.search(r"^built .*; PGO (off|generate|use); LTO (on|off); sanitizers \S+; metrics (on|off); HTTP/3 (on|off)$", out,
                     re.M), out
    code, out, err = run("--help")
    assert code == 0
    assert "--config" in out and "--check-config" in out


@pytest.mark.parametrize("args", [["--bogus"], ["-z"], ["serve"], [], ["--config"],
                                  ["--check-config"]])
def test_usage_errors_exit_2(args):
    code, out, err = run(*args)
    assert code == 2, (args, code, out, err)
    assert "usage" in err.lower()


def test_serving_an_invalid_config_exits_1_without_serving(tmp):
    path = write(tmp, BAD)
    code, out, err = run("--config", path)
    assert code == 1
    assert re.search(re.escape(path) + r":3:\d+: [^\n]*no_such_key", out + err), out + err


def test_port_in_use_exits_1_with_a_message(tmp):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = write(tmp, site([route("ok")], error_log="").replace("$port", str(port)))
        code, out, err = run("--config", path)
        assert code == 1, (code, out, err)
        assert str(port) in out + err
