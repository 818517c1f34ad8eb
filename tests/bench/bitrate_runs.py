#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 24's figures from cellular runs of compare.py (--grid cellular):
for each run, the frames late or lost outside the outages longer than the
budget, the delivered bitrate against 70% of the trace's mean capacity (or
of the stream's bitrate when lower), and, for multitcp-encoder, how often
the encoder's bitrate changed; a plot per multitcp-encoder run of the
capacity, the sink's estimate, the encoder's bitrate and the late frames
over time.

  bitrate_runs.py RESULTS_DIR [--plots DIR]

A frame counts as excused when its deadline falls in an outage longer than
the budget, from one budget before the outage to RECOVERY_S after it (the
time issue 23 gives the stream to be on time again). Time 0 of the trace
is netsim's links_t0 (the run's .netsim.json; runs without it are left
out of the outage figures).

The clairvoyant column is the most a sender that knew the trace's future
could have delivered on time over the same span with the same most bitrate
and budget (clairvoyant_mbps): what "70% of the mean capacity" is up
against, since a live stream cannot use what the link carries while it has
nothing queued, nor beyond its most bitrate.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402

RECOVERY_S = 2.0
SHARE_OF_CAPACITY = 0.7
# multitcpsink's min-bitrate default: the least the encoder is given
LEAST_MBPS = 0.3


def load(path):
    with open(path) as f:
        return json.load(f)


def excused_windows(trace, budget_s):
    return [(a / 1000 - budget_s, b / 1000 + RECOVERY_S)
            for a, b in trace.get("outages", ()) if (b - a) / 1000 > budget_s]


def frame_outcomes(rx, tx, budget_s, links_t0):
    """[(deadline on the trace's clock, on time?)] for every frame the
    sender made from the first one received on and due while the receiver
    still listened (the sender runs on after it stops: what it made then
    can be neither on time nor late), by compare.py's clock: the first
    frame received sets it, each later one is due its PTS distance later
    plus the budget."""
    frames = sorted({f[1]: f for f in rx.get("frames", []) if f[1] >= 0}
                    .values(), key=lambda f: f[1])
    check = compare.damaged_frames(frames, tx.get("frames_sent"))
    if not frames or not check:
        return []
    damaged, _, _, matched = check
    if not matched:
        return []
    arrival = {rp: t for t, rp, _ in frames}
    by_sent = {tp: rp for rp, tp in matched}
    rp0, tp0 = matched[0]
    t0 = arrival[rp0]
    # runs before the receiver wrote when it stopped: its last frame
    end = rx.get("end_at", frames[-1][0])
    out = []
    for tp, _ in sorted(tx["frames_sent"]):
        if tp < tp0:
            continue
        due = t0 + (tp - tp0) / 1e9 + budget_s
        if due > end:
            break
        rp = by_sent.get(tp)
        ok = rp is not None and rp not in damaged and arrival[rp] <= due
        out.append((due - links_t0, ok))
    return out


def clairvoyant_mbps(trace, most_mbps, budget_s, start_s, end_s, dt=0.01):
    """The most any sender could deliver on time over [start_s, end_s) of
    @trace knowing its future: it makes at most @most_mbps, and every byte
    made at t is through the link by t + budget. With R what it made and C
    what the link can carry (both cumulative), a FIFO link delivers by
    t + budget all made by t iff R(t) - R(s) <= C(t + budget) - C(s) for
    every s < t (what the link carries while nothing waits is lost); the
    greedy schedule, making as much as that allows at each step, is the
    largest. Capacity as the trace gives it (IP bytes, headers not taken
    off), and what is made last may arrive up to a budget after the span:
    a bound from above. Mbit/s over the span."""
    steps = int(round((end_s - start_s) / dt))
    shift = int(round(budget_s / dt))
    cap = [0.0]                     # C on the grid from start_s
    for rate in capacity_grid(trace, start_s, start_s + (steps + shift) * dt,
                              dt):
        cap.append(cap[-1] + rate * dt)
    made, least = 0.0, 0.0          # least: min over s < t of R(s) - C(s)
    for i in range(1, steps + 1):
        least = min(least, made - cap[i - 1])
        made = min(made + most_mbps * dt, least + cap[i + shift])
    return made / (end_s - start_s)


def fixed_rate_late_bound(traces, mbps, budget_s, start_s, end_s, dt=0.01,
                          dark=()):
    """The least fraction of a fixed @mbps stream made over [start_s,
    end_s) that any sender must deliver late (or drop) over links whose
    capacities are @traces (their sum; (start, end) seconds in @dark take
    the second link's away): a fluid FIFO served at the sum, each byte due
    @budget_s after it was made, the oldest dropped when it can no longer
    make it (with one deadline for all, dropping the oldest first is the
    best any schedule does). Capacity as the traces give it, IP bytes: a
    bound from below."""
    late, made, _ = fixed_rate_late(traces, mbps, budget_s, start_s, end_s,
                                    dt, dark)
    return late / max(made, 1e-9)


