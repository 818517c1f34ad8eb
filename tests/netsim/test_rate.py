#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A backlogged TCP flow fills a 10 Mbit/s link; UDP above the rate is cut
to the rate and the excess is counted as queue drops."""
import nstest

nstest.require_namespaces()
f = nstest.Failures()

out, stats = nstest.run(
    ["rate=10mbit,delay=10ms,queue=100p"],
    nstest.IPERF_SERVER +
    "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -t 8 -O 2 -C reno "
    "--json", cc="reno")
got = nstest.iperf_json(out)["end"]["sum_received"]["bits_per_second"]
f.check(got >= 0.9e7, f"TCP (reno) goodput {got / 1e6:.2f} Mbit/s of 10")

seconds = 5
# SIGUSR1 to netsim at 1 s and 4 s: a benchmark's steady span
out, stats = nstest.run(
    ["rate=10mbit,delay=10ms,queue=50p"],
    nstest.IPERF_SERVER +
    "(sleep 1; kill -USR1 $PPID; sleep 3; kill -USR1 $PPID) & "
    f"ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -u -b 20M -l 1400 "
    f"-t {seconds} --json; wait")
marks = stats["marks"]
if len(marks) == 2:
    span = marks[1]["t"] - marks[0]["t"]
    rate = (marks[1]["links"][0]["ab"] - marks[0]["links"][0]["ab"]) * 8 / span
    f.check(abs(span - 3) < 0.3 and abs(rate - 1e7) / 1e7 < 0.05,
            f"between the marks ({span:.2f} s) the link forwarded "
            f"{rate / 1e6:.2f} Mbit/s")
else:
    f.check(False, f"two marks from SIGUSR1, got {len(marks)}")
ab = stats["links"][0]["ab"]
rate = ab["forwarded_bytes"] * 8 / seconds
f.check(abs(rate - 1e7) / 1e7 < 0.05,
        f"UDP at 20 Mbit/s leaves the link at {rate / 1e6:.2f} Mbit/s")
excess = ab["offered_packets"] - ab["forwarded_packets"]
# what was still queued or on the wire when the run ended is neither
f.check(0 <= excess - ab["dropped_queue"] <= 50 + 10 and
        ab["dropped_queue"] > 0.4 * ab["offered_packets"],
        f"queue drops {ab['dropped_queue']} ~ offered - forwarded {excess}")

# The check that guards every run: a device ring too short for the traffic
# drops packets outside the model, and netsim must call that run invalid.
out, stats = nstest.run(
    ["rate=1gbit"],
    nstest.IPERF_SERVER +
    "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -u -b 0 -l 1400 -t 1",
    extra_args=["--txqueuelen", "2"], allow_invalid=True)
drops = stats["links"][0]["tun_tx_dropped"]
f.check(drops > 0 and stats["valid"] is False,
        f"a 2-packet TUN ring overflows ({drops} drops): run marked invalid")
f.exit()
