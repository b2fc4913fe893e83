"""The per-loop open-file cache seen from outside: check mode never serves a changed or
deleted file, valid mode trusts its window, off keeps nothing open; large files go out
byte-exact with sendfile over keep-alive, also while the cache replaces their entry."""
import hashlib
import os
import socket
import time

from harness import curl
from static_site import Client, static_server, worker_fds

MIB = 1 << 20


def write(s, rel, data):
    path = os.path.join(s.dir, "www", rel)
    with open(path, "wb") as f:
        f.write(data)
    return path


def bump_mtime(path, seconds):
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def test_check_mode_serves_a_changed_file_at_once():
    with static_server({"page.txt": "version one"}) as s, Client(s.port) as c:
        assert c.get("/page.txt").body == b"version one"
        assert c.get("/page.txt").body == b"version one"  # a cache hit
        path = write(s, "page.txt", b"version two")  # same size, rewritten in place
        bump_mtime(path, 1)
        assert c.get("/page.txt").body == b"version two"
        write(s, "page.txt", b"a longer version three")  # other size, same second
        assert c.get("/page.txt").body == b"a longer version three"
        tmp = write(s, "page.new", b"renamed over")  # atomic replace: a new inode
        os.rename(tmp, os.path.join(s.dir, "www", "page.txt"))
        assert c.get("/page.txt").body == b"renamed over"
        os.unlink(os.path.join(s.dir, "www", "page.txt"))
        assert c.get("/page.txt").status == 404
        write(s, "page.txt", b"back")
        assert c.get("/page.txt").body == b"back"


def test_valid_mode_trusts_its_window_then_checks():
    with static_server({"page.txt": "one"}, 'open_file_cache = "valid:1s"') as s, \
            Client(s.port) as c:
        assert c.get("/page.txt").body == b"one"
        write(s, "page.txt", b"two!")
        assert c.get("/page.txt").body == b"one"  # trusted: not even a statx
        time.sleep(1.2)
        assert c.get("/page.txt").body == b"two!"


def test_off_mode_keeps_no_fd_and_sees_changes():
    files = {"a.txt": "a", "b.bin": os.urandom(100_000)}
    with static_server(files, 'open_file_cache = "off"') as s, Client(s.port) as c:
        for _ in range(5):
            assert c.get("/a.txt").body == b"a"
            assert c.get("/b.bin").body == files["b.bin"]
        write(s, "a.txt", b"A")
        assert c.get("/a.txt").body == b"A"
        c.close()
        s.assert_no_fd_leak()


def test_cached_files_hold_one_fd_each():
    files = {"%d.txt" % i: "file %d" % i for i in range(20)}
    with static_server(files) as s, Client(s.port) as c:
        for _ in range(3):
            for i in range(20):
                assert c.get("/%d.txt" % i).body == b"file %d" % i
        c.close()
        assert worker_fds(s) == s.baseline[s.workers()[0]] + 20


def sha(data):
    return hashlib.sha256(data).hexdigest()


def test_large_downloads_are_byte_exact_over_keep_alive():
    one = os.urandom(MIB)
    with static_server({}) as s:
        write(s, "one.bin", one)
        # 100 MiB of a repeated random block: cheap to make, still position-sensitive.
        block = os.urandom(MIB + 7)
        big = (block * 100)[:100 * MIB]
        write(s, "big.bin", big)
        out = os.path.join(s.dir, "dl")
        code, stats, err = curl("-s", "-o", out + "1", s.url("/one.bin"),
                                "-o", out + "2", s.url("/big.bin"),
                                "-o", out + "3", s.url("/one.bin"),
                                "-w", "%{http_code} %{num_connects}\\n", timeout=120)
        assert code == 0, err
        # One connection for all three (keep-alive), each 200.
        assert stats.decode().split("\n")[:3] == ["200 1", "200 0", "200 0"]
        with open(out + "1", "rb") as f:
            assert sha(f.read()) == sha(one)
        with open(out + "2", "rb") as f:
            assert sha(f.read()) == sha(big)
        with open(out + "3", "rb") as f:
            assert sha(f.read()) == sha(one)
        # Ranges of the large file, byte-exact.
        with Client(s.port, timeout=60) as c:
            r = c.get("/big.bin", [("Range", "bytes=%d-%d" % (37 * MIB + 5, 60 * MIB))])
            assert r.status == 206
            assert sha(r.body) == sha(big[37 * MIB + 5:60 * MIB + 1])
            r = c.get("/big.bin", [("Range", "bytes=-3000000")])
            assert sha(r.body) == sha(big[-3000000:])
            r = c.get("/big.bin", [("Range", "bytes=0-99, %d-%d" % (90 * MIB, 91 * MIB))])
            assert r.status == 206
            assert big[:100] in r.body and big[90 * MIB:91 * MIB + 1] in r.body
            assert len(r.body) == int(r.header("content-length"))
            r = c.get("/one.bin", [("Range", "bytes=1000-")])
            assert r.body == one[1000:]


def test_a_download_in_flight_survives_replacement_and_eviction():
    old = os.urandom(8 * MIB)
    new = os.urandom(8 * MIB)
    with static_server({}) as s:
        write(s, "f.bin", old)
        slow = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        slow.sendall(b"GET /f.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        first = slow.recv(65536)  # the response started; most of it waits in the server
        assert first.startswith(b"HTTP/1.1 200")
        tmp = write(s, "f.new", new)
        os.rename(tmp, os.path.join(s.dir, "www", "f.bin"))
        # Another request replaces the cache entry (check mode sees a new inode).
        with Client(s.port) as c:
            assert sha(c.get("/f.bin").body) == sha(new)
        data = first
        while True:
            b = slow.recv(1 << 20)
            if not b:
                break
            data += b
        slow.close()
        body = data[data.index(b"\r\n\r\n") + 4:]
        assert sha(body) == sha(old)  # the old fd stayed open until its bytes left
        time.sleep(0.1)
        # Only the new file's fd remains.
        assert worker_fds(s) == s.baseline[s.workers()[0]] + 1
