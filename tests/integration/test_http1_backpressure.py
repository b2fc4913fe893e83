"""A client that pipelines far more than it reads gets every answer, in order, while the
server's memory for it stays bounded (parsing pauses while output is backed up)."""
import socket
import time

from harness import Scalwsd, parse_responses

CONFIG = """
[server]
workers = 1
max_requests_per_connection = 100000
[[listen]]
address = "127.0.0.1:$port"
[[route]]
match = { prefix = "/" }
respond = { body = "%s" }
""" % ("x" * 1000)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_unread_pipelined_responses_pause_parsing_and_all_arrive():
    n = 5000
    with Scalwsd(CONFIG) as s:
        worker = s.workers()[0]
        with socket.create_connection(("127.0.0.1", s.port)) as c:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            request = b"GET /r HTTP/1.1\r\nHost: x\r\n\r\n"
            c.sendall(request * n)
            time.sleep(0.5)  # the server answers until the socket buffers fill, then waits
            rss_before_read = rss_kb(worker)
            c.shutdown(socket.SHUT_WR)
            data = b""
            c.settimeout(10)
            while True:
                b = c.recv(1 << 20)
                if not b:
                    break
                data += b
                if data.count(b"HTTP/1.1 200 OK") == n and data.endswith(b"x" * 1000):
                    break
        responses = parse_responses(data)
        assert len(responses) == n
        assert all(r.status == 200 and len(r.body) == 1000 for r in responses)
        # 5000 answers are ~5.5 MB; a server that queued them all would have grown by that.
        assert rss_before_read < 20000, rss_before_read
        s.assert_no_fd_leak()
