"""curl over every protocol a site speaks, for tests whose body runs once per protocol:
HTTP/1.1, h2c (prior knowledge on a plain listener with http2 = true), HTTP/1.1 over TLS
and HTTP/2 over TLS. The site has its plain listener on $port (http2 = true) and its TLS
one on $port2."""
from harness import curl

# name -> (curl options, which listener, the HTTP version curl must report)
PROTOCOLS = {
    "http1": ((), "plain", "1.1"),
    "h2c": (("--http2-prior-knowledge",), "plain", "2"),
    "http1-tls": (("-k", "--http1.1"), "tls", "1.1"),
    "h2-tls": (("-k", "--http2"), "tls", "2"),
}


class ProtocolClient:
    def __init__(self, server, protocol):
        self.protocol = protocol
        self.options, listener, self.version = PROTOCOLS[protocol]
        self.tls = listener == "tls"
        self.port = server.port2 if self.tls else server.port
        self.base = ("https" if self.tls else "http") + "://127.0.0.1:%d" % self.port

    def request(self, path, *args, timeout=30):
        """(status, headers dict with lower-case names, body) of one request."""
        dump = () if "-I" in args else ("-D", "-")
        code, out, err = curl(*self.options, *dump, "-w", "\n%{http_version}", *args,
                              self.base + path, timeout=timeout)
        assert code == 0, err
        out, _, version = out.rpartition(b"\n")
        assert version.decode() == self.version, "curl spoke HTTP/%s" % version.decode()
        head, _, body = out.partition(b"\r\n\r\n")
        while head.split(b" ", 2)[1].startswith(b"1"):  # an interim 100 Continue
            head, _, body = body.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers, body
