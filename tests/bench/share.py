# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 28's live share (compare.py --grid share): a live stream next to N
bulk TCP flows (iperf3, their congestion control named in the cell) on one
bottleneck, in the stream's direction. Per run: what the stream delivered
and how late (compare.py's figures), what it put on the wire, and what the
bulk flows were left, over compare.py's steady span (its two netsim marks).

The bulk flows' rate is what their receiver (iperf3's server) got. The
stream's wire rate is at most the link's forwarded bytes less the bulk
flows' received payload in whole 1500-byte segments: netsim counts no flow
apart, and the bulk flows' retransmissions that crossed the link are
counted as the stream's (iperf3's sender counts them, but not whether
the link dropped them again), so this is a bound from above.

    /usr/bin/python3 tests/bench/share.py RESULTS_DIR [RESULTS_DIR ...]

tabulates the runs of one or more `compare.py --grid share` sessions (the
spread over the runs of a cell) into docs/network-friendly.md.
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

from loopback import write_section

LINK_MBIT = 20
RTT_MS = 40
QUEUE_PKTS = 100
KBPS = 4000
BUDGET_MS = 1000
FLOWS = (2, 8)
BULK_CCS = ("cubic", "bbr")
SYSTEMS = ["multitcp-default", "multitcp-adjust", "srt", "tcp"]
# the bulk flows fill the link before the stream starts
BULK_LEAD_S = 3.0
PORT = 5201
SEGMENT, PACKET = 1448, 1500
HEADING = "## A live session's share of a shared link (measured)"


def cells():
    """(RTT, loss, kbps, budget, kind) as compare.py's other grids."""
    return [(RTT_MS, 0, KBPS, BUDGET_MS, f"share-{cc}{n}")
            for cc in BULK_CCS for n in FLOWS]


def parse_kind(kind):
    """'share-cubic8' -> ('cubic', 8)."""
    m = re.fullmatch(r"share-([a-z]+)(\d+)", kind)
    if not m:
        raise ValueError(f"not a share cell: {kind}")
    return m.group(1), int(m.group(2))


def link_spec():
    one = f"rate={LINK_MBIT}mbit,delay={RTT_MS / 2:g}ms,queue={QUEUE_PKTS}p"
    return f"{one}/{one}"


