"""The proxy's response cache against an upstream whose answers each test sets (fields,
validators, delays, failures), counting what reaches the upstream: RFC 9111 directives,
Vary, revalidation (ETag and Last-Modified), stale-if-error, collapsing, hits over HTTP/1.1
and HTTP/2, sharing between worker processes (multi and single mode) but never between two
servers, purge, limits and eviction, the disk tier (a damaged file dropped), and a worker
killed in the middle of a fill."""
import concurrent.futures
import glob
import json
import os
import signal
import subprocess
import time

import pytest

from cache_upstream import CacheUpstream
from harness import Scalwsd, wait_until

SITE = """
[server]
workers = %(workers)d
mode = "%(mode)s"
[[listen]]
address = "127.0.0.1:$port"
http2 = true
[[route]]
match = { exact = "/status" }
status = {}
[[route]]
match = { exact = "/purge-denied" }
cache_purge = { cache = "pages" }
policy = { allow = ["10.0.0.0/8"] }
[[route]]
match = { prefix = "/", method = "PURGE" }
cache_purge = { cache = "pages" }
[[route]]
match = { prefix = "/" }
proxy = { upstream = "app", cache = "pages" }
[upstream.app]
servers = ["%(upstream)s"]
[cache.pages]
memory = "%(memory)s"
max_entry = "%(max_entry)s"
lock_timeout = "%(lock_timeout)s"
stale_if_error = "%(stale_if_error)s"
default_ttl = { "404" = "1m" }
%(extra)s
"""


def site(upstream, workers=1, mode="multi", memory="8m", max_entry="256k", lock_timeout="5s",
         stale_if_error="0s", extra=""):
    return SITE % dict(upstream=upstream.address, workers=workers, mode=mode, memory=memory,
                       max_entry=max_entry, lock_timeout=lock_timeout,
                       stale_if_error=stale_if_error, extra=extra)


def get(server, path, *headers, method=None):
    """(status, {field: value}, body) of one curl request on a new connection."""
    args = ["curl", "-s", "-i", "--max-time", "20"]
    if method == "HEAD":
        args.append("-I")
    elif method:
        args += ["-X", method]
    for h in headers:
        args += ["-H", h]
    out = subprocess.run(args + [server.url(path)], capture_output=True, timeout=30).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), fields, body.decode("latin-1")


@pytest.fixture
def upstream():
    with CacheUpstream() as u:
        yield u


def test_fresh_answers_come_from_the_cache(upstream):
    upstream.set("/a", headers=[("Cache-Control", "max-age=60"), ("ETag", '"v1"')])
    with Scalwsd(site(upstream)) as s:
        status, fields, body = get(s, "/a")
        assert (status, body) == (200, "body of /a #1\n")
        assert fields["cache-status"] == "scalws; fwd=uri-miss; stored"
        for _ in range(3):
            status, fields, body = get(s, "/a")
            assert (status, body) == (200, "body of /a #1\n")
            assert fields["cache-status"].startswith("scalws; hit; ttl=")
            assert "age" in fields
        assert upstream.count("/a") == 1
        # The client's own conditional and range requests, answered from the entry.
        status, fields, body = get(s, "/a", 'If-None-Match: "v1"')
        assert (status, body) == (304, "")
        assert fields["etag"] == '"v1"'
        status, fields, body = get(s, "/a", "Range: bytes=0-3")
        assert (status, body, fields["content-range"]) == (206, "body", "bytes 0-3/14")
        status, fields, body = get(s, "/a", "Range: bytes=100-")
        assert status == 416
        status, fields, body = get(s, "/a", method="HEAD")
        assert (status, fields["content-length"], body) == (200, "14", "")
        assert upstream.count("/a") == 1
        # The fill went upstream without the client's validators or Range.
        assert "if-none-match" not in upstream.requests("/a")[0][2]


