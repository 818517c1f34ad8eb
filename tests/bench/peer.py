#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One end of a loopback benchmark run, in its own process so that its CPU
time is its own. Prints one JSON line with what it measured.

  peer.py send SYSTEM PORT BYTES SIZE [CONNECTIONS]
  peer.py recv SYSTEM PORT SIZE [CONNECTIONS]

SYSTEM: tcp (tcpserversink/tcpclientsrc), mtcp (multitcpsink/multitcpsrc) or
mtcp-tls (the same with tls=true, certificate and key from $MTCP_TLS_DIR).
"""
import json
import os
import resource
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def connected(system, sink, want):
    if system == "tcp":
        return sink.get_property("num-handles") >= want
    stats = sink.get_property("stats")
    sessions = stats.get_value("sessions")
    n = 0
    for i in range(len(sessions) if sessions else 0):
        n += sessions[i].get_value("n-connections")
    return n >= want


def send(system, port, total, size, connections):
    n = total // size
    if system == "tcp":
        sink = f"tcpserversink name=sink host=127.0.0.1 port={port} sync=false"
        want = 1
    else:
        sink = (f"multitcpsink name=sink host=127.0.0.1 port={port} sync=false")
        if system == "mtcp-tls":
            d = os.environ["MTCP_TLS_DIR"]
            sink += (f" tls=true tls-certificate-file={d}/cert.pem "
                     f"tls-key-file={d}/key.pem")
        want = connections
    pipe = Gst.parse_launch(
        f"fakesrc sizetype=fixed sizemax={size} filltype=nothing "
        f"num-buffers={n} ! {sink}")
    sink = pipe.get_by_name("sink")
    # PAUSED: listening, the first buffer waits in preroll
    pipe.set_state(Gst.State.PAUSED)
    print(json.dumps({"listening": True}), flush=True)
    deadline = time.monotonic() + 20
    while not connected(system, sink, want):
        if time.monotonic() > deadline:
            print(json.dumps({"error": "receiver did not connect"}), flush=True)
            sys.exit(1)
        time.sleep(0.01)
    cpu0 = cpu_seconds()
    t0 = time.monotonic()
    pipe.set_state(Gst.State.PLAYING)
    bus = pipe.get_bus()
    msg = bus.timed_pop_filtered(120 * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    ok = msg is not None and msg.type == Gst.MessageType.EOS
    if system == "tcp":
        # tcpserversink posts EOS before its client has everything: wait
        # until it has written all of it (multitcpsink waits for the
        # receiver's acknowledgement itself)
        deadline = time.monotonic() + 60
        while sink.get_property("bytes-served") < n * size and \
                time.monotonic() < deadline:
            time.sleep(0.005)
    t1 = time.monotonic()
    cpu1 = cpu_seconds()
    pipe.set_state(Gst.State.NULL)
    print(json.dumps({"ok": ok, "cpu": cpu1 - cpu0, "seconds": t1 - t0}),
          flush=True)


def recv(system, port, size, connections):
    if system == "tcp":
        src = (f"tcpclientsrc host=127.0.0.1 port={port} blocksize={size}")
    else:
        src = (f"multitcpsrc host=127.0.0.1 port={port} "
               f"connections={connections} latency=2000")
        if system == "mtcp-tls":
            src += f" tls=true tls-ca-file={os.environ['MTCP_TLS_DIR']}/cert.pem"
    pipe = Gst.parse_launch(f"{src} ! fakesink name=sink sync=false")
    counts = {"bytes": 0, "first": None, "last": None}

    def probe(pad, info):
        now = time.monotonic()
        if counts["first"] is None:
            counts["first"] = now
        counts["last"] = now
        counts["bytes"] += info.get_buffer().get_size()
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("sink").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, probe)
    cpu0 = cpu_seconds()
    pipe.set_state(Gst.State.PLAYING)
    msg = pipe.get_bus().timed_pop_filtered(
        120 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    cpu1 = cpu_seconds()
    err = None
    if msg is not None and msg.type == Gst.MessageType.ERROR:
        err = msg.parse_error()[0].message
    pipe.set_state(Gst.State.NULL)
    span = (counts["last"] - counts["first"]) if counts["first"] else 0.0
    print(json.dumps({"bytes": counts["bytes"], "seconds": span,
                      "cpu": cpu1 - cpu0, "error": err}), flush=True)


def main():
    Gst.init(None)
    role, system, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if role == "send":
        send(system, port, int(sys.argv[4]), int(sys.argv[5]),
             int(sys.argv[6]) if len(sys.argv) > 6 else 1)
    else:
        recv(system, port, int(sys.argv[4]),
             int(sys.argv[5]) if len(sys.argv) > 5 else 1)


if __name__ == "__main__":
    main()
