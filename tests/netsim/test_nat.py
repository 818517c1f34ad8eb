#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 25 on netsim: the camera behind NAT dials out. The link towards A
drops every TCP SYN (netsim's nat=1: nobody can dial A, as behind NAT or
carrier-grade NAT), so a receiver in B cannot reach a sender in A; with
multitcpsrc mode=listener in B and multitcpsink mode=caller in A the
stream flows, over the three connections the receiver asks for. Then the
path goes dark for 3 s: the stream is back after it, nothing lost but what
the outage and the latency hold (frames due within the outage), on time
again within 2 s of the path coming back, three connections again.

What the viewer lost is what the receiver gave up at a deadline
(buffers-skipped) and what the sender skipped for it
(buffers-sender-dropped). A frame that comes after its deadline was given
up there, so it is among those already; buffers-late counts such
arrivals, which after an outage include TCP's retransmissions of frames
written before it, and is printed, not judged."""
import csv
import json
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
DURATION = 20
DARK_AT, DARK_S = 10.0, 3.0
FPS, LATENCY_S = 30, 1.0

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "x264enc", "h264parse"),
                   "the NAT test", BUILD)

f = nstest.Failures()
# from B, a connection to a listener in A: never answered
probe = ("import socket, sys\n"
         "s = socket.socket()\n"
         "s.settimeout(2)\n"
         "try:\n"
         "    s.connect((sys.argv[1], 5700)); print('inbound: connected')\n"
         "except OSError as e:\n"
         "    print('inbound: failed', type(e).__name__)\n")
listen = ("import socket, time\n"
          "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
          "socket.SO_REUSEADDR, 1)\n"
          "s.bind(('0.0.0.0', 5700)); s.listen(); time.sleep(3)\n")
sender = ("videotestsrc is-live=true ! video/x-raw,width=320,height=240,"
          "framerate=30/1 ! x264enc bitrate=1000 tune=zerolatency "
          "key-int-max=30 speed-preset=ultrafast ! h264parse "
          "config-interval=-1 ! multitcpsink name=sink mode=caller "
          "host=$NETSIM_ADDR_B port=5600")
receiver = ("multitcpsrc mode=listener host=0.0.0.0 port=5600 latency=1000 "
            "connections=3 stats-interval=500 ! fakesink name=sink "
            "sync=false")
with tempfile.TemporaryDirectory() as out:
    env = f"GST_PLUGIN_PATH={BUILD}/gst"
    with open(f"{out}/probe.py", "w") as p:
        p.write(probe)
    with open(f"{out}/listen.py", "w") as p:
        p.write(listen)
    script = (
        f"/usr/bin/python3 -c 'import time; print(\"start\", "
        f"time.monotonic())'; "
        f"ip netns exec $NETSIM_NS_A /usr/bin/python3 {out}/listen.py & "
        f"sleep 0.5; ip netns exec $NETSIM_NS_B /usr/bin/python3 "
        f"{out}/probe.py $NETSIM_ADDR_A; wait; "
        f"/usr/bin/python3 -c 'import time; print(\"rx\", "
        f"time.monotonic())'; "
        f"ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 "
        f"{HERE}/receiver_log.py \"{receiver}\" {out}/receiver.csv "
        f"{DURATION - 4} & "
        f"sleep 1; ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 "
        f"{HERE}/sender_log.py \"{sender}\" {out}/sender.jsonl "
        f"{DURATION - 4}; wait")
    stdout, stats = nstest.run(
        ["rate=8mbit,delay=20ms,queue=100p/rate=8mbit,delay=20ms,queue=100p,"
         "nat=1"], script, cc="cubic",
        schedule=f"at={DARK_AT} blackout={DARK_S}\n", timeout=120)
    start = float(stdout.split("start", 1)[1].split()[0])
    # the receiver log's times count from its start
    rx0 = float(stdout.split("rx", 1)[1].split()[0])
    recv = list(csv.DictReader(open(f"{out}/receiver.csv")))
    sent = [json.loads(line) for line in open(f"{out}/sender.jsonl")]

print(stdout.strip())
ba = stats["links"][0]["ba"]
f.check("inbound: failed" in stdout and ba["dropped_syn"] > 0,
        f"nobody can dial into A ({ba['dropped_syn']} SYNs dropped)")


def col(row, name):
    v = row.get(name)
    return float(v) if v not in (None, "") else 0.0


rows = [r for r in recv if r.get("time")]
f.check(len(rows) > 5, f"the receiver logged {len(rows)} seconds")
end = float(rows[-1]["time"]) if rows else 0
dark_end = start + DARK_AT + DARK_S - rx0
pushed_at_dark_end = max((col(r, "buffers-pushed") for r in rows
                          if float(r["time"]) <= dark_end), default=0)
pushed = col(rows[-1], "buffers-pushed") if rows else 0


def given_up(row):
    return col(row, "buffers-skipped") + col(row, "buffers-sender-dropped")


lost = given_up(rows[-1]) if rows else 0
belated = col(rows[-1], "buffers-late") if rows else 0
# from the first stats row 2 s after the path came back to the end
tail = [r for r in rows if float(r["time"]) >= dark_end + 2]
tail_lost = given_up(tail[-1]) - given_up(tail[0]) if tail else None
held = (DARK_S + LATENCY_S) * FPS
print(f"receiver: {pushed:.0f} frames pushed ({pushed_at_dark_end:.0f} when "
      f"the path came back), {lost:.0f} given up ({belated:.0f} arrivals "
      f"after their deadline), "
      f"{col(rows[-1], 'n-connections') if rows else 0:.0f} connections at "
      f"the end; sink: {sent[-1].get('dials') if sent else '-'} dials, "
      f"{sent[-1].get('outage-probes') if sent else '-'} of them outage "
      f"probes")
f.check(pushed_at_dark_end > 3 * FPS, "the stream flowed before the outage "
        f"({pushed_at_dark_end:.0f} frames)")
f.check(pushed - pushed_at_dark_end > (end - dark_end - 2) * FPS * 0.9,
        f"and after it ({pushed - pushed_at_dark_end:.0f} frames in "
        f"{end - dark_end:.1f} s)")
f.check(lost <= held, f"lost only what the outage held ({lost:.0f} skipped "
        f"or dropped for the receiver, at most {held:.0f})")
f.check(len(tail) >= 3 and tail_lost == 0,
        f"on time again within 2 s: nothing given up from "
        f"{float(tail[0]['time']) - dark_end if tail else 0:.1f} s after the "
        f"path came back to the end ({len(tail)} rows, +{tail_lost})")
f.check(rows and col(rows[-1], "n-connections") == 3,
        "three connections at the end")
f.exit()
