#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Seed 004's Sec. IV on netsim, shortened: stored video sent greedy,
burst (YouTube-like (i)) or network-friendly next to N bulk TCP flows and
a Poisson UDP flow on one bottleneck; per control and N: the video's
throughput, buffer-underflow time per video connection, loss at the
bottleneck, and the bulk flows' throughput.

The paper: 100 Mbit/s, five 3.6 Mbit/s videos (18%), 10 Mbit/s UDP (10%),
a 600 s video, 5 s playout delay. Here, in proportion on 2 cores: a
--rate bottleneck (20 Mbit/s), five videos of 3.6% of it each (0.72 Mbit/s
raw 64x48 GRAY8 at 30 fps: 737 kbit/s), UDP at 10% of it (Poisson), a
--video-s video (60 s) after --lead-s (5 s) of background, 5 s playout
delay; burst's amounts scaled to the video's size (burst-scale).

    /usr/bin/python3 tests/netsim/friendly_experiment.py [--build DIR]
        [--flows 1 3 6] [--cc cubic] [--repeats 1]

Writes results/friendly/*.json and docs/network-friendly.md's "Measured"
section. One process holds the five sinks (a video each, its own port), one the
five multitcpsrc (connections=1: one TCP connection a video, as the
paper's).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FPS = 30
FRAME = 64 * 48
VIDEOS = 5
HEADING = "## Measured on netsim (Sec. IV, shortened)"


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
        scale = frames * FRAME / 270e6
        pipes = []
        for i in range(VIDEOS):
            p = Gst.parse_launch(
                f"videotestsrc is-live=false num-buffers={frames} ! "
                "video/x-raw,format=GRAY8,width=64,height=48,framerate=30/1 "
                f"! multitcpsink name=sink port={5600 + i} sync=false "
                f"wait-for-connection=true transfer-control={args.control} "
                f"burst-scale={scale:.6f}")
            p.set_state(Gst.State.PLAYING)
            pipes.append(p)
        time.sleep(args.video_s + args.lead_s + 15)
        out = []
        for p in pipes:
            st = p.get_by_name("sink").get_property("stats")
            for s in st.get_value("sessions") or []:
                out.append({"bytes_sent": s.get_value("bytes-sent"),
                            "held": s.get_value("transfer-held")})
            p.set_state(Gst.State.NULL)
        print(json.dumps({"sender": out}), flush=True)
        return
    srcs = []
    pipes = []
    for i in range(VIDEOS):
        p = Gst.parse_launch(
            f"multitcpsrc name=src host={args.addr} port={5600 + i} "
            "connections=1 latency=5000 drift-correction=false ! "
            "fakesink sync=true")
        p.set_state(Gst.State.PLAYING)
        pipes.append(p)
        srcs.append(p.get_by_name("src"))
        time.sleep(0.2)
    t0 = time.monotonic()
    ended = [False] * VIDEOS
    # when each connection's bytes last grew, and first came: its transfer
    seen = [0] * VIDEOS
    first = [None] * VIDEOS
    last = [None] * VIDEOS
    while time.monotonic() - t0 < args.video_s + 12 and not all(ended):
        for i, p in enumerate(pipes):
            got = srcs[i].get_property("stats").get_value("bytes-received")
            now = time.monotonic() - t0
            if got and got > seen[i]:
                first[i] = first[i] if first[i] is not None else now
                last[i] = now
                seen[i] = got
            if not ended[i] and p.get_bus().timed_pop_filtered(
                    50 * Gst.MSECOND, Gst.MessageType.EOS |
                    Gst.MessageType.ERROR):
                ended[i] = time.monotonic() - t0
    out = []
    for i, s in enumerate(srcs):
        st = s.get_property("stats")
        late = st.get_value("buffers-late") + st.get_value("buffers-skipped")
        out.append({"bytes": st.get_value("bytes-received"),
                    "late": late, "ended": ended[i],
                    "transfer_s": (last[i] - first[i]) if first[i] is not None
                    else None,
                    "pushed": st.get_value("buffers-pushed")})
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
    bulk_s = args.lead_s + args.video_s + 5
    udp = f"{args.rate * 0.1:.2f}M"
    with tempfile.TemporaryDirectory() as out:
        script = (
            # the bulk flows and the UDP flow, from A (the videos' side) to B
            f"ip netns exec $NETSIM_NS_B iperf3 -s -1 -D -B $NETSIM_ADDR_B "
            f"--logfile /dev/null; sleep 0.3; "
            f"ip netns exec $NETSIM_NS_B /usr/bin/python3 {HERE}/udp_flood.py "
            f"recv $NETSIM_ADDR_B 5700 {bulk_s + 2} {out}/udp.json & "
            f"ip netns exec $NETSIM_NS_A /usr/bin/python3 {HERE}/udp_flood.py "
            f"send $NETSIM_ADDR_B 5700 {udp} {bulk_s} 1460 poisson "
            f"> {out}/udp_tx.json & "
            f"ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B -P "
            f"{flows} -t {bulk_s:.0f} --json > {out}/bulk.json & "
            f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 {me} "
            f"--role sender --control {control} --video-s {args.video_s} "
            f"--lead-s {args.lead_s} > {out}/tx.json & "
            f"sleep {args.lead_s}; "
            f"ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 {me} "
            f"--role receiver --addr $NETSIM_ADDR_A --video-s {args.video_s} "
            f"> {out}/rx.json; wait")
        stdout, stats = nstest.run(
            [f"rate={args.rate}mbit,delay=10ms,queue=100p"], script,
            cc=args.cc, timeout=int(bulk_s * 3 + 120))
        rx = json.load(open(f"{out}/rx.json"))["receiver"]
        bulk = json.load(open(f"{out}/bulk.json"))
        udp_rx = json.load(open(f"{out}/udp.json"))
    # the client in A sends to the server in B, the videos' direction (with
    # -R, in the runs before stop 32, they went the other way and shared
    # no queue with the videos); the bulk throughput is what B received
    bulk_bps = bulk["end"]["sum_received"]["bits_per_second"]
    ab = stats["links"][0]["ab"]
    loss = (ab["dropped_queue"] + ab["dropped_loss"]) / max(
        ab["offered_packets"], 1)
    return {"control": control, "flows": flows, "cc": args.cc,
            # the paper's video throughput: bytes over the transfer's time
            "video_mbps": [r["bytes"] * 8 / max(r["transfer_s"] or
                                                args.video_s, 0.1) / 1e6
                           for r in rx],
            "underflow_s": [r["late"] / FPS for r in rx],
            "ended": [r["ended"] for r in rx],
            "bulk_mbps": bulk_bps / 1e6, "loss": loss,
            "udp_mbps": udp_rx["bytes"] * 8 / bulk_s / 1e6}


def write_doc(results, args):
    rows = ["| control | bulk flows | video Mbit/s (mean of 5) | underflow "
            "s per connection (mean, most) | loss at the bottleneck | "
            "bulk Mbit/s |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        rows.append(
            f"| {r['control']} | {r['flows']} | "
            f"{statistics.mean(r['video_mbps']):.2f} | "
            f"{statistics.mean(r['underflow_s']):.2f}, "
            f"{max(r['underflow_s']):.2f} | {r['loss']:.2%} | "
            f"{r['bulk_mbps']:.2f} |")
    text = "\n".join([
        HEADING, "",
        f"`tests/netsim/friendly_experiment.py` ({time.strftime('%Y-%m-%d')}, "
        f"TCP {args.cc} in both namespaces, {args.repeats} run(s) per cell): "
        f"a {args.rate} Mbit/s bottleneck (10 ms each way, 100-packet "
        "queue), five stored videos of 0.74 Mbit/s (3.6% of the link each, "
        "as the paper's five 3.6 Mbit/s on 100 Mbit/s) for "
        f"{args.video_s:.0f} s after {args.lead_s:.0f} s of background, 5 s "
        "playout delay, a Poisson UDP flow at 10% of the link, N bulk TCP "
        "flows (iperf3, the same direction). Underflow: frames that missed "
        "their playout time, as seconds of video. The paper's orderings: "
        "video throughput near the playback rate for network-friendly and "
        "burst, far more for greedy; underflow near zero for "
        "network-friendly and greedy, growing with N for burst; loss "
        "burst < network-friendly < greedy; bulk throughput burst > "
        "network-friendly > greedy.", ""] + rows + [""])
    path = os.path.join(TOP, "docs", "network-friendly.md")
    old = open(path).read()
    if HEADING in old:
        start = old.index(HEADING)
        nxt = old.find("\n## ", start + len(HEADING))
        old = old[:start] + (old[nxt + 1:] if nxt >= 0 else "")
    marker = "## Not done yet"
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
    ap.add_argument("--video-s", type=float, default=60)
    ap.add_argument("--lead-s", type=float, default=5)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--flows", type=int, nargs="+", default=[1, 3, 6])
    ap.add_argument("--controls", nargs="+",
                    default=["greedy", "burst", "network-friendly"])
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    args = ap.parse_args()
    if args.role:
        return peer(args)
    out_dir = os.path.join(TOP, "results", "friendly")
    os.makedirs(out_dir, exist_ok=True)
    results = []
    for flows in args.flows:
        for rep in range(args.repeats):
            for control in args.controls:
                print(f"running {control} with {flows} bulk flows", flush=True)
                r = run(args, control, flows)
                print(json.dumps(r), flush=True)
                results.append(r)
                with open(os.path.join(out_dir, "results.json"), "w") as f:
                    json.dump(results, f, indent=1)
    write_doc(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
