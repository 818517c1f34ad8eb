#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sender and receiver of a live test pattern in one process, over several
TCP connections on loopback; prints the receiver's stats messages."""
import argparse
import sys

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--latency", type=int, default=1000)
    args = ap.parse_args()
    Gst.init(None)

    sender = Gst.parse_launch(
        "videotestsrc is-live=true pattern=ball ! "
        "video/x-raw,width=640,height=360,framerate=30/1 ! "
        "x264enc tune=zerolatency key-int-max=30 bitrate=2000 "
        "speed-preset=ultrafast ! h264parse ! "
        "multitcpsink name=sink host=127.0.0.1 port=0")
    sender.set_state(Gst.State.PAUSED)
    port = sender.get_by_name("sink").get_property("current-port")

    receiver = Gst.parse_launch(
        f"multitcpsrc name=src host=127.0.0.1 port={port} "
        f"connections={args.connections} latency={args.latency} "
        "stats-interval=1000 ! h264parse ! avdec_h264 ! fakesink name=out")
    loop = GLib.MainLoop()
    frames = [0]

    def on_frame(pad, info):
        frames[0] += 1
        return Gst.PadProbeReturn.OK

    receiver.get_by_name("out").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, on_frame)

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ELEMENT and \
                msg.get_structure().get_name() == "multitcpsrc-stats":
            s = msg.get_structure()
            print(f"{s.get_value('bitrate') / 1e6:6.2f} Mbit/s  "
                  f"connections {s.get_value('n-connections')}  "
                  f"pushed {s.get_value('buffers-pushed')}  "
                  f"late {s.get_value('buffers-late')}  "
                  f"skipped {s.get_value('buffers-skipped')}  "
                  f"reorder depth {s.get_value('reorder-depth')}  "
                  f"decoded {frames[0]}", flush=True)
        elif msg.type == Gst.MessageType.ERROR:
            print("error:", msg.parse_error()[0].message, file=sys.stderr)
            loop.quit()

    bus = receiver.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    receiver.set_state(Gst.State.PLAYING)
    sender.set_state(Gst.State.PLAYING)
    GLib.timeout_add_seconds(args.seconds, loop.quit)
    loop.run()
    print("final stats:", receiver.get_by_name("src").get_property("stats")
          .to_string())
    receiver.set_state(Gst.State.NULL)
    sender.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
