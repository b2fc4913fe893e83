"""Request limits in an instance under the controller: the limit table is a memfd the
controller makes and hands to every worker of the instance, so two workers count one
client together; a worker's replacement and the workers a restarted controller takes
back share the same table."""
import os
import signal
import subprocess

from controller_harness import Controller, unique_name, wait_until, workers_of
from harness import free_port

CONFIG = """[[listen]]
address = "127.0.0.1:%d"
[[route]]
match = { exact = "/login" }
respond = { status = 200, body = "welcome\\n" }
limit = { rate = "1r/m", burst = 4 }
[[route]]
respond = { status = 200, body = "free\\n" }
"""


def code(port, path):
    """The status of one curl request on a new connection."""
    return subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time",
                           "10", "http://127.0.0.1:%d%s" % (port, path)],
                          capture_output=True, timeout=20).stdout


def test_two_workers_share_the_instances_limit_table():
    port = free_port()
    name = unique_name("limit")
    first = Controller()
    first.start()
    try:
        first.add(name, CONFIG % port, "--cpus", "2", "--mode", "multi")
        first.ctl("instance", "start", name)
        assert len(first.ready_pids(name)) == 2
        # Twenty new connections over two workers (all on one is 2^-19): the rate with its
        # burst of four lets five through, whichever worker answers.
        codes = [code(port, "/login") for _ in range(20)]
        assert codes.count(b"200") == 5 and codes.count(b"429") == 15, codes
        assert code(port, "/other") == b"200"
        # A worker killed: its replacement maps the same table.
        pids = first.ready_pids(name)
        os.kill(pids[0], signal.SIGKILL)
        wait_until(lambda: (lambda r: len(r) == 2 and pids[0] not in r)(first.ready_pids(name)),
                   10, what="a replacement")
        assert [code(port, "/login") for _ in range(6)] == [b"429"] * 6
        # The controller dies; the next one takes the table back from the workers it
        # re-attaches, and a worker it starts later still shares it.
        first.kill9()
        with Controller(first.dir) as second:
            second.instances.add(name)
            pids = workers_of(name)
            wait_until(lambda: second.ready_pids(name) == pids, 10, what="re-attach")
            show = second.show(name)
            assert all(p["attached"] for p in show["processes"]), show["processes"]
            os.kill(pids[1], signal.SIGKILL)
            wait_until(lambda: (lambda r: len(r) == 2 and pids[1] not in r)(
                second.ready_pids(name)), 10, what="a replacement")
            assert [code(port, "/login") for _ in range(6)] == [b"429"] * 6
            # A restart of the instance starts with a new table.
            second.ctl("instance", "restart", name)
            assert code(port, "/login") == b"200"
    finally:
        if first.proc.poll() is None:
            first.kill9()
        for pid in workers_of(name):
            os.kill(pid, signal.SIGKILL)
