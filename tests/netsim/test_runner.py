#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The scenario runner end to end without multitcp: tests/scenarios/
netsim-selftest.json streams raw audio over tcpserversink/tcpclientsrc
through netsim with iperf3 cross traffic; the receiver's CSV, the summary,
the plot and netsim's counters must come out and make sense. Also checks
the receiver logger's handling of multitcpsrc-stats fields."""
import csv
import json
import os
import subprocess
import sys
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "netsim-selftest.json")

nstest.require_namespaces()
nstest.require_gst(("tcpserversink", "tcpclientsrc", "audiotestsrc"),
                   "the runner test")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, HERE)
import receiver_log  # noqa: E402

f = nstest.Failures()

# every numeric top-level field, whatever its name; nothing else
s = Gst.Structure.new_from_string(
    "multitcpsrc-stats, bitrate=(guint64)800000, late-fraction=(double)0.25, "
    "n-connections=(int)3, session=(string)abc, active=(boolean)true")
fields = receiver_log.numeric_fields(s)
f.check(fields == {"bitrate": 800000, "late-fraction": 0.25,
                   "n-connections": 3},
        f"numeric fields of a stats message: {fields}")

with tempfile.TemporaryDirectory() as out:
    # a column that first appears in a later row is kept
    log = receiver_log.CsvLog(os.path.join(out, "late.csv"))
    log.add({"time": 1, "bytes": 10})
    log.add({"time": 2, "bytes": 20, "bitrate": 5})
    rows = list(csv.DictReader(open(os.path.join(out, "late.csv"))))
    f.check(len(rows) == 2 and rows[1]["bitrate"] == "5" and
            rows[0]["bitrate"] == "", "a field first seen late gets a column")

    r = subprocess.run([os.path.join(HERE, "run-scenario"), SCENARIO,
                        "--out", out], capture_output=True, text=True,
                       timeout=120)
    sys.stderr.write(r.stderr[-3000:])
    f.check(r.returncode == 0, f"run-scenario exits 0 ({r.returncode})")
    rows = list(csv.DictReader(open(os.path.join(out, "receiver.csv"))))
    summary = json.load(open(os.path.join(out, "summary.json")))
    print(json.dumps(summary["phases"]))
    f.check(len(rows) >= 11, f"{len(rows)} CSV rows, one a second for 12 s")
    phases = {p["phase"]: p["of_target"] for p in summary["phases"]}
    f.check(0.9 <= phases.get("quiet", 0) <= 1.1,
            f"quiet: the stream arrives at its rate ({phases.get('quiet')})")
    f.check(phases.get("udp burst", 1) < 0.8,
            f"UDP burst: the stream is squeezed ({phases.get('udp burst')})")
    f.check(summary.get("cc_a") == "reno" and summary.get("cc_b") == "reno",
            f"congestion control reported: {summary.get('cc_a')}, "
            f"{summary.get('cc_b')}")
    f.check(summary.get("netsim_valid") is True, "netsim run valid")
    f.check(summary["links"][0]["ab"]["dropped_queue"] > 0,
            "the cross traffic overflowed the bottleneck queue")
    png = os.path.join(out, "timeseries.png")
    f.check(os.path.exists(png) and os.path.getsize(png) > 10000,
            "timeseries.png drawn")
f.exit()
