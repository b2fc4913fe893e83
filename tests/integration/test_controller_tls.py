"""TLS under the controller: every worker of an instance opens the session tickets the
others sealed (the controller hands them one secret, derived per instance from a host
secret kept in the state directory), a restarted instance still opens its old tickets, and
one instance never opens another's."""
import os
import stat

from controller_harness import Controller, unique_name, wait_until
from harness import free_port
from tls_support import make_cert, s_client

SITE = """\
[[listen]]
address = "127.0.0.1:{port}"
tls = {{ cert = "{cert}", key = "{key}", session_cache = 0 }}
[[route]]
respond = {{ body = "ok\\n" }}
"""

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def handshake(port, sess, save):
    out, code = s_client(port, "-tls1_3", "-ign_eof", "-sess_out" if save else "-sess_in", sess,
                         data=REQUEST)
    assert code == 0 and "HTTP/1.1 200 OK" in out, out
    return "Reused," in out


def test_tickets_resume_across_workers_restarts_and_never_across_instances():
    with Controller() as c:
        cert, key = make_cert(c.dir, "site", "site.test", ("site.test",))
        os.chmod(c.dir, 0o755)
        a, b = unique_name("tlsa"), unique_name("tlsb")
        port_a, port_b = free_port(), free_port()
        c.add(a, SITE.format(port=port_a, cert=cert, key=key), "--cpus", "2", "--shared-cpus")
        c.add(b, SITE.format(port=port_b, cert=cert, key=key), "--shared-cpus")
        c.ctl("instance", "start", a)
        c.ctl("instance", "start", b)
        wait_until(lambda: len(c.ready_pids(a)) == 2, what="two workers of " + a)

        secret = os.path.join(c.state_dir, "tls-ticket.secret")
        mode = os.stat(secret).st_mode
        assert stat.S_IMODE(mode) == 0o600 and os.path.getsize(secret) == 32

        # No session cache: only a ticket resumes, and connections land on either worker.
        sess = os.path.join(c.dir, "sess.pem")
        for _ in range(12):
            handshake(port_a, sess, save=True)
            assert handshake(port_a, sess, save=False)

        # New worker processes (a restart) still open the tickets sealed before it.
        handshake(port_a, sess, save=True)
        before = c.worker_pids(a)
        c.ctl("instance", "restart", a)
        wait_until(lambda: len(c.ready_pids(a)) == 2 and c.worker_pids(a) != before,
                   what="restarted workers of " + a)
        assert set(c.worker_pids(a)).isdisjoint(before)
        assert handshake(port_a, sess, save=False)

        # The same certificate on another instance: its ticket keys are its own.
        assert not handshake(port_b, sess, save=False)