def fixed_rate_late(traces, mbps, budget_s, start_s, end_s, dt=0.01,
                    dark=()):
    """fixed_rate_late_bound's fluid queue: the Mbit late, the Mbit made,
    and when each late piece (dt of stream, or what was left of it) was
    made."""
    def rate_at(trace, t):
        if t >= trace["period_ms"] / 1000:
            return 0.0
        r = 0.0
        for start, rate in trace["rate_series"]:
            if start / 1000 > t:
                break
            r = rate
        return r
    queue, made, late, late_at = [], 0.0, 0.0, []  # queue: [made_at, Mbit]
    t = start_s
    while t < end_s + budget_s:
        if t < end_s:
            queue.append([t, mbps * dt])
            made += mbps * dt
        cap = sum(rate_at(tr, t) for k, tr in enumerate(traces)
                  if not (k == 1 and any(a <= t < b for a, b in dark))) * dt
        while queue and queue[0][0] + budget_s < t:
            late_at.append(queue[0][0])
            late += queue.pop(0)[1]
        while queue and cap > 0:
            take = min(cap, queue[0][1])
            queue[0][1] -= take
            cap -= take
            if queue[0][1] <= 1e-12:
                queue.pop(0)
        t += dt
    late += sum(q[1] for q in queue)
    late_at += [q[0] for q in queue]
    return late, made, late_at


def changes_per_minute(tx):
    rates = tx.get("rates") or []
    if len(rates) < 2:
        return None
    n = sum(1 for a, b in zip(rates, rates[1:]) if a[2] != b[2])
    return n / ((rates[-1][0] - rates[0][0]) / 60)


def least_rate_late_outside(trace, budget_s, start_s, end_s, dt=0.01):
    """Seconds of a LEAST_MBPS stream made over [start_s, end_s) of @trace
    that even it would deliver late outside the outages longer than the
    budget (fixed_rate_late's fluid queue): what no bitrate control with
    that floor can avoid there."""
    _, _, late_at = fixed_rate_late([trace], LEAST_MBPS, budget_s, start_s,
                                    end_s, dt)
    windows = excused_windows(trace, budget_s)
    return dt * sum(1 for t in late_at
                    if not any(a <= t + budget_s <= b for a, b in windows))


def capacity_grid(trace, start_s, end_s, dt=0.01):
    """@trace's capacity (Mbit/s) at start_s + i * dt, for i up to
    (end_s - start_s) / dt; its first rate before it, 0 after its end."""
    ends = [b for b, _ in trace["rate_series"][1:]] + [trace["period_ms"]]
    out, seg = [], 0
    for i in range(int(round((end_s - start_s) / dt)) + 1):
        t = start_s + i * dt
        while seg < len(ends) - 1 and ends[seg] / 1000 <= t:
            seg += 1
        out.append(trace["rate_series"][seg][1]
                   if t < trace["period_ms"] / 1000 else 0.0)
    return out


def lagged_oracle(trace, share, lag_s, most_mbps, budget_s, start_s, end_s,
                  dt=0.01):
    """A controller better than any real one but for one thing: it knows
    the link's capacity exactly, @lag_s late, capacity above the stream
    included, and the encoder follows at once. It makes @share of the
    capacity it knows (within LEAST_MBPS..@most_mbps) over [start_s,
    end_s); the link serves a fluid FIFO at the trace's capacity, and what
    has waited longer than @budget_s is dropped as late. Returns (on-time
    Mbit/s over the span, seconds of stream late whose deadline is outside
    the outages longer than the budget (excused_windows), seconds of
    stream made): where the issue's two targets meet for a controller
    whose knowledge of the path is @lag_s old."""
    lag = int(round(lag_s / dt))
    cap = capacity_grid(trace, start_s - lag_s, end_s + budget_s, dt)
    windows = excused_windows(trace, budget_s)
    steps = int(round((end_s - start_s) / dt))
    queue, on_time, late_outside = [], 0.0, 0.0   # queue: [made_at, Mbit]

    def drop(made_at):
        nonlocal late_outside
        due = made_at + budget_s
        if not any(a <= due <= b for a, b in windows):
            late_outside += dt
    i = 0
    while i < steps + int(round(budget_s / dt)):
        t = start_s + i * dt
        if i < steps:
            rate = min(most_mbps, max(LEAST_MBPS, share * cap[i]))
            queue.append([t, rate * dt, rate * dt])   # made_at, left, all
        while queue and queue[0][0] + budget_s < t:
            drop(queue.pop(0)[0])
        room = cap[i + lag] * dt
        while queue and room > 0:
            take = min(room, queue[0][1])
            queue[0][1] -= take
            room -= take
            if queue[0][1] <= 1e-12:
                on_time += queue.pop(0)[2]
        i += 1
    for q in queue:
        drop(q[0])
    return on_time / (end_s - start_s), late_outside, steps * dt


