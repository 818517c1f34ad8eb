#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/bench/cellular.py's traces and compare.py's cellular grid, without
netsim: one seed gives one trace, rates stay in 0.3..15 Mbit/s outside
outages of 1..5 s, the mahimahi opportunities carry the capacity's
integral (one per 1500 bytes) and loop with the trace's length, RTT and
queue stay in range; the grid's cells and links, a run's command line (a
stand-in netsim), multitcp-default's receiver and the docs writer."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "netsim")]
import bitrate_runs  # noqa: E402
import cellular  # noqa: E402
import compare  # noqa: E402
import nstest  # noqa: E402

f = nstest.Failures()
check = f.check
SEEDS = range(1, 13)

# one seed, one trace; another seed, another
a, b = cellular.generate(3, 60), cellular.generate(3, 60)
check(a == b, "seed 3 twice: the same trace")
check(cellular.generate(4, 60).opportunities_ms != a.opportunities_ms,
      "seeds 3 and 4: different traces")
# a longer trace of a seed starts with the shorter one's capacity and
# has the same RTT, queue and outages (those that fit)
long_ = cellular.generate(3, 90)
check(long_.rate_series[:len(a.rate_series) - 1] == a.rate_series[:-1]
      and (long_.rtt_ms, long_.queue_pkts) == (a.rtt_ms, a.queue_pkts)
      and long_.outages[:len(a.outages)] == a.outages,
      "seed 3 over 90 s starts as over 60 s")

outages = 0
for seed in SEEDS:
    t = cellular.generate(seed, 120)
    segs = cellular.segments(t)
    check(40 <= t.rtt_ms <= 80 and 100 <= t.queue_pkts <= 200,
          f"seed {seed}: RTT {t.rtt_ms} ms, queue {t.queue_pkts}")
    up = [r for _, _, r in segs if r > 0]
    check(all(cellular.MIN_MBIT <= r <= cellular.MAX_MBIT for r in up),
          f"seed {seed}: rates {min(up):.3f}..{max(up):.3f} Mbit/s")
    # the capacity is 0 exactly in the outages, each 1..5 s
    dark = [(x, y) for x, y, r in segs if r == 0]
    check(dark == t.outages,
          f"seed {seed}: capacity 0 in {dark}, the outages {t.outages}")
    check(all(1000 <= y - x <= 5000 for x, y in t.outages)
          and all(y <= t.period_ms - 1000 for _, y in t.outages),
          f"seed {seed}: outages {t.outages}")
    # 20..40 s between outages, the first 10..30 s in
    starts = [x for x, _ in t.outages]
    gaps = [s2 - e1 for (_, e1), s2 in zip(t.outages, starts[1:])]
    check((not starts or 10000 <= starts[0] <= 30000)
          and all(20000 <= g <= 40000 for g in gaps),
          f"seed {seed}: first outage at {starts[:1]}, gaps {gaps}")
    outages += len(t.outages)
    # no opportunity in an outage; the count is the capacity's integral
    # over 1500 bytes, to 1%
    opps = t.opportunities_ms
    check(opps == sorted(opps) and opps[0] >= 1
          and opps[-1] == t.period_ms, f"seed {seed}: lines in order, the "
          f"last ({opps[-1]}) the period {t.period_ms}")
    check(not any(x < o < y for o in opps for x, y in t.outages),
          f"seed {seed}: no opportunity in an outage")
    integral = sum((y - x) / 1000 * r * 1e6 / 8 for x, y, r in segs) / 1500
    check(abs(len(opps) - integral) <= 0.01 * integral,
          f"seed {seed}: {len(opps)} opportunities for {integral:.0f}")
    st = cellular.stats(t)
    check(0.3 <= st["mean_mbit"] <= 15 and st["outages"] == len(t.outages),
          f"seed {seed}: stats {st}")
check(outages >= len(SEEDS), f"{outages} outages in {len(SEEDS)} 2-minute "
      "traces (one every 20-40 s expected)")

# the rate walk reaches both sides of the streams' rates over the seeds
both = sum(1 for seed in SEEDS
           if (lambda st: st["below_1mbit"] > 0 and st["below_4mbit"] < 1)(
               cellular.stats(cellular.generate(seed, 60))))
