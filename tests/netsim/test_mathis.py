#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One reno flow through a lossy link gets the Mathis throughput
MSS/RTT * 1.22/sqrt(p) within 30%, for the configured p and for the loss
rate the flow really met. Loss on the data direction only."""
import math
import os

import nstest

nstest.require_namespaces()
f = nstest.Failures()
seconds = int(os.environ.get("MATHIS_SECONDS", "25"))
rows = []
for p, rtt_ms in ((0.01, 50), (0.005, 100)):
    out, stats = nstest.run(
        [f"rate=200mbit,delay={rtt_ms / 2}ms,queue=2000p,loss={p}/"
         f"rate=200mbit,delay={rtt_ms / 2}ms,queue=2000p"],
        nstest.IPERF_SERVER +
        f"ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -t {seconds} "
        "-O 3 -C reno --json", cc="reno", seed=3, timeout=seconds + 60)
    doc = nstest.iperf_json(out)
    got = doc["end"]["sum_received"]["bits_per_second"]
    mss = doc["start"]["tcp_mss_default"] if "tcp_mss_default" in \
        doc["start"] else 1448
    model = mss * 8 / (rtt_ms / 1000) * 1.22 / math.sqrt(p)
    ratio = got / model
    # the loss rate this flow really met (a few thousand packets: the
    # realised rate differs from p by several percent)
    ab = stats["links"][0]["ab"]
    p_seen = ab["dropped_loss"] / ab["offered_packets"]
    model_seen = mss * 8 / (rtt_ms / 1000) * 1.22 / math.sqrt(p_seen)
    rows.append((p, rtt_ms, mss, got, model, ratio, stats["congestion_control_a"],
                 p_seen, got / model_seen))
    f.check(stats["congestion_control_a"] == "reno" and
            stats["congestion_control_b"] == "reno", "reno in both namespaces")
    f.check(abs(ratio - 1) <= 0.3,
            f"reno, loss {p}, RTT {rtt_ms} ms: {got / 1e6:.2f} Mbit/s, "
            f"Mathis {model / 1e6:.2f} Mbit/s, ratio {ratio:.2f} (loss seen "
            f"{p_seen:.4f}, ratio to that {got / model_seen:.2f})")
    f.check(abs(got / model_seen - 1) <= 0.3,
            f"reno, RTT {rtt_ms} ms: within 30% of Mathis at the loss rate "
            f"the flow met ({p_seen:.4f})")
print("| loss | RTT (ms) | MSS | CC | measured (Mbit/s) | Mathis (Mbit/s) | "
      "ratio | loss seen | ratio at loss seen |")
print("|---:|---:|---:|---|---:|---:|---:|---:|---:|")
for p, rtt, mss, got, model, ratio, cc, p_seen, ratio_seen in rows:
    print(f"| {p} | {rtt} | {mss} | {cc} | {got / 1e6:.2f} | "
          f"{model / 1e6:.2f} | {ratio:.2f} | {p_seen:.4f} | {ratio_seen:.2f} |")
f.exit()