def test_the_status_page_counts_hits_misses_revalidations_and_bytes(upstream):
    upstream.set("/m", headers=[("Cache-Control", "max-age=60")])
    upstream.set("/nc", headers=[("Cache-Control", "no-cache, max-age=60"), ("ETag", '"n1"')],
                 not_modified_if='"n1"')

    def figures(s):
        status, _, body = get(s, "/status")
        assert status == 200
        f = json.loads(body)
        return {k: f[k] for k in ("proxy_cache_hits", "proxy_cache_misses", "proxy_cache_stale",
                                  "proxy_cache_revalidations", "proxy_cache_bytes")}

    def delta(a, b):
        return {k: b[k] - a[k] for k in a}

    # Two workers: the page sums both, whichever of them answered each request.
    with Scalwsd(site(upstream, workers=2)) as s:
        before = figures(s)
        for _ in range(3):
            assert get(s, "/m")[2] == "body of /m #1\n"
        middle = figures(s)
        assert delta(before, middle) == {
            "proxy_cache_hits": 2, "proxy_cache_misses": 1, "proxy_cache_stale": 0,
            "proxy_cache_revalidations": 0, "proxy_cache_bytes": 2 * len("body of /m #1\n")}
        get(s, "/nc")
        get(s, "/nc")  # no-cache: asked upstream again, which answers 304
        after = delta(middle, figures(s))
        assert (after["proxy_cache_misses"], after["proxy_cache_revalidations"],
                after["proxy_cache_hits"]) == (2, 1, 0)
        assert upstream.count("/m") == 1 and upstream.count("/nc") == 2


@pytest.mark.parametrize("headers,stored", [
    ([("Cache-Control", "no-store, max-age=60")], False),
    ([("Cache-Control", "private, max-age=60")], False),
    ([("Cache-Control", "max-age=60"), ("Set-Cookie", "id=1")], False),
    ([("Cache-Control", "max-age=60"), ("Vary", "*")], False),
    ([("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")], True),
    ([("Expires", "0")], False),  # already expired: stored, but never fresh
    ([("Cache-Control", "s-maxage=60, max-age=0")], True),
    ([("Last-Modified", "Thu, 01 Jan 2015 00:00:00 GMT")], False),  # no heuristics
])
def test_response_directives(upstream, headers, stored):
    upstream.set("/d", headers=headers)
    with Scalwsd(site(upstream)) as s:
        get(s, "/d")
        get(s, "/d")
        assert upstream.count("/d") == (1 if stored else 2)


def test_default_ttl_only_when_the_upstream_says_nothing(upstream):
    upstream.set("/gone", status=404)
    upstream.set("/gone-now", status=404, headers=[("Cache-Control", "max-age=0")])
    with Scalwsd(site(upstream)) as s:
        for path in ("/gone", "/gone", "/gone-now", "/gone-now"):
            assert get(s, path)[0] == 404
        assert upstream.count("/gone") == 1
        assert upstream.count("/gone-now") == 2


def test_authorization_needs_the_responses_permission(upstream):
    upstream.set("/private", headers=[("Cache-Control", "max-age=60")])
    upstream.set("/public", headers=[("Cache-Control", "public, max-age=60")])
    with Scalwsd(site(upstream)) as s:
        for path in ("/private", "/private", "/public", "/public"):
            get(s, path, "Authorization: Basic dTpw")
        assert upstream.count("/private") == 2
        assert upstream.count("/public") == 1


def test_no_cache_revalidates_every_time_and_a_304_refreshes(upstream):
    upstream.set("/nc", headers=[("Cache-Control", "no-cache, max-age=60"), ("ETag", '"e1"')],
                 not_modified_if='"e1"')
    with Scalwsd(site(upstream)) as s:
        assert get(s, "/nc")[2] == "body of /nc #1\n"
        status, fields, body = get(s, "/nc")
        assert (status, body) == (200, "body of /nc #1\n")  # the stored body, revalidated
        assert fields["cache-status"] == "scalws; fwd=stale; fwd-status=304; ttl=0"
        assert upstream.requests("/nc")[1][2]["if-none-match"] == '"e1"'
        assert upstream.count("/nc") == 2


