#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs a sender pipeline for a while and logs every 100 ms, with the
CLOCK_MONOTONIC time: the bitrate property of the element named "enc" (if
any) and the numeric top-level fields of the element named "sink"'s stats
(multitcpsink: estimated-bitrate, encoder-bitrate, ...), and of each
uplink in its "paths" (path0_bytes-sent, path0_state, ...). One JSON
object a line, to OUT.

  sender_log.py PIPELINE OUT SECONDS
"""
import json
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def main():
    desc, out_path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    Gst.init(None)
    pipeline = Gst.parse_launch(desc)
    enc = pipeline.get_by_name("enc")
    sink = pipeline.get_by_name("sink")
    out = open(out_path, "w")
    loop = GLib.MainLoop()

    def log():
        row = {"t": time.monotonic()}
        if enc is not None:
            row["enc_bitrate"] = enc.get_property("bitrate")
        if sink is not None:
            st = sink.get_property("stats")
            for i in range(st.n_fields()):
                name = st.nth_field_name(i)
                v = st.get_value(name)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    row[name] = v
            # a calling sink's uplinks: path<k>_<field> for their numbers
            if st.has_field("paths"):
                for k, ps in enumerate(st.get_value("paths") or []):
                    for j in range(ps.n_fields()):
                        name = ps.nth_field_name(j)
                        v = ps.get_value(name)
                        if isinstance(v, (int, float)) and \
                                not isinstance(v, bool):
                            row[f"path{k}_{name}"] = v
                        elif name == "state":
                            row[f"path{k}_state"] = v
        out.write(json.dumps(row) + "\n")
        out.flush()
        return True

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            print(f"sender error: {err.message} ({dbg})", file=sys.stderr)
            loop.quit()

    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    pipeline.set_state(Gst.State.PLAYING)
    GLib.timeout_add(100, log)
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    pipeline.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main()
