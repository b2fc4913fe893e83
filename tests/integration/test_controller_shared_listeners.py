"""Many instances on one address: a front per shared address peeks at the TLS ClientHello's
SNI or the HTTP/1.1 Host and hands the connection to the owning instance's worker, which
answers 421 for another instance's names on it. Three instances (shop, blog and home, the
default) share a TLS port and a plain port of 127.0.0.1; each has its own certificate.
Driven with curl --resolve, nghttp, openssl s_client and raw sockets."""
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.request

import h2.config
import h2.connection
import h2.events

from controller_harness import (Controller, fronts_running, proc_status, unique_name, wait_until,
                                workers_of)
from h3_support import h3
from harness import BIN_DIR, free_port, wait_for_port
from tls_support import make_cert, peer_cn, s_client

FRONT = os.path.join(BIN_DIR, "scalws-front")

TLS_LISTEN = """\
[[listen]]
address = "127.0.0.1:{port}"
tls = {{ cert = "{cert}", key = "{key}" }}
{extra}
"""
PLAIN_LISTEN = """\
[[listen]]
address = "127.0.0.1:{port}"
http2 = true
{extra}
"""
ROUTE = """\
[[route]]
match = {{ exact = "/health" }}
respond = {{ body = "ok\\n" }}
[[route]]
respond = {{ body = "{body}\\n" }}
"""

# name -> (certificate names, plain `names`, default)
SITES = {
    "shop": (("shop.test", "*.shop.test"), '["shop.test", "*.shop.test"]', False),
    "blog": (("blog.test",), '["blog.test"]', False),
    "home": (("home.test",), None, True),
}


def site(c, label, tls_port, plain_port, body=None, names=None):
    sans, plain_names, default = SITES[label]
    cert, key = make_cert(c.dir, label, sans[0], sans, ip=False)
    os.chmod(c.dir, 0o755)
    tls_extra = "default = true" if default else ""
    plain_extra = "default = true" if default else "names = %s" % (names or plain_names)
    text = ""
    if tls_port:
        text += TLS_LISTEN.format(port=tls_port, cert=cert, key=key, extra=tls_extra)
    if plain_port:
        text += PLAIN_LISTEN.format(port=plain_port, extra=plain_extra)
    return text + ROUTE.format(body=body or label)


def start_trio(c, tls_port, plain_port, labels=("shop", "blog", "home")):
    names = {}
    for label in labels:
        name = unique_name(label)
        names[label] = name
        c.add(name, site(c, label, tls_port, plain_port), "--shared-cpus")
    for name in names.values():
        c.ctl("instance", "start", name)
    wait_for_port(tls_port or plain_port)
    return names


def curl_get(url, host, port, *extra):
    """(status, body, stderr) of curl with --resolve HOST:PORT:127.0.0.1."""
    p = subprocess.run(["curl", "-sk", "--max-time", "10", "--resolve",
                        "%s:%d:127.0.0.1" % (host, port), "-o", "-", "-w", "\n%{http_code}",
                        url] + list(extra), capture_output=True, timeout=20)
    out = p.stdout.decode("utf-8", "replace")
    body, _, code = out.rpartition("\n")
    return int(code or 0), body, p.stderr.decode("utf-8", "replace")


def status_json(c):
    return c.ctl_json("status")


def address_of(c, port):
    for a in status_json(c)["shared_addresses"]:
        if a["address"] == "127.0.0.1:%d" % port:
            return a
    return None


def front_pids(c, port):
    a = address_of(c, port)
    return [f["pid"] for f in a["fronts"] if f["pid"]] if a else []


def raw_get(sock, host, path="/"):
    """One keep-alive request on a plain socket; (status, body)."""
    sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, host)).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "closed before a response"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += sock.recv(4096)
    return int(head.split()[1]), rest[:length]


