"""Request smuggling and malformed input against the real scalwsd: each gets one error
response (400 unless stated), `Connection: close` and a clean close, never a crash, a hang
or a response to bytes that followed it; the server then still serves and no worker died."""
import pytest

from harness import Client, Scalwsd, check_error_close, expect_error, get, route, site

SERVER = site([
    route("SMUGGLED\n", exact="/smuggled"),
    route("ok\n"),
], workers=2)

# Appended to every case: a complete, valid request that must never be answered.
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n"


def post(headers, body=b""):
    return b"POST / HTTP/1.1\r\nHost: localhost\r\n" + headers + b"\r\n" + body


def chunked_post(body):
    return post(b"Transfer-Encoding: chunked\r\n", body)


def get_with(headers, target=b"/", version=b"HTTP/1.1"):
    return b"GET " + target + b" " + version + b"\r\nHost: localhost\r\n" + headers + b"\r\n"


CASES = [
    # Framing conflicts (request smuggling).
    ("cl-and-te", post(b"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\nX"), 400),
    ("te-and-cl", post(b"Transfer-Encoding: chunked\r\nContent-Length: 6\r\n", b"0\r\n\r\nX"), 400),
    ("cl-differing", post(b"Content-Length: 5\r\nContent-Length: 6\r\n", b"hello!"), 400),
    ("cl-identical", post(b"Content-Length: 5\r\nContent-Length: 5\r\n", b"hello"), 400),
    ("cl-list", post(b"Content-Length: 5, 5\r\n", b"hello"), 400),
    ("cl-negative", post(b"Content-Length: -1\r\n"), 400),
    ("cl-non-numeric", post(b"Content-Length: abc\r\n"), 400),
    ("cl-plus-sign", post(b"Content-Length: +5\r\n", b"hello"), 400),
    ("cl-hex", post(b"Content-Length: 0x5\r\n", b"hello"), 400),
    ("cl-empty", post(b"Content-Length: \r\n"), 400),
    ("cl-inner-space", post(b"Content-Length: 1 0\r\n", b"0123456789"), 400),
    ("cl-overflow", post(b"Content-Length: 99999999999999999999999\r\n"), 400),
    ("te-chunked-then-gzip", post(b"Transfer-Encoding: chunked, gzip\r\n", b"0\r\n\r\n"), 400),
    ("te-gzip-only", post(b"Transfer-Encoding: gzip\r\n", b"0\r\n\r\n"), 400),
    ("te-chunked-twice", post(b"Transfer-Encoding: chunked, chunked\r\n", b"0\r\n\r\n"), 400),
    ("te-xchunked", post(b"Transfer-Encoding: xchunked\r\n", b"0\r\n\r\n"), 400),
    ("te-gzip-then-chunked", post(b"Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n"), 501),
    ("te-unknown-then-chunked", post(b"Transfer-Encoding: foo, chunked\r\n", b"0\r\n\r\n"), 501),
    ("te-in-two-headers", post(b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
                               b"0\r\n\r\n"), 501),
    ("te-in-http10", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    # Chunked body syntax.
    ("chunk-size-not-hex", chunked_post(b"zz\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-size-negative", chunked_post(b"-5\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-size-empty", chunked_post(b"\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-size-overflow", chunked_post(b"1" + b"0" * 17 + b"\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-data-longer-than-size", chunked_post(b"5\r\nhelloEXTRA\r\n0\r\n\r\n"), 400),
    ("chunk-extension-over-1k", chunked_post(b"5;ext=" + b"e" * 1100 + b"\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-extension-name-over-1k", chunked_post(b"5;" + b"n" * 1100 + b"\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-extensions-many-over-1k",
     chunked_post(b"5" + b";a=b" * 300 + b"\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-line-bare-cr", chunked_post(b"5\rhello\r\n0\r\n\r\n"), 400),
    ("chunk-line-bare-cr-before-crlf", chunked_post(b"5\r\r\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-data-end-bare-cr", chunked_post(b"5\r\nhello\r0\r\n\r\n"), 400),
    ("chunk-line-bare-lf", chunked_post(b"5\nhello\r\n0\r\n\r\n"), 400),
    ("chunk-data-end-bare-lf", chunked_post(b"5\r\nhello\n0\r\n\r\n"), 400),
    ("last-chunk-bare-lf", chunked_post(b"5\r\nhello\r\n0\n\n"), 400),
    # What llhttp 8.1.0 accepts after the head: "\rX" as the final CRLF (the next request
    # would start at "X..."), any two bytes as a chunk's CRLF, folded trailers.
    ("chunk-end-bare-cr-then-byte", chunked_post(b"0\r\n\rX"), 400),
    ("chunk-end-bare-cr-after-trailer", chunked_post(b"0\r\nX-T: 1\r\n\rX"), 400),
    ("chunk-crlf-any-two-bytes", chunked_post(b"5\r\nhelloXY0\r\n\r\n"), 400),
    ("chunk-crlf-cr-and-byte", chunked_post(b"5\r\nhello\rX0\r\n\r\n"), 400),
    ("trailer-obs-fold", chunked_post(b"0\r\nX-T: a\r\n b\r\n\r\n"), 400),
    ("trailer-whitespace-led", chunked_post(b"0\r\n X-T: a\r\n\r\n"), 400),
    ("trailer-space-before-colon", chunked_post(b"0\r\nX-T : a\r\n\r\n"), 400),
    ("trailer-bare-cr", chunked_post(b"0\r\nX-T: a\rb\r\n\r\n"), 400),
    ("trailer-bare-lf", chunked_post(b"0\r\nX-T: a\n\r\n"), 400),
    ("trailer-nul", chunked_post(b"0\r\nX-T: a\x00b\r\n\r\n"), 400),
    # Line endings and folding in the head.
    ("obs-fold-space", get_with(b"X-A: a\r\n b\r\n"), 400),
    ("obs-fold-tab", get_with(b"X-A: a\r\n\tb\r\n"), 400),
    ("bare-cr-request-line-end", b"GET / HTTP/1.1\rHost: localhost\r\n\r\n", 400),
    ("bare-cr-in-target", b"GET /a\rb HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("bare-cr-in-header-value", get_with(b"X-A: a\rb\r\n"), 400),
    ("bare-cr-header-line-end", get_with(b"X-A: a\rX-B: b\r\n"), 400),
    ("bare-cr-in-header-name", get_with(b"X-\rA: a\r\n"), 400),
    ("bare-cr-head-end", b"GET / HTTP/1.1\r\nHost: localhost\r\n\r", 400),
    ("bare-lf-request-line-end", b"GET / HTTP/1.1\nHost: localhost\r\n\r\n", 400),
    ("bare-lf-header-line-end", b"GET / HTTP/1.1\r\nHost: localhost\n\r\n", 400),
    ("bare-lf-everywhere", b"GET / HTTP/1.1\nHost: localhost\n\n", 400),
    # Control characters and field syntax.
    ("nul-in-header-value", get_with(b"X-A: a\x00b\r\n"), 400),
    ("nul-in-header-name", get_with(b"X-\x00A: a\r\n"), 400),
    ("ctl-0x01-in-header-value", get_with(b"X-A: a\x01b\r\n"), 400),
    ("ctl-0x1b-in-header-name", get_with(b"X-\x1bA: a\r\n"), 400),
    ("del-in-header-value", get_with(b"X-A: a\x7fb\r\n"), 400),
    ("nul-in-target", b"GET /a\x00b HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("space-before-colon", get_with(b"X-A : a\r\n"), 400),
    ("tab-before-colon", get_with(b"X-A\t: a\r\n"), 400),
    ("space-before-colon-host", b"GET / HTTP/1.1\r\nHost : localhost\r\n\r\n", 400),
    ("header-without-colon", get_with(b"X-A a\r\n"), 400),
    ("header-empty-name", get_with(b": a\r\n"), 400),
    ("header-name-non-token", get_with(b"X(A): a\r\n"), 400),
    # Host.
    ("host-missing-http11", b"GET / HTTP/1.1\r\nX-A: a\r\n\r\n", 400),
    ("host-twice", b"GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", 400),
    ("host-twice-identical", b"GET / HTTP/1.1\r\nHost: a.example\r\nHost: a.example\r\n\r\n", 400),
    ("host-twice-http10", b"GET / HTTP/1.0\r\nHost: a.example\r\nHost: b.example\r\n\r\n", 400),
    ("host-with-space", b"GET / HTTP/1.1\r\nHost: a example\r\n\r\n", 400),
    ("host-with-slash", b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    ("host-with-userinfo", b"GET / HTTP/1.1\r\nHost: user@a.example\r\n\r\n", 400),
    ("host-bad-port", b"GET / HTTP/1.1\r\nHost: a.example:80x\r\n\r\n", 400),
    ("host-port-too-long", b"GET / HTTP/1.1\r\nHost: a.example:123456\r\n\r\n", 400),
    ("host-unclosed-ipv6", b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
    # Methods and versions.
    ("method-with-paren", b"G(T / HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("method-with-at", b"GE@T / HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("method-with-slash", b"GE/T / HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("method-unknown", b"FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n", 501),
    ("method-unknown-like-get", b"GETS / HTTP/1.1\r\nHost: localhost\r\n\r\n", 501),
    ("method-unknown-lowercase", b"get / HTTP/1.1\r\nHost: localhost\r\n\r\n", 501),
    ("connect", b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", 405),
    ("version-2.0", b"GET / HTTP/2.0\r\nHost: localhost\r\n\r\n", 505),
    ("version-0.9", b"GET / HTTP/0.9\r\nHost: localhost\r\n\r\n", 505),
    ("version-3.0", b"GET / HTTP/3.0\r\nHost: localhost\r\n\r\n", 505),
    ("version-1.3", b"GET / HTTP/1.3\r\nHost: localhost\r\n\r\n", 400),
    ("version-lowercase", b"GET / http/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("version-garbage", b"GET / HTTP/1.1x\r\nHost: localhost\r\n\r\n", 400),
    ("version-https", b"GET / HTTPS/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("version-leading-zero", b"GET / HTTP/01.1\r\nHost: localhost\r\n\r\n", 400),
    ("version-two-digit-minor", b"GET / HTTP/1.10\r\nHost: localhost\r\n\r\n", 400),
    ("method-over-long", b"X" * 100 + b" / HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("method-over-long-like-get", b"GET" + b"T" * 100 + b" / HTTP/1.1\r\nHost: localhost\r\n\r\n",
     400),
    ("expect-other", get_with(b"Expect: something-else\r\n"), 417),
    ("expect-other-with-body", post(b"Content-Length: 5\r\nExpect: 101-switch\r\n", b"hello"), 417),
    # Targets.
    ("target-relative", b"GET a/b HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("target-asterisk-with-get", b"GET * HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("target-fragment", b"GET /#x HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    ("target-fragment-after-query", get_with(b"", b"/?a=b#frag"), 400),
    ("target-raw-utf8", get_with(b"", b"/caf\xc3\xa9"), 400),
    ("target-raw-0x80-in-query", get_with(b"", b"/?q=\x80"), 400),
    ("target-raw-0xff", get_with(b"", b"/\xff"), 400),
    ("path-dotdot-above-root", get_with(b"", b"/../etc/passwd"), 400),
    ("path-dotdot-deeper-above-root", get_with(b"", b"/a/../../etc/passwd"), 400),
    ("path-encoded-dotdot", get_with(b"", b"/%2e%2e/etc/passwd"), 400),
    ("path-encoded-dotdot-upper", get_with(b"", b"/a/%2E%2E/%2E%2E/x"), 400),
    ("path-encoded-nul", get_with(b"", b"/a%00b"), 400),
    ("path-encoded-slash", get_with(b"", b"/a%2fb"), 400),
    ("path-encoded-slash-upper", get_with(b"", b"/a%2F..%2F..%2Fx"), 400),
    ("path-encoded-backslash", get_with(b"", b"/a%5cb"), 400),
    ("path-encoded-backslash-dotdot", get_with(b"", b"/a/..%5c..%5cx"), 400),
    ("path-literal-backslash", get_with(b"", b"/a\\..\\..\\x"), 400),
    ("path-bad-escape", get_with(b"", b"/a%zzb"), 400),
    ("path-truncated-escape", get_with(b"", b"/a%2"), 400),
    ("absolute-form-dotdot", get_with(b"", b"http://localhost/../x"), 400),
]


@pytest.fixture(scope="module")
def server():
    with Scalwsd(SERVER) as s:
        yield s


@pytest.mark.parametrize("data,status", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_request_gets_one_error_and_a_clean_close(server, data, status):
    workers = sorted(server.workers())
    expect_error(server.port, data + SMUGGLED, status)
    # No crash: the same workers still serve a fresh request.
    assert get(server.port, "/").body == b"ok\n"
    assert sorted(server.workers()) == workers, "a worker was replaced (crashed?)"
    server.assert_no_fd_leak()


KEEP_ALIVE_CASES = [c for c in CASES if c[0] in (
    "cl-and-te", "chunk-size-not-hex", "bare-cr-in-header-value", "obs-fold-space",
    "chunk-end-bare-cr-then-byte", "trailer-obs-fold", "target-fragment", "version-leading-zero",
    "method-unknown", "version-2.0", "host-twice", "path-encoded-nul")]


@pytest.mark.parametrize("data,status", [c[1:] for c in KEEP_ALIVE_CASES],
                         ids=[c[0] for c in KEEP_ALIVE_CASES])
def test_malformed_request_after_a_good_one_on_keep_alive(server, data, status):
    # The good response comes first, then exactly one error, then the close.
    good = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with Client(server.port, timeout=2) as c:
        c.send(good + data + SMUGGLED)
        assert c.read_response().body == b"ok\n"
        rest, how = c.read_until_close()
    check_error_close(rest, how, status)
    server.assert_no_fd_leak()


def test_garbage_bytes_get_400(server):
    expect_error(server.port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64, 400)
    expect_error(server.port, b"\xff\xfe\xfd\r\n\r\n", 400)
    server.assert_no_fd_leak()


def test_connection_closed_mid_head_is_harmless(server):
    for cut in (b"GET / HT", b"GET / HTTP/1.1\r\nHost: loc", b"POST / HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 10\r\n\r\n01234"):
        with Client(server.port) as c:
            c.send(cut)
    assert get(server.port, "/").body == b"ok\n"
    server.assert_no_fd_leak()
