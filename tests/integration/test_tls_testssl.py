"""testssl.sh (Debian's) on the TLS port: protocols (-p), vulnerabilities (-U) and server
defaults (-S). Nothing may be rated HIGH or CRITICAL except findings about the test
certificate itself (self-signed, no CRL or OCSP URI). Runs offline: no DNS, no phone-out."""
import json
import os
import shutil
import subprocess

import pytest

from tls_support import tls_server

SITE = """
[server]
workers = 1
[[listen]]
address = "127.0.0.1:$port"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
[[route]]
respond = { body = "ok\\n", headers = { "content-type" = "text/plain" } }
"""


@pytest.mark.skipif(shutil.which("testssl") is None, reason="testssl.sh is not installed")
def test_testssl_finds_nothing_high_or_critical():
    with tls_server(SITE) as s:
        report = os.path.join(s.dir, "testssl.json")
        p = subprocess.run(
            ["testssl", "--quiet", "--color", "0", "--nodns", "none", "--ip", "127.0.0.1",
             "--warnings", "off", "--openssl-timeout", "10", "--connect-timeout", "10",
             "--jsonfile", report, "-p", "-U", "-S",
             "https://127.0.0.1:%d" % s.port],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
        text = p.stdout.decode("utf-8", "replace")
        assert os.path.exists(report), text
        with open(report) as f:
            findings = json.load(f)
        ids = {f["id"] for f in findings}
        # The scan really ran the three groups.
        assert {"TLS1_3", "heartbleed", "ROBOT", "cert_chain_of_trust"} <= ids, sorted(ids)
        serious = [f for f in findings if f["severity"] in ("HIGH", "CRITICAL")]
        not_the_cert = [f for f in serious if not f["id"].startswith("cert")]
        assert not not_the_cert, json.dumps(not_the_cert, indent=1)
        by_id = {f["id"]: f for f in findings}
        assert by_id["SSLv3"]["finding"] == "not offered"
        assert by_id["TLS1"]["finding"] == "not offered"
        assert by_id["TLS1_1"]["finding"] == "not offered"
        assert by_id["TLS1_3"]["finding"].startswith("offered")
        assert "h2" in by_id["ALPN_HTTP2"]["finding"]