def h2_tls(port, server_name):
    """An HTTP/2 connection over TLS with `server_name` as SNI."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5),
                           server_hostname=server_name)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def h2_get(sock, conn, authority, path="/"):
    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "GET"), (":scheme", "https"), (":authority", authority),
                            (":path", path)], end_stream=True)
    sock.sendall(conn.data_to_send())
    status, body = None, b""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        data = sock.recv(65536)
        assert data, "connection closed"
        for e in conn.receive_data(data):
            if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid:
                status = int(dict(e.headers)[b":status"])
            elif isinstance(e, h2.events.DataReceived) and e.stream_id == sid:
                body += e.data
                conn.acknowledge_received_data(e.flow_controlled_length, sid)
            elif isinstance(e, h2.events.StreamEnded) and e.stream_id == sid:
                sock.sendall(conn.data_to_send())
                return status, body
        sock.sendall(conn.data_to_send())
    raise AssertionError("no answer on stream %d" % sid)


class HostLoad:
    """Requests with a given Host in background threads until stopped: half keep their
    connection alive, half open one per request. Every answer that is not 200 with the
    expected body, and every error, is a failure."""

    def __init__(self, port, host, body, threads=4):
        self.port, self.host, self.body = port, host, body
        self.ok = 0
        self.failures = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i % 2 == 0,), daemon=True)
                         for i in range(threads)]

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(10)

    def _run(self, keep_alive):
        conn = None
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/", headers={"Host": self.host})
                resp = conn.getresponse()
                body = resp.read()
                with self._lock:
                    if resp.status == 200 and body == self.body:
                        self.ok += 1
                    else:
                        self.failures.append("%d %r" % (resp.status, body))
                if not keep_alive or resp.will_close:
                    conn.close()
                    conn = None
            except Exception as e:  # noqa: BLE001 - every failure counts
                with self._lock:
                    self.failures.append("%s: %s" % (type(e).__name__, e))
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def wait_for(self, count, timeout=15):
        start = self.ok
        wait_until(lambda: self.ok >= start + count, timeout, what="%d more answers" % count)


def kill_what_is_left(controller, names, port):
    """After a test that left processes serving on purpose: the controller, the instances'
    workers and the address's fronts, by SIGKILL."""
    if controller.proc.poll() is None:
        controller.kill9()
    for name in names.values():
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)
    for pid in fronts_running(port):
        os.kill(pid, signal.SIGKILL)


def no_fronts_left(port):
    wait_until(lambda: not fronts_running(port), 15, what="the fronts of port %d to exit" % port)


# --- routing ---------------------------------------------------------------------------------

