#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The sink's encoder controller (gst/mtcpbitrate.c, the real code, loaded
from the build through ctypes) driven over a fluid model of a cellular
uplink: seconds a cell where a netsim run takes a minute, the same
result every time, for choosing the controller's rules before they are
measured on netsim (issue 24).

  bitrate_sim.py [--build DIR] [--seeds 4] [--budgets 1 2] [--most 4]
                 [--steady MBIT ...] [--plots DIR]

prints, per cell, what was delivered on time against issue 24's target
(70% of the trace's mean capacity, or of the most bitrate when lower),
the frames late or lost, those of them outside the outages longer than
the budget (bitrate_runs.py's rule), and the encoder's changes a minute;
then the sums. --steady adds constant links of MBIT Mbit/s (no outage).

The model, and what it leaves out:
- the link: the trace's capacity (tests/bench/cellular.py, the seed's RTT)
  serves one FIFO of everything the sink sends, frames and padding, in
  STEP_S steps; the sink's queue, its sockets and the bottleneck's queue
  are one queue here (no TCP: no window, no pacing, no loss);
- the encoder: 30 frames a second, a keyframe every 30 worth KEY_WEIGHT
  other frames, each frame sized from the bitrate at once (x264enc
  follows in a frame or two);
- the sink's deadline gate: a frame not yet begun that can no longer
  arrive in time is skipped (gst/mtcpserverschedule.c);
- the sink's estimate (gst/mtcpestimate.c, simplified): what went through
  the link over the last 0.5 s; the path is the limit while what waits
  would take over 150 ms to drain at the link's rate, and the estimate
  is then what was delivered (kept as the path's last rate); while the
  stream is the limit it climbs over 2 s from what was delivered towards
  the path's last rate (TCP's windows: bbr keeps the rate it measured);
  0 when nothing went through for a second while something waited;
- the controller is told every TICK_S (the sink's tick) where the budget
  allows quick steps, else when the estimate is told on the bus (a move
  of TELL_CHANGE, the path's limit or darkness changing, or TELL_S); its
  padding probes fill the FIFO up to their rate while nothing else waits.
Against netsim on the eight 4 Mbit/s cells (bbr, one session each) the
model gave 9.00 Mbit/s delivered summed for stop 61's controller where
netsim gave 8.79 and 8.68, and 13.43 for a faster one where netsim gave
12.66 (docs/experiments/bitrate.md, stop 62): good for ranking rules by
what they deliver, not for their late frames (TCP's own stalls are not
in it: it found none outside long outages where netsim finds tens), and
it over-predicted the rules that judge a refusal by its level (a fall
comes at once here, as several cuts a tick apart on netsim).
"""
import argparse
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bitrate_runs  # noqa: E402
import cellular  # noqa: E402

STEP_S = 0.005
TICK_S = 0.2
SPAN_S = 0.5
LIMIT_S = 0.15
CLIMB_S = 2.0
DARK_S = 1.0
TELL_CHANGE = 0.2
TELL_S = 1.0
FPS = 30
GOP = 30
KEY_WEIGHT = 6.0
PROBE_S = 0.7
LEAST_BPS = 300000


class Bounds(ctypes.Structure):
    _fields_ = [("min_bps", ctypes.c_uint64), ("max_bps", ctypes.c_uint64)]


def load(build):
    """The controller's functions from @build's libmtcpbitratesim.so."""
    gst = ctypes.CDLL("libgstreamer-1.0.so.0")
    gst.gst_init(None, None)
    lib = ctypes.CDLL(os.path.join(build, "tests", "libmtcpbitratesim.so"))
    u64, i64, p = ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p
    sigs = {
        "mtcp_bitrate_control_new": (p, [ctypes.POINTER(Bounds), u64]),
        "mtcp_bitrate_control_free": (None, [p]),
        "mtcp_bitrate_control_update": (ctypes.c_int, [
            p, i64, u64, ctypes.c_int, u64, i64, ctypes.POINTER(u64)]),
        "mtcp_bitrate_control_bps": (u64, [p]),
        "mtcp_bitrate_control_changes": (u64, [p]),
        "mtcp_bitrate_control_set_padding_after_outage": (None, [
            p, ctypes.c_int]),
        "mtcp_bitrate_control_take_probe": (ctypes.c_int, [
            p, ctypes.POINTER(u64)]),
        "mtcp_bitrate_control_set_budget": (None, [p, i64]),
        "mtcp_bitrate_control_quick_budget": (ctypes.c_int, [i64]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def steady_trace(mbit, seconds=70, changes=()):
    """A trace dict as cellular.generate(...)._asdict() gives: @mbit from
    the start, then each (second, mbit) of @changes (0: an outage until
    the next change)."""
    series = [(0, mbit)] + [(int(s * 1000), m) for s, m in changes]
    ends = [t for t, _ in series[1:]] + [int(seconds * 1000)]
    outages = [(t, e) for (t, m), e in zip(series, ends) if m == 0]
    return {"rate_series": series, "period_ms": int(seconds * 1000),
            "outages": outages, "rtt_ms": 50}


def run(lib, trace, budget_s, most_mbit=4.0, seconds=64.0,
        after_outage=True):
    """One run of @seconds over @trace (a dict as Trace._asdict() gives).
    Returns delivered Mbit/s on time, frames made, late or lost, late
    outside long outages, changes a minute, and the series [(t, capacity,
    estimate, bitrate)] in Mbit/s."""
    owd = trace["rtt_ms"] / 2000.0
    steps = int(round(seconds / STEP_S))
    tail = int(round((budget_s + 1) / STEP_S))
    cap = bitrate_runs.capacity_grid(trace, 0, (steps + tail + 1) * STEP_S,
                                     STEP_S)
    windows = bitrate_runs.excused_windows(trace, budget_s)
    bounds = Bounds(LEAST_BPS, int(most_mbit * 1e6))
    c = lib.mtcp_bitrate_control_new(ctypes.byref(bounds), LEAST_BPS)
    lib.mtcp_bitrate_control_set_padding_after_outage(c, int(after_outage))
    # the receiver's latency, as the sink passes it on
    lib.mtcp_bitrate_control_set_budget(c, int(budget_s * 1e6))
    every_tick = lib.mtcp_bitrate_control_quick_budget(int(budget_s * 1e6))
    told = None                # (t, estimate, limited) last told
    fifo = []                  # [frame index or -1 (padding), Mbit left]
    made = []                  # per frame: (made at, Mbit)
    arrived = {}
    served = []                # Mbit through the link per step
    span = int(round(SPAN_S / STEP_S))
    est, path_rate, last_served_t = 0.0, 0.0, 0.0
    probe_until, probe_mbit = 0.0, 0.0
    next_frame, next_tick = 0.0, TICK_S
    series = []
    for i in range(steps + tail):
        t = i * STEP_S
        bps = lib.mtcp_bitrate_control_bps(c) / 1e6
        if t < seconds and t >= next_frame - 1e-9:
            next_frame += 1.0 / FPS
            p = bps / FPS * GOP / (KEY_WEIGHT + GOP - 1)
            size = p * KEY_WEIGHT if len(made) % GOP == 0 else p
            fifo.append([len(made), size])
            made.append((t, size))
        if t < probe_until and not fifo:
            fifo.append([-1, max(0.0, probe_mbit - bps) * STEP_S])
        # the deadline gate: frames not begun that cannot be in time
        fifo[:] = [x for k, x in enumerate(fifo)
                   if x[0] < 0 or (k == 0 and x[1] < made[x[0]][1]) or
                   made[x[0]][0] + budget_s - owd >= t]
        room, out = cap[i] * STEP_S, 0.0
        while fifo and room > 1e-12:
            take = min(room, fifo[0][1])
            fifo[0][1] -= take
            room -= take
            out += take
            if fifo[0][1] <= 1e-12:
                k = fifo.pop(0)[0]
                if k >= 0:
                    arrived[k] = t + STEP_S + owd
        served.append(out)
        if out > 0:
            last_served_t = t
        if t + 1e-9 < next_tick or t >= seconds:
            continue
        next_tick += TICK_S
        delivered = sum(served[-span:]) / SPAN_S
        backlog = sum(x[1] for x in fifo)
        dark = backlog > 0 and t - last_served_t >= DARK_S
        drain = backlog / max(cap[i], delivered, 1e-9)
        limited = drain > LIMIT_S
        if dark:
            est = 0.0
        elif limited:
            est = path_rate = delivered
        else:
            guess = max(delivered, path_rate)
            est = max(est, delivered)
            est = min(guess, est + (guess - est) * TICK_S / CLIMB_S) \
                if est < guess else guess
        if not every_tick:
            if told is not None and t - told[0] < TELL_S - 1e-9 and \
                    limited == told[2] and (est == 0) == (told[1] == 0) and \
                    abs(est - told[1]) < TELL_CHANGE * told[1]:
                continue
            told = (t, est, limited)
        if est > 0 or dark:
            out_bps = ctypes.c_uint64(0)
            lib.mtcp_bitrate_control_update(
                c, int(t * 1e6), int(est * 1e6), int(limited),
                int(delivered * 1e6), int(drain * 1e6),
                ctypes.byref(out_bps))
            total = ctypes.c_uint64(0)
            if lib.mtcp_bitrate_control_take_probe(c, ctypes.byref(total)):
                probe_until = t + PROBE_S if total.value else 0.0
                probe_mbit = total.value / 1e6
        series.append((t, cap[i], est,
                       lib.mtcp_bitrate_control_bps(c) / 1e6))
    on_time, late, late_outside = 0.0, 0, 0
    for k, (at, size) in enumerate(made):
        due = at + budget_s
        if arrived.get(k, due + 1) <= due:
            on_time += size
            continue
        late += 1
        if not any(a <= due <= b for a, b in windows):
            late_outside += 1
    changes = lib.mtcp_bitrate_control_changes(c)
    lib.mtcp_bitrate_control_free(c)
    return {"delivered": on_time / seconds, "frames": len(made),
            "late": late, "late_outside": late_outside,
            "changes_per_min": changes * 60.0 / seconds, "series": series}


def plot(res, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = [s[0] for s in res["series"]]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    ax.step(t, [s[1] for s in res["series"]], where="post", color="grey",
            lw=0.7, label="capacity")
    ax.plot(t, [s[2] for s in res["series"]], lw=0.9, label="estimate")
    ax.step(t, [s[3] for s in res["series"]], where="post", lw=1.4,
            label="encoder bitrate")
    ax.set_ylim(0, 6)
    ax.set_xlabel("s")
    ax.set_ylabel("Mbit/s")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=80, bbox_inches="tight")
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..",
                                                    "build"))
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--budgets", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--most", type=float, default=4.0)
    ap.add_argument("--steady", type=float, nargs="*", default=[])
    ap.add_argument("--plots")
    args = ap.parse_args()
    lib = load(args.build)
    cells = []
    for seed in range(1, args.seeds + 1):
        trace = cellular.generate(seed, 68)
        target = 0.7 * min(cellular.stats(trace)["mean_mbit"], args.most)
        cells += [(f"seed {seed}", trace._asdict(), b, target)
                  for b in args.budgets]
    cells += [(f"steady {m:g} Mbit/s", steady_trace(m), b,
               0.7 * min(m, args.most))
              for m in args.steady for b in args.budgets]
    print("| cell | budget s | delivered Mbit/s (target) | late or lost | "
          "late outside long outages | changes/min |")
    print("|---|---:|---|---:|---:|---:|")
    sums = [0.0, 0, 0]
    for name, trace, budget, target in cells:
        r = run(lib, trace, budget, args.most)
        print(f"| {name} | {budget:g} | {r['delivered']:.2f} "
              f"({target:.2f}) | {r['late'] / max(r['frames'], 1):.3f} | "
              f"{r['late_outside']} | {r['changes_per_min']:.0f} |")
        sums[0] += r["delivered"]
        sums[1] += r["late_outside"]
        sums[2] += r["changes_per_min"]
        if args.plots:
            os.makedirs(args.plots, exist_ok=True)
            plot(r, os.path.join(args.plots, "sim-%s-b%g.png" % (
                name.replace(" ", "").replace("/", ""), budget)),
                 f"model: {name}, {budget:g} s budget")
    print(f"\nsummed: delivered {sums[0]:.2f} Mbit/s, late outside long "
          f"outages {sums[1]}, changes/min {sums[2] / len(cells):.0f} "
          "(mean)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
