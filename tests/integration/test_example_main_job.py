"""The README's first command (deploy/run-example.sh): the controller with the demo
instance serving deploy/examples/, stopped cleanly by Ctrl-C. Run here on a free port with
its own state dir, setup skipped (this build is the one under test)."""
import os
import select
import signal
import subprocess
import tempfile
import time

from harness import SOURCE_DIR, curl, free_port, wait_for_port


def read_until(proc, marker, timeout):
    """The script's output up to and including the line holding `marker` (the instance
    listens before the script says so: a Ctrl-C between the two would cut the line)."""
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            break
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        out += chunk
    return out


def test_run_example_serves_the_demo_and_stops_on_ctrl_c():
    port = free_port()
    state = tempfile.mkdtemp(prefix="scalws-example-")
    env = dict(os.environ, SCALWS_SKIP_SETUP="1", SCALWS_STATE_DIR=state,
               SCALWS_EXAMPLE_PORT=str(port))
    proc = subprocess.Popen([os.path.join(SOURCE_DIR, "deploy", "run-example.sh")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    before = b""
    try:
        wait_for_port(port, timeout=30, proc=proc)
        before = read_until(proc, b"the demo instance serves", timeout=30)
        code, body, err = curl("http://127.0.0.1:%d/health" % port)
        assert code == 0 and body == b"ok\n", err
        code, body, err = curl("http://127.0.0.1:%d/" % port)
        assert code == 0 and b"<html" in body, (err, body[:200])
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        out, _ = proc.communicate(timeout=30)
        out = before + out
    assert proc.returncode == 0, out.decode()
    assert b"the demo instance serves" in out
