#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the seed corpus: valid frames of every type (docs/protocol.md),
each file prefixed by the chunking byte the fuzz target reads first."""
import os
import struct

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(here, exist_ok=True)


def frame(t, body):
    return struct.pack(">BBHI", t, 0, 0, len(body)) + body


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def zigzag(d):
    return varint(((d << 1) ^ (d >> 63)) & (2**64 - 1))


sid = bytes(range(16))
frames = {
    "hello": frame(0x01, struct.pack(">IHBB", 0x4D544350, 1, 1, 0) + sid),
    "welcome": frame(0x02, struct.pack(">IHH", 0x4D544350, 1, 0) + sid +
                     struct.pack(">II", 3, 1 << 24)),
    # an empty stream id, path 1 of 2, the sink's max-connections 16
    "welcome_limit": frame(0x02, struct.pack(">IHH", 0x4D544350, 1, 0) +
                           sid + struct.pack(">IIHBBH", 3, 1 << 24, 0, 1, 2,
                                             16)),
    "refuse": frame(0x03, struct.pack(">H", 2) + b"wrong version"),
    "caps": frame(0x10, struct.pack(">Q", 0) + b"video/x-h264, width=(int)320"),
    "buffer": frame(0x11, struct.pack(">QQQQII", 1, 10**9, 10**9, 33333333,
                                      1, 5) + b"hello"),
    # seq 1, pts and dts 1 s, duration 33 ms, flags DELTA, against zeros
    "buffer_delta": frame(0x14, bytes([7]) + zigzag(1) + zigzag(10**9) +
                          zigzag(10**9) + zigzag(33333333) + varint(1) +
                          b"hello"),
    # with a short header (COMPACT), then one coded SAME as it
    "buffer_delta_short": struct.pack(">BH", 0x94, 6) + bytes([0]) +
    zigzag(0) + varint(0) + b"abc" + struct.pack(">BH", 0x94, 5) +
    bytes([8]) + zigzag(0) + b"abc",
    "eos": frame(0x12, struct.pack(">Q", 9)),
    "skip": frame(0x13, struct.pack(">QQ", 3, 7)),
    "report": frame(0x20, struct.pack(">QQQIIIIIIQQ", 1, 800000, 0, 20000,
                                      1000, 10, 1448, 0, 0, 12345, 0)),
    "feedback": frame(0x21, struct.pack(">QQQQQII", 5, 1000, 10**9, 1, 2, 0,
                                        0)),
    "retire": frame(0x22, b""),
    # the passphrase handshake: nonce, salt, rounds; nonce, MAC; MAC
    "challenge": frame(0x04, bytes(range(32)) + bytes(range(16)) +
                       struct.pack(">I", 150000)),
    "auth": frame(0x05, bytes(range(32)) + bytes(range(32, 64))),
    "proof": frame(0x06, bytes(range(64, 96))),
    "unknown": frame(0x7E, b"later"),
}
# what a hostile sink sends the receiver
M64 = 2**64 - 1
hostile = {
    # a flood of disjoint SKIPs ahead of the release
    "skip_flood": b"".join(frame(0x13, struct.pack(">QQ", 100 + 2 * i,
                                                   101 + 2 * i))
                           for i in range(150)),
    # SKIPs overlapping, touching, and one over all of them
    "skip_merge": b"".join(frame(0x13, struct.pack(">QQ", a, b)) for a, b in
                           [(5, 9), (20, 25), (9, 12), (3, 6), (22, 40),
                            (1, 1000), (M64 - 1, M64)]),
    # timestamps at the ends of the range, forward and back
    "buffer_extreme": b"".join(
        frame(0x11, struct.pack(">QQQQII", seq, pts, dts, dur, 1, 1) + b"x")
        for seq, pts, dts, dur in
        [(1, 2**62 - 1, M64, 2**62 - 1), (2, 0, 0, 0), (3, M64 - 1, 2**63, 5),
         (4, 2**63 - 1, 2**63 - 1, M64 - 1), (2**20, 10**9, 10**9, 1),
         (M64 - 1, 1, 1, 1)]),
    # deltas that jump to the top and wrap below zero
    "buffer_delta_extreme": frame(0x14, bytes([7]) + zigzag(1) +
                                  zigzag(2**62) + zigzag(2**62) +
                                  zigzag(1) + varint(0) + b"a") +
    frame(0x14, bytes([7]) + zigzag(1) + zigzag(-(2**63) + 1) +
          zigzag(2**63 - 1) + zigzag(-2) + varint(0) + b"b") +
    frame(0x14, bytes([3]) + zigzag(-5) + zigzag(-1) + zigzag(1) +
          varint(0) + b"c"),
    # buffers behind a gap with deadlines far off, then EOS and caps
    "gap_hold": b"".join(
        frame(0x11, struct.pack(">QQQQII", seq, 10**9 * seq, M64, 1, 1, 4) +
              b"data") for seq in range(2, 60)) +
    frame(0x10, struct.pack(">Q", 60) + b"video/x-raw, width=(int)2") +
    frame(0x12, struct.pack(">Q", 61)),
    "caps_odd": frame(0x10, struct.pack(">Q", 0) +
                      b"video/x-raw, width=(int)[ 1, 2 ], a=(string)\"") +
    frame(0x10, struct.pack(">Q", 1) + b"a/b, c=(GstCaps)\"x/y, d=(int)1\""),
    # an open array inside nested caps (GStreamer 1.22 leaked 208 bytes)
    "caps_nested_open": frame(0x10, struct.pack(">Q", 0) +
                              b"a/b, c=(GstCaps)\"x/y, d=(int)<\""),
    "report_ones": frame(0x20, b"\xff" * 72),
}
for name, data in list(frames.items()) + list(hostile.items()):
    with open(os.path.join(here, name), "wb") as f:
        f.write(bytes([7]) + data)
with open(os.path.join(here, "stream"), "wb") as f:
    f.write(bytes([13]) + b"".join(frames.values()))