def test_each_name_reaches_its_instance_and_certificate():
    tls_port, plain_port = free_port(), free_port()
    with Controller(extra_args=["--metrics-listen", "127.0.0.1:%d" % free_port()]) as c:
        names = start_trio(c, tls_port, plain_port)
        # TLS by SNI (curl --resolve), each with its own certificate.
        for host, body in (("shop.test", "shop"), ("www.shop.test", "shop"),
                           ("blog.test", "blog"), ("home.test", "home"),
                           ("nobody.test", "home"), ("a.b.shop.test", "home")):
            code, got, err = curl_get("https://%s:%d/" % (host, tls_port), host, tls_port)
            assert (code, got) == (200, body + "\n"), (host, code, got, err)
        for sni, cn in (("shop.test", "shop.test"), ("x.shop.test", "shop.test"),
                        ("blog.test", "blog.test"), ("unknown.test", "home.test")):
            out, rc = s_client(tls_port, "-servername", sni, data=b"")
            assert peer_cn(out) == cn, (sni, out)
        out, rc = s_client(tls_port, "-noservername", data=b"")
        assert peer_cn(out) == "home.test", out  # no SNI: the default
        # Plain HTTP by Host; HTTP/2 with prior knowledge goes to the default.
        for host, body in (("shop.test", "shop"), ("SHOP.test.", "shop"), ("blog.test", "blog"),
                           ("other.test", "home")):
            code, got, err = curl_get("http://x:%d/" % plain_port, "x", plain_port,
                                      "-H", "Host: " + host)
            assert (code, got) == (200, body + "\n"), (host, code, got, err)
        p = subprocess.run(["nghttp", "http://127.0.0.1:%d/" % plain_port], capture_output=True,
                           timeout=15)
        assert p.stdout == b"home\n", p
        # HTTP/2 over TLS with nghttp: the SNI it sends is the URL's host.
        p = subprocess.run(["nghttp", "-v", "https://127.0.0.1:%d/" % tls_port],
                           capture_output=True, timeout=15)
        assert b"home\n" in p.stdout, p

        # The tables as the controller shows them. The fronts report their figures once a
        # second: wait for the one that counts shop's hand-offs.
        def counted():
            a = address_of(c, tls_port)
            shown = {i["name"]: i for i in a["instances"]}
            return (a, shown) if shown[names["shop"]]["handoffs"] >= 1 else None
        a, shown = wait_until(counted, 5, interval=0.2, what="shop's hand-offs counted")
        assert a["tls"] is True and a["default"] == names["home"]
        assert shown[names["shop"]]["names"] == ["*.shop.test", "shop.test"]
        assert shown[names["blog"]]["names"] == ["blog.test"]
        assert [f["state"] for f in a["fronts"]] == ["ready"]
        show = c.show(names["blog"])
        assert {s["address"] for s in show["shared"]} == {"127.0.0.1:%d" % tls_port,
                                                          "127.0.0.1:%d" % plain_port}
        human = c.ctl("status").stdout
        assert "127.0.0.1:%d" % tls_port in human and names["shop"] in human, human
        human = c.ctl("instance", "show", names["shop"]).stdout
        assert "shop.test" in human, human
        # Figures: per address, and per instance in instance metrics and Prometheus.
        wait_until(lambda: address_of(c, plain_port)["counters"]["handed_off"] >= 4, 5,
                   what="the front's figures")
        metrics = c.ctl_json("instance", "metrics", names["blog"])
        assert any(s["handoffs"] >= 2 for s in metrics["shared"]), metrics["shared"]
        port = int(c.extra_args[1].rsplit(":", 1)[1])
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read()
        assert b'scalws_front_handed_off_total{address="127.0.0.1:%d"}' % tls_port in text
        assert (b'scalws_front_instance_handoffs_total{address="127.0.0.1:%d",instance="%s"}'
                % (plain_port, names["blog"].encode())) in text
    no_fronts_left(tls_port)
    no_fronts_left(plain_port)


def test_421_on_a_coalesced_http2_connection_and_a_keep_alive_one_that_switches_host():
    tls_port, plain_port = free_port(), free_port()
    with Controller() as c:
        start_trio(c, tls_port, plain_port)
        # HTTP/2 over TLS: the connection belongs to shop (SNI), a browser may send it
        # requests for another name its certificate covered.
        sock, conn = h2_tls(tls_port, "shop.test")
        assert h2_get(sock, conn, "shop.test") == (200, b"shop\n")
        assert h2_get(sock, conn, "www.shop.test:%d" % tls_port) == (200, b"shop\n")
        status, body = h2_get(sock, conn, "blog.test")
        assert status == 421 and b"Misdirected" in body
        assert h2_get(sock, conn, "nobody.test")[0] == 421  # the default's, not shop's
        assert h2_get(sock, conn, "shop.test") == (200, b"shop\n")  # the connection lives on
        sock.close()
        # The default instance answers every name nobody claims, never another's.
        sock, conn = h2_tls(tls_port, "nobody.test")
        assert h2_get(sock, conn, "anything.test") == (200, b"home\n")
        assert h2_get(sock, conn, "shop.test")[0] == 421
        sock.close()
        # HTTP/1.1 keep-alive that switches Host.
        with socket.create_connection(("127.0.0.1", plain_port), timeout=5) as s:
            assert raw_get(s, "blog.test") == (200, b"blog\n")
            status, _ = raw_get(s, "shop.test")
            assert status == 421
            assert raw_get(s, "blog.test:%d" % plain_port) == (200, b"blog\n")
    no_fronts_left(tls_port)
    no_fronts_left(plain_port)