check(both >= len(SEEDS) // 2, f"{both} of {len(SEEDS)} minute traces "
      "go below 1 and above 4 Mbit/s")

# a rate held exactly: 1500 bytes a ms at 12 Mbit/s
t = cellular.Trace([], 1000, 50, 100, [(0, 12.0)], [], 0)
opps = cellular._opportunities(cellular.segments(t), 1000)
check(opps == list(range(1, 1001)), f"12 Mbit/s: {opps[:3]}..{opps[-3:]}, "
      f"{len(opps)} lines")
# 24 Mbit/s: two lines a ms; an outage in the middle holds none
t = cellular.Trace([], 1000, 50, 100, [(0, 24.0), (200, 0.0), (700, 24.0)],
                   [(200, 700)], 0)
opps = cellular._opportunities(cellular.segments(t), 1000)
check(len(opps) == 1000 and opps[:4] == [1, 1, 2, 2]
      and not any(200 < o < 701 for o in opps),
      f"24 Mbit/s with an outage: {len(opps)} lines, {opps[:4]}")

tmp = tempfile.mkdtemp(prefix="test_cellular.")
try:
    # write: the mahimahi lines and the .json beside them
    path = os.path.join(tmp, "s3.trace")
    cellular.write(a, path)
    lines = open(path).read().split()
    meta = cellular.read_meta(path)
    check([int(x) for x in lines] == a.opportunities_ms
          and meta["rtt_ms"] == a.rtt_ms and meta["period_ms"] == 60000,
          "write: lines and metadata")
    out = subprocess.run([sys.executable, os.path.join(HERE, "cellular.py"),
                          "--seed", "3", "--seconds", "60", "--out",
                          path + "2"], capture_output=True, text=True)
    check(out.returncode == 0 and "outages" in out.stdout
          and open(path + "2").read() == open(path).read(),
          f"CLI: {out.returncode} {out.stdout} {out.stderr}")

    # the grid: seeds x 1, 4 Mbit/s x 1, 2 s, the seed's RTT
    grid = compare.cells("cellular", 3)
    check(len(grid) == 12 and {c[2] for c in grid} == {1000, 4000}
          and {c[3] for c in grid} == {1000, 2000}
          and all(c[0] == cellular.generate(compare.cellular_seed(c[4]),
                                            1).rtt_ms for c in grid),
          f"cellular cells: {grid}")
    spec = compare.cellular_link_spec(a, path)
    check(spec == f"trace={path},delay={a.rtt_ms / 2:g}ms,"
          f"queue={a.queue_pkts}p/rate=10mbit,delay={a.rtt_ms / 2:g}ms,"
          f"queue={a.queue_pkts}p", f"link spec {spec}")

    # a run with a stand-in netsim: the trace goes with the results, the
    # link follows it, the run's .json names it
    fake = os.path.join(tmp, "netsim")
    with open(fake, "w") as fh:
        fh.write("#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/argv\"\n"
                 "while [ \"$1\" != --stats ]; do shift; done\n"
                 "echo '{\"links\": [], \"valid\": true}' > \"$2\"\n")
    os.chmod(fake, 0o755)
    args = types.SimpleNamespace(
        results=os.path.join(tmp, "res"), seconds=20, reuse=False,
        tabulate=False, reanalyse=False, netsim=fake, build=tmp,
        loss_seed=3)
    os.makedirs(args.results)
    res = compare.run_cell(args, grid[1], "multitcp-default", "bbr")
    argv = open(os.path.join(tmp, "argv")).read().split()
    tpath = compare.cellular_trace_path(args.results, 1, 20)
    link = argv[argv.index("--link") + 1]
    check(os.path.exists(tpath) and link.startswith(f"trace={tpath},")
          and argv[argv.index("--cc") + 1] == "bbr"
          and argv[argv.index("--seed") + 1] == "3"
          and argv[argv.index("--system") + 1] == "multitcp-default",
          f"run: {argv}")
    check(res["trace"] == os.path.basename(tpath) and res["kbps"] == 1000
          and res["budget"] == 2000
          and res["queue"] == cellular.generate(1, 1).queue_pkts
          and res["trace_stats"]["seconds"] == 20 + compare.TRACE_SLACK_S,
          f"run's record: {res}")
    # the trace is as long as the run and its slack, and never loops in it
    check(int(open(tpath).read().split()[-1]) ==
          (20 + compare.TRACE_SLACK_S) * 1000, "trace length")

    # multitcp-default: multitcpsrc with host, port and latency only
    try:
        import peer_live
    except (ImportError, ValueError):
        peer_live = None        # no GStreamer bindings: the above only
    if peer_live:
        d = peer_live.receiver_desc("multitcp-default", "10.0.0.1", 5600,
                                    2000)
        check(d.startswith("multitcpsrc name=src host=10.0.0.1 port=5600 "
                           "latency=2000 ! ") and "connections" not in d,
              f"multitcp-default from peer_live: {d}")
        s = peer_live.sender_desc("multitcp-default", "10.0.0.1", 5600,
                                  1000, 2000)
        check("multitcpsink name=mtcpsink host=10.0.0.1 port=5600 "
              "sync=false" in s and "connections" not in s
              and "copy-overhead" not in s,
              f"multitcp-default's sender: {s}")

    # the docs writer on made-up results, into a copy of the docs
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        matplotlib = None
    if matplotlib:
        top = os.path.join(tmp, "top")
        os.makedirs(os.path.join(top, "docs"))
        with open(os.path.join(top, "docs", "benchmarks.md"), "w") as fh:
            fh.write("# Benchmarks\n\n## Other\n\ntext\n")
        results = []
        for cell in grid[:4]:
            for system, late, wpb in (("multitcp-default", 0.2, 1.3),
                                      ("srt", 0.1, 1.1), ("tcp", 0.0, 1.05)):
                rtt, loss, kbps, budget, kind = cell
                results.append(dict(
                    system=system, cc="cubic", rtt=rtt, loss=loss,
                    kbps=kbps, budget=budget, kind=kind, late_fraction=late,
                    stalls=1, stall_s=0.5, delivered_mbps=kbps / 1000,
                    wire_per_byte=wpb, wire_per_byte_steady=wpb,
                    sent_per_byte_steady=None, queue=172,
                    trace="cellular-s1-20s.trace",
                    trace_stats=cellular.stats(
                        compare.cellular_trace(1, 20))))
        old_top = compare.TOP
        compare.TOP = top
        try:
            compare.write_cellular_docs(types.SimpleNamespace(
                cc=["cubic"], seconds=20, section=None,
                results=args.results), results)
        finally:
            compare.TOP = old_top
        doc = open(os.path.join(top, "docs", "benchmarks.md")).read()
        check("## Cellular uplinks" in doc and "## Other" in doc
              and doc.count("| cubic | 1 |") == 12
              and "multitcp-default cubic seed 1 1 Mbit/s 1000 ms" in doc
              and os.path.exists(os.path.join(top, "docs", "bench",
                                              "cellular-trace.png"))
              and os.path.exists(os.path.join(top, "docs", "bench",
                                              "cellular.png")),
              "docs: section, rows, targets and plots")
