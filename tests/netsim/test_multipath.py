#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Two uplinks, one session: multitcpsrc's local-addresses puts two of its
four connections on each of two netsim links (6 Mbit/s, 20 ms RTT and
3 Mbit/s, 80 ms RTT); a live 6 Mbit/s stream, more than the slow path and
all but the whole fast one, must arrive whole, the fast path carrying what
it can and the slow one the rest (a connection leaves a frame in the shared
queue for one that would deliver it sooner: a slow path filled to its
queue's brim loses packets, and frames wait there for the repair)."""
import json
import os
import subprocess
import sys
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
SCENARIO = os.path.join(TOP, "tests", "scenarios", "multipath.json")
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))

nstest.require_namespaces()
nstest.require_gst(("videotestsrc",), "the multipath test", BUILD)

f = nstest.Failures()
duration = 20
# raw grey frames: 160 x 120 bytes at 39 fps is 6.0 Mbit/s, cheap to make;
# the sink's default congestion control, named so that run-scenario does
# not give it the namespaces' cubic: bbr's two flows on the slow path's
# shallow queue are the case that lost frames before the faster path came
# first
sender = ("videotestsrc is-live=true pattern=snow ! video/x-raw,format=GRAY8,"
          "width=160,height=120,framerate=39/1 ! multitcpsink host=0.0.0.0 "
          "port=5600 congestion-control=bbr")
receiver = ("multitcpsrc host=$A port=5600 latency=1000 stats-interval=1000 "
            "connections=4 local-addresses=$NETSIM_ADDR_B0,$NETSIM_ADDR_B1 ! "
            "fakesink name=sink sync=false")
with tempfile.TemporaryDirectory() as out:
    r = subprocess.run(
        [os.path.join(HERE, "run-scenario"), SCENARIO, "--out", out,
         "--build", BUILD, "--set", f"duration={duration}",
         "--set", "cc=cubic", "--set", f"sender={sender}",
         "--set", f"receiver={receiver}",
         "--set", "target_bitrate=6000000",
         "--set", f"phases={json.dumps([['all', 5, duration]])}"],
        capture_output=True, text=True, timeout=180)
    sys.stderr.write(r.stderr[-3000:])
    f.check(r.returncode == 0, f"run-scenario exits 0 ({r.returncode})")
    summary = json.load(open(os.path.join(out, "summary.json")))
    netsim = json.load(open(os.path.join(out, "netsim.json")))

fwd = [link["ab"]["forwarded_bytes"] for link in netsim["links"]]
share = [b / max(sum(fwd), 1) for b in fwd]
pushed = summary.get("buffers-pushed", 0)
missed = summary.get("buffers-late", 0) + summary.get("buffers-skipped", 0)
rate = summary["phases"][0].get("of_target", 0) if summary["phases"] else 0
print(f"TCP {summary.get('cc_a')}/{summary.get('cc_b')}; bytes on path 0 "
      f"{fwd[0]}, path 1 {fwd[1]} (shares {share[0]:.2f}/{share[1]:.2f}, "
      f"capacity 0.67/0.33); {pushed} pushed, {missed} late or skipped; "
      f"{rate:.2f} of the stream's rate")
f.check(summary.get("netsim_valid") is True, "netsim run valid")
f.check(pushed >= 39 * (duration - 5), f"{pushed} buffers pushed")
f.check(missed == 0, f"no buffer late or skipped ({missed})")
f.check(rate >= 0.95, f"the stream's rate arrives ({rate:.2f} of it)")
# sooner first: the fast path carries most of what it can, the slow one
# the rest (the stream and its headers are more than the fast path alone)
fast_mbit, slow_mbit = (b * 8 / duration / 1e6 for b in fwd)
f.check(fast_mbit >= 0.75 * 6, f"the fast path carries most of what it can "
        f"({fast_mbit:.2f} Mbit/s of its 6)")
f.check(slow_mbit >= 0.1, f"the slow path carries the rest "
        f"({slow_mbit:.2f} Mbit/s)")
f.exit()
