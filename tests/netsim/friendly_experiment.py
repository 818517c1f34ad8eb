#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Seed 004's Sec. IV on netsim, shortened: stored video sent greedy,
burst (YouTube-like (i)) or network-friendly next to N bulk TCP flows and
a Poisson UDP flow on one bottleneck; per control and N: the video's
throughput, buffer-underflow time per video connection, loss at the
bottleneck, and the bulk flows' throughput.

The paper: 100 Mbit/s, five 3.6 Mbit/s videos (18%), 10 Mbit/s UDP (10%),
a 600 s video, 5 s playout delay; its figures are taken while the videos
are transferred (from their start until the last byte of the last one).
Here, in proportion: a --rate bottleneck (20 Mbit/s; 100 is the paper's),
five videos of 3.7% of it each (raw GRAY8 at 30 fps, 64 pixels wide and
48 high per 20 Mbit/s: 737 kbit/s at 20, 3.69 Mbit/s at 100), a queue of
100 packets per 20 Mbit/s (58 ms at any rate), UDP at 10% of the link
(Poisson), a --video-s video (60 s) after
--lead-s (5 s) of background, 5 s playout delay; burst's first burst
scaled to the video's size (burst-scale), its blocks and amount per RTT to
its playback rate (burst-rate-scale). The window the figures are taken
over: from the receivers' start to the last video's last frame (netsim's
marks for the loss, iperf3's intervals for the bulk flows).

    /usr/bin/python3 tests/netsim/friendly_experiment.py [--build DIR]
        [--flows 1 4 8] [--cc cubic] [--sink-cc NAME] [--connections 1]
        [--repeats 1] [--add] [--rate 20] [--latency-ms 5000]

Writes results/friendly/results.json (results-RATE.json for a --rate other
than 20), docs/bench/network-friendly-sec4.png (-RATE.png) and the
matching "Measured" section of docs/network-friendly.md. One process holds the five
sinks (a video each, its own port), one the five multitcpsrc
(connections=1: one TCP connection a video, as the paper's; --connections
N sets another count, 0 the source's default). --cc is
the namespaces' congestion control (the bulk flows'); the videos' sockets
run multitcpsink's own default (bbr) unless --sink-cc names another (a
row of its own in the table).
"""
import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FPS = 30
FRAME_WIDTH = 64
# the frame's height and the queue per 20 Mbit/s of the bottleneck
HEIGHT_PER_20 = 48
QUEUE_PER_20 = 100
VIDEOS = 5
# the paper's playback rate, Mbit/s: the blocks of burst scale to ours
PAPER_PLAYBACK_MBPS = 3.6
# the paper's video, bytes: the first burst scales to ours
PAPER_VIDEO_BYTES = 270e6
# multitcpsink's congestion-control default
SINK_CC = "bbr"
HEADING = "## Measured on netsim (Sec. IV, shortened)"


def frame_bytes(rate):
    return FRAME_WIDTH * frame_height(rate)


def frame_height(rate):
    return max(1, round(HEIGHT_PER_20 * rate / 20))


def queue_packets(rate):
    return max(10, round(QUEUE_PER_20 * rate / 20))


def heading(rate):
    if rate == 20:
        return HEADING
    return f"## Measured on netsim at {rate:g} Mbit/s (Sec. IV, shortened)"


def suffix(rate):
    return "" if rate == 20 else f"-{rate:g}"


def peer(args):
    """--sender / --receiver inside a namespace: JSON lines out."""
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    frames = int(args.video_s * FPS)
    if args.role == "sender":
        # a sink per video, as the paper's five connections: each waits
        # for its receiver, then sends its whole video (a session joining a
        # running sink would start at its newest keyframe)
        frame = frame_bytes(args.rate)
        scale = frames * frame / PAPER_VIDEO_BYTES
        rate_scale = FPS * frame * 8 / 1e6 / PAPER_PLAYBACK_MBPS
        cc = f"congestion-control={args.sink_cc} " if args.sink_cc else ""
        pipes = []
        for i in range(VIDEOS):
            p = Gst.parse_launch(
                f"videotestsrc is-live=false num-buffers={frames} ! "
                f"video/x-raw,format=GRAY8,width={FRAME_WIDTH},"
                f"height={frame_height(args.rate)},framerate=30/1 "
                f"! multitcpsink name=sink port={5600 + i} sync=false "
                f"wait-for-connection=true transfer-control={args.control} "
                f"{cc}"
                f"burst-scale={scale:.6f} burst-rate-scale={rate_scale:.6f}")
            p.set_state(Gst.State.PLAYING)
            pipes.append(p)
        # what the videos' sockets run (the sink falls back to the system's
        # own without a word where the kernel refuses its default)
        time.sleep(args.lead_s + 10)
        ccs = set()
        for p in pipes:
            st = p.get_by_name("sink").get_property("stats")
            for s in st.get_value("sessions") or []:
                for c in s.get_value("connections") or []:
                    ccs.add(c.get_value("congestion-control") or "?")
        time.sleep(args.video_s + 5)
        out = []
        for p in pipes:
            st = p.get_by_name("sink").get_property("stats")
            for s in st.get_value("sessions") or []:
                out.append({"bytes_sent": s.get_value("bytes-sent"),
                            "held": s.get_value("transfer-held")})
            p.set_state(Gst.State.NULL)
        print(json.dumps({"sender": out, "congestion_control": sorted(ccs)}),
              flush=True)
        return
    frames = int(args.video_s * FPS)
    # netsim's first mark: the videos start; its second when the last
    # video's last frame came (the paper's figures are over that span)
    os.kill(args.mark_pid, signal.SIGUSR1)
    marks_wall = [time.time()]
    t0 = time.monotonic()
    srcs = []
    pipes = []
    started = []
    # 0: the source's own default (5, then ParS's count)
    count = f"connections={args.connections} " if args.connections else ""
    for i in range(VIDEOS):
        p = Gst.parse_launch(
            f"multitcpsrc name=src host={args.addr} port={5600 + i} "
            f"{count}latency={args.latency_ms} drift-correction=false ! "
            "fakesink sync=true")
        started.append(time.monotonic() - t0)
        p.set_state(Gst.State.PLAYING)
        pipes.append(p)
        srcs.append(p.get_by_name("src"))
        time.sleep(0.2)
    ended = [False] * VIDEOS
    # when each video's last frame came (bytes-received goes on growing
    # with the session's reports); its transfer began when it was started
    done = [None] * VIDEOS
    done_bytes = [0] * VIDEOS
    # each video's ready connections, sampled while it is transferred
    counts = [[] for _ in range(VIDEOS)]
    # when frames first and last missed their playout (s after the video's
    # start), and the ready connections then
    late_at = [None] * VIDEOS
    late_seen = [0] * VIDEOS
    while time.monotonic() - t0 < args.video_s + 12 and not all(ended):
        for i, p in enumerate(pipes):
            st = srcs[i].get_property("stats")
            got = st.get_value("bytes-received")
            if done[i] is None:
                counts[i].append(st.get_value("n-connections"))
            now = time.monotonic() - t0
            late = st.get_value("buffers-late") + \
                st.get_value("buffers-skipped")
            if late > late_seen[i]:
                late_seen[i] = late
                at = round(now - started[i], 1)
                late_at[i] = (late_at[i] or [at, None, None])
                late_at[i][1:] = [at, st.get_value("n-connections")]
            if done[i] is None and \
                    st.get_value("buffers-received") >= frames:
                done[i], done_bytes[i] = now, got
                if all(d is not None for d in done):
                    os.kill(args.mark_pid, signal.SIGUSR1)
                    marks_wall.append(time.time())
            if not ended[i] and p.get_bus().timed_pop_filtered(
                    10 * Gst.MSECOND, Gst.MessageType.EOS |
                    Gst.MessageType.ERROR):
                ended[i] = time.monotonic() - t0
    if len(marks_wall) < 2:         # a video never came whole
        os.kill(args.mark_pid, signal.SIGUSR1)
        marks_wall.append(time.time())
    out = []
    for i, s in enumerate(srcs):
        st = s.get_property("stats")
        late = st.get_value("buffers-late") + st.get_value("buffers-skipped")
        out.append({"bytes": done_bytes[i] or st.get_value("bytes-received"),
                    "late": late, "ended": ended[i],
                    "transfer_s": (done[i] - started[i])
                    if done[i] is not None else None,
                    "pushed": st.get_value("buffers-pushed"),
                    "connections": statistics.mean(counts[i] or [0]),
                    "count_reason": st.get_value("connection-decision"),
                    "late_at": late_at[i],
                    "marks_wall": marks_wall})
    print(json.dumps({"receiver": out}), flush=True)
    for p in pipes:
        p.set_state(Gst.State.NULL)


def run(args, control, flows):
    import nstest
    build = os.path.abspath(args.build)
    # the netsim of this build unless the environment names one
    os.environ.setdefault("NETSIM", f"{build}/tests/netsim/netsim")
    env = (f"GST_PLUGIN_PATH_1_0={build}/gst "
           f"GST_REGISTRY_1_0={build}/tests/registry-friendly.bin "
           "GST_PLUGIN_SYSTEM_PATH_1_0=/usr/lib/x86_64-linux-gnu/"
           "gstreamer-1.0")
    me = os.path.abspath(__file__)
    # the bulk and UDP flows outlast the receiver (it waits up to
    # video_s + 12 s for its videos' ends)
    bulk_s = args.lead_s + args.video_s + 15
    udp = f"{args.rate * 0.1:.2f}M"
    with tempfile.TemporaryDirectory() as out:
        script = (
            # the bulk flows and the UDP flow, from A (the videos' side) to B
            f"ip netns exec $NETSIM_NS_B iperf3 -s -1 -D -i 0.2 "
            f"-B $NETSIM_ADDR_B "
            f"--logfile /dev/null; sleep 0.3; "
            f"ip netns exec $NETSIM_NS_B /usr/bin/python3 {HERE}/udp_flood.py "
            f"recv $NETSIM_ADDR_B 5700 {bulk_s + 2} {out}/udp.json & "
            f"ip netns exec $NETSIM_NS_A /usr/bin/python3 {HERE}/udp_flood.py "
            f"send $NETSIM_ADDR_B 5700 {udp} {bulk_s} 1460 poisson "
            f"> {out}/udp_tx.json & "
            f"date +%s.%N > {out}/bulk_start; "
            f"ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -P "
            f"{flows} -t {bulk_s:.0f} -i 0.2 --get-server-output --json "
            f"> {out}/bulk.json & "
            f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 {me} "
            f"--role sender --control {control} --video-s {args.video_s} "
            f"--lead-s {args.lead_s} --rate {args.rate} "
            + (f"--sink-cc {args.sink_cc} " if args.sink_cc else "") +
            f"> {out}/tx.json & "
            f"sleep {args.lead_s}; "
            f"ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 {me} "
            f"--role receiver --addr $NETSIM_ADDR_A --video-s {args.video_s} "
            f"--connections {args.connections} "
            f"--latency-ms {args.latency_ms} "
            f"--mark-pid $PPID > {out}/rx.json; wait")
        stdout, stats = nstest.run(
            [f"rate={args.rate}mbit,delay=10ms,"
             f"queue={queue_packets(args.rate)}p"], script,
            cc=args.cc, timeout=int(bulk_s * 3 + 120))
        rx = json.load(open(f"{out}/rx.json"))["receiver"]
        sink_cc = ",".join(json.load(open(f"{out}/tx.json"))
                           .get("congestion_control") or ["?"])
        bulk = json.load(open(f"{out}/bulk.json"))
        udp_rx = json.load(open(f"{out}/udp.json"))
        bulk_start = float(open(f"{out}/bulk_start").read())
    # the client in A sends to the server in B, the videos' direction (with
    # -R, in the runs before stop 32, they went the other way and shared
    # no queue with the videos); the bulk throughput is what B received
    # over the whole run, and what A sent while the videos were sent
    w0, w1 = rx[0]["marks_wall"][:2]
    loss = None
    if len(stats["marks"]) >= 2:
        m0, m1 = (m["links"][0] for m in stats["marks"][:2])
        offered = m1["ab_offered"] - m0["ab_offered"]
        # bytes offered and not forwarded between the marks (what sits in
        # the queue at either mark moves this by 0.1% of a 60 s run)
        loss = (offered - (m1["ab"] - m0["ab"])) / max(offered, 1)
    return {"control": control, "flows": flows, "cc": args.cc,
            "latency_ms": args.latency_ms,
            "sink_cc": sink_cc, "rate": args.rate,
            "connections_asked": args.connections,
            "connections": [r.get("connections") for r in rx],
            "count_reasons": [r.get("count_reason") for r in rx],
            # the paper's video throughput: bytes over the transfer's time
            "video_mbps": [r["bytes"] * 8 / max(r["transfer_s"] or
                                                args.video_s, 0.1) / 1e6
                           for r in rx],
            "transfer_s": [r["transfer_s"] for r in rx],
            "underflow_s": [r["late"] / FPS for r in rx],
            # [first, last s after the start, connections then] or None
            "late_at": [r.get("late_at") for r in rx],
            "ended": [r["ended"] for r in rx],
            "window_s": w1 - w0,
            "bulk_mbps": bulk_over(bulk, w0 - bulk_start, w1 - bulk_start),
            "bulk_run_mbps": bulk["end"]["sum_received"]["bits_per_second"]
            / 1e6,
            "loss": loss,
            "udp_mbps": udp_rx["bytes"] * 8 / bulk_s / 1e6}


def bulk_over(bulk, t0, t1):
    """Mbit/s the bulk flows' receiver got over [@t0, @t1) s of the run
    (its intervals, with -i 0.2 and --get-server-output; the client's, the
    bytes written, where it gave none), the parts of intervals cut by the
    span in proportion."""
    intervals = (bulk.get("server_output_json") or {}).get("intervals") \
        or bulk["intervals"]
    got = 0.0
    for iv in intervals:
        a, b = iv["sum"]["start"], iv["sum"]["end"]
        overlap = min(b, t1) - max(a, t0)
        if overlap > 0 and b > a:
            got += iv["sum"]["bytes"] * overlap / (b - a)
    return got * 8 / max(t1 - t0, 1e-3) / 1e6


def label(r):
    """The control, the videos' congestion control when not the sink's
    default (runs before it was recorded ran the default), and the
    connections a video when not one (the paper's; runs before it was
    recorded ran one)."""
    cc = r.get("sink_cc", SINK_CC)
    out = r["control"] if cc == SINK_CC else f"{r['control']}, {cc}"
    asked = r.get("connections_asked", 1)
    if asked == 0:
        out += ", default count"
    elif asked != 1:
        out += f", {asked} connections"
    if r.get("latency_ms", 5000) != 5000:
        out += f", {r['latency_ms'] / 1000:g} s playout delay"
    return out


def cells(results):
    """{(control, flows): [runs]} in the order they ran."""
    out = {}
    for r in results:
        out.setdefault((label(r), r["flows"]), []).append(r)
    return out


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else \
        fmt.format(lo) + "-" + fmt.format(hi)


def plot(results, path):
    """Fig. 6's four panels against N: the mean over runs, each control."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    by = cells(results)
    controls = list(dict.fromkeys(c for c, _ in by))
    panels = [("video Mbit/s", lambda r: statistics.mean(r["video_mbps"])),
              ("underflow s per connection",
               lambda r: statistics.mean(r["underflow_s"])),
              ("loss at the bottleneck, %",
               lambda r: 100 * (r["loss"] or 0)),
              ("bulk Mbit/s", lambda r: r["bulk_mbps"])]
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
    for ax, (title, value) in zip(axes, panels):
        for c in controls:
            ns = sorted(n for cc, n in by if cc == c)
            ax.plot(ns, [statistics.mean(value(r) for r in by[(c, n)])
                         for n in ns], marker="o", label=c)
        ax.set_xlabel("bulk TCP flows")
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_doc(results, args):
    rows = ["| control | bulk flows | runs | video Mbit/s (mean of 5) | "
            "transfer s (mean) | underflow s per connection (mean, most) | "
            "loss at the bottleneck | bulk Mbit/s | bulk Mbit/s, whole run |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (control, flows), runs in sorted(
            cells(results).items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rows.append(
            f"| {control} | {flows} | {len(runs)} | "
            + span([statistics.mean(r["video_mbps"]) for r in runs],
                   "{:.2f}") + " | "
            + span([statistics.mean([t for t in r["transfer_s"]
                                     if t is not None] or [float("nan")])
                    for r in runs], "{:.1f}") + " | "
            + span([statistics.mean(r["underflow_s"]) for r in runs],
                   "{:.2f}") + ", "
            + span([max(r["underflow_s"]) for r in runs], "{:.2f}") + " | "
            + span([100 * r["loss"] for r in runs if r["loss"] is not None]
                   or [float("nan")], "{:.2f}") + "% | "
            + span([r["bulk_mbps"] for r in runs], "{:.2f}") + " | "
            + span([r["bulk_run_mbps"] for r in runs], "{:.2f}") + " |")
    png = f"network-friendly-sec4{suffix(args.rate)}.png"
    plot(results, os.path.join(TOP, "docs", "bench", png))
    video = FPS * frame_bytes(args.rate) * 8 / 1e6
    text = "\n".join([
        heading(args.rate), "",
        f"`tests/netsim/friendly_experiment.py` ({time.strftime('%Y-%m-%d')}, "
        f"TCP {args.cc} in both namespaces (the bulk flows'), the videos' "
        f"sockets {SINK_CC} (multitcpsink's default) unless the control "
        "names another, the runs per cell in the table; "
        "ranges: the spread over the runs): "
        f"a {args.rate:g} Mbit/s bottleneck (10 ms each way, "
        f"{queue_packets(args.rate)}-packet queue), five stored videos of "
        f"{video:.2f} Mbit/s ({100 * video / args.rate:.1f}% of the link "
        "each, as the paper's five 3.6 Mbit/s on 100 Mbit/s) of "
        f"{args.video_s:.0f} s after {args.lead_s:.0f} s of background, 5 s "
        "playout delay unless the row names another, a Poisson UDP flow at "
        "10% of the link, N bulk TCP "
        "flows (iperf3, the same direction). As the paper's, the figures "
        "are taken while the videos are sent (from the receivers' start "
        "to the last video's last frame; the last column: the bulk flows "
        "over their whole run); video throughput: a video's bytes over its "
        "transfer time; underflow: frames that missed their playout time, "
        "as seconds of video. burst: the first burst scaled to the video's "
        "size, its blocks and amount per RTT to its playback rate. The "
        "paper's orderings: video throughput near the playback rate for "
        "network-friendly and burst, far more for greedy; underflow near "
        "zero for network-friendly and greedy, growing with N for burst; "
        "loss burst < network-friendly < greedy; bulk throughput burst > "
        "network-friendly > greedy.", ""] + rows +
        ["", f"![Fig. 6 on netsim](bench/{png})", ""])
    path = os.path.join(TOP, "docs", "network-friendly.md")
    old = open(path).read()
    mine = heading(args.rate)
    if mine in old:
        start = old.index(mine)
        nxt = old.find("\n## ", start + len(mine))
        old = old[:start] + (old[nxt + 1:] if nxt >= 0 else "")
    marker = "## A live session's share"
    if marker in old:
        i = old.index(marker)
        new = old[:i] + text + "\n" + old[i:]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role")
    ap.add_argument("--control", default="greedy")
    ap.add_argument("--addr")
    ap.add_argument("--mark-pid", type=int)
    ap.add_argument("--video-s", type=float, default=60)
    ap.add_argument("--lead-s", type=float, default=5)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--flows", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--controls", nargs="+",
                    default=["greedy", "burst", "network-friendly"])
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--sink-cc", default="",
                    help="the videos' congestion control (multitcpsink's "
                    "own default when not given)")
    ap.add_argument("--latency-ms", type=int, default=5000,
                    help="the receivers' latency, the playout delay (the "
                    "paper's 5 s)")
    ap.add_argument("--connections", type=int, default=1,
                    help="TCP connections a video (the source's "
                    "`connections`; 0: its default, 5 then ParS's count)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--add", action="store_true",
                    help="add these runs to results/friendly/results.json "
                    "(another N, more repeats) and write the table of all")
    args = ap.parse_args()
    if args.role:
        return peer(args)
    out_dir = os.path.join(TOP, "results", "friendly")
    os.makedirs(out_dir, exist_ok=True)
    results = []
    store = os.path.join(out_dir, f"results{suffix(args.rate)}.json")
    if args.add and os.path.exists(store):
        with open(store) as f:
            results = json.load(f)
    for flows in args.flows:
        for rep in range(args.repeats):
            for control in args.controls:
                print(f"running {control} with {flows} bulk flows", flush=True)
                r = run(args, control, flows)
                print(json.dumps(r), flush=True)
                results.append(r)
                with open(store, "w") as f:
                    json.dump(results, f, indent=1)
    write_doc(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
