"""The controller's dashboard (`--dashboard-listen`): the page loaded in headless Chromium
shows every instance with its request rate and charts; the JSON API tells what
`scalwsctl --json` tells; a dashboard on a non-loopback address needs credentials (and
the controller refuses to start without them); the page stays small and cheap to serve.

Chromium and the controller run inside a network namespace with only loopback (made with
`unshare --net`, entered with `nsenter`), so the browser can reach nothing but the
controller and its instances. Screenshots are saved in the test's tmp dir."""
import base64
import html.parser
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from controller_harness import Controller, unique_name, wait_until
from harness import free_port

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (unshare --net)")


class NetNs:
    """A network namespace with only loopback up, held by a sleeping process."""

    def __init__(self):
        self.holder = subprocess.Popen(
            ["unshare", "--net", "sh", "-c", "ip link set lo up && echo up && exec sleep 3600"],
            stdout=subprocess.PIPE)
        assert self.holder.stdout.readline() == b"up\n"
        self.enter = ["nsenter", "--net=/proc/%d/ns/net" % self.holder.pid, "--"]

    def run(self, args, timeout=60, check=True):
        p = subprocess.run(self.enter + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        if check:
            assert p.returncode == 0, "%r -> %d: %s" % (args, p.returncode, p.stderr[-2000:])
        return p

    def close(self):
        self.holder.kill()
        self.holder.wait()


@pytest.fixture
def netns():
    ns = NetNs()
    yield ns
    ns.close()


def instance_config(port):
    """/ answers 200, /missing 404: both rates show."""
    return ('[[listen]]\naddress = "127.0.0.1:%d"\n'
            '[[route]]\nmatch = { exact = "/missing" }\nrespond = { status = 404, body = "no\\n" }\n'
            '[[route]]\nrespond = { body = "hello\\n" }\n' % port)


def http(ns, url, *curl_args):
    """(status, headers text, body) of one request with curl inside the namespace."""
    p = ns.run(["curl", "-s", "-S", "-D", "-", "--max-time", "20"] + list(curl_args) + [url])
    raw = p.stdout.decode("utf-8", "replace")
    head, _, body = raw.partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), head, body


def api(ns, port, path):
    status, _, body = http(ns, "http://127.0.0.1:%d%s" % (port, path))
    assert status == 200, "%s -> %d %s" % (path, status, body)
    return json.loads(body)


def curl_codes(urls):
    """A curl command fetching each URL in turn and printing each status code on a line."""
    args = ["curl", "-s", "-w", "%{http_code}\\n"]
    for url in urls:
        args += ["-o", "/dev/null", url]
    return args


class Traffic:
    """curl inside the namespace, in a thread, until stop(): batches of requests to each
    (port, path); counts what was sent to each port."""

    def __init__(self, ns, targets):
        self.ns = ns
        self.targets = targets  # [(port, path, per batch)]
        self.sent = {port: 0 for port, _, _ in targets}
        self.failures = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            for port, path, n in self.targets:
                url = "http://127.0.0.1:%d%s" % (port, path)
                p = self.ns.run(curl_codes([url] * n), check=False)
                codes = p.stdout.decode().split()
                self.sent[port] += len(codes)
                self.failures += [c for c in codes if c not in ("200", "404")]
            time.sleep(0.1)

    def stop(self):
        self._stop.set()
        self._thread.join(30)


class DomScan(html.parser.HTMLParser):
    """The instance cards, their charts' point counts and the page's text."""

    def __init__(self):
        super().__init__()
        self.instances = {}  # name -> {"rps": float, "points": {chart: n}}
        self.current = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article" and "instance" in a.get("class", "").split():
            self.current = self.instances.setdefault(
                a["data-name"], {"rps": float(a.get("data-rps", "0")), "points": {}})
        if tag == "canvas" and self.current is not None:
            self.current["points"][a.get("data-chart")] = int(a.get("data-points", "0"))

    def handle_data(self, data):
        self.text.append(data)


def chromium(ns, url, tmp, *args):
    assert CHROMIUM, "chromium is not installed (deploy/install-deps.sh)"
    p = ns.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--user-data-dir=%s" % os.path.join(tmp, "chromium-profile"),
                "--virtual-time-budget=8000"] + list(args) + [url], timeout=180)
    return p.stdout.decode("utf-8", "replace")


def series_have_traffic(ns, port, names):
    for name in names:
        s = api(ns, port, "/api/v1/instances/%s/series?minutes=60" % name)
        if not any(v > 0 for v in s["requests_per_s"]):
            return False
    return True


