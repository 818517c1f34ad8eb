#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Seeded cellular uplink traces in mahimahi's format (issue 23's cellular
scenario set; tests/bench/compare.py --grid cellular runs them on netsim).

  tests/bench/cellular.py --seed N [--seconds 60] [--out FILE]

prints the trace's mean capacity, its outage count and total outage time,
and with --out writes FILE (the mahimahi trace) and FILE.json (the
parameters and the capacity over time, for plots and re-analysis).

The model, everything drawn from random.Random(seed), so one seed always
gives the same trace on any machine and Python 3 version:

- per seed, a base RTT uniform in 40..80 ms (whole ms) and a drop-tail
  queue uniform in 100..200 packets; the bench splits the RTT evenly
  between the two directions;
- capacity: a random walk in log-rate, one step every 100..500 ms (uniform,
  whole ms); each step moves ln(rate) by THETA * (ln(CENTRE) - ln(rate))
  + N(0, SIGMA) (a walk with a weak pull to CENTRE_MBIT = 3, an
  Ornstein-Uhlenbeck process in discrete steps) and reflects at ln(0.3)
  and ln(15 Mbit/s). With SIGMA 0.3 and THETA 0.05 the walk forgets where
  it was in about 20 steps (~6 s) and its spread is about +-1 in ln(rate):
  over a minute it swings across both the 1 and the 4 Mbit/s stream; its
  median sits near 3 Mbit/s and a minute's mean at 2-5 Mbit/s (seeds
  1-4 over 68 s: 2.1, 2.6, 4.1, 4.9, outages included). It starts
  log-uniform between 1 and 8 Mbit/s;
- outages (capacity 0) of 1..5 s (uniform, whole ms): the first starts
  10..30 s into the trace, each next one 20..40 s after the one before
  ended; an outage that would not end 1 s before the trace does is left
  out (so none is cut short, and the trace never ends dark). The walk
  goes on underneath, capacity comes back where it has walked to.

The outage draws and the walk come from two generators seeded from the
first, so the same seed gives the same outages at any length, and a
longer trace of a seed starts with the shorter one's capacity.