def test_unknown_names_without_a_default_are_refused_and_h2c_closed():
    tls_port, plain_port = free_port(), free_port()
    with Controller() as c:
        start_trio(c, tls_port, plain_port, labels=("shop", "blog"))
        out, rc = s_client(tls_port, "-servername", "nobody.test", data=b"")
        assert rc != 0 and "unrecognized name" in out, out
        out, rc = s_client(tls_port, "-noservername", data=b"")
        assert rc != 0 and "unrecognized name" in out, out
        code, body, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                 "Host: nobody.test")
        assert code == 421 and "Misdirected" in body
        # h2c with prior knowledge names no host: without a default it is closed.
        with socket.create_connection(("127.0.0.1", plain_port), timeout=5) as s:
            s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            assert s.recv(100) == b""
        wait_until(lambda: address_of(c, tls_port)["counters"]["unknown_name"] >= 2, 5,
                   what="the unknown names counted")
        wait_until(lambda: address_of(c, plain_port)["counters"]["h2c_refused"] == 1, 5,
                   what="the h2c refusal counted")
        # A stopped instance's names stay claimed: its clients are told it is not running.
        names = [i["name"] for i in address_of(c, plain_port)["instances"]]
        blog = [n for n in names if n.startswith("blog")][0]
        c.ctl("instance", "stop", blog)
        code, body, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                 "Host: blog.test")
        assert code == 503, body
        code, body, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                 "Host: shop.test")
        assert (code, body) == (200, "shop\n")
    no_fronts_left(tls_port)
    no_fronts_left(plain_port)


# --- life cycle ------------------------------------------------------------------------------

def test_stop_start_and_reload_of_one_instance_lose_nothing_for_the_others():
    plain_port = free_port()
    # Two fronts on the address: each table update reaches both before a channel goes.
    with Controller(extra_args=["--front-processes", "2"]) as c:
        names = start_trio(c, None, plain_port)
        with HostLoad(plain_port, "blog.test", b"blog\n") as blog, \
                HostLoad(plain_port, "x.test", b"home\n") as home:
            blog.wait_for(50)
            home.wait_for(50)
            c.ctl("instance", "stop", names["shop"])
            code, _, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                  "Host: shop.test")
            assert code == 503
            blog.wait_for(50)
            c.ctl("instance", "start", names["shop"])
            code, body, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                     "Host: shop.test")
            assert (code, body) == (200, "shop\n")
            # A reload that moves a name from shop to nobody: the default gets it, at once.
            c.set_config(names["shop"], site(c, "shop", None, plain_port, names='["shop.test"]'))
            c.ctl("instance", "reload", names["shop"])
            wait_until(lambda: curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                        "Host: www.shop.test")[1] == "home\n", 5,
                       what="www.shop.test to move to the default")
            c.ctl("instance", "restart", names["shop"])
            home.wait_for(50)
            blog.wait_for(50)
            assert len(front_pids(c, plain_port)) == 2
        assert not blog.failures, blog.failures[:5]
        assert not home.failures, home.failures[:5]
        assert blog.ok > 200 and home.ok > 200
    no_fronts_left(plain_port)


def test_a_killed_front_is_restarted_and_other_listeners_are_unaffected():
    plain_port, own_port = free_port(), free_port()
    with Controller() as c:
        names = start_trio(c, None, plain_port, labels=("shop", "blog"))
        # A third instance on an address of its own: a direct listener, no front.
        alone = unique_name("alone")
        c.add(alone, PLAIN_LISTEN.format(port=own_port, extra="") + ROUTE.format(body="alone"),
              "--shared-cpus")
        c.ctl("instance", "start", alone)
        assert address_of(c, own_port) is None
        [front] = front_pids(c, plain_port)
        kept = socket.create_connection(("127.0.0.1", plain_port), timeout=5)
        assert raw_get(kept, "blog.test") == (200, b"blog\n")
        with HostLoad(own_port, "x", b"alone\n") as load:
            load.wait_for(30)
            os.kill(front, signal.SIGKILL)
            wait_until(lambda: front_pids(c, plain_port) not in ([], [front]), 10,
                       what="a new front")
            load.wait_for(30)
        assert not load.failures, load.failures[:5]
        # A connection handed over before lives in the worker, not in the front.
        assert raw_get(kept, "blog.test") == (200, b"blog\n")
        kept.close()
        code, body, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                 "Host: shop.test")
        assert (code, body) == (200, "shop\n")
        a = address_of(c, plain_port)
        assert a["fronts"][0]["restarts"] == 1
        assert names["shop"] in {i["name"] for i in a["instances"]}
    no_fronts_left(plain_port)