finally:
    shutil.rmtree(tmp)

# --dry-run: prints, runs and writes nothing
out = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"),
                      "--grid", "cellular", "--cc", "cubic", "bbr",
                      "--results", os.path.join(tempfile.gettempdir(),
                                                "test_cellular_dry_absent"),
                      "--dry-run"], capture_output=True, text=True)
check(out.returncode == 0 and out.stdout.count("\ncell ") == 15
      and "96 runs" in out.stdout
      and not os.path.exists(os.path.join(tempfile.gettempdir(),
                                          "test_cellular_dry_absent")),
      f"dry run: {out.returncode} {out.stdout[-300:]} {out.stderr[-500:]}")
json.dumps(cellular.stats(a))   # the stats serialise

# the clairvoyant bound (bitrate_runs.clairvoyant_mbps): a steady 3 Mbit/s
# link carries a 2 Mbit/s stream whole; of a 4 Mbit/s one what the link
# carries until the span's end plus the budget (3 x 11 / 10); 2 s dark in
# 10 costs what it would have carried; what the link carries while nothing
# waits is lost
steady = {"rate_series": [[0, 3.0]], "period_ms": 20000}
check(abs(bitrate_runs.clairvoyant_mbps(steady, 2.0, 1.0, 0, 10) - 2.0)
      < 0.01, "steady link, 2 Mbit/s stream: all of it")
