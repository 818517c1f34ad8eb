#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An unresponsive UDP flow with no handshake (iperf3's UDP test loses
its start-up exchange in a queue that TCP flows keep full): constant rate,
or Poisson arrivals at that mean rate (seed 004's background flow).

  udp_flood.py send ADDR PORT BITRATE SECONDS [PAYLOAD] [poisson]
      (BITRATE as iperf3 -b takes it, 5.5M or 800K, and counted as it
      counts it: the payload; PAYLOAD bytes a datagram, default 1460;
      poisson: exponential gaps with the constant rate's mean)
  udp_flood.py recv ADDR PORT SECONDS OUT.json   (datagrams and bytes seen)
"""
import json
import random
import socket
import sys
import time


def bits_per_second(rate):
    """iperf3's notation: 5.5M, 800K, 1G or plain bits/s."""
    scale = {"K": 1e3, "M": 1e6, "G": 1e9}.get(rate[-1].upper(), 1)
    return float(rate.rstrip("KMGkmg")) * scale


def send(addr, port, rate, seconds, payload=1460, poisson=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gap = payload * 8 / bits_per_second(rate)
    data = bytes(payload)
    rng = random.Random(4)
    start = time.monotonic()
    sent, due = 0, start
    while due < start + seconds:
        time.sleep(max(0.0, due - time.monotonic()))
        s.sendto(data, (addr, port))
        sent += 1
        due += rng.expovariate(1 / gap) if poisson else gap
    print(json.dumps({"packets": sent, "bytes": sent * payload,
                      "payload": payload, "seconds": seconds}))


def recv(addr, port, seconds, out):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    packets = nbytes = 0
    while time.monotonic() < end:
        try:
            nbytes += len(s.recv(65536))
            packets += 1
        except socket.timeout:
            pass
    with open(out, "w") as f:
        json.dump({"packets": packets, "bytes": nbytes}, f)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]),
             *(int(a) for a in sys.argv[6:7] if a.isdigit()),
             poisson="poisson" in sys.argv[6:])
    else:
        recv(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
