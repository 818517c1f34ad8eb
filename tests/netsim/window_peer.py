#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Both ends of the receive-window check: `recv PORT WINDOW SECONDS` accepts
one connection, clamps its advertised window at run time the way
multitcpsrc does (receive buffer, then TCP_WINDOW_CLAMP) and prints the bytes/s it got after a 2 s warm-up;
`send HOST PORT` sends as fast as it can until the other end closes."""
import socket
import sys
import time

TCP_WINDOW_CLAMP = 10
SO_RCVBUFFORCE = 33


def recv(port, window, seconds):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    conn, _ = srv.accept()
    time.sleep(0.5)
    # what multitcpsrc does (mtcp_tcp_set_window_clamp): buffer, then clamp
    conn.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, window)
    conn.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, window)
    t0 = time.monotonic()
    got = 0
    start = None
    while True:
        data = conn.recv(1 << 16)
        if not data:
            break
        now = time.monotonic()
        if start is None and now - t0 >= 2:
            start, got = now, 0
        got += len(data)
        if start and now - start >= seconds:
            break
    print(got / (time.monotonic() - start))
    conn.close()


def send(host, port):
    s = socket.create_connection((host, port))
    buf = b"x" * (1 << 16)
    try:
        while True:
            s.sendall(buf)
    except OSError:
        pass


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        send(sys.argv[2], int(sys.argv[3]))
