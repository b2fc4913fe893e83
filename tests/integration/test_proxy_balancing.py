"""How the proxy spreads requests over an upstream's servers and routes around failures,
counted at real upstream processes: each balancing mode's distribution, passive failover
and recovery, backups, active health checks, retries only where a request may be sent
twice, kept connections and their request limit, and 503 when every server is down."""
import json
import socket
import threading
import time
from collections import Counter

import pytest

from harness import Client, Scalwsd, wait_until
from upstreams import RawUpstream, answer


def site(upstream, route_extra=""):
    return """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/_status" }
status = {}
[[route]]
proxy = { upstream = "app"%s }
[upstream.app]
%s
""" % (route_extra, upstream)


def servers_line(*entries):
    parts = []
    for e in entries:
        if isinstance(e, str):
            parts.append('"%s"' % e)
        else:
            address, extra = e
            parts.append('{ address = "%s", %s }' % (address, extra))
    return "servers = [%s]\n" % ", ".join(parts)


def named(name, delay=0.0, health_status=None):
    """An upstream answering with its name (and `health_status` on /healthz)."""
    state = {"health": health_status or 200, "close": False}

    def script(request, conn):
        if request.target == "/healthz":
            conn.close_after = True
            return answer(state["health"], "health\n")
        if state["close"]:
            conn.close_after = True
            return None  # takes the request, answers nothing
        if delay:
            time.sleep(delay)
        return answer(200, name, [("X-Server", name)])
    u = RawUpstream(script)
    u.state = state
    return u


def get(port, path="/", headers=b"", method=b"GET", body=b""):
    with Client(port, timeout=10) as c:
        c.send(method + b" " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + headers +
               (b"Content-Length: %d\r\n" % len(body) if body else b"") + b"\r\n" + body)
        return c.read_response()


def who(port, n, **kw):
    return Counter(get(port, **kw).body.decode() for _ in range(n))


def test_round_robin_by_weight():
    a, b, c = named("a"), named("b"), named("c")
    conf = servers_line((a.address, "weight = 1"), (b.address, "weight = 2"), (c.address, "weight = 3"))
    with Scalwsd(site(conf)) as s:
        assert who(s.port, 60) == Counter({"a": 10, "b": 20, "c": 30})
    for u in (a, b, c):
        u.stop()


def test_least_conn_avoids_the_busy_server():
    slow, fast = named("slow", delay=0.5), named("fast")
    conf = servers_line(slow.address, fast.address) + 'balance = "least_conn"\n'
    with Scalwsd(site(conf)) as s:
        results = []
        threads = [threading.Thread(target=lambda: results.append(get(s.port).body.decode()))
                   for _ in range(12)]
        for t in threads:
            t.start()
            time.sleep(0.01)
        for t in threads:
            t.join()
        counts = Counter(results)
        assert counts["slow"] + counts["fast"] == 12
        # Round robin would have sent six to the slow one.
        assert counts["slow"] <= 2, counts
    slow.stop()
    fast.stop()


def test_hash_keeps_a_key_on_one_server():
    ups = [named(n) for n in "abcd"]
    conf = servers_line(*[u.address for u in ups]) + 'balance = "hash"\nhash_key = "header:X-User"\n'
    with Scalwsd(site(conf)) as s:
        owners = {}
        for user in range(40):
            h = b"X-User: user-%d\r\n" % user
            first = get(s.port, headers=h).body
            for _ in range(3):
                assert get(s.port, headers=h).body == first
            owners[user] = first
        assert len(set(owners.values())) >= 3, owners  # keys spread over the servers
        # Cookie keys, and client_ip (one client here: one server).
    for u in ups:
        u.stop()
    ups = [named(n) for n in "ab"]
    conf = servers_line(*[u.address for u in ups]) + 'balance = "hash"\n'
    with Scalwsd(site(conf)) as s:
        assert len(who(s.port, 20)) == 1
    for u in ups:
        u.stop()


def test_hash_by_cookie_moves_only_the_keys_of_a_down_server():
    ups = [named(n) for n in "abc"]
    conf = servers_line(*[u.address for u in ups]) + \
        'balance = "hash"\nhash_key = "cookie:sid"\nmax_fails = 1\nfail_timeout = "60s"\n'
    with Scalwsd(site(conf)) as s:
        cookie = lambda k: b"Cookie: theme=dark; sid=%d\r\n" % k
        before = {k: get(s.port, headers=cookie(k)).body for k in range(30)}
        victim = before[0]
        victim_upstream = ups["abc".index(victim.decode())]
        victim_upstream.stop()
        get(s.port, headers=cookie(0))  # fails over, and marks it down
        after = {k: get(s.port, headers=cookie(k)).body for k in range(30)}
        for k in range(30):
            if before[k] == victim:
                assert after[k] != victim
            else:
                assert after[k] == before[k], k
    for u in ups:
        u.stop()


def test_random_two_spreads():
    ups = [named(n) for n in "abc"]
    conf = servers_line(*[u.address for u in ups]) + 'balance = "random_two"\n'
    with Scalwsd(site(conf)) as s:
        counts = who(s.port, 90)
        assert set(counts) == {"a", "b", "c"}, counts
        assert min(counts.values()) >= 10, counts
    for u in ups:
        u.stop()