def test_a_dead_workers_queue_is_handed_to_its_siblings():
    plain_port = free_port()
    with Controller() as c:
        name = unique_name("twin")
        home = unique_name("home")
        c.add(name, site(c, "blog", None, plain_port), "--cpus", "2", "--shared-cpus")
        c.add(home, site(c, "home", None, plain_port), "--shared-cpus")
        c.ctl("instance", "start", name)
        c.ctl("instance", "start", home)
        wait_until(lambda: len(c.ready_pids(name)) == 2, what="two workers")
        stuck, other = c.ready_pids(name)
        os.kill(stuck, signal.SIGSTOP)
        try:
            # Round robin: about half of these queue on the stopped worker's channel.
            socks = []
            for _ in range(8):
                s = socket.create_connection(("127.0.0.1", plain_port), timeout=10)
                s.sendall(b"GET / HTTP/1.1\r\nHost: blog.test\r\nConnection: close\r\n\r\n")
                socks.append(s)
            time.sleep(0.5)
        finally:
            os.kill(stuck, signal.SIGKILL)
        for s in socks:
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            s.close()
            assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"blog\n"), data
        # Who served the dead worker's queue depends on a race the test does not fix: its
        # sibling ("handed on" in the log) once the fronts confirmed the table without it,
        # or its replacement (restarted 100 ms later) when that was up first. Either way
        # every connection above got its answer, which is what must hold.
    no_fronts_left(plain_port)


# --- limits ----------------------------------------------------------------------------------

def test_slow_silent_and_garbage_clients_are_closed_and_others_served():
    tls_port, plain_port = free_port(), free_port()
    with Controller(extra_args=["--front-header-timeout", "1s"]) as c:
        start_trio(c, tls_port, plain_port)
        silent = socket.create_connection(("127.0.0.1", tls_port), timeout=10)
        # A ClientHello a byte at a time, slower than the header timeout allows: a record
        # header and a handshake header promise 508 bytes, then a byte every 100 ms.
        trickle = socket.create_connection(("127.0.0.1", tls_port), timeout=10)
        start = time.monotonic()
        trickle.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc")
        closed = False
        for _ in range(60):
            try:
                trickle.sendall(b"\x00")
                time.sleep(0.1)
            except OSError:
                closed = True
                break
            trickle.settimeout(0.01)
            try:
                if trickle.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
            except OSError:
                closed = True
                break
        assert closed and time.monotonic() - start < 5, "the trickling client was not closed"
        # The silent one goes too (TCP_DEFER_ACCEPT holds it a second, then the timeout).
        silent.settimeout(6)
        assert silent.recv(1) == b""
        # Garbage: not a ClientHello (closed), not an HTTP head (400).
        with socket.create_connection(("127.0.0.1", tls_port), timeout=5) as g:
            g.sendall(b"\x17\x03\x03\x00\x05hello")
            assert g.recv(100) == b""
        with socket.create_connection(("127.0.0.1", plain_port), timeout=5) as g:
            g.sendall(b"\x01\x02garbage\r\n\r\n")
            assert g.recv(100).startswith(b"HTTP/1.1 400")
        code, body, _ = curl_get("https://shop.test:%d/" % tls_port, "shop.test", tls_port)
        assert (code, body) == (200, "shop\n")
        wait_until(lambda: address_of(c, tls_port)["counters"]["peek_timeouts"] >= 2, 5,
                   what="two peek timeouts")
        assert address_of(c, tls_port)["counters"]["invalid"] >= 1
    no_fronts_left(tls_port)
    no_fronts_left(plain_port)


