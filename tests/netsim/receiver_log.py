#!/usr/bin/python3
"""Runs a receiver pipeline for a while and logs once a second to CSV:
every numeric field of multitcpsrc-stats messages (if the pipeline has a
multitcpsrc with stats-interval set), plus what any receiver has: bytes and
buffers that reached the element named "sink" (or the last sink), and
playback stalls (no buffer for longer than 2 frame intervals after the first).

  receiver_log.py PIPELINE CSV SECONDS
"""
import csv
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

STALL_GAP = 0.2   # seconds without a buffer that count as a stall


def main():
    desc, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    Gst.init(None)
    pipe = Gst.parse_launch(desc)
    sink = pipe.get_by_name("sink")
    if sink is None:
        sinks = [e for e in pipe.iterate_sinks()]
        sink = sinks[0]
    t0 = time.monotonic()
    state = {"bytes": 0, "buffers": 0, "last": None, "stalls": 0,
             "stall_time": 0.0, "stats": {}, "error": ""}

    def probe(pad, info):
        now = time.monotonic()
        if state["last"] is not None and now - state["last"] > STALL_GAP:
            state["stalls"] += 1
            state["stall_time"] += now - state["last"]
        state["last"] = now
        state["bytes"] += info.get_buffer().get_size()
        state["buffers"] += 1
        return Gst.PadProbeReturn.OK

    sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, probe)

    out = open(path, "w", newline="")
    writer = None
    last_bytes = [0]

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s and s.get_name() == "multitcpsrc-stats":
                for i in range(s.n_fields()):
                    name = s.nth_field_name(i)
                    v = s.get_value(name)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        state["stats"][name] = v
        elif msg.type == Gst.MessageType.ERROR:
            state["error"] = msg.parse_error()[0].message
            print("receiver error:", state["error"], file=sys.stderr)
        return True

    def tick():
        nonlocal writer
        now = time.monotonic()
        row = {"time": round(now - t0, 3),
               "delivered_bps": (state["bytes"] - last_bytes[0]) * 8,
               "buffers": state["buffers"], "bytes": state["bytes"],
               "stalls": state["stalls"],
               "stall_time": round(state["stall_time"], 3)}
        last_bytes[0] = state["bytes"]
        row.update(state["stats"])
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(row.keys()),
                                    extrasaction="ignore")
            writer.writeheader()
        writer.writerow(row)
        out.flush()
        if now - t0 >= seconds:
            loop.quit()
            return False
        return True

    loop = GLib.MainLoop()
    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    pipe.set_state(Gst.State.PLAYING)
    GLib.timeout_add(1000, tick)
    loop.run()
    pipe.set_state(Gst.State.NULL)
    out.close()


if __name__ == "__main__":
    main()