def test_chromium_shows_both_instances_and_the_api_tells_what_scalwsctl_tells(netns, tmp_path):
    dport = free_port()
    a, b = unique_name("dasha"), unique_name("dashb")
    pa, pb = free_port(), free_port()
    with Controller(extra_args=["--dashboard-listen", "127.0.0.1:%d" % dport],
                    wrapper=netns.enter) as c:
        c.add(a, instance_config(pa), "--cpus", "1")
        c.add(b, instance_config(pb), "--cpus", "1")
        c.ctl("instance", "start", a)
        c.ctl("instance", "start", b)
        traffic = Traffic(netns, [(pa, "/", 40), (pb, "/", 20), (pb, "/missing", 10)])
        try:
            # The charts read the 10 s rollups: wait for a bucket with traffic in it.
            wait_until(lambda: series_have_traffic(netns, dport, [a, b]), timeout=60,
                       interval=1, what="a 10 s rollup with traffic for both instances")
            dom = chromium(netns, "http://127.0.0.1:%d/" % dport, str(tmp_path), "--dump-dom")
            shot = tmp_path / "dashboard.png"
            chromium(netns, "http://127.0.0.1:%d/" % dport, str(tmp_path),
                     "--window-size=1280,1600", "--hide-scrollbars", "--screenshot=%s" % shot)
            phone = tmp_path / "dashboard-phone.png"
            chromium(netns, "http://127.0.0.1:%d/" % dport, str(tmp_path),
                     "--window-size=390,2400", "--hide-scrollbars", "--screenshot=%s" % phone)
        finally:
            traffic.stop()
        assert not traffic.failures, traffic.failures[:5]
        print("screenshots: %s %s" % (shot, phone))
        for png in (shot, phone):
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        scan = DomScan()
        scan.feed(dom)
        assert set(scan.instances) == {a, b}, dom[:3000]
        for name in (a, b):
            card = scan.instances[name]
            assert card["rps"] > 0, (name, card)
            assert set(card["points"]) == {"rps", "err", "p99", "cpu", "rss"}, card
            assert card["points"]["rps"] >= 1, card
        text = " ".join(scan.text)
        assert "updated " in text and "cannot reach" not in text
        assert "instance.added" in text  # the events table

        # With the traffic stopped and every worker's figures in, the API and scalwsctl
        # agree, and count what was sent.
        def settled():
            w = [c.ctl_json("instance", "metrics", n, "--since", "5m")["window"]["requests"]
                 for n in (a, b)]
            return w == [traffic.sent[pa], traffic.sent[pb]]
        wait_until(settled, timeout=20, interval=0.5, what="every request counted")
        for name in (a, b):
            mine = api(netns, dport, "/api/v1/instances/%s/metrics?since_ms=300000" % name)
            theirs = c.ctl_json("instance", "metrics", name, "--since", "5m")
            for key in ("requests", "by_class", "by_action", "bytes_out", "latency_us"):
                assert mine["window"][key] == theirs["window"][key], key
        assert api(netns, dport, "/api/v1/instances/%s/metrics?since_ms=300000" % b)[
            "window"]["by_class"]["4xx"] == traffic.sent[pb] // 3

        overview = api(netns, dport, "/api/v1/overview")
        listed = {i["name"]: i for i in c.ctl_json("instance", "list")["instances"]}
        assert [i["name"] for i in overview["instances"]] == sorted(listed)
        for inst in overview["instances"]:
            for key, value in listed[inst["name"]].items():
                assert inst[key] == value, (inst["name"], key)
            show = c.show(inst["name"])
            assert [p["pid"] for p in inst["processes"]] == [p["pid"] for p in show["processes"]]
            assert inst["workers"] == 1 and inst["restarts"] == 0
        assert overview["host"]["cpus"] == c.ctl_json("cpu", "list")["cpus"]
        status = c.ctl_json("status")
        assert overview["controller"]["version"] == status["version"]
        assert overview["controller"]["pid"] == status["pid"] == c.pid
        assert overview["controller"]["started_ms"] == status["started_ms"]
        events = api(netns, dport, "/api/v1/events?limit=50")["events"]
        logs = c.ctl_json("instance", "logs", b, "--limit", "50")["events"]
        mine = [e for e in events if e["instance"] == b]
        assert mine and all(e in [dict(l, instance=b) for l in logs] for e in mine)
        assert api(netns, dport, "/api/v1/instances/%s" % a)["name"] == a


