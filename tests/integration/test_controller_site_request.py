"""The request-side features in an instance under the controller: a route's auth whose
users file an `instance reload` reads again from inside the worker's sandbox, a PROXY
protocol listener the controller binds, and [real_ip] (a site-level table, allowed in an
instance config where [server] is not)."""
import os
import socket
import subprocess
import tempfile

from controller_harness import Controller, http_get, unique_name
from harness import curl, free_port, wait_until


def users_line(user, password):
    return subprocess.run(["htpasswd", "-nbB", "-C", "5", user, password], check=True,
                          capture_output=True, text=True).stdout.strip() + "\n"


def write(path, text):
    with open(path + ".new", "w") as f:
        f.write(text)
    os.chmod(path + ".new", 0o644)
    os.rename(path + ".new", path)


def config(port, proxied_port, users):
    return """
[real_ip]
from = ["127.0.0.1", "10.0.0.0/8"]
[[listen]]
address = "127.0.0.1:%d"
[[listen]]
address = "127.0.0.1:%d"
proxy_protocol = true
[[route]]
match = { prefix = "/staff/" }
auth = { realm = "staff", users = "%s" }
respond = { status = 200, body = "staff\\n" }
[[route]]
match = { exact = "/inside" }
respond = { status = 200, body = "inside\\n" }
policy = { allow = ["203.0.113.0/24"] }
[[route]]
respond = { status = 200, body = "hello\\n" }
""" % (port, proxied_port, users)


def code(url, *args):
    return curl("-o", "/dev/null", "-w", "%{http_code}", *args, url)[1]


def test_auth_proxy_protocol_and_real_ip_in_an_instance():
    port, proxied = free_port(), free_port()
    name = unique_name("req")
    users_dir = tempfile.mkdtemp(prefix="scalws-users-")
    os.chmod(users_dir, 0o755)  # the instance's user reads it after the drop
    users = os.path.join(users_dir, "staff.htpasswd")
    write(users, users_line("ann", "s3cret"))
    try:
        with Controller() as c:
            c.add(name, config(port, proxied, users))
            c.ctl("instance", "start", name)
            staff = "http://127.0.0.1:%d/staff/x" % port
            assert code(staff) == b"401"
            assert code(staff, "-u", "ann:s3cret") == b"200"
            # A new password: the reload reads the file from inside the sandbox.
            write(users, users_line("ann", "n3w"))
            c.ctl("instance", "reload", name)
            wait_until(lambda: code(staff, "-u", "ann:n3w") == b"200", timeout=10,
                       what="the new password")
            assert code(staff, "-u", "ann:s3cret") == b"401"
            # The PROXY listener names the client; [real_ip] trusts 127.0.0.1's header.
            with socket.create_connection(("127.0.0.1", proxied), timeout=5) as s:
                s.sendall(b"PROXY TCP4 203.0.113.5 127.0.0.1 4711 80\r\n"
                          b"GET /inside HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 200 ")
            inside = "http://127.0.0.1:%d/inside" % port
            assert code(inside) == b"403"
            assert code(inside, "-H", "X-Forwarded-For: 203.0.113.6") == b"200"
            assert http_get(port) == (200, b"hello\n")
    finally:
        os.unlink(users)
        os.rmdir(users_dir)
