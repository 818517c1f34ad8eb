#!/usr/bin/python3
"""One reno flow through a lossy link gets the Mathis throughput
MSS/RTT * 1.22/sqrt(p) within 30%. Loss on the data direction only."""
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
    rows.append((p, rtt_ms, mss, got, model, ratio))
    f.check(abs(ratio - 1) <= 0.3,
            f"reno, loss {p}, RTT {rtt_ms} ms: {got / 1e6:.2f} Mbit/s, "
            f"Mathis {model / 1e6:.2f} Mbit/s, ratio {ratio:.2f}")
print("| loss | RTT (ms) | MSS | measured (Mbit/s) | Mathis (Mbit/s) | ratio |")
print("|---:|---:|---:|---:|---:|---:|")
for p, rtt, mss, got, model, ratio in rows:
    print(f"| {p} | {rtt} | {mss} | {got / 1e6:.2f} | {model / 1e6:.2f} | "
          f"{ratio:.2f} |")
f.exit()
