"""Helpers for the response rules' integration tests (headers, error pages, compression):
a scalwsd with a plain listener (HTTP/1.1 and h2c) and a TLS one (h2 and HTTP/1.1), and
one curl-based fetch that speaks each of the four ways and returns the raw body (no
decoding: the tests decode with Python's gzip, brotli and zstandard themselves)."""
import gzip
import os

import brotli
import zstandard

from harness import curl
from tls_support import tls_server

# The four ways a client reaches the server; every test runs over each.
PROTOCOLS = ("h1", "h2c", "h1-tls", "h2-tls")

LISTENERS = """
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[listen]]
address = "127.0.0.1:$port2"
tls = { cert = "$dir/site.crt", key = "$dir/site.key" }
"""


def server(template, files=None, start=True):
    """A Scalwsd from `template` (which should include LISTENERS), with the test
    certificate made and `files` ({path relative to $dir: bytes|str}) written first."""
    s = tls_server(template, start=False)
    for rel, content in (files or {}).items():
        path = os.path.join(s.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
    if start:
        s.start()
    return s


class Fetched:
    def __init__(self, status, headers, body, version):
        self.status = status
        self.headers = headers  # [(lower-case name, value)], in order
        self.body = body
        self.version = version

    def header(self, name):
        """Every field of that name joined with ", " (None when absent)."""
        values = [v for n, v in self.headers if n == name.lower()]
        return ", ".join(values) if values else None

    def all(self, name):
        return [v for n, v in self.headers if n == name.lower()]

    def decoded(self):
        """The body with its Content-Encoding undone."""
        return decode(self.header("content-encoding"), self.body)

    def __repr__(self):
        return "<Fetched %s %r %r>" % (self.status, self.headers, self.body[:60])


def decode(encoding, body):
    if encoding is None:
        return body
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "br":
        return brotli.decompress(body)
    if encoding == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    raise AssertionError("unexpected Content-Encoding %r" % encoding)


def fetch(s, protocol, path, headers=(), method=None, data=None, timeout=30, compressed=False):
    """One request over `protocol` (see PROTOCOLS) on a new connection. The body is as it
    arrived unless `compressed` (curl --compressed decodes it)."""
    if protocol in ("h1", "h2c"):
        url = "http://127.0.0.1:%d%s" % (s.port, path)
    else:
        url = "https://127.0.0.1:%d%s" % (s.port2, path)
    if method == "HEAD":
        args = ["-k", "-I", "-w", "\n%{http_version}"]  # -I writes the head to stdout
    else:
        args = ["-k", "-D", "-", "-o", "/dev/stdout", "-w", "\n%{http_version}"]
    args += {"h1": ["--http1.1"], "h2c": ["--http2-prior-knowledge"],
             "h1-tls": ["--http1.1"], "h2-tls": ["--http2"]}[protocol]
    if compressed:
        args.append("--compressed")
    if method and method != "HEAD":
        args += ["-X", method]
    if data is not None:
        args += ["--data-binary", data]
    for h in headers:
        args += ["-H", h]
    code, out, err = curl(*(args + [url]), timeout=timeout)
    assert code == 0, "curl %s failed (%d): %s" % (protocol, code, err)
    # -D - writes the head, -o /dev/stdout the body, -w the version after a newline.
    while out.startswith(b"HTTP/") and out.split(b" ", 2)[1].startswith(b"1"):
        out = out[out.index(b"\r\n\r\n") + 4:]  # an interim 100
    head_end = out.index(b"\r\n\r\n") + 4
    head, rest = out[:head_end], out[head_end:]
    body, _, version = rest.rpartition(b"\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    fields = []
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(":")
        fields.append((name.strip().lower(), value.strip()))
    expected = {"h1": b"1.1", "h1-tls": b"1.1", "h2c": b"2", "h2-tls": b"2"}[protocol]
    assert version == expected, "asked %s, spoke HTTP/%s" % (protocol, version.decode())
    return Fetched(status, fields, body, version.decode())