def test_the_answers_are_read_only_and_locked_down(netns):
    dport = free_port()
    with Controller(extra_args=["--dashboard-listen", "127.0.0.1:%d" % dport],
                    wrapper=netns.enter):
        base = "http://127.0.0.1:%d" % dport
        for path in ("/", "/dashboard.js", "/api/v1/overview", "/nope"):
            status, head, _ = http(netns, base + path)
            assert status == (404 if path == "/nope" else 200), path
            low = head.lower()
            assert "content-security-policy: default-src 'none';" in low, path
            assert "x-content-type-options: nosniff" in low, path
        _, head, _ = http(netns, base + "/api/v1/overview")
        assert "cache-control: no-store" in head.lower()
        assert "content-type: application/json" in head.lower()
        for method in ("POST", "PUT", "DELETE"):
            status, head, _ = http(netns, base + "/api/v1/overview", "-X", method)
            assert status == 405 and "allow: get, head" in head.lower(), method
        status, _, body = http(netns, base + "/api/v1/instances/nope")
        assert status == 404 and json.loads(body)["error"]["code"] == "not_found"


def write_users(path, user, password):
    hashed = subprocess.run(["openssl", "passwd", "-6", password], check=True,
                            stdout=subprocess.PIPE).stdout.decode().strip()
    with open(path, "w") as f:
        f.write("# dashboard users\n%s:%s\n" % (user, hashed))


def test_a_dashboard_beyond_loopback_needs_credentials(netns, tmp_path):
    dport = free_port()
    listen = "0.0.0.0:%d" % dport
    # Refused at start-up without credentials: a usage error, nothing listens.
    c = Controller(extra_args=["--dashboard-listen", listen], wrapper=netns.enter)
    c.start(expect_ready=False)
    assert c.proc.wait(30) == 2
    assert "is not a loopback address: it needs --dashboard-auth" in c.read_log()
    # A plain-text password file is refused whole, naming the line.
    plain = tmp_path / "plain"
    plain.write_text("ann:s3cret\n")
    c = Controller(extra_args=["--dashboard-listen", listen, "--dashboard-auth", str(plain)],
                   wrapper=netns.enter)
    c.start(expect_ready=False)
    assert c.proc.wait(30) != 0
    assert "%s:1:5:" % plain in c.read_log()

    users = tmp_path / "users"
    write_users(str(users), "ann", "s3cret")
    with Controller(extra_args=["--dashboard-listen", listen, "--dashboard-auth", str(users)],
                    wrapper=netns.enter):
        base = "http://127.0.0.1:%d" % dport
        for path in ("/", "/api/v1/overview"):
            status, head, _ = http(netns, base + path)
            assert status == 401, path
            assert 'www-authenticate: basic realm="scalws"' in head.lower()
            assert http(netns, base + path, "-u", "ann:wrong")[0] == 401
            assert http(netns, base + path, "-u", "bob:s3cret")[0] == 401
            assert http(netns, base + path, "-u", "ann:s3cret")[0] == 200
        basic = base64.b64encode(b"ann:s3cret").decode()
        status, _, body = http(netns, base + "/api/v1/overview",
                               "-H", "Authorization: Basic " + basic)
        assert status == 200 and json.loads(body)["api_version"] == 1


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_the_page_is_small_and_cheap_to_serve(netns):
    dport = free_port()
    names = [unique_name("dcpu"), unique_name("dcpu")]
    with Controller(extra_args=["--dashboard-listen", "127.0.0.1:%d" % dport],
                    wrapper=netns.enter) as c:
        for name in names:
            c.add(name, instance_config(free_port()))
            c.ctl("instance", "start", name)
        base = "http://127.0.0.1:%d" % dport
        page = sum(len(http(netns, base + p)[2].encode()) for p in
                   ("/", "/dashboard.css", "/dashboard.js"))
        assert page < 64 * 1024, page
        # What one refresh of the page costs the controller: the page, its parts, the
        # overview and each instance's series, each on its own connection (one curl run).
        urls = [base + p for p in ["/", "/dashboard.css", "/dashboard.js", "/api/v1/overview"] +
                ["/api/v1/instances/%s/series?minutes=60" % n for n in names]]
        loads = 40
        before = cpu_ticks(c.pid)
        for _ in range(loads):
            p = netns.run(curl_codes(urls))
            assert p.stdout.decode().split() == ["200"] * len(urls)
        used_ms = (cpu_ticks(c.pid) - before) * 1000 / os.sysconf("SC_CLK_TCK")
        print("controller CPU: %.1f ms for %d page loads" % (used_ms, loads))
        # Generous: a load took about 1.5 ms of the controller's CPU when this was written.
        assert used_ms / loads < 25, used_ms


