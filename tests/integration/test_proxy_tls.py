"""HTTPS to upstreams: an nginx serving TLS with a certificate from a test CA. The proxy
verifies the chain against upstream.tls.ca and the name against tls.sni (sent as SNI),
refuses a certificate for another name (502, and why in the error log), connects without
verification when told to, and resumes its TLS sessions on new connections."""
import os

import pytest

from harness import Client, Scalwsd
from tls_support import make_ca_signed
from upstreams import NginxUpstream

LOCATIONS = r"""
location / {
    return 200 "sni=$ssl_server_name reused=$ssl_session_reused proto=$ssl_protocol\n";
}
"""


def site(port, tls, extra=""):
    return """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
[[route]]
proxy = { upstream = "secure" }
[upstream.secure]
servers = ["127.0.0.1:%d"]
tls = %s
%s
""" % (port, tls, extra)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    files = make_ca_signed(d, "api", "api.test")
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "ca.crt"), 0o644)
    return dict(files, ca=os.path.join(d, "ca.crt"), dir=d)


@pytest.fixture(scope="module")
def upstream(pki):
    n = NginxUpstream(LOCATIONS, tls=(pki["cert"], pki["key"]))
    yield n
    n.stop()


def get(port):
    with Client(port, timeout=10) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        return c.read_response()


def test_verified_tls_with_sni(upstream, pki):
    tls = '{ ca = "%s", sni = "api.test" }' % pki["ca"]
    with Scalwsd(site(upstream.port, tls)) as s:
        r = get(s.port)
        assert r.status == 200, r
        assert b"sni=api.test " in r.body
        assert b"proto=TLSv1.3" in r.body or b"proto=TLSv1.2" in r.body


def test_wrong_name_is_refused(upstream, pki):
    tls = '{ ca = "%s", sni = "other.test" }' % pki["ca"]
    with Scalwsd(site(upstream.port, tls, "retries = 0")) as s:
        assert get(s.port).status == 502
        assert "certificate verification failed" in s.read_log()


def test_unknown_ca_is_refused_unless_verification_is_off(upstream, pki):
    # The system bundle does not know the test CA.
    with Scalwsd(site(upstream.port, '{ sni = "api.test" }', "retries = 0")) as s:
        assert get(s.port).status == 502
        assert "certificate verification failed" in s.read_log()
    with Scalwsd(site(upstream.port, "{ verify = false }")) as s:
        r = get(s.port)
        assert r.status == 200
        assert b"sni= " in r.body  # an IP address is never sent as SNI


def test_sessions_are_resumed_on_new_connections(upstream, pki):
    tls = '{ ca = "%s", sni = "api.test" }' % pki["ca"]
    with Scalwsd(site(upstream.port, tls, "keepalive = 0")) as s:
        bodies = [get(s.port).body for _ in range(3)]
        assert b"reused=." in bodies[0]
        assert all(b"reused=r" in b for b in bodies[1:]), bodies


def test_kept_tls_connections(upstream, pki):
    tls = '{ ca = "%s", sni = "api.test" }' % pki["ca"]
    with Scalwsd(site(upstream.port, tls)) as s:
        before = upstream.connections()
        for _ in range(10):
            assert get(s.port).status == 200
        assert upstream.connections() - before == 1


def test_missing_ca_file_refuses_the_config(upstream, tmp_path):
    from harness import SCALWSD
    import subprocess
    conf = tmp_path / "site.toml"
    conf.write_text(site(upstream.port, '{ ca = "%s" }' % (tmp_path / "nope.pem")).replace(
        "$port", "8080"))
    p = subprocess.run([SCALWSD, "--check-config", str(conf)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "cannot load the CA bundle" in p.stdout + p.stderr