mahimahi's convention (which tests/netsim follows, docs/netsim.md): one
line per delivery opportunity of 1500 bytes, its time in whole ms from the
start; several opportunities in one ms are several equal lines (above
12 Mbit/s); an opportunity that passes while the queue is empty is lost;
the trace loops with the period of its last line. An opportunity is put
at the first whole ms at or after the capacity's integral reaches the next
1500 bytes, and the last line is pinned to the trace's length (one
opportunity added there if none falls on it), so the trace loops with the
period it was made for. The reverse (ACK) direction is not traced: the
bench gives it a plain REVERSE_MBIT with the same delay and queue.
"""
import argparse
import collections
import json
import math
import os
import random
import sys

MIN_MBIT, MAX_MBIT = 0.3, 15.0
CENTRE_MBIT = 3.0
SIGMA, THETA = 0.3, 0.05
STEP_MS = (100, 500)
START_MBIT = (1.0, 8.0)
OUTAGE_MS = (1000, 5000)
FIRST_OUTAGE_MS = (10000, 30000)
OUTAGE_GAP_MS = (20000, 40000)
OUTAGE_END_MARGIN_MS = 1000
RTT_MS = (40, 80)
QUEUE_PKTS = (100, 200)
REVERSE_MBIT = 10
MTU = 1500

Trace = collections.namedtuple(
    "Trace", "opportunities_ms period_ms rtt_ms queue_pkts rate_series "
    "outages seed")
Trace.__doc__ = """opportunities_ms: the mahimahi lines (non-decreasing
ms); period_ms: the trace's length (its last line); rtt_ms, queue_pkts:
the seed's path; rate_series: [(start_ms, Mbit/s)], the capacity from
start_ms until the next entry's (the last one's until period_ms), 0 in
an outage; outages: [(start_ms, end_ms)]; seed."""


def _reflect(x, lo, hi):
    while x < lo or x > hi:
        x = 2 * lo - x if x < lo else 2 * hi - x
    return x


def _walk(rng, period_ms):
    """[(start_ms, Mbit/s)] of the log-rate walk, up to period_ms."""
    lo, hi = math.log(MIN_MBIT), math.log(MAX_MBIT)
    centre = math.log(CENTRE_MBIT)
    x = rng.uniform(math.log(START_MBIT[0]), math.log(START_MBIT[1]))
    t, steps = 0, []
    while t < period_ms:
        steps.append((t, math.exp(x)))
        t += rng.randint(*STEP_MS)
        x = _reflect(x + THETA * (centre - x) + rng.gauss(0, SIGMA), lo, hi)
    return steps


def _outages(rng, period_ms):
    out, start = [], rng.randint(*FIRST_OUTAGE_MS)
    while True:
        end = start + rng.randint(*OUTAGE_MS)
        if end > period_ms - OUTAGE_END_MARGIN_MS:
            return out
        out.append((start, end))
        start = end + rng.randint(*OUTAGE_GAP_MS)


def _overlay(steps, outages, period_ms):
    """The walk with capacity 0 in the outages, as change points."""
    cuts = sorted({t for t, _ in steps} | {t for o in outages for t in o})
    series = []
    for t in cuts:
        if t >= period_ms:
            break
        if any(a <= t < b for a, b in outages):
            rate = 0.0
        else:
            # the walk's value at t: the last step at or before it
            rate = next(r for s, r in reversed(steps) if s <= t)
        if not series or series[-1][1] != rate:
            series.append((t, rate))
    return series


def segments(trace):
    """[(start_ms, end_ms, Mbit/s)] of trace.rate_series."""
    s = trace.rate_series
    ends = [t for t, _ in s[1:]] + [trace.period_ms]
    return [(t, e, r) for (t, r), e in zip(s, ends)]


def _opportunities(series_segments, period_ms):
    opps, done = [], 0.0          # bytes the capacity carried before a seg
    for a, b, mbit in series_segments:
        per_ms = mbit * 1e6 / 8 / 1000          # bytes a ms
        if per_ms > 0:
            # the k-th opportunity where the integral reaches k * MTU
            k = int(done // MTU) + 1
            while True:
                at = a + (k * MTU - done) / per_ms
                if at > b:
                    break
                opps.append(min(math.ceil(at - 1e-9), period_ms))
                k += 1
        done += per_ms * (b - a)
    if not opps or opps[-1] < period_ms:
        opps.append(period_ms)        # the loop's period: the last line
    return opps


def generate(seed, seconds=60, scale=1.0):
    """The trace of @seed, @seconds long (a Trace); @scale multiplies its
    capacity (2: a walk around 6 Mbit/s, for the bonding cells)."""
    rng = random.Random(seed)
    rtt_ms = rng.randint(*RTT_MS)
    queue_pkts = rng.randint(*QUEUE_PKTS)
    walk_rng = random.Random(rng.getrandbits(64))
    outage_rng = random.Random(rng.getrandbits(64))
    period_ms = int(round(seconds * 1000))
    outages = _outages(outage_rng, period_ms)
    series = _overlay(_walk(walk_rng, period_ms), outages, period_ms)
    if scale != 1.0:
        series = [(t, r * scale) for t, r in series]
    trace = Trace([], period_ms, rtt_ms, queue_pkts, series, outages, seed)
    return trace._replace(opportunities_ms=_opportunities(segments(trace),
                                                          period_ms))


def stats(trace):
    """Mean capacity (Mbit/s, outages included), outage count and
    seconds, and the share of time below 1 and below 4 Mbit/s."""
    segs = segments(trace)
    total = sum(b - a for a, b, _ in segs)
    mean = sum((b - a) * r for a, b, r in segs) / max(total, 1)
    up = [(a, b, r) for a, b, r in segs if r > 0]
    return {"seed": trace.seed, "seconds": trace.period_ms / 1000,
            "rtt_ms": trace.rtt_ms, "queue_pkts": trace.queue_pkts,
            "mean_mbit": round(mean, 3),
            "min_mbit": round(min(r for _, _, r in up), 3),
            "max_mbit": round(max(r for _, _, r in up), 3),
            "below_1mbit": round(sum(b - a for a, b, r in segs if r < 1)
                                 / max(total, 1), 3),
            "below_4mbit": round(sum(b - a for a, b, r in segs if r < 4)
                                 / max(total, 1), 3),
            "outages": len(trace.outages),
            "outage_s": sum(b - a for a, b in trace.outages) / 1000,
            "opportunities": len(trace.opportunities_ms)}


def write(trace, path):
    """@path: the mahimahi trace; @path.json: its parameters, capacity
    over time and stats()."""
    with open(path, "w") as f:
        f.write("".join(f"{ms}\n" for ms in trace.opportunities_ms))
    with open(path + ".json", "w") as f:
        json.dump({"seed": trace.seed, "period_ms": trace.period_ms,
                   "rtt_ms": trace.rtt_ms, "queue_pkts": trace.queue_pkts,
                   "rate_series": trace.rate_series,
                   "outages": trace.outages, "stats": stats(trace),
                   "reverse_mbit": REVERSE_MBIT}, f)


def read_meta(path):
    """What write() put in @path.json."""
    with open(path + ".json") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--out", help="write the trace here (and OUT.json)")
    args = ap.parse_args()
    trace = generate(args.seed, args.seconds)
    st = stats(trace)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)),
                    exist_ok=True)
        write(trace, args.out)
    print(f"seed {args.seed}: {args.seconds:g} s, RTT {trace.rtt_ms} ms, "
          f"queue {trace.queue_pkts} packets, mean capacity "
          f"{st['mean_mbit']:.2f} Mbit/s ({st['min_mbit']:.2f}-"
          f"{st['max_mbit']:.2f} outside outages; below 1 Mbit/s "
          f"{st['below_1mbit']:.0%}, below 4 {st['below_4mbit']:.0%} of "
          f"the time), {st['outages']} outages, {st['outage_s']:.2f} s "
          f"dark, {st['opportunities']} opportunities"
          + (f" -> {args.out}" if args.out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
