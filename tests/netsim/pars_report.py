# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/pars.md's measured sections and docs/pars/*.png from the results of
tests/netsim/pars_http.py (results/pars/results.json)."""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
DOCS = os.path.join(TOP, "docs")
HEADING = "## Measured on netsim"


def med(vals):
    vals = [v for v in vals if v == v]
    return statistics.median(vals) if vals else float("nan")


def cell(vals, fmt="{:.2f}"):
    vals = sorted(v for v in vals if v == v)
    if not vals:
        return "-"
    m = fmt.format(statistics.median(vals))
    if len(vals) == 1:
        return m
    return f"{m} [{fmt.format(vals[0])}-{fmt.format(vals[-1])}]"


def by_n(rows, key="mbps"):
    out = {}
    for r in rows:
        if r.get("error"):
            continue
        out.setdefault(r["n"], []).append(r[key])
    return out


def plot_sweep(entries, label, key, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for e in entries:
        c = e["condition"]
        ns = by_n(e["rows"])
        xs = sorted(ns)
        ax.plot(xs, [med(ns[n]) for n in xs], marker="o",
                label=label(c))
    ax.set_xlabel("connections per chunk")
    ax.set_ylabel("download throughput (Mbit/s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def sweep_table(entries, label, capacity):
    ns = sorted({r["n"] for e in entries for r in e["rows"]})
    lines = ["| | " + " | ".join(f"n={n}" for n in ns) + " |",
             "|---|" + "---:|" * len(ns)]
    for e in entries:
        got = by_n(e["rows"])
        lines.append(f"| {label(e['condition'])} | " + " | ".join(
            cell(got.get(n, [])) for n in ns) + " |")
    errors = sum(1 for e in entries for r in e["rows"] if r.get("error"))
    if errors:
        lines += ["", f"{errors} downloads failed and are left out."]
    return lines


def write(results):
    os.makedirs(os.path.join(DOCS, "pars"), exist_ok=True)
    meta = results.get("meta", {})
    cc = meta.get("cc", "?")
    reps = meta.get("repeats", "?")
    out = [HEADING, "",
           f"`tests/netsim/pars_http.py` ({meta.get('started', '')}, build "
           f"{meta.get('commit', '')}): multitcphttpsrc in namespace A "
           "downloads from nginx in namespace B over one netsim link "
           "(rate, one-way delay RTT/2, a 100-packet drop-tail queue each "
           "way, random loss on the data's direction only). TCP: "
           f"**{cc}** at both ends (the paper's senders are loss-based). "
           f"{reps} runs per cell, the counts alternating within each run; "
           "cells are the median Mbit/s [least-most] of the whole file's "
           "download (its HEAD included). A 4 MiB file in 1 MiB chunks "
           "unless said.", ""]
    label_loss = lambda c: f"loss {c['loss'] * 100:g}%"  # noqa: E731
    label_rtt = lambda c: f"RTT {c['rtt']} ms, loss {c['loss'] * 100:g}%"  # noqa
    label_rate = lambda c: f"{c['rate']} Mbit/s"  # noqa: E731
    figs = [("fig5", "Fig. 5: loss (10 Mbit/s, 50 ms)", label_loss),
            ("fig6", "Fig. 6: RTT (10 Mbit/s)", label_rtt),
            ("fig7", "Fig. 7: bandwidth (50 ms, 1%)", label_rate)]
    for key, title, label in figs:
        if key not in results:
            continue
        png = f"pars/{key}.png"
        plot_sweep(results[key], label, "mbps", os.path.join(DOCS, png))
        out += [f"### {title}", ""] + sweep_table(results[key], label,
                                                  None)
        out += ["", f"![{title}]({png})", ""]
    # Fig. 1(a): one connection's share of the link
    one = []
    for key in ("fig5", "fig6", "fig7"):
        for e in results.get(key, []):
            c = e["condition"]
            got = by_n(e["rows"])
            if 1 in got:
                one.append((c, med(got[1]) / c["rate"],
                            med(got.get(8, [float("nan")])) / c["rate"]))
    if one:
        seen = set()
        out += ["### Fig. 1(a): what one connection gets of the link", "",
                "The paper: 86% of 10 Mbit/s at 50 ms and 0.1% loss, 13% at "
                "150 ms and 1%.", "",
                "| link | one connection | 8 connections |",
                "|---|---:|---:|"]
        for c, share1, share8 in one:
            k = (c["rate"], c["rtt"], c["loss"])
            if k in seen:
                continue
            seen.add(k)
            out.append(f"| {c['rate']} Mbit/s, {c['rtt']} ms, "
                       f"{c['loss'] * 100:g}% | {share1 * 100:.0f}% | "
                       f"{share8 * 100:.0f}% |")
        out.append("")
    if "fig8" in results:
        rows = results["fig8"][0]["rows"]
        sizes = sorted({r["size"] for r in rows})
        ns = sorted({r["n"] for r in rows})
        out += ["### Fig. 8: chunk size and download time (10 Mbit/s, "
                "50 ms, 1%)", "",
                "One file of one chunk each; seconds to download it "
                "(median [least-most]).", "",
                "| chunk | " + " | ".join(f"n={n}" for n in ns) + " |",
                "|---|" + "---:|" * len(ns)]
        for s in sizes:
            out.append(f"| {s // 1024} KiB | " + " | ".join(
                cell([r["seconds"] for r in rows if r["size"] == s and
                      r["n"] == n and not r.get("error")])
                for n in ns) + " |")
        out.append("")
    if "table2" in results:
        out += ["### Table II: flows and the queue (10 Mbit/s, 50 ms, no "
                "random loss, 100-packet queue)", "",
                "The paper (ns-3): 8.839, 9.623, 9.785, 9.837 Mbit/s for 1, "
                "2, 4, 8 flows. Here one 24 MiB download as one chunk per "
                "count (the n flows run from start to end); the queue's mean wait from netsim's counters, "
                "in packets of 1500 bytes at the link's rate.", "",
                "| flows | Mbit/s | mean queue (packets) | queue drops |",
                "|---:|---:|---:|---:|"]
        for e in results["table2"]:
            link = e.get("link", {}).get("ba", {})
            wait = link.get("mean_queue_delay_ms", 0)
            pkts = wait / 1000 * e["condition"]["rate"] * 1e6 / 8 / 1500
            out.append(f"| {e['n']} | {cell([r['mbps'] for r in e['rows']])}"
                       f" | {pkts:.0f} | {link.get('dropped_queue', '-')} |")
        out.append("")
    if "first" in results:
        out += ["### The first chunk: one chunk over n connections, or n "
                "chunks over a connection each", "",
                "The paper: the first chunk takes about 3 times longer when "
                "each connection fetches a chunk of its own. Here a 2 MiB "
                "chunk at 10 Mbit/s, 50 ms, 1%: seconds until the first "
                "chunk is whole.", "",
                "| n | ParS (the chunk over n) | a chunk each (first of n) | "
                "ratio |", "|---:|---:|---:|---:|"]
        for e in results["first"]:
            par = [r["seconds"] for r in e["parallel"] if not r.get("error")]
            dif = [r["first"] for r in e["different"]]
            ratio = med(dif) / med(par) if par and dif else float("nan")
            out.append(f"| {e['n']} | {cell(par)} | {cell(dif)} | "
                       f"{ratio:.1f} |")
        out.append("")
    path = os.path.join(DOCS, "pars.md")
    old = open(path).read() if os.path.exists(path) else ""
    text = "\n".join(out)
    if HEADING in old:
        old = old[:old.index(HEADING)].rstrip("\n")
    with open(path, "w") as f:
        f.write((old + "\n\n" if old else "") + text + "\n")


if __name__ == "__main__":
    write(json.load(open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        TOP, "results", "pars", "results.json"))))
