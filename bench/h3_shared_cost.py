#!/usr/bin/python3
"""What HTTP/3 on a shared address costs per request, against the same instance alone on
its address. Run as root (the controller makes users, and the client runs in a mount
namespace of its own so that the site's name resolves to 127.0.0.1):

    bench/h3_shared_cost.py [--rounds N] [--seconds S] [--connections C] [--streams M]

Each round starts a controller (tests/integration's harness, binaries from
SCALWS_BIN_DIR or build/bin) with one instance "shop" (one worker, a fixed response),
alone on a TLS port with HTTP/3, then with a second instance ("home", the default)
sharing the port, so a front routes every datagram. scalws-h3load asks for
https://shop.test:PORT/who with C connections x M streams for S seconds. Reported per
round: requests per second, and CPU per request of shop's worker and, when shared, of the
front (from /proc, user + system); then the medians and their ratio."""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

from controller_harness import Controller, fronts_running, unique_name, workers_of  # noqa: E402
from h3_support import with_name  # noqa: E402
from harness import BIN_DIR, free_port, wait_for_port  # noqa: E402
from tls_support import make_cert  # noqa: E402

SITE = """\
[[listen]]
address = "127.0.0.1:{port}"
tls = {{ cert = "{cert}", key = "{key}" }}
http3 = true
{extra}
[[route]]
respond = {{ body = "{body}\\n" }}
"""


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_round(shared, args):
    port = free_port()
    with Controller() as c:
        sites = [("shop", ("shop.test",), "names = [\"shop.test\"]" if shared else "")]
        if shared:
            sites.append(("home", ("home.test",), "default = true"))
        names = {}
        for label, sans, extra in sites:
            cert, key = make_cert(c.dir, label, sans[0], sans, ip=False)
            os.chmod(c.dir, 0o755)
            names[label] = unique_name(label)
            c.add(names[label], SITE.format(port=port, cert=cert, key=key, extra=extra,
                                            body=label), "--cpus", "1")
        for name in names.values():
            c.ctl("instance", "start", name)
        wait_for_port(port)
        time.sleep(1)
        worker = list(workers_of(names["shop"]))
        fronts = fronts_running(port) if shared else []
        before = {pid: cpu_seconds(pid) for pid in worker + fronts}
        cmd = [os.path.join(BIN_DIR, "scalws-h3load"), "-c", str(args.connections), "-m",
               str(args.streams), "-D", str(args.seconds), "https://shop.test:%d/who" % port]
        run = subprocess.run(with_name("shop.test", cmd), capture_output=True, text=True)
        spent = {pid: cpu_seconds(pid) - before[pid] for pid in before}
        done = 0
        for line in run.stdout.splitlines():
            if line.startswith("requests:"):
                done = int(line.split(",")[3].split()[0])
        if done == 0:
            sys.exit("no request done:\n" + run.stdout + run.stderr)
        worker_us = sum(spent[p] for p in worker) / done * 1e6
        front_us = sum(spent[p] for p in fronts) / done * 1e6
        return done / args.seconds, worker_us, front_us


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--streams", type=int, default=10)
    args = p.parse_args()
    results = {False: [], True: []}
    for _ in range(args.rounds):
        for shared in (False, True):
            r = one_round(shared, args)
            results[shared].append(r)
            print("%-6s %9.0f req/s  worker %.2f us/req  front %.2f us/req"
                  % ("shared" if shared else "alone", r[0], r[1], r[2]), flush=True)
    alone = statistics.median(w for _, w, _ in results[False])
    shared = statistics.median(w + f for _, w, f in results[True])
    print("median CPU per request: alone %.2f us, shared %.2f us (worker + front): %.2fx"
          % (alone, shared, shared / alone))


if __name__ == "__main__":
    main()
