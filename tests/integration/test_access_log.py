"""The access log of the real scalwsd: combined format and JSON lines, one line per request
(errors included), flushed within about a second and at exit, whole lines from every worker."""
import json
import os
import pwd
import re
import signal
import time

import pytest

from harness import Client, Scalwsd, exchange, get, parse_one, route, site, wait_until

ROUTES = [route("alpha", exact="/a"), route("created!", status=201, exact="/c")]


def access_site(fmt, **server):
    return site(ROUTES, access_log="$dir/access.log", access_log_format=fmt, **server)


def log_lines(s):
    return lines_of(os.path.join(s.dir, "access.log"))


def wait_lines(s, n, timeout=3.0):
    return wait_until(lambda: len(log_lines(s)) >= n and log_lines(s), timeout,
                      what="%d access log lines" % n)


def do_requests(s):
    """Five requests of different kinds; returns what each should log:
    (method, path, status, body bytes)."""
    ua = b"User-Agent: it-agent/1.0\r\nReferer: http://ref.example/page\r\n"
    r1 = get(s.port, "/a?x=1", extra=ua)
    data, _ = exchange(s.port, b"HEAD /a HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    r2 = parse_one(data, head_request=True)[0]
    r3 = get(s.port, "/missing")
    data, _ = exchange(s.port, b"POST /c HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n"
                               b"Connection: close\r\n\r\nbody")
    r4 = parse_one(data)[0]
    data, _ = exchange(s.port, b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", timeout=2)
    r5 = parse_one(data)[0]
    assert [r.status for r in (r1, r2, r3, r4, r5)] == [200, 200, 404, 201, 400]
    return [("GET", "/a?x=1", 200, 5), ("HEAD", "/a", 200, 0), ("GET", "/missing", 404, len(r3.body)),
            ("POST", "/c", 201, 8), (None, None, 400, len(r5.body))]


COMBINED = re.compile(r'^(?P<addr>\S+) - - \[(?P<time>\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] '
                      r'"(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\d+) '
                      r'"(?P<referer>[^"]*)" "(?P<agent>[^"]*)"$')


def test_combined_format_one_line_per_request():
    with Scalwsd(access_site("combined")) as s:
        expected = do_requests(s)
        start = time.monotonic()
        lines = wait_lines(s, len(expected))
        assert time.monotonic() - start < 2.5, "not flushed within about a second"
        time.sleep(0.3)
        lines = log_lines(s)
        assert len(lines) == len(expected), lines
        for line, (method, path, status, size) in zip(lines, expected):
            m = COMBINED.match(line)
            assert m, line
            assert m["addr"] == "127.0.0.1"
            assert int(m["status"]) == status, line
            assert int(m["bytes"]) == size, line
            if method is not None:
                assert m["request"] == "%s %s HTTP/1.1" % (method, path), line
        first = COMBINED.match(lines[0])
        assert first["referer"] == "http://ref.example/page"
        assert first["agent"] == "it-agent/1.0"
        assert COMBINED.match(lines[1])["agent"] == "-"
        s.assert_no_fd_leak()


def test_json_lines_parse_and_carry_the_request():
    with Scalwsd(access_site("json")) as s:
        expected = do_requests(s)
        lines = wait_lines(s, len(expected))
        time.sleep(0.3)
        lines = log_lines(s)
        assert len(lines) == len(expected), lines
        for line, (method, path, status, size) in zip(lines, expected):
            entry = json.loads(line)
            assert entry["status"] == status, line
            assert entry["bytes"] == size, line
            if method is not None:
                assert entry["method"] == method, line
                assert (entry.get("uri") or entry.get("path")) == path, line
        s.assert_no_fd_leak()


def test_json_escapes_hostile_fields():
    with Scalwsd(access_site("json")) as s:
        agent = b'it "quoted" \\ agent \xc3\xa9 \x01'
        data, _ = exchange(s.port, b"GET /a?q=%22%5C HTTP/1.1\r\nHost: localhost\r\n"
                                   b"User-Agent: " + agent.replace(b"\x01", b"") + b"\r\n"
                                   b"Connection: close\r\n\r\n")
        assert parse_one(data)[0].status == 200
        entry = json.loads(wait_lines(s, 1)[0])
        assert entry.get("user_agent", entry.get("agent")) is not None
        assert '"quoted"' in entry.get("user_agent", entry.get("agent"))
        assert (entry.get("uri") or entry.get("path")) == "/a?q=%22%5C"


def test_pipelined_requests_log_one_line_each():
    with Scalwsd(access_site("combined")) as s:
        with Client(s.port) as c:
            c.send(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n" * 10)
            c.read_responses(10)
        lines = wait_lines(s, 10)
        time.sleep(0.3)
        assert len(log_lines(s)) == 10
        assert all('"GET /a HTTP/1.1" 200 5 ' in line for line in lines)


def test_lines_are_flushed_at_exit():
    with Scalwsd(access_site("json", workers=2)) as s:
        for i in range(30):
            get(s.port, "/a?n=%d" % i)
        # Stopped right after the last request: whatever was buffered goes out at exit.
        assert s.stop() == 0
        lines = log_lines(s)
        assert len(lines) == 30, lines
        assert sorted(json.loads(line)["uri"] for line in lines) == \
            sorted("/a?n=%d" % i for i in range(30))


def test_two_workers_write_whole_lines():
    with Scalwsd(access_site("combined", workers=2)) as s:
        for i in range(60):
            get(s.port, "/a?n=%d" % i)
        wait_lines(s, 60)
        time.sleep(0.3)
        lines = log_lines(s)
        assert len(lines) == 60
        for line in lines:
            assert COMBINED.match(line), line
        assert sorted(re.search(r"n=(\d+)", l).group(1) for l in lines) == sorted(str(i) for i in range(60))


def lines_of(path):
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    assert data == "" or data.endswith("\n"), "a partial line: %r" % data[-200:]
    return data.splitlines()


def test_sigusr1_reopens_the_logs_under_load_and_loses_no_line():
    from controller_harness import Load  # requests from threads, counted
    with Scalwsd(site(ROUTES, access_log="$dir/access.log", error_log="$dir/site-error.log",
                      workers=2, mode="multi", user="nobody")) as s:
        path = os.path.join(s.dir, "access.log")
        error = os.path.join(s.dir, "site-error.log")
        with Load(s.port, threads=4, path="/a") as load:
            load.wait_for(300)
            time.sleep(1.5)  # a loop's buffer is written out within a second
            os.rename(path, path + ".1")
            os.rename(error, error + ".1")
            load.wait_for(100)
            s.signal(signal.SIGUSR1)
            wait_until(lambda: len(lines_of(path)) > 0, 5, what="lines in the new file")
            load.wait_for(300)
            load.stop()
        # The old generation drains as on SIGHUP: a kept-alive connection it closes while
        # idle can cross a client's next request, which then has no answer (and no line):
        # closed or reset; a client retries those on a new connection (RFC 9112 §9.3.1).
        # What was answered is what the logs hold, below.
        unanswered = ("RemoteDisconnected", "ConnectionResetError", "BrokenPipeError")
        assert all(f.startswith(unanswered) for f in load.failures), load.failures[:5]
        assert s.stop() == 0  # every buffer flushed at exit
        old = lines_of(path + ".1")
        new = lines_of(path)
        assert old and new
        assert len(old) + len(new) == load.ok, (len(old), len(new), load.ok)
        assert all('"GET /a HTTP/1.1" 200 5 ' in line for line in old + new)
        assert "logs reopened" in open(error).read()


def test_single_mode_cannot_reopen_a_new_file_from_its_sandbox_and_loses_no_line():
    # Landlock lets the one sandboxed process open only the log files it started with: a
    # new file made after a rename is refused (said in the error log), and the lines keep
    # going to the renamed file. copytruncate is the way to rotate it.
    from controller_harness import Load
    with Scalwsd(site(ROUTES, access_log="$dir/access.log", error_log="$dir/site-error.log",
                      workers=2, mode="single", user="nobody")) as s:
        path = os.path.join(s.dir, "access.log")
        error = os.path.join(s.dir, "site-error.log")
        nobody = pwd.getpwnam("nobody")
        os.chmod(s.dir, 0o755)
        with Load(s.port, threads=4, path="/a") as load:
            load.wait_for(300)
            os.rename(path, path + ".1")
            os.rename(error, error + ".1")
            for p in (path, error):  # logrotate's create, for the workers' user
                with open(p, "w"):
                    pass
                os.chown(p, nobody.pw_uid, nobody.pw_gid)
            s.signal(signal.SIGUSR1)
            wait_until(lambda: "reopening the logs" in open(error + ".1").read(), 5,
                       what="the refusal in the old error log")
            load.wait_for(300)
            load.stop()
        assert not load.failures, load.failures[:5]
        assert s.stop() == 0
        assert lines_of(path) == []  # the new file was never opened
        assert len(lines_of(path + ".1")) == load.ok
