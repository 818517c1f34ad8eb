#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Configured loss rates are what a flow sees, within their binomial
confidence interval (99.9%)."""
import nstest

# UDP packets the receiving socket in B had no room for (a busy 2-core
# machine): lost, but not by the emulated link
RCVBUF_ERRORS = ("; ip netns exec $NETSIM_NS_B cat /proc/net/snmp | "
                 "grep '^Udp:'")


def rcvbuf_errors(out):
    head, values = [line.split()[1:] for line in out.splitlines()
                    if line.startswith("Udp:")][:2]
    return int(dict(zip(head, values))["RcvbufErrors"])


nstest.require_namespaces()
f = nstest.Failures()

for p in (0.01, 0.05):
    out, stats = nstest.run(
        [f"rate=1gbit,delay=1ms,loss={p}/rate=1gbit,delay=1ms"],
        nstest.IPERF_SERVER +
        "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -u -b 60M -l 1000 "
        "-t 3 --json" + RCVBUF_ERRORS, seed=7)
    ab = stats["links"][0]["ab"]
    lo, hi = nstest.binomial_interval(ab["offered_packets"], p)
    f.check(lo <= ab["dropped_loss"] <= hi,
            f"loss {p}: {ab['dropped_loss']} of {ab['offered_packets']} "
            f"dropped, interval [{lo:.0f}, {hi:.0f}]")
    end = nstest.iperf_json(out)["end"]["sum"]
    n, lost, overflow = end["packets"], end["lost_packets"], rcvbuf_errors(out)
    lo, hi = nstest.binomial_interval(n, p)
    # the control connection's packets may be among the link's losses
    f.check(lo <= lost - overflow <= hi and
            0 <= ab["dropped_loss"] - (lost - overflow) <= 5,
            f"loss {p}: the receiver saw {lost} of {n} lost, {overflow} of "
            f"them by its socket buffer, interval [{lo:.0f}, {hi:.0f}]")

# Gilbert-Elliott: long-run loss is pi_bad * loss_bad + pi_good * loss_good
p_gb, p_bg, l_g, l_b = 0.01, 0.2, 0.0, 0.5
expected = p_gb / (p_gb + p_bg) * l_b + p_bg / (p_gb + p_bg) * l_g
out, stats = nstest.run(
    [f"rate=1gbit,delay=1ms,ge={p_gb}:{p_bg}:{l_g}:{l_b}/rate=1gbit,delay=1ms"],
    nstest.IPERF_SERVER +
    "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -u -b 60M -l 1000 "
    "-t 3 --json", seed=11)
ab = stats["links"][0]["ab"]
seen = ab["dropped_loss"] / ab["offered_packets"]
# losses come in bursts, so the interval is wider than a binomial one
f.check(abs(seen - expected) / expected < 0.25,
        f"Gilbert-Elliott loss {seen:.4f}, expected {expected:.4f}")
f.exit()