def test_a_proxying_instance_shows_its_upstream_servers(netns, tmp_path):
    dport, port, dead = free_port(), free_port(), free_port()
    name = unique_name("dprx")
    config = ('[[listen]]\naddress = "127.0.0.1:%d"\n'
              '[[route]]\nmatch = { prefix = "/api/" }\nproxy = { upstream = "api" }\n'
              '[upstream.api]\nservers = ["127.0.0.1:%d"]\nmax_fails = 1\nretries = 0\n'
              % (port, dead))
    with Controller(extra_args=["--dashboard-listen", "127.0.0.1:%d" % dport],
                    wrapper=netns.enter) as c:
        c.add(name, config)
        c.ctl("instance", "start", name)
        codes = netns.run(curl_codes(["http://127.0.0.1:%d/api/x" % port] * 3)).stdout.split()
        # 502 while the server is tried, 503 once it is marked down.
        assert codes and all(code in (b"502", b"503") for code in codes), codes

        def upstreams():
            [inst] = api(netns, dport, "/api/v1/overview")["instances"]
            return inst["upstreams"] if inst["upstreams"] and \
                inst["upstreams"][0]["servers"][0]["failures"] >= 1 else None
        mine = wait_until(upstreams, timeout=15, interval=0.5, what="the failure reported")
        theirs = c.show(name)["upstreams"]
        for u in theirs:
            for server in u["servers"]:
                del server["latency_buckets"]
        assert mine == theirs
        assert mine[0]["name"] == "api" and mine[0]["servers"][0]["address"] == \
            "127.0.0.1:%d" % dead
        scan = DomScan()
        scan.feed(chromium(netns, "http://127.0.0.1:%d/" % dport, str(tmp_path), "--dump-dom"))
        text = " ".join(scan.text)
        assert "Upstreams" in text and "127.0.0.1:%d" % dead in text


def test_instances_on_a_shared_address_show_it_with_their_names(netns, tmp_path):
    dport, port = free_port(), free_port()
    shop, blog = unique_name("dshop"), unique_name("dblog")
    configs = {
        shop: '[[listen]]\naddress = "127.0.0.1:%d"\nnames = ["shop.example"]\n' % port,
        blog: '[[listen]]\naddress = "127.0.0.1:%d"\ndefault = true\n' % port,
    }
    with Controller(extra_args=["--dashboard-listen", "127.0.0.1:%d" % dport],
                    wrapper=netns.enter) as c:
        # Both added before either starts: one started alone would keep the address.
        for name, listen in configs.items():
            c.add(name, listen + '[[route]]\nrespond = { body = "%s\\n" }\n' % name,
                  "--shared-cpus")
        for name in configs:
            c.ctl("instance", "start", name)
        # Each name reaches its instance through the front (once the front accepts).
        for host, body in (("shop.example", shop), ("other.example", blog)):
            def answer():
                p = netns.run(["curl", "-s", "-H", "Host: " + host, "--max-time", "5",
                               "http://127.0.0.1:%d/" % port], check=False)
                return p.stdout if p.returncode == 0 else None
            got = wait_until(answer, timeout=15, interval=0.3, what="an answer for " + host)
            assert got == body.encode() + b"\n", (host, got)

        def shared_of(name):
            for inst in api(netns, dport, "/api/v1/overview")["instances"]:
                if inst["name"] == name and inst["shared"]:
                    [address] = inst["shared"]
                    return address if [f["state"] for f in address["fronts"]] == ["ready"] \
                        else None
            return None
        address = wait_until(lambda: shared_of(shop), timeout=15, interval=0.5,
                             what="the shared address in the overview")
        assert address["address"] == "127.0.0.1:%d" % port
        assert all("sandbox" not in f for f in address["fronts"])
        by_name = {i["name"]: i for i in address["instances"]}
        assert by_name[shop]["names"] == ["shop.example"] and by_name[blog]["default"]
        scan = DomScan()
        scan.feed(chromium(netns, "http://127.0.0.1:%d/" % dport, str(tmp_path), "--dump-dom"))
        text = " ".join(scan.text)
        assert "Shared addresses" in text and "shop.example" in text and "(default)" in text
