#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""multitcp against what users would pick instead, on the same netsim path
in the same run: one TCP connection (tcpserversink/tcpclientsrc), SRT
(srtsink/srtsrc) and RIST (ristsink/ristsrc), all carrying the same live
x264 CBR video in MPEG-TS (tests/bench/peer_live.py).

  tests/bench/compare.py [--grid issue|full|cellular] [--cc cubic bbr]
      [--systems multitcp-pars multitcp-dynamic multitcp-parsdyn tcp srt rist]
      [--seconds 40]
      [--build build] [--cells 0 1] [--section "heading"]
      [--results results/compare] [--reuse [--reanalyse] [--tabulate]]
      [--seeds 4] [--dry-run]

A cell is RTT x random loss x stream bitrate x latency budget on a 50 Mbit/s
link (queue of one bandwidth-delay product, at least 100 packets); `--grid
full` is the issue's 3x3x3x3 grid, `--grid issue` (default) the cells that
carry its targets plus one change along each axis, a Gilbert-Elliott cell,
a time-varying-rate cell and a two-path cell. Per run, at the receiver:
frames late or lost (a frame is on time when it arrives by first arrival +
its PTS distance + the budget; lost when its PTS never arrives or it comes
with other bytes than the sender's encoder made), stalls and
stall time of a player that waits for late frames, delivered bitrate, bytes on the wire
(both directions, from netsim) per TS byte delivered (the whole run, and a
steady span between two netsim marks), CPU seconds per GB
(sender + receiver); and, since the sender records when each frame left
its encoder, the same on the sender's clock: after a 2 s warm-up a frame
is late when it comes more than the cell's smallest delay (of any system
run) + budget + two frame times after that (the budget above counts from
the first whole frame, which a joiner gets from a backlog), with the
delay's median, 99th percentile and maximum. Results: results/compare/*.json (or --results), a
table and a plot in docs/benchmarks.md and docs/bench/; `--grid full`
writes one row per cell instead (its own section), and with --reuse a run
that stopped part-way goes on where it was.

