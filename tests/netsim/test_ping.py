#!/usr/bin/python3
"""ping RTT equals twice the configured one-way delay within 1 ms."""
import re

import nstest

nstest.require_namespaces()
f = nstest.Failures()
for rtt_ms in (10, 50, 200):
    out, _ = nstest.run(
        [f"rate=1gbit,delay={rtt_ms / 2}ms"],
        "ip netns exec $NETSIM_NS_A ping -q -c 20 -i 0.05 $NETSIM_ADDR_B")
    avg = float(re.search(r"= [\d.]+/([\d.]+)/", out).group(1))
    f.check(abs(avg - rtt_ms) <= 1.0,
            f"RTT {avg:.3f} ms for {rtt_ms} ms configured")
f.exit()
