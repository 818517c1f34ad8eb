#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs a receiver pipeline for a while and logs once a second to CSV:
every numeric top-level field of multitcpsrc-stats messages (if the
pipeline has a multitcpsrc with stats-interval set), whatever their names,
plus what any receiver has: bytes and buffers that reached the element named
"sink" (or the first sink), and playback stalls (no buffer for longer than
STALL_GAP after the first). Every such gap is also written, in
CLOCK_MONOTONIC seconds (the clock the runner stamps its actions with), to
CSV with the suffix .gaps.json.

  receiver_log.py PIPELINE CSV SECONDS

The CSV is rewritten every second with a column for every field seen so
far, so a field that first shows up late is not lost.
"""
import csv
import json
import os
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

STALL_GAP = 0.2   # seconds without a buffer that count as a stall
STATS_NAME = "multitcpsrc-stats"


def numeric_fields(structure):
    """The top-level int and float fields of a GstStructure (not bools)."""
    fields = {}
    for i in range(structure.n_fields()):
        name = structure.nth_field_name(i)
        value = structure.get_value(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            fields[name] = value
    return fields


class CsvLog:
    """Rows of varying keys, written out as one CSV with all the columns."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        self.columns = []

    def add(self, row):
        self.rows.append(row)
        for key in row:
            if key not in self.columns:
                self.columns.append(key)
        tmp = self.path + ".tmp"
        with open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns)
            writer.writeheader()
            writer.writerows(self.rows)
        os.replace(tmp, self.path)


def main():
    desc, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    Gst.init(None)
    pipe = Gst.parse_launch(desc)
    sink = pipe.get_by_name("sink")
    if sink is None:
        sink = next(iter(pipe.iterate_sinks()))
    t0 = time.monotonic()
    state = {"bytes": 0, "buffers": 0, "last": None, "stalls": 0,
             "stall_time": 0.0, "stats": {}, "stats_messages": 0,
             "error": "", "gaps": [], "first": None}

    def probe(pad, info):
        now = time.monotonic()
        if state["last"] is not None and now - state["last"] > STALL_GAP:
            state["stalls"] += 1
            state["stall_time"] += now - state["last"]
            state["gaps"].append([state["last"], now])
        if state["first"] is None:
            state["first"] = now
        state["last"] = now
        state["bytes"] += info.get_buffer().get_size()
        state["buffers"] += 1
        return Gst.PadProbeReturn.OK

    sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, probe)
    log = CsvLog(path)
    last_bytes = [0]

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s and s.get_name() == STATS_NAME:
                state["stats"].update(numeric_fields(s))
                state["stats_messages"] += 1
        elif msg.type == Gst.MessageType.ERROR:
            state["error"] = msg.parse_error()[0].message
            print("receiver error:", state["error"], file=sys.stderr)
        return True

    def tick():
        now = time.monotonic()
        row = {"time": round(now - t0, 3),
               "delivered_bps": (state["bytes"] - last_bytes[0]) * 8,
               "buffers": state["buffers"], "bytes": state["bytes"],
               "stalls": state["stalls"],
               "stall_time": round(state["stall_time"], 3),
               "stats_messages": state["stats_messages"]}
        last_bytes[0] = state["bytes"]
        # the latest value of each stats field (they repeat when no
        # message came in the last second)
        row.update(state["stats"])
        log.add(row)
        with open(path + ".gaps.json", "w") as f:
            json.dump({"first_buffer": state["first"],
                       "last_buffer": state["last"],
                       "gaps": state["gaps"], "error": state["error"]}, f)
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


if __name__ == "__main__":
    main()
