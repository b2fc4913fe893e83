"""TLS as openssl s_client sees it: protocol versions and suites, ALPN, SNI over several
certificates, session resumption (within a process, across worker processes, across
servers sharing a ticket key file), OCSP stapling, config check and reload."""
import os
import signal
import subprocess
import time

from harness import SCALWSD, Scalwsd, curl
from tls_support import make_ca_signed, make_cert, peer_cn, s_client, tls_server

ONE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
http2 = false
[[route]]
respond = { body = "ok\\n" }
"""

SNI = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
[listen.tls]
cert = "$dir/default.crt"
key = "$dir/default.key"
[[listen.tls.certificates]]
cert = "$dir/shop.crt"
key = "$dir/shop.key"
[[listen.tls.certificates]]
cert = "$dir/wild.crt"
key = "$dir/wild.key"
[[listen.tls.certificates]]
cert = "$dir/api.crt"
key = "$dir/api.key"
names = ["api.example.org"]
[[route]]
respond = { body = "ok\\n" }
"""

SNI_CERTS = (("default", "default.test", ("default.test",)),
             ("shop", "shop.example.com", ("shop.example.com",)),
             ("wild", "wild.example.com", ("*.cdn.example.com",)),
             ("api", "api-cert", ()))


def test_only_tls12_and_tls13():
    with tls_server(ONE) as s:
        for version in ("-tls1", "-tls1_1"):
            out, code = s_client(s.port, version, "-cipher", "DEFAULT:@SECLEVEL=0")
            assert code != 0, out
            assert "alert protocol version" in out or "no protocols available" in out, out
        out, code = s_client(s.port, "-tls1_2")
        assert code == 0 and "New, TLSv1.2, Cipher is ECDHE-ECDSA-AES128-GCM-SHA256" in out, out
        out, code = s_client(s.port, "-tls1_3")
        assert code == 0 and "New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256" in out, out
        # CBC suites are not offered, even to a TLS 1.2 client that asks only for them.
        out, code = s_client(s.port, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256:@SECLEVEL=0")
        assert code != 0, out


def test_alpn():
    with tls_server(ONE) as s:
        out, _ = s_client(s.port, "-alpn", "h2,http/1.1")
        assert "ALPN protocol: h2" in out, out
        out, _ = s_client(s.port, "-alpn", "http/1.1")
        assert "ALPN protocol: http/1.1" in out
        out, _ = s_client(s.port2, "-alpn", "h2,http/1.1")  # http2 = false
        assert "ALPN protocol: http/1.1" in out
        out, code = s_client(s.port, "-alpn", "spdy/3")
        assert code == 0 and "No ALPN negotiated" in out


def test_sni_picks_the_certificate():
    with tls_server(SNI, certs=SNI_CERTS) as s:
        def cn(name=None):
            args = ["-servername", name] if name else ["-noservername"]
            out, code = s_client(s.port, *args)
            assert code == 0, out
            return peer_cn(out)
        assert cn("shop.example.com") == "shop.example.com"
        assert cn("SHOP.example.COM") == "shop.example.com"
        assert cn("img.cdn.example.com") == "wild.example.com"
        assert cn("a.b.cdn.example.com") == "default.test"
        assert cn("api.example.org") == "api-cert"
        assert cn("unknown.example.net") == "default.test"
        assert cn() == "default.test"
        # The name only picks the certificate: the request is served the same.
        code, body, err = curl("-k", "--resolve", "shop.example.com:%d:127.0.0.1" % s.port,
                               "https://shop.example.com:%d/" % s.port)
        assert code == 0 and body == b"ok\n", err


# A request the server answers and then closes on: s_client reads to the end, so a TLS
# 1.3 ticket sent after the handshake is always seen before it exits.
REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def resumes(port, *extra):
    sess = os.path.join(os.environ.get("TMPDIR", "/tmp"), "scalws-sess-%d-%d" % (os.getpid(), port))
    out, code = s_client(port, "-ign_eof", "-sess_out", sess, *extra, data=REQUEST)
    assert code == 0 and "New," in out, out
    out, code = s_client(port, "-ign_eof", "-sess_in", sess, *extra, data=REQUEST)
    os.unlink(sess)
    assert code == 0, out
    assert "HTTP/1.1 200 OK" in out
    return "Reused," in out


def test_resumption_with_tickets_and_the_session_cache():
    with tls_server(ONE) as s:
        assert resumes(s.port, "-tls1_3")
        assert resumes(s.port, "-tls1_2")
        # Without tickets TLS 1.2 resumes from the session cache.
        assert resumes(s.port, "-tls1_2", "-no_ticket")


MULTI = """
[server]
workers = 2
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key", session_cache = 0 }
[[route]]
respond = { body = "ok\\n" }
"""


def test_tickets_resume_on_every_worker_process():
    # No session cache: only tickets can resume, and connections land on either worker
    # (SO_REUSEPORT), so this holds only if both derive the same ticket keys.
    with tls_server(MULTI) as s:
        deadline = time.monotonic() + 10
        while len(s.workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(s.workers()) == 2
        assert all(resumes(s.port, "-tls1_3") for _ in range(12))


SHARED_KEY = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "%s", key = "%s", ticket_key_file = "%s", session_cache = 0 }
[[route]]
respond = { body = "ok\\n" }
"""


def test_a_ticket_key_file_shares_tickets_between_servers(tmp_path):
    cert, key = make_cert(str(tmp_path), "site", "site.test", ("site.test",))
    ticket = tmp_path / "ticket.key"
    ticket.write_bytes(os.urandom(48))
    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(48))
    sess = str(tmp_path / "sess.pem")
    a = Scalwsd(SHARED_KEY % (cert, key, ticket))
    with a:
        out, code = s_client(a.port, "-tls1_3", "-ign_eof", "-sess_out", sess, data=REQUEST)
        assert "New," in out
    # Another server, started later, with the same key file, on the same address.
    same = Scalwsd(SHARED_KEY % (cert, key, ticket), start=False)
    same.port = a.port
    same.write_config(SHARED_KEY % (cert, key, ticket))
    with same:
        same.start()
        out, code = s_client(same.port, "-tls1_3", "-ign_eof", "-sess_in", sess, data=REQUEST)
        assert code == 0 and "Reused," in out, out
    different = Scalwsd(SHARED_KEY % (cert, key, other), start=False)
    different.port = a.port
    different.write_config(SHARED_KEY % (cert, key, other))
    with different:
        different.start()
        out, code = s_client(different.port, "-tls1_3", "-ign_eof", "-sess_in", sess,
                             data=REQUEST)
        assert code == 0 and "New," in out, out


OCSP = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/leaf.crt", key = "$dir/leaf.key", ocsp = "$dir/leaf.ocsp" }
[[route]]
respond = { body = "ok\\n" }
"""


def test_ocsp_stapling_from_a_file():
    s = Scalwsd(OCSP, start=False)
    files = make_ca_signed(s.dir, "leaf", "leaf.test")
    with s:
        s.start()
        out, code = s_client(s.port, "-status", "-CAfile", files["ca"])
        assert code == 0, out
        assert "OCSP Response Status: successful" in out, out
        assert "Cert Status: good" in out
        assert "Verify return code: 0 (ok)" in out
        # Without status_request nothing is stapled.
        out, _ = s_client(s.port)
        assert "OCSP response" not in out


def check_config(path):
    p = subprocess.run([SCALWSD, "--check-config", path], capture_output=True, text=True)
    return p.returncode, p.stderr


def test_check_config_names_a_bad_certificate_or_key(tmp_path):
    cert, key = make_cert(str(tmp_path), "good", "good.test", ("good.test",))
    other_cert, other_key = make_cert(str(tmp_path), "other", "other.test", ())
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    config = tmp_path / "site.toml"
    template = ('[[listen]]\naddress = "127.0.0.1:1"\ntls = { cert = "%s", key = "%s" }\n'
                '[[route]]\nrespond = { body = "x" }\n')
    config.write_text(template % (cert, key))
    assert check_config(str(config)) == (0, "")
    config.write_text(template % (garbage, key))
    code, err = check_config(str(config))
    assert code == 1
    assert err.startswith("%s:3:7: listen.tls.cert: cannot load certificate %s" % (config, garbage)), err
    config.write_text(template % (cert, other_key))
    code, err = check_config(str(config))
    assert code == 1
    assert "private key %s does not match certificate %s" % (other_key, cert) in err, err
    config.write_text(template % (cert, tmp_path / "missing.key"))
    code, err = check_config(str(config))
    assert code == 1 and "cannot load private key %s" % (tmp_path / "missing.key") in err


RELOAD = """
[server]
workers = 1
mode = "%s"
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/%s.crt", key = "$dir/%s.key" }
[[route]]
respond = { body = "ok\\n" }
"""


def reload_keeps_connections(mode):
    s = Scalwsd(RELOAD % (mode, "first", "first"), start=False)
    make_cert(s.dir, "first", "first.test", ("first.test",))
    make_cert(s.dir, "second", "second.test", ("second.test",))
    # A single-mode reload happens inside the sandbox, as the worker user (nobody when the
    # tests run as root): the files must be readable by it, as an operator would arrange.
    os.chmod(s.dir, 0o755)
    for name in os.listdir(s.dir):
        os.chmod(os.path.join(s.dir, name), 0o644)
    with s:
        s.start()
        out, _ = s_client(s.port)
        assert peer_cn(out) == "first.test"
        # A connection open across the reload keeps its certificate and keeps working.
        from tls_support import H2Client
        client = H2Client(s.port, tls=True)
        sid = client.request("/")
        assert client.response(sid)[0] == 200
        s.write_config(RELOAD % (mode, "second", "second"))
        s.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            out, _ = s_client(s.port)
            if peer_cn(out) == "second.test":
                break
            time.sleep(0.1)
        assert peer_cn(out) == "second.test", s.read_log()
        if mode == "single":
            # Same process: the connection goes on, on the certificate it started with.
            sid = client.request("/")
            assert client.response(sid)[0] == 200
        else:
            # Multi mode drains the old generation: a GOAWAY without error, then close.
            assert client.wait_closed(timeout=15)
            assert client.goaway() is not None and client.goaway().error_code == 0
        client.close()
        # A broken certificate on reload is refused; the running one stays.
        with open(os.path.join(s.dir, "second.crt"), "w") as f:
            f.write("broken\n")
        s.signal(signal.SIGHUP)
        time.sleep(0.5)
        out, _ = s_client(s.port)
        assert peer_cn(out) == "second.test"
        assert "cannot load certificate" in s.read_log()


def test_reload_in_multi_mode():
    reload_keeps_connections("multi")


def test_reload_in_single_mode():
    reload_keeps_connections("single")
