"""The standalone `status = {}` action: the figures of every worker process of the site,
summed, from whichever worker answers; totals that survive a worker's death; the `allow`
policy in front of it."""
import json
import os
import signal

from harness import Scalwsd, curl, wait_until

SITE = """
[server]
workers = 2
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/status" }
status = {}
policy = { allow = ["127.0.0.1"] }
[[route]]
match = { exact = "/hidden-status" }
status = {}
policy = { allow = ["10.0.0.0/8"] }
[[route]]
match = { exact = "/missing" }
respond = { status = 404, body = "no\\n" }
[[route]]
respond = { body = "hello\\n" }
"""


def status(s):
    code, out, err = curl(s.url("/status"))
    assert code == 0, err
    return json.loads(out)


def get(s, path, n):
    for _ in range(n):
        code, _, err = curl("-o", "/dev/null", s.url(path))
        assert code == 0, err


def test_status_sums_every_worker_and_survives_a_killed_one():
    with Scalwsd(SITE) as s:
        wait_until(lambda: len(s.workers()) == 2, what="two workers")
        before = status(s)
        get(s, "/", 30)
        get(s, "/missing", 10)
        after = status(s)
        # Each request was its own connection, spread over both workers by SO_REUSEPORT;
        # every one is counted once, whichever worker answers /status.
        assert after["requests"] - before["requests"] == 41  # and the first /status
        assert after["requests_by_class"]["2xx"] - before["requests_by_class"]["2xx"] == 31
        assert after["requests_by_class"]["4xx"] - before["requests_by_class"]["4xx"] == 10
        assert after["requests_by_action"]["respond"] - before["requests_by_action"]["respond"] == 40
        assert after["conn_accepted"] - before["conn_accepted"] == 41
        assert after["latency_us"]["p50"] > 0 and after["rss_bytes"] > 0
        assert sum(after["latency_buckets"]) == after["requests"]

        victim = s.workers()[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(s.workers()) == 2 and victim not in s.workers(), timeout=10,
                   what="a replacement worker")
        later = status(s)
        for key in ("requests", "bytes_in", "bytes_out", "conn_accepted", "conn_closed"):
            assert later[key] >= after[key], key
        assert later["requests"] == after["requests"] + 1

        code, out, _ = curl("-s", "-o", "/dev/null", "-w", "%{http_code}", s.url("/hidden-status"))
        assert out == b"403"
