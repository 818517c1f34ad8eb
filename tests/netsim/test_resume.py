#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 24, after an outage with a long GOP: a 2 Mbit/s x264 stream with
x264enc's own GOP (250 frames) into multitcpsink with
bitrate-control=encoder over a 4 Mbit/s link (40 ms RTT) that goes dark
for OUTAGE_S at OUTAGE_AT, a receiver with a 1 s latency, bbr at both
ends. The frames made in the outage's last second are still due when the
path returns; the session can resume with them only if one of them is a
keyframe, so the sink asks for one every half second while the path is
dark. Before stop 45 it asked only once the session had skipped, and the
receiver's playback stopped for the outage and 1.4 s more. Checked: the
receiver's longest stall around the outage is at most the outage plus
RESUME_S, and frames flow after it.
RESUME_TEST_OUT=DIR keeps the sender's and the receiver's logs there."""
import csv
import json
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
OUTAGE_AT = 10.0
OUTAGE_S = 3.0
# a stall this much longer than the outage: the frames due after it lost
# (0.25 s in 3 runs of 3 at stop 45; 1.39-1.41 s before it, 2 runs)
RESUME_S = 0.8
DURATION = 22

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "x264enc", "h264parse"),
                   "the outage test", BUILD)

f = nstest.Failures()
sender = ("videotestsrc is-live=true pattern=ball ! video/x-raw,width=640,"
          "height=360,framerate=30/1 ! x264enc name=enc bitrate=2000 "
          "tune=zerolatency speed-preset=ultrafast ! h264parse ! "
          "multitcpsink name=sink host=0.0.0.0 port=5600 "
          "bitrate-control=encoder")
receiver = ("multitcpsrc host=$NETSIM_ADDR_A port=5600 latency=1000 "
            "stats-interval=500 ! fakesink name=sink sync=false")
keep = os.environ.get("RESUME_TEST_OUT")
with tempfile.TemporaryDirectory() as tmp:
    out = keep or tmp
    os.makedirs(out, exist_ok=True)
    script = nstest.sender_then_receiver(BUILD, sender, receiver, out,
                                         DURATION)
    stdout, stats = nstest.run(
        ["rate=4mbit,delay=20ms,queue=100p"], script, cc="bbr",
        schedule=f"at={OUTAGE_AT} blackout={OUTAGE_S}\n", timeout=120)
    start = float(stdout.split("start", 1)[1].split()[0])
    recv = list(csv.DictReader(open(f"{out}/receiver.csv")))
    gaps = json.load(open(f"{out}/receiver.csv.gaps.json"))["gaps"]

# netsim's schedule counts from a little after the script's start: the
# window is generous on both sides, the stall measured is the longest in it
lo, hi = start + OUTAGE_AT - 1.0, start + OUTAGE_AT + OUTAGE_S + 3.0
around = [(a, b) for a, b in gaps if b > lo and a < hi]
longest = max((b - a for a, b in around), default=0.0)
print(f"TCP {stats.get('congestion_control_a')}; stalls around the outage "
      f"{[(round(a - start, 2), round(b - a, 2)) for a, b in around]}")
f.check(0 < longest <= OUTAGE_S + RESUME_S,
        f"the longest stall around the {OUTAGE_S:g} s outage is "
        f"{longest:.2f} s (at most {OUTAGE_S + RESUME_S:g})")
# the receiver's clock starts a second after the sender's
buffers = [(float(r["time"]) + 1, float(r.get("buffers") or 0)) for r in recv
           if r.get("time")]
after = [n for t, n in buffers if t >= OUTAGE_AT + OUTAGE_S + 4]
f.check(len(after) >= 2 and after[-1] > after[0],
        f"frames flow after the outage ({after[:1]} -> {after[-1:]})")
f.exit()