def test_the_fronts_sandbox():
    p = subprocess.run([FRONT, "--sandbox-report", "--user", "nobody"], capture_output=True,
                       text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "no_new_privs: yes" in lines
    assert any(l.startswith("seccomp: enforced") and "front allow-list" in l for l in lines), lines
    assert not any(l.startswith("landlock path") for l in lines), lines  # no file at all
    assert "landlock tcp: bind denied, connect allowed to ports none" in lines or \
        any("TCP bind and connect are not restricted" in l for l in lines), lines
    probes = [l for l in lines if l.startswith("probe ")]
    assert len(probes) >= 4 and all("refused" in l for l in probes), probes
    report = json.loads(subprocess.run([FRONT, "--sandbox-report", "--user", "nobody", "--json"],
                                       capture_output=True, timeout=20).stdout)
    assert report["seccomp"]["profile"] == "front" and report["landlock"]["paths"] == []

    # The running front: its own user, no capability, seccomp and no_new_privs, as the
    # controller reads them in /proc, and the report it sent.
    plain_port = free_port()
    kernel_log_before = kernel_log()
    with Controller() as c:
        start_trio(c, None, plain_port, labels=("shop", "blog"))
        [pid] = front_pids(c, plain_port)
        st = proc_status(pid)
        assert st["NoNewPrivs"] == "1" and st["Seccomp"] == "2", st
        assert st["CapEff"] == "0000000000000000"
        front = address_of(c, plain_port)["fronts"][0]
        assert front["checked"]["user"] == "scalws-front"
        assert front["sandbox"]["seccomp"]["profile"] == "front"
        assert front["sandbox"]["landlock"]["paths"] == []
        landlock = front["sandbox"]["landlock"]
        assert landlock["enforced"] == (landlock["abi"] > 0)
        code, got, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                "Host: shop.test")
        assert (code, got) == (200, "shop\n")
        # Nothing the front does in its sandbox is refused: no seccomp audit line (type
        # 1326, which the kernel logs for every refused call) names it. glibc's first time
        # conversion, for the log's timestamps, used to open /etc/localtime here.
        refused = refused_calls(pid, kernel_log_before)
        assert refused is None or refused == [], refused