check(abs(bitrate_runs.clairvoyant_mbps(steady, 4.0, 1.0, 0, 10) - 3.3)
      < 0.05, "steady link, 4 Mbit/s stream: the link's rate")
dark = {"rate_series": [[0, 3.0], [4000, 0.0], [6000, 3.0]],
        "period_ms": 20000}
b1 = bitrate_runs.clairvoyant_mbps(dark, 4.0, 1.0, 0, 10)
b3 = bitrate_runs.clairvoyant_mbps(dark, 4.0, 3.0, 0, 10)
check(abs(b1 - 2.7) < 0.05 and abs(b3 - 3.3) < 0.05,
      f"2 s dark in 10: {b1:.2f} with 1 s, {b3:.2f} with 3 s")
burst = {"rate_series": [[0, 10.0], [1000, 1.0]], "period_ms": 20000}
check(bitrate_runs.clairvoyant_mbps(burst, 4.0, 0.5, 0, 10) < 1.7,
      "a burst of capacity before the stream could fill it is lost")

# the lagged oracle (bitrate_runs.lagged_oracle): on a steady link it makes
# its share of the capacity and nothing is late; a fall from 4 to 1 Mbit/s
# it learns at once costs nothing, one it learns a second late at its whole
# share leaves a backlog the link cannot drain in time (3 Mbit made in a
# second the link carried 1 of; at share 1 there is no room to catch up),
# and what is late around a long outage is excused
on, lo, made = bitrate_runs.lagged_oracle(steady, 0.7, 0.5, 4.0, 1.0, 1, 11)
check(abs(on - 2.1) < 0.05 and lo == 0 and abs(made - 10) < 1e-6,
      f"steady 3 Mbit/s, share 0.7: {on:.2f} Mbit/s on time, {lo} s late")
fall = {"rate_series": [[0, 4.0], [5000, 1.0]], "period_ms": 20000,
        "outages": []}
on0, lo0, _ = bitrate_runs.lagged_oracle(fall, 1.0, 0.0, 4.0, 1.0, 0, 10)
on1, lo1, _ = bitrate_runs.lagged_oracle(fall, 1.0, 1.0, 4.0, 1.0, 0, 10)
check(lo0 == 0 and abs(on0 - 2.5) < 0.05,
      f"a fall known at once: {on0:.2f} Mbit/s, {lo0} s late")
check(lo1 >= 0.5, f"a fall known a second late at share 1: "
      f"{on1:.2f} Mbit/s, {lo1:.2f} s late")
# a rise known a second late costs a second of the difference, no lateness
rise = {"rate_series": [[0, 1.0], [5000, 4.0]], "period_ms": 20000,
        "outages": []}
onr0, lor0, _ = bitrate_runs.lagged_oracle(rise, 1.0, 0.0, 4.0, 1.0, 0, 10)
onr1, lor1, _ = bitrate_runs.lagged_oracle(rise, 1.0, 1.0, 4.0, 1.0, 0, 10)
check(lor0 == 0 and lor1 == 0 and abs(onr0 - 2.5) < 0.05
      and abs(onr0 - onr1 - 0.3) < 0.05,
      f"a rise known at once: {onr0:.2f}, a second late: {onr1:.2f} "
      f"Mbit/s, nothing late ({lor0}, {lor1})")
dark2 = dict(dark, outages=[[4000, 6000]])
_, lo_dark, _ = bitrate_runs.lagged_oracle(dark2, 0.7, 0.0, 4.0, 1.0, 0, 10)
check(lo_dark == 0, f"late only around a 2 s outage: excused ({lo_dark})")

# the least-late bound of a fixed-rate stream over summed links
# (bitrate_runs.fixed_rate_late_bound): two 3 Mbit/s links carry a 4
# Mbit/s stream whole; one alone, dark 2 s of 10 with a 1 s budget, loses
# what its second of darkness beyond the budget holds; a cut of link 1
# counts like its outage
two = [{"rate_series": [[0, 3.0]], "period_ms": 20000}] * 2
check(bitrate_runs.fixed_rate_late_bound(two, 4.0, 1.0, 0, 10) < 1e-6,
      "two links with room: nothing late")
