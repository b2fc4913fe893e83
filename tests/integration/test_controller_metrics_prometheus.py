"""The controller's Prometheus endpoint (`--metrics-listen`, off by default): the
text parses as the 0.0.4 exposition format (a small strict parser below), counters are
monotonic across scrapes even when a worker is killed in between, histogram buckets are
cumulative in increasing `le` order with +Inf == _count, and labels are only instance,
class, action and le (and upstream and server on the proxy's series)."""
import http.client
import math
import os
import re
import signal
import socket
import time

from controller_harness import Controller, http_get, site_config, unique_name, wait_until
from harness import free_port

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r"^(%s)(?:\{(.*)\})? (\S+)$" % NAME)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
# upstream and server: the proxy's per-server series (bounded by the configuration).
ALLOWED_LABELS = {"instance", "class", "action", "le", "upstream", "server"}


def parse(text):
    """{family: {"type", "help", "samples": [(name, labels, value)]}}; raises on anything
    the text format does not allow or ScalWS promised not to do."""
    assert text.endswith("\n"), "the exposition ends with a newline"
    families = {}
    current = None
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert name not in families or "help" not in families[name], "two HELP: " + name
            families.setdefault(name, {"samples": []})["help"] = help_text
            assert help_text, name
            continue
        if line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            assert kind in ("counter", "gauge", "histogram"), line
            family = families.setdefault(name, {"samples": []})
            assert "type" not in family, "two TYPE lines for " + name
            assert not family["samples"], "TYPE after samples of " + name
            family["type"] = kind
            current = name
            continue
        assert not line.startswith("#") and line, "unexpected line %r" % line
        m = SAMPLE.match(line)
        assert m, "not a sample: %r" % line
        name, label_text, value = m.groups()
        labels = {}
        rest = label_text or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, "bad labels in %r" % line
            assert lm.group(1) not in labels, "label twice in %r" % line
            labels[lm.group(1)] = lm.group(2)
            rest = rest[lm.end():]
        assert set(labels) <= ALLOWED_LABELS, line
        assert "instance" in labels, line
        number = math.inf if value == "+Inf" else float(value)
        kind = families[current]["type"]
        suffixes = ("_bucket", "_sum", "_count") if kind == "histogram" else ("",)
        assert any(name == current + s for s in suffixes), "%s outside family %s" % (name, current)
        if kind == "counter":
            assert name.endswith("_total") and number >= 0, line
        families[current]["samples"].append((name, labels, number))
    for name, f in families.items():
        assert "type" in f and "help" in f, name
    return families


def scrape(port, path="/metrics", method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode()
    finally:
        conn.close()


def series(families):
    """{(name, sorted labels): value} of every counter and histogram sample."""
    out = {}
    for f in families.values():
        if f["type"] == "gauge":
            continue
        for name, labels, value in f["samples"]:
            out[(name, tuple(sorted(labels.items())))] = value
    return out


def check_histograms(families, instance):
    h = families["scalws_request_duration_seconds"]
    mine = [(n, l, v) for n, l, v in h["samples"] if l["instance"] == instance]
    buckets = [(float(l["le"]) if l["le"] != "+Inf" else math.inf, v)
               for n, l, v in mine if n.endswith("_bucket")]
    assert buckets and buckets[-1][0] == math.inf
    les = [le for le, _ in buckets]
    assert les == sorted(les) and len(set(les)) == len(les), les
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), counts  # cumulative
    [count] = [v for n, l, v in mine if n.endswith("_count")]
    [total] = [v for n, l, v in mine if n.endswith("_sum")]
    assert buckets[-1][1] == count and total >= 0
    requests = sum(v for n, l, v in families["scalws_requests_total"]["samples"]
                   if l["instance"] == instance)
    assert count == requests
    return count


def test_prometheus_text_parses_and_counters_only_grow_across_a_worker_kill():
    port = free_port()
    mport = free_port()
    name = unique_name("prom")
    with Controller(extra_args=["--metrics-listen", "127.0.0.1:%d" % mport]) as c:
        c.add(name, site_config(port), "--cpus", "2")
        c.ctl("instance", "start", name)
        for _ in range(25):
            assert http_get(port, "/")[0] == 200
        for _ in range(5):
            assert http_get(port, "/health")[0] == 200

        def answered(n):
            status, _, text = scrape(mport)
            assert status == 200
            fams = parse(text)
            return fams if sum(v for _, l, v in fams["scalws_requests_total"]["samples"]
                               if l["instance"] == name) >= n else None
        first = wait_until(lambda: answered(30), 10, interval=0.1, what="30 requests scraped")
        status, headers, _ = scrape(mport)
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert headers["Connection"] == "close"
        assert check_histograms(first, name) == 30
        classes = {l["class"]: v for _, l, v in first["scalws_requests_total"]["samples"]
                   if l["instance"] == name}
        assert classes == {"1xx": 0, "2xx": 30, "3xx": 0, "4xx": 0, "5xx": 0}
        actions = {l["action"]: v for _, l, v in first["scalws_action_requests_total"]["samples"]
                   if l["instance"] == name}
        assert actions["respond"] == 30 and sum(actions.values()) == 30
        procs = [v for _, l, v in first["scalws_worker_processes"]["samples"]
                 if l["instance"] == name]
        assert procs == [2]
        assert first["scalws_cpu_seconds_total"]["type"] == "counter"
        assert first["scalws_resident_memory_bytes"]["type"] == "gauge"

        victim = c.ready_pids(name)[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(c.ready_pids(name)) == 2 and victim not in c.ready_pids(name),
                   5, what="the replacement")
        for _ in range(10):
            assert http_get(port, "/")[0] == 200
        second = wait_until(lambda: answered(40), 10, interval=0.1, what="40 requests scraped")
        before, after = series(first), series(second)
        for key, value in before.items():
            assert key in after, key
            assert after[key] >= value, (key, value, after[key])
        assert check_histograms(second, name) == 40

        # Only /metrics, only GET and HEAD.
        assert scrape(mport, "/")[0] == 404
        assert scrape(mport, "/metrics", "POST")[0] == 405
        status, _, body = scrape(mport, "/metrics", "HEAD")
        assert status == 200 and body == ""
        # A client that sends nothing is dropped after the read deadline, not kept.
        idle = socket.create_connection(("127.0.0.1", mport))
        idle.settimeout(10)
        t0 = time.monotonic()
        assert idle.recv(1) == b""
        assert time.monotonic() - t0 < 8
        idle.close()


def test_the_endpoint_is_off_by_default_and_a_bad_address_refuses_to_start():
    mport = free_port()
    with Controller():
        try:
            socket.create_connection(("127.0.0.1", mport), timeout=1).close()
            raise AssertionError("something listens on the metrics port")
        except ConnectionRefusedError:
            pass
    bad = Controller(extra_args=["--metrics-listen", "localhost:9145"])
    bad.start(expect_ready=False)
    assert bad.proc.wait(10) == 2
    bad.log.close()
    assert "--metrics-listen" in bad.read_log()
