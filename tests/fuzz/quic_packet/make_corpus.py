#!/usr/bin/python3
"""Writes the seed corpus for the QUIC packet fuzz target from real client datagrams:
Debian's gtlsclient sends its first flight to a UDP socket here that never answers, and
the datagrams it sent become records ([flags][length: 2 bytes][datagram]) alone, twice
from two addresses, truncated, with another version, next to garbage and short headers.
Initial packets are protected with keys every server derives from the DCID, so a server
reads these exactly as it would the client's."""
import os
import socket
import struct
import subprocess
import time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def capture():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    p = subprocess.Popen(["gtlsclient", "-q", "--timeout=1s", "127.0.0.1", str(port),
                          "https://127.0.0.1:%d/" % port], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    s.settimeout(2)
    got = []
    try:
        while len(got) < 3:
            got.append(s.recv(65536))
    except socket.timeout:
        pass
    p.kill()
    p.wait()
    return got


def record(data, client=0, batch=True, later=False):
    flags = client | (0x80 if batch else 0) | (0x40 if later else 0)
    return struct.pack(">BH", flags, len(data)) + data


def write(name, payload):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(payload)


def main():
    os.makedirs(HERE, exist_ok=True)
    initial = capture()[0]
    write("initial", record(initial))
    write("initial_two_clients", record(initial, 0) + record(initial, 1) + record(initial, 0, later=True))
    write("initial_truncated", record(initial[:600]) + record(initial[:40]) + record(initial[:7]))
    other = bytearray(initial)
    other[1:5] = b"\x0a\x0b\x0c\x0d"
    write("initial_unknown_version", record(bytes(other)))
    flipped = bytearray(initial)
    flipped[len(flipped) // 2] ^= 0x10
    write("initial_corrupt_payload", record(bytes(flipped)) + record(initial))
    short = bytes([0x40]) + bytes(16) + b"\x5a" * 40
    write("short_header_unknown", record(short) + record(short[:22]) + record(short[:5]))
    write("initial_then_garbage", record(initial, batch=False) + record(os.urandom(300), 2) +
          record(bytes([0xc3, 0, 0, 0, 1, 20]) + os.urandom(60), 3))


if __name__ == "__main__":
    main()