def kernel_log():
    """dmesg's lines as (seconds since boot, text), or None when the kernel log cannot be
    read here."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if log.returncode != 0:
        return None
    lines = []
    for line in log.stdout.splitlines():
        stamp = re.match(r"\[\s*([0-9]+\.[0-9]+)\]", line)
        if stamp:
            lines.append((float(stamp.group(1)), line))
    return lines


def refused_calls(pid, before):
    """The system calls seccomp refused to the front `pid`: the kernel's audit lines
    logged after the last line of `before` (kernel_log()), so a line of an earlier process
    that had the same pid does not count; None when the kernel log cannot be read."""
    after = kernel_log()
    if before is None or after is None:
        return None
    since = before[-1][0] if before else -1.0
    return [l for t, l in after
            if t > since and "type=1326" in l and " pid=%d " % pid in l and
            'comm="scalws-front"' in l]


# --- the rules ------------------------------------------------------------------------------

def test_sharing_rules_refuse_what_cannot_work():
    tls_port, plain_port = free_port(), free_port()
    with Controller() as c:
        shop = unique_name("shop")
        c.add(shop, site(c, "shop", tls_port, plain_port), "--shared-cpus")

        def refused(label, text):
            name = unique_name(label)
            path = os.path.join(c.dir, name + ".toml")
            with open(path, "w") as f:
                f.write(text)
            p = c.ctl("instance", "add", name, "--config", path, check=False)
            assert p.returncode == 1, p.stdout
            return p.stderr

        # An exact name under another's wildcard is allowed (the exact name wins).
        c.add(unique_name("www"), PLAIN_LISTEN.format(port=plain_port,
                                                      extra='names = ["www.shop.test"]') +
              ROUTE.format(body="x"), "--shared-cpus")
        err = refused("dup", PLAIN_LISTEN.format(port=plain_port, extra='names = ["shop.test"]')
                      + ROUTE.format(body="x"))
        assert "name shop.test is already claimed by instance " + shop in err, err
        err = refused("none", PLAIN_LISTEN.format(port=plain_port, extra="") + ROUTE.format(body="x"))
        assert "claims no name" in err, err
        err = refused("mix", TLS_LISTEN.format(port=plain_port, cert="/x.crt", key="/x.key",
                                               extra='names = ["x.test"]') + ROUTE.format(body="x"))
        assert "all TLS or all plain" in err, err
        err = refused("wild", PLAIN_LISTEN.format(port=plain_port, extra='names = ["y.test"]')
                      .replace("127.0.0.1", "0.0.0.0") + ROUTE.format(body="x"))
        assert "is already used by instance " + shop in err, err
        cert, key = make_cert(c.dir, "h3", "h3.test", ("h3.test",), ip=False)
        err = refused("quic", TLS_LISTEN.format(port=tls_port, cert=cert, key=key,
                                                extra="http3 = true") + ROUTE.format(body="x"))
        assert "serves HTTP/3 to all its instances or to none" in err, err
        # Defaults: one per address; set and reload refuse too.
        home = unique_name("home")
        c.add(home, site(c, "home", None, plain_port), "--shared-cpus")
        err = refused("second", PLAIN_LISTEN.format(port=plain_port, extra="default = true")
                      + ROUTE.format(body="x"))
        assert "instance " + home + " is already the default there" in err, err
        path = os.path.join(c.dir, home + ".toml")
        with open(path, "w") as f:
            f.write(PLAIN_LISTEN.format(port=plain_port, extra='names = ["shop.test"]') +
                    ROUTE.format(body="x"))
        p = c.ctl("instance", "set", home, "--config", path, check=False)
        assert p.returncode == 1 and "already claimed by instance " + shop in p.stderr, p.stderr


def h3_body(port, sni, *args):
    """(status, body) of GET / over HTTP/3 with SNI and :authority `sni`."""
    with tempfile.TemporaryDirectory() as d:
        run = h3(port, "/who", host=sni, sni=sni,
                 args=["--download=" + d, "--timeout=10s"] + list(args))
        assert run.returncode == 0, (sni, run.output[-3000:])
        with open(os.path.join(d, "who"), "rb") as f:
            return run.only().status, f.read().decode()


def start_h3_sites(c, port, sites):
    """Instances on one TLS port with HTTP/3: (label, instance options, quic settings)."""
    names = {}
    for label, options, quic in sites:
        sans, _, default = SITES[label]
        cert, key = make_cert(c.dir, label, sans[0], sans, ip=False)
        os.chmod(c.dir, 0o755)
        extra = "http3 = true\n%s\n%s" % ("default = true" if default else "", quic)
        names[label] = unique_name(label)
        c.add(names[label], TLS_LISTEN.format(port=port, cert=cert, key=key, extra=extra) +
              ROUTE.format(body=label), "--shared-cpus", *options)
    for name in names.values():
        c.ctl("instance", "start", name)
    wait_for_port(port)
    return names


def test_http3_on_a_shared_address_reaches_each_instance_by_sni():
    port = free_port()
    with Controller() as c:
        names = start_h3_sites(c, port, (("shop", ("--cpus", "2"), ""),
                                         ("blog", (), 'quic = { retry = "always" }'),
                                         ("home", (), "")))
        wait_until(lambda: len(c.ready_pids(names["shop"])) == 2, what="shop's two workers")
        # The front reads the SNI from each client's Initial and passes the connection's
        # datagrams to the instance's worker; blog makes every client go through a Retry.
        for sni, body in (("shop.test", "shop"), ("www.shop.test", "shop"),
                          ("blog.test", "blog"), ("home.test", "home"),
                          ("nobody.test", "home")):
            assert h3_body(port, sni) == (200, body + "\n"), sni
        # After the handshake a client that moves to a new source port still reaches the
        # loop that holds its connection (shop has two): the front routes by connection ID.
        for _ in range(4):
            assert h3_body(port, "shop.test", "--change-local-addr=50ms",
                           "--delay-stream=300ms") == (200, "shop\n")
        # A name the instance does not claim, asked on its connection, is still refused.
        run = h3(port, "/who", host="blog.test", sni="shop.test", args=["--timeout=10s"])
        assert run.returncode == 0 and run.only().status == 421, run.output[-3000:]
        # TCP on the same address: routed as before, and it advertises HTTP/3.
        code, got, err = curl_get("https://shop.test:%d/" % port, "shop.test", port, "-i")
        assert code == 200 and ('alt-svc: h3=":%d"' % port) in got.lower(), (code, got, err)

        def counted():
            a = address_of(c, port)
            return a if a["counters"]["quic_routed"] >= 10 else None
        a = wait_until(counted, 5, interval=0.2, what="the front's QUIC figures")
        assert a["counters"]["quic_forwarded"] > a["counters"]["quic_routed"], a["counters"]
        assert a["http3"] is True
        human = c.ctl("status").stdout
        assert "TLS and QUIC, by SNI" in human and "connections routed" in human, human
        # Workers report their figures once a second, so the last requests' may still be on
        # their way.
        def http3_figure(label, figure, least):
            figures = c.ctl_json("instance", "metrics", names[label])["window"]["http3"]
            return figures if figures[figure] >= least else None
        wait_until(lambda: http3_figure("blog", "retries", 1), 5, interval=0.2,
                   what="blog's Retry counted")
        wait_until(lambda: http3_figure("shop", "migrations", 4), 5, interval=0.2,
                   what="shop's four migrations counted")
    no_fronts_left(port)


# --- the controller goes and comes back -----------------------------------------------------

def test_http3_on_a_shared_address_survives_a_controller_restart_and_a_front_restart():
    port = free_port()
    first = Controller()
    first.start()
    names = {}
    try:
        names = start_h3_sites(first, port, (("shop", (), ""), ("home", (), "")))
        assert h3_body(port, "shop.test") == (200, "shop\n")
        [front] = front_pids(first, port)
        first.signal_and_wait(signal.SIGUSR2)  # leaves everything serving
        assert h3_body(port, "shop.test") == (200, "shop\n")  # nobody supervises now
        with Controller(first.dir) as second:
            second.instances.update(names.values())
            wait_until(lambda: front_pids(second, port) == [front], 10,
                       what="the front re-attached")
            assert address_of(second, port)["http3"] is True
            assert h3_body(port, "home.test") == (200, "home\n")
            # The re-attached controller took the UDP socket from the front: a new front
            # gets the same one, still first in the group, and every datagram reaches it.
            os.kill(front, signal.SIGKILL)
            wait_until(lambda: front_pids(second, port) not in ([], [front]), 10,
                       what="a new front")
            for sni, body in (("shop.test", "shop"), ("home.test", "home")):
                assert h3_body(port, sni) == (200, body + "\n"), sni
        no_fronts_left(port)
    finally:
        kill_what_is_left(first, names, port)


def test_a_new_controller_reattaches_the_front_without_a_gap():
    plain_port = free_port()
    first = Controller()
    first.start()
    names = {}
    try:
        names = start_trio(first, None, plain_port)
        [front] = front_pids(first, plain_port)
        with HostLoad(plain_port, "blog.test", b"blog\n") as load:
            load.wait_for(30)
            first.signal_and_wait(signal.SIGUSR2)  # leaves everything serving
            load.wait_for(50)  # nobody supervises now; the front routes all the same
            with Controller(first.dir) as second:
                second.instances.update(names.values())
                wait_until(lambda: front_pids(second, plain_port) == [front], 10,
                           what="the front re-attached")
                load.wait_for(30)
                # Re-attached for real: a stop reaches its table.
                second.ctl("instance", "stop", names["shop"])
                code, _, _ = curl_get("http://x:%d/" % plain_port, "x", plain_port, "-H",
                                      "Host: shop.test")
                assert code == 503
                load.wait_for(30)
                load.stop()
            assert not load.failures, load.failures[:5]
        no_fronts_left(plain_port)
    finally:
        kill_what_is_left(first, names, plain_port)
