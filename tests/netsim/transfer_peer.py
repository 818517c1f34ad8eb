#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One end of a stored-video transfer (tests/netsim/test_transfer.py,
issue 28), run inside a netsim namespace; prints JSON lines.

    transfer_peer.py sender PORT CONTROL FRAMES SECONDS
    transfer_peer.py receiver HOST PORT SECONDS

The sender reads a raw "file" (videotestsrc is-live=false, 160x120 GRAY8 at
30 fps: 4.6 Mbit/s) into multitcpsink sync=false wait-for-connection=true
with transfer-control=CONTROL and prints the session's bytes sent every
0.25 s. The receiver plays it in time (fakesink sync=true behind
multitcpsrc, latency 1 s) and prints its playout buffer and frames every
0.25 s, then the frames at EOS."""
import json
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)


def session_bytes(sink):
    st = sink.get_property("stats")
    sessions = st.get_value("sessions")
    if not sessions:
        return 0, 0
    s = sessions[0]
    return s.get_value("bytes-sent"), s.get_value("receiver-playout-bytes")


def sender(port, control, frames, seconds):
    pipe = Gst.parse_launch(
        f"videotestsrc is-live=false num-buffers={frames} ! "
        "video/x-raw,format=GRAY8,width=160,height=120,framerate=30/1 ! "
        f"multitcpsink name=sink port={port} sync=false "
        f"wait-for-connection=true transfer-control={control}")
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    t0 = None
    end = time.monotonic() + seconds
    bus = pipe.get_bus()
    while time.monotonic() < end:
        msg = bus.timed_pop_filtered(250 * Gst.MSECOND,
                                     Gst.MessageType.ERROR)
        if msg:
            print(json.dumps({"error": msg.parse_error()[0].message}),
                  flush=True)
            break
        sent, playout = session_bytes(sink)
        if sent and t0 is None:
            t0 = time.monotonic()
        if t0 is not None:
            print(json.dumps({"t": round(time.monotonic() - t0, 3),
                              "sent": sent, "playout": playout}), flush=True)
    pipe.set_state(Gst.State.NULL)


def receiver(host, port, seconds):
    pipe = Gst.parse_launch(
        f"multitcpsrc name=src host={host} port={port} latency=1000 "
        "drift-correction=false ! fakesink name=fake sync=true "
        "signal-handoffs=true")
    frames = [0]
    pipe.get_by_name("fake").connect(
        "handoff", lambda *a: frames.__setitem__(0, frames[0] + 1))
    src = pipe.get_by_name("src")
    pipe.set_state(Gst.State.PLAYING)
    t0 = time.monotonic()
    bus = pipe.get_bus()
    eos = False
    while time.monotonic() - t0 < seconds:
        msg = bus.timed_pop_filtered(250 * Gst.MSECOND,
                                     Gst.MessageType.EOS |
                                     Gst.MessageType.ERROR)
        st = src.get_property("stats")
        print(json.dumps({"t": round(time.monotonic() - t0, 3),
                          "frames": frames[0],
                          "playout": st.get_value("playout-bytes"),
                          "stream_bitrate": st.get_value("stream-bitrate"),
                          "connections": st.get_value("n-connections")}),
              flush=True)
        if msg:
            eos = msg.type == Gst.MessageType.EOS
            break
    print(json.dumps({"end": True, "eos": eos, "frames": frames[0]}),
          flush=True)
    pipe.set_state(Gst.State.NULL)


if __name__ == "__main__":
    if sys.argv[1] == "sender":
        sender(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
               float(sys.argv[5]))
    else:
        receiver(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
