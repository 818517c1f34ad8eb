#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 24's short test: a 4 Mbit/s x264 stream into multitcpsink with
bitrate-control=encoder over a link of 8 Mbit/s (40 ms RTT) that drops to
2 Mbit/s at 10 s (the stream starts at min-bitrate and climbs first),
bbr at both ends: the encoder's bitrate goes below
2 Mbit/s within 2 s of the drop, and the receiver's late count stops
growing (nothing skipped or late in the last 8 s of the run).
BITRATE_TEST_CC=cubic runs it with cubic at both ends (the late count went
on growing there until stop 40: cubic's window, grown into the link's
queue, read as room; docs/bitrate.md)."""
import csv
import json
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
DROP_AT = 10.0
DURATION = 24

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "x264enc", "h264parse"),
                   "the bitrate test", BUILD)

f = nstest.Failures()
sender = ("videotestsrc is-live=true pattern=snow ! video/x-raw,width=640,"
          "height=360,framerate=30/1 ! x264enc name=enc bitrate=4000 "
          "tune=zerolatency key-int-max=30 speed-preset=ultrafast ! "
          "h264parse ! multitcpsink name=sink host=0.0.0.0 port=5600 "
          "bitrate-control=encoder")
# BITRATE_TEST_CC=cubic: that congestion control in both namespaces and at
# the sink (by default bbr in the namespaces, and the sink's own default)
cc = os.environ.get("BITRATE_TEST_CC")
if cc:
    sender += f" congestion-control={cc}"
receiver = ("multitcpsrc host=$NETSIM_ADDR_A port=5600 latency=1000 "
            "stats-interval=500 ! fakesink name=sink sync=false")
# BITRATE_TEST_OUT=DIR keeps the sender's and the receiver's logs there
keep = os.environ.get("BITRATE_TEST_OUT")
with tempfile.TemporaryDirectory() as tmp:
    out = keep or tmp
    os.makedirs(out, exist_ok=True)
    script = nstest.sender_then_receiver(BUILD, sender, receiver, out,
                                         DURATION)
    stdout, stats = nstest.run(
        ["rate=8mbit,delay=20ms,queue=100p"], script, cc=cc or "bbr",
        schedule=f"at={DROP_AT} dir=ab rate=2mbit\n", timeout=120)
    start = float(stdout.split("start", 1)[1].split()[0])
    rows = [json.loads(line) for line in open(f"{out}/sender.jsonl")]
    recv = list(csv.DictReader(open(f"{out}/receiver.csv")))

drop = start + DROP_AT
before = [r for r in rows if drop - 3 <= r["t"] < drop]
after = [r for r in rows if r["t"] >= drop and r["enc_bitrate"] < 2000]
print(f"TCP {stats.get('congestion_control_a')}; encoder before the drop "
      f"{[r['enc_bitrate'] for r in before][-5:]} kbit/s, estimate "
      f"{[r.get('estimated-bitrate') for r in before][-3:]}")
# the drop is what brings it below 2000, not the start
f.check(len(before) > 0 and min(r["enc_bitrate"] for r in before) >= 2000,
        "in the 3 s before the drop the encoder stays at 2000 kbit/s or more "
        f"({min((r['enc_bitrate'] for r in before), default=0)})")
took = after[0]["t"] - drop if after else None
f.check(took is not None and took <= 2.0,
        f"below 2000 kbit/s {took if took is None else round(took, 2)} s "
        f"after the drop ({after[0]['enc_bitrate'] if after else '-'} kbit/s)")
# what the viewer misses (frames given up: skipped) and belated copies of
# them (late: each given-up frame counts there once, stop 31)
late = [(float(r["time"]), float(r.get("buffers-late") or 0) +
         float(r.get("buffers-skipped") or 0)) for r in recv if r.get("time")]
end_t = late[-1][0] if late else 0
tail = [v for t, v in late if t >= end_t - 8]
grew = tail[-1] - tail[0] if tail else None
print(f"receiver: late or skipped {late[-1][1] if late else '-'} at the "
      f"end; over the last 8 s +{grew}")
f.check(grew == 0, f"late or skipped stops growing (+{grew} in the last 8 s)")
f.exit()
