"""Helpers for the TLS and HTTP/2 integration tests: certificates made at test time with
the openssl command (no key is ever committed), openssl s_client runs, and raw HTTP/2
connections (python3-h2 / hyperframe from the system Python) over TCP or TLS."""
import os
import socket
import ssl
import subprocess
import time

import h2.config
import h2.connection
import h2.events
from hyperframe.frame import Frame

from harness import Scalwsd

OPENSSL = "openssl"


def make_cert(directory, stem, cn, sans=(), days=365, ip=True):
    """A self-signed P-256 certificate for `cn` with DNS `sans` (and IP:127.0.0.1 unless
    ip is False); returns (cert path, key path)."""
    cert = os.path.join(directory, stem + ".crt")
    key = os.path.join(directory, stem + ".key")
    alt = ",".join(["DNS:" + s for s in sans] + (["IP:127.0.0.1"] if ip else []))
    args = [OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", key, "-out", cert, "-days", str(days), "-subj", "/CN=" + cn]
    if alt:
        args += ["-addext", "subjectAltName=" + alt]
    subprocess.run(args, check=True, capture_output=True)
    return cert, key


def make_ca_signed(directory, stem, cn):
    """A CA, a leaf it signed (CN and SAN `cn`), and a DER OCSP response saying the leaf is
    good; returns dict(ca, cert, key, ocsp)."""
    d = directory
    run = lambda *a: subprocess.run([OPENSSL] + list(a), check=True, capture_output=True, cwd=d)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "ca.key", "-out", "ca.crt", "-days", "30", "-subj", "/CN=Test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=keyCertSign,cRLSign,digitalSignature")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", stem + ".key", "-out", stem + ".csr", "-subj", "/CN=" + cn)
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:%s,IP:127.0.0.1\n" % cn)
    run("x509", "-req", "-in", stem + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", stem + ".leaf.crt", "-days", "30", "-extfile", "ext.cnf")
    # The served chain: leaf then CA, so the issuer is known to the server.
    with open(os.path.join(d, stem + ".crt"), "wb") as out:
        for part in (stem + ".leaf.crt", "ca.crt"):
            with open(os.path.join(d, part), "rb") as f:
                out.write(f.read())
    serial = subprocess.run([OPENSSL, "x509", "-in", stem + ".leaf.crt", "-noout", "-serial"],
                            check=True, capture_output=True, cwd=d, text=True).stdout
    serial = serial.strip().split("=")[1]
    expiry = time.strftime("%y%m%d%H%M%SZ", time.gmtime(time.time() + 30 * 86400))
    with open(os.path.join(d, "index.txt"), "w") as f:
        f.write("V\t%s\t\t%s\tunknown\t/CN=%s\n" % (expiry, serial, cn))
    run("ocsp", "-index", "index.txt", "-rsigner", "ca.crt", "-rkey", "ca.key", "-CA", "ca.crt",
        "-issuer", "ca.crt", "-cert", stem + ".leaf.crt", "-respout", stem + ".ocsp",
        "-ndays", "1")
    return {"ca": os.path.join(d, "ca.crt"), "cert": os.path.join(d, stem + ".crt"),
            "key": os.path.join(d, stem + ".key"), "ocsp": os.path.join(d, stem + ".ocsp")}


def tls_server(template, certs=(("site", "site.test", ("site.test",)),), start=True):
    """A Scalwsd whose config may name $dir/<stem>.crt and .key: the certificates are made
    in its directory before it starts."""
    s = Scalwsd(template, start=False)
    for stem, cn, sans in certs:
        make_cert(s.dir, stem, cn, sans)
    if start:
        s.start()
    return s


def s_client(port, *args, data=b"", timeout=15):
    """Runs openssl s_client against 127.0.0.1:port; returns its stdout+stderr text and
    exit code."""
    p = subprocess.run([OPENSSL, "s_client", "-connect", "127.0.0.1:%d" % port] + list(args),
                       input=data, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.stdout.decode("utf-8", "replace"), p.returncode


def peer_cn(output):
    for line in output.splitlines():
        if line.startswith("subject="):
            return line.split("CN", 1)[1].lstrip(" =").strip()
    return None


def tls_socket(port, alpn=("h2",), server_name=None, timeout=5.0):
    """A TLS client socket (certificate not verified: the test certificates are
    self-signed)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return ctx.wrap_socket(raw, server_hostname=server_name)


class H2Client:
    """python3-h2 over a socket (h2c when tls is False), plus raw frames for the negative
    tests. Events and frames the server sent are collected by read()."""

    def __init__(self, port, tls=False, settings=None, timeout=5.0):
        self.sock = (tls_socket(port, timeout=timeout) if tls
                     else socket.create_connection(("127.0.0.1", port), timeout=timeout))
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.events = []
        self.closed = False

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_raw(self, data):
        self.sock.sendall(data)

    def read(self, until=None, timeout=5.0):
        """Reads and handles frames until `until(events)` holds, the server closes, or
        `timeout` passes. Returns the events seen so far."""
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            if until is not None and until(self.events):
                break
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                break
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            try:
                events = self.conn.receive_data(data)
            except Exception as e:  # h2 refuses what it considers a protocol violation
                events = [e]
            for e in events:
                # Consume at once, as a reading client does, so windows reopen.
                if isinstance(e, h2.events.DataReceived) and e.flow_controlled_length:
                    try:
                        self.conn.acknowledge_received_data(e.flow_controlled_length,
                                                            e.stream_id)
                    except Exception:  # the stream may be closed already
                        pass
            self.events += events
            try:
                self.flush()
            except OSError:
                pass
        return self.events

    def wait_closed(self, timeout=5.0):
        self.read(timeout=timeout)
        return self.closed

    def request(self, path, method="GET", headers=(), end_stream=True):
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, [(":method", method), (":scheme", "https"),
                                     (":authority", "localhost"), (":path", path)] +
                               list(headers), end_stream=end_stream)
        self.flush()
        return sid

    def response(self, sid, timeout=5.0):
        """(status, headers dict, body) of stream `sid` once it ended."""
        def ended(events):
            return any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) and
                       e.stream_id == sid for e in events)
        self.read(until=ended, timeout=timeout)
        status, headers, body = None, {}, b""
        for e in self.events:
            if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid:
                headers = dict(e.headers)
                status = int(headers[":status"])
            elif isinstance(e, h2.events.DataReceived) and e.stream_id == sid:
                body += e.data
        return status, headers, body

    def goaway(self):
        for e in self.events:
            if isinstance(e, h2.events.ConnectionTerminated):
                return e
        return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def raw_frames(data):
    """Parses bytes into hyperframe frames (the server's side, for raw connections)."""
    frames = []
    pos = 0
    while pos + 9 <= len(data):
        frame, length = Frame.parse_frame_header(memoryview(data[pos:pos + 9]))
        if pos + 9 + length > len(data):
            break
        frame.parse_body(memoryview(data[pos + 9:pos + 9 + length]))
        frames.append(frame)
        pos += 9 + length
    return frames
