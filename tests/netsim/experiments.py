#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The paper experiments of issue 4 on netsim, each variant in turn, with a
table and a plot written to docs/ (figures in docs/control/).

  tests/netsim/experiments.py fig4 [--cc reno cubic]
  tests/netsim/experiments.py fig4udp   (Fig. 4's UDP bursts, full length)
  tests/netsim/experiments.py udpbulk   (bulk TCP flows against that burst)
  (fig4udp, udpbulk: --ns2 for ns-2's queue and UDP rate; udpbulk --fq-rate)
  tests/netsim/experiments.py fig9
  tests/netsim/experiments.py multfrc
  tests/netsim/experiments.py reliability   (issue 5, docs/reliability.md)
  tests/netsim/experiments.py outage        (issue 23, docs/reliability.md)
  (--build DIR: the build whose plugin and netsim run, default build/)
"""
import argparse
import csv
import json
import os
import random
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(HERE, "run-scenario")
DOCS = os.path.join(TOP, "docs")


REUSE = False
BUILD = os.path.join(TOP, "build")

# What MultiTCP's NS-2 run had where the paper does not say: ns-2's default
# drop-tail limit of 50 packets, and a CBR rate that counts whole packets,
# so 5.5 Mbit/s on the wire (iperf3 and udp_flood.py count 1460-byte
# payloads: 5.5 * 1460 / 1488).
NS2_LINK = "rate=6mbit,delay=40ms,queue=50p"
NS2_UDP_RATE = "5.397M"
NS2_NOTE = ("ns-2's defaults where the paper is silent: a 50-packet "
            "drop-tail queue (100 ms at 6 Mbit/s) and the UDP flow's "
            "5.5 Mbit/s counted on the wire")


def ns2_defaults(scn):
    """@scn with Fig. 4's link and UDP rate as ns-2 would have had them."""
    scn = dict(scn, links=[NS2_LINK])
    scn["cross"] = [dict(c, rate=NS2_UDP_RATE) if c["type"] == "udp" else c
                    for c in scn["cross"]]
    return scn


def run_variant(scenario, name, overrides):
    out = os.path.join(TOP, "results", name)
    if REUSE and os.path.exists(os.path.join(out, "summary.json")):
        return (json.load(open(os.path.join(out, "summary.json"))),
                list(csv.DictReader(open(os.path.join(out, "receiver.csv")))),
                json.load(open(os.path.join(out, "netsim.json"))))
    args = [RUNNER, scenario, "--out", out, "--build", BUILD]
    for k, v in overrides.items():
        args += ["--set", f"{k}={json.dumps(v) if not isinstance(v, str) else v}"]
    subprocess.run(args, check=False, stdout=subprocess.DEVNULL)
    summary = json.load(open(os.path.join(out, "summary.json")))
    rows = list(csv.DictReader(open(os.path.join(out, "receiver.csv"))))
    netsim = json.load(open(os.path.join(out, "netsim.json")))
    return summary, rows, netsim


def fig4(args):
    scn_path = os.path.join(TOP, "tests", "scenarios", "multitcp-fig4.json")
    scn = json.load(open(scn_path))
    base = scn["receiver"]
    variants = [
        ("1 connection", base.replace("connections=5", "connections=1")),
        ("2 connections", base.replace("connections=5", "connections=2")),
        ("5 connections", base),
        # the paper's default start of N = 5 (Sec. 4.2.1), Table III's cf
        ("dynamic", base.replace("connections=5", "connections=5 "
                                 "connection-control=congestion "
                                 "min-connections=1 max-connections=16")),
        # the same without step 3 of Alg. 2 (cf above the ratio's cap f)
        ("dynamic-no-cf", base.replace("connections=5", "connections=5 "
                                       "connection-control=congestion "
                                       "congestion-factor=1000 "
                                       "min-connections=1 "
                                       "max-connections=16")),
    ]
    results = {}
    for cc in args.cc:
        for label, receiver in variants:
            name = f"fig4-{cc}-{label.split()[0]}"
            print(f"running {name}", flush=True)
            results[(cc, label)] = run_variant(scn_path, name, {
                "cc": cc, "receiver": receiver, "name": name})
    plot_fig4(scn, results, args.cc, [v[0] for v in variants])
    lines = ["## MultiTCP Fig. 4 on netsim", "",
             f"`tests/netsim/experiments.py fig4`: {scn['comment']}. "
             "Receive windows by AdjustWindowSize (window-control=adjust, "
             "target 800 kbit/s, Table II parameters); `dynamic` is "
             "VariedConnVariedWinSize (connection-control=congestion, 1 to 16 "
             "connections, starting at the paper's N = 5, cf = 5); "
             "`dynamic-no-cf` is the same with step 3 of Alg. 2 (stop one "
             "when W_s/W_n >= cf) disabled by cf = 1000. The congestion control named is "
             "the one of both namespaces (sender, receiver and the cross "
             "traffic). Each cell: throughput received (the paper's "
             "metric: all bytes that arrived, on time or not) / throughput "
             "delivered on time (released by the 2 s deadline), averaged over "
             "the phase, as fractions of 800 kbit/s:", ""]
    lines += fig4_table(scn, results)
    lines += ["", "![Fig. 4 on netsim](control/fig4.png)", ""]
    write_section(os.path.join(DOCS, "control.md"),
                  "## MultiTCP Fig. 4 on netsim", "\n".join(lines))


def fig4_table(scn, results):
    """Per phase: received / delivered on time, fractions of the target;
    the receiver's late fraction (what it skipped at its deadline over what
    it released and skipped), and the share of all buffers that were late
    or that the sender dropped for lag before sending them."""
    phases = [p[0] for p in scn["phases"]]
    lines = ["| TCP | connections | " + " | ".join(phases) +
             " | late fraction | late or dropped by the sender | "
             "received >= 95% every phase |",
             "|---|---|" + "---:|" * len(phases) + "---:|---:|---|"]
    for (cc, label), (summary, rows, netsim) in results.items():
        fr = {p["phase"]: p["of_target"] for p in summary["phases"]}
        rx = {}
        for name, start, stop in scn["phases"]:
            sel = [float(r["bitrate"]) for r in rows
                   if start <= float(r["time"]) < stop and r.get("bitrate")]
            rx[name] = (sum(sel) / len(sel) / 800000) if sel else 0
        held = all(rx.get(p, 0) >= 0.95 for p in phases)
        last = rows[-1] if rows else {}
        skipped = float(last.get("buffers-skipped") or 0)
        dropped = float(last.get("buffers-sender-dropped") or 0)
        pushed = float(last.get("buffers-pushed") or 0)
        bad = (skipped + dropped) / max(pushed + skipped + dropped, 1)
        lines.append(f"| {cc} | {label} | " + " | ".join(
            f"{rx.get(p, 0):.2f} / {fr.get(p, 0):.2f}" for p in phases) +
            f" | {summary.get('late-fraction', 0):.3f} | {bad:.3f} | "
            f"{'yes' if held else 'no'} |")
    return lines


def fig4udp(args):
    """Fig. 4's two UDP bursts at the paper's own length (20 s and 40 s),
    which the x0.2 run shortens to 4 s and 8 s: does the dynamic controller
    get there when it has the paper's time?"""
    scn = json.load(open(os.path.join(TOP, "tests", "scenarios",
                                      "multitcp-fig4.json")))
    udp = dict(scn["cross"][0])
    scn.update(
        name="multitcp-fig4-udp", duration=150,
        comment="MultiTCP Fig. 4's UDP bursts at the paper's length: 6 "
        "Mbit/s bottleneck, 40 ms each way, 800 kbit/s video; UDP 5.5 "
        "Mbit/s for 20 s and, after 40 s without, for 40 s",
        cross=[dict(udp, start=40, stop=60), dict(udp, start=100, stop=140)],
        phases=[["no cross traffic", 5, 40], ["UDP 5.5 Mbit/s, 20 s", 40, 60],
                ["between", 60, 100], ["UDP 5.5 Mbit/s, 40 s", 100, 140]])
    suffix = ""
    if args.ns2:
        scn = ns2_defaults(scn)
        scn["name"] += "-ns2"
        scn["comment"] += "; " + NS2_NOTE
        suffix = "-ns2"
    path = os.path.join(TOP, "tests", "scenarios", scn["name"] + ".json")
    with open(path, "w") as f:
        json.dump(scn, f, indent=1)
    base = scn["receiver"]
    variants = [("5 connections", base, None),
                ("dynamic", base.replace(
                    "connections=5", "connections=5 "
                    "connection-control=congestion min-connections=1 "
                    "max-connections=16"), None),
                # are the drops a window's burst meeting a full queue?
                ("5 connections, pacing", base, scn["sender"].replace(
                    "multitcpsink ", "multitcpsink pacing=true ")),
                # does a share against the UDP flood come with numbers?
                ("16 connections", base.replace("connections=5",
                                                "connections=16"), None),
                # what 16 and 32 bulk flows take (udpbulk) without the
                # receive windows AdjustWindowSize sets
                ("16 connections, no window control", base.replace(
                    "connections=5", "connections=16").replace(
                    "window-control=adjust", "window-control=none"), None),
                ("32 connections, no window control", base.replace(
                    "connections=5", "connections=32").replace(
                    "window-control=adjust", "window-control=none"), None)]
    results = {}
    for cc in args.cc:
        for label, receiver, sender in variants:
            if args.only and label not in args.only:
                continue
            name = f"fig4udp-{cc}-{label.split()[0]}" + (
                "-pacing" if sender else "") + (
                "-nowc" if "window-control=none" in receiver else "") + suffix
            print(f"running {name}", flush=True)
            overrides = {"cc": cc, "receiver": receiver, "name": name}
            if sender:
                overrides["sender"] = sender
            results[(cc, label)] = run_variant(path, name, overrides)
    heading = "## MultiTCP Fig. 4's UDP bursts at the paper's length" + (
        ", ns-2's queue and UDP rate" if args.ns2 else "")
    lines = [heading, "",
             f"`tests/netsim/experiments.py fig4udp{' --ns2' * args.ns2}` "
             f"(scenario `tests/scenarios/{scn['name']}.json`): "
             f"{scn['comment']}. "
             "Same receivers as the Fig. 4 run above (5 connections, and "
             "the dynamic controller from N = 5), 5 connections with "
             "the sink's `pacing` on, 16 connections, and 16 and 32 "
             "connections with no window control (`window-control=none`: "
             "the senders' congestion windows alone); cells as there." +
             (" This run had the rows below only." if args.only else ""),
             ""]
    lines += fig4_table(scn, results)
    write_section(os.path.join(DOCS, "control.md"), heading,
                  "\n".join(lines))


UDPBULK_FLOWS = (1, 5, 16, 32, 64)


def udpbulk(args):
    """What N backlogged TCP flows (iperf3, no multitcp) get on Fig. 4's
    link while the 5.5 Mbit/s UDP flow runs: the most N connections of a
    live stream could take there."""
    import nstest
    import tempfile
    os.environ.setdefault("NETSIM", os.path.join(BUILD, "tests", "netsim",
                                                 "netsim"))
    scn = json.load(open(os.path.join(TOP, "tests", "scenarios",
                                      "multitcp-fig4.json")))
    if args.ns2:
        scn = ns2_defaults(scn)
    link, udp_rate = scn["links"][0], scn["cross"][0]["rate"]
    paced = f", paced (iperf3 --fq-rate {args.fq_rate})" if args.fq_rate \
        else ""
    heading = "## Bulk TCP flows against the same UDP burst" + (
        ", ns-2's queue and UDP rate" if args.ns2 else "") + paced
    flood = "/usr/bin/python3 " + os.path.join(HERE, "udp_flood.py")
    # TCP alone, then with the UDP flow, then alone again
    alone, burst = 10, 40
    lines = [heading, "",
             f"`tests/netsim/experiments.py udpbulk{' --ns2' * args.ns2}"
             f"{' --fq-rate ' + args.fq_rate if args.fq_rate else ''}`: "
             "N backlogged TCP flows "
             "(iperf3 -P N, no multitcp, no window clamp) on Fig. 4's link "
             f"(`{link}`) with a constant-rate UDP flow of {udp_rate} for "
             f"{burst} s (payload, as the scenarios' iperf3 -b counts it, "
             "1460-byte datagrams; "
             "`tests/netsim/udp_flood.py`, as iperf3's UDP test loses its "
             "start-up exchange in the full queue), TCP congestion control "
             "as named on both sides: what N "
             "connections can take from the UDP flood at most. TCP: mean "
             "of the iperf3 receiver's one-second intervals, alone (4 s to "
             f"{alone} s, after slow start) and in the burst (its first 2 s "
             "and last 1 s left out); UDP on the wire: payload + 28 bytes of "
             "IP/UDP header per datagram, as netsim counts the link's rate.",
             "",
             "| TCP | flows | TCP alone Mbit/s | TCP in the burst Mbit/s | "
             "of 800 kbit/s | TCP retransmits | UDP on the wire Mbit/s | "
             "UDP lost |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for cc in args.cc:
        for n in args.flows or UDPBULK_FLOWS:
            print(f"running udpbulk {cc} {n}", flush=True)
            # the UDP flow starts @alone s after every TCP flow is up (64
            # take a while); udp_flood.py, as iperf3's UDP test loses its
            # start-up exchange in the queue the TCP flows keep full
            script = (
                "ip netns exec $NETSIM_NS_B iperf3 -s -1 -D -J -B "
                "$NETSIM_ADDR_B --logfile /dev/null; sleep 0.3; "
                "ip netns exec $NETSIM_NS_A iperf3 -c $NETSIM_ADDR_B "
                f"-t {2 * alone + burst} -P {n} -C {cc} --json "
                + (f"--fq-rate {args.fq_rate} " if args.fq_rate else "") +
                "--get-server-output > $T/tcp.json & "
                "until [ $(ip netns exec $NETSIM_NS_A ss -Htn state "
                "established '( dport = :5201 )' | wc -l) -gt "
                f"{n} ]; do sleep 0.05; done; date +%s.%N > $T/tcp_t0; "
                f"ip netns exec $NETSIM_NS_B {flood} recv $NETSIM_ADDR_B "
                f"5300 {alone + burst + 3} $T/udp_rx.json & sleep {alone}; "
                "date +%s.%N > $T/udp_t0; ip netns exec $NETSIM_NS_A "
                f"{flood} send $NETSIM_ADDR_B 5300 {udp_rate} {burst} "
                "> $T/udp.json; wait")
            with tempfile.TemporaryDirectory() as tmp:
                nstest.run([link], f"T={tmp}; " + script, cc=cc,
                           timeout=4 * (2 * alone + burst + 15))
                tcp = json.load(open(os.path.join(tmp, "tcp.json")))
                udp = json.load(open(os.path.join(tmp, "udp.json")))
                udp_rx = json.load(open(os.path.join(tmp, "udp_rx.json")))
                udp_at = (float(open(os.path.join(tmp, "udp_t0")).read()) -
                          float(open(os.path.join(tmp, "tcp_t0")).read()))
            # the receiver's intervals: the sender's count its buffer filling
            rates = [(i["sum"]["start"], i["sum"]["bits_per_second"] / 1e6)
                     for i in tcp["server_output_json"]["intervals"]]
            before = [r for t, r in rates if 4 <= t < alone]
            during = [r for t, r in rates
                      if udp_at + 2 <= t and t + 1 <= udp_at + burst - 1]
            wire = (udp["bytes"] + 28 * udp["packets"]) * 8 / 1e6 / burst
            udp_lost = 1 - udp_rx["packets"] / max(udp["packets"], 1)
            tcp_in = sum(during) / max(len(during), 1)
            lines.append(
                f"| {cc} | {n} | {sum(before) / max(len(before), 1):.2f} | "
                f"{tcp_in:.2f} | {tcp_in / 0.8:.2f} | "
                f"{tcp['end']['sum_sent'].get('retransmits', 0)} | "
                f"{wire:.2f} | {udp_lost:.1%} |")
            print(lines[-1], flush=True)
    write_section(os.path.join(DOCS, "control.md"), heading,
                  "\n".join(lines) + "\n")


def plot_fig4(scn, results, ccs, labels):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(os.path.join(DOCS, "control"), exist_ok=True)
    fig, axes = plt.subplots(3, len(ccs), figsize=(7 * len(ccs), 9),
                             squeeze=False, sharex=True)
    for j, cc in enumerate(ccs):
        for label in labels:
            if (cc, label) not in results:
                continue
            rows = results[(cc, label)][1]
            t = [float(r["time"]) for r in rows]
            axes[0][j].plot(t, [float(r.get("bitrate") or 0) / 1e3
                                for r in rows], label=label)
            axes[2][j].plot(t, [float(r.get("n-connections") or 0)
                                for r in rows], label=label)
            axes[1][j].plot(t, [float(r.get("window-sum") or 0) for r in rows],
                            label=label)
        axes[0][j].axhline(800, color="black", ls=":", lw=0.8)
        axes[0][j].set_ylabel("throughput received (kbit/s)")
        axes[2][j].set_ylabel("connections")
        axes[0][j].set_title(f"sender and cross traffic: {cc}")
        axes[1][j].set_ylabel("window sum W_s (segments)")
        axes[2][j].set_xlabel("time (s)")
        for c in scn["cross"]:
            for ax in (axes[0][j], axes[1][j], axes[2][j]):
                ax.axvspan(c["start"], c["stop"], color="grey", alpha=0.08)
        axes[0][j].legend(loc="lower left")
        axes[0][j].set_ylim(0, 2000)
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "control", "fig4.png"), dpi=80)


def player_stops(rows, rate_bps, prebuffer_s, rebuffer_s=5.0):
    """MultiTCP 5.3's player on the arrival trace: starts after prebuffer_s
    of stream, plays at rate_bps, stops when the buffer runs dry and then
    waits rebuffer_s of stream before playing again."""
    buffered, playing, stops, t_prev = 0.0, False, 0, 0.0
    need = prebuffer_s * rate_bps / 8
    for r in rows:
        t = float(r["time"])
        dt = t - t_prev
        t_prev = t
        buffered += float(r["delivered_bps"]) / 8 * dt
        if playing:
            buffered -= rate_bps / 8 * dt
            if buffered < 0:
                stops += 1
                playing = False
                buffered = 0
                need = rebuffer_s * rate_bps / 8
        elif buffered >= need:
            playing = True
    return stops


def fig9(args):
    rng = random.Random(9)
    duration = 200
    cross = []
    for i in range(8):
        start = rng.uniform(0, duration - 30)
        stop = min(duration, start + rng.uniform(30, 100))
        cross.append({"type": "tcp", "start": round(start, 1),
                      "stop": round(stop, 1), "flows": 1})
    rate = 720000

    def sender_for(listen):
        # listen: the receiver listens and the sink dials it
        at = "mode=caller host=$B" if listen else "host=$A"
        return ("videotestsrc is-live=true pattern=snow ! video/x-raw,"
                "width=320,height=240,framerate=30/1 ! x264enc bitrate=720 "
                "pass=cbr tune=zerolatency key-int-max=30 "
                "speed-preset=ultrafast ! "
                f"h264parse ! multitcpsink {at} port=5600 "
                "max-session-lag=60000000000 max-session-bytes=0")

    def receiver_for(listen, opts):
        at = "mode=listener host=$B" if listen else "host=$A"
        return (f"multitcpsrc {at} port=5600 latency=10000 "
                "stats-interval=1000 window-control=adjust "
                f"target-bitrate=720000 {opts} ! fakesink name=sink "
                "sync=false")
    sender = sender_for(False)
    variants = [(f"{n} connection{'s' if n > 1 else ''}", f"connections={n}")
                for n in range(1, 6)]
    variants.append(("dynamic", "connections=5 connection-control=congestion "
                     "min-connections=1 max-connections=16"))
    variants.append(("dynamic-no-cf", "connections=5 "
                     "connection-control=congestion congestion-factor=1000 "
                     "min-connections=1 max-connections=16"))
    scn = {"name": "multitcp-fig9", "duration": duration,
           "cc": args.cc[0], "links": ["rate=2mbit,delay=40ms,queue=50p"],
           "cross": cross, "sender": sender, "target_bitrate": rate,
           "phases": [["all", 10, duration]]}
    path = os.path.join(TOP, "tests", "scenarios", "multitcp-fig9.json")
    with open(path, "w") as f:
        json.dump(scn, f, indent=1)
    lines = ["## MultiTCP Fig. 9 on netsim: playback stops", "",
             f"`tests/netsim/experiments.py fig9` (scenario "
             "`tests/scenarios/multitcp-fig9.json`): 720 kbit/s H.264 (x264 "
             f"CBR) for {duration} s over a 2 Mbit/s bottleneck with 80 ms RTT "
             "(queue 50 packets, 300 ms); "
             "8 long TCP flows start and stop at random times (seed 9), so 0 "
             "to 8 of them compete at any moment. TCP: "
             f"{args.cc[0]} in both namespaces. Windows by AdjustWindowSize "
             "(target 720 kbit/s); `dynamic` adds VariedConnVariedWinSize "
             "(start at N = 5, cf = 5, 1 to 16 connections), `dynamic-no-cf` "
             "the same with cf = 1000. Stops are counted the paper's way on the "
             "arrival trace: playback starts after 10 s of stream, stops when "
             "the buffer runs dry and resumes after 5 s of stream has "
             "arrived; the receiver also ran with latency=10000 ms, and its "
             "own count of buffers that missed that deadline is given.", "",
             "| connections | stops (paper's player) | buffers late or skipped "
             "(latency 10 s) | mean delivered (kbit/s) |",
             "|---|---:|---:|---:|"]
    if args.only:
        variants = [v for v in variants
                    if v[0] in args.only or v[0].split()[0] in args.only]

    def run(label, opts, listen, repeat=0):
        name = "fig9-" + label.split()[0] + ("-listen" if listen else "") + \
            (f"-r{repeat}" if repeat else "")
        print(f"running {name}", flush=True)
        summary, rows, _ = run_variant(path, name, {
            "name": name, "sender": sender_for(listen),
            "receiver": receiver_for(listen, opts),
            "receiver_first": listen})
        stops = player_stops(rows, rate, 10)
        late = summary.get("buffers-late", 0) + summary.get(
            "buffers-skipped", 0)
        mean = summary["phases"][0]["delivered_kbps"] if summary["phases"] \
            else 0
        return stops, late, mean

    def cells(runs):
        """stops, late or skipped, kbit/s: one run as is, several as the
        median and [least-most]"""
        out = []
        for k, fmt in enumerate(("{:.0f}", "{:.0f}", "{:.0f}")):
            vals = sorted(r[k] for r in runs)
            med = fmt.format(statistics.median(vals))
            out.append(med if len(vals) == 1 else
                       f"{med} [{fmt.format(vals[0])}-{fmt.format(vals[-1])}]")
        return " | ".join(out)

    if args.both_ways:
        # issue 25: the same experiment with either end dialing, the two
        # ways of a variant back to back in one session
        heading = "## Fig. 9 either way round: the receiver dials, or listens"
        lines = [heading, "",
                 f"`tests/netsim/experiments.py fig9 --both-ways` (the "
                 "scenario above; TCP: "
                 f"{args.cc[0]} in both namespaces): each variant run with "
                 "the receiver dialing the sink, then with the receiver "
                 "listening (`mode=listener`) and the sink dialing it "
                 "(`mode=caller`), everything else the same. Columns: "
                 "stops (the paper's player), buffers late or skipped "
                 "(latency 10 s), mean delivered (kbit/s). Listening, the "
                 "receiver starts first (else the sink's first dials "
                 "fail and their backoff, up to 5 s, delays the stream: "
                 "a first run that started the sender first began the "
                 "stream ~10 s late and met the cross traffic elsewhere).",
                 "",
                 "| connections | dials: stops | late or skipped | kbit/s | "
                 "listens: stops | late or skipped | kbit/s |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        if args.repeats > 1:
            lines[-2:-2] = [f"{args.repeats} runs per variant and way (the "
                            "two ways alternating): medians, [least-most].",
                            ""]
        for label, opts in variants:
            dial, listen = [], []
            for r in range(args.repeats):
                dial.append(run(label, opts, False, r))
                listen.append(run(label, opts, True, r))
            lines.append(f"| {label} | {cells(dial)} | {cells(listen)} |")
        lines.append("")
        write_section(os.path.join(DOCS, "control.md"), heading,
                      "\n".join(lines))
        return
    for label, opts in variants:
        lines.append(f"| {label} | {run(label, opts, False)} |")
    lines.append("")
    write_section(os.path.join(DOCS, "control.md"),
                  "## MultiTCP Fig. 9 on netsim: playback stops",
                  "\n".join(lines))


def multfrc(args):
    duration = 180
    sender = ("fakesrc is-live=true datarate=750000 sizetype=fixed "
              "sizemax=25000 filltype=zero format=time ! "
              "multitcpsink host=$A port=5600")
    base = ("multitcpsrc host=$A port=5600 latency=2000 stats-interval=1000 "
            "{} ! fakesink name=sink sync=false")
    scn = {"name": "multfrc-wireless", "duration": duration,
           "cc": args.cc[0],
           "links": ["rate=4mbit,delay=75ms,queue=60p,loss=0.02/"
                     "rate=4mbit,delay=75ms,queue=60p"],
           "sender": sender, "target_bitrate": 4000000,
           "phases": [["settled", 60, duration]]}
    path = os.path.join(TOP, "tests", "scenarios", "multfrc-wireless.json")
    with open(path, "w") as f:
        json.dump(scn, f, indent=1)
    gamma = 0.3                 # the rtt-gamma default
    # most TS payload the link can carry: B_w (1 - p_w) (the paper's full
    # use), 1448 of each 1500 bytes on the wire
    most = 4e6 * (1 - 0.02) * 1448 / 1500
    lines = ["## MULTFRC on a lossy wireless-like link", "",
             "`tests/netsim/experiments.py multfrc` (scenario "
             "`tests/scenarios/multfrc-wireless.json`): 4 Mbit/s, 150 ms RTT, "
             "2% random loss on the data direction, a live 6 Mbit/s source (so "
             "the path, not the source, limits), TCP "
             f"{args.cc[0]}. `connection-control=rtt` (IIAD, alpha 1, beta 1, "
             "gamma as given, m 5 RTT samples, one per round trip) against one "
             "connection. Averages over "
             f"60-{duration} s. Received is what arrived over all "
             "connections (the paper's throughput), against the 4 Mbit/s of "
             "IP packets for the share of the link; delivered on time is "
             "what left multitcpsrc by its 2 s deadline (the source offers "
             "more than the path carries, so the sink skips and some "
             "arrivals are late). Of the most: received over "
             f"{most / 1e6:.2f} Mbit/s, the TS bytes the link carries at "
             "full use by the paper's definition, B_w (1 - p_w), in 1448 "
             "bytes of payload a 1500-byte packet. gamma is the rtt "
             "controller's `rtt-gamma`; the rows with other values show "
             "what the threshold trades.", "",
             "| connections | received (Mbit/s) | of link | of the most | "
             "delivered on time (Mbit/s) | mean count | min RTT (ms) | "
             "mean RTT (ms) | RTT inflation |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rtt_opts = "connections=1 connection-control=rtt max-connections=32"
    for label, opts in (("1 (fixed)", "connections=1"),
                        ("rtt controller, gamma 0.2",
                         rtt_opts + " rtt-gamma=0.2"),
                        ("rtt controller, gamma 0.3 (default)",
                         rtt_opts + " rtt-gamma=0.3"),
                        ("rtt controller, gamma 0.5",
                         rtt_opts + " rtt-gamma=0.5")):
        gamma_opt = [w for w in opts.split() if w.startswith("rtt-gamma=")]
        name = "multfrc-" + label.split()[0] + (
            "-g" + gamma_opt[0].split("=")[1] if gamma_opt else "")
        print(f"running {name}", flush=True)
        summary, rows, _ = run_variant(path, name, {
            "name": name, "receiver": base.format(opts)})
        sel = [r for r in rows if float(r["time"]) >= 60]
        rate = sum(float(r["delivered_bps"]) for r in sel) / max(len(sel), 1)
        received = sum(float(r.get("bitrate") or 0) for r in sel) / \
            max(len(sel), 1)
        count = sum(float(r.get("n-connections") or 0) for r in sel) / \
            max(len(sel), 1)
        rtts = [float(r["rtt"]) / 1000 for r in rows
                if r.get("rtt") and float(r["rtt"]) > 0]
        rtt_min = min(rtts) if rtts else 0
        rtt_mean = sum(float(r["rtt"]) / 1000 for r in sel) / max(len(sel), 1)
        infl = (rtt_mean - rtt_min) / rtt_min if rtt_min else 0
        lines.append(f"| {label} | {received / 1e6:.2f} | "
                     f"{received / 4e6:.2f} | {received / most:.2f} | "
                     f"{rate / 1e6:.2f} | "
                     f"{count:.1f} | {rtt_min:.0f} | {rtt_mean:.0f} | "
                     f"{infl:.2f} |")
    lines += ["", "Target: the controller within 10% of the link with RTT "
              "inflation under its gamma (the default is "
              f"{gamma}).", ""]
    write_section(os.path.join(DOCS, "control.md"),
                  "## MULTFRC on a lossy wireless-like link", "\n".join(lines))


def run_failure_scenario(name):
    """Runs tests/scenarios/NAME.json; returns the scenario, the receiver's
    rows, netsim's stats, its gaps and the runner's actions."""
    path = os.path.join(TOP, "tests", "scenarios", name + ".json")
    scn = json.load(open(path))
    print(f"running {name}", flush=True)
    summary, rows, netsim = run_variant(path, name, {})
    out = os.path.join(TOP, "results", name)
    gaps = json.load(open(os.path.join(out, "receiver.csv.gaps.json")))
    acts = json.load(open(os.path.join(out, "actions.json")))
    return scn, rows, netsim, gaps, acts


def last_int(rows):
    """A field of the receiver's last row as an int (0 if absent)."""
    return lambda k: int(float(rows[-1].get(k) or 0))


def reliability(args):
    """Issue 5 on netsim: connections killed, a blackout, a sender
    restart; zero loss where the issue asks for it, the recovery time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = ["reliability-kill", "reliability-blackout",
             "reliability-restart"]
    lines = ["## Failures on netsim", "",
             "`tests/netsim/experiments.py reliability` runs the three "
             "scenarios of issue 5 (files in `tests/scenarios/`), TCP cubic "
             "in both namespaces. The sender is x264 CBR at 4 Mbit/s "
             "(640x360, one keyframe a second); the receiver logs once a "
             "second and records every gap of more than 200 ms between "
             "buffers at its sink; the runner stamps each action on the same "
             "monotonic clock.", "",
             "| scenario | what happens | buffers pushed | late | skipped "
             "| duplicates dropped | connections lost | sessions "
             "| longest gap at the sink | result |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 7))
    for ax, name in zip(axes, names):
        scn, rows, netsim, gaps, acts = run_failure_scenario(name)
        v = last_int(rows)
        longest = max((b - a for a, b in gaps["gaps"]), default=0)
        if name.endswith("kill"):
            kills = [a for a in acts["actions"] if a.get("local_port")]
            what = (f"{len(kills)} connections aborted (RST), one every 2 s "
                    "for 60 s; 1 s latency")
            ok = v("buffers-late") == 0 and v("buffers-skipped") == 0 and \
                len(kills) >= 25 and not gaps["error"]
            verdict = "zero late or skipped" if ok else "FAILED"
        elif name.endswith("blackout"):
            dropped = sum(link[d]["dropped_blackout"]
                          for link in netsim["links"] for d in ("ab", "ba"))
            what = (f"3 s blackout both ways ({dropped} packets dropped by "
                    "it); 5 s latency")
            ok = v("buffers-late") == 0 and v("buffers-skipped") == 0 and \
                v("sessions") == 1 and not gaps["error"]
            verdict = ("zero lost, session unchanged" if ok else "FAILED")
        else:
            start = [a["t"] for a in acts["actions"]
                     if a["action"] == "sender started"][0]
            killed = [a["t"] for a in acts["actions"]
                      if a["action"] == "sender killed"][0]
            resumed = [b for a, b in gaps["gaps"] if a <= killed + 1 < b or
                       (a >= killed - 1 and b > start)]
            back = (resumed[0] - start) if resumed else float("nan")
            what = ("sender killed (SIGKILL), started again 2 s later; "
                    "1 s latency")
            ok = back <= 2.0 and not gaps["error"]
            verdict = (f"plays again {back:.2f} s after the sender's return"
                       + ("" if ok else " (target 2 s: FAILED)"))
            for t in (killed, start):
                ax.axvline(t - acts["t0"], color="red", ls=":")
        lines.append(
            f"| {name.split('-')[1]} | {what} | {v('buffers-pushed')} | "
            f"{v('buffers-late')} | {v('buffers-skipped')} | "
            f"{v('buffers-duplicate')} | {v('connections-lost')} | "
            f"{v('sessions')} | {longest:.2f} s | "
            f"{verdict} |")
        t = [float(r["time"]) for r in rows]
        ax.plot(t, [float(r["delivered_bps"]) / 1e6 for r in rows],
                label="delivered to the sink")
        ax.plot(t, [float(r.get("n-connections") or 0) for r in rows],
                label="connections")
        for a in acts["actions"]:
            if a.get("local_port"):
                ax.axvline(a["t"] - acts["t0"], color="grey", lw=0.5)
        for line in scn.get("schedule", []):
            at = float(line.split()[0].split("=")[1])
            ax.axvspan(at, at + 3, color="grey", alpha=0.2)
        ax.set_title(scn["comment"][len("Issue 5: "):][:110], fontsize=8)
        ax.set_ylabel("Mbit/s, count")
        ax.legend(loc="lower right", fontsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    os.makedirs(os.path.join(DOCS, "reliability"), exist_ok=True)
    fig.savefig(os.path.join(DOCS, "reliability", "netsim.png"), dpi=80)
    lines += ["", "Sessions counts the sessions the receiver joined: 1 means "
              "the blackout kept the session id; the restarted sender knows "
              "nothing of the old session, so the receiver opens a second "
              "one (DISCONT at its first keyframe, no EOS, no error).", "",
              "![issue 5 on netsim](reliability/netsim.png)", ""]
    write_section(os.path.join(DOCS, "reliability.md"),
                  "## Failures on netsim", "\n".join(lines))


def outage(args):
    """Issue 23: every connection dark for 5 s (a modem out of coverage):
    the session waits instead of closing and reconnecting, and is on time
    again soon after the path returns."""
    at, dark = 20.0, 5.0
    scn, rows, netsim, gaps, acts = run_failure_scenario("outage-cellular")
    v = last_int(rows)
    t0 = acts["t0"]
    # the gap that spans the outage: when buffers came again after it
    spans = [(a - t0, b - t0) for a, b in gaps["gaps"]
             if a - t0 < at + dark and b - t0 > at]
    back = max((b for _, b in spans), default=float("nan")) - (at + dark)
    late_after = [r for r in rows if float(r["time"]) > at + dark + 2]
    grew = (int(float(late_after[-1].get("buffers-late") or 0)) -
            int(float(late_after[0].get("buffers-late") or 0))
            if len(late_after) > 1 else 0)
    dropped = sum(link[d]["dropped_blackout"]
                  for link in netsim["links"] for d in ("ab", "ba"))
    lines = ["## An outage of the whole path (issue 23)", "",
             f"`tests/netsim/experiments.py outage`: {scn['comment']} "
             f"({dropped} packets dropped by the blackout); TCP "
             f"{scn['cc']} in both namespaces, one run.", "",
             "| connections lost | reconnects | sessions | late | skipped "
             "| longest gap at the sink | buffers again after the outage "
             "| late after outage + 2 s |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|",
             f"| {v('connections-lost')} | {v('reconnects')} | "
             f"{v('sessions')} | {v('buffers-late')} | "
             f"{v('buffers-skipped')} | "
             f"{max((b - a for a, b in gaps['gaps']), default=0):.2f} s | "
             f"{back:.2f} s | {grew} |", ""]
    print("\n".join(lines))
    write_section(os.path.join(DOCS, "reliability.md"),
                  "## An outage of the whole path (issue 23)",
                  "\n".join(lines))


def pars(args):
    """ParS Eq. 19 picks the starting count (connections=0) from the loss
    and RTT the sink's TCP_INFO reports, on a long lossy path."""
    duration = 60
    sender = ("fakesrc is-live=true datarate=1000000 sizetype=fixed "
              "sizemax=25000 filltype=zero format=time ! "
              "multitcpsink host=$A port=5600")
    base = ("multitcpsrc host=$A port=5600 latency=1000 stats-interval=1000 "
            "max-connections=32 {} ! fakesink name=sink sync=false")
    cc = args.cc[0]
    lines = ["## ParS: the starting count on a lossy path", "",
             "`tests/netsim/experiments.py pars`: 50 Mbit/s, 100 ms RTT, "
             "random loss on the data direction, a live 8 Mbit/s source, 1 s "
             f"latency, TCP {cc} in both namespaces, {duration} s per run. "
             "With `connections=0` the source opens 5 connections, waits "
             "until the sink has sent 500 segments over 5 connections, then "
             "takes the count "
             "from ParS Eq. 19 (phi 1.22) with the loss rate (retransmitted "
             "over sent segments) and RTT of the sink's TCP_INFO and the "
             "target of 1.6 times the stream's bitrate; 5 s later it takes "
             "it again from the loss after each connection's first recovery "
             "(its upper bound: the count of losses plus its square root) "
             "and the stream's rate then. Averages over "
             f"20-{duration} s.", "",
             "| loss | connections | count | delivered (Mbit/s) | of the "
             "stream | buffers late or skipped | decision |",
             "|---|---|---:|---:|---:|---:|---|"]
    for loss in (0.01, 0.03):
        scn = {"name": "pars", "duration": duration, "cc": cc,
               "links": [f"rate=50mbit,delay=50ms,queue=500p,loss={loss}/"
                         "rate=50mbit,delay=50ms,queue=500p"],
               "sender": sender, "target_bitrate": 8000000,
               "phases": [["settled", 20, duration]]}
        path = os.path.join(TOP, "tests", "scenarios", f"pars-{loss}.json")
        with open(path, "w") as f:
            json.dump(scn, f, indent=1)
        for label, opts in (("1", "connections=1"), ("5", "connections=5"),
                            ("ParS", "connections=0")):
            if args.only and label not in args.only:
                continue
            name = f"pars-{loss}-{label}"
            print(f"running {name}", flush=True)
            summary, rows, _ = run_variant(path, name, {
                "name": name, "receiver": base.format(opts),
                "receiver_env": {"GST_DEBUG": "multitcpclient:4,"
                                 "multitcpcontrol:4",
                                 "GST_DEBUG_NO_COLOR": "1"}})
            sel = [r for r in rows if float(r["time"]) >= 20]
            rate = sum(float(r["delivered_bps"]) for r in sel) / \
                max(len(sel), 1)
            count = sum(float(r.get("n-connections") or 0) for r in sel) / \
                max(len(sel), 1)
            bad = summary.get("buffers-late", 0) + summary.get(
                "buffers-skipped", 0)
            pushed = summary.get("buffers-pushed", 0)
            reasons = []
            log = os.path.join(TOP, "results", name, "processes.log")
            if label == "ParS" and os.path.exists(log):
                for line in open(log, errors="replace"):
                    if "ParS Eq. 19" in line and "connection-decision" \
                            not in line:
                        reasons.append("ParS" + line.strip().split(
                            "ParS", 1)[1][:130])
            reason = "; then ".join(reasons)
            lines.append(f"| {loss:.0%} | {label} | {count:.1f} | "
                         f"{rate / 1e6:.2f} | {rate / 8e6:.2f} | "
                         f"{int(bad)} of {int(pushed + bad)} | "
                         f"{reason} |")
    lines.append("")
    write_section(os.path.join(DOCS, "control.md"),
                  "## ParS: the starting count on a lossy path",
                  "\n".join(lines))


def multipath(args):
    """Issue 6: two links of different rate and delay between the same
    namespaces; connections spread over both with local-addresses."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    duration, kbps, cc = 60, 7000, args.cc[0]
    rates = (6, 3)
    sender = ("videotestsrc is-live=true pattern=snow ! video/x-raw,width=640,"
              "height=360,framerate=30/1 ! x264enc bitrate={} pass=cbr "
              "tune=zerolatency key-int-max=30 speed-preset=ultrafast ! "
              "h264parse ! multitcpsink host=0.0.0.0 port=5600 "
              "scheduler={}")
    base = ("multitcpsrc host=$A port=5600 latency=1000 stats-interval=1000 "
            "connections=4 local-addresses={} ! fakesink name=sink sync=false")
    both = "$NETSIM_ADDR_B0,$NETSIM_ADDR_B1"
    scn = {"name": "multipath", "duration": duration, "cc": cc,
           "links": ["rate=6mbit,delay=10ms,queue=60p",
                     "rate=3mbit,delay=40ms,queue=60p"],
           # from B's second address, A's first address is reached over
           # link 1 (A answers from any of its addresses)
           "setup": [{"ns": "b", "cmd": "ip rule add from $NETSIM_ADDR_B1 "
                      "table 101; ip route add $NETSIM_ADDR_A0 dev nsb1 "
                      "table 101"}],
           "sender": sender.format(kbps, "dynamic"),
           "receiver": base.format(both), "target_bitrate": kbps * 1000,
           "phases": [["all", 5, duration]]}
    path = os.path.join(TOP, "tests", "scenarios", "multipath.json")
    with open(path, "w") as f:
        json.dump(scn, f, indent=1)
    variants = [
        ("dynamic, both paths", "dynamic", both),
        ("static, both paths", "static", both),
        ("round-robin, both paths", "round-robin", both),
        ("dynamic, path 0 only", "dynamic", "$NETSIM_ADDR_B0"),
    ]
    lines = ["## Two paths on netsim", "",
             "`tests/netsim/experiments.py multipath` (scenario "
             "`tests/scenarios/multipath.json`): between the same two "
             "namespaces, path 0 is 6 Mbit/s with 20 ms RTT, path 1 3 Mbit/s "
             "with 80 ms RTT (queues of 60 packets); the receiver has one "
             "address on each, routes by source address (ip rule), and "
             "spreads 4 connections over them with `local-addresses` (2 per "
             "path). A live x264 CBR stream of "
             f"{kbps / 1000:g} Mbit/s (more than either path), 1 s latency, "
             f"{duration} s, TCP {cc}. Share: bytes the emulator forwarded "
             "on each path's data direction; capacity share of path 0 is "
             f"{rates[0] / sum(rates):.2f}.", "",
             "| scheduler, paths | delivered (Mbit/s) | late or skipped "
             "buffers | of pushed | share on path 0 | share on path 1 |",
             "|---|---:|---:|---:|---:|---:|"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for label, sched, locals_ in variants:
        name = "multipath-" + label.split(",")[0] + (
            "-single" if "only" in label else "")
        print(f"running {name}", flush=True)
        summary, rows, netsim = run_variant(path, name, {
            "name": name, "sender": sender.format(kbps, sched),
            "receiver": base.format(locals_)})
        sel = [r for r in rows if float(r["time"]) >= 5]
        rate = sum(float(r["delivered_bps"]) for r in sel) / max(len(sel), 1)
        bad = summary.get("buffers-late", 0) + summary.get(
            "buffers-skipped", 0) + float(rows[-1].get(
                "buffers-sender-dropped") or 0)
        pushed = summary.get("buffers-pushed", 0)
        fwd = [link["ab"]["forwarded_bytes"] for link in netsim["links"]]
        share = [f / max(sum(fwd), 1) for f in fwd]
        lines.append(f"| {label} | {rate / 1e6:.2f} | {int(bad)} | "
                     f"{bad / max(pushed + bad, 1):.3f} | {share[0]:.2f} | "
                     f"{share[1]:.2f} |")
        ax.plot([float(r["time"]) for r in rows],
                [float(r["delivered_bps"]) / 1e6 for r in rows], label=label)
    ax.axhline(kbps / 1000, color="black", ls=":", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("delivered (Mbit/s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.join(DOCS, "multipath"), exist_ok=True)
    fig.savefig(os.path.join(DOCS, "multipath", "netsim.png"), dpi=80)
    lines += ["", "Late or skipped counts the receiver's late and skipped "
              "buffers and what the sender dropped for lag.", "",
              "![two paths](multipath/netsim.png)", ""]
    write_section(os.path.join(DOCS, "multipath.md"),
                  "## Two paths on netsim", "\n".join(lines))


def write_section(path, heading, text):
    old = open(path).read() if os.path.exists(path) else \
        "# Receiver-driven control, shown on netsim\n\n"
    if heading in old:
        start = old.index(heading)
        nxt = old.find("\n## ", start + len(heading))
        new = old[:start] + text + ("\n" + old[nxt + 1:] if nxt >= 0 else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment",
                    choices=["fig4", "fig4udp", "udpbulk", "fig9", "multfrc",
                             "reliability", "outage",
                             "pars", "multipath"])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--cc", nargs="+", default=["reno", "cubic"])
    ap.add_argument("--reuse", action="store_true",
                    help="tabulate results/ from an earlier run")
    ap.add_argument("--only", nargs="+", metavar="LABEL",
                    help="fig4udp, fig9, pars: run only these variants "
                    "(\"5 connections\"; fig9 also by the first word: 1 "
                    "dynamic)")
    ap.add_argument("--both-ways", action="store_true",
                    help="fig9: each variant with the receiver dialing, then "
                    "listening (the sink dialing it)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="fig9 --both-ways: runs per variant and way")
    ap.add_argument("--ns2", action="store_true",
                    help="fig4udp, udpbulk: " + NS2_NOTE)
    ap.add_argument("--fq-rate", help="udpbulk: iperf3 --fq-rate, which "
                    "turns on TCP's pacing (SO_MAX_PACING_RATE)")
    ap.add_argument("--flows", type=int, nargs="+",
                    help="udpbulk: the numbers of TCP flows")
    args = ap.parse_args()
    global REUSE, BUILD
    REUSE = args.reuse
    BUILD = os.path.abspath(args.build)
    {"fig4": fig4, "fig4udp": fig4udp, "udpbulk": udpbulk, "fig9": fig9,
     "multfrc": multfrc,
     "reliability": reliability, "outage": outage, "pars": pars,
     "multipath": multipath}[args.experiment](args)


if __name__ == "__main__":
    main()
