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
receiver's stalls from a second before the outage to 3 s after it add up
to at least the outage less half a second and at most the outage plus
RESUME_S, and frames flow after it to the end.
RESUME_TEST_OUT=DIR keeps the sender's and the receiver's logs there."""
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
    log = json.load(open(f"{out}/receiver.csv.gaps.json"))

# CLOCK_MONOTONIC all (the namespaces share it), netsim's schedule from
# within tens of ms of "start". Every stall from a second before the
# outage to 3 s after it, summed: a stall split by a few frames counts
# whole, and a second stop after the first resume counts too.
lo, hi = start + OUTAGE_AT - 1.0, start + OUTAGE_AT + OUTAGE_S + 3.0
around = [(a, b) for a, b in log["gaps"] if b > lo and a < hi]
stalled = sum(min(b, hi) - max(a, lo) for a, b in around)
print(f"TCP {stats.get('congestion_control_a')}; stalls around the outage "
      f"{[(round(a - start, 2), round(b - a, 2)) for a, b in around]}")
f.check(OUTAGE_S - 0.5 <= stalled <= OUTAGE_S + RESUME_S,
        f"the receiver stalled {stalled:.2f} s around the {OUTAGE_S:g} s "
        f"outage (at least {OUTAGE_S - 0.5:g}: the outage happened; at "
        f"most {OUTAGE_S + RESUME_S:g})")
later = [b - a for a, b in log["gaps"] if a >= hi]
last = (log["last_buffer"] or 0) - start
f.check(last >= DURATION - 4 and max(later, default=0) < 1.0,
        f"frames flow after the outage to the end (the last at {last:.1f} s, "
        f"the longest stall after it {max(later, default=0):.2f} s)")
f.exit()
