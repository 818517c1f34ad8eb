#!/usr/bin/python3
"""An application that sets its own encoder's bitrate from multitcpsink's
bandwidth estimate, as bitrate-control=encoder does inside the sink: it
listens for the sink's "multitcpsink-estimate" element messages (one per
session when the estimate moves by a fifth, and once a second) and gives
x264enc 80% of the weakest receiver's estimate, down at once, up by at
most 15% a step. Sender and receiver run in this process on loopback,
where the path is never the limit: the encoder stays at --max-kbps; run
the sender alone on a slow uplink to see it follow.

  GST_PLUGIN_PATH=build/gst /usr/bin/python3 examples/bitrate_from_bus.py
"""
import argparse
import sys

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

SHARE = 0.8
STEP_UP = 1.15


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--max-kbps", type=int, default=4000)
    ap.add_argument("--min-kbps", type=int, default=300)
    args = ap.parse_args()
    Gst.init(None)

    sender = Gst.parse_launch(
        "videotestsrc is-live=true pattern=ball ! "
        "video/x-raw,width=640,height=360,framerate=30/1 ! "
        f"x264enc name=enc tune=zerolatency key-int-max=30 "
        f"bitrate={args.max_kbps} speed-preset=ultrafast ! h264parse ! "
        "multitcpsink name=sink host=127.0.0.1 port=0")
    enc = sender.get_by_name("enc")
    sender.set_state(Gst.State.PAUSED)
    port = sender.get_by_name("sink").get_property("current-port")
    receiver = Gst.parse_launch(
        f"multitcpsrc host=127.0.0.1 port={port} latency=1000 ! "
        "fakesink sync=false")

    weakest = {}                # session -> its last estimate, bits/s

    def on_message(bus, msg):
        s = msg.get_structure()
        if msg.type == Gst.MessageType.ELEMENT and s and \
                s.get_name() == "multitcpsink-estimate":
            weakest[s.get_value("session")] = s.get_value("estimated-bitrate")
            fair = SHARE * min(weakest.values()) / 1000
            now = enc.get_property("bitrate")
            if fair < now * 0.95:
                want = fair                         # down at once
            elif fair > now * 1.1:
                want = min(fair, now * STEP_UP)     # up a step
            else:
                return
            want = int(max(args.min_kbps, min(args.max_kbps, want)))
            if want != now:
                print(f"estimate {min(weakest.values()) / 1e6:.2f} Mbit/s "
                      f"(path-limited {s.get_value('path-limited')}): "
                      f"x264enc {now} -> {want} kbit/s")
                enc.set_property("bitrate", want)
        elif msg.type == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            print(f"error: {err.message} ({dbg})", file=sys.stderr)
            loop.quit()

    loop = GLib.MainLoop()
    bus = sender.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    sender.set_state(Gst.State.PLAYING)
    receiver.set_state(Gst.State.PLAYING)
    GLib.timeout_add_seconds(args.seconds, loop.quit)
    loop.run()
    receiver.set_state(Gst.State.NULL)
    sender.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
