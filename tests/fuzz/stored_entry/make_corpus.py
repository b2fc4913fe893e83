#!/usr/bin/env python3
"""Writes the seed corpus of the stored_entry fuzz target: valid entries (what a disk file
holds, checksummed with XXH64 through the system's libxxhash) and damaged ones.

Run from this directory: python3 make_corpus.py (needs libxxhash.so.0)."""
import ctypes
import struct

xx = ctypes.CDLL("libxxhash.so.0")
xx.XXH64.restype = ctypes.c_uint64
xx.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
MAGIC = 0x31435753


def entry(body=b"hello\n", head=b"Content-Type: text/plain\r\nETag: \"v1\"\r\n",
          key=b"http\nshop\n/a\n\n", uri=b"http://shop/a", vary=b"", status=200, flags=0,
          checksum=True):
    header = struct.pack("<IHHHHIIIII", MAGIC, 1, 128, status, flags, len(key), len(uri),
                         len(vary), len(head), 0)
    header += struct.pack("<QqQQQQQQ", len(body), 1_700_000_000_000, 2000, 60000, 0, 0,
                          0x1234, 0)
    header += b"\0" * (128 - len(header))
    data = header + key + uri + vary + head + body
    if checksum:
        s = xx.XXH64(data, len(data), MAGIC) or 1
        data = data[:88] + struct.pack("<Q", s) + data[96:]
    return data


def write(name, data):
    with open("corpus/" + name, "wb") as f:
        f.write(data)


good = entry()
write("valid", good)
write("valid_vary", entry(vary=b"accept-encoding:br,gzip\n", flags=3))
write("valid_empty", entry(body=b"", head=b""))
write("valid_large_body", entry(body=bytes(range(256)) * 40))
write("no_checksum", entry(checksum=False))
write("truncated", good[:-3])
write("trailing", good + b"x")
write("header_only", good[:128])
write("bad_magic", b"XXXX" + good[4:])
bad = bytearray(good)
bad[150] ^= 0x40
write("flipped_bit", bytes(bad))
write("head_no_crlf", entry(head=b"Content-Type: text/plain"))
write("head_cr_inside", entry(head=b"A: b\rc\r\n"))
write("huge_key_len", good[:12] + struct.pack("<I", 0xFFFFFFF0) + good[16:])
write("huge_body_len", good[:32] + struct.pack("<Q", 1 << 62) + good[40:])
