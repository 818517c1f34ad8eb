#!/usr/bin/python3
# multitcp
# Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A receiver application in Python: it plays a multitcp stream and shows,
live, what its stats messages say: the late fraction, the connections and
the rate (matplotlib), and sets its sender's encoder bitrate from the
sink's bandwidth estimate when both ends run here.

    /usr/bin/python3 examples/python/multitcp_watch.py             both ends
                                                  here, on loopback, plotted
    /usr/bin/python3 examples/python/multitcp_watch.py --listen 5600
                                  a listening receiver for a calling camera
    --seconds N     stop after N seconds      --no-plot    print lines only
    --png FILE      write the plot there at the end (no window needed)

GST_PLUGIN_PATH must reach the plugin (build/gst) when it is not
installed. Debian's python3 (python3-gi, python3-gst-1.0,
python3-matplotlib)."""
import argparse
import sys

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

SHARE, STEP_UP = 0.8, 1.15
DRAIN_S = 1.0  # a cut leaves room to drain what waits within this
MIN_KBPS, MAX_KBPS = 300, 4000


class Watch:
    def __init__(self, args):
        self.args = args
        self.t, self.late, self.conns, self.rate = [], [], [], []
        self.t0 = None
        self.sender = self.enc = None
        self.estimates = {}
        self.plot = None

    # the receiver's "multitcpsrc-stats" message, every stats-interval
    def on_stats(self, s):
        now = GLib.get_monotonic_time() / 1e6
        self.t0 = self.t0 or now
        self.t.append(now - self.t0)
        self.late.append(s.get_value("late-fraction") * 100)
        self.conns.append(s.get_value("n-connections"))
        self.rate.append(s.get_value("bitrate") / 1e6)
        print(f"{self.t[-1]:6.1f} s  {self.conns[-1]} connections  "
              f"{self.rate[-1]:.2f} Mbit/s  late {self.late[-1]:.1f}%",
              flush=True)
        if self.plot:
            self.redraw()

    # the sink's "multitcpsink-estimate": the encoder follows the weakest;
    # down only on an estimate the path limited (while the stream limits
    # it is the windows' reading, which says little of the path); lower
    # than the share while a backlog needs more room to drain
    def on_estimate(self, s):
        self.estimates[s.get_value("session")] = (
            s.get_value("estimated-bitrate"), s.get_value("path-limited"),
            s.get_value("backlog-time") / Gst.SECOND)
        weakest, limited, backlog_s = min(self.estimates.values())
        fair = SHARE * weakest / 1000
        cut = min(fair, weakest / 1000 * max(0.0, 1 - backlog_s / DRAIN_S))
        now = self.enc.get_property("bitrate")
        if limited and cut < now * 0.95:
            want = cut
        elif fair > now * 1.1:
            want = min(fair, now * STEP_UP)
        else:
            return
        want = int(max(MIN_KBPS, min(MAX_KBPS, want)))
        if want != now:
            print(f"encoder: {now} -> {want} kbit/s", flush=True)
            self.enc.set_property("bitrate", want)

    def on_message(self, bus, msg):
        s = msg.get_structure()
        if msg.type == Gst.MessageType.ELEMENT and s:
            if s.get_name() == "multitcpsrc-stats":
                self.on_stats(s)
            elif s.get_name() == "multitcpsink-estimate" and self.enc:
                self.on_estimate(s)
        elif msg.type == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            print(f"error: {err.message} ({dbg})", file=sys.stderr)
            self.loop.quit()
        return True

    def setup_plot(self):
        import matplotlib
        if self.args.png:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 6))
        self.plot = (fig, axes)
        if not self.args.png:
            plt.ion()
            plt.show()

    def redraw(self):
        fig, axes = self.plot
        for ax, ys, label in zip(axes, (self.late, self.conns, self.rate),
                                 ("late (%)", "connections", "Mbit/s")):
            ax.clear()
            ax.plot(self.t, ys)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[-1].set_xlabel("seconds")
        if not self.args.png:
            fig.canvas.draw_idle()
            fig.canvas.flush_events()

    def run(self):
        Gst.init(None)
        self.loop = GLib.MainLoop()
        if self.args.listen:
            at = f"mode=listener host=0.0.0.0 port={self.args.listen}"
        else:
            self.sender = Gst.parse_launch(
                "videotestsrc is-live=true pattern=ball ! "
                "video/x-raw,width=640,height=360,framerate=30/1 ! "
                f"x264enc name=enc tune=zerolatency key-int-max=30 "
                f"bitrate={MAX_KBPS} speed-preset=ultrafast ! h264parse ! "
                "multitcpsink name=sink host=127.0.0.1 port=0")
            self.enc = self.sender.get_by_name("enc")
            self.sender.get_bus().add_signal_watch()
            self.sender.get_bus().connect("message", self.on_message)
            self.sender.set_state(Gst.State.PLAYING)
            port = self.sender.get_by_name("sink").get_property(
                "current-port")
            at = f"host=127.0.0.1 port={port}"
        receiver = Gst.parse_launch(
            f"multitcpsrc {at} latency=1000 stats-interval=1000 ! "
            "fakesink sync=false")
        receiver.get_bus().add_signal_watch()
        receiver.get_bus().connect("message", self.on_message)
        if self.args.plot:
            self.setup_plot()
        receiver.set_state(Gst.State.PLAYING)
        if self.args.seconds:
            GLib.timeout_add_seconds(self.args.seconds, self.loop.quit)
        self.loop.run()
        receiver.set_state(Gst.State.NULL)
        if self.sender:
            self.sender.set_state(Gst.State.NULL)
        if self.plot:
            self.redraw()
            if self.args.png:
                self.plot[0].savefig(self.args.png, dpi=90)
        print(f"done: {len(self.t)} stats lines")
        return 0 if self.t else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, metavar="PORT")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--no-plot", dest="plot", action="store_false")
    ap.add_argument("--png")
    return Watch(ap.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