def test_a_stale_entry_is_revalidated_and_a_304_makes_it_fresh(upstream):
    upstream.set("/s", headers=[("Cache-Control", "max-age=1"), ("ETag", '"s1"')],
                 not_modified_if='"s1"')
    with Scalwsd(site(upstream)) as s:
        get(s, "/s")
        time.sleep(2.1)
        upstream.set("/s", headers=[("Cache-Control", "max-age=60"), ("ETag", '"s1"')],
                     not_modified_if='"s1"')
        status, fields, body = get(s, "/s")
        assert (status, body) == (200, "body of /s #1\n")
        assert "fwd-status=304" in fields["cache-status"]
        assert fields["cache-control"] == "max-age=60"  # the 304's fields were stored
        status, fields, body = get(s, "/s")
        assert fields["cache-status"].startswith("scalws; hit")
        assert upstream.count("/s") == 2


def test_a_stale_entry_with_only_last_modified_is_revalidated_with_if_modified_since(upstream):
    modified = "Tue, 01 Dec 2026 10:00:00 GMT"
    upstream.set("/lm", headers=[("Cache-Control", "max-age=1"), ("Last-Modified", modified)],
                 not_modified_since=modified)
    with Scalwsd(site(upstream)) as s:
        assert get(s, "/lm")[2] == "body of /lm #1\n"
        time.sleep(2.1)
        status, fields, body = get(s, "/lm")
        assert (status, body) == (200, "body of /lm #1\n")  # the stored body, revalidated
        assert "fwd-status=304" in fields["cache-status"]
        revalidation = upstream.requests("/lm")[1][2]
        assert revalidation["if-modified-since"] == modified
        assert "if-none-match" not in revalidation
        assert upstream.count("/lm") == 2


def test_hits_over_http2(upstream):
    upstream.set("/h2", headers=[("Cache-Control", "max-age=60"), ("ETag", '"h"')])
    with Scalwsd(site(upstream)) as s:
        def h2(*args):
            out = subprocess.run(["curl", "-s", "-i", "--http2-prior-knowledge", "--max-time",
                                  "20", *args, s.url("/h2")], capture_output=True,
                                 timeout=30).stdout.decode("latin-1")
            head, _, body = out.partition("\r\n\r\n")
            return head.split("\r\n")[0], head.lower(), body
        line, head, body = h2()
        assert line.startswith("HTTP/2 200") and body == "body of /h2 #1\n"
        line, head, body = h2()
        assert line.startswith("HTTP/2 200") and "cache-status: scalws; hit" in head
        assert body == "body of /h2 #1\n"
        line, head, body = h2("-H", "Range: bytes=8-9")
        assert line.startswith("HTTP/2 206") and body == "/h"
        line, head, body = h2("-H", 'If-None-Match: "h"')
        assert line.startswith("HTTP/2 304") and body == ""
        assert upstream.count("/h2") == 1


def test_stale_while_revalidate_one_request_refreshes_the_others_get_the_stale_entry(upstream):
    upstream.set("/w", headers=[("Cache-Control", "max-age=1, stale-while-revalidate=60"),
                                ("ETag", '"w1"')], not_modified_if='"w1"')
    with Scalwsd(site(upstream, workers=2)) as s:
        get(s, "/w")
        time.sleep(2.1)
        # The revalidation takes 3 s at the upstream: meanwhile every other request is
        # answered at once from the stale entry.
        upstream.set("/w", headers=[("Cache-Control", "max-age=60"), ("ETag", '"w1"')],
                     not_modified_if='"w1"', delay=3.0)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            first = pool.submit(get, s, "/w")
            wait_until(lambda: upstream.count("/w") == 2, what="the revalidation upstream")
            others = list(pool.map(lambda _: get(s, "/w"), range(3)))
            assert not first.done()
            status, fields, body = first.result()
        assert (status, body) == (200, "body of /w #1\n")
        assert fields["cache-status"].startswith("scalws; fwd=stale; fwd-status=304")
        assert upstream.requests("/w")[1][2]["if-none-match"] == '"w1"'
        for status, fields, body in others:
            assert (status, body) == (200, "body of /w #1\n")
            assert fields["cache-status"].startswith("scalws; hit")
            assert "detail=stale-while-revalidate" in fields["cache-status"]
        assert get(s, "/w")[1]["cache-status"].startswith("scalws; hit; ttl=")  # refreshed
        assert upstream.count("/w") == 2


