#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ping RTT equals twice the configured one-way delay: never less, and the
median within 1 ms (the median, so one echo the busy machine's scheduler
held back does not count as the emulator's delay)."""
import re
import statistics

import nstest

nstest.require_namespaces()
f = nstest.Failures()
for rtt_ms in (10, 50, 200):
    out, _ = nstest.run(
        [f"rate=1gbit,delay={rtt_ms / 2}ms"],
        "ip netns exec $NETSIM_NS_A ping -c 20 -i 0.05 $NETSIM_ADDR_B")
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    f.check(len(rtts) == 20, f"{len(rtts)} of 20 echoes answered")
    if not rtts:
        continue
    median = statistics.median(rtts)
    f.check(min(rtts) >= rtt_ms - 0.05 and abs(median - rtt_ms) <= 1.0,
            f"RTT median {median:.3f} ms (min {min(rtts):.3f}, "
            f"max {max(rtts):.3f}) for {rtt_ms} ms configured")
f.exit()