ORACLE_LAGS_S = (0.0, 0.25, 0.5, 1.0)
ORACLE_SHARES = [k / 20 for k in range(10, 21)]      # 0.5 .. 1.0
# the share multitcpsink gives the encoder (gst/mtcpbitrate.c) and about
# how old its estimate is when the encoder follows it (a 500 ms span of
# acknowledgements, a 200 ms tick, an RTT)
CONTROLLER_SHARE, CONTROLLER_LAG_S = 0.8, 0.5


def oracle_frontier(trace, most_mbps, budget_s, start_s, end_s, target):
    """For each of ORACLE_LAGS_S: (the least share of ORACLE_SHARES at which
    lagged_oracle delivers @target Mbit/s with nothing late outside long
    outages, or None; the most it delivers with nothing late there, and at
    which share)."""
    out = []
    for lag in ORACLE_LAGS_S:
        meets, best = None, (0.0, None)
        for share in ORACLE_SHARES:
            on, late, _ = lagged_oracle(trace, share, lag, most_mbps,
                                        budget_s, start_s, end_s)
            if late > 0:
                continue
            if on > best[0]:
                best = (on, share)
            if meets is None and on >= target:
                meets = share
        out.append((lag, meets, best))
    return out


def print_oracle_table(rows):
    """The lagged oracle's frontier over each multitcp-encoder run's span
    (its first to its last encoder rate): what the issue's two targets ask
    of a controller that knows the path @lag late."""
    print("| seed | stream (most) Mbit/s | budget ms | span s | target "
          "Mbit/s | " + " | ".join(f"known {lag:g} s late" for lag in
                                   ORACLE_LAGS_S) +
          f" | share {CONTROLLER_SHARE:g} known {CONTROLLER_LAG_S:g} s late:"
          " Mbit/s, frames late | the run: Mbit/s, frames late |")
    print("|---:|---:|---:|---|---:|" + "---|" * len(ORACLE_LAGS_S) +
          "---|---|")
    for r in rows:
        # runs without netsim's links_t0 have no trace clock
        if r["system"] != "multitcp-encoder" or not r["rates"] or \
                "clairvoyant" not in r or r["delivered"] is None:
            continue
        start, end = r["rates"][0][0], r["rates"][-1][0]
        cells = []
        for lag, meets, (best, at) in oracle_frontier(
                r["trace"], r["kbps"] / 1000, r["budget"] / 1000, start,
                end, r["delivered_target"]):
            cells.append(f"share {meets:.2f}" if meets is not None else
                         f"no ({best:.2f} at {at:.2f})" if at else "no")
        on, late, _ = lagged_oracle(r["trace"], CONTROLLER_SHARE,
                                    CONTROLLER_LAG_S, r["kbps"] / 1000,
                                    r["budget"] / 1000, start, end)
        print(f"| {r['seed']} | {r['kbps'] / 1000:g} | {r['budget']} | "
              f"{start:.0f}-{end:.0f} | {r['delivered_target']:.2f} | "
              + " | ".join(cells) +
              f" | {on:.2f}, {late * compare.FPS:.0f} | "
              f"{r['delivered']:.2f}, {r.get('late_outside', '-')} |")


