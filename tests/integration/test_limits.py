"""Per-client request limits (`limit` on a route or on [site]) with the real scalwsd and
real clients: a burst then 429 with Retry-After over HTTP/1.1, h2c, and HTTP/1.1 and
HTTP/2 over TLS; other clients (another key, another address through [real_ip]) and
routes without a limit untouched; requests in flight bounded by `connections` (a slow
upstream holds them) and freed when they end or are aborted; the route's error page and
header edits on the 429; and the table shared by the worker processes of a multi-mode
server."""
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time

import h2.config
import h2.connection
import pytest

from harness import Scalwsd, curl, wait_until
from protocol_clients import PROTOCOLS, ProtocolClient
from response_support import LISTENERS
from tls_support import tls_server
from upstreams import RawUpstream, answer


SITE = """
[server]
workers = 1
[site]
headers = { set = { x-site = "yes" } }
""" + LISTENERS + """
[[route]]
match = { exact = "/login" }
respond = { body = "welcome\\n" }
limit = { rate = "1r/m", burst = 2, key = "x-api-key" }
headers = { set = { x-route = "login" } }
errors = { root = "$dir/errors", 429 = "/slow-down.html" }
[[route]]
match = { exact = "/free" }
respond = { body = "free\\n" }
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture(scope="module")
def limited():
    s = tls_server(SITE, start=False)
    write(os.path.join(s.dir, "errors", "slow-down.html"), "<p>slow down</p>\n")
    s.start()
    with s:
        yield s


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_burst_then_429_with_retry_after_and_the_routes_rules(limited, protocol):
    client = ProtocolClient(limited, protocol)
    key = ("-H", "X-Api-Key: key-" + protocol)
    for _ in range(3):  # the rate's one plus a burst of two
        status, headers, body = client.request("/login", *key)
        assert (status, body) == (200, b"welcome\n")
    status, headers, body = client.request("/login", *key)
    assert status == 429
    # 1r/m with a burst of 2 used up: the next one conforms in a minute.
    assert 55 <= int(headers["retry-after"]) <= 60
    assert body == b"<p>slow down</p>\n"  # the route's error page
    assert headers["x-route"] == "login" and headers["x-site"] == "yes"
    # Still refused; another key is a client of its own; a route without limit is free.
    assert client.request("/login", *key)[0] == 429
    assert client.request("/login", "-H", "X-Api-Key: other-" + protocol)[0] == 200
    for _ in range(10):
        assert client.request("/free", *key)[0] == 200


def test_refusals_are_logged_sparingly(limited):
    client = ProtocolClient(limited, "http1")
    key = ("-H", "X-Api-Key: flood")
    statuses = [client.request("/login", *key)[0] for _ in range(30)]
    assert statuses.count(200) == 3 and statuses.count(429) == 27
    lines = [l for l in limited.read_log().splitlines() if "refused" in l and "limit at" in l]
    # One line a second at most, not one per refusal.
    assert 1 <= len(lines) <= 10, lines


ADDRESS_SITE = """
[server]
workers = 1
[real_ip]
from = ["127.0.0.1"]
[site]
limit = { rate = "1r/m", burst = 1 }
""" + LISTENERS + """
[[route]]
match = { exact = "/api" }
respond = { body = "api\\n" }
limit = { rate = "1r/m", key = "x-api-key" }
[[route]]
match = { prefix = "/" }
respond = { body = "page\\n" }
"""


def test_the_client_address_after_real_ip_is_the_default_key():
    with tls_server(ADDRESS_SITE) as s:
        client = ProtocolClient(s, "h2c")
        a = ("-H", "X-Forwarded-For: 203.0.113.5")
        b = ("-H", "X-Forwarded-For: 203.0.113.6")
        # [site]'s limit (burst 1) on a route without its own, per address, across paths.
        assert client.request("/one", *a)[0] == 200
        assert client.request("/two", *a)[0] == 200
        status, headers, _ = client.request("/three", *a)
        assert status == 429 and 55 <= int(headers["retry-after"]) <= 60
        assert client.request("/one", *b)[0] == 200
        # /api has its own limit (no burst), counted apart from the site's: without its
        # header, the address is the key.
        assert client.request("/api", *a)[0] == 200
        assert client.request("/api", *a)[0] == 429
        assert client.request("/api", *b)[0] == 200
        assert client.request("/api", *b, "-H", "X-Api-Key: k1")[0] == 200
        assert client.request("/api", *b, "-H", "X-Api-Key: k1")[0] == 429


SLOW_SITE = """
[server]
workers = 1
""" + LISTENERS + """
[[route]]
match = { prefix = "/slow" }
proxy = { upstream = "slow" }
limit = { connections = 2 }
[[route]]
match = { exact = "/free" }
respond = { body = "free\\n" }
[upstream.slow]
servers = ["@UPSTREAM@"]
"""


class Gate:
    """An upstream that holds every request until open() is called."""

    def __init__(self):
        self.event = threading.Event()
        self.upstream = RawUpstream(self.script)

    def script(self, request, conn):
        self.event.wait(30)
        return answer(200, "slow " + request.target + "\n")

    def open(self):
        self.event.set()

    def close(self):
        self.event.clear()


def start_curl(*args):
    return subprocess.Popen(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def slow_site():
    gate = Gate()
    s = tls_server(SLOW_SITE.replace("@UPSTREAM@", gate.upstream.address))
    with s, gate.upstream:
        yield s, gate
        gate.open()


@pytest.mark.parametrize("protocol", ["http1", "h2-tls"])
def test_connections_bounds_requests_in_flight(slow_site, protocol):
    s, gate = slow_site
    options, listener, _ = PROTOCOLS[protocol]
    base = "%s://127.0.0.1:%d" % (("https", s.port2) if listener == "tls" else ("http", s.port))
    held = [start_curl(*options, base + "/slow/%d" % i) for i in range(2)]
    gate.upstream.wait_requests(2)
    client = ProtocolClient(s, protocol)
    status, headers, _ = client.request("/slow/extra")
    assert status == 429 and headers["retry-after"] == "1"
    assert client.request("/free")[0] == 200  # another route is not held
    gate.open()
    assert [p.communicate(timeout=20)[0] for p in held] == [b"200", b"200"]
    # Both slots free again.
    gate.close()
    held = [start_curl(*options, base + "/slow/again-%d" % i) for i in range(2)]
    gate.upstream.wait_requests(4)
    gate.open()
    assert [p.communicate(timeout=20)[0] for p in held] == [b"200", b"200"]


def test_streams_of_one_http2_connection_count(slow_site):
    s, gate = slow_site
    urls = ["http://127.0.0.1:%d/slow/s%d" % (s.port, i) for i in range(3)]
    p = subprocess.Popen(["curl", "-s", "--http2-prior-knowledge", "--parallel",
                          "--parallel-immediate", "--parallel-max", "3", "-w", "%{http_code}\n"]
                         + [a for u in urls for a in ("-o", "/dev/null", u)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    gate.upstream.wait_requests(2)
    time.sleep(0.5)  # the third stream's 429 has been answered meanwhile
    gate.open()
    out, err = p.communicate(timeout=20)
    assert sorted(out.split()) == [b"200", b"200", b"429"], err


def test_an_aborted_request_frees_its_slot(slow_site):
    s, gate = slow_site
    gone = []
    for i in range(2):
        sock = socket.create_connection(("127.0.0.1", s.port))
        sock.sendall(b"GET /slow/gone-%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
        gone.append(sock)
    gate.upstream.wait_requests(2)
    for sock in gone:
        # A reset: the client is gone (a FIN alone is a half-close, still answered).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    # The two slots come back once the server saw the clients go.
    client = ProtocolClient(s, "http1")

    def admitted():
        p = start_curl("-m", "1", s.url("/slow/probe"))
        out = p.communicate(timeout=10)[0]
        return out != b"429"

    wait_until(admitted, timeout=10, what="a slot freed by the aborted requests")
    gate.open()
    assert client.request("/slow/after")[0] == 200


def test_a_reset_http2_stream_frees_its_slot(slow_site):
    s, gate = slow_site
    sock = socket.create_connection(("127.0.0.1", s.port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    streams = []
    for i in range(2):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [(":method", "GET"), (":scheme", "http"),
                                   (":authority", "x"), (":path", "/slow/h2-%d" % i)],
                          end_stream=True)
        streams.append(stream)
    sock.sendall(conn.data_to_send())
    gate.upstream.wait_requests(2)
    assert ProtocolClient(s, "http1").request("/slow/full")[0] == 429
    for stream in streams:
        conn.reset_stream(stream)
    sock.sendall(conn.data_to_send())  # the connection stays open: only the streams end

    def admitted():
        p = start_curl("-m", "1", s.url("/slow/probe"))
        return p.communicate(timeout=10)[0] != b"429"

    wait_until(admitted, timeout=10, what="the slots of the reset streams")
    gate.open()
    sock.close()


RELOAD_SITE = """
[server]
workers = 1
mode = "multi"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/login" }
respond = { body = "welcome\\n" }
limit = { rate = "1r/m"@MORE@ }
[[route]]
match = { exact = "/other" }
respond = { body = "other\\n" }
"""


def test_a_reload_keeps_the_clients_counts_unless_the_table_changes():
    with Scalwsd(RELOAD_SITE.replace("@MORE@", "")) as s:
        def login():
            return curl("-s", "-o", "/dev/null", "-w", "%{http_code}", s.url("/login"))[1]

        assert login() == b"200"
        assert login() == b"429"
        # Another route, the same table: the client is still remembered.
        s.write_config(RELOAD_SITE.replace("@MORE@", "").replace(
            'match = { exact = "/other" }', 'match = { exact = "/else" }'))
        s.signal(signal.SIGHUP)
        wait_until(lambda: curl("-s", "-o", "/dev/null", "-w", "%{http_code}",
                                s.url("/else"))[1] == b"200", what="the reload")
        assert login() == b"429"
        # Another limit_table: a new table, every client starts afresh.
        s.write_config("[site]\nlimit_table = \"128k\"\n" + RELOAD_SITE.replace("@MORE@", ""))
        s.signal(signal.SIGHUP)
        wait_until(lambda: login() == b"200", what="the reload with a new table")
        assert login() == b"429"


def test_single_mode_refuses_a_reload_that_needs_a_new_table():
    # The process is sandboxed: a new table would be a memfd made inside the sandbox.
    single = RELOAD_SITE.replace('mode = "multi"', 'mode = "single"').replace("@MORE@", "")
    with Scalwsd(single) as s:
        def login():
            return curl("-s", "-o", "/dev/null", "-w", "%{http_code}", s.url("/login"))[1]

        assert login() == b"200"
        assert login() == b"429"
        s.write_config("[site]\nlimit_table = \"128k\"\n" + single)
        s.signal(signal.SIGHUP)
        wait_until(lambda: "limit table would be a new one" in s.read_log(), what="the refusal")
        assert login() == b"429"  # the running config and its table go on
        # The same table, another route: applied, and the client remembered.
        s.write_config(single.replace('exact = "/other"', 'exact = "/else"'))
        s.signal(signal.SIGHUP)
        wait_until(lambda: s.read_log().count("reloaded") >= 1, what="the reload")
        assert login() == b"429"
        # Other values make another limit, whose clients start afresh.
        s.write_config(single.replace('rate = "1r/m"', 'rate = "1r/m", connections = 5'))
        s.signal(signal.SIGHUP)
        wait_until(lambda: s.read_log().count("reloaded") >= 2, what="the second reload")
        assert login() == b"200"
        assert login() == b"429"


MULTI_SITE = """
[server]
workers = 2
mode = "multi"
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { exact = "/login" }
respond = { body = "welcome\\n" }
limit = { rate = "1r/m", burst = 4 }
"""


def test_the_table_is_shared_by_the_worker_processes():
    with Scalwsd(MULTI_SITE) as s:
        assert len(s.workers()) == 2
        statuses = []
        for _ in range(20):  # a new connection each: the kernel spreads them
            code, out, err = curl("-s", "-o", "/dev/null", "-w", "%{http_code}", s.url("/login"))
            statuses.append(int(out))
        assert statuses.count(200) == 5, statuses
        assert statuses.count(429) == 15, statuses
        # Both workers answered some of them (each logged its refusals).
        pids = set(re.findall(r"\[(\d+)\]: limit at [^\n]*refused", s.read_log()))
        assert pids == {str(pid) for pid in s.workers()}, s.read_log()
