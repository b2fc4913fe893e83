"""An upstream for the response cache's tests whose answers each test sets per path:
status, header fields, body, a delay before answering, or no answer at all (the
connection closed). Every request is recorded with its fields, so a test counts what
reached the upstream and sees the validators the cache sent.
"""
import threading
import time
from email.utils import parsedate_to_datetime

from upstreams import RawUpstream, answer


class CacheUpstream:
    def __init__(self):
        self.lock = threading.Lock()
        self.routes = {}  # path -> dict(status, headers, body, delay, fail)
        self.seen = []    # (method, path, {field: value})
        self.version = 0
        self.raw = RawUpstream(self._script)

    @property
    def address(self):
        return self.raw.address

    def set(self, path, status=200, headers=(), body=None, delay=0.0, fail=False,
            not_modified_if=None, not_modified_since=None):
        """`body` may hold "{n}": replaced by how many times the path was asked so far, so a
        test tells a stored answer from a fresh one. `not_modified_if`: an ETag; a request
        with If-None-Match naming it gets 304 (with `headers`). `not_modified_since`: a
        Last-Modified date; a request whose If-Modified-Since is that date or later (and that
        has no If-None-Match) gets 304."""
        with self.lock:
            self.routes[path] = dict(status=status, headers=list(headers),
                                     body=body if body is not None else "body of %s #{n}\n" % path,
                                     delay=delay, fail=fail, etag=not_modified_if,
                                     since=not_modified_since)

    def count(self, path=None, method=None):
        with self.lock:
            return len([s for s in self.seen if (path is None or s[1] == path)
                        and (method is None or s[0] == method)])

    def requests(self, path):
        with self.lock:
            return [s for s in self.seen if s[1] == path]

    def _script(self, request, conn):
        path = request.target.split("?")[0]
        fields = {name: value for name, value in request.headers}
        with self.lock:
            self.seen.append((request.method, path, fields))
            n = len([s for s in self.seen if s[1] == path])
            route = self.routes.get(path, dict(status=404, headers=[], body="none\n",
                                               delay=0.0, fail=False, etag=None, since=None))
        if route["delay"]:
            time.sleep(route["delay"])
        if route["fail"]:
            conn.close_after = True
            return b""
        if (route["etag"] and fields.get("if-none-match") == route["etag"]) or (
                route["since"] and "if-none-match" not in fields and _not_later(
                    route["since"], fields.get("if-modified-since"))):
            head = "HTTP/1.1 304 Not Modified\r\n"
            for name, value in route["headers"]:
                head += "%s: %s\r\n" % (name, value)
            return (head + "\r\n").encode()
        body = route["body"].replace("{n}", str(n))
        whole = answer(route["status"], body, route["headers"])
        if request.method == "HEAD":
            return whole[:len(whole) - len(body.encode())]  # the head alone
        return whole

    def stop(self):
        self.raw.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def _not_later(last_modified, since):
    """True when `since` (an If-Modified-Since value) is at or after `last_modified`."""
    if not since:
        return False
    try:
        return parsedate_to_datetime(since) >= parsedate_to_datetime(last_modified)
    except (TypeError, ValueError):
        return False