def test_stale_while_revalidate_keeps_answering_when_the_upstream_fails(upstream):
    upstream.set("/wf", headers=[("Cache-Control", "max-age=1, stale-while-revalidate=60")])
    with Scalwsd(site(upstream)) as s:
        get(s, "/wf")
        time.sleep(2.1)
        upstream.set("/wf", status=503)
        status, fields, body = get(s, "/wf")
        assert (status, body) == (200, "body of /wf #1\n")
        assert "fwd-status=503" in fields["cache-status"]
        assert upstream.count("/wf") == 2


def test_request_directives(upstream):
    upstream.set("/r", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream)) as s:
        get(s, "/r")
        get(s, "/r", "Cache-Control: no-cache")  # asks for a fresh answer
        assert upstream.count("/r") == 2
        get(s, "/r", "Cache-Control: max-age=0")
        assert upstream.count("/r") == 3
        assert get(s, "/uncached", "Cache-Control: only-if-cached")[0] == 504
        assert upstream.count("/uncached") == 0


def test_vary_keeps_one_entry_per_normalised_accept_encoding(upstream):
    upstream.set("/v", headers=[("Cache-Control", "max-age=60"), ("Vary", "Accept-Encoding")])
    with Scalwsd(site(upstream)) as s:
        assert get(s, "/v", "Accept-Encoding: gzip, br")[2] == "body of /v #1\n"
        assert get(s, "/v", "Accept-Encoding: br;q=1, GZIP")[2] == "body of /v #1\n"
        status, fields, body = get(s, "/v", "Accept-Encoding: gzip")
        assert body == "body of /v #2\n"
        assert fields["cache-status"] == "scalws; fwd=vary-miss; stored"
        assert get(s, "/v", "Accept-Encoding: x-gzip, deflate;q=0")[2] == "body of /v #2\n"
        assert get(s, "/v", "Accept-Encoding: br, gzip")[2] == "body of /v #1\n"
        assert upstream.count("/v") == 2


def test_stale_if_error_with_the_upstream_stopped(upstream):
    upstream.set("/e", headers=[("Cache-Control", "max-age=1")])
    upstream.set("/strict", headers=[("Cache-Control", "max-age=1, must-revalidate")])
    with Scalwsd(site(upstream, stale_if_error="1d")) as s:
        get(s, "/e")
        get(s, "/strict")
        upstream.stop()
        time.sleep(2.1)
        status, fields, body = get(s, "/e")
        assert (status, body) == (200, "body of /e #1\n")
        assert "fwd=stale; fwd-status=502" in fields["cache-status"]
        assert "detail=stale-if-error" in fields["cache-status"]
        assert get(s, "/strict")[0] == 502  # must-revalidate: never a stale answer


def test_concurrent_misses_send_one_request_upstream(upstream):
    upstream.set("/slow", headers=[("Cache-Control", "max-age=60")], delay=0.6)
    with Scalwsd(site(upstream, workers=2)) as s:
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            results = list(pool.map(lambda _: get(s, "/slow"), range(12)))
        assert [r[2] for r in results] == ["body of /slow #1\n"] * 12
        assert upstream.count("/slow") == 1
        assert any("collapsed" in r[1]["cache-status"] for r in results)


