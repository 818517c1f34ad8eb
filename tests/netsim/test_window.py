#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MultiTCP Eq. 1 on netsim: with no loss, a receive window of w segments
(TCP_WINDOW_CLAMP, set at run time) gives w * MSS / RTT within 10%."""
import os

import nstest

nstest.require_namespaces()
f = nstest.Failures()
here = os.path.dirname(os.path.abspath(__file__))
mss = 1448
for w, rtt_ms in ((8, 100), (20, 50), (40, 100)):
    out, _ = nstest.run(
        [f"rate=100mbit,delay={rtt_ms / 2}ms,queue=1000p"],
        f"ip netns exec $NETSIM_NS_B /usr/bin/python3 {here}/window_peer.py "
        f"recv 5301 {w * mss} 6 & sleep 0.5; "
        f"ip netns exec $NETSIM_NS_A timeout 20 /usr/bin/python3 "
        f"{here}/window_peer.py send $NETSIM_ADDR_B 5301; wait", cc="reno")
    got = float(out.strip().splitlines()[-1])
    model = w * mss / (rtt_ms / 1000)
    f.check(abs(got / model - 1) <= 0.10,
            f"window {w} segments, RTT {rtt_ms} ms: {got * 8 / 1e6:.3f} Mbit/s, "
            f"Eq. 1 says {model * 8 / 1e6:.3f} (ratio {got / model:.3f})")
f.exit()
