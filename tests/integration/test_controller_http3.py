"""HTTP/3 under the controller: the controller binds each worker's UDP socket next to its
TCP listener, in the order the connection IDs' steering ids count, so clients that change
address mid-connection reach the process that holds them; the instance's metrics count
HTTP/3 requests and QUIC handshakes, and `instance show` reports the UDP datagrams in
the sandbox."""
import os

from controller_harness import Controller, unique_name, wait_until
from h3_support import h3
from harness import free_port
from tls_support import make_cert

SITE = """\
[[listen]]
address = "127.0.0.1:{port}"
tls = {{ cert = "{cert}", key = "{key}" }}
http3 = true
[[route]]
match = {{ exact = "/hello" }}
respond = {{ body = "hello from an instance\\n" }}
"""


def test_instance_serves_http3_and_steers_migrated_clients_to_their_worker():
    with Controller() as c:
        cert, key = make_cert(c.dir, "site", "site.test", ("site.test",))
        os.chmod(c.dir, 0o755)
        name = unique_name("h3")
        port = free_port()
        c.add(name, SITE.format(port=port, cert=cert, key=key), "--cpus", "2", "--shared-cpus")
        c.ctl("instance", "start", name)
        wait_until(lambda: len(c.ready_pids(name)) == 2, what="two workers of " + name)

        for _ in range(6):
            run = h3(port, "/hello", args=["--change-local-addr=50ms", "--delay-stream=300ms",
                                          "--timeout=10s"])
            assert run.returncode == 0, run.output[-3000:]
            assert run.only().status == 200, run.output[-3000:]

        def counted():
            m = c.ctl_json("instance", "metrics", name)["window"]
            return m if m["http3"]["requests"] >= 6 else None
        m = wait_until(counted, timeout=15, what="six HTTP/3 requests in the metrics")
        assert m["http3"]["handshakes"] >= 6
        assert m["http3"]["migrations"] >= 6

        shown = c.ctl("instance", "show", name).stdout
        assert "UDP" in shown or "udp" in shown, shown
