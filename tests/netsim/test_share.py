#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 28's short test of connection-control=share from ParS's count
(connections=0) when the path is shared or full, bbr at both ends, a
4 Mbit/s x264 stream at a 1 s budget:

- shared: a 10 Mbit/s link (40 ms RTT) that twelve bbr iperf3 flows fill
  from before the stream starts. ParS's count for a bbr sink is one
  connection, which gets about a flow's share (0.8 Mbit/s). On a 20 Mbit/s
  link (share 1.5) one bbr connection at times took 3.8 of the stream's 4
  Mbit/s and nothing was tried in 18 s (once in the project's CI; next to
  eight flows before that); the source puts one more on trial while the
  sink holds stream back (kept when what arrived rose: the benchmark's
  figure, as its outcome turns on the flows' luck);
- full: a 3 Mbit/s link and no one else. A connection more brings
  nothing there; the source tries one, gives it back, and ends with one.

The late fraction against bulk flows is a benchmark figure
(`compare.py --grid share`, docs/network-friendly.md), not asserted here."""
import csv
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
DURATION = 20

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "x264enc", "h264parse"),
                   "the share test", BUILD)

f = nstest.Failures()
sender = ("videotestsrc is-live=true pattern=snow ! video/x-raw,width=640,"
          "height=360,framerate=30/1 ! x264enc bitrate=4000 "
          "tune=zerolatency key-int-max=30 speed-preset=ultrafast ! "
          "h264parse ! multitcpsink host=0.0.0.0 port=5600")
receiver = ("multitcpsrc host=$NETSIM_ADDR_A port=5600 latency=1000 "
            "connection-control=share stats-interval=500 ! "
            "fakesink name=sink sync=false")


def run(link, bulk_flows):
    """The receiver's stats rows (once a second) over @link, with
    @bulk_flows bbr iperf3 flows from A to B started 3 s before."""
    env = f"GST_PLUGIN_PATH={BUILD}/gst"
    with tempfile.TemporaryDirectory() as out:
        bulk = ""
        if bulk_flows:
            bulk = ("ip netns exec $NETSIM_NS_B iperf3 -s -1 -D -B "
                    "$NETSIM_ADDR_B --logfile /dev/null; sleep 0.3; "
                    "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B "
                    f"-t {DURATION + 5} -P {bulk_flows} -C bbr "
                    "> /dev/null & sleep 3; ")
        script = (
            bulk +
            f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 "
            f"{HERE}/sender_log.py \"{sender}\" {out}/sender.jsonl "
            f"{DURATION} & sleep 1; ip netns exec $NETSIM_NS_B env {env} "
            f"/usr/bin/python3 {HERE}/receiver_log.py \"{receiver}\" "
            f"{out}/receiver.csv {DURATION - 2}; wait")
        _, stats = nstest.run([link], script, cc="bbr", timeout=120)
        rows = list(csv.DictReader(open(f"{out}/receiver.csv")))
    print(f"TCP {stats.get('congestion_control_a')}; {link}, "
          f"{bulk_flows} bulk flows: connections "
          f"{[r.get('n-connections') for r in rows]}")
    return rows


def counts(rows, field):
    return [int(float(r[field])) for r in rows if r.get(field)]


shared = run("rate=10mbit,delay=20ms,queue=100p", 12)
ready = counts(shared, "n-connections")
# whether the trial is kept depends on the bulk flows' luck over its 1.5 s
# (kept in 5 of 6 grid runs, docs/control.md; once in CI it rose less than
# 15% and went back): asserted is that one is tried while held back
after_one = ready[ready.index(1):] if 1 in ready else []
f.check(len(ready) > 5 and max(after_one, default=0) >= 2,
        f"next to 12 bbr flows one more connection is tried ({ready})")

full = run("rate=3mbit,delay=20ms,queue=100p", 0)
wanted = counts(full, "wanted-connections")
ready = counts(full, "n-connections")
# from ParS's count (1 for a bbr sink; the session opens with 5)
after_pars = wanted[wanted.index(1):] if 1 in wanted else []
tried = after_pars.index(2) if 2 in after_pars else None
f.check(tried is not None,
        f"on a full path one more is tried (wanted {after_pars})")
f.check(tried is not None and 1 in after_pars[tried:] and
        max(after_pars) == 2,
        f"and given back, no third asked for (wanted {after_pars})")
# two trials of about 3 s each fit in the run
on_trial = [n for n in ready[ready.index(1):] if n > 1] if 1 in ready else []
f.check(1 in ready and len(on_trial) <= 7,
        f"the session runs on one connection but for the trials "
        f"(connections {ready})")
f.exit()
