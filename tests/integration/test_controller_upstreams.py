"""The proxy's upstreams as the controller shows them: `instance show` and `instance
metrics` carry each [upstream]'s servers as the live workers see them (summed over them),
and the Prometheus endpoint has per-server series labelled by upstream and server whose
counters keep the counts of a worker that was killed."""
import json
import os
import signal

from controller_harness import Controller, http_get, unique_name, wait_until
from harness import free_port
from test_controller_metrics_prometheus import parse, scrape
from upstreams import RawUpstream, answer


def config(port, live, dead):
    return """[[listen]]
address = "127.0.0.1:%d"
[[route]]
proxy = { upstream = "app" }
[upstream.app]
servers = ["127.0.0.1:%d", "127.0.0.1:%d"]
""" % (port, live, dead)


def server(upstreams, port):
    [app] = [u for u in upstreams if u["name"] == "app"]
    [s] = [s for s in app["servers"] if s["address"].startswith("127.0.0.1:%d" % port)]
    return s


def prometheus_requests(mport, name, port):
    status, _, text = scrape(mport)
    assert status == 200
    families = parse(text)
    values = [v for _, l, v in families["scalws_upstream_server_requests_total"]["samples"]
              if l["instance"] == name and l["upstream"] == "app"
              and l["server"].startswith("127.0.0.1:%d" % port)]
    assert len(values) <= 1
    return (values[0] if values else 0), families


def test_upstreams_in_show_metrics_and_prometheus_across_a_worker_kill():
    port, mport, dead = free_port(), free_port(), free_port()
    name = unique_name("ups")
    with RawUpstream(lambda request, conn: answer(200, "up")) as up, \
            Controller(extra_args=["--metrics-listen", "127.0.0.1:%d" % mport]) as c:
        c.add(name, config(port, up.port, dead), "--cpus", "2")
        c.ctl("instance", "start", name)
        for _ in range(20):
            assert http_get(port, "/")[0] == 200
        up.wait_requests(20)

        def shown(n):
            ups = c.show(name)["upstreams"]
            return ups if ups and server(ups, up.port)["requests"] >= n else None
        ups = wait_until(lambda: shown(20), 10, interval=0.1, what="20 upstream answers shown")
        live = server(ups, up.port)
        assert live["requests"] == len(up.requests) == 20
        assert live["responses_5xx"] == 0 and live["loops_down"] == 0 and live["loops"] >= 1
        # Nothing listens on the other server: tried, failed to connect, the request retried.
        assert server(ups, dead)["connect_failures"] >= 1
        assert server(ups, dead)["requests"] == 0

        text = c.ctl("instance", "show", name).stdout
        assert "upstreams:" in text and "127.0.0.1:%d" % up.port in text, text

        metrics = c.ctl_json("instance", "metrics", name)
        assert server(metrics["upstreams"], up.port)["requests"] == 20

        first, families = prometheus_requests(mport, name, up.port)
        assert first == 20
        up_gauge = {l["server"]: v for _, l, v in families["scalws_upstream_server_up"]["samples"]
                    if l["instance"] == name}
        assert up_gauge["127.0.0.1:%d" % up.port] == 1
        assert families["scalws_upstream_server_connect_failures_total"]["type"] == "counter"

        # A worker killed: its counts stay in the Prometheus totals, not in `instance show`.
        victim = c.ready_pids(name)[0]
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(c.ready_pids(name)) == 2 and victim not in c.ready_pids(name),
                   10, what="the replacement")
        for _ in range(5):
            assert http_get(port, "/")[0] == 200
        up.wait_requests(25)
        total = wait_until(lambda: (lambda v: v if v >= 25 else None)(
            prometheus_requests(mport, name, up.port)[0]), 10, interval=0.1,
            what="25 upstream answers in Prometheus")
        assert total == 25
        shown_now = server(c.show(name)["upstreams"], up.port)["requests"]
        assert shown_now <= 25
        assert json.dumps(c.show(name)["upstreams"])  # still well-formed after the kill
