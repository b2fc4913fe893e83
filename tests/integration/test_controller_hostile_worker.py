"""A worker is treated as hostile by the controller around it. A stand-in worker
(tests/tools/stand_in_worker.cpp, run by the real controller through --scalwsd) speaks the
worker's protocol and misbehaves as SCALWS_STAND_IN tells it: a sandbox report of the wrong
shape, terminal escapes in a well-formed one, lines on stderr dressed as the controller's,
a flood of metrics."""
import json
import re
import subprocess
import time

from controller_harness import STAND_IN, Controller, site_config, unique_name, wait_until
from harness import free_port


def stand_in(flags):
    return Controller(extra_args=["--scalwsd", STAND_IN], env={"SCALWS_STAND_IN": flags})


def assert_no_control_bytes(text):
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
    assert not bad, "control characters reached the output: %r" % text


def test_a_sandbox_report_of_the_wrong_shape_is_refused_and_show_still_works():
    name = unique_name("shape")
    with stand_in("bad-sandbox") as c:
        c.add(name, site_config(free_port()))
        p = c.ctl("instance", "start", name, check=False)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert "malformed ready" in p.stderr and "sandbox report" in p.stderr, p.stderr
        shown = c.ctl("instance", "show", name, check=False)
        assert shown.returncode == 0, (shown.returncode, shown.stderr)
        assert_no_control_bytes(shown.stdout + shown.stderr)
        assert c.show(name)["status"] == "failed"


def test_show_escapes_what_a_worker_says_and_states_what_the_controller_checked():
    name = unique_name("esc")
    with stand_in("escape-sandbox") as c:
        c.add(name, site_config(free_port()))
        c.ctl("instance", "start", name)
        shown = c.ctl("instance", "show", name)
        assert_no_control_bytes(shown.stdout)
        assert "\\x1b[2J\\x1b[31mroot" in shown.stdout, shown.stdout
        assert "nothing\\nscalws-controller: forged line" in shown.stdout
        assert "\nscalws-controller: forged" not in shown.stdout
        # The facts: the stand-in never dropped root nor entered seccomp, whatever it says.
        assert "as the controller reads it in /proc" in shown.stdout
        facts = c.show(name)["processes"][0]["checked"]
        assert facts["uid"] == [0, 0, 0, 0] and facts["seccomp"] == "off", facts
        assert facts["no_new_privs"] is False
        assert re.search(r"pid \d+: user root uid 0 gid 0, no_new_privs NO, seccomp off",
                         shown.stdout), shown.stdout
        # --json keeps the worker's bytes, escaped as JSON and in ASCII.
        raw = c.ctl("--json", "instance", "show", name).stdout
        assert_no_control_bytes(raw)
        assert json.loads(raw)["processes"][0]["sandbox"]["identity"]["user"].startswith("\x1b")
