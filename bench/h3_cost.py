#!/usr/bin/python3
"""What a request over HTTP/3 costs the server against the same request over TLS + HTTP/2,
measured in pairs on one server. Run as root (the worker drops to www-data, as in
bench/run.sh):

    bench/h3_cost.py [--scalwsd PATH] [--rounds N] [--seconds S] [--connections C]
                     [--streams M] [--no-gro] [--server-cpu N] [--client-cpu N]

One scalwsd (one worker, pinned to --server-cpu, sandbox on) serves a 1 KiB file from a TLS
listener with `http3 = true`, the `tls-h2-static-small` and `h3-static-small` scenarios of
bench/run.sh on one port. Each round runs h2load (HTTP/2 over TLS) and then scalws-h3load
(HTTP/3) for S seconds each with C connections x M streams, pinned to --client-cpu, the
order swapped every round. A round's ratio is its HTTP/3 CPU per request over its HTTP/2
CPU per request (utime + stime of every scalwsd process, from /proc).

bench/run.sh measures the two scenarios one after the other, minutes apart, each with a
server of its own; on a VM whose speed moves between phases, the two halves of that ratio
can come from different phases. Pairs measured back to back on one server keep a phase
out of the ratio: the median of the per-round ratios is the figure to read."""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

from harness import BIN_DIR, free_port, wait_for_port  # noqa: E402
from tls_support import make_cert  # noqa: E402

SITE = """\
[server]
workers = 1
mode = "multi"
cpus = [{cpu}]
user = "www-data"
sandbox = true
error_log = "{dir}/error.log"
log_level = "warn"
max_requests_per_connection = 1000000

[[listen]]
address = "127.0.0.1:{port}"
tls = {{ cert = "{cert}", key = "{key}" }}
http3 = true

[[route]]
match = {{ prefix = "/" }}
static = {{ root = "{dir}/www", open_file_cache = "check" }}
"""


def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid):
    pids = [pid]
    for p in pids:
        for task in os.listdir("/proc/%d/task" % p):
            try:
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    pids += [int(c) for c in f.read().split()]
            except FileNotFoundError:
                pass
    return pids


def parse_load(output):
    """(succeeded, failed) from h2load's or scalws-h3load's `requests:` line."""
    for line in output.splitlines():
        if line.startswith("requests:"):
            parts = [p.split() for p in line[len("requests:"):].split(",")]
            counts = {p[1]: int(p[0]) for p in parts if len(p) == 2}
            return counts.get("succeeded", 0), counts.get("failed", 0) + counts.get("errored", 0)
    return 0, 0


def measure(server_pid, cmd, seconds):
    pids = process_tree(server_pid)
    before = sum(cpu_seconds(p) for p in pids)
    run = subprocess.run(cmd, capture_output=True, text=True)
    spent = sum(cpu_seconds(p) for p in pids) - before
    ok, failed = parse_load(run.stdout)
    if ok == 0:
        sys.exit("h3_cost.py: no request succeeded: %s\n%s%s" % (" ".join(cmd), run.stdout,
                                                                   run.stderr))
    return ok / seconds, spent / ok * 1e6, failed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scalwsd", default=os.path.join(BIN_DIR, "scalwsd"))
    p.add_argument("--h3load", default=os.path.join(BIN_DIR, "scalws-h3load"))
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--seconds", type=int, default=4)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--streams", type=int, default=8)
    p.add_argument("--no-gro", action="store_true",
                   help="scalws-h3load reads datagram by datagram (bench/README.md)")
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="scalws-h3cost.")
    os.chmod(work, 0o755)
    os.mkdir(os.path.join(work, "www"))
    with open(os.path.join(work, "www", "small.txt"), "wb") as f:
        f.write(b"x" * 1023 + b"\n")
    cert, key = make_cert(work, "site", "localhost")
    for path in (cert, key):
        os.chmod(path, 0o644)
    port = free_port()
    config = os.path.join(work, "site.toml")
    with open(config, "w") as f:
        f.write(SITE.format(cpu=args.server_cpu, dir=work, port=port, cert=cert, key=key))
    server = subprocess.Popen(["taskset", "-c", str(args.server_cpu), args.scalwsd, "--config",
                               config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc=server)
        time.sleep(0.5)
        url = "https://127.0.0.1:%d/small.txt" % port
        pin = ["taskset", "-c", str(args.client_cpu)]
        load = ["-c", str(args.connections), "-m", str(args.streams), "-D", str(args.seconds), url]
        h3load = [args.h3load] + (["--no-gro"] if args.no_gro else [])
        tools = {"h2": pin + ["h2load"] + load, "h3": pin + h3load + load}
        for cmd in tools.values():  # warm-up: caches, the open-file cache, the CPU's clock
            subprocess.run(cmd[:-2] + ["1", url], capture_output=True)
        ratios, cost, failed = [], {"h2": [], "h3": []}, 0
        print("round  h2 req/s  h2 us/req  h3 req/s  h3 us/req  h3/h2")
        for r in range(args.rounds):
            order = ("h2", "h3") if r % 2 == 0 else ("h3", "h2")
            got = {}
            for proto in order:
                got[proto] = measure(server.pid, tools[proto], args.seconds)
                failed += got[proto][2]
                cost[proto].append(got[proto][1])
            ratio = got["h3"][1] / got["h2"][1]
            ratios.append(ratio)
            print("%5d %9.0f %10.2f %9.0f %10.2f  %.3f" % (r + 1, got["h2"][0], got["h2"][1],
                                                           got["h3"][0], got["h3"][1], ratio),
                  flush=True)
        print("median CPU per request: h2 %.2f us, h3 %.2f us; median of round ratios %.3f "
              "(%.3f..%.3f); failed requests %d" % (statistics.median(cost["h2"]),
                                                    statistics.median(cost["h3"]),
                                                    statistics.median(ratios), min(ratios),
                                                    max(ratios), failed))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
