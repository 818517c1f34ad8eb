#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Parallel links keep their own delays; a schedule changes a delay and
blacks a link out at the set times; a mahimahi trace gives its rate, in
bytes (1500 per delivery opportunity) whatever the packet size."""
import os
import re
import tempfile

import nstest

nstest.require_namespaces()
f = nstest.Failures()


def ping_replies(out, tag):
    """(timestamp s, icmp_seq, RTT ms) of the replies of the ping (run with
    -D) whose lines were prefixed with @tag."""
    return [(float(m.group(1)), int(m.group(2)), float(m.group(3))) for m in
            re.finditer(tag + r" \[([\d.]+)\].*icmp_seq=(\d+).*time=([\d.]+) ms",
                        out)]


# Link 0: 5 ms each way, 25 ms from t = 3 s on. Link 1: 40 ms each way,
# A->B blacked out for 1 s at t = 2 s. Pings every 50 ms on both.
out, stats = nstest.run(
    ["rate=100mbit,delay=5ms", "rate=100mbit,delay=40ms"],
    "ip netns exec $NETSIM_NS_A ping -D -c 110 -i 0.05 $NETSIM_ADDR_B0 "
    "| sed -u 's/^/L0 /' & "
    "ip netns exec $NETSIM_NS_A ping -D -c 110 -i 0.05 $NETSIM_ADDR_B1 "
    "| sed -u 's/^/L1 /' & wait",
    schedule="at=3 link=0 delay=25ms\nat=2 link=1 dir=ab blackout=1\n")
r0, r1 = ping_replies(out, "L0"), ping_replies(out, "L1")
l0, l1 = [r[2] for r in r0], [r[2] for r in r1]
early, late = l0[:20], l0[-20:]
f.check(len(l0) >= 100 and abs(min(early) - 10) <= 1,
        f"link 0 before the change: min RTT {min(early):.3f} ms for 10")
f.check(abs(min(late) - 50) <= 1,
        f"link 0 after the change: min RTT {min(late):.3f} ms for 50")
f.check(abs(min(l1) - 80) <= 1, f"link 1: min RTT {min(l1):.3f} ms for 80")
# The replies around the hole in the sequence numbers: the hole spans the
# 1 s blackout, to within the spacing of the pings.
gaps = [(b[0] - a[0], b[1] - a[1] - 1, (b[0] - a[0]) / (b[1] - a[1]))
        for a, b in zip(r1, r1[1:]) if b[1] - a[1] > 1]
lost = stats["links"][1]["ab"]["dropped_blackout"]
f.check(len(gaps) == 1 and abs(gaps[0][0] - 1.0) <= 2 * gaps[0][2] and
        gaps[0][1] == lost == 110 - len(l1),
        f"blackout of 1 s: replies stop for {gaps[0][0]:.3f} s (pings every "
        f"{gaps[0][2] * 1000:.1f} ms), {gaps[0][1]} pings lost, {lost} "
        "requests dropped by the blackout" if len(gaps) == 1 else
        f"blackout: expected one hole in the replies, found {len(gaps)}")
f.check(stats["links"][0]["ab"]["dropped_blackout"] == 0,
        "no blackout on link 0")

# A trace with one opportunity per ms: 1500 bytes/ms = 12 Mbit/s of IP
# packets, full-size or small.
seconds = 4
with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "12mbit.trace")
    with open(trace, "w") as t:
        t.write("1\n")
    for payload in (1472, 500):
        out, stats = nstest.run(
            [f"trace={trace},delay=10ms,queue=50p/rate=100mbit,delay=10ms"],
            nstest.IPERF_SERVER +
            "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -u -b 20M "
            f"-l {payload} -t {seconds} --json")
        ab = stats["links"][0]["ab"]
        rate = ab["forwarded_bytes"] * 8 / seconds
        f.check(abs(rate - 12e6) / 12e6 < 0.05,
                f"trace 1 opportunity/ms, {payload + 28}-byte packets: "
                f"{rate / 1e6:.2f} Mbit/s of 12")
        f.check(ab["dropped_queue"] > 0.2 * ab["offered_packets"],
                f"the excess is dropped by the queue ({ab['dropped_queue']} "
                f"of {ab['offered_packets']})")
f.exit()