def analyse(run_json):
    base = run_json[:-len(".json")]
    r = load(run_json)
    if not r.get("trace"):
        return None
    trace_path = os.path.join(os.path.dirname(run_json), r["trace"])
    if not os.path.exists(trace_path + ".json"):
        return None
    trace = load(trace_path + ".json")
    netsim = load(base + ".netsim.json")
    rx, tx = load(base + ".rx.json"), load(base + ".tx.json")
    budget_s = r["budget"] / 1000
    res = {"system": r["system"], "cc": r["cc"], "seed": trace["seed"],
           "kbps": r["kbps"], "budget": r["budget"],
           "capacity": trace["stats"]["mean_mbit"],
           "late_fraction": r.get("late_fraction"),
           "delivered": r.get("delivered_mbps"),
           "wire_per_byte": r.get("wire_per_byte"),
           "changes_per_min": changes_per_minute(tx)}
    res["delivered_target"] = SHARE_OF_CAPACITY * min(
        trace["stats"]["mean_mbit"], r["kbps"] / 1000)
    if "links_t0" in netsim and tx.get("rates"):
        first = tx["rates"][0][0] - netsim["links_t0"]
        last = tx["rates"][-1][0] - netsim["links_t0"]
        res["clairvoyant"] = clairvoyant_mbps(trace, r["kbps"] / 1000,
                                              budget_s, first, last)
    if "links_t0" in netsim:
        windows = excused_windows(trace, budget_s)
        outcomes = frame_outcomes(rx, tx, budget_s, netsim["links_t0"])
        outside = [ok for due, ok in outcomes
                   if not any(a <= due <= b for a, b in windows)]
        res["late_outside"] = sum(1 for ok in outside if not ok)
        res["frames_outside"] = len(outside)
        res["outcomes"] = outcomes
        if outcomes:
            res["least_late_outside_s"] = least_rate_late_outside(
                trace, budget_s, outcomes[0][0] - budget_s,
                outcomes[-1][0] - budget_s)
    res["rates"] = [(t - netsim.get("links_t0", 0), e, b, s)
                    for t, e, b, s in tx.get("rates") or []]
    res["trace"] = trace
    return res


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tr = res["trace"]
    xs, ys = [], []
    series = tr["rate_series"] + [[tr["period_ms"], tr["rate_series"][-1][1]]]
    for (t, v), (t2, _) in zip(series, series[1:]):
        xs += [t / 1000, t2 / 1000]
        ys += [v, v]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.plot(xs, ys, color="0.6", lw=1, label="capacity (trace)")
    if res["rates"]:
        t = [r[0] for r in res["rates"]]
        ax.plot(t, [r[1] / 1e6 for r in res["rates"]], lw=1,
                label="sink's estimate")
        ax.plot(t, [r[2] / 1e6 for r in res["rates"]], lw=1.5,
                label="encoder bitrate")
    late = [due for due, ok in res.get("outcomes", []) if not ok]
    if late:
        ax.plot(late, [0.1] * len(late), "|", color="red", ms=8,
                label=f"late or lost ({len(late)})")
    lo = min((r[0] for r in res["rates"]), default=0)
    ax.set_xlim(max(lo - 1, 0), tr["period_ms"] / 1000)
    ax.set_ylim(0, max(6, res["kbps"] / 1000 * 1.3))
    ax.set_xlabel("s (trace time)")
    ax.set_ylabel("Mbit/s")
    ax.set_title(f"{res['system']}, {res['cc']}, seed {res['seed']}, "
                 f"{res['kbps'] / 1000:g} Mbit/s at most, "
                 f"{res['budget']} ms budget")
    ax.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--plots", help="a PNG per multitcp-encoder run here")
    ap.add_argument("--oracle", action="store_true",
                    help="also the lagged oracle's frontier for each "
                    "multitcp-encoder run's trace and span")
    args = ap.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(args.results, "*.json"))):
        if path.endswith((".rx.json", ".tx.json", ".netsim.json",
                          ".trace.json")):
            continue
        res = analyse(path)
        if res is None:
            continue
        rows.append(res)
        if args.plots and res["system"] == "multitcp-encoder":
            os.makedirs(args.plots, exist_ok=True)
            plot(res, os.path.join(args.plots, f"bitrate-{res['cc']}-s"
                                   f"{res['seed']}-{res['kbps']}k-"
                                   f"b{res['budget']}.png"))
    rows.sort(key=lambda r: (r["cc"], r["seed"], r["kbps"], r["budget"],
                             r["system"]))
    print("| TCP | seed | capacity Mbit/s | stream (most) Mbit/s | budget ms "
          "| system | late or lost | late or lost outside long outages | "
          "delivered Mbit/s (target) | clairvoyant Mbit/s | wire/byte | "
          "encoder changes/min | late outside at the least bitrate, s |")
    print("|---|---:|---:|---:|---:|---|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        outside = (f"{r['late_outside']} of {r['frames_outside']}"
                   if "late_outside" in r else "-")
        clair = (f"{r['clairvoyant']:.2f}" if "clairvoyant" in r else "-")
        cpm = (f"{r['changes_per_min']:.1f}" if r["changes_per_min"]
               is not None and r["system"] == "multitcp-encoder" else "-")
        print(f"| {r['cc']} | {r['seed']} | {r['capacity']:.2f} | "
              f"{r['kbps'] / 1000:g} | {r['budget']} | {r['system']} | "
              f"{r['late_fraction']:.3f} | {outside} | "
              f"{r['delivered']:.2f} ({r['delivered_target']:.2f}) | "
              f"{clair} | {r['wire_per_byte']:.2f} | {cpm} | "
              f"{r.get('least_late_outside_s', float('nan')):.2f} |")
    if args.oracle:
        print()
        print_oracle_table(rows)


if __name__ == "__main__":
    main()
