"""The state disk under tenant PHP and a full filesystem, with the real controller, scalwsctl
and php8.2-fpm: a managed pool's log (php-fpm's error_log is a FIFO the controller copies
to php-fpm.log) stays within its cap however much PHP writes, rotates to php-fpm.log.1, and
still reaches the log from a master adopted by the next controller; a controller whose
state directory (a small tmpfs mounted by the test) fills up keeps its state, refuses
changes with "No space left on device", says so in its log and in `scalwsctl status`, and
accepts changes again once space returns."""
import errno
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import tempfile

from controller_harness import Controller, http_get, site_config, unique_name, wait_until
from harness import free_port
from php_fpm import PhpFpm
from test_controller_pools import PoolDir, add_managed, php_site

CAP = 64 * 1024
# ~2 MB of error_log lines per request: 30 times the cap.
SPAM = ("<?php for ($i = 0; $i < 20000; $i++) error_log('spam ' . $i . ' ' . str_repeat('x', 80));"
        " error_log('marker-' . $_GET['m']); echo 'done';")


def size(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return None


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def test_tenant_php_cannot_grow_its_pool_log_past_the_cap_and_an_adopted_master_still_logs():
    pool_dir = PoolDir()
    fpm = PhpFpm(children=1)  # only for its scripts
    fpm.write("spam.php", SPAM)
    port = free_port()
    site = unique_name("plog")
    directory = tempfile.mkdtemp(prefix="scalws-ctl-it-")
    args = pool_dir.args() + ["--pool-log-size", "64K"]
    try:
        first = Controller(directory, extra_args=args).start()
        shown = add_managed(first, "noisy", processes=1)
        first.add(site, php_site(port, fpm.www))
        first.ctl("pool", "assign", "noisy", site, "--as", "main")
        first.ctl("instance", "start", site)
        pool_files = os.path.join(first.state_dir, "pools", "noisy")
        log = os.path.join(pool_files, "php-fpm.log")
        pipe = os.path.join(pool_files, "php-fpm.pipe")
        assert shown["process"]["log_path"] == log
        assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
        assert 'error_log = "%s"' % pipe in read(shown["process"]["config_path"])
        for i in range(3):
            assert http_get(port, "/spam.php?m=a%d" % i, timeout=60) == (200, b"done")
        wait_until(lambda: "marker-a2" in read(log), 20, what="the last marker in the log")
        assert size(log) <= CAP and size(log + ".1") <= CAP, (size(log), size(log + ".1"))
        assert size(log + ".1") > CAP // 2  # it did rotate, and kept a full previous log
        assert not os.path.exists(log + ".2")
        assert "spam 19999 " in read(log)

        # The next controller adopts the master; what it writes still reaches the log.
        master = shown["process"]["pid"]
        assert first.signal_and_wait(signal.SIGUSR2) == 0
        first.log.close()
        with Controller(directory, extra_args=args) as second:
            second.instances.add(site)
            again = second.ctl_json("pool", "show", "noisy")
            assert again["process"]["pid"] == master and again["process"]["adopted"] is True
            assert http_get(port, "/spam.php?m=b", timeout=60) == (200, b"done")
            wait_until(lambda: "marker-b" in read(log), 20, what="the adopted master's marker")
            assert size(log) <= CAP and size(log + ".1") <= CAP
    finally:
        fpm.stop()
        pool_dir.remove()
        shutil.rmtree(directory, ignore_errors=True)


def fill(directory):
    """Writes a file in `directory` until its filesystem has no room left; returns its path."""
    path = os.path.join(directory, "filler")
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
        try:  # the last partial block
            while True:
                f.write(b"\0" * 512)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    return path


def integrity(db_path):
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def test_a_full_state_disk_keeps_the_state_refuses_changes_says_so_and_recovers():
    directory = tempfile.mkdtemp(prefix="scalws-ctl-it-")
    state_dir = os.path.join(directory, "state")
    os.mkdir(state_dir, 0o750)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0750", "tmpfs", state_dir],
                   check=True)
    port = free_port()
    kept = unique_name("kept")
    try:
        with Controller(directory) as c:
            assert c.state_dir == state_dir
            c.add(kept, site_config(port, "kept\n"))
            c.ctl("instance", "start", kept)
            status = c.ctl_json("status")
            assert status["state_disk"]["full"] is False
            assert status["state_disk"]["free_bytes"] > 1024 * 1024
            before = c.ctl_json("instance", "list")

            filler = fill(state_dir)
            wait_until(lambda: c.ctl_json("status")["state_disk"]["full"], 5,
                       what="status to report the full disk")
            text = c.ctl("status").stdout
            assert "state disk" in text and "FULL" in text
            assert "no space left on device" in text, text

            # Changes are refused, whole, with the system's reason ...
            other = unique_name("new")
            config = os.path.join(directory, other + ".toml")
            with open(config, "w") as f:
                f.write(site_config(free_port(), "new\n"))
            refused = c.ctl("instance", "add", other, "--config", config, check=False)
            assert refused.returncode == 1, (refused.returncode, refused.stdout, refused.stderr)
            assert "no space left on device" in refused.stderr.lower(), refused.stderr
            stop = c.ctl("instance", "stop", kept, check=False)
            assert stop.returncode == 1, (stop.stdout, stop.stderr)
            assert "no space left on device" in stop.stderr.lower(), stop.stderr
            # ... the state is kept and the site goes on serving ...
            assert c.ctl_json("instance", "list") == before
            assert c.show(kept)["status"] == "running"
            assert http_get(port) == (200, b"kept\n")
            assert integrity(os.path.join(state_dir, "state.db")) == "ok"
            # ... and the log says so.
            assert "no space left on device" in c.read_log()
            assert "changes to it are refused" in c.read_log()

            os.unlink(filler)
            wait_until(lambda: not c.ctl_json("status")["state_disk"]["full"], 5,
                       what="status to report space again")
            assert "FULL" not in c.ctl("status").stdout
            wait_until(lambda: "space again" in c.read_log(), 5, what="the log to say so")
            c.add(other, site_config(free_port(), "new\n"))
            c.ctl("instance", "stop", kept)
            assert c.show(kept)["status"] == "stopped"
            names = [i["name"] for i in c.ctl_json("instance", "list")["instances"]]
            assert kept in names and other in names
            assert integrity(os.path.join(state_dir, "state.db")) == "ok"
    finally:
        subprocess.run(["umount", "-l", state_dir], check=False)
        shutil.rmtree(directory, ignore_errors=True)