one_dark = [{"rate_series": [[0, 6.0], [4000, 0.0], [6000, 6.0]],
             "period_ms": 20000}]
lb = bitrate_runs.fixed_rate_late_bound(one_dark, 4.0, 1.0, 0, 10)
check(0.08 < lb < 0.12, f"2 s dark, 1 s budget: about 1 s of 10 late "
      f"({lb:.3f})")
lb3 = bitrate_runs.fixed_rate_late_bound(one_dark, 4.0, 3.0, 0, 10)
check(lb3 < 1e-6, f"the same with 3 s of budget: nothing ({lb3:.3f})")
cut4 = bitrate_runs.fixed_rate_late_bound(two, 4.0, 1.0, 0, 10,
                                          dark=((2.0, 6.0),))
cut6 = bitrate_runs.fixed_rate_late_bound(two, 4.0, 1.0, 0, 10,
                                          dark=((2.0, 8.0),))
# the other link's shortfall (1 Mbit/s) queues; a byte waits what is ahead
# of it at 3 Mbit/s until the cut ends, then at 6: a 4 s cut stays within
# the budget, a 6 s one does not (about 2 Mbit of 40 late)
check(cut4 < 0.005 and 0.03 < cut6 < 0.08, f"one of two links cut: 4 s "
      f"within the budget ({cut4:.4f}), 6 s not ({cut6:.3f})")

# the frames a run is judged on (bitrate_runs.frame_outcomes): those the
# sender made from the first received on and due while the receiver
# listened; a frame due before it stopped that never came is lost, one due
# after it (the sender runs on) is not judged at all
FRAME_NS = int(1e9 / compare.FPS)
made = [(3600 * 10**9 + i * FRAME_NS, 4000 + (i * 7919) % 9000)
        for i in range(120)]
got = [(100.0 + i / compare.FPS + 0.05, i * FRAME_NS, size)
       for i, (pts, size) in enumerate(made[:90]) if i != 50]
rx = {"frames": got, "end_at": 100.06 + 89 / compare.FPS + 1.0}
outcomes = bitrate_runs.frame_outcomes(rx, {"frames_sent": made}, 1.0, 100.0)
check(len(outcomes) == 90 and [ok for _, ok in outcomes].count(False) == 1
      and not outcomes[50][1],
      f"judged while the receiver listened: {len(outcomes)} frames, "
      f"{[i for i, (_, ok) in enumerate(outcomes) if not ok]} lost")
del rx["end_at"]
outcomes = bitrate_runs.frame_outcomes(rx, {"frames_sent": made}, 1.0, 100.0)
check(len(outcomes) == 60, f"without its end, to its last frame's arrival "
      f"({len(outcomes)} frames)")

# a stream at the least bitrate (bitrate_runs.least_rate_late_outside): on
# a 6 Mbit/s link dark 2 s of 10 it is late only for what it made in the
# second before the darkness ends, and that is excused (an outage longer
# than the 1 s budget); a link that carries less than it for 3 s without
# an outage makes it late there
one_dark[0]["outages"] = [[4000, 6000]]
_, _, late_at = bitrate_runs.fixed_rate_late(one_dark, 0.3, 1.0, 0, 10)
check(abs(len(late_at) * 0.01 - 1.0) < 0.03 and min(late_at) >= 3.99
      and max(late_at) < 5.0, f"late pieces made in [4, 5): "
      f"{len(late_at) * 0.01:.2f} s from {min(late_at):.2f}")
check(bitrate_runs.least_rate_late_outside(one_dark[0], 1.0, 0, 10) == 0,
      "excused by the outage")
thin = {"rate_series": [[0, 6.0], [4000, 0.15], [7000, 6.0]],
        "period_ms": 20000, "outages": []}
thin_late = bitrate_runs.least_rate_late_outside(thin, 1.0, 0, 10)
check(0.5 < thin_late < 3.0, f"0.15 Mbit/s for 3 s under 0.3: "
      f"{thin_late:.2f} s of stream late")

f.exit()
