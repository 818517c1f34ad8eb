#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The encoder's controller (gst/mtcpbitrate.c) over tests/bench/
bitrate_sim.py's fluid links, deterministic: a steady link is followed
near its rate with few changes and nothing late; a fall from 8 to 2
Mbit/s is followed within 2 s and nothing is late after it; an outage
takes the stream to min-bitrate and it climbs back within a few seconds;
a receiver with 2 s of latency gets quick steps (more delivered over a
cellular trace, as few changes on a steady link); the same trace gives
the same run.

  test_bitrate_sim.py BUILD_DIR"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "netsim")]
import bitrate_sim  # noqa: E402
import cellular  # noqa: E402
import nstest  # noqa: E402

f = nstest.Failures()
check = f.check
lib = bitrate_sim.load(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(HERE, "..", "..", "build"))


def mean_between(series, a, b):
    """Time-weighted mean of the encoder's bitrate over [a, b) s."""
    pts = [(t, bps) for t, _, _, bps in series if a <= t < b]
    return sum(bps for _, bps in pts) / max(len(pts), 1)


# a steady 3 Mbit/s link: near its rate, few changes, nothing late;
# careful steps at the level it refuses (quick steps there made 116 a
# minute in the model and 126 on a netsim 2 Mbit/s link, stop 62)
r = bitrate_sim.run(lib, bitrate_sim.steady_trace(3.0), 1.0)
m = mean_between(r["series"], 20, 64)
check(1.8 <= m <= 3.0, f"steady 3 Mbit/s: the encoder at {m:.2f} Mbit/s "
      "on average from 20 s")
check(r["late"] == 0, f"steady 3 Mbit/s: {r['late']} frames late")
check(r["changes_per_min"] <= 45,
      f"steady 3 Mbit/s: {r['changes_per_min']:.0f} changes a minute")

# 8 Mbit/s, then 2 from 20 s (a 4 Mbit/s encoder): below 2 within 2 s
r = bitrate_sim.run(lib, bitrate_sim.steady_trace(8.0, changes=[(20, 2.0)]),
                    1.0)
below = [t for t, _, _, bps in r["series"] if t >= 20 and bps < 2.0]
check(below and below[0] - 20 <= 2.0,
      f"8 -> 2 Mbit/s: below 2 Mbit/s "
      f"{round(below[0] - 20, 2) if below else '-'} s after the fall")
before = mean_between(r["series"], 15, 20)
check(before >= 3.0, f"8 Mbit/s: the encoder at {before:.2f} Mbit/s before "
      "the fall")
check(r["late"] == 0, f"8 -> 2 Mbit/s: {r['late']} frames late")

# 3 Mbit/s dark from 20 to 23 s: the least while dark, back up soon after
r = bitrate_sim.run(lib, bitrate_sim.steady_trace(
    3.0, changes=[(20, 0.0), (23, 3.0)]), 1.0)
dark = [bps for t, _, _, bps in r["series"] if 21.5 <= t < 23]
check(dark and max(dark) <= bitrate_sim.LEAST_BPS / 1e6 + 1e-9,
      f"dark: the encoder at {max(dark) if dark else '-'} Mbit/s")
up = [t for t, _, _, bps in r["series"] if t >= 23 and bps >= 1.5]
check(up and up[0] - 23 <= 6.0,
      f"back: 1.5 Mbit/s {round(up[0] - 23, 2) if up else '-'} s after "
      "the outage")
check(r["late_outside"] == 0,
      f"outage: {r['late_outside']} frames late outside it")

# quick steps for a receiver with 2 s of latency: on a steady link as few
# changes as careful ones, nothing late; over a cellular trace more
# delivered than the careful steps of a 1 s receiver
r = bitrate_sim.run(lib, bitrate_sim.steady_trace(3.0), 2.0)
check(r["late"] == 0 and r["changes_per_min"] <= 45,
      f"steady 3 Mbit/s, 2 s: {r['late']} frames late, "
      f"{r['changes_per_min']:.0f} changes a minute")
trace = cellular.generate(4, 68)._asdict()
careful = bitrate_sim.run(lib, trace, 1.0)["delivered"]
quick = bitrate_sim.run(lib, trace, 2.0)["delivered"]
check(quick > 1.2 * careful, f"seed 4: {quick:.2f} Mbit/s with quick steps "
      f"(2 s), {careful:.2f} with careful ones (1 s)")

# deterministic: one trace, one run
trace = cellular.generate(2, 68)._asdict()
a = bitrate_sim.run(lib, trace, 1.0, seconds=20)
b = bitrate_sim.run(lib, trace, 1.0, seconds=20)
check(a["series"] == b["series"] and a["frames"] == 600,
      f"seed 2 twice: the same run ({a['frames']} frames)")
f.exit()