def test_a_fill_that_outlives_lock_timeout_lets_waiters_go_upstream(upstream):
    upstream.set("/slower", headers=[("Cache-Control", "max-age=60")], delay=1.5)
    with Scalwsd(site(upstream, lock_timeout="200ms")) as s:
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda _: get(s, "/slower"), range(3)))
        assert all(r[0] == 200 for r in results)
        assert upstream.count("/slower") == 3


@pytest.mark.parametrize("mode", ["multi", "single"])
def test_an_entry_filled_by_one_worker_is_a_hit_in_the_others(upstream, mode):
    upstream.set("/shared", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream, workers=2, mode=mode)) as s:
        # Twenty new connections: with two workers, all landing on one is a 2^-19 chance.
        for _ in range(20):
            assert get(s, "/shared")[2] == "body of /shared #1\n"
        assert upstream.count("/shared") == 1


def test_two_servers_never_see_each_others_entries(upstream):
    upstream.set("/own", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream)) as a, Scalwsd(site(upstream)) as b:
        assert get(a, "/own")[2] == "body of /own #1\n"
        assert get(b, "/own")[2] == "body of /own #2\n"
        assert get(a, "/own")[2] == "body of /own #1\n"
        assert upstream.count("/own") == 2


def test_unsafe_methods_invalidate(upstream):
    upstream.set("/item", headers=[("Cache-Control", "max-age=60")])
    upstream.set("/list", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream)) as s:
        get(s, "/item")
        get(s, "/list")
        upstream.set("/item", status=303, headers=[("Location", "/list")])
        status, fields, _ = get(s, "/item", method="POST")
        assert status == 303
        assert fields["cache-status"] == "scalws; fwd=method"
        upstream.set("/item", headers=[("Cache-Control", "max-age=60")])
        assert get(s, "/item")[2] == "body of /item #3\n"
        assert get(s, "/list")[2] == "body of /list #2\n"  # named by Location: dropped too


def test_purge(upstream):
    upstream.set("/p", headers=[("Cache-Control", "max-age=60")])
    upstream.set("/q", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream, workers=2)) as s:
        get(s, "/p")
        get(s, "/q")
        assert get(s, "/purge-denied", method="PURGE")[0] == 403
        status, _, body = get(s, "/p", method="PURGE")
        assert (status, body) == (200, "purged 1\n")
        assert get(s, "/p")[2] == "body of /p #2\n"
        assert get(s, "/q")[2] == "body of /q #1\n"  # untouched
        assert get(s, "/p", method="PURGE")[2] == "purged 1\n"
        assert get(s, "/p", method="PURGE")[2] == "purged 0\n"


def test_purge_under_load(upstream):
    upstream.set("/hot", headers=[("Cache-Control", "max-age=60")])
    with Scalwsd(site(upstream, workers=2)) as s:
        stop = time.monotonic() + 2.0

        def load(_):
            bodies = set()
            while time.monotonic() < stop:
                status, _, body = get(s, "/hot")
                assert status == 200
                bodies.add(body)
            return bodies

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(load, i) for i in range(3)]
            purges = 0
            while time.monotonic() < stop - 0.2:
                assert get(s, "/hot", method="PURGE")[0] == 200
                purges += 1
                time.sleep(0.2)
            seen = set().union(*[f.result() for f in futures])
        assert all(b.startswith("body of /hot #") for b in seen)
        assert 1 < upstream.count("/hot") <= purges + 1


def test_limits_and_eviction(upstream):
    upstream.set("/big", headers=[("Cache-Control", "max-age=60")], body="x" * 300_000)
    for i in range(40):
        upstream.set("/e%d" % i, headers=[("Cache-Control", "max-age=60")], body="y" * 60_000)
    with Scalwsd(site(upstream, memory="1m", max_entry="256k")) as s:
        assert len(get(s, "/big")[2]) == 300_000  # over max_entry: through, not stored
        assert get(s, "/big")[1]["cache-status"] == "scalws; fwd=uri-miss"
        assert upstream.count("/big") == 2
        for i in range(40):
            get(s, "/e%d" % i)
        get(s, "/e39")
        assert upstream.count("/e39") == 1  # the last one stayed
        get(s, "/e0")
        assert upstream.count("/e0") == 2  # the first one made room for the later ones