def start_bulk(ns_a, ns_b, addr_b, kind, seconds, out):
    """iperf3 from A to B for the whole run; returns the two processes.
    The client's JSON goes to out.bulk.json, its start (monotonic) to
    out.bulk_t0.json."""
    cc, n = parse_kind(kind)
    server = subprocess.Popen(
        # -J: the client's --get-server-output is then JSON, not text
        ["ip", "netns", "exec", ns_b, "iperf3", "-s", "-1", "-J", "-B",
         addr_b, "-p", str(PORT)], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    with open(out + ".bulk_t0.json", "w") as f:
        json.dump({"t0": time.monotonic()}, f)
    client = subprocess.Popen(
        ["ip", "netns", "exec", ns_a, "iperf3", "-c", addr_b, "-p",
         str(PORT), "-C", cc, "-P", str(n), "-t", f"{seconds:.0f}", "-i",
         "1", "--json", "--get-server-output"],
        stdout=open(out + ".bulk.json", "w"),
        stderr=subprocess.DEVNULL)
    return server, client


def bulk_in_span(intervals, t_from, t_to):
    """Bytes and retransmissions of iperf3's 1 s intervals (start/end from
    its own start) over [t_from, t_to], each interval prorated."""
    got = retrans = 0.0
    for iv in intervals:
        s = iv["sum"]
        a, b = max(s["start"], t_from), min(s["end"], t_to)
        if b <= a or s["end"] <= s["start"]:
            continue
        part = (b - a) / (s["end"] - s["start"])
        got += s["bytes"] * part
        retrans += s.get("retransmits", 0) * part
    return got, retrans


def figures(out, marks, n_flows):
    """The bulk flows' rate and the stream's wire rate over the steady span
    (the first two marks); {} when a record is missing."""
    try:
        bulk = json.load(open(out + ".bulk.json"))
        t0 = json.load(open(out + ".bulk_t0.json"))["t0"]
    except (OSError, ValueError, KeyError):
        return {}
    server = bulk.get("server_output_json", {})
    if len(marks) < 2 or "intervals" not in server:
        return {}
    m0, m1 = marks[0], marks[1]
    dt = m1["t"] - m0["t"]
    # the receiver's bytes; the sender's count retransmissions
    got = bulk_in_span(server["intervals"], m0["t"] - t0, m1["t"] - t0)[0]
    retrans = bulk_in_span(bulk.get("intervals", []), m0["t"] - t0,
                           m1["t"] - t0)[1]
    link_ab = m1["links"][0]["ab"] - m0["links"][0]["ab"]
    bulk_wire = got / SEGMENT * PACKET
    return dict(bulk_mbps=got * 8 / dt / 1e6,
                bulk_per_flow_mbps=got * 8 / dt / 1e6 / n_flows,
                bulk_retransmits=retrans,
                link_mbps=link_ab * 8 / dt / 1e6,
                stream_wire_mbps=max(link_ab - bulk_wire, 0) * 8 / dt / 1e6)


def load_runs(dirs):
    """The share runs stored in @dirs (compare.py's per-run .json), their
    share figures measured again from the run's own records."""
    runs = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-share-*.json"))):
            if os.path.basename(path).count(".") != 1:
                continue
            r = json.load(open(path))
            for k in ("bulk_mbps", "bulk_per_flow_mbps", "bulk_retransmits",
                      "link_mbps", "stream_wire_mbps"):
                r.pop(k, None)
            r.update(figures(path[:-len(".json")], r.get("marks", []),
                             parse_kind(r["kind"])[1]))
            runs.append(r)
    return runs


def spread(values, fmt):
    """'a' for one run, 'lo-hi' over several."""
    lo, hi = min(values), max(values)
    return fmt.format(lo) if len(values) == 1 or fmt.format(lo) == \
        fmt.format(hi) else fmt.format(lo) + "-" + fmt.format(hi)


def write_docs(results, cc, seconds, top):
    """The table under HEADING in docs/network-friendly.md: per cell and
    system, the spread over its runs."""
    rows = ["| stream's TCP | bulk flows | system | runs | late or lost | "
            "stream delivered Mbit/s | stream on the wire, at most, Mbit/s | "
            "bulk Mbit/s | per bulk flow | fair share |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    order = [c[4] for c in cells()]
    groups = {}
    for r in results:
        groups.setdefault((r["cc"], r["kind"], r["system"]), []).append(r)
    keys = sorted(groups, key=lambda k: (
        k[0], order.index(k[1]) if k[1] in order else len(order),
        SYSTEMS.index(k[2]) if k[2] in SYSTEMS else len(SYSTEMS), k[2]))
    for stream_cc, kind, system in keys:
        runs = groups[(stream_cc, kind, system)]
        bulk_cc, n = parse_kind(kind)
        good = [r for r in runs if "bulk_mbps" in r]
        if not good:
            rows.append(f"| {stream_cc} | {n} {bulk_cc} | {system} | 0 | (no "
                        "record) | | | | | |")
            continue
        rows.append(
            f"| {stream_cc} | {n} {bulk_cc} | {system} | {len(good)} | "
            f"{spread([r['late_fraction'] for r in good], '{:.3f}')} | "
            f"{spread([r['delivered_mbps'] for r in good], '{:.2f}')} | "
            f"{spread([r['stream_wire_mbps'] for r in good], '{:.2f}')} | "
            f"{spread([r['bulk_mbps'] for r in good], '{:.2f}')} | "
            f"{spread([r['bulk_per_flow_mbps'] for r in good], '{:.2f}')} | "
            f"{LINK_MBIT / (n + 1):.2f} |")
    text = "\n".join([
        HEADING, "",
        f"`tests/bench/compare.py --grid share` then `tests/bench/share.py` "
        f"({time.strftime('%Y-%m-%d')}, the stream's TCP {cc} in both "
        f"namespaces, multitcpsink's own default bbr, the bulk flows' as "
        f"named, {seconds:g} s a run): a {LINK_MBIT} Mbit/s bottleneck "
        f"({RTT_MS} ms RTT, {QUEUE_PKTS}-packet queue), a live "
        f"{KBPS / 1000:g} Mbit/s x264 stream at a {BUDGET_MS} ms budget, N "
        f"bulk iperf3 flows from the sender's side from {BULK_LEAD_S:g} s "
        "before it. Ranges: the spread over the runs. Fair share: the link "
        "over N + 1. The stream's wire rate is a bound from above (the "
        "link's bytes less what the bulk flows' receiver got).", ""] +
        rows + [""])
    # the section stands before "Not done yet" (placed once by hand)
    write_section(os.path.join(top, "docs", "network-friendly.md"), HEADING,
                  text)


def main():
    dirs = sys.argv[1:]
    if not dirs:
        raise SystemExit(__doc__)
    runs = load_runs(dirs)
    if not runs:
        raise SystemExit(f"no share runs in {' '.join(dirs)}")
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    write_docs(runs, " ".join(sorted({r["cc"] for r in runs})),
               max(r.get("seconds", 40) for r in runs), top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