`--grid cellular` is issue 23's cellular scenario set: seeded uplink
traces from tests/bench/cellular.py (capacity a random walk between 0.3
and 15 Mbit/s with outages of 1-5 s, a base RTT of 40-80 ms and a queue
of 100-200 packets per seed), seeds 1..--seeds (4) x streams of 1 and 4
Mbit/s x budgets of 1 and 2 s, the A->B link following the seed's trace
and B->A a plain 10 Mbit/s, both with half the RTT and the queue; systems
multitcp-default (the elements' defaults: nothing set on multitcpsrc or
multitcpsink beyond host, port and the source's latency), srt and tcp;
60 s per run. Each seed's trace goes to the results directory
(cellular-sN-Ss.trace and .trace.json) and every run's .json names it.
It writes its own section, "Cellular uplinks", with a plot of the traces'
capacity and one of the late-or-lost fraction by cell. `--dry-run` prints
the cells, their link specs (and the traces' figures) and the wall time
a run would take, and runs and writes nothing.

Environment: BENCH_SINK_OPTS adds properties to every multitcpsink,
BENCH_KEY_INT_MAX sets x264enc's key-int-max (30 frames unless set); each
run's .json records them.
"""
import argparse
import bisect
import collections
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PEER = os.path.join(HERE, "peer_live.py")
FPS = 30
LINK_RATE_MBIT = 50
# the steady span for wire/byte: from this long after the receiver starts
# to STEADY_TAIL before it stops, so that neither a system's start nor the
# data it still holds at the end (SRT's latency buffer) counts
STEADY_FROM, STEADY_TAIL = 6.0, 3.0

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cellular  # noqa: E402
import share  # noqa: E402

# issue 23's cellular set (--grid cellular)
CELLULAR_KBPS = (1000, 4000)
CELLULAR_BUDGETS = (1000, 2000)
CELLULAR_SYSTEMS = ["multitcp-default", "srt", "tcp"]
CELLULAR_SECONDS = 60
# the trace covers the sender's whole life under netsim, not only the
# receiver's --seconds: the sender starts 1.5 s before the receiver and
# stops 4 s after it, GStreamer's start on top; so it never loops in a run
TRACE_SLACK_S = 8
# per run, beyond --seconds: netsim's set-up, the sender's 1.5 s lead and
# 4 s tail, two GStreamer starts (for the wall-time estimate of --dry-run)
RUN_OVERHEAD_S = 8
# multitcp with the elements' defaults: peer_live.py's multitcp-N names
# always set `connections`; this one sets nothing (peer_live.py)
DEFAULT_SYSTEM = "multitcp-default"


def link_spec(rtt_ms, loss, extra=""):
    # one bandwidth-delay product of queue, at least 100 packets
    queue = max(100, int(LINK_RATE_MBIT * 1e6 / 8 * rtt_ms / 1e3 / 1500))
    ab = (f"rate={LINK_RATE_MBIT}mbit,delay={rtt_ms / 2:g}ms,queue={queue}p"
          + (f",loss={loss}" if loss and not extra else "") + extra)
    ba = f"rate={LINK_RATE_MBIT}mbit,delay={rtt_ms / 2:g}ms,queue={queue}p"
    return f"{ab}/{ba}"


def cellular_trace_path(results, seed, seconds):
    return os.path.join(results, f"cellular-s{seed}-{seconds:g}s.trace")


def cellular_trace(seed, seconds):
    """The trace a cellular run of --seconds uses (the slack included)."""
    return cellular.generate(seed, seconds + TRACE_SLACK_S)


def cellular_link_spec(trace, path):
    """A->B follows the trace, B->A (the ACKs) a plain rate; both the
    seed's half RTT and queue."""
    half = f"delay={trace.rtt_ms / 2:g}ms,queue={trace.queue_pkts}p"
    path = os.path.abspath(path)
    # netsim splits a spec at ',' and its two directions at the '/' that
    # comes before "key="
    if "," in path or re.search(r"/[a-z_]+=", path):
        raise SystemExit(f"netsim cannot take the trace path {path}")
    return (f"trace={path},{half}/"
            f"rate={cellular.REVERSE_MBIT}mbit,{half}")


def cellular_seed(kind):
    """'cellular-s3' -> 3; None for other cells."""
    if kind.startswith("cellular-s"):
        return int(kind[len("cellular-s"):])
    return None


# issue 26's bonding set (--grid bonding): the camera bonds its modems, the
# sink dialing over every link's device (_bond: the receiver listens)
BONDING_SYSTEMS = ["multitcp-default_bond", "multitcp-encoder_bond", "rist",
                   "rist-broadcast", "srt",
                   "tcp"]
BONDING_SECONDS = 60
# cellular-like traces on each link, a walk around 6 Mbit/s (the generator
# of the cellular set, capacity x2), a seed each
BONDING_SCALE = 2.0
BONDING_SEEDS = (21, 22)
# bond-cut: link 1 dark this long from this far into the receiver's run
BONDING_CUT = (15.0, 30.0)
# bond-cut: link 1 is back once it carries this share of both links' bytes
BONDING_BACK_SHARE = 0.25
# bond-ge: Gilbert-Elliott on link 1: bad 1/11 of the time, all lost there
BONDING_GE = "ge=0.02:0.2:0:1.0"
# bond-3: three links of 20, 60 and 150 ms RTT and different rates
BONDING_THREE = ("rate=4mbit,delay=10ms,queue=60p",
                 "rate=3mbit,delay=30ms,queue=80p",
                 "rate=2mbit,delay=75ms,queue=100p")


def bonding_links(kind, results, seconds):
    """netsim --link specs of a bond-* cell (traces written to results)."""
    if kind == "bond-3":
        return list(BONDING_THREE)
    specs = []
    for k, seed in enumerate(BONDING_SEEDS):
        trace = cellular.generate(seed, seconds + TRACE_SLACK_S,
                                  scale=BONDING_SCALE)
        path = os.path.join(results, f"bond-s{seed}-{seconds:g}s.trace")
        cellular.write(trace, path)
        spec = cellular_link_spec(trace, path)
        if kind == "bond-ge" and k == 1:
            ab, ba = spec.split("/rate=", 1)
            spec = f"{ab},{BONDING_GE}/rate={ba}"
        specs.append(spec)
    return specs


# the two paths of the multipath cell: the receiver has an address on each
MULTIPATH_LINKS = ("rate=6mbit,delay=10ms,queue=60p",
                   "rate=3mbit,delay=40ms,queue=60p")


def inner(args):
    """Inside netsim: sender in A, receiver in B, wait, collect."""
    # netsim's schedule counts from about now
    with open(args.out + ".t0.json", "w") as f:
        json.dump({"t0": time.monotonic()}, f)
    ns_a, ns_b = os.environ["NETSIM_NS_A"], os.environ["NETSIM_NS_B"]
    addr_a, addr_b = os.environ["NETSIM_ADDR_A"], os.environ["NETSIM_ADDR_B"]
    system = args.system
    if args.kind == "multipath":
        b0, b1 = os.environ["NETSIM_ADDR_B0"], os.environ["NETSIM_ADDR_B1"]
        # from B's second address, A's first is reached over path 1
        subprocess.run(["ip", "netns", "exec", ns_b, "sh", "-ec",
                        f"ip rule add from {b1} table 101; ip route add "
                        f"{addr_a} dev nsb1 table 101"], check=True)
        # multitcp spreads its connections over both addresses, RIST bonds
        # both paths; one TCP connection and SRT take path 0, the better
        os.environ["BENCH_PATHS"] = f"{b0},{b1}"
    if args.kind.startswith("bond"):
        # each modem has a default route of its own: a sink bound to its
        # device (interfaces=) goes out there; RIST sends to the receiver's
        # address on each link; SRT and TCP take link 0
        n = sum(1 for k in os.environ if re.fullmatch(r"NETSIM_ADDR_B\d+", k))
        for k in range(n):
            subprocess.run(["ip", "netns", "exec", ns_a, "ip", "route", "add",
                            "default", "dev", f"nsa{k}", "metric",
                            str(100 + k)], check=True)
        os.environ["BENCH_UPLINKS"] = ",".join(f"nsa{k}" for k in range(n))
        if system.startswith("rist"):
            os.environ["BENCH_PATHS"] = ",".join(
                os.environ[f"NETSIM_ADDR_B{k}"] for k in range(n))
    # RIST pushes to the receiver, and a multitcp sink dials a listening
    # receiver (_listen); the others listen at the sender
    receiver_first = (system.startswith("rist") or system.endswith("_listen")
                      or system.endswith("_bond"))
    peer_tx = addr_b if receiver_first else addr_a
    common = [system, None, "5600", str(args.kbps), None, str(args.budget)]
    tx_out, rx_out = args.out + ".tx.json", args.out + ".rx.json"
    tx_args = list(common)
    # the sender outlives the receiver, which starts 1.5 s after it and
    # takes up to a second more to load GStreamer: with + 2 the TS stopped
    # before the receiver did (its last stats read no connection open)
    tx_args[1], tx_args[4] = peer_tx, str(
        args.seconds if system.startswith("rist") else args.seconds + 4)
    rx_args = list(common)
    rx_args[1], rx_args[4] = addr_a, str(args.seconds)
    log = open(args.out + ".log", "w")
    PEER_CMD = ["/usr/bin/python3", PEER]
    procs = []                  # killed at the end if still running
    try:
        if args.kind.startswith("share"):
            # N bulk flows over the whole run, ahead of the stream
            procs += share.start_bulk(ns_a, ns_b, addr_b, args.kind,
                                      share.BULK_LEAD_S + args.seconds + 8,
                                      args.out)
            time.sleep(share.BULK_LEAD_S)
        run_peers(args, ns_a, ns_b, PEER_CMD, rx_args, tx_args, rx_out,
                  tx_out, receiver_first, log, procs)
        for p in procs:
            p.wait(timeout=30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def run_peers(args, ns_a, ns_b, PEER_CMD, rx_args, tx_args, rx_out, tx_out,
              receiver_first, log, procs):
    """Starts both peers (each added to @procs as it starts), marks the
    steady span, waits for them."""
    rx = None
    if receiver_first:
        rx = subprocess.Popen(["ip", "netns", "exec", ns_b] + PEER_CMD +
                              ["recv"] + rx_args + [rx_out],
                              stdout=log, stderr=subprocess.STDOUT)
        procs.append(rx)
        time.sleep(0.5)
    tx = subprocess.Popen(["ip", "netns", "exec", ns_a] + PEER_CMD +
                          ["send"] + tx_args + [tx_out],
                          stdout=log, stderr=subprocess.STDOUT)
    procs.append(tx)
    time.sleep(1.5)
    if rx is None:
        rx = subprocess.Popen(["ip", "netns", "exec", ns_b] + PEER_CMD +
                              ["recv"] + rx_args + [rx_out],
                              stdout=log, stderr=subprocess.STDOUT)
        procs.append(rx)
    # netsim (our parent) notes the bytes each link forwarded at SIGUSR1
    rx_start = time.monotonic()
    for at in (STEADY_FROM, args.seconds - STEADY_TAIL):
        if at > 0 and rx.poll() is None:
            time.sleep(max(0.0, rx_start + at - time.monotonic()))
            os.kill(os.getppid(), signal.SIGUSR1)
    rx.wait(timeout=args.seconds + 60)
    tx.wait(timeout=30)


def steady_wire_per_byte(marks, series, keys=("ab", "ba")):
    """IP bytes both ways over TS bytes delivered between the first two
    marks (the receiver's TS byte count interpolated at their times);
    keys ("ab_offered", "ba_offered"): the bytes the senders put on the
    links, lost ones too."""
    if len(marks) < 2 or len(series) < 2:
        return None

    def ts_at(t):
        for (t0, b0), (t1, b1) in zip(series, series[1:]):
            if t0 <= t <= t1:
                return b0 + (b1 - b0) * (t - t0) / max(t1 - t0, 1e-9)
        return None
    a, b = marks[0], marks[1]
    ts0, ts1 = ts_at(a["t"]), ts_at(b["t"])
    if ts0 is None or ts1 is None or ts1 <= ts0:
        return None
    if any(d not in la for la in a["links"] for d in keys):
        return None             # marks of a netsim from before offered bytes
    wire = sum(lb[d] - la[d] for la, lb in zip(a["links"], b["links"])
               for d in keys)
    return wire / (ts1 - ts0)


# frames in a row whose sizes must agree on a new PTS offset, and how far
# from the old one it may be
RELOCK_FRAMES = 4
RELOCK_NS = 1e9


def relock(frames, sent, keys, sizes, offset):
    """The sender's PTS for frames[0] at an offset up to RELOCK_NS from
    @offset at which it and the RELOCK_FRAMES - 1 frames after it all
    have the sizes the sender made ([] when there is none, or too few
    frames are left to tell)."""
    if len(frames) < RELOCK_FRAMES:
        return []
    _, rp, rs = frames[0]
    lo = bisect.bisect_left(keys, rp - offset - RELOCK_NS)
    hi = bisect.bisect_right(keys, rp - offset + RELOCK_NS)
    tol = 0.5e9 / FPS
    for tp, ts in sent[lo:hi]:
        if ts != rs:
            continue
        new = rp - tp
        if all(any(sizes[k] == s_ for k in keys[
                bisect.bisect_left(keys, p - new - tol):
                bisect.bisect_right(keys, p - new + tol)])
               for _, p, s_ in frames[1:]):
            return [tp]
    return []


def damaged_frames(frames, sent):
    """The PTS of frames that came out of the receiver's tsdemux with other
    bytes than the sender's encoder gave its muxer (tsdemux passes on what
    it has of a PES with a gap in it: a lost TS packet damages a frame
    without taking its PTS away), how many had no sent frame near them,
    and how many frames the sender made from the first received frame to
    the last (its own count between the first and last one matched, the
    PTS span before and after those). None when the
    sender did not record its frames; last, the (receiver PTS, sender
    PTS) pairs it matched."""
    if not sent or not frames:
        return None
    # the receiver's PTS are the sender's plus an offset (the muxer's and
    # the demuxer's bases) that drifts by some ms while tsdemux locks onto
    # the PCR: start from the offset on which most equal sizes agree over
    # the run (its first frames may all be damaged: a path short of the
    # stream at the start), then follow it from frame to frame
    by_size = collections.defaultdict(list)
    for tp, ts in sent:
        by_size[ts].append(tp)
    votes = collections.Counter(
        round((rp - tp) / 1e6) for _, rp, rs in frames
        for tp in by_size.get(rs, ()))
    if not votes:
        return None
    offset = votes.most_common(1)[0][0] * 1e6
    sent = sorted(sent)
    keys = [tp for tp, _ in sent]
    sizes = dict(sent)
    near_ns = 0.5e9 / FPS * 3
    damaged, unmatched, matched = set(), 0, []
    for i, (_, rp, rs) in enumerate(frames):
        lo = bisect.bisect_left(keys, rp - offset - near_ns)
        hi = bisect.bisect_right(keys, rp - offset + near_ns)
        same = [tp for tp, ts in sent[lo:hi] if ts == rs]
        if not same:
            # tsdemux moved its PTS by frames (seen: 100 ms after a skip,
            # and every frame after it counted damaged): lock on again
            # where this frame and the next ones all have their sizes
            same = relock(frames[i:i + RELOCK_FRAMES], sent, keys, sizes,
                          offset)
        if same:
            tp = min(same, key=lambda tp: abs(rp - offset - tp))
            offset = rp - tp
            matched.append((rp, tp))
        elif hi > lo:
            damaged.add(rp)
        else:
            unmatched += 1
    if not matched:
        return damaged, unmatched, None, matched
    # counted on the sender's clock: tsdemux's skew correction stretches
    # the receiver's PTS by up to ~0.1%, a frame's worth in a 30 s run
    (rp_lo, tp_lo), (rp_hi, tp_hi) = matched[0], matched[-1]
    made = (bisect.bisect_right(keys, tp_hi) - bisect.bisect_left(keys, tp_lo)
            + round((rp_lo - frames[0][1]) * FPS / 1e9)
            + round((frames[-1][1] - rp_hi) * FPS / 1e9))
    return damaged, unmatched, made, matched


def undecodable_frames(sent, keyframes, matched):
    """The receiver PTS of frames that came whole but cannot be decoded:
    an earlier frame of their GOP (from its keyframe) never came whole.
    A late frame still reaches the decoder, so only a missing or damaged
    one breaks the chain. None when the sender did not record its
    keyframes."""
    if not keyframes or not matched:
        return None
    keyframes = set(keyframes)
    rx_of = {tp: rp for rp, tp in matched}
    first, last = matched[0][1], matched[-1][1]
    undecodable, broken = set(), True  # until the first keyframe
    for tp in sorted(tp for tp, _ in sent if first <= tp <= last):
        if tp in keyframes:
            broken = False
        if tp not in rx_of:
            broken = True
        elif broken:
            undecodable.add(rx_of[tp])
    return undecodable


# frames of the first seconds are left out of the sender-clock figures:
# a joiner starts with a backlog (TCP's and multitcp's latest keyframe)
WARMUP_S = 2.0


def sender_clock_delays(frames, tx, matched, undecodable=frozenset()):
    """Encoder output to the receiver's demuxer output, per frame after
    the warm-up (but those in @undecodable), from the sender's own record
    of when each frame left its encoder (both ends run on one machine's
    monotonic clock). The
    bench's budget counts from the first whole frame, which a joiner gets
    from a backlog; this one counts from the sender for every system."""
    sent_at = dict(zip((tp for tp, _ in tx.get("frames_sent") or []),
                       tx.get("frames_sent_at") or []))
    if not sent_at or not matched:
        return None
    arrival = {rp: t for t, rp, _ in frames}
    start = matched[0][1] + WARMUP_S * 1e9
    return sorted(arrival[rp] - sent_at[tp] for rp, tp in matched
                  if tp >= start and tp in sent_at
                  and rp not in undecodable)


def late_on_sender_clock(r, floor_s):
    """Frames late or lost on the sender's clock: after the warm-up, a
    frame is late when it comes more than @floor_s (the cell's smallest
    delay, path and pipelines, over all systems run) + the budget + two
    frames (the muxer and the demuxer each hold one) after its encoder
    gave it out. None without the sender's record."""
    if r.get("delays_ms") is None:
        return None
    if not r["delays_ms"]:
        return 1.0      # recorded, but no frame after the warm-up came
    bound_ms = (floor_s + r["budget"] / 1000 + 2.0 / FPS) * 1000
    late = sum(1 for d in r["delays_ms"] if d > bound_ms)
    # a damaged frame (other bytes than the encoder's) has no delay: it is
    # lost to the viewer, as on the bench's clock, and so is one that
    # cannot be decoded; on time: the share of the frames that came whole
    # and decodable, times the share of those in time
    whole = max(r["expected"] - r["lost"] - (r.get("damaged") or 0)
                - (r.get("undecodable") or 0), 0)
    return 1 - (1 - late / len(r["delays_ms"])) * whole / max(r["expected"], 1)


def cell_floor(runs):
    """The smallest sender-clock delay of any system in one cell (s)."""
    floors = [r["delays_ms"][0] for r in runs if r.get("delays_ms")]
    return min(floors) / 1000 if floors else None


def analyse(rx, tx, netsim, seconds, budget_s, kbps, marks=()):
    frames = sorted({f[1]: f for f in rx.get("frames", []) if f[1] >= 0}
                    .values(), key=lambda f: f[1])
    res = {"error": rx.get("error") or tx.get("error"), "frames": len(frames)}
    if len(frames) < 2:
        res.update(late_fraction=1.0, stalls=0, stall_s=seconds,
                   delivered_mbps=0, wire_per_byte=None, cpu_per_gb=None)
        return res
    t0, p0 = frames[0][0], frames[0][1]
    # PTS of the frames the stream should have had, 1/FPS apart
    span = (frames[-1][1] - p0) / 1e9
    expected = int(round(span * FPS)) + 1
    check = damaged_frames(frames, tx.get("frames_sent"))
    damaged, unmatched, made, matched = (check if check
                                         else (set(), None, None, []))
    if made:
        expected = made
    undecodable = undecodable_frames(tx.get("frames_sent"),
                                     tx.get("frames_key"), matched)
    delays = sender_clock_delays(frames, tx, matched, undecodable or ())
    late_at = {p for t, p, _ in frames
               if t > t0 + (p - p0) / 1e9 + budget_s or p in damaged}
    late = len(late_at)
    lost = max(expected - len(frames), 0)
    # a player that starts budget_s after the first frame and waits
    stalls, stall_s, shift = 0, 0.0, 0.0
    for t, p, _ in frames:
        due = t0 + budget_s + (p - p0) / 1e9 + shift
        if t > due + 1.0 / FPS:
            stalls += 1
            stall_s += t - due
            shift += t - due
    rx_seconds = frames[-1][0] - t0
    wire = sum(link[d]["forwarded_bytes"] for link in netsim["links"]
               for d in ("ab", "ba"))
    # what the senders put on the links, the packets netsim lost too
    sent = sum(link[d].get("offered_bytes", 0) for link in netsim["links"]
               for d in ("ab", "ba"))
    # a damaged frame is lost to the viewer: it counts with the late ones
    res.update(expected=expected, late=late, lost=lost,
               damaged=len(damaged) if check else None, unmatched=unmatched,
               late_fraction=(late + lost) / max(expected, 1),
               # what a viewer sees: whole, decodable and on time
               undecodable=(None if undecodable is None
                            else len(undecodable)),
               late_fraction_decodable=(
                   None if undecodable is None else
                   (late + lost + len(undecodable - late_at))
                   / max(expected, 1)),
               stalls=stalls, stall_s=round(stall_s, 2),
               delivered_mbps=sum(f[2] for f in frames) * 8 / 1e6 /
               max(rx_seconds, 1e-3),
               wire_per_byte=wire / max(rx.get("ts_bytes", 0), 1),
               wire_per_byte_steady=steady_wire_per_byte(
                   list(marks), rx.get("ts_series", [])),
               sent_per_byte=(sent / max(rx.get("ts_bytes", 0), 1)
                              if sent else None),
               sent_per_byte_steady=steady_wire_per_byte(
                   list(marks), rx.get("ts_series", []),
                   ("ab_offered", "ba_offered")),
               first_frame_s=(t0 - rx["first_ts_at"] if "first_ts_at" in rx
                              else None),
               delays_ms=(None if delays is None else
                          [round(d * 1000, 1) for d in delays]),
               delay_p50=delays[len(delays) // 2] if delays else None,
               delay_p99=delays[int(len(delays) * 0.99)] if delays else None,
               delay_max=delays[-1] if delays else None,
               cpu_per_gb=(rx.get("cpu_s", 0) + tx.get("cpu_s", 0)) /
               max(rx.get("ts_bytes", 0) / 1e9, 1e-9),
               stats=rx.get("stats"))
    return res


def share_figures(out, kind, marks):
    """A share cell's: the link's bytes are the bulk flows' too, so the
    stream's own come from share.figures, not the wire/byte figures."""
    return dict(share.figures(out, marks, share.parse_kind(kind)[1]),
                wire_per_byte=None, wire_per_byte_steady=None,
                sent_per_byte=None, sent_per_byte_steady=None)


def reanalyse(out, res, seconds, budget_s, kbps):
    """A stored run analysed again from what its ends and netsim wrote
    (after a change in analyse()); the .json is rewritten."""
    try:
        rx = json.load(open(out + ".rx.json"))
        tx = json.load(open(out + ".tx.json"))
        netsim = json.load(open(out + ".netsim.json"))
    except (OSError, ValueError):
        return res              # a failed run keeps its error
    new = analyse(rx, tx, netsim, seconds, budget_s, kbps,
                  res.get("marks", []))
    for k in ("marks", "system", "cc", "rtt", "loss", "kbps", "budget",
              "kind", "valid", "queue", "trace", "trace_stats", "seconds",
              "sink_opts", "loss_seed"):
        if k in res:
            new[k] = res[k]
    if new.get("kind", "").startswith("share"):
        new.update(share_figures(out, new["kind"], new.get("marks", [])))
    if new.get("kind", "").startswith("bond"):
        new.update(bonding_run_figures(out, rx, tx, netsim, new["kind"],
                                       budget_s))
    with open(out + ".json", "w") as f:
        json.dump(new, f)
    return new


def run_cell(args, cell, system, cc):
    rtt, loss, kbps, budget, kind = cell
    name = (f"{system}-{cc}-rtt{rtt}-loss{loss}-{kbps}k-b{budget}"
            + (f"-{kind}" if kind else ""))
    out = os.path.join(args.results, name)
    if args.reuse and os.path.exists(out + ".json"):
        res = json.load(open(out + ".json"))
        if args.reanalyse:
            res = reanalyse(out, res, args.seconds, budget / 1000, kbps)
        return res
    if args.tabulate:
        return None
    extra = ""
    if kind == "ge":
        # bursty loss, mean 0.01/0.31 * 0.9 = 2.9%, bursts of ~3 packets
        extra = ",ge=0.01:0.3:0:0.9"
    link = share.link_spec() if kind.startswith("share") else link_spec(
        rtt, loss, extra)
    seed = cellular_seed(kind)
    trace_info = {}
    if seed is not None:
        trace = cellular_trace(seed, args.seconds)
        tpath = cellular_trace_path(args.results, seed, args.seconds)
        cellular.write(trace, tpath)    # the same bytes for every run
        link = cellular_link_spec(trace, tpath)
        trace_info = dict(queue=trace.queue_pkts,
                          trace=os.path.basename(tpath),
                          trace_stats=cellular.stats(trace))
    cmd = [args.netsim, "--stats", out + ".netsim.json", "--cc", cc,
           "--link", link]
    if kind == "multipath" or kind.startswith("bond"):
        cmd = [args.netsim, "--stats", out + ".netsim.json", "--cc", cc]
        for spec in (MULTIPATH_LINKS if kind == "multipath" else
                     bonding_links(kind, args.results, args.seconds)):
            cmd += ["--link", spec]
    if kind == "bond-cut":
        # the receiver starts ~2 s into netsim's run (the sender's lead)
        sched = out + ".schedule"
        with open(sched, "w") as f:
            f.write(f"at={BONDING_CUT[0] + 2:g} link=1 "
                    f"blackout={BONDING_CUT[1]:g}\n")
        cmd += ["--schedule", sched]
    if kind == "trace":
        # the rate steps 50 -> 12 -> 30 -> 8 -> 50 Mbit/s, 8 s each
        sched = out + ".schedule"
        with open(sched, "w") as f:
            for i, r in enumerate((12, 30, 8, 50)):
                f.write(f"at={8 * (i + 1)} link=0 dir=ab rate={r}mbit\n")
        cmd += ["--schedule", sched]
    # netsim draws its losses from a fixed seed: without another one every
    # run of a lossy cell loses the same packets (with seed 1 the second
    # A->B packet, the first connection's SYN-ACK in the full grid)
    cmd += ["--seed", str(args.loss_seed)]
    cmd += ["--", "/usr/bin/python3", os.path.abspath(__file__), "--inner",
            "--system", system, "--kbps", str(kbps), "--budget", str(budget),
            "--kind", kind,
            "--seconds", str(args.seconds), "--out", out]
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(args.build, "gst"))
    if os.path.exists(out + ".netsim.json.marks"):
        os.unlink(out + ".netsim.json.marks")
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=args.seconds + 120)
    try:
        rx = json.load(open(out + ".rx.json"))
    except (OSError, ValueError):
        rx = {"error": "receiver wrote nothing (see the .log)"}
    try:
        tx = json.load(open(out + ".tx.json"))
    except (OSError, ValueError):
        tx = {"error": "sender wrote nothing (see the .log)"}
    netsim = json.load(open(out + ".netsim.json"))
    try:
        marks = [json.loads(line) for line in open(out + ".netsim.json.marks")]
        os.unlink(out + ".netsim.json.marks")
    except (OSError, ValueError):
        marks = []
    res = analyse(rx, tx, netsim, args.seconds, budget / 1000, kbps, marks)
    res["marks"] = marks
    if kind.startswith("bond"):
        res.update(bonding_run_figures(out, rx, tx, netsim, kind,
                                       budget / 1000))
    if kind.startswith("share"):
        res.update(share_figures(out, kind, marks), seconds=args.seconds)
    res.update(system=system, cc=cc, rtt=rtt, loss=loss, kbps=kbps,
               budget=budget, kind=kind, valid=netsim.get("valid", True),
               loss_seed=args.loss_seed, **trace_info)
    if os.environ.get("BENCH_SINK_OPTS"):
        res["sink_opts"] = os.environ["BENCH_SINK_OPTS"]
    if os.environ.get("BENCH_KEY_INT_MAX"):
        res["key_int_max"] = int(os.environ["BENCH_KEY_INT_MAX"])
    with open(out + ".json", "w") as f:
        json.dump(res, f)
    return res


# the bonding cells' traces start with both links dipping (seeds 21 and 22,
# in the receiver's first seconds): what comes late or never from this far
# into netsim's run on is apart from the join
BONDING_SETTLED_S = 8.0


def late_from(rx, t0, from_s, budget_s, damaged=()):
    """The fraction of the frames made from @from_s on (netsim's clock,
    which the traces follow) that came late (after the first frame's
    arrival, their PTS distance from it and the budget), damaged (their
    receiver PTS in @damaged) or never; a frame counts as made when it
    would have arrived with no delay past the first's. None without two
    frames or netsim's start."""
    frames = sorted({f[1]: f for f in rx.get("frames", []) if f[1] >= 0}
                    .values(), key=lambda f: f[1])
    if len(frames) < 2 or t0 is None:
        return None
    a0, p0 = frames[0][0], frames[0][1]
    step = 1e9 / FPS
    arrived = {round((p - p0) / step): (t, p) for t, p, _ in frames}
    made = bad = 0
    for k in range(max(arrived) + 1):
        if a0 - t0 + k / FPS < from_s:
            continue
        made += 1
        t, p = arrived.get(k, (None, None))
        bad += t is None or t > a0 + k / FPS + budget_s or p in damaged
    return bad / made if made else None


# path 0's RTT; 7 Mbit/s is more than either path carries alone
MULTIPATH_CELL = (20, 0, 7000, 1000, "multipath")


def bonding_run_figures(out, rx, tx, netsim, kind, budget_s):
    """A bond-* run's own figures: the links' shares, bond-cut's return,
    what was late once the links settled."""
    try:
        t0 = json.load(open(out + ".t0.json"))["t0"]
    except (OSError, ValueError, KeyError):
        t0 = None
    res = bonding_figures(tx, netsim, kind, t0)
    frames = sorted({f[1]: f for f in rx.get("frames", []) if f[1] >= 0}
                    .values(), key=lambda f: f[1])
    check = damaged_frames(frames, tx.get("frames_sent"))
    res["late_settled"] = late_from(rx, t0, BONDING_SETTLED_S, budget_s,
                                    check[0] if check else ())
    res["out"] = os.path.relpath(out, TOP)
    return res


def bonding_figures(tx, netsim, kind, t0):
    """Each link's share of what the sender put on the links, and (a
    multitcp sink's uplinks, bond-cut) how long after link 1 came back it
    carried its part of the stream again: its bytes grow, and within a
    second a quarter of the bytes both links carried (a fixed amount, 64 kB
    until stop 43, measured the encoder's bitrate where it was held low)."""
    offered = [link["ab"].get("offered_bytes", link["ab"]["forwarded_bytes"])
               for link in netsim["links"]]
    res = {"link_share": [round(o / max(sum(offered), 1), 3)
                          for o in offered]}
    series = tx.get("path_series") or []
    if kind == "bond-cut" and series and t0 is not None:
        back = t0 + BONDING_CUT[0] + 2 + BONDING_CUT[1]
        # from the last sample before the return
        first = max([i for i, (t, _, _) in enumerate(series) if t < back],
                    default=0)
        after = [(t, b[1], sum(b)) for t, b, _ in series[first:]]
        res["back_s"] = None
        # the first sample that shows link 1's bytes growing, if over the
        # second from the sample before it carries its quarter
        for i, (t, b, both) in enumerate(after[:-1]):
            later = [(b2, both2) for t2, b2, both2 in after[i:]
                     if t2 <= t + 1.0]
            mine, all_ = later[-1][0] - b, later[-1][1] - both
            if after[i + 1][1] > b and mine >= BONDING_BACK_SHARE * all_:
                res["back_s"] = round(after[i + 1][0] - back, 2)
                break
    return res


def cells(grid, seeds=4):
    if grid == "share":
        return share.cells()
    if grid == "bonding":
        # (RTT of link 0, loss, kbps, budget, kind)
        # bond-3 twice: a stream the fastest two links carry, and one
        # that needs all three
        return [(0, 0, 8000, 1000, "bond-up"), (0, 0, 8000, 1000, "bond-ge"),
                (0, 0, 8000, 1000, "bond-cut"), (20, 0, 5000, 1000, "bond-3"),
                (20, 0, 7000, 1000, "bond-3")]
    if grid == "cellular":
        # the RTT is the seed's (drawn before anything that depends on
        # the trace's length)
        return [(cellular.generate(seed, 1).rtt_ms, 0, kbps, budget,
                 f"cellular-s{seed}")
                for seed in range(1, seeds + 1) for kbps in CELLULAR_KBPS
                for budget in CELLULAR_BUDGETS]
    if grid == "full":
        return [(r, l, k, b, "") for r, l, k, b in itertools.product(
            (20, 100, 200), (0, 0.01, 0.03), (2000, 8000, 20000),
            (500, 1000, 2000))] + [(100, 0, 8000, 1000, "ge"),
                                   (100, 0, 8000, 1000, "trace")]
    return [(100, 0.01, 8000, 1000, ""), (100, 0.03, 8000, 1000, ""),
            (100, 0, 8000, 1000, ""), (20, 0.01, 8000, 1000, ""),
            (200, 0.01, 8000, 1000, ""), (100, 0.01, 2000, 1000, ""),
            (100, 0.01, 20000, 1000, ""), (100, 0.01, 8000, 500, ""),
            (100, 0.01, 8000, 2000, ""), (100, 0, 8000, 1000, "ge"),
            (100, 0, 8000, 1000, "trace"), MULTIPATH_CELL]


def write_docs(args, results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lines = ["## Against one TCP connection, SRT and RIST on netsim", "",
             "`tests/bench/compare.py` (same run, same path, same content: "
             "x264 CBR 640x360 30 fps in MPEG-TS, one keyframe a second). "
             f"Link {LINK_RATE_MBIT} Mbit/s, random loss on the data "
             "direction, queue one bandwidth-delay product (at least 100 "
             f"packets), {args.seconds:g} s per run. multitcp-N: N "
             "connections, `latency` = budget; multitcp-pars: the count "
             "from ParS Eq. 19 (`connections=0`, up to `max-connections`, "
             "128 by default; multitcp-parsM: up to M); "
             "multitcp-dynamic: "
             "VariedConnVariedWinSize from N = 5 (window-control=adjust, "
             "connection-control=congestion); multitcp-parsdyn: the same "
             "from ParS's count (`connections=0`); tcp: tcpserversink -> "
             "tcpclientsrc; srt: srtsink/srtsrc with `latency` = budget and "
             "SRT's default 25% overhead; rist: ristsink/ristsrc with "
             "`receiver-buffer` = budget. Late or lost: frames that arrived "
             "after first arrival + PTS distance + budget, or never, or with "
             "other bytes than the sender's encoder made (damaged: tsdemux "
             "passes on a frame with a lost TS packet in it); stalls: "
             "a player starting one budget after the first frame that waits "
             "for a late frame; wire/byte: IP bytes both ways over TS bytes "
             "delivered, over the whole run and (steady) between "
             f"{STEADY_FROM:g} s after the receiver starts and "
             f"{STEADY_TAIL:g} s before it stops, where neither the start "
             "nor the data a receiver still holds at the end (SRT's and "
             "RIST's latency buffer: budget/run length of the whole-run "
             "figure) counts; sent/byte steady: the same span, with the IP "
             "bytes the senders put on the link, the ones netsim then lost "
             "too ('-': a run from before netsim counted them); "
             "CPU: sender + receiver seconds per GB delivered. "
             "ge: Gilbert-Elliott loss (bursty); trace: the rate steps 50, "
             "12, 30, 8, 50 Mbit/s every 8 s; multipath: two paths between "
             "the same hosts, 6 Mbit/s with 20 ms RTT and 3 Mbit/s with 80 "
             "ms, no random loss, a 7 Mbit/s stream (more than either path): "
             "multitcp spreads its connections over the receiver's address "
             "on each (`local-addresses`), RIST bonds both "
             "(`bonding-addresses`, `bonding-method=round-robin`), one TCP "
             "connection and SRT take path 0. The multitcp sender runs "
             "sync=false like the others.", "",
             "| TCP | RTT ms | loss | Mbit/s | budget ms | system | late or "
             "lost | stalls (s) | delivered Mbit/s | wire/byte | wire/byte "
             "steady | sent/byte steady | CPU s/GB | note |",
             "|---|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---:|"
             "---|"]
    for r in results:
        note = r.get("error") or ""
        if not r.get("valid", True):
            note += " INVALID (netsim ring drops)"
        if r.get("kind"):
            note = r["kind"] + (" " + note if note else "")
        wpb = f"{r['wire_per_byte']:.3f}" if r.get("wire_per_byte") else "-"
        wps = (f"{r['wire_per_byte_steady']:.3f}"
               if r.get("wire_per_byte_steady") else "-")
        sps = (f"{r['sent_per_byte_steady']:.3f}"
               if r.get("sent_per_byte_steady") else "-")
        cpu = f"{r['cpu_per_gb']:.0f}" if r.get("cpu_per_gb") else "-"
        lines.append(
            f"| {r['cc']} | {r['rtt']} | {r['loss']:.0%} | "
            f"{r['kbps'] / 1000:g} | {r['budget']} | {r['system']} | "
            f"{r['late_fraction']:.2e} | {r['stalls']} ({r['stall_s']}) | "
            f"{r['delivered_mbps']:.2f} | {wpb} | {wps} | {sps} | {cpu} | "
            f"{note} |")
    if args.section:
        # a partial run: its own section, the grid's table and plot stay
        lines[0:4] = [f"## {args.section}", "",
                      f"`tests/bench/compare.py` with the settings of the "
                      f"grid above, {args.seconds:g} s per run.", ""]
        write_doc_section(lines)
        return
    lines += ["", "![late or lost by cell](bench/compare.png)", ""]
    os.makedirs(os.path.join(TOP, "docs", "bench"), exist_ok=True)
    keys = []
    for r in results:
        k = (r["cc"], r["rtt"], r["loss"], r["kbps"], r["budget"], r["kind"])
        if k not in keys:
            keys.append(k)
    systems = list(dict.fromkeys(r["system"] for r in results))
    fig, ax = plt.subplots(figsize=(max(8, len(keys) * 0.9), 4.5))
    width = 0.8 / max(len(systems), 1)
    for i, s in enumerate(systems):
        ys = []
        for k in keys:
            m = [r for r in results if r["system"] == s and
                 (r["cc"], r["rtt"], r["loss"], r["kbps"], r["budget"],
                  r["kind"]) == k]
            ys.append(max(m[0]["late_fraction"], 1e-5) if m else 0)
        ax.bar([j + i * width for j in range(len(keys))], ys, width, label=s)
    ax.set_yscale("log")
    ax.set_ylim(1e-5, 1.5)
    ax.set_ylabel("frames late or lost (1e-5 = none)")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
    ax.set_xticklabels([f"{k[0]}\n{k[1]}ms {k[2]:.0%}\n{k[3] / 1000:g}M "
                        f"{k[4]}ms {k[5]}" for k in keys], fontsize=7)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(TOP, "docs", "bench", "compare.png"), dpi=80)
    write_doc_section(lines)


def write_grid_docs(args, results, ncells):
    """The full grid, one row per cell: each system's late-or-lost
    fraction, stall time and delivered bitrate over the stream's."""
    systems = list(dict.fromkeys(r["system"] for r in results))
    rows = {}
    for r in results:
        key = (r["cc"], r["rtt"], r["loss"], r["kbps"], r["budget"], r["kind"])
        rows.setdefault(key, {})[r["system"]] = r
    ccs = " and ".join(args.cc)
    # --section: part of the grid under its own heading, the rest stays
    heading = args.section or f"The issue's full grid ({ccs})"
    lines = [f"## {heading}", "",
             "`tests/bench/compare.py --grid full` (settings of the grid "
             f"above, {args.seconds:g} s per run, TCP congestion control "
             f"{ccs} in both namespaces): {len(rows)} of {ncells} cells run "
             "(per congestion control: the issue's 81, a Gilbert-Elliott "
             "and a trace cell). "
             "Each entry: frames late or lost / stall seconds / delivered "
             "over the stream's bitrate; '-' where the run failed to give "
             "frames (see its .log). Where the sender recorded when each "
             "frame left its encoder, two more: late or lost on the "
             "sender's clock (after a 2 s warm-up, a frame is late when it "
             "comes more than the cell's smallest delay of any system + "
             "the budget + two frames after the encoder gave it out) / "
             "the 99th percentile of that delay in ms.", "",
             "| TCP | RTT ms | loss | Mbit/s | budget ms | " +
             " | ".join(systems) + " |",
             "|---|---:|---:|---:|---:|" + "---:|" * len(systems)]
    for key, by in sorted(rows.items()):
        cc, rtt, loss, kbps, budget, kind = key
        cells_ = []
        floor = cell_floor(by.values())
        for s in systems:
            r = by.get(s)
            if not r or r.get("frames", 0) < 2:
                cells_.append("-")
                continue
            entry = (f"{r['late_fraction']:.1e} / {r['stall_s']:g} / "
                     f"{r['delivered_mbps'] * 1000 / kbps:.2f}")
            late_s = late_on_sender_clock(r, floor) if floor else None
            if late_s is not None:
                p99 = r["delay_p99"]
                entry += (f" / {late_s:.1e} / " +
                          (f"{p99 * 1000:.0f}" if p99 is not None else "-"))
            cells_.append(entry)
        lines.append(f"| {cc} | {rtt} | {loss:.0%} | {kbps / 1000:g} | "
                     f"{budget}{' ' + kind if kind else ''} | " +
                     " | ".join(cells_) + " |")
    write_doc_section(lines)


BONDING_CELLS = {
    "bond-up": "two cellular-like links (each a walk around 6 Mbit/s with "
    "outages of 1-5 s), both up",
    "bond-ge": "the same, link 1 with Gilbert-Elliott bursty loss (~9%)",
    "bond-cut": "the same, link 1 cut for 30 s from 15 s into the run",
    "bond-3": "three links: 4 Mbit/s 20 ms RTT, 3 Mbit/s 60 ms, 2 Mbit/s "
    "150 ms (no traces)",
}


def bonding_late_bound(kind, kbps, budget, seconds, start=2.0):
    """The least late fraction any sender has in a bond-* cell (the sum of
    the links' capacities, bitrate_runs.fixed_rate_late_bound; loss not
    counted): over the receiver's span, ~2 s into netsim's run, or from
    @start s."""
    import bitrate_runs
    if kind == "bond-3":
        rates = [float(re.search(r"rate=([\d.]+)mbit", l).group(1))
                 for l in BONDING_THREE]
        traces = [{"rate_series": [(0, r)], "period_ms": 1e9} for r in rates]
    else:
        traces = [cellular.generate(sd, seconds + TRACE_SLACK_S,
                                    scale=BONDING_SCALE)._asdict()
                  for sd in BONDING_SEEDS]
    dark = (((BONDING_CUT[0] + 2, BONDING_CUT[0] + 2 + BONDING_CUT[1]),)
            if kind == "bond-cut" else ())
    return bitrate_runs.fixed_rate_late_bound(traces, kbps / 1000,
                                              budget / 1000, start,
                                              2.0 + seconds, dark=dark)


def write_bonding_docs(args, results):
    """Issue 26's table and the rate per path over time (bond-cut)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ccs = " and ".join(args.cc)
    heading = args.section or "Bonded uplinks at the sender (issue 26)"
    lines = [f"## {heading}", "",
             "`tests/bench/compare.py --grid bonding` (x264 CBR 640x360 30 "
             "fps in MPEG-TS, live; "
             f"{args.seconds:g} s per run, one run per cell and system, TCP "
             f"congestion control {ccs}). The sender's namespace has one "
             "device per link, each with a default route of its own (a "
             "modem each). multitcp-default_bond: multitcpsink "
             "mode=caller interfaces=nsa0,nsa1[,nsa2] dialing the receiver, "
             "multitcpsrc mode=listener, nothing else set but the source's "
             "latency = budget; rist: ristsink bonding-addresses= the "
             "receiver's address on each link, bonding-method=round-robin "
             "(rist-broadcast: broadcast), ristsrc on the same addresses, "
             "receiver-buffer = budget; srt and tcp over link 0, the "
             "better one (GStreamer 1.22's srtsink has no socket groups). "
             "Entries: frames late or lost / stall seconds / delivered over "
             "the stream / 99th percentile of the frame delay on the "
             "sender's clock (ms) / share of the bytes put on each link; "
             "bond-cut, multitcp: seconds from link 1's return until it "
             "carried a quarter of both links' bytes within a second. "
             "Least late: the fraction "
             "of the stream any sender must deliver late, knowing the "
             "links' future (a fluid queue served at the links' summed "
             "capacity, the oldest dropped once it cannot make its "
             "deadline; loss not counted): where it is above 0, nothing "
             "late is out of reach at this fixed rate. After "
             "\"settled\": the same two figures for the frames made "
             f"from {BONDING_SETTLED_S:g} s into netsim's run on (both "
             "traces dip in the receiver's first seconds).", ""]
    systems = list(dict.fromkeys(r["system"] for r in results))
    by_cell = {}
    for r in results:
        by_cell.setdefault((r["kind"], r["kbps"], r["budget"], r["cc"]),
                           {})[r["system"]] = r
    lines += ["| cell | least late | " + " | ".join(systems) + " |",
              "|---|---:|" + "---|" * len(systems)]
    for (kind, kbps, budget, cc), by in by_cell.items():
        row = []
        for sname in systems:
            r = by.get(sname)
            if not r or r.get("frames", 0) < 2:
                row.append("-")
                continue
            p99 = r.get("delay_p99")
            entry = (f"{r['late_fraction']:.1e} / {r['stall_s']:g} / "
                     f"{r['delivered_mbps'] * 1000 / kbps:.2f} / "
                     + (f"{p99 * 1000:.0f}" if p99 is not None else "-")
                     + " / " + ":".join(f"{x:.2f}" for x in
                                        r.get("link_share", [])))
            if r.get("back_s") is not None:
                entry += f" / back {r['back_s']:g} s"
            if r.get("late_settled") is not None:
                entry += f"; settled {r['late_settled']:.1e}"
            row.append(entry)
        bound = bonding_late_bound(kind, kbps, budget, args.seconds)
        settled = bonding_late_bound(kind, kbps, budget, args.seconds,
                                     start=BONDING_SETTLED_S)
        lines.append(f"| {kind}: {BONDING_CELLS.get(kind, '')}, "
                     f"{kbps / 1000:g} Mbit/s, budget {budget} ms, {cc} | "
                     f"{bound:.1e}; settled {settled:.1e} | "
                     + " | ".join(row) + " |")
    # the rate of each uplink over time, multitcp in bond-cut (and the
    # encoder's bitrate where the sink set it)
    cut = [r for r in results if r["kind"] == "bond-cut" and
           r["system"].startswith("multitcp") and r.get("out")]
    if cut:
        fig, axes = plt.subplots(len(cut), 1, figsize=(8, 3.0 * len(cut)),
                                 squeeze=False)
        drawn = False
        for ax, r in zip(axes[:, 0], cut):
            tx = json.load(open(os.path.join(TOP, r["out"] + ".tx.json")))
            series = tx.get("path_series") or []
            if len(series) < 3:
                continue
            drawn = True
            t0 = series[0][0]
            n = len(series[0][1])
            for k in range(n):
                ts, rates = [], []
                for (ta, ba, _), (tb, bb, _) in zip(series, series[1:]):
                    ts.append(tb - t0)
                    rates.append((bb[k] - ba[k]) * 8 / 1e6 /
                                 max(tb - ta, 1e-3))
                ax.plot(ts, rates, label=f"uplink {k} sent")
            if r["system"].startswith("multitcp-encoder"):
                rates = tx.get("rates") or []
                ax.plot([x[0] - t0 for x in rates],
                        [x[2] / 1e6 for x in rates], color="black", lw=1,
                        label="encoder bitrate")
            ax.set_ylabel("Mbit/s")
            ax.set_title(f"{r['system']}, bond-cut: each uplink's rate")
            ax.legend(fontsize=8)
        axes[-1][0].set_xlabel("time (s, the sender's)")
        fig.tight_layout()
        if drawn:
            os.makedirs(os.path.join(TOP, "docs", "bench"), exist_ok=True)
            fig.savefig(os.path.join(TOP, "docs", "bench", "bonding-cut.png"),
                        dpi=80)
            lines += ["", "![each uplink's rate, link 1 cut for 30 s]"
                      "(bench/bonding-cut.png)"]
    lines.append("")
    write_doc_section(lines)


def trace_for_docs(args, seed):
    """The trace a seed's runs used: from the results (its .json) when
    there, else made again (the generator is deterministic)."""
    path = cellular_trace_path(args.results, seed, args.seconds)
    try:
        meta = cellular.read_meta(path)
        return cellular.Trace([], meta["period_ms"], meta["rtt_ms"],
                              meta["queue_pkts"],
                              [tuple(x) for x in meta["rate_series"]],
                              [tuple(x) for x in meta["outages"]], seed)
    except (OSError, ValueError, KeyError):
        return cellular_trace(seed, args.seconds)


def cellular_late_bound(kind, kbps, budget, seconds):
    """The least late fraction any sender has at this fixed rate on the
    cell's trace (bitrate_runs.fixed_rate_late_bound: the trace's IP
    capacity, no headers): over the receiver's span, ~2 s into netsim's
    run."""
    import bitrate_runs
    trace = cellular_trace(cellular_seed(kind), seconds)._asdict()
    return bitrate_runs.fixed_rate_late_bound([trace], kbps / 1000,
                                              budget / 1000, 2.0,
                                              2.0 + seconds)


def viewer_late(r):
    """Late, lost or undecodable on the bench's clock where the run
    recorded keyframes; late or lost otherwise."""
    v = r.get("late_fraction_decodable")
    return r["late_fraction"] if v is None else v


def cell_late_on_sender_clock(runs):
    """{system: late or lost on the sender's clock} for one cell's runs,
    against the cell's least delay (late_on_sender_clock)."""
    floor = cell_floor(runs)
    if floor is None:
        return {}
    return {r["system"]: late_on_sender_clock(r, floor) for r in runs}


def cellular_targets(results):
    """Issue 23's targets over the cellular rows: the multitcp rows
    (cc, seed, kbps, budget) with wire/byte above 1.15 (whole run or
    steady), those later or lossier than SRT in the same cell on the
    bench's clock, and those on the sender's clock (the cell's SRT run
    may be of another congestion control: SRT does not use TCP's)."""
    by, srt_by = {}, {}
    for r in results:
        by.setdefault((r["cc"], r["kind"], r["kbps"], r["budget"]),
                      {})[r["system"]] = r
        if r["system"] == "srt":
            srt_by[(r["kind"], r["kbps"], r["budget"])] = r
    over, worse, worse_sender, worse_decodable = [], [], [], []
    for key, sy in sorted(by.items()):
        srt = sy.get("srt") or srt_by.get(key[1:])
        runs = list(sy.values()) + ([srt] if srt and "srt" not in sy else [])
        sender = cell_late_on_sender_clock(runs)
        for name, r in sy.items():
            if not name.startswith("multitcp"):
                continue
            w = [r.get("wire_per_byte"), r.get("wire_per_byte_steady")]
            if any(x is not None and x > 1.15 for x in w):
                over.append((name,) + key)
            if srt and r["late_fraction"] > srt["late_fraction"]:
                worse.append((name,) + key)
            if (srt and r.get("late_fraction_decodable") is not None and
                    srt.get("late_fraction_decodable") is not None and
                    r["late_fraction_decodable"] >
                    srt["late_fraction_decodable"]):
                worse_decodable.append((name,) + key)
            if (srt and sender.get(name) is not None and
                    sender.get("srt") is not None and
                    sender[name] > sender["srt"]):
                worse_sender.append((name,) + key)
    return over, worse, worse_sender, worse_decodable


def write_cellular_docs(args, results):
    """Issue 23's cellular set: one row per run, the targets, a plot of
    each seed's capacity against the streams' rates and one of the
    late-or-lost fraction by cell."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ccs = " and ".join(args.cc)
    seeds = sorted({cellular_seed(r["kind"]) for r in results})
    lines = [f"## {args.section or 'Cellular uplinks'}", "",
             "`tests/bench/compare.py --grid cellular` (issue 23's cellular "
             "scenario set; same content as the grids above: x264 CBR "
             "640x360 30 fps in MPEG-TS, one keyframe a second), "
             f"{args.seconds:g} s per run, TCP congestion control {ccs} in "
             "both namespaces. The uplink (A->B, the video) follows a "
             "mahimahi trace from `tests/bench/cellular.py` (seeded: "
             "capacity a random walk in log-rate between 0.3 and 15 "
             "Mbit/s, a step every 100-500 ms, outages of 1-5 s every "
             "20-40 s; per seed a base RTT of 40-80 ms and a drop-tail "
             "queue of 100-200 packets; docs/netsim.md, \"Cellular "
             "traces\"); the ACK direction is a plain "
             f"{cellular.REVERSE_MBIT} Mbit/s with the same delay and "
             "queue. The trace is "
             f"{TRACE_SLACK_S} s longer than the run, so it never loops; "
             "its time 0 is netsim's start, the receiver starts 1.5-2.5 s "
             "later. Streams of 1 and 4 Mbit/s at a fixed bitrate (the "
             "next issue's follows the network), budgets of 1 and 2 s. "
             "multitcp-default: the elements as a new user gets them, "
             "nothing set beyond host, port and the source's `latency` = "
             "budget; srt: `latency` = budget, SRT's defaults otherwise; "
             "tcp: one TCP connection (tcpserversink -> tcpclientsrc). "
             "Columns as in the first table above (late or lost, stalls, "
             "delivered, wire/byte whole run and steady, sent/byte "
             "steady); capacity: the trace's mean (run and slack, outages "
             "included), its outages' count and seconds.", ""]
    over, worse, worse_sender, worse_decodable = cellular_targets(results)
    ncells = len({(r["cc"], r["kind"], r["kbps"], r["budget"])
                  for r in results})
    sender = {}
    for key in {(r["kind"], r["kbps"], r["budget"]) for r in results}:
        cell_runs = [r for r in results
                     if (r["kind"], r["kbps"], r["budget"]) == key]
        for cc in {r["cc"] for r in cell_runs}:
            # SRT's run stands in every congestion control's comparison
            runs = [r for r in cell_runs
                    if r["cc"] == cc or r["system"] == "srt"]
            for name, v in cell_late_on_sender_clock(runs).items():
                sender[(cc,) + key + (name,)] = v
    bound = {}
    for r in results:
        k = (r["kind"], r["kbps"], r["budget"])
        if k not in bound:
            bound[k] = cellular_late_bound(r["kind"], r["kbps"],
                                           r["budget"], args.seconds)

    def missed(rows, what):
        if not rows:
            return "met"
        cells = len({(cc, k, kb, b) for _, cc, k, kb, b in rows})
        return (f"{what} in {cells} of {ncells} cells, {len(rows)} runs (" +
                ", ".join(f"{s_} {cc} seed {cellular_seed(k)} "
                          f"{kb / 1000:g} Mbit/s {b} ms"
                          for s_, cc, k, kb, b in rows) + ")")
    lines += ["Targets (issue 23), over the multitcp rows: bytes on the "
              "wire per byte delivered at most 1.15 in every cell, outages "
              "included (whole run and steady): " +
              missed(over, "above") + "; late or lost no worse than "
              "SRT's in every cell: on the bench's clock " +
              missed(worse, "worse") + "; on the bench's clock, frames "
              "that cannot be decoded counted with the lost ones (the "
              "runs that recorded keyframes) " +
              missed(worse_decodable, "worse") +
              "; on the sender's clock " +
              missed(worse_sender, "worse") + ". The bench's clock "
              "counts from each system's first frame, which SRT delivers "
              "a whole latency after sending it (TSBPD): every later SRT "
              "frame gets that latency again as slack. The sender's clock "
              "gives every system the same bound: a frame is late when it "
              "comes more than the cell's least delay (any system's) + the "
              "budget + two frames after its encoder gave it out (after a "
              "2 s warm-up); SRT, which delivers each packet its latency "
              "after the first packet's arrival, comes some tens of ms "
              "past that bound on many frames. Undecodable: a frame that "
              "came whole after one of its GOP that never did (lost, or "
              "damaged); a viewer does not see it, so the third column "
              "and the sender's clock count it as lost (a late frame "
              "still reaches the decoder: it breaks nothing). "
              "Least late: the fraction "
              "any sender must deliver late at this fixed rate, knowing "
              "the trace (the trace's IP capacity, no headers: a bound "
              "from below).", "",
              "| TCP | seed | RTT ms | queue | capacity Mbit/s (outages) "
              "| Mbit/s | budget ms | least late | system | late or lost "
              "| late, lost or undecodable | late or lost, sender's clock "
              "| stalls (s) "
              "| delivered Mbit/s | wire/byte | wire/byte steady "
              "| sent/byte steady | note |",
              "|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|"
              "---|---:|---:|---:|---:|---|"]
    for r in sorted(results, key=lambda r: (
            r["cc"], cellular_seed(r["kind"]), r["kbps"], r["budget"])):
        st = r.get("trace_stats") or {}
        note = r.get("error") or ""
        if not r.get("valid", True):
            note += " INVALID (netsim ring drops)"
        f3 = (lambda k: f"{r[k]:.3f}" if r.get(k) else "-")
        f2e = (lambda v: "-" if v is None else f"{v:.2e}")
        cap = (f"{st['mean_mbit']:.2f} ({st['outages']}, "
               f"{st['outage_s']:g} s)" if st else "-")
        key = (r["kind"], r["kbps"], r["budget"])
        late_s = sender.get((r["cc"],) + key + (r["system"],))
        lines.append(
            f"| {r['cc']} | {cellular_seed(r['kind'])} | {r['rtt']} | "
            f"{r.get('queue', '-')} | {cap} | {r['kbps'] / 1000:g} | "
            f"{r['budget']} | {bound[key]:.3f} | {r['system']} | "
            f"{r['late_fraction']:.2e} | "
            f"{f2e(r.get('late_fraction_decodable'))} | "
            f"{f2e(late_s)} | "
            f"{r['stalls']} ({r['stall_s']}) | {r['delivered_mbps']:.2f} | "
            f"{f3('wire_per_byte')} | {f3('wire_per_byte_steady')} | "
            f"{f3('sent_per_byte_steady')} | {note} |")
    os.makedirs(os.path.join(TOP, "docs", "bench"), exist_ok=True)
    # each seed's capacity against the streams' rates
    fig, axes = plt.subplots(len(seeds), 1, sharex=True, squeeze=False,
                             figsize=(9, 1.6 + 1.4 * len(seeds)))
    for ax, seed in zip(axes[:, 0], seeds):
        tr = trace_for_docs(args, seed)
        segs = cellular.segments(tr)
        xs = [a / 1000 for a, _, _ in segs] + [tr.period_ms / 1000]
        ys = [r_ for _, _, r_ in segs] + [segs[-1][2]]
        ax.step(xs, ys, where="post", lw=0.9, color="k",
                label="capacity")
        for a, b in tr.outages:
            ax.axvspan(a / 1000, b / 1000, color="r", alpha=0.15, lw=0)
        for kbps, c in zip(CELLULAR_KBPS, ("tab:blue", "tab:orange")):
            ax.axhline(kbps / 1000, color=c, ls="--", lw=1,
                       label=f"{kbps / 1000:g} Mbit/s stream")
        ax.set_yscale("log")
        ax.set_ylim(0.2, 20)
        ax.set_ylabel(f"seed {seed}\nMbit/s", fontsize=8)
        ax.set_title(f"RTT {tr.rtt_ms} ms, queue {tr.queue_pkts} packets, "
                     "outages shaded", fontsize=8, loc="left")
    axes[0, 0].legend(fontsize=7, loc="upper right", ncol=3)
    axes[-1, 0].set_xlabel("s from netsim's start (the receiver starts "
                           "1.5-2.5 s in)")
    fig.tight_layout()
    fig.savefig(os.path.join(TOP, "docs", "bench", "cellular-trace.png"),
                dpi=80)
    plt.close(fig)
    # late or lost by cell and system
    keys = list(dict.fromkeys(
        (r["cc"], r["kind"], r["kbps"], r["budget"]) for r in sorted(
            results, key=lambda r: (r["cc"], cellular_seed(r["kind"]),
                                    r["kbps"], r["budget"]))))
    systems = list(dict.fromkeys(r["system"] for r in results))
    fig, ax = plt.subplots(figsize=(max(8, len(keys) * 0.7), 4.5))
    width = 0.8 / max(len(systems), 1)
    for i, sname in enumerate(systems):
        ys = []
        for k in keys:
            m = [r for r in results if r["system"] == sname and
                 (r["cc"], r["kind"], r["kbps"], r["budget"]) == k]
            ys.append(max(viewer_late(m[0]), 1e-5) if m else 0)
        ax.bar([j + i * width for j in range(len(keys))], ys, width,
               label=sname)
    ax.set_yscale("log")
    ax.set_ylim(1e-5, 1.5)
    ax.set_ylabel("frames late, lost or undecodable\n(1e-5 = none)")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
    ax.set_xticklabels([f"{k[0]}\ns{cellular_seed(k[1])}\n"
                        f"{k[2] / 1000:g}M {k[3]}ms" for k in keys],
                       fontsize=7)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(TOP, "docs", "bench", "cellular.png"), dpi=80)
    plt.close(fig)
    lines += ["", "![each seed's capacity](bench/cellular-trace.png)", "",
              "![late or lost by cell](bench/cellular.png)", ""]
    write_doc_section(lines)


def dry_run(args, grid):
    """What a run would do: cells, link specs, the traces' figures, and
    its wall time; nothing runs, nothing is written."""
    runs, shown = 0, set()
    for cell in grid:
        rtt, loss, kbps, budget, kind = cell
        seed = cellular_seed(kind)
        if seed is not None:
            trace = cellular_trace(seed, args.seconds)
            path = cellular_trace_path(args.results, seed, args.seconds)
            link = cellular_link_spec(trace, path)
            st = cellular.stats(trace)
            extra = "" if seed in shown else (
                f"  trace: mean {st['mean_mbit']:.2f} Mbit/s "
                f"({st['min_mbit']:.2f}-{st['max_mbit']:.2f} outside "
                f"outages, below 1 Mbit/s {st['below_1mbit']:.0%}, "
                f"below 4 {st['below_4mbit']:.0%}), {st['outages']} "
                f"outages, {st['outage_s']:g} s dark, "
                f"{st['opportunities']} opportunities over "
                f"{st['seconds']:g} s")
            shown.add(seed)
        elif kind == "multipath":
            link = " + ".join(MULTIPATH_LINKS)
            extra = ""
        elif kind.startswith("bond"):
            specs = bonding_links(kind, args.results, args.seconds) \
                if kind == "bond-3" else [
                    f"trace of seed {sd} x{BONDING_SCALE:g}" +
                    (f", {BONDING_GE}" if kind == "bond-ge" and k == 1
                     else "") for k, sd in enumerate(BONDING_SEEDS)]
            link = " + ".join(specs)
            extra = ("" if kind != "bond-cut" else
                     f"  + link 1 dark {BONDING_CUT[1]:g} s from "
                     f"{BONDING_CUT[0]:g} s")
            for sd in BONDING_SEEDS if kind != "bond-3" else ():
                if sd in shown:
                    continue
                shown.add(sd)
                st = cellular.stats(cellular.generate(
                    sd, args.seconds + TRACE_SLACK_S, scale=BONDING_SCALE))
                extra += (f"\n  seed {sd}: mean {st['mean_mbit']:.2f} "
                          f"Mbit/s, {st['outages']} outages, "
                          f"{st['outage_s']:g} s dark")
        elif kind.startswith("share"):
            cc, n = share.parse_kind(kind)
            link = share.link_spec()
            extra = f"  + {n} bulk {cc} flows (iperf3), the stream's way"
        else:
            link = link_spec(rtt, loss, ",ge=0.01:0.3:0:0.9"
                             if kind == "ge" else "")
            extra = ("  + schedule: 50 -> 12 -> 30 -> 8 -> 50 Mbit/s"
                     if kind == "trace" else "")
        print(f"cell RTT {rtt} ms, loss {loss:g}, {kbps} kbit/s, budget "
              f"{budget} ms{', ' + kind if kind else ''}\n  link: {link}"
              + (f"\n{extra}" if extra else ""))
        runs += 1
    runs *= len(args.systems) * len(args.cc)
    wall = runs * (args.seconds + RUN_OVERHEAD_S)
    print(f"{len(grid)} cells x {len(args.systems)} systems "
          f"({' '.join(args.systems)}) x {len(args.cc)} congestion controls "
          f"({' '.join(args.cc)}) = {runs} runs of {args.seconds:g} s + "
          f"~{RUN_OVERHEAD_S} s each: about {wall / 3600:.1f} h "
          f"({wall / 60:.0f} min); results to {args.results}")


def write_doc_section(lines):
    """Replaces the section headed lines[0] in docs/benchmarks.md."""
    path = os.path.join(TOP, "docs", "benchmarks.md")
    old = open(path).read()
    heading = lines[0]
    if heading in old:
        start = old.index(heading)
        nxt = old.find("\n## ", start + len(heading))
        new = old[:start] + "\n".join(lines) + (
            "\n" + old[nxt + 1:] if nxt >= 0 else "\n")
    else:
        new = old.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--system")
    ap.add_argument("--kbps", type=int)
    ap.add_argument("--budget", type=int)
    ap.add_argument("--kind", default="")
    ap.add_argument("--out")
    ap.add_argument("--seconds", type=float,
                    help="per run (default 40; --grid cellular: 60)")
    ap.add_argument("--grid", choices=["issue", "full", "cellular",
                                       "bonding", "share"],
                    default="issue")
    ap.add_argument("--seeds", type=int, default=4,
                    help="--grid cellular: seeds 1..N")
    ap.add_argument("--cc", nargs="+", default=["cubic"])
    ap.add_argument("--systems", nargs="+",
                    help="default multitcp-pars multitcp-dynamic tcp srt "
                    "rist; --grid cellular: " + " ".join(CELLULAR_SYSTEMS) +
                    "; --grid share: " + " ".join(share.SYSTEMS))
    ap.add_argument("--cells", type=int, nargs="*",
                    help="indices into the grid's cells (default all)")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--netsim")
    ap.add_argument("--loss-seed", type=int, default=1,
                    help="netsim's seed for its loss draws (default 1, "
                    "netsim's own): repeat a lossy cell with other seeds, "
                    "or its runs share one loss pattern")
    ap.add_argument("--results",
                    help="where the runs go (relative to the top; default "
                    "results/compare, --grid cellular: results/cellular)")
    ap.add_argument("--reuse", action="store_true",
                    help="take runs already in --results")
    ap.add_argument("--reanalyse", action="store_true",
                    help="with --reuse: analyse stored runs again and "
                    "rewrite their .json")
    ap.add_argument("--tabulate", action="store_true",
                    help="with --reuse: only tabulate, run nothing")
    ap.add_argument("--section",
                    help="write the table under this heading of "
                    "docs/benchmarks.md instead of the grid's")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the cells, their links and the run's wall "
                    "time; run and write nothing")
    args = ap.parse_args()
    cell_grid = args.grid == "cellular"
    bond_grid = args.grid == "bonding"
    share_grid = args.grid == "share"
    if args.seconds is None:
        args.seconds = (CELLULAR_SECONDS if cell_grid else BONDING_SECONDS
                        if bond_grid else 40)
    if args.systems is None:
        args.systems = (list(CELLULAR_SYSTEMS) if cell_grid else
                        list(BONDING_SYSTEMS) if bond_grid else
                        list(share.SYSTEMS) if share_grid else [
                            "multitcp-pars", "multitcp-dynamic", "tcp", "srt",
                            "rist"])
    if args.results is None:
        args.results = os.path.join("results", "cellular" if cell_grid else
                                    "bonding" if bond_grid else "share"
                                    if share_grid else "compare")
    if args.inner:
        inner(args)
        return 0
    args.build = os.path.abspath(args.build)
    args.netsim = args.netsim or os.path.join(args.build, "tests", "netsim",
                                              "netsim")
    args.results = os.path.join(TOP, args.results)
    grid = cells(args.grid, args.seeds)
    if args.cells:
        grid = [grid[i] for i in args.cells]
    if args.dry_run:
        dry_run(args, grid)
        return 0
    os.makedirs(args.results, exist_ok=True)
    results = []
    for cc in args.cc:
        for cell in grid:
            for system in args.systems:
                r = run_cell(args, cell, system, cc)
                if r is None:
                    continue
                print(json.dumps({k: r.get(k) for k in (
                    "system", "cc", "rtt", "loss", "kbps", "budget", "kind",
                    "late_fraction", "late_fraction_decodable", "stalls",
                    "stall_s", "delivered_mbps", "wire_per_byte",
                    "cpu_per_gb", "error")}), flush=True)
                results.append(r)
    if not results:
        return 0
    if cell_grid:
        write_cellular_docs(args, results)
    elif bond_grid:
        write_bonding_docs(args, results)
    elif share_grid:
        share.write_docs(results, " ".join(args.cc), args.seconds, TOP)
    elif args.grid == "full":
        write_grid_docs(args, results, len(cells("full")) * len(args.cc))
    else:
        write_docs(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