def test_the_disk_tier_survives_a_restart_and_drops_a_damaged_file(upstream, tmp_path):
    upstream.set("/disk", headers=[("Cache-Control", "max-age=600")], body="z" * 5000)
    extra = 'disk = "%s"\nmax_disk = "10m"' % (tmp_path / "cache")
    config = site(upstream, extra=extra)
    with Scalwsd(config) as s:
        get(s, "/disk")
        wait_until(lambda: glob.glob(str(tmp_path / "cache" / "??" / "*")), what="a disk file")
    with Scalwsd(config) as s:  # a new memory tier: the hit comes from the disk
        status, fields, body = get(s, "/disk")
        assert (status, len(body)) == (200, 5000)
        assert fields["cache-status"].startswith("scalws; hit")
        assert upstream.count("/disk") == 1
    files = glob.glob(str(tmp_path / "cache" / "??" / "*"))
    assert len(files) == 1
    with open(files[0], "r+b") as f:
        f.seek(-100, os.SEEK_END)
        f.write(b"damaged!")
    with Scalwsd(config) as s:
        status, fields, body = get(s, "/disk")
        assert (status, body) == (200, "z" * 5000)  # the upstream's, not the damaged file
        assert upstream.count("/disk") == 2
        assert "damaged disk entry was dropped" in s.read_log()


def test_unsafe_methods_invalidate_the_disk_tier_too(upstream, tmp_path):
    upstream.set("/item", headers=[("Cache-Control", "max-age=600")])
    upstream.set("/list", headers=[("Cache-Control", "max-age=600")])
    config = site(upstream, extra='disk = "%s"' % (tmp_path / "cache"))
    with Scalwsd(config) as s:
        get(s, "/item")
        get(s, "/list")
        wait_until(lambda: len(glob.glob(str(tmp_path / "cache" / "??" / "*"))) == 2,
                   what="two disk files")
        upstream.set("/item", status=303, headers=[("Location", "/list")])
        assert get(s, "/item", method="POST")[0] == 303
        wait_until(lambda: not glob.glob(str(tmp_path / "cache" / "??" / "*")),
                   what="both disk files dropped")
    upstream.set("/item", headers=[("Cache-Control", "max-age=600")])
    with Scalwsd(config) as s:  # a new memory tier: nothing left on disk to answer from
        assert get(s, "/list")[2] == "body of /list #2\n"
        assert get(s, "/item")[2] == "body of /item #3\n"


def test_a_worker_killed_mid_fill_leaves_no_half_entry(upstream):
    def slow_body(request, conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 20\r\n\r\n"
                     b"first half")
        time.sleep(3)
        conn.close_after = True
        return b""

    with Scalwsd(site(upstream)) as s:
        upstream.raw.script = slow_body
        worker = s.workers()[0]
        proc = subprocess.Popen(["curl", "-s", "--max-time", "10", s.url("/half")],
                                stdout=subprocess.PIPE)
        wait_until(lambda: upstream.raw.requests, what="the fill's request upstream")
        time.sleep(0.3)
        os.kill(worker, signal.SIGKILL)
        proc.communicate(timeout=15)
        wait_until(lambda: s.workers() and s.workers()[0] != worker, what="a new worker")
        upstream.raw.script = upstream._script
        upstream.set("/half", headers=[("Cache-Control", "max-age=60")], body="whole answer\n")
        status, fields, body = get(s, "/half")
        assert (status, body) == (200, "whole answer\n")
        assert "hit" not in fields["cache-status"]
        s.check_log = lambda: None  # the kill is logged as an error on purpose
