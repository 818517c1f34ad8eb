#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 26 on netsim: a camera bonds two modems. Two links between the
namespaces (4 Mbit/s, 30 and 60 ms RTT); in A each link's device has a
default route of its own, as each modem would, and multitcpsink
mode=caller interfaces=nsa0,nsa1 dials the receiver in B over both
(SO_BINDTODEVICE, no source rules). A 2.5 Mbit/s stream, less than either
link alone. Link 1 goes dark for 5 s in the middle: no frame is lost
because it went away (the other link carries the stream meanwhile, and
what the dark link held is sent again there), and link 1 carries the
stream again within 3 s of its return."""
import csv
import json
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
DURATION = 26
CUT_AT, CUT_S = 10.0, 5.0
BACK_WITHIN = 3.0

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "x264enc", "h264parse"),
                   "the bonding test", BUILD)

f = nstest.Failures()
sender = ("videotestsrc is-live=true pattern=snow ! video/x-raw,width=640,"
          "height=360,framerate=30/1 ! x264enc name=enc bitrate=2500 "
          "pass=cbr tune=zerolatency key-int-max=30 speed-preset=ultrafast "
          "! h264parse config-interval=-1 ! multitcpsink name=sink "
          "mode=caller host=$NETSIM_ADDR_B port=5600 interfaces=nsa0,nsa1")
receiver = ("multitcpsrc mode=listener host=0.0.0.0 port=5600 latency=1000 "
            "connections=4 stats-interval=500 ! fakesink name=sink "
            "sync=false")
with tempfile.TemporaryDirectory() as out:
    env = f"GST_PLUGIN_PATH={BUILD}/gst"
    script = (
        # each modem has a route of its own, as a camera's would
        "ip netns exec $NETSIM_NS_A ip route add default dev nsa0 "
        "metric 100; "
        "ip netns exec $NETSIM_NS_A ip route add default dev nsa1 "
        "metric 200; "
        f"/usr/bin/python3 -c 'import time; print(\"start\", "
        f"time.monotonic())'; "
        f"ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 "
        f"{HERE}/receiver_log.py \"{receiver}\" {out}/receiver.csv "
        f"{DURATION - 2} & "
        f"/usr/bin/python3 -c 'import time; print(\"rx\", "
        f"time.monotonic())'; "
        f"sleep 0.5; ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 "
        f"{HERE}/sender_log.py \"{sender}\" {out}/sender.jsonl "
        f"{DURATION - 3}; wait")
    stdout, stats = nstest.run(
        ["rate=4mbit,delay=15ms,queue=60p", "rate=4mbit,delay=30ms,queue=60p"],
        script, cc="cubic",
        schedule=f"at={CUT_AT} link=1 blackout={CUT_S}\n", timeout=120)
    start = float(stdout.split("start", 1)[1].split()[0])
    rx0 = float(stdout.split("rx", 1)[1].split()[0])
    recv = list(csv.DictReader(open(f"{out}/receiver.csv")))
    sent = [json.loads(line) for line in open(f"{out}/sender.jsonl")]

print(stdout.strip())


def col(row, name):
    v = row.get(name)
    return float(v) if v not in (None, "") else 0.0


def sent_at(t, field):
    """@field of the sink's stats at start + @t (the last row before)"""
    rows = [r for r in sent if r["t"] - start <= t]
    return rows[-1].get(field, 0) if rows else 0


fwd = [link["ab"]["forwarded_bytes"] for link in stats["links"]]
rows = [r for r in recv if r.get("time")]
f.check(len(rows) > 10, f"the receiver logged {len(rows)} rows")
lost = (col(rows[-1], "buffers-late") + col(rows[-1], "buffers-skipped")
        if rows else -1)
pushed = col(rows[-1], "buffers-pushed") if rows else 0
before = [sent_at(CUT_AT, f"path{k}_bytes-sent") - sent_at(4, f"path{k}_"
          "bytes-sent") for k in (0, 1)]
back = CUT_AT + CUT_S
after = (sent_at(back + BACK_WITHIN, "path1_bytes-sent") -
         sent_at(back, "path1_bytes-sent"))
print(f"links forwarded {fwd[0] / 1e6:.1f} and {fwd[1] / 1e6:.1f} MB; "
      f"before the cut the uplinks sent {before[0] / 1e3:.0f} and "
      f"{before[1] / 1e3:.0f} kB; link 1 sent {after / 1e3:.0f} kB in the "
      f"{BACK_WITHIN:.0f} s after its return; receiver: {pushed:.0f} frames "
      f"pushed, {lost:.0f} late or skipped; sink: "
      f"{sent[-1].get('dials') if sent else '-'} dials, states "
      f"{sent_at(CUT_AT + CUT_S - 0.5, 'path1_state')} in the cut, "
      f"{sent[-1].get('path1_state') if sent else '-'} at the end")
f.check(min(before) > 0, "both uplinks carry the stream before the cut")
f.check(sent_at(CUT_AT + CUT_S - 0.5, "path1_state") in ("dark", "down",
                                                         "dialing"),
        "the sink saw uplink 1 go")
f.check(lost == 0, f"no frame lost because a link went away ({lost:.0f} late "
        "or skipped)")
f.check(pushed > (DURATION - 6) * 30 * 0.9, f"the stream flowed ({pushed:.0f} "
        "frames)")
f.check(after > 20e3, f"link 1 back in use within {BACK_WITHIN:.0f} s of its "
        f"return ({after / 1e3:.0f} kB)")
f.exit()
