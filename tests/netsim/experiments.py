#!/usr/bin/python3
"""The paper experiments of issue 4 on netsim, each variant in turn, with a
table and a plot written to docs/ (figures in docs/control/).

  tests/netsim/experiments.py fig4 [--cc reno cubic] [--duration-scale 1]
  tests/netsim/experiments.py fig9
  tests/netsim/experiments.py multfrc
"""
import argparse
import csv
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(HERE, "run-scenario")
DOCS = os.path.join(TOP, "docs")


def run_variant(scenario, name, overrides):
    out = os.path.join(TOP, "results", name)
    args = [RUNNER, scenario, "--out", out]
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
        ("dynamic", base.replace("connections=5", "connections=2 "
                                 "connection-control=congestion "
                                 "min-connections=1 max-connections=8")),
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
             "VariedConnVariedWinSize (connection-control=congestion, 1 to 8 "
             "connections, starting at 2). The congestion control named is "
             "the one of both namespaces (sender, receiver and the cross "
             "traffic). Delivered throughput at the receiver, averaged over "
             "each phase, as a fraction of 800 kbit/s:", ""]
    phases = [p[0] for p in scn["phases"]]
    lines.append("| TCP | connections | " + " | ".join(phases) +
                 " | late fraction | target held (>= 95% every phase) |")
    lines.append("|---|---|" + "---:|" * len(phases) + "---:|---|")
    for (cc, label), (summary, rows, netsim) in results.items():
        fr = {p["phase"]: p["of_target"] for p in summary["phases"]}
        held = all(fr.get(p, 0) >= 0.95 for p in phases)
        lines.append(f"| {cc} | {label} | " + " | ".join(
            f"{fr.get(p, 0):.2f}" for p in phases) +
            f" | {summary.get('late-fraction', 0):.4f} | "
            f"{'yes' if held else 'no'} |")
    lines += ["", "![Fig. 4 on netsim](control/fig4.png)", ""]
    write_section(os.path.join(DOCS, "control.md"),
                  "## MultiTCP Fig. 4 on netsim", "\n".join(lines))


def plot_fig4(scn, results, ccs, labels):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(os.path.join(DOCS, "control"), exist_ok=True)
    fig, axes = plt.subplots(2, len(ccs), figsize=(7 * len(ccs), 7),
                             squeeze=False, sharex=True)
    for j, cc in enumerate(ccs):
        for label in labels:
            if (cc, label) not in results:
                continue
            rows = results[(cc, label)][1]
            t = [float(r["time"]) for r in rows]
            axes[0][j].plot(t, [float(r["delivered_bps"]) / 1e3 for r in rows],
                            label=label)
            axes[1][j].plot(t, [float(r.get("window-sum") or 0) for r in rows],
                            label=label)
        axes[0][j].axhline(800, color="black", ls=":", lw=0.8)
        axes[0][j].set_ylabel("throughput (kbit/s)")
        axes[0][j].set_title(f"sender and cross traffic: {cc}")
        axes[1][j].set_ylabel("window sum W_s (segments)")
        axes[1][j].set_xlabel("time (s)")
        for c in scn["cross"]:
            for ax in (axes[0][j], axes[1][j]):
                ax.axvspan(c["start"], c["stop"], color="grey", alpha=0.08)
        axes[0][j].legend(loc="lower left")
        axes[0][j].set_ylim(0, 2000)
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "control", "fig4.png"), dpi=80)


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
    ap.add_argument("experiment", choices=["fig4", "fig9", "multfrc"])
    ap.add_argument("--cc", nargs="+", default=["reno", "cubic"])
    args = ap.parse_args()
    {"fig4": fig4}[args.experiment](args)


if __name__ == "__main__":
    main()