def test_failover_and_recovery():
    a, b = named("a"), named("b")
    b_port = b.port
    conf = servers_line(a.address, b.address) + 'max_fails = 1\nfail_timeout = "1s"\n'
    with Scalwsd(site(conf)) as s:
        assert who(s.port, 4) == Counter({"a": 2, "b": 2})
        b.stop()
        # Every request is answered: the failed connect moves on to a.
        assert who(s.port, 6) == Counter({"a": 6})
        wait_until(lambda: "server 127.0.0.1:%d is down" % b_port in s.read_log(), what="down")
        servers = json.loads(get(s.port, "/_status").body)["upstreams"][0]["servers"]
        assert [x["address"] for x in servers] == [a.address, "127.0.0.1:%d" % b_port]
        assert servers[0]["loops_down"] == 0 and servers[0]["requests"] >= 8
        assert servers[1]["loops_down"] == 1 and servers[1]["requests"] == 2, servers[1]
        assert servers[1]["down_since_ms"] > 0
        b2 = RawUpstream(b.script, port=b_port)
        # After fail_timeout one trial request goes to b; it succeeds and b is back.
        time.sleep(1.1)
        counts = who(s.port, 10)
        assert counts["b"] >= 4, counts
        assert "server 127.0.0.1:%d is up again" % b_port in s.read_log()
        b2.stop()
    a.stop()


def test_backup_takes_over_when_every_primary_is_down():
    a, spare = named("a"), named("spare")
    conf = servers_line(a.address, (spare.address, "backup = true")) + \
        'max_fails = 1\nfail_timeout = "1s"\n'
    with Scalwsd(site(conf)) as s:
        assert who(s.port, 5) == Counter({"a": 5})  # a backup idles while a primary is up
        a_port = a.port
        a.stop()
        assert who(s.port, 5) == Counter({"spare": 5})
        a2 = RawUpstream(a.script, port=a_port)
        time.sleep(1.1)
        counts = who(s.port, 5)
        assert counts["a"] >= 4, counts
        a2.stop()
    spare.stop()


def test_all_down_is_503():
    a = named("a")
    port = a.port
    a.stop()
    conf = servers_line("127.0.0.1:%d" % port) + 'max_fails = 1\nfail_timeout = "60s"\n'
    with Scalwsd(site(conf)) as s:
        assert get(s.port).status == 502
        r = get(s.port)
        assert r.status == 503 and r.header("retry-after") == "1"
        assert "every server is down" in s.read_log()


def test_active_checks_take_a_server_out_and_bring_it_back():
    a, b = named("a"), named("b", health_status=500)
    conf = servers_line(a.address, b.address) + \
        'health = { path = "/healthz", interval = "100ms", timeout = "1s", fails = 2, passes = 2 }\n'
    with Scalwsd(site(conf)) as s:
        get(s.port)  # the loop's first request starts its probes
        wait_until(lambda: "is down (health check: unexpected status)" in s.read_log(), what="down")
        # b would answer requests fine, but its health check says no.
        assert who(s.port, 6) == Counter({"a": 6})
        b.state["health"] = 200
        wait_until(lambda: "is up again (health check passed)" in s.read_log(), what="up")
        assert who(s.port, 6) == Counter({"a": 3, "b": 3})
        probes = [r for r in b.requests if r.target == "/healthz"]
        assert probes and probes[0].header("user-agent") == "scalws-health-check"
    a.stop()
    b.stop()


def test_retries_only_where_allowed():
    a, b = named("a"), named("b")
    conf = servers_line(a.address, b.address) + "retries = 1\nmax_fails = 0\n"
    with Scalwsd(site(conf)) as s:
        assert who(s.port, 2) == Counter({"a": 1, "b": 1})
        # The next request goes to a, which takes it and closes without an answer.
        a.state["close"] = True
        r = get(s.port, method=b"POST", body=b"order=1")
        assert r.status == 502  # a POST that was sent is never sent again
        assert [q.method for q in b.requests].count("POST") == 0
        a_posts = [q for q in a.requests if q.method == "POST"]
        assert len(a_posts) == 1
        # A GET in the same spot goes on to b.
        assert get(s.port).body == b"b"  # round robin: b's turn
        r = get(s.port)  # a's turn: fails, retried on b
        assert r.status == 200 and r.body == b"b"
    a.stop()
    b.stop()


def test_keepalive_requests_limit_counted_at_the_upstream():
    a = named("a")
    conf = servers_line(a.address) + "keepalive_requests = 3\n"
    with Scalwsd(site(conf)) as s:
        for _ in range(9):
            assert get(s.port).status == 200
        assert a.connections == 3
        assert Counter(r.connection for r in a.requests) == Counter({1: 3, 2: 3, 3: 3})
    a.stop()


def test_keepalive_zero_keeps_nothing():
    a = named("a")
    conf = servers_line(a.address) + "keepalive = 0\n"
    with Scalwsd(site(conf)) as s:
        for _ in range(3):
            assert get(s.port).status == 200
        assert a.connections == 3
        assert all(r.header("connection") == "close" for r in a.requests)
    a.stop()
