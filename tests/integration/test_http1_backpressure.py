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
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
            # Before connect: shrinking the window of an established loopback connection
            # stalls it in the kernel.
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.connect(("127.0.0.1", s.port))
            request = b"GET /r HTTP/1.1\r\nHost: x\r\n\r\n"
            c.sendall(request * n)
            time.sleep(0.5)  # the server answers until the socket buffers fill, then waits
            rss_before_read = rss_kb(worker)
            c.shutdown(socket.SHUT_WR)
            chunks = []
            c.settimeout(10)
            while True:  # the server closes once every queued request is answered
                b = c.recv(1 << 20)
                if not b:
                    break
                chunks.append(b)
            data = b"".join(chunks)
        responses = parse_responses(data)
        assert len(responses) == n
        assert all(r.status == 200 and len(r.body) == 1000 for r in responses)
        # 5000 answers are ~5.5 MB; a server that queued them all would have grown by that.
        assert rss_before_read < 20000, rss_before_read
        s.assert_no_fd_leak()
